//! The typed errors of the hardware targets: why a device does not suit a flavour
//! ([`DeviceError`]), why no worker executable was found ([`WorkerError`]), why a worker could
//! not be started ([`StartError`]) or stopped answering ([`ReplyError`]), why the worker found
//! no device ([`NoDevice`]) and why it could not build a case's image ([`ImageError`]). Errors
//! that cross the process boundary travel as their text in the protocol
//! ([`super::protocol::RunResult::WorkerError`], [`super::protocol::RunResult::CompileError`]).

use super::arch::Cc;
use std::path::PathBuf;
use std::time::Duration;

/// Why a device does not suit a flavour (`cuda`: tcgen05, reference §1; `cuda-emu`:
/// thread-block clusters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// A 10.x or 11.x part this build has no target name for.
    #[error(
        "found compute capability {0}, a tcgen05 generation this build has no target name for \
         (known: 10.0 sm_100a, 10.3 sm_103a, 11.0 sm_110a)"
    )]
    UnknownGeneration(Cc),
    /// A part without tensor memory.
    #[error(
        "found compute capability {0}; tcgen05 needs 10.x or 11.x (sm_100a, sm_103a, sm_110a); \
         use the `cuda-emu` target on Hopper (9.0)"
    )]
    NoTcgen05(Cc),
    /// A part older than Hopper (no clusters) for `cuda-emu`.
    #[error("found compute capability {0}; cuda-emu needs 9.0 or newer (thread-block clusters)")]
    NoClusters(Cc),
}

/// Why the worker executable was not found ([`super::find_worker`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkerError {
    /// `TCGEN05_CUDA_WORKER` names no file.
    #[error("TCGEN05_CUDA_WORKER={} is not a file", .0.display())]
    NotAFile(PathBuf),
    /// The running binary's path is unknown.
    #[error("cannot locate the running binary: {0}")]
    CurrentExe(String),
    /// No worker next to the running binary.
    #[error(
        "the CUDA worker `{name}` was not found (tried {tried}); build it with `cargo build \
         --release -p tcgen05-drivers` or set TCGEN05_CUDA_WORKER"
    )]
    NotFound {
        /// The file name looked for.
        name: String,
        /// The paths tried, comma-separated.
        tried: String,
    },
}

/// Why a worker could not be started ([`super::supervisor::Supervisor`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// The process could not be created.
    #[error("cannot start the CUDA worker {}: {reason}", exe.display())]
    Spawn {
        /// The executable.
        exe: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// A standard stream of the child was not piped.
    #[error("worker has no {0}")]
    NoPipe(&'static str),
    /// The first message was something else than a hello.
    #[error("the worker's first message was not a hello: {0}")]
    NotHello(String),
    /// The worker ended (or sent garbage) before its hello.
    #[error("the CUDA worker failed to start: {reason}; {death}")]
    Died {
        /// What the reader saw.
        reason: String,
        /// Exit status and the last lines of its stderr.
        death: String,
    },
    /// No hello within the limit.
    #[error("the CUDA worker did not say hello within {0:?}")]
    HelloTimeout(Duration),
    /// The worker started but found no usable device (its reason).
    #[error("{0}")]
    NoDevice(NoDevice),
    /// A replacement worker found no usable device (its reason).
    #[error("a respawned worker found no device: {0}")]
    RespawnNoDevice(NoDevice),
}

/// Why the worker has no device: its reason, as the worker's hello carries it
/// ([`super::protocol::Reply::Hello`]; serialized as the bare text).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
#[serde(transparent)]
#[error("{0}")]
pub struct NoDevice(pub String);

/// Why the parent stopped reading the worker's replies.
#[derive(Debug, thiserror::Error)]
pub enum ReplyError {
    /// The worker's output ended.
    #[error("the worker closed its output")]
    Closed,
    /// A frame that does not decode (its header, length or body).
    #[error("bad frame from the worker: {0}")]
    BadFrame(#[source] std::io::Error),
}

/// Why the worker could not build the image a case's module loads from (ptxas mode,
/// [`super::protocol::Compile::Ptxas`]); the run reports it as a compile error with this text.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// Writing the PTX file failed.
    #[error("writing {}: {source}", path.display())]
    WritePtx {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// ptxas could not be started.
    #[error("running {ptxas}: {source}")]
    Spawn {
        /// The ptxas executable.
        ptxas: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// ptxas ran and failed.
    #[error("{command}: {status}\n{stderr}")]
    Rejected {
        /// The command line (ptxas, `-arch`, options).
        command: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// Its standard error, trimmed.
        stderr: String,
    },
    /// Reading the cubin ptxas wrote failed.
    #[error("reading {}: {source}", path.display())]
    ReadCubin {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::protocol::{self, DeviceInfo};

    /// A hello's reason travels as the bare text (the frame a `Result<DeviceInfo, String>`
    /// gives), so workers and parents of either typing read each other's hello.
    #[test]
    fn no_device_is_the_bare_text_on_the_wire() {
        let typed: Result<DeviceInfo, NoDevice> = Err(NoDevice("no driver".into()));
        let text: Result<DeviceInfo, String> = Err("no driver".into());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        protocol::write_frame(&mut a, &typed).unwrap();
        protocol::write_frame(&mut b, &text).unwrap();
        assert_eq!(a, b);
        let back: Option<Result<DeviceInfo, NoDevice>> =
            protocol::read_frame(&mut a.as_slice()).unwrap();
        assert_eq!(back, Some(typed));
    }

    /// The reader's errors keep the words the parent reports a dead worker with.
    #[test]
    fn reply_errors_name_their_cause() {
        assert_eq!(
            ReplyError::Closed.to_string(),
            "the worker closed its output"
        );
        let bad = ReplyError::BadFrame(std::io::Error::other("frame of 9 bytes exceeds the limit"));
        assert_eq!(
            bad.to_string(),
            "bad frame from the worker: frame of 9 bytes exceeds the limit"
        );
    }
}
