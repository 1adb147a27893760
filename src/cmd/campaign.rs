//! `tcgen05-fuzz campaign`: a differential campaign with a progress display, a findings store,
//! reports, sharding and resumption (the engine is `tcgen05_engine::campaign`).
//!
//! ```text
//! tcgen05-fuzz campaign --time 60s --out out/campaign
//! tcgen05-fuzz campaign --targets sim,ptxas@13.5 --cases 100000 --jobs 8 --shard 3/16 --out out/s3
//! ```
//!
//! Exit status: 0 nothing found, 1 findings, 2 bad arguments, 3 internal error, 130 stopped by
//! Ctrl-C / SIGTERM / SIGHUP after writing the checkpoint and reports (`crate::interrupt`).

use super::{EXIT_FINDINGS, bad_input};
use crate::progress;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tcgen05_engine::campaign::{self as engine, CaseMix, Identity, Shard};
use tcgen05_engine::minimize::Budget;
use tcgen05_oracle::Edition;

/// Arguments of `campaign`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Targets, comma-separated (default: `$TCGEN05_TARGETS`, else `sim`).
    #[arg(long)]
    pub targets: Option<String>,
    /// Stop after this long, counting earlier runs of the same campaign (`90s`, `10m`, `2h`;
    /// a bare number is seconds).
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Stop after the first N cases of the seed space (a shard runs its part of them).
    #[arg(long)]
    pub cases: Option<u64>,
    /// Parallel workers (default: the number of CPUs; 1 when a target is a GPU, and with
    /// `--targets cuda` each worker gets its own device `cuda:<worker>`).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Campaign seed: case i is a function of (seed, i).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Oracle edition: `seeds` or `ptx93`.
    #[arg(long, default_value = "seeds")]
    pub edition: Edition,
    /// Output folder: reports at the top, findings under `findings/`. Rerunning with the
    /// same folder continues the campaign.
    #[arg(long, default_value = "out/campaign")]
    pub out: PathBuf,
    /// Run only part `i` of `n` of the seed space (`--shard 2/8`); merge the parts with
    /// `tcgen05-fuzz corpus merge`.
    #[arg(long, default_value = "0/1")]
    pub shard: Shard,
    /// Which cases: valid programs, near misses, or a mix.
    #[arg(long, value_enum, default_value_t = Mix::Mixed)]
    pub mix: Mix,
    /// Do not minimize findings (store them as found).
    #[arg(long)]
    pub no_minimize: bool,
    /// Time budget of one minimization, scaled to the target's cost: a finding is minimized
    /// for at least this long, and on a slow target (a GPU compiles each candidate) until it
    /// has judged as many candidates as the simulator judges in this time (200 a
    /// second), up to `--minimize-cap`. Never past the time left under `--time`, unless that
    /// is less than this.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub minimize_budget: Duration,
    /// The most one minimization may take (`5m`, `tcgen05_engine::minimize::DEFAULT_CAP`:
    /// about 1,000 candidates on `cuda-emu`).
    #[arg(long, value_parser = parse_duration, default_value = "5m")]
    pub minimize_cap: Duration,
    /// Progress: `auto` (live on a terminal, plain lines otherwise), `live`, `plain`, `quiet`.
    #[arg(long, default_value = "auto")]
    pub progress: String,
    /// Seconds between plain progress lines.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub progress_every: Duration,
    /// How often the checkpoint (`state.json`) is written.
    #[arg(long, value_parser = parse_duration, default_value = "1s", hide = true)]
    pub checkpoint_every: Duration,
    /// How often the reports are rewritten while running.
    #[arg(long, value_parser = parse_duration, default_value = "30s", hide = true)]
    pub reports_every: Duration,
    /// GPU targets (`cuda`, `cuda-emu`): runs of each compiled case, every run but the first
    /// perturbed and every outcome judged (default: `$TCGEN05_CUDA_RUNS`, else 64;
    /// docs/blackwell.md). Other targets run each case once.
    #[arg(long)]
    pub runs: Option<u32>,
}

/// The `--mix` values: the engine's [`CaseMix`] as a command-line value (named as
/// [`CaseMix::name`] names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mix {
    /// Valid programs only.
    Valid,
    /// Near misses only (every mutator in turn).
    NearMiss,
    /// Mostly valid programs, with near misses and litmus members (the generators' mix).
    Mixed,
}

impl From<Mix> for CaseMix {
    fn from(m: Mix) -> Self {
        match m {
            Mix::Valid => CaseMix::Valid,
            Mix::NearMiss => CaseMix::NearMiss,
            Mix::Mixed => CaseMix::Mixed,
        }
    }
}

