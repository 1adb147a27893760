//! `tcgen05-drivers`: the targets that run cases (`sim`, `ptxas@<version>`, `cuda`, `cuda-emu`,
//! `external:<command>`), the differential engine, the minimizer, the findings store and the
//! campaign engine (docs/architecture.md, "Targets").
#![deny(missing_docs)]

pub mod campaign;
pub mod cuda;
pub mod diff;
pub mod external;
pub mod llvm;
pub mod minimize;
pub mod ptxas;
pub mod report;
pub mod sim_target;
pub mod store;
pub mod target;

/// Outcomes (module `tcgen05_ir::outcome`), under their old path.
pub use tcgen05_ir::outcome;
/// The simulator (crate `tcgen05-sim`), under its old path.
pub use tcgen05_sim as sim;
