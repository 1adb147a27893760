//! How precisely the oracle predicted the observed words: per target, the data
//! words of the records of judged cases, split by what the oracle expected of each word.
//!
//! Only valid programs (no static violation, run verdict `Completes`) that the oracle judges
//! race-free (no record cites a race rule of reference §4) count: there, an unspecified word
//! is the oracle's imprecision, not the program's fault.

use serde::{Deserialize, Serialize};
use tcgen05_ir::observe::Layout;
use tcgen05_ir::{Program, RuleId};
use tcgen05_oracle::{Expected, LaneExpect, ObsExpect, RunVerdict, SiteRef, WordExpect};

/// Observed words by expectation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WordCounts {
    /// Words predicted exactly.
    pub exact: u64,
    /// Words predicted as one of a set of values (a race between known writes, an alloc
    /// address checked against its observation checks, a 16-bit MMA D cell whose low half
    /// is stated and high half is not, MMA-D-UNPACKED).
    pub one_of: u64,
    /// Words the oracle leaves unspecified.
    pub unspecified: u64,
}

/// The rules a record cites when some of its cells race (reference §4, `tmem::Races`).
const RACE_RULES: [RuleId; 6] = [
    RuleId::McmAsyncUnordered,
    RuleId::McmStBeforeUse,
    RuleId::McmXthread,
    RuleId::McmXthreadNonpipe,
    RuleId::McmLdWar,
    RuleId::WaitScope,
];

impl WordCounts {
    /// The words of `e`'s records, if `p` is valid and race-free (module documentation);
    /// `layout` is `Layout::of(p)`.
    pub fn of(p: &Program, layout: &Layout, e: &Expected) -> Option<WordCounts> {
        if !e.violations.is_empty() || e.run.verdict != RunVerdict::Completes {
            return None;
        }
        if e.obs
            .iter()
            .any(|o| o.rules.iter().any(|r| RACE_RULES.contains(r)))
        {
            return None;
        }
        let _ = p;
        let mut w = WordCounts::default();
        for item in &e.obs {
            let site = match item.key.site {
                SiteRef::Warp(i) => layout
                    .warp_sites
                    .get(usize::from(item.key.warp))
                    .and_then(|s| s.get(i as usize)),
                SiteRef::Func { func, index } => layout
                    .func_sites
                    .get(usize::from(func))
                    .and_then(|s| s.get(index as usize)),
            };
            let n = u64::from(site.map_or(0, |s| s.words));
            for (_, lane) in item.iter() {
                match lane {
                    LaneExpect::Exact(v) => w.exact += v.len() as u64,
                    LaneExpect::Is(ObsExpect::Exact(v)) => w.exact += v.len() as u64,
                    LaneExpect::Is(ObsExpect::OneOf(vs)) => {
                        let len = vs.first().map_or(0, Vec::len);
                        for i in 0..len {
                            if vs.iter().all(|v| v.get(i) == vs[0].get(i)) {
                                w.exact += 1;
                            } else {
                                w.one_of += 1;
                            }
                        }
                    }
                    LaneExpect::Is(ObsExpect::PerWord(ws)) => {
                        for x in ws {
                            match x {
                                WordExpect::Exact(_) => w.exact += 1,
                                // A set of allowed values: the stated low half of a 16-bit
                                // D cell (MMA-D-UNPACKED) with any high half.
                                WordExpect::OneOf(_) | WordExpect::Masked { .. } => w.one_of += 1,
                                WordExpect::Unspecified => w.unspecified += 1,
                            }
                        }
                    }
                    LaneExpect::Is(ObsExpect::Check(_)) => w.one_of += n,
                    LaneExpect::Is(ObsExpect::Unspecified(_)) => w.unspecified += n,
                    LaneExpect::Is(ObsExpect::Absent) => {}
                }
            }
        }
        Some(w)
    }

    /// Adds another count.
    pub fn add(&mut self, o: &WordCounts) {
        self.exact += o.exact;
        self.one_of += o.one_of;
        self.unspecified += o.unspecified;
    }

    /// Every word counted.
    pub fn total(&self) -> u64 {
        self.exact + self.one_of + self.unspecified
    }

    /// The share of unspecified words (0 when none was counted).
    pub fn unspecified_share(&self) -> f64 {
        if self.total() == 0 {
            0.0
        } else {
            self.unspecified as f64 / self.total() as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::samples;

    #[test]
    fn an_exact_ld_counts_every_recorded_word_as_exact() {
        // alloc, ObserveAddr, st .x2, wait::st, ld .x2, wait::ld, dealloc: the ld's 32 lanes
        // x 2 registers are the st's values (exact), the address record is checked (one of).
        let p = samples::single_warp_roundtrip();
        let e = tcgen05_oracle::expect(&p);
        let w = WordCounts::of(&p, &Layout::of(&p), &e).expect("valid and race-free");
        assert_eq!(
            w,
            WordCounts {
                exact: 64,
                one_of: 32,
                unspecified: 0
            }
        );
    }

    #[test]
    fn a_racing_program_is_not_counted() {
        // Without wait::st the ld races with the st (MCM-ST-BEFORE-USE).
        let mut p = samples::single_warp_roundtrip();
        p.warps[0].remove(3);
        let e = tcgen05_oracle::expect(&p);
        assert_eq!(WordCounts::of(&p, &Layout::of(&p), &e), None);
    }
}
