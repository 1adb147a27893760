//! The findings store: one folder per discrepancy signature (docs/architecture.md rule 8).
//!
//! ```text
//! <root>/<signature id>/
//!     minimized.case  the minimized case (tcgen05_ir::codec)
//!     minimized.ptx   the minimized case as PTX
//!     original.case   the case as found
//!     original.ptx
//!     report.json     signature, rule and section, targets and versions, expected, observed
//!     README.md       what differs, the rule and its spec section, the command that reruns it
//! ```
//!
//! A finding is written into a fresh temporary folder beside the others, then renamed into
//! place. The rename is atomic, and renaming onto an existing folder fails, so several workers
//! (threads or processes) may write at once: the first finding of a signature wins and later
//! ones are dropped as duplicates.

use crate::diff::{Discrepancy, Signature};
use crate::outcome::Outcome;
use crate::report::ReadError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use tcgen05_ir::Case;
use tcgen05_oracle::{Expected, catalogue};

/// The report of one finding (`report.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The signature, as text.
    pub signature: String,
    /// Its id (the folder name).
    pub signature_id: String,
    /// The signature itself.
    pub sig: Signature,
    /// The discrepancy on the minimized case.
    #[serde(with = "crate::report::spelling")]
    pub discrepancy: Discrepancy,
    /// The deciding rule's spec section, if any.
    pub section: Option<String>,
    /// Target name and version, for each target involved.
    pub targets: Vec<(String, String)>,
    /// The oracle edition.
    pub edition: String,
    /// What the oracle expected (minimized case); its enum tags in kebab-case, as the other
    /// fields a user reads ([`crate::report::spelling`]).
    #[serde(with = "crate::report::spelling")]
    pub expected: Expected,
    /// What the target did (minimized case), spelled so.
    #[serde(with = "crate::report::spelling")]
    pub observed: Outcome,
    /// Size (statements) of the original and minimized programs.
    pub sizes: (usize, usize),
    /// The one command that reruns it: from the folder the campaign ran in where the campaign
    /// set it ([`Store::rerun_command`]), else ([`make_report`]) relative to the campaign's
    /// output folder.
    pub command: String,
    /// How the minimizer did; `None` where the case was stored as found (`--no-minimize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimization: Option<Minimization>,
}

/// The minimizer's statistics of one finding (`report.json`'s `minimization`, the README's
/// "Minimization" section).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Minimization {
    /// Candidates tried.
    pub tries: u64,
    /// Of those, dropped without running on the target (a rule the original kept broken, or
    /// no run could show the discrepancy).
    pub rejected: u64,
    /// Of those, kept (each a new smallest case).
    pub kept: u64,
    /// Wall time, in milliseconds.
    pub millis: u64,
    /// Whether the budget ran out before a fixed point (the case may shrink further with a
    /// larger one: `tcgen05-fuzz minimize`).
    pub timed_out: bool,
}

/// What [`Store::add`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// A new finding, in this folder.
    New(PathBuf),
    /// The signature was already stored there.
    Duplicate(PathBuf),
}

