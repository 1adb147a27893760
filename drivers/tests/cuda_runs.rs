//! GPU tests of repeated runs (`--runs`) and fault attribution: a trap, a hang and a sticky
//! error in the middle of a case's runs end that case at that run, and the cases after them
//! still run; an emulated violation does not cost the worker. They need a CUDA device
//! (compute capability 9.0+) and show as ignored elsewhere: run them with `scripts/gpu-tests`.

use std::time::Duration;
use tcgen05_drivers::cuda::protocol::{self, Compile, RunRequest, RunResult};
use tcgen05_drivers::cuda::supervisor::{Ended, Limits, Supervisor, WorkerSpec};
use tcgen05_drivers::cuda::{self, Config, CudaTarget, Flavour, arch, emu};
use tcgen05_drivers::outcome::Outcome;
use tcgen05_drivers::target::Target;
use tcgen05_ir::*;

fn supervisor() -> Supervisor {
    let exe = cuda::find_worker(Config::from_env(0).worker.as_ref()).expect("worker");
    Supervisor::start(
        WorkerSpec {
            exe,
            args: vec!["--device".into(), "0".into()],
            env: vec![],
        },
        Limits::default(),
    )
    .expect("device")
}

/// A kernel with the emulation's two parameters that writes 7 to the observation buffer and,
/// from the first perturbed run on (status word `emu::PERTURB_WORD` non-zero), does `fault`.
fn kernel(fault: &str) -> String {
    kernel_writing(7, fault)
}

/// [`kernel`] writing `value` instead of 7.
fn kernel_writing(value: u32, fault: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\n\
         .visible .entry tc_kernel(.param .u64 obs, .param .u64 st)\n{{\n\
         \t.reg .b64 %rd<4>;\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n\
         \tld.param.u64 %rd0, [obs];\n\tcvta.to.global.u64 %rd0, %rd0;\n\
         \tld.param.u64 %rd1, [st];\n\tcvta.to.global.u64 %rd1, %rd1;\n\
         \tld.volatile.global.u32 %r0, [%rd1+{}];\n\
         \tst.volatile.global.u32 [%rd0], {value};\n\
         \tsetp.ne.u32 %p0, %r0, 0;\n\
         \t@!%p0 bra $DONE;\n\
         {fault}\n\
         $DONE:\n\tret;\n}}\n",
        4 * emu::PERTURB_WORD
    )
}

fn request(id: u64, ptx: String, runs: u32) -> RunRequest {
    RunRequest {
        id,
        ptx,
        kernel: "tc_kernel".into(),
        compile: Compile::Jit,
        grid_x: 1,
        block_x: 32,
        cluster_x: 1,
        dyn_smem: 0,
        obs_words: 4,
        status_words: emu::STATUS_WORDS,
        timeout_ms: 1000,
        jit_opt: None,
        runs,
        runs_budget_ms: 0,
        perturb_seed: id,
        batch: 0,
        done_word: 0,
        link: Default::default(),
    }
}

/// Good, trap at run 1, good, hang at run 1, good, illegal address at run 1, good: each fault
/// is its own case's at run 1 (run 0 completed and is kept), every good case after it runs all
/// its runs on a fresh worker, and only the three faults cost a worker.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn faults_in_the_middle_of_runs_belong_to_their_case_and_run() {
    let mut sup = supervisor();
    let good = kernel("");
    let faults = [
        ("trap", "\ttrap;", None),
        ("hang", "$SPIN:\n\tbra $SPIN;", None),
        (
            "illegal address",
            "\tmov.u64 %rd2, 0;\n\tst.volatile.global.u32 [%rd2], 1;",
            Some(arch::code::ILLEGAL_ADDRESS),
        ),
    ];
    let mut id = 0;
    let run_good = |sup: &mut Supervisor, id: &mut u64| {
        *id += 1;
        let e = sup.run(&request(*id, good.clone(), 8));
        let Ended::Reported {
            result: RunResult::Completed { words, .. },
            classes,
            runs_done,
            ..
        } = &e
        else {
            panic!("good case {id}: {e:?}")
        };
        assert_eq!(words[0], 7, "{e:?}");
        assert_eq!(*runs_done, 8, "{e:?}");
        assert_eq!(classes.len(), 1, "{e:?}");
        assert_eq!((classes[0].runs, classes[0].first_run), (8, 0), "{e:?}");
    };
    run_good(&mut sup, &mut id);
    for (name, fault, code) in faults {
        id += 1;
        let e = sup.run(&request(id, kernel(fault), 8));
        let Ended::Reported {
            result,
            classes,
            runs_done,
            ..
        } = &e
        else {
            panic!("{name}: {e:?}")
        };
        assert_eq!(*runs_done, 2, "{name}: the series ends at run 1: {e:?}");
        assert_eq!(classes.len(), 1, "{name}: run 0 completed: {e:?}");
        assert_eq!((classes[0].runs, classes[0].first_run), (1, 0), "{e:?}");
        match (name, result) {
            ("hang", RunResult::Hung { words, .. }) => assert_eq!(words[0], 7),
            (
                _,
                RunResult::Fault {
                    code: c, sticky, ..
                },
            ) if name != "hang" => {
                assert!(*sticky, "{name}: {e:?}");
                if let Some(want) = code {
                    assert_eq!(*c, want, "{name}: {e:?}");
                }
            }
            _ => panic!("{name}: {e:?}"),
        }
        run_good(&mut sup, &mut id);
    }
    assert_eq!(sup.stats.spawned, 4, "{:?}", sup.stats);
    eprintln!("workers: {:?}", sup.stats);
}

