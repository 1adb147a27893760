//! `tcgen05-fuzz reproduce`.

use std::process::ExitCode;

/// Arguments of `reproduce`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`reproduce` is not implemented yet")
}
