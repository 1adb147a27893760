//! The regression suite: every case in `corpus/regressions/` replays against
//! the oracle and the targets named in its `expected.json` (the simulator always; ptxas and GPU
//! targets where installed), and must give the verdicts stored beside it.
//!
//! What is stored of the oracle is the spec's verdict class and deciding rule with the reason it
//! is right (`spec` in `expected.json`), written by a person; the replay recomputes the oracle's
//! expectation and checks it against them, and compares every target's outcome with it. A
//! correct simulator must agree with the oracle on every case; a simulator with an injected
//! fault must disagree on the case that was found with it.
//!
//! A minimized finding becomes a case here with `tcgen05-fuzz corpus promote <finding folder>`,
//! which leaves the reason to write. When a fix changes a verdict on purpose, edit
//! `expected.json` in the same commit as the fix.

use std::path::{Path, PathBuf};
use tcgen05_drivers::report::regression;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/regressions")
}

#[test]
fn every_regression_case_replays_with_its_stored_verdicts() {
    let cases = regression::list(&root());
    assert!(
        !cases.is_empty(),
        "no regression cases under {}",
        root().display()
    );
    let mut mismatches = Vec::new();
    let mut replayed = 0;
    for dir in &cases {
        let r = tcgen05_engine::regression::replay(dir).unwrap_or_else(|e| panic!("{e}"));
        replayed += r.checked.len();
        for (t, why) in &r.unavailable {
            eprintln!("{}: `{t}` not replayed here: {why}", dir.display());
        }
        mismatches.extend(r.mismatches.iter().map(ToString::to_string));
    }
    assert!(replayed > 0, "no target replayed any case");
    assert!(
        mismatches.is_empty(),
        "{} regression(s):\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn every_regression_case_names_the_simulator() {
    for dir in regression::list(&root()) {
        let (_, e) = regression::read(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            e.verdicts.keys().any(|t| t.starts_with("sim")),
            "{}: every regression case replays on the simulator",
            dir.display()
        );
    }
}

#[test]
fn every_regression_case_says_why_its_spec_verdict_is_right() {
    for dir in regression::list(&root()) {
        let (_, e) = regression::read(&dir).unwrap_or_else(|e| panic!("{e}"));
        let why = e.spec.why.trim();
        assert!(
            why != regression::REASON_TO_WRITE && why.len() > 40,
            "{}: expected.json's spec.why must say why the spec gives `{}`",
            dir.display(),
            e.spec.label()
        );
    }
}

#[test]
fn correct_simulators_agree_and_injected_faults_disagree() {
    // The simulator without an injected fault implements the spec: on every regression case
    // it must agree with the oracle (or be skipped where the spec says the behaviour is
    // undefined). A fault-injected simulator (`sim+<fault>`) is stored
    // because the fault shows on the case: a discrepancy.
    for dir in regression::list(&root()) {
        let (_, e) = regression::read(&dir).unwrap_or_else(|e| panic!("{e}"));
        for (t, v) in &e.verdicts {
            if !t.starts_with("sim") {
                continue;
            }
            if t.contains('+') {
                assert!(
                    v.starts_with("discrepancy: "),
                    "{}: {t}: {v}",
                    dir.display()
                );
            } else if e.spec.class == "undefined" {
                // Undefined behaviour allows every outcome: the judge skips the case as
                // unspecified, whatever a correct simulator does.
                assert_eq!(v, "skip: unspecified", "{}: {t}", dir.display());
            } else {
                assert_eq!(v, "agree", "{}: {t}", dir.display());
            }
        }
    }
}

/// A copy of the first regression case in a temporary folder, with `edit` applied to its
/// `expected.json`; returns the folder (kept alive by the returned guard).
fn edited_copy(edit: impl FnOnce(&mut regression::Expected)) -> (tempfile::TempDir, PathBuf) {
    let src = regression::list(&root())
        .into_iter()
        .next()
        .expect("at least one case");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("case");
    std::fs::create_dir(&copy).unwrap();
    for f in [regression::CASE_FILE, "expected.json"] {
        std::fs::copy(src.join(f), copy.join(f)).unwrap();
    }
    let (_, mut e) = regression::read(&copy).unwrap();
    edit(&mut e);
    std::fs::write(
        copy.join("expected.json"),
        serde_json::to_string(&e).unwrap(),
    )
    .unwrap();
    (dir, copy)
}

#[test]
fn a_spec_verdict_the_oracle_does_not_give_is_reported() {
    for (class, rule) in [("must-deadlock", None), ("completes", Some("LD-ASYNC"))] {
        let (_guard, copy) = edited_copy(|e| {
            e.spec.class = class.into();
            e.spec.rule = rule.map(Into::into);
        });
        let r = tcgen05_engine::regression::replay(&copy).unwrap();
        assert!(
            r.mismatches.iter().any(|m| m.what == "oracle"),
            "{class} {rule:?}: {:?}",
            r.mismatches
        );
    }
}

#[test]
fn a_changed_verdict_is_reported() {
    // The suite must be able to fail: a stored verdict that is not what the target gives now
    // is a mismatch.
    let mut first = String::new();
    let (_guard, copy) = edited_copy(|e| {
        first = e.verdicts.keys().next().cloned().expect("a verdict");
        e.verdicts
            .insert(first.clone(), "skip: not what it gives".into());
    });
    let r = tcgen05_engine::regression::replay(&copy).unwrap();
    assert!(
        r.mismatches.iter().any(|m| m.what == first),
        "{:?}",
        r.mismatches
    );
}
