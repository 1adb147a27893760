//! Where a minimization's time goes: the first valid generated case of a seed that shows an
//! injected simulator fault on `sim+<fault>` or `sim:adversarial+<fault>` (as in
//! `engine/tests/minimize.rs`), minimized with the campaign's budget, then the minimizer's
//! [`tcgen05_engine::minimize::Profile`]: per pass the candidates judged, rejected by the rule
//! check, kept, and the time, and the time in the oracle and in the target's runs.
//!
//! ```text
//! cargo run --profile test -p tcgen05-engine --example minimize_profile -- mma-ignores-enable-d
//! ```
//!
//! Options: `--seconds S` (budget, default 30), `--seed N` (default 1), `--program` (print the
//! minimized statements).

use std::time::{Duration, Instant};
use tcgen05_drivers::diff::{self, Verdict};
use tcgen05_drivers::sim::faults::Fault;
use tcgen05_drivers::target;
use tcgen05_engine::minimize;
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
    let Some((i, case, mut t)) = found else {
        eprintln!("minimize_profile: no discrepancy in 2,000 cases of seed {seed}");
        std::process::exit(1);
    };
    println!(
        "case {i} of seed {seed} on `{}`: {} instructions",
        t.name(),
        minimize::instructions(&case.program)
    );
    let start = Instant::now();
    let m = minimize::minimize(
        &case,
        t.as_mut(),
        &opts,
        Duration::from_secs_f64(seconds),
        &mut |_| {},
    )
    .expect("the case shows the fault");
    println!(
        "minimized to {} instructions in {:.2} s ({}): {} candidates, {} rejected by the rule check; oracle {:.2} s, runs and compare {:.2} s",
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
