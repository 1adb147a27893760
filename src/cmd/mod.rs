//! One module per subcommand. Each has `Args` (clap) and `run(Args) -> anyhow::Result<ExitCode>`.

pub mod bench;
pub mod campaign;
pub mod check;
pub mod corpus;
pub mod generate;
pub mod litmus;
pub mod minimize;
pub mod reproduce;
pub mod rules;
pub mod show;
pub mod sim_server;
pub mod targets;

use std::process::ExitCode;

/// Exit code: findings or discrepancies were reported.
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code: bad input (unreadable or malformed file, wrong arguments).
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code: internal error.
pub const EXIT_INTERNAL: u8 = 3;

/// An error about the user's input (exit code 2), as opposed to an internal failure (3).
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Builds a bad-input error.
pub fn bad_input(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadInput(msg.into()))
}

/// An engine error as a command's error: bad input (exit code 2) where the engine says so.
pub fn engine_error(e: tcgen05_engine::EngineError) -> anyhow::Error {
    if e.is_bad_input() {
        bad_input(e.to_string())
    } else {
        anyhow::Error::new(e)
    }
}

/// The exit code for an error returned by a subcommand.
pub fn exit_code_for(e: &anyhow::Error) -> ExitCode {
    if e.chain().any(|c| c.is::<BadInput>()) {
        ExitCode::from(EXIT_BAD_INPUT)
    } else {
        ExitCode::from(EXIT_INTERNAL)
    }
}

/// Output format of listing commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// For people.
    #[default]
    Text,
    /// For machines.
    Json,
}
