//! Skips by reason and by rule, and the targets whose skip rate for a reason is far above the
//! other targets' on the same cases (a target that skips what the others judge hides its bugs
//! behind the skip: a lost mbarrier arrive on a watchdog-bounded target shows only as more
//! "mbarrier wait gave up" skips).

use crate::diff::SkipReason;
use serde::{Deserialize, Serialize};

use super::TargetCounts;

/// The rule names a skip is counted under in [`TargetCounts::skip_rules`]: the rules that
/// make the outcome open (unspecified, ill-formed), sorted and without repeats, or `-` when
/// the reason names none.
pub fn skip_rules(r: &SkipReason) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = match r {
        SkipReason::Unspecified(rules) | SkipReason::IllFormedProgram(rules) => {
            rules.iter().map(|r| r.as_str()).collect()
        }
        SkipReason::TargetCannotRun(_) | SkipReason::WaitGaveUp | SkipReason::Incomparable(_) => {
            Vec::new()
        }
    };
    v.sort_unstable();
    v.dedup();
    if v.is_empty() {
        v.push("-");
    }
    v
}

/// Skip reasons ([`super::skip_name`]) that the oracle alone decides for every running target
/// (an undefined run, a statically ill-formed program): their rates differ between targets
/// only by kind (a compiler is judged on ill-formed programs, a running target is not), so
/// they are not compared.
const ORACLE_DECIDED: &[&str] = &["unspecified", "ill-formed program"];

/// A target's skip rate for a reason is flagged when it is at least this many times the other
/// targets' rate ...
pub const OUTLIER_FACTOR: f64 = 4.0;
/// ... and at least this much above it (a fraction of the cases) ...
pub const OUTLIER_MARGIN: f64 = 0.01;
/// ... over at least this many skips.
pub const OUTLIER_MIN_SKIPS: u64 = 10;

/// A target that skips far more cases for one reason than the other targets do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkipOutlier {
    /// The target.
    pub target: String,
    /// The skip reason ([`super::skip_name`]).
    pub reason: String,
    /// Its skips for this reason.
    pub skipped: u64,
    /// Its cases.
    pub cases: u64,
    /// The other targets' skips for this reason, together.
    pub others_skipped: u64,
    /// The other targets' cases, together.
    pub others_cases: u64,
}

impl SkipOutlier {
    /// The target's skip rate for the reason.
    pub fn rate(&self) -> f64 {
        ratio(self.skipped, self.cases)
    }

    /// The other targets' skip rate for the reason.
    pub fn others_rate(&self) -> f64 {
        ratio(self.others_skipped, self.others_cases)
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        format!(
            "`{}` skips {:.2}% of its cases as \"{}\" ({} of {}), the other targets {:.2}% ({} of {})",
            self.target,
            100.0 * self.rate(),
            self.reason,
            self.skipped,
            self.cases,
            100.0 * self.others_rate(),
            self.others_skipped,
            self.others_cases
        )
    }
}

fn ratio(n: u64, d: u64) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}

