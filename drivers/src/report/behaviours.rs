//! Behaviour coverage: for every row of the generators' behaviour inventory
//! ([`tcgen05_generators::behaviours::B`]), how many cases exercised it and how many observed
//! it exactly.
//!
//! A case *observed a behaviour exactly* when some target judged it (agreed or disagreed, not
//! skipped) and at least one word the behaviour wrote ([`Watch`]) had an exact or one-of
//! oracle expectation (an alloc address counts through its observation check, OQ-1). A
//! behaviour whose words the oracle leaves unspecified is exercised but not observed: the
//! gap shows in the table.

use crate::diff::Verdict;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use tcgen05_generators::behaviours::{Analysis, B, BSet, Watch};
use tcgen05_generators::walk::CodeRef;
use tcgen05_oracle::{Expected, LaneExpect, ObsExpect, ObsItem, SiteRef, WordExpect};

/// One row of the table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BehaviourRow {
    /// The behaviour's name ([`B::name`]).
    pub name: String,
    /// Cases that exercised it.
    pub cases: u64,
    /// Of those, cases whose observation records hold words it wrote (whatever the oracle
    /// expects of them): `cases - watched` is where the generator gives no view of it.
    #[serde(default)]
    pub watched: u64,
    /// Of those, cases that observed it exactly.
    pub observed_exact: u64,
}

/// The rows observed exactly in one case's expectation `e`, among those `a` found.
pub fn observed(a: &Analysis, e: &Expected) -> BSet {
    let mut out = BSet::default();
    if a.watches.is_empty() {
        return out;
    }
    for item in &e.obs {
        // The watches of this record: a range of the sorted list.
        let key = match item.key.site {
            SiteRef::Warp(i) => (true, usize::from(item.key.warp), i),
            SiteRef::Func { func, index } => (false, usize::from(func), index),
        };
        let start = a.watches.partition_point(|w| w.key() < key);
        for w in a.watches[start..].iter().take_while(|w| w.key() == key) {
            if out.contains(w.row) || !matches(w, item) {
                continue;
            }
            if exact_word(w, item) {
                out.insert(w.row);
            }
        }
    }
    out
}

fn matches(w: &Watch, item: &ObsItem) -> bool {
    if w.odd_cta && item.key.cta.is_multiple_of(2) {
        return false;
    }
    match (w.code, item.key.site) {
        (CodeRef::Warp(c), SiteRef::Warp(i)) => c == usize::from(item.key.warp) && i == w.site,
        (CodeRef::Func(f), SiteRef::Func { func, index }) => {
            f == usize::from(func) && index == w.site
        }
        _ => false,
    }
}

/// Whether a watched word of `item` has an exact or one-of expectation.
fn exact_word(w: &Watch, item: &ObsItem) -> bool {
    let (lo, hi) = (usize::from(w.words.0), usize::from(w.words.1));
    let lanes = w.lanes & item.lanes;
    (0..32u8).filter(|l| lanes >> l & 1 != 0).any(|l| {
        let Some(e) = item.lane(l) else { return false };
        match e {
            LaneExpect::Exact(v) => lo < v.len().min(hi),
            LaneExpect::Is(ObsExpect::Exact(v)) => lo < v.len().min(hi),
            LaneExpect::Is(ObsExpect::OneOf(vs)) => vs.iter().any(|v| lo < v.len().min(hi)),
            LaneExpect::Is(ObsExpect::PerWord(ws)) => ws
                .iter()
                .take(hi)
                .skip(lo)
                .any(|x| !matches!(x, WordExpect::Unspecified)),
            LaneExpect::Is(ObsExpect::Check(_)) => true,
            LaneExpect::Is(ObsExpect::Absent | ObsExpect::Unspecified(_)) => false,
        }
    })
}

/// The table: one row per behaviour, in inventory order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Behaviours(pub Vec<BehaviourRow>);

impl Default for Behaviours {
    fn default() -> Self {
        Behaviours(
            B::ALL
                .iter()
                .map(|b| BehaviourRow {
                    name: b.name().to_string(),
                    ..BehaviourRow::default()
                })
                .collect(),
        )
    }
}

