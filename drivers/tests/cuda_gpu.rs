//! GPU tests of the hardware targets (docs/blackwell.md). They need a CUDA device and show as ignored
//! elsewhere: run them with `scripts/gpu-tests` (which passes `--ignored`).
//!
//! Settings: `TCGEN05_GPU_CASES` (cases of the emulation campaign, default 10000),
//! `TCGEN05_GPU_WORKERS` (parallel workers on the GPU, default 8), `TCGEN05_GPU_LOG` (folder
//! for logs and summaries, default `target/gpu-tests`).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tcgen05_drivers::cuda::{self, Config, CudaTarget, Flavour};
use tcgen05_drivers::diff::{self, Verdict};
use tcgen05_drivers::outcome::Outcome;
use tcgen05_drivers::target::Target;
use tcgen05_ir::form::*;
use tcgen05_ir::observe::{self, Layout, View};
use tcgen05_ir::*;

const NEEDS_GPU: &str = "needs a CUDA GPU: run scripts/gpu-tests";

fn log_dir() -> PathBuf {
    let d = std::env::var("TCGEN05_GPU_LOG")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/gpu-tests"));
    let _ = std::fs::create_dir_all(&d);
    d
}

fn log(name: &str, text: &str) {
    let p = log_dir().join(name);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&p)
        .expect("log file");
    let _ = writeln!(f, "{text}");
    eprintln!("[{name}] {text}");
}

