//! `tcgen05-engine`: the one judge, the campaign engine and the minimizer of tcgen05-fuzz
//! (docs/architecture.md, "Crates").
//!
//! - [`judge`]: a case and a target in; the oracle's expectation, the target's outcome, the
//!   verdict and its signature out. Every comparison of a target with the oracle goes
//!   through it.
//! - [`campaign`]: the multi-job, resumable, sharded campaign behind `tcgen05-fuzz campaign`,
//!   given a stop flag and a [`progress::Progress`] by its caller.
//!   [`campaign::ptxas`] is the ptxas version matrix (every installed ptxas on each case).
//! - [`minimize`]: the minimizer of a discrepancy (after wasm-shrink).
//! - [`regression`]: replaying and writing the regression corpus with the judge.
#![deny(missing_docs)]

pub mod campaign;
pub mod error;
pub mod expectations;
pub mod judge;
pub mod llvm_campaign;
pub mod minimize;
pub mod progress;
pub mod regression;

pub use error::EngineError;
