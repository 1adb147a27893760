//! A campaign on one LLVM target: generated cases (valid programs, near-misses, litmus
//! members) through [`tcgen05_drivers::llvm::pipeline`], verdicts counted per intent, findings deduplicated and
//! written as reproducers in the compiler's own terms ([`write_reproducer`]).
//!
//! What is a finding (docs/llvm.md):
//! - on a valid program: any tool failure (crash, "Cannot select", verifier failure,
//!   diagnostic), a time-out, ptxas rejecting the produced PTX, or a translation-validation
//!   mismatch;
//! - on a near-miss: a crash or "Cannot select" (bad input must be diagnosed, not crash the
//!   compiler), and ptxas rejecting the PTX LLVM produced from it (a *late rejection*: the
//!   error surfaces in ptxas, without a source location). Otherwise the near-miss's verdict is
//!   counted per broken rule: rejected (diagnosed by LLVM) or passed through.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tcgen05_drivers::llvm::LlvmInstall;
use tcgen05_drivers::llvm::pipeline::{self, LlvmVerdict, Options, Run};
use tcgen05_drivers::llvm::run::FailureKind;
use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_ir::{Case, Intent};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Run seed of the case stream.
    pub seed: u64,
    /// Stop after this many cases.
    pub max_cases: Option<u64>,
    /// Stop after this long.
    pub max_time: Option<Duration>,
    /// Where finding folders go (none: not written).
    pub out: Option<PathBuf>,
    /// The case stream: mixed (valid programs, near-misses, litmus members) or near-misses of
    /// every mutator in turn.
    pub mode: Mode,
    /// Time to spend minimizing each new finding's program ([`minimize_finding`]); zero: the
    /// finding keeps the generated case.
    pub minimize: Duration,
}

/// One deduplicated finding.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    /// Its signature (kind and normalized first line).
    pub signature: String,
    /// How many cases had it.
    pub count: usize,
    /// The first case's index in the stream.
    pub first_case: u64,
    /// Its folder, when written.
    pub folder: Option<PathBuf>,
    /// Program size ([`tcgen05_ir::Program::size`]) before and after minimization.
    pub sizes: (usize, usize),
    /// The verdict, in words.
    pub detail: String,
}

/// Counts and findings of a campaign.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Summary {
    /// Cases run.
    pub cases: u64,
    /// Verdict counts per intent (`valid`, `near-miss`, `unknown`).
    pub verdicts: BTreeMap<String, BTreeMap<String, usize>>,
    /// Near-miss verdicts per broken rule.
    pub near_miss: BTreeMap<String, BTreeMap<String, usize>>,
    /// The consequence the rules catalogue gives each broken rule (reference §6), beside
    /// LLVM's verdicts: `reject` rules should be diagnosed.
    pub consequence: BTreeMap<String, String>,
    /// Forms without intrinsic, with how many cases they kept from running.
    pub not_lowered: BTreeMap<String, usize>,
    /// Why the validator could not follow a compiled case (numbers blanked), with counts.
    pub not_validated: BTreeMap<String, usize>,
    /// What the behaviour check of validated cases ran (lifted PTX or the source program) and
    /// its verdict, with counts ([`tcgen05_drivers::llvm::behaviour`]).
    pub behaviour: BTreeMap<String, usize>,
    /// Findings by signature.
    pub findings: BTreeMap<String, Finding>,
    /// Time in opt/llc/mlir-translate.
    pub tool_time: Duration,
    /// Time in ptxas.
    pub ptxas_time: Duration,
    /// The harness's own time (generation, lowering, printing, parsing, validation).
    pub harness_time: Duration,
    /// Time lifting, simulating and in the oracle for the behaviour check.
    pub behaviour_time: Duration,
    /// Time minimizing findings (tools included).
    pub minimize_time: Duration,
    /// Wall time.
    pub elapsed: Duration,
}

