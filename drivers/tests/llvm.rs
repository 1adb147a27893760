//! The `llvm@<version>` and `mlir@<version>` targets against the installed LLVM (docs/llvm.md).
//!
//! Without LLVM at build time the tests that run it are ignored (`cfg(tcgen05_no_llvm)`, set
//! by `drivers/build.rs`), so `cargo test` lists them as ignored instead of passing them
//! silently; `scripts/setup-llvm` installs it and `tcgen05-fuzz targets` says why none was
//! found. The translation-validation tests need no LLVM: they feed the validator hand-made
//! wrong compilations of the printer's own PTX.

use std::collections::{BTreeMap, BTreeSet};
use tcgen05_drivers::llvm::behaviour::NotLifted;
use tcgen05_drivers::llvm::lower::{self, unsupported};
use tcgen05_drivers::llvm::pipeline::{self, Frontend, Level, LlvmVerdict, Options};
use tcgen05_drivers::llvm::validate::validate;
use tcgen05_drivers::llvm::{LlvmInstall, installed};
use tcgen05_generators::{Config, coverage, valid_program};
use tcgen05_ir::*;

fn newest() -> LlvmInstall {
    installed().pop().expect(
        "no LLVM found, though the build found one: run scripts/setup-llvm, or `touch \
         drivers/build.rs` so the tests that need LLVM are ignored",
    )
}

/// A one-warp program with every ordering the validator checks: alloc, st, wait::st, ld,
/// wait::ld (and the ld's record), an MMA and its commit, a fence, dealloc, relinquish.
fn ordered() -> Program {
    let mut p = samples::single_warp_roundtrip();
    p.smem.mbarriers = 1;
    p.smem.regions = vec![4096];
    let desc = SmemDesc {
        region: 0,
        offset: 0,
        lbo_enc: 1,
        sbo_enc: 64,
        fixed: 1,
        base_offset: 0,
        lbo_abs: false,
        swizzle: 0,
        reserved: 0,
    };
    let mma = Stmt::Tc(Op::Mma(Box::new(Mma {
        form: form::MmaForm {
            ws: false,
            sp: false,
            cta_group: CtaGroup::One,
            kind: MmaKind::F16,
            block_scale: false,
            scale_vec: None,
            ashift: false,
            collector: None,
        },
        d: TmemRef::slot(0, 0, 0),
        a: MmaA::Desc(desc),
        b: SmemDesc {
            offset: 2048,
            ..desc
        },
        sp_meta: None,
        idesc: 0x0810_0490,
        scale_a: None,
        scale_b: None,
        disable_output_lane: None,
        enable_input_d: false,
        scale_input_d: None,
        zero_col_mask: None,
    })));
    let commit = Stmt::Tc(Op::Commit {
        form: form::CommitForm {
            cta_group: CtaGroup::One,
            arrive_one: true,
            shared_cluster: true,
            multicast: false,
            ty: Ty::B64,
        },
        mbar: 0,
        addr: MbarAddr::Shared,
        cta_mask: None,
    });
    let body = &mut p.warps[0];
    // After the alloc's fence/barrier prologue of the sample, before its dealloc.
    let at = body
        .iter()
        .position(|s| matches!(s, Stmt::Tc(Op::Dealloc { .. })))
        .expect("the sample deallocates");
    body.insert(
        at,
        Stmt::If {
            cond: Cond::ElectOne,
            then: vec![mma, commit],
            els: vec![],
        },
    );
    p
}

fn reported(p: &Program, produced: &str) -> Vec<String> {
    let src = ptx::emit(p);
    let v = validate(p, &src, produced, 16).expect("both modules run");
    v.mismatches.iter().map(ToString::to_string).collect()
}

/// The line index of the first line containing `needle`.
fn line_of(lines: &[String], needle: &str) -> usize {
    lines
        .iter()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with `{needle}`"))
}

#[test]
fn the_printers_own_ptx_validates_against_itself() {
    let p = ordered();
    let src = ptx::emit(&p);
    assert!(src.contains("tcgen05.mma"), "{src}");
    assert!(reported(&p, &src).is_empty());
}

