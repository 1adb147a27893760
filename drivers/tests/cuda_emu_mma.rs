//! GPU tests of the emulated MMA of `cuda-emu` (`cuda::emu`, reference §3.7): the D it computes
//! against the oracle's for every computed form, and the time of one emulated multiply-add.
//! They need a CUDA GPU and show as ignored elsewhere: run them with `scripts/gpu-tests`
//! (which passes `--ignored`). Logs go to `TCGEN05_GPU_LOG` (default `target/gpu-tests`).

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;
use tcgen05_drivers::cuda::{self, Config, CudaTarget, Flavour};
use tcgen05_drivers::diff::{self, Verdict};
use tcgen05_drivers::outcome::Outcome;
use tcgen05_drivers::target::Target;
use tcgen05_ir::*;
use tcgen05_oracle::probes;

#[path = "common/emu_mma.rs"]
mod emu_mma;

fn log(name: &str, text: &str) {
    let d = std::env::var("TCGEN05_GPU_LOG")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/gpu-tests"));
    let _ = std::fs::create_dir_all(&d);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(d.join(name))
        .expect("log file");
    let _ = writeln!(f, "{text}");
    eprintln!("[{name}] {text}");
}

/// The `cuda-emu` target with the environment's settings, `runs` runs of a case, each its own
/// launch when `alone`.
fn emu(runs: u32, alone: bool) -> CudaTarget {
    let mut cfg = Config::from_env(0);
    cfg.timeout = Duration::from_secs(20);
    cfg.runs = runs;
    if alone {
        cfg.batch = 1;
    }
    CudaTarget::new("cuda-emu", Flavour::Emu, cfg)
        .unwrap_or_else(|e| panic!("cuda-emu unavailable: {e}"))
}

/// The verdict of `o` against the oracle (default edition), as the campaign judges a
/// `cuda-emu` outcome (words of MMA results the emulation does not compute left out; the
/// cases here have none).
fn judge(c: &Case, o: &Outcome) -> Verdict {
    let e = tcgen05_oracle::expect(&c.program);
    let why = cuda::emu::not_emulated(&c.program);
    let e = diff::not_emulated::for_target(&c.program, &e, why).map_or(e, |(m, _, _)| m);
    diff::compare(&c.program, &e, o)
}

/// For every form of `emu_mma::FEATURES`, a generated case whose MMA-decided words the oracle
/// states runs on `cuda-emu` (64 runs) and agrees with the oracle: the emulated D equals the
/// oracle's exact D word for word.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn emulated_d_agrees_with_the_oracle_for_every_computed_form() {
    let mut t = emu(cuda::DEFAULT_RUNS, false);
    let mut failed = Vec::new();
    for f in emu_mma::FEATURES {
        let (seed, c, words) = emu_mma::find(f).unwrap_or_else(|| {
            panic!(
                "no valid case below seed {} with a computed {} MMA",
                emu_mma::SEEDS,
                f.name
            )
        });
        let o = t.run(&c);
        let v = judge(&c, &o);
        log(
            "emu-mma.log",
            &format!(
                "{}: seed {seed}, {words} MMA words stated: {} (run {} us): {v:?}",
                f.name,
                o.summary(),
                t.last.timing.run_us
            )
            .chars()
            .take(600)
            .collect::<String>(),
        );
        if v != Verdict::Agree {
            failed.push(f.name);
        }
    }
    assert!(
        failed.is_empty(),
        "not agreeing with the oracle: {failed:?}"
    );
}

/// A no-swizzle K-major descriptor of region `r` whose rows are packed: LBO 128 bytes (the
/// second 16-byte chunk of a row), SBO 256 bytes (the next 8 rows).
fn packed(r: u8) -> SmemDesc {
    SmemDesc {
        lbo_enc: 8,
        sbo_enc: 16,
        ..probes::desc(r)
    }
}

