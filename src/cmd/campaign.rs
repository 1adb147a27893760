//! `tcgen05-fuzz campaign`.

use std::process::ExitCode;

/// Arguments of `campaign`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`campaign` is not implemented yet")
}