fn env_u64(k: &str, d: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn emu(timeout_ms: u64) -> CudaTarget {
    let mut cfg = Config::from_env(0);
    cfg.timeout = Duration::from_millis(timeout_ms);
    CudaTarget::new("cuda-emu", Flavour::Emu, cfg)
        .unwrap_or_else(|e| panic!("cuda-emu unavailable: {e}"))
}

fn case(p: Program, intent: Intent) -> Case {
    Case {
        program: p,
        intent,
        provenance: Provenance::default(),
    }
}

/// The generator configuration of emulation campaigns: the default (every feature, mma and
/// cp included).
fn emu_gen() -> tcgen05_generators::Config {
    tcgen05_generators::Config::default()
}

fn percentile(v: &mut [u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[((v.len() - 1) as f64 * q).round() as usize]
}

#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn cuda_target_reports_why_it_is_unavailable_on_this_device() {
    let _ = NEEDS_GPU;
    match cuda::build("cuda").expect("the name is the cuda module's") {
        Ok(t) => log(
            "availability.log",
            &format!("cuda is AVAILABLE: {}", t.version()),
        ),
        Err(e) => {
            log("availability.log", &format!("cuda is unavailable: {e}"));
            let t = emu(2000);
            // On Hopper the reason names the compute capability.
            if t.device().cc.major == 9 {
                assert!(
                    e.0.contains("found compute capability 9.0") && e.0.contains("10.x or 11.x"),
                    "{e}"
                );
            }
        }
    }
    let t = emu(2000);
    log(
        "availability.log",
        &format!("cuda-emu is available: {}", t.version()),
    );
}

/// st; wait::st; ld; wait::ld of the same cells by one warp: the ld delivers the stored values
/// (reference §5, "defined outcomes": ld of a cell written by a st that a wait::st retired).
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn stored_values_are_loaded_back_for_every_shape() {
    let mut t = emu(2000);
    for shape in LdStShape::LEGAL {
        for (num, pack) in [(Num::X1, false), (Num::X4, false), (Num::X2, true)] {
            let n = vec_len(*shape, num).unwrap();
            let split = (*shape == LdStShape::S16x32bx2).then_some(16);
            let seed = 0x5EED_0000 + n as u32;
            let body = vec![
                samples::alloc(CtaGroup::One, 0, 64),
                Stmt::Tc(Op::St {
                    form: StForm {
                        sync: true,
                        aligned: true,
                        shape: *shape,
                        num,
                        pack: pack.then_some(Pack::Unpack16b),
                        ty: Ty::B32,
                    },
                    taddr: TmemRef::slot(0, 0, 0),
                    split,
                    nregs: n,
                    seed,
                }),
                samples::wait(WaitOp::St),
                Stmt::Tc(Op::Ld {
                    form: LdForm {
                        red: false,
                        sync: true,
                        aligned: true,
                        shape: *shape,
                        num,
                        pack: pack.then_some(Pack::Pack16b),
                        red_op: None,
                        abs: false,
                        nan: false,
                        ty: Ty::B32,
                    },
                    taddr: TmemRef::slot(0, 0, 0),
                    split,
                    nregs: n,
                }),
                samples::wait(WaitOp::Ld),
                samples::dealloc(CtaGroup::One, 0, 64),
                samples::relinquish(CtaGroup::One),
            ];
            let p = Program {
                launch: samples::launch(1),
                smem: Smem {
                    slots: 1,
                    mbarriers: 0,
                    regions: vec![],
                },
                warps: vec![body],
                funcs: vec![],
            };
            let o = t.run(&case(p.clone(), Intent::Valid));
            let Outcome::Completed { words } = &o else {
                panic!("{shape:?} {num:?} pack={pack}: {o:?}")
            };
            let layout = Layout::of(&p);
            let view = View {
                layout: &layout,
                words,
            };
            let site = layout.warp_sites[0][0];
            for lane in 0..32 {
                assert_eq!(view.checkpoint(0, 0, lane), observe::CHECKPOINT_DONE);
                let rec = view.record(0, 0, &site, lane).expect("recorded");
                for (reg, v) in rec.iter().enumerate() {
                    let stored = values::st_value(seed, lane, reg as u32);
                    // With unpack/pack only the low 16 bits of each half travel (the pair
                    // of halves is the register again).
                    assert_eq!(
                        *v, stored,
                        "{shape:?} {num:?} pack={pack} lane {lane} reg {reg}"
                    );
                }
            }
        }
    }
    log(
        "known-answer.log",
        "st/ld round trip: every shape, x1/x4 and pack x2: all lanes read back what they stored",
    );
}

/// Deadlocks: an alloc that can never be satisfied (ALLOC-BLOCKS) is reported by the
/// emulation's bounded spin, and an mbarrier that is never signalled by the watchdog; both as
/// `Hung` within the limit, with the checkpoint each lane reached.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn deadlocks_are_hung_with_their_checkpoints() {
    let limit = Duration::from_millis(2000);
    let mut t = emu(limit.as_millis() as u64);
    // (a) 512 columns held, then 32 more: the second alloc can never complete.
    let p = Program {
        launch: samples::launch(1),
        smem: Smem {
            slots: 2,
            mbarriers: 0,
            regions: vec![],
        },
        warps: vec![vec![
            samples::alloc(CtaGroup::One, 0, 512),
            Stmt::Checkpoint(41),
            samples::alloc(CtaGroup::One, 1, 32),
            Stmt::Checkpoint(42),
        ]],
        funcs: vec![],
    };
    let start = Instant::now();
    let o = t.run(&case(p, Intent::Unknown));
    let took = start.elapsed();
    let Outcome::Hung { blocked, .. } = &o else {
        panic!("{o:?}")
    };
    assert_eq!(blocked.len(), 32, "{o:?}");
    assert!(blocked.iter().all(|s| s.checkpoint == 41), "{blocked:?}");
    let why = blocked[0].blocked_on.clone().unwrap_or_default();
    assert!(why.contains("HangAlloc"), "{why}");
    assert!(took < limit + Duration::from_secs(5), "{took:?}");
    log(
        "hang.log",
        &format!("alloc deadlock: Hung in {took:?}, 32 lanes at checkpoint 41, {why}"),
    );
    // (b) A wait on an mbarrier nobody arrives on, with a practically endless try budget.
    let p = Program {
        launch: samples::launch(2),
        smem: Smem {
            slots: 0,
            mbarriers: 1,
            regions: vec![],
        },
        warps: vec![
            vec![
                Stmt::If {
                    cond: Cond::LaneEq(0),
                    then: vec![Stmt::MbarInit { bar: 0, count: 1 }],
                    els: vec![],
                },
                Stmt::BarCta,
                Stmt::Checkpoint(7),
                Stmt::MbarWait {
                    bar: 0,
                    parity: false,
                    scope: Scope::Cta,
                    max_tries: u32::MAX,
                },
                Stmt::Checkpoint(8),
            ],
            vec![Stmt::BarCta, Stmt::Checkpoint(9)],
        ],
        funcs: vec![],
    };
    let start = Instant::now();
    let o = t.run(&case(p, Intent::Unknown));
    let took = start.elapsed();
    let Outcome::Hung { blocked, .. } = &o else {
        panic!("{o:?}")
    };
    // Warp 0 is stuck after checkpoint 7; warp 1 finished.
    assert_eq!(blocked.len(), 32, "{blocked:?}");
    assert!(
        blocked.iter().all(|s| s.warp == 0 && s.checkpoint == 7),
        "{blocked:?}"
    );
    assert!(
        took >= limit && took < limit + Duration::from_secs(10),
        "{took:?}"
    );
    log(
        "hang.log",
        &format!(
            "mbarrier deadlock: Hung by the watchdog in {took:?} (limit {limit:?}), warp 0 at checkpoint 7, warp 1 done"
        ),
    );
    // The worker was replaced and works.
    let o = t.run(&case(samples::single_warp_roundtrip(), Intent::Valid));
    assert!(matches!(o, Outcome::Completed { .. }), "{o:?}");
    log("hang.log", &format!("after the hangs: {:?}", t.stats()));
}

