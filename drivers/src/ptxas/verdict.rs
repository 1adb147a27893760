//! The compile-only outcome of one case: accepted, accepted with warnings,
//! rejected (each diagnostic mapped to the instruction it names), crashed, timed out.

use super::run::{Diagnostic, RawRun, Severity};
use std::time::Duration;
use tcgen05_ir::{Form, Op, Program, Stmt};

/// The instruction a diagnostic points at.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Instruction {
    /// The source line, trimmed.
    pub text: String,
    /// The opcode (first word), e.g. `tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32`.
    pub opcode: String,
    /// The tcgen05 form, when the opcode is one the IR models.
    pub form: Option<Form>,
    /// For a tcgen05 instruction: its index among the module's tcgen05 instructions, in text
    /// order (see [`emission_ops`] for the matching program op).
    pub tc_index: Option<usize>,
}

/// A diagnostic of one case, its line counted in that case's own module.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CaseDiagnostic {
    /// The diagnostic (with `line` in the case's module).
    pub diag: Diagnostic,
    /// The instruction on that line, if the line is known.
    pub instruction: Option<Instruction>,
}

impl std::fmt::Display for CaseDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.diag)?;
        if let Some(i) = &self.instruction {
            write!(f, " [at `{}`]", i.text)?;
        }
        Ok(())
    }
}

/// What ptxas says about one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileVerdict {
    /// Exit status 0, nothing printed.
    Accepted,
    /// Exit status 0 with warnings.
    AcceptedWithWarnings(Vec<CaseDiagnostic>),
    /// Non-zero exit status with errors; the first error is the reason.
    Rejected(Vec<CaseDiagnostic>),
    /// ptxas died on a signal, or reported an internal error.
    Crashed {
        /// The signal, if it died on one.
        signal: Option<i32>,
        /// What it printed.
        message: String,
    },
    /// ptxas ran past the limit.
    TimedOut {
        /// The limit.
        after: Duration,
    },
}

impl CompileVerdict {
    /// Accepted, with or without warnings.
    pub fn accepted(&self) -> bool {
        matches!(
            self,
            CompileVerdict::Accepted | CompileVerdict::AcceptedWithWarnings(_)
        )
    }

    /// Rejected with diagnostics.
    pub fn rejected(&self) -> bool {
        matches!(self, CompileVerdict::Rejected(_))
    }

    /// The diagnostics, if any.
    pub fn diagnostics(&self) -> &[CaseDiagnostic] {
        match self {
            CompileVerdict::AcceptedWithWarnings(d) | CompileVerdict::Rejected(d) => d,
            _ => &[],
        }
    }

    /// The first error (or fatal) diagnostic of a rejection.
    pub fn first_error(&self) -> Option<&CaseDiagnostic> {
        self.diagnostics()
            .iter()
            .find(|d| d.diag.severity >= Severity::Error && !d.diag.is_abort_summary())
    }

    /// A one-line summary.
    pub fn summary(&self) -> String {
        match self {
            CompileVerdict::Accepted => "accepted".into(),
            CompileVerdict::AcceptedWithWarnings(d) => {
                format!("accepted with {} warning(s): {}", d.len(), d[0])
            }
            CompileVerdict::Rejected(_) => match self.first_error() {
                Some(e) => format!("rejected: {e}"),
                None => "rejected".into(),
            },
            CompileVerdict::Crashed {
                signal: Some(s), ..
            } => format!("crashed (signal {s})"),
            CompileVerdict::Crashed { message, .. } => {
                format!("crashed: {}", message.lines().next().unwrap_or(""))
            }
            CompileVerdict::TimedOut { after } => {
                format!("timed out after {:.1} s", after.as_secs_f64())
            }
        }
    }
}

