//! The ptxas targets against the real binaries installed by `scripts/setup-ptxas` (issue 6).
//!
//! Without any ptxas installed every test returns early after saying so (there is no run-time
//! `#[ignore]` in stable Rust); `tcgen05-fuzz targets` says why none was found.

use tcgen05_drivers::ptxas::{
    self, CompileOptions, CompileVerdict, PtxasInstall, batch, differential, guardrail, sass,
};
use tcgen05_ir::form::{CommitForm, MmaForm};
use tcgen05_ir::*;

fn installs() -> Vec<PtxasInstall> {
    let v = ptxas::installed();
    if v.is_empty() {
        eprintln!("SKIPPED: no ptxas installed (run scripts/setup-ptxas)");
    }
    v
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
    let desc = SmemDesc {
        region: 0,
        offset: 0,
        lbo_enc: 8,
        sbo_enc: 64,
        fixed: 1,
        base_offset: 0,
        lbo_abs: false,
        swizzle: 0,
        reserved: 0,
    };
    let mma = Mma {
        form: MmaForm {
            ws: false,
            sp: false,
            cta_group: cg,
            kind: MmaKind::F16,
            block_scale: false,
            scale_vec: None,
            ashift: false,
            collector: None,
        },
        d: TmemRef::slot(0, 0, 0),
        a: MmaA::Desc(desc),
        b: desc,
        sp_meta: None,
        // f16 A/B, f32 D, M=128, N=128 (reference §2.8 layout (a)).
        idesc: (1 << 4) | ((128 >> 3) << 17) | ((128 >> 4) << 24),
        scale_a: None,
        scale_b: None,
        disable_output_lane: None,
        enable_input_d: false,
        scale_input_d: None,
        zero_col_mask: None,
    };
    let commit = Op::Commit {
        form: CommitForm {
            cta_group: cg,
            arrive_one: true,
            shared_cluster: true,
            multicast: false,
            ty: Ty::B64,
        },
        mbar: 0,
        addr: MbarAddr::Shared,
        cta_mask: None,
    };
    let mut launch = samples::launch(1);
    if cg == CtaGroup::Two {
        launch.cluster_size = 2;
        launch.declare_cluster = true;
    }
    Program {
        launch,
        smem: Smem {
            slots: 1,
            mbarriers: 1,
            regions: vec![4096],
        },
        warps: vec![vec![
            samples::alloc(cg, 0, 128),
            Stmt::If {
                cond: Cond::ElectOne,
                then: vec![Stmt::Tc(Op::Mma(Box::new(mma))), Stmt::Tc(commit)],
                els: vec![],
            },
            samples::dealloc(cg, 0, 128),
            samples::relinquish(cg),
        ]],
        funcs: vec![],
    }
}

#[test]
fn every_installed_version_accepts_the_isa_example_order() {
    for i in installs() {
        let v = ptxas::compile_one(&i, &ptx::emit(&good()), &CompileOptions::default()).unwrap();
        assert_eq!(v, CompileVerdict::Accepted, "{}: {}", i.name(), v.summary());
    }
}

#[test]
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
fn batched_verdicts_equal_one_process_per_case() {
    let Some(i) = installs().pop() else { return };
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
fn a_header_the_tool_does_not_know_rejects_the_whole_batch_and_is_skipped() {
    let Some(oldest) = installs().into_iter().next() else {
        return;
    };
    // PTX 9.5 postdates every installed ptxas but the newest (PTXAS-PROBES.md §1).
    if oldest.version.major >= 13 {
        return;
    }
    let mut p = good();
    p.launch.ptx_version = PtxVersion::new(9, 5);
    let modules = vec![ptx::emit(&p), ptx::emit(&p)];
    let (v, _) = ptxas::compile_batched(&oldest, &modules, 2, &CompileOptions::default()).unwrap();
    for x in &v {
        assert!(differential::is_too_old(x), "{}", x.summary());
        assert!(matches!(
            differential::judge(x, &[]),
            differential::Judgement::Skip(_)
        ));
    }
}

#[test]
fn the_target_trait_reports_compile_outcomes() {
    let Some(i) = installs().pop() else { return };
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
fn a_two_cta_mma_compiles_to_the_two_cta_sass() {
    let Some(i) = installs().pop() else { return };
    if !sass::available() {
        eprintln!("SKIPPED: no nvdisasm/cuobjdump");
        return;
    }
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
