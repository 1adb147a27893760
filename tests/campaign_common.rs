//! Helpers shared by the campaign tests (included with `#[path]`, not a test of its own).

#![allow(
    dead_code,
    reason = "each test file uses a different part of the helpers"
)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The campaign command, with the arguments every test shares. `sim+ld-num-truncated` is the
/// simulator with an injected bug (ld `.num > .x1` fills only the first repetition), so the
/// campaign has real findings to keep or lose. `extra` may name other `--targets` or `--seed`.
pub fn campaign(out: &Path, cases: u64, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tcgen05-fuzz"));
    c.arg("campaign")
        .args(if extra.contains(&"--targets") {
            &[][..]
        } else {
            &["--targets", "sim+ld-num-truncated"][..]
        })
        .args(["--jobs", "2"])
        .args([
            "--no-minimize",
            "--progress",
            "quiet",
            "--checkpoint-every",
            "50ms",
        ])
        .arg("--cases")
        .arg(cases.to_string())
        .arg("--out")
        .arg(out)
        .args(extra)
        .args(if extra.contains(&"--seed") {
            &[][..]
        } else {
            &["--seed", "11"][..]
        })
        .env_remove("TCGEN05_TARGETS");
    c
}

/// `report.json` of a campaign folder.
pub fn report(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("report.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    serde_json::from_str(&text).expect("report.json is JSON")
}

/// The finding ids stored in a campaign folder.
pub fn findings(out: &Path) -> BTreeSet<String> {
    std::fs::read_dir(out.join("findings"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().join("report.json").exists())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// The finding ids a report lists.
pub fn report_findings(r: &serde_json::Value) -> BTreeSet<String> {
    r["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["id"].as_str().expect("id").to_string())
        .collect()
}

/// A `--cases` bound no test reaches: a campaign run with it cannot finish before the test
/// stops it, however fast the machine, so a stop at a checkpoint the test waits for is never
/// too late. (`--cases` is not part of a campaign's identity: the restart names a smaller one.)
pub const UNBOUNDED: u64 = 1_000_000_000;

/// Cases past the stop point that a restart runs (see [`resume_bound`]).
pub const RESUME_MORE: u64 = 300;

/// `state.json`'s record of done positions: every position below `below`, and `extra`.
fn state_done(out: &Path) -> Option<(u64, Vec<u64>)> {
    let text = std::fs::read_to_string(out.join("state.json")).ok()?;
    let v: serde_json::Value =
        serde_json::from_str(&text).expect("state.json is always whole (written atomically)");
    let done = &v["done"];
    let extra = done["extra"]
        .as_array()?
        .iter()
        .map(|x| x.as_u64().expect("extra positions are numbers"))
        .collect();
    Some((done["below"].as_u64()?, extra))
}

/// Cases done according to `state.json` (`None` when there is none yet).
pub fn state_cases(out: &Path) -> Option<u64> {
    state_done(out).map(|(below, extra)| below + extra.len() as u64)
}

/// The `--cases` bound for restarting the campaign stopped in `out`: [`RESUME_MORE`] cases past
/// the highest position it recorded, so that every recorded case lies inside the bound and the
/// restart has cases left to run.
pub fn resume_bound(out: &Path) -> u64 {
    let (below, extra) = state_done(out).expect("the stopped campaign has a state.json");
    extra.iter().map(|p| p + 1).max().unwrap_or(0).max(below) + RESUME_MORE
}

/// Restarts the stopped campaign in `stopped` (which had recorded `after` of `cases` cases) and
/// checks that it runs exactly the cases not yet recorded and ends where the uninterrupted
/// run in `reference` (whose report is `want`) ended: the same per-target counts, coverage
/// matrix and findings. Returns the final report.
pub fn restart_matches_reference(
    stopped: &Path,
    reference: &Path,
    want: &serde_json::Value,
    cases: u64,
    after: u64,
) -> serde_json::Value {
    let st = campaign(stopped, cases, &[]).output().unwrap();
    assert_eq!(
        st.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let out = String::from_utf8_lossy(&st.stdout);
    let this_run: u64 = out
        .split(" in this run")
        .next()
        .and_then(|s| s.rsplit('(').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no case count in: {out}"));
    assert_eq!(
        this_run,
        cases - after,
        "the restart must run exactly the cases not yet recorded"
    );
    let got = report(stopped);
    assert_eq!(got["cases"], cases);
    assert_eq!(got["complete"], true);
    assert_eq!(
        got["targets"], want["targets"],
        "per-target counts differ from the uninterrupted run"
    );
    assert_eq!(
        got["coverage"], want["coverage"],
        "the coverage matrix differs from the uninterrupted run"
    );
    assert_eq!(findings(stopped), findings(reference));
    assert_eq!(report_findings(&got), findings(reference));
    got
}

/// Runs the uninterrupted reference campaign of `cases` cases into `out` (the injected bug
/// gives findings: exit code 1) and returns its complete report.
pub fn reference_run(out: &Path, cases: u64) -> serde_json::Value {
    let st = campaign(out, cases, &[]).output().unwrap();
    assert_eq!(
        st.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let want = report(out);
    assert_eq!(want["cases"], cases);
    assert_eq!(want["complete"], true);
    want
}