/// Whether `v` is a finding for a case of intent `intent`, and of which kind.
pub fn finding_kind(intent: &Intent, v: &LlvmVerdict) -> Option<&'static str> {
    let valid = matches!(intent, Intent::Valid);
    match v {
        LlvmVerdict::ToolFailed {
            kind: FailureKind::Crash,
            ..
        } => Some("crash"),
        LlvmVerdict::ToolFailed {
            kind: FailureKind::CannotSelect,
            ..
        } => Some("cannot-select"),
        LlvmVerdict::ToolFailed { .. } if valid => Some("valid-program-rejected"),
        LlvmVerdict::ToolTimedOut { .. } => Some("timeout"),
        LlvmVerdict::PtxasRejected { .. } if valid => Some("ptxas-rejects-llvm-output"),
        LlvmVerdict::PtxasRejected { .. } => Some("late-rejection"),
        LlvmVerdict::Miscompiled(_) if valid => Some("miscompiled"),
        LlvmVerdict::Disallowed(_) if valid => Some("disallowed"),
        _ => None,
    }
}

fn detail(v: &LlvmVerdict) -> String {
    match v {
        LlvmVerdict::NotLowered(m) => m
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; "),
        LlvmVerdict::ToolFailed { stage, detail, .. } => format!("{}: {detail}", stage.as_str()),
        LlvmVerdict::ToolTimedOut { stage, limit_ms } => {
            format!("{} ran past {limit_ms} ms", stage.as_str())
        }
        LlvmVerdict::PtxasRejected { message } => message.clone(),
        LlvmVerdict::Miscompiled(m) => m
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
        LlvmVerdict::NotValidated(w) | LlvmVerdict::Disallowed(w) => w.clone(),
        LlvmVerdict::Validated { threads } => format!("{threads} threads"),
    }
}

/// The signature of a finding: its kind and the first line of its detail with numbers,
/// registers and paths blanked, so that one bug seen with different operands is one finding.
pub fn signature(kind: &str, v: &LlvmVerdict) -> String {
    let d = detail(v);
    let first = d.lines().next().unwrap_or("");
    // The part after the thread prefix of a mismatch.
    let first = first.split_once(": ").map_or(
        first,
        |(a, b)| {
            if a.starts_with("cta ") { b } else { first }
        },
    );
    // Words that start with a digit (numbers, hex values, line numbers) become `N`.
    let s: Vec<String> = first
        .split_whitespace()
        .map(|w| {
            if w.starts_with(|c: char| c.is_ascii_digit()) {
                let tail: String = w
                    .chars()
                    .rev()
                    .take_while(|c| !c.is_ascii_alphanumeric())
                    .collect();
                format!("N{}", tail.chars().rev().collect::<String>())
            } else {
                w.to_string()
            }
        })
        .collect();
    let s = s.join(" ");
    format!("{kind}: {s}")
}

fn short_hash(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:012x}", h & 0xFFFF_FFFF_FFFF)
}

/// Writes a reproducer of `run` for `case` into `dir`: `case.json` (the program model),
/// `source.ptx` (the printer's PTX), `case.ll` (valid input for `opt`, `llc` and
/// `llvm-reduce`), `case.mlir` for the MLIR front end (the raised module), `commands.sh` (the exact command lines,
/// on files), `produced.ptx` when llc produced one, and `verdict.txt`.
pub fn write_reproducer(
    dir: &Path,
    install: &LlvmInstall,
    opts: &Options,
    case: &Case,
    run: &Run,
) -> std::io::Result<()> {
    // Written into a sibling folder, then renamed: a reader never sees half a reproducer.
    let tmp = dir.with_extension("partial");
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp)?;
    }
    std::fs::create_dir_all(&tmp)?;
    write_files(&tmp, install, opts, case, run)?;
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::rename(&tmp, dir)
}

