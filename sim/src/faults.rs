//! Fault injection: named, realistic implementation bugs the simulator can be told to have, to
//! prove that the harness finds bugs (the table in drivers/README.md). A faulty simulator is built from a
//! target name with `+<fault>` suffixes, e.g. `sim:adversarial+wait-ld-early`; `tcgen05-fuzz
//! targets` lists them after the targets.

use serde::{Deserialize, Serialize};

macro_rules! faults {
    ($($variant:ident => $name:literal, $doc:literal;)*) => {
        /// One injectable bug.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Fault {
            $(#[doc = $doc] $variant,)*
        }

        impl Fault {
            /// Every fault.
            pub const ALL: &'static [Fault] = &[$(Fault::$variant,)*];

            /// Its name in target names (`sim+<name>`).
            pub fn name(self) -> &'static str {
                match self { $(Fault::$variant => $name,)* }
            }

            /// What the bug is, in one sentence.
            pub fn description(self) -> &'static str {
                match self { $(Fault::$variant => $doc,)* }
            }

            /// The fault called `name`.
            pub fn from_name(name: &str) -> Option<Fault> {
                match name { $($name => Some(Fault::$variant),)* _ => None }
            }
        }
    };
}

faults! {
    WaitLdEarly => "wait-ld-early",
        "tcgen05.wait::ld returns before the thread's loads complete (registers read stale).";
    WaitStEarly => "wait-st-early",
        "tcgen05.wait::st returns before the thread's stores reach TMEM.";
    LdNumTruncated => "ld-num-truncated",
        "tcgen05.ld with .num > .x1 fills only the first repetition's registers.";
    LaneQuarterOffByOne => "lane-quarter-off-by-one",
        "tcgen05.ld computes the warp's lane quarter from warp rank + 1.";
    DeallocWrongColumns => "dealloc-wrong-columns",
        "tcgen05.dealloc frees the nCols columns after the allocation instead of the allocation.";
    AllocPairNotCollective => "alloc-pair-not-collective",
        "a ::2 alloc is not collective: each warp of the pair allocates for both CTAs, so the pair allocates twice.";
    RelinquishClusterWide => "relinquish-cluster-wide",
        "relinquish_alloc_permit removes the permit of every CTA of the cluster, not only the executing CTA.";
    CommitArriveEarly => "commit-arrive-early",
        "tcgen05.commit arrives on the mbarrier at once, before the committed MMAs complete.";
    MbarParityInverted => "mbar-parity-inverted",
        "mbarrier.try_wait.parity tests the opposite parity, so it succeeds before the phase completes.";
    BarCtaNoWait => "bar-cta-no-wait",
        "barrier.sync lets each warp through without waiting for the others.";
    ClusterBarrierNoWait => "cluster-barrier-no-wait",
        "barrier.cluster.wait does not wait for the other CTAs' arrivals.";
    MmaIgnoresEnableD => "mma-ignores-enable-d",
        "tcgen05.mma always accumulates into D, as if enable-input-d were true.";
    MmaDolInverted => "mma-dol-inverted",
        "tcgen05.mma reads disable-output-lane inverted: it writes exactly the lanes it should skip.";
    MmaScaleDIgnored => "mma-scale-d-ignored",
        "tcgen05.mma ignores scale-input-d: D = A*B + D instead of A*B + D * 2^-s.";
    MmaPipelineReordered => "mma-pipeline-reordered",
        "two tcgen05.mma on the same accumulator from one thread may complete out of issue order.";
    CommitLostArrive => "commit-lost-arrive",
        "tcgen05.commit loses its mbarrier arrive when the operations it tracks are still in flight at the commit (it arrives only when nothing was pending).";
    CommitTracksFirstOnly => "commit-tracks-first-only",
        "tcgen05.commit tracks only the first outstanding operation, not every earlier one.";
    FenceNoop => "fence-noop",
        "tcgen05.fence::* are no-ops: no cross-thread pipeline ordering, and a tcgen05.ld after a wait is hoisted above it (reads TMEM as it was before the wait).";
}

/// A set of faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Faults(pub u32);

impl Faults {
    /// No fault: the correct simulator.
    pub const NONE: Faults = Faults(0);

    /// The set holding `f` only.
    pub fn one(f: Fault) -> Faults {
        Faults(1 << f as u32)
    }

    /// Whether `f` is in the set.
    pub fn has(self, f: Fault) -> bool {
        self.0 & (1 << f as u32) != 0
    }

    /// Adds `f`.
    pub fn with(self, f: Fault) -> Faults {
        Faults(self.0 | 1 << f as u32)
    }

    /// The faults in the set.
    pub fn list(self) -> Vec<Fault> {
        Fault::ALL
            .iter()
            .copied()
            .filter(|f| self.has(*f))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_at_least_twelve_named_faults_with_unique_names() {
        assert!(Fault::ALL.len() >= 12);
        for f in Fault::ALL {
            assert_eq!(Fault::from_name(f.name()), Some(*f));
        }
        let s = Faults::one(Fault::FenceNoop).with(Fault::WaitLdEarly);
        assert_eq!(s.list(), vec![Fault::WaitLdEarly, Fault::FenceNoop]);
        assert!(!Faults::NONE.has(Fault::FenceNoop));
    }
}
