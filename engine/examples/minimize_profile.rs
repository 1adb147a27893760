//! Where a minimization's time goes: the first valid generated case of a seed that shows an
//! injected simulator fault on `sim+<fault>` or `sim:adversarial+<fault>` (as in
//! `engine/tests/minimize.rs`), minimized under `--seconds` (and `--cap`), then the minimizer's
//! [`tcgen05_engine::minimize::Profile`]: per pass the candidates judged, dropped without
//! running, kept, and the time, and the time in the oracle and in the target's runs.
//!
//! ```text
//! cargo run --profile test -p tcgen05-engine --example minimize_profile -- mma-ignores-enable-d
//! ```
//!
//! Options: `--seconds S` (budget, default 30), `--seed N` (default 1), `--program` (print the
//! minimized statements), `--run-ms M` (sleep M ms in every run of the target: a slow target
//! such as a GPU, whose every candidate is a compile and its runs, modelled), `--cap C` (a
//! budget scaled to the target's cost, [`tcgen05_engine::minimize::Budget::scaled`], of
//! `--seconds` under a cap of C seconds, as a campaign's; without it the budget is fixed).
//!
//! A finding on a target as slow as `cuda-emu` (about 430 ms a candidate, docs/blackwell.md),
//! under a fixed 10 s and under a campaign's scaled budget (a fault whose first case shows on
//! `sim:adversarial`, which runs a candidate once, as `cuda-emu` does; on `sim` a candidate
//! that loses the discrepancy runs under 7 more seeds):
//!
//! ```text
//! minimize_profile wait-st-early --seed 3 --run-ms 430 --seconds 10
//! minimize_profile wait-st-early --seed 3 --run-ms 430 --seconds 10 --cap 300
//! ```

use std::time::{Duration, Instant};
use tcgen05_drivers::diff::{self, Verdict, WaitBound};
use tcgen05_drivers::outcome::Outcome;
use tcgen05_drivers::sim::faults::Fault;
use tcgen05_drivers::target::{self, Target, TargetKind};
use tcgen05_engine::minimize::{self, Budget};
use tcgen05_ir::Case;

/// A target that sleeps before every run of the one it wraps.
struct Slow(Box<dyn Target>, Duration);

impl Target for Slow {
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
    fn wait_bound(&self) -> WaitBound {
        self.0.wait_bound()
    }
    fn run(&mut self, case: &Case) -> Outcome {
        std::thread::sleep(self.1);
        self.0.run(case)
    }
}
use tcgen05_generators::cases::{Mode, Stream};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let Some(fault) = args.first().filter(|a| !a.starts_with("--")) else {
        eprintln!("usage: minimize_profile FAULT [--seconds S] [--seed N] [--program]");
        std::process::exit(2);
    };
    if !Fault::ALL.iter().any(|f| f.name() == fault) {
        eprintln!("minimize_profile: no fault named `{fault}`");
        std::process::exit(2);
    }
    let seconds: f64 = get("--seconds")
        .and_then(|s| s.parse().ok())
        .unwrap_or(30.0);
    let seed: u64 = get("--seed").and_then(|s| s.parse().ok()).unwrap_or(1);
    let opts = tcgen05_oracle::Options::default();
    let stream = Stream::new(tcgen05_generators::Config::default(), seed, Mode::Valid);
    let names = [format!("sim+{fault}"), format!("sim:adversarial+{fault}")];
    let found = (0..2_000).find_map(|i| {
        let case = stream.case_at(i);
        let e = tcgen05_oracle::expect_with(&case.program, &opts);
        names.iter().find_map(|n| {
            let mut t = target::resolve(n).expect("simulator targets build");
            match diff::compare(&case.program, &e, &t.run(&case)) {
                Verdict::Discrepancy(_) => Some((i, case.clone(), t)),
                _ => None,
            }
        })
    });
    let Some((i, case, t)) = found else {
        eprintln!("minimize_profile: no discrepancy in 2,000 cases of seed {seed}");
        std::process::exit(1);
    };
    println!(
        "case {i} of seed {seed} on `{}`: {} instructions",
        t.name(),
        minimize::instructions(&case.program)
    );
    let time = Duration::from_secs_f64(seconds);
    let budget = match get("--cap").and_then(|s| s.parse::<f64>().ok()) {
        Some(cap) => Budget::scaled(time, Duration::from_secs_f64(cap)),
        None => Budget::fixed(time),
    };
    let run_ms: u64 = get("--run-ms").and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut t = Slow(t, Duration::from_millis(run_ms));
    let start = Instant::now();
    let m = minimize::minimize(&case, &mut t, &opts, budget, &mut |_| {})
        .expect("the case shows the fault");
    println!(
        "minimized to {} instructions in {:.2} s ({}): {} candidates, {} dropped without running; oracle {:.2} s, runs and compare {:.2} s",
        minimize::instructions(&m.case.program),
        start.elapsed().as_secs_f64(),
        if m.timed_out {
            "budget spent"
        } else {
            "fixed point"
        },
        m.tries,
        m.rejected,
        m.profile.expect.as_secs_f64(),
        m.profile.judge.as_secs_f64()
    );
    println!("signature: {}", m.signature);
    println!("| pass | candidates | rejected | kept | time |");
    println!("| --- | --- | --- | --- | --- |");
    for (name, s) in &m.profile.passes {
        println!(
            "| {name} | {} | {} | {} | {:.3} s |",
            s.tries,
            s.rejected,
            s.kept,
            s.time.as_secs_f64()
        );
    }
    if args.iter().any(|a| a == "--program") {
        for (k, w) in m.case.program.warps.iter().enumerate() {
            println!("warp {k}:");
            for s in w {
                println!("  {s:?}");
            }
        }
    }
}
