//! `Outcome`: what a target reports for one case (docs/architecture.md, vocabulary "outcome").
//!
//! A compile-only target (ptxas) reports one of the compile outcomes: [`Outcome::Accepted`],
//! [`Outcome::AcceptedWithWarnings`], [`Outcome::Rejected`], [`Outcome::Crashed`],
//! [`Outcome::TimedOut`]. A running target (sim, cuda, external) reports one of the run
//! outcomes: [`Outcome::Completed`], [`Outcome::Trapped`], [`Outcome::Hung`],
//! [`Outcome::Leaked`], [`Outcome::Faulted`]; a running target that compiles first may also
//! report a compile outcome when compilation did not succeed. [`Outcome::NotRun`] says the
//! target could not run this case at all (a form it does not implement, no device, ...): it is
//! never a discrepancy.
//!
//! Observation words are always in the layout of [`crate::observe`].

use serde::{Deserialize, Serialize};

/// Severity of a compiler diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Severity {
    /// An error: the module is rejected.
    Error,
    /// A warning: the module is accepted.
    Warning,
    /// Informational.
    Info,
}

/// One compiler diagnostic, mapped back to the instruction it is about where possible.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Error, warning or info.
    pub severity: Severity,
    /// 1-based line of the emitted PTX ([`crate::ptx::emit`]) the diagnostic names, if any.
    pub line: Option<u32>,
    /// The opcode on that line (e.g. `tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32`),
    /// when the line holds a tcgen05 instruction.
    pub opcode: Option<String>,
    /// The message as the tool printed it.
    pub message: String,
}

/// Why a running target trapped.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TrapKind {
    /// An explicit or guardrail trap (`trap;`, `-g-tmem-access-check`).
    Guardrail(String),
    /// An illegal instruction for the device.
    IllegalInstruction,
    /// An illegal memory address.
    IllegalAddress,
    /// The simulator's concrete behaviour for an allocation without the permit
    /// (ALLOC-AFTER-RELINQUISH; see `sim` module documentation).
    AllocWithoutPermit,
    /// The simulator's concrete behaviour for a TMEM access outside the 128 x 512 array
    /// (OQ-9).
    TmemOutOfRange,
    /// Any other kind, named by the target.
    Other(String),
}

impl std::fmt::Display for TrapKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrapKind::Guardrail(s) => write!(f, "guardrail trap ({s})"),
            TrapKind::IllegalInstruction => f.write_str("illegal instruction"),
            TrapKind::IllegalAddress => f.write_str("illegal address"),
            TrapKind::AllocWithoutPermit => f.write_str("alloc without the allocation permit"),
            TrapKind::TmemOutOfRange => f.write_str("TMEM access out of range"),
            TrapKind::Other(s) => f.write_str(s),
        }
    }
}

/// Where one lane was when a run hung.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HangSite {
    /// Global CTA index (`%clusterid.x * cluster_size + %cluster_ctarank`).
    pub cta: u32,
    /// Warp rank in the CTA.
    pub warp: u32,
    /// Lane.
    pub lane: u32,
    /// The lane's last checkpoint word (see [`crate::observe`]).
    pub checkpoint: u32,
    /// What the lane is blocked on, in words (e.g. "tcgen05.alloc: 64 columns, 480 in use"),
    /// when the target knows.
    pub blocked_on: Option<String>,
}

/// What a target reports for one case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Outcome {
    /// Compile: the module was accepted without diagnostics.
    Accepted,
    /// Compile: accepted, with warnings.
    AcceptedWithWarnings(Vec<Diagnostic>),
    /// Compile: rejected; the diagnostics mapped to instruction lines.
    Rejected(Vec<Diagnostic>),
    /// The tool itself crashed (signal, internal error).
    Crashed {
        /// What happened (exit status, last lines of output).
        detail: String,
    },
    /// The tool or the run exceeded its time limit (not a hang the target diagnosed itself).
    TimedOut {
        /// The limit, in milliseconds.
        limit_ms: u64,
    },
    /// Run: every lane finished or exited; the observation buffer.
    Completed {
        /// The observation words, in the [`crate::observe`] layout.
        words: Vec<u32>,
    },
    /// Run: the kernel trapped.
    Trapped {
        /// Why.
        kind: TrapKind,
        /// The observation words written before the trap, when the target has them.
        words: Vec<u32>,
    },
    /// Run: the kernel hung (deadlock detected, or the watchdog fired).
    Hung {
        /// Where every blocked lane was, per (cta, warp, lane).
        blocked: Vec<HangSite>,
        /// The observation words at the moment of the hang, when the target has them.
        words: Vec<u32>,
    },
    /// Run: the kernel completed but left TMEM allocated (hardware: error 721,
    /// `CUDA_ERROR_TENSOR_MEMORY_LEAK`; ALLOC-FREE-BEFORE-EXIT).
    Leaked {
        /// Columns still allocated at exit, summed over CTAs.
        columns: u32,
        /// The observation words.
        words: Vec<u32>,
    },
    /// Run: the launch or the kernel failed with a driver error code.
    Faulted {
        /// The driver's code (e.g. 700 illegal address).
        code: u32,
        /// Its name and context.
        detail: String,
    },
    /// The target did not run this case; the reason.
    NotRun(String),
}

