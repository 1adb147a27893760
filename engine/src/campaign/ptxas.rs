//! The ptxas version matrix: generated and mutated cases, compiled in batches by every
//! installed version; each version's verdict judged by the one judge ([`crate::judge`]) and
//! the versions compared with one another (`tcgen05_drivers::ptxas::differential`); each new
//! finding signature is minimized and reported with its rules, spec sections and the range of
//! versions that accept it. Accepted cases are also sampled for the SASS check.

use crate::judge::{self, Ruling};
use crate::minimize::batched::minimize_batched;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tcgen05_drivers::diff::Verdict;
use tcgen05_drivers::ptxas::differential::{self, FindingKind, Signature};
use tcgen05_drivers::ptxas::sass::{self, SassCheck, SassMismatch};
use tcgen05_drivers::ptxas::{
    CompileOptions, CompileVerdict, PtxasInstall, PtxasTarget, outcome_of,
};
use tcgen05_generators::field_mutate::Rng;
use tcgen05_ir::observe::Layout;
use tcgen05_ir::{Case, Program, ptx};
use tcgen05_oracle::{Expected, Options, Violation, catalogue};

/// Campaign settings.
#[derive(Debug, Clone)]
pub struct CampaignConfig {
    /// Wall-clock budget (compiling, judging and minimizing together).
    pub duration: Duration,
    /// Seed of the case stream.
    pub seed: u64,
    /// Cases per ptxas process.
    pub batch_size: usize,
    /// Cases generated per round (each round is compiled by every version). Cases are batched
    /// per `.version`/`.target`, and the mix has a dozen headers, so rounds must be large for
    /// batches to fill.
    pub round_cases: usize,
    /// Predicate calls allowed per minimization.
    pub reduce_tries: usize,
    /// Share of the budget minimization may use, in percent.
    pub reduce_share_pct: u32,
    /// Check the SASS of one in this many accepted cases (0: never).
    pub sass_every: usize,
    /// Options of the campaign's compiles ([`CompileOptions::verdict`]: `-O0`).
    pub options: CompileOptions,
}

impl Default for CampaignConfig {
    fn default() -> Self {
        CampaignConfig {
            duration: Duration::from_secs(600),
            seed: 0x7C6E_0505,
            batch_size: 64,
            round_cases: 512,
            reduce_tries: 400,
            reduce_share_pct: 40,
            sass_every: 16,
            options: CompileOptions::verdict(),
        }
    }
}

/// A minimized discrepancy.
#[derive(Debug, Clone)]
pub struct Finding {
    /// Kind, rules, accepting versions.
    pub signature: Signature,
    /// How many campaign cases had this signature.
    pub hits: usize,
    /// The first case that showed it.
    pub original: Case,
    /// The minimized case.
    pub minimized: Case,
    /// Per version: name and verdict summary, for the minimized case.
    pub verdicts: Vec<(String, String)>,
    /// The oracle's static violations of the minimized case.
    pub violations: Vec<Violation>,
    /// SASS mismatches (for `sass-mismatch` findings).
    pub sass: Vec<SassMismatch>,
    /// Predicate calls the minimization made.
    pub reduce_tries: usize,
}

/// Throughput of one version.
#[derive(Debug, Clone, Default)]
pub struct VersionStats {
    /// `ptxas@12.8`.
    pub name: String,
    /// Cases compiled (in campaign batches; minimization not counted).
    pub cases: usize,
    /// Seconds spent compiling them.
    pub seconds: f64,
    /// ptxas processes run.
    pub processes: usize,
}

