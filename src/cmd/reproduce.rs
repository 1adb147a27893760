//! `tcgen05-fuzz reproduce <finding folder | case file | PTX file> [--targets ...]`: reruns a
//! case on targets and prints what the oracle expects against what each target did.

use super::{Format, bad_input};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use tcgen05_drivers::diff::Verdict;
use tcgen05_drivers::target;
use tcgen05_drivers::{report, store};
use tcgen05_engine::judge;
use tcgen05_ir::{Case, Intent, Provenance};
use tcgen05_oracle::{Edition, Options, RunVerdict};

/// Arguments of `reproduce`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A finding folder (with `minimized.case`), a binary case file, or a PTX file printed by
    /// tcgen05-fuzz.
    pub input: PathBuf,
    /// Targets, comma-separated (default: the finding's target, else `TCGEN05_TARGETS`, else
    /// `sim`).
    #[arg(long)]
    pub targets: Option<String>,
    /// With a finding folder: rerun the original case instead of the minimized one.
    #[arg(long)]
    pub original: bool,
    /// Oracle edition: `seeds` or `ptx93` (default: the finding's, else `seeds`).
    #[arg(long)]
    pub edition: Option<Edition>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Loads a case from a finding folder, a case file or a printed PTX file.
pub fn load_case(path: &Path, original: bool) -> anyhow::Result<(Case, Option<store::Report>)> {
    let name = path.display().to_string();
    if path.is_dir() {
        let file = path.join(if original {
            "original.case"
        } else {
            "minimized.case"
        });
        let (case, _) = load_case(&file, false)?;
        let report = store::read_report(path).ok();
        return Ok((case, report));
    }
    let bytes = std::fs::read(path).map_err(|e| bad_input(format!("{name}: cannot read: {e}")))?;
    if tcgen05_ir::codec::looks_like_case(&bytes) {
        let case =
            tcgen05_ir::codec::decode(&bytes).map_err(|e| bad_input(format!("{name}: {e}")))?;
        return Ok((case, None));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| bad_input(format!("{name}: neither a case file nor PTX text")))?;
    let program = tcgen05_ir::ptx::lift::lift(&text).map_err(|e| {
        bad_input(format!(
            "{name}: not a PTX module printed by tcgen05-fuzz: {e}"
        ))
    })?;
    let provenance = Provenance {
        seed: None,
        origin: format!("lifted from {name}"),
        family: None,
    };
    Ok((
        Case {
            program,
            intent: Intent::Unknown,
            provenance,
        },
        None,
    ))
}

/// Runs `reproduce`.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (case, report) = load_case(&args.input, args.original)?;
    let flag = args
        .targets
        .clone()
        .or_else(|| report.as_ref().map(|r| r.sig.target.clone()));
    let names = target::from_env(flag.as_deref());
    let edition = args
        .edition
        .or_else(|| report.as_ref().and_then(|r| r.edition.parse().ok()))
        .unwrap_or_default();
    // Targets whose behaviour follows a spec wording (the simulator) are built in the
    // finding's edition, as the campaign that found it built them.
    let mut targets = names
        .iter()
        .map(|n| target::resolve_in(n, edition))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad_input(e.to_string()))?;
    let expected = Rc::new(tcgen05_oracle::expect_with(
        &case.program,
        &Options::edition(edition),
    ));
    let mut any = false;
    let mut rows = Vec::new();
    for t in &mut targets {
        let j = judge::judge_against(&case, Rc::clone(&expected), t.as_mut());
        any |= matches!(j.verdict(), Verdict::Discrepancy(_));
        rows.push((t.name(), t.version(), j.outcome, j.ruling.verdict));
    }
    match args.format {
        Format::Json => {
            let v = serde_json::json!({
                "input": args.input.display().to_string(),
                "expected": &*expected,
                "targets": rows.iter().map(|(n, v, o, d)| serde_json::json!({
                    "target": n, "version": v, "outcome": o, "verdict": d
                })).collect::<Vec<_>>(),
            });
            outln!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Text => {
            outln!(
                "case: {} ({} statements, {} tcgen05 instructions)",
                args.input.display(),
                case.program.size(),
                case.program.ops().len()
            );
            if let Some(r) = &report {
                outln!("finding: {}", r.signature);
            }
            outln!("expected ({edition} edition):");
            if expected.violations.is_empty() {
                outln!("  statically well-formed");
            }
            for v in &expected.violations {
                outln!("  static violation: {v}");
            }
            let run = match &expected.run.verdict {
                RunVerdict::Completes => "completes".to_string(),
                RunVerdict::MayBlock { where_ } => format!("may block ({} place(s))", where_.len()),
                RunVerdict::MustDeadlock { where_ } => {
                    format!("must deadlock ({} place(s))", where_.len())
                }
                RunVerdict::Undefined(r) => {
                    format!(
                        "undefined ({})",
                        r.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
                    )
                }
                RunVerdict::NotJudged(why) => format!("not judged ({why})"),
            };
            outln!(
                "  run: {run}; {} observation expectation(s); leak: {}",
                expected
                    .obs
                    .iter()
                    .map(|o| o.lanes.count_ones())
                    .sum::<u32>(),
                expected.leak.status.as_str()
            );
            for (n, v, o, d) in &rows {
                outln!("{n} ({v}):");
                outln!("  observed: {}", o.summary());
                match d {
                    Verdict::Agree => outln!("  verdict: agree"),
                    Verdict::Skip(r) => outln!("  verdict: skip ({})", report::skip_words(r)),
                    Verdict::Discrepancy(x) => {
                        outln!("  verdict: DISCREPANCY {}", x.kind.as_str());
                        outln!("  {}", x.detail);
                        if !x.rules.is_empty() {
                            let rules: Vec<String> = x
                                .rules
                                .iter()
                                .map(|r| {
                                    format!("{r} [§{}]", tcgen05_oracle::catalogue::section(*r))
                                })
                                .collect();
                            outln!("  rules: {}", rules.join(", "));
                        }
                    }
                }
            }
        }
    }
    Ok(if any {
        ExitCode::from(super::EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}