/// A PTX module whose one warp waits on an mbarrier nobody arrives on, at most `tries` tries of
/// `try_` (an `mbarrier.*_wait` instruction writing `%p2`, on `[bar]`), and thread 0 records the
/// `%globaltimer` nanoseconds the loop took (words 0-1) and the tries it made (word 2). With
/// `sleep_ns` > 0 a failed try is followed by `nanosleep.u32 sleep_ns` (the emulation's loop).
fn wait_loop_ptx(try_: &str, sleep_ns: u32, tries: u32) -> String {
    let sleep = if sleep_ns > 0 {
        format!("\tnanosleep.u32 {sleep_ns};\n")
    } else {
        String::new()
    };
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.shared .align 8 .b64 bar;\n\
         .visible .entry tc_kernel(.param .u64 obs)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<5>;\n\
         \tld.param.u64 %rd1, [obs];\n\tcvta.to.global.u64 %rd1, %rd1;\n\
         \tmov.u32 %r1, %tid.x;\n\tsetp.eq.u32 %p1, %r1, 0;\n\
         \t@%p1 mbarrier.init.shared::cta.b64 [bar], 1;\n\tbarrier.sync 0;\n\
         \tmov.u64 %rd2, %globaltimer;\n\tmov.u32 %r2, 0;\n$TOP:\n\t{try_}\n\
         \t@%p2 bra $DONE;\n{sleep}\tadd.u32 %r2, %r2, 1;\n\tsetp.lt.u32 %p3, %r2, {tries};\n\
         \t@%p3 bra $TOP;\n$DONE:\n\tmov.u64 %rd3, %globaltimer;\n\tsub.u64 %rd3, %rd3, %rd2;\n\
         \t@!%p1 bra $END;\n\tst.global.u64 [%rd1], %rd3;\n\tst.global.u32 [%rd1+8], %r2;\n\
         $END:\n\tret;\n}}\n"
    )
}

/// How long one try of a bounded mbarrier wait takes when nobody arrives, for the wait
/// instructions the harness could use: `try_wait` (what the IR printer emits, the `cuda`
/// target's code), `try_wait` with a 100 ns `suspendTimeHint` (the emulation's first lowering) and
/// `test_wait` with a `nanosleep` after each failed try (the emulation now). A bounded wait of 2^20 tries (the generators' bound) must
/// give up inside the watchdog for the oracle's "gives up" expectation to be observable; this
/// says, per instruction, how long 2^20 tries take on this device.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn mbarrier_wait_try_times() {
    use tcgen05_drivers::cuda::protocol::{Compile, RunRequest, RunResult};
    use tcgen05_drivers::cuda::supervisor::{Ended, Limits, Supervisor, WorkerSpec};
    let exe = cuda::find_worker(Config::from_env(0).worker.as_ref()).expect("worker");
    let mut sup = Supervisor::start(
        WorkerSpec {
            exe,
            args: vec!["--device".into(), "0".into()],
            env: vec![],
        },
        Limits::default(),
    )
    .expect("device");
    let variants = [
        (
            "try_wait (no hint; the IR printer, cuda target)".to_string(),
            "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar], 0;",
            0,
        ),
        (
            "try_wait, suspendTimeHint 100 ns (cuda-emu's first lowering)".to_string(),
            "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar], 0, 100;",
            0,
        ),
        (
            format!(
                "test_wait + nanosleep {} ns (cuda-emu now)",
                cuda::emu::TRY_SLEEP_NS
            ),
            "mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar], 0;",
            cuda::emu::TRY_SLEEP_NS,
        ),
    ];
    let mut id = 0;
    let mut per_try = Vec::new();
    for (name, try_, sleep_ns) in variants {
        // A short probe first (64 tries finish even at 10 ms a try), then about 0.3 s of tries.
        let mut tries = 64u32;
        let mut ns_per_try = 0f64;
        for round in 0..2 {
            id += 1;
            let req = RunRequest {
                id,
                ptx: wait_loop_ptx(try_, sleep_ns, tries),
                kernel: "tc_kernel".into(),
                compile: Compile::Jit,
                grid_x: 1,
                block_x: 32,
                cluster_x: 1,
                dyn_smem: 0,
                obs_words: 4,
                status_words: 0,
                timeout_ms: 30_000,
                jit_opt: None,
                runs: 1,
                runs_budget_ms: 0,
                perturb_seed: 0,
                batch: 0,
                done_word: 0,
                link: Default::default(),
            };
            let r = sup.run(&req);
            let Ended::Reported {
                result: RunResult::Completed { words, timing, .. },
                ..
            } = &r
            else {
                panic!("{name}, {tries} tries: {r:?}")
            };
            let ns = u64::from(words[0]) | (u64::from(words[1]) << 32);
            // Nobody arrives: every try fails, and the loop makes exactly `tries` of them.
            assert_eq!(words[2], tries, "{name}: {words:?}");
            ns_per_try = ns as f64 / f64::from(tries);
            log(
                "mbarrier-wait.log",
                &format!(
                    "{name}: {tries} tries in {:.3} ms ({ns_per_try:.1} ns a try; launch+run {} us)",
                    ns as f64 / 1e6,
                    timing.run_us
                ),
            );
            if round == 0 {
                tries = ((3e8 / ns_per_try.max(1.0)) as u32).clamp(64, 1 << 22);
            }
        }
        per_try.push((name, ns_per_try));
    }
    for (name, ns) in &per_try {
        log(
            "mbarrier-wait.log",
            &format!(
                "{name}: 2^20 tries would take {:.2} s",
                ns * f64::from(1u32 << 20) / 1e9
            ),
        );
    }
    // The emulation's try must let 2^20 tries end well inside the default 2 s watchdog.
    let emu_ns = per_try[2].1;
    assert!(
        emu_ns * f64::from(1u32 << 20) < 1e9,
        "test_wait: {emu_ns} ns a try"
    );
}