impl VersionStats {
    /// Cases per second.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.cases as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// What a campaign did and found.
#[derive(Debug, Clone, Default)]
pub struct CampaignReport {
    /// Wall-clock time.
    pub elapsed: Duration,
    /// Cases generated.
    pub cases: usize,
    /// Per version.
    pub versions: Vec<VersionStats>,
    /// (version, [`ruling_kind`] of the judge's ruling) → count.
    pub judgements: BTreeMap<(String, String), usize>,
    /// Cases whose versions disagree among themselves.
    pub version_disagreements: usize,
    /// SASS checks done, and how many found a mismatch.
    pub sass_checked: usize,
    /// SASS checks with a mismatch.
    pub sass_mismatched: usize,
    /// Findings, one per signature.
    pub findings: Vec<Finding>,
    /// Seconds spent minimizing.
    pub reduce_seconds: f64,
}

pub use tcgen05_generators::field_mutate::mutated_case as default_source;

/// One compile-only target per install, compiling with `options` in batches of `batch`.
fn targets_of(
    installs: &[PtxasInstall],
    options: &CompileOptions,
    batch: usize,
) -> Vec<PtxasTarget> {
    installs
        .iter()
        .map(|i| PtxasTarget {
            options: options.clone(),
            batch_size: batch,
            ..PtxasTarget::new(i.clone())
        })
        .collect()
}

/// The judgement of one case by every version.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// One verdict per install (same order).
    pub verdicts: Vec<CompileVerdict>,
    /// The one judge's ruling on each version's verdict (same order).
    pub rulings: Vec<Ruling>,
    /// The oracle's expectation of the case.
    pub expected: Rc<Expected>,
    /// The versions that accept ([`differential::accepting_range`]).
    pub accepted_by: String,
    /// The finding's signature ([`differential::signature`]), if the case is a finding.
    pub signature: Option<Signature>,
}

/// A ruling's kind, for the per-version counts: `agree`, `skip` or the discrepancy kind.
pub fn ruling_kind(r: &Ruling) -> &'static str {
    match &r.verdict {
        Verdict::Agree => "agree",
        Verdict::Skip(_) => "skip",
        Verdict::Discrepancy(d) => d.kind.as_str(),
    }
}

/// Judges one case's verdicts (one per install, in order): each version's with the one judge
/// ([`judge::rule`], with the wait bound of the version's target), then the versions with one
/// another ([`differential::signature`]).
pub fn report(
    installs: &[PtxasInstall],
    program: &Program,
    expected: Rc<Expected>,
    verdicts: Vec<CompileVerdict>,
) -> CaseReport {
    let layout = Layout::of(program);
    let rulings: Vec<Ruling> = installs
        .iter()
        .zip(&verdicts)
        .map(|(i, v)| {
            let name = i.name();
            let bound = judge::wait_bound_of(&name);
            judge::rule(program, &layout, &expected, &outcome_of(v), &name, bound)
        })
        .collect();
    let discrepancies: Vec<_> = rulings
        .iter()
        .map(|r| match &r.verdict {
            Verdict::Discrepancy(d) => Some(d),
            _ => None,
        })
        .collect();
    let static_rules: Vec<_> = expected.violations.iter().map(|v| v.rule).collect();
    let signature = differential::signature(installs, &verdicts, &discrepancies, &static_rules);
    CaseReport {
        accepted_by: differential::accepting_range(installs, &verdicts),
        verdicts,
        rulings,
        expected,
        signature,
    }
}

/// The oracle's expectation of `p` under the default options, as the matrix judges it.
fn expect(p: &Program) -> Rc<Expected> {
    Rc::new(tcgen05_oracle::expect_with(p, &Options::default()))
}

/// Judges one program with every version, one process each, with [`CompileOptions::verdict`].
pub fn judge_program(installs: &[PtxasInstall], p: &Program) -> CaseReport {
    let module = ptx::emit(p);
    let verdicts: Vec<CompileVerdict> = targets_of(installs, &CompileOptions::verdict(), 1)
        .iter()
        .map(|t| t.module_verdict(&module))
        .collect();
    report(installs, p, expect(p), verdicts)
}

