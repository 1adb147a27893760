//! `tcgen05-fuzz check FILE.ptx...`: checks the tcgen05 instructions and the TMEM protocol of
//! real kernels and device functions with `tcgen05_oracle::kernel`'s path analysis, completed by
//! the oracle for every kernel the general lifter can express in the program model
//! (`tcgen05_oracle::lifted`; each kernel's note says which judge saw it).
//!
//! Exit status: 0 when every kernel is clean, 1 when there are findings (an ill-formed tcgen05
//! instruction is one), 2 when an input cannot be read or is not PTX.

use super::{EXIT_FINDINGS, Format, bad_input};
use std::path::PathBuf;
use std::process::ExitCode;
use tcgen05_oracle::kernel::{FenceMode, KernelReport, Options};

/// When to apply the fence rules (MCM-XTHREAD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Fences {
    /// Only in kernels that use `tcgen05.fence` at all (Triton 3.9 and Gluon never emit it).
    #[default]
    Auto,
    /// In every kernel.
    Always,
    /// Never.
    Never,
}

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// PTX files to check.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// When to apply the fence rules (MCM-XTHREAD).
    #[arg(long, value_enum, default_value_t = Fences::Auto)]
    pub fences: Fences,
    /// Warps per CTA of the launch, for kernels that declare no `.reqntid`/`.maxntid` (with
    /// `--cluster`, the oracle judges kernels it can lift with this launch).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=16))]
    pub warps: Option<u8>,
    /// CTAs per cluster of the launch (1, 2 or 4), for kernels that declare none.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(["1", "2", "4"]))]
    pub cluster: Option<String>,
}

#[derive(Debug, serde::Serialize)]
struct FileReport {
    file: String,
    kernels: Vec<KernelReport>,
}

/// Why a file has nothing to check, if it has nothing: no function with a body, or no tcgen05
/// instruction in any.
fn nothing_to_check(kernels: &[KernelReport]) -> Option<&'static str> {
    if kernels.is_empty() {
        Some("no .entry or .func with a body")
    } else if kernels.iter().all(|k| k.tcgen05 == 0) {
        Some("no tcgen05 instructions")
    } else {
        None
    }
}

/// The launch `--warps`/`--cluster` give, completed from the first kernel's declaration.
fn launch(args: &Args, m: &tcgen05_ir::ptx::Module<'_>) -> Option<tcgen05_ir::ptx::model::Shape> {
    if args.warps.is_none() && args.cluster.is_none() {
        return None;
    }
    let declared = m
        .functions
        .iter()
        .find(|f| f.is_entry)
        .and_then(|f| tcgen05_ir::ptx::model::declared_shape(f).ok());
    Some(tcgen05_ir::ptx::model::Shape {
        warps_per_cta: args
            .warps
            .or(declared.map(|d| d.warps_per_cta))
            .unwrap_or(1),
        cluster_size: args
            .cluster
            .as_deref()
            .and_then(|c| c.parse().ok())
            .or(declared.map(|d| d.cluster_size))
            .unwrap_or(1),
        clusters: 1,
    })
}

/// Runs the subcommand.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = Options {
        fences: match args.fences {
            Fences::Auto => FenceMode::Auto,
            Fences::Always => FenceMode::Always,
            Fences::Never => FenceMode::Never,
        },
    };
    // Read and parse everything first: an unreadable input is exit 2 whatever the others hold.
    let mut reports = Vec::new();
    for f in &args.files {
        let name = f.display().to_string();
        let src = std::fs::read_to_string(f).map_err(|e| bad_input(format!("{name}: {e}")))?;
        let m = tcgen05_ir::ptx::parse_module(&src, &name).map_err(|e| bad_input(e.to_string()))?;
        let shape = launch(&args, &m);
        let kernels = tcgen05_oracle::lifted::check_module(&m, Some(&src), &opts, shape);
        reports.push(FileReport {
            file: name,
            kernels,
        });
    }
    let findings: usize = reports
        .iter()
        .flat_map(|r| &r.kernels)
        .map(|k| k.findings.len())
        .sum();
    // Printed through `outln!`: a reader that closes stdout early (`| head`) ends the output,
    // not the command, which exits with its code (crate::out).
    match args.format {
        Format::Json => outln!("{}", serde_json::to_string_pretty(&reports)?),
        Format::Text => {
            for r in &reports {
                if let Some(why) = nothing_to_check(&r.kernels) {
                    outln!("{}: nothing to check: {why}", r.file);
                }
                for k in &r.kernels {
                    if k.entry {
                        outln!(
                            "{}:{}: kernel {}: {} finding(s) ({} warps x {} CTA(s), {} blocks, {} tcgen05 instructions)",
                            r.file,
                            k.line,
                            k.kernel,
                            k.findings.len(),
                            k.warps,
                            k.ctas,
                            k.blocks,
                            k.tcgen05
                        );
                    } else {
                        outln!(
                            "{}:{}: function {}: {} finding(s) ({} blocks, {} tcgen05 instructions)",
                            r.file,
                            k.line,
                            k.kernel,
                            k.findings.len(),
                            k.blocks,
                            k.tcgen05
                        );
                    }
                    for f in &k.findings {
                        outln!(
                            "  {}:{}:{}: {} [§{}] {}",
                            r.file,
                            f.line,
                            f.col,
                            f.rule.as_str(),
                            f.section,
                            f.message
                        );
                        // The oracle's findings on a lifted kernel name the whole run (the
                        // `.entry`), with no path through the kernel.
                        if f.warps.is_empty() {
                            outln!("      `{}`", f.opcode);
                        } else {
                            outln!("      `{}`; warps {}", f.opcode, f.warps.join(", "));
                        }
                        if !f.path.is_empty() {
                            outln!("      path: {}", f.path.join(" -> "));
                        }
                    }
                    for n in &k.notes {
                        outln!("  note: {n}");
                    }
                }
            }
            outln!("{findings} finding(s) in {} file(s)", reports.len());
        }
    }
    Ok(if findings == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FINDINGS)
    })
}
