//! Campaign reports: the counts a campaign keeps, and the files it writes at
//! the top of its output folder.
//!
//! | file | for | made by |
//! | --- | --- | --- |
//! | `report.md` | people | [`markdown`] |
//! | `report.json` | machines: cases, discrepancies and observed words ([`WordCounts`]) per target, findings, coverage | [`Summary`] (serde) |
//! | `junit.xml` | CI dashboards: one test per finding signature | [`junit`] |
//! | `coverage.md` | the rule-coverage matrix (rules x targets), then the behaviour table | [`coverage::Coverage::markdown`], [`behaviours::Behaviours::markdown`] |
//! | `coverage.svg` | the same matrix and behaviour table as a heat map | [`heatmap::svg_with`] |
//!
//! Everything here is a pure function of a [`Summary`], so a merged summary (several shards,
//! [`Summary::merge`]) writes the same reports as one run.

pub mod behaviours;
pub mod coverage;
pub mod heatmap;
pub mod junit;
pub mod markdown;
pub mod regression;
pub mod skips;
pub mod spelling;
pub mod words;

pub use behaviours::{BehaviourRow, Behaviours};
pub use coverage::{Cell, Coverage, RuleSet};
pub use junit::junit;
pub use markdown::markdown;
pub use skips::{SkipOutlier, skip_outliers};
pub use words::WordCounts;

