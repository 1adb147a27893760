//! Throughput of `check` + `expect` (issue 3: ≥ 50,000 programs/s on one core for programs of
//! 4 warps × 32 instructions) and its growth with program size (×1, ×10, ×100 instructions;
//! ×1, ×4, ×16 warps).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
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

criterion_group!(benches, throughput, growth);
criterion_main!(benches);
