//! `--targets ptxas` means every ptxas found, `ptxas@<version>` one, and `TCGEN05_PTXAS`
//! adds binaries, through the CLI: `tcgen05-fuzz targets` and a short
//! `tcgen05-fuzz campaign`.
//!
//! The binaries are two stand-in scripts named by `TCGEN05_PTXAS`, so the test needs no real
//! ptxas and runs everywhere with a POSIX shell: each answers `--version` as ptxas does
//! (`Cuda compilation tools, release X.Y, VX.Y.Z`) and accepts every module. The workspace's own
//! installs are hidden (`TCGEN05_ROOT` names an empty folder, `PATH` holds no ptxas), so the
//! listed versions are exactly the stand-ins'.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fake_ptxas(dir: &Path, name: &str, release: &str, full: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then\n  echo 'ptxas: NVIDIA (R) Ptx optimizing assembler'\n  \
             echo 'Cuda compilation tools, release {release}, V{full}'\n  exit 0\nfi\nexit 0\n"
        ),
    )
    .expect("write the stand-in");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p
}

struct Env {
    dir: tempfile::TempDir,
    ptxas: String,
}

fn env() -> Env {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = fake_ptxas(dir.path(), "ptxas-a", "12.7", "12.7.1");
    let b = fake_ptxas(dir.path(), "ptxas-b", "99.1", "99.1.2");
    let ptxas = format!("{}:{}", a.display(), b.display());
    std::fs::create_dir_all(dir.path().join("root")).expect("mkdir");
    Env { dir, ptxas }
}

fn cli(e: &Env, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcgen05-fuzz"))
        .args(args)
        .current_dir(e.dir.path())
        .env("TCGEN05_ROOT", e.dir.path().join("root"))
        .env("TCGEN05_PTXAS", &e.ptxas)
        .env("PATH", "/usr/bin:/bin")
        .env_remove("TCGEN05_TARGETS")
        .output()
        .expect("run tcgen05-fuzz")
}

fn campaign_targets(e: &Env, targets: &str, out: &str) -> Vec<String> {
    let dir = e.dir.path().join(out);
    let o = cli(
        e,
        &[
            "campaign",
            "--targets",
            targets,
            "--cases",
            "3",
            "--jobs",
            "1",
            "--no-minimize",
            "--progress",
            "quiet",
            "--out",
            dir.to_str().expect("utf-8 path"),
        ],
    );
    // 0: no finding; 1: findings (the stand-ins accept ill-formed cases too).
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "campaign --targets {targets}: {:?}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("campaign.json")).expect("campaign.json"),
    )
    .expect("campaign.json is JSON");
    let list = json
        .pointer("/identity/targets")
        .or_else(|| json.get("targets"))
        .and_then(|t| t.as_array())
        .unwrap_or_else(|| panic!("no target list in campaign.json: {json}"));
    list.iter()
        .map(|t| t.as_str().expect("target name").to_string())
        .collect()
}

#[test]
fn targets_lists_every_binary_named_by_the_variable() {
    let e = env();
    let o = cli(&e, &["targets"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    for (name, full) in [("ptxas@12.7", "12.7.1"), ("ptxas@99.1", "99.1.2")] {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line:\n{text}"));
        assert!(line.contains("available") && line.contains(full), "{line}");
    }
    assert!(text.contains("$TCGEN05_PTXAS"), "{text}");
}

#[test]
fn a_campaign_on_ptxas_runs_every_version_and_on_ptxas_at_one_version_runs_one() {
    let e = env();
    assert_eq!(
        campaign_targets(&e, "ptxas", "all"),
        vec!["ptxas@12.7", "ptxas@99.1"]
    );
    assert_eq!(
        campaign_targets(&e, "ptxas@99.1", "one"),
        vec!["ptxas@99.1"]
    );
    // Repeats collapse: `ptxas` already holds 12.7.
    assert_eq!(
        campaign_targets(&e, "ptxas,ptxas@12.7", "both"),
        vec!["ptxas@12.7", "ptxas@99.1"]
    );
    // A version that is not there is a clear error (exit status 2), not a panic.
    let o = cli(
        &e,
        &[
            "campaign",
            "--targets",
            "ptxas@12.8",
            "--cases",
            "1",
            "--progress",
            "quiet",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("ptxas@12.7") && err.contains("ptxas@99.1"),
        "{err}"
    );
}