use crate::diff::{SkipReason, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Verdict counts of one target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetCounts {
    /// Target name (`sim`, `ptxas@13.5`, ...).
    pub target: String,
    /// Its version, as the target reports it.
    pub version: String,
    /// Cases compared on this target.
    pub cases: u64,
    /// Cases that agreed with the oracle.
    pub agree: u64,
    /// Cases skipped, by reason ([`skip_name`]).
    pub skip: BTreeMap<String, u64>,
    /// Cases skipped, by reason and then by rule ([`skips::skip_rules`]: a skip for several
    /// rules counts once under each; `-` where the reason names no rule).
    #[serde(default)]
    pub skip_rules: BTreeMap<String, BTreeMap<String, u64>>,
    /// Discrepancies, by kind (`DiscrepancyKind::as_str`).
    pub discrepancies: BTreeMap<String, u64>,
    /// The data words of the judged (agreeing or discrepant) cases on valid, race-free
    /// programs, by what the oracle expected of them ([`WordCounts`]).
    #[serde(default)]
    pub words: WordCounts,
    /// Judged cases that the target ran without computing some MMA results, and the observed
    /// words left out of their compare, by the target's reason
    /// (`Target::values_not_computed`, `diff::not_emulated`): `[cases, words]`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_emulated: BTreeMap<String, [u64; 2]>,
}

impl TargetCounts {
    /// Counts for a target with nothing run yet.
    pub fn new(target: &str, version: &str) -> Self {
        TargetCounts {
            target: target.to_string(),
            version: version.to_string(),
            ..TargetCounts::default()
        }
    }

    /// Counts one verdict.
    pub fn record(&mut self, v: &Verdict) {
        self.cases += 1;
        match v {
            Verdict::Agree => self.agree += 1,
            Verdict::Skip(r) => {
                let name = skip_name(r);
                let by_rule = self.skip_rules.entry(name.clone()).or_default();
                for rule in skips::skip_rules(r) {
                    *by_rule.entry(rule.to_string()).or_default() += 1;
                }
                *self.skip.entry(name).or_default() += 1;
            }
            Verdict::Discrepancy(d) => {
                *self
                    .discrepancies
                    .entry(d.kind.as_str().to_string())
                    .or_default() += 1
            }
        }
    }

    /// Counts the words of a case (`WordCounts::of`) when the verdict judged it (agree or
    /// discrepancy, not a skip).
    pub fn record_words(&mut self, v: &Verdict, words: Option<&WordCounts>) {
        if let (Verdict::Agree | Verdict::Discrepancy(_), Some(w)) = (v, words) {
            self.words.add(w);
        }
    }

    /// Counts a case whose words the target did not all compute (`left`: its reason and the
    /// words left out), when the verdict judged it (agree or discrepancy, not a skip).
    pub fn record_not_emulated(&mut self, v: &Verdict, left: Option<&(String, u64)>) {
        if let (Verdict::Agree | Verdict::Discrepancy(_), Some((why, n))) = (v, left) {
            let c = self.not_emulated.entry(why.clone()).or_default();
            c[0] += 1;
            c[1] += n;
        }
    }

    /// Total skips.
    pub fn skipped(&self) -> u64 {
        self.skip.values().sum()
    }

    /// Total discrepancies.
    pub fn discrepant(&self) -> u64 {
        self.discrepancies.values().sum()
    }

    /// Adds another count of the same target.
    pub fn add(&mut self, o: &TargetCounts) {
        self.cases += o.cases;
        self.agree += o.agree;
        for (k, v) in &o.skip {
            *self.skip.entry(k.clone()).or_default() += v;
        }
        for (k, rules) in &o.skip_rules {
            let mine = self.skip_rules.entry(k.clone()).or_default();
            for (r, v) in rules {
                *mine.entry(r.clone()).or_default() += v;
            }
        }
        for (k, v) in &o.discrepancies {
            *self.discrepancies.entry(k.clone()).or_default() += v;
        }
        self.words.add(&o.words);
        for (k, [c, w]) in &o.not_emulated {
            let mine = self.not_emulated.entry(k.clone()).or_default();
            mine[0] += c;
            mine[1] += w;
        }
        if self.version.is_empty() {
            self.version.clone_from(&o.version);
        }
    }
}

/// A skip reason in words, with the rules or the target's reason it carries (one line of a
/// reproducer or a summary); [`skip_name`] is its class, for tables.
pub fn skip_words(r: &SkipReason) -> String {
    let rules =
        |v: &[tcgen05_ir::RuleId]| v.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
    match r {
        SkipReason::Unspecified(v) => {
            format!("the spec leaves the outcome unspecified: {}", rules(v))
        }
        SkipReason::TargetCannotRun(why) => format!("the target cannot run it: {why}"),
        SkipReason::IllFormedProgram(v) => format!("ill-formed program, not run: {}", rules(v)),
        SkipReason::WaitGaveUp => "an mbarrier wait gave up, later values not judged".to_string(),
        SkipReason::Incomparable(why) => format!("not comparable: {why}"),
    }
}

/// A short name of a skip reason, for tables (the reason's class, without per-case detail).
pub fn skip_name(r: &SkipReason) -> String {
    match r {
        SkipReason::Unspecified(_) => "unspecified".into(),
        SkipReason::TargetCannotRun(why) => {
            // Keep the first clause only: the rest names per-case details (lines, values).
            let head: String = why
                .split(['(', ':', ';', ','])
                .next()
                .unwrap_or(why)
                .chars()
                .take(72)
                .collect();
            format!("cannot run: {}", head.trim())
        }
        SkipReason::IllFormedProgram(_) => "ill-formed program".into(),
        SkipReason::WaitGaveUp => "mbarrier wait gave up".into(),
        SkipReason::Incomparable(w) => {
            format!("incomparable: {}", w.split(" (").next().unwrap_or(w))
        }
    }
}

/// One stored finding, as the reports list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingEntry {
    /// Signature id (the folder name in the store).
    pub id: String,
    /// The signature as text: `kind / rule / target / [forms]`.
    pub signature: String,
    /// Discrepancy kind.
    pub kind: String,
    /// The deciding rule, if any.
    pub rule: Option<String>,
    /// Its spec section.
    pub section: Option<String>,
    /// The target.
    pub target: String,
    /// What differs, in words (minimized case).
    pub detail: String,
    /// Statements before and after minimization.
    pub sizes: (usize, usize),
    /// The minimizer's statistics ([`crate::store::Report::minimization`]); `None` where the
    /// case was stored as found.
    #[serde(default)]
    pub minimization: Option<crate::store::Minimization>,
    /// The folder, relative to the report (`findings/<id>`).
    pub folder: String,
    /// The command that reruns it (the stored report's, [`crate::store::Store::rerun_command`]).
    pub command: String,
}

