//! `tcgen05-ir`: the program model of tcgen05-fuzz.
//!
//! - [`qual`] and [`form`]: every tcgen05 opcode with its qualifiers (reference §3): one
//!   keyword table per qualifier, and one grammar table with a row per family from which each
//!   form's struct, printer, parser and error text come;
//! - [`idesc`]: the fields of the MMA instruction descriptor (three layouts);
//! - [`program`]: launch, warps, statements, functions, operands, cases;
//! - [`observe`]: the observation-buffer layout every target fills;
//! - [`outcome`]: what a target reports for one case;
//! - [`values`]: the data programs write, as pure functions of a seed;
//! - [`ptx`]: the PTX printer, the parser of printed modules, and the parser of real compiler
//!   output;
//! - [`codec`]: the binary case format;
//! - [`rule`]: the names of the rules catalogue (reference §6);
//! - [`rng`]: the one seeded random source (SplitMix64).
#![deny(missing_docs)]

#[cfg(feature = "arbitrary")]
pub mod arb;
pub mod codec;
pub mod form;
pub mod idesc;
pub mod observe;
pub mod outcome;
pub mod program;
pub mod ptx;
pub mod qual;
pub mod rng;
pub mod rule;
pub mod samples;
pub mod values;

pub use form::{Family, Form};
pub use program::*;
pub use qual::*;
pub use rule::RuleId;
