//! `tcgen05-fuzz check` on the corpora of `corpus/`: the kernels ptxas rejects for one tcgen05
//! instruction's form or target (`corpus/check-rejected/`, written by
//! `scripts/gen-check-corpus.py`) are flagged with the rule their header names; the well-formed
//! kernels (`corpus/check-wellformed/`, `scripts/gen-check-wellformed.py`) and the real-world
//! corpus get no instruction-level finding; bad input is exit 2 with the place named.
//!
//! The expected rule comes from each file's `// expect:` line, written from the reference's
//! syntax lines and target table, never from `check`'s output.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tcgen05-fuzz"))
}

fn corpus(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    v.sort();
    v
}

/// The value of the header line `// key: value` of `text`.
fn header<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.strip_prefix("// ")?.strip_prefix(key)?.strip_prefix(": "))
}

/// `check --format json` of `files`: the exit code and, per file, the rules found.
fn check(files: &[PathBuf]) -> (i32, Vec<(String, Vec<String>)>) {
    let out = bin()
        .args(["check", "--format", "json"])
        .args(files)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let per_file = v
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let rules = f["kernels"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|k| k["findings"].as_array().unwrap())
                .map(|x| x["rule"].as_str().unwrap().to_string())
                .collect();
            (f["file"].as_str().unwrap().to_string(), rules)
        })
        .collect();
    (out.status.code().unwrap_or(-1), per_file)
}

#[test]
fn kernels_ptxas_rejects_are_flagged_with_their_rule() {
    let files = corpus("check-rejected");
    assert!(files.len() >= 90, "{} files", files.len());
    let (code, found) = check(&files);
    assert_eq!(code, 1, "findings are exit 1");
    assert_eq!(found.len(), files.len());
    let mut missed = Vec::new();
    for (path, (file, rules)) in files.iter().zip(&found) {
        let text = std::fs::read_to_string(path).unwrap();
        let want = header(&text, "expect").unwrap_or_else(|| panic!("{file}: no `// expect:`"));
        assert!(
            want.parse::<tcgen05_ir::RuleId>().is_ok(),
            "{file}: {want} is no catalogue rule"
        );
        if !rules.iter().any(|r| r == want) {
            missed.push(format!("{file}: want {want}, found {rules:?}"));
        }
    }
    let flagged = files.len() - missed.len();
    eprintln!(
        "{flagged} of {} flagged with their rule; missed: {missed:#?}",
        files.len()
    );
    // The bar: at least 95% with the right RuleId.
    assert!(flagged * 100 >= files.len() * 95, "{missed:#?}");
}

#[test]
fn well_formed_kernels_have_no_findings() {
    let files = corpus("check-wellformed");
    assert!(files.len() >= 15, "{} files", files.len());
    let (code, found) = check(&files);
    for (file, rules) in &found {
        assert!(rules.is_empty(), "{file}: {rules:?}");
    }
    assert_eq!(code, 0);
}

#[test]
fn the_real_world_corpus_has_no_instruction_level_findings() {
    // Its only findings are the GEN-PEER-ACTIVE ones docs/check.md shows to be real (listed
    // line by line in oracle/tests/kernel_corpus.rs).
    let (_, found) = check(&corpus("realworld"));
    for (file, rules) in &found {
        assert!(
            rules.iter().all(|r| r == "GEN-PEER-ACTIVE"),
            "{file}: {rules:?}"
        );
    }
}

#[test]
fn unreadable_input_is_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.ptx");
    let not_ptx = dir.path().join("not.ptx");
    std::fs::write(
        &not_ptx,
        ".version 8.8\n.entry k()\n{\n  add.s32 %r1, {%r2;\n}\n",
    )
    .unwrap();
    let binary = dir.path().join("bin.ptx");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x41]).unwrap();
    for (path, needle) in [
        (&missing, "missing.ptx".to_string()),
        (&not_ptx, format!("{}:4:", not_ptx.display())),
        (&binary, "bin.ptx".to_string()),
        (&dir.path().to_path_buf(), dir.path().display().to_string()),
    ] {
        let out = bin().arg("check").arg(path).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", path.display());
        assert!(err.contains(&needle), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn files_with_nothing_to_check_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.ptx");
    std::fs::write(&empty, "").unwrap();
    let plain = dir.path().join("plain.ptx");
    std::fs::write(
        &plain,
        ".version 8.8\n.target sm_100a\n.entry k()\n{\n  ret;\n}\n",
    )
    .unwrap();
    for (path, why) in [
        (&empty, "no .entry or .func with a body"),
        (&plain, "no tcgen05 instructions"),
    ] {
        let out = bin().arg("check").arg(path).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert!(text.contains(&format!("nothing to check: {why}")), "{text}");
    }
    // `show` of a file with no kernels does not print `PTX ? for ?`.
    let out = bin().arg("show").arg(&empty).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains('?'), "{text}");
    assert!(text.contains("no kernels or device functions"), "{text}");
}

#[test]
fn device_function_files_are_checked() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/check-wellformed/func-only.ptx");
    let out = bin().arg("check").arg(&path).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("function tmem_load: 0 finding(s)"), "{text}");
    assert!(text.contains("function tmem_store: 0 finding(s)"), "{text}");
    // The same function with a vector one register short (§9.7.16.8.3 register-vector length).
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("f.ptx");
    let src = std::fs::read_to_string(&path)
        .unwrap()
        .replace("32x32b.x2.b32 {%r2, %r3}", "32x32b.x4.b32 {%r2, %r3}");
    std::fs::write(&bad, src).unwrap();
    let out = bin().arg("check").arg(&bad).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("LDST-VEC-LEN"), "{text}");
}

/// The ptxas that a file's `// ptxas: <version> -arch=<target>` header names.
fn ptxas_of(text: &str) -> (PathBuf, String) {
    let h = header(text, "ptxas").expect("`// ptxas:` header");
    let mut w = h.split_whitespace();
    let version = w.next().unwrap();
    let arch = w.next().unwrap().to_string();
    let exe = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".tools/cuda")
        .join(version)
        .join("bin/ptxas");
    assert!(
        exe.is_file(),
        "{} not installed (scripts/setup-ptxas)",
        exe.display()
    );
    (exe, arch)
}

#[test]
#[ignore = "needs ptxas 12.8-13.5 in .tools/cuda (scripts/setup-ptxas) and runs it on every corpus file: cargo test --test check_corpus -- --ignored"]
fn ptxas_rejects_the_rejected_and_accepts_the_well_formed() {
    for (dir, accept) in [("check-rejected", false), ("check-wellformed", true)] {
        for path in corpus(dir) {
            let text = std::fs::read_to_string(&path).unwrap();
            let (exe, arch) = ptxas_of(&text);
            let out = Command::new(&exe)
                .arg(&arch)
                .arg(&path)
                .args(["-o", "/dev/null"])
                .output()
                .unwrap();
            assert_eq!(
                out.status.success(),
                accept,
                "{} {arch} {}: {}",
                exe.display(),
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