impl FindingEntry {
    /// The entry of a stored finding report, whose folder is `folder` (relative path).
    pub fn from_report(r: &crate::store::Report, folder: &str) -> Self {
        FindingEntry {
            id: r.signature_id.clone(),
            signature: r.signature.clone(),
            kind: r.sig.kind.as_str().to_string(),
            rule: r.sig.rule.map(|x| x.as_str().to_string()),
            section: r.section.clone(),
            target: r.sig.target.clone(),
            detail: r.discrepancy.detail.clone(),
            sizes: r.sizes,
            minimization: r.minimization,
            folder: folder.to_string(),
            command: r.command.clone(),
        }
    }
}

/// Every finding of a store folder, sorted by id; `rel` is the folder's path relative to the
/// report (usually `findings`). Unreadable entries are skipped, with the reason in the second
/// list.
pub fn findings_in(store_root: &Path, rel: &str) -> (Vec<FindingEntry>, Vec<String>) {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    let Ok(rd) = std::fs::read_dir(store_root) else {
        return (out, bad);
    };
    let mut dirs: Vec<_> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    dirs.sort();
    for d in dirs {
        let name = d
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') || !d.join("report.json").exists() {
            continue;
        }
        match crate::store::read_report(&d) {
            Ok(r) => out.push(FindingEntry::from_report(&r, &format!("{rel}/{name}"))),
            Err(e) => bad.push(e.to_string()),
        }
    }
    (out, bad)
}

/// Everything the reports say about a campaign (or about several merged shards).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// `tcgen05-fuzz <version>`.
    pub tool: String,
    /// Campaign seed.
    pub seed: u64,
    /// The shards this summary covers, as `i/n` (empty: unsharded).
    pub shards: Vec<String>,
    /// Oracle edition.
    pub edition: String,
    /// Cases run (each case runs on every target).
    pub cases: u64,
    /// Wall time spent, in seconds (summed over shards for a merge).
    pub elapsed_s: f64,
    /// Whether the campaign reached its `--cases` / `--time` limit (false: interrupted or
    /// still running).
    pub complete: bool,
    /// Per target.
    pub targets: Vec<TargetCounts>,
    /// Stored findings.
    pub findings: Vec<FindingEntry>,
    /// The rule-coverage matrix.
    pub coverage: Coverage,
    /// Targets whose skip rate for a reason is far above the other targets'
    /// ([`skip_outliers`] of `targets`; [`write_all`] fills it in).
    #[serde(default)]
    pub skip_outliers: Vec<SkipOutlier>,
    /// Per behaviour of the inventory: cases that exercised it, cases that observed it
    /// exactly ([`behaviours`]).
    #[serde(default)]
    pub behaviours: Behaviours,
}

impl Summary {
    /// Total discrepancies over every target.
    pub fn discrepancies(&self) -> u64 {
        self.targets.iter().map(TargetCounts::discrepant).sum()
    }

    /// Cases per second.
    pub fn rate(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.cases as f64 / self.elapsed_s
        } else {
            0.0
        }
    }

    /// Merges summaries of shards of one campaign (or of several campaigns): counts and
    /// coverage add up, findings are deduplicated by signature id, elapsed times add up.
    pub fn merge(parts: &[Summary]) -> Summary {
        let mut m = Summary::default();
        let mut findings: BTreeMap<String, FindingEntry> = BTreeMap::new();
        for (k, p) in parts.iter().enumerate() {
            if k == 0 {
                m.tool.clone_from(&p.tool);
                m.seed = p.seed;
                m.edition.clone_from(&p.edition);
                m.complete = true;
            } else if m.edition != p.edition && !m.edition.contains(&p.edition) {
                m.edition = format!("{}, {}", m.edition, p.edition);
            }
            m.shards.extend(p.shards.iter().cloned());
            m.cases += p.cases;
            m.elapsed_s += p.elapsed_s;
            m.complete &= p.complete;
            for t in &p.targets {
                match m.targets.iter_mut().find(|x| x.target == t.target) {
                    Some(x) => x.add(t),
                    None => m.targets.push(t.clone()),
                }
            }
            for f in &p.findings {
                findings.entry(f.id.clone()).or_insert_with(|| f.clone());
            }
            m.coverage.add(&p.coverage);
            if k == 0 {
                m.behaviours = p.behaviours.clone();
            } else {
                m.behaviours.add(&p.behaviours);
            }
        }
        m.shards.sort();
        m.shards.dedup();
        m.findings = findings.into_values().collect();
        m.skip_outliers = skip_outliers(&m.targets);
        m
    }
}

