//! `tcgen05-fuzz rules`.

use std::process::ExitCode;

/// Arguments of `rules`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`rules` is not implemented yet")
}
