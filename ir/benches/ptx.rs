//! Throughput of the PTX parser on real compiler output (bytes/s, one core) and of the printer
//! on small programs (programs/s).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tcgen05_ir::arb::{Bounds, program};
use tcgen05_ir::ptx::{emit_into, lift, parse_module};

fn corpus() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/realworld");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus/realworld")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(&p).expect("utf-8"),
            )
        })
        .collect()
}

fn parse(c: &mut Criterion) {
    let files = corpus();
    let total: usize = files.iter().map(|(_, s)| s.len()).sum();
    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Bytes(total as u64));
    g.bench_function("realworld_corpus", |b| {
        b.iter(|| {
            for (name, src) in &files {
                black_box(parse_module(black_box(src), name).expect("parses"));
            }
        })
    });
    let (name, big) = files
        .iter()
        .max_by_key(|(_, s)| s.len())
        .expect("non-empty corpus");
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.bench_function("largest_file", |b| {
        b.iter(|| black_box(parse_module(black_box(big), name).expect("parses")))
    });
    g.finish();
}

/// 1,000 small programs (up to 2 warps of up to 8 statements, nesting depth 1).
fn small_programs() -> Vec<tcgen05_ir::Program> {
    let mut s = 7u64;
    (0..1000)
        .map(|_| {
            let bytes: Vec<u8> = (0..512)
                .map(|_| {
                    s = s
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    (s >> 56) as u8
                })
                .collect();
            program(
                &mut arbitrary::Unstructured::new(&bytes),
                Bounds {
                    warps: 2,
                    funcs: 1,
                    stmts: 8,
                    depth: 1,
                },
            )
            .expect("enough bytes")
        })
        .collect()
}

fn print(c: &mut Criterion) {
    let progs = small_programs();
    let mut g = c.benchmark_group("print");
    g.throughput(Throughput::Elements(progs.len() as u64));
    let mut out = String::new();
    g.bench_function("small_programs", |b| {
        b.iter(|| {
            for p in &progs {
                emit_into(black_box(p), &mut out);
                black_box(&out);
            }
        })
    });
    let sample = tcgen05_ir::samples::single_warp_roundtrip();
    g.throughput(Throughput::Elements(1));
    g.bench_function("single_warp_sample", |b| {
        b.iter(|| emit_into(black_box(&sample), &mut out))
    });
    let texts: Vec<String> = progs.iter().map(tcgen05_ir::ptx::emit).collect();
    g.throughput(Throughput::Elements(texts.len() as u64));
    g.bench_function("lift_small_programs", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(lift(t).expect("lifts"));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, parse, print);
criterion_main!(benches);
