//! `tcgen05-fuzz rules`: the rules catalogue (reference §6) that the oracle implements.

use crate::cmd::Format;
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

/// What the S/W/D column means (reference §0, "Provenance markers").
pub const PROVENANCE_LEGEND: &str = "Src: S = stated by a seed document, W = stated only by the wider PTX ISA, D = derived by the reference (never judged with more confidence than unspecified), P = not in the spec but enforced by ptxas (the versions are named in the rule).";

/// Runs the subcommand.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.format {
        Format::Json => {
            // The rows as the catalogue has them, in the words of the text listing: `kinds`
            // as words (`dynamic-UB`), `provenance` as its letter (`S`, `W`, `D`), plus
            // `cited_section`, the section number `section` stands for (catalogue::section).
            let rows: Vec<serde_json::Value> = catalogue::ROWS
                .iter()
                .map(|r| {
                    let mut v = serde_json::to_value(r).unwrap_or_default();
                    v["kinds"] = r.kinds.iter().map(|k| kind_word(*k)).collect();
                    v["provenance"] = r.provenance.letter().into();
                    v["cited_section"] = catalogue::section(r.id).into();
                    v
                })
                .collect();
            outln!("{}", serde_json::to_string_pretty(&rows)?);
        }
        Format::Text => {
            outln!(
                "{:<24} {:<15} {:<3} {:<30} {}",
                "RULE",
                "KIND",
                "SRC",
                "SECTION",
                "WHAT IT SAYS"
            );
            for r in catalogue::ROWS {
                outln!(
                    "{:<24} {:<15} {:<3} §{:<29} {}",
                    r.id.as_str(),
                    kind_word(r.kind()),
                    r.provenance.letter(),
                    catalogue::section(r.id),
                    r.rule
                );
            }
            outln!("{} rules. {PROVENANCE_LEGEND}", catalogue::ROWS.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}