#[test]
fn an_ld_moved_after_its_wait_is_reported() {
    let p = ordered();
    let mut lines: Vec<String> = ptx::emit(&p).lines().map(String::from).collect();
    let ld = line_of(&lines, "tcgen05.ld.");
    let wait = line_of(&lines, "tcgen05.wait::ld");
    assert!(ld < wait);
    // Right after the wait (before the record that reads its registers).
    let l = lines.remove(ld);
    lines.insert(wait, l);
    let r = reported(&p, &lines.join("\n"));
    assert!(
        r.iter()
            .any(|m| m.contains("tcgen05.ld") && m.contains("moved past")),
        "{r:#?}"
    );
}

#[test]
fn a_dropped_commit_is_reported() {
    let p = ordered();
    let mut lines: Vec<String> = ptx::emit(&p).lines().map(String::from).collect();
    let c = line_of(&lines, "tcgen05.commit");
    lines.remove(c);
    let r = reported(&p, &lines.join("\n"));
    assert!(
        r.iter()
            .any(|m| m.contains("tcgen05.commit") && m.contains("dropped")),
        "{r:#?}"
    );
}

#[test]
fn swapped_mma_operands_are_reported() {
    let p = ordered();
    let text = ptx::emit(&p);
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let m = line_of(&lines, "tcgen05.mma");
    // `[d], a-desc, b-desc, idesc, p`: swap the two descriptors.
    let l = &lines[m];
    let (head, ops) = l.split_once(' ').unwrap();
    let mut parts: Vec<String> = ops.split(", ").map(String::from).collect();
    parts.swap(1, 2);
    lines[m] = format!("{head} {}", parts.join(", "));
    let r = reported(&p, &lines.join("\n"));
    assert!(r.iter().any(|m| m.contains("tcgen05.mma")), "{r:#?}");
}

#[test]
fn a_use_of_an_ld_value_before_the_wait_is_reported() {
    let p = ordered();
    let mut lines: Vec<String> = ptx::emit(&p).lines().map(String::from).collect();
    let wait = line_of(&lines, "tcgen05.wait::ld");
    // The record of the ld follows the wait: move the wait after the record's last store.
    let last_store = (wait..lines.len())
        .take_while(|&i| !lines[i].contains("tcgen05.mma") && !lines[i].contains("dealloc"))
        .filter(|&i| lines[i].contains("st.global"))
        .last()
        .expect("the ld's record");
    let w = lines.remove(wait);
    lines.insert(last_store, w);
    let r = reported(&p, &lines.join("\n"));
    assert!(
        r.iter().any(|m| m.contains("before any tcgen05.wait::ld")),
        "{r:#?}"
    );
}

#[test]
fn a_duplicated_st_is_reported() {
    let p = ordered();
    let mut lines: Vec<String> = ptx::emit(&p).lines().map(String::from).collect();
    let st = line_of(&lines, "tcgen05.st.");
    let dup = lines[st].clone();
    lines.insert(st, dup);
    let r = reported(&p, &lines.join("\n"));
    assert!(
        r.iter()
            .any(|m| m.contains("1 time(s)") && m.contains("2 time(s)")),
        "{r:#?}"
    );
}

/// The coverage keys of the builder's default configuration (generators/src/coverage.rs),
/// each with whether it was lowered and, if not, why. The forms LLVM 22 has no intrinsic for,
/// from `IntrinsicsNVVM.td` of LLVM 22.1: `tcgen05.ld.red` (no `ld.red` intrinsic), and the
/// `.scale_vec::NX` spellings of block scaling (the intrinsics spell `.block16`/`.block32`).
#[test]
fn reach_every_form_with_an_intrinsic_is_lowered() {
    let cfg = Config::default();
    let mut seen: BTreeMap<String, (usize, BTreeSet<String>)> = BTreeMap::new();
    for seed in 0..600u64 {
        let p = valid_program(&cfg, seed);
        for op in p.ops() {
            let mut keys = Vec::new();
            coverage::keys(op, &mut keys);
            let why = unsupported(op);
            for k in keys {
                let e = seen.entry(k).or_default();
                match &why {
                    None => e.0 += 1,
                    Some(r) => {
                        e.1.insert(r.clone());
                    }
                }
            }
        }
    }
    // The only reasons an op of a valid program may not be lowered.
    let allowed = [
        "no intrinsic for `tcgen05.ld.red` (PTX 8.8)",
        "no intrinsic prints `.scale_vec::NX` (only `.block16`/`.block32`)",
    ];
    let no_intrinsic = |k: &str| k.starts_with("ld.red") || k.contains("scale_vec::");
    let mut report = String::new();
    for (k, (lowered, reasons)) in &seen {
        report.push_str(&format!("{k}: lowered {lowered}, not: {reasons:?}\n"));
    }
    eprintln!("{report}");
    for (k, (lowered, reasons)) in &seen {
        for r in reasons {
            assert!(
                allowed.contains(&r.as_str()),
                "{k}: unexpected reason {r}\n{report}"
            );
        }
        if no_intrinsic(k) {
            assert_eq!(
                *lowered, 0,
                "{k} has no intrinsic but was lowered\n{report}"
            );
        }
    }
    // The default configuration reaches most claimed keys within 600 programs.
    let claimed = coverage::claimed();
    let reached = claimed.iter().filter(|k| seen.contains_key(*k)).count();
    assert!(
        reached * 10 >= claimed.len() * 8,
        "reached {reached} of {}",
        claimed.len()
    );
}

