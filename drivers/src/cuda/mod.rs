//! The hardware targets: `cuda` / `cuda:<n>` (tcgen05 on a Blackwell device) and
//! `cuda-emu` / `cuda-emu:<n>` (the [`emu`] lowering on Hopper or newer).
//!
//! Both run each case in a worker process ([`worker`], [`protocol`]) under a per-case watchdog
//! ([`supervisor`]); the parent never loads the CUDA driver. The driver is loaded at run time
//! through cudarc ([`ffi`], the only unsafe code), so the project builds and tests everywhere;
//! on a machine without a driver or without a suitable device, [`build`] returns the reason.
//!
//! # Settings (environment)
//!
//! | variable | default | meaning |
//! | --- | --- | --- |
//! | `TCGEN05_CUDA_WORKER` | next to the running binary | the worker executable |
//! | `TCGEN05_CUDA_TIMEOUT_MS` | 10000 ([`DEFAULT_TIMEOUT`]) | watchdog per case: a kernel still running then is `Hung` (a `cuda-emu` case's grows with its emulated MMAs, see [`case_timeout`]) |
//! | `TCGEN05_CUDA_TRY_WAIT_NS` | [`DEFAULT_TRY_WAIT_NS`] | `cuda` only: how long one failing `mbarrier.try_wait` may take on the device; the watchdog of a case grows by its bounded waits' tries times this (see [`case_timeout`]) |
//! | `TCGEN05_CUDA_COMPILER` | `jit` | `jit` (driver JIT, `cuModuleLoadDataEx`) or `ptxas` |
//! | `TCGEN05_CUDA_JIT_OPT` | `cuda`: the compiler's default (4 for the JIT, 3 for ptxas); `cuda-emu`: [`EMU_JIT_OPT`] | optimization level 0-4 of the JIT (`CU_JIT_OPTIMIZATION_LEVEL`), or of ptxas (`-O<n>`); see [`Config::jit_opt`] |
//! | `TCGEN05_CUDA_RUNS` | [`DEFAULT_RUNS`] | runs of each compiled case (`--runs` sets it: [`set_runs`]); `cuda-emu` perturbs every run but the first ([`emu`] module docs) |
//! | `TCGEN05_CUDA_RUNS_BUDGET_MS` | [`DEFAULT_RUNS_BUDGET`] | run time of one case's runs after which no further run starts (a case whose runs are slow, a wait that gives up or a bounded spin, makes fewer) |
//! | `TCGEN05_CUDA_RUNNER` | `own` | `own`: each target's worker compiles and runs its cases; `shared`: each target's worker compiles them and the device's runner workers run them all ([`runner`]) |
//! | `TCGEN05_CUDA_RUNNERS` | [`runner::DEFAULT_RUNNERS`] | runner workers of a device with `TCGEN05_CUDA_RUNNER=shared` |
//! | `TCGEN05_CUDA_PREPARE` | `cuda-emu`: on; `cuda`: off | `1`: campaigns give the target claims of [`PIPELINE_DEPTH`] cases, and the worker compiles each case while the one before it runs; `0`: one case at a time ([`Config::prepare`]) |
//! | `TCGEN05_CUDA_PROFILE` | off | `1`: each target prints where its time went when it is dropped ([`Profile`]: its cases' compile and run time, kills by cause, and the cases by the time of their runs with each bucket's share of the run time); `2`: and a `trace` line a case (`CudaTarget::trace_case`) |
//! | `TCGEN05_CUDA_KILLED_DIR` | unset | with `TCGEN05_CUDA_PROFILE`: a folder where each case that cost its worker is written as `<target>-<id>.ptx` (for `tcgen05-fuzz reproduce`) |
//! | `TCGEN05_CUDA_GUARDRAIL` | off | `1`: compile `cuda` cases with `ptxas -g-tmem-access-check` |
//! | `TCGEN05_PTXAS` | `ptxas` on `PATH`, `/usr/local/cuda/bin/ptxas` | ptxas for `compiler=ptxas`, guardrails and `cuda-emu`'s routines ([`emu::routines_module`], compiled once per worker) |
//! | `TCGEN05_CUDA_FAKE` | unset | test double: the worker fakes a device (see [`worker`]) |

pub mod arch;
pub mod emu;
pub mod error;
#[cfg(feature = "cuda")]
mod ffi;
pub mod protocol;
pub mod runner;
pub mod runs;
pub mod supervisor;
pub mod worker;

use crate::outcome::{Diagnostic, HangSite, Outcome, Severity, TrapKind};
use crate::target::{Availability, Observed, Target, TargetInfo, TargetKind, Unavailable};
use error::{StartError, WorkerError};
use protocol::{Compile, DeviceInfo, Link, RunRequest, RunResult, Timing};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use supervisor::{Ended, Limits, Supervisor, WorkerSpec};
use tcgen05_ir::observe::{self, Layout};
use tcgen05_ir::{Case, Program};

/// The worker binary's file name.
pub const WORKER_BIN: &str = "tcgen05-cuda-worker";

/// Default of `TCGEN05_CUDA_TRY_WAIT_NS`: nanoseconds one `mbarrier.try_wait` on a phase that
/// does not complete may suspend its thread before it returns false. The PTX ISA leaves this
/// "system-dependent" and treats `suspendTimeHint` as a hint only. Measured on an H100 (driver
/// 580): 3.95 us a try, hint or not; the default doubles that for a margin (several
/// contexts time-slicing the GPU). Measure it on each Blackwell box (`mbarrier-wait.log` of
/// `scripts/gpu-tests`, whose kernel is plain sm_90 PTX) and set the variable.
pub const DEFAULT_TRY_WAIT_NS: u64 = 8_000;

/// Cases a campaign worker gives a CUDA target at once ([`Target::pipeline_depth`]) with
/// [`Config::prepare`]: within them the worker compiles each case while the one before it
/// runs, so only the first case of each batch waits for its own compile. Without it, one
/// case at a time. docs/blackwell.md has the measured effect.
pub const PIPELINE_DEPTH: u64 = 16;

/// Default runs of each compiled case (`TCGEN05_CUDA_RUNS`, `--runs`). A run (launch, wait,
/// readback of the host-mapped buffers) costs tens of microseconds against a compile of about
/// 200 ms, so the extra runs cost the campaign little; docs/blackwell.md has the measured
/// runs per second.
pub const DEFAULT_RUNS: u32 = 64;

/// Default of `TCGEN05_CUDA_TIMEOUT_MS`, the watchdog of a case. The campaign's jobs each own
/// a context on the one GPU, which time-slices between them, so a kernel's wall time can be
/// many times its GPU time: with 2 s, 6 of the 8 workers killed in a 60 s `cuda-emu`
/// campaign (16 jobs, H200) were slow kernels that had not hung (no wait, no emulated
/// violation recorded), and one was reported as a hang where the spec requires completion;
/// with 10 s, 1 (docs/blackwell.md). The emulation's own bounded spins (25 ms to 0.5 s,
/// [`emu::spin_rounds`]) report real hangs long before it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Default of `TCGEN05_CUDA_RUNS_BUDGET_MS`: the run time of a case's runs after which no
/// further run starts. Fast cases (tens of microseconds a run) make all their runs; a case
/// whose runs take long (a bounded wait that gives up: 0.13 s a run) stops after about this
/// much, so a few slow cases do not take the GPU from the rest (docs/blackwell.md).
pub const DEFAULT_RUNS_BUDGET: Duration = Duration::from_millis(50);