/// Judges many programs with every version, batched, with [`CompileOptions::verdict`] (the
/// minimization predicate).
pub fn judge_programs(installs: &[PtxasInstall], ps: &[Program], batch: usize) -> Vec<CaseReport> {
    let modules: Vec<String> = ps.iter().map(ptx::emit).collect();
    let per_version: Vec<Vec<CompileVerdict>> =
        targets_of(installs, &CompileOptions::verdict(), batch)
            .iter()
            .map(|t| t.module_verdicts(&modules).0)
            .collect();
    ps.iter()
        .enumerate()
        .map(|(k, p)| {
            let verdicts = per_version.iter().map(|v| v[k].clone()).collect();
            report(installs, p, expect(p), verdicts)
        })
        .collect()
}

/// Candidates judged together in one minimization step: one ptxas process per version for 16
/// candidates costs about as much as two single compiles, and most candidates fail.
pub const REDUCE_CHUNK: usize = 16;

fn sass_signature(install: &PtxasInstall, m: &[SassMismatch]) -> Signature {
    let mut rules: Vec<String> = m
        .iter()
        .map(|x| match x {
            SassMismatch::WrongForm { ptx, .. } | SassMismatch::Missing { ptx, .. } => ptx.clone(),
            SassMismatch::Unexpected { sass } => format!("SASS {sass}"),
        })
        .collect();
    rules.sort();
    rules.dedup();
    Signature {
        kind: FindingKind::SassMismatch,
        rules,
        accepted_by: install.version.label(),
        stances: vec![],
    }
}

fn sass_of(install: &PtxasInstall, p: &Program) -> Option<Vec<SassMismatch>> {
    match sass::check_module(install, &ptx::emit(p)) {
        Ok(SassCheck::Checked(m)) => Some(m),
        _ => None,
    }
}