/// Finding 1 of docs/llvm.md: the generic commit intrinsic prints `.shared::cluster` with the
/// generic address (the only mismatch these seeds show; any other fails the test).
fn is_generic_commit_finding(v: &LlvmVerdict) -> bool {
    matches!(v, LlvmVerdict::Miscompiled(m) if m.iter().all(|m| {
        m.what.contains("source `tcgen05.commit") && m.what.contains(".mbarrier::arrive::one.shared::cluster.b64")
    }))
}

/// Finding 1 of docs/llvm.md, on its own: `llvm.nvvm.tcgen05.commit.cg1(ptr)` takes a generic
/// address, and LLVM 22 prints the `.shared::cluster` form with it (PTX ISA §9.7.16.12.1: with
/// `.shared::cluster` the operand is a shared::cluster address; without, a generic one). When
/// this test fails, LLVM was fixed: update the finding.
#[test]
#[cfg_attr(
    tcgen05_no_llvm,
    ignore = "no LLVM installed at build time (scripts/setup-llvm)"
)]
fn finding_generic_commit_prints_shared_cluster() {
    let llvm = newest();
    let ll = "target triple = \"nvptx64-nvidia-cuda\"\ndefine void @f(ptr %bar) {\n  call void @llvm.nvvm.tcgen05.commit.cg1(ptr %bar)\n  ret void\n}\n";
    let out = tcgen05_drivers::llvm::run::run_tool(
        &llvm.llc(),
        &[
            "-march=nvptx64".into(),
            "-mcpu=sm_100a".into(),
            "-mattr=+ptx86".into(),
            "-o".into(),
            "-".into(),
        ],
        ll,
        tcgen05_drivers::llvm::run::DEFAULT_TIMEOUT,
    )
    .unwrap();
    let tcgen05_drivers::llvm::run::ToolRun::Ok(ptx) = out else {
        panic!("{out:?}")
    };
    let line = ptx
        .lines()
        .find(|l| l.contains("tcgen05.commit"))
        .expect("a commit");
    assert!(
        line.contains(".shared::cluster.b64") && line.contains("[%rd"),
        "{line}"
    );
}

#[test]
#[cfg_attr(
    tcgen05_no_llvm,
    ignore = "no LLVM installed at build time (scripts/setup-llvm)"
)]
fn generated_programs_compile_assemble_and_validate() {
    let llvm = newest();
    let cfg = Config::default();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut bad = Vec::new();
    for level in [Level::O0, Level::O3] {
        let opts = Options::new(level, Frontend::Llvm);
        for seed in 0..12u64 {
            let p = valid_program(&cfg, seed);
            let r = pipeline::check(&llvm, &p, &opts);
            *counts.entry(r.verdict.name()).or_default() += 1;
            match &r.verdict {
                LlvmVerdict::Validated { .. } | LlvmVerdict::NotLowered(_) => {}
                v if is_generic_commit_finding(v) => {}
                v => bad.push(format!("seed {seed} {}: {v:?}\n{}", level.as_str(), r.ll)),
            }
        }
    }
    eprintln!("{counts:?}");
    assert!(bad.is_empty(), "{counts:?}\n{}", bad.join("\n\n"));
    assert!(
        counts.get("validated").copied().unwrap_or(0) > 0,
        "{counts:?}"
    );
}

