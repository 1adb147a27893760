//! The `Target` trait, target names, and the registry `build(name)`.
//!
//! # Target names
//!
//! | name | what |
//! | --- | --- |
//! | `sim` | the built-in simulator, seeded random scheduler (seed from the case) |
//! | `sim:random`, `sim:random@<seed>` | the same, with an explicit scheduler (and seed) |
//! | `sim:rr` | round-robin scheduler, asynchronous operations complete at once |
//! | `sim:adversarial` | completes asynchronous operations as late as the spec allows |
//! | `sim:exhaustive` | explores the schedules of small programs (bounded) |
//! | `ptxas@<version>` | compile-only, the ptxas of that CUDA version (module `ptxas`) |
//! | `llvm@<major>[:O0]`, `mlir@<major>[:O0]` | compile-only, LLVM's NVPTX back end (module `llvm`) |
//! | `cuda`, `cuda:<device>`, `cuda-emu` | hardware (module `cuda`) |
//! | `external:<command>` | a simulator speaking the protocol of `docs/external-protocol.md` |
//!
//! A list of targets is written `sim,ptxas@13.5,cuda` ([`parse_list`]); the command line takes
//! it from `--targets` and otherwise from the `TCGEN05_TARGETS` variable ([`from_env`]).
//!
//! # Plugging in a back end
//!
//! A back-end module (`ptxas`, `cuda`) exports
//!
//! ```text
//! /// `None`: the name is not this module's. `Some(Err(_))`: it is, but the target cannot be
//! /// built on this machine, and why.
//! pub fn build(name: &str) -> Option<Result<Box<dyn Target>, Unavailable>>;
//! /// Every name this module knows on this machine, with its availability (for `targets`).
//! pub fn candidates() -> Vec<TargetInfo>;
//! ```
//!
//! and [`resolve`] and [`available_targets`] call them (the `ptxas` and `cuda` modules do) (optional back ends return
//! `None` or `Unavailable`, never fail to build).

use crate::outcome::Outcome;
use serde::{Deserialize, Serialize};
use tcgen05_ir::Case;

/// Whether a target only compiles, or also runs (`compile-only`, `running` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    /// Reports only compile outcomes (ptxas).
    CompileOnly,
    /// Runs the case and reports run outcomes (sim, cuda, external).
    Running,
}

/// Why a target cannot be used on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

/// Whether a target can be used here (`available`, `{"unavailable": why}` in JSON).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Availability {
    /// It can.
    Available,
    /// It cannot, and why.
    Unavailable(String),
}

/// One line of `tcgen05-fuzz targets`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TargetInfo {
    /// The name to pass to [`build`].
    pub name: String,
    /// Compile-only or running.
    pub kind: TargetKind,
    /// The version of the implementation, when known.
    pub version: Option<String>,
    /// Whether it can be used here.
    pub availability: Availability,
    /// One line on what it is.
    pub description: String,
}

