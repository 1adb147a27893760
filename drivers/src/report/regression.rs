//! Regression cases (`corpus/regressions/<name>/`): a minimized case with its expected verdicts
//! stored beside it, replayed by `cargo test` (`tests/regressions.rs`) and by
//! `tcgen05-fuzz corpus verify` (`tcgen05_engine::regression`, which judges and writes them:
//! this module holds the folder layout and the file format).
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
use crate::diff::{Signature, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tcgen05_ir::Case;
use tcgen05_oracle::{Edition, Options, RunVerdict};

/// The case file of a regression folder.
pub const CASE_FILE: &str = "case.case";

/// The reason `tcgen05_engine::regression::create` writes for a freshly promoted case: a person replaces it with why the
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

/// Why a regression folder cannot be read ([`read`]).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A file of the folder cannot be read.
    #[error("{}/{file}: {error}", dir.display())]
    Unreadable {
        /// The regression folder.
        dir: PathBuf,
        /// The file in it.
        file: &'static str,
        /// Why.
        error: std::io::Error,
    },
    /// The case file does not decode.
    #[error("{}/{CASE_FILE}: {error}", dir.display())]
    NotACase {
        /// The regression folder.
        dir: PathBuf,
        /// What the decoder found wrong.
        error: tcgen05_ir::codec::CodecError,
    },
    /// `expected.json` is not an expectation.
    #[error("{}/expected.json: {error}", dir.display())]
    NotAnExpectation {
        /// The regression folder.
        dir: PathBuf,
        /// What the JSON parser found wrong.
        error: serde_json::Error,
    },
}

/// Reads a regression folder.
pub fn read(dir: &Path) -> Result<(Case, Expected), ReadError> {
    let unreadable = |file, error| ReadError::Unreadable {
        dir: dir.to_path_buf(),
        file,
        error,
    };
    let bytes = std::fs::read(dir.join(CASE_FILE)).map_err(|e| unreadable(CASE_FILE, e))?;
    let case = tcgen05_ir::codec::decode(&bytes).map_err(|error| ReadError::NotACase {
        dir: dir.to_path_buf(),
        error,
    })?;
    let text = std::fs::read_to_string(dir.join("expected.json"))
        .map_err(|e| unreadable("expected.json", e))?;
    let exp: Expected =
        serde_json::from_str(&text).map_err(|error| ReadError::NotAnExpectation {
            dir: dir.to_path_buf(),
            error,
        })?;
    Ok((case, exp))
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
