//! Regression cases (`corpus/regressions/<name>/`): a minimized case with its expected verdicts
//! stored beside it, replayed by `cargo test` (`tests/regressions.rs`) and by
//! `tcgen05-fuzz corpus verify`.
//!
//! ```text
//! corpus/regressions/<name>/
//!     case.case       the case (tcgen05_ir::codec)
//!     case.ptx        the same as PTX, for people
//!     expected.json   [`Expected`]: what the spec says of the case and why, and the verdict
//!                     on each target
//!     README.md       where it came from
//! ```
//!
//! `expected.json` keeps the spec's verdict on the case as a class and a deciding rule with the
//! reason it is right ([`SpecVerdict`], written by a person citing the spec), not a snapshot of
//! the oracle's output: replaying recomputes the oracle's expectation and checks its class and
//! rule against the stored ones, then runs every target that can be built here (ptxas and GPU
//! targets are skipped where absent, and say so) and compares its outcome with the oracle's
//! expectation. A target verdict is written `agree`, `skip: <reason class>` or
//! `discrepancy: <signature>` ([`verdict_text`]).

use super::skip_name;
use crate::diff::{self, Signature, Verdict};
use crate::target;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tcgen05_ir::Case;
use tcgen05_oracle::{Edition, Options, RunVerdict};

/// The case file of a regression folder.
pub const CASE_FILE: &str = "case.case";

/// The reason [`create`] writes for a freshly promoted case: a person replaces it with why the
/// spec gives the verdict (the regression test refuses committed cases that still have it).
pub const REASON_TO_WRITE: &str = "to write: why the spec gives this verdict, citing its sections";

/// The spec's verdict on a case: its class and deciding rule, and why that is right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecVerdict {
    /// `ill-formed` (a static violation), else the run verdict: `completes`, `may-block`,
    /// `must-deadlock`, `undefined` or `not-judged`.
    pub class: String,
    /// The deciding rule (catalogue name): the first static violation's, or for `undefined`,
    /// `may-block` and `must-deadlock` the first rule that decided the run verdict; `None` for
    /// `completes` and `not-judged`.
    pub rule: Option<String>,
    /// Why the spec gives this verdict (the sections that decide it), written by a person.
    pub why: String,
}

impl SpecVerdict {
    /// The class and rule of the oracle's expectation of `case` under `edition`, with `why`.
    pub fn of(case: &Case, edition: Edition, why: &str) -> Self {
        let e = tcgen05_oracle::expect_with(&case.program, &Options::edition(edition));
        let first = |r: &[tcgen05_ir::RuleId]| r.first().map(|r| r.as_str().to_string());
        let (class, rule) = if let Some(v) = e.violations.first() {
            ("ill-formed", Some(v.rule.as_str().to_string()))
        } else {
            match &e.run.verdict {
                RunVerdict::Completes => ("completes", None),
                RunVerdict::MayBlock { .. } => ("may-block", first(&e.run.rules)),
                RunVerdict::MustDeadlock { .. } => ("must-deadlock", first(&e.run.rules)),
                RunVerdict::Undefined(r) => ("undefined", first(r)),
                RunVerdict::NotJudged(_) => ("not-judged", None),
            }
        };
        SpecVerdict {
            class: class.into(),
            rule,
            why: why.into(),
        }
    }

    /// `class` or `class / RULE`.
    pub fn label(&self) -> String {
        match &self.rule {
            Some(r) => format!("{} / {r}", self.class),
            None => self.class.clone(),
        }
    }
}

/// `expected.json` of a regression case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expected {
    /// Oracle edition the verdicts are for.
    pub edition: Edition,
    /// Where the case came from (a finding, a hand-written probe).
    pub origin: String,
    /// What the spec says of the case, and why.
    pub spec: SpecVerdict,
    /// Target name → verdict text ([`verdict_text`]).
    pub verdicts: BTreeMap<String, String>,
}

/// The text form of a verdict of `target`.
pub fn verdict_text(v: &Verdict, target: &str) -> String {
    match v {
        Verdict::Agree => "agree".into(),
        Verdict::Skip(r) => format!("skip: {}", skip_name(r)),
        Verdict::Discrepancy(d) => format!("discrepancy: {}", Signature::of(d, target)),
    }
}

/// The verdict text of `case` on a built target.
pub fn judge(case: &Case, t: &mut dyn target::Target, edition: Edition) -> String {
    let e = tcgen05_oracle::expect_with(&case.program, &Options::edition(edition));
    let o = t.run(case);
    verdict_text(&diff::compare(&case.program, &e, &o), &t.name())
}

