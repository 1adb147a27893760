//! A campaign from the command line, on the library API (`tcgen05_engine::campaign::run`):
//!
//! ```text
//! cargo run --release -p tcgen05-engine --example campaign -- [--targets sim,sim:adversarial]
//!     [--seconds 600] [--cases N] [--seed S] [--jobs J] [--out DIR] [--no-minimize]
//! ```
//!
//! Prints per-target verdict counts and each new finding; the findings and the reports go to
//! `--out` (default: a temporary folder, removed at the end).

use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tcgen05_engine::campaign::{self, CaseMix, Config, Identity, Shard};
use tcgen05_engine::progress::Silent;
use tcgen05_oracle::Edition;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let mut max_cases: Option<u64> = get("--cases").and_then(|s| s.parse().ok());
    let max_time = get("--seconds")
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs_f64);
    if max_cases.is_none() && max_time.is_none() {
        max_cases = Some(10_000);
    }
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let out = get("--out").map_or_else(|| tmp.path().to_path_buf(), Into::into);
    let cfg = Config {
        identity: Identity {
            seed: get("--seed").and_then(|s| s.parse().ok()).unwrap_or(0),
            targets: tcgen05_drivers::target::from_env(get("--targets").as_deref()),
            edition: Edition::default(),
            shard: Shard { index: 0, count: 1 },
            mix: CaseMix::Valid,
            generator: tcgen05_generators::ORIGIN.to_string(),
        },
        max_cases,
        max_time,
        jobs: get("--jobs").and_then(|s| s.parse().ok()).unwrap_or(1),
        minimize: !args.iter().any(|a| a == "--no-minimize"),
        stop_at_first: false,
        minimize_budget: Duration::from_secs(10).into(),
        out,
        checkpoint_every: Duration::from_secs(1),
        reports_every: Duration::from_secs(30),
        invocation: String::new(),
    };
    let o = match campaign::run(&cfg, &AtomicBool::new(false), &mut Silent) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("campaign: {e}");
            std::process::exit(if e.is_bad_input() { 2 } else { 3 });
        }
    };
    for f in &o.new_findings {
        println!(
            "finding after {:.2} s (case {}): {} — {} -> {} statements",
            f.found_after.as_secs_f64(),
            f.case_index,
            f.signature,
            f.original.program.size(),
            f.stored.program.size()
        );
    }
    let s = &o.summary;
    println!(
        "{} cases in {:.1} s ({:.0} cases/s)",
        o.cases_this_run,
        o.wall.as_secs_f64(),
        o.cases_this_run as f64 / o.wall.as_secs_f64().max(1e-9)
    );
    for t in &s.targets {
        println!(
            "{} ({}): agree {}, skip {}, discrepancies {}",
            t.target,
            t.version,
            t.agree,
            t.skip.values().sum::<u64>(),
            t.discrepancies.values().sum::<u64>()
        );
    }
    if s.targets.iter().any(|t| !t.discrepancies.is_empty()) {
        std::process::exit(1);
    }
}
