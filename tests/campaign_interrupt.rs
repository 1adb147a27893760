//! Ctrl-C during a campaign: after Ctrl-C or a killed process, nothing already recorded is
//! lost, and a restart with the same `--out` continues where it stopped.
//!
//! The first SIGINT stops the campaign cleanly: it writes its checkpoint and every report,
//! says where they are and exits 130 (README, exit codes); the restart runs exactly the cases
//! not yet recorded and ends where an uninterrupted run ends. A second SIGINT exits at once,
//! even while a case is stuck in a target, with the checkpoint whole.

#[path = "campaign_common.rs"]
mod common;

use common::*;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Cases checkpointed before the signal.
const STOP_AFTER: u64 = 200;
/// README, exit codes: a campaign stopped by a signal.
const EXIT_INTERRUPTED: i32 = 130;

fn signal(child: &Child, sig: &str) {
    let st = Command::new("kill")
        .args(["-s", sig, &child.id().to_string()])
        .status()
        .expect("kill(1) runs");
    assert!(st.success(), "kill -s {sig} failed");
}

/// Waits for the child to exit, at most `limit`.
fn wait_at_most(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return Some(st);
        }
        if t0.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until the campaign has checkpointed `n` cases and stored a finding.
fn wait_for_progress(child: &mut Child, out: &Path, n: u64) -> u64 {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the unbounded campaign ended ({status}) before the signal");
        }
        let done = state_cases(out).unwrap_or(0);
        if done >= n && !findings(out).is_empty() {
            return done;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "no progress in 300 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Checks that the per-target counts of a report add up to its case count.
fn counts_add_up(r: &serde_json::Value) {
    let cases = r["cases"].as_u64().expect("cases");
    for t in r["targets"].as_array().expect("targets") {
        assert_eq!(t["cases"].as_u64(), Some(cases), "{t}");
    }
}

#[test]
fn sigint_stops_cleanly_and_the_restart_continues() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("reference");
    let stopped = dir.path().join("stopped");

    // A campaign that cannot finish first ([`UNBOUNDED`] cases), stopped by one SIGINT once
    // some of it is recorded: the signal comes at a point the test waits for.
    let mut child = campaign(&stopped, UNBOUNDED, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let before = wait_for_progress(&mut child, &stopped, STOP_AFTER);
    let findings_before = findings(&stopped);
    signal(&child, "INT");
    let status = wait_at_most(&mut child, Duration::from_secs(60));
    let Some(status) = status else {
        child.kill().unwrap();
        panic!("the campaign did not stop within 60 s of SIGINT");
    };
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        status.code(),
        Some(EXIT_INTERRUPTED),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // It says where the state and the reports are.
    assert!(stdout.contains("interrupted"), "{stdout}");
    assert!(
        stdout.contains(&format!("{}/state.json", stopped.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{}/report.md", stopped.display())),
        "{stdout}"
    );

    // The checkpoint and every report were written at the stop, and agree with each other.
    let after = state_cases(&stopped).expect("state.json");
    assert!(
        after >= before,
        "checkpoint went back from {before} to {after}"
    );
    let r = report(&stopped);
    assert_eq!(r["cases"], after, "report.json and state.json disagree");
    assert_eq!(r["complete"], false);
    counts_add_up(&r);
    assert_eq!(report_findings(&r), findings(&stopped));
    assert!(findings(&stopped).is_superset(&findings_before));
    for f in ["report.md", "junit.xml", "coverage.md", "coverage.svg"] {
        assert!(
            !read(&stopped.join(f)).is_empty(),
            "{f} was not written at the stop"
        );
    }
    let md = read(&stopped.join("report.md"));
    assert!(
        md.contains(&after.to_string()),
        "report.md lacks {after}:\n{md}"
    );

    // The reference: one uninterrupted run of the campaign the restart completes, a bound
    // past every case the stopped run recorded. The injected bug gives findings: exit code 1.
    let cases = resume_bound(&stopped);
    let want = reference_run(&reference, cases);

    // The restart runs only what is left, and ends where the reference ended.
    restart_matches_reference(&stopped, &reference, &want, cases, after);
}

#[test]
fn a_second_sigint_exits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // A second target that answers its first 40 cases (the built-in simulator over the
    // external protocol: the handshake line and 40 replies), then keeps its output open and
    // answers nothing; it creates `stuck` when the 41st case arrives, whose reply never comes:
    // from then on the worker that sent it waits for the reply timeout (10 s). The campaign is
    // unbounded, so it cannot end before that.
    // (Shell loops, not `head`, which holds its output in a buffer while it is a pipe.)
    let marker = dir.path().join("stuck");
    let stall = format!(
        "external:{{ i=0; while IFS= read -r l; do printf '%s\\n' \"$l\"; i=$((i+1)); \
         if [ $i -eq 42 ]; then touch '{}'; fi; done; }} | {} sim-server | \
         {{ i=0; while [ $i -lt 41 ] && IFS= read -r l; do printf '%s\\n' \"$l\"; \
         i=$((i+1)); done; sleep 30; }}",
        marker.display(),
        env!("CARGO_BIN_EXE_tcgen05-fuzz"),
    );
    let targets = format!("sim+ld-num-truncated,{stall}");
    let mut cmd = campaign(&out, UNBOUNDED, &["--targets", &targets]);
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // Wait until a worker is stuck in a case (the target says so with `stuck`).
    let t0 = Instant::now();
    while !marker.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let o = child.wait_with_output().unwrap();
            panic!(
                "the campaign ended ({status}) before it got stuck: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the external target did not stall in 300 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let stuck_at = state_cases(&out).unwrap_or(0);

    // The first SIGINT cannot finish: a worker waits for the stuck target.
    signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the campaign ended though a case was stuck in a target"
    );
    // The second exits at once (well inside the 10 s reply timeout).
    let t1 = Instant::now();
    signal(&child, "INT");
    let status = wait_at_most(&mut child, Duration::from_secs(5));
    let Some(status) = status else {
        child.kill().unwrap();
        panic!("a second SIGINT did not end the campaign within 5 s");
    };
    assert!(t1.elapsed() < Duration::from_secs(5));
    assert_eq!(status.code(), Some(EXIT_INTERRUPTED));
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("interrupted twice"), "{err}");

    // Nothing recorded was lost: the checkpoint is whole and holds at least what it held.
    let after = state_cases(&out).expect("state.json is whole");
    assert!(
        after >= stuck_at,
        "checkpoint went back from {stuck_at} to {after}"
    );
    let state: serde_json::Value = serde_json::from_str(&read(&out.join("state.json"))).unwrap();
    for t in state["targets"].as_array().expect("targets") {
        assert_eq!(t["cases"].as_u64(), Some(after), "{t}");
    }
}
