//! The worker process: owns the CUDA context and runs cases sent by the parent over the framed
//! protocol of [`super::protocol`].
//!
//! It is started as `tcgen05-cuda-worker --device N` (the drivers crate's binary), or as any
//! binary that calls [`serve_if_requested`] first thing in `main` with
//! [`WORKER_MODE_VAR`] set. Per case it compiles (driver JIT or ptxas) to a cubin, loads it,
//! launches with the cluster attribute, polls the stream until the kernel finishes or the
//! case's timeout passes, and reads the observation buffer (host-mapped, so it is readable
//! after a trap or during a hang). After a sticky fault or a hang it replies and exits: the
//! parent respawns it. A `Request::Compile` is only compiled, and answered with the cubin; a
//! run of a `Compile::Cubin` only loads it (`super::runner`).

use super::error::NoDevice;
use super::protocol::{self, Reply, Request, RunResult};
use std::io::{self, BufReader, BufWriter};

/// Set (to the device ordinal) to make [`serve_if_requested`] turn the current process into a
/// worker.
pub const WORKER_MODE_VAR: &str = "TCGEN05_CUDA_WORKER_MODE";

/// If [`WORKER_MODE_VAR`] is set, serves as a worker on stdin/stdout and exits the process;
/// otherwise returns. Call it first in `main` of a binary that should double as the worker.
pub fn serve_if_requested() {
    if let Ok(v) = std::env::var(WORKER_MODE_VAR) {
        let ordinal = v.trim().parse().unwrap_or(0);
        std::process::exit(serve_stdio(ordinal));
    }
}

/// Serves on this process's stdin and stdout until shutdown; the exit status to use.
pub fn serve_stdio(ordinal: u32) -> i32 {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut r = BufReader::new(stdin.lock());
    let mut w = BufWriter::new(stdout.lock());
    match serve(ordinal, &mut r, &mut w) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("tcgen05-cuda-worker: {e}");
            1
        }
    }
}

/// Serves as a worker on `r` / `w` (a fake device when `TCGEN05_CUDA_FAKE` is set).
fn serve(ordinal: u32, r: &mut impl io::Read, w: &mut impl io::Write) -> io::Result<()> {
    match std::env::var(FAKE_VAR) {
        Ok(spec) => fake::serve(&spec, ordinal, r, w),
        Err(_) => serve_device(ordinal, r, w),
    }
}

/// The test double's variable: `cc=<major>.<minor>` makes the worker fake a device of that
/// compute capability (see [`fake`]).
pub const FAKE_VAR: &str = "TCGEN05_CUDA_FAKE";

#[cfg(not(feature = "cuda"))]
fn serve_device(_ordinal: u32, r: &mut impl io::Read, w: &mut impl io::Write) -> io::Result<()> {
    let reason = "this build has no CUDA support (built without the `cuda` feature)".to_string();
    protocol::write_frame(
        w,
        &Reply::Hello {
            pid: std::process::id(),
            device: Err(NoDevice(reason.clone())),
        },
    )?;
    refuse_all(r, w, &reason)
}

/// A `Done` of one run.
fn done(id: u64, result: RunResult) -> Reply {
    Reply::Done {
        id,
        result,
        classes: vec![],
        runs_done: 1,
    }
}

/// Answers every run with a worker error until shutdown (no device).
fn refuse_all(r: &mut impl io::Read, w: &mut impl io::Write, reason: &str) -> io::Result<()> {
    while let Some(req) = protocol::read_frame::<Request>(r)? {
        match req {
            Request::Run(run) => {
                let result = RunResult::WorkerError(reason.to_string());
                protocol::write_frame(w, &done(run.id, result))?;
            }
            Request::Compile(run) => {
                let result = Err(RunResult::WorkerError(reason.to_string()));
                protocol::write_frame(w, &Reply::Compiled { id: run.id, result })?;
            }
            Request::Prepare(_) => {}
            Request::Shutdown => break,
        }
    }
    Ok(())
}

