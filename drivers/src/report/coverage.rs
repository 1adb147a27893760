//! The rule-coverage matrix: for every rule of the catalogue (reference §6) and every target,
//! how many cases exercised the rule, and how many of those agreed, were skipped, or showed a
//! discrepancy on that target.
//!
//! A case *exercises* a rule when the oracle names the rule anywhere in its expectation for the
//! case (a static violation, the run verdict, an observation, the leak status), or when the case
//! is a near miss built to break it ([`rules_exercised`]). Every verdict of the case on a target
//! is counted in the row of each rule it exercised. A rule is *judged* on a target when one of
//! those verdicts agreed or disagreed there (not only skips): the headline counts judged rules,
//! with the rules only skipped cases exercised apart ([`Coverage::headline`]).

use crate::diff::Verdict;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt::Write as _;
use tcgen05_ir::{Case, Intent, RuleId};
use tcgen05_oracle::{Expected, ObsExpect, RunVerdict, SiteExpect, catalogue};

/// Words in a [`RuleSet`]: room for 256 rules (the catalogue has about 130; a test checks).
const WORDS: usize = 4;

/// A set of rules, as a bit set indexed by catalogue position.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RuleSet([u64; WORDS]);

impl RuleSet {
    /// Adds a rule.
    pub fn insert(&mut self, r: RuleId) {
        let i = r as usize;
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Whether the rule is in the set.
    pub fn contains(&self, r: RuleId) -> bool {
        let i = r as usize;
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    /// The rules in the set, in catalogue order.
    pub fn iter(&self) -> impl Iterator<Item = RuleId> + '_ {
        RuleId::ALL.iter().copied().filter(|r| self.contains(*r))
    }

    /// Number of rules in the set.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
}

/// The rules a case exercises: every rule the oracle's expectation names, and the rule a near
/// miss was built to break.
pub fn rules_exercised(case: &Case, e: &Expected) -> RuleSet {
    let mut s = RuleSet::default();
    if let Intent::NearMiss { breaks } = case.intent {
        s.insert(breaks);
    }
    for v in &e.violations {
        s.insert(v.rule);
    }
    for r in &e.run.rules {
        s.insert(*r);
    }
    if let RunVerdict::Undefined(rs) = &e.run.verdict {
        for r in rs {
            s.insert(*r);
        }
    }
    for r in &e.leak.rules {
        s.insert(*r);
    }
    for o in &e.obs {
        for r in &o.rules {
            s.insert(*r);
        }
        // The unspecified lanes' rules (`o.iter()`'s `Is(Unspecified)` lanes, without walking
        // the 32 lanes of a record that holds one expectation or exact words).
        let unspecified = |e: &ObsExpect, s: &mut RuleSet| {
            if let ObsExpect::Unspecified(rs) = e {
                for r in rs {
                    s.insert(*r);
                }
            }
        };
        match &o.expect {
            SiteExpect::Same(e) if o.lanes != 0 => unspecified(e, &mut s),
            SiteExpect::Same(_) | SiteExpect::Exact { .. } => {}
            SiteExpect::Each(v) => {
                for (l, e) in v.iter().enumerate().take(32) {
                    if o.lanes >> l & 1 != 0 {
                        unspecified(e, &mut s);
                    }
                }
            }
        }
    }
    s
}

/// One cell of the matrix: one rule on one target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    /// Cases that exercised the rule and ran on the target.
    pub cases: u64,
    /// Of those, cases that agreed.
    pub agree: u64,
    /// Cases skipped.
    pub skip: u64,
    /// Cases with a discrepancy.
    pub discrepancy: u64,
}

impl Cell {
    fn add(&mut self, o: &Cell) {
        self.cases += o.cases;
        self.agree += o.agree;
        self.skip += o.skip;
        self.discrepancy += o.discrepancy;
    }
}

/// The matrix: one row per rule (catalogue order), one column per target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Target names, in column order.
    pub targets: Vec<String>,
    /// `cells[rule index][target index]`; one row per [`RuleId::ALL`] entry.
    pub cells: Vec<Vec<Cell>>,
}

