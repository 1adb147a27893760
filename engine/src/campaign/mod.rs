//! The campaign engine (behind `tcgen05-fuzz campaign`, the examples and the benchmarks):
//! parallel workers over a sharded seed space, a findings store, periodic checkpoints that
//! make a campaign resumable, and the reports of `tcgen05_drivers::report`. Every case is
//! judged by [`crate::judge`]; new findings are minimized by [`crate::minimize`].
//!
//! # The seed space, shards and resumption
//!
//! Case `i` is `Stream::case(i)` of the campaign seed: a pure function of `(seed, i)`. Shard
//! `k/n` runs the indices `i` with `i % n == k`, in order; `--cases N` bounds the *seed space*
//! to `0..N`, so the shards of `--cases N` together run exactly the cases of one unsharded
//! `--cases N`. Within a shard, case `i` has position `p = i / n`.
//!
//! The output folder holds `campaign.json` (what the campaign is: seed, targets, edition,
//! shard, case mix; a restart must match it) and `state.json` (what it has done: the positions
//! completed, the verdict counts, the coverage matrix, the time spent), rewritten atomically
//! every checkpoint interval and at the end. Findings go to `findings/` as soon as they are
//! minimized (the store writes atomically). A kill loses at most the cases completed since the
//! last checkpoint, and those are simply run again on restart: their findings are already
//! stored (the store deduplicates), and their counts were never recorded.
//!
//! # Compile-only targets
//!
//! When a target is compile-only (ptxas), a worker claims up to [`COMPILE_ONLY_BATCH`]
//! consecutive positions at once and [`judge_batch`] hands them to that target's
//! `Target::run_batch` (one ptxas process per `.version`/`.target` group instead of one per
//! case); running targets still run case by case. Each case of the claim is then counted,
//! minimized and marked done on its own, as a single case is, so resumption and the counts are
//! unchanged; on Ctrl-C the whole claim is abandoned.
//!
//! # Stopping
//!
//! Once the caller's stop flag is set (the CLI sets it on the first Ctrl-C, SIGTERM or
//! SIGHUP) the workers take no new case
//! and abandon the cases in flight: a case whose targets ran while the signal arrived is not
//! counted and its findings are not stored (a terminal's Ctrl-C also reaches child processes
//! such as ptxas, so its verdicts are not trusted); a minimization in progress ends at its next
//! candidate. Then the run writes the checkpoint and every report as at a normal end, with
//! `complete: false`; a restart runs the abandoned cases again.

use crate::error::EngineError;
use crate::expectations::Expectations;
use crate::judge;
use crate::minimize;
use crate::progress::{Progress, Snapshot};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use tcgen05_drivers::diff::{self, Signature, Verdict};
use tcgen05_drivers::outcome::Outcome as TargetOutcome;
use tcgen05_drivers::report::{self, Behaviours, Coverage, Summary, TargetCounts};
use tcgen05_drivers::store::{self, Store};
use tcgen05_drivers::target::{self, Target, TargetKind};
use tcgen05_generators::Config as GenConfig;
use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_ir::Case;
use tcgen05_oracle::{Edition, Options};

mod batch;
pub mod ptxas;

pub use batch::{
    COMPILE_ONLY_BATCH, Judged, PROBE_CLAIM, claim_size, claim_within, judge, judge_batch,
    judge_batch_observed,
};

/// A part of the seed space: indices `i` with `i % count == index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// This shard, `0..count`.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl Shard {
    /// The case index at position `p` of this shard.
    pub fn case_index(self, p: u64) -> u64 {
        p * self.count + self.index
    }

    /// Positions of this shard inside a seed space of `n` cases.
    pub fn positions_below(self, n: u64) -> u64 {
        if n <= self.index {
            0
        } else {
            (n - self.index).div_ceil(self.count)
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why a text is not a shard (`Shard::from_str`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// No `/` in the text.
    #[error("`{0}` is not a shard: write i/n, e.g. 0/4")]
    NoSlash(String),
    /// A side of the `/` is not a number.
    #[error("`{part}` in `{text}` is not a number")]
    NotANumber {
        /// The side.
        part: String,
        /// The whole text.
        text: String,
    },
    /// Not `0 <= i < n`.
    #[error("shard `{0}`: need 0 <= i < n")]
    OutOfRange(String),
}

impl std::str::FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Self, ShardError> {
        let (a, b) = s
            .split_once('/')
            .ok_or_else(|| ShardError::NoSlash(s.to_string()))?;
        let number = |part: &str| {
            part.trim()
                .parse::<u64>()
                .map_err(|_| ShardError::NotANumber {
                    part: part.to_string(),
                    text: s.to_string(),
                })
        };
        let index = number(a)?;
        let count = number(b)?;
        if count == 0 || index >= count {
            return Err(ShardError::OutOfRange(s.to_string()));
        }
        Ok(Shard { index, count })
    }
}

/// The case mix of a campaign.
///
/// In `campaign.json` and `state.json` as [`CaseMix::name`] spells it (`--mix`'s value); the
/// Rust variant names an earlier version wrote are read as well, so such a campaign continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseMix {
    /// Valid programs only.
    #[serde(alias = "Valid")]
    Valid,
    /// Near misses only (every mutator in turn).
    #[serde(alias = "NearMiss")]
    NearMiss,
    /// Mostly valid programs, with near misses and litmus members (the generators' mix).
    #[serde(alias = "Mixed")]
    Mixed,
}

impl CaseMix {
    /// The name `--mix` gives it: `valid`, `near-miss`, `mixed`.
    pub fn name(self) -> &'static str {
        match self {
            CaseMix::Valid => "valid",
            CaseMix::NearMiss => "near-miss",
            CaseMix::Mixed => "mixed",
        }
    }

    fn mode(self) -> Mode {
        match self {
            CaseMix::Valid => Mode::Valid,
            CaseMix::NearMiss => Mode::NearMiss(None),
            CaseMix::Mixed => Mode::Mixed,
        }
    }
}

