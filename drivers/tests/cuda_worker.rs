//! The hardware path without a GPU: availability reasons, and the parent's watchdog, respawn
//! and fault attribution against the worker's fake device (`TCGEN05_CUDA_FAKE`), which speaks
//! the real protocol from the real worker binary.

use std::path::PathBuf;
use std::time::{Duration, Instant};
use tcgen05_drivers::cuda::runner::Choice;
use tcgen05_drivers::cuda::supervisor::Limits;
use tcgen05_drivers::cuda::worker::fake;
use tcgen05_drivers::cuda::{self, Config, CudaTarget, Flavour};
use tcgen05_drivers::outcome::Outcome;
use tcgen05_drivers::target::Target;
use tcgen05_ir::{Program, Stmt, samples};

/// The worker binary cargo built for these tests, or `TCGEN05_CUDA_WORKER` (binaries moved to
/// another machine by `scripts/gpu-tests --pack`).
fn worker() -> PathBuf {
    std::env::var("TCGEN05_CUDA_WORKER")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_BIN_EXE_tcgen05-cuda-worker")))
}

fn config(fake_cc: Option<&str>, timeout_ms: u64) -> Config {
    Config {
        device: 0,
        timeout: Duration::from_millis(timeout_ms),
        try_wait_ns: cuda::DEFAULT_TRY_WAIT_NS,
        ptxas: None,
        jit_opt: None,
        guardrail: false,
        worker: Some(worker()),
        worker_env: fake_cc
            .map(|cc| vec![("TCGEN05_CUDA_FAKE".to_string(), format!("cc={cc}"))])
            .unwrap_or_default(),
        limits: Limits {
            hello: Duration::from_secs(20),
            compile: Duration::from_secs(20),
            grace: Duration::from_millis(500),
        },
        runs: 1,
        runs_budget: cuda::DEFAULT_RUNS_BUDGET,
        batch: 0,
        prepare: Some(true),
        // The runner path, with a runner of the target's own (the tests run in parallel);
        // the attribution tests also run with `Own`.
        runner: Ok(Choice::Private { runners: 1 }),
    }
}

/// `config` with the cases run where `choice` says.
fn config_in(choice: Choice, fake_cc: Option<&str>, timeout_ms: u64) -> Config {
    Config {
        runner: Ok(choice),
        ..config(fake_cc, timeout_ms)
    }
}

fn with_checkpoint(id: u16) -> Program {
    let mut p = samples::single_warp_roundtrip();
    p.warps[0].insert(0, Stmt::Checkpoint(id));
    p
}

fn case(p: Program) -> tcgen05_ir::Case {
    tcgen05_ir::Case {
        program: p,
        intent: tcgen05_ir::Intent::Unknown,
        provenance: Default::default(),
    }
}

#[test]
fn names_are_parsed() {
    assert_eq!(cuda::parse_name("cuda"), Some((Flavour::Hardware, 0)));
    assert_eq!(cuda::parse_name("cuda:3"), Some((Flavour::Hardware, 3)));
    assert_eq!(cuda::parse_name("cuda-emu"), Some((Flavour::Emu, 0)));
    assert_eq!(cuda::parse_name("cuda-emu:1"), Some((Flavour::Emu, 1)));
    assert_eq!(cuda::parse_name("cuda:x"), None);
    assert_eq!(cuda::parse_name("sim"), None);
    assert!(cuda::build("sim").is_none());
}

#[test]
fn without_a_driver_the_target_is_unavailable_with_a_reason() {
    // On a machine with no NVIDIA driver (CI), both names say so and nothing panics.
    let has_driver = ["/dev/nvidiactl", "/dev/nvidia0"]
        .iter()
        .any(|p| std::path::Path::new(p).exists());
    for flavour in [Flavour::Hardware, Flavour::Emu] {
        match CudaTarget::new("cuda", flavour, config(None, 1000)) {
            Ok(t) => assert!(has_driver, "available without a driver: {}", t.version()),
            Err(e) => {
                if !has_driver {
                    assert!(
                        e.0.contains("no CUDA driver") || e.0.contains("no usable CUDA device"),
                        "{e}"
                    );
                }
            }
        }
    }
}

#[test]
fn hopper_is_not_a_tcgen05_device_but_runs_the_emulation() {
    let e = CudaTarget::new("cuda", Flavour::Hardware, config(Some("9.0"), 1000)).unwrap_err();
    assert!(
        e.0.contains("found compute capability 9.0") && e.0.contains("tcgen05 needs 10.x or 11.x"),
        "{e}"
    );
    let t = CudaTarget::new("cuda-emu", Flavour::Emu, config(Some("9.0"), 1000)).unwrap();
    assert!(t.version().contains("cc 9.0"), "{}", t.version());
    // A Blackwell part is accepted by `cuda`.
    assert!(CudaTarget::new("cuda", Flavour::Hardware, config(Some("10.0"), 1000)).is_ok());
}

