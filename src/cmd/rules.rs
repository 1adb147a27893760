//! `tcgen05-fuzz rules`: the rules catalogue (reference §6) that the oracle implements.

use crate::cmd::Format;
use std::io::Write as _;
use std::process::ExitCode;
use tcgen05_oracle::catalogue::{self, Kind};

/// Arguments of `rules`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Static => "static",
        Kind::DynamicUb => "dynamic-UB",
        Kind::Dynamic => "dynamic",
        Kind::DynamicRace => "dynamic (race)",
        Kind::Blocking => "blocking",
        Kind::Defined => "defined",
    }
}

/// Runs the subcommand.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, catalogue::ROWS)?;
            writeln!(out)?;
        }
        Format::Text => {
            for r in catalogue::ROWS {
                writeln!(
                    out,
                    "{:<24} {:<15} {} §{:<28} {}",
                    r.id.as_str(),
                    kind_word(r.kind()),
                    r.provenance.letter(),
                    r.section,
                    r.rule
                )?;
            }
            writeln!(out, "{} rules", catalogue::ROWS.len())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
