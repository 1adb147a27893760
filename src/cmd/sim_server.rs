//! `tcgen05-fuzz sim-server`.

use std::process::ExitCode;

/// Arguments of `sim-server`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`sim-server` is not implemented yet")
}