/// What a campaign is: a restart with the same output folder must describe the same campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// Campaign seed.
    pub seed: u64,
    /// Target names.
    pub targets: Vec<String>,
    /// Oracle edition.
    pub edition: Edition,
    /// The shard.
    pub shard: Shard,
    /// The case mix.
    pub mix: CaseMix,
    /// The generator (crate and version): another generator makes other cases of the same seed.
    pub generator: String,
}

impl Identity {
    /// How `asked` differs from this (stored) campaign, one phrase per option, in words:
    /// "its --targets are `sim`, not `sim,sim+ld-num-truncated`".
    pub fn differences(&self, asked: &Identity) -> Vec<String> {
        let mix = |m: CaseMix| m.name().to_string();
        let mut v = Vec::new();
        let mut diff = |what: &str, there: String, here: String| {
            if there != here {
                v.push(format!("its {what} is `{there}`, not `{here}`"));
            }
        };
        diff("--seed", self.seed.to_string(), asked.seed.to_string());
        diff("--targets", self.targets.join(","), asked.targets.join(","));
        diff(
            "--edition",
            self.edition.to_string(),
            asked.edition.to_string(),
        );
        diff("--shard", self.shard.to_string(), asked.shard.to_string());
        diff("--mix", mix(self.mix), mix(asked.mix));
        diff("generator", self.generator.clone(), asked.generator.clone());
        v
    }
}

/// Everything a campaign run needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// What the campaign is.
    pub identity: Identity,
    /// Seed-space bound (`--cases`).
    pub max_cases: Option<u64>,
    /// Time bound (`--time`), counting the time of earlier runs of the same campaign.
    pub max_time: Option<Duration>,
    /// Worker threads.
    pub jobs: usize,
    /// Minimize new findings.
    pub minimize: bool,
    /// Stop at the first finding stored (the case that showed it is still counted).
    pub stop_at_first: bool,
    /// Budget of one minimization (`--minimize-budget`, `--minimize-cap`): a campaign's is
    /// [`minimize::Budget::scaled`], so that a finding on a slow target (a GPU: a compile per
    /// candidate) gets as many candidates as one on the simulator, up to the cap. It is
    /// further bounded by the time left under `--time` (never below its own time) and ends
    /// at once on Ctrl-C.
    pub minimize_budget: minimize::Budget<'static>,
    /// Output folder.
    pub out: PathBuf,
    /// How often `state.json` is rewritten.
    pub checkpoint_every: Duration,
    /// How often the reports are rewritten during the run (always at the end).
    pub reports_every: Duration,
    /// The command line that ran the campaign, written in each finding's rerun command
    /// (`Store::with_invocation`); empty for none.
    pub invocation: String,
}

/// Positions of a shard that are done: every position below `below`, and `extra`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Done {
    /// Every position below this is done.
    pub below: u64,
    /// Done positions at or above `below` (cases finished out of order by parallel workers).
    pub extra: BTreeSet<u64>,
}

impl Done {
    /// Marks a position done.
    pub fn insert(&mut self, p: u64) {
        if p < self.below {
            return;
        }
        self.extra.insert(p);
        while self.extra.remove(&self.below) {
            self.below += 1;
        }
    }

    /// Number of positions done.
    pub fn count(&self) -> u64 {
        self.below + self.extra.len() as u64
    }
}

/// The checkpoint (`state.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// The campaign.
    pub identity: Identity,
    /// Time spent by every run so far, in milliseconds.
    pub elapsed_ms: u64,
    /// Positions done.
    pub done: Done,
    /// Whether the campaign reached its limit.
    pub complete: bool,
    /// Repeated runs (`--runs`) per `target / family` (`runs.md`).
    #[serde(default)]
    pub runs: std::collections::BTreeMap<String, tcgen05_drivers::cuda::runs::FamilyRuns>,
    /// Verdict counts per target.
    pub targets: Vec<TargetCounts>,
    /// The coverage matrix.
    pub coverage: Coverage,
    /// Behaviour coverage (`report::behaviours`).
    #[serde(default)]
    pub behaviours: Behaviours,
}

/// The case stream of a campaign.
pub fn stream(id: &Identity) -> Stream {
    Stream::new(GenConfig::default(), id.seed, id.mix.mode())
}

/// Oracle options of an edition.
pub fn options(id: &Identity) -> Options {
    Options::edition(id.edition)
}

/// Builds the targets of worker `w` for a campaign of `edition`: `sim` targets take the
/// edition's wording (`target::resolve_in`). A target named plainly `cuda` becomes `cuda:<w>`
/// when there are several workers, so that each GPU gets one worker.
pub fn build_targets_in(
    names: &[String],
    w: usize,
    jobs: usize,
    edition: Edition,
) -> Result<Vec<Box<dyn Target>>, target::TargetError> {
    names
        .iter()
        .map(|n| {
            if n == "cuda" && jobs > 1 {
                target::resolve(&format!("cuda:{w}"))
            } else {
                target::resolve_in(n, edition)
            }
        })
        .collect()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reads `campaign.json` and `state.json` of an output folder, if there are any.
pub fn load(out: &Path) -> Result<Option<State>, EngineError> {
    let p = out.join("state.json");
    if !p.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&p).map_err(|e| EngineError::io("reading", &p, e))?;
    let s: State = serde_json::from_str(&text).map_err(|e| EngineError::NotACheckpoint {
        path: p.clone(),
        error: e.to_string(),
    })?;
    Ok(Some(s))
}

