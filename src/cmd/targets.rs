//! `tcgen05-fuzz targets`: the targets this machine has, and why the others are not usable.

use super::Format;
use std::process::ExitCode;
use tcgen05_drivers::sim::faults::Fault;
use tcgen05_drivers::target::{self, Availability, TargetKind};

/// Arguments of `targets`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Runs `targets`.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let all = target::available_targets();
    match args.format {
        Format::Json => outln!("{}", serde_json::to_string_pretty(&all)?),
        Format::Text => {
            let width = all.iter().map(|t| t.name.len()).max().unwrap_or(0);
            for t in &all {
                let kind = match t.kind {
                    TargetKind::CompileOnly => "compile",
                    TargetKind::Running => "run",
                };
                let state = match &t.availability {
                    Availability::Available => "available".to_string(),
                    Availability::Unavailable(why) => format!("unavailable: {why}"),
                };
                let version = t
                    .version
                    .as_deref()
                    .map(|v| format!(" [{v}]"))
                    .unwrap_or_default();
                outln!(
                    "{:<width$}  {kind:<7}  {state}{version}\n{:<width$}  {}",
                    t.name,
                    "",
                    t.description
                );
            }
            outln!(
                "\nChoose targets with --targets a,b,c or the {} variable.",
                target::TARGETS_VAR
            );
            outln!(
                "\nSimulators with an injected bug, to see the harness find one: sim+<fault>, e.g. sim+{}",
                Fault::ALL[0].name()
            );
            let fw = Fault::ALL.iter().map(|f| f.name().len()).max().unwrap_or(0);
            for f in Fault::ALL {
                outln!("  {:<fw$}  {}", f.name(), f.description());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
