//! The judge's verdict step: an outcome against the oracle's expectation, compared with the
//! target's own wait bound and signed under the target's name.
//!
//! This is the one place that turns an outcome into a [`Ruling`]. The engine's judge
//! (`tcgen05_engine::judge`, which adds the oracle's expectation and the target's run) re-exports
//! it, and the checks that run inside a target of this crate (the LLVM target's behaviour
//! check, `crate::llvm::behaviour`) call it here, since this crate sits below the engine.

use super::{Signature, Verdict, WaitBound, compare_with_bound};
use crate::outcome::Outcome;
use tcgen05_ir::Program;
use tcgen05_ir::observe::Layout;
use tcgen05_oracle::Expected;

/// A verdict with the signature of its discrepancy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruling {
    /// Agree, skip (with its reason) or discrepancy.
    pub verdict: Verdict,
    /// The discrepancy's signature under the target's name; `None` unless the verdict is a
    /// discrepancy.
    pub signature: Option<Signature>,
}

/// Compares `outcome` of the target named `target`, whose bounded waits end as `bound` says,
/// with `expected` (`diff::compare_with_bound`, with `layout` the layout of `program`), and
/// signs a discrepancy: the step of the judge that needs no target, for outcomes already
/// at hand (a batch of compile-only runs, a stored finding).
pub fn rule(
    program: &Program,
    layout: &Layout,
    expected: &Expected,
    outcome: &Outcome,
    target: &str,
    bound: WaitBound,
) -> Ruling {
    let verdict = compare_with_bound(program, layout, expected, outcome, bound);
    let signature = match &verdict {
        Verdict::Discrepancy(d) => Some(Signature::of(d, target)),
        _ => None,
    };
    Ruling { verdict, signature }
}
