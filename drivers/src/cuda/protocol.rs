//! The framed protocol between the campaign (parent) and the CUDA worker process. The worker owns the CUDA context; the parent never touches the driver.
//!
//! # Framing
//!
//! Each message is one frame: a little-endian `u32` byte length, then that many bytes of JSON
//! (serde's externally tagged form of [`Request`] or [`Reply`]). Frames travel on the
//! worker's stdin (requests) and stdout (replies); the worker's stderr is free text for logs.
//!
//! # Conversation
//!
//! 1. On start the worker sends [`Reply::Hello`]: the device it opened, or why it could not.
//! 2. For each [`Request::Run`] it sends [`Reply::Launched`] once the module is compiled and
//!    the kernel launched (so the parent can start the case's watchdog without counting
//!    compile time), then exactly one [`Reply::Done`] with the same `id`.
//! 3. After a sticky fault or a hang the worker exits on its own after its `Done`; the parent
//!    never sends another case to it (fault attribution: every fault reported in a `Done`
//!    belongs to that `id`, because the worker synchronizes the context after every case and
//!    reports the first error it sees there).
//! 4. [`Request::Shutdown`] (or the end of stdin) ends the worker.
//!
//! A [`Request::Compile`] asks only for the compile: the worker answers with one
//! [`Reply::Compiled`] holding the cubin (or the compile error) and keeps no state of the case.
//! The parent then sends the cubin, as a [`Compile::Cubin`] run, to the device's runner worker
//! (`super::runner`).
//!
//! A [`Request::Prepare`] carries the case the parent will send next: the worker compiles it
//! on a second thread while it runs the current case, and never replies to it. Its `Run`
//! then uses that module (the `Launched` reply gives the compile time the second thread
//! spent). A prepared case is still compiled, launched and reported only as part of its own
//! `Run`: a module the JIT rejects is that `Run`'s compile error, and a worker that exits
//! (a hang, a sticky fault) drops what it prepared, so the next worker compiles the case
//! itself.

use super::arch::Cc;
use super::error::NoDevice;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

/// Largest frame either side accepts (an observation buffer of 16 Mi words, as JSON, is far
/// below it); a bigger length is a protocol error, not an allocation.
pub const MAX_FRAME: u32 = 1 << 30;

/// How the worker compiles a module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compile {
    /// In-process through the driver's JIT (`cuModuleLoadDataEx`), keeping its error log.
    Jit,
    /// Through a ptxas binary to a cubin, then `cuModuleLoadData`.
    Ptxas {
        /// The ptxas executable.
        path: String,
        /// `-arch` value, e.g. `sm_100a`.
        arch: String,
        /// Extra options, e.g. `-g-tmem-access-check` (guardrail mode).
        options: Vec<String>,
    },
    /// Already compiled (by a [`Request::Compile`] of another worker): load this cubin.
    Cubin {
        /// The cubin.
        image: Image,
        /// What compiling it took, microseconds (reported as the case's compile time).
        compile_us: u64,
    },
}

/// A compiled module (a cubin), carried in a frame as a hex string (JSON has no bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct Image(pub Vec<u8>);

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Image({} bytes)", self.0.len())
    }
}

impl Serialize for Image {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(self.0.len() * 2);
        for b in &self.0 {
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        }
        s.serialize_str(&out)
    }
}

impl<'de> Deserialize<'de> for Image {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Image, D::Error> {
        let s = String::deserialize(d)?;
        let digit = |c: u8| -> Result<u8, D::Error> {
            match c {
                b'0'..=b'9' => Ok(c - b'0'),
                b'a'..=b'f' => Ok(c - b'a' + 10),
                _ => Err(serde::de::Error::custom(format!(
                    "cubin image: {:?} is not a lowercase hex digit",
                    c as char
                ))),
            }
        };
        let b = s.as_bytes();
        if b.len() % 2 != 0 {
            return Err(serde::de::Error::custom(
                "cubin image: odd number of hex digits",
            ));
        }
        b.chunks(2)
            .map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?))
            .collect::<Result<Vec<u8>, D::Error>>()
            .map(Image)
    }
}

