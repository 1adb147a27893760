//! `tcgen05-fuzz show`.

use std::process::ExitCode;

/// Arguments of `show`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`show` is not implemented yet")
}