/// The targets whose skip rate for a reason decided by the target (not by the oracle alone)
/// is at least [`OUTLIER_FACTOR`] times and [`OUTLIER_MARGIN`] above the other targets'
/// rate on the same campaign, with at least [`OUTLIER_MIN_SKIPS`] skips; sorted by target,
/// then reason. Needs two targets with cases.
pub fn skip_outliers(targets: &[TargetCounts]) -> Vec<SkipOutlier> {
    let mut out = Vec::new();
    for (k, t) in targets.iter().enumerate() {
        for (reason, &n) in &t.skip {
            if ORACLE_DECIDED.contains(&reason.as_str()) || n < OUTLIER_MIN_SKIPS {
                continue;
            }
            let others = targets
                .iter()
                .enumerate()
                .filter(|(j, o)| *j != k && o.cases > 0);
            let (mut os, mut oc, mut any) = (0, 0, false);
            for (_, o) in others {
                os += o.skip.get(reason).copied().unwrap_or(0);
                oc += o.cases;
                any = true;
            }
            if !any {
                continue;
            }
            let x = SkipOutlier {
                target: t.target.clone(),
                reason: reason.clone(),
                skipped: n,
                cases: t.cases,
                others_skipped: os,
                others_cases: oc,
            };
            if x.rate() >= OUTLIER_FACTOR * x.others_rate()
                && x.rate() - x.others_rate() >= OUTLIER_MARGIN
            {
                out.push(x);
            }
        }
    }
    out.sort_by(|a, b| (&a.target, &a.reason).cmp(&(&b.target, &b.reason)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::Verdict;
    use tcgen05_ir::RuleId;

    fn counts(name: &str, cases: u64, gave_up: u64) -> TargetCounts {
        let mut t = TargetCounts::new(name, "1");
        for i in 0..cases {
            t.record(&if i < gave_up {
                Verdict::Skip(SkipReason::WaitGaveUp)
            } else {
                Verdict::Agree
            });
        }
        t
    }

    #[test]
    fn skips_are_counted_by_reason_and_by_rule() {
        let mut t = TargetCounts::new("sim", "1");
        let (a, b) = (RuleId::ALL[0], RuleId::ALL[1]);
        t.record(&Verdict::Skip(SkipReason::Unspecified(vec![b, a, b])));
        t.record(&Verdict::Skip(SkipReason::Unspecified(vec![a])));
        t.record(&Verdict::Skip(SkipReason::IllFormedProgram(vec![b])));
        t.record(&Verdict::Skip(SkipReason::WaitGaveUp));
        assert_eq!(t.skip["unspecified"], 2);
        let un = &t.skip_rules["unspecified"];
        assert_eq!((un[a.as_str()], un[b.as_str()]), (2, 1));
        assert_eq!(t.skip_rules["ill-formed program"][b.as_str()], 1);
        assert_eq!(t.skip_rules["mbarrier wait gave up"]["-"], 1);
        // Adding counts adds the rule counts too.
        let mut u = t.clone();
        u.add(&t);
        assert_eq!(u.skip_rules["unspecified"][a.as_str()], 4);
    }

    #[test]
    fn a_target_skipping_far_more_than_the_others_is_flagged() {
        // The lost-arrive picture: 0.4% of cases give up normally, 9% on the faulty target.
        let t = [
            counts("sim", 1000, 4),
            counts("sim:adversarial", 1000, 4),
            counts("sim+lost", 1000, 90),
        ];
        let o = skip_outliers(&t);
        assert_eq!(o.len(), 1, "{o:?}");
        assert_eq!(o[0].target, "sim+lost");
        assert_eq!(o[0].reason, "mbarrier wait gave up");
        assert_eq!((o[0].skipped, o[0].others_skipped), (90, 8));
        assert!(o[0].describe().contains("9.00%"), "{}", o[0].describe());
    }

    #[test]
    fn similar_rates_few_skips_and_oracle_decided_reasons_are_not_flagged() {
        // Within the factor.
        assert!(skip_outliers(&[counts("a", 1000, 30), counts("b", 1000, 10)]).is_empty());
        // Far above in ratio but below the margin (0.9% against 0%).
        assert!(skip_outliers(&[counts("a", 1000, 9), counts("b", 1000, 0)]).is_empty());
        // One target only: nothing to compare with.
        assert!(skip_outliers(&[counts("a", 1000, 500)]).is_empty());
        // A reason the oracle decides (a compiler has no "ill-formed program" skips).
        let mut run = TargetCounts::new("sim", "1");
        let mut cc = TargetCounts::new("ptxas", "1");
        for _ in 0..100 {
            run.record(&Verdict::Skip(SkipReason::IllFormedProgram(vec![])));
            cc.record(&Verdict::Agree);
        }
        assert!(skip_outliers(&[run, cc]).is_empty());
    }
}
