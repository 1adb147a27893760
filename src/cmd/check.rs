//! `tcgen05-fuzz check`.

use std::process::ExitCode;

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`check` is not implemented yet")
}
