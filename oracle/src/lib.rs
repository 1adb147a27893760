//! `tcgen05-oracle`: the tcgen05 spec as an executable model.
//!
//! - [`catalogue`]: every row of the rules catalogue (reference §6) as data;
//! - [`check()`]: the static rules, as [`Violation`]s;
//! - [`expect()`]: what the spec allows for a run: the run verdict, the allowed values of every
//!   observation record, the leak status, each with the rules that decided it.
//!
//! The oracle depends only on `tcgen05-ir` and shares no code with the generators or the
//! simulator (docs/architecture.md, rules 1-4). Where the spec is silent (reference §7) it answers
//! unspecified.
#![deny(missing_docs)]

pub mod catalogue;
mod check;
mod gating;
mod instr;
pub mod kernel;
pub mod lifted;
mod peer;
// Test support, not part of the API: probe programs across the static rules, which the
// oracle's tests and the ptxas comparison in `tcgen05-drivers`' tests share.
#[doc(hidden)]
pub mod probes;
// The passes of `expect_with`, public only so that the profiling examples (`expect_stages`,
// `stream_stats`) can time them one by one; not part of the API.
#[doc(hidden)]
pub mod run;
pub mod types;

pub use types::*;

use tcgen05_ir::Program;

/// Every static violation of `p` (reference §6 rows of kind static), in statement order.
pub fn check(p: &Program) -> Vec<Violation> {
    check::check(p)
}

/// What the spec allows for a run of `p` under the default options of `edition`.
pub fn expect(p: &Program) -> Expected {
    expect_with(p, &Options::default())
}

/// What the spec allows for a run of `p` under `opts`.
pub fn expect_with(p: &Program, opts: &Options) -> Expected {
    run::expect(p, opts)
}
