//! Minimizing a discrepancy in a 500-instruction case (the goal: at most 2 s).
//!
//! The case is built deterministically: the first generated valid case (seed 1) that shows a
//! discrepancy on `sim:adversarial+wait-ld-early` (an injected fault), padded to 500
//! instructions ([`minimize::instructions`]) with statements that keep it valid and keep the
//! discrepancy: spins, `fence.proxy.async` and tcgen05 fences, spread over every warp at
//! positions drawn from a fixed seed.

use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;
use tcgen05_drivers::target::{self, Target};
use tcgen05_engine::{judge, minimize};
use tcgen05_generators::{Config, case_seed, valid_case};
use tcgen05_ir::{Case, FenceKind, Op, Stmt};
use tcgen05_oracle::Options;

const TARGET: &str = "sim:adversarial+wait-ld-early";
const SIZE: usize = 500;

/// The padded case and the target.
fn setup() -> (Case, Box<dyn Target>) {
    let mut t = target::resolve(TARGET).expect("simulator targets always build");
    let opts = Options::default();
    let cfg = Config::default();
    let case = (0..10_000)
        .map(|i| valid_case(&cfg, case_seed(1, i)))
        .find(|c| judge::signature_of(c, &opts, t.as_mut()).is_some())
        .expect("the fault shows within 10,000 generated cases");
    let sig = judge::signature_of(&case, &opts, t.as_mut());
    let mut padded = case;
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut k = 0u32;
    while minimize::instructions(&padded.program) < SIZE {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let w = (x % padded.program.warps.len() as u64) as usize;
        let code = &mut padded.program.warps[w];
        // Before the last statement, so the padding runs before the warp ends.
        let at = (x >> 16) as usize % code.len().max(1);
        let s = match k % 4 {
            0 => Stmt::Spin(1 + k % 7),
            1 => Stmt::FenceProxyAsync,
            2 => Stmt::Tc(Op::Fence {
                kind: FenceKind::BeforeThreadSync,
            }),
            _ => Stmt::Tc(Op::Fence {
                kind: FenceKind::AfterThreadSync,
            }),
        };
        code.insert(at, s);
        k += 1;
    }
    assert_eq!(
        judge::signature_of(&padded, &opts, t.as_mut()),
        sig,
        "the padding keeps the discrepancy"
    );
    (padded, t)
}

fn bench(c: &mut Criterion) {
    let (case, mut t) = setup();
    let opts = Options::default();
    let mut g = c.benchmark_group("minimize");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("500-instruction case, wait-ld-early", |b| {
        b.iter(|| {
            let m = minimize::minimize(
                &case,
                t.as_mut(),
                &opts,
                Duration::from_secs(60),
                &mut |_| {},
            )
            .expect("the case is interesting");
            assert!(minimize::instructions(&m.case.program) <= 12);
            m
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