/// Cases compiled ahead (`Request::Prepare`, sent before the `Run` of the case before them)
/// run their own module and keep their attribution: each case's words are its own; a
/// prepared module the JIT rejects is its own case's compile error; a trap in the case before
/// a prepared one costs that worker, and the prepared case then compiles on the fresh one; a
/// case prepared and never run costs nothing.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn prepared_cases_run_their_own_module_and_keep_their_attribution() {
    let mut sup = supervisor();
    let good = |id: u64| request(id, kernel_writing(id as u32, ""), 4);
    let completed = |e: &Ended, id: u64| {
        let Ended::Reported {
            result: RunResult::Completed { words, .. },
            runs_done,
            compile_us,
            ..
        } = e
        else {
            panic!("case {id}: {e:?}")
        };
        assert_eq!(
            words[0], id as u32,
            "case {id} ran another case's module: {e:?}"
        );
        assert_eq!(*runs_done, 4, "{e:?}");
        assert!(*compile_us > 0, "case {id}: {e:?}");
    };
    // 2 compiles while 1 runs.
    sup.prepare(&good(2));
    completed(&sup.run(&good(1)), 1);
    // 3 does not compile; it is prepared while 2 runs.
    sup.prepare(&request(3, "this is not PTX".into(), 4));
    completed(&sup.run(&good(2)), 2);
    // 4 traps at run 1; 5 is prepared while it runs.
    sup.prepare(&request(4, kernel_writing(4, "\ttrap;"), 4));
    let e = sup.run(&request(3, "this is not PTX".into(), 4));
    assert!(
        matches!(
            &e,
            Ended::Reported {
                result: RunResult::CompileError { .. },
                ..
            }
        ),
        "{e:?}"
    );
    sup.prepare(&good(5));
    let e = sup.run(&request(4, kernel_writing(4, "\ttrap;"), 4));
    assert!(
        matches!(
            &e,
            Ended::Reported {
                result: RunResult::Fault { sticky: true, .. },
                runs_done: 2,
                ..
            }
        ),
        "{e:?}"
    );
    completed(&sup.run(&good(5)), 5);
    // 6 is prepared and never run; 7 runs on the same worker.
    sup.prepare(&good(6));
    completed(&sup.run(&good(7)), 7);
    sup.prepare(&good(8));
    completed(&sup.run(&good(8)), 8);
    assert_eq!(
        sup.stats.spawned, 2,
        "only the trap cost a worker: {:?}",
        sup.stats
    );
}

/// An emulated violation ends the kernel with an exit, not a trap: it is reported as the trap
/// the hardware would give, with its rule, and the next case runs on the same worker.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn an_emulated_violation_keeps_the_worker() {
    let mut cfg = Config::from_env(0);
    cfg.runs = 4;
    let mut t = CudaTarget::new("cuda-emu", Flavour::Emu, cfg).expect("cuda-emu");
    let case = |p: Program| Case {
        program: p,
        intent: Intent::Unknown,
        provenance: Provenance::default(),
    };
    let mut bad = samples::single_warp_roundtrip();
    bad.warps[0].push(samples::alloc(CtaGroup::One, 0, 32));
    for round in 0..3 {
        let v = t.run_repeated(&case(bad.clone()));
        assert_eq!(v.len(), 1, "every run gives the same violation: {v:?}");
        assert_eq!(v[0].runs, 4, "{v:?}");
        match &v[0].outcome {
            Outcome::Trapped { kind, .. } => assert!(
                kind.to_string().contains("ALLOC-AFTER-RELINQUISH"),
                "{kind}"
            ),
            other => panic!("round {round}: {other:?}"),
        }
        let o = t.run(&case(samples::single_warp_roundtrip()));
        assert!(matches!(o, Outcome::Completed { .. }), "{o:?}");
    }
    assert_eq!(t.stats().spawned, 1, "{:?}", t.stats());
}