/// Compiling ahead (`Config::prepare`) is on by default for `cuda-emu` only: its campaign
/// then gives the target claims of `PIPELINE_DEPTH` cases; a setting overrides it either way,
/// and a shared runner (whose target worker only compiles) never prepares.
#[test]
fn cuda_emu_compiles_ahead_by_default_and_cuda_does_not() {
    let own = |prepare: Option<bool>| Config {
        prepare,
        ..config_in(Choice::Own, Some("10.0"), 1000)
    };
    let depth = |name: &str, flavour: Flavour, cfg: Config| {
        CudaTarget::new(name, flavour, cfg)
            .unwrap()
            .pipeline_depth()
    };
    assert_eq!(
        depth("cuda-emu", Flavour::Emu, own(None)),
        cuda::PIPELINE_DEPTH
    );
    assert_eq!(depth("cuda", Flavour::Hardware, own(None)), 1);
    assert_eq!(depth("cuda-emu", Flavour::Emu, own(Some(false))), 1);
    assert_eq!(
        depth("cuda", Flavour::Hardware, own(Some(true))),
        cuda::PIPELINE_DEPTH
    );
    let shared = Config {
        prepare: None,
        ..config(Some("10.0"), 1000)
    };
    assert_eq!(depth("cuda-emu", Flavour::Emu, shared), 1);
}

#[test]
fn a_trap_is_attributed_to_its_case_and_the_next_hundred_run_on_a_fresh_worker() {
    for choice in [Choice::Private { runners: 1 }, Choice::Own] {
        let cfg = config_in(choice, Some("10.0"), 1000);
        let mut t = CudaTarget::new("cuda", Flavour::Hardware, cfg).unwrap();
        let trap = t.run(&case(with_checkpoint(fake::TRAP)));
        assert!(
            matches!(trap, Outcome::Trapped { .. }),
            "{choice:?}: {trap:?}"
        );
        let good = case(samples::single_warp_roundtrip());
        for i in 0..100 {
            let o = t.run(&good);
            assert!(
                matches!(o, Outcome::Completed { .. }),
                "{choice:?}: case {i}: {o:?}"
            );
        }
        let s = t.stats();
        // One worker before the trap, exactly one after it: the 100 shared it.
        assert_eq!((s.spawned, s.killed, s.cases), (2, 1, 101), "{choice:?}");
    }
}

/// A campaign's batch (`Target::run_repeated_batch`: each case announced to the worker before
/// the case before it runs) gives each case its own outcome, in order, and a trap or a crash
/// in the middle costs only its own case.
#[test]
fn a_batch_gives_each_case_its_own_outcome_and_faults_stay_with_their_case() {
    for choice in [Choice::Private { runners: 1 }, Choice::Own] {
        a_batch_in(choice);
    }
}

fn a_batch_in(choice: Choice) {
    let cfg = config_in(choice, Some("10.0"), 1000);
    let mut t = CudaTarget::new("cuda", Flavour::Hardware, cfg).unwrap();
    let good = case(samples::single_warp_roundtrip());
    let trap = case(with_checkpoint(fake::TRAP));
    let crash = case(with_checkpoint(fake::CRASH));
    let batch = [&good, &trap, &good, &good, &crash, &good];
    let got = t.run_repeated_batch(&batch);
    assert_eq!(got.len(), batch.len());
    for (i, o) in got.iter().enumerate() {
        assert_eq!(o.len(), 1, "case {i}: {o:?}");
        let o = &o[0].outcome;
        match i {
            1 => assert!(matches!(o, Outcome::Trapped { .. }), "case {i}: {o:?}"),
            4 => assert!(matches!(o, Outcome::Crashed { .. }), "case {i}: {o:?}"),
            _ => assert!(matches!(o, Outcome::Completed { .. }), "case {i}: {o:?}"),
        }
    }
    let s = t.stats();
    // The first worker, one after the trap, one after the crash.
    assert_eq!((s.spawned, s.cases), (3, 6), "{choice:?}: {s:?}");
}

