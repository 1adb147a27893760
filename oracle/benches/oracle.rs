//! Throughput of `check` + `expect` (the goal: ≥ 50,000 programs/s on one core for programs of
//! 4 warps × 32 instructions) and its growth with program size (×1, ×10, ×100 instructions;
//! ×1, ×4, ×16 warps).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// The allocator of the `tcgen05-fuzz` binary (src/main.rs), so the figures are those a
/// campaign gets.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::hint::black_box;
use tcgen05_ir::samples::{alloc, dealloc, fence, ld, relinquish, st, wait};
use tcgen05_ir::*;

/// A well-formed program of `warps` warps with about `per_warp` statements each: warp 0
/// allocates 512 columns and publishes them behind a barrier; every warp then round-trips
/// st / wait::st / ld / wait::ld in its own lane quarter, walking through the columns; a
/// barrier; warp 0 frees.
fn program(warps: u8, per_warp: usize) -> Program {
    let cg = CtaGroup::One;
    let mut code = Vec::new();
    for w in 0..warps {
        let lane = u16::from(w % 4) * 32;
        let mut v = Vec::with_capacity(per_warp + 8);
        if w == 0 {
            v.push(alloc(cg, 0, 512));
        }
        v.push(fence(FenceKind::BeforeThreadSync));
        v.push(Stmt::BarCta);
        v.push(fence(FenceKind::AfterThreadSync));
        let mut k = 0u16;
        while v.len() < per_warp {
            // Warps sharing a quarter use different column bands.
            let col = (u16::from(w / 4) * 128 + (k * 2) % 128) % 512;
            v.push(st(0, lane, col, Num::X2, u32::from(k)));
            v.push(wait(WaitOp::St));
            v.push(ld(0, lane, col, Num::X2));
            v.push(wait(WaitOp::Ld));
            k += 1;
        }
        v.push(fence(FenceKind::BeforeThreadSync));
        v.push(Stmt::BarCta);
        v.push(fence(FenceKind::AfterThreadSync));
        if w == 0 {
            v.push(dealloc(cg, 0, 512));
            v.push(relinquish(cg));
        }
        code.push(v);
    }
    Program {
        launch: samples::launch(warps),
        smem: Smem {
            slots: 1,
            mbarriers: 0,
            regions: vec![],
        },
        warps: code,
        funcs: vec![],
    }
}

/// This thread's CPU time in nanoseconds (`/proc/thread-self/schedstat`, field 1), if readable:
/// on a shared machine wall-clock figures are inflated by the load, CPU time much less.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Runs `f` `n` times and returns (CPU ns per run, wall ns per run).
fn cpu_per_run(n: u32, mut f: impl FnMut()) -> Option<(f64, f64)> {
    f();
    let (c0, t0) = (thread_cpu_ns()?, std::time::Instant::now());
    for _ in 0..n {
        f();
    }
    let (c1, t1) = (thread_cpu_ns()?, t0.elapsed());
    Some((
        (c1 - c0) as f64 / f64::from(n),
        t1.as_nanos() as f64 / f64::from(n),
    ))
}

/// Prints the CPU-time figures next to criterion's wall-clock ones: the throughput row and
/// the size table (time per program, ×1/×10/×100 instructions per warp, 1/4/16 warps).
/// `ORACLE_BENCH_NO_CPU_TABLE=1` skips it (to profile one criterion row).
fn cpu_table(_: &mut Criterion) {
    if std::env::var_os("ORACLE_BENCH_NO_CPU_TABLE").is_some() {
        return;
    }
    let p = program(4, 32);
    if let Some((cpu, wall)) = cpu_per_run(20_000, || {
        black_box(tcgen05_oracle::check(black_box(&p)));
        black_box(tcgen05_oracle::expect(black_box(&p)));
    }) {
        println!(
            "cpu-time check+expect, 4 warps x 32: {:.1} us/program CPU ({:.0} programs/s on one core), {:.1} us wall",
            cpu / 1e3,
            1e9 / cpu,
            wall / 1e3
        );
    }
    // `expect` runs `check` itself (`Expected::violations`): one call gives both results.
    if let Some((cpu, wall)) = cpu_per_run(20_000, || {
        black_box(tcgen05_oracle::expect(black_box(&p)));
    }) {
        println!(
            "cpu-time expect (check included), 4 warps x 32: {:.1} us/program CPU ({:.0} programs/s on one core), {:.1} us wall",
            cpu / 1e3,
            1e9 / cpu,
            wall / 1e3
        );
    }
    println!("cpu-time size table (us per expect, CPU time):");
    println!("| warps \\ instructions per warp | x1 (32) | x10 (320) | x100 (3,200) |");
    println!("|---|---|---|---|");
    for warps in [1u8, 4, 16] {
        let mut row = format!("| {warps} |");
        for scale in [1usize, 10, 100] {
            let p = program(warps, 32 * scale);
            let n = (20_000 / (scale * usize::from(warps))).max(5) as u32;
            match cpu_per_run(n, || {
                black_box(tcgen05_oracle::expect(black_box(&p)));
            }) {
                Some((cpu, _)) => {
                    row.push_str(&format!(" {:.1} ({} stmts) |", cpu / 1e3, p.size()))
                }
                None => row.push_str(" - |"),
            }
        }
        println!("{row}");
    }
}

fn throughput(c: &mut Criterion) {
    let p = program(4, 32);
    assert!(tcgen05_oracle::check(&p).is_empty());
    assert_eq!(
        tcgen05_oracle::expect(&p).run.verdict,
        tcgen05_oracle::RunVerdict::Completes
    );
    let mut g = c.benchmark_group("check+expect");
    g.throughput(Throughput::Elements(1));
    g.bench_function("4 warps x 32 instructions", |b| {
        b.iter(|| {
            let v = tcgen05_oracle::check(black_box(&p));
            let e = tcgen05_oracle::expect(black_box(&p));
            black_box((v, e))
        })
    });
    g.finish();
    // The two halves apart (expect runs check itself).
    let mut g = c.benchmark_group("4 warps x 32 instructions");
    g.throughput(Throughput::Elements(1));
    g.bench_function("check", |b| {
        b.iter(|| black_box(tcgen05_oracle::check(black_box(&p))))
    });
    g.bench_function("expect", |b| {
        b.iter(|| black_box(tcgen05_oracle::expect(black_box(&p))))
    });
    g.finish();
}

fn growth(c: &mut Criterion) {
    let mut g = c.benchmark_group("size");
    g.sample_size(10);
    for warps in [1u8, 4, 16] {
        for scale in [1usize, 10, 100] {
            let p = program(warps, 32 * scale);
            let n = p.size() as u64;
            g.throughput(Throughput::Elements(n));
            g.bench_with_input(
                BenchmarkId::new(format!("{warps} warps"), format!("x{scale} ({n} stmts)")),
                &p,
                |b, p| b.iter(|| black_box(tcgen05_oracle::expect(black_box(p)))),
            );
        }
    }
    g.finish();
}

criterion_group!(benches, cpu_table, throughput, growth);
criterion_main!(benches);
