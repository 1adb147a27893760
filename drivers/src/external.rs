//! The `external:<command>` target and its protocol (issue 5). Work in progress.

use crate::target::{Availability, Target, TargetInfo, TargetKind, Unavailable};

/// Builds `external:<command>` targets.
pub fn build(name: &str) -> Option<Result<Box<dyn Target>, Unavailable>> {
    name.strip_prefix("external:").map(|_| Err(Unavailable("not implemented yet".into())))
}

/// The external target's entry for `targets`.
pub fn candidates() -> Vec<TargetInfo> {
    vec![TargetInfo {
        name: "external:<command>".into(),
        kind: TargetKind::Running,
        version: None,
        availability: Availability::Unavailable("needs a command".into()),
        description: "a simulator speaking docs/external-protocol.md".into(),
    }]
}