struct Shared<'a> {
    cfg: &'a Config,
    /// The caller's stop flag.
    stop_asked: &'a AtomicBool,
    stream: Stream,
    opts: Options,
    store: Store,
    next: AtomicU64,
    stop: AtomicBool,
    limit_positions: Option<u64>,
    resumed_extra: BTreeSet<u64>,
    state: Mutex<State>,
    claimed: Mutex<HashSet<String>>,
    new_findings: Mutex<Vec<NewFinding>>,
    started: Instant,
    elapsed_before: Duration,
    workers_left: AtomicU64,
    errors: Mutex<Vec<EngineError>>,
    /// The thread that shows progress: the last worker to finish wakes it.
    monitor: std::sync::OnceLock<std::thread::Thread>,
}

impl Shared<'_> {
    fn elapsed(&self) -> Duration {
        self.elapsed_before + self.started.elapsed()
    }

    /// Time left under `--time`; `None` without a time limit.
    fn time_left(&self) -> Option<Duration> {
        self.cfg.max_time.map(|t| t.saturating_sub(self.elapsed()))
    }

    fn time_up(&self) -> bool {
        self.cfg.max_time.is_some_and(|t| self.elapsed() >= t)
    }

    /// Whether the caller asked the campaign to stop.
    fn stopping(&self) -> bool {
        self.stop_asked.load(Ordering::SeqCst)
    }

    fn checkpoint(&self) -> Result<(), EngineError> {
        let text = {
            let mut s = lock(&self.state);
            s.elapsed_ms = self.elapsed().as_millis() as u64;
            serde_json::to_string(&*s).map_err(EngineError::internal)?
        };
        let p = self.cfg.out.join("state.json");
        report::write_atomic(&p, text.as_bytes()).map_err(|e| EngineError::io("writing", &p, e))
    }

    fn write_reports(&self, summary: &Summary) -> Result<(), EngineError> {
        report::write_all(&self.cfg.out, summary)
            .map_err(|e| EngineError::io("writing the reports in", &self.cfg.out, e))?;
        let runs = lock(&self.state).runs.clone();
        if runs.is_empty() {
            return Ok(());
        }
        let p = self.cfg.out.join("runs.md");
        let text = tcgen05_drivers::cuda::runs::campaign_markdown(&runs);
        report::write_atomic(&p, text.as_bytes()).map_err(|e| EngineError::io("writing", &p, e))
    }

    fn summary(&self) -> Summary {
        let s = lock(&self.state).clone();
        summary_of(&s, &self.cfg.out)
    }
}

/// The summary of a checkpoint, with the findings stored under `out/findings`.
pub fn summary_of(s: &State, out: &Path) -> Summary {
    let (findings, _) = report::findings_in(&out.join("findings"), "findings");
    Summary {
        // The workspace's one version: the engine's is the binary's.
        tool: format!("tcgen05-fuzz {}", env!("CARGO_PKG_VERSION")),
        seed: s.identity.seed,
        shards: if s.identity.shard.count > 1 {
            vec![s.identity.shard.to_string()]
        } else {
            vec![]
        },
        edition: s.identity.edition.to_string(),
        cases: s.done.count(),
        elapsed_s: s.elapsed_ms as f64 / 1000.0,
        complete: s.complete,
        targets: s.targets.clone(),
        findings,
        coverage: s.coverage.clone(),
        skip_outliers: report::skip_outliers(&s.targets),
        behaviours: s.behaviours.clone(),
    }
}

/// Counts a worker out when it ends, however it ends (done, an error, a panic), and wakes the
/// monitor after the last one: without it the monitor would wait forever for a worker that
/// returned early or panicked.
struct WorkerDone<'a, 'b>(&'a Shared<'b>);

impl Drop for WorkerDone<'_, '_> {
    fn drop(&mut self) {
        if self.0.workers_left.fetch_sub(1, Ordering::SeqCst) == 1
            && let Some(t) = self.0.monitor.get()
        {
            t.unpark();
        }
    }
}