/// The `@llvm.nvvm.tcgen05.*` callees of a module, with their counts (LLVM IR: `call ... @name(`;
/// MLIR: `llvm.call_intrinsic "name"`).
fn tcgen05_calls(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let t = line.trim_start();
        let name = if let Some(i) = t.find("call void @llvm.nvvm.tcgen05.").or_else(|| {
            t.find("@llvm.nvvm.tcgen05.")
                .filter(|_| t.contains(" = call ") || t.starts_with("call "))
        }) {
            let rest = &t[i..];
            let at = rest.find('@').expect("@");
            rest[at + 1..].split('(').next().unwrap_or("").to_string()
        } else if let Some(i) = t.find("llvm.call_intrinsic \"llvm.nvvm.tcgen05.") {
            let rest = &t[i + "llvm.call_intrinsic \"".len()..];
            rest.split('"').next().unwrap_or("").to_string()
        } else {
            continue;
        };
        *out.entry(name).or_default() += 1;
    }
    out
}

/// MLIR reach: for generated programs, every tcgen05 intrinsic call of the
/// imported module is raised to its `nvvm.tcgen05.*` op or stays a call with the reason
/// `mlir::not_raised` gives, and `mlir-translate --mlir-to-llvmir` turns the raised module
/// back into the same intrinsic calls as the lowered `.ll` (the ops' own translation agrees
/// with the lowering). Prints, per intrinsic, how often it was raised and why not.
#[test]
#[cfg_attr(
    tcgen05_no_llvm,
    ignore = "no LLVM installed at build time (scripts/setup-llvm)"
)]
fn mlir_reach_every_tcgen05_call_is_raised_to_an_nvvm_op_or_says_why() {
    use tcgen05_drivers::llvm::mlir::{not_raised, raise};
    use tcgen05_drivers::llvm::run::{DEFAULT_TIMEOUT, ToolRun, run_tool};
    let llvm = newest();
    let Some(mt) = llvm.mlir_translate.clone() else {
        panic!(
            "LLVM {} has no mlir-translate: install mlir-22-tools",
            llvm.version
        )
    };
    let run = |args: &[&str], input: &str| -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match run_tool(&mt, &args, input, DEFAULT_TIMEOUT).expect("mlir-translate runs") {
            ToolRun::Ok(s) => s,
            other => panic!("mlir-translate {args:?}: {other:?}\n{input}"),
        }
    };
    let cfg = Config::default();
    // intrinsic -> (calls raised, calls left, reason)
    let mut seen: BTreeMap<String, (usize, usize, String)> = BTreeMap::new();
    let mut programs = 0;
    for seed in 0..60u64 {
        let p = valid_program(&cfg, seed);
        let Ok(ll) = lower::lower(&p) else { continue };
        programs += 1;
        let imported = run(&["--import-llvm", "-"], &ll);
        let before = tcgen05_calls(&imported);
        let (raised, _) = raise(&imported);
        let left = tcgen05_calls(&raised);
        for (name, n) in &before {
            let e = seen.entry(name.clone()).or_default();
            let l = left.get(name).copied().unwrap_or(0);
            e.0 += n - l;
            e.1 += l;
            if l > 0 {
                e.2 = not_raised(name).unwrap_or("").to_string();
                assert!(
                    !e.2.is_empty(),
                    "seed {seed}: {name} stayed a call without a reason\n{raised}"
                );
            }
        }
        let back = run(&["--mlir-to-llvmir", "-"], &raised);
        assert_eq!(
            tcgen05_calls(&back),
            tcgen05_calls(&ll),
            "seed {seed}: the raised module translates to other intrinsic calls\n{raised}"
        );
    }
    let mut report = String::new();
    for (name, (r, l, why)) in &seen {
        report.push_str(&format!(
            "{name}: raised {r}, left {l}{}{why}\n",
            if why.is_empty() { "" } else { ": " }
        ));
    }
    eprintln!("{programs} programs\n{report}");
    for family in ["tcgen05.ld.", "tcgen05.st.", "tcgen05.cp.", "tcgen05.mma."] {
        assert!(
            seen.iter()
                .any(|(k, (r, _, _))| k.contains(family) && *r > 0),
            "no {family} call was raised\n{report}"
        );
    }
}

