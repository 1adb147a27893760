//! The `sim` targets: the simulator of the `tcgen05-sim` crate as a [`Target`]
//! (docs/architecture.md, "Targets").

use crate::sim::{SimConfig, Wording, simulate};
use crate::target::{Availability, Target, TargetInfo, TargetKind, Unavailable};
use tcgen05_ir::Case;
use tcgen05_ir::outcome::Outcome;

/// The simulator as a [`Target`].
#[derive(Debug, Clone)]
pub struct SimTarget {
    name: String,
    config: SimConfig,
}

impl SimTarget {
    /// A simulator target with this configuration and name.
    pub fn new(name: &str, config: SimConfig) -> Self {
        SimTarget {
            name: name.to_string(),
            config,
        }
    }

    /// Its configuration.
    pub fn config(&self) -> SimConfig {
        self.config
    }
}

impl Target for SimTarget {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn version(&self) -> String {
        format!("tcgen05-drivers {}", env!("CARGO_PKG_VERSION"))
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Running
    }

    /// The simulator has no static checks and never crashes: every case gives a run outcome
    /// (or "not run", or its step bound).
    fn only_runs(&self) -> bool {
        true
    }

    /// A bounded `mbarrier.try_wait` loop gives up only when nothing else in the grid can
    /// move (see "Blocking and deadlock" above): the simulator is fair.
    fn wait_bound(&self) -> crate::diff::WaitBound {
        crate::diff::WaitBound::Fair
    }

    fn run(&mut self, case: &Case) -> Outcome {
        simulate(
            &case.program,
            self.config,
            case.provenance.seed.unwrap_or(0),
        )
    }
}

/// Builds `sim` targets (names in [`crate::target`]); faults are `+<fault>` suffixes.
pub fn build(name: &str) -> Option<Result<Box<dyn Target>, Unavailable>> {
    build_in(name, None)
}

/// Builds `sim` targets with `wording` where the name does not choose one (`~seeds`,
/// `~ptx93`); `None`: the default wording.
pub fn build_in(
    name: &str,
    wording: Option<Wording>,
) -> Option<Result<Box<dyn Target>, Unavailable>> {
    Some(match SimConfig::parse_wording(name)? {
        Ok((mut c, chosen)) => {
            if !chosen && let Some(w) = wording {
                c.wording = w;
            }
            Ok(Box::new(SimTarget::new(name, c)) as Box<dyn Target>)
        }
        Err(e) => Err(Unavailable(e.to_string())),
    })
}

/// The simulator's names for `tcgen05-fuzz targets` (faults are hidden).
pub fn candidates() -> Vec<TargetInfo> {
    let v = Some(format!("tcgen05-drivers {}", env!("CARGO_PKG_VERSION")));
    [
        (
            "sim",
            "built-in simulator, seeded random scheduler (seed from the case)",
        ),
        (
            "sim:rr",
            "built-in simulator, round robin, async operations complete at once",
        ),
        (
            "sim:adversarial",
            "built-in simulator, async operations complete as late as allowed",
        ),
        (
            "sim:exhaustive",
            "built-in simulator, bounded exploration of every schedule",
        ),
    ]
    .into_iter()
    .map(|(n, d)| TargetInfo {
        name: n.into(),
        kind: TargetKind::Running,
        version: v.clone(),
        availability: Availability::Available,
        description: d.into(),
    })
    .collect()
}