fn worker(sh: &Shared<'_>, w: usize) {
    let _done = WorkerDone(sh);
    let mut targets = match build_targets_in(
        &sh.cfg.identity.targets,
        w,
        sh.cfg.jobs,
        sh.cfg.identity.edition,
    ) {
        Ok(t) => t,
        Err(e) => {
            lock(&sh.errors).push(EngineError::Worker(e.to_string()));
            sh.stop.store(true, Ordering::SeqCst);
            return;
        }
    };
    let shard = sh.cfg.identity.shard;
    let claim = claim_size(&targets);
    let mut oracle = Expectations::new(sh.opts);
    // Wall time per case of this worker's last claim.
    let mut per_case: Option<Duration> = None;
    'cases: loop {
        if sh.stop.load(Ordering::Relaxed) || sh.stopping() {
            break;
        }
        if sh.time_up() {
            sh.stop.store(true, Ordering::SeqCst);
            break;
        }
        // Near the end of `--cases`, smaller claims keep every worker busy.
        let claim = match sh.limit_positions {
            Some(n) => {
                let left = n.saturating_sub(sh.next.load(Ordering::Relaxed));
                left.div_ceil(sh.cfg.jobs.max(1) as u64).clamp(1, claim)
            }
            None => claim,
        };
        let claim = claim_within(claim, sh.time_left(), per_case);
        let first = sh.next.fetch_add(claim, Ordering::Relaxed);
        if sh.limit_positions.is_some_and(|n| first >= n) {
            break;
        }
        // Positions `first..first + claim`, less those past `--cases` and those an earlier run
        // finished out of order.
        let positions: Vec<u64> = (first..first + claim)
            .filter(|p| sh.limit_positions.is_none_or(|n| *p < n))
            .filter(|p| !sh.resumed_extra.contains(p))
            .collect();
        if positions.is_empty() {
            continue;
        }
        let cases: Vec<Case> = positions
            .iter()
            .map(|&p| sh.stream.case_at(shard.case_index(p)))
            .collect();
        let started = Instant::now();
        let judged = judge_batch_observed(&cases, &mut targets, &mut oracle, sh.stop_asked);
        per_case = Some(started.elapsed() / cases.len() as u32);
        if sh.stopping() {
            // Abandoned (module documentation, "Ctrl-C"): not counted, run again on restart.
            break;
        }
        for ((&p, case), j) in positions.iter().zip(&cases).zip(&judged) {
            let (verdicts, rules, words) = (&j.verdicts, &j.rules, &j.words);
            for (k, sig) in j.signatures.iter().enumerate() {
                if let Some(sig) = sig {
                    let t = &mut targets[k];
                    let id = sig.id();
                    if sh.store.contains(sig) || !lock(&sh.claimed).insert(id.clone()) {
                        continue;
                    }
                    let index = shard.case_index(p);
                    match record_finding(sh, case, index, t.as_mut(), sig) {
                        Ok(Recorded::Stored(f)) => {
                            lock(&sh.new_findings).push(*f);
                            if sh.cfg.stop_at_first {
                                sh.stop.store(true, Ordering::SeqCst);
                            }
                        }
                        Ok(Recorded::Lost | Recorded::Known) => {}
                        Ok(Recorded::Abandoned) => {
                            // Unclaimed, so that the restart that runs this case again stores
                            // it. This case and the rest of its batch are not counted.
                            lock(&sh.claimed).remove(&id);
                            break 'cases;
                        }
                        Err(e) => lock(&sh.errors).push(e),
                    }
                }
            }
            let mut s = lock(&sh.state);
            for (k, v) in verdicts.iter().enumerate() {
                s.targets[k].record(v);
                s.targets[k].record_words(v, words.as_ref());
                s.targets[k].record_not_emulated(v, j.not_emulated[k].as_ref());
                s.coverage.record(rules, k, v);
            }
            s.behaviours
                .record(j.exercised, j.watched, j.observed, verdicts);
            for (k, r) in j.runs.iter().enumerate() {
                if let Some((observed, forbidden)) = r {
                    // A litmus case's family is `family/member`: count the family.
                    let family = case.provenance.family.as_deref();
                    let family = family.map(|f| f.split('/').next().unwrap_or(f));
                    let family = family.unwrap_or(match case.intent {
                        tcgen05_ir::Intent::Valid => "generated",
                        tcgen05_ir::Intent::NearMiss { .. } => "near misses",
                        _ => "other",
                    });
                    let key = format!("{} / {family}", s.targets[k].target);
                    s.runs.entry(key).or_default().add(observed, forbidden);
                }
            }
            s.done.insert(p);
        }
    }
}

/// A finding stored by a campaign run.
#[derive(Debug, Clone)]
pub struct NewFinding {
    /// Its signature.
    pub signature: Signature,
    /// Index of the case that showed it, in the campaign's seed space.
    pub case_index: u64,
    /// Time from the start of this run to the discrepancy (before minimization).
    pub found_after: Duration,
    /// Time minimization took.
    pub minimize_time: Duration,
    /// The case that showed it.
    pub original: Case,
    /// The case stored: the minimized one, or the original where the minimized case lost the
    /// discrepancy when run again.
    pub stored: Case,
}

/// What became of a new discrepancy.
enum Recorded {
    /// Stored in the findings store.
    Stored(Box<NewFinding>),
    /// Neither the minimized nor the original case showed a discrepancy again (a flaky
    /// target): nothing stored.
    Lost,
    /// The minimized case showed a finding already stored or being stored (under the sharper
    /// rule it is filed under): nothing stored.
    Known,
    /// The campaign was interrupted before it was stored: the case is abandoned.
    Abandoned,
}

/// A target that stops running cases once the campaign is asked to stop (it answers "not
/// run", which no signature matches), so that a minimization in progress ends at its next
/// candidate.
struct StopOnInterrupt<'a>(&'a mut dyn Target, &'a AtomicBool);

impl Target for StopOnInterrupt<'_> {
    fn name(&self) -> String {
        self.0.name()
    }
    fn version(&self) -> String {
        self.0.version()
    }
    fn kind(&self) -> TargetKind {
        self.0.kind()
    }
    fn only_runs(&self) -> bool {
        self.0.only_runs()
    }
    fn wait_bound(&self) -> diff::WaitBound {
        self.0.wait_bound()
    }
    fn run(&mut self, case: &Case) -> TargetOutcome {
        if self.1.load(Ordering::SeqCst) {
            TargetOutcome::NotRun("the campaign was interrupted".into())
        } else {
            self.0.run(case)
        }
    }
    fn run_repeated(&mut self, case: &Case) -> Vec<target::Observed> {
        if self.1.load(Ordering::SeqCst) {
            vec![target::Observed::once(self.run(case))]
        } else {
            self.0.run_repeated(case)
        }
    }
}