/// The `no-arrive` weakenings of the two cross-thread litmus families (reference §4.4 rows 3
/// and 4 without the producer's arrive): the consumer's bounded wait (2^20 tries) must give
/// up and the program complete (the oracle's expectation), inside the default 2 s watchdog.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn no_arrive_weakenings_give_up_and_complete() {
    let mut t = emu(2000);
    let members = tcgen05_generators::litmus::all_members();
    let mut seen = 0;
    for m in members.iter().filter(|m| m.name.ends_with("no-arrive")) {
        seen += 1;
        let c = case(m.program.clone(), m.intent.clone());
        let start = Instant::now();
        let o = t.run(&c);
        let took = start.elapsed();
        let v = judge(&t, &c, &o);
        log(
            "no-arrive.log",
            &format!(
                "{}: {} in {took:?} (launch+run {} us); verdict {}",
                m.name,
                o.summary(),
                t.last.timing.run_us,
                verdict_name(&v)
            ),
        );
        let Outcome::Completed { words } = &o else {
            panic!("{}: {o:?}", m.name)
        };
        // Some lane's wait gave up: nobody arrives on mbarrier 1.
        let layout = Layout::of(&m.program);
        let view = View {
            layout: &layout,
            words,
        };
        let mut gave_up = 0;
        for (w, sites) in layout.warp_sites.iter().enumerate() {
            for site in sites.iter().filter(|s| s.kind == observe::SiteKind::Mbar) {
                gave_up += (0..32)
                    .filter_map(|l| view.record(0, w, site, l))
                    .filter(|r| r[0] == observe::MBAR_GAVE_UP)
                    .count();
            }
        }
        assert!(gave_up > 0, "{}: no wait gave up", m.name);
        assert!(took < Duration::from_secs(2), "{}: {took:?}", m.name);
        assert!(!matches!(v, Verdict::Discrepancy(_)), "{}: {v:?}", m.name);
    }
    assert_eq!(
        seen, 2,
        "the two cross-thread families each have one no-arrive member"
    );
}

/// A violating case followed by 100 good cases in one campaign: the emulated trap is the
/// violating case's, and the 100 agree with the oracle on the same worker (the emulation
/// exits instead of trapping, so the context survives).
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn a_trap_then_a_hundred_good_cases() {
    let mut t = emu(2000);
    // Alloc after relinquish (ALLOC-AFTER-RELINQUISH): the emulation traps.
    let mut p = samples::single_warp_roundtrip();
    p.warps[0].push(samples::alloc(CtaGroup::One, 0, 32));
    let o = t.run(&case(p, Intent::Unknown));
    match &o {
        Outcome::Trapped { kind, .. } => assert!(
            kind.to_string().contains("ALLOC-AFTER-RELINQUISH"),
            "{kind}"
        ),
        other => panic!("{other:?}"),
    }
    let mut verdicts = BTreeMap::<String, u32>::new();
    for seed in 0..100 {
        let c = tcgen05_generators::valid_case(&emu_gen(), 1_000_000 + seed);
        let o = t.run(&c);
        assert!(
            !matches!(
                o,
                Outcome::Trapped { .. } | Outcome::Crashed { .. } | Outcome::Faulted { .. }
            ),
            "seed {seed}: {o:?}"
        );
        let v = judge(&t, &c, &o);
        assert!(!matches!(v, Verdict::Discrepancy(_)), "seed {seed}: {v:?}");
        *verdicts.entry(verdict_name(&v)).or_default() += 1;
    }
    let s = t.stats();
    assert_eq!(s.spawned, 1, "{s:?}");
    log(
        "respawn.log",
        &format!("trap attributed to case 1 ({o:?}); next 100: {verdicts:?}; workers {s:?}"),
    );
}