/// The files of [`write_reproducer`], into `dir`.
fn write_files(
    dir: &Path,
    install: &LlvmInstall,
    opts: &Options,
    case: &Case,
    run: &Run,
) -> std::io::Result<()> {
    let json = serde_json::to_string_pretty(case).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("case.json"), json)?;
    std::fs::write(dir.join("source.ptx"), tcgen05_ir::ptx::emit(&case.program))?;
    std::fs::write(dir.join("case.ll"), &run.ll)?;
    if let Some(m) = &run.mlir {
        std::fs::write(dir.join("case.mlir"), m)?;
    }
    if let Some(p) = &run.ptx {
        std::fs::write(dir.join("produced.ptx"), p)?;
    }
    // The tools' paths on the machine that found it; each can be overridden from the
    // environment (`OPT=opt-22 LLC=llc-22 PTXAS=ptxas sh commands.sh`).
    let mut sh = String::from(
        "#!/bin/sh\n# Reproduces the verdict in verdict.txt; each tool reads the previous file.\n# Override a tool's path with OPT=, LLC=, MLIR_TRANSLATE= or PTXAS=.\nset -e\ncd \"$(dirname \"$0\")\"\n",
    );
    sh.push_str(&format!(
        "OPT=\"${{OPT:-{}}}\"\nLLC=\"${{LLC:-{}}}\"\n",
        install.opt().display(),
        install.llc().display()
    ));
    let mut input = "case.ll".to_string();
    if opts.frontend == pipeline::Frontend::Mlir
        && let Some(mt) = &install.mlir_translate
    {
        sh.push_str(&format!(
            "MLIR_TRANSLATE=\"${{MLIR_TRANSLATE:-{}}}\"\n# case.mlir is `$MLIR_TRANSLATE --import-llvm case.ll` with the tcgen05 calls raised to nvvm ops\n\"$MLIR_TRANSLATE\" --mlir-to-llvmir case.mlir -o translated.ll\n",
            mt.display()
        ));
        input = "translated.ll".into();
    }
    sh.push_str(&format!(
        "\"$OPT\" -{} -S {input} -o optimized.ll\n",
        opts.level.as_str()
    ));
    let llc: Vec<String> = pipeline::llc_args(&case.program)
        .into_iter()
        .take_while(|a| a != "-o")
        .collect();
    sh.push_str(&format!(
        "\"$LLC\" {} optimized.ll -o produced.ptx\n",
        llc.join(" ")
    ));
    if let Some(px) = &opts.ptxas {
        sh.push_str(&format!(
            "PTXAS=\"${{PTXAS:-{}}}\"\n\"$PTXAS\" -arch={} -O0 produced.ptx -o /dev/null\n",
            px.path.display(),
            case.program.launch.target
        ));
    }
    std::fs::write(dir.join("commands.sh"), sh)?;
    let intent = match &case.intent {
        Intent::Valid => "a valid program".to_string(),
        Intent::NearMiss { breaks } => {
            format!("a near-miss breaking {}", breaks.as_str())
        }
        Intent::Unknown => "no claim (made by hand or parsed)".to_string(),
    };
    std::fs::write(
        dir.join("verdict.txt"),
        format!(
            "{}\n{}\n\nintent: {intent}\ncommands as run (input on standard input):\n{}\n",
            run.verdict.name(),
            detail(&run.verdict),
            run.commands.join("\n")
        ),
    )
}

