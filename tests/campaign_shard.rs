//! `--shard 0/2` and `--shard 1/2`, merged with `corpus merge`, give the
//! same findings (and the same counts and coverage) as one unsharded run over the same seeds.

#[path = "campaign_common.rs"]
mod common;

use common::*;
use std::process::Command;

const CASES: u64 = 500;

#[test]
fn two_shards_merged_equal_one_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    let s0 = dir.path().join("s0");
    let s1 = dir.path().join("s1");
    let merged = dir.path().join("merged");
    for (out, shard) in [(&whole, None), (&s0, Some("0/2")), (&s1, Some("1/2"))] {
        let mut c = campaign(out, CASES, &[]);
        if let Some(s) = shard {
            c.args(["--shard", s]);
        }
        let st = c.output().unwrap();
        assert_eq!(
            st.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&st.stderr)
        );
    }
    // Each shard ran its half of the seed space: 0, 2, 4, ... and 1, 3, 5, ...
    assert_eq!(report(&s0)["cases"], CASES / 2);
    assert_eq!(report(&s1)["cases"], CASES / 2);
    assert_eq!(report(&s0)["shards"], serde_json::json!(["0/2"]));

    let st = Command::new(env!("CARGO_BIN_EXE_tcgen05-fuzz"))
        .args(["corpus", "merge"])
        .arg(&s0)
        .arg(&s1)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );

    let w = report(&whole);
    let m = report(&merged);
    assert_eq!(m["cases"], CASES);
    assert_eq!(m["shards"], serde_json::json!(["0/2", "1/2"]));
    assert_eq!(m["targets"], w["targets"], "per-target counts differ");
    assert_eq!(m["coverage"], w["coverage"], "coverage differs");
    assert!(
        !findings(&whole).is_empty(),
        "the injected bug must give findings"
    );
    assert_eq!(
        findings(&merged),
        findings(&whole),
        "merged shards found other signatures"
    );
    assert_eq!(report_findings(&m), findings(&whole));
    for f in ["report.md", "junit.xml", "coverage.md", "coverage.svg"] {
        assert!(merged.join(f).exists(), "{f} missing from the merge");
    }
}
