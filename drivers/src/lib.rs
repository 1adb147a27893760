//! `tcgen05-drivers`: the targets that run cases (`sim`, `ptxas@<version>`, `cuda`, `cuda-emu`,
//! `external:<command>`), the comparison of an outcome with the oracle's expectation, the
//! findings store and the reports (docs/architecture.md, "Targets"). The judge, the campaign
//! engine and the minimizer built on them are the crate `tcgen05-engine`.
#![deny(missing_docs)]

pub mod cuda;
pub mod diff;
pub mod external;
pub mod llvm;
pub mod ptxas;
pub mod report;
pub mod sim_target;
pub mod store;
pub mod target;

/// Outcomes (module `tcgen05_ir::outcome`), under their old path.
pub use tcgen05_ir::outcome;
/// The simulator (crate `tcgen05-sim`), under its old path.
pub use tcgen05_sim as sim;