impl Coverage {
    /// An empty matrix for these targets.
    pub fn new(targets: &[String]) -> Self {
        Coverage {
            targets: targets.to_vec(),
            cells: vec![vec![Cell::default(); targets.len()]; RuleId::ALL.len()],
        }
    }

    /// Counts the verdict of one case on target `t` (column index) in every rule of `rules`.
    pub fn record(&mut self, rules: &RuleSet, t: usize, v: &Verdict) {
        for r in rules.iter() {
            let c = &mut self.cells[r as usize][t];
            c.cases += 1;
            match v {
                Verdict::Agree => c.agree += 1,
                Verdict::Skip(_) => c.skip += 1,
                Verdict::Discrepancy(_) => c.discrepancy += 1,
            }
        }
    }

    /// The cell of a rule and a target column.
    pub fn cell(&self, r: RuleId, t: usize) -> Cell {
        self.cells
            .get(r as usize)
            .and_then(|row| row.get(t))
            .copied()
            .unwrap_or_default()
    }

    /// Adds another matrix, matching targets by name (new targets become new columns).
    pub fn add(&mut self, o: &Coverage) {
        if self.cells.is_empty() {
            *self = Coverage::new(&[]);
        }
        for (j, name) in o.targets.iter().enumerate() {
            let k = match self.targets.iter().position(|t| t == name) {
                Some(k) => k,
                None => {
                    self.targets.push(name.clone());
                    for row in &mut self.cells {
                        row.push(Cell::default());
                    }
                    self.targets.len() - 1
                }
            };
            for (i, row) in o.cells.iter().enumerate() {
                if let Some(c) = row.get(j) {
                    self.cells[i][k].add(c);
                }
            }
        }
    }

    /// Rules no case exercised on any target.
    pub fn unexercised(&self) -> Vec<RuleId> {
        RuleId::ALL
            .iter()
            .copied()
            .filter(|r| (0..self.targets.len()).all(|t| self.cell(*r, t).cases == 0))
            .collect()
    }

    /// Rules judged on some target: a case that exercised the rule agreed with the oracle or
    /// showed a discrepancy there (not only skips).
    pub fn judged(&self) -> Vec<RuleId> {
        RuleId::ALL
            .iter()
            .copied()
            .filter(|r| {
                (0..self.targets.len()).any(|t| {
                    let c = self.cell(*r, t);
                    c.agree + c.discrepancy > 0
                })
            })
            .collect()
    }

    /// Rules exercised by some case, but whose every case was skipped on every target (the
    /// reasons are the targets' skip counts).
    pub fn only_skipped(&self) -> Vec<RuleId> {
        let judged = self.judged();
        let unexercised = self.unexercised();
        RuleId::ALL
            .iter()
            .copied()
            .filter(|r| !judged.contains(r) && !unexercised.contains(r))
            .collect()
    }

    /// The one-line summary every report leads with: rules judged, rules whose cases were
    /// all skipped, rules no case exercised.
    pub fn headline(&self) -> String {
        format!(
            "{} of {} rules judged (a case exercising the rule agreed or disagreed on a target); {} more exercised only by skipped cases; {} not exercised",
            self.judged().len(),
            RuleId::ALL.len(),
            self.only_skipped().len(),
            self.unexercised().len()
        )
    }

