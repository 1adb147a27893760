//! `tcgen05-fuzz corpus merge|verify|promote`.
//!
//! - `merge DIR... --out DIR`: findings deduplicated by signature (the smaller minimized case
//!   wins), loose case files deduplicated by program hash, and, when the inputs are campaign
//!   folders (shards), their counts and coverage summed into one set of reports;
//! - `verify DIR...`: every stored case re-checked against the current oracle: a finding whose
//!   expectation changed or whose stored outcome is no longer a discrepancy, a regression case
//!   whose verdicts changed, a near miss the oracle no longer flags: each is *drift*;
//! - `promote FINDING`: a minimized finding becomes a regression case in `corpus/regressions/`.

use super::{EXIT_FINDINGS, bad_input};
use anyhow::Context as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcgen05_drivers::diff::Verdict;
use tcgen05_drivers::report::{self, Summary, regression};
use tcgen05_drivers::store;
use tcgen05_engine::judge;
use tcgen05_ir::observe::Layout;
use tcgen05_ir::{Case, Intent, Provenance, codec};
use tcgen05_oracle::{Edition, Options};

/// Corpus subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Merge corpora, deduplicating by signature and program hash.
    Merge {
        /// Campaign folders, findings stores, or folders of case files.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// The merged folder (created; may exist).
        #[arg(long)]
        out: PathBuf,
    },
    /// Re-check every stored case against the current oracle and report drift.
    Verify {
        /// Campaign folders, findings stores, regression folders, or folders of case files.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// Make a minimized finding a regression case (`corpus/regressions/<name>/`).
    Promote {
        /// The finding folder (`out/campaign/findings/<id>`).
        finding: PathBuf,
        /// Name of the regression case (default: `<kind>-<id>`).
        #[arg(long)]
        name: Option<String>,
        /// The regressions folder.
        #[arg(long, default_value = "corpus/regressions")]
        to: PathBuf,
        /// Targets whose verdicts to record (default: `sim` and the finding's target).
        #[arg(long)]
        targets: Option<String>,
    },
}

/// Runs the subcommand.
pub fn run(c: Command) -> anyhow::Result<ExitCode> {
    match c {
        Command::Merge { dirs, out } => merge(&dirs, &out),
        Command::Verify { dirs } => verify(&dirs),
        Command::Promote {
            finding,
            name,
            to,
            targets,
        } => promote(&finding, name, &to, targets.as_deref()),
    }
}

/// A stable hash of a program (FNV-1a of its codec bytes, without intent or provenance).
pub fn program_hash(case: &Case) -> String {
    let bare = Case {
        program: case.program.clone(),
        intent: Intent::Unknown,
        provenance: Provenance::default(),
    };
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in codec::encode(&bare) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    format!("{h:016x}")
}

/// What an input folder holds.
#[derive(Debug, Default)]
struct Found {
    /// Finding folders (`report.json` + the minimized case).
    findings: Vec<PathBuf>,
    /// Regression folders (`expected.json` + `case.case`).
    regressions: Vec<PathBuf>,
    /// Loose case files.
    cases: Vec<PathBuf>,
    /// Campaign reports (`report.json` with a summary).
    summaries: Vec<PathBuf>,
}

/// The minimized case of a finding folder (`minimized.case`; `case.bin` in older stores).
pub fn finding_case(dir: &Path) -> Option<PathBuf> {
    ["minimized.case", "case.bin"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.exists())
}

fn scan(dir: &Path, f: &mut Found, depth: u32) -> anyhow::Result<()> {
    if finding_case(dir).is_some() && dir.join("report.json").exists() {
        f.findings.push(dir.to_path_buf());
        return Ok(());
    }
    if dir.join(regression::CASE_FILE).exists() && dir.join("expected.json").exists() {
        f.regressions.push(dir.to_path_buf());
        return Ok(());
    }
    if dir.join("report.json").exists() && dir.join("campaign.json").exists() {
        f.summaries.push(dir.join("report.json"));
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if depth < 8 {
                scan(&p, f, depth + 1)?;
            }
        } else if std::fs::File::open(&p).ok().and_then(|mut fh| {
            let mut head = [0u8; 8];
            std::io::Read::read_exact(&mut fh, &mut head)
                .ok()
                .map(|()| codec::looks_like_case(&head))
        }) == Some(true)
        {
            f.cases.push(p);
        }
    }
    Ok(())
}

