//! `tcgen05-fuzz bench`: the throughput of every stage of the pipeline, as cases/s and as
//! ratios, on one thread: generate, check, expect, sim, compare, the bare pipeline (all of them
//! in a loop), ptxas batched against unbatched (where a ptxas is installed), and the campaign
//! engine against the bare pipeline (its overhead: progress, checkpoints, findings store,
//! reports).
//!
//! The stage rows and the campaign rows are timed by the CPU time of this process where it
//! can be read (Unix), which the other processes of a shared machine disturb far less than
//! wall time; the ptxas rows by wall time (ptxas runs in child processes).
//!
//! The campaign rows measure the same work twice: the same cases of the same stream (same
//! seed, same mix), the same targets and oracle edition, one thread; the bare loop counts the
//! verdicts as the campaign does, and the two counts must be identical (printed as "same
//! work"). Timings on a shared machine are noisy: the comparison runs `--repeat` rounds,
//! alternating which of the two goes first, and keeps the best of each. Its headline figure
//! is by CPU time of the whole process (every thread: the campaign's progress thread counts),
//! which other processes on the machine disturb far less than wall time; the wall-time figure
//! and the spread of the per-round figures (the noise) are printed beside it.

use super::{Format, bad_input};
use serde::Serialize;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use tcgen05_drivers::diff;
use tcgen05_drivers::report::TargetCounts;
use tcgen05_drivers::target::{self, Availability};
use tcgen05_engine::campaign::{self as engine, CaseMix, Identity, Shard};
use tcgen05_engine::expectations::Expectations;
use tcgen05_engine::judge;
use tcgen05_engine::progress::Silent;
use tcgen05_ir::Case;
use tcgen05_ir::observe::Layout;
use tcgen05_oracle::Edition;

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Cases per stage.
    #[arg(long, default_value_t = 5000)]
    pub cases: u64,
    /// Cases for the ptxas stages (one ptxas process per case unbatched).
    #[arg(long, default_value_t = 64)]
    pub ptxas_cases: u64,
    /// The ptxas target (default: the newest installed).
    #[arg(long)]
    pub ptxas: Option<String>,
    /// Rounds of the bare-against-campaign and the ptxas unbatched-against-batched comparisons
    /// (best of each is kept; the campaign comparison alternates which goes first).
    #[arg(long, default_value_t = 5)]
    pub repeat: u32,
    /// Seed of the cases.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// One row of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    /// Stage name.
    pub stage: String,
    /// Cases processed.
    pub cases: u64,
    /// Seconds.
    pub seconds: f64,
    /// Cases per second.
    pub cases_per_s: f64,
    /// Rate relative to the bare pipeline (how many times faster than all stages together).
    pub ratio_to_pipeline: Option<f64>,
    /// A note (what is measured, or why it was not).
    pub note: String,
}

/// The whole result (`--format json`).
#[derive(Debug, Clone, Serialize)]
pub struct Bench {
    /// Every stage.
    pub stages: Vec<Stage>,
    /// ptxas batched rate over unbatched rate.
    pub ptxas_batch_speedup: Option<f64>,
    /// 1 - campaign rate / bare pipeline rate, in percent, by process CPU time (best round of
    /// each); by wall time where CPU time cannot be read (not Unix).
    pub campaign_overhead_pct: f64,
    /// The same by wall time (best round of each).
    pub campaign_overhead_wall_pct: f64,
    /// The overhead of each round (bare and campaign back to back), in percent, by the same
    /// clock as `campaign_overhead_pct`: their spread is the noise of the measurement.
    pub campaign_overhead_rounds_pct: Vec<f64>,
    /// The campaign's fixed cost in milliseconds (same clock): opening the output folder,
    /// building the targets, the final checkpoint and reports; measured as a one-case campaign.
    pub campaign_fixed_cost_ms: f64,
    /// The overhead without the fixed cost, in percent: what a long campaign pays per case.
    pub campaign_overhead_per_case_pct: f64,
    /// Whether the bare pipeline and the campaign counted the same verdicts on every target
    /// (they ran the same cases on the same targets).
    pub same_work: bool,
}

/// Time spent by one measured run.
#[derive(Debug, Clone, Copy)]
struct Spent {
    wall: Duration,
    /// CPU time of the whole process (user + system, every thread), if it can be read.
    cpu: Option<Duration>,
}

impl Spent {
    /// The clock the overhead is computed with: CPU time where there is one.
    fn clock(self) -> Duration {
        self.cpu.unwrap_or(self.wall)
    }
}