    /// The matrix as a markdown table: one row per rule, for each target the four counts
    /// `cases / agree / skip / discrepancy`.
    pub fn markdown(&self) -> String {
        let mut s = String::from("# Rule coverage\n\n");
        s.push_str(
            "Rows: the rules of the catalogue (reference §6). For each target: cases that \
             exercised the rule, agreements, skips, discrepancies. A case exercises a rule when \
             the oracle names it in its expectation, or when the case is a near miss built to \
             break it.\n\n",
        );
        let _ = writeln!(
            s,
            "{}. A skipped case (the spec leaves its outcome unspecified, the program is \
             ill-formed for a running target, the target cannot run it, an mbarrier wait gave \
             up) exercises a rule without judging the target on it; `report.md` gives the \
             reasons by target.\n",
            self.headline()
        );
        s.push_str("| rule | kind | section |");
        for t in &self.targets {
            let _ = write!(s, " `{t}` cases | agree | skip | disc. |");
        }
        s.push_str("\n| --- | --- | --- |");
        for _ in &self.targets {
            s.push_str(" ---: | ---: | ---: | ---: |");
        }
        s.push('\n');
        for r in RuleId::ALL {
            let row = catalogue::row(*r);
            let _ = write!(
                s,
                "| `{}` | {} | §{} |",
                r.as_str(),
                row.kind_text,
                catalogue::section(*r)
            );
            for t in 0..self.targets.len() {
                let c = self.cell(*r, t);
                if c.cases == 0 {
                    s.push_str(" 0 | | | |");
                } else {
                    let d = if c.discrepancy > 0 {
                        format!("**{}**", c.discrepancy)
                    } else {
                        "0".into()
                    };
                    let _ = write!(s, " {} | {} | {} | {d} |", c.cases, c.agree, c.skip);
                }
            }
            s.push('\n');
        }
        s
    }
}

/// The serialized form: only rows with a count, keyed by rule name (stable across catalogue
/// reorderings).
#[derive(Serialize, Deserialize)]
struct Wire {
    targets: Vec<String>,
    rows: Vec<WireRow>,
}

#[derive(Serialize, Deserialize)]
struct WireRow {
    rule: String,
    cells: Vec<Cell>,
}