/// One warp: f16 (small-integer) A of 128 rows and B of 256 rows filled, an elected thread
/// issues `loops` times a `kind::f16` MMA with M = 128, N = 256, K = 16 (f32 D, columns 0..256)
/// and commits, the warp waits and reads 8 columns of D.
fn timed_program(loops: u8) -> Program {
    let mut m = probes::mma(MmaKind::F16, false);
    m.idesc = probes::idesc(MmaKind::F16, 128, 256);
    m.a = MmaA::Desc(packed(0));
    m.b = packed(1);
    let smem = Smem {
        slots: 1,
        mbarriers: 1,
        regions: vec![4096, 8192],
    };
    let fill = |region, seed| Stmt::Fill {
        region,
        seed,
        elem: FillElem::F16Small,
    };
    samples::one_warp(
        samples::launch(1),
        smem,
        256,
        vec![
            fill(0, 1),
            fill(1, 2),
            Stmt::FenceProxyAsync,
            Stmt::MbarInit { bar: 0, count: 1 },
            samples::elect(vec![
                Stmt::Loop {
                    count: loops,
                    body: vec![Stmt::Tc(Op::Mma(Box::new(m)))],
                },
                probes::commit(),
            ]),
            samples::mbar_wait(0, 1 << 20),
            samples::fence(FenceKind::AfterThreadSync),
            samples::ld(0, 0, 0, Num::X8),
            samples::wait(WaitOp::Ld),
        ],
    )
}

/// The time of one emulated multiply-add: a case with 1 and with 9 issues of a 128×256×16
/// f16 MMA (524,288 multiply-adds each), one run per launch, the best of 5 launches each;
/// the difference over 8 MMAs' multiply-adds, in `emu-mma-time.log`. Both cases must agree
/// with the oracle (their D is exact).
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn one_emulated_multiply_add_time() {
    let mut t = emu(1, true);
    let mut best = Vec::new();
    for loops in [1u8, 9] {
        let c = Case {
            program: timed_program(loops),
            intent: Intent::Valid,
            provenance: Provenance::default(),
        };
        let mut us = u64::MAX;
        for _ in 0..5 {
            let o = t.run(&c);
            assert!(matches!(o, Outcome::Completed { .. }), "{o:?}");
            assert_eq!(judge(&c, &o), Verdict::Agree, "{loops} MMAs");
            us = us.min(t.last.timing.run_us);
        }
        best.push(us);
    }
    let macs = 8.0 * 128.0 * 256.0 * 16.0;
    let ns = (best[1] as f64 - best[0] as f64) * 1000.0 / macs;
    log(
        "emu-mma-time.log",
        &format!(
            "128x256x16 f16 MMA: 1 issue {} us, 9 issues {} us (launch + run, best of 5): \
             {ns:.2} ns a multiply-add",
            best[0], best[1]
        ),
    );
    assert!(best[1] > best[0], "{best:?}");
}

/// The timed cases are valid and their D is the oracle's to state (so the GPU test's
/// agreement checks values), and their MMA is one the emulation computes (it lowers with the
/// 16 multiply-adds of a cell).
#[test]
fn the_timed_cases_d_is_stated_by_the_oracle() {
    for loops in [1u8, 9] {
        let p = timed_program(loops);
        assert!(emu_mma::mma_words(&p) >= 8 * 32, "{loops} MMAs");
        let low = cuda::emu::lower(&p, &cuda::emu::EmuConfig::default())
            .unwrap_or_else(|e| panic!("{loops} MMAs: {e}"));
        assert!(low.ptx.matches("fma.rn.f32").count() >= 16, "{}", low.ptx);
        let m = p
            .ops()
            .into_iter()
            .find_map(|op| match op {
                Op::Mma(m) => Some(m.clone()),
                _ => None,
            })
            .expect("an MMA");
        assert_eq!(
            cuda::emu::mma_macs(&m, &p.smem.regions),
            128 * 256 * 16,
            "{loops} MMAs"
        );
    }
}
