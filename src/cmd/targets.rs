//! `tcgen05-fuzz targets`.

use std::process::ExitCode;

/// Arguments of `targets`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`targets` is not implemented yet")
}