/// The behaviour check's result in a few words, for counting.
fn behaviour_key(b: &tcgen05_drivers::llvm::behaviour::Behaviour) -> String {
    use tcgen05_drivers::llvm::behaviour::Subject;
    let what = match &b.subject {
        Subject::Lifted => "lifted PTX".to_string(),
        Subject::Source { not_lifted } => {
            // The lifter's reason with numbers blanked, so one reason is one row.
            let why: String = not_lifted
                .split_whitespace()
                .map(|w| {
                    if w.starts_with(|c: char| c.is_ascii_digit()) {
                        "N"
                    } else {
                        w
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            format!("source program (not lifted: {why})")
        }
    };
    let v = match &b.verdict {
        tcgen05_drivers::diff::Verdict::Agree => "agree",
        tcgen05_drivers::diff::Verdict::Skip(_) => "skip",
        tcgen05_drivers::diff::Verdict::Discrepancy(_) => "discrepancy",
    };
    format!("{what}: {v}")
}

/// The LLVM target's outcome of a case, narrowed to one finding: a crash carrying `sig` when
/// the case still shows the finding with signature `sig`, `accepted` otherwise. The shared
/// minimizer keeps a candidate when the diff engine's signature of the outcome stays the
/// same, so with this target it keeps exactly the candidates that show the same LLVM
/// finding.
struct SameFinding<'a> {
    install: &'a LlvmInstall,
    opts: &'a Options,
    sig: &'a str,
    name: String,
}

impl tcgen05_drivers::target::Target for SameFinding<'_> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn version(&self) -> String {
        self.install.version.to_string()
    }

    fn kind(&self) -> tcgen05_drivers::target::TargetKind {
        tcgen05_drivers::target::TargetKind::CompileOnly
    }

    fn run(&mut self, case: &Case) -> tcgen05_drivers::outcome::Outcome {
        let r = pipeline::check_seeded(
            self.install,
            &case.program,
            case.provenance.seed.unwrap_or(0),
            self.opts,
        );
        match finding_kind(&case.intent, &r.verdict) {
            // Reported as a crash carrying the signature, whatever the finding's kind: a
            // crash is a discrepancy on any program, so the judge keeps exactly the candidates
            // that show this finding (a late rejection, reported as the rejection it is, would
            // be allowed for the near-misses that show it, which break a static rule).
            Some(kind) if signature(kind, &r.verdict) == self.sig => {
                tcgen05_drivers::outcome::Outcome::Crashed {
                    detail: self.sig.to_string(),
                }
            }
            _ => tcgen05_drivers::outcome::Outcome::Accepted,
        }
    }
}

/// Shrinks the program model of a finding with the shared minimizer (`crate::minimize`): a
/// candidate is kept when it breaks no rule the original does not and still shows the finding
/// with signature `sig` (kind and normalized first line). Returns the smallest case and its
/// run, or `None` when minimization could not start (the case no longer shows the finding).
pub fn minimize_finding(
    install: &LlvmInstall,
    opts: &Options,
    case: &Case,
    sig: &str,
    budget: Duration,
) -> Option<(Case, Run)> {
    let mut t = SameFinding {
        install,
        opts,
        sig,
        name: "llvm".into(),
    };
    let m = crate::minimize::minimize(
        case,
        &mut t,
        &tcgen05_oracle::Options::default(),
        budget,
        &mut |_| {},
    )
    .ok()?;
    let run = pipeline::check_seeded(
        install,
        &m.case.program,
        m.case.provenance.seed.unwrap_or(0),
        opts,
    );
    Some((m.case, run))
}

