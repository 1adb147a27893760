//! The `sim` target: an operational simulator of tcgen05 (issue 5). Work in progress: this
//! first version only registers the names.

use crate::outcome::Outcome;
use crate::target::{Availability, Target, TargetInfo, TargetKind, Unavailable};
use tcgen05_ir::Case;

/// The simulator target.
#[derive(Debug)]
pub struct SimTarget {
    name: String,
}

impl Target for SimTarget {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_string()
    }
    fn kind(&self) -> TargetKind {
        TargetKind::Running
    }
    fn run(&mut self, _case: &Case) -> Outcome {
        Outcome::NotRun("the simulator is not implemented yet".into())
    }
}

/// Builds `sim` targets (see [`crate::target`] for the names).
pub fn build(name: &str) -> Option<Result<Box<dyn Target>, Unavailable>> {
    (name == "sim" || name.starts_with("sim:"))
        .then(|| Ok(Box::new(SimTarget { name: name.to_string() }) as Box<dyn Target>))
}

/// The simulator's names.
pub fn candidates() -> Vec<TargetInfo> {
    vec![TargetInfo {
        name: "sim".into(),
        kind: TargetKind::Running,
        version: Some(env!("CARGO_PKG_VERSION").into()),
        availability: Availability::Available,
        description: "built-in operational simulator".into(),
    }]
}
