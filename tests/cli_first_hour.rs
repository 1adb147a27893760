//! The first hour of a new user, through the CLI: a campaign that finds something, its
//! reproducer run as printed from where the campaign ran, a minimized case that breaks nothing
//! the original kept, and the reports and listings in words (catalogue spelling, section
//! numbers, no Rust debug formatting).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use tcgen05_ir::{Case, Intent, Provenance, RuleId, codec, samples};
use tcgen05_oracle::{LeakStatus, RunVerdict};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tcgen05-fuzz"));
    c.env_remove("TCGEN05_TARGETS");
    c
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tcgen05-fuzz")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A campaign on the simulator with a truncating `ld`, run from `cwd` with a relative
/// `--out`: it finds something (exit 1).
fn campaign_with_findings(cwd: &Path, out: &str) -> Output {
    campaign_on(cwd, out, "sim+ld-num-truncated")
}

/// A 40-case campaign on `targets`, run from `cwd` with a relative `--out`: it finds
/// something (exit 1).
fn campaign_on(cwd: &Path, out: &str, targets: &str) -> Output {
    let o = run_in(
        cwd,
        &[
            "campaign",
            "--targets",
            targets,
            "--cases",
            "40",
            "--jobs",
            "1",
            "--progress",
            "quiet",
            "--out",
            out,
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    o
}

fn finding_folders(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out.join("findings"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("report.json").exists())
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no finding stored");
    v
}

/// A finding's report, its README and `report.md` give one command; run from the folder the
/// campaign ran in, its arguments name the finding, and the program it starts is this one.
#[test]
fn the_printed_reproducer_works_from_where_the_campaign_ran() {
    let cwd = tempfile::tempdir().unwrap();
    let o = campaign_with_findings(cwd.path(), "out/c");
    let stdout = text(&o.stdout);
    let out = cwd.path().join("out/c");
    for f in finding_folders(&out) {
        let id = f.file_name().unwrap().to_str().unwrap().to_string();
        let report = json(&f.join("report.json"));
        let command = report["command"].as_str().unwrap().to_string();
        let readme = std::fs::read_to_string(f.join("README.md")).unwrap();
        assert!(readme.contains(&command), "README lacks `{command}`");
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(md.contains(&command), "report.md lacks `{command}`");
        // The campaign's own summary names the folder as the user can open it.
        assert!(stdout.contains(&format!("out/c/findings/{id}")), "{stdout}");
        let (program, rest) = command
            .split_once(" reproduce ")
            .unwrap_or_else(|| panic!("not a reproduce command: {command}"));
        // This binary runs from a cargo build outside `cwd`: the same cargo command, told
        // where the manifest is, or else the binary's path.
        let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_tcgen05-fuzz")).unwrap();
        let ok_program = match program.strip_prefix("cargo run --manifest-path ") {
            Some(m) => {
                let manifest = m.split(' ').next().unwrap();
                exe.starts_with(Path::new(manifest).parent().unwrap())
                    && Path::new(manifest).is_file()
            }
            None => Path::new(program) == exe,
        };
        assert!(ok_program, "`{program}` does not run {}", exe.display());
        let args: Vec<&str> = rest.split(' ').collect();
        assert_eq!(
            args,
            [
                format!("out/c/findings/{id}").as_str(),
                "--targets",
                "sim+ld-num-truncated"
            ]
        );
        // Run as printed, from the campaign's folder: the discrepancy again (exit 1).
        let r = run_in(cwd.path(), &[&["reproduce"], &args[..]].concat());
        assert_eq!(r.status.code(), Some(1), "{}", text(&r.stderr));
        assert!(
            text(&r.stdout).contains("DISCREPANCY"),
            "{}",
            text(&r.stdout)
        );
    }
}

/// The minimizer keeps only programs that break no rule the original kept: a finding from a
/// program the oracle judges clean (no violation, completes, frees everything) is minimized to
/// a program the oracle judges clean too (the minimized case used to allocate and never free).
#[test]
fn a_minimized_finding_breaks_only_what_its_original_broke() {
    let cwd = tempfile::tempdir().unwrap();
    campaign_with_findings(cwd.path(), "out");
    let clean = |c: &Case| {
        let e = tcgen05_oracle::expect(&c.program);
        e.violations.is_empty()
            && e.run.verdict == RunVerdict::Completes
            && e.leak.status == LeakStatus::NoLeak
    };
    let mut checked = 0;
    for f in finding_folders(&cwd.path().join("out")) {
        let read = |n: &str| codec::decode(&std::fs::read(f.join(n)).unwrap()).unwrap();
        let (original, minimized) = (read("original.case"), read("minimized.case"));
        if clean(&original) {
            assert!(
                clean(&minimized),
                "{}: the minimized case breaks a rule the original kept",
                f.display()
            );
            checked += 1;
        }
        let r = run_in(cwd.path(), &["reproduce", f.to_str().unwrap()]);
        assert!(!text(&r.stdout).contains("leaked"), "{}", text(&r.stdout));
    }
    assert!(checked > 0, "no finding of a clean original to check");
}

/// `check` on a finding's `minimized.ptx` reports no rule but the one the finding names, when
/// `check` finds nothing in the original: the minimizer keeps the cluster barrier before a
/// `::2` alloc (GEN-PEER-ACTIVE, §9.7.16.7.1), the fences around a barrier (MCM-XTHREAD,
/// §9.7.16.6.3-4) and the cluster shape (`.reqnctapercluster`) that lets `check` see the pair.
#[test]
fn check_on_a_minimized_ptx_reports_only_the_finding_s_rule() {
    let cwd = tempfile::tempdir().unwrap();
    campaign_on(
        cwd.path(),
        "out",
        "sim+alloc-pair-not-collective,sim+cluster-barrier-no-wait",
    );
    let rules_of = |ptx: &Path| -> Vec<String> {
        let o = run_in(
            cwd.path(),
            &["check", "--format", "json", ptx.to_str().unwrap()],
        );
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{}",
            text(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["kernels"].as_array().unwrap())
            .flat_map(|k| k["findings"].as_array().unwrap())
            .map(|x| x["rule"].as_str().unwrap().to_string())
            .collect()
    };
    let mut checked = 0;
    for f in finding_folders(&cwd.path().join("out")) {
        if !rules_of(&f.join("original.ptx")).is_empty() {
            continue;
        }
        let reported = json(&f.join("report.json"))["sig"]["rule"].clone();
        let min = std::fs::read_to_string(f.join("minimized.ptx")).unwrap();
        let others: Vec<String> = rules_of(&f.join("minimized.ptx"))
            .into_iter()
            .filter(|r| reported.as_str() != Some(r.as_str()))
            .collect();
        assert!(
            others.is_empty(),
            "{}: check on minimized.ptx reports {others:?}",
            f.display()
        );
        if min.contains("cta_group::2") {
            assert!(min.contains(".reqnctapercluster"), "{}", f.display());
        }
        checked += 1;
    }
    assert!(checked > 0, "no finding of a clean original to check");
}

/// Reports and JSON use the catalogue's spelling (`LD-ASYNC`, `seeds`) and words, never Rust
/// variant names (`LdAsync`, `Seeds`, `MayLeak`, `Warp(0)`); a cut "what differs" ends on a
/// whole word with an ellipsis.
#[test]
fn reports_and_json_use_the_catalogue_spelling_and_words() {
    let cwd = tempfile::tempdir().unwrap();
    campaign_with_findings(cwd.path(), "out");
    let out = cwd.path().join("out");
    // A lost commit arrive: a wait that gave up, whose detail names its observation site.
    campaign_on(cwd.path(), "lost", "sim+commit-lost-arrive");
    for file in ["report.json", "report.md"] {
        let t = std::fs::read_to_string(cwd.path().join("lost").join(file)).unwrap();
        assert!(t.contains("wait-gave-up-where-arrive-required"), "{t}");
        for rust in ["Warp(", "Func {", "WaitGaveUp"] {
            assert!(!t.contains(rust), "`{rust}` in lost/{file}");
        }
    }
    let debug_names: Vec<String> = RuleId::ALL.iter().map(|r| format!("\"{r:?}\"")).collect();
    let mut files = vec![out.join("report.json"), out.join("campaign.json")];
    for f in finding_folders(&out) {
        files.push(f.join("report.json"));
        let report = json(&f.join("report.json"));
        let rule = report["sig"]["rule"].as_str().unwrap();
        assert!(rule.parse::<RuleId>().is_ok(), "rule `{rule}`");
        assert_eq!(report["edition"], "seeds");
        assert_eq!(report["expected"]["edition"], "seeds");
        let r = run_in(cwd.path(), &["reproduce", f.to_str().unwrap()]);
        let said = text(&r.stdout);
        for rust in [
            "Warp(",
            "Func {",
            "MayLeak",
            "NoLeak",
            "Unspecified(",
            "WaitGaveUp",
        ] {
            assert!(!said.contains(rust), "`{rust}` in reproduce:\n{said}");
        }
    }
    for file in &files {
        let t = std::fs::read_to_string(file).unwrap();
        for d in &debug_names {
            // A variant name that is also a catalogue name would be fine; none is.
            assert!(!t.contains(d.as_str()), "{d} in {}", file.display());
        }
        assert!(!t.contains("\"Seeds\""), "\"Seeds\" in {}", file.display());
    }
    let summary = json(&out.join("report.json"));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for f in summary["findings"].as_array().unwrap() {
        let detail = f["detail"].as_str().unwrap();
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| [`{}`]", f["id"].as_str().unwrap())))
            .expect("a row per finding");
        let cell = row.trim_end_matches(" |").rsplit(" | ").next().unwrap();
        // A cut cell keeps the observing instruction the detail names at its end.
        let observer = detail.rfind("; observed by ").map(|i| &detail[i..]);
        let cell = match observer {
            Some(o) if cell != detail => {
                let o = o.split(" [").next().unwrap();
                cell.strip_suffix(o)
                    .unwrap_or_else(|| panic!("the observer `{o}` is cut: {cell}"))
            }
            _ => cell,
        };
        if cell != detail {
            let kept = cell
                .strip_suffix('…')
                .unwrap_or_else(|| panic!("cut without an ellipsis: {cell}"));
            assert!(detail.starts_with(kept), "{cell}");
            assert!(
                !detail[kept.len()..].starts_with(|c: char| c.is_ascii_alphanumeric()),
                "cut inside a word or number: {cell}"
            );
        }
    }
}

/// The coverage headline counts a rule as judged only where a case agreed or disagreed on
/// it, and names the rules only skipped cases exercised apart: recomputed from the matrix in
/// `report.json`.
#[test]
fn the_coverage_headline_counts_judged_rules() {
    let cwd = tempfile::tempdir().unwrap();
    let o = run_in(
        cwd.path(),
        &[
            "campaign",
            "--targets",
            "sim",
            "--cases",
            "60",
            "--progress",
            "quiet",
            "--out",
            "out",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = cwd.path().join("out");
    let summary = json(&out.join("report.json"));
    let rows = summary["coverage"]["rows"].as_array().unwrap();
    let mut judged = 0;
    let mut skipped_only = 0;
    for row in rows {
        let cells = row["cells"].as_array().unwrap();
        let n = |k: &str| cells.iter().map(|c| c[k].as_u64().unwrap()).sum::<u64>();
        if n("agree") + n("discrepancy") > 0 {
            judged += 1;
        } else if n("cases") > 0 {
            skipped_only += 1;
        }
    }
    assert!(
        skipped_only > 0,
        "the sample has rules exercised only by skips"
    );
    let want = format!(
        "{judged} of {} rules judged (a case exercising the rule agreed or disagreed on a target); {skipped_only} more exercised only by skipped cases",
        RuleId::ALL.len()
    );
    for file in ["report.md", "coverage.md"] {
        let t = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(t.contains(&want), "{file} lacks `{want}`");
        assert!(!t.contains("rules exercised."), "{file}: the old headline");
    }
}

/// A second campaign in the folder of another is refused with what differs, in words, and
/// what to do; the README's hint to add a faulty simulator gives the campaign its own folder.
#[test]
fn another_campaign_in_the_same_folder_is_explained() {
    let cwd = tempfile::tempdir().unwrap();
    let first = run_in(
        cwd.path(),
        &[
            "campaign",
            "--targets",
            "sim",
            "--cases",
            "2",
            "--progress",
            "quiet",
            "--out",
            "c",
        ],
    );
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let o = run_in(
        cwd.path(),
        &[
            "campaign",
            "--targets",
            "sim,sim+ld-num-truncated",
            "--cases",
            "2",
            "--progress",
            "quiet",
            "--out",
            "c",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("its --targets is `sim`, not `sim,sim+ld-num-truncated`"),
        "{err}"
    );
    assert!(err.contains("--out <another folder>"), "{err}");
    assert!(!err.contains('{'), "raw JSON in: {err}");

    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let main_out = "--out out/campaign";
    assert!(readme.contains(main_out));
    let hint = readme
        .lines()
        .find(|l| l.contains("--targets sim,sim+ld-num-truncated"))
        .expect("the README's hint");
    assert!(
        hint.contains("--out ") && !hint.contains(main_out),
        "the hint reuses the first campaign's folder: {hint}"
    );
    assert!(readme.contains("cargo install --path ."));
}

#[test]
fn rules_have_a_header_a_legend_and_section_numbers() {
    let o = bin().arg("rules").output().unwrap();
    assert!(o.status.success());
    let t = text(&o.stdout);
    let header = t.lines().next().unwrap();
    for col in ["RULE", "KIND", "SRC", "SECTION"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        t.contains("S = stated by a seed document"),
        "no S/W/D legend"
    );
    for bad in ["§same", "§syntax", "§Target", "§each", "§PTX", "seed 002"] {
        assert!(!t.contains(bad), "`{bad}` in `rules`");
    }
    // Every row cites a section number (`§9.7.16...`).
    for line in t.lines().skip(1).take(RuleId::ALL.len()) {
        assert!(line.contains("§9.7.16."), "{line}");
    }
    let j: serde_json::Value = serde_json::from_slice(
        &bin()
            .args(["rules", "--format", "json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for row in j.as_array().unwrap() {
        let letter = row["provenance"].as_str().unwrap();
        assert!(["S", "W", "D", "P"].contains(&letter), "{row}");
        // The README's "Reading the report" explains every letter `rules` shows.
        assert!(
            readme.contains(&format!("**{letter}** ")),
            "the README does not explain source {letter}"
        );
        assert!(
            row["id"].as_str().unwrap().parse::<RuleId>().is_ok(),
            "{row}"
        );
        assert!(
            row["kinds"][0]
                .as_str()
                .unwrap()
                .starts_with(char::is_lowercase),
            "{row}"
        );
        assert!(
            row["cited_section"]
                .as_str()
                .unwrap()
                .starts_with("9.7.16."),
            "{row}"
        );
    }
}

#[test]
fn fault_names_are_listed_and_a_wrong_one_lists_them() {
    let o = bin().arg("targets").output().unwrap();
    let t = text(&o.stdout);
    for f in ["ld-num-truncated", "wait-ld-early", "fence-noop"] {
        assert!(t.contains(&format!("  {f} ")), "`targets` lacks {f}:\n{t}");
    }
    let d = tempfile::tempdir().unwrap();
    let o = run_in(
        d.path(),
        &[
            "campaign",
            "--targets",
            "sim+bogus",
            "--cases",
            "1",
            "--out",
            "c",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("`bogus`") && err.contains("ld-num-truncated") && err.contains("fence-noop"),
        "{err}"
    );
}

fn sample_case(dir: &Path, name: &str) -> PathBuf {
    let case = Case {
        program: samples::single_warp_roundtrip(),
        intent: Intent::Valid,
        provenance: Provenance::default(),
    };
    let path = dir.join(name);
    std::fs::write(&path, codec::encode(&case)).unwrap();
    path
}

#[test]
fn show_takes_a_finding_folder() {
    let d = tempfile::tempdir().unwrap();
    sample_case(d.path(), "minimized.case");
    let o = bin().arg("show").arg(d.path()).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        tcgen05_ir::ptx::lift(&text(&o.stdout)).unwrap(),
        samples::single_warp_roundtrip()
    );
    // A folder that is not a finding: a clear error, exit 2.
    let empty = tempfile::tempdir().unwrap();
    let o = bin().arg("show").arg(empty.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("not a finding folder"));
}

#[test]
fn generate_s_usage_shows_out() {
    let o = bin().args(["generate", "--help"]).output().unwrap();
    let usage = text(&o.stdout)
        .lines()
        .find(|l| l.starts_with("Usage:"))
        .unwrap()
        .to_string();
    assert!(usage.contains("--out <OUT>"), "{usage}");
}

/// A case without a discrepancy is not bad input (exit 2): minimize says there is nothing to
/// minimize, writes nothing, and exits 0.
#[test]
fn minimize_without_a_discrepancy_says_so() {
    let d = tempfile::tempdir().unwrap();
    let case = sample_case(d.path(), "ok.case");
    let out = d.path().join("min.case");
    let o = bin()
        .arg("minimize")
        .arg(&case)
        .args(["--target", "sim", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("nothing to minimize"),
        "{}",
        text(&o.stdout)
    );
    assert!(!out.exists());
}

/// A stand-in ptxas that takes 1 s a process: `--time 1s` stops after its first (small) claim,
/// where a whole batch of 128 cases (about a dozen processes) used to run first.
#[cfg(unix)]
#[test]
fn a_timed_ptxas_campaign_stops_near_its_time() {
    use std::os::unix::fs::PermissionsExt as _;
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("ptxas-slow");
    std::fs::write(
        &p,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then\n  echo 'Cuda compilation tools, release 99.1, V99.1.2'\n  exit 0\nfi\nsleep 1\nexit 0\n",
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(d.path().join("root")).unwrap();
    let t0 = Instant::now();
    let o = bin()
        .args([
            "campaign",
            "--targets",
            "ptxas@99.1",
            "--time",
            "1s",
            "--jobs",
            "1",
            "--no-minimize",
            "--progress",
            "quiet",
            "--out",
            "c",
        ])
        .current_dir(d.path())
        .env("TCGEN05_ROOT", d.path().join("root"))
        .env("TCGEN05_PTXAS", &p)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let took = t0.elapsed();
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        text(&o.stderr)
    );
    assert!(
        took < Duration::from_secs(8),
        "--time 1s took {took:?} with a 1 s ptxas"
    );
}

/// `bench` says what it is doing while it measures (it used to be silent for half a minute),
/// and its text never gives a negative overhead.
#[test]
fn bench_shows_progress_and_no_negative_overhead() {
    let o = bin()
        .args([
            "bench",
            "--cases",
            "40",
            "--ptxas-cases",
            "1",
            "--repeat",
            "1",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("bench: stages"), "{err}");
    assert!(err.contains("round 1 of 1"), "{err}");
    let out = text(&o.stdout);
    let overhead = out
        .lines()
        .find(|l| l.starts_with("campaign overhead:"))
        .expect("an overhead line");
    let negative = overhead
        .split(|c: char| c.is_whitespace() || c == '(')
        .any(|w| w.starts_with('-') && w.ends_with('%'));
    assert!(!negative, "{overhead}");
    assert!(out.contains("--cases 5000 or more"), "{out}");
}

/// The lines of section `[name]` of a TOML file (up to the next section header).
fn toml_section<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let header = format!("[{name}]");
    text.lines()
        .skip_while(|l| l.trim() != header)
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// The first command a newcomer runs builds with the default optimized profile, in parallel;
/// fat LTO and one codegen unit (a build several times longer for +3% cases/s) are in the
/// named `campaign` profile for long campaigns and benchmarks.
#[test]
fn the_first_build_is_the_plain_release_profile() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let release = toml_section(&cargo, "profile.release");
    assert!(
        !release
            .iter()
            .any(|l| l.starts_with("lto") || l.starts_with("codegen-units")),
        "[profile.release] {release:?}"
    );
    let campaign = toml_section(&cargo, "profile.campaign");
    for want in [
        "inherits = \"release\"",
        "lto = \"fat\"",
        "codegen-units = 1",
    ] {
        assert!(campaign.contains(&want), "[profile.campaign] {campaign:?}");
    }
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains("cargo run --release -- campaign --time 60s --out out/campaign"),
        "the README's main job is the release build"
    );
}

/// `scripts/test --quick` runs the suite without installing anything; `scripts/test` (CI's
/// command) installs the ptxas matrix first. Run on a copy of the script whose `setup-ptxas`
/// and `setup-llvm` only leave a mark and whose `cargo` only prints its arguments.
#[test]
fn the_quick_test_command_installs_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let scripts = dir.path().join("scripts");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(root.join("scripts/test"), scripts.join("test")).unwrap();
    let fake = |path: PathBuf, body: &str| {
        std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
        let status = Command::new("chmod").arg("+x").arg(&path).status().unwrap();
        assert!(status.success());
    };
    fake(
        scripts.join("setup-ptxas"),
        "touch \"$(dirname \"$0\")/../ptxas-installed\"",
    );
    fake(scripts.join("setup-llvm"), "exit 0");
    fake(bin.join("cargo"), "echo \"cargo $*\"");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |args: &[&str]| {
        let out = Command::new("bash")
            .arg(scripts.join("test"))
            .args(args)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let marker = dir.path().join("ptxas-installed");
    let quick = run(&["--quick"]);
    assert!(!marker.exists(), "--quick installed ptxas");
    assert!(
        quick.contains("cargo test --workspace"),
        "--quick ran: {quick}"
    );
    let full = run(&[]);
    assert!(marker.exists(), "scripts/test did not install ptxas");
    assert!(full.contains("cargo test --workspace"), "ran: {full}");
}

/// A finding is stored under the rule its stored discrepancy names first: where the minimized
/// case lets the diagnosis name the behaviour that differed (a sharper rule than the observing
/// ld's), its folder, README and `report.json` signature carry that rule (they kept the
/// original's LD-ASYNC while the detail said LDST-NUM).
#[test]
fn a_finding_is_filed_under_the_rule_its_discrepancy_names() {
    let cwd = tempfile::tempdir().unwrap();
    campaign_with_findings(cwd.path(), "out");
    for f in finding_folders(&cwd.path().join("out")) {
        let r = json(&f.join("report.json"));
        let rule = r["sig"]["rule"].as_str().unwrap_or_default().to_string();
        assert_eq!(
            Some(rule.as_str()),
            r["discrepancy"]["rules"][0].as_str(),
            "{}",
            f.display()
        );
        let readme = std::fs::read_to_string(f.join("README.md")).unwrap();
        assert!(
            readme.contains(&format!(" / {rule} / ")),
            "{}: {readme}",
            f.display()
        );
        assert_eq!(
            f.file_name().and_then(|n| n.to_str()),
            r["signature_id"].as_str()
        );
    }
}

/// Every string value and one-entry-object key of `v` that is a Rust enum variant name
/// (an upper-case letter, then letters and digits with a lower-case one among them:
/// `Completes`, `PerWord`, `Mixed`), with its path. Rule ids (`LD-ASYNC`), kebab-case tags
/// and text (spaces, punctuation) pass.
fn variant_names(v: &serde_json::Value, path: &str, found: &mut Vec<String>) {
    let rust = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_uppercase())
            && s.chars().all(|c| c.is_ascii_alphanumeric())
            && s.chars()
                .any(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    match v {
        serde_json::Value::String(s) if rust(s) => found.push(format!("{path}: \"{s}\"")),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                variant_names(x, &format!("{path}[{i}]"), found);
            }
        }
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if m.len() == 1 && rust(k) {
                    found.push(format!("{path}: key \"{k}\""));
                }
                variant_names(x, &format!("{path}.{k}"), found);
            }
        }
        _ => {}
    }
}

/// No JSON a campaign with a fault writes, nor any JSON a command prints about it (`show
/// --format json` of each finding, `check --format json` of its minimized PTX, `targets`,
/// `rules`), holds a Rust enum variant name where a rule id or a kebab-case tag belongs
/// (`"Completes"`, `{"Warp": 0}`, `{"Completed": ...}`, `"Mixed"`, `"CompileOnly"` were
/// there before).
#[test]
fn no_json_a_user_reads_holds_a_rust_variant_name() {
    let mut sample = Vec::new();
    variant_names(
        &serde_json::json!({"run": {"verdict": "Completes"}, "site": {"Warp": 0}, "rule": "LD-ASYNC"}),
        "",
        &mut sample,
    );
    assert_eq!(
        sample,
        [".run.verdict: \"Completes\"", ".site: key \"Warp\""]
    );
    let cwd = tempfile::tempdir().unwrap();
    campaign_on(cwd.path(), "out", "sim,sim+wait-st-early");
    let out = cwd.path().join("out");
    let mut docs: Vec<(String, serde_json::Value)> = ["report.json", "campaign.json", "state.json"]
        .iter()
        .map(|f| (f.to_string(), json(&out.join(f))))
        .collect();
    let printed = |args: &[&str]| -> serde_json::Value {
        let o = run_in(cwd.path(), args);
        serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&o.stderr)))
    };
    let findings = finding_folders(&out);
    assert!(!findings.is_empty());
    for f in &findings {
        let name = f.display().to_string();
        docs.push((format!("{name}/report.json"), json(&f.join("report.json"))));
        docs.push((
            format!("show --format json {name}"),
            printed(&["show", "--format", "json", &name]),
        ));
        let ptx = f.join("minimized.ptx").display().to_string();
        docs.push((
            format!("check --format json {ptx}"),
            printed(&["check", "--format", "json", &ptx]),
        ));
    }
    docs.push(("targets".into(), printed(&["targets", "--format", "json"])));
    docs.push(("rules".into(), printed(&["rules", "--format", "json"])));
    let mut bad = Vec::new();
    for (what, v) in &docs {
        let mut found = Vec::new();
        variant_names(v, "", &mut found);
        bad.extend(found.into_iter().map(|f| format!("{what}: {f}")));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
