//! `tcgen05-generators`: well-formed and near-miss tcgen05 programs (issue 4).
//!
//! - [`config`]: the swarm [`Config`];
//! - [`builder`]: valid-by-construction programs ([`Intent::Valid`]);
//! - [`choice`]: where decisions come from (a seed, or fuzzer bytes);
//! - [`stmts`], [`mmaenc`], [`target`]: the generator's own tables of legal forms, encodings
//!   and target gating (reference §1-§3), independent of the oracle (ARCHITECTURE.md rule 2).
#![deny(missing_docs)]

pub mod builder;
pub mod cases;
pub mod choice;
pub mod config;
pub mod coverage;
pub mod fixup;
pub mod litmus;
pub mod mmaenc;
pub mod mutate;
pub mod stmts;
pub mod strategy;
pub mod target;
pub mod walk;

/// Re-exported so that users of the byte-driven API need no direct dependency.
pub use arbitrary;
pub use choice::{BytesChoices, Choices, SeedChoices, case_seed};
pub use config::Config;

use tcgen05_ir::{Case, Intent, Program, Provenance};

/// The origin string of generated cases: crate name and version.
pub const ORIGIN: &str = concat!("tcgen05-generators ", env!("CARGO_PKG_VERSION"));

/// A valid program from a seed.
pub fn valid_program(cfg: &Config, seed: u64) -> Program {
    builder::build(cfg, &mut SeedChoices::new(seed))
}

/// A valid program from fuzzer bytes (never fails: exhausted bytes choose the smallest option).
pub fn valid_program_from_bytes(cfg: &Config, u: &mut arbitrary::Unstructured<'_>) -> Program {
    builder::build(cfg, &mut BytesChoices::new(u))
}

/// A [`Intent::Valid`] case from a seed.
pub fn valid_case(cfg: &Config, seed: u64) -> Case {
    Case {
        program: valid_program(cfg, seed),
        intent: Intent::Valid,
        provenance: Provenance {
            seed: Some(seed),
            origin: ORIGIN.to_string(),
            family: None,
        },
    }
}