fn record_finding(
    sh: &Shared<'_>,
    case: &Case,
    case_index: u64,
    t: &mut dyn Target,
    sig: &Signature,
) -> Result<Recorded, EngineError> {
    let found_after = sh.started.elapsed();
    let mut t = StopOnInterrupt(t, sh.stop_asked);
    // A minimized case on which the diagnosis names the behaviour that differed files the
    // finding under that sharper rule (`Signature::sharpens`); one already stored under it is
    // that finding.
    let mut filed = sig.clone();
    let mut minimization = None;
    let min_case = if sh.cfg.minimize {
        let mut budget = sh.cfg.minimize_budget.with_stop(sh.stop_asked);
        if let Some(left) = sh.time_left() {
            budget = budget.within(left);
        }
        match minimize::minimize(case, &mut t, &sh.opts, budget, &mut |_| {}) {
            Ok(m) => {
                minimization = Some(store::Minimization {
                    tries: m.tries,
                    rejected: m.rejected,
                    kept: m.profile.passes.iter().map(|(_, p)| p.kept).sum(),
                    millis: m.time.as_millis() as u64,
                    timed_out: m.timed_out,
                });
                if &m.signature == sig {
                    m.case
                } else if m.signature.sharpens(sig) {
                    if sh.store.contains(&m.signature)
                        || !lock(&sh.claimed).insert(m.signature.id())
                    {
                        return Ok(Recorded::Known);
                    }
                    filed = m.signature;
                    m.case
                } else {
                    // Another discrepancy on this run (a flaky target): the original is
                    // stored as found, not minimized.
                    minimization = None;
                    case.clone()
                }
            }
            Err(_) => case.clone(),
        }
    } else {
        case.clone()
    };
    let minimize_time = sh.started.elapsed() - found_after;
    let mut j = judge::judge(&min_case, &sh.opts, &mut t);
    if sh.stopping() {
        return Ok(Recorded::Abandoned);
    }
    // The minimized case may lose its discrepancy on this run (a flaky target): then the
    // original is stored instead, under its own signature.
    let mut stored = &min_case;
    if !matches!(j.verdict(), Verdict::Discrepancy(_)) {
        j = judge::judge(case, &sh.opts, &mut t);
        if sh.stopping() {
            return Ok(Recorded::Abandoned);
        }
        stored = case;
        filed = sig.clone();
        // What is stored is not the minimizer's case: its report says "not minimized".
        minimization = None;
    }
    let sig = &filed;
    let Verdict::Discrepancy(d) = j.verdict() else {
        return Ok(Recorded::Lost);
    };
    let mut rep = store::make_report(
        sig,
        d,
        vec![(t.name(), t.version())],
        &j.expected,
        &j.outcome,
        (case.program.size(), stored.program.size()),
    );
    rep.command = sh.store.rerun_command(&rep.signature_id, &sig.target);
    rep.minimization = minimization;
    sh.store
        .add(stored, case, &rep)
        .map_err(|e| EngineError::io("storing a finding in", sh.store.root(), e))?;
    Ok(Recorded::Stored(Box::new(NewFinding {
        signature: sig.clone(),
        case_index,
        found_after,
        minimize_time,
        original: case.clone(),
        stored: stored.clone(),
    })))
}

/// What [`run`] did.
#[derive(Debug)]
pub struct Outcome {
    /// The final summary (also written as the reports).
    pub summary: Summary,
    /// Findings new in this run, in the order they were stored.
    pub new_findings: Vec<NewFinding>,
    /// Cases run by this run (not counting earlier runs).
    pub cases_this_run: u64,
    /// Wall time of this run.
    pub wall: Duration,
    /// Whether the caller's stop flag ended the run.
    pub interrupted: bool,
}