/// A findings folder.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    /// How the reader runs this program (`tcgen05-fuzz`, `cargo run --release --`): the start
    /// of every stored reproducer command.
    invocation: String,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Store {
    /// Opens (creating if needed) the store at `root`.
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<Store> {
        let root = root.into();
        std::fs::create_dir_all(&root)?;
        Ok(Store {
            root,
            invocation: "tcgen05-fuzz".to_string(),
        })
    }

    /// The same store, whose reproducer commands start with `invocation` (how the user runs
    /// the program from the folder the store's root path is relative to) instead of
    /// `tcgen05-fuzz`.
    pub fn with_invocation(mut self, invocation: impl Into<String>) -> Store {
        self.invocation = invocation.into();
        self
    }

    /// The command that reruns the finding `id` of `target`, from the folder the store's root
    /// path is relative to: `<invocation> reproduce <root>/<id> --targets <target>`.
    pub fn rerun_command(&self, id: &str, target: &str) -> String {
        format!(
            "{} reproduce {} --targets {}",
            self.invocation,
            shell_word(&self.folder(id).display().to_string()),
            shell_word(target)
        )
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of a signature id.
    pub fn folder(&self, id: &str) -> PathBuf {
        self.root.join(id)
    }

    /// Whether a signature is already stored.
    pub fn contains(&self, sig: &Signature) -> bool {
        self.folder(&sig.id()).join("report.json").exists()
    }

    /// Stores a finding atomically, deduplicated by signature (its report as given: give it
    /// the command of [`Store::rerun_command`] first).
    pub fn add(
        &self,
        minimized: &Case,
        original: &Case,
        report: &Report,
    ) -> std::io::Result<Added> {
        let dest = self.folder(&report.signature_id);
        if dest.exists() {
            return Ok(Added::Duplicate(dest));
        }
        let tmp = self.root.join(format!(
            ".tmp-{}-{}-{}",
            report.signature_id,
            std::process::id(),
            TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&tmp)?;
        let write = || -> std::io::Result<()> {
            std::fs::write(
                tmp.join("minimized.case"),
                tcgen05_ir::codec::encode(minimized),
            )?;
            std::fs::write(
                tmp.join("minimized.ptx"),
                tcgen05_ir::ptx::emit(&minimized.program),
            )?;
            std::fs::write(
                tmp.join("original.case"),
                tcgen05_ir::codec::encode(original),
            )?;
            std::fs::write(
                tmp.join("original.ptx"),
                tcgen05_ir::ptx::emit(&original.program),
            )?;
            let json = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
            std::fs::write(tmp.join("report.json"), json)?;
            std::fs::write(tmp.join("README.md"), readme(report))?;
            Ok(())
        };
        if let Err(e) = write() {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
        match std::fs::rename(&tmp, &dest) {
            Ok(()) => Ok(Added::New(dest)),
            Err(_) if dest.exists() => {
                let _ = std::fs::remove_dir_all(&tmp);
                Ok(Added::Duplicate(dest))
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                Err(e)
            }
        }
    }

    /// The signature ids stored, sorted.
    pub fn list(&self) -> std::io::Result<Vec<String>> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(&self.root)? {
            let e = e?;
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with('.') && e.path().join("report.json").exists() {
                v.push(name);
            }
        }
        v.sort();
        Ok(v)
    }
}

/// `w` quoted for a POSIX shell where it holds anything but letters, digits and `/._-+:,@=`.
pub fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@=".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Reads a finding folder's report.
pub fn read_report(folder: &Path) -> Result<Report, ReadError> {
    let path = folder.join("report.json");
    let text =
        std::fs::read_to_string(&path).map_err(|error| ReadError::Unreadable { path, error })?;
    serde_json::from_str(&text).map_err(|error| ReadError::NotA {
        path: folder.to_path_buf(),
        what: "finding report",
        error,
    })
}

/// Builds the report of a finding.
pub fn make_report(
    sig: &Signature,
    d: &Discrepancy,
    targets: Vec<(String, String)>,
    expected: &Expected,
    observed: &Outcome,
    sizes: (usize, usize),
) -> Report {
    let id = sig.id();
    Report {
        signature: sig.to_string(),
        signature_id: id.clone(),
        sig: sig.clone(),
        discrepancy: d.clone(),
        section: sig.rule.map(|r| catalogue::section(r).to_string()),
        targets,
        edition: expected.edition.to_string(),
        expected: expected.clone(),
        observed: observed.clone(),
        sizes,
        command: format!(
            "tcgen05-fuzz reproduce findings/{id} --targets {}",
            sig.target
        ),
        minimization: None,
    }
}

fn readme(r: &Report) -> String {
    let mut s = String::new();
    s.push_str(&format!("# Finding {}\n\n", r.signature_id));
    s.push_str(&format!("**Signature:** `{}`\n\n", r.signature));
    s.push_str(&format!(
        "## What differs\n\n{} ({})\n\n",
        r.discrepancy.detail,
        r.sig.kind.as_str()
    ));
    s.push_str(&format!("Observed: {}\n\n", r.observed.summary()));
    s.push_str("## The rule\n\n");
    match r.sig.rule {
        Some(rule) => {
            let row = catalogue::row(rule);
            s.push_str(&format!(
                "`{}` [§{}]: {}\n\n",
                rule,
                catalogue::section(rule),
                row.rule
            ));
        }
        None => s.push_str("No single rule: see the expected outcome in `report.json`.\n\n"),
    }
    if !r.discrepancy.forms.is_empty() {
        s.push_str(&format!(
            "Instruction forms involved: `{}`\n\n",
            r.discrepancy.forms.join("`, `")
        ));
    }
    if let Some((_, form)) = crate::diff::observer(&r.discrepancy.detail) {
        s.push_str(&format!(
            "Observed by: `{form}` (the instruction whose record differs)\n\n"
        ));
    }
    // A near miss (a case generated to break a rule) keeps breaking it when minimized; say so,
    // since `check` on `minimized.ptx` reports it too.
    let also: Vec<String> = r
        .expected
        .broken_rules()
        .into_iter()
        .filter(|x| Some(*x) != r.sig.rule)
        .map(|x| format!("`{x}`"))
        .collect();
    if !also.is_empty() {
        s.push_str(&format!(
            "The program also breaks {}, as the case it was minimized from did (the minimizer \
             keeps no candidate that breaks a rule the original kept), so `tcgen05-fuzz check` \
             on `minimized.ptx` may report it as well.\n\n",
            also.join(", ")
        ));
    }
    s.push_str(&format!("Oracle edition: {}\n\n## Targets\n\n", r.edition));
    for (n, v) in &r.targets {
        s.push_str(&format!("- `{n}`: {v}\n"));
    }
    if let Some(m) = &r.minimization {
        s.push_str(&format!(
            "\n## Minimization\n\n{} -> {} statements: {} candidates tried ({} dropped without \
             running, {} kept) in {:.1} s, {}.\n",
            r.sizes.0,
            r.sizes.1,
            m.tries,
            m.rejected,
            m.kept,
            m.millis as f64 / 1000.0,
            if m.timed_out {
                "stopped by its budget before a fixed point"
            } else {
                "to a fixed point"
            }
        ));
    }
    s.push_str(&format!(
        "\n## Files\n\n- `minimized.case`, `minimized.ptx`: the minimized case ({} statements)\n- `original.case`, `original.ptx`: the case as found ({} statements)\n- `report.json`: expected and observed in full\n\n## Rerun\n\n```\n{}\n```\n",
        r.sizes.1, r.sizes.0, r.command
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rerun_command_names_the_folder_as_the_store_was_opened() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("out dir").join("findings");
        let s = Store::open(&root)
            .unwrap()
            .with_invocation("cargo run --release --");
        assert_eq!(
            s.rerun_command("00ff", "sim+ld-num-truncated"),
            format!(
                "cargo run --release -- reproduce '{}' --targets sim+ld-num-truncated",
                root.join("00ff").display()
            )
        );
    }

    /// A near miss minimized keeps breaking its rule: the README names it beside the finding's.
    #[test]
    fn the_readme_names_the_rules_the_program_also_breaks() {
        use crate::diff::DiscrepancyKind;
        use tcgen05_ir::RuleId;
        let d = Discrepancy {
            kind: DiscrepancyKind::ValueOutsideAllowed,
            rules: vec![RuleId::LdstNum],
            forms: vec![],
            key: None,
            detail: "word 1 differs".into(),
        };
        let sig = Signature::of(&d, "sim+ld-num-truncated");
        let mut e = Expected::with_verdict(tcgen05_oracle::RunVerdict::Completes);
        let report = |e: &Expected| {
            readme(&make_report(
                &sig,
                &d,
                vec![],
                e,
                &Outcome::Accepted,
                (9, 3),
            ))
        };
        assert!(!report(&e).contains("also breaks"), "{}", report(&e));
        e.leak.status = tcgen05_oracle::LeakStatus::MayLeak;
        let text = report(&e);
        assert!(
            text.contains("The program also breaks `ALLOC-FREE-BEFORE-EXIT`"),
            "{text}"
        );
        assert!(!text.contains("breaks `LDST-NUM`"), "{text}");
    }

    /// A stored finding's `report.json` spells its enum tags in kebab-case (the run verdict
    /// `may-block`, the outcome `completed`, the site `warp`), rule ids as the catalogue does,
    /// and reads back equal; a report an earlier version wrote (Rust variant names) reads too.
    #[test]
    fn a_stored_report_uses_user_spelling_and_reads_back() {
        use crate::diff::DiscrepancyKind;
        use tcgen05_ir::RuleId;
        use tcgen05_oracle::{ObsKey, RunVerdict, SiteRef};
        let d = Discrepancy {
            kind: DiscrepancyKind::ValueOutsideAllowed,
            rules: vec![RuleId::LdAsync],
            forms: vec!["tcgen05.ld.sync.aligned.32x32b.x1.b32".into()],
            key: Some(ObsKey {
                cta: 0,
                warp: 1,
                site: SiteRef::Warp(2),
                lane: 3,
            }),
            detail: "word 0 differs".into(),
        };
        let sig = Signature::of(&d, "sim+wait-st-early");
        let e = Expected::with_verdict(RunVerdict::MayBlock { where_: vec![] });
        let observed = Outcome::Completed { words: vec![7, 8] };
        let report = make_report(&sig, &d, vec![], &e, &observed, (9, 3));
        let dir = tempfile::tempdir().expect("a temporary folder");
        let store = Store::open(dir.path()).expect("a store");
        let case = Case {
            program: tcgen05_ir::samples::single_warp_roundtrip(),
            intent: tcgen05_ir::Intent::Unknown,
            provenance: Default::default(),
        };
        let Added::New(folder) = store.add(&case, &case, &report).expect("stored") else {
            panic!("a new finding")
        };
        let text = std::fs::read_to_string(folder.join("report.json")).expect("written");
        for rust in ["\"MayBlock\"", "\"Completed\"", "\"Warp\"", "\"LdAsync\""] {
            assert!(!text.contains(rust), "{rust} in {text}");
        }
        for user in ["\"may-block\"", "\"completed\"", "\"warp\"", "\"LD-ASYNC\""] {
            assert!(text.contains(user), "{user} not in {text}");
        }
        assert_eq!(read_report(&folder).ok().as_ref(), Some(&report));
        // The same report as an earlier version wrote it: every field in serde's spelling.
        let mut old = serde_json::to_value(&report).expect("serializable");
        old["expected"] = serde_json::to_value(&e).expect("serializable");
        old["observed"] = serde_json::to_value(&observed).expect("serializable");
        old["discrepancy"] = serde_json::to_value(&d).expect("serializable");
        assert!(old.to_string().contains("\"MayBlock\""));
        std::fs::write(folder.join("report.json"), old.to_string()).expect("written");
        assert_eq!(read_report(&folder).ok().as_ref(), Some(&report));
    }

    /// The README names the instruction whose record differs beside the rule of the behaviour
    /// that differed.
    #[test]
    fn the_readme_names_the_observing_instruction() {
        use crate::diff::DiscrepancyKind;
        use tcgen05_ir::RuleId;
        let ld = "tcgen05.ld.sync.aligned.32x32b.x1.b32";
        let d = Discrepancy {
            kind: DiscrepancyKind::ValueOutsideAllowed,
            rules: vec![RuleId::WaitScope, RuleId::LdAsync],
            forms: vec![ld.into(), "tcgen05.wait::st.sync.aligned".into()],
            key: None,
            detail: format!("word 0 differs; the wait returns early; observed by {ld}"),
        };
        let sig = Signature::of(&d, "sim+wait-st-early");
        let e = Expected::with_verdict(tcgen05_oracle::RunVerdict::Completes);
        let text = readme(&make_report(
            &sig,
            &d,
            vec![],
            &e,
            &Outcome::Accepted,
            (9, 3),
        ));
        assert!(text.contains("`WAIT-SCOPE` [§9.7.16.8.5]"), "{text}");
        assert!(text.contains(&format!("Observed by: `{ld}`")), "{text}");
    }

    #[test]
    fn shell_words_are_quoted_only_where_needed() {
        assert_eq!(shell_word("out/c/findings/0a6f"), "out/c/findings/0a6f");
        assert_eq!(
            shell_word("sim:random@3+wait-ld-early"),
            "sim:random@3+wait-ld-early"
        );
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