#[test]
#[cfg_attr(
    tcgen05_no_llvm,
    ignore = "no LLVM installed at build time (scripts/setup-llvm)"
)]
fn the_ordered_program_validates_through_llvm_and_mlir() {
    let llvm = newest();
    for front in [Frontend::Llvm, Frontend::Mlir] {
        for level in [Level::O0, Level::O3] {
            let r = pipeline::check(&llvm, &ordered(), &Options::new(level, front));
            assert!(
                matches!(r.verdict, LlvmVerdict::Validated { .. }),
                "{front:?} {level:?}: {:?}\n{}\n{}",
                r.verdict,
                r.ll,
                r.ptx.unwrap_or_default()
            );
            assert!(r.commands.iter().any(|c| c.contains("llc")));
        }
    }
}

#[test]
fn a_missing_llvm_is_a_clear_verdict_not_a_panic() {
    let fake = LlvmInstall {
        bin: "/nonexistent/llvm/bin".into(),
        version: tcgen05_drivers::ptxas::ToolVersion::parse("22.1.0").unwrap(),
        mlir_translate: None,
    };
    let r = pipeline::check(&fake, &ordered(), &Options::new(Level::O0, Frontend::Llvm));
    match &r.verdict {
        LlvmVerdict::ToolFailed { detail, .. } => {
            assert!(detail.contains("could not run"), "{detail}")
        }
        v => panic!("{v:?}"),
    }
    let r = pipeline::check(&fake, &ordered(), &Options::new(Level::O0, Frontend::Mlir));
    assert!(
        matches!(&r.verdict, LlvmVerdict::ToolFailed { detail, .. } if detail.contains("could not run mlir-translate")),
        "{:?}",
        r.verdict
    );
    // The lowering itself never needs the tools.
    assert!(
        lower::lower(&ordered())
            .unwrap()
            .contains("llvm.nvvm.tcgen05.mma.shared")
    );
}

