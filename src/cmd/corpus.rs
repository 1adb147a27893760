//! `tcgen05-fuzz corpus merge|verify`.

use std::process::ExitCode;

/// Corpus subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Merge corpora, deduplicating by signature and program hash.
    Merge {},
    /// Re-check every stored case against the current oracle and report drift.
    Verify {},
}

/// Runs the subcommand.
pub fn run(_c: Command) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`corpus` is not implemented yet")
}
