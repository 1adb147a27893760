//! The ptxas targets against the real binaries installed by `scripts/setup-ptxas` (docs/ptxas.md).
//!
//! Without any ptxas at build time, the tests that need one are ignored (`cfg(tcgen05_no_ptxas)`,
//! set by `drivers/build.rs`), so `cargo test` lists them as ignored instead of passing them
//! silently; `tcgen05-fuzz targets` says why none was found. CI installs ptxas first and never
//! ignores them.

use tcgen05_drivers::ptxas::{
    self, CompileOptions, CompileVerdict, PtxasInstall, batch, differential, guardrail, sass,
};
use tcgen05_ir::*;
use tcgen05_oracle::probes;

/// Every installed ptxas; at least one, since the build found one.
fn installs() -> Vec<PtxasInstall> {
    let v = ptxas::installed();
    assert!(
        !v.is_empty(),
        "no ptxas found, though the build found one: run scripts/setup-ptxas, or `touch \
         drivers/build.rs` so the tests that need ptxas are ignored"
    );
    v
}

/// The newest installed ptxas.
fn newest() -> PtxasInstall {
    installs().pop().expect("installs() is never empty")
}

fn case(p: Program) -> Case {
    Case {
        program: p,
        intent: Intent::Unknown,
        provenance: Provenance::default(),
    }
}

/// The ISA's own example order (reference §3.1): alloc, use, dealloc, relinquish.
fn good() -> Program {
    samples::single_warp_roundtrip()
}

/// `good()` with nCols = `n` on alloc and dealloc.
fn with_ncols(n: u32) -> Program {
    let mut p = good();
    for s in &mut p.warps[0] {
        match s {
            Stmt::Tc(Op::Alloc { ncols, .. }) | Stmt::Tc(Op::Dealloc { ncols, .. }) => {
                ncols.value = n
            }
            _ => {}
        }
    }
    p
}