impl Outcome {
    /// A short name of the variant, for tables and signatures.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::AcceptedWithWarnings(_) => "accepted-with-warnings",
            Outcome::Rejected(_) => "rejected",
            Outcome::Crashed { .. } => "crashed",
            Outcome::TimedOut { .. } => "timed-out",
            Outcome::Completed { .. } => "completed",
            Outcome::Trapped { .. } => "trapped",
            Outcome::Hung { .. } => "hung",
            Outcome::Leaked { .. } => "leaked",
            Outcome::Faulted { .. } => "faulted",
            Outcome::NotRun(_) => "not-run",
        }
    }

    /// The observation words, for the run outcomes that carry them.
    pub fn words(&self) -> Option<&[u32]> {
        match self {
            Outcome::Completed { words }
            | Outcome::Trapped { words, .. }
            | Outcome::Hung { words, .. }
            | Outcome::Leaked { words, .. } => Some(words),
            _ => None,
        }
    }

    /// Whether this is one of the compile outcomes.
    pub fn is_compile(&self) -> bool {
        matches!(
            self,
            Outcome::Accepted
                | Outcome::AcceptedWithWarnings(_)
                | Outcome::Rejected(_)
                | Outcome::Crashed { .. }
                | Outcome::TimedOut { .. }
        )
    }

    /// One line for people: the variant and its key facts (no observation words).
    pub fn summary(&self) -> String {
        match self {
            Outcome::Accepted => "accepted".into(),
            Outcome::AcceptedWithWarnings(d) => format!("accepted with {} warning(s)", d.len()),
            Outcome::Rejected(d) => match d.first() {
                Some(first) => format!(
                    "rejected ({} diagnostic(s); first: {}{})",
                    d.len(),
                    first
                        .line
                        .map(|l| format!("line {l}: "))
                        .unwrap_or_default(),
                    first.message
                ),
                None => "rejected".into(),
            },
            Outcome::Crashed { detail } => format!("crashed: {detail}"),
            Outcome::TimedOut { limit_ms } => format!("timed out after {limit_ms} ms"),
            Outcome::Completed { words } => {
                format!("completed ({} observation words)", words.len())
            }
            Outcome::Trapped { kind, .. } => format!("trapped: {kind}"),
            Outcome::Hung { blocked, .. } => {
                let mut s = format!("hung ({} blocked lane(s)", blocked.len());
                if let Some(b) = blocked.first() {
                    s.push_str(&format!(
                        "; first: cta {} warp {} lane {} at checkpoint {:#x}",
                        b.cta, b.warp, b.lane, b.checkpoint
                    ));
                    if let Some(on) = &b.blocked_on {
                        s.push_str(&format!(", blocked on {on}"));
                    }
                }
                s.push(')');
                s
            }
            Outcome::Leaked { columns, .. } => format!("leaked {columns} TMEM column(s)"),
            Outcome::Faulted { code, detail } => format!("faulted with code {code}: {detail}"),
            Outcome::NotRun(r) => format!("not run: {r}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_round_trip_through_json() {
        let all = vec![
            Outcome::Accepted,
            Outcome::Rejected(vec![Diagnostic {
                severity: Severity::Error,
                line: Some(12),
                opcode: Some("tcgen05.alloc".into()),
                message: "bad".into(),
            }]),
            Outcome::Completed {
                words: vec![1, 2, 3],
            },
            Outcome::Hung {
                blocked: vec![HangSite {
                    cta: 0,
                    warp: 1,
                    lane: 2,
                    checkpoint: 7,
                    blocked_on: None,
                }],
                words: vec![],
            },
            Outcome::Trapped {
                kind: TrapKind::AllocWithoutPermit,
                words: vec![],
            },
            Outcome::NotRun("no device".into()),
        ];
        for o in all {
            let s = serde_json::to_string(&o).unwrap();
            let back: Outcome = serde_json::from_str(&s).unwrap();
            assert_eq!(back, o);
        }
    }

    #[test]
    fn compile_and_run_outcomes_are_told_apart() {
        assert!(Outcome::Accepted.is_compile());
        assert!(Outcome::Rejected(vec![]).is_compile());
        assert!(!Outcome::Completed { words: vec![] }.is_compile());
        assert!(!Outcome::NotRun(String::new()).is_compile());
        assert_eq!(
            Outcome::Leaked {
                columns: 32,
                words: vec![9]
            }
            .words(),
            Some(&[9u32][..])
        );
    }
}