/// One case to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRequest {
    /// The parent's case number; echoed in the replies.
    pub id: u64,
    /// The PTX module.
    pub ptx: String,
    /// The entry's name.
    pub kernel: String,
    /// How to compile it.
    pub compile: Compile,
    /// CTAs along x (`clusters * cluster_size`).
    pub grid_x: u32,
    /// Threads per CTA along x (`32 * warps_per_cta`).
    pub block_x: u32,
    /// CTAs per cluster along x (the launch's cluster attribute; 1 launches without one).
    pub cluster_x: u32,
    /// Dynamic shared memory bytes per CTA (the emulated TMEM of `cuda-emu`).
    pub dyn_smem: u32,
    /// Words of the observation buffer (the kernel's first parameter).
    pub obs_words: u32,
    /// Words of a status block passed as a second `.param .u64` (0: the kernel has one
    /// parameter). `cuda-emu` records its trap code there.
    pub status_words: u32,
    /// How long the kernel may run before the case is reported hung, in milliseconds.
    pub timeout_ms: u64,
    /// The JIT's optimization level (`CU_JIT_OPTIMIZATION_LEVEL`, 0-4) for [`Compile::Jit`];
    /// `None` keeps the driver's default (4).
    #[serde(default)]
    pub jit_opt: Option<u32>,
    /// How many times to run the compiled kernel (0 and 1: once). The runs stop early when
    /// one ends in anything but a completion, or when together they have run for
    /// `runs_budget_ms` (so a case costs at most that plus one watchdog).
    #[serde(default)]
    pub runs: u32,
    /// Run time after which no further run starts, milliseconds (0: `timeout_ms`).
    #[serde(default)]
    pub runs_budget_ms: u64,
    /// The seed of the runs' perturbations ([`perturbation`]); used only with a status block.
    #[serde(default)]
    pub perturb_seed: u64,
    /// Runs per launch (0 and 1: one). With more, the kernel must run one independent copy
    /// of the case per `grid_x` CTAs, copy `k` writing observation words `k * obs_words ..`
    /// and status words `k * status_words ..` and counting its ended threads in status word
    /// `done_word` (`cuda-emu` does: `emu` module docs, "Many runs per launch").
    #[serde(default)]
    pub batch: u32,
    /// The status word in which each copy counts its threads that ended (see `batch`).
    #[serde(default)]
    pub done_word: u32,
    /// What the module is linked with (`cuda-emu`: the emulation's routines).
    #[serde(default)]
    pub link: Link,
}

/// What a case's module is linked with by the driver's JIT linker.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Link {
    /// Nothing: the module is whole.
    #[default]
    Alone,
    /// The `cuda-emu` routines (`emu::routines_module`), which the module calls: compiled
    /// once per worker by `ptxas` (`-c -arch=<arch>`, a relocatable object), or, without a
    /// ptxas or when it fails, handed to the linker as PTX with every case.
    EmuRoutines {
        /// The ptxas to compile them with.
        ptxas: Option<String>,
        /// Its `-arch` value (the device's, e.g. `sm_90`).
        arch: String,
    },
}

/// The perturbation word of run `run` of a case whose seed is `seed`: 0 (none) for run 0, so
/// the first run is the program as printed; else a non-zero pseudo-random word (SplitMix64 of
/// the seed and the run). The worker writes it to the status block's perturbation word
/// (`cuda-emu`: `emu::PERTURB_WORD`) before the launch; a finding records it with the run.
pub fn perturbation(seed: u64, run: u32) -> u32 {
    if run == 0 {
        return 0;
    }
    let mut z = seed ^ u64::from(run).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z as u32) | 1
}

/// The runs of one case that completed with the same observation and status words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunClass {
    /// Observation words.
    pub words: Vec<u32>,
    /// Status block words (the perturbation word cleared).
    pub status: Vec<u32>,
    /// How many runs ended so.
    pub runs: u32,
    /// The first of them (its perturbation: [`perturbation`] of the request's seed).
    pub first_run: u32,
}

/// A request from the parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// Run one case.
    Run(RunRequest),
    /// Compile the case whose `Run` comes next, while the current one runs (no reply).
    Prepare(RunRequest),
    /// Compile the case to a cubin and reply with it ([`Reply::Compiled`]) without running
    /// it; the GPU is not used (a runner worker then runs it: [`Compile::Cubin`]).
    Compile(RunRequest),
    /// Exit.
    Shutdown,
}

