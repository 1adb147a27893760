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
pub mod outcome;
pub mod ptxas;
pub mod report;
pub mod sim;
pub mod store;
pub mod target;