/// The instruction on line `line` (1-based) of `module`.
pub fn locate(module: &str, line: u32) -> Option<Instruction> {
    let mut tc = 0usize;
    for (i, l) in module.lines().enumerate() {
        let t = l.trim();
        let op = opcode_of(t);
        let is_tc = op.starts_with("tcgen05.");
        if i + 1 == line as usize {
            if t.is_empty() {
                return None;
            }
            return Some(Instruction {
                text: t.to_string(),
                opcode: op.to_string(),
                form: Form::parse(op).ok(),
                tc_index: is_tc.then_some(tc),
            });
        }
        if is_tc {
            tc += 1;
        }
    }
    None
}

/// The opcode word of an instruction line (after any `@%p` guard).
pub fn opcode_of(line: &str) -> &str {
    let t = line.trim();
    let t = if t.starts_with('@') {
        t.split_once(char::is_whitespace)
            .map_or("", |x| x.1)
            .trim_start()
    } else {
        t
    };
    t.split(|c: char| c.is_whitespace() || c == ';')
        .next()
        .unwrap_or("")
}

/// The tcgen05 ops of `p` in the order the printer writes them (functions first, then each
/// warp's code), so that [`Instruction::tc_index`] indexes this list.
pub fn emission_ops(p: &Program) -> Vec<&Op> {
    fn go<'a>(b: &'a [Stmt], out: &mut Vec<&'a Op>) {
        for s in b {
            match s {
                Stmt::Tc(op) => out.push(op),
                Stmt::If { then, els, .. } => {
                    go(then, out);
                    go(els, out);
                }
                Stmt::Loop { body, .. } => go(body, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for f in &p.funcs {
        go(&f.body, &mut out);
    }
    for w in &p.warps {
        go(w, &mut out);
    }
    out
}

/// Classifies a single-module run. `map` turns a line of the compiled file into (case, line
/// in that case's module); `modules[case]` is that case's own text.
pub(crate) fn classify_single(raw: &RawRun, module: &str) -> CompileVerdict {
    match raw {
        RawRun::TimedOut { after } => CompileVerdict::TimedOut { after: *after },
        RawRun::Signalled { signal, log } => CompileVerdict::Crashed {
            signal: *signal,
            message: log.clone(),
        },
        RawRun::Exited {
            code,
            diagnostics,
            log,
        } => {
            if diagnostics.iter().any(Diagnostic::is_internal_error) {
                return CompileVerdict::Crashed {
                    signal: None,
                    message: log.clone(),
                };
            }
            let mapped: Vec<CaseDiagnostic> = diagnostics
                .iter()
                .filter(|d| !d.is_abort_summary())
                .map(|d| CaseDiagnostic {
                    diag: d.clone(),
                    instruction: d.line.and_then(|l| locate(module, l)),
                })
                .collect();
            if *code == 0 {
                if mapped.is_empty() {
                    CompileVerdict::Accepted
                } else {
                    CompileVerdict::AcceptedWithWarnings(mapped)
                }
            } else if mapped.is_empty() {
                // A failure with nothing said: keep the log as the reason.
                CompileVerdict::Rejected(vec![CaseDiagnostic {
                    diag: Diagnostic {
                        severity: Severity::Fatal,
                        line: None,
                        message: format!("exit status {code}: {}", log.trim()),
                    },
                    instruction: None,
                }])
            } else {
                CompileVerdict::Rejected(mapped)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_finds_the_instruction_and_its_tcgen05_index() {
        let m = ".version 8.6\n\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tc_slot+0], 32;\n\
                 \tmov.u32 %r1, 0;\n\t@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 48;\n";
        let i = locate(m, 4).unwrap();
        assert_eq!(i.opcode, "tcgen05.dealloc.cta_group::1.sync.aligned.b32");
        assert_eq!(i.tc_index, Some(1));
        assert!(matches!(i.form, Some(Form::Dealloc(_))));
        let j = locate(m, 3).unwrap();
        assert_eq!((j.opcode.as_str(), j.tc_index), ("mov.u32", None));
        assert!(locate(m, 99).is_none());
    }
}