/// The device the worker opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: u32,
    /// Its name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Compute capability.
    pub cc: Cc,
    /// `cuDriverGetVersion` (e.g. 13000 for CUDA 13.0).
    pub driver_version: u32,
    /// Multiprocessors.
    pub sm_count: u32,
    /// Largest dynamic shared memory a block may opt in to, bytes.
    pub max_smem_optin: u32,
}

/// Time spent on one case, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Timing {
    /// Compiling and loading the module.
    pub compile_us: u64,
    /// From the launch call until the kernel finished (or was given up).
    pub run_us: u64,
    /// Copying the observation buffer out.
    pub readback_us: u64,
}

/// How one case ended in the worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunResult {
    /// The module did not compile or load; the JIT's or ptxas's log.
    CompileError {
        /// The driver code (`CUDA_ERROR_INVALID_PTX`, ...) or 0 for a ptxas failure.
        code: u32,
        /// The log.
        log: String,
    },
    /// The kernel could not be launched (configuration rejected; not sticky).
    LaunchError {
        /// Driver code.
        code: u32,
        /// Its name.
        name: String,
    },
    /// The kernel finished.
    Completed {
        /// Observation words.
        words: Vec<u32>,
        /// Status block words.
        status: Vec<u32>,
        /// Times.
        timing: Timing,
    },
    /// The kernel failed with a driver error during its run.
    Fault {
        /// Driver code.
        code: u32,
        /// Its name.
        name: String,
        /// Whether it poisoned the context (the worker exits after this reply).
        sticky: bool,
        /// Observation words as far as they were written (host-mapped buffer).
        words: Vec<u32>,
        /// Status block words.
        status: Vec<u32>,
        /// Times.
        timing: Timing,
    },
    /// The kernel did not finish within `timeout_ms` (the worker exits after this reply).
    Hung {
        /// Observation words at that moment (checkpoints say where each lane was).
        words: Vec<u32>,
        /// Status block words.
        status: Vec<u32>,
        /// Times.
        timing: Timing,
    },
    /// The worker could not do its part (allocation failure, ...): a harness error.
    WorkerError(String),
}

/// A reply from the worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reply {
    /// First message: the device, or why there is none.
    Hello {
        /// The worker's process id.
        pid: u32,
        /// The device, or the reason it is unavailable.
        device: Result<DeviceInfo, NoDevice>,
    },
    /// The case's module is loaded and its kernel launched.
    Launched {
        /// The case.
        id: u64,
        /// Compile and load time, microseconds.
        compile_us: u64,
    },
    /// The answer to a [`Request::Compile`]: the cubin and the microseconds the compile
    /// took, or the result that replaces running the case (a compile error).
    Compiled {
        /// The case.
        id: u64,
        /// The cubin and its compile time, or why there is none.
        result: Result<(Image, u64), RunResult>,
    },
    /// The case is over.
    Done {
        /// The case.
        id: u64,
        /// How it ended: the first run's completion, or the run that ended the series in
        /// anything else (run number `runs_done - 1`).
        result: RunResult,
        /// With more than one run: the completed runs, by distinct observation and status.
        #[serde(default)]
        classes: Vec<RunClass>,
        /// Runs made (the one that gave `result` included).
        #[serde(default)]
        runs_done: u32,
    },
}

/// Writes one frame.
pub fn write_frame<T: Serialize>(w: &mut impl Write, msg: &T) -> io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(io::Error::other)?;
    let len = u32::try_from(body.len()).ok().filter(|l| *l <= MAX_FRAME);
    let len = len.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&body)?;
    w.flush()
}

