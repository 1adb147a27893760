//! The `llvm@<version>` and `mlir@<version>` targets: LLVM's NVPTX back end and MLIR's NVVM
//! dialect as compilers under test (`docs/llvm.md`).
//!
//! - [`install`]: finding `llc`/`opt`/`mlir-translate` and their versions;
//! - [`intrinsics`]: which intrinsic expresses each form, or why none does;
//! - [`lower`]: a program as an LLVM IR module (`llvm.nvvm.tcgen05.*` intrinsics), and the
//!   forms that have no intrinsic;
//! - [`mlir`]: the imported MLIR module with tcgen05 calls raised to `nvvm` ops;
//! - [`run`]: one tool process with a time limit, and the kinds of its failures;
//! - [`interp`]: a per-thread interpreter of PTX that records what a thread does;
//! - [`validate`]: translation validation of the PTX LLVM produced against the printer's;
//! - [`pipeline`]: lower, (for `mlir@`: import into MLIR and translate back), optimize,
//!   compile, assemble and validate one case: the verdict;
//! - [`behaviour`]: the produced PTX (lifted, or the source program where it cannot be) on
//!   the simulator against the oracle;
//! - the campaign of generated cases on these targets, with findings written as reproducers, is
//!   `tcgen05_engine::llvm_campaign` (it uses the engine's minimizer);
//! - [`target`]: [`LlvmTarget`] for the registry ([`build`], [`expand`], [`candidates`]).

pub mod behaviour;
pub mod install;
pub mod interp;
pub mod intrinsics;
pub mod lower;
pub mod mlir;
pub mod pipeline;
pub mod run;
pub mod target;
pub mod validate;

pub use install::{LlvmInstall, installed};
pub use lower::{NotLowered, lower};
pub use pipeline::{Level, LlvmVerdict};
pub use target::{LlvmTarget, build, candidates, expand};