/// Runs (or continues) a campaign. `stop` is the caller's stop flag (module documentation,
/// "Stopping"); `progress` is shown the campaign as it runs ([`header`] says what it is).
pub fn run(
    cfg: &Config,
    stop: &AtomicBool,
    progress: &mut dyn Progress,
) -> Result<Outcome, EngineError> {
    std::fs::create_dir_all(&cfg.out).map_err(|e| EngineError::io("creating", &cfg.out, e))?;
    // The targets must build here before anything is written (a clear error, exit code 2).
    let probe = build_targets_in(&cfg.identity.targets, 0, cfg.jobs, cfg.identity.edition)?;
    let id_path = cfg.out.join("campaign.json");
    if id_path.exists() {
        let text = std::fs::read_to_string(&id_path)
            .map_err(|e| EngineError::io("reading", &id_path, e))?;
        let old: Identity = serde_json::from_str(&text).map_err(|e| EngineError::NotACampaign {
            path: id_path.clone(),
            error: e.to_string(),
        })?;
        if old != cfg.identity {
            return Err(EngineError::AnotherCampaign {
                out: cfg.out.clone(),
                differences: old.differences(&cfg.identity).join("; "),
            });
        }
    } else {
        let text = serde_json::to_string_pretty(&cfg.identity).map_err(EngineError::internal)?;
        report::write_atomic(&id_path, text.as_bytes())
            .map_err(|e| EngineError::io("writing", &id_path, e))?;
    }
    let state = match load(&cfg.out)? {
        Some(s) if s.identity == cfg.identity => s,
        Some(_) => {
            return Err(EngineError::AnotherCheckpoint {
                out: cfg.out.clone(),
            });
        }
        None => State {
            identity: cfg.identity.clone(),
            elapsed_ms: 0,
            done: Done::default(),
            complete: false,
            targets: probe
                .iter()
                .map(|t| TargetCounts::new(&t.name(), &t.version()))
                .collect(),
            coverage: Coverage::new(&probe.iter().map(|t| t.name()).collect::<Vec<_>>()),
            behaviours: Behaviours::default(),
            runs: Default::default(),
        },
    };
    drop(probe);
    let findings = cfg.out.join("findings");
    let store = Store::open(&findings)
        .map_err(|e| EngineError::io("opening", &findings, e))?
        .with_invocation(cfg.invocation.clone());
    let claimed: HashSet<String> = store.list().unwrap_or_default().into_iter().collect();
    let done_before = state.done.count();
    let sh = Shared {
        cfg,
        stop_asked: stop,
        stream: stream(&cfg.identity),
        opts: options(&cfg.identity),
        store,
        next: AtomicU64::new(state.done.below),
        stop: AtomicBool::new(false),
        limit_positions: cfg.max_cases.map(|n| cfg.identity.shard.positions_below(n)),
        resumed_extra: state.done.extra.clone(),
        elapsed_before: Duration::from_millis(state.elapsed_ms),
        state: Mutex::new(State {
            complete: false,
            ..state
        }),
        claimed: Mutex::new(claimed),
        new_findings: Mutex::new(Vec::new()),
        started: Instant::now(),
        workers_left: AtomicU64::new(cfg.jobs as u64),
        errors: Mutex::new(Vec::new()),
        monitor: std::sync::OnceLock::new(),
    };
    // Worker 0 runs on this thread and the progress display on a thread of its own: on glibc,
    // the main thread's allocator arena is measurably faster than the per-thread ones, and the
    // allocator is a fifth of the pipeline's time (`tcgen05-fuzz bench`).
    std::thread::scope(|scope| -> Result<(), EngineError> {
        let shr = &sh;
        let prog = &mut *progress;
        let monitor = std::thread::Builder::new()
            .name("campaign-progress".into())
            .spawn_scoped(scope, move || -> Result<(), EngineError> {
                let mut last_ckpt = Instant::now();
                let mut last_reports = Instant::now();
                while shr.workers_left.load(Ordering::SeqCst) > 0 {
                    // Woken early when the last worker finishes, so a short run does not wait
                    // for the rest of a tick.
                    std::thread::park_timeout(prog.tick());
                    if prog.wants_update(shr.stopping()) {
                        prog.update(&snapshot(shr, done_before));
                    }
                    if last_ckpt.elapsed() >= cfg.checkpoint_every {
                        shr.checkpoint()?;
                        last_ckpt = Instant::now();
                    }
                    if last_reports.elapsed() >= cfg.reports_every {
                        shr.write_reports(&shr.summary())?;
                        last_reports = Instant::now();
                    }
                }
                Ok(())
            })
            .map_err(|e| EngineError::Worker(format!("starting the progress thread: {e}")))?;
        let _ = sh.monitor.set(monitor.thread().clone());
        for w in 1..cfg.jobs {
            std::thread::Builder::new()
                .name(format!("campaign-worker-{w}"))
                .spawn_scoped(scope, move || worker(shr, w))
                .map_err(|e| EngineError::Worker(format!("starting a worker thread: {e}")))?;
        }
        worker(shr, 0);
        match monitor.join() {
            Ok(r) => r,
            Err(_) => Err(EngineError::Worker("the progress thread panicked".into())),
        }
    })?;
    let errors = std::mem::take(&mut *lock(&sh.errors));
    if let Some(e) = errors.into_iter().next() {
        sh.checkpoint()?;
        return Err(e);
    }
    let interrupted = sh.stopping();
    {
        let mut s = lock(&sh.state);
        let all_done = sh.limit_positions.is_some_and(|n| s.done.count() >= n);
        s.complete = all_done || sh.time_up();
    }
    sh.checkpoint()?;
    let summary = sh.summary();
    sh.write_reports(&summary)?;
    let snap = snapshot(&sh, done_before);
    progress.finish(&snap);
    let new_findings = std::mem::take(&mut *lock(&sh.new_findings));
    Ok(Outcome {
        cases_this_run: summary.cases - done_before,
        summary,
        new_findings,
        wall: sh.started.elapsed(),
        interrupted,
    })
}

/// What a campaign is, in a few short lines: the header of its progress display.
pub fn header(cfg: &Config) -> String {
    let id = &cfg.identity;
    // Short lines rather than one long one: the live display is drawn for 80 columns.
    format!(
        "tcgen05-fuzz campaign: seed {}, edition {}, shard {}, {} job(s)\n  targets {}\n  out {}",
        id.seed,
        id.edition,
        id.shard,
        cfg.jobs,
        id.targets.join(","),
        cfg.out.display()
    )
}

