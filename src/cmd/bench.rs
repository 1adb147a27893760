//! `tcgen05-fuzz bench`: the throughput of every stage of the pipeline, as cases/s and as
//! ratios, on one thread: generate, check, expect, sim, compare, the bare pipeline (all of them
//! in a loop), ptxas batched against unbatched (where a ptxas is installed), and the campaign
//! engine against the bare pipeline (its overhead: progress, checkpoints, findings store,
//! reports).
//!
//! Timings on a shared machine are noisy: the campaign comparison runs bare and campaign
//! alternately `--repeat` times and keeps the best of each.

use super::{Format, bad_input};
use crate::engine::{self, CaseMix, Identity, Shard};
use crate::progress;
use serde::Serialize;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tcgen05_drivers::diff;
use tcgen05_drivers::target::{self, Availability};
use tcgen05_ir::Case;
use tcgen05_ir::observe::Layout;
use tcgen05_oracle::{Edition, Options};

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
    /// (best of each is kept).
    #[arg(long, default_value_t = 3)]
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
    /// 1 - campaign rate / bare pipeline rate, in percent.
    pub campaign_overhead_pct: f64,
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

/// The bare pipeline: generate, expect, sim, compare, in a loop, nothing else.
fn bare(id: &Identity, n: u64) -> anyhow::Result<Duration> {
    let stream = engine::stream(id);
    let opts = engine::options(id);
    let mut targets =
        engine::build_targets(&id.targets, 0, 1).map_err(|e| bad_input(e.to_string()))?;
    let t = Instant::now();
    for i in 0..n {
        let case = stream.case(i).case;
        std::hint::black_box(engine::judge(&case, &mut targets, &opts));
    }
    Ok(t.elapsed())
}

fn campaign(id: &Identity, n: u64) -> anyhow::Result<Duration> {
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
        minimize_budget: Duration::ZERO,
        out: dir.clone(),
        checkpoint_every: Duration::from_secs(1),
        reports_every: Duration::from_secs(30),
        progress: progress::Mode::Quiet,
    };
    let o = engine::run(&cfg);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(o?.wall)
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

/// Runs `bench`.
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
    let opts = Options::default();
    let mut stages = Vec::new();

    let (cases, d) = timed(|| (0..n).map(|i| stream.case(i).case).collect::<Vec<Case>>());
    stages.push(stage(
        "generate",
        n,
        d,
        "mixed stream: valid, near miss, litmus",
    ));
    let (_, d) = timed(|| {
        cases
            .iter()
            .map(|c| tcgen05_oracle::check(&c.program).len())
            .sum::<usize>()
    });
    stages.push(stage("check", n, d, "oracle static check"));
    let (expected, d) = timed(|| {
        cases
            .iter()
            .map(|c| tcgen05_oracle::expect_with(&c.program, &opts))
            .collect::<Vec<_>>()
    });
    stages.push(stage(
        "expect",
        n,
        d,
        "oracle run expectation (includes check)",
    ));
    let mut sim = target::resolve("sim").map_err(|e| bad_input(e.to_string()))?;
    let (outcomes, d) = timed(|| cases.iter().map(|c| sim.run(c)).collect::<Vec<_>>());
    stages.push(stage("sim", n, d, "simulator, random scheduler"));
    let layouts: Vec<Layout> = cases.iter().map(|c| Layout::of(&c.program)).collect();
    let (_, d) = timed(|| {
        cases
            .iter()
            .zip(&layouts)
            .zip(expected.iter().zip(&outcomes))
            .map(|((c, l), (e, o))| diff::compare_with(&c.program, l, e, o))
            .collect::<Vec<_>>()
    });
    stages.push(stage(
        "compare",
        n,
        d,
        "diff::compare_with, layout precomputed",
    ));

    // ptxas (issue 6): the same cases through one process per case and through batches, with
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

    let mut best_bare = Duration::MAX;
    let mut best_camp = Duration::MAX;
    for _ in 0..args.repeat.max(1) {
        best_bare = best_bare.min(bare(&id, n)?);
        best_camp = best_camp.min(campaign(&id, n)?);
    }
    let pipe = stage(
        "pipeline (bare)",
        n,
        best_bare,
        "generate + expect + sim + compare, one thread",
    );
    let camp = stage(
        "campaign",
        n,
        best_camp,
        "the campaign engine, 1 job: + progress, checkpoints, store, reports",
    );
    let overhead = 100.0 * (1.0 - camp.cases_per_s / pipe.cases_per_s);
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
    };
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&b)?),
        Format::Text => {
            println!(
                "{:<28} {:>7} {:>9} {:>12} {:>10}  note",
                "stage", "cases", "seconds", "cases/s", "x pipeline"
            );
            for s in &b.stages {
                println!(
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
                println!("ptxas batched / unbatched (same cases, same flags): {x:.1}x");
            }
            println!(
                "campaign overhead: {:.1}% of the bare pipeline's cases/s (best of {})",
                b.campaign_overhead_pct,
                args.repeat.max(1)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
