//! The parent side of the worker protocol: starts the worker, sends it
//! cases, keeps a watchdog per case, and kills and respawns it after a sticky fault, a hang,
//! or a crash. Many cases share one worker until a fault.
//!
//! Attribution: one case is in flight at a time, and the worker synchronizes the context at
//! the end of every case, so whatever ends a case (its `Done`, the watchdog, the worker's
//! death) belongs to that case; a worker that ended a case with a fault is never given another.
//!
//! Respawns are what a fault costs: every hang and every sticky fault (a `trap`, an illegal
//! address) costs a worker, and a worker's start (driver initialization, context creation)
//! took 5.4 to 9.3 s on average while 16 campaign jobs shared the lent H200
//! ([`Stats::spawn_wait_us`]; docs/blackwell.md). The `cuda-emu` lowering therefore ends its
//! violations with an exit, not a `trap` (`emu` module docs).
//! A killed worker is reaped on a thread of its own, so the next case does not wait for the
//! old context's teardown.

use super::error::{NoDevice, ReplyError, StartError};
use super::protocol::{self, DeviceInfo, Image, Reply, Request, RunRequest, RunResult};
use std::collections::VecDeque;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How to start a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerSpec {
    /// The executable.
    pub exe: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
}

/// Limits of the watchdog.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Waiting for the worker's hello (driver initialization).
    pub hello: Duration,
    /// Waiting for a case to be compiled and launched.
    pub compile: Duration,
    /// Added to the case's own timeout before the parent gives up on the worker (the worker
    /// normally reports the hang itself).
    pub grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            hello: Duration::from_secs(60),
            compile: Duration::from_secs(120),
            grace: Duration::from_secs(10),
        }
    }
}

/// How a case ended, seen from the parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The worker reported it.
    Reported {
        /// The worker's result.
        result: RunResult,
        /// Compile time from the `Launched` message, microseconds (0 if none came).
        compile_us: u64,
        /// With several runs: the completed runs by distinct words ([`Reply::Done`]).
        classes: Vec<protocol::RunClass>,
        /// Runs made.
        runs_done: u32,
    },
    /// The worker took longer than the compile limit, and was killed.
    CompileTimeout {
        /// The limit, milliseconds.
        limit_ms: u64,
    },
    /// The kernel ran past its timeout plus grace without the worker reporting: killed.
    Unresponsive {
        /// How long the parent waited after the launch, milliseconds.
        waited_ms: u64,
    },
    /// The worker died (or its pipe broke) before reporting the case.
    WorkerDied {
        /// Exit status and the last lines of its stderr.
        detail: String,
        /// Whether the case had been launched when it died.
        launched: bool,
    },
    /// No worker could be started.
    NoWorker(StartError),
}

/// Counters for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Workers started.
    pub spawned: u64,
    /// Workers killed after a fault, a hang or a crash.
    pub killed: u64,
    /// Cases sent.
    pub cases: u64,
    /// Microseconds cases waited for a worker to start (after a fault ended the last one).
    pub spawn_wait_us: u64,
}

struct Worker {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    rx: Receiver<Result<Reply, ReplyError>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

/// A supervised worker.
pub struct Supervisor {
    spec: WorkerSpec,
    limits: Limits,
    worker: Option<Worker>,
    /// The device the first worker opened.
    pub device: DeviceInfo,
    /// Counters.
    pub stats: Stats,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("spec", &self.spec)
            .field("device", &self.device)
            .field("stats", &self.stats)
            .finish()
    }
}

fn spawn(
    spec: &WorkerSpec,
    limits: &Limits,
) -> Result<(Worker, Result<DeviceInfo, NoDevice>), StartError> {
    let mut cmd = Command::new(&spec.exe);
    // Its own process group: a terminal's Ctrl-C reaches the campaign, which stops cleanly,
    // not the worker mid-case (that would read as a crash verdict).
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.args(&spec.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|e| StartError::Spawn {
        exe: spec.exe.clone(),
        reason: e.to_string(),
    })?;
    let stdin = BufWriter::new(child.stdin.take().ok_or(StartError::NoPipe("stdin"))?);
    let stdout = child.stdout.take().ok_or(StartError::NoPipe("stdout"))?;
    let stderr = child.stderr.take().ok_or(StartError::NoPipe("stderr"))?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            match protocol::read_frame::<Reply>(&mut r) {
                Ok(Some(m)) => {
                    if tx.send(Ok(m)).is_err() {
                        break;
                    }
                }
                Ok(None) => {
                    let _ = tx.send(Err(ReplyError::Closed));
                    break;
                }
                Err(e) => {
                    let _ = tx.send(Err(ReplyError::BadFrame(e)));
                    break;
                }
            }
        }
    });
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let t2 = Arc::clone(&tail);
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Ok(mut q) = t2.lock() {
                if q.len() == 20 {
                    q.pop_front();
                }
                q.push_back(line);
            }
        }
    });
    let mut w = Worker {
        child,
        stdin,
        rx,
        stderr_tail: tail,
    };
    match w.rx.recv_timeout(limits.hello) {
        Ok(Ok(Reply::Hello { device, .. })) => Ok((w, device)),
        Ok(Ok(other)) => {
            kill(&mut w);
            Err(StartError::NotHello(format!("{other:?}")))
        }
        Ok(Err(reason)) => {
            let death = death(&mut w);
            Err(StartError::Died {
                reason: reason.to_string(),
                death,
            })
        }
        Err(_) => {
            kill(&mut w);
            Err(StartError::HelloTimeout(limits.hello))
        }
    }
}