/// The `--runs` of the command line: when non-zero, it overrides `TCGEN05_CUDA_RUNS` for the
/// targets built afterwards.
static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Sets the runs of each compiled case for the CUDA targets built from now on (`--runs N`;
/// 0 goes back to `TCGEN05_CUDA_RUNS` or [`DEFAULT_RUNS`]).
pub fn set_runs(n: u32) {
    RUNS.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// The most a case's bounded waits (or a `cuda-emu` case's emulated MMAs) may add to its
/// watchdog (a wait of `u32::MAX` tries is a deliberate deadlock, not a slow give-up).
pub const MAX_WAIT_BUDGET: Duration = Duration::from_secs(60);

/// Upper bound of the `mbarrier.try_wait` tries a run of `p` can make in all: every bounded
/// wait (`MbarWait`) counted with the iterations of the loops around it and once per call of
/// its function, summed over the warp programs (a wait that gives up can let
/// another warp reach its own wait only afterwards, so the sum, not the maximum, bounds the
/// time; every CTA runs the same warp programs at once). Saturates instead of overflowing.
pub fn bounded_wait_tries(p: &Program) -> u64 {
    issued_sum(p, &|s| match s {
        tcgen05_ir::Stmt::MbarWait { max_tries, .. } => u64::from(*max_tries),
        _ => 0,
    })
}

/// The sum of `weight` over the statements a run of `p` can execute: each statement counted
/// with the iterations of the loops around it, both arms of an `If`, once per call of its
/// function (call chains deeper than 16, which the lowering refuses, count nothing more),
/// summed over the warp programs. Saturates instead of overflowing.
pub fn issued_sum(p: &Program, weight: &dyn Fn(&tcgen05_ir::Stmt) -> u64) -> u64 {
    fn sum(
        p: &Program,
        body: &[tcgen05_ir::Stmt],
        depth: u32,
        weight: &dyn Fn(&tcgen05_ir::Stmt) -> u64,
    ) -> u64 {
        use tcgen05_ir::Stmt;
        if depth > 16 {
            return 0;
        }
        body.iter().fold(0u64, |acc, s| {
            let n = match s {
                Stmt::Loop { count, body } => {
                    u64::from(*count).saturating_mul(sum(p, body, depth, weight))
                }
                Stmt::If { then, els, .. } => {
                    sum(p, then, depth, weight).saturating_add(sum(p, els, depth, weight))
                }
                Stmt::Call(f) => p
                    .funcs
                    .get(usize::from(*f))
                    .map_or(0, |f| sum(p, &f.body, depth + 1, weight)),
                s => weight(s),
            };
            acc.saturating_add(n)
        })
    }
    p.warps
        .iter()
        .fold(0u64, |acc, w| acc.saturating_add(sum(p, w, 0, weight)))
}

/// Watchdog time a `cuda-emu` case gets per multiply-add of its emulated MMAs
/// ([`emulated_macs`]), nanoseconds. The issuing thread computes D alone, from registers
/// (`emu::mma`): on the lent H200 (driver 580) one multiply-add of a 128×256×16 f16 MMA takes
/// 4.35 ns (`cuda_emu_mma::one_emulated_multiply_add_time`); an e4m3 one about 1.5 times the
/// instructions (the column loop's SASS: 127 per 32 multiply-adds against 41 per 16 for f16).
/// 250 ns covers 16 contexts time-sliced as in a 16-job campaign, with room for
/// the slower kinds (docs/blackwell.md §7).
pub const EMU_MAC_BUDGET_NS: u64 = 250;

/// Multiply-adds the emulated MMAs of a run of `p` compute in all ([`emu::mma_macs`] of each
/// MMA, counted as [`issued_sum`] counts statements).
pub fn emulated_macs(p: &Program) -> u64 {
    issued_sum(p, &|s| match s {
        tcgen05_ir::Stmt::Tc(tcgen05_ir::Op::Mma(m)) => emu::mma_macs(m, &p.smem.regions),
        _ => 0,
    })
}

/// The watchdog of one case. A `cuda-emu` case gets `cfg.timeout` plus
/// [`EMU_MAC_BUDGET_NS`] per multiply-add of its emulated MMAs, at most [`MAX_WAIT_BUDGET`]
/// more: the emulation's tries are non-blocking tests (see [`emu`]), so 2^20 of them take
/// milliseconds, but its MMAs are computed by one thread each. A `cuda` case runs
/// the program's own `mbarrier.try_wait` loops, and each failing try may suspend for a
/// system-dependent time (`cfg.try_wait_ns`), so a wait that must give up needs up to
/// `max_tries * try_wait_ns`: the case gets `cfg.timeout` plus that for all its bounded waits
/// ([`bounded_wait_tries`]), at most [`MAX_WAIT_BUDGET`] more. Without it, a program whose
/// bounded wait must give up (the oracle's expectation) would be reported `Hung`.
pub fn case_timeout(flavour: Flavour, cfg: &Config, p: &Program) -> Duration {
    match flavour {
        Flavour::Emu => {
            let ns = emulated_macs(p).saturating_mul(EMU_MAC_BUDGET_NS);
            cfg.timeout + Duration::from_nanos(ns).min(MAX_WAIT_BUDGET)
        }
        Flavour::Hardware => {
            let ns = bounded_wait_tries(p).saturating_mul(cfg.try_wait_ns);
            cfg.timeout + Duration::from_nanos(ns).min(MAX_WAIT_BUDGET)
        }
    }
}

/// Whether this build can drive CUDA devices at all (the `cuda` feature).
pub fn support_compiled_in() -> bool {
    cfg!(feature = "cuda")
}

/// Which flavour a [`CudaTarget`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// tcgen05 on the device itself (Blackwell).
    Hardware,
    /// The sm_90 emulation.
    Emu,
}

/// Settings of a CUDA target.
#[derive(Debug, Clone)]
pub struct Config {
    /// Device ordinal.
    pub device: u32,
    /// Watchdog per case (a `cuda` case's grows with its bounded waits, a `cuda-emu` case's with
    /// its emulated MMAs: [`case_timeout`]).
    pub timeout: Duration,
    /// `cuda` only: nanoseconds a failing `mbarrier.try_wait` may take ([`DEFAULT_TRY_WAIT_NS`]).
    pub try_wait_ns: u64,
    /// Compile through ptxas instead of the driver JIT.
    pub ptxas: Option<PathBuf>,
    /// Optimization level (0-4) of the JIT or ptxas; `None`: the compiler's default (`cuda`),
    /// [`EMU_JIT_OPT`] (`cuda-emu`). Measured on the lent H200 (docs/blackwell.md): ptxas 13.0
    /// compiled 27 lowered generated programs in 6.27 s of CPU at `-O3` and 1.96 s at `-O0`,
    /// but in a 60 s `cuda-emu` campaign (16 jobs, the lowering before its routines) the JIT
    /// at level 0 saved only a quarter of the compile time (331 to 249 ms a case) and 5 cases
    /// hung where the oracle requires completion (none at the default).
    pub jit_opt: Option<u32>,
    /// `cuda` only: compile with `-g-tmem-access-check` (needs ptxas).
    pub guardrail: bool,
    /// The worker executable.
    pub worker: Option<PathBuf>,
    /// Worker environment (e.g. the fake device of the tests).
    pub worker_env: Vec<(String, String)>,
    /// Watchdog limits of the parent.
    pub limits: Limits,
    /// Runs of each compiled case (at least 1; [`DEFAULT_RUNS`]).
    pub runs: u32,
    /// Run time of a case's runs after which no further run starts ([`DEFAULT_RUNS_BUDGET`]).
    pub runs_budget: Duration,
    /// `cuda-emu` only: runs per launch (`TCGEN05_CUDA_BATCH`; 0: as many copies of the case
    /// as the device has multiprocessors, [`batch_for`]; 1: one run per launch).
    pub batch: u32,
    /// Whether the worker compiles the next case of a batch while the current one runs
    /// (`TCGEN05_CUDA_PREPARE`: `1` on, `0` off; [`CudaTarget::run_programs_repeated`]).
    /// `None`: on for `cuda-emu`, whose 40 s campaigns on the lent H200 judged 152 cases/s
    /// with it against 139 without, and 145 against 140 in another device call (16 jobs;
    /// docs/blackwell.md §6, "Compiling ahead"); off for `cuda`, not yet measured on a
    /// Blackwell box.
    pub prepare: Option<bool>,
    /// Where the cases run (`TCGEN05_CUDA_RUNNER`, [`runner::Choice`]); `Err`: the variable's
    /// value is not one, and the target is unavailable with this reason.
    pub runner: Result<runner::Choice, String>,
}

impl Config {
    /// Settings from the environment (module documentation) for device `device`.
    pub fn from_env(device: u32) -> Config {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let timeout = var("TCGEN05_CUDA_TIMEOUT_MS")
            .and_then(|v| v.trim().parse().ok())
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        let try_wait_ns = var("TCGEN05_CUDA_TRY_WAIT_NS")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_TRY_WAIT_NS);
        let guardrail = var("TCGEN05_CUDA_GUARDRAIL").is_some_and(|v| v != "0");
        let want_ptxas = var("TCGEN05_CUDA_COMPILER").is_some_and(|v| v == "ptxas") || guardrail;
        let ptxas = if want_ptxas { find_ptxas() } else { None };
        let jit_opt = var("TCGEN05_CUDA_JIT_OPT")
            .and_then(|v| v.trim().parse::<u32>().ok())
            .map(|v| v.min(4));
        let mut worker_env = Vec::new();
        if let Some(f) = var("TCGEN05_CUDA_FAKE") {
            worker_env.push(("TCGEN05_CUDA_FAKE".to_string(), f));
        }
        let runs = match RUNS.load(std::sync::atomic::Ordering::Relaxed) {
            0 => var("TCGEN05_CUDA_RUNS")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(DEFAULT_RUNS),
            n => n,
        }
        .max(1);
        let runs_budget = var("TCGEN05_CUDA_RUNS_BUDGET_MS")
            .and_then(|v| v.trim().parse().ok())
            .map_or(DEFAULT_RUNS_BUDGET, Duration::from_millis);
        let batch = var("TCGEN05_CUDA_BATCH")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let prepare = var("TCGEN05_CUDA_PREPARE").map(|v| v.trim() == "1");
        Config {
            runs,
            runs_budget,
            batch,
            prepare,
            runner: runner::Choice::from_env(),
            device,
            timeout,
            try_wait_ns,
            ptxas,
            jit_opt,
            guardrail,
            worker: var("TCGEN05_CUDA_WORKER").map(PathBuf::from),
            worker_env,
            limits: Limits::default(),
        }
    }
}