/// A CTA pair doing alloc, a `cta_group::2` f16 MMA, commit, dealloc, relinquish.
fn pair_mma(cg: CtaGroup) -> Program {
    // f16 A/B, f32 D, M=128, N=128 (reference §2.8 layout (a)); A and B both in region 0.
    let mma = Mma {
        b: probes::desc(0),
        idesc: probes::idesc(MmaKind::F16, 128, 128),
        ..probes::mma(MmaKind::F16, false)
    };
    let mut launch = samples::launch(1);
    if cg == CtaGroup::Two {
        launch.cluster_size = 2;
        launch.declare_cluster = true;
    }
    let smem = Smem {
        slots: 1,
        mbarriers: 1,
        regions: vec![4096],
    };
    let issue = samples::elect(vec![Stmt::Tc(Op::Mma(Box::new(mma))), probes::commit()]);
    let mut p = samples::one_warp(launch, smem, 128, vec![issue]);
    probes::set_cta_group(&mut p, cg);
    p
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn every_installed_version_accepts_the_isa_example_order() {
    for i in installs() {
        let v = ptxas::compile_one(&i, &ptx::emit(&good()), &CompileOptions::default()).unwrap();
        assert_eq!(v, CompileVerdict::Accepted, "{}: {}", i.name(), v.summary());
    }
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn a_non_power_of_two_ncols_is_rejected_at_the_alloc() {
    // ALLOC-NCOLS-POW2 (§9.7.16.7.1): 48 columns is not a power of two.
    for i in installs() {
        let module = ptx::emit(&with_ncols(48));
        let v = ptxas::compile_one(&i, &module, &CompileOptions::default()).unwrap();
        assert!(v.rejected(), "{}: {}", i.name(), v.summary());
        let e = v.first_error().unwrap();
        let at = e.instruction.as_ref().expect("mapped to a line");
        assert!(
            matches!(at.form, Some(Form::Alloc(_)) | Some(Form::Dealloc(_))),
            "{}: {e}",
            i.name()
        );
        // The line the diagnostic names holds that instruction in the case's own module.
        let line = module
            .lines()
            .nth(e.diag.line.unwrap() as usize - 1)
            .unwrap();
        assert_eq!(line.trim(), at.text);
    }
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn batched_verdicts_equal_one_process_per_case() {
    let i = newest();
    // Good, bad (ALLOC-NCOLS-POW2), good, cta_group::1 with cta_group::2 in one kernel
    // (GEN-CTAGROUP-UNIFORM, which ptxas reports without a line), good.
    let mut mixed = pair_mma(CtaGroup::One);
    mixed.warps[0][2] = samples::dealloc(CtaGroup::Two, 0, 128);
    let progs = [
        good(),
        with_ncols(48),
        pair_mma(CtaGroup::Two),
        mixed,
        with_ncols(64),
        with_ncols(96),
    ];
    let modules: Vec<String> = progs.iter().map(ptx::emit).collect();
    let one: Vec<CompileVerdict> = modules
        .iter()
        .map(|m| ptxas::compile_one(&i, m, &CompileOptions::default()).unwrap())
        .collect();
    assert!(one[0].accepted() && one[2].accepted() && one[4].accepted());
    assert!(one[1].rejected() && one[3].rejected() && one[5].rejected());
    for size in [2, 3, 64] {
        let (batched, stats) =
            ptxas::compile_batched(&i, &modules, size, &CompileOptions::default()).unwrap();
        for (k, (a, b)) in one.iter().zip(&batched).enumerate() {
            assert_eq!(
                a.accepted(),
                b.accepted(),
                "case {k}, batch {size}: {} vs {}",
                a.summary(),
                b.summary()
            );
            let op = |v: &CompileVerdict| {
                v.first_error()
                    .and_then(|d| d.instruction.clone())
                    .map(|x| x.opcode)
            };
            assert_eq!(op(a), op(b), "case {k}, batch {size}");
        }
        assert!(stats.processes < modules.len() * 2, "{stats:?}");
    }
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn a_header_the_tool_does_not_know_rejects_the_whole_batch_and_is_skipped() {
    // PTX 9.9 postdates every pinned ptxas (13.5 knows up to 9.5: "Unsupported .version 9.9;
    // current version is '9.5'"), so every install finds the header too new.
    let mut p = good();
    p.launch.ptx_version = PtxVersion::new(9, 9);
    let modules = vec![ptx::emit(&p), ptx::emit(&p)];
    for install in installs() {
        let (v, _) =
            ptxas::compile_batched(&install, &modules, 2, &CompileOptions::default()).unwrap();
        assert_eq!(v.len(), modules.len());
        for x in &v {
            assert!(
                differential::is_too_old(x),
                "{}: {}",
                install.name(),
                x.summary()
            );
            // Through the Target trait the tool cannot judge the case: not a rejection.
            assert_eq!(ptxas::outcome_of(x).name(), "not-run", "{}", x.summary());
        }
    }
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn the_target_trait_reports_compile_outcomes() {
    let i = newest();
    let mut t = ptxas::build(&i.name()).unwrap().unwrap();
    assert_eq!(t.name(), i.name());
    let out = t.run_batch(&[case(good()), case(with_ncols(48))]);
    assert_eq!(out[0].name(), "accepted");
    assert_eq!(out[1].name(), "rejected");
    assert!(ptxas::build("ptxas@1.0").unwrap().is_err());
    assert!(ptxas::build("sim").is_none());
    assert_eq!(ptxas::expand("ptxas").unwrap().len(), installs().len());
}

#[test]
#[cfg_attr(
    any(tcgen05_no_ptxas, tcgen05_no_disassembler),
    ignore = "no ptxas, or no nvdisasm/cuobjdump, at build time (scripts/setup-ptxas)"
)]
fn a_two_cta_mma_compiles_to_the_two_cta_sass() {
    let i = newest();
    assert!(
        sass::available(),
        "no nvdisasm or cuobjdump, though the build found one"
    );
    for cg in [CtaGroup::One, CtaGroup::Two] {
        let module = ptx::emit(&pair_mma(cg));
        match sass::check_module(&i, &module).unwrap() {
            sass::SassCheck::Checked(m) => assert!(m.is_empty(), "{cg:?}: {m:?}"),
            sass::SassCheck::NotBuilt => panic!("{cg:?} did not compile"),
        }
    }
    // The same SASS judged against the other cta_group is a mismatch (MMA-PAIR, §9.7.16.10.9.1).
    let module = ptx::emit(&pair_mma(CtaGroup::Two));
    let guardrail::Cubin::Built { bytes, .. } =
        guardrail::compile_cubin(&i, &module, None, false).unwrap()
    else {
        panic!("not built")
    };
    let ops = sass::disassemble(&bytes).unwrap();
    let as_one = sass::forms_in(&ptx::emit(&pair_mma(CtaGroup::One)));
    assert!(!sass::check_opcodes(&as_one, &ops).is_empty());
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn the_guardrail_mode_compiles_the_access_checks_in() {
    for i in installs() {
        assert!(guardrail::supported(&i), "{}", i.name());
        let module = ptx::emit(&good());
        let built = |g| match guardrail::compile_cubin(&i, &module, None, g).unwrap() {
            guardrail::Cubin::Built {
                bytes, guardrail, ..
            } => (bytes, guardrail),
            guardrail::Cubin::NotBuilt(v) => panic!("{}: {}", i.name(), v.summary()),
        };
        let has = |b: &[u8], s: &str| b.windows(s.len()).any(|w| w == s.as_bytes());
        let (plain, g0) = built(false);
        let (checked, g1) = built(true);
        assert!(!g0 && g1);
        // ptxas --help: "Enable tensor memory access checks for tcgen05 operations".
        assert!(
            has(&checked, "guardrail_trap_unallocated_columns_access"),
            "{}",
            i.name()
        );
        assert!(
            !has(&plain, "guardrail_trap_unallocated_columns_access"),
            "{}",
            i.name()
        );
    }
}

#[test]
fn merged_modules_keep_case_symbols_apart() {
    let a = ptx::emit(&pair_mma(CtaGroup::One));
    let b = ptx::emit(&good());
    let m = batch::merge(&[&a, &b]).unwrap();
    assert_eq!(m.text.matches(".entry c0_tc_kernel").count(), 1);
    assert_eq!(m.text.matches(".entry c1_tc_kernel").count(), 1);
    assert!(!m.text.contains(" tc_slot"));
    assert_eq!(m.text.matches(".version").count(), 1);
}

/// The probe module of `corpus/realworld/src/ptxas_probes.py` (its `TEMPLATE`): a fixed header,
/// a few set-up registers, and the probed line. The module-scope names are the printer's
/// (`tc_mbar`, `tc_slot`, `tc_kernel` for the template's `bar`, `slot`, `probe`), so that probes
/// can share a batch (`batch::merge` renames those); no recorded diagnostic names them.
fn probe_module(version: &str, target: &str, line: &str) -> String {
    let line = line
        .replace("[bar]", "[tc_mbar]")
        .replace("[slot]", "[tc_slot]");
    format!(
        ".version {version}\n.target {target}\n.address_size 64\n\n\
         .shared .align 8 .b64 tc_mbar;\n.shared .align 4 .b32 tc_slot;\n\n\
         .visible .entry tc_kernel()\n{{\n  .reg .pred %p<2>;\n  .reg .b16 %h<2>;\n  .reg .b32 %r<16>;\n\
         \x20 .reg .b64 %rd<4>;\n  .reg .f32 %f<4>;\n  mov.u32 %r1, tc_slot;\n  mov.u32 %r2, 64;\n\
         \x20 ld.shared.b32 %r3, [tc_slot];\n  mov.u64 %rd1, tc_mbar;\n  mov.b16 %h1, 3;\n  mov.u32 %r6, 3;\n\
         \x20 setp.ne.b32 %p1, %r2, 0;\n  {line}\n  ret;\n}}\n"
    )
}

/// One probe of `corpus/realworld/PTXAS-PROBES.txt`: ptxas label, module, recorded verdict
/// (`ok`, or ptxas's first error line without the file and line prefix).
fn probes() -> Vec<(String, String, String)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/realworld/PTXAS-PROBES.txt"
    );
    let text = std::fs::read_to_string(path).expect("corpus/realworld/PTXAS-PROBES.txt");
    let mut line = None;
    let mut out = Vec::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix('[') {
            line = rest.split_once("]  ").map(|(_, x)| x.to_string());
            continue;
        }
        // "  ptxas 12.8 .version 8.7 sm_100a  ok"
        let f: Vec<&str> = l.split_whitespace().collect();
        if let (Some(probe), ["ptxas", ver, ".version", v, target, ..]) = (&line, f.as_slice()) {
            let verdict = l
                .split_once(&format!(" {target} "))
                .map(|(_, x)| x.trim().to_string())
                .unwrap_or_default();
            out.push((ver.to_string(), probe_module(v, target, probe), verdict));
        }
    }
    out
}

/// A verdict as the campaign judges it: accepted or not, and every diagnostic (line, message).
fn verdict_key(v: &CompileVerdict) -> (bool, Vec<(Option<u32>, String)>) {
    // A diagnostic about ptxas's own added code (`<macro util> line 8: ...`, no module line)
    // is left out: a batch cannot tell which case it came from and attaches it to none, while
    // the verdict itself (accepted or not) is compared all the same.
    let mut d: Vec<(Option<u32>, String)> = v
        .diagnostics()
        .iter()
        .filter(|d| !(d.diag.line.is_none() && d.diag.message.starts_with('<')))
        .map(|d| (d.diag.line, d.diag.message.clone()))
        .collect();
    d.sort();
    (v.accepted(), d)
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn the_verdict_level_keeps_every_probe_verdict() {
    // CompileOptions::verdict() compiles at -O0. On every probe of the probe set, with every
    // installed version, it must give the verdict and diagnostics of ptxas's default level,
    // which must be the verdict the probe set recorded.
    let all = probes();
    assert!(all.len() > 500, "{} probes read", all.len());
    let mut compared = 0;
    for i in installs() {
        let mine: Vec<&(String, String, String)> = all
            .iter()
            .filter(|(ver, _, _)| *ver == i.version.label())
            .collect();
        if mine.is_empty() {
            continue;
        }
        let modules: Vec<String> = mine.iter().map(|(_, m, _)| m.clone()).collect();
        let (default, _) =
            ptxas::compile_batched(&i, &modules, 16, &CompileOptions::default()).unwrap();
        let (fast, _) =
            ptxas::compile_batched(&i, &modules, 16, &CompileOptions::verdict()).unwrap();
        for (k, ((_, module, recorded), (d, f))) in
            mine.iter().zip(default.iter().zip(&fast)).enumerate()
        {
            assert_eq!(
                d.accepted(),
                recorded == "ok",
                "{} probe {k}: recorded `{recorded}`, default level: {}\n{module}",
                i.name(),
                d.summary()
            );
            if let Some(e) = d.first_error() {
                assert!(
                    recorded.contains(&e.diag.message),
                    "{} probe {k}: recorded `{recorded}`, got `{}`",
                    i.name(),
                    e.diag.message
                );
            }
            assert_eq!(
                verdict_key(d),
                verdict_key(f),
                "{} probe {k}: -O0 changed the verdict\n{module}",
                i.name()
            );
            compared += 1;
        }
    }
    assert!(compared > 0, "no installed version is in the probe set");
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn the_verdict_level_keeps_the_verdicts_of_a_campaign_sample() {
    // 64 cases of the campaign's mix (valid programs with 0 to 2 mutations), one process per
    // case at the default level against batches of 16 at -O0: the campaign's fast path must
    // judge like the plainest use of ptxas.
    let mut rng = tcgen05_generators::field_mutate::Rng::new(0x0F_A57);
    let modules: Vec<String> = (0..64)
        .map(|_| ptx::emit(&tcgen05_generators::field_mutate::mutated_case(&mut rng).program))
        .collect();
    for i in installs() {
        let (fast, _) =
            ptxas::compile_batched(&i, &modules, 16, &CompileOptions::verdict()).unwrap();
        let mut rejected = 0;
        for (k, (m, f)) in modules.iter().zip(&fast).enumerate() {
            let d = ptxas::compile_one(&i, m, &CompileOptions::default()).unwrap();
            assert_eq!(
                verdict_key(&d),
                verdict_key(f),
                "{} case {k}: {} at -O3 one by one, {} at -O0 batched\n{m}",
                i.name(),
                d.summary(),
                f.summary()
            );
            rejected += usize::from(d.rejected());
        }
        // The sample has both verdicts, so the comparison can fail both ways.
        assert!(rejected > 0 && rejected < modules.len(), "{}", i.name());
    }
}