#[cfg(feature = "cuda")]
fn serve_device(ordinal: u32, r: &mut impl io::Read, w: &mut impl io::Write) -> io::Result<()> {
    use super::ffi;
    let gpu = ffi::load()
        .map_err(|e| e.to_string())
        .and_then(|d| ffi::Gpu::open(d, ordinal).map_err(|e| e.to_string()));
    let gpu = match gpu {
        Ok(g) => g,
        Err(reason) => {
            protocol::write_frame(
                w,
                &Reply::Hello {
                    pid: std::process::id(),
                    device: Err(NoDevice(reason.clone())),
                },
            )?;
            return refuse_all(r, w, &reason);
        }
    };
    protocol::write_frame(
        w,
        &Reply::Hello {
            pid: std::process::id(),
            device: Ok(gpu.info.clone()),
        },
    )?;
    let gpu = &gpu;
    std::thread::scope(|s| {
        // The compile thread: compiles the cases the parent announced (`Request::Prepare`)
        // while this thread runs the current one (protocol docs).
        let (to_compiler, jobs) = std::sync::mpsc::channel::<protocol::RunRequest>();
        let (compiled_tx, compiled_rx) = std::sync::mpsc::channel();
        s.spawn(move || {
            if gpu.bind().is_err() {
                // No second thread: every case compiles in its own `Run`.
                return;
            }
            for run in jobs {
                let c = cuda::compile(gpu, &run);
                if compiled_tx.send((run.id, c)).is_err() {
                    break;
                }
            }
        });
        let mut bufs = cuda::Buffers::default();
        let mut prepared = cuda::Prepared::default();
        while let Some(req) = protocol::read_frame::<Request>(r)? {
            match req {
                Request::Prepare(run) => {
                    let id = run.id;
                    if to_compiler.send(run).is_ok() {
                        prepared.announce(id);
                    }
                }
                Request::Compile(run) => {
                    let result =
                        cuda::compile(gpu, &run).map(|(image, us)| (protocol::Image(image), us));
                    protocol::write_frame(w, &Reply::Compiled { id: run.id, result })?;
                }
                Request::Run(run) => {
                    let compiled = prepared
                        .take(run.id, &compiled_rx)
                        .unwrap_or_else(|| cuda::compile(gpu, &run));
                    let reply = cuda::run_compiled(gpu, &mut bufs, &run, compiled, w)?;
                    let fatal = matches!(
                        reply,
                        Reply::Done {
                            result: RunResult::Hung { .. } | RunResult::Fault { sticky: true, .. },
                            ..
                        }
                    );
                    protocol::write_frame(w, &reply)?;
                    if fatal {
                        // The context is poisoned (sticky fault) or still runs a hung kernel:
                        // leave, and let the parent start a fresh worker (what was prepared
                        // is dropped with the process).
                        std::process::exit(0);
                    }
                }
                Request::Shutdown => break,
            }
        }
        drop(to_compiler);
        Ok(())
    })
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::super::arch;
    use super::super::emu;
    use super::super::error::ImageError;
    use super::super::ffi::{DriverError, Geometry, Gpu, Kernel, LinkInput, Mapped};
    use super::super::protocol::{
        self, Compile, Link, Reply, RunClass, RunRequest, RunResult, Timing,
    };
    use std::collections::HashMap;
    use std::io;
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::{Duration, Instant};

    /// Host-mapped buffers, grown as needed and reused across cases.
    #[derive(Default)]
    pub struct Buffers {
        obs: Option<Mapped>,
        status: Option<Mapped>,
    }

    fn ensure(gpu: &Gpu, slot: &mut Option<Mapped>, words: usize) -> Result<(), DriverError> {
        if slot.as_ref().is_some_and(|m| m.capacity() >= words) {
            return Ok(());
        }
        if let Some(old) = slot.take() {
            gpu.free_mapped(old);
        }
        let m = gpu.alloc_mapped(words.next_power_of_two().max(1024))?;
        *slot = Some(m);
        Ok(())
    }

    /// `run`'s PTX compiled to a cubin by the ptxas at `path` (a temporary file each way).
    fn ptxas_cubin(
        run: &RunRequest,
        path: &str,
        arch: &str,
        options: &[String],
    ) -> Result<Vec<u8>, ImageError> {
        ptxas_image(&run.ptx, &run.id.to_string(), path, arch, options)
    }

    /// `text` compiled by the ptxas at `path` (temporary files named after the process and
    /// `name`).
    fn ptxas_image(
        text: &str,
        name: &str,
        path: &str,
        arch: &str,
        options: &[String],
    ) -> Result<Vec<u8>, ImageError> {
        let dir = std::env::temp_dir();
        let stem = dir.join(format!("tcgen05-worker-{}-{name}", std::process::id()));
        let ptx = stem.with_extension("ptx");
        let cubin = stem.with_extension("cubin");
        std::fs::write(&ptx, text).map_err(|source| ImageError::WritePtx {
            path: ptx.clone(),
            source,
        })?;
        let out = std::process::Command::new(path)
            .arg(format!("-arch={arch}"))
            .args(options)
            .arg("-o")
            .arg(&cubin)
            .arg(&ptx)
            .output();
        let _ = std::fs::remove_file(&ptx);
        let out = out.map_err(|source| ImageError::Spawn {
            ptxas: path.to_string(),
            source,
        })?;
        if !out.status.success() {
            let _ = std::fs::remove_file(&cubin);
            return Err(ImageError::Rejected {
                command: format!("{path} -arch={arch} {}", options.join(" ")),
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        let image = std::fs::read(&cubin).map_err(|source| ImageError::ReadCubin {
            path: cubin.clone(),
            source,
        });
        let _ = std::fs::remove_file(&cubin);
        image
    }

    /// The `cuda-emu` routines a case links with: their object, or their PTX.
    enum Routines {
        Object(Arc<Vec<u8>>),
        Ptx,
    }

    impl Routines {
        fn input(&self) -> LinkInput<'_> {
            match self {
                Routines::Object(o) => LinkInput::Cubin(o),
                Routines::Ptx => LinkInput::Ptx(emu::routines_module().as_bytes()),
            }
        }
    }

    /// A case compiled: its cubin and the microseconds the compile took, or the result that
    /// replaces running it.
    pub type Compiled = Result<(Vec<u8>, u64), RunResult>;

    /// The cases sent to the compile thread (`Request::Prepare`) and the ones it finished.
    #[derive(Default)]
    pub struct Prepared {
        /// Announced, not yet received from the compile thread.
        pending: Vec<u64>,
        /// Received, not yet run.
        ready: Vec<(u64, Compiled)>,
    }

    impl Prepared {
        /// Case `id` went to the compile thread.
        pub fn announce(&mut self, id: u64) {
            self.pending.push(id);
        }

        /// Case `id`'s cubin from the compile thread (waiting for it if it is still being
        /// compiled), or `None` when it was not prepared or the compile thread is gone. Cubins
        /// prepared for earlier cases that were never run are dropped.
        pub fn take(
            &mut self,
            id: u64,
            compiled: &std::sync::mpsc::Receiver<(u64, Compiled)>,
        ) -> Option<Compiled> {
            let found = loop {
                if let Some(i) = self.ready.iter().position(|(k, _)| *k == id) {
                    break Some(self.ready.swap_remove(i).1);
                }
                if !self.pending.contains(&id) {
                    break None;
                }
                match compiled.recv() {
                    Ok((k, c)) => {
                        self.pending.retain(|p| *p != k);
                        self.ready.push((k, c));
                    }
                    Err(_) => {
                        self.pending.clear();
                        break None;
                    }
                }
            };
            // Ids grow; one below this case's was abandoned by the parent.
            self.ready.retain(|(k, _)| *k >= id);
            found
        }
    }

    /// The `cuda-emu` routines ([`emu::routines_module`]) compiled by `ptxas` for `arch` as a
    /// relocatable object, once per worker and (ptxas, arch); `None` where ptxas failed (the
    /// linker then compiles their PTX with each case, which is correct and slower).
    fn routines_object(ptxas: &str, arch: &str) -> Option<Arc<Vec<u8>>> {
        type Objects = Mutex<HashMap<(String, String), Option<Arc<Vec<u8>>>>>;
        static OBJECTS: OnceLock<Objects> = OnceLock::new();
        let mut done = OBJECTS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        done.entry((ptxas.to_string(), arch.to_string()))
            .or_insert_with(|| {
                let options = ["-c".to_string()];
                ptxas_image(emu::routines_module(), "routines", ptxas, arch, &options)
                    .map(Arc::new)
                    .ok()
            })
            .clone()
    }

    /// What `run`'s module links with ([`RunRequest::link`]): nothing, or the routines.
    fn routines_for(run: &RunRequest) -> Option<Routines> {
        match &run.link {
            Link::Alone => None,
            Link::EmuRoutines { ptxas, arch } => Some(
                ptxas
                    .as_deref()
                    .and_then(|p| routines_object(p, arch))
                    .map_or(Routines::Ptx, Routines::Object),
            ),
        }
    }

    /// Compiles `run`'s module to a cubin without touching the GPU: the driver's JIT through
    /// its linker ([`Gpu::link`], which leaves the context free for other threads' launches),
    /// or ptxas, linked with what [`RunRequest::link`] names; a [`Compile::Cubin`] run is
    /// compiled already.
    pub fn compile(gpu: &Gpu, run: &RunRequest) -> Compiled {
        let t0 = Instant::now();
        let image = match &run.compile {
            Compile::Cubin { image, compile_us } => return Ok((image.0.clone(), *compile_us)),
            Compile::Jit => {
                let ptx = LinkInput::Ptx(run.ptx.as_bytes());
                match routines_for(run) {
                    None => gpu.link(&[ptx], run.jit_opt),
                    Some(r) => gpu.link(&[ptx, r.input()], run.jit_opt),
                }
            }
            Compile::Ptxas {
                path,
                arch,
                options,
            } => match routines_for(run) {
                None => ptxas_cubin(run, path, arch, options).map_err(|e| (0, e.to_string())),
                // A relocatable object of the case, linked with the routines.
                Some(r) => {
                    let options: Vec<String> = std::iter::once("-c".to_string())
                        .chain(options.iter().cloned())
                        .collect();
                    match ptxas_cubin(run, path, arch, &options) {
                        Ok(obj) => gpu.link(&[LinkInput::Cubin(&obj), r.input()], run.jit_opt),
                        Err(e) => Err((0, e.to_string())),
                    }
                }
            },
        };
        match image {
            Ok(image) => Ok((image, t0.elapsed().as_micros() as u64)),
            Err((code, log)) => Err(RunResult::CompileError { code, log }),
        }
    }

    /// Loads a compiled case's cubin: its kernel and the microseconds the load took, or the
    /// result that replaces running it.
    fn load(gpu: &Gpu, run: &RunRequest, image: &[u8]) -> Result<(Kernel, u64), RunResult> {
        let t0 = Instant::now();
        match gpu.load_module(image, &run.kernel, run.jit_opt) {
            Ok(k) => Ok((k, t0.elapsed().as_micros() as u64)),
            // A load error that poisons the context (rare) must not leak into the next case.
            Err((code, _)) if arch::is_sticky(code) => {
                let name = gpu.error(code, "cuModuleLoadDataEx").name;
                Err(RunResult::Fault {
                    code,
                    name,
                    sticky: true,
                    words: vec![],
                    status: vec![],
                    timing: Timing::default(),
                })
            }
            Err((code, log)) => Err(RunResult::CompileError { code, log }),
        }
    }

    /// Runs a case compiled by [`compile`] [`RunRequest::runs`] times, up to
    /// [`RunRequest::batch`] of them per launch (each copy with its own observation and status
    /// blocks), each with its perturbation ([`protocol::perturbation`]) in its status block's
    /// perturbation word; the reply groups the completed runs by their words. A launch that
    /// does not complete ends the series at its first copy that did not finish (status word
    /// [`RunRequest::done_word`]), whose run the reply names. A case that did not compile is
    /// reported as such.
    pub fn run_compiled(
        gpu: &Gpu,
        bufs: &mut Buffers,
        run: &RunRequest,
        compiled: Compiled,
        w: &mut impl io::Write,
    ) -> io::Result<Reply> {
        let id = run.id;
        let (image, compile_us) = match compiled {
            Ok(c) => c,
            Err(result) => return Ok(super::done(id, result)),
        };
        let (kernel, load_us) = match load(gpu, run, &image) {
            Ok(k) => k,
            Err(result) => return Ok(super::done(id, result)),
        };
        let compile_us = compile_us + load_us;
        let runs = run.runs.max(1);
        let batch = batch_of(run).min(runs);
        let obs_words = run.obs_words as usize;
        let status_words = run.status_words as usize;
        let n_max = batch as usize;
        if let Err(e) = ensure(gpu, &mut bufs.obs, obs_words * n_max).and_then(|()| {
            if status_words > 0 {
                ensure(gpu, &mut bufs.status, status_words * n_max)
            } else {
                Ok(())
            }
        }) {
            gpu.unload(kernel);
            return Ok(super::done(id, RunResult::WorkerError(e.to_string())));
        }
        protocol::write_frame(w, &Reply::Launched { id, compile_us })?;
        let budget = Duration::from_millis(match run.runs_budget_ms {
            0 => run.timeout_ms,
            b => b,
        });
        let mut classes: Vec<RunClass> = Vec::new();
        let mut first: Option<RunResult> = None;
        let mut total = Timing {
            compile_us,
            ..Timing::default()
        };
        let mut runs_done = 0;
        let mut r = 0;
        'runs: while r < runs {
            let n = batch.min(runs - r);
            let (copies, stop) = run_launch(gpu, bufs, run, &kernel, compile_us, r, n);
            if let Some(Stop { timing, .. }) = &stop {
                total.run_us += timing.run_us;
            }
            for (k, c) in copies.into_iter().enumerate() {
                let this = r + k as u32;
                runs_done = this + 1;
                let Copy {
                    words,
                    mut status,
                    timing,
                } = c;
                if k == 0 {
                    total.run_us += timing.run_us;
                    total.readback_us += timing.readback_us;
                }
                for i in [PERTURB_WORD, run.done_word as usize] {
                    if let Some(p) = status.get_mut(i).filter(|_| i > 0) {
                        *p = 0;
                    }
                }
                match classes
                    .iter()
                    .position(|c| c.words == words && c.status == status)
                {
                    Some(i) => classes[i].runs += 1,
                    None if classes.len() < MAX_CLASSES => classes.push(RunClass {
                        words: words.clone(),
                        status: status.clone(),
                        runs: 1,
                        first_run: this,
                    }),
                    // Past MAX_CLASSES distinct observations the series stops: each needs
                    // judging.
                    None => break 'runs,
                }
                if first.is_none() {
                    first = Some(RunResult::Completed {
                        words,
                        status,
                        timing,
                    });
                }
            }
            if let Some(Stop { result, at, .. }) = stop {
                // Anything but a completion ends the series (a sticky fault or a hang also
                // ends the worker); the reply names this run.
                if !matches!(
                    result,
                    RunResult::Hung { .. } | RunResult::Fault { sticky: true, .. }
                ) {
                    gpu.unload(kernel);
                }
                return Ok(Reply::Done {
                    id,
                    result,
                    classes: if runs > 1 { classes } else { vec![] },
                    runs_done: r + at + 1,
                });
            }
            r += n;
            if Duration::from_micros(total.run_us) >= budget {
                break;
            }
        }
        gpu.unload(kernel);
        let mut result = first.expect("at least one run completed");
        if let RunResult::Completed { timing, .. } = &mut result {
            *timing = total;
        }
        Ok(Reply::Done {
            id,
            result,
            classes: if runs > 1 { classes } else { vec![] },
            runs_done,
        })
    }

    /// Distinct observations kept of one case's runs; the series stops at the next new one.
    pub const MAX_CLASSES: usize = 256;

    /// Observation words one launch's copies may hold together (the batch shrinks to fit).
    const MAX_BATCH_WORDS: usize = 1 << 22;

    /// Runs per launch for `run`: its [`RunRequest::batch`], at least 1, fewer when the copies'
    /// observation blocks would pass [`MAX_BATCH_WORDS`].
    fn batch_of(run: &RunRequest) -> u32 {
        let fit = MAX_BATCH_WORDS / (run.obs_words as usize).max(1);
        run.batch.clamp(1, fit.max(1) as u32)
    }

    /// The status word of the perturbation (`emu::PERTURB_WORD`).
    const PERTURB_WORD: usize = emu::PERTURB_WORD as usize;

    /// One copy of a launch that finished: its observation and status words.
    struct Copy {
        words: Vec<u32>,
        status: Vec<u32>,
        timing: Timing,
    }

    /// How a launch that did not complete ended: `result` is copy `at`'s (the first that did
    /// not finish).
    struct Stop {
        result: RunResult,
        at: u32,
        timing: Timing,
    }

    /// One launch of `n` copies of a loaded kernel (runs `r0 .. r0 + n`): zero the buffers,
    /// set each copy's perturbation, launch, poll until it ends or `run.timeout_ms` passes,
    /// read back. Returns the copies that finished before the first that did not, and how
    /// that one ended (`None`: all completed).
    fn run_launch(
        gpu: &Gpu,
        bufs: &mut Buffers,
        run: &RunRequest,
        kernel: &Kernel,
        compile_us: u64,
        r0: u32,
        n: u32,
    ) -> (Vec<Copy>, Option<Stop>) {
        let nu = n as usize;
        let obs_words = run.obs_words as usize;
        let status_words = run.status_words as usize;
        let (obs, status) = (bufs.obs.as_mut().expect("ensured"), &mut bufs.status);
        obs.zero(obs_words * nu);
        let mut params = vec![obs.device_ptr()];
        if status_words > 0 {
            let s = status.as_mut().expect("ensured");
            s.zero(status_words * nu);
            if status_words > PERTURB_WORD {
                for k in 0..n {
                    let p = protocol::perturbation(run.perturb_seed, r0 + k);
                    s.write(k as usize * status_words + PERTURB_WORD, p);
                }
            }
            params.push(s.device_ptr());
        }
        let geometry = Geometry {
            grid_x: run.grid_x * n,
            block_x: run.block_x,
            cluster_x: run.cluster_x,
            dyn_smem: run.dyn_smem,
        };
        let obs = &*obs;
        let status = &*status;
        let read_status = || -> Vec<u32> {
            match status {
                Some(s) if status_words > 0 => s.read(status_words * nu),
                _ => vec![],
            }
        };
        // Splits the launch's words into copies; `upto` copies.
        let split = |words: &[u32], st: &[u32], upto: usize, timing: Timing| -> Vec<Copy> {
            (0..upto)
                .map(|k| Copy {
                    words: words[k * obs_words..(k + 1) * obs_words].to_vec(),
                    status: st
                        .get(k * status_words..(k + 1) * status_words)
                        .map(<[u32]>::to_vec)
                        .unwrap_or_default(),
                    timing,
                })
                .collect()
        };
        // The first copy that did not finish (its ended threads short of the copy's).
        let threads = run.grid_x * run.block_x;
        let unfinished = |st: &[u32]| -> usize {
            if nu == 1 || status_words <= run.done_word as usize || run.done_word == 0 {
                return 0;
            }
            (0..nu)
                .find(|k| st[k * status_words + run.done_word as usize] < threads)
                .unwrap_or(0)
        };
        let stopped = |result: RunResult, words: &[u32], st: &[u32], timing: Timing| {
            let at = unfinished(st);
            let before = split(words, st, at, Timing::default());
            let mine = |v: &[u32], size: usize| {
                v.get(at * size..(at + 1) * size)
                    .map(<[u32]>::to_vec)
                    .unwrap_or_default()
            };
            let result = match result {
                RunResult::Hung { timing, .. } => RunResult::Hung {
                    words: mine(words, obs_words),
                    status: mine(st, status_words),
                    timing,
                },
                RunResult::Fault {
                    code,
                    name,
                    sticky,
                    timing,
                    ..
                } => RunResult::Fault {
                    code,
                    name,
                    sticky,
                    words: mine(words, obs_words),
                    status: mine(st, status_words),
                    timing,
                },
                other => other,
            };
            (
                before,
                Some(Stop {
                    result,
                    at: at as u32,
                    timing,
                }),
            )
        };
        let t1 = Instant::now();
        let fault = |e: DriverError, run_us: u64| {
            let timing = Timing {
                compile_us,
                run_us,
                readback_us: 0,
            };
            let result = RunResult::Fault {
                code: e.code,
                sticky: arch::is_sticky(e.code),
                name: e.name,
                words: vec![],
                status: vec![],
                timing,
            };
            stopped(result, &obs.read(obs_words * nu), &read_status(), timing)
        };
        if let Err(e) = gpu.launch(kernel, geometry, &params) {
            if !arch::is_sticky(e.code) {
                let result = RunResult::LaunchError {
                    code: e.code,
                    name: e.name,
                };
                return (
                    vec![],
                    Some(Stop {
                        result,
                        at: 0,
                        timing: Timing::default(),
                    }),
                );
            }
            return fault(e, t1.elapsed().as_micros() as u64);
        }
        let deadline = t1 + Duration::from_millis(run.timeout_ms);
        let mut spins = 0u32;
        loop {
            match gpu.query() {
                Ok(true) => break,
                Ok(false) => {
                    if Instant::now() >= deadline {
                        let run_us = t1.elapsed().as_micros() as u64;
                        let t2 = Instant::now();
                        let words = obs.read(obs_words * nu);
                        let st = read_status();
                        let timing = Timing {
                            compile_us,
                            run_us,
                            readback_us: t2.elapsed().as_micros() as u64,
                        };
                        let hung = RunResult::Hung {
                            words: vec![],
                            status: vec![],
                            timing,
                        };
                        return stopped(hung, &words, &st, timing);
                    }
                    // Spin briefly (small kernels finish in microseconds), then sleep.
                    spins += 1;
                    if spins < 2000 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::sleep(Duration::from_micros(50));
                    }
                }
                Err(e) => return fault(e, t1.elapsed().as_micros() as u64),
            }
        }
        let run_us = t1.elapsed().as_micros() as u64;
        // Any error the kernel left behind surfaces here, and is this launch's (the previous
        // launch ended with a clean synchronization too).
        if let Err(e) = gpu.synchronize() {
            return fault(e, run_us);
        }
        let t2 = Instant::now();
        let words = obs.read(obs_words * nu);
        let st = read_status();
        let timing = Timing {
            compile_us,
            run_us,
            readback_us: t2.elapsed().as_micros() as u64,
        };
        (split(&words, &st, nu, timing), None)
    }
}

