//! `tcgen05-fuzz litmus` on `corpus/litmus/`: a litmus file for every example of the seed
//! texts and every §9.7.16.6.2 pipelined pair (same thread and across threads, written by
//! `scripts/gen-litmus-corpus.py`). Each file's `//@ expect` line was written from the sentence
//! its `//@ source` line quotes, never from the tool's output; this test reads it on its own
//! and compares it with the JSON the command prints. Bad input is exit 2 with the place named.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tcgen05-fuzz"))
}

fn files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/litmus");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    v.sort();
    v
}

/// `(verdict, rules, unspecified locations)` of the file's `//@ expect` line.
fn expectation(text: &str) -> (String, Vec<String>, Vec<String>) {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("//@ expect "))
        .expect("every corpus file has an expectation");
    let mut out = (String::new(), vec![], vec![]);
    for kv in line.split_whitespace() {
        let (k, v) = kv.split_once('=').unwrap();
        let list = || v.split(',').map(str::to_string).collect::<Vec<_>>();
        match k {
            "verdict" => out.0 = v.to_string(),
            "rules" => out.1 = list(),
            "unspecified" => out.2 = list(),
            _ => panic!("unknown expectation key {k}"),
        }
    }
    out
}

#[test]
fn every_litmus_file_gets_the_verdict_its_source_sentence_gives() {
    let files = files();
    assert!(files.len() >= 20, "{} files", files.len());
    let mut wrong = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(
            text.contains("//@ source "),
            "{}: no source sentence",
            f.display()
        );
        let (verdict, rules, unspecified) = expectation(&text);
        let out = bin()
            .args(["litmus", "--format", "json"])
            .arg(f)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{}: {e}: {}",
                f.display(),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let got = v["verdict"].as_str().unwrap();
        let got_rules: Vec<&str> = v["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        let unspec_ok = unspecified.iter().all(|n| {
            v["locations"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["name"] == n.as_str() && l["kind"] == "unspecified")
        });
        // A corpus file's conditions state what its source sentence implies: each must hold
        // (`forall`: in every allowed outcome; `exists`: in some).
        let conditions_ok = v["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["holds"] == true);
        if !conditions_ok {
            wrong.push(format!(
                "{}: a condition does not hold: {}",
                f.display(),
                v["conditions"]
            ));
        }
        if got != verdict || !rules.iter().all(|r| got_rules.contains(&r.as_str())) || !unspec_ok {
            wrong.push(format!("{}: expected {verdict} {rules:?} unspecified {unspecified:?}, got {got} {got_rules:?} {}", f.display(), v["locations"]));
        }
        // The command checks the same line: exit 0 exactly when it is met.
        assert_eq!(
            out.status.code() == Some(0),
            got == verdict && unspec_ok && rules.iter().all(|r| got_rules.contains(&r.as_str())),
            "{}",
            f.display()
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_seed_example_reports_exact_values_and_conditions() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/litmus/st-wait-ld.ptx");
    let out = bin()
        .args(["litmus", "--format", "json"])
        .arg(&f)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Lane t stored t + 100 (`add.u32 %r4, %laneid, 100`), then read it back after wait::st.
    assert_eq!(v["locations"][0]["kind"], "exact");
    assert_eq!(v["locations"][0]["values"][0], 100);
    assert_eq!(v["locations"][1]["values"][0], 105);
    assert_eq!(v["conditions"][0]["holds"], true);
    assert_eq!(v["conditions"][1]["holds"], true);
}

/// An unspecified location names what leaves it so: the race where one is (the accumulator
/// read after a plain arrive that waits for nothing, MCM-ASYNC-UNORDERED), the open question
/// where none is (the same read after commit and its wait, of shared memory no store wrote:
/// the MMA's result is not computed), never a race that is not there.
#[test]
fn an_unspecified_location_names_its_own_reason() {
    let reason = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.ptx");
        std::fs::write(&p, text).unwrap();
        let out = bin()
            .args(["litmus", "--format", "json"])
            .arg(&p)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["locations"][0]["kind"], "unspecified", "{v}");
        v["locations"][0]["reason"].as_str().unwrap().to_string()
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/litmus");
    let fence = std::fs::read_to_string(dir.join("mma-fence-before-arrive.ptx")).unwrap();
    let r = reason(&fence);
    assert!(r.contains("MCM-ASYNC-UNORDERED"), "{r}");
    let commit = std::fs::read_to_string(dir.join("mma-commit-wait-ld.ptx"))
        .unwrap()
        .replace(
            "//@ launch warps=1",
            "//@ launch warps=1\n//@ observe d0 = %r10 lane=0",
        );
    let r = reason(&commit);
    assert!(!r.contains("MCM-"), "{r}");
    assert!(r.contains("OQ-"), "{r}");
}

fn run_on(text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.ptx");
    std::fs::write(&p, text).unwrap();
    let out = bin().arg("litmus").arg(&p).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_input_is_exit_2_with_the_place() {
    let out = bin()
        .args(["litmus", "/nonexistent/x.ptx"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let base = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/litmus/st-wait-ld.ptx"),
    )
    .unwrap();
    // A condition over a location that is not observed.
    let (code, err) = run_on(&base.replace("//@ forall r0 == 100", "//@ forall q == 100"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("t.ptx:7:") && err.contains("`q` is not an observed location"),
        "{err}"
    );
    // A construct the program model cannot express, named with line and column.
    let (code, err) = run_on(&base.replace("\tret;", "\tbar.arrive 1, 64;\n\tret;"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(":29:2: unsupported construct `bar.arrive`"),
        "{err}"
    );
    // An observed register no tcgen05.ld writes.
    let (code, err) = run_on(&base.replace("%r10 lane=5", "%r4 lane=5"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("%r4 is not written by a tcgen05.ld"), "{err}");
    // Not PTX.
    let (code, err) = run_on("//@ launch warps=1\nhello\n");
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_closed_stdout_pipe_is_not_a_panic() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/litmus");
    let mut child = bin()
        .arg("litmus")
        .args(files())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        status.code().is_some_and(|c| c == 0 || c == 1),
        "{status:?} {err} {}",
        f.display()
    );
}