fn kill(w: &mut Worker) {
    let _ = w.child.kill();
    let _ = w.child.wait();
}

/// Exit status and stderr tail of a dead (or dying) worker.
fn death(w: &mut Worker) -> String {
    let deadline = Instant::now() + Duration::from_secs(2);
    let status = loop {
        match w.child.try_wait() {
            Ok(Some(s)) => break format!("{s}"),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                kill(w);
                break "killed".to_string();
            }
        }
    };
    // Give the stderr thread a moment to drain.
    std::thread::sleep(Duration::from_millis(20));
    let tail = w
        .stderr_tail
        .lock()
        .map(|q| q.iter().cloned().collect::<Vec<_>>().join("\n"))
        .unwrap_or_default();
    if tail.is_empty() {
        format!("worker exit: {status}")
    } else {
        format!("worker exit: {status}; stderr:\n{tail}")
    }
}

impl Supervisor {
    /// Starts the first worker; `Err` says why the device is unavailable.
    pub fn start(spec: WorkerSpec, limits: Limits) -> Result<Supervisor, StartError> {
        let (mut w, device) = spawn(&spec, &limits)?;
        match device {
            Ok(device) => Ok(Supervisor {
                spec,
                limits,
                worker: Some(w),
                device,
                stats: Stats {
                    spawned: 1,
                    ..Stats::default()
                },
            }),
            Err(reason) => {
                let _ = protocol::write_frame(&mut w.stdin, &Request::Shutdown);
                kill(&mut w);
                Err(StartError::NoDevice(reason))
            }
        }
    }

    fn drop_worker(&mut self) {
        if let Some(mut w) = self.worker.take() {
            let _ = w.child.kill();
            std::thread::spawn(move || {
                let _ = w.child.wait();
            });
            self.stats.killed += 1;
        }
    }

    fn ensure(&mut self) -> Result<(), StartError> {
        if self.worker.is_some() {
            return Ok(());
        }
        let t0 = Instant::now();
        let spawned = spawn(&self.spec, &self.limits);
        self.stats.spawn_wait_us += t0.elapsed().as_micros() as u64;
        let (w, device) = spawned?;
        self.stats.spawned += 1;
        self.worker = Some(w);
        match device {
            Ok(_) => Ok(()),
            Err(e) => {
                self.drop_worker();
                Err(StartError::RespawnNoDevice(e))
            }
        }
    }

    /// Announces the case whose [`Supervisor::run`] comes next, so the worker compiles it
    /// while it runs the current one (`Request::Prepare`). Nothing is reported: a worker that
    /// cannot be started or written to is dealt with by the next `run`.
    pub fn prepare(&mut self, req: &RunRequest) {
        if self.ensure().is_err() {
            return;
        }
        let w = self.worker.as_mut().expect("ensured");
        if protocol::write_frame(&mut w.stdin, &Request::Prepare(req.clone()))
            .and_then(|()| w.stdin.flush())
            .is_err()
        {
            self.drop_worker();
        }
    }

    /// Sends `msg` to the worker; if that fails the worker is gone, and the result says how
    /// the case ended.
    fn send(&mut self, msg: &Request) -> Result<(), Box<Ended>> {
        let w = self.worker.as_mut().expect("ensured");
        match protocol::write_frame(&mut w.stdin, msg).and_then(|()| w.stdin.flush()) {
            Ok(()) => Ok(()),
            Err(e) => Err(Box::new(
                self.lost(&format!("sending the case failed: {e}"), false),
            )),
        }
    }