/// The edition a case is judged in: a near miss made by a mutator in the edition the mutator
/// names (`EditionHint`: the edition that states its rule), else a near miss of a rule that only
/// the wider PTX ISA states (catalogue provenance W, e.g. DEALLOC-BARRIER-ORDER) in the newer
/// wording, every other case in the default (seeds) wording.
fn edition_in(
    c: &Case,
    hint: Option<tcgen05_generators::mutate::EditionHint>,
) -> tcgen05_oracle::Edition {
    use tcgen05_generators::mutate::EditionHint;
    match hint {
        Some(EditionHint::Ptx93) => return tcgen05_oracle::Edition::Ptx93,
        Some(EditionHint::Seeds) => return tcgen05_oracle::Edition::Seeds,
        Some(EditionHint::Any) | None => {}
    }
    edition_of(c)
}

/// The edition of a case without a mutator's hint (see [`edition_in`]).
fn edition_of(c: &Case) -> tcgen05_oracle::Edition {
    match &c.intent {
        Intent::NearMiss { breaks }
            if tcgen05_oracle::catalogue::row(*breaks).provenance
                == tcgen05_oracle::catalogue::Provenance::Wider =>
        {
            tcgen05_oracle::Edition::Ptx93
        }
        _ => tcgen05_oracle::Edition::Seeds,
    }
}

/// The campaign's judgement of `o`, an outcome of `t` (its wait bound included: a
/// `cuda-emu` wait that gave up is skipped, not a discrepancy, as in the campaign).
fn judge(t: &CudaTarget, c: &Case, o: &Outcome) -> Verdict {
    judge_in(t, c, o, edition_of(c))
}

fn judge_in(t: &CudaTarget, c: &Case, o: &Outcome, edition: tcgen05_oracle::Edition) -> Verdict {
    let opts = tcgen05_oracle::Options {
        edition,
        ..tcgen05_oracle::Options::default()
    };
    diff::compare_bounded(
        &c.program,
        &compared(c, expect_in(c, &opts)),
        o,
        t.wait_bound(),
    )
}

fn expect_in(c: &Case, opts: &tcgen05_oracle::Options) -> tcgen05_oracle::Expected {
    tcgen05_oracle::expect_with(&c.program, opts)
}

/// The expectation a `cuda-emu` outcome of `c` is compared with: the words that MMA results
/// the emulation does not compute decide are left out (`diff::not_emulated`, as the judge of
/// the campaign does).
fn compared(c: &Case, e: tcgen05_oracle::Expected) -> tcgen05_oracle::Expected {
    let why = cuda::emu::not_emulated(&c.program);
    diff::not_emulated::for_target(&c.program, &e, why).map_or(e, |(m, _, _)| m)
}

fn verdict_name(v: &Verdict) -> String {
    match v {
        Verdict::Agree => "agree".into(),
        Verdict::Skip(r) => format!("skip: {r:?}").chars().take(80).collect(),
        Verdict::Discrepancy(d) => format!("discrepancy: {:?}", d.kind),
    }
}

#[derive(Default)]
struct Tally {
    outcomes: BTreeMap<String, u64>,
    verdicts: BTreeMap<String, u64>,
    verdicts_ptx93: BTreeMap<String, u64>,
    compile_us: Vec<u64>,
    run_us: Vec<u64>,
    readback_us: Vec<u64>,
    harness_errors: Vec<String>,
    discrepancies: Vec<String>,
    discrepancies_ptx93: Vec<String>,
}