/// A fake device, so the parent's watchdog, respawn and attribution logic is tested on machines
/// without a GPU. It runs no code: a case completes with a zeroed observation buffer unless
/// its PTX holds one of the checkpoint ids below (`Stmt::Checkpoint(id)` prints `, <id>;`),
/// which select a failure.
pub mod fake {
    use super::super::arch::{self, Cc};
    use super::super::emu;
    use super::super::protocol::{self, Compile, DeviceInfo, Reply, Request, RunResult, Timing};
    use std::io;
    use std::time::Duration;

    /// The kernel traps (`CUDA_ERROR_LAUNCH_FAILED`, sticky).
    pub const TRAP: u16 = 61001;
    /// The kernel hangs; the worker reports it after the case's timeout.
    pub const HANG: u16 = 61002;
    /// The worker stops answering (the parent's own watchdog must fire).
    pub const STALL: u16 = 61003;
    /// The worker dies after the launch.
    pub const CRASH: u16 = 61004;
    /// The kernel exits with TMEM allocated (`CUDA_ERROR_TENSOR_MEMORY_LEAK`).
    pub const LEAK: u16 = 61005;
    /// The module does not compile.
    pub const COMPILE_ERROR: u16 = 61006;

    /// The JIT log of a fake compile error.
    const FAKE_COMPILE_LOG: &str =
        "ptxas application ptx input, line 12; error   : fake compile error";

