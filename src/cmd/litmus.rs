//! `tcgen05-fuzz litmus FILE... [--format json] [--edition E] [--targets T]`: what the spec
//! allows for a hand-written (or printed) litmus test: the verdict, the allowed values of each
//! observed location, whether each condition can hold, and what targets did (docs/litmus.md).
//!
//! The kernel is lifted into the program model by [`tcgen05_ir::ptx::model`] and judged by the
//! oracle. Exit status: 0; 1 when a file's `//@ expect` is not met or a target did what the
//! spec does not allow; 2 for an unreadable file, a header error, PTX that does not parse or a
//! construct the program model cannot express (each with line and column).

pub mod format;
mod report;

use super::{EXIT_FINDINGS, Format, bad_input};
use std::path::PathBuf;
use std::process::ExitCode;
use tcgen05_oracle::{CoResidency, Edition, Options};

/// Arguments of `litmus`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Litmus files (PTX with a `//@` header; docs/litmus.md).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format. JSON: one object per file (an array for several files).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// The spec wording (overrides the file's `//@ edition`).
    #[arg(long)]
    pub edition: Option<Edition>,
    /// Also run the test on these targets (as `campaign --targets`) and say whether each
    /// outcome is allowed.
    #[arg(long)]
    pub targets: Option<String>,
    /// OQ-7: co-resident CTAs share one SM's 512 columns (overrides the file's option).
    #[arg(long)]
    pub shared_sm: bool,
    /// OQ-35: several warps of one CTA allocating, or one warp freeing what another
    /// allocated, is unspecified (overrides the file's option).
    #[arg(long)]
    pub single_warp_alloc: bool,
    /// OQ-22/OQ-29: do not compute MMA values from the ISA's figure-only layouts.
    #[arg(long)]
    pub no_figure_layouts: bool,
}

/// Runs the subcommand.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Judge everything first: a bad file is exit 2 whatever the others hold.
    let mut reports = Vec::new();
    for f in &args.files {
        let name = f.display().to_string();
        let src = std::fs::read_to_string(f).map_err(|e| bad_input(format!("{name}: {e}")))?;
        let lit = format::parse(&src)
            .map_err(|e| bad_input(format!("{name}:{}:{}: {}", e.line, e.col, e.msg)))?;
        let opts = Options {
            edition: args.edition.or(lit.edition).unwrap_or_default(),
            co_residency: if args.shared_sm {
                CoResidency::SharedSm
            } else {
                lit.co_residency.unwrap_or_default()
            },
            multi_warp_alloc: !args.single_warp_alloc && lit.multi_warp_alloc.unwrap_or(true),
            figure_layouts: !args.no_figure_layouts,
        };
        let r = report::judge(&name, &src, &lit, &opts, args.targets.as_deref())?;
        reports.push(r);
    }
    let failed = reports.iter().any(report::Report::failed);
    match args.format {
        Format::Json => {
            let v = if reports.len() == 1 {
                serde_json::to_string_pretty(&reports[0])?
            } else {
                serde_json::to_string_pretty(&reports)?
            };
            outln!("{v}");
        }
        Format::Text => {
            for r in &reports {
                out!("{}", r.text());
            }
        }
    }
    Ok(if failed {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}
