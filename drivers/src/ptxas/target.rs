//! `PtxasTarget`: one installed ptxas as a compile-only [`Target`].

use super::batch::{BatchStats, compile_batched, compile_one};
use super::install::{PtxasInstall, installed, select, target_names};
use super::run::{CompileOptions, Severity as PSev};
use super::verdict::{CaseDiagnostic, CompileVerdict};
use crate::outcome::{Diagnostic, Outcome, Severity};
use crate::target::{Availability, Target, TargetInfo, TargetKind, Unavailable};
use tcgen05_ir::Case;

/// Cases per ptxas process in [`Target::run_batch`]. 64: at `-O0`, in `benches/ptxas_batching.rs`
/// (2026-11-21, docs/ptxas.md), batches of 64 were as fast as or faster than batches of 16 on
/// every version and mix, on a quiet machine and on a loaded one.
pub const DEFAULT_BATCH: usize = 64;

/// A ptxas binary as a compile-only target.
#[derive(Debug, Clone)]
pub struct PtxasTarget {
    /// The target's name: `ptxas@12.8`, or `ptxas@12.8.93` when two builds of 12.8 are
    /// installed ([`target_names`]).
    pub name: String,
    /// The binary and its version.
    pub install: PtxasInstall,
    /// Options of every compile (guardrail, time limit, arch override).
    pub options: CompileOptions,
    /// Cases per process in [`Target::run_batch`].
    pub batch_size: usize,
}

impl PtxasTarget {
    /// A target for `install`, compiling with [`CompileOptions::verdict`] (`-O0`: the
    /// verdicts of the default level, sooner).
    pub fn new(install: PtxasInstall) -> Self {
        PtxasTarget {
            name: install.name(),
            install,
            options: CompileOptions::verdict(),
            batch_size: DEFAULT_BATCH,
        }
    }

    /// Compiles one case and keeps the full verdict (mapped diagnostics, crash logs).
    pub fn verdict(&self, case: &Case) -> CompileVerdict {
        self.module_verdict(&tcgen05_ir::ptx::emit(&case.program))
    }

    /// Compiles one printed module; a ptxas that cannot be started gives a crash verdict.
    pub fn module_verdict(&self, module: &str) -> CompileVerdict {
        compile_one(&self.install, module, &self.options).unwrap_or_else(|e| not_started(&e))
    }

    /// Compiles many cases in batches and keeps the full verdicts.
    pub fn verdicts(&self, cases: &[Case]) -> Vec<CompileVerdict> {
        let modules: Vec<String> = cases
            .iter()
            .map(|c| tcgen05_ir::ptx::emit(&c.program))
            .collect();
        self.module_verdicts(&modules).0
    }

    /// Compiles many printed modules in batches of [`PtxasTarget::batch_size`]: one verdict
    /// per module and the batches' statistics. A ptxas that cannot be started gives every
    /// module a crash verdict.
    pub fn module_verdicts(&self, modules: &[String]) -> (Vec<CompileVerdict>, BatchStats) {
        match compile_batched(&self.install, modules, self.batch_size, &self.options) {
            Ok(x) => x,
            Err(e) => (vec![not_started(&e); modules.len()], BatchStats::default()),
        }
    }
}

/// The verdict of a compile whose ptxas could not be started.
fn not_started(e: &std::io::Error) -> CompileVerdict {
    CompileVerdict::Crashed {
        signal: None,
        message: format!("could not run ptxas: {e}"),
    }
}

fn diagnostic(d: &CaseDiagnostic) -> Diagnostic {
    Diagnostic {
        severity: match d.diag.severity {
            PSev::Warning => Severity::Warning,
            PSev::Error | PSev::Fatal => Severity::Error,
        },
        line: d.diag.line,
        opcode: d
            .instruction
            .as_ref()
            .map(|i| i.opcode.clone())
            .filter(|o| o.starts_with("tcgen05.")),
        message: d.diag.message.clone(),
    }
}

