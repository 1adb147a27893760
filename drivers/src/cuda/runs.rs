//! Histograms of repeated runs (`--runs`, [`crate::target::Target::run_repeated`]): per case
//! family, how many runs gave each distinct outcome, how many of them the spec forbids, and
//! how much of what the spec allows the runs never showed.
//!
//! "Allowed, never seen" counts the alternatives of the oracle's racing records (reference
//! §4.4: a record that may hold one of several values, `ObsExpect::OneOf` vectors or
//! `WordExpect::OneOf` words) that no run recorded: the part of the allowed behaviour the
//! device did not exercise. Records of warp sites are counted (function sites are not).

use crate::diff::Verdict;
use crate::outcome::Outcome;
use crate::target::Observed;
use std::collections::BTreeMap;
use tcgen05_ir::Program;
use tcgen05_ir::observe::{Layout, View};
use tcgen05_oracle::{Expected, LaneExpect, ObsExpect, SiteRef, WordExpect};

/// How the judge ruled on one distinct outcome, for the histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Judged {
    /// The spec allows it.
    Allowed,
    /// Not judged (the spec leaves it open, or the case is ill-formed).
    Skipped,
    /// The spec forbids it.
    Forbidden,
}

impl Judged {
    /// From a verdict.
    pub fn of(v: &Verdict) -> Judged {
        match v {
            Verdict::Agree => Judged::Allowed,
            Verdict::Skip(_) => Judged::Skipped,
            Verdict::Discrepancy(_) => Judged::Forbidden,
        }
    }

    /// `allowed`, `skipped` or `FORBIDDEN`.
    pub fn name(self) -> &'static str {
        match self {
            Judged::Allowed => "allowed",
            Judged::Skipped => "skipped",
            Judged::Forbidden => "FORBIDDEN",
        }
    }
}

/// One family's runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Histogram {
    /// Compiled cases (family members; a member run in several rounds counts each time).
    pub cases: u64,
    /// Runs in all.
    pub runs: u64,
    /// Runs whose outcome the spec forbids.
    pub forbidden_runs: u64,
    /// Runs per distinct outcome (`member: outcome`), with its judgement.
    pub outcomes: BTreeMap<String, (u64, Judged)>,
    /// Allowed alternatives of racing records (see the module docs).
    pub allowed_alternatives: u64,
    /// Of those, the ones some run recorded.
    pub allowed_seen: u64,
}

impl Histogram {
    /// Adds one case's distinct outcomes (`observed`, with the verdict of each) under the
    /// member name `member`.
    pub fn add(
        &mut self,
        member: &str,
        program: &Program,
        expected: &Expected,
        observed: &[Observed],
        verdicts: &[Verdict],
    ) {
        self.cases += 1;
        for (o, v) in observed.iter().zip(verdicts) {
            let j = Judged::of(v);
            self.runs += u64::from(o.runs);
            if j == Judged::Forbidden {
                self.forbidden_runs += u64::from(o.runs);
            }
            let e = self
                .outcomes
                .entry(format!("{member}: {}", key(&o.outcome)))
                .or_insert((0, j));
            e.0 += u64::from(o.runs);
            e.1 = e.1.max(j);
        }
        let (n, seen) = alternatives(program, expected, observed);
        self.allowed_alternatives += n;
        self.allowed_seen += seen;
    }

    /// Distinct outcomes.
    pub fn distinct(&self) -> usize {
        self.outcomes.len()
    }

    /// Allowed alternatives no run showed.
    pub fn allowed_never_seen(&self) -> u64 {
        self.allowed_alternatives - self.allowed_seen
    }
}

/// An outcome's histogram key: its summary, and for a completion a hash of its words (two
/// completions differ exactly when their observations do).
pub fn key(o: &Outcome) -> String {
    match o {
        Outcome::Completed { words } => {
            let h = words.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, w| {
                (h ^ u64::from(*w)).wrapping_mul(0x0000_0100_0000_01b3)
            });
            format!("completed, observations #{:08x}", h as u32)
        }
        o => o.summary(),
    }
}

