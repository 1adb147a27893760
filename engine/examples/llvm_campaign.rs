//! A campaign on one LLVM target, with reproducers in LLVM's terms
//! (`tcgen05_engine::llvm_campaign`):
//!
//! ```text
//! cargo run --release -p tcgen05-engine --example llvm_campaign -- --target llvm@22:O0
//!     [--seconds 600] [--cases N] [--seed S] [--out out/llvm-O0] [--near-miss]
//!     [--minimize-seconds 60]
//! ```
//!
//! Runs the mixed case stream (valid programs, near-misses, litmus members), or with
//! `--near-miss` the near-misses of every mutator in turn. Prints the verdict counts per intent, the near-miss verdicts per rule, the forms without
//! intrinsic, what the behaviour check ran, the time split (harness against opt/llc) and each
//! finding with its folder and its program size before and after minimization (each new
//! finding is minimized for `--minimize-seconds`, default 60; 0 keeps the generated case);
//! writes `summary.json` into `--out`. Exits 1 when there are findings, 2 on a bad command line.

use std::time::Duration;
use tcgen05_engine::llvm_campaign::{self as campaign, Config};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    const VALUED: [&str; 6] = [
        "--target",
        "--seconds",
        "--cases",
        "--seed",
        "--out",
        "--minimize-seconds",
    ];
    let usage = "usage: llvm_campaign --target llvm@22[:O0]|mlir@22 [--seconds S] [--cases N] \
                 [--seed S] [--out DIR] [--near-miss] [--minimize-seconds S]";
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--help" || a == "-h" {
            println!("{usage}");
            return;
        }
        if VALUED.contains(&a) {
            let ok = args.get(i + 1).is_some_and(|v| {
                a == "--target" || a == "--out" || v.parse::<f64>().is_ok_and(|x| x >= 0.0)
            });
            if !ok {
                eprintln!(
                    "llvm_campaign: {a} needs a value (a non-negative number for all but --target and --out)\n{usage}"
                );
                std::process::exit(2);
            }
            i += 2;
        } else if a == "--near-miss" {
            i += 1;
        } else {
            eprintln!("llvm_campaign: unknown argument `{a}`\n{usage}");
            std::process::exit(2);
        }
    }
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let name = get("--target").unwrap_or_else(|| "llvm".into());
    let (install, options) = match tcgen05_drivers::llvm::target::configure(&name) {
        Some(Ok(x)) => x,
        Some(Err(e)) => {
            eprintln!("llvm_campaign: `{name}` is not available here: {e}");
            std::process::exit(2);
        }
        None => {
            eprintln!("llvm_campaign: `{name}` is not an llvm@<major> or mlir@<major> target");
            std::process::exit(2);
        }
    };
    let out = get("--out").map(std::path::PathBuf::from);
    let mut cfg = Config {
        seed: get("--seed").and_then(|s| s.parse().ok()).unwrap_or(0),
        max_cases: get("--cases").and_then(|s| s.parse().ok()),
        max_time: get("--seconds")
            .and_then(|s| s.parse().ok())
            .map(Duration::from_secs_f64),
        out: out.as_ref().map(|o| o.join("findings")),
        mode: if args.iter().any(|a| a == "--near-miss") {
            tcgen05_generators::cases::Mode::NearMiss(None)
        } else {
            tcgen05_generators::cases::Mode::Mixed
        },
        minimize: Duration::from_secs_f64(
            get("--minimize-seconds")
                .and_then(|s| s.parse().ok())
                .unwrap_or(60.0),
        ),
    };
    if cfg.max_cases.is_none() && cfg.max_time.is_none() {
        cfg.max_cases = Some(100);
    }
    let s = campaign::run(&install, &options, &cfg);
    println!(
        "{name} (LLVM {}): {} cases in {:.1} s",
        install.version,
        s.cases,
        s.elapsed.as_secs_f64()
    );
    for (intent, counts) in &s.verdicts {
        println!("  {intent}: {counts:?}");
    }
    println!("near-miss verdicts per rule:");
    for (rule, counts) in &s.near_miss {
        let c = s.consequence.get(rule).map_or("", String::as_str);
        println!("  {rule} (spec: {c}): {counts:?}");
    }
    println!("forms without intrinsic:");
    for (form, n) in &s.not_lowered {
        println!("  {n:6} {form}");
    }
    println!("not validated (the interpreter could not follow the PTX):");
    for (why, n) in &s.not_validated {
        println!("  {n:6} {why}");
    }
    println!("behaviour of validated cases (simulator against the oracle):");
    for (what, n) in &s.behaviour {
        println!("  {n:6} {what}");
    }
    let per = |d: Duration| d.as_secs_f64() * 1000.0 / s.cases.max(1) as f64;
    println!(
        "time per case: harness {:.2} ms, opt+llc{} {:.2} ms ({:.1}%), ptxas {:.2} ms",
        per(s.harness_time),
        if name.starts_with("mlir") {
            "+mlir-translate"
        } else {
            ""
        },
        per(s.tool_time),
        100.0 * s.harness_time.as_secs_f64() / s.tool_time.as_secs_f64().max(1e-9),
        per(s.ptxas_time)
    );
    println!(
        "behaviour check {:.2} ms per case; minimizing findings {:.1} s",
        per(s.behaviour_time),
        s.minimize_time.as_secs_f64()
    );
    for f in s.findings.values() {
        println!(
            "finding ({} case(s), first {}, size {} -> {}): {}\n  {}\n  {}",
            f.count,
            f.first_case,
            f.sizes.0,
            f.sizes.1,
            f.signature,
            f.detail.lines().next().unwrap_or(""),
            f.folder
                .as_ref()
                .map_or("(not written)".into(), |p| p.display().to_string())
        );
    }
    if let Some(o) = &out {
        let _ = std::fs::create_dir_all(o);
        if let Ok(j) = serde_json::to_string_pretty(&s) {
            let _ = std::fs::write(o.join("summary.json"), j);
        }
    }
    std::process::exit(if s.findings.is_empty() { 0 } else { 1 });
}