/// One difference between a stored expectation and a replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The regression folder.
    pub case: PathBuf,
    /// `oracle` or the target name.
    pub what: String,
    /// Stored.
    pub expected: String,
    /// Now.
    pub actual: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}: expected {}, now {}",
            self.case.display(),
            self.what,
            self.expected,
            self.actual
        )
    }
}

/// What replaying one regression case did.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// Differences from the stored expectation.
    pub mismatches: Vec<Mismatch>,
    /// Targets replayed.
    pub checked: Vec<String>,
    /// Targets not available here, and why.
    pub unavailable: Vec<(String, String)>,
}

/// Reads a regression folder.
pub fn read(dir: &Path) -> Result<(Case, Expected), String> {
    let bytes = std::fs::read(dir.join(CASE_FILE))
        .map_err(|e| format!("{}/{CASE_FILE}: {e}", dir.display()))?;
    let case = tcgen05_ir::codec::decode(&bytes)
        .map_err(|e| format!("{}/{CASE_FILE}: {e}", dir.display()))?;
    let text = std::fs::read_to_string(dir.join("expected.json"))
        .map_err(|e| format!("{}/expected.json: {e}", dir.display()))?;
    let exp: Expected =
        serde_json::from_str(&text).map_err(|e| format!("{}/expected.json: {e}", dir.display()))?;
    Ok((case, exp))
}

/// Replays one regression folder against the oracle and every target it names that can be
/// built here.
pub fn replay(dir: &Path) -> Result<Replay, String> {
    let (case, exp) = read(dir)?;
    let mut r = Replay::default();
    let now = SpecVerdict::of(&case, exp.edition, &exp.spec.why);
    if now.label() != exp.spec.label() {
        r.mismatches.push(Mismatch {
            case: dir.to_path_buf(),
            what: "oracle".into(),
            expected: exp.spec.label(),
            actual: now.label(),
        });
    }
    for (name, want) in &exp.verdicts {
        match target::resolve(name) {
            Ok(mut t) => {
                let got = judge(&case, t.as_mut(), exp.edition);
                r.checked.push(name.clone());
                if &got != want {
                    r.mismatches.push(Mismatch {
                        case: dir.to_path_buf(),
                        what: name.clone(),
                        expected: want.clone(),
                        actual: got,
                    });
                }
            }
            Err(e) => r.unavailable.push((name.clone(), e.to_string())),
        }
    }
    Ok(r)
}

/// Every regression folder under `root` (folders holding `expected.json`), sorted.
pub fn list(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join("expected.json").exists())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Writes a regression folder for `case`, recording the oracle's class and rule (with
/// [`REASON_TO_WRITE`] for the reason) and the verdicts of `targets` as they are now (targets
/// that cannot be built here are left out). Fails if the folder exists.
pub fn create(
    dir: &Path,
    case: &Case,
    edition: Edition,
    origin: &str,
    targets: &[String],
) -> Result<Expected, String> {
    if dir.exists() {
        return Err(format!("{} already exists", dir.display()));
    }
    let mut verdicts = BTreeMap::new();
    for name in targets {
        if let Ok(mut t) = target::resolve(name) {
            verdicts.insert(name.clone(), judge(case, t.as_mut(), edition));
        }
    }
    let exp = Expected {
        edition,
        origin: origin.to_string(),
        spec: SpecVerdict::of(case, edition, REASON_TO_WRITE),
        verdicts,
    };
    let tmp = dir.with_file_name(format!(
        ".{}.tmp-{}",
        dir.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(&tmp)?;
        std::fs::write(tmp.join(CASE_FILE), tcgen05_ir::codec::encode(case))?;
        std::fs::write(tmp.join("case.ptx"), tcgen05_ir::ptx::emit(&case.program))?;
        std::fs::write(
            tmp.join("expected.json"),
            serde_json::to_string_pretty(&exp).map_err(std::io::Error::other)? + "\n",
        )?;
        let mut readme = format!(
            "# Regression case `{}`\n\nOrigin: {origin}\n\nOracle edition: {edition}\n\n",
            dir.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        );
        readme.push_str(&format!(
            "Spec verdict: `{}` ({}).\n\nExpected verdicts:\n\n",
            exp.spec.label(),
            exp.spec.why
        ));
        for (t, v) in &exp.verdicts {
            readme.push_str(&format!("- `{t}`: {v}\n"));
        }
        readme.push_str("\nReplayed by `cargo test --test regressions` and `tcgen05-fuzz corpus verify corpus/regressions`. `case.ptx` is the case as PTX (`tcgen05-fuzz show case.case`).\n");
        std::fs::write(tmp.join("README.md"), readme)?;
        std::fs::rename(&tmp, dir)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_dir_all(&tmp);
        format!("writing {}: {e}", dir.display())
    })?;
    Ok(exp)
}