/// The optimization level of a `cuda-emu` case's own code where `TCGEN05_CUDA_JIT_OPT` does
/// not set one. The emulation's loops and checks are in its routines
/// ([`emu::routines_module`]), compiled once at ptxas's default level; what is left in a case
/// is mostly straight-line code, which level 1 compiles in about 0.7 of the time of the
/// default (4; docs/blackwell.md, "The JIT"), without the slower kernels of level 0.
pub const EMU_JIT_OPT: u32 = 1;

/// A ptxas: `TCGEN05_PTXAS`, then `ptxas` on `PATH`, then `/usr/local/cuda/bin/ptxas`.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("TCGEN05_PTXAS") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Some(p);
        }
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let p = dir.join("ptxas");
        if p.is_file() {
            return Some(p);
        }
    }
    let p = PathBuf::from("/usr/local/cuda/bin/ptxas");
    p.is_file().then_some(p)
}

/// The worker executable: `configured`, else `tcgen05-cuda-worker` next to the running
/// binary or one folder up (test binaries live in `target/<profile>/deps`).
pub fn find_worker(configured: Option<&PathBuf>) -> Result<PathBuf, WorkerError> {
    if let Some(p) = configured {
        return if p.is_file() {
            Ok(p.clone())
        } else {
            Err(WorkerError::NotAFile(p.clone()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| WorkerError::CurrentExe(e.to_string()))?;
    let name = format!("{WORKER_BIN}{}", std::env::consts::EXE_SUFFIX);
    let mut tried = Vec::new();
    for dir in exe.ancestors().skip(1).take(2) {
        let p = dir.join(&name);
        if p.is_file() {
            return Ok(p);
        }
        tried.push(p.display().to_string());
    }
    Err(WorkerError::NotFound {
        name,
        tried: tried.join(", "),
    })
}

/// How to start the worker for `cfg`: the worker binary ([`find_worker`]), or else, when the
/// running binary is the `tcgen05-fuzz` command, that binary itself in worker mode (it must call
/// [`worker::serve_if_requested`] first thing in `main`).
pub fn worker_spec(cfg: &Config) -> Result<WorkerSpec, WorkerError> {
    let mut env = cfg.worker_env.clone();
    match find_worker(cfg.worker.as_ref()) {
        Ok(exe) => Ok(WorkerSpec {
            exe,
            args: vec!["--device".into(), cfg.device.to_string()],
            env,
        }),
        Err(e) => {
            let exe = std::env::current_exe().map_err(|_| e.clone())?;
            let is_cli = exe
                .file_stem()
                .is_some_and(|n| n.to_string_lossy() == "tcgen05-fuzz");
            if cfg.worker.is_some() || !is_cli {
                return Err(e);
            }
            env.push((worker::WORKER_MODE_VAR.to_string(), cfg.device.to_string()));
            Ok(WorkerSpec {
                exe,
                args: vec![],
                env,
            })
        }
    }
}

/// Parses a target name: `Some((flavour, device))` for `cuda`, `cuda:<n>`, `cuda-emu`,
/// `cuda-emu:<n>`.
pub fn parse_name(name: &str) -> Option<(Flavour, u32)> {
    let (flavour, rest) = if let Some(r) = name.strip_prefix("cuda-emu") {
        (Flavour::Emu, r)
    } else if let Some(r) = name.strip_prefix("cuda") {
        (Flavour::Hardware, r)
    } else {
        return None;
    };
    if rest.is_empty() {
        return Some((flavour, 0));
    }
    let n = rest.strip_prefix(':')?;
    n.parse().ok().map(|d| (flavour, d))
}

/// Builds `cuda`, `cuda:<n>`, `cuda-emu` or `cuda-emu:<n>` with settings from the
/// environment: `None` if the name is not this module's; `Some(Err(reason))` when the
/// device cannot be used here (no driver, no device, wrong compute capability, no worker).
pub fn build(name: &str) -> Option<Result<Box<dyn Target>, Unavailable>> {
    let (flavour, device) = parse_name(name)?;
    Some(
        CudaTarget::new(name, flavour, Config::from_env(device))
            .map(|t| Box::new(t) as Box<dyn Target>),
    )
}

/// Every name this module knows, with its availability here (starts a worker per name to ask
/// the device, so it takes a moment on a GPU machine).
pub fn candidates() -> Vec<TargetInfo> {
    let mut v = Vec::new();
    for (name, flavour, desc) in [
        (
            "cuda",
            Flavour::Hardware,
            "tcgen05 on the CUDA device 0 (Blackwell, sm_100a/sm_103a/sm_110a), in a worker process",
        ),
        (
            "cuda-emu",
            Flavour::Emu,
            "tcgen05 emulated in shared memory on a Hopper (or newer) CUDA device 0",
        ),
    ] {
        let (availability, version) = match CudaTarget::new(name, flavour, Config::from_env(0)) {
            Ok(t) => (Availability::Available, Some(t.version())),
            Err(e) => (Availability::Unavailable(e.0), None),
        };
        v.push(TargetInfo {
            name: name.to_string(),
            kind: TargetKind::Running,
            version,
            availability,
            description: desc.to_string(),
        });
    }
    v
}

/// Per-case figures kept by a [`CudaTarget`] (for throughput and latency reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CaseTiming {
    /// The worker's times.
    pub timing: Timing,
    /// Whether the case reached the device.
    pub launched: bool,
}

/// `TCGEN05_CUDA_PROFILE`: 0 (unset or not a number), 1 (the profile when a target is
/// dropped, the cases that cost a worker) or 2 (and a `trace` line a case).
fn profile_level() -> u8 {
    std::env::var("TCGEN05_CUDA_PROFILE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Where a [`CudaTarget`]'s time went, summed over its cases (`TCGEN05_CUDA_PROFILE=1`
/// prints it when the target is dropped).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Profile {
    /// Cases given to the target.
    pub cases: u64,
    /// Of those, the cases that reached the worker (the others were not run: not emulated).
    pub sent: u64,
    /// Kernel runs made (several per case with [`Config::runs`]).
    pub runs: u64,
    /// Microseconds preparing the requests (the emulation's lowering, the PTX printer).
    pub prepare_us: u64,
    /// Microseconds from sending a request to its end, seen from the parent.
    pub worker_us: u64,
    /// Of those, the worker's compile and load, and readback times (the run time is
    /// [`Profile::run_us`]).
    pub compile_us: u64,
    /// See `compile_us`.
    pub readback_us: u64,
    /// Cases that cost their worker, by cause ([`KILL_CAUSES`]).
    pub kills: [u64; 5],
    /// Cases by the run time of their runs, one count per [`RUN_BUCKETS`] entry.
    pub run_cases: [u64; RUN_BUCKETS.len()],
    /// The run time of each bucket's cases, microseconds: how much of the run time a few
    /// long cases take.
    pub run_bucket_us: [u64; RUN_BUCKETS.len()],
}

/// The buckets of [`Profile::run_cases`]: the upper bound of each (exclusive, microseconds)
/// and its name in the profile line.
pub const RUN_BUCKETS: [(u64, &str); 7] = [
    (1_000, "< 1 ms"),
    (4_000, "1-4 ms"),
    (16_000, "4-16 ms"),
    (64_000, "16-64 ms"),
    (256_000, "64-256 ms"),
    (1_000_000, "256 ms-1 s"),
    (u64::MAX, ">= 1 s"),
];

impl Profile {
    /// Counts a case whose runs took `run_us` in all.
    pub fn count_runs(&mut self, run_us: u64) {
        let i = RUN_BUCKETS
            .iter()
            .position(|(bound, _)| run_us < *bound)
            .unwrap_or(RUN_BUCKETS.len() - 1);
        self.run_cases[i] += 1;
        self.run_bucket_us[i] += run_us;
    }

    /// Microseconds the cases' runs took in all.
    pub fn run_us(&self) -> u64 {
        self.run_bucket_us.iter().sum()
    }
}

/// The causes of [`Profile::kills`]: the kernel still ran at its watchdog (hung), a sticky
/// fault poisoned the context, the worker died, stopped answering, or overran the compile
/// limit.
pub const KILL_CAUSES: [&str; 5] = [
    "watchdog",
    "sticky fault",
    "worker died",
    "unresponsive",
    "compile timeout",
];

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |us: u64| us as f64 / 1000.0;
        write!(
            f,
            "{} cases, {} sent to the worker, {} runs; prepare {:.0} ms, worker {:.0} ms (compile {:.0} ms, run {:.0} ms, readback {:.0} ms)",
            self.cases,
            self.sent,
            self.runs,
            ms(self.prepare_us),
            ms(self.worker_us),
            ms(self.compile_us),
            ms(self.run_us()),
            ms(self.readback_us)
        )?;
        for (cause, n) in KILL_CAUSES.iter().zip(self.kills) {
            write!(f, "; killed by {cause}: {n}")?;
        }
        if self.run_cases.iter().any(|n| *n > 0) {
            // Each bucket's cases, and its share of the run time.
            let total = self.run_us().max(1);
            f.write_str("; a case's runs took")?;
            for (i, ((_, name), (n, us))) in RUN_BUCKETS
                .iter()
                .zip(self.run_cases.iter().zip(self.run_bucket_us))
                .enumerate()
            {
                let sep = if i == 0 { " " } else { ", " };
                write!(f, "{sep}{name}: {n} ({}%)", 100 * us / total)?;
            }
            f.write_str(" of the run time")?;
        }
        Ok(())
    }
}

/// Runs per launch of a `cuda-emu` case of `ctas` CTAs: `configured` if set, else one copy
/// of the case per multiprocessor group of `ctas` (each emulated CTA takes most of a
/// multiprocessor's shared memory, so one wave runs them all), at least 1.
pub fn batch_for(configured: u32, sm_count: u32, ctas: u32) -> u32 {
    match configured {
        0 => (sm_count / ctas.max(1)).max(1),
        n => n,
    }
}

/// The `cuda` / `cuda-emu` target.
#[derive(Debug)]
pub struct CudaTarget {
    name: String,
    flavour: Flavour,
    cfg: Config,
    /// The target's own worker: it compiles every case, and runs them too without a shared
    /// runner.
    sup: Supervisor,
    /// The device's runners ([`runner`]) with `TCGEN05_CUDA_RUNNER=shared`.
    runner: Option<Arc<runner::Runners>>,
    dev: DeviceInfo,
    device_targets: Option<arch::DeviceTargets>,
    /// Figures of the last case run.
    pub last: CaseTiming,
    /// Figures of all cases run.
    pub profile: Profile,
    /// With runners, the last case's microseconds: the compile's round trip, the wait for a
    /// free runner, the run's round trip, and the compile time the worker reported
    /// (`TCGEN05_CUDA_PROFILE=2` traces them).
    split: Vec<u64>,
    /// The id of the last request made (ids grow, so the worker can tell a prepared case
    /// the parent abandoned).
    next_id: u64,
    /// `cuda-emu`: what its modules are linked with (the emulation's routines).
    link: Link,
}

impl CudaTarget {
    /// Starts a worker on the configured device and checks that it suits `flavour`.
    pub fn new(name: &str, flavour: Flavour, cfg: Config) -> Result<CudaTarget, Unavailable> {
        if !support_compiled_in() {
            return Err(Unavailable(
                "this build has no CUDA support (the `cuda` feature of tcgen05-drivers is off)"
                    .into(),
            ));
        }
        if flavour == Flavour::Hardware && cfg.guardrail && cfg.ptxas.is_none() {
            return Err(Unavailable("guardrail mode (TCGEN05_CUDA_GUARDRAIL) needs ptxas: set TCGEN05_PTXAS or put ptxas on PATH".into()));
        }
        let spec = worker_spec(&cfg).map_err(|e| Unavailable(e.to_string()))?;
        let runner = cfg
            .runner
            .clone()
            .map_err(Unavailable)?
            .runners(&spec, cfg.limits);
        let sup = Supervisor::start(spec, cfg.limits)
            .map_err(|e: StartError| Unavailable(e.to_string()))?;
        let dev = sup.device.clone();
        let device_targets = match flavour {
            Flavour::Hardware => Some(arch::tcgen05_targets(dev.cc).map_err(|e| {
                Unavailable(format!("{} (device {}: {})", e, dev.ordinal, dev.name))
            })?),
            Flavour::Emu => {
                arch::emu_supported(dev.cc).map_err(|e| Unavailable(e.to_string()))?;
                None
            }
        };
        // The routines compile once per worker where a ptxas is found (`emu::routines_module`).
        let link = match flavour {
            Flavour::Emu => Link::EmuRoutines {
                ptxas: cfg
                    .ptxas
                    .clone()
                    .or_else(find_ptxas)
                    .map(|p| p.display().to_string()),
                arch: format!("sm_{}{}", dev.cc.major, dev.cc.minor),
            },
            Flavour::Hardware => Link::Alone,
        };
        Ok(CudaTarget {
            name: name.to_string(),
            flavour,
            cfg,
            sup,
            runner,
            dev,
            device_targets,
            last: CaseTiming::default(),
            profile: Profile::default(),
            split: Vec::new(),
            next_id: 0,
            link,
        })
    }

    /// Sets the runs of each compiled case from now on ([`Config::runs`], at least 1).
    pub fn set_runs(&mut self, runs: u32) {
        self.cfg.runs = runs.max(1);
    }

    /// The device in use.
    pub fn device(&self) -> &DeviceInfo {
        &self.dev
    }

    /// Counters (spawned, killed, cases) of the workers that ran this target's cases: the
    /// runner's with one (shared by the targets of the process with `runner::Choice::Shared`;
    /// zero before its first case), else the target's own worker's.
    pub fn stats(&self) -> supervisor::Stats {
        match &self.runner {
            Some(r) => r.stats().unwrap_or_default(),
            None => self.sup.stats,
        }
    }

    /// Counters of the target's own worker (which compiles every case, and runs them with
    /// [`runner::Choice::Own`]).
    pub fn worker_stats(&self) -> supervisor::Stats {
        self.sup.stats
    }

    /// The optimization level of this target's compiles ([`Config::jit_opt`]; `cuda-emu`
    /// without one: [`EMU_JIT_OPT`]).
    fn jit_opt(&self) -> Option<u32> {
        match self.flavour {
            Flavour::Emu => Some(self.cfg.jit_opt.unwrap_or(EMU_JIT_OPT)),
            Flavour::Hardware => self.cfg.jit_opt,
        }
    }

    /// The request for one case, or the outcome that replaces running it.
    fn request(&self, id: u64, p: &Program) -> Result<RunRequest, Outcome> {
        let l = &p.launch;
        let layout = Layout::of(p);
        let (ptx, dyn_smem, status_words, compile) = match self.flavour {
            Flavour::Emu => {
                let cfg = emu::EmuConfig {
                    max_dyn_smem: self.dev.max_smem_optin,
                };
                let low = emu::lower(p, &cfg).map_err(|e| Outcome::NotRun(e.to_string()))?;
                let compile = match &self.cfg.ptxas {
                    Some(path) => Compile::Ptxas {
                        path: path.display().to_string(),
                        arch: format!("sm_{}{}", self.dev.cc.major, self.dev.cc.minor),
                        options: self
                            .jit_opt()
                            .map(|o| format!("-O{o}"))
                            .into_iter()
                            .collect(),
                    },
                    None => Compile::Jit,
                };
                (low.ptx, low.dyn_smem, emu::STATUS_WORDS, compile)
            }
            Flavour::Hardware => {
                let dt = self
                    .device_targets
                    .expect("hardware targets have device targets");
                let r = arch::retarget(l.target, (l.ptx_version.major, l.ptx_version.minor), dt);
                let ptx = arch::apply_retarget(&tcgen05_ir::ptx::emit(p), &r);
                let compile = match &self.cfg.ptxas {
                    Some(path) => Compile::Ptxas {
                        path: path.display().to_string(),
                        arch: r.target,
                        options: self
                            .cfg
                            .guardrail
                            .then(|| "-g-tmem-access-check".to_string())
                            .into_iter()
                            .chain(self.jit_opt().map(|o| format!("-O{o}")))
                            .collect(),
                    },
                    None => Compile::Jit,
                };
                (ptx, 0, 0, compile)
            }
        };
        Ok(RunRequest {
            id,
            kernel: "tc_kernel".into(),
            compile,
            grid_x: l.ctas(),
            block_x: l.threads_per_cta(),
            cluster_x: u32::from(l.cluster_size),
            dyn_smem,
            obs_words: layout.total_words() as u32,
            status_words,
            timeout_ms: case_timeout(self.flavour, &self.cfg, p).as_millis() as u64,
            jit_opt: self.jit_opt(),
            runs: self.cfg.runs,
            runs_budget_ms: self.cfg.runs_budget.as_millis().max(1) as u64,
            perturb_seed: fnv1a(ptx.as_bytes()),
            batch: match self.flavour {
                Flavour::Emu => batch_for(self.cfg.batch, self.dev.sm_count, l.ctas()),
                // The native kernel has one observation buffer and no status block.
                Flavour::Hardware => 1,
            },
            done_word: emu::DONE_WORD,
            link: self.link.clone(),
            ptx,
        })
    }

    /// Runs a program and returns the outcome of its first run (or of the run that ended the
    /// series in a fault or a hang), with the figures of the runs.
    pub fn run_program(&mut self, p: &Program) -> Outcome {
        let mut v = self.run_program_repeated(p);
        // The run that ended the series, if it did not complete, is the last.
        let last = v.len() - 1;
        if !matches!(v[last].outcome, Outcome::Completed { .. }) {
            return v.swap_remove(last).outcome;
        }
        v.swap_remove(0).outcome
    }

    /// Runs a program [`Config::runs`] times (one compile) and returns each distinct outcome
    /// with its count, in the order first seen; an outcome other than a completion ends the
    /// series and comes last.
    pub fn run_program_repeated(&mut self, p: &Program) -> Vec<Observed> {
        let req = self.prepared_request(p);
        self.run_request(p, req)
    }

    /// [`CudaTarget::run_program_repeated`] for each program in order, the worker compiling
    /// each program's module while the one before it runs (`Request::Prepare`, protocol
    /// docs), so the GPU's run time and the judging no longer wait for the compile.
    pub fn run_programs_repeated(&mut self, ps: &[&Program]) -> Vec<Vec<Observed>> {
        let reqs: Vec<_> = ps.iter().map(|p| self.prepared_request(p)).collect();
        let mut out = Vec::with_capacity(ps.len());
        for (i, (p, req)) in ps.iter().zip(&reqs).enumerate() {
            if let Some(Ok(next)) = reqs.get(i + 1).filter(|_| self.prepares()) {
                self.sup.prepare(next);
            }
            out.push(self.run_request(p, req.clone()));
        }
        out
    }

    /// Whether the worker compiles the next case while this one runs ([`Config::prepare`],
    /// by default only `cuda-emu`; not with a shared runner, where the target's worker only
    /// compiles).
    fn prepares(&self) -> bool {
        let on = self
            .cfg
            .prepare
            .unwrap_or(matches!(self.flavour, Flavour::Emu));
        on && self.runner.is_none()
    }

    /// Runs `req` under the watchdog: compiled by the target's worker and run by the device's
    /// runner ([`runner`]), or both in the target's worker.
    fn dispatch(&mut self, req: &RunRequest) -> Ended {
        self.split.clear();
        let Some(runner) = &self.runner else {
            return self.sup.run(req);
        };
        let t0 = std::time::Instant::now();
        let (image, compile_us) = match self.sup.compile(req) {
            Ok(c) => c,
            Err(ended) => return *ended,
        };
        let t1 = std::time::Instant::now();
        let (ended, waited_us) = runner.run(req, image, compile_us);
        let run_us = t1.elapsed().as_micros() as u64;
        self.split = vec![
            (t1 - t0).as_micros() as u64,
            waited_us,
            run_us.saturating_sub(waited_us),
            compile_us,
        ];
        ended
    }

    /// The request for `p` under the next case id, counted in the profile's preparation time.
    fn prepared_request(&mut self, p: &Program) -> Result<RunRequest, Outcome> {
        self.next_id += 1;
        let t0 = std::time::Instant::now();
        let req = self.request(self.next_id, p);
        self.profile.prepare_us += t0.elapsed().as_micros() as u64;
        req
    }

    /// Runs `p`'s request (or returns the outcome that replaced it) and returns each
    /// distinct outcome of its runs ([`CudaTarget::run_program_repeated`]).
    fn run_request(&mut self, p: &Program, req: Result<RunRequest, Outcome>) -> Vec<Observed> {
        self.last = CaseTiming::default();
        self.profile.cases += 1;
        let req = match req {
            Ok(r) => r,
            Err(o) => return vec![Observed::once(o)],
        };
        self.profile.sent += 1;
        let t1 = std::time::Instant::now();
        let mut ended = self.dispatch(&req);
        // A sticky fault kills every copy of its launch, so which run faulted is not known:
        // the runs are replayed one per launch on the fresh worker, which names it.
        if req.batch > 1
            && let Ended::Reported {
                result: RunResult::Fault { sticky: true, .. },
                ..
            } = &ended
        {
            ended = self.dispatch(&RunRequest {
                batch: 1,
                ..req.clone()
            });
        }
        self.profile.worker_us += t1.elapsed().as_micros() as u64;
        self.count_kill(&ended, &req, p);
        if let Ended::Reported { result, .. } = &ended
            && let RunResult::Completed { timing, .. }
            | RunResult::Hung { timing, .. }
            | RunResult::Fault { timing, .. } = result
        {
            self.profile.compile_us += timing.compile_us;
            self.profile.count_runs(timing.run_us);
            self.profile.readback_us += timing.readback_us;
        }
        if profile_level() >= 2 {
            self.trace_case(&ended, &req, p, t1.elapsed().as_micros() as u64);
        }
        let layout = Layout::of(p);
        let seed = req.perturb_seed;
        let single = match ended {
            Ended::Reported {
                result,
                compile_us,
                classes,
                runs_done,
            } => {
                self.last.launched =
                    compile_us > 0 || !matches!(result, RunResult::CompileError { .. });
                self.profile.runs += u64::from(runs_done.max(1));
                if classes.is_empty() {
                    return vec![Observed::once(self.outcome(result, &layout))];
                }
                let of = runs_done;
                let mut v: Vec<Observed> = classes
                    .into_iter()
                    .map(|c| Observed {
                        outcome: self.outcome(
                            RunResult::Completed {
                                words: c.words,
                                status: c.status,
                                timing: Timing::default(),
                            },
                            &layout,
                        ),
                        runs: c.runs,
                        first_run: c.first_run,
                        perturbation: protocol::perturbation(seed, c.first_run),
                        of,
                    })
                    .collect();
                if !matches!(result, RunResult::Completed { .. }) {
                    let r = runs_done.saturating_sub(1);
                    v.push(Observed {
                        outcome: self.outcome(result, &layout),
                        runs: 1,
                        first_run: r,
                        perturbation: protocol::perturbation(seed, r),
                        of,
                    });
                }
                return v;
            }
            Ended::CompileTimeout { limit_ms } => Outcome::TimedOut { limit_ms },
            Ended::Unresponsive { waited_ms } => Outcome::Hung {
                blocked: vec![HangSite {
                    cta: 0,
                    warp: 0,
                    lane: 0,
                    checkpoint: 0,
                    blocked_on: Some(format!(
                        "the worker stopped answering for {waited_ms} ms after the launch; killed"
                    )),
                }],
                words: vec![],
            },
            Ended::WorkerDied { detail, launched } => Outcome::Crashed {
                detail: format!(
                    "CUDA worker died {} the launch: {detail}",
                    if launched { "after" } else { "before" }
                ),
            },
            Ended::NoWorker(e) => Outcome::Crashed {
                detail: e.to_string(),
            },
        };
        vec![Observed::once(single)]
    }

    /// `TCGEN05_CUDA_PROFILE=2`: one line a case on standard error, `trace` and then the
    /// case id, CTAs, warps a CTA, copies a launch, runs done, the worker's compile, run and
    /// readback microseconds, the parent's microseconds for the request, the bounded waits'
    /// tries, how the worker ended the case, and with runners the compile's round trip, the wait
    /// for a free runner, the run's round trip and the compile time the worker reported.
    fn trace_case(&self, ended: &Ended, req: &RunRequest, p: &Program, worker_us: u64) {
        let (how, runs, t) = match ended {
            Ended::Reported {
                result, runs_done, ..
            } => {
                let (how, t) = match result {
                    RunResult::Completed { timing, .. } => ("completed", *timing),
                    RunResult::Hung { timing, .. } => ("hung", *timing),
                    RunResult::Fault { timing, .. } => ("fault", *timing),
                    RunResult::CompileError { .. } => ("compile-error", Timing::default()),
                    RunResult::LaunchError { .. } => ("launch-error", Timing::default()),
                    RunResult::WorkerError(_) => ("worker-error", Timing::default()),
                };
                (how, *runs_done, t)
            }
            Ended::CompileTimeout { .. } => ("compile-timeout", 0, Timing::default()),
            Ended::Unresponsive { .. } => ("unresponsive", 0, Timing::default()),
            Ended::WorkerDied { .. } => ("worker-died", 0, Timing::default()),
            Ended::NoWorker(_) => ("no-worker", 0, Timing::default()),
        };
        eprintln!(
            "trace {} {} {} {} {runs} {} {} {} {worker_us} {} {how} {:?}",
            req.id,
            p.launch.ctas(),
            p.launch.warps_per_cta,
            req.batch,
            t.compile_us,
            t.run_us,
            t.readback_us,
            bounded_wait_tries(p),
            self.split,
        );
    }

    /// Counts a case that cost its worker under its cause ([`Profile::kills`]) and, with
    /// `TCGEN05_CUDA_PROFILE=1` or `2`, prints what the case was (to find why workers die).
    fn count_kill(&mut self, ended: &Ended, req: &RunRequest, p: &Program) {
        let (cause, detail) = match ended {
            Ended::Reported {
                result: RunResult::Hung { timing, status, .. },
                runs_done,
                ..
            } => (
                0,
                format!(
                    "run {runs_done} still running after {} ms, status {:?}",
                    timing.run_us / 1000,
                    status.get(..5)
                ),
            ),
            Ended::Reported {
                result:
                    RunResult::Fault {
                        name, sticky: true, ..
                    },
                ..
            } => (1, name.clone()),
            Ended::WorkerDied { detail, .. } => (2, detail.clone()),
            Ended::Unresponsive { waited_ms } => (3, format!("{waited_ms} ms")),
            Ended::CompileTimeout { limit_ms } => (4, format!("{limit_ms} ms")),
            _ => return,
        };
        self.profile.kills[cause] += 1;
        if profile_level() >= 1 {
            let mmas = p
                .ops()
                .iter()
                .filter(|o| matches!(o, tcgen05_ir::Op::Mma(_)))
                .count();
            // `TCGEN05_CUDA_KILLED_DIR`: the case itself, for `tcgen05-fuzz reproduce`.
            if let Some(dir) = std::env::var_os("TCGEN05_CUDA_KILLED_DIR") {
                let path = std::path::Path::new(&dir).join(format!("{}-{}.ptx", self.name, req.id));
                if let Err(e) =
                    crate::report::write_atomic(&path, tcgen05_ir::ptx::emit(p).as_bytes())
                {
                    eprintln!("{}: cannot write the killed case: {e}", path.display());
                }
            }
            // Its instructions by opcode, to tell which kinds of case cost workers.
            let mut ops = std::collections::BTreeMap::<String, usize>::new();
            for o in p.ops() {
                *ops.entry(o.form().opcode()).or_default() += 1;
            }
            let ops: Vec<String> = ops.iter().map(|(o, n)| format!("{o} x{n}")).collect();
            eprintln!(
                "{} worker killed ({}): case {}, {} CTAs x {} warps, {mmas} MMAs, bounded-wait tries {}, timeout {} ms, batch {}; {detail}; {}",
                self.name,
                KILL_CAUSES[cause],
                req.id,
                p.launch.ctas(),
                p.launch.warps_per_cta,
                bounded_wait_tries(p),
                req.timeout_ms,
                req.batch,
                ops.join(", ")
            );
        }
    }

    fn outcome(&mut self, result: RunResult, layout: &Layout) -> Outcome {
        match result {
            RunResult::CompileError { code, log } => Outcome::Rejected(diagnostics(code, &log)),
            RunResult::LaunchError { code, name } => Outcome::Faulted {
                code,
                detail: format!("launch refused: {name}"),
            },
            RunResult::Completed {
                words,
                status,
                timing,
            } => {
                self.last.timing = timing;
                // The emulation ends a violation with an exit, not a trap: the recorded code
                // decides the outcome (`emu` module docs).
                if self.flavour == Flavour::Emu
                    && let Some(o) = emu_outcome(&status, layout, &words)
                {
                    return o;
                }
                Outcome::Completed { words }
            }
            RunResult::Hung {
                words,
                status,
                timing,
            } => {
                self.last.timing = timing;
                // A recorded violation (a thread exited with it, others then hung, e.g. at a
                // barrier) is what the hardware would have reported: a trap stops them all.
                if self.flavour == Flavour::Emu
                    && let Some(o) = emu_outcome(&status, layout, &words)
                {
                    return o;
                }
                let note = emu_note(&status);
                Outcome::Hung {
                    blocked: hang_sites(layout, &words, note.as_deref()),
                    words,
                }
            }
            RunResult::Fault {
                code,
                name,
                words,
                status,
                timing,
                ..
            } => {
                self.last.timing = timing;
                if self.flavour == Flavour::Emu
                    && let Some(o) = emu_outcome(&status, layout, &words)
                {
                    return o;
                }
                match arch::classify(code) {
                    arch::FaultClass::TmemLeak => Outcome::Leaked { columns: 0, words },
                    arch::FaultClass::Trap => {
                        let kind = if self.cfg.guardrail {
                            TrapKind::Guardrail(format!("-g-tmem-access-check: {name}"))
                        } else {
                            TrapKind::Other(format!("trap: {name}"))
                        };
                        Outcome::Trapped { kind, words }
                    }
                    arch::FaultClass::IllegalInstruction => Outcome::Trapped {
                        kind: TrapKind::IllegalInstruction,
                        words,
                    },
                    arch::FaultClass::IllegalAddress => Outcome::Trapped {
                        kind: TrapKind::IllegalAddress,
                        words,
                    },
                    arch::FaultClass::Other => Outcome::Faulted { code, detail: name },
                }
            }
            RunResult::WorkerError(e) => Outcome::Crashed {
                detail: format!("CUDA worker: {e}"),
            },
        }
    }
}

impl Drop for CudaTarget {
    fn drop(&mut self) {
        if profile_level() >= 1 {
            let s = self.sup.stats;
            let runner = self
                .runner
                .as_ref()
                .and_then(|r| r.stats())
                .map(|r| {
                    format!(
                        "; the runners: spawned {}, killed {}, waited {:.0} ms",
                        r.spawned,
                        r.killed,
                        r.spawn_wait_us as f64 / 1000.0
                    )
                })
                .unwrap_or_default();
            eprintln!(
                "{} profile: {}; workers spawned {}, killed {}, waited {:.0} ms for a worker{runner}",
                self.name,
                self.profile,
                s.spawned,
                s.killed,
                s.spawn_wait_us as f64 / 1000.0
            );
        }
    }
}

/// The blocked lanes of a hung run: every lane whose checkpoint is not "done" or "exited".
pub fn hang_sites(layout: &Layout, words: &[u32], note: Option<&str>) -> Vec<HangSite> {
    let mut v = Vec::new();
    if words.len() < layout.total_words() {
        return vec![HangSite {
            cta: 0,
            warp: 0,
            lane: 0,
            checkpoint: 0,
            blocked_on: note.map(str::to_string),
        }];
    }
    let view = observe::View { layout, words };
    for cta in 0..layout.ctas {
        for w in 0..layout.warp_base.len() {
            for lane in 0..32 {
                let c = view.checkpoint(cta, w, lane);
                if c != observe::CHECKPOINT_DONE && c != observe::CHECKPOINT_EXIT {
                    v.push(HangSite {
                        cta,
                        warp: w as u32,
                        lane,
                        checkpoint: c,
                        blocked_on: note.map(str::to_string),
                    });
                }
            }
        }
    }
    v
}

/// The emulation's own account of a stop, from the status block.
fn emu_note(status: &[u32]) -> Option<String> {
    let code = emu::Code::from_u32(*status.first()?)?;
    Some(format!(
        "{code:?} ({}) at CTA {} warp {} lane {}, detail {:#x}",
        code.rule(),
        status.get(1).copied().unwrap_or(0),
        status.get(2).copied().unwrap_or(0),
        status.get(3).copied().unwrap_or(0),
        status.get(4).copied().unwrap_or(0)
    ))
}

/// The outcome of an emulation trap, from its recorded code.
fn emu_outcome(status: &[u32], layout: &Layout, words: &[u32]) -> Option<Outcome> {
    let code = emu::Code::from_u32(*status.first()?)?;
    let note = emu_note(status).unwrap_or_default();
    let words = words.to_vec();
    Some(match code.class() {
        emu::CodeClass::Trap => Outcome::Trapped {
            kind: TrapKind::Guardrail(format!("cuda-emu {note}")),
            words,
        },
        emu::CodeClass::Hang => Outcome::Hung {
            blocked: hang_sites(layout, &words, Some(&note)),
            words,
        },
        emu::CodeClass::Leak => Outcome::Leaked {
            columns: 32 * status.get(4).copied().unwrap_or(0).count_ones(),
            words,
        },
        emu::CodeClass::NotRun if code == emu::Code::Capacity => Outcome::NotRun(format!(
            "cuda-emu: the program uses TMEM beyond the emulated columns ({note})"
        )),
        emu::CodeClass::NotRun => Outcome::NotRun(format!(
            "cuda-emu: a TMEM access outside the allocation, whose result the spec leaves \
             unstated (OQ-9), stops the emulation ({note})"
        )),
    })
}

/// Compiler diagnostics from a JIT or ptxas log: one per `line N` message, else one for all.
pub fn diagnostics(code: u32, log: &str) -> Vec<Diagnostic> {
    let mut v = Vec::new();
    for l in log.lines() {
        let lower = l.to_ascii_lowercase();
        let severity = if lower.contains("error") {
            Severity::Error
        } else if lower.contains("warning") {
            Severity::Warning
        } else {
            continue;
        };
        let line = lower
            .split("line ")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok());
        v.push(Diagnostic {
            severity,
            line,
            opcode: None,
            message: l.trim().to_string(),
        });
    }
    if !v.iter().any(|d| d.severity == Severity::Error) {
        let name = arch::code_name(code).unwrap_or("compile error");
        v.push(Diagnostic {
            severity: Severity::Error,
            line: None,
            opcode: None,
            message: format!("{name}: {}", log.trim()),
        });
    }
    v
}

