//! The PTX LLVM produced, run: its outcome on the simulator must be one the oracle allows for
//! the source program (issue 21, point 3).
//!
//! [`check`] reads the produced PTX back into a program with a [`Lifter`], runs that program
//! on the built-in simulator (`sim`, seeded random scheduler) and compares the outcome with the
//! oracle's expectation of the *source* program (`diff::compare`). An outcome the oracle does
//! not allow is a finding against the compiler ([`Subject::Lifted`]).
//!
//! Where the lifter cannot read the PTX, the run falls back to the source program itself
//! ([`Subject::Source`], with the lifter's reason): translation validation has established,
//! thread by thread, that the produced PTX issues the source's tcgen05 instructions with the
//! same operands in an order the memory model allows, so the source program is the model of
//! the produced PTX's tcgen05 behaviour. A disagreement there is one between the simulator and
//! the oracle, never LLVM's, and is reported as such, not as a compiler finding.
//!
//! [`printer_lifter`] is `tcgen05_ir::ptx::lift`, which reads the printer's idioms only (its
//! labels, the observation layout's address arithmetic, the `// launch:` comment): LLVM's PTX
//! has none of them, so today every LLVM module falls back. A lifter of real PTX plugs in as
//! another [`Lifter`] (`pipeline::Options::lifter`).

use crate::diff::{self, Verdict};
use crate::sim::{SimConfig, simulate};
use tcgen05_ir::Program;

/// Reads a PTX module back into a program, or says why it cannot.
pub type Lifter = fn(&str) -> Result<Program, String>;

/// The lifter of the printer's own PTX (`tcgen05_ir::ptx::lift`).
pub fn printer_lifter(ptx: &str) -> Result<Program, String> {
    tcgen05_ir::ptx::lift(ptx).map_err(|e| e.to_string())
}

/// Which program the simulator ran.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Subject {
    /// The program lifted from the produced PTX.
    Lifted,
    /// The source program, because the lifter could not read the produced PTX (its reason).
    Source {
        /// The lifter's error.
        not_lifted: String,
    },
}

/// The produced PTX's behaviour against the oracle.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Behaviour {
    /// What ran.
    pub subject: Subject,
    /// The simulator's outcome against the oracle's expectation of the source program.
    pub verdict: Verdict,
}

impl Behaviour {
    /// A finding against the compiler: the lifted program's outcome is one the oracle does not
    /// allow for the source program.
    pub fn is_finding(&self) -> bool {
        self.subject == Subject::Lifted && matches!(self.verdict, Verdict::Discrepancy(_))
    }

    /// One line: what ran and the verdict.
    pub fn summary(&self) -> String {
        let what = match &self.subject {
            Subject::Lifted => "the lifted PTX".to_string(),
            Subject::Source { not_lifted } => {
                format!("the source program (LLVM's PTX not lifted: {not_lifted})")
            }
        };
        let v = match &self.verdict {
            Verdict::Agree => "allowed by the oracle".to_string(),
            Verdict::Skip(r) => format!("not compared ({})", skip_words(r)),
            Verdict::Discrepancy(d) => format!(
                "outside what the oracle allows: {} / {}: {}",
                d.kind.as_str(),
                d.rules.first().map_or("-", |r| r.as_str()),
                d.detail
            ),
        };
        format!("{what} on sim: {v}")
    }
}

/// Runs the PTX `produced` for `source` (see the module documentation); `seed` seeds the
/// simulator's scheduler.
pub fn check(source: &Program, produced: &str, lifter: Lifter, seed: u64) -> Behaviour {
    let (subject, lifted) = match lifter(produced) {
        Ok(p) => (Subject::Lifted, Some(p)),
        Err(why) => (Subject::Source { not_lifted: why }, None),
    };
    let ran = lifted.as_ref().unwrap_or(source);
    let Some(Ok(config)) = SimConfig::parse("sim") else {
        unreachable!("`sim` is the simulator's own name")
    };
    let outcome = simulate(ran, config, seed);
    let expected = tcgen05_oracle::expect(source);
    Behaviour {
        subject,
        verdict: diff::compare(source, &expected, &outcome),
    }
}

fn skip_words(r: &diff::SkipReason) -> String {
    use diff::SkipReason as S;
    let rules =
        |v: &[tcgen05_ir::RuleId]| v.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
    match r {
        S::Unspecified(v) => format!("unspecified: {}", rules(v)),
        S::TargetCannotRun(w) => format!("the simulator cannot run it: {w}"),
        S::IllFormedProgram(v) => format!("ill-formed program: {}", rules(v)),
        S::WaitGaveUp => "an mbarrier wait gave up".into(),
        S::Incomparable(w) => format!("incomparable: {w}"),
    }
}