#[test]
fn only_the_shared_memory_a_descriptor_reads_is_compared() {
    use tcgen05_drivers::llvm::interp::symbol_address;
    use tcgen05_drivers::llvm::validate::observed_shared;
    // ordered(): one 4096-byte region, read by the mma's A and B descriptors.
    let p = ordered();
    let base = symbol_address("tc_data0");
    assert_eq!(observed_shared(&p), vec![base..base + 4096]);
    // Without the mma, nothing reads it: a fill of it would be dead.
    let mut q = samples::single_warp_roundtrip();
    q.smem.regions = vec![1024];
    q.warps[0].insert(
        0,
        Stmt::Fill {
            region: 0,
            seed: 7,
            elem: FillElem::Word,
        },
    );
    assert!(observed_shared(&q).is_empty());
    // The printer's PTX minus the fill's store still validates; with the region observed
    // (ordered() plus the same fill), dropping the store is reported.
    let drop_fill = |p: &Program| {
        ptx::emit(p)
            .lines()
            .filter(|l| !l.contains("st.shared.u32"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(reported(&q, &drop_fill(&q)).is_empty());
    let mut r = ordered();
    r.warps[0].insert(
        0,
        Stmt::Fill {
            region: 0,
            seed: 7,
            elem: FillElem::Word,
        },
    );
    let m = reported(&r, &drop_fill(&r));
    assert!(m.iter().any(|m| m.contains("st.shared")), "{m:#?}");
}

#[test]
#[cfg_attr(
    tcgen05_no_llvm,
    ignore = "no LLVM installed at build time (scripts/setup-llvm)"
)]
fn the_registry_lists_builds_and_expands_the_llvm_targets() {
    use tcgen05_drivers::target::{self, Availability, TargetError};
    let major = newest().version.major;
    let infos = target::available_targets();
    for name in [format!("llvm@{major}"), format!("mlir@{major}")] {
        let line = infos.iter().find(|i| i.name == name).expect(&name);
        assert_eq!(line.availability, Availability::Available, "{line:?}");
        assert_eq!(target::resolve(&name).unwrap().name(), name);
    }
    assert_eq!(
        target::resolve(&format!("llvm@{major}:O0")).unwrap().name(),
        format!("llvm@{major}:O0")
    );
    let expanded = target::expand_list(vec!["llvm".into(), "mlir".into()]);
    assert!(expanded.contains(&format!("llvm@{major}")), "{expanded:?}");
    assert!(expanded.contains(&format!("mlir@{major}")), "{expanded:?}");
    match target::resolve("llvm@9") {
        Err(TargetError::Unavailable { reason, .. }) => {
            assert!(reason.0.contains(&format!("llvm@{major}")), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        target::resolve("llvm@22:O7"),
        Err(TargetError::Unavailable { .. })
    ));
}

/// A stand-in install whose `opt` copies its input and whose `llc` is `llc_body` (a shell
/// script body).
#[cfg(unix)]
fn fake_install(dir: &std::path::Path, llc_body: &str) -> LlvmInstall {
    use std::os::unix::fs::PermissionsExt as _;
    for (tool, body) in [("opt", "cat"), ("llc", llc_body)] {
        let p = dir.join(tool);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    LlvmInstall {
        bin: dir.to_path_buf(),
        version: tcgen05_drivers::ptxas::ToolVersion::parse("22.1.0").unwrap(),
        mlir_translate: None,
    }
}

#[cfg(unix)]
#[test]
fn a_hung_crashing_or_garbage_printing_llc_is_a_clear_verdict() {
    let d = tempfile::tempdir().unwrap();
    let mut opts = Options::new(Level::O0, Frontend::Llvm);
    opts.ptxas = None;
    opts.timeout = std::time::Duration::from_millis(300);
    let hung = fake_install(d.path(), "sleep 5");
    let r = pipeline::check(&hung, &ordered(), &opts);
    assert!(
        matches!(
            r.verdict,
            LlvmVerdict::ToolTimedOut {
                stage: pipeline::Stage::Llc,
                ..
            }
        ),
        "{:?}",
        r.verdict
    );
    let crash = fake_install(
        d.path(),
        "echo 'LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.x' >&2; echo 'Stack dump:' >&2; kill -ABRT $$",
    );
    let r = pipeline::check(&crash, &ordered(), &opts);
    match &r.verdict {
        LlvmVerdict::ToolFailed { kind, detail, .. } => {
            assert_eq!(*kind, tcgen05_drivers::llvm::run::FailureKind::CannotSelect);
            assert!(detail.contains("Cannot select"), "{detail}");
        }
        v => panic!("{v:?}"),
    }
    let garbage = fake_install(d.path(), "cat >/dev/null; echo 'this is not PTX {'");
    let r = pipeline::check(&garbage, &ordered(), &opts);
    assert!(
        matches!(&r.verdict, LlvmVerdict::NotValidated(w) if w.contains("parse")),
        "{:?}",
        r.verdict
    );
}

/// The produced PTX's behaviour: the printer's own PTX lifts, and its run on
/// the simulator is one the oracle allows for the source.
#[test]
fn the_lifted_printer_ptx_runs_within_what_the_oracle_allows() {
    use tcgen05_drivers::llvm::behaviour::{Subject, check, printer_lifter};
    let p = samples::single_warp_roundtrip();
    let b = check(&p, &ptx::emit(&p), printer_lifter, 0);
    assert_eq!(b.subject, Subject::Lifted, "{}", b.summary());
    assert_eq!(
        b.verdict,
        tcgen05_drivers::diff::Verdict::Agree,
        "{}",
        b.summary()
    );
    assert!(!b.is_finding());
}

/// A lifter standing in for a compilation that changed what a st stores: the lifted program
/// stores other values, so the ld's record is outside what the oracle allows for the source
/// (the st's values, `values::st_value` of the source's seed), and that is a finding.
fn lift_with_other_st_values(source: &Program, ptx: &str) -> Result<Program, NotLifted> {
    let mut p = tcgen05_drivers::llvm::behaviour::printer_lifter(source, ptx)?;
    for s in &mut p.warps[0] {
        if let Stmt::Tc(Op::St { seed, .. }) = s {
            *seed ^= 0x5A5A;
        }
    }
    Ok(p)
}

#[test]
fn a_lifted_program_that_stores_other_values_is_a_finding() {
    use tcgen05_drivers::llvm::behaviour::{Subject, check};
    let p = samples::single_warp_roundtrip();
    let b = check(&p, &ptx::emit(&p), lift_with_other_st_values, 0);
    assert_eq!(b.subject, Subject::Lifted);
    match &b.verdict {
        tcgen05_drivers::diff::Verdict::Discrepancy(d) => {
            assert_eq!(
                d.kind,
                tcgen05_drivers::diff::DiscrepancyKind::ValueOutsideAllowed,
                "{d:?}"
            );
        }
        v => panic!("expected a discrepancy, got {v:?}"),
    }
    assert!(b.is_finding(), "{}", b.summary());
    assert!(b.summary().contains("outside what the oracle allows"));
}

/// LLVM's PTX of the one-warp round trip (alloc, st, ld, dealloc), validated, at `level`.
fn llvms_roundtrip_ptx(level: Level, fe: Frontend) -> (Program, String) {
    let llvm = newest();
    let p = samples::single_warp_roundtrip();
    let mut opts = Options::new(level, fe);
    opts.ptxas = None;
    let r = pipeline::check(&llvm, &p, &opts);
    assert!(
        matches!(r.verdict, LlvmVerdict::Validated { .. }),
        "{:?}",
        r.verdict
    );
    let ptx = r.ptx.expect("llc produced PTX");
    (p, ptx)
}

/// LLVM's own PTX (`-O0`, `-O3`, and through MLIR) is read by the general lifter and its run
/// on the simulator is one the oracle allows for the source.
#[test]
#[cfg_attr(
    tcgen05_no_llvm,
    ignore = "no LLVM installed at build time (scripts/setup-llvm)"
)]
fn llvms_ptx_lifts_and_runs_within_what_the_oracle_allows() {
    use tcgen05_drivers::llvm::behaviour::Subject;
    for (level, fe) in [
        (Level::O0, Frontend::Llvm),
        (Level::O3, Frontend::Llvm),
        (Level::O3, Frontend::Mlir),
    ] {
        let llvm = newest();
        let p = samples::single_warp_roundtrip();
        let mut opts = Options::new(level, fe);
        opts.ptxas = None;
        let r = pipeline::check(&llvm, &p, &opts);
        let b = r.behaviour.expect("a validated case is run");
        assert_eq!(
            b.subject,
            Subject::Lifted,
            "{fe:?} {level:?}: {}",
            b.summary()
        );
        assert_eq!(
            b.verdict,
            tcgen05_drivers::diff::Verdict::Agree,
            "{fe:?} {level:?}: {}",
            b.summary()
        );
    }
}

/// Hand-made wrong compilations of LLVM's PTX that still lift: the st's value changed (the
/// constant added to the lane number, `values::st_value`) and the st dropped. Each run is
/// outside what the oracle allows for the source: a `disallowed` finding.
#[test]
#[cfg_attr(
    tcgen05_no_llvm,
    ignore = "no LLVM installed at build time (scripts/setup-llvm)"
)]
fn a_wrong_st_in_llvms_ptx_lifts_and_is_disallowed() {
    use tcgen05_drivers::llvm::behaviour::{Subject, check, lift_produced};
    let (p, ptx) = llvms_roundtrip_ptx(Level::O3, Frontend::Llvm);
    let st = ptx
        .lines()
        .find(|l| l.trim_start().starts_with("tcgen05.st"))
        .expect("a tcgen05.st");
    // The instruction that defines the st's first register ends in an immediate (the
    // constant added to `lane * mul`); one more is another value.
    let reg = st
        .split_once('{')
        .and_then(|(_, r)| r.split([',', '}']).next())
        .expect("a register vector");
    let def = ptx
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(&format!("{reg},")))
        .unwrap_or_else(|| panic!("no definition of {reg}:\n{ptx}"));
    let (head, add) = def.rsplit_once(", ").expect("operands");
    let add: i64 = add
        .trim_end_matches(';')
        .parse()
        .unwrap_or_else(|_| panic!("{def}: not an immediate"));
    let changed = ptx.replacen(def, &format!("{head}, {};", add + 1), 1);
    let dropped = ptx.replacen(st, "", 1);
    for (what, wrong) in [("changed value", changed), ("dropped st", dropped)] {
        assert_ne!(wrong, ptx);
        let b = check(&p, &wrong, lift_produced, 0);
        assert_eq!(b.subject, Subject::Lifted, "{what}: {}", b.summary());
        assert!(
            matches!(b.verdict, tcgen05_drivers::diff::Verdict::Discrepancy(_)),
            "{what}: {}",
            b.summary()
        );
        assert!(b.is_finding(), "{what}: {}", b.summary());
    }
}

