//! The LLVM campaign's findings: minimized with the engine's minimizer, written
//! as reproducers in LLVM's own terms. Without LLVM at build time the test is ignored
//! (`cfg(tcgen05_no_llvm)`, set by `drivers/build.rs`, this package's build script too).

use tcgen05_drivers::llvm::lower;
use tcgen05_drivers::llvm::pipeline::{self, Frontend, Level, LlvmVerdict, Options};
use tcgen05_drivers::llvm::{LlvmInstall, installed};
use tcgen05_generators::{Config, valid_program};
use tcgen05_ir::*;

fn newest() -> LlvmInstall {
    installed().pop().expect(
        "no LLVM found, though the build found one: run scripts/setup-llvm, or `touch \
         drivers/build.rs` so the tests that need LLVM are ignored",
    )
}

/// Finding 1 of docs/llvm.md: a generic-address commit printed with `.shared::cluster`.
fn is_generic_commit_finding(v: &LlvmVerdict) -> bool {
    matches!(v, LlvmVerdict::Miscompiled(m) if m.iter().all(|m| {
        m.what.contains("source `tcgen05.commit") && m.what.contains(".mbarrier::arrive::one.shared::cluster.b64")
    }))
}

/// A finding's program model is minimized (the shared minimizer, keeping
/// candidates that still show the same finding and break no new rule), its folder holds the
/// reproducer in LLVM's terms, and the `.ll` is valid input for `opt -passes=verify` and for
/// `llvm-reduce` (run with an interestingness test on the finding: llc still prints the
/// generic commit with `.shared::cluster`, finding 1 of docs/llvm.md).
#[test]
#[cfg_attr(
    tcgen05_no_llvm,
    ignore = "no LLVM installed at build time (scripts/setup-llvm)"
)]
fn a_finding_is_minimized_and_its_ll_feeds_llvm_reduce() {
    use tcgen05_engine::llvm_campaign::{
        finding_kind, minimize_finding, signature, write_reproducer,
    };
    let llvm = newest();
    let mut opts = Options::new(Level::O0, Frontend::Llvm);
    opts.ptxas = None;
    let cfg = Config::default();
    let (case, sig) = (0..40u64)
        .find_map(|seed| {
            let p = valid_program(&cfg, seed);
            let r = pipeline::check(&llvm, &p, &opts);
            if !is_generic_commit_finding(&r.verdict) {
                return None;
            }
            let kind = finding_kind(&Intent::Valid, &r.verdict)?;
            let case = Case {
                program: p,
                intent: Intent::Valid,
                provenance: Provenance::default(),
            };
            Some((case, signature(kind, &r.verdict)))
        })
        .expect("a generated program within 40 seeds commits through a generic address");
    let (small, run) = minimize_finding(
        &llvm,
        &opts,
        &case,
        &sig,
        std::time::Duration::from_secs(120),
    )
    .expect("the case shows the finding");
    assert!(
        small.program.size() < case.program.size(),
        "{} -> {}",
        case.program.size(),
        small.program.size()
    );
    eprintln!(
        "minimized: program size {} -> {}",
        case.program.size(),
        small.program.size()
    );
    let kind = finding_kind(&Intent::Valid, &run.verdict).expect("still a finding");
    assert_eq!(signature(kind, &run.verdict), sig);
    let dir = tempfile::tempdir().unwrap();
    write_reproducer(dir.path(), &llvm, &opts, &small, &run).unwrap();
    for f in [
        "case.json",
        "source.ptx",
        "case.ll",
        "commands.sh",
        "produced.ptx",
        "verdict.txt",
    ] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    // commands.sh reproduces the finding from the files alone: the produced PTX it writes
    // carries the qualified commit again.
    std::fs::remove_file(dir.path().join("produced.ptx")).unwrap();
    let sh = std::process::Command::new("sh")
        .arg(dir.path().join("commands.sh"))
        .output()
        .unwrap();
    assert!(
        sh.status.success(),
        "commands.sh: {}",
        String::from_utf8_lossy(&sh.stderr)
    );
    let produced = std::fs::read_to_string(dir.path().join("produced.ptx")).unwrap();
    assert!(
        produced.contains("mbarrier::arrive::one.shared::cluster.b64"),
        "{produced}"
    );
    let ll = dir.path().join("case.ll");
    let verify = std::process::Command::new(llvm.opt())
        .args(["-passes=verify", "-disable-output"])
        .arg(&ll)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
    let reduce = llvm.bin.join("llvm-reduce");
    if !reduce.is_file() {
        eprintln!(
            "no llvm-reduce in {}: checked with opt -passes=verify only",
            llvm.bin.display()
        );
        return;
    }
    let test = dir.path().join("interesting.sh");
    std::fs::write(
        &test,
        format!(
            "#!/bin/sh\n{} -march=nvptx64 -mcpu={} -mattr={} \"$1\" -o - | grep -q 'mbarrier::arrive::one.shared::cluster.b64[[:space:]]*\\[%rd'\n",
            llvm.llc().display(),
            lower::mcpu(&small.program),
            lower::mattr(&small.program)
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&test, std::fs::Permissions::from_mode(0o755)).unwrap();
    let first = std::process::Command::new(&test).arg(&ll).output().unwrap();
    assert!(
        first.status.success(),
        "the interestingness test fails on case.ll: {}\n{}\nproduced:\n{}",
        String::from_utf8_lossy(&first.stderr),
        std::fs::read_to_string(&test).unwrap(),
        run.ptx
            .as_deref()
            .unwrap_or("")
            .lines()
            .filter(|l| l.contains("commit"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let out = dir.path().join("reduced.ll");
    let r = std::process::Command::new(&reduce)
        .arg(format!("--test={}", test.display()))
        .arg("-o")
        .arg(&out)
        .arg(&ll)
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "llvm-reduce: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    let reduced = std::fs::read_to_string(&out).unwrap();
    assert!(reduced.contains("llvm.nvvm.tcgen05.commit"), "{reduced}");
    let before = std::fs::read_to_string(&ll).unwrap().len();
    eprintln!(
        "llvm-reduce: case.ll {before} bytes -> {} bytes",
        reduced.len()
    );
    assert!(reduced.len() < before);
}

/// Finding 3 of docs/llvm.md: a near-miss of GEN-CTAGROUP-UNIFORM (one kernel mixing
/// `.cta_group::1` and `::2`) that LLVM passes to ptxas, which rejects it. A rejection is what
/// the spec allows for a program that breaks a static rule, yet the finding (the error
/// surfaces only in ptxas) is minimized like any other: it shrinks and keeps its signature.
#[test]
#[cfg_attr(
    any(tcgen05_no_llvm, tcgen05_no_ptxas),
    ignore = "needs LLVM and ptxas at build time (scripts/setup-llvm, scripts/setup-ptxas)"
)]
fn a_late_rejection_is_minimized() {
    use tcgen05_engine::llvm_campaign::{finding_kind, minimize_finding, signature};
    use tcgen05_generators::mutate::{MUTATORS, near_miss};
    let llvm = newest();
    let opts = Options::new(Level::O0, Frontend::Llvm);
    assert!(opts.ptxas.is_some(), "ptxas was found at build time");
    let m = MUTATORS
        .iter()
        .find(|m| m.rule == RuleId::GenCtagroupUniform)
        .expect("a GEN-CTAGROUP-UNIFORM mutator");
    let (case, sig) = (0..40u64)
        .find_map(|seed| {
            let p = near_miss(m, seed)?;
            let intent = Intent::NearMiss {
                breaks: RuleId::GenCtagroupUniform,
            };
            let r = pipeline::check(&llvm, &p, &opts);
            let kind = finding_kind(&intent, &r.verdict)?;
            (kind == "late-rejection").then(|| {
                (
                    Case {
                        program: p,
                        intent,
                        provenance: Provenance::default(),
                    },
                    signature(kind, &r.verdict),
                )
            })
        })
        .expect("a near-miss within 40 seeds that ptxas rejects after LLVM");
    let (small, run) = minimize_finding(
        &llvm,
        &opts,
        &case,
        &sig,
        std::time::Duration::from_secs(60),
    )
    .expect("the minimizer starts on a late rejection");
    assert!(
        small.program.size() < case.program.size(),
        "{} -> {}",
        case.program.size(),
        small.program.size()
    );
    let kind = finding_kind(&small.intent, &run.verdict).expect("still a finding");
    assert_eq!(signature(kind, &run.verdict), sig);
}