/// Runs a campaign over `installs` (oldest first) with cases from `source`.
pub fn run(
    installs: &[PtxasInstall],
    cfg: &CampaignConfig,
    source: &mut dyn FnMut(&mut Rng) -> Case,
    progress: &mut dyn FnMut(&CampaignReport),
) -> CampaignReport {
    let start = Instant::now();
    let mut rng = Rng::new(cfg.seed);
    let mut rep = CampaignReport {
        versions: installs
            .iter()
            .map(|i| VersionStats {
                name: i.name(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let sass_install = installs
        .last()
        .filter(|_| cfg.sass_every > 0 && sass::available());
    let mut accepted_seen = 0usize;
    let targets = targets_of(installs, &cfg.options, cfg.batch_size);
    let reduce_budget = cfg.duration.as_secs_f64() * f64::from(cfg.reduce_share_pct) / 100.0;
    while start.elapsed() < cfg.duration {
        let cases: Vec<Case> = (0..cfg.round_cases).map(|_| source(&mut rng)).collect();
        let modules: Vec<String> = cases.iter().map(|c| ptx::emit(&c.program)).collect();
        let mut per_version: Vec<Vec<CompileVerdict>> = Vec::new();
        for (k, target) in targets.iter().enumerate() {
            let t = Instant::now();
            let (v, stats) = target.module_verdicts(&modules);
            rep.versions[k].seconds += t.elapsed().as_secs_f64();
            rep.versions[k].cases += modules.len();
            rep.versions[k].processes += stats.processes;
            per_version.push(v);
        }
        rep.cases += cases.len();
        for (c, case) in cases.iter().enumerate() {
            let verdicts: Vec<CompileVerdict> = per_version.iter().map(|v| v[c].clone()).collect();
            let r = report(installs, &case.program, expect(&case.program), verdicts);
            for (i, j) in installs.iter().zip(&r.rulings) {
                *rep.judgements
                    .entry((i.name(), ruling_kind(j).to_string()))
                    .or_default() += 1;
            }
            if differential::versions_disagree(&r.verdicts) {
                rep.version_disagreements += 1;
            }
            let mut sigs: Vec<(Signature, Vec<SassMismatch>)> =
                r.signature.into_iter().map(|s| (s, vec![])).collect();
            if let Some(si) = sass_install
                && r.verdicts.last().is_some_and(CompileVerdict::accepted)
                && r.expected.violations.is_empty()
            {
                accepted_seen += 1;
                if accepted_seen.is_multiple_of(cfg.sass_every)
                    && let Some(m) = sass_of(si, &case.program)
                {
                    rep.sass_checked += 1;
                    if !m.is_empty() {
                        rep.sass_mismatched += 1;
                        sigs.push((sass_signature(si, &m), m));
                    }
                }
            }
            for (sig, sass_m) in sigs {
                if let Some(f) = rep
                    .findings
                    .iter_mut()
                    .find(|f| f.signature.compatible(&sig))
                {
                    f.hits += 1;
                    f.signature.merge(&sig, installs);
                    continue;
                }
                let t = Instant::now();
                let budget_left = rep.reduce_seconds < reduce_budget;
                let (minimized, tries) = if budget_left {
                    let want = sig.clone();
                    let (m, st) = if want.kind == FindingKind::SassMismatch {
                        let si = sass_install.expect("sass findings need the install");
                        minimize_batched(&case.program, cfg.reduce_tries, 1, &mut |ps| {
                            ps.iter()
                                .map(|p| {
                                    sass_of(si, p).is_some_and(|m| {
                                        !m.is_empty() && sass_signature(si, &m) == want
                                    })
                                })
                                .collect()
                        })
                    } else {
                        minimize_batched(&case.program, cfg.reduce_tries, REDUCE_CHUNK, &mut |ps| {
                            judge_programs(installs, ps, REDUCE_CHUNK)
                                .iter()
                                .map(|r| r.signature.as_ref() == Some(&want))
                                .collect()
                        })
                    };
                    (m, st.tries)
                } else {
                    (case.program.clone(), 0)
                };
                rep.reduce_seconds += t.elapsed().as_secs_f64();
                let fin = judge_program(installs, &minimized);
                let sass_final = if sig.kind == FindingKind::SassMismatch {
                    sass_install
                        .and_then(|si| sass_of(si, &minimized))
                        .unwrap_or(sass_m)
                } else {
                    vec![]
                };
                rep.findings.push(Finding {
                    signature: sig,
                    hits: 1,
                    original: case.clone(),
                    minimized: Case {
                        program: minimized,
                        intent: case.intent.clone(),
                        provenance: case.provenance.clone(),
                    },
                    verdicts: installs
                        .iter()
                        .zip(&fin.verdicts)
                        .map(|(i, v)| (i.name(), v.summary()))
                        .collect(),
                    violations: fin.expected.violations.clone(),
                    sass: sass_final,
                    reduce_tries: tries,
                });
            }
        }
        rep.elapsed = start.elapsed();
        progress(&rep);
    }
    rep.elapsed = start.elapsed();
    rep
}

fn tc_lines(p: &Program) -> Vec<String> {
    ptx::emit(p)
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("tcgen05.") || l.starts_with(".target") || l.starts_with(".version"))
        .map(str::to_string)
        .collect()
}

impl CampaignReport {
    /// The report as Markdown: throughput per version, judgements, and every finding with its
    /// rules, spec sections, version range, verdicts and the minimized case's tcgen05 lines.
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# ptxas campaign\n");
        let _ = writeln!(
            s,
            "{} cases in {:.0} s ({:.0} s of it minimizing); {} findings; {} cases where versions disagree; SASS checked on {} cases, {} mismatched.\n",
            self.cases,
            self.elapsed.as_secs_f64(),
            self.reduce_seconds,
            self.findings.len(),
            self.version_disagreements,
            self.sass_checked,
            self.sass_mismatched
        );
        let _ = writeln!(
            s,
            "| version | cases | compile s | processes | cases/s |\n|---|---|---|---|---|"
        );
        for v in &self.versions {
            let _ = writeln!(
                s,
                "| {} | {} | {:.1} | {} | {:.1} |",
                v.name,
                v.cases,
                v.seconds,
                v.processes,
                v.rate()
            );
        }
        let kinds: std::collections::BTreeSet<&String> =
            self.judgements.keys().map(|(_, k)| k).collect();
        let _ = write!(s, "\n| version |");
        for k in &kinds {
            let _ = write!(s, " {k} |");
        }
        let _ = write!(s, "\n|---|");
        for _ in &kinds {
            let _ = write!(s, "---|");
        }
        for v in &self.versions {
            let _ = write!(s, "\n| {} |", v.name);
            for k in &kinds {
                let n = self
                    .judgements
                    .get(&(v.name.clone(), (*k).clone()))
                    .copied()
                    .unwrap_or(0);
                let _ = write!(s, " {n} |");
            }
        }
        let _ = writeln!(s, "\n\n## Findings\n");
        for (n, f) in self.findings.iter().enumerate() {
            let _ = writeln!(s, "### {}. {}\n", n + 1, f.signature);
            let _ = writeln!(
                s,
                "{} campaign case(s); minimized from {} to {} statement(s) in {} tries.\n",
                f.hits,
                f.original.program.size(),
                f.minimized.program.size(),
                f.reduce_tries
            );
            let mut rules: Vec<_> = f.violations.iter().map(|v| v.rule).collect();
            rules.sort();
            rules.dedup();
            for r in rules {
                let row = catalogue::row(r);
                let _ = writeln!(
                    s,
                    "- rule **{}** (§{}, {}): {}",
                    r,
                    catalogue::section(r),
                    row.consequence,
                    row.rule
                );
            }
            for v in &f.violations {
                let _ = writeln!(s, "  - oracle: {v}");
            }
            for m in &f.sass {
                let _ = writeln!(s, "- SASS: {m}");
            }
            let acc = if f.signature.accepted_by.is_empty() {
                "none"
            } else {
                &f.signature.accepted_by
            };
            let _ = writeln!(s, "- versions that accept: {acc}");
            for (name, v) in &f.verdicts {
                let _ = writeln!(s, "  - {name}: {v}");
            }
            let _ = writeln!(s, "\n```ptx");
            for l in tc_lines(&f.minimized.program) {
                let _ = writeln!(s, "{l}");
            }
            let _ = writeln!(s, "```\n");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_drivers::diff::{DiscrepancyKind, SkipReason};
    use tcgen05_drivers::ptxas::install::Source;
    use tcgen05_drivers::ptxas::run::{Diagnostic, Severity};
    use tcgen05_drivers::ptxas::{CaseDiagnostic, ToolVersion};
    use tcgen05_ir::program::{Op, Stmt};
    use tcgen05_ir::{RuleId, samples};

    fn inst(v: &str) -> PtxasInstall {
        PtxasInstall {
            path: v.into(),
            version: ToolVersion::parse(v).unwrap(),
            source: Source::Env,
            wheel: None,
        }
    }

    fn rejected(msg: &str) -> CompileVerdict {
        CompileVerdict::Rejected(vec![CaseDiagnostic {
            diag: Diagnostic {
                severity: Severity::Error,
                line: Some(7),
                message: msg.into(),
            },
            instruction: None,
        }])
    }

    /// The single-warp round trip of `samples`, with `edit` applied to every tcgen05 op.
    fn roundtrip_with(edit: impl Fn(&mut Op)) -> Program {
        let mut p = samples::single_warp_roundtrip();
        for s in &mut p.warps[0] {
            if let Stmt::Tc(op) = s {
                edit(op);
            }
        }
        p
    }

    /// A dealloc of 96 columns breaks ALLOC-NCOLS-POW2 (§9.7.16.7.1: nCols must be a power of
    /// two), a rule whose consequence the ISA leaves unstated: the versions that accept it are
    /// skipped as unspecified, and the version that rejects it makes the case a version
    /// disagreement, not an ill-formed program accepted.
    #[test]
    fn accepting_a_rule_of_unstated_consequence_is_a_version_disagreement() {
        let p = roundtrip_with(|op| {
            if let Op::Alloc { ncols, .. } | Op::Dealloc { ncols, .. } = op {
                ncols.value = 96;
            }
        });
        let installs = [inst("12.8"), inst("13.0"), inst("13.5")];
        let r = report(
            &installs,
            &p,
            expect(&p),
            vec![
                CompileVerdict::Accepted,
                CompileVerdict::Accepted,
                rejected("Argument 1 of 'tcgen05.alloc' instruction: value must be power of 2"),
            ],
        );
        assert!(
            r.expected
                .violations
                .iter()
                .any(|v| v.rule == RuleId::AllocNcolsPow2),
            "{:?}",
            r.expected.violations
        );
        for ruling in &r.rulings[..2] {
            assert!(
                matches!(&ruling.verdict, Verdict::Skip(SkipReason::Unspecified(rules))
                    if rules.contains(&RuleId::AllocNcolsPow2)),
                "{:?}",
                ruling.verdict
            );
        }
        assert_eq!(r.rulings[2].verdict, Verdict::Agree);
        let sig = r.signature.expect("the versions disagree");
        assert_eq!(sig.kind, FindingKind::VersionDisagreement);
        assert_eq!(sig.rules, ["ALLOC-NCOLS-POW2"]);
        assert_eq!(sig.accepted_by, "12.8..=13.0");
        assert_eq!(r.accepted_by, "12.8..=13.0");
    }

    /// A `tcgen05.st` without `.aligned` breaks GEN-SYNC-QUAL (§9.7.16.8.3 syntax: `.sync`
    /// and `.aligned` are both required), whose consequence is rejection: accepting it is an
    /// ill-formed program accepted, the one judge's discrepancy, whatever the other versions do.
    #[test]
    fn accepting_a_rule_whose_consequence_is_rejection_is_a_discrepancy() {
        let p = roundtrip_with(|op| {
            if let Op::St { form, .. } = op {
                form.aligned = false;
            }
        });
        let installs = [inst("12.8"), inst("13.5")];
        let r = report(
            &installs,
            &p,
            expect(&p),
            vec![CompileVerdict::Accepted, rejected("missing .aligned")],
        );
        assert_eq!(ruling_kind(&r.rulings[0]), "ill-formed-accepted");
        assert_eq!(ruling_kind(&r.rulings[1]), "agree");
        let sig = r.signature.expect("a discrepancy");
        assert_eq!(
            sig.kind,
            FindingKind::Spec(DiscrepancyKind::IllFormedAccepted)
        );
        assert_eq!(sig.rules, ["GEN-SYNC-QUAL"]);
        assert_eq!(sig.accepted_by, "12.8");
    }

    /// A well-formed case every version accepts is no finding; one a version rejects is a
    /// well-formed program rejected, named by the family of the instruction it points at or
    /// else by its message.
    #[test]
    fn a_well_formed_case_is_no_finding_unless_rejected() {
        let p = samples::single_warp_roundtrip();
        let installs = [inst("12.8"), inst("13.5")];
        let ok = report(
            &installs,
            &p,
            expect(&p),
            vec![CompileVerdict::Accepted, CompileVerdict::Accepted],
        );
        assert!(ok.signature.is_none());
        assert!(ok.rulings.iter().all(|r| r.verdict == Verdict::Agree));
        let bad = report(
            &installs,
            &p,
            expect(&p),
            vec![CompileVerdict::Accepted, rejected("something odd")],
        );
        let sig = bad.signature.expect("a discrepancy");
        assert_eq!(
            sig.kind,
            FindingKind::Spec(DiscrepancyKind::WellFormedRejected)
        );
        assert_eq!(sig.rules, ["something odd"]);
    }
}