/// The allowed alternatives of `expected`'s racing warp records, and how many of them one of
/// the completed runs in `observed` recorded.
pub fn alternatives(program: &Program, expected: &Expected, observed: &[Observed]) -> (u64, u64) {
    let layout = Layout::of(program);
    let views: Vec<View<'_>> = observed
        .iter()
        .filter_map(|o| match &o.outcome {
            Outcome::Completed { words } if words.len() >= layout.total_words() => Some(View {
                layout: &layout,
                words,
            }),
            _ => None,
        })
        .collect();
    let (mut n, mut seen) = (0u64, 0u64);
    for item in &expected.obs {
        let SiteRef::Warp(i) = item.key.site else {
            continue;
        };
        let w = usize::from(item.key.warp);
        if item.key.cta >= layout.ctas || w >= layout.warp_base.len() {
            continue;
        }
        let Some(site) = layout.warp_sites[w].get(i as usize) else {
            continue;
        };
        for lane in 0..32u8 {
            let Some(LaneExpect::Is(e)) = item.lane(lane) else {
                continue;
            };
            let recs: Vec<&[u32]> = views
                .iter()
                .filter_map(|v| v.record(item.key.cta, w, site, u32::from(lane)))
                .collect();
            match e {
                ObsExpect::OneOf(vs) if vs.len() > 1 => {
                    for v in vs {
                        n += 1;
                        seen += u64::from(recs.contains(&v.as_slice()));
                    }
                }
                ObsExpect::PerWord(ws) => {
                    for (k, we) in ws.iter().enumerate() {
                        if let WordExpect::OneOf(vs) = we {
                            for v in vs {
                                n += 1;
                                seen += u64::from(recs.iter().any(|r| r.get(k) == Some(v)));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (n, seen)
}

/// The histograms as a Markdown table, one row per family, then the distinct outcomes of
/// each family with their runs.
pub fn markdown(families: &BTreeMap<String, Histogram>) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "| family | compiles | runs | distinct outcomes | forbidden runs | allowed alternatives seen / never seen |\n| --- | ---: | ---: | ---: | ---: | --- |\n",
    );
    for (name, h) in families {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} / {} |",
            h.cases,
            h.runs,
            h.distinct(),
            h.forbidden_runs,
            h.allowed_seen,
            h.allowed_never_seen()
        );
    }
    for (name, h) in families {
        let _ = writeln!(s, "\n{name}:\n");
        for (k, (runs, j)) in &h.outcomes {
            let _ = writeln!(s, "- {k}: {runs} runs, {}", j.name());
        }
    }
    s
}

/// A campaign's repeated runs of one case family on one target (`runs.md` of the campaign
/// folder): only cases that ran more than once are counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FamilyRuns {
    /// Cases.
    pub cases: u64,
    /// Runs.
    pub runs: u64,
    /// Runs whose outcome the spec forbids.
    pub forbidden_runs: u64,
    /// Distinct outcomes, summed over the cases.
    pub distinct: u64,
    /// Cases whose runs gave more than one distinct outcome.
    pub varied: u64,
}

impl FamilyRuns {
    /// Adds one case: its distinct outcomes and, for each, whether the spec forbids it.
    pub fn add(&mut self, observed: &[Observed], forbidden: &[bool]) {
        self.cases += 1;
        self.distinct += observed.len() as u64;
        self.varied += u64::from(observed.len() > 1);
        for (o, f) in observed.iter().zip(forbidden) {
            self.runs += u64::from(o.runs);
            if *f {
                self.forbidden_runs += u64::from(o.runs);
            }
        }
    }
}

/// A campaign's [`FamilyRuns`] (keys `target / family`) as Markdown.
pub fn campaign_markdown(runs: &BTreeMap<String, FamilyRuns>) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "# Repeated runs

Each case compiled once and run several times (`--runs`), every run after the first perturbed; every distinct outcome judged.

| target / family | cases | runs | distinct outcomes | cases with several outcomes | forbidden runs |
| --- | ---: | ---: | ---: | ---: | ---: |
",
    );
    for (k, r) in runs {
        let _ = writeln!(
            s,
            "| {k} | {} | {} | {} | {} | {} |",
            r.cases, r.runs, r.distinct, r.varied, r.forbidden_runs
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::SkipReason;

    fn obs(words: Vec<u32>, runs: u32) -> Observed {
        Observed {
            outcome: Outcome::Completed { words },
            runs,
            first_run: 0,
            perturbation: 0,
            of: 10,
        }
    }

    /// Counts come from the runs given, outcomes with the same words share a row, and the
    /// worst judgement of a row is kept.
    #[test]
    fn runs_are_counted_per_distinct_outcome() {
        let p = tcgen05_ir::samples::single_warp_roundtrip();
        let e = Expected::with_verdict(tcgen05_oracle::RunVerdict::Completes);
        let mut h = Histogram::default();
        let a = obs(vec![1, 2], 7);
        let b = obs(vec![1, 3], 3);
        h.add("m", &p, &e, &[a, b], &[Verdict::Agree, Verdict::Agree]);
        let trap = Observed {
            outcome: Outcome::Trapped {
                kind: tcgen05_ir::outcome::TrapKind::IllegalAddress,
                words: vec![],
            },
            ..obs(vec![], 1)
        };
        h.add(
            "m",
            &p,
            &e,
            &[obs(vec![1, 2], 4), trap],
            &[Verdict::Skip(SkipReason::WaitGaveUp), Verdict::Agree],
        );
        assert_eq!((h.cases, h.runs, h.forbidden_runs), (2, 15, 0));
        assert_eq!(h.distinct(), 3, "{h:?}");
        let row = &h.outcomes[&format!("m: {}", key(&Outcome::Completed { words: vec![1, 2] }))];
        assert_eq!(*row, (11, Judged::Skipped));
        assert!(
            markdown(&BTreeMap::from([("f".to_string(), h)])).contains("| f | 2 | 15 | 3 | 0 |")
        );
    }

    #[test]
    fn family_runs_count_forbidden_runs_and_varied_cases() {
        let mut f = FamilyRuns::default();
        f.add(&[obs(vec![1], 60), obs(vec![2], 4)], &[false, true]);
        f.add(&[obs(vec![1], 64)], &[false]);
        assert_eq!(
            f,
            FamilyRuns {
                cases: 2,
                runs: 128,
                forbidden_runs: 4,
                distinct: 3,
                varied: 1
            }
        );
        let md = campaign_markdown(&BTreeMap::from([("cuda-emu / x".to_string(), f)]));
        assert!(
            md.contains("| cuda-emu / x | 2 | 128 | 3 | 1 | 4 |"),
            "{md}"
        );
    }
}