    fn has(ptx: &str, id: u16) -> bool {
        ptx.contains(&format!(", {id};"))
    }

    /// Serves a fake device described by `spec` (`cc=9.0`).
    pub fn serve(
        spec: &str,
        ordinal: u32,
        r: &mut impl io::Read,
        w: &mut impl io::Write,
    ) -> io::Result<()> {
        let cc = spec
            .strip_prefix("cc=")
            .and_then(|v| v.split_once('.'))
            .and_then(|(a, b)| {
                Some(Cc {
                    major: a.parse().ok()?,
                    minor: b.parse().ok()?,
                })
            })
            .unwrap_or(Cc { major: 9, minor: 0 });
        let info = DeviceInfo {
            ordinal,
            name: format!("fake device (cc {cc})"),
            cc,
            driver_version: 13000,
            sm_count: 132,
            max_smem_optin: emu::SM90_MAX_DYN_SMEM,
        };
        protocol::write_frame(
            w,
            &Reply::Hello {
                pid: std::process::id(),
                device: Ok(info),
            },
        )?;
        while let Some(req) = protocol::read_frame::<Request>(r)? {
            let run = match req {
                Request::Run(run) => run,
                // The fake compiles nothing ahead.
                Request::Prepare(_) => continue,
                // Its "cubin" is the PTX's bytes: a runner fake then reads the PTX it carries.
                Request::Compile(run) => {
                    let result = if has(&run.ptx, COMPILE_ERROR) {
                        Err(RunResult::CompileError {
                            code: arch::code::INVALID_PTX,
                            log: FAKE_COMPILE_LOG.to_string(),
                        })
                    } else {
                        Ok((protocol::Image(run.ptx.as_bytes().to_vec()), 1))
                    };
                    protocol::write_frame(w, &Reply::Compiled { id: run.id, result })?;
                    continue;
                }
                Request::Shutdown => break,
            };
            let id = run.id;
            // A runner's case carries its "cubin" (the PTX's bytes, see `Compile` above).
            let ptx = match &run.compile {
                Compile::Cubin { image, .. } => String::from_utf8_lossy(&image.0).into_owned(),
                _ => run.ptx.clone(),
            };
            if has(&ptx, COMPILE_ERROR) {
                let log = FAKE_COMPILE_LOG.to_string();
                protocol::write_frame(
                    w,
                    &super::done(
                        id,
                        RunResult::CompileError {
                            code: arch::code::INVALID_PTX,
                            log,
                        },
                    ),
                )?;
                continue;
            }
            protocol::write_frame(w, &Reply::Launched { id, compile_us: 1 })?;
            let words = vec![0u32; run.obs_words as usize];
            let status = vec![0u32; run.status_words as usize];
            let timing = Timing {
                compile_us: 1,
                run_us: 1,
                readback_us: 1,
            };
            let fault = |code: u32, status: Vec<u32>| RunResult::Fault {
                code,
                name: arch::code_name(code).unwrap_or("?").to_string(),
                sticky: true,
                words: words.clone(),
                status,
                timing,
            };
            let result = if has(&ptx, TRAP) {
                fault(arch::code::LAUNCH_FAILED, status)
            } else if has(&ptx, LEAK) {
                fault(arch::code::TENSOR_MEMORY_LEAK, status)
            } else if has(&ptx, HANG) {
                std::thread::sleep(Duration::from_millis(run.timeout_ms));
                RunResult::Hung {
                    words: words.clone(),
                    status,
                    timing,
                }
            } else if has(&ptx, STALL) {
                std::thread::sleep(Duration::from_secs(3600));
                continue;
            } else if has(&ptx, CRASH) {
                std::process::exit(3);
            } else {
                RunResult::Completed {
                    words,
                    status,
                    timing,
                }
            };
            let fatal = matches!(result, RunResult::Hung { .. } | RunResult::Fault { .. });
            protocol::write_frame(w, &super::done(id, result))?;
            if fatal {
                std::process::exit(0);
            }
        }
        Ok(())
    }
}