/// Runs per second of one worker on a small case (compile once, launch many): the figure
/// `--runs` buys. Logged, and at least 1,000 runs/s (an H100 makes tens of thousands).
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn runs_per_second_of_one_worker() {
    let mut sup = supervisor();
    let runs = 20_000;
    let mut req = request(1, kernel(""), runs);
    req.timeout_ms = 60_000;
    let t0 = std::time::Instant::now();
    let e = sup.run(&req);
    let took = t0.elapsed();
    let Ended::Reported {
        runs_done,
        compile_us,
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(*runs_done, runs, "{e:?}");
    let per_s = f64::from(runs) / (took - Duration::from_micros(*compile_us)).as_secs_f64();
    eprintln!("{runs} runs in {took:?} (compile {compile_us} us): {per_s:.0} runs/s");
    assert!(per_s > 1000.0, "{per_s}");
    assert_eq!(protocol::perturbation(1, 0), 0);
}

/// A batch-aware kernel (protocol `batch`): copy `k` = `%ctaid.x` writes 7 and its
/// perturbation to observation words `4k`, `4k + 1`, does `fault` when its perturbation is
/// non-zero, and counts its thread in status word `emu::DONE_WORD` of block `k` when it ends.
fn batched_kernel(fault: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\n\
         .visible .entry tc_kernel(.param .u64 obs, .param .u64 st)\n{{\n\
         \t.reg .b64 %rd<4>;\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n\
         \tmov.u32 %r1, %ctaid.x;\n\
         \tld.param.u64 %rd0, [obs];\n\tcvta.to.global.u64 %rd0, %rd0;\n\
         \tmul.wide.u32 %rd2, %r1, 16;\n\tadd.u64 %rd0, %rd0, %rd2;\n\
         \tld.param.u64 %rd1, [st];\n\tcvta.to.global.u64 %rd1, %rd1;\n\
         \tmul.wide.u32 %rd2, %r1, {};\n\tadd.u64 %rd1, %rd1, %rd2;\n\
         \tld.volatile.global.u32 %r0, [%rd1+{}];\n\
         \tst.volatile.global.u32 [%rd0], 7;\n\
         \tst.volatile.global.u32 [%rd0+4], %r0;\n\
         \tsetp.ne.u32 %p0, %r0, 0;\n\
         \t@!%p0 bra $DONE;\n\
         {fault}\n\
         $DONE:\n\tred.global.add.u32 [%rd1+{}], 1;\n\tret;\n}}\n",
        4 * emu::STATUS_WORDS,
        4 * emu::PERTURB_WORD,
        4 * emu::DONE_WORD
    )
}

fn batched(id: u64, ptx: String, runs: u32, batch: u32) -> RunRequest {
    RunRequest {
        batch,
        done_word: emu::DONE_WORD,
        ..request(id, ptx, runs)
    }
}