impl Serialize for Coverage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let rows = RuleId::ALL
            .iter()
            .filter_map(|r| {
                let row = self.cells.get(*r as usize)?;
                row.iter().any(|c| c.cases > 0).then(|| WireRow {
                    rule: r.as_str().to_string(),
                    cells: row.clone(),
                })
            })
            .collect();
        Wire {
            targets: self.targets.clone(),
            rows,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Coverage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = Wire::deserialize(d)?;
        let mut c = Coverage::new(&w.targets);
        for row in w.rows {
            let r: RuleId = row
                .rule
                .parse()
                .map_err(|_| serde::de::Error::custom(format!("unknown rule `{}`", row.rule)))?;
            if row.cells.len() != w.targets.len() {
                return Err(serde::de::Error::custom(format!(
                    "row `{}` has {} cells for {} targets",
                    row.rule,
                    row.cells.len(),
                    w.targets.len()
                )));
            }
            c.cells[r as usize] = row.cells;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::SkipReason;

    #[test]
    fn exercised_rules_include_every_unspecified_lanes_rules() {
        use tcgen05_generators::cases::{Mode, Stream};
        use tcgen05_oracle::LaneExpect;
        // The definition, lane by lane through `ObsItem::iter`.
        let by_lanes = |case: &Case, e: &Expected| {
            let mut s = rules_exercised(
                case,
                &Expected {
                    obs: vec![],
                    ..e.clone()
                },
            );
            for o in &e.obs {
                for r in &o.rules {
                    s.insert(*r);
                }
                for (_, lane) in o.iter() {
                    if let LaneExpect::Is(ObsExpect::Unspecified(rs)) = lane {
                        for r in rs {
                            s.insert(*r);
                        }
                    }
                }
            }
            s
        };
        let stream = Stream::new(tcgen05_generators::Config::default(), 9, Mode::Mixed);
        let mut unspecified_lanes = 0;
        for i in 0..300 {
            let c = stream.case(i).case;
            let e = tcgen05_oracle::expect(&c.program);
            unspecified_lanes += e
                .obs
                .iter()
                .flat_map(|o| o.iter())
                .filter(|(_, l)| matches!(l, LaneExpect::Is(ObsExpect::Unspecified(_))))
                .count();
            assert_eq!(rules_exercised(&c, &e), by_lanes(&c, &e), "case {i}");
        }
        assert!(unspecified_lanes > 0, "the sample has unspecified lanes");
    }

    #[test]
    fn a_rule_set_holds_every_catalogue_rule() {
        assert!(RuleId::ALL.len() <= WORDS * 64);
        let mut s = RuleSet::default();
        for r in RuleId::ALL {
            s.insert(*r);
        }
        assert_eq!(s.len(), RuleId::ALL.len());
        assert!(s.iter().eq(RuleId::ALL.iter().copied()));
    }

    #[test]
    fn record_counts_in_each_exercised_rule_only() {
        let mut c = Coverage::new(&["a".to_string(), "b".to_string()]);
        let mut s = RuleSet::default();
        let (r0, r1, r2) = (RuleId::ALL[0], RuleId::ALL[5], RuleId::ALL[9]);
        s.insert(r0);
        s.insert(r1);
        c.record(&s, 1, &Verdict::Skip(SkipReason::WaitGaveUp));
        c.record(&s, 1, &Verdict::Agree);
        assert_eq!(
            c.cell(r0, 1),
            Cell {
                cases: 2,
                agree: 1,
                skip: 1,
                discrepancy: 0
            }
        );
        assert_eq!(c.cell(r0, 0), Cell::default());
        assert_eq!(c.cell(r2, 1), Cell::default());
        assert!(c.unexercised().contains(&r2));
        assert!(!c.unexercised().contains(&r1));
    }

    /// A rule whose every case was skipped is exercised but not judged; the headline counts it
    /// apart from the judged ones.
    #[test]
    fn only_skipped_rules_are_not_counted_as_judged() {
        let mut c = Coverage::new(&["a".to_string(), "b".to_string()]);
        let (skipped, agreed, found) = (RuleId::ALL[1], RuleId::ALL[3], RuleId::ALL[7]);
        let one = |r: RuleId| {
            let mut s = RuleSet::default();
            s.insert(r);
            s
        };
        c.record(&one(skipped), 0, &Verdict::Skip(SkipReason::WaitGaveUp));
        c.record(&one(skipped), 1, &Verdict::Skip(SkipReason::WaitGaveUp));
        c.record(&one(agreed), 0, &Verdict::Skip(SkipReason::WaitGaveUp));
        c.record(&one(agreed), 1, &Verdict::Agree);
        let d = crate::diff::Discrepancy {
            kind: crate::diff::DiscrepancyKind::TrapOnDefined,
            rules: vec![],
            forms: vec![],
            key: None,
            detail: String::new(),
        };
        c.record(&one(found), 0, &Verdict::Discrepancy(d));
        assert_eq!(c.judged(), vec![agreed, found]);
        assert_eq!(c.only_skipped(), vec![skipped]);
        let n = RuleId::ALL.len();
        assert_eq!(
            c.headline(),
            format!(
                "2 of {n} rules judged (a case exercising the rule agreed or disagreed on a target); 1 more exercised only by skipped cases; {} not exercised",
                n - 3
            )
        );
    }

    #[test]
    fn adding_matches_targets_by_name() {
        let mut s = RuleSet::default();
        s.insert(RuleId::ALL[2]);
        let mut a = Coverage::new(&["x".to_string()]);
        a.record(&s, 0, &Verdict::Agree);
        let mut b = Coverage::new(&["y".to_string(), "x".to_string()]);
        b.record(&s, 1, &Verdict::Agree);
        b.record(&s, 0, &Verdict::Agree);
        a.add(&b);
        assert_eq!(a.targets, vec!["x", "y"]);
        assert_eq!(a.cell(RuleId::ALL[2], 0).agree, 2);
        assert_eq!(a.cell(RuleId::ALL[2], 1).agree, 1);
    }

    #[test]
    fn the_markdown_has_one_row_per_rule() {
        let c = Coverage::new(&["sim".to_string()]);
        let md = c.markdown();
        for r in RuleId::ALL {
            assert!(
                md.contains(&format!("| `{}` |", r.as_str())),
                "{r:?} missing"
            );
        }
    }
}
