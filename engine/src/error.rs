//! The errors of the engine.

use std::path::{Path, PathBuf};
use tcgen05_drivers::target::TargetError;

/// Why a campaign (or another engine operation) could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A target named on the command line cannot be built here.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The output folder holds another campaign.
    #[error(
        "{} holds another campaign: {differences}. Give this one its own folder (--out <another folder>), or rerun the campaign that is there with its options to continue it",
        out.display()
    )]
    AnotherCampaign {
        /// The output folder.
        out: PathBuf,
        /// How the stored campaign differs from the one asked for, in words.
        differences: String,
    },
    /// The checkpoint of the output folder belongs to another campaign.
    #[error("{}/state.json belongs to another campaign", out.display())]
    AnotherCheckpoint {
        /// The output folder.
        out: PathBuf,
    },
    /// `campaign.json` cannot be read as a campaign.
    #[error("{}: {error}", path.display())]
    NotACampaign {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        error: String,
    },
    /// `state.json` cannot be read as a checkpoint.
    #[error("{} is not a campaign checkpoint: {error}", path.display())]
    NotACheckpoint {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        error: String,
    },
    /// A file or folder could not be read or written.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done ("reading", "writing", ...).
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A worker could not build its targets, or a thread could not start or panicked.
    #[error("{0}")]
    Worker(String),
    /// A failure of the engine itself (a value that does not serialize).
    #[error("internal error: {0}")]
    Internal(String),
}

impl EngineError {
    /// An I/O error while doing `what` to `path`.
    pub fn io(what: &'static str, path: &Path, source: std::io::Error) -> Self {
        EngineError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }

    /// An internal error from any error.
    pub fn internal(e: impl std::fmt::Display) -> Self {
        EngineError::Internal(e.to_string())
    }

    /// Whether the error is about the user's input (a target that does not build, an output
    /// folder of another campaign, a malformed checkpoint) rather than a failure of the
    /// machine or the engine.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            EngineError::Target(_)
                | EngineError::AnotherCampaign { .. }
                | EngineError::AnotherCheckpoint { .. }
                | EngineError::NotACampaign { .. }
                | EngineError::NotACheckpoint { .. }
        )
    }
}