fn scan_all(dirs: &[PathBuf]) -> anyhow::Result<Found> {
    let mut f = Found::default();
    for d in dirs {
        if !d.is_dir() {
            return Err(bad_input(format!("{}: not a folder", d.display())));
        }
        scan(d, &mut f, 0)?;
    }
    Ok(f)
}

fn read_case(p: &Path) -> anyhow::Result<Case> {
    let bytes = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
    codec::decode(&bytes).map_err(|e| bad_input(format!("{}: {e}", p.display())))
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    let tmp = to.with_file_name(format!(
        ".{}.tmp-{}",
        to.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        if e.path().is_file() {
            std::fs::copy(e.path(), tmp.join(e.file_name()))?;
        }
    }
    if to.exists() {
        std::fs::remove_dir_all(to)?;
    }
    std::fs::rename(&tmp, to).with_context(|| format!("writing {}", to.display()))?;
    Ok(())
}

fn merge(dirs: &[PathBuf], out: &Path) -> anyhow::Result<ExitCode> {
    let found = scan_all(dirs)?;
    let fdir = out.join("findings");
    std::fs::create_dir_all(&fdir).with_context(|| format!("creating {}", fdir.display()))?;
    // Findings: one per signature id; the smallest minimized case wins (ties: first input).
    let mut best: BTreeMap<String, (usize, PathBuf)> = BTreeMap::new();
    let mut bad = Vec::new();
    for f in &found.findings {
        match store::read_report(f) {
            Ok(r) => {
                let size = r.sizes.1;
                match best.get(&r.signature_id) {
                    Some((s, _)) if *s <= size => {}
                    _ => {
                        best.insert(r.signature_id.clone(), (size, f.clone()));
                    }
                }
            }
            Err(e) => bad.push(e.to_string()),
        }
    }
    // The output's own findings (a merge into an existing folder) compete too.
    for (id, (size, from)) in &best {
        let dest = fdir.join(id);
        if dest == *from {
            continue;
        }
        if let Ok(r) = store::read_report(&dest)
            && r.sizes.1 <= *size
        {
            continue;
        }
        copy_dir(from, &dest)?;
    }
    // Loose cases: one per program hash.
    let mut hashes: BTreeMap<String, PathBuf> = BTreeMap::new();
    for p in &found.cases {
        match read_case(p) {
            Ok(c) => {
                hashes.entry(program_hash(&c)).or_insert_with(|| p.clone());
            }
            Err(e) => bad.push(e.to_string()),
        }
    }
    if !hashes.is_empty() {
        let cdir = out.join("cases");
        std::fs::create_dir_all(&cdir)?;
        for (h, p) in &hashes {
            let c = read_case(p)?;
            report::write_atomic(&cdir.join(format!("{h}.case")), &codec::encode(&c))?;
            report::write_atomic(
                &cdir.join(format!("{h}.ptx")),
                tcgen05_ir::ptx::emit(&c.program).as_bytes(),
            )?;
        }
    }
    // Campaign shards: one summary.
    let mut parts = Vec::new();
    for s in &found.summaries {
        parts.push(report::read_summary(s).map_err(|e| bad_input(e.to_string()))?);
    }
    if !parts.is_empty() {
        let mut m = Summary::merge(&parts);
        m.findings = report::findings_in(&fdir, "findings").0;
        report::write_all(out, &m)?;
    }
    for b in &bad {
        eprintln!("skipped: {b}");
    }
    outln!(
        "{} finding folder(s) in, {} signature(s) out; {} case file(s) in, {} program(s) out; {} campaign report(s) merged into {}",
        found.findings.len(),
        best.len(),
        found.cases.len(),
        hashes.len(),
        parts.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn edition_of(text: &str) -> Edition {
    text.parse().unwrap_or_default()
}

fn verify(dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let found = scan_all(dirs)?;
    let mut drift: Vec<String> = Vec::new();
    let mut checked = 0usize;
    for f in &found.findings {
        checked += 1;
        let r = match store::read_report(f) {
            Ok(r) => r,
            Err(e) => {
                drift.push(format!("{}: unreadable: {e}", f.display()));
                continue;
            }
        };
        let case = match read_case(&finding_case(f).unwrap_or_else(|| f.join("minimized.case"))) {
            Ok(c) => c,
            Err(e) => {
                drift.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        let opts = Options::edition(edition_of(&r.edition));
        let now = tcgen05_oracle::expect_with(&case.program, &opts);
        if now != r.expected {
            drift.push(format!("{}: the oracle's expectation changed", f.display()));
        }
        let ruling = judge::rule(
            &case.program,
            &Layout::of(&case.program),
            &now,
            &r.observed,
            &r.sig.target,
            judge::wait_bound_of(&r.sig.target),
        );
        match (ruling.verdict, ruling.signature) {
            (Verdict::Discrepancy(_), Some(sig)) => {
                if sig != r.sig {
                    drift.push(format!(
                        "{}: the stored outcome now gives another signature: {sig}",
                        f.display()
                    ));
                }
            }
            (v, _) => drift.push(format!(
                "{}: the stored outcome is no longer a discrepancy: {}",
                f.display(),
                regression::verdict_text(&v, &r.sig.target)
            )),
        }
    }
    for d in &found.regressions {
        checked += 1;
        match tcgen05_engine::regression::replay(d) {
            Ok(r) => {
                drift.extend(r.mismatches.iter().map(ToString::to_string));
                for (t, why) in &r.unavailable {
                    eprintln!("{}: `{t}` not replayed: {why}", d.display());
                }
            }
            Err(e) => drift.push(e.to_string()),
        }
    }
    for p in &found.cases {
        checked += 1;
        let case = match read_case(p) {
            Ok(c) => c,
            Err(e) => {
                drift.push(e.to_string());
                continue;
            }
        };
        let v = tcgen05_oracle::check(&case.program);
        match case.intent {
            Intent::Valid if !v.is_empty() => {
                drift.push(format!("{}: a valid case now breaks {}", p.display(), v[0]));
            }
            Intent::NearMiss { breaks } if !v.iter().any(|x| x.rule == breaks) => {
                // Dynamic rules are not in `check`: look in the run expectation too.
                let e = tcgen05_oracle::expect(&case.program);
                let set = report::coverage::rules_exercised(
                    &Case {
                        intent: Intent::Unknown,
                        ..case.clone()
                    },
                    &e,
                );
                if !set.contains(breaks) {
                    drift.push(format!(
                        "{}: a near miss of {breaks:?} is no longer flagged by the oracle",
                        p.display()
                    ));
                }
            }
            _ => {}
        }
    }
    for d in &drift {
        outln!("drift: {d}");
    }
    outln!("{checked} stored case(s) checked, {} drifted", drift.len());
    Ok(if drift.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FINDINGS)
    })
}

fn promote(
    finding: &Path,
    name: Option<String>,
    to: &Path,
    targets: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let r = store::read_report(finding).map_err(|e| bad_input(e.to_string()))?;
    let case = read_case(&finding_case(finding).unwrap_or_else(|| finding.join("minimized.case")))?;
    let name = name.unwrap_or_else(|| format!("{}-{}", r.sig.kind.as_str(), r.signature_id));
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(bad_input(format!("`{name}` is not a usable folder name")));
    }
    let targets: Vec<String> = match targets {
        Some(t) => tcgen05_drivers::target::parse_list(t),
        None => {
            let mut v = vec!["sim".to_string()];
            if r.sig.target != "sim" {
                v.push(r.sig.target.clone());
            }
            v
        }
    };
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    let dir = to.join(&name);
    let origin = format!("finding {} ({})", r.signature_id, r.signature);
    let exp =
        tcgen05_engine::regression::create(&dir, &case, edition_of(&r.edition), &origin, &targets)
            .map_err(|e| bad_input(e.to_string()))?;
    outln!("{}: regression case written", dir.display());
    for (t, v) in &exp.verdicts {
        outln!("  {t}: {v}");
    }
    outln!("replayed by: cargo test --test regressions");
    Ok(ExitCode::SUCCESS)
}
