//! `tcgen05-generators`: well-formed and near-miss tcgen05 programs.
//!
//! - [`config`]: the swarm [`Config`] (sane `Default`, swarm `Arbitrary`, `sanitize` only
//!   removes);
//! - [`builder`]: valid-by-construction programs ([`Intent::Valid`]), deterministic from a seed
//!   or from fuzzer bytes ([`choice`]);
//! - [`mutate`]: near-miss mutators, each breaking exactly one rule of the catalogue
//!   ([`Intent::NearMiss`]);
//! - [`field_mutate`]: one-field mutations of any instruction or of the launch, legal or not
//!   (the ptxas campaign's case source, [`field_mutate::mutated_case`]);
//! - [`litmus`]: the canonical synchronization patterns of reference §4.4 with their one-step
//!   weakenings, and targeted families (lane quarters, capacity, pair skew);
//! - [`cases`]: reproducible streams of cases (valid, near-miss, litmus, mixed);
//! - [`strategy`]: proptest strategies (shrinking through the builder's byte input);
//! - [`fixup`]: repairs any program into a valid one;
//! - [`coverage`]: the instruction forms the builder claims, for reach tests;
//! - [`behaviours`]: the behaviour inventory, and which observed words each behaviour wrote;
//! - [`walk`]: statement paths;
//! - `stmts`, `mmaenc`, `target` (private): the generator's own tables of legal forms,
//!   encodings and target gating (reference §1-§3).
//!
//! None of this uses the oracle (docs/architecture.md rule 2): the cross-tests live in the
//! root `tests/generators_*`.
#![deny(missing_docs)]

pub mod behaviours;
pub mod builder;
pub mod cases;
pub mod choice;
pub mod config;
pub mod coverage;
pub mod field_mutate;
pub mod fixup;
pub mod litmus;
mod mmaenc;
pub mod mutate;
mod stmts;
pub mod strategy;
mod target;
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
    builder::build_seeded(cfg, seed)
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