/// ≥ 10,000 generated cases through `cuda-emu`, verdicts against the oracle, throughput.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn emulation_campaign() {
    let generated = env_u64("TCGEN05_GPU_CASES", 10_000);
    // `TCGEN05_GPU_NEAR_MISS_ONLY=1`: only the litmus members and the near misses (every 50th
    // case), with the same case numbers as the full campaign.
    let near_miss_only = env_u64("TCGEN05_GPU_NEAR_MISS_ONLY", 0) == 1;
    let workers = env_u64("TCGEN05_GPU_WORKERS", 8);
    // Every litmus member first (canonical §4.4 patterns and their weakenings, lane quarters,
    // capacity, pair skew), then the generated cases.
    let litmus = Arc::new(tcgen05_generators::litmus::all_members());
    let n = generated + litmus.len() as u64;
    let next = Arc::new(AtomicU64::new(0));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let start = Instant::now();
    let mut handles = Vec::new();
    for w in 0..workers {
        let next = Arc::clone(&next);
        let tally = Arc::clone(&tally);
        let litmus = Arc::clone(&litmus);
        handles.push(std::thread::spawn(move || {
            // The default watchdog (2 s): an emulated bounded wait of 2^20 tries gives up in
            // tens of milliseconds (mbarrier_wait_try_times).
            let mut t = emu(2000);
            let mut spawned_here = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                // Mostly valid cases, and one in 50 a near-miss (traps, hangs and respawns
                // inside the campaign).
                let mut hint = None;
                let (c, label) = if (i as usize) < litmus.len() {
                    let m = &litmus[i as usize];
                    (
                        case(m.program.clone(), m.intent.clone()),
                        format!("litmus {}", m.name),
                    )
                } else if i % 50 == 49 {
                    let m = &tcgen05_generators::mutate::MUTATORS
                        [(i / 50) as usize % tcgen05_generators::mutate::MUTATORS.len()];
                    match tcgen05_generators::mutate::near_miss(m, i) {
                        Some(p) => {
                            hint = Some(m.edition);
                            (
                                case(p, Intent::NearMiss { breaks: m.rule }),
                                m.name.to_string(),
                            )
                        }
                        None => (
                            tcgen05_generators::valid_case(&emu_gen(), i),
                            "valid".to_string(),
                        ),
                    }
                } else if near_miss_only {
                    continue;
                } else {
                    (
                        tcgen05_generators::valid_case(&emu_gen(), i),
                        "valid".to_string(),
                    )
                };
                let o = t.run(&c);
                let v = judge_in(&t, &c, &o, edition_in(&c, hint));
                let opts93 = tcgen05_oracle::Options {
                    edition: tcgen05_oracle::Edition::Ptx93,
                    ..tcgen05_oracle::Options::default()
                };
                let v93 = diff::compare_bounded(
                    &c.program,
                    &compared(&c, expect_in(&c, &opts93)),
                    &o,
                    t.wait_bound(),
                );
                let mut tl = tally.lock().unwrap();
                if let Verdict::Discrepancy(d) = &v93
                    && tl.discrepancies_ptx93.len() < 200
                {
                    tl.discrepancies_ptx93.push(format!(
                        "case {i} ({label}): {:?}: {}",
                        d.kind,
                        o.summary()
                    ));
                }
                *tl.verdicts_ptx93
                    .entry(verdict_name(&v93).chars().take(40).collect())
                    .or_default() += 1;
                *tl.outcomes
                    .entry(format!(
                        "{} {}",
                        if label == "valid" {
                            "valid"
                        } else if label.starts_with("litmus") {
                            "litmus"
                        } else {
                            "near-miss"
                        },
                        o.name()
                    ))
                    .or_default() += 1;
                *tl.verdicts.entry(verdict_name(&v)).or_default() += 1;
                if matches!(o, Outcome::Crashed { .. } | Outcome::TimedOut { .. }) {
                    tl.harness_errors
                        .push(format!("case {i} ({label}): {}", o.summary()));
                }
                if let Verdict::Discrepancy(d) = &v
                    && tl.discrepancies.len() < 200
                {
                    tl.discrepancies.push(format!(
                        "case {i} ({label}): {:?}: {}",
                        d.kind,
                        o.summary()
                    ));
                }
                if t.last.launched && matches!(o, Outcome::Completed { .. }) {
                    tl.compile_us.push(t.last.timing.compile_us);
                    tl.run_us.push(t.last.timing.run_us);
                    tl.readback_us.push(t.last.timing.readback_us);
                }
                spawned_here = t.stats().spawned;
            }
            (w, spawned_here)
        }));
    }
    let mut spawned = 0;
    for h in handles {
        spawned += h.join().expect("worker thread").1;
    }
    let wall = start.elapsed();
    let mut tl = tally.lock().unwrap();
    let completed = tl.run_us.len();
    let (c50, c90) = (
        percentile(&mut tl.compile_us, 0.5),
        percentile(&mut tl.compile_us, 0.9),
    );
    let (r50, r90, r99, rmax) = (
        percentile(&mut tl.run_us, 0.5),
        percentile(&mut tl.run_us, 0.9),
        percentile(&mut tl.run_us, 0.99),
        percentile(&mut tl.run_us, 1.0),
    );
    let (b50, b90) = (
        percentile(&mut tl.readback_us, 0.5),
        percentile(&mut tl.readback_us, 0.9),
    );
    let summary = format!(
        "cases {n}, workers {workers}, wall {:.1} s, {:.1} cases/s per GPU\noutcomes {:#?}\nverdicts (each case in the edition of its rule: a mutator's edition, else the catalogue's) {:#?}\nverdicts with every case in the ptx93 edition {:#?}\nworker processes started: {spawned}\n\
         per completed case ({completed}): compile p50 {} us p90 {} us; launch+run p50 {} us p90 {} us p99 {} us max {} us; readback p50 {} us p90 {} us\n\
         harness errors: {}\ndiscrepancies (first {}):\n{}\ndiscrepancies with every case in the ptx93 edition (first {}):\n{}",
        wall.as_secs_f64(),
        n as f64 / wall.as_secs_f64(),
        tl.outcomes,
        tl.verdicts,
        tl.verdicts_ptx93,
        c50,
        c90,
        r50,
        r90,
        r99,
        rmax,
        b50,
        b90,
        tl.harness_errors.len(),
        tl.discrepancies.len(),
        tl.discrepancies.join("\n"),
        tl.discrepancies_ptx93.len(),
        tl.discrepancies_ptx93.join("\n"),
    );
    log("campaign.log", &summary);
    for e in &tl.harness_errors {
        log("harness-errors.log", e);
    }
    assert!(
        tl.harness_errors.is_empty(),
        "{} harness errors (see harness-errors.log)",
        tl.harness_errors.len()
    );
}