/// An implementation that can run (or compile) a case.
pub trait Target: Send {
    /// The name it was built from, e.g. `sim:adversarial` or `ptxas@13.5`.
    fn name(&self) -> String;
    /// The version of the implementation (tool version, driver version, crate version).
    fn version(&self) -> String;
    /// Compile-only or running.
    fn kind(&self) -> TargetKind;
    /// Runs one case. Never panics on any case: every failure is an [`Outcome`].
    fn run(&mut self, case: &Case) -> Outcome;
    /// Runs many cases; the default runs them one by one. Targets with a high fixed cost per
    /// invocation (ptxas: one process per module) override it to batch. The result has one
    /// outcome per case, in order.
    fn run_batch(&mut self, cases: &[Case]) -> Vec<Outcome> {
        cases.iter().map(|c| self.run(c)).collect()
    }
    /// Runs one case as many times as the target is set to (`--runs`: a hardware target
    /// compiles once and launches the kernel repeatedly, each run perturbed, docs/blackwell.md)
    /// and returns each distinct outcome once, with how many runs gave it. Default: one run
    /// ([`Target::run`]). The judge checks every returned outcome against the oracle.
    fn run_repeated(&mut self, case: &Case) -> Vec<Observed> {
        vec![Observed::once(self.run(case))]
    }
    /// [`Target::run_repeated`] for each case, in order. Default: one by one. The hardware
    /// targets override it to compile the next case while the current one runs.
    fn run_repeated_batch(&mut self, cases: &[&Case]) -> Vec<Vec<Observed>> {
        cases.iter().map(|c| self.run_repeated(c)).collect()
    }
    /// How many cases a campaign worker should give [`Target::run_repeated_batch`] at once:
    /// 1 (default) where a batch gains nothing; more where the target overlaps its cases.
    fn pipeline_depth(&self) -> u64 {
        1
    }
    /// Whether this target only runs programs: it never rejects one and never crashes, or
    /// its rejections and crashes are defects of the target itself, never verdicts on the
    /// program (`cuda-emu` compiles its own lowering), so every outcome that tells anything
    /// about the program is a run outcome, "not run" or its own step bound. The diff engine
    /// does not run such a target where no run outcome can change the verdict
    /// ([`crate::diff::verdict_for_any_run`]: a statically ill-formed program, an undefined
    /// run). Default: false (compilers reject, hardware and external processes can crash).
    fn only_runs(&self) -> bool {
        false
    }
    /// Why this target does not compute the MMA results of `program` it runs (`cuda-emu`:
    /// the MMA forms it does not emulate), or `None` when it computes every value it
    /// records. The judge then leaves the observed words whose values depend on MMA results
    /// out of the compare and counts them under this reason
    /// ([`crate::diff::not_emulated`]); every other behaviour is still compared. Default:
    /// `None`.
    fn values_not_computed(&self, _program: &tcgen05_ir::Program) -> Option<String> {
        None
    }
    /// How this target's bounded mbarrier wait loops end ([`crate::diff::WaitBound`]): the
    /// diff engine judges a wait that gave up by it. Default: a watchdog's bound (hardware
    /// and external processes stop waiting after a time, so a late arrive looks like a lost
    /// one); the simulator, which gives up only when nothing can move, is fair.
    fn wait_bound(&self) -> crate::diff::WaitBound {
        crate::diff::WaitBound::Watchdog
    }
}

/// One distinct outcome of a case's runs ([`Target::run_repeated`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// The outcome.
    pub outcome: Outcome,
    /// How many runs gave it.
    pub runs: u32,
    /// The first of them (0-based); with its perturbation, what reruns it.
    pub first_run: u32,
    /// The perturbation of that run (0: none, the program as printed).
    pub perturbation: u32,
    /// Runs made in all (the same in every element of one case's list).
    pub of: u32,
}

impl Observed {
    /// The outcome of a single run.
    pub fn once(outcome: Outcome) -> Observed {
        Observed {
            outcome,
            runs: 1,
            first_run: 0,
            perturbation: 0,
            of: 1,
        }
    }
}

impl std::fmt::Debug for dyn Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({} {})", self.name(), self.version())
    }
}

/// Why [`resolve`] gave no target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetError {
    /// No module knows this name.
    Unknown(String),
    /// The name is known but the target cannot be used here.
    Unavailable {
        /// The name.
        name: String,
        /// Why.
        reason: Unavailable,
    },
}

impl std::fmt::Display for TargetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetError::Unknown(n) => write!(
                f,
                "unknown target `{n}` (known: sim, sim:random[@seed], sim:rr, sim:adversarial, \
                 sim:exhaustive, ptxas@<version>, llvm@<major>, mlir@<major>, cuda, cuda-emu, external:<command>; \
                 `tcgen05-fuzz targets` lists what this machine has)"
            ),
            TargetError::Unavailable { name, reason } => {
                write!(f, "target `{name}` is not available here: {reason}")
            }
        }
    }
}

impl std::error::Error for TargetError {}