/// Lift rate of LLVM's PTX: generated valid programs through `llvm@`
/// (`-O0`, `-O3`) and `mlir@` (`-O3`); prints, per level, how many validated modules the
/// general lifter reads and the reasons of the others, by count (docs/llvm.md). `N` programs
/// per level from `TCGEN05_LIFT_SURVEY` (default 200).
#[test]
#[ignore = "a measurement (minutes): cargo test -p tcgen05-drivers --test llvm lift_survey -- --ignored --nocapture"]
fn lift_survey() {
    use tcgen05_drivers::llvm::behaviour::Subject;
    let llvm = newest();
    let n: u64 = std::env::var("TCGEN05_LIFT_SURVEY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let cfg = Config::default();
    for (level, fe) in [
        (Level::O0, Frontend::Llvm),
        (Level::O3, Frontend::Llvm),
        (Level::O3, Frontend::Mlir),
    ] {
        let mut opts = Options::new(level, fe);
        opts.ptxas = None;
        let mut verdicts: BTreeMap<String, usize> = BTreeMap::new();
        let mut judged: BTreeMap<String, usize> = BTreeMap::new();
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let (mut lifted, mut findings) = (0, Vec::new());
        for seed in 0..n {
            let p = valid_program(&cfg, seed);
            let r = pipeline::check(&llvm, &p, &opts);
            *verdicts.entry(r.verdict.name()).or_default() += 1;
            let Some(b) = r.behaviour else { continue };
            match &b.subject {
                Subject::Lifted => {
                    lifted += 1;
                    let v = match &b.verdict {
                        tcgen05_drivers::diff::Verdict::Agree => "allowed".to_string(),
                        tcgen05_drivers::diff::Verdict::Skip(_) => "not compared".to_string(),
                        tcgen05_drivers::diff::Verdict::Discrepancy(d) => d.kind.as_str().into(),
                    };
                    *judged.entry(v).or_default() += 1;
                }
                Subject::Source { not_lifted } => {
                    *reasons.entry(reason_kind(not_lifted)).or_default() += 1;
                    if let (Ok(dir), Some(ptx)) = (std::env::var("TCGEN05_LIFT_DUMP"), &r.ptx) {
                        let f = format!("{dir}/{fe:?}-{}-{seed}.ptx", level.as_str());
                        std::fs::write(&f, format!("// {not_lifted}\n{ptx}")).expect("dump");
                    }
                }
            }
            if b.is_finding() {
                findings.push(format!("seed {seed}: {}", b.summary()));
            }
        }
        eprintln!(
            "{fe:?} {}: {n} programs {verdicts:?}; lifted {lifted} {judged:?}; not lifted:",
            level.as_str()
        );
        for (k, c) in &reasons {
            eprintln!("  {c:4} {k}");
        }
        for f in &findings {
            eprintln!("  finding {f}");
        }
    }
}

/// A lifter reason without its line, column and numbers, for counting.
fn reason_kind(why: &str) -> String {
    let s = why.split_once(": `").map_or(why, |(_, r)| r);
    s.chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect()
}

/// A source that fills its data region before the mma reads it: LLVM's per-lane `st.shared`
/// fill is not lifted, so the fill is carried into the lifted program (whose mma LLVM prints
/// with the default `.collector::a::discard`), and the lifted run gets the verdict the source's
/// own run gets (this program's mma reads past its region, so the simulator declines both).
#[test]
#[cfg_attr(
    tcgen05_no_llvm,
    ignore = "no LLVM installed at build time (scripts/setup-llvm)"
)]
fn a_filled_region_is_carried_into_the_lifted_program() {
    use tcgen05_drivers::llvm::behaviour::Subject;
    let mut p = ordered();
    p.warps[0].insert(
        0,
        Stmt::Fill {
            region: 0,
            seed: 7,
            elem: FillElem::F16Small,
        },
    );
    let llvm = newest();
    let mut opts = Options::new(Level::O3, Frontend::Llvm);
    opts.ptxas = None;
    let r = pipeline::check(&llvm, &p, &opts);
    assert!(
        matches!(r.verdict, LlvmVerdict::Validated { .. }),
        "{:?}",
        r.verdict
    );
    let b = r.behaviour.expect("a validated case is run");
    assert_eq!(b.subject, Subject::Lifted, "{}", b.summary());
    let unliftable = |_: &Program, _: &str| -> Result<Program, NotLifted> {
        Err(NotLifted::Unreadable("off".into()))
    };
    let own = tcgen05_drivers::llvm::behaviour::check(&p, "", unliftable, 0);
    assert_eq!(b.verdict, own.verdict, "{}", b.summary());
    assert!(!b.is_finding(), "{}", b.summary());
}
