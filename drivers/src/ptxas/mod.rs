//! The `ptxas@<version>` targets: every ptxas the setup script installed, or that
//! `$TCGEN05_PTXAS` or `$PATH` names, as a compile-only target.
//!
//! - [`install`]: finding binaries and their versions; [`installed`] lists them;
//! - [`run`]: one ptxas process, its diagnostics, time limit and crash detection;
//! - [`verdict`]: the compile-only outcome of a case, diagnostics mapped to instructions;
//! - [`batch`]: many cases as one module, and splitting a rejected batch;
//! - [`differential`]: the version matrix across versions (each version's stance, the range
//!   that accepts, version disagreements) and its finding signature (used by
//!   `tcgen05_engine::campaign::ptxas`, which judges each version with the one judge);
//! - [`guardrail`]: the `-g-tmem-access-check` compile mode for the hardware target;
//! - [`sass`]: the disassembly check (a `cta_group::2` MMA must compile to the 2-CTA form);
//! - [`target`]: [`PtxasTarget`], [`build`], [`expand`], [`candidates`] for the registry.

pub mod batch;
pub mod differential;
pub mod guardrail;
pub mod install;
pub mod run;
pub mod sass;
pub mod target;
pub mod verdict;

pub use batch::{BatchStats, compile_batched, compile_one};
pub use install::{PtxasInstall, ToolVersion, installed};
pub use run::{CompileOptions, Diagnostic, Severity};
pub use target::{PtxasTarget, build, candidates, expand, outcome_of};
pub use verdict::{CaseDiagnostic, CompileVerdict, Instruction};