/// CPU time of this process: every thread, including those that have ended (the campaign's
/// progress thread), in nanoseconds (`clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`).
#[cfg(unix)]
fn process_cpu() -> Option<Duration> {
    use nix::time::{ClockId, clock_gettime};
    let t = clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).ok()?;
    Some(Duration::new(
        u64::try_from(t.tv_sec()).ok()?,
        u32::try_from(t.tv_nsec()).ok()?,
    ))
}

/// No CPU clock: the wall clock is used.
#[cfg(not(unix))]
fn process_cpu() -> Option<Duration> {
    None
}

/// Runs `f`, measuring wall and process CPU time.
fn measured<T>(f: impl FnOnce() -> T) -> (T, Spent) {
    let c0 = process_cpu();
    let t0 = Instant::now();
    let v = f();
    let wall = t0.elapsed();
    let cpu = match (c0, process_cpu()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    (v, Spent { wall, cpu })
}

fn stage(name: &str, cases: u64, d: Duration, note: &str) -> Stage {
    let s = d.as_secs_f64().max(1e-9);
    Stage {
        stage: name.into(),
        cases,
        seconds: s,
        cases_per_s: cases as f64 / s,
        ratio_to_pipeline: None,
        note: note.into(),
    }
}

/// Runs `f`, giving its CPU time where it can be read (the stages run on this thread), else
/// its wall time.
fn cpu_timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let (v, spent) = measured(f);
    (v, spent.clock())
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}

fn identity(seed: u64) -> Identity {
    Identity {
        seed,
        targets: vec!["sim".into()],
        edition: Edition::Seeds,
        shard: Shard { index: 0, count: 1 },
        mix: CaseMix::Mixed,
        generator: tcgen05_generators::ORIGIN.to_string(),
    }
}

/// The bare pipeline: generate, expect, run on the targets, compare, in a loop, counting the
/// verdicts (to show it did the campaign's work), nothing else.
fn bare(id: &Identity, n: u64) -> anyhow::Result<(Vec<TargetCounts>, Spent)> {
    let stream = engine::stream(id);
    let mut oracle = Expectations::new(engine::options(id));
    // The campaign's targets: `sim` takes the edition's wording, as in `engine::run`.
    let mut targets = engine::build_targets_in(&id.targets, 0, 1, id.edition)
        .map_err(|e| bad_input(e.to_string()))?;
    let mut counts: Vec<TargetCounts> = targets
        .iter()
        .map(|t| TargetCounts::new(&t.name(), &t.version()))
        .collect();
    let ((), spent) = measured(|| {
        for i in 0..n {
            // Case `i` of the seed space is position `i` of the unsharded campaign.
            let case = stream.case_at(i);
            let (verdicts, rules, words) = engine::judge(&case, &mut targets, &mut oracle);
            for (c, v) in counts.iter_mut().zip(&verdicts) {
                c.record(v);
                c.record_words(v, words.as_ref());
            }
            std::hint::black_box(rules);
        }
    });
    Ok((counts, spent))
}

