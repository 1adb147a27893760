//! The device's runners: a few worker processes per device (and worker setup) of this process
//! that run the cases of every CUDA target built here, one case at a time each
//! ([`RUNNERS_VAR`], one by default), while each target's own worker only compiles
//! (`Request::Compile`, then a [`Compile::Cubin`] run). Opt-in (`TCGEN05_CUDA_RUNNER=shared`,
//! [`Choice`]); by default each target's worker compiles and runs its own cases.
//!
//! Why it exists: each worker owns a CUDA context, and kernels of different contexts never run
//! at once: the GPU switches between the contexts that have work. With 16 campaign jobs each
//! running its cases in its own worker on the lent H200 (driver 580), a case's 64 runs took
//! 55-63 ms instead of the 3 ms they take alone. With one runner they take 7.2-7.5 ms, but
//! the campaign makes fewer cases a second (39-42 against 47): the runner's round trip is
//! 12-15 ms a case (the first launch of a freshly loaded module 7-9 ms whatever the runs, the
//! protocol and the unload 3-7 ms), one case at a time, and a case with a long bounded wait or
//! a sticky fault's replay holds it while the other jobs queue; a second runner brings the
//! switching back (docs/blackwell.md §6, "Where a case's time goes").
//!
//! Attribution is the supervisor's: a runner has one case in flight, so whatever ends it (its
//! `Done`, the watchdog, the runner's death) is that case's, and a runner that faulted is
//! replaced before its next case ([`super::supervisor`]).

use super::protocol::{Compile, Image, RunRequest};
use super::supervisor::{Ended, Limits, Stats, Supervisor, WorkerSpec};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// The environment variable that chooses where a CUDA target runs its cases: `own` (the
/// default: the target's own worker compiles and runs them) or `shared` (the device's
/// runners, this module).
pub const RUNNER_VAR: &str = "TCGEN05_CUDA_RUNNER";

/// The environment variable that sets the number of runner workers of a device with
/// `TCGEN05_CUDA_RUNNER=shared` (at least 1; unset: [`DEFAULT_RUNNERS`]).
pub const RUNNERS_VAR: &str = "TCGEN05_CUDA_RUNNERS";

/// Runner workers of a device when [`RUNNERS_VAR`] is unset: one, since two or more contexts
/// that use the GPU at once switch again (16 jobs on the lent H200: 39-42 cases/s with one
/// runner, 34 with two, 31 with three; docs/blackwell.md §6).
pub const DEFAULT_RUNNERS: usize = 1;

/// One runner worker: started on its first case, restarted by its supervisor after a fault.
#[derive(Debug)]
struct Runner {
    sup: Option<Supervisor>,
}

/// The runner workers of one device (and worker setup), each with one case in flight.
#[derive(Debug)]
pub struct Runners {
    spec: WorkerSpec,
    limits: Limits,
    slots: Vec<Mutex<Runner>>,
    /// The slots no case holds.
    free: Mutex<Vec<usize>>,
    freed: Condvar,
}

/// The runners of this process, one set per worker setup (executable, arguments with the
/// device, environment).
type Registry = Vec<(WorkerSpec, Arc<Runners>)>;
static RUNNERS: Mutex<Registry> = Mutex::new(Vec::new());

/// The runners of `spec`'s device, shared by every target of this process with the same
/// worker setup; `limits` and `count` apply when they are created by this call.
pub fn shared(spec: &WorkerSpec, limits: Limits, count: usize) -> Arc<Runners> {
    let mut all = RUNNERS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, r)) = all.iter().find(|(s, _)| s == spec) {
        return Arc::clone(r);
    }
    let r = Arc::new(Runners::new(spec, limits, count));
    all.push((spec.clone(), Arc::clone(&r)));
    r
}

impl Runners {
    /// `count` runners (at least 1) of `spec`, none started yet.
    pub fn new(spec: &WorkerSpec, limits: Limits, count: usize) -> Runners {
        let count = count.max(1);
        Runners {
            spec: spec.clone(),
            limits,
            slots: (0..count)
                .map(|_| Mutex::new(Runner { sup: None }))
                .collect(),
            // Popped from the end: the first runner is used first, the others only when it is
            // busy.
            free: Mutex::new((0..count).rev().collect()),
            freed: Condvar::new(),
        }
    }