/// The shared [`Outcome`] of a verdict. A rejection that only says the tool predates the case
/// (an unknown `.version` or `.target`, [`super::Diagnostic::is_unknown_to_tool`]) is
/// [`Outcome::NotRun`]: that ptxas cannot judge the case, which `diff::compare` skips instead
/// of calling it a well-formed program rejected.
pub fn outcome_of(v: &CompileVerdict) -> Outcome {
    if let CompileVerdict::Rejected(d) = v
        && let Some(first) = d.first()
        && first.diag.is_unknown_to_tool()
    {
        return Outcome::NotRun(format!(
            "this ptxas predates the case: {}",
            first.diag.message
        ));
    }
    match v {
        CompileVerdict::Accepted => Outcome::Accepted,
        CompileVerdict::AcceptedWithWarnings(d) => {
            Outcome::AcceptedWithWarnings(d.iter().map(diagnostic).collect())
        }
        CompileVerdict::Rejected(d) => Outcome::Rejected(d.iter().map(diagnostic).collect()),
        CompileVerdict::Crashed { signal, message } => Outcome::Crashed {
            detail: match signal {
                Some(s) => format!("signal {s}: {}", last_lines(message)),
                None => last_lines(message),
            },
        },
        CompileVerdict::TimedOut { after } => Outcome::TimedOut {
            limit_ms: after.as_millis() as u64,
        },
    }
}

fn last_lines(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

impl Target for PtxasTarget {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn version(&self) -> String {
        self.install.version.to_string()
    }

    fn kind(&self) -> TargetKind {
        TargetKind::CompileOnly
    }

    fn run(&mut self, case: &Case) -> Outcome {
        outcome_of(&self.verdict(case))
    }

    fn run_batch(&mut self, cases: &[Case]) -> Vec<Outcome> {
        self.verdicts(cases).iter().map(outcome_of).collect()
    }
}

/// Builds `ptxas@<version>` (or `ptxas`: the newest installed). `None` when the name is not a
/// ptxas name; `Some(Err)` when no matching ptxas is installed, saying what is.
pub fn build(name: &str) -> Option<Result<Box<dyn Target>, Unavailable>> {
    if name != "ptxas" && !name.starts_with("ptxas@") {
        return None;
    }
    let all = installed();
    let names = target_names(&all);
    Some(match select(name, &all)? {
        Ok(v) => {
            let newest = v
                .into_iter()
                .next_back()
                .expect("select never returns an empty list");
            let mut t = PtxasTarget::new(newest);
            if let Some(k) = all.iter().position(|i| i.path == t.install.path) {
                t.name = names[k].clone();
            }
            Ok(Box::new(t) as Box<dyn Target>)
        }
        Err(reason) => Err(Unavailable(reason.to_string())),
    })
}

/// Expands a target name into the names it stands for: `ptxas` into one name per installed
/// ptxas (`--targets ptxas` means every installed version, those of
/// `scripts/setup-ptxas`, `$TCGEN05_PTXAS` and `$PATH`); any other ptxas name into itself.
/// `None` when the name is not a ptxas name. With nothing installed, `ptxas` stays as it is,
/// so that building it says why it is unavailable.
pub fn expand(name: &str) -> Option<Vec<String>> {
    if name == "ptxas" {
        let all = installed();
        return Some(if all.is_empty() {
            vec![name.to_string()]
        } else {
            target_names(&all)
        });
    }
    name.starts_with("ptxas@").then(|| vec![name.to_string()])
}

/// One line per installed ptxas for `tcgen05-fuzz targets`; a single unavailable line when
/// there is none.
pub fn candidates() -> Vec<TargetInfo> {
    let all = installed();
    if all.is_empty() {
        let reason = match select("ptxas", &all) {
            Some(Err(r)) => r.to_string(),
            _ => "no ptxas found".into(),
        };
        return vec![TargetInfo {
            name: "ptxas@<version>".into(),
            kind: TargetKind::CompileOnly,
            version: None,
            availability: Availability::Unavailable(reason),
            description: "ptxas, compile only".into(),
        }];
    }
    all.iter()
        .zip(target_names(&all))
        .map(|(i, name)| TargetInfo {
            name,
            kind: TargetKind::CompileOnly,
            version: Some(i.version.to_string()),
            availability: Availability::Available,
            description: format!(
                "ptxas {} ({}, from {})",
                i.version,
                i.path.display(),
                i.source
            ),
        })
        .collect()
}