/// Writes `text` to `path` atomically (a temporary file beside it, then a rename), so a reader
/// or a kill never sees half a file.
pub fn write_atomic(path: &Path, text: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Writes every report file into `dir`: `report.md`, `report.json`, `junit.xml`, `coverage.md`,
/// `coverage.svg`; the skip-rate outliers are those of `s.targets`, whatever `s` says.
pub fn write_all(dir: &Path, s: &Summary) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let s = &Summary {
        skip_outliers: skip_outliers(&s.targets),
        ..s.clone()
    };
    let json = serde_json::to_string_pretty(s).map_err(std::io::Error::other)?;
    write_atomic(&dir.join("report.json"), json.as_bytes())?;
    write_atomic(&dir.join("report.md"), markdown(s).as_bytes())?;
    write_atomic(&dir.join("junit.xml"), junit(s).as_bytes())?;
    let md = format!("{}\n{}", s.coverage.markdown(), s.behaviours.markdown());
    write_atomic(&dir.join("coverage.md"), md.as_bytes())?;
    write_atomic(
        &dir.join("coverage.svg"),
        heatmap::svg_with(&s.coverage, &s.behaviours, &heatmap::title(s)).as_bytes(),
    )?;
    Ok(())
}

/// Why a JSON report (a campaign's `report.json`, a finding's report) cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be read.
    #[error("cannot read {}: {error}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file is not the report it should be.
    #[error("{} is not a {what}: {error}", path.display())]
    NotA {
        /// The file, or the folder that holds it.
        path: PathBuf,
        /// What it should be (`campaign report`, `finding report`).
        what: &'static str,
        /// What the JSON parser found wrong.
        error: serde_json::Error,
    },
}

/// Reads a `report.json`.
pub fn read_summary(path: &Path) -> Result<Summary, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|error| ReadError::Unreadable {
        path: path.to_path_buf(),
        error,
    })?;
    serde_json::from_str(&text).map_err(|error| ReadError::NotA {
        path: path.to_path_buf(),
        what: "campaign report",
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{Discrepancy, DiscrepancyKind};

    fn disc() -> Verdict {
        Verdict::Discrepancy(Discrepancy {
            kind: DiscrepancyKind::ValueOutsideAllowed,
            rules: vec![],
            forms: vec![],
            key: None,
            detail: String::new(),
        })
    }

    #[test]
    fn counts_add_up_per_verdict_class() {
        let mut t = TargetCounts::new("sim", "1");
        t.record(&Verdict::Agree);
        t.record(&Verdict::Skip(SkipReason::WaitGaveUp));
        t.record(&disc());
        t.record(&disc());
        assert_eq!(
            (t.cases, t.agree, t.skipped(), t.discrepant()),
            (4, 1, 1, 2)
        );
        assert_eq!(t.discrepancies.get("value-outside-allowed"), Some(&2));
    }

    #[test]
    fn merging_two_halves_gives_the_whole() {
        let mut a = Summary {
            cases: 3,
            targets: vec![TargetCounts::new("sim", "1")],
            ..Summary::default()
        };
        a.targets[0].record(&Verdict::Agree);
        let mut b = Summary {
            cases: 2,
            targets: vec![TargetCounts::new("sim", "1")],
            ..Summary::default()
        };
        b.targets[0].record(&disc());
        b.shards = vec!["1/2".into()];
        a.shards = vec!["0/2".into()];
        let m = Summary::merge(&[a, b]);
        assert_eq!(m.cases, 5);
        assert_eq!(m.targets.len(), 1);
        assert_eq!((m.targets[0].agree, m.targets[0].discrepant()), (1, 1));
        assert_eq!(m.shards, vec!["0/2", "1/2"]);
    }

    #[test]
    fn summaries_round_trip_through_json() {
        let mut s = Summary {
            tool: "t".into(),
            cases: 1,
            ..Summary::default()
        };
        s.coverage = Coverage::new(&["sim".to_string()]);
        let mut rs = RuleSet::default();
        rs.insert(tcgen05_ir::RuleId::ALL[3]);
        s.coverage.record(&rs, 0, &Verdict::Agree);
        let back: Summary = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