/// Reads one frame; `Ok(None)` at a clean end of stream (no byte of a new frame).
pub fn read_frame<T: for<'de> Deserialize<'de>>(r: &mut impl Read) -> io::Result<Option<T>> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..])? {
            0 if got == 0 => return Ok(None),
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "truncated frame header",
                ));
            }
            n => got += n,
        }
    }
    let len = u32::from_le_bytes(len);
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {len} bytes exceeds the limit"),
        ));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body)?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> Request {
        Request::Run(RunRequest {
            id: 7,
            ptx: ".version 8.0\n".into(),
            kernel: "tc_kernel".into(),
            compile: Compile::Ptxas {
                path: "/x/ptxas".into(),
                arch: "sm_100a".into(),
                options: vec!["-g-tmem-access-check".into()],
            },
            grid_x: 4,
            block_x: 64,
            cluster_x: 2,
            dyn_smem: 1024,
            obs_words: 99,
            status_words: 8,
            timeout_ms: 2000,
            jit_opt: Some(0),
            runs: 3,
            runs_budget_ms: 50,
            perturb_seed: 5,
            batch: 0,
            done_word: 0,
            link: Default::default(),
        })
    }

    #[test]
    fn frames_round_trip_back_to_back() {
        let mut buf = Vec::new();
        write_frame(&mut buf, &req()).unwrap();
        write_frame(&mut buf, &Request::Shutdown).unwrap();
        let done = Reply::Done {
            id: 7,
            result: RunResult::Fault {
                code: 721,
                name: "x".into(),
                sticky: true,
                words: vec![1, 2],
                status: vec![],
                timing: Timing::default(),
            },
            classes: vec![RunClass {
                words: vec![3],
                status: vec![0],
                runs: 2,
                first_run: 0,
            }],
            runs_done: 3,
        };
        write_frame(&mut buf, &done).unwrap();
        let mut r = &buf[..];
        assert_eq!(read_frame::<Request>(&mut r).unwrap(), Some(req()));
        assert_eq!(
            read_frame::<Request>(&mut r).unwrap(),
            Some(Request::Shutdown)
        );
        assert_eq!(read_frame::<Reply>(&mut r).unwrap(), Some(done));
        assert_eq!(read_frame::<Reply>(&mut r).unwrap(), None);
    }

    #[test]
    fn a_cubin_travels_as_hex_and_comes_back_byte_for_byte() {
        let image = Image((0..=255u8).chain([0, 0x7f, 0xff]).collect());
        let msg = Reply::Compiled {
            id: 3,
            result: Ok((image.clone(), 42)),
        };
        let text = serde_json::to_string(&msg).unwrap();
        // Two lowercase hex digits a byte, in order.
        assert!(text.contains("\"000102"), "{text}");
        assert!(
            text.contains("fe ff007fff".replace(' ', "").as_str()),
            "{text}"
        );
        let mut buf = Vec::new();
        write_frame(&mut buf, &msg).unwrap();
        let back: Reply = read_frame(&mut buf.as_slice()).unwrap().unwrap();
        assert_eq!(back, msg);
        assert_eq!(format!("{image:?}"), "Image(259 bytes)");
    }

    #[test]
    fn a_damaged_cubin_is_an_error_naming_it() {
        for bad in ["\"0g\"", "\"abc\"", "\"AB\""] {
            let e = serde_json::from_str::<Image>(bad).unwrap_err().to_string();
            assert!(e.contains("cubin image"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_first_run_is_unperturbed_and_the_others_differ() {
        assert_eq!(perturbation(42, 0), 0);
        let v: Vec<u32> = (1..100).map(|r| perturbation(42, r)).collect();
        assert!(v.iter().all(|p| *p != 0));
        let mut d = v.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), v.len(), "99 runs, 99 distinct perturbations");
        assert_ne!(perturbation(42, 1), perturbation(43, 1));
    }

    #[test]
    fn an_older_done_without_runs_still_reads() {
        let old = br#"{"Done":{"id":1,"result":{"WorkerError":"x"}}}"#;
        let mut buf = (old.len() as u32).to_le_bytes().to_vec();
        buf.extend_from_slice(old);
        match read_frame::<Reply>(&mut &buf[..]).unwrap() {
            Some(Reply::Done {
                classes, runs_done, ..
            }) => assert_eq!((classes.len(), runs_done), (0, 0)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn damaged_frames_are_errors_not_panics() {
        let mut buf = Vec::new();
        write_frame(&mut buf, &req()).unwrap();
        // Truncated body.
        let mut r = &buf[..buf.len() - 3];
        assert!(read_frame::<Request>(&mut r).is_err());
        // Truncated header.
        let mut r = &buf[..2];
        assert!(read_frame::<Request>(&mut r).is_err());
        // A length over the limit is refused before allocating.
        let huge = (MAX_FRAME + 1).to_le_bytes();
        let mut r = &huge[..];
        assert!(read_frame::<Request>(&mut r).is_err());
        // Garbage JSON.
        let mut bad = 3u32.to_le_bytes().to_vec();
        bad.extend_from_slice(b"{{{");
        let mut r = &bad[..];
        assert!(read_frame::<Request>(&mut r).is_err());
    }
}