    /// Runs `req`, whose module is already compiled (`image`, `compile_us`), on a free runner
    /// under its watchdog (waiting for one if all are busy, starting it if needed); how it
    /// ended, and the microseconds spent waiting for the runner.
    pub fn run(&self, req: &RunRequest, image: Image, compile_us: u64) -> (Ended, u64) {
        let t0 = std::time::Instant::now();
        let slot = {
            let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if let Some(i) = free.pop() {
                    break i;
                }
                free = self
                    .freed
                    .wait(free)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        let waited_us = t0.elapsed().as_micros() as u64;
        let ended = {
            let mut r = self.slots[slot]
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            r.run(&self.spec, self.limits, req, image, compile_us)
        };
        self.free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(slot);
        self.freed.notify_one();
        (ended, waited_us)
    }

    /// The runners' supervisor counters (workers started and killed, cases) summed over the
    /// runners that started; `None` before the first.
    pub fn stats(&self) -> Option<Stats> {
        let mut sum: Option<Stats> = None;
        for slot in &self.slots {
            let r = slot.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(s) = r.sup.as_ref().map(|s| s.stats) {
                let t = sum.get_or_insert_with(Stats::default);
                t.spawned += s.spawned;
                t.killed += s.killed;
                t.cases += s.cases;
                t.spawn_wait_us += s.spawn_wait_us;
            }
        }
        sum
    }
}

impl Runner {
    fn run(
        &mut self,
        spec: &WorkerSpec,
        limits: Limits,
        req: &RunRequest,
        image: Image,
        compile_us: u64,
    ) -> Ended {
        if self.sup.is_none() {
            match Supervisor::start(spec.clone(), limits) {
                Ok(s) => self.sup = Some(s),
                Err(e) => return Ended::NoWorker(e),
            }
        }
        // The runner needs no PTX: the cubin is the module.
        let req = RunRequest {
            compile: Compile::Cubin { image, compile_us },
            ptx: String::new(),
            ..req.clone()
        };
        self.sup.as_mut().expect("started").run(&req)
    }
}

/// Where a CUDA target runs its cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The target's own worker compiles and runs them.
    Own,
    /// The target's worker compiles them; the device's `runners` runner workers, shared by
    /// the targets of this process ([`shared`]), run them.
    Shared {
        /// Runner workers (at least 1).
        runners: usize,
    },
    /// As `Shared`, with runners of the target's own (tests of the runner path that must not
    /// share them).
    Private {
        /// Runner workers (at least 1).
        runners: usize,
    },
}

impl Choice {
    /// The choice [`RUNNER_VAR`] and [`RUNNERS_VAR`] make (unset: `Own`; `shared` with
    /// [`DEFAULT_RUNNERS`] runners); `Err` names a value that is not one.
    pub fn from_env() -> Result<Choice, String> {
        let var = |k| std::env::var(k).ok();
        Choice::parse(var(RUNNER_VAR).as_deref(), var(RUNNERS_VAR).as_deref())
    }

    /// The choice of the two variables' values ([`Choice::from_env`]).
    pub fn parse(runner: Option<&str>, runners: Option<&str>) -> Result<Choice, String> {
        match runner.map(str::trim) {
            None | Some("" | "own") => Ok(Choice::Own),
            Some("shared") => {
                let runners = match runners.map(str::trim) {
                    None | Some("") => DEFAULT_RUNNERS,
                    Some(v) => v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("{RUNNERS_VAR}={v}: expected a number of runners, 1 or more")
                    })?,
                };
                Ok(Choice::Shared { runners })
            }
            Some(other) => Err(format!("{RUNNER_VAR}={other}: expected `own` or `shared`")),
        }
    }

    /// The runners a target of this choice uses for `spec`'s device (`None`: its own worker).
    pub fn runners(self, spec: &WorkerSpec, limits: Limits) -> Option<Arc<Runners>> {
        match self {
            Choice::Own => None,
            Choice::Shared { runners } => Some(shared(spec, limits, runners)),
            Choice::Private { runners } => Some(Arc::new(Runners::new(spec, limits, runners))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variables_choose_own_by_default_and_name_a_bad_value() {
        assert_eq!(Choice::parse(None, None), Ok(Choice::Own));
        assert_eq!(Choice::parse(Some("own"), Some("4")), Ok(Choice::Own));
        assert_eq!(
            Choice::parse(Some("shared"), None),
            Ok(Choice::Shared { runners: 1 })
        );
        assert_eq!(
            Choice::parse(Some(" shared "), Some("3")),
            Ok(Choice::Shared { runners: 3 })
        );
        let e = Choice::parse(Some("mps"), None).unwrap_err();
        assert!(e.contains("TCGEN05_CUDA_RUNNER=mps"), "{e}");
        for bad in ["0", "two", "-1"] {
            let e = Choice::parse(Some("shared"), Some(bad)).unwrap_err();
            assert!(e.contains(&format!("TCGEN05_CUDA_RUNNERS={bad}")), "{e}");
        }
    }
}
