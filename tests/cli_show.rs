//! `tcgen05-fuzz show`: a case prints as PTX that parses; a PTX file prints as a summary; bad
//! input gets a clear message naming the file (and line), exit code 2, no panic.

use std::process::Command;
use tcgen05_ir::{Case, Intent, Provenance, codec, samples};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tcgen05-fuzz"))
}

fn write_case(dir: &std::path::Path) -> std::path::PathBuf {
    let case = Case {
        program: samples::single_warp_roundtrip(),
        intent: Intent::Valid,
        provenance: Provenance::default(),
    };
    let path = dir.join("sample.case");
    std::fs::write(&path, codec::encode(&case)).unwrap();
    path
}

#[test]
fn a_case_prints_as_the_program_s_ptx() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_case(dir.path());
    let out = bin().arg("show").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        tcgen05_ir::ptx::lift(&text).unwrap(),
        samples::single_warp_roundtrip()
    );
}

#[test]
fn a_ptx_file_prints_its_tcgen05_instructions_as_json() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/corpus/realworld/nvcc_tmem_alloc_ld_st.ptx"
    );
    let out = bin()
        .args(["show", "--format", "json", path])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let instrs = v["functions"][0]["tcgen05"].as_array().unwrap();
    let src = std::fs::read_to_string(path).unwrap();
    // Independent count: lines whose first word starts with `tcgen05.`.
    let expected = src
        .lines()
        .filter(|l| l.trim_start().starts_with("tcgen05."))
        .count();
    assert_eq!(instrs.len(), expected);
    let first = &instrs[0];
    assert!(
        first["opcode"]
            .as_str()
            .unwrap()
            .starts_with("tcgen05.alloc.cta_group::1"),
        "{first}"
    );
    let line = first["line"].as_u64().unwrap() as usize;
    assert!(src.lines().nth(line - 1).unwrap().contains("tcgen05.alloc"));
}

#[test]
fn a_corrupt_case_file_is_a_clear_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_case(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0xFF;
    std::fs::write(&path, &bytes).unwrap();
    let out = bin().arg("show").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("sample.case") && err.contains("corrupt"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // Truncated.
    std::fs::write(&path, &bytes[..n / 2]).unwrap();
    let out = bin().arg("show").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated"));
}

#[test]
fn malformed_ptx_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.ptx");
    std::fs::write(&path, ".version 8.6\n.target sm_100a\n.entry k()\n{\n  tcgen05.dealloc.cta_group::1.sync.aligned.b32 {%r1, 32;\n}\n").unwrap();
    let out = bin().arg("show").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("bad.ptx:5:"), "{err}");
    assert!(err.contains("`}`"), "{err}");
}

#[test]
fn an_ill_formed_tcgen05_instruction_is_shown_with_its_reason() {
    // Readable PTX whose dealloc does not fit its syntax line (`taddr, nCols`, §9.7.16.7.1):
    // `check` reports it; `show` shows it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ill.ptx");
    std::fs::write(&path, ".version 8.6\n.target sm_100a\n.entry k()\n{\n  tcgen05.dealloc.cta_group::1.sync.aligned.b32 [%r1];\n}\n").unwrap();
    let out = bin().arg("show").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("ill-formed:"), "{text}");
    assert!(text.contains("taddr, nCols"), "{text}");
}

#[test]
fn a_missing_file_is_exit_2() {
    let out = bin()
        .args(["show", "/nonexistent/x.case"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/x.case"));
}

#[test]
fn every_subcommand_has_help() {
    for sub in [
        "show",
        "rules",
        "generate",
        "targets",
        "check",
        "reproduce",
        "minimize",
        "campaign",
        "corpus",
        "bench",
        "sim-server",
    ] {
        let out = bin().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success(), "{sub} --help failed");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage"),
            "{sub}"
        );
    }
}