/// Parses `90`, `90s`, `1500ms`, `10m`, `2h`, `1d`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 90s, 10m, 2h)"))?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        u => return Err(format!("unknown unit `{u}` in `{s}` (use ms, s, m, h, d)")),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("`{s}` is not a duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Runs `campaign`.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let targets = tcgen05_drivers::target::from_env(args.targets.as_deref());
    if targets.is_empty() {
        return Err(bad_input("--targets names no target"));
    }
    if let Some(n) = args.runs {
        if n == 0 {
            return Err(bad_input("--runs 0: a case runs at least once"));
        }
        tcgen05_drivers::cuda::set_runs(n);
    }
    if args.time.is_none() && args.cases.is_none() {
        return Err(bad_input(
            "say how long to run: --time (e.g. 60s) or --cases N",
        ));
    }
    let gpu = targets
        .iter()
        .any(|t| t == "cuda" || t.starts_with("cuda:"));
    let jobs = args
        .jobs
        .unwrap_or_else(|| {
            if gpu {
                1
            } else {
                std::thread::available_parallelism().map_or(1, |n| n.get())
            }
        })
        .max(1);
    let progress = match args.progress.as_str() {
        "auto" => progress::Mode::auto(args.progress_every),
        "live" => progress::Mode::Live,
        "plain" => progress::Mode::Plain(args.progress_every),
        "quiet" => progress::Mode::Quiet,
        p => {
            return Err(bad_input(format!(
                "--progress {p}: expected auto, live, plain or quiet"
            )));
        }
    };
    let cfg = engine::Config {
        identity: Identity {
            seed: args.seed,
            targets,
            edition: args.edition,
            shard: args.shard,
            mix: args.mix.into(),
            generator: tcgen05_generators::ORIGIN.to_string(),
        },
        max_cases: args.cases,
        max_time: args.time,
        jobs,
        minimize: !args.no_minimize,
        minimize_budget: Budget::scaled(args.minimize_budget, args.minimize_cap),
        out: args.out.clone(),
        checkpoint_every: args.checkpoint_every,
        reports_every: args.reports_every,
        invocation: crate::invocation::current(),
        stop_at_first: false,
    };
    let mut shown = progress::Progress::new(progress, engine::header(&cfg));
    let o = engine::run(&cfg, crate::interrupt::flag(), &mut shown).map_err(super::engine_error)?;
    let s = &o.summary;
    outln!(
        "{} cases ({} in this run, {:.0} cases/s), {} discrepancies, {} findings{}",
        s.cases,
        o.cases_this_run,
        o.cases_this_run as f64 / o.wall.as_secs_f64().max(1e-9),
        s.discrepancies(),
        s.findings.len(),
        if o.new_findings.is_empty() {
            String::new()
        } else {
            format!(" ({} new)", o.new_findings.len())
        }
    );
    for f in &s.findings {
        outln!(
            "  {}  {}  ({} -> {} statements{})",
            args.out.join(&f.folder).display(),
            f.signature,
            f.sizes.0,
            f.sizes.1,
            match f.minimization {
                None => ", not minimized",
                Some(m) if m.timed_out => ", minimization budget spent",
                Some(_) => "",
            }
        );
    }
    if let Some(f) = s.findings.first() {
        outln!(
            "rerun a finding (its README.md has its own command):\n  {}",
            f.command
        );
    }
    for x in &s.skip_outliers {
        outln!("skip-rate outlier: {}", x.describe());
    }
    outln!(
        "reports: {}/report.md, report.json, junit.xml, coverage.md, coverage.svg",
        args.out.display()
    );
    if o.interrupted {
        outln!(
            "interrupted: checkpoint {}/state.json written (the cases in flight were abandoned \
             and will run again); rerun the same command to continue",
            args.out.display()
        );
        return Ok(ExitCode::from(crate::interrupt::EXIT_INTERRUPTED));
    }
    if !s.complete {
        outln!("incomplete: rerun the same command to continue");
    }
    Ok(if s.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FINDINGS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command line's names of the mixes are the ones the engine writes in its error
    /// messages ("its --mix is `valid`, not `mixed`").
    #[test]
    fn mix_names_are_the_engines() {
        for m in [Mix::Valid, Mix::NearMiss, Mix::Mixed] {
            let name = clap::ValueEnum::to_possible_value(&m).expect("every mix is listed");
            assert_eq!(name.get_name(), CaseMix::from(m).name());
        }
    }

    #[test]
    fn the_default_minimize_cap_is_the_engines() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let cli = Cli::try_parse_from(["campaign", "--time", "1s"]).expect("parses");
        assert_eq!(cli.args.minimize_cap, tcgen05_engine::minimize::DEFAULT_CAP);
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("5y").is_err());
    }
}
