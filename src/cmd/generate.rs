//! `tcgen05-fuzz generate`.

use std::process::ExitCode;

/// Arguments of `generate`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`generate` is not implemented yet")
}