/// Many runs per launch: each copy gets its own run's perturbation and observation block
/// (64 runs in launches of 16 give 64 distinct observations, copy k holding perturbation(seed,
/// k)); a hang at run 1 of a launch of 8 ends the case at run 1 with run 0 kept; a trap in a
/// launch is that case's, and the good case after each runs all its runs on a fresh worker.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn batched_runs_keep_their_perturbations_and_attribution() {
    let mut sup = supervisor();
    let mut id = 0;
    let run_good = |sup: &mut Supervisor, id: &mut u64| {
        *id += 1;
        let e = sup.run(&batched(*id, batched_kernel(""), 64, 16));
        let Ended::Reported {
            result: RunResult::Completed { .. },
            classes,
            runs_done,
            ..
        } = &e
        else {
            panic!("good case {id}: {e:?}")
        };
        assert_eq!(*runs_done, 64, "{e:?}");
        assert_eq!(classes.len(), 64, "every run its own perturbation: {e:?}");
        for c in classes {
            assert_eq!(c.runs, 1, "{c:?}");
            assert_eq!(c.words[0], 7, "{c:?}");
            assert_eq!(
                c.words[1],
                protocol::perturbation(*id, c.first_run),
                "{c:?}"
            );
        }
    };
    run_good(&mut sup, &mut id);
    // A hang in every perturbed copy: copy 0 (run 0) finishes, copy 1 is the first that does
    // not.
    id += 1;
    let e = sup.run(&batched(id, batched_kernel("$SPIN:\n\tbra $SPIN;"), 8, 8));
    let Ended::Reported {
        result,
        classes,
        runs_done,
        ..
    } = &e
    else {
        panic!("hang: {e:?}")
    };
    assert_eq!(*runs_done, 2, "the series ends at run 1: {e:?}");
    assert_eq!(classes.len(), 1, "run 0 completed: {e:?}");
    assert_eq!((classes[0].runs, classes[0].first_run), (1, 0), "{e:?}");
    let RunResult::Hung { words, .. } = result else {
        panic!("hang: {e:?}")
    };
    assert_eq!(
        (words[0], words[1]),
        (7, protocol::perturbation(id, 1)),
        "run 1's own words: {e:?}"
    );
    run_good(&mut sup, &mut id);
    id += 1;
    let e = sup.run(&batched(id, batched_kernel("\ttrap;"), 8, 8));
    let Ended::Reported {
        result: RunResult::Fault { sticky: true, .. },
        runs_done,
        ..
    } = &e
    else {
        panic!("trap: {e:?}")
    };
    assert!((1..=8).contains(runs_done), "{e:?}");
    run_good(&mut sup, &mut id);
    assert_eq!(sup.stats.spawned, 3, "{:?}", sup.stats);
}

/// Runs per second of one worker in launches of 128 copies of a small case: the figure many
/// runs per launch buy. Logged, and at least 5,000 runs/s.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn batched_runs_per_second_of_one_worker() {
    let mut sup = supervisor();
    let runs = 128_000;
    // Without the perturbation in the words, every run gives the same observation.
    let same = batched_kernel("").replace("\tst.volatile.global.u32 [%rd0+4], %r0;\n", "");
    let mut req = batched(1, same, runs, 128);
    req.timeout_ms = 60_000;
    req.obs_words = 4;
    let t0 = std::time::Instant::now();
    let e = sup.run(&req);
    let took = t0.elapsed();
    let Ended::Reported {
        runs_done,
        compile_us,
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(*runs_done, runs, "{e:?}");
    let per_s = f64::from(*runs_done) / (took - Duration::from_micros(*compile_us)).as_secs_f64();
    eprintln!(
        "{runs_done} runs in launches of 128 in {took:?} (compile {compile_us} us): {per_s:.0} runs/s"
    );
    assert!(per_s > 5000.0, "{per_s}");
}

/// A lowered case calls the emulation's routines (`emu::routines_module`): linked from the
/// object the worker compiles with ptxas, or from their PTX where there is no ptxas, it runs
/// and observes the same words either way; linked with nothing, the JIT linker refuses it
/// (unresolved routines).
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn a_lowered_case_links_its_routines_from_an_object_or_from_ptx() {
    let mut sup = supervisor();
    let p = samples::single_warp_roundtrip();
    let low = emu::lower(&p, &emu::EmuConfig::default()).expect("lowers");
    let layout = observe::Layout::of(&p);
    let req = |id: u64, link: protocol::Link| RunRequest {
        dyn_smem: low.dyn_smem,
        obs_words: layout.total_words() as u32,
        status_words: emu::STATUS_WORDS,
        done_word: emu::DONE_WORD,
        link,
        ..request(id, low.ptx.clone(), 1)
    };
    let arch = "sm_90".to_string();
    let ptxas = cuda::find_ptxas().map(|p| p.display().to_string());
    assert!(
        ptxas.is_some(),
        "the GPU machine has a ptxas (scripts/gpu-tests)"
    );
    let mut seen = Vec::new();
    for (id, ptxas) in [(1, ptxas), (2, None)] {
        let e = sup.run(&req(
            id,
            protocol::Link::EmuRoutines {
                ptxas,
                arch: arch.clone(),
            },
        ));
        let Ended::Reported {
            result: RunResult::Completed { words, status, .. },
            ..
        } = &e
        else {
            panic!("case {id}: {e:?}")
        };
        assert_eq!(status.first(), Some(&0), "no violation: {e:?}");
        seen.push(words.clone());
    }
    assert_eq!(seen[0], seen[1]);
    let e = sup.run(&req(3, protocol::Link::Alone));
    let Ended::Reported {
        result: RunResult::CompileError { log, .. },
        ..
    } = &e
    else {
        panic!("linked with nothing: {e:?}")
    };
    assert!(log.contains("emu_"), "{log}");
}
