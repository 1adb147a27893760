//! `check` of real kernels: time to parse, build the control flow and walk every warp
//! of the largest corpus files. The budget: a 250 KB PTX file in at most 200 ms on one
//! core; the corpus's largest file is 352 KB (Triton bf16 GEMM, 8 warps), and its attention
//! kernels are the most expensive per byte (98 blocks, 8 or 12 warps).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tcgen05_oracle::kernel::{Options, check_source};

fn bench(c: &mut Criterion) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/realworld");
    let mut g = c.benchmark_group("kernel_check");
    for f in [
        "triton_matmul_bf16_ptr_big.ptx",
        "triton_matmul_bf16_ptr.ptx",
        "triton_attn_fwd_ws.ptx",
        "triton_attn_fwd_causal.ptx",
    ] {
        let src = std::fs::read_to_string(dir.join(f)).expect("corpus file");
        g.throughput(Throughput::Bytes(src.len() as u64));
        g.bench_function(f, |b| {
            b.iter(|| check_source(black_box(&src), f, &Options::default()).expect("parses"))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    // Few samples: each iteration takes tens of milliseconds and the machine is shared.
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
