//! A campaign killed with SIGKILL mid-run and restarted with the same
//! `--out` loses nothing that was recorded, and ends exactly where an uninterrupted run ends.

#[path = "campaign_common.rs"]
mod common;

use common::*;
use std::time::{Duration, Instant};

/// Cases checkpointed before the kill.
const KILL_AFTER: u64 = 200;

#[test]
fn a_killed_campaign_resumes_without_losing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("reference");
    let killed = dir.path().join("killed");

    // A campaign that cannot finish first ([`UNBOUNDED`] cases), killed once some of it is
    // checkpointed and a finding is stored: the kill is at a point the test waits for.
    let mut child = campaign(&killed, UNBOUNDED, &[]).spawn().unwrap();
    let t0 = Instant::now();
    let (cases_before, findings_before) = loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the unbounded campaign ended ({status}) before it was killed");
        }
        let n = state_cases(&killed).unwrap_or(0);
        let f = findings(&killed);
        if n >= KILL_AFTER && !f.is_empty() {
            break (n, f);
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "no progress in 300 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    child.kill().unwrap(); // SIGKILL on Unix: no handler runs.
    child.wait().unwrap();

    // What was recorded is still there, whole.
    let after = state_cases(&killed).expect("the checkpoint survives the kill");
    assert!(
        after >= cases_before,
        "checkpoint went back from {cases_before} to {after}"
    );
    assert!(findings(&killed).is_superset(&findings_before));

    // The reference: one uninterrupted run of the campaign the restart completes, a bound
    // past every case the killed run recorded. The injected bug gives findings: exit code 1.
    let cases = resume_bound(&killed);
    let want = reference_run(&reference, cases);
    assert!(
        !findings(&reference).is_empty(),
        "the injected bug must give findings"
    );

    // The restart continues: it runs only what is left, and ends where the reference ended.
    restart_matches_reference(&killed, &reference, &want, cases, after);
    assert!(findings(&killed).is_superset(&findings_before));
}

#[test]
fn a_restart_must_describe_the_same_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c");
    let st = campaign(&out, 20, &[]).output().unwrap();
    assert!(
        matches!(st.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    // Another seed in the same folder is a usage error (exit code 2), and changes nothing.
    let before = std::fs::read(out.join("state.json")).unwrap();
    let st = campaign(&out, 20, &["--seed", "12"]).output().unwrap();
    assert_eq!(
        st.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("another campaign"), "{err}");
    assert_eq!(std::fs::read(out.join("state.json")).unwrap(), before);
}
