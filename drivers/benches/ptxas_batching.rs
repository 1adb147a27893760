//! Batching throughput (issue 6, item 3): cases/s with one ptxas process per case against one
//! process per batch of 16, 64 and 128 cases, for two installed versions and two case mixes,
//! side by side in one run. Criterion measures each mode; the closing table gives the mean cases/s of the same
//! measurements and the speed-up over one process per case.
//!
//! `cargo bench -p tcgen05-drivers --bench ptxas_batching` (set `PTXAS_BENCH_VERSIONS=12.8,13.5`
//! to choose versions; default: the oldest and the newest installed).
//!
//! Two mixes (fixed seeds): `valid`, generated valid programs (`tcgen05_generators`, default
//! config: sm_100a, a few `.version`s), and `campaign`, the campaign's mix
//! (`campaign::default_source`: a fifth unchanged, the rest with one or two qualifier mutations,
//! a dozen `.version`/`.target` headers), where batches also pay for splitting when ptxas
//! rejects a case.

use criterion::{Criterion, Throughput};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tcgen05_drivers::ptxas::{self, CompileOptions, PtxasInstall, campaign, mutate::Rng};

/// Cases compiled per iteration. The per-case mode uses the first 32 (one process each takes
/// 30 to 70 ms); batched modes use all 128, so a batch of 128 is one process per header when
/// ptxas accepts. Sizes keep one run near ten minutes on a loaded two-core machine.
const CASES: usize = 128;
const PER_CASE: usize = 32;
const SIZES: [usize; 3] = [16, 64, 128];

static RESULTS: Mutex<Vec<(String, String, usize, Duration)>> = Mutex::new(Vec::new());

fn record(version: &str, mode: &str, cases: usize, t: Duration) {
    if let Ok(mut r) = RESULTS.lock() {
        r.push((version.to_string(), mode.to_string(), cases, t));
    }
}

fn chosen() -> Vec<PtxasInstall> {
    let all = ptxas::installed();
    match std::env::var("PTXAS_BENCH_VERSIONS") {
        Ok(list) => all
            .into_iter()
            .filter(|i| list.split(',').any(|v| v.trim() == i.version.label()))
            .collect(),
        Err(_) => {
            let mut v = Vec::new();
            if let Some(f) = all.first() {
                v.push(f.clone());
            }
            if let Some(l) = all.last().filter(|_| all.len() > 1) {
                v.push(l.clone());
            }
            v
        }
    }
}

fn main() {
    let installs = chosen();
    if installs.is_empty() {
        eprintln!("no ptxas installed: run scripts/setup-ptxas");
        return;
    }
    let mut rng = Rng::new(0xBA7C4);
    let campaign_mix: Vec<String> = (0..CASES)
        .map(|_| tcgen05_ir::ptx::emit(&campaign::default_source(&mut rng).program))
        .collect();
    let cfg = tcgen05_generators::Config::default();
    let valid_mix: Vec<String> = (0..CASES as u64)
        .map(|s| tcgen05_ir::ptx::emit(&tcgen05_generators::valid_program(&cfg, 0x5EED + s)))
        .collect();
    let opts = CompileOptions::default();
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    for i in &installs {
        for (mix, modules) in [("valid", &valid_mix), ("campaign", &campaign_mix)] {
            let name = format!("{}/{mix}", i.name());
            let mut g = c.benchmark_group(name.clone());
            g.throughput(Throughput::Elements(PER_CASE as u64));
            g.bench_function("per-case", |b| {
                b.iter_custom(|iters| {
                    let t = Instant::now();
                    for _ in 0..iters {
                        for m in &modules[..PER_CASE] {
                            let _ = ptxas::compile_one(i, m, &opts).expect("ptxas runs");
                        }
                    }
                    let e = t.elapsed();
                    record(&name, "per-case", PER_CASE * iters as usize, e);
                    e
                })
            });
            g.throughput(Throughput::Elements(CASES as u64));
            for size in SIZES {
                let mode = format!("batch-{size}");
                g.bench_function(mode.clone(), |b| {
                    b.iter_custom(|iters| {
                        let t = Instant::now();
                        for _ in 0..iters {
                            let _ = ptxas::compile_batched(i, modules, size, &opts)
                                .expect("ptxas runs");
                        }
                        let e = t.elapsed();
                        record(&name, &mode, CASES * iters as usize, e);
                        e
                    })
                });
            }
            g.finish();
        }
    }
    c.final_summary();
    // The table: mean cases/s over everything criterion timed (warm-up included).
    let results = RESULTS.lock().map(|r| r.clone()).unwrap_or_default();
    let rate = |v: &str, m: &str| {
        let (n, t) = results
            .iter()
            .filter(|(rv, rm, _, _)| rv == v && rm == m)
            .fold((0usize, Duration::ZERO), |(n, t), (_, _, c, d)| {
                (n + c, t + *d)
            });
        if t.is_zero() {
            0.0
        } else {
            n as f64 / t.as_secs_f64()
        }
    };
    println!(
        "\n| ptxas / mix | per case | batch 16 | batch 64 | batch 128 | speed-up 16 | speed-up 64 | speed-up 128 |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for i in &installs {
        for mix in ["valid", "campaign"] {
            let v = format!("{}/{mix}", i.name());
            let one = rate(&v, "per-case");
            let r: Vec<f64> = SIZES
                .iter()
                .map(|s| rate(&v, &format!("batch-{s}")))
                .collect();
            println!(
                "| {v} | {one:.1} | {:.1} | {:.1} | {:.1} | {:.1}x | {:.1}x | {:.1}x |",
                r[0],
                r[1],
                r[2],
                r[0] / one.max(1e-9),
                r[1] / one.max(1e-9),
                r[2] / one.max(1e-9)
            );
        }
    }
}