/// Builds the target `name`, or says why not.
pub fn resolve(name: &str) -> Result<Box<dyn Target>, TargetError> {
    let name = name.trim();
    let found = crate::sim_target::build(name)
        .or_else(|| crate::external::build(name))
        .or_else(|| crate::ptxas::build(name))
        .or_else(|| crate::llvm::build(name))
        .or_else(|| crate::cuda::build(name));
    match found {
        Some(Ok(t)) => Ok(t),
        Some(Err(reason)) => Err(TargetError::Unavailable {
            name: name.to_string(),
            reason,
        }),
        None => Err(TargetError::Unknown(name.to_string())),
    }
}

/// Builds the target `name` for a campaign of the oracle edition `edition`: like [`resolve`],
/// except that a `sim` target whose name chooses no wording takes the edition's
/// ([`crate::sim::Wording`]: an implementation choice of the simulator, selected by name).
pub fn resolve_in(
    name: &str,
    edition: tcgen05_oracle::Edition,
) -> Result<Box<dyn Target>, TargetError> {
    let name = name.trim();
    match crate::sim_target::build_in(name, crate::sim::Wording::named(edition.as_str())) {
        Some(Ok(t)) => Ok(t),
        Some(Err(reason)) => Err(TargetError::Unavailable {
            name: name.to_string(),
            reason,
        }),
        None => resolve(name),
    }
}

/// Builds the target `name` if it is known and available here.
pub fn build(name: &str) -> Option<Box<dyn Target>> {
    resolve(name).ok()
}

/// Every target this build knows, with its availability on this machine.
pub fn available_targets() -> Vec<TargetInfo> {
    let mut v = crate::sim_target::candidates();
    v.extend(crate::ptxas::candidates());
    v.extend(crate::llvm::candidates());
    v.extend(crate::cuda::candidates());
    v.extend(crate::external::candidates());
    v
}

/// Splits a comma-separated target list (`sim,ptxas@13.5,cuda`), dropping empty items.
/// An `external:` command may not contain a comma.
pub fn parse_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The environment variable that names the default target list.
pub const TARGETS_VAR: &str = "TCGEN05_TARGETS";

/// The target list: `flag` (from `--targets`) if given, else `TCGEN05_TARGETS`, else `sim`;
/// group names expanded ([`expand_list`]).
pub fn from_env(flag: Option<&str>) -> Vec<String> {
    if let Some(f) = flag {
        return expand_list(parse_list(f));
    }
    match std::env::var(TARGETS_VAR) {
        Ok(v) if !parse_list(&v).is_empty() => expand_list(parse_list(&v)),
        _ => vec!["sim".to_string()],
    }
}

/// Expands names that stand for several targets (`ptxas`: one `ptxas@<version>` per installed
/// ptxas, `crate::ptxas::expand`; `llvm`, `mlir`: one per LLVM install, `crate::llvm::expand`)
/// and drops repeats, keeping the first.
pub fn expand_list(names: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let expanded = crate::ptxas::expand(&n)
            .or_else(|| crate::llvm::expand(&n))
            .unwrap_or_else(|| vec![n]);
        for m in expanded {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out
}

/// Builds every target of a list; the first failure is the error.
pub fn resolve_all(names: &[String]) -> Result<Vec<Box<dyn Target>>, TargetError> {
    names.iter().map(|n| resolve(n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_split_on_commas() {
        assert_eq!(
            parse_list("sim, ptxas@13.5,,cuda"),
            vec!["sim", "ptxas@13.5", "cuda"]
        );
        assert!(parse_list("").is_empty());
        assert_eq!(from_env(Some("sim:rr")), vec!["sim:rr"]);
    }

    #[test]
    fn unknown_names_are_errors_not_panics() {
        assert!(matches!(
            resolve("no-such-target"),
            Err(TargetError::Unknown(_))
        ));
        assert!(build("no-such-target").is_none());
    }

    #[test]
    fn the_simulator_is_always_available() {
        let t = build("sim").expect("sim is built in");
        assert_eq!(t.kind(), TargetKind::Running);
        assert!(
            available_targets()
                .iter()
                .any(|i| i.name == "sim" && i.availability == Availability::Available)
        );
    }
}
