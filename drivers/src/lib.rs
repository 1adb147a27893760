//! `tcgen05-drivers`: the targets that run cases (`sim`, `ptxas@<version>`, `cuda`, `cuda-emu`,
//! `external:<command>`), the comparison of an outcome with the oracle's expectation, the
//! findings store and the reports (docs/architecture.md, "Targets"). The judge, the campaign
//! engine and the minimizer built on them are the crate `tcgen05-engine`.
#![deny(missing_docs)]

pub mod cuda;
pub mod diff;
pub mod external;
pub mod llvm;
pub mod outcome;
pub mod ptxas;
pub mod report;
pub mod sim;
pub mod store;
pub mod target;