fn snapshot(sh: &Shared<'_>, done_before: u64) -> Snapshot {
    let (cases, targets) = {
        let s = lock(&sh.state);
        (s.done.count(), s.targets.clone())
    };
    let findings = sh.store.list().map(|l| l.len()).unwrap_or(0);
    Snapshot {
        elapsed: sh.elapsed(),
        this_run: sh.started.elapsed(),
        cases,
        cases_this_run: cases - done_before,
        case_limit: sh.limit_positions,
        time_limit: sh.cfg.max_time,
        targets,
        findings,
        last_finding: lock(&sh.new_findings)
            .last()
            .map(|f| f.signature.to_string()),
        stopping: sh.stopping(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mix is written as `--mix` names it (`campaign.json`, `state.json`), and the Rust
    /// variant names an earlier version wrote still read back.
    #[test]
    fn the_mix_is_spelled_as_mix_names_it_and_old_names_read_back() {
        for m in [CaseMix::Valid, CaseMix::NearMiss, CaseMix::Mixed] {
            let json = serde_json::to_string(&m).expect("serializable");
            assert_eq!(json, format!("\"{}\"", m.name()));
            assert_eq!(serde_json::from_str::<CaseMix>(&json).ok(), Some(m));
        }
        for (old, m) in [
            ("\"Valid\"", CaseMix::Valid),
            ("\"NearMiss\"", CaseMix::NearMiss),
            ("\"Mixed\"", CaseMix::Mixed),
        ] {
            assert_eq!(serde_json::from_str::<CaseMix>(old).ok(), Some(m), "{old}");
        }
    }

    #[test]
    fn done_positions_advance_the_watermark() {
        let mut d = Done::default();
        d.insert(1);
        d.insert(3);
        assert_eq!((d.below, d.count()), (0, 2));
        d.insert(0);
        assert_eq!((d.below, d.count()), (2, 3));
        d.insert(2);
        assert_eq!((d.below, d.count()), (4, 4));
        assert!(d.extra.is_empty());
        d.insert(1);
        assert_eq!(d.count(), 4);
    }

    #[test]
    fn shards_partition_the_seed_space() {
        let s: Shard = "1/3".parse().unwrap();
        assert_eq!(s.case_index(0), 1);
        assert_eq!(s.case_index(2), 7);
        // Indices 0..10: shard 1/3 has 1, 4, 7.
        assert_eq!(s.positions_below(10), 3);
        let total: u64 = (0..3)
            .map(|k| Shard { index: k, count: 3 }.positions_below(10))
            .sum();
        assert_eq!(total, 10);
        assert_eq!(
            "3/3".parse::<Shard>(),
            Err(ShardError::OutOfRange("3/3".into()))
        );
        assert_eq!(
            "1-3".parse::<Shard>().unwrap_err().to_string(),
            "`1-3` is not a shard: write i/n, e.g. 0/4"
        );
        assert_eq!(
            "0/0".parse::<Shard>(),
            Err(ShardError::OutOfRange("0/0".into()))
        );
        assert_eq!(
            "x/3".parse::<Shard>().unwrap_err().to_string(),
            "`x` in `x/3` is not a number"
        );
    }

    /// A stand-in target of either kind: it accepts a case whose program size is even, rejects
    /// the others, and records the size of every `run_batch` call and counts every `run`.
    struct Recorder {
        kind: TargetKind,
        batches: std::sync::Arc<Mutex<Vec<usize>>>,
        singles: std::sync::Arc<AtomicU64>,
    }

    impl Recorder {
        fn verdict(case: &Case) -> TargetOutcome {
            if case.program.size().is_multiple_of(2) {
                TargetOutcome::Accepted
            } else {
                TargetOutcome::Rejected(vec![])
            }
        }
    }

    impl Target for Recorder {
        fn name(&self) -> String {
            "recorder".into()
        }
        fn version(&self) -> String {
            "0".into()
        }
        fn kind(&self) -> TargetKind {
            self.kind
        }
        fn run(&mut self, case: &Case) -> TargetOutcome {
            self.singles.fetch_add(1, Ordering::SeqCst);
            Recorder::verdict(case)
        }
        fn run_batch(&mut self, cases: &[Case]) -> Vec<TargetOutcome> {
            lock(&self.batches).push(cases.len());
            cases.iter().map(Recorder::verdict).collect()
        }
    }

    /// What a [`Recorder`] saw: its `run_batch` sizes and its `run` count.
    type Log = (std::sync::Arc<Mutex<Vec<usize>>>, std::sync::Arc<AtomicU64>);

    fn recorder(kind: TargetKind) -> (Box<dyn Target>, Log) {
        let batches = std::sync::Arc::new(Mutex::new(Vec::new()));
        let singles = std::sync::Arc::new(AtomicU64::new(0));
        let t = Recorder {
            kind,
            batches: batches.clone(),
            singles: singles.clone(),
        };
        (Box::new(t), (batches, singles))
    }

    /// A one-shard campaign of the mixed stream with no targets, in the default edition.
    fn mixed_identity(seed: u64) -> Identity {
        Identity {
            seed,
            targets: vec![],
            edition: Edition::default(),
            shard: Shard { index: 0, count: 1 },
            mix: CaseMix::Mixed,
            generator: String::new(),
        }
    }

    /// The simulator behind a run counter, saying it only runs programs or not.
    struct CountingSim {
        sim: Box<dyn Target>,
        only_runs: bool,
        runs: std::sync::Arc<AtomicU64>,
    }

    impl Target for CountingSim {
        fn name(&self) -> String {
            self.sim.name()
        }
        fn version(&self) -> String {
            self.sim.version()
        }
        fn kind(&self) -> TargetKind {
            self.sim.kind()
        }
        fn only_runs(&self) -> bool {
            self.only_runs
        }
        fn run(&mut self, case: &Case) -> TargetOutcome {
            self.runs.fetch_add(1, Ordering::SeqCst);
            self.sim.run(case)
        }
    }

    #[test]
    fn a_target_that_only_runs_skips_settled_cases_with_the_verdicts_a_run_gets() {
        let id = mixed_identity(8);
        let stream = stream(&id);
        let cases: Vec<Case> = (0..300).map(|i| stream.case_at(i)).collect();
        let counter = |only_runs: bool| {
            let runs = std::sync::Arc::new(AtomicU64::new(0));
            let t = CountingSim {
                sim: target::resolve("sim").expect("the simulator builds"),
                only_runs,
                runs: runs.clone(),
            };
            (Box::new(t) as Box<dyn Target>, runs)
        };
        let (skipping, skipping_runs) = counter(true);
        let (running, running_runs) = counter(false);
        let mut targets = vec![skipping, running];
        let mut oracle = Expectations::new(options(&id));
        let judged = judge_batch(&cases, &mut targets, &mut oracle);
        let mut settled = 0;
        for (case, (v, _, _)) in cases.iter().zip(&judged) {
            let e = tcgen05_oracle::expect_with(&case.program, &options(&id));
            if diff::verdict_for_any_run(&e).is_some() {
                settled += 1;
                // The run's verdict is the settled one, or another skip where the simulator
                // could not run the case.
                assert!(v[0] == v[1] || matches!(v[1], Verdict::Skip(_)), "{v:?}");
                assert!(matches!(v[0], Verdict::Skip(_)), "{v:?}");
            } else {
                assert_eq!(v[0], v[1]);
            }
        }
        assert!(
            settled > 20,
            "the mixed stream has settled cases: {settled}"
        );
        assert_eq!(running_runs.load(Ordering::SeqCst), 300);
        assert_eq!(skipping_runs.load(Ordering::SeqCst), 300 - settled);
    }

    #[test]
    fn compile_only_targets_judge_a_claim_in_one_batch_with_the_verdicts_of_judge() {
        let id = mixed_identity(3);
        let stream = stream(&id);
        let opts = options(&id);
        let cases: Vec<Case> = (0..12).map(|i| stream.case(i).case).collect();
        let (compile, (batches, compile_singles)) = recorder(TargetKind::CompileOnly);
        let (running, (running_batches, running_singles)) = recorder(TargetKind::Running);
        let mut targets = vec![compile, running];
        let mut oracle = Expectations::new(opts);
        let batched = judge_batch(&cases, &mut targets, &mut oracle);
        // One batch call of every case on the compile-only target; the running target ran
        // them one by one.
        assert_eq!(*lock(&batches), vec![12]);
        assert_eq!(compile_singles.load(Ordering::SeqCst), 0);
        assert!(lock(&running_batches).is_empty());
        assert_eq!(running_singles.load(Ordering::SeqCst), 12);
        assert_eq!(batched.len(), cases.len());
        for (case, b) in cases.iter().zip(&batched) {
            assert_eq!(&judge(case, &mut targets, &mut oracle), b);
        }
        // A claim of one case is a plain run.
        let one = judge_batch(&cases[..1], &mut targets, &mut oracle);
        assert_eq!(one[0], judge(&cases[0], &mut targets, &mut oracle));
        assert_eq!(lock(&batches).len(), 1);
        assert_eq!(claim_size(&targets), COMPILE_ONLY_BATCH);
        assert_eq!(claim_size(&targets[1..]), 1);
    }

    /// The simulator as a target that takes its cases in batches of `depth`
    /// (`Target::pipeline_depth`), recording the programs of each `run_repeated_batch` call.
    struct PipelinedSim {
        sim: Box<dyn Target>,
        depth: u64,
        batches: std::sync::Arc<Mutex<Vec<Vec<tcgen05_ir::Program>>>>,
    }

    impl Target for PipelinedSim {
        fn name(&self) -> String {
            self.sim.name()
        }
        fn version(&self) -> String {
            self.sim.version()
        }
        fn kind(&self) -> TargetKind {
            self.sim.kind()
        }
        fn only_runs(&self) -> bool {
            true
        }
        fn run(&mut self, case: &Case) -> TargetOutcome {
            self.sim.run(case)
        }
        fn run_repeated_batch(&mut self, cases: &[&Case]) -> Vec<Vec<target::Observed>> {
            lock(&self.batches).push(cases.iter().map(|c| c.program.clone()).collect());
            cases
                .iter()
                .map(|c| vec![target::Observed::once(self.sim.run(c))])
                .collect()
        }
        fn pipeline_depth(&self) -> u64 {
            self.depth
        }
    }

    #[test]
    fn a_pipelined_target_gets_the_claims_cases_it_runs_in_one_batch_in_order() {
        let id = mixed_identity(8);
        let stream = stream(&id);
        let opts = options(&id);
        let cases: Vec<Case> = (0..40).map(|i| stream.case_at(i)).collect();
        let batches = std::sync::Arc::new(Mutex::new(Vec::new()));
        let pipelined = PipelinedSim {
            sim: target::resolve("sim").expect("the simulator builds"),
            depth: 16,
            batches: batches.clone(),
        };
        let mut targets: Vec<Box<dyn Target>> = vec![Box::new(pipelined)];
        assert_eq!(claim_size(&targets), 16);
        let mut oracle = Expectations::new(opts);
        let judged = judge_batch(&cases, &mut targets, &mut oracle);
        // One batch: the cases whose verdict a run can change, in claim order.
        let unsettled: Vec<_> = cases
            .iter()
            .filter(|c| {
                let e = tcgen05_oracle::expect_with(&c.program, &opts);
                diff::verdict_for_any_run(&e).is_none()
            })
            .map(|c| c.program.clone())
            .collect();
        assert!(
            unsettled.len() > 20 && unsettled.len() < 40,
            "{}",
            unsettled.len()
        );
        assert_eq!(*lock(&batches), vec![unsettled]);
        // The same verdicts as judging each case alone.
        for (case, b) in cases.iter().zip(&judged) {
            assert_eq!(&judge(case, &mut targets, &mut oracle), b);
        }
        // A compile-only target's batch size wins.
        let (compile, _) = recorder(TargetKind::CompileOnly);
        targets.push(compile);
        assert_eq!(claim_size(&targets), COMPILE_ONLY_BATCH);
    }

    #[test]
    fn claims_shrink_to_the_time_left() {
        let ms = Duration::from_millis;
        // No time limit: the full claim.
        assert_eq!(claim_within(128, None, Some(ms(10))), 128);
        // Under --time, the first claim is a probe: the cost of a case is not known yet.
        assert_eq!(claim_within(128, Some(ms(50)), None), PROBE_CLAIM);
        assert_eq!(claim_within(1, Some(ms(50)), None), 1);
        // 50 ms left at 10 ms a case: 5 cases; at 20 ms a case: 3 (the last one overruns).
        assert_eq!(claim_within(128, Some(ms(50)), Some(ms(10))), 5);
        assert_eq!(claim_within(128, Some(ms(50)), Some(ms(20))), 3);
        // Never more than the claim, never fewer than one.
        assert_eq!(claim_within(128, Some(ms(60_000)), Some(ms(10))), 128);
        assert_eq!(claim_within(128, Some(ms(0)), Some(ms(10))), 1);
    }
}