/// Per-case latency with one worker, JIT vs ptxas where a ptxas exists.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn single_worker_latency() {
    for compiler in ["jit", "ptxas"] {
        let mut cfg = Config::from_env(0);
        if compiler == "ptxas" {
            match cuda::find_ptxas() {
                Some(p) => cfg.ptxas = Some(p),
                None => {
                    log(
                        "latency.log",
                        "no ptxas on this machine: ptxas compile not measured",
                    );
                    continue;
                }
            }
        }
        let mut t = CudaTarget::new("cuda-emu", Flavour::Emu, cfg).expect("cuda-emu");
        let (mut c, mut r, mut b) = (vec![], vec![], vec![]);
        let start = Instant::now();
        let n = 200;
        for i in 0..n {
            let case = tcgen05_generators::valid_case(&emu_gen(), 5_000_000 + i);
            let o = t.run(&case);
            if matches!(o, Outcome::Completed { .. }) {
                c.push(t.last.timing.compile_us);
                r.push(t.last.timing.run_us);
                b.push(t.last.timing.readback_us);
            }
        }
        let wall = start.elapsed();
        log(
            "latency.log",
            &format!(
                "{compiler}: {n} cases in {:.2} s ({:.1}/s, one worker); compile p50 {} us; launch+run p50 {} us p99 {} us; readback p50 {} us",
                wall.as_secs_f64(),
                n as f64 / wall.as_secs_f64(),
                percentile(&mut c, 0.5),
                percentile(&mut r, 0.5),
                percentile(&mut r, 0.99),
                percentile(&mut b, 0.5)
            ),
        );
    }
}

/// The `cuda` compile path on a device without tcgen05: the driver JIT refuses sm_100a PTX
/// with its error log, and a ptxas guardrail build (`-g-tmem-access-check`) for sm_100a
/// assembles but the driver will not load it. Both are compile errors with the log, and the
/// worker survives them.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn hardware_compile_path_keeps_the_logs() {
    use tcgen05_drivers::cuda::protocol::{Compile, RunRequest, RunResult};
    use tcgen05_drivers::cuda::supervisor::{Ended, Limits, Supervisor, WorkerSpec};
    let exe = cuda::find_worker(Config::from_env(0).worker.as_ref()).expect("worker");
    let mut sup = Supervisor::start(
        WorkerSpec {
            exe,
            args: vec!["--device".into(), "0".into()],
            env: vec![],
        },
        Limits::default(),
    )
    .expect("device");
    if sup.device.cc.major >= 10 {
        log(
            "hardware-compile.log",
            "device has tcgen05: the refusal paths are not exercised here",
        );
        return;
    }
    let p = samples::single_warp_roundtrip();
    let layout = Layout::of(&p);
    let mut req = RunRequest {
        id: 1,
        ptx: ptx::emit(&p),
        kernel: "tc_kernel".into(),
        compile: Compile::Jit,
        grid_x: 1,
        block_x: 32,
        cluster_x: 1,
        dyn_smem: 0,
        obs_words: layout.total_words() as u32,
        status_words: 0,
        timeout_ms: 2000,
        jit_opt: None,
        runs: 1,
        runs_budget_ms: 0,
        perturb_seed: 0,
        batch: 0,
        done_word: 0,
        link: Default::default(),
    };
    let jit = sup.run(&req);
    let Ended::Reported {
        result: RunResult::CompileError { code, log: text },
        ..
    } = &jit
    else {
        panic!("{jit:?}")
    };
    assert!(*code != 0 && !text.is_empty(), "{jit:?}");
    log(
        "hardware-compile.log",
        &format!(
            "JIT of sm_100a PTX on cc {}: code {code}: {}",
            sup.device.cc,
            text.lines().take(3).collect::<Vec<_>>().join(" | ")
        ),
    );
    if let Some(ptxas) = cuda::find_ptxas() {
        req.id = 2;
        req.compile = Compile::Ptxas {
            path: ptxas.display().to_string(),
            arch: "sm_100a".into(),
            options: vec!["-g-tmem-access-check".into()],
        };
        let g = sup.run(&req);
        let Ended::Reported {
            result: RunResult::CompileError { code, log: text },
            ..
        } = &g
        else {
            panic!("{g:?}")
        };
        log(
            "hardware-compile.log",
            &format!(
                "ptxas -arch=sm_100a -g-tmem-access-check, loaded on cc {}: code {code}: {}",
                sup.device.cc,
                text.lines().take(2).collect::<Vec<_>>().join(" | ")
            ),
        );
    }
    assert_eq!(
        sup.stats.spawned, 1,
        "compile errors must not cost the worker"
    );
}