#[test]
fn a_reported_hang_is_hung_with_the_lanes_and_a_leak_is_leaked() {
    let mut t = CudaTarget::new("cuda", Flavour::Hardware, config(Some("10.0"), 200)).unwrap();
    let start = Instant::now();
    let o = t.run(&case(with_checkpoint(fake::HANG)));
    match &o {
        // The fake wrote no checkpoint: all 32 lanes of the one warp are reported.
        Outcome::Hung { blocked, .. } => assert_eq!(blocked.len(), 32, "{o:?}"),
        other => panic!("{other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(5));
    let o = t.run(&case(with_checkpoint(fake::LEAK)));
    assert!(matches!(o, Outcome::Leaked { .. }), "{o:?}");
    let o = t.run(&case(samples::single_warp_roundtrip()));
    assert!(matches!(o, Outcome::Completed { .. }), "{o:?}");
    assert_eq!(t.stats().spawned, 3);
}

#[test]
fn an_unresponsive_worker_is_killed_by_the_parent_watchdog() {
    let mut t = CudaTarget::new("cuda", Flavour::Hardware, config(Some("10.0"), 300)).unwrap();
    let start = Instant::now();
    let o = t.run(&case(with_checkpoint(fake::STALL)));
    let took = start.elapsed();
    assert!(matches!(o, Outcome::Hung { .. }), "{o:?}");
    // Timeout 300 ms + grace 500 ms, with slack for a loaded machine.
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(10),
        "{took:?}"
    );
    let o = t.run(&case(samples::single_warp_roundtrip()));
    assert!(matches!(o, Outcome::Completed { .. }), "{o:?}");
}

#[test]
fn a_crashed_worker_is_reported_and_replaced() {
    let mut t = CudaTarget::new("cuda", Flavour::Hardware, config(Some("10.0"), 300)).unwrap();
    let o = t.run(&case(with_checkpoint(fake::CRASH)));
    match &o {
        Outcome::Crashed { detail } => assert!(detail.contains("after the launch"), "{detail}"),
        other => panic!("{other:?}"),
    }
    let o = t.run(&case(samples::single_warp_roundtrip()));
    assert!(matches!(o, Outcome::Completed { .. }), "{o:?}");
}

#[test]
fn compile_errors_keep_the_log_as_diagnostics() {
    let mut t = CudaTarget::new("cuda-emu", Flavour::Emu, config(Some("9.0"), 300)).unwrap();
    let o = t.run(&case(with_checkpoint(fake::COMPILE_ERROR)));
    match &o {
        Outcome::Rejected(d) => {
            assert_eq!(d[0].line, Some(12));
            assert!(d[0].message.contains("fake compile error"));
        }
        other => panic!("{other:?}"),
    }
    // A compile error does not cost the worker that compiled it, and runs nothing.
    let w = t.worker_stats();
    assert_eq!((w.spawned, w.killed), (1, 0));
    assert_eq!(t.stats().cases, 0);
}

#[test]
fn programs_the_emulation_does_not_model_are_not_run() {
    let mut t = CudaTarget::new("cuda-emu", Flavour::Emu, config(Some("9.0"), 300)).unwrap();
    let mut p = samples::single_warp_roundtrip();
    p.smem.regions = vec![300_000];
    let o = t.run(&case(p));
    assert!(
        matches!(&o, Outcome::NotRun(r) if r.contains("cuda-emu")),
        "{o:?}"
    );
}

/// `cuda-emu` runs our lowering, not the program, so it is a target that only runs programs
/// (the campaign leaves it the cases no run outcome can change); `cuda` is not: the driver's
/// JIT rejecting an ill-formed program is part of what it tests.
#[test]
fn only_the_emulation_skips_cases_whose_verdict_no_run_can_change() {
    let emu = CudaTarget::new("cuda-emu", Flavour::Emu, config(Some("9.0"), 1000)).unwrap();
    assert!(emu.only_runs());
    let hw = CudaTarget::new("cuda", Flavour::Hardware, config(Some("10.0"), 1000)).unwrap();
    assert!(!hw.only_runs());
}

/// Targets of one process with `shared` runners share the device's runner workers: a case
/// that hangs holds one of them, and the other targets' cases run on the other meanwhile.
#[test]
fn a_hang_holds_one_shared_runner_and_the_cases_of_other_targets_go_on() {
    let mut cfg = config_in(Choice::Shared { runners: 2 }, Some("10.0"), 1500);
    // A worker setup of this test alone, so no other test shares its runners.
    cfg.worker_env
        .push(("TCGEN05_TEST_RUNNERS".into(), "hang-and-go-on".into()));
    let mut hanging = CudaTarget::new("cuda", Flavour::Hardware, cfg.clone()).unwrap();
    let mut other = CudaTarget::new("cuda", Flavour::Hardware, cfg).unwrap();
    let start = Instant::now();
    std::thread::scope(|s| {
        let h = s.spawn(move || {
            let o = hanging.run(&case(with_checkpoint(fake::HANG)));
            (o, start.elapsed(), hanging)
        });
        std::thread::sleep(Duration::from_millis(300));
        let good = case(samples::single_warp_roundtrip());
        for i in 0..20 {
            let o = other.run(&good);
            assert!(matches!(o, Outcome::Completed { .. }), "case {i}: {o:?}");
        }
        let others_done = start.elapsed();
        let (o, hang_done, hanging) = h.join().unwrap();
        assert!(matches!(o, Outcome::Hung { .. }), "{o:?}");
        assert!(
            others_done < hang_done,
            "the other target's cases waited for the hang: {others_done:?} >= {hang_done:?}"
        );
        // One set of runners: both started, the hung one's worker killed (and started again
        // only for a next case); 21 cases.
        let s = other.stats();
        assert_eq!(s, hanging.stats());
        assert_eq!((s.spawned, s.killed, s.cases), (2, 1, 21), "{s:?}");
    });
}
