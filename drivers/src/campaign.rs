//! The campaign engine as a library: run N cases or T seconds of generated cases on a list of
//! targets, compare every outcome with the oracle, minimize each new discrepancy and keep it
//! in a findings store. The `tcgen05-fuzz campaign` command (progress, reports, sharding) is
//! built on [`run`].

use crate::diff::{self, Signature, Verdict};
use crate::minimize;
use crate::store::{self, Added, Store};
use crate::target::Target;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tcgen05_ir::Case;
use tcgen05_ir::observe::Layout;
use tcgen05_oracle::Options;

/// What a campaign does.
#[derive(Debug, Clone)]
pub struct CampaignConfig {
    /// Campaign seed: case `i` comes from `source(case_seed(seed, i))`.
    pub seed: u64,
    /// Stop after this many cases.
    pub max_cases: Option<u64>,
    /// Stop after this long.
    pub max_time: Option<Duration>,
    /// Oracle options (edition and open-question readings).
    pub options: Options,
    /// Minimize each new discrepancy before storing it.
    pub minimize: bool,
    /// Time budget of one minimization.
    pub minimize_budget: Duration,
    /// Stop at the first new finding.
    pub stop_at_first: bool,
}

impl Default for CampaignConfig {
    fn default() -> Self {
        CampaignConfig {
            seed: 0,
            max_cases: Some(1000),
            max_time: None,
            options: Options::default(),
            minimize: true,
            minimize_budget: Duration::from_secs(10),
            stop_at_first: false,
        }
    }
}

/// Verdict counts of one target.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TargetStats {
    /// Target name.
    pub target: String,
    /// Its version.
    pub version: String,
    /// Cases that agreed.
    pub agree: u64,
    /// Cases skipped, by reason.
    pub skip: BTreeMap<String, u64>,
    /// Discrepancies, by kind.
    pub discrepancies: BTreeMap<String, u64>,
}

impl TargetStats {
    /// Total skips.
    pub fn skipped(&self) -> u64 {
        self.skip.values().sum()
    }

    /// Total discrepancies.
    pub fn discrepant(&self) -> u64 {
        self.discrepancies.values().sum()
    }
}

/// One new finding of a campaign.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Its signature.
    pub signature: Signature,
    /// Index of the case that showed it first.
    pub case_index: u64,
    /// Time from the start of the campaign to the discrepancy (before minimization).
    pub found_after: Duration,
    /// Statements before and after minimization.
    pub sizes: (usize, usize),
    /// tcgen05 instructions after minimization.
    pub minimized_instructions: usize,
    /// Instructions ([`minimize::instructions`]: statements without the `If`/`Loop`
    /// wrappers) before and after minimization.
    pub instructions: (usize, usize),
    /// Time minimization took.
    pub minimize_time: Duration,
    /// Where it was stored (`None` without a store).
    pub folder: Option<PathBuf>,
    /// Whether the store already had this signature.
    pub duplicate: bool,
}

/// What a campaign did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CampaignReport {
    /// Cases run.
    pub cases: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Per target.
    pub targets: Vec<TargetStats>,
    /// New findings, in order.
    pub findings: Vec<Finding>,
}

/// The case source of the default generator: valid cases of `gen` for seed `s`.
pub fn generated(config: tcgen05_generators::Config) -> impl FnMut(u64) -> Case {
    move |s| tcgen05_generators::valid_case(&config, s)
}

/// Runs a campaign. `source` makes the case of a case seed; `on_finding` sees each new finding.
pub fn run(
    cfg: &CampaignConfig,
    targets: &mut [Box<dyn Target>],
    source: &mut dyn FnMut(u64) -> Case,
    store: Option<&Store>,
    on_finding: &mut dyn FnMut(&Finding),
) -> CampaignReport {
    let start = Instant::now();
    let mut report = CampaignReport {
        targets: targets
            .iter()
            .map(|t| TargetStats {
                target: t.name(),
                version: t.version(),
                ..TargetStats::default()
            })
            .collect(),
        ..CampaignReport::default()
    };
    let mut seen: HashSet<Signature> = HashSet::new();
    let mut i = 0u64;
    'cases: loop {
        if cfg.max_cases.is_some_and(|n| i >= n)
            || cfg.max_time.is_some_and(|t| start.elapsed() >= t)
        {
            break;
        }
        let case = source(tcgen05_generators::case_seed(cfg.seed, i));
        let expected = tcgen05_oracle::expect_with(&case.program, &cfg.options);
        let layout = Layout::of(&case.program);
        for (k, t) in targets.iter_mut().enumerate() {
            let outcome = t.run(&case);
            let stats = &mut report.targets[k];
            match diff::compare_with_bound(
                &case.program,
                &layout,
                &expected,
                &outcome,
                t.wait_bound(),
            ) {
                Verdict::Agree => stats.agree += 1,
                Verdict::Skip(r) => {
                    *stats.skip.entry(crate::report::skip_name(&r)).or_default() += 1
                }
                Verdict::Discrepancy(d) => {
                    *stats
                        .discrepancies
                        .entry(d.kind.as_str().to_string())
                        .or_default() += 1;
                    let sig = Signature::of(&d, &t.name());
                    if !seen.insert(sig.clone()) {
                        continue;
                    }
                    let found_after = start.elapsed();
                    let m0 = Instant::now();
                    let (min_case, min_sig) = if cfg.minimize {
                        match minimize::minimize(
                            &case,
                            t.as_mut(),
                            &cfg.options,
                            cfg.minimize_budget,
                            &mut |_| {},
                        ) {
                            Ok(m) => (m.case, m.signature),
                            Err(_) => (case.clone(), sig.clone()),
                        }
                    } else {
                        (case.clone(), sig.clone())
                    };
                    let minimize_time = m0.elapsed();
                    let mut folder = None;
                    let mut duplicate = false;
                    if let Some(s) = store {
                        let exp = tcgen05_oracle::expect_with(&min_case.program, &cfg.options);
                        let obs = t.run(&min_case);
                        let d2 = match diff::compare_bounded(
                            &min_case.program,
                            &exp,
                            &obs,
                            t.wait_bound(),
                        ) {
                            Verdict::Discrepancy(d2) => d2,
                            _ => d.clone(),
                        };
                        let mut rep = store::make_report(
                            &min_sig,
                            &d2,
                            vec![(t.name(), t.version())],
                            &exp,
                            &obs,
                            (case.program.size(), min_case.program.size()),
                        );
                        rep.command = s.rerun_command(&rep.signature_id, &min_sig.target);
                        match s.add(&min_case, &case, &rep) {
                            Ok(Added::New(p)) => folder = Some(p),
                            Ok(Added::Duplicate(p)) => {
                                folder = Some(p);
                                duplicate = true;
                            }
                            Err(_) => {}
                        }
                    }
                    let f = Finding {
                        signature: sig,
                        case_index: i,
                        found_after,
                        sizes: (case.program.size(), min_case.program.size()),
                        minimized_instructions: min_case.program.ops().len(),
                        instructions: (
                            minimize::instructions(&case.program),
                            minimize::instructions(&min_case.program),
                        ),
                        minimize_time,
                        folder,
                        duplicate,
                    };
                    on_finding(&f);
                    report.findings.push(f);
                    if cfg.stop_at_first {
                        i += 1;
                        break 'cases;
                    }
                }
            }
        }
        i += 1;
    }
    report.cases = i;
    report.elapsed = start.elapsed();
    report
}