/// Every litmus family through `cuda-emu` with at least `TCGEN05_GPU_LITMUS_RUNS` (default
/// 10,000) runs per family, spread over its members, each member compiled once and every run
/// after the first perturbed; every distinct outcome judged against the oracle. Writes
/// `litmus-histograms.md` (per family: runs, distinct outcomes, forbidden runs, the allowed
/// alternatives of racing records seen and never seen; then each outcome with its runs) and
/// fails on any forbidden outcome.
#[test]
#[ignore = "needs a CUDA GPU: run scripts/gpu-tests"]
fn litmus_histograms() {
    use tcgen05_drivers::cuda::runs::Histogram;
    let per_family = env_u64("TCGEN05_GPU_LITMUS_RUNS", 10_000);
    let mut families = BTreeMap::<String, Histogram>::new();
    let mut forbidden = Vec::new();
    let started = Instant::now();
    for f in tcgen05_generators::litmus::FAMILIES {
        let members = (f.members)();
        let mut cfg = Config::from_env(0);
        // One member's runs stop after this much run time, and a run that does not complete
        // ends them: members whose runs are slow or hang make fewer, and the next round tops
        // the family up.
        cfg.runs_budget = Duration::from_secs(5);
        let mut t = CudaTarget::new("cuda-emu", Flavour::Emu, cfg)
            .unwrap_or_else(|e| panic!("cuda-emu unavailable: {e}"));
        let h = families.entry(f.name.to_string()).or_default();
        for _round in 0..4 {
            if h.runs >= per_family {
                break;
            }
            t.set_runs((per_family - h.runs).div_ceil(members.len() as u64) as u32);
            for m in &members {
                let c = case(m.program.clone(), m.intent.clone());
                let opts = tcgen05_oracle::Options::edition(edition_of(&c));
                let e = compared(&c, tcgen05_oracle::expect_with(&c.program, &opts));
                let observed = t.run_repeated(&c);
                let verdicts: Vec<Verdict> = observed
                    .iter()
                    .map(|o| diff::compare_bounded(&c.program, &e, &o.outcome, t.wait_bound()))
                    .collect();
                for (o, v) in observed.iter().zip(&verdicts) {
                    if let Verdict::Discrepancy(d) = v {
                        forbidden.push(format!(
                            "{}: run {} (perturbation {:#010x}, {} runs): {}",
                            m.name, o.first_run, o.perturbation, o.runs, d.detail
                        ));
                    }
                }
                let member = m.name.rsplit('/').next().unwrap_or(&m.name);
                h.add(member, &c.program, &e, &observed, &verdicts);
            }
        }
    }
    let runs: u64 = families.values().map(|h| h.runs).sum();
    let took = started.elapsed();
    let text = format!(
        "{runs} runs of {} litmus members in {took:.1?} ({:.0} runs/s with compiles)\n\n{}",
        families.values().map(|h| h.cases).sum::<u64>(),
        runs as f64 / took.as_secs_f64(),
        cuda::runs::markdown(&families)
    );
    log("litmus-histograms.md", &text);
    assert!(forbidden.is_empty(), "{forbidden:#?}");
    for (name, h) in &families {
        assert!(h.runs >= per_family, "{name}: {} runs", h.runs);
    }
}