/// Runs a campaign of generated cases (`cfg.mode`) on `install` with `opts`.
pub fn run(install: &LlvmInstall, opts: &Options, cfg: &Config) -> Summary {
    let start = Instant::now();
    let stream = Stream::new(tcgen05_generators::Config::default(), cfg.seed, cfg.mode);
    let mut s = Summary::default();
    let mut index = 0u64;
    loop {
        if cfg.max_cases.is_some_and(|m| index >= m)
            || cfg.max_time.is_some_and(|t| start.elapsed() >= t)
        {
            break;
        }
        let t_gen = Instant::now();
        let case = stream.case_at(index);
        let gen_time = t_gen.elapsed();
        let r = pipeline::check_seeded(
            install,
            &case.program,
            case.provenance.seed.unwrap_or(0),
            opts,
        );
        s.tool_time += r.tool_time;
        s.ptxas_time += r.ptxas_time;
        s.harness_time += r.harness_time + gen_time;
        s.behaviour_time += r.behaviour_time;
        if let Some(b) = &r.behaviour {
            *s.behaviour.entry(behaviour_key(b)).or_default() += 1;
        }
        let intent = match &case.intent {
            Intent::Valid => "valid",
            Intent::NearMiss { .. } => "near-miss",
            Intent::Unknown => "unknown",
        };
        *s.verdicts
            .entry(intent.into())
            .or_default()
            .entry(r.verdict.name())
            .or_default() += 1;
        if let Intent::NearMiss { breaks } = &case.intent {
            s.consequence.entry(breaks.to_string()).or_insert_with(|| {
                tcgen05_oracle::catalogue::row(*breaks)
                    .consequence
                    .to_string()
            });
            *s.near_miss
                .entry(breaks.to_string())
                .or_default()
                .entry(r.verdict.name())
                .or_default() += 1;
        }
        if let LlvmVerdict::NotLowered(m) = &r.verdict {
            for n in m {
                *s.not_lowered.entry(n.to_string()).or_default() += 1;
            }
        }
        if let LlvmVerdict::NotValidated(_) = &r.verdict {
            let sig = signature("not-validated", &r.verdict);
            let n = s.not_validated.entry(sig.clone()).or_default();
            *n += 1;
            // The first case of each reason, for the harness's own triage.
            if *n == 1
                && let Some(o) = &cfg.out
            {
                let dir = o.join("not-validated").join(short_hash(&sig));
                if let Err(e) = write_reproducer(&dir, install, opts, &case, &r) {
                    eprintln!("llvm campaign: cannot write {}: {e}", dir.display());
                }
            }
        }
        if let Some(kind) = finding_kind(&case.intent, &r.verdict) {
            let sig = signature(kind, &r.verdict);
            match s.findings.get_mut(&sig) {
                Some(f) => f.count += 1,
                None => {
                    let folder = cfg.out.as_ref().map(|o| o.join(short_hash(&sig)));
                    let t_min = Instant::now();
                    let (small, small_run) = if cfg.minimize.is_zero() {
                        (case.clone(), r.clone())
                    } else {
                        minimize_finding(install, opts, &case, &sig, cfg.minimize)
                            .unwrap_or_else(|| (case.clone(), r.clone()))
                    };
                    s.minimize_time += t_min.elapsed();
                    if let Some(dir) = &folder {
                        let written = write_reproducer(dir, install, opts, &small, &small_run)
                            .and_then(|()| {
                                let json = serde_json::to_string_pretty(&case)
                                    .map_err(std::io::Error::other)?;
                                std::fs::write(dir.join("original-case.json"), json)
                            });
                        if let Err(e) = written {
                            eprintln!("llvm campaign: cannot write {}: {e}", dir.display());
                        }
                    }
                    s.findings.insert(
                        sig.clone(),
                        Finding {
                            signature: sig,
                            count: 1,
                            first_case: index,
                            folder,
                            sizes: (case.program.size(), small.program.size()),
                            detail: detail(&small_run.verdict),
                        },
                    );
                }
            }
        }
        index += 1;
    }
    s.cases = index;
    s.elapsed = start.elapsed();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_blank_numbers_so_one_bug_is_one_finding() {
        let v = |d: &str| LlvmVerdict::PtxasRejected { message: d.into() };
        assert_eq!(
            signature(
                "late-rejection",
                &v("Argument 1 of 'tcgen05.alloc': value 48 must be power of 2")
            ),
            signature(
                "late-rejection",
                &v("Argument 1 of 'tcgen05.alloc': value 96 must be power of 2")
            )
        );
        assert_ne!(
            signature("late-rejection", &v("a")),
            signature("late-rejection", &v("b"))
        );
    }

    #[test]
    fn findings_depend_on_the_intent() {
        let rejected = LlvmVerdict::PtxasRejected {
            message: "x".into(),
        };
        assert_eq!(
            finding_kind(&Intent::Valid, &rejected),
            Some("ptxas-rejects-llvm-output")
        );
        let nm = Intent::NearMiss {
            breaks: tcgen05_ir::rule::RuleId::ALL[0],
        };
        assert_eq!(finding_kind(&nm, &rejected), Some("late-rejection"));
        assert_eq!(
            finding_kind(&Intent::Valid, &LlvmVerdict::Validated { threads: 1 }),
            None
        );
        assert_eq!(finding_kind(&nm, &LlvmVerdict::Miscompiled(vec![])), None);
    }
}