    /// The worker died (its pipe closed or broke, `why`): counted as killed, with its exit
    /// status and the last lines of its stderr.
    fn lost(&mut self, why: &str, launched: bool) -> Ended {
        let d = death(self.worker.as_mut().expect("present"));
        self.worker = None;
        self.stats.killed += 1;
        Ended::WorkerDied {
            detail: if why.is_empty() {
                d
            } else {
                format!("{why}; {d}")
            },
            launched,
        }
    }

    /// A message about another case: a broken worker, killed; never attributed to this case.
    fn unexpected(&mut self, other: &Reply, launched: bool) -> Ended {
        let d = death(self.worker.as_mut().expect("present"));
        self.drop_worker();
        Ended::WorkerDied {
            detail: format!("unexpected message {other:?}; {d}"),
            launched,
        }
    }

    /// Compiles one case to a cubin in the worker (`Request::Compile`) under the compile
    /// limit, without running it: the cubin and the compile's microseconds, or how the case
    /// ended instead (a compile error as [`Ended::Reported`], a timeout, the worker's death).
    pub fn compile(&mut self, req: &RunRequest) -> Result<(Image, u64), Box<Ended>> {
        if let Err(e) = self.ensure() {
            return Err(Box::new(Ended::NoWorker(e)));
        }
        self.send(&Request::Compile(req.clone()))?;
        let w = self.worker.as_mut().expect("present");
        let ended = match w.rx.recv_timeout(self.limits.compile) {
            Ok(Ok(Reply::Compiled { id, result })) if id == req.id => match result {
                Ok(c) => return Ok(c),
                Err(result) => Ended::Reported {
                    result,
                    compile_us: 0,
                    classes: vec![],
                    runs_done: 0,
                },
            },
            Ok(Ok(other)) => self.unexpected(&other, false),
            Ok(Err(e)) => self.lost(&e.to_string(), false),
            Err(RecvTimeoutError::Timeout) => {
                self.drop_worker();
                Ended::CompileTimeout {
                    limit_ms: self.limits.compile.as_millis() as u64,
                }
            }
            Err(RecvTimeoutError::Disconnected) => self.lost("", false),
        };
        Err(Box::new(ended))
    }

    /// Runs one case under the watchdog.
    pub fn run(&mut self, req: &RunRequest) -> Ended {
        if let Err(e) = self.ensure() {
            return Ended::NoWorker(e);
        }
        self.stats.cases += 1;
        let timeout = Duration::from_millis(req.timeout_ms);
        if let Err(ended) = self.send(&Request::Run(req.clone())) {
            return *ended;
        }
        let mut compile_us = 0;
        let mut launched = false;
        let start = Instant::now();
        let mut deadline = start + self.limits.compile;
        loop {
            let w = self.worker.as_mut().expect("present");
            let left = deadline.saturating_duration_since(Instant::now());
            match w.rx.recv_timeout(left) {
                Ok(Ok(Reply::Launched { id, compile_us: c })) if id == req.id => {
                    launched = true;
                    compile_us = c;
                    // Several runs stop once they have run for their budget together, and
                    // the last may run `timeout` more before the worker calls it hung.
                    let budget = match (req.runs > 1, req.runs_budget_ms) {
                        (false, _) => Duration::ZERO,
                        (true, 0) => timeout,
                        (true, b) => Duration::from_millis(b),
                    };
                    deadline = Instant::now() + timeout + budget + self.limits.grace;
                }
                Ok(Ok(Reply::Done {
                    id,
                    result,
                    classes,
                    runs_done,
                })) if id == req.id => {
                    let fatal = matches!(
                        result,
                        RunResult::Hung { .. } | RunResult::Fault { sticky: true, .. }
                    );
                    if fatal {
                        // It exits on its own; make sure, and respawn on the next case.
                        self.drop_worker();
                    }
                    return Ended::Reported {
                        result,
                        compile_us,
                        classes,
                        runs_done,
                    };
                }
                Ok(Ok(other)) => return self.unexpected(&other, launched),
                Ok(Err(e)) => return self.lost(&e.to_string(), launched),
                Err(RecvTimeoutError::Timeout) => {
                    self.drop_worker();
                    return if launched {
                        Ended::Unresponsive {
                            waited_ms: start.elapsed().as_millis() as u64,
                        }
                    } else {
                        Ended::CompileTimeout {
                            limit_ms: self.limits.compile.as_millis() as u64,
                        }
                    };
                }
                Err(RecvTimeoutError::Disconnected) => return self.lost("", launched),
            }
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        if let Some(mut w) = self.worker.take() {
            let _ = protocol::write_frame(&mut w.stdin, &Request::Shutdown);
            let deadline = Instant::now() + Duration::from_millis(500);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = w.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            kill(&mut w);
        }
    }
}