impl Target for CudaTarget {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn version(&self) -> String {
        let d = &self.dev;
        let mode = match (self.flavour, &self.cfg.ptxas, self.cfg.guardrail) {
            (Flavour::Emu, _, _) => "emu".to_string(),
            (_, Some(_), true) => "ptxas -g-tmem-access-check".to_string(),
            (_, Some(_), false) => "ptxas".to_string(),
            _ => "jit".to_string(),
        };
        format!(
            "{} (cc {}), driver {}.{}, {mode}",
            d.name,
            d.cc,
            d.driver_version / 1000,
            d.driver_version % 1000 / 10
        )
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Running
    }

    fn run(&mut self, case: &Case) -> Outcome {
        self.run_program(&case.program)
    }

    fn run_repeated(&mut self, case: &Case) -> Vec<Observed> {
        self.run_program_repeated(&case.program)
    }

    /// Each case's module is compiled while the case before it runs
    /// ([`CudaTarget::run_programs_repeated`]).
    fn run_repeated_batch(&mut self, cases: &[&Case]) -> Vec<Vec<Observed>> {
        let ps: Vec<&Program> = cases.iter().map(|c| &c.program).collect();
        self.run_programs_repeated(&ps)
    }

    /// [`PIPELINE_DEPTH`] with [`Config::prepare`], else 1.
    fn pipeline_depth(&self) -> u64 {
        if self.prepares() { PIPELINE_DEPTH } else { 1 }
    }

