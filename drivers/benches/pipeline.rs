//! Throughput of the differential pipeline on one core: generate → oracle → sim → compare,
//! with the generator's default configuration, and each stage alone.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tcgen05_drivers::diff;
use tcgen05_drivers::sim::faults::Faults;
use tcgen05_drivers::sim::{Sched, SimConfig, simulate};
use tcgen05_generators::{Config, case_seed, valid_case};

const BATCH: u64 = 256;

fn pipeline(c: &mut Criterion) {
    let cfg = Config::default();
    let sim = SimConfig {
        sched: Sched::Random(None),
        faults: Faults::NONE,
        wording: Default::default(),
    };
    let cases: Vec<_> = (0..BATCH)
        .map(|i| valid_case(&cfg, case_seed(1, i)))
        .collect();
    let expected: Vec<_> = cases
        .iter()
        .map(|k| tcgen05_oracle::expect(&k.program))
        .collect();
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Elements(BATCH));
    g.sample_size(20);
    g.bench_function("generate+oracle+sim+compare", |b| {
        let mut n = 0u64;
        b.iter(|| {
            for _ in 0..BATCH {
                n += 1;
                let case = valid_case(&cfg, case_seed(7, n));
                let e = tcgen05_oracle::expect(&case.program);
                let o = simulate(&case.program, sim, n);
                black_box(diff::compare(&case.program, &e, &o));
            }
        })
    });
    g.bench_function("generate", |b| {
        let mut n = 0u64;
        b.iter(|| {
            for _ in 0..BATCH {
                n += 1;
                black_box(valid_case(&cfg, case_seed(7, n)));
            }
        })
    });
    g.bench_function("oracle", |b| {
        b.iter(|| {
            cases
                .iter()
                .for_each(|k| drop(black_box(tcgen05_oracle::expect(&k.program))))
        })
    });
    g.bench_function("sim", |b| {
        b.iter(|| {
            cases
                .iter()
                .for_each(|k| drop(black_box(simulate(&k.program, sim, 3))))
        })
    });
    g.bench_function("compare", |b| {
        let outs: Vec<_> = cases.iter().map(|k| simulate(&k.program, sim, 3)).collect();
        b.iter(|| {
            for ((k, e), o) in cases.iter().zip(&expected).zip(&outs) {
                black_box(diff::compare(&k.program, e, o));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
