//! `tcgen05-fuzz minimize`.

use std::process::ExitCode;

/// Arguments of `minimize`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`minimize` is not implemented yet")
}
