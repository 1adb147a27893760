//! Every command that prints, piped into a reader that has already gone (`| head -1` after its
//! line), exits quietly with its usual code: no "failed printing to stdout: Broken pipe"
//! panic (exit 101), no message about the pipe.
//!
//! The reading end of the pipe is closed before the command starts, so its first write fails
//! with EPIPE every time (no race with how much a pipe buffers).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tcgen05_ir::{Case, Intent, Provenance, codec, samples};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tcgen05-fuzz"))
}

/// Runs `tcgen05-fuzz args` with stdout a pipe whose reader is closed.
fn into_closed_pipe(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("spawn tcgen05-fuzz")
}

/// Asserts a quiet exit with `code`.
fn assert_quiet(args: &[&str], code: i32) {
    let out = into_closed_pipe(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe") && !err.contains("broken pipe"),
        "`tcgen05-fuzz {}` complained about the closed pipe: {err}",
        args.join(" ")
    );
    assert_eq!(
        out.status.code(),
        Some(code),
        "`tcgen05-fuzz {}`: {err}",
        args.join(" ")
    );
}

fn sample_case(dir: &Path) -> PathBuf {
    let case = Case {
        program: samples::single_warp_roundtrip(),
        intent: Intent::Valid,
        provenance: Provenance::default(),
    };
    let path = dir.join("sample.case");
    std::fs::write(&path, codec::encode(&case)).unwrap();
    path
}

/// A finding of the simulator with a truncating `ld` (a stored regression case).
fn finding() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/corpus/regressions/fault-ld-num-truncated-x2/case.case"
    )
    .to_string()
}

fn kernel() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/corpus/realworld/nvcc_tmem_alloc_ld_st.ptx"
    )
    .to_string()
}

#[test]
fn listing_commands_exit_quietly() {
    assert_quiet(&["targets"], 0);
    assert_quiet(&["targets", "--format", "json"], 0);
    assert_quiet(&["rules"], 0);
    assert_quiet(&["rules", "--format", "json"], 0);
    assert_quiet(&["generate", "--list"], 0);
    assert_quiet(&["--help"], 0);
}

#[test]
fn show_exits_quietly() {
    let d = tempfile::tempdir().unwrap();
    let case = sample_case(d.path());
    let case = case.to_str().unwrap();
    assert_quiet(&["show", case], 0);
    assert_quiet(&["show", "--format", "json", case], 0);
    assert_quiet(&["show", &kernel()], 0);
    assert_quiet(&["show", "--format", "json", &kernel()], 0);
}

#[test]
fn reproduce_check_and_minimize_exit_quietly_with_their_codes() {
    // A discrepancy: exit 1, as when its output is read.
    assert_quiet(
        &["reproduce", &finding(), "--targets", "sim+ld-num-truncated"],
        1,
    );
    assert_quiet(&["reproduce", &finding(), "--targets", "sim"], 0);
    // The real kernel keeps the TMEM protocol.
    assert_quiet(&["check", &kernel()], 0);
    assert_quiet(&["check", "--format", "json", &kernel()], 0);
    // A kernel with findings (docs/check.md: GEN-PEER-ACTIVE), in both formats: exit 1.
    let found = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/corpus/realworld/nvcc_2cta_mma_multicast.ptx"
    );
    assert_quiet(&["check", found], 1);
    assert_quiet(&["check", "--format", "json", found], 1);
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("min.case");
    assert_quiet(
        &[
            "minimize",
            &finding(),
            "--target",
            "sim+ld-num-truncated",
            "--seconds",
            "5",
            "--out",
            out.to_str().unwrap(),
        ],
        0,
    );
    assert!(out.exists(), "minimize stopped writing at the closed pipe");
}

#[test]
fn generate_and_campaign_finish_their_work() {
    let d = tempfile::tempdir().unwrap();
    let gen_out = d.path().join("gen");
    assert_quiet(
        &[
            "generate",
            "--count",
            "3",
            "--out",
            gen_out.to_str().unwrap(),
        ],
        0,
    );
    assert_eq!(
        std::fs::read_dir(&gen_out)
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "case"))
            .count(),
        3
    );
    let camp = d.path().join("campaign");
    assert_quiet(
        &[
            "campaign",
            "--cases",
            "40",
            "--targets",
            "sim",
            "--out",
            camp.to_str().unwrap(),
        ],
        0,
    );
    assert!(camp.join("report.md").exists());
}
