//! The regression suite (issue 8, point 5): every case in `corpus/regressions/` replays against
//! the oracle and the targets named in its `expected.json` (the simulator always; ptxas and GPU
//! targets where installed), and must give the verdicts stored beside it.
//!
//! A minimized finding becomes a case here with `tcgen05-fuzz corpus promote <finding folder>`.
//! When a fix changes a verdict on purpose, promote the case again (or edit `expected.json`)
//! in the same commit as the fix.

use std::path::Path;
use tcgen05_drivers::report::regression;

fn root() -> std::path::PathBuf {
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
        let r = regression::replay(dir).unwrap_or_else(|e| panic!("{e}"));
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
fn a_changed_verdict_is_reported() {
    // The suite must be able to fail: a stored verdict that is not what the target gives now
    // is a mismatch.
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
    let first = e.verdicts.keys().next().cloned().expect("a verdict");
    e.verdicts
        .insert(first.clone(), "skip: not what it gives".into());
    std::fs::write(
        copy.join("expected.json"),
        serde_json::to_string(&e).unwrap(),
    )
    .unwrap();
    let r = regression::replay(&copy).unwrap();
    assert!(
        r.mismatches.iter().any(|m| m.what == first),
        "{:?}",
        r.mismatches
    );
}