/// The campaign engine on the same cases: the whole `engine::run`, from opening the output
/// folder to the last report.
fn campaign(id: &Identity, n: u64) -> anyhow::Result<(Vec<TargetCounts>, Spent)> {
    let dir = std::env::temp_dir().join(format!(
        "tcgen05-bench-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    ));
    let cfg = engine::Config {
        identity: id.clone(),
        max_cases: Some(n),
        max_time: None,
        jobs: 1,
        minimize: false,
        minimize_budget: Duration::ZERO.into(),
        out: dir.clone(),
        checkpoint_every: Duration::from_secs(1),
        reports_every: Duration::from_secs(30),
        invocation: String::new(),
        stop_at_first: false,
    };
    let (o, spent) = measured(|| engine::run(&cfg, &AtomicBool::new(false), &mut Silent));
    let _ = std::fs::remove_dir_all(&dir);
    let o = o.map_err(super::engine_error)?;
    anyhow::ensure!(
        o.cases_this_run == n,
        "the campaign ran {} cases, not {n}",
        o.cases_this_run
    );
    Ok((o.summary.targets, spent))
}

fn newest_ptxas() -> Option<String> {
    target::available_targets()
        .into_iter()
        .filter(|i| i.name.starts_with("ptxas@") && i.availability == Availability::Available)
        .map(|i| i.name)
        .max_by_key(|n| {
            n.trim_start_matches("ptxas@")
                .split('.')
                .map(|x| x.parse::<u32>().unwrap_or(0))
                .collect::<Vec<_>>()
        })
}

/// Cases a chunk of the stage rows carries through every stage before the next chunk.
const STAGE_CHUNK: u64 = 64;

/// Below this many cases, the campaign overhead is mostly its fixed cost and noise.
const SMALL_CASES: u64 = 5000;

/// An overhead figure for people: a campaign measured faster than the bare pipeline (it does
/// more work, so that is the noise of the machine) is "none measurable", never a negative
/// percentage.
fn overhead_words(pct: f64) -> String {
    if pct < 0.0 {
        "none measurable (below the noise)".to_string()
    } else {
        format!("{pct:.1}%")
    }
}

/// Runs `bench`./// Runs `bench`.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.cases == 0 {
        return Err(bad_input("--cases must be at least 1"));
    }
    let n = args.cases;
    let id = identity(args.seed);
    let stream = engine::stream(&id);
    let opts = engine::options(&id);
    let mut stages = Vec::new();

    // The stages run chunk by chunk (STAGE_CHUNK cases through every stage, then the next
    // chunk), each stage's CPU time summed over the chunks: the cases of a chunk stay in the
    // caches from one stage to the next, as in the pipeline (one case at a time). Timing
    // every stage over all the cases at once measured mostly cache misses: its stage times
    // summed to 1.5x the pipeline's.
    let mut sim = target::resolve("sim").map_err(|e| bad_input(e.to_string()))?;
    let (sim_name, sim_bound) = (sim.name(), sim.wait_bound());
    let mut spent = [Duration::ZERO; 6];
    eprintln!("bench: stages generate, check, expect, sim, compare, behaviours on {n} cases ...");
    let keep = args.ptxas_cases.min(n).max(1) as usize;
    let mut cases: Vec<Case> = Vec::with_capacity(keep);
    let mut start = 0;
    while start < n {
        let end = (start + STAGE_CHUNK).min(n);
        let (chunk, d) = cpu_timed(|| {
            (start..end)
                .map(|i| stream.case_at(i))
                .collect::<Vec<Case>>()
        });
        spent[0] += d;
        let (_, d) = cpu_timed(|| {
            chunk
                .iter()
                .map(|c| tcgen05_oracle::check(&c.program).len())
                .sum::<usize>()
        });
        spent[1] += d;
        let (expected, d) = cpu_timed(|| {
            chunk
                .iter()
                .map(|c| tcgen05_oracle::expect_with(&c.program, &opts))
                .collect::<Vec<_>>()
        });
        spent[2] += d;
        // As in the pipeline (`engine::judge_batch`), the simulator does not run the cases whose
        // verdict no run outcome can change (ill-formed programs, undefined runs).
        let (outcomes, d) = cpu_timed(|| {
            chunk
                .iter()
                .zip(&expected)
                .map(|(c, e)| diff::verdict_for_any_run(e).is_none().then(|| sim.run(c)))
                .collect::<Vec<_>>()
        });
        spent[3] += d;
        let layouts: Vec<Layout> = chunk.iter().map(|c| Layout::of(&c.program)).collect();
        let (_, d) = cpu_timed(|| {
            chunk
                .iter()
                .zip(&layouts)
                .zip(expected.iter().zip(&outcomes))
                .filter_map(|((c, l), (e, o))| {
                    Some(judge::rule(
                        &c.program,
                        l,
                        e,
                        o.as_ref()?,
                        &sim_name,
                        sim_bound,
                    ))
                })
                .collect::<Vec<_>>()
        });
        spent[4] += d;
        let (_, d) = cpu_timed(|| {
            chunk
                .iter()
                .zip(&expected)
                .map(|(c, e)| {
                    let a = tcgen05_generators::behaviours::analyse(&c.program);
                    (
                        a.watched(),
                        tcgen05_drivers::report::behaviours::observed(&a, e),
                    )
                })
                .collect::<Vec<_>>()
        });
        spent[5] += d;
        cases.extend(chunk.into_iter().take(keep - cases.len()));
        start = end;
    }
    for (i, (name, note)) in [
        ("generate", "mixed stream: valid, near miss, litmus"),
        ("check", "oracle static check"),
        ("expect", "oracle run expectation (includes check)"),
        (
            "sim",
            "simulator, random scheduler, on the cases the pipeline runs it on",
        ),
        ("compare", "diff::compare_with, layout precomputed"),
        (
            "behaviours",
            "behaviours::analyse and the rows observed exactly (report::behaviours::observed)",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        stages.push(stage(name, n, spent[i], note));
    }

    // ptxas: the same cases through one process per case and through batches, with
    // the same flags (the targets' verdict level, -O0), alternately `--repeat` times, best of
    // each kept; one pass of one process per case at ptxas's default level (-O3) for scale.
    let mut ptxas_speedup = None;
    match args.ptxas.clone().or_else(newest_ptxas) {
        Some(name) => {
            let all = tcgen05_drivers::ptxas::installed();
            let install = match tcgen05_drivers::ptxas::install::select(&name, &all) {
                Some(Ok(v)) => v.into_iter().next_back(),
                _ => None,
            }
            .ok_or_else(|| bad_input(format!("{name}: not an installed ptxas")))?;
            use tcgen05_drivers::target::Target as _;
            let mut t = tcgen05_drivers::ptxas::PtxasTarget::new(install);
            let m = args.ptxas_cases.min(n).max(1) as usize;
            let some = &cases[..m];
            eprintln!(
                "bench: {name} on {m} cases, unbatched and batched, {} round(s) ...",
                args.repeat.max(1)
            );
            let mut d1 = Duration::MAX;
            let mut d2 = Duration::MAX;
            for _ in 0..args.repeat.max(1) {
                d1 = d1.min(timed(|| some.iter().map(|c| t.run(c)).count()).1);
                d2 = d2.min(timed(|| t.run_batch(some).len()).1);
            }
            t.options = tcgen05_drivers::ptxas::CompileOptions::default();
            let (_, d0) = timed(|| some.iter().map(|c| t.run(c)).count());
            let a = stage(
                &format!("{name} unbatched"),
                m as u64,
                d1,
                "one ptxas process per case, -O0 (the targets' verdict level)",
            );
            let b = stage(
                &format!("{name} batched"),
                m as u64,
                d2,
                &format!(
                    "Target::run_batch: {} cases a process, -O0",
                    tcgen05_drivers::ptxas::target::DEFAULT_BATCH
                ),
            );
            let c = stage(
                &format!("{name} unbatched -O3"),
                m as u64,
                d0,
                "one process per case at ptxas's default level, one pass (for scale)",
            );
            ptxas_speedup = Some(b.cases_per_s / a.cases_per_s);
            stages.push(a);
            stages.push(b);
            stages.push(c);
        }
        None => stages.push(Stage {
            stage: "ptxas".into(),
            cases: 0,
            seconds: 0.0,
            cases_per_s: 0.0,
            ratio_to_pipeline: None,
            note: "no ptxas installed here (scripts/setup-ptxas)".into(),
        }),
    }

    let rounds = args.repeat.max(1);
    let mut bare_runs: Vec<Spent> = Vec::new();
    let mut camp_runs: Vec<Spent> = Vec::new();
    let mut same_work = true;
    for r in 0..rounds {
        eprintln!(
            "bench: bare pipeline against the campaign engine, round {} of {rounds} ({n} cases each) ...",
            r + 1
        );
        // Alternate which goes first, so that a drift of the machine's load over the rounds
        // does not favour one of them.
        let (b, c) = if r % 2 == 0 {
            let b = bare(&id, n)?;
            (b, campaign(&id, n)?)
        } else {
            let c = campaign(&id, n)?;
            (bare(&id, n)?, c)
        };
        same_work &= b.0 == c.0;
        bare_runs.push(b.1);
        camp_runs.push(c.1);
    }
    let best = |v: &[Spent], f: fn(Spent) -> Duration| v.iter().map(|s| f(*s)).min();
    let best_bare_wall = best(&bare_runs, |s| s.wall).unwrap_or(Duration::MAX);
    let best_camp_wall = best(&camp_runs, |s| s.wall).unwrap_or(Duration::MAX);
    let best_bare = best(&bare_runs, Spent::clock).unwrap_or(Duration::MAX);
    let best_camp = best(&camp_runs, Spent::clock).unwrap_or(Duration::MAX);
    let overhead_of = |b: Duration, c: Duration| {
        // 1 - (n / c) / (n / b): the campaign's rate against the bare pipeline's.
        100.0 * (1.0 - b.as_secs_f64() / c.as_secs_f64().max(1e-9))
    };
    let by_cpu = bare_runs.iter().chain(&camp_runs).all(|s| s.cpu.is_some());
    let clock = if by_cpu { "CPU" } else { "wall" };
    let overhead = overhead_of(best_bare, best_camp);
    // The fixed cost: a campaign of one case (best of the rounds). Without it, the campaign of
    // n cases does n - 1 cases more, against n - 1 of the bare pipeline's.
    let mut fixed = Duration::MAX;
    eprintln!("bench: the campaign's fixed cost (one-case campaigns) ...");
    for _ in 0..rounds {
        fixed = fixed.min(campaign(&id, 1)?.1.clock());
    }
    let per_case = if n > 1 {
        overhead_of(
            best_bare.mul_f64((n - 1) as f64 / n as f64),
            best_camp.saturating_sub(fixed),
        )
    } else {
        overhead
    };
    let overhead_wall = overhead_of(best_bare_wall, best_camp_wall);
    let per_round: Vec<f64> = bare_runs
        .iter()
        .zip(&camp_runs)
        .map(|(b, c)| overhead_of(b.clock(), c.clock()))
        .collect();
    let pipe = stage(
        "pipeline (bare)",
        n,
        best_bare,
        "generate + expect + sim + compare + count, one thread",
    );
    let camp = stage(
        "campaign",
        n,
        best_camp,
        "the same cases through the campaign engine, 1 job: + progress, checkpoints, store, reports",
    );
    let pipe_rate = pipe.cases_per_s;
    stages.push(pipe);
    stages.push(camp);
    for s in &mut stages {
        if s.cases > 0 {
            s.ratio_to_pipeline = Some(s.cases_per_s / pipe_rate);
        }
    }
    let b = Bench {
        stages,
        ptxas_batch_speedup: ptxas_speedup,
        campaign_overhead_pct: overhead,
        campaign_overhead_wall_pct: overhead_wall,
        campaign_overhead_rounds_pct: per_round,
        campaign_fixed_cost_ms: fixed.as_secs_f64() * 1000.0,
        campaign_overhead_per_case_pct: per_case,
        same_work,
    };
    match args.format {
        Format::Json => outln!("{}", serde_json::to_string_pretty(&b)?),
        Format::Text => {
            outln!(
                "seconds: {}",
                if by_cpu {
                    "CPU time of this process (the ptxas rows: wall time, their work is in \
                     child processes)"
                } else {
                    "wall time (no CPU clock here)"
                }
            );
            outln!(
                "{:<28} {:>7} {:>9} {:>12} {:>10}  note",
                "stage",
                "cases",
                "seconds",
                "cases/s",
                "x pipeline"
            );
            for s in &b.stages {
                outln!(
                    "{:<28} {:>7} {:>9.3} {:>12.1} {:>10}  {}",
                    s.stage,
                    s.cases,
                    s.seconds,
                    s.cases_per_s,
                    s.ratio_to_pipeline
                        .map_or("-".to_string(), |r| format!("{r:.2}")),
                    s.note
                );
            }
            if let Some(x) = b.ptxas_batch_speedup {
                outln!("ptxas batched / unbatched (same cases, same flags): {x:.1}x");
            }
            let lo = b
                .campaign_overhead_rounds_pct
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            let hi = b
                .campaign_overhead_rounds_pct
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max);
            // A round where the campaign came out faster than the bare pipeline is noise; say
            // "faster" rather than print a negative overhead.
            let round = |v: f64| {
                if v < 0.0 {
                    format!("{:.1}% faster", -v)
                } else {
                    format!("{v:.1}% slower")
                }
            };
            outln!(
                "campaign overhead: {} of the bare pipeline's cases/s by {clock} time \
                 ({} by wall time); best of {rounds} alternating rounds each; the rounds \
                 ranged from {} to {} (noise)",
                overhead_words(b.campaign_overhead_pct),
                overhead_words(b.campaign_overhead_wall_pct),
                round(lo),
                round(hi),
            );
            outln!(
                "  of which a fixed cost of {:.1} ms (setup, final checkpoint and reports: a \
                 one-case campaign); without it, {} per case (what a long campaign pays)",
                b.campaign_fixed_cost_ms,
                overhead_words(b.campaign_overhead_per_case_pct)
            );
            if n < SMALL_CASES {
                outln!(
                    "  (with --cases {n} the fixed cost and the noise dominate the overhead \
                     figures; use --cases {SMALL_CASES} or more to measure it)"
                );
            }
            outln!(
                "same work: {}",
                if b.same_work {
                    format!(
                        "yes: {n} cases of one stream on {}, identical verdict counts",
                        id.targets.join(",")
                    )
                } else {
                    "NO: the verdict counts of the bare pipeline and the campaign differ \
                     (a nondeterministic target?); the overhead compares different work"
                        .to_string()
                }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::overhead_words;

    #[test]
    fn an_overhead_below_the_noise_is_never_a_negative_percentage() {
        assert_eq!(overhead_words(3.04), "3.0%");
        assert_eq!(overhead_words(0.0), "0.0%");
        let w = overhead_words(-126.4);
        assert!(!w.contains('-') && !w.contains('%'), "{w}");
    }
}
