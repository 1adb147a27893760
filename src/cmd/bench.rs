//! `tcgen05-fuzz bench`.

use std::process::ExitCode;

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`bench` is not implemented yet")
}
