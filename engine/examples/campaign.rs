//! A campaign from the command line, on the library API (`tcgen05_drivers::campaign::run`):
//!
//! ```text
//! cargo run --release -p tcgen05-drivers --example campaign -- [--targets sim,sim:adversarial]
//!     [--seconds 600] [--cases N] [--seed S] [--store findings] [--no-minimize]
//! ```
//!
//! Prints per-target verdict counts and each new finding.

use std::time::Duration;
use tcgen05_drivers::campaign::{self, CampaignConfig};
use tcgen05_drivers::store::Store;
use tcgen05_drivers::target;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let names = target::from_env(get("--targets").as_deref());
    let mut cfg = CampaignConfig {
        seed: get("--seed").and_then(|s| s.parse().ok()).unwrap_or(0),
        max_cases: get("--cases").and_then(|s| s.parse().ok()),
        max_time: get("--seconds")
            .and_then(|s| s.parse().ok())
            .map(Duration::from_secs_f64),
        minimize: !args.iter().any(|a| a == "--no-minimize"),
        ..CampaignConfig::default()
    };
    if cfg.max_cases.is_none() && cfg.max_time.is_none() {
        cfg.max_cases = Some(10_000);
    }
    let mut targets = match target::resolve_all(&names) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("campaign: {e}");
            std::process::exit(2);
        }
    };
    let store = get("--store").map(|p| Store::open(p).expect("the store folder can be created"));
    let mut source = campaign::generated(tcgen05_generators::Config::default());
    let report = campaign::run(&cfg, &mut targets, &mut source, store.as_ref(), &mut |f| {
        println!(
            "finding after {:.2} s (case {}): {} — {} -> {} statements",
            f.found_after.as_secs_f64(),
            f.case_index,
            f.signature,
            f.sizes.0,
            f.sizes.1
        );
    });
    println!(
        "{} cases in {:.1} s ({:.0} cases/s)",
        report.cases,
        report.elapsed.as_secs_f64(),
        report.cases as f64 / report.elapsed.as_secs_f64().max(1e-9)
    );
    for t in &report.targets {
        println!(
            "{} ({}): agree {}, skip {}, discrepancies {}",
            t.target,
            t.version,
            t.agree,
            t.skipped(),
            t.discrepant()
        );
        for (k, v) in &t.skip {
            println!("    skip {k}: {v}");
        }
        for (k, v) in &t.discrepancies {
            println!("    discrepancy {k}: {v}");
        }
    }
    if report.targets.iter().any(|t| t.discrepant() > 0) {
        std::process::exit(1);
    }
}
