//! Batching throughput: cases/s with one ptxas process per case against one
//! process per batch, side by side in one run, on the same cases with the same flags.
//!
//! `cargo bench -p tcgen05-drivers --bench ptxas_batching` (set `PTXAS_BENCH_VERSIONS=12.8,13.5`
//! to choose versions; default: the oldest and the newest installed).
//!
//! Modes, for each version and case mix:
//! - `per-case -O3`: one process per case at ptxas's default level (the unbatched baseline);
//! - `per-case -O0`: one process per case at the verdict level (`CompileOptions::verdict`,
//!   what the campaign and the `ptxas@` targets use; `tests/ptxas_compile.rs` checks that it
//!   gives the default level's verdicts);
//! - `batch-16 -O0`, `batch-64 -O0`: `compile_batched` with that many cases per process.
//!
//! The speed-up that counts is batched over `per-case -O0`: same cases, same flags.
//!
//! Mixes (fixed seeds):
//! - `valid`: generated valid programs (`tcgen05_generators`, default config on sm_100a) whose
//!   `.version` every installed ptxas knows (≤ 8.7), so every version compiles every case;
//! - `small`: valid programs of one warp and one flow, the size the minimizer judges;
//! - `campaign`: the campaign's mix (`tcgen05_generators::field_mutate::mutated_case`: a fifth unchanged, the rest
//!   with one or two mutations, a dozen headers), where batches also pay for splitting when
//!   ptxas rejects a case.

use criterion::{Criterion, Throughput};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tcgen05_drivers::ptxas::{self, CompileOptions, PtxasInstall};
use tcgen05_generators::field_mutate::{Rng, mutated_case};
use tcgen05_ir::{PtxVersion, Target};

/// Cases compiled per iteration by the batched modes; the per-case modes use the first
/// [`PER_CASE`]. Sizes keep one run near ten minutes on a loaded two-core machine.
const CASES: usize = 64;
const PER_CASE: usize = 16;
const SIZES: [usize; 2] = [16, 64];

type Row = (String, String, usize, Duration);
static RESULTS: Mutex<Vec<Row>> = Mutex::new(Vec::new());

fn record(group: &str, mode: &str, cases: usize, t: Duration) {
    if let Ok(mut r) = RESULTS.lock() {
        r.push((group.to_string(), mode.to_string(), cases, t));
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

/// `n` valid programs of `cfg` on sm_100a at `.version` ≤ 8.7.
fn valid(cfg: &tcgen05_generators::Config, n: usize, seed: u64) -> Vec<String> {
    (seed..)
        .map(|s| tcgen05_generators::valid_program(cfg, s))
        .filter(|p| p.launch.ptx_version <= PtxVersion::new(8, 7))
        .take(n)
        .map(|p| tcgen05_ir::ptx::emit(&p))
        .collect()
}

fn main() {
    let installs = chosen();
    if installs.is_empty() {
        eprintln!("no ptxas installed: run scripts/setup-ptxas");
        return;
    }
    let sm100 = tcgen05_generators::Config {
        targets: vec![Target::Sm100a],
        ..Default::default()
    };
    let small_cfg = tcgen05_generators::Config {
        min_warps: 1,
        max_warps: 1,
        max_flows_per_warp: 1,
        loop_pct: 0,
        call_pct: 0,
        spin_pct: 0,
        ..sm100.clone()
    };
    let mut rng = Rng::new(0xBA7C4);
    let mixes: Vec<(&str, Vec<String>)> = vec![
        ("valid", valid(&sm100, CASES, 0x5EED)),
        ("small", valid(&small_cfg, CASES, 0x5EED)),
        (
            "campaign",
            (0..CASES)
                .map(|_| tcgen05_ir::ptx::emit(&mutated_case(&mut rng).program))
                .collect(),
        ),
    ];
    let lines = |m: &[String]| m.iter().map(|t| t.lines().count()).sum::<usize>() / m.len();
    for (mix, m) in &mixes {
        eprintln!(
            "mix {mix}: {} cases, {} PTX lines each on average",
            m.len(),
            lines(m)
        );
    }
    let o3 = CompileOptions::default();
    let o0 = CompileOptions::verdict();
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    for i in &installs {
        for (mix, modules) in &mixes {
            let name = format!("{}/{mix}", i.name());
            let mut g = c.benchmark_group(name.clone());
            g.throughput(Throughput::Elements(PER_CASE as u64));
            for (mode, opts) in [("per-case -O3", &o3), ("per-case -O0", &o0)] {
                g.bench_function(mode, |b| {
                    b.iter_custom(|iters| {
                        let t = Instant::now();
                        for _ in 0..iters {
                            for m in &modules[..PER_CASE] {
                                let _ = ptxas::compile_one(i, m, opts).expect("ptxas runs");
                            }
                        }
                        let e = t.elapsed();
                        record(&name, mode, PER_CASE * iters as usize, e);
                        e
                    })
                });
            }
            g.throughput(Throughput::Elements(CASES as u64));
            for size in SIZES {
                let mode = format!("batch-{size} -O0");
                g.bench_function(mode.clone(), |b| {
                    b.iter_custom(|iters| {
                        let t = Instant::now();
                        for _ in 0..iters {
                            let _ =
                                ptxas::compile_batched(i, modules, size, &o0).expect("ptxas runs");
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
        "\n| ptxas / mix | per case -O3 | per case -O0 | batch 16 -O0 | batch 64 -O0 | batched / per case (-O0) | batch 64 -O0 / per case -O3 |"
    );
    println!("|---|---|---|---|---|---|---|");
    for i in &installs {
        for (mix, _) in &mixes {
            let v = format!("{}/{mix}", i.name());
            let slow = rate(&v, "per-case -O3");
            let one = rate(&v, "per-case -O0");
            let b16 = rate(&v, "batch-16 -O0");
            let b64 = rate(&v, "batch-64 -O0");
            println!(
                "| {v} | {slow:.1} | {one:.1} | {b16:.1} | {b64:.1} | {:.1}x (16), {:.1}x (64) | {:.1}x |",
                b16 / one.max(1e-9),
                b64 / one.max(1e-9),
                b64 / slow.max(1e-9)
            );
        }
    }
}
