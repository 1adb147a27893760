//! The device's runner: one worker process per device (and worker setup) of this process that
//! runs the cases of every CUDA target built here, one case at a time, while each target's own
//! worker only compiles (`Request::Compile`, then a [`Compile::Cubin`] run). Opt-in
//! (`TCGEN05_CUDA_RUNNER=shared`, [`Choice`]); by default each target's worker compiles and
//! runs its own cases.
//!
//! Why it exists: each worker owns a CUDA context, and kernels of different contexts never run
//! at once: the GPU switches between the contexts that have work. With 16 campaign jobs each
//! running its cases in its own worker on the lent H200 (driver 580), a case's 64 runs took
//! 55-63 ms instead of the 3 ms they take alone. With this runner they took 7.6 ms, but the
//! campaign made fewer cases a second (36 against 47): the runner's round trip is 17 ms a case
//! (the load and unload of the cubin, the cubin's trip through the parent as hex JSON, the
//! runs), one case at a time, and it stops for every respawn after a sticky fault, so the
//! 16 jobs queue behind it (docs/blackwell.md §6, "Figures", with what would make it pay).
//!
//! Attribution is the supervisor's: the runner has one case in flight, so whatever ends it (its
//! `Done`, the watchdog, the runner's death) is that case's, and a runner that faulted is
//! replaced before the next case ([`super::supervisor`]).

use super::protocol::{Compile, Image, RunRequest};
use super::supervisor::{Ended, Limits, Supervisor, WorkerSpec};
use std::sync::{Arc, Mutex, PoisonError};

/// The environment variable that chooses where a CUDA target runs its cases: `own` (the
/// default: the target's own worker compiles and runs them) or `shared` (the device's runner,
/// this module).
pub const RUNNER_VAR: &str = "TCGEN05_CUDA_RUNNER";

/// A runner: started on the first case, restarted by its supervisor after a fault.
#[derive(Debug)]
pub struct Runner {
    spec: WorkerSpec,
    limits: Limits,
    sup: Option<Supervisor>,
}

/// The runners of this process, one per worker setup (executable, arguments with the device,
/// environment).
type Registry = Vec<(WorkerSpec, Arc<Mutex<Runner>>)>;
static RUNNERS: Mutex<Registry> = Mutex::new(Vec::new());

/// The runner of `spec`'s device, shared by every target of this process with the same
/// worker setup; `limits` apply when it is created by this call.
pub fn shared(spec: &WorkerSpec, limits: Limits) -> Arc<Mutex<Runner>> {
    let mut all = RUNNERS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, r)) = all.iter().find(|(s, _)| s == spec) {
        return Arc::clone(r);
    }
    let r = Arc::new(Mutex::new(Runner {
        spec: spec.clone(),
        limits,
        sup: None,
    }));
    all.push((spec.clone(), Arc::clone(&r)));
    r
}

impl Runner {
    /// Runs `req`, whose module is already compiled (`image`, `compile_us`), on the runner
    /// under its watchdog, starting the runner first if needed.
    pub fn run(&mut self, req: &RunRequest, image: Image, compile_us: u64) -> Ended {
        if self.sup.is_none() {
            match Supervisor::start(self.spec.clone(), self.limits) {
                Ok(s) => self.sup = Some(s),
                Err(e) => return Ended::NoWorker(e),
            }
        }
        let req = RunRequest {
            compile: Compile::Cubin { image, compile_us },
            ..req.clone()
        };
        self.sup.as_mut().expect("started").run(&req)
    }

    /// The runner's supervisor counters (workers started and killed), if it started.
    pub fn stats(&self) -> Option<super::supervisor::Stats> {
        self.sup.as_ref().map(|s| s.stats)
    }
}

/// Where a CUDA target runs its cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The target's own worker compiles and runs them.
    Own,
    /// The target's worker compiles them; the device's runner, shared by the targets of this
    /// process ([`shared`]), runs them.
    Shared,
    /// As `Shared`, with a runner of the target's own (tests of the runner path that must
    /// not share it).
    Private,
}

impl Choice {
    /// The choice [`RUNNER_VAR`] makes (unset: `Own`); `Err` names a value that is neither
    /// `own` nor `shared`.
    pub fn from_env() -> Result<Choice, String> {
        match std::env::var(RUNNER_VAR).ok().as_deref().map(str::trim) {
            None | Some("" | "own") => Ok(Choice::Own),
            Some("shared") => Ok(Choice::Shared),
            Some(other) => Err(format!("{RUNNER_VAR}={other}: expected `own` or `shared`")),
        }
    }

    /// The runner a target of this choice uses for `spec`'s device (`None`: its own worker).
    pub fn runner(self, spec: &WorkerSpec, limits: Limits) -> Option<Arc<Mutex<Runner>>> {
        match self {
            Choice::Own => None,
            Choice::Shared => Some(shared(spec, limits)),
            Choice::Private => Some(Arc::new(Mutex::new(Runner {
                spec: spec.clone(),
                limits,
                sup: None,
            }))),
        }
    }
}