    /// `cuda-emu` only runs programs: it compiles our own lowering, not the program, so a
    /// rejected module or a worker that dies is a defect of the emulation, never a verdict on
    /// the program. The campaign then does not spend a compile and a launch on a case whose
    /// verdict no run outcome can change ([`crate::diff::verdict_for_any_run`]: statically
    /// ill-formed, undefined, not judged): 5,123 of the 27,583 cases of a 10-minute campaign
    /// (docs/blackwell.md §6). `cuda` runs them: the driver's JIT rejecting an ill-formed
    /// program is part of what it tests.
    fn only_runs(&self) -> bool {
        self.flavour == Flavour::Emu
    }

    /// `cuda-emu`: the MMA forms whose D the emulation does not compute
    /// ([`emu::not_emulated`]), prefixed "not emulated: "; the hardware computes everything.
    fn values_not_computed(&self, program: &Program) -> Option<String> {
        match self.flavour {
            Flavour::Emu => emu::not_emulated(program).map(|w| format!("not emulated: {w}")),
            Flavour::Hardware => None,
        }
    }
}

/// FNV-1a of `bytes`: the perturbation seed of a case, from its printed module, so a rerun of
/// the same case perturbs its runs the same way.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::{Cond, Scope, Stmt, samples};

    /// The profile counts each case under the bucket of its runs' time (upper bounds
    /// exclusive) and prints each bucket's share of the run time, so a few long cases that
    /// take most of it show.
    #[test]
    fn the_profile_shows_which_cases_take_the_run_time() {
        let mut p = Profile::default();
        for us in [500, 999, 1_000, 3_000_000, 1_000_000] {
            p.count_runs(us);
        }
        assert_eq!(p.run_cases, [2, 1, 0, 0, 0, 0, 2]);
        assert_eq!(p.run_bucket_us[6], 4_000_000);
        assert_eq!(p.run_us(), 4_002_499);
        let text = p.to_string();
        assert!(
            text.ends_with(
                "; a case's runs took < 1 ms: 2 (0%), 1-4 ms: 1 (0%), 4-16 ms: 0 (0%), \
                 16-64 ms: 0 (0%), 64-256 ms: 0 (0%), 256 ms-1 s: 0 (0%), >= 1 s: 2 (99%) of the \
                 run time"
            ),
            "{text}"
        );
        assert!(!Profile::default().to_string().contains("runs took"));
    }

    fn wait(max_tries: u32) -> Stmt {
        Stmt::MbarWait {
            bar: 0,
            parity: false,
            scope: Scope::Cta,
            max_tries,
        }
    }

    fn cfg() -> Config {
        let mut c = Config::from_env(0);
        c.timeout = Duration::from_millis(2000);
        c.try_wait_ns = 10_000;
        c
    }

    #[test]
    fn a_configured_worker_that_is_no_file_is_named_in_the_error() {
        let p = PathBuf::from("/nonexistent/tcgen05-cuda-worker");
        let e = find_worker(Some(&p)).unwrap_err();
        assert_eq!(e, WorkerError::NotAFile(p));
        assert!(
            e.to_string()
                .contains("TCGEN05_CUDA_WORKER=/nonexistent/tcgen05-cuda-worker is not a file"),
            "{e}"
        );
    }

    #[test]
    fn a_worker_that_cannot_start_is_an_error_naming_the_executable() {
        let spec = WorkerSpec {
            exe: PathBuf::from("/nonexistent/worker"),
            args: vec![],
            env: vec![],
        };
        match Supervisor::start(spec, Limits::default()) {
            Err(StartError::Spawn { exe, reason }) => {
                assert_eq!(exe, PathBuf::from("/nonexistent/worker"));
                assert!(!reason.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bounded_waits_are_counted_through_loops_branches_calls_and_warps() {
        let mut p = samples::single_warp_roundtrip();
        assert_eq!(bounded_wait_tries(&p), 0);
        p.funcs.push(tcgen05_ir::Func {
            body: vec![wait(7)],
        });
        p.warps[0].extend([
            wait(100),
            Stmt::Loop {
                count: 3,
                body: vec![wait(10), Stmt::Call(0)],
            },
            Stmt::If {
                cond: Cond::LaneEq(0),
                then: vec![wait(1000)],
                els: vec![wait(5)],
            },
        ]);
        p.warps.push(vec![wait(20_000)]);
        // 100 + 3 * (10 + 7) + 1000 + 5, and the second warp's 20,000.
        assert_eq!(bounded_wait_tries(&p), 100 + 51 + 1005 + 20_000);
        p.warps
            .push(vec![wait(u32::MAX), wait(u32::MAX), wait(u32::MAX)]);
        assert!(bounded_wait_tries(&p) > 3 * u64::from(u32::MAX));
    }

    #[test]
    fn only_hardware_cases_wait_for_their_bounded_waits() {
        let c = cfg();
        let mut p = samples::single_warp_roundtrip();
        assert_eq!(case_timeout(Flavour::Hardware, &c, &p), c.timeout);
        // 2^20 tries of 10 us: 10.49 s more than the base watchdog.
        p.warps[0].push(wait(1 << 20));
        let t = case_timeout(Flavour::Hardware, &c, &p);
        assert_eq!(t, c.timeout + Duration::from_nanos((1u64 << 20) * 10_000));
        assert_eq!(case_timeout(Flavour::Emu, &c, &p), c.timeout);
        // A deliberate deadlock (u32::MAX tries) stays bounded.
        p.warps[0].push(wait(u32::MAX));
        assert_eq!(
            case_timeout(Flavour::Hardware, &c, &p),
            c.timeout + MAX_WAIT_BUDGET
        );
    }

    /// A `cuda-emu` case's watchdog grows with the multiply-adds of its emulated MMAs:
    /// 128 rows × N × K per CTA holding D (N from the instruction descriptor's bits 17-22,
    /// K = 256 bits of A per row over the element size, §9.7.16.10), counted through loops.
    #[test]
    fn emulation_cases_wait_for_their_emulated_mmas() {
        use tcgen05_ir::{MmaKind, Op};
        let c = cfg();
        let mut checked = 0;
        for seed in 0..300 {
            let g = tcgen05_generators::valid_program(&tcgen05_generators::Config::default(), seed);
            let Some(m) = g.ops().into_iter().find_map(|op| match op {
                Op::Mma(m) if emu::mma_macs(m, &g.smem.regions) > 0 => Some(m.clone()),
                _ => None,
            }) else {
                continue;
            };
            let n = u64::from(m.idesc >> 17 & 0x3F) * 8;
            let k = match m.form.kind {
                MmaKind::F16 => 16,
                MmaKind::Tf32 => 8,
                _ => 32,
            };
            let ctas = if m.form.cta_group == tcgen05_ir::CtaGroup::Two {
                2
            } else {
                1
            };
            let one = ctas * 128 * n * k;
            assert_eq!(emu::mma_macs(&m, &g.smem.regions), one, "seed {seed}");
            let mut p = samples::single_warp_roundtrip();
            p.smem.regions = g.smem.regions.clone();
            assert_eq!(case_timeout(Flavour::Emu, &c, &p), c.timeout);
            p.warps[0].push(Stmt::Loop {
                count: 3,
                body: vec![Stmt::Tc(Op::Mma(m.clone()))],
            });
            assert_eq!(emulated_macs(&p), 3 * one, "seed {seed}");
            assert_eq!(
                case_timeout(Flavour::Emu, &c, &p),
                c.timeout + Duration::from_nanos(3 * one * EMU_MAC_BUDGET_NS).min(MAX_WAIT_BUDGET)
            );
            // Its D left out (operands outside their regions): nothing computed, no more time.
            p.smem.regions.iter_mut().for_each(|r| *r = 16);
            assert_eq!(case_timeout(Flavour::Emu, &c, &p), c.timeout);
            checked += 1;
        }
        assert!(
            checked > 5,
            "{checked} generated programs with a computed MMA"
        );
    }
}
