//! Generation throughput on one core (the goal: >= 100,000 programs/s with the default config).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_generators::{Config, SeedChoices, builder};

fn bench(c: &mut Criterion) {
    let cfg = Config::default();
    let mut g = c.benchmark_group("generate");
    g.throughput(Throughput::Elements(1));
    let mut seed = 0u64;
    g.bench_function("valid program (default config)", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(builder::build(&cfg, &mut SeedChoices::new(seed)))
        })
    });
    // The same with sparse MMAs off (their cp of FillElem::SpMeta metadata is the default
    // config's only addition to the dense stream): the cost of sparse-by-default, same load.
    let dense = Config {
        sparse_pct: 0,
        ..Config::default()
    };
    let mut seed2 = 0u64;
    g.bench_function("valid program (default config, sparse off)", |b| {
        b.iter(|| {
            seed2 = seed2.wrapping_add(1);
            black_box(builder::build(&dense, &mut SeedChoices::new(seed2)))
        })
    });
    let mixed = Stream::new(Config::default(), 1, Mode::Mixed);
    let mut i = 0u64;
    g.bench_function("mixed case (valid, near-miss, litmus)", |b| {
        b.iter(|| {
            i += 1;
            black_box(mixed.case(i))
        })
    });
    let nm = Stream::new(Config::default(), 2, Mode::NearMiss(None));
    let mut j = 0u64;
    g.bench_function("near-miss case (every mutator in turn)", |b| {
        b.iter(|| {
            j += 1;
            black_box(nm.case(j))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
