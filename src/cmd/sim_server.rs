//! `tcgen05-fuzz sim-server`: the built-in simulator behind the external-simulator protocol
//! (`docs/external-protocol.md`), on stdin/stdout. With
//! `--targets 'external:tcgen05-fuzz sim-server'` the protocol is tested end to end.

use super::bad_input;
use std::process::ExitCode;
use tcgen05_drivers::external;
use tcgen05_drivers::sim::{SimConfig, simulate};

/// Arguments of `sim-server`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The simulator configuration, as a target name (`sim`, `sim:adversarial`, ...).
    #[arg(long, default_value = "sim")]
    pub sim: String,
}

/// Runs `sim-server` until stdin closes.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = match SimConfig::parse(&args.sim) {
        Some(Ok(c)) => c,
        Some(Err(e)) => return Err(bad_input(e.to_string())),
        None => return Err(bad_input(format!("`{}` is not a simulator name", args.sim))),
    };
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    let version = format!("{} {}", env!("CARGO_PKG_VERSION"), args.sim);
    external::serve(
        stdin,
        stdout,
        "tcgen05-fuzz sim-server",
        &version,
        &mut |case| simulate(&case.program, config, case.provenance.seed.unwrap_or(0)),
    )?;
    Ok(ExitCode::SUCCESS)
}
