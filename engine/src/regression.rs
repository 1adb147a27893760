//! Replaying and writing regression cases (`tcgen05_drivers::report::regression`: the folder
//! layout and `expected.json`) with the judge: a target's verdict on a regression case is
//! [`crate::judge::judge`]'s, with the target's own wait bound.

use crate::judge;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tcgen05_drivers::report::regression::{
    CASE_FILE, Expected, Mismatch, REASON_TO_WRITE, ReadError, Replay, SpecVerdict, read,
    verdict_text,
};
use tcgen05_drivers::target;
use tcgen05_ir::Case;
use tcgen05_oracle::{Edition, Options};

/// The verdict text ([`verdict_text`]) of `case` on a built target, judged in `edition`.
pub fn judge(case: &Case, t: &mut dyn target::Target, edition: Edition) -> String {
    let j = judge::judge(case, &Options::edition(edition), t);
    verdict_text(j.verdict(), &t.name())
}

/// Replays one regression folder against the oracle and every target it names that can be
/// built here.
pub fn replay(dir: &Path) -> Result<Replay, ReadError> {
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

/// Why a regression folder could not be written ([`create`]).
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// The folder exists already (a regression case is never overwritten).
    #[error("{} already exists", .0.display())]
    Exists(PathBuf),
    /// A file of the folder could not be written.
    #[error("writing {}: {source}", dir.display())]
    Write {
        /// The regression folder.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
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
) -> Result<Expected, CreateError> {
    if dir.exists() {
        return Err(CreateError::Exists(dir.to_path_buf()));
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
    write().map_err(|source| {
        let _ = std::fs::remove_dir_all(&tmp);
        CreateError::Write {
            dir: dir.to_path_buf(),
            source,
        }
    })?;
    Ok(exp)
}