impl Behaviours {
    /// Counts one case: the rows it exercised and, where some target judged it (its
    /// `verdicts`), the rows it observed exactly.
    pub fn record(&mut self, exercised: BSet, watched: BSet, observed: BSet, verdicts: &[Verdict]) {
        let judged = verdicts.iter().any(|v| !matches!(v, Verdict::Skip(_)));
        for b in exercised.iter() {
            let row = self.row_mut(b.name());
            row.cases += 1;
            if watched.contains(b) {
                row.watched += 1;
            }
            if judged && observed.contains(b) {
                row.observed_exact += 1;
            }
        }
    }

    fn row_mut(&mut self, name: &str) -> &mut BehaviourRow {
        match self.0.iter().position(|r| r.name == name) {
            Some(i) => &mut self.0[i],
            None => {
                self.0.push(BehaviourRow {
                    name: name.to_string(),
                    ..BehaviourRow::default()
                });
                self.0.last_mut().expect("just pushed")
            }
        }
    }

    /// Adds another table, matching rows by name.
    pub fn add(&mut self, o: &Behaviours) {
        for r in &o.0 {
            let m = self.row_mut(&r.name);
            m.cases += r.cases;
            m.watched += r.watched;
            m.observed_exact += r.observed_exact;
        }
    }

    /// Rows with no case that observed them exactly.
    pub fn unobserved(&self) -> Vec<&BehaviourRow> {
        self.0.iter().filter(|r| r.observed_exact == 0).collect()
    }

    /// The table as markdown (a section of `coverage.md`).
    pub fn markdown(&self) -> String {
        let mut s = String::from("# Behaviour coverage\n\n");
        s.push_str(
            "Rows: the behaviour inventory (`tcgen05_generators::behaviours`). *cases*: cases \
             that exercised the behaviour; *watched*: of those, cases whose observation \
             records hold words the behaviour wrote; *observed exactly*: cases some target \
             judged in which at least one of those words had an exact or one-of oracle \
             expectation. Watched but not observed: the oracle leaves the words unspecified; \
             not watched: the generator gives no view of the behaviour.\n\n",
        );
        let _ = writeln!(
            s,
            "{} of {} behaviours observed exactly.\n",
            self.0.len() - self.unobserved().len(),
            self.0.len()
        );
        s.push_str(
            "| behaviour | spec | cases | watched | observed exactly |\n| --- | --- | ---: | ---: | ---: |\n",
        );
        for r in &self.0 {
            let cite = B::ALL
                .iter()
                .find(|b| b.name() == r.name)
                .map(|b| b.cite())
                .unwrap_or("");
            let obs = if r.observed_exact == 0 {
                "**0**".to_string()
            } else {
                r.observed_exact.to_string()
            };
            let _ = writeln!(
                s,
                "| `{}` | {cite} | {} | {} | {obs} |",
                r.name, r.cases, r.watched
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::SkipReason;

    #[test]
    fn a_skipped_case_counts_as_exercised_not_observed() {
        let mut t = Behaviours::default();
        let mut s = BSet::default();
        s.insert(B::Shift);
        t.record(s, s, s, &[Verdict::Skip(SkipReason::WaitGaveUp)]);
        t.record(s, s, s, &[Verdict::Agree]);
        t.record(s, s, BSet::default(), &[Verdict::Agree]);
        t.record(s, BSet::default(), BSet::default(), &[Verdict::Agree]);
        let r = t.0.iter().find(|r| r.name == B::Shift.name()).unwrap();
        assert_eq!((r.cases, r.watched, r.observed_exact), (4, 3, 1));
    }

    #[test]
    fn unspecified_words_are_not_observed_exactly() {
        use tcgen05_generators::behaviours::analyse;
        use tcgen05_ir::samples;
        // A single st -> ld flow: the ld's words are exact, its record is watched.
        let p = samples::single_warp_roundtrip();
        let a = analyse(&p);
        assert!(a.exercised.contains(B::LdS32x32b));
        let mut e = tcgen05_oracle::expect(&p);
        assert!(observed(&a, &e).contains(B::LdS32x32b));
        for o in &mut e.obs {
            o.expect = tcgen05_oracle::SiteExpect::Same(ObsExpect::Unspecified(vec![]));
        }
        assert!(!observed(&a, &e).contains(B::LdS32x32b));
    }
}
