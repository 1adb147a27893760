//! `check` rule by rule on small kernels written for the purpose: each rule is reported
//! where the spec says the kernel breaks it, and not where the kernel follows it.

use tcgen05_ir::RuleId;
use tcgen05_oracle::kernel::{FenceMode, Finding, Options, check_source};

/// A kernel of 4 warps (`.reqntid 128`) in which `%p1` is "warp 0" (`%tid.x < 32`), `%p4` is
/// "warp 1" (`%tid.x >> 5 == 1`), `%p2` is a warp-uniform condition from a parameter, and
/// `%r2` holds the TMEM address read back from the alloc slot.
fn kernel(extra_directives: &str, body: &str) -> String {
    format!(
        ".version 8.6\n.target sm_100a\n.address_size 64\n.shared .align 16 .b32 slot[1];\n.shared .align 8 .b64 mbar[1];\n\
         .visible .entry k(.param .u32 n)\n.reqntid 128, 1, 1\n{extra_directives}\n{{\n\
         .reg .b32 %r<40>;\n.reg .b64 %rd<8>;\n.reg .pred %p<20>;\n\
         mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\nshr.u32 %r4, %r1, 5;\nsetp.eq.u32 %p4, %r4, 1;\n\
         ld.param.u32 %r3, [n];\nsetp.eq.u32 %p2, %r3, 0;\n{body}\nret;\n}}\n"
    )
}

fn findings_with(src: &str, fences: FenceMode) -> Vec<Finding> {
    check_source(src, "t.ptx", &Options { fences })
        .unwrap()
        .into_iter()
        .flat_map(|k| k.findings)
        .collect()
}

fn rules(src: &str) -> Vec<RuleId> {
    findings_with(src, FenceMode::Auto)
        .into_iter()
        .map(|f| f.rule)
        .collect()
}

const ALLOC: &str = "@%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 64;\nbar.sync 0;\nld.shared.b32 %r2, [slot];\n";
const RELQ: &str = "@%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n";
const LD: &str = "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r10, %r11}, [%r2];\n";
const WAIT_LD: &str = "tcgen05.wait::ld.sync.aligned;\n";
const DEALLOC: &str = "bar.sync 0;\n@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 64;\n";

#[test]
fn the_canonical_protocol_is_clean() {
    let src = kernel("", &format!("{ALLOC}{RELQ}{LD}{WAIT_LD}{DEALLOC}"));
    assert_eq!(rules(&src), []);
}

#[test]
fn a_uniform_early_return_that_skips_the_dealloc_leaks_on_that_path() {
    // §9.7.16.1.2: everything allocated must be freed before the kernel exits.
    let body = format!("{ALLOC}{RELQ}@%p2 bra $L_out;\n{DEALLOC}$L_out:\n");
    let f = findings_with(&kernel("", &body), FenceMode::Auto);
    assert_eq!(
        f.iter().map(|f| f.rule).collect::<Vec<_>>(),
        [RuleId::AllocFreeBeforeExit]
    );
    assert_eq!(f[0].warps, ["w0"]);
    assert_eq!(f[0].path.last().map(String::as_str), Some("$L_out"));
    assert_eq!(f[0].section, "9.7.16.1.2, .7.1");
    // Without the early return, no leak.
    assert_eq!(rules(&kernel("", &format!("{ALLOC}{RELQ}{DEALLOC}"))), []);
}

#[test]
fn alloc_and_dealloc_under_the_same_uniform_predicate_do_not_leak() {
    // The path that allocates is the path that frees: `%p3` is not redefined in between.
    let body = "and.pred %p3, %p1, %p2;\n@%p3 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32;\n\
                bar.sync 0;\nld.shared.b32 %r2, [slot];\nbar.sync 0;\n@%p3 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n";
    assert_eq!(rules(&kernel("", body)), []);
}

#[test]
fn one_warp_allocating_and_another_freeing_is_not_flagged() {
    // OQ-35: whether another warp may free is open; the CTA's balance is what counts.
    let body = format!(
        "{ALLOC}bar.sync 0;\n@%p4 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 64;\n"
    );
    assert_eq!(rules(&kernel("", &body)), []);
}

#[test]
fn dealloc_without_alloc_and_alloc_after_relinquish() {
    assert_eq!(
        rules(&kernel(
            "",
            "mov.u32 %r2, 0;\n@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 64;\n"
        )),
        [RuleId::DeallocTaddrPrev]
    );
    let body = format!("{RELQ}{ALLOC}{DEALLOC}");
    assert_eq!(rules(&kernel("", &body)), [RuleId::AllocAfterRelinquish]);
}

#[test]
fn growing_allocation_sizes_are_flagged() {
    // §9.7.16.7.1: a later alloc must not request more columns; nCols here is a register.
    let body = "@%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32;\nld.shared.b32 %r2, [slot];\n\
                @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\nmov.u32 %r5, 64;\n\
                @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], %r5;\nld.shared.b32 %r2, [slot];\n\
                @%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 64;\n";
    assert_eq!(rules(&kernel("", body)), [RuleId::AllocNonincreasing]);
    let shrinking = body.replace("mov.u32 %r5, 64", "mov.u32 %r5, 32");
    assert_eq!(rules(&kernel("", &shrinking)), []);
}

#[test]
fn mixed_cta_groups_are_flagged_once() {
    let body = format!("{ALLOC}{DEALLOC}").replace("dealloc.cta_group::1", "dealloc.cta_group::2");
    let r = rules(&kernel(
        ".explicitcluster\n.reqnctapercluster 2, 1, 1",
        &body,
    ));
    assert!(r.contains(&RuleId::GenCtagroupUniform), "{r:?}");
}

#[test]
fn aligned_instructions_under_lane_divergent_control_are_flagged() {
    // `%laneid == 0` and `%tid.x == 0` differ between the lanes of a warp; `%tid.x < 32` does not.
    let body = format!(
        "{ALLOC}mov.u32 %r6, %laneid;\nsetp.eq.u32 %p5, %r6, 0;\n@%p5 tcgen05.ld.sync.aligned.32x32b.x2.b32 {{%r10, %r11}}, [%r2];\n{WAIT_LD}{DEALLOC}"
    );
    assert_eq!(rules(&kernel("", &body)), [RuleId::GenAlignedConvergent]);
    let body = format!(
        "{ALLOC}{LD}setp.ne.u32 %p6, %r1, 0;\n@%p6 bra $L_skip;\n{WAIT_LD}$L_skip:\n{WAIT_LD}{DEALLOC}"
    );
    assert_eq!(rules(&kernel("", &body)), [RuleId::WaitAlignedConvergent]);
    // Single-thread ops (mma, commit) under elect are how they are meant to be issued.
    let body = format!(
        "{ALLOC}mov.u32 %r7, 0;\nelect.sync %r8|%p7, -1;\n@%p7 tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r7, %p2;\n\
         mov.u32 %r9, mbar;\n@%p7 tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r9];\n{DEALLOC}"
    );
    assert_eq!(rules(&kernel("", &body)), []);
}

#[test]
fn unwaited_loads_and_stores_at_a_handoff() {
    // §9.7.16.6.4.5: dealloc while an ld may still read.
    assert_eq!(
        rules(&kernel("", &format!("{ALLOC}{LD}{DEALLOC}"))),
        [RuleId::McmLdWar]
    );
    // §9.7.16.6.4.4: an mbarrier arrive hands TMEM over while the ld is in flight.
    let body = format!(
        "{ALLOC}{LD}mov.u32 %r9, mbar;\nmbarrier.arrive.shared::cta.b64 %rd3, [%r9];\n{WAIT_LD}{DEALLOC}"
    );
    assert_eq!(rules(&kernel("", &body)), [RuleId::McmXthreadNonpipe]);
    // §9.7.16.6.4.2: an mma after a st with no wait::st; with the wait, clean.
    let st = "tcgen05.st.sync.aligned.32x32b.x2.b32 [%r2], {%r10, %r11};\n";
    let mma = "mov.u32 %r7, 0;\nelect.sync %r8|%p7, -1;\n@%p7 tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r7, %p2;\n";
    assert_eq!(
        rules(&kernel("", &format!("{ALLOC}{st}{mma}{DEALLOC}"))),
        [RuleId::McmStBeforeUse]
    );
    assert_eq!(
        rules(&kernel(
            "",
            &format!("{ALLOC}{st}tcgen05.wait::st.sync.aligned;\n{mma}{DEALLOC}")
        )),
        []
    );
    // Across a barrier the same unwaited st is a cross-thread handoff.
    assert_eq!(
        rules(&kernel(
            "",
            &format!("{ALLOC}{st}bar.sync 0;\n{mma}{DEALLOC}")
        )),
        [RuleId::McmXthreadNonpipe]
    );
}

#[test]
fn pairs_need_cluster_barriers_around_alloc_and_dealloc() {
    let cl = ".explicitcluster\n.reqnctapercluster 2, 1, 1";
    let sync = "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n";
    let alloc2 = "@%p1 tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [slot], 64;\nbar.sync 0;\nld.shared.b32 %r2, [slot];\n";
    let dealloc2 = "@%p1 tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r2, 64;\n";
    assert_eq!(
        rules(&kernel(
            cl,
            &format!("{sync}{alloc2}{LD}{WAIT_LD}{sync}{dealloc2}")
        )),
        []
    );
    // No barrier before the alloc (§9.7.16.7.1: make sure the peer CTA is launched).
    assert_eq!(
        rules(&kernel(
            cl,
            &format!("{alloc2}{LD}{WAIT_LD}{sync}{dealloc2}")
        )),
        [RuleId::GenPeerActive]
    );
    // A TMEM access after the last cluster barrier (the pair must synchronize its accesses).
    assert_eq!(
        rules(&kernel(
            cl,
            &format!("{sync}{alloc2}{sync}{LD}{WAIT_LD}{dealloc2}")
        )),
        [RuleId::DeallocPairSync]
    );
}

#[test]
fn fence_rules_apply_to_kernels_that_use_fences() {
    // Canonical pattern 4 (§9.7.16.6.4.4): st; wait::st; fence::before; sync | fence::after; ld.
    // After the alloc's barrier no fence is asked for: no async op precedes it (OQ-26).
    let st = "tcgen05.st.sync.aligned.32x32b.x2.b32 [%r2], {%r10, %r11};\ntcgen05.wait::st.sync.aligned;\n";
    let before = "tcgen05.fence::before_thread_sync;\n";
    let after = "tcgen05.fence::after_thread_sync;\n";
    let fenced = format!("{ALLOC}{st}{before}bar.sync 0;\n{after}{LD}{WAIT_LD}{before}{DEALLOC}");
    assert_eq!(rules(&kernel("", &fenced)), []);
    // Without the after-fence, the ld is not ordered after the barrier (FENCE-AFTER, §9.7.16.6.3).
    let missing = fenced.replace(after, "");
    let f = findings_with(&kernel("", &missing), FenceMode::Auto);
    assert_eq!(
        f.iter().map(|f| f.rule).collect::<Vec<_>>(),
        [RuleId::McmXthread]
    );
    assert!(f[0].opcode.starts_with("tcgen05.ld"), "{f:?}");
    // Without the before-fence, the barrier follows the st unfenced (FENCE-BEFORE).
    let f = findings_with(
        &kernel("", &fenced.replacen(before, "", 1)),
        FenceMode::Auto,
    );
    assert_eq!(
        f.iter().map(|f| f.rule).collect::<Vec<_>>(),
        [RuleId::McmXthread]
    );
    assert_eq!(f[0].opcode, "bar.sync");
    // A kernel without any tcgen05.fence is checked for fences only on request.
    let none = fenced.replace(after, "").replace(before, "");
    assert_eq!(rules(&kernel("", &none)), []);
    let forced = findings_with(&kernel("", &none), FenceMode::Always);
    assert!(
        !forced.is_empty() && forced.iter().all(|f| f.rule == RuleId::McmXthread),
        "{forced:?}"
    );
}

#[test]
fn loops_terminate_and_are_walked() {
    // A counted loop of ld + wait::ld; the dealloc after it is reached on every path.
    let body = format!(
        "{ALLOC}mov.u32 %r20, 0;\n$L_loop:\n{LD}{WAIT_LD}add.s32 %r20, %r20, 1;\nsetp.lt.u32 %p8, %r20, %r3;\n@%p8 bra $L_loop;\n{DEALLOC}"
    );
    assert_eq!(rules(&kernel("", &body)), []);
    // Without the wait, the loop's ld reaches the dealloc unwaited.
    assert_eq!(
        rules(&kernel("", &body.replace(WAIT_LD, ""))),
        [RuleId::McmLdWar]
    );
}

#[test]
fn bad_input_is_an_error_naming_the_place() {
    // Text that is not PTX: an unterminated vector operand.
    let e = check_source(
        ".version 8.6\n.entry k()\n{\ntcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, [%r2];\n}\n",
        "bad.ptx",
        &Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.line, 4);
    // An ill-formed tcgen05 instruction in readable PTX is a finding (§9.7.16.7.1 syntax line:
    // alloc's dst is `[dst]`), not unreadable input.
    let ks = check_source(
        ".version 8.6\n.target sm_100a\n.entry k()\n{\ntcgen05.alloc.cta_group::1.sync.aligned.b32 %r1, 32;\n}\n",
        "bad.ptx",
        &Options::default(),
    )
    .unwrap();
    let f = &ks[0].findings;
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].rule, f[0].line, f[0].col), (RuleId::GenSyntax, 5, 1));
}

#[test]
fn deleting_any_line_of_a_real_kernel_never_panics() {
    // Whatever the edit, check answers (findings or a parse error); it never panics.
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/realworld/nvcc_cccl_ptx_wrappers.ptx");
    let src = std::fs::read_to_string(p).unwrap();
    let lines: Vec<&str> = src.lines().collect();
    let mut parsed = 0;
    for i in 0..lines.len() {
        let mut v = lines.clone();
        v.remove(i);
        if check_source(
            &v.join("\n"),
            "v.ptx",
            &Options {
                fences: FenceMode::Always,
            },
        )
        .is_ok()
        {
            parsed += 1;
        }
    }
    assert!(parsed > lines.len() / 2, "{parsed} of {}", lines.len());
}

#[test]
fn aligned_instructions_after_some_lanes_exited_are_flagged() {
    // §9.7.16.7.1: UB if any thread of the warp has exited. Lanes 16..31 leave early.
    let body =
        format!("{ALLOC}mov.u32 %r6, %laneid;\nsetp.ge.u32 %p5, %r6, 16;\n@%p5 exit;\n{DEALLOC}");
    let r = rules(&kernel("", &body));
    assert!(r.contains(&RuleId::GenNoExitedThread), "{r:?}");
    // A warp-uniform early exit of warps 1..3 (which hold no TMEM) is fine.
    let body = format!(
        "{ALLOC}{RELQ}bar.sync 0;\n@!%p1 exit;\n@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 64;\n"
    );
    assert_eq!(rules(&kernel("", &body)), []);
}

#[test]
fn every_pair_operation_wants_the_peer_started() {
    // §9.7.16.5: for ::2 mma/cp/shift/commit the peer CTA "should" be active; the row
    // GEN-PEER-ACTIVE covers every ::2 operation, not only alloc.
    let cl = ".explicitcluster\n.reqnctapercluster 2, 1, 1";
    let sync = "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n";
    let mma = "mov.b64 %rd1, 0;\nsetp.ne.u32 %p5, %r3, 7;\n@%p1 tcgen05.mma.cta_group::2.kind::f16 [%r2], %rd1, %rd1, %r3, %p5;\n";
    let slot = "mov.u32 %r2, 0;\n";
    assert_eq!(
        rules(&kernel(cl, &format!("{slot}{mma}"))),
        [RuleId::GenPeerActive]
    );
    assert_eq!(rules(&kernel(cl, &format!("{sync}{slot}{mma}"))), []);
    let f = findings_with(&kernel(cl, &format!("{slot}{mma}")), FenceMode::Auto);
    assert!(f[0].message.contains("should"), "{}", f[0].message);
}

#[test]
fn warp_role_arithmetic_is_uniform_without_a_declared_block_size() {
    // CUTLASS/Triton write the warp index as `%tid.x >> 5` or `/ 32`; a branch on it is
    // warp-uniform, so an .aligned alloc under it is not GEN-ALIGNED-CONVERGENT (§9.7.16.7.1).
    for role in [
        "shr.u32 %r5, %r1, 5;",
        "div.u32 %r5, %r1, 32;",
        "and.b32 %r5, %r1, -32;",
        "shr.u32 %r6, %r1, 5;\nshfl.sync.idx.b32 %r5, %r6, 0, 31, -1;",
    ] {
        let src = format!(
            ".version 8.6\n.target sm_100a\n.shared .align 16 .b32 slot[1];\n.visible .entry k()\n{{\n\
             .reg .b32 %r<20>;\n.reg .pred %p<4>;\nmov.u32 %r1, %tid.x;\n{role}\nsetp.ne.s32 %p1, %r5, 0;\n\
             @%p1 bra $L_skip;\ntcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32;\n\
             ld.shared.b32 %r2, [slot];\ntcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n\
             tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n$L_skip:\nret;\n}}\n"
        );
        assert_eq!(rules(&src), [], "{role}");
        // A lane-divergent condition in the same place is still reported.
        let lane = src.replace(role, "and.b32 %r5, %r1, 1;");
        assert!(
            rules(&lane).contains(&RuleId::GenAlignedConvergent),
            "{role}"
        );
    }
}

#[test]
fn ill_formed_instructions_are_findings_with_their_rule() {
    // §9.7.16.7.1 syntax line: `.cta_group = { .cta_group::1, .cta_group::2 }`, `.sync.aligned`.
    let body = "@%p1 tcgen05.alloc.cta_group::3.sync.aligned.shared::cta.b32 [slot], 64;\n\
                tcgen05.ld.aligned.32x32b.x2.b32 {%r10, %r11}, [%r2];\n\
                tcgen05.ld.sync.aligned.32x32b.x2.b64 {%r10, %r11}, [%r2];\n";
    let r = rules(&kernel("", body));
    for want in [
        RuleId::GenCtagroupValid,
        RuleId::GenSyncQual,
        RuleId::LdstType,
    ] {
        assert!(r.contains(&want), "{want}: {r:?}");
    }
}

#[test]
fn target_rows_apply_to_the_module_target() {
    // §9.7.16.10.9.1 target notes: .kind::i8 on sm_100a and sm_110a only.
    let body = "mov.b64 %rd1, 0;\nmov.u32 %r2, 0;\n@%p1 tcgen05.mma.cta_group::1.kind::i8 [%r2], %rd1, %rd1, %r3, %p2;\n";
    let src = kernel("", body);
    assert!(!rules(&src).contains(&RuleId::MmaI8Target));
    let src = src.replace(
        ".version 8.6\n.target sm_100a",
        ".version 8.8\n.target sm_103a",
    );
    assert!(rules(&src).contains(&RuleId::MmaI8Target));
    // A target outside the catalogue's list is GEN-TARGET, named in the message.
    let src = src.replace("sm_103a", "sm_90a");
    let f = findings_with(&src, FenceMode::Auto);
    assert!(
        f.iter()
            .any(|f| f.rule == RuleId::GenTarget && f.message.contains("sm_90a"))
    );
    let src = kernel("", body).replace("sm_100a", "sm_89");
    let f = findings_with(&src, FenceMode::Auto);
    assert!(
        f.iter()
            .any(|f| f.rule == RuleId::GenTarget && f.message.contains("sm_89")),
        "{f:?}"
    );
}

#[test]
fn device_functions_are_checked_as_callees() {
    let src = ".version 8.6\n.target sm_100a\n.func f(.param .b32 a)\n{\n.reg .b32 %r<4>;\n\
               ld.param.b32 %r1, [a];\ntcgen05.ld.sync.aligned.32x32b.x4.b32 {%r2, %r3}, [%r1];\n\
               tcgen05.wait::ld.sync.aligned;\nret;\n}\n";
    let ks = check_source(src, "f.ptx", &Options::default()).unwrap();
    assert_eq!(ks.len(), 1);
    assert!(!ks[0].entry);
    assert_eq!(
        ks[0].findings.iter().map(|f| f.rule).collect::<Vec<_>>(),
        [RuleId::LdstVecLen]
    );
    assert!(ks[0].notes.iter().any(|n| n.contains("device function")));
}

#[test]
fn calls_of_functions_with_tcgen05_instructions_are_followed() {
    // The callee's alloc and dealloc count on the kernel's paths (§9.7.16.1.2: everything
    // allocated is freed before the kernel exits).
    let funcs = ".shared .align 16 .b32 slot[1];\n\
                 .func get()\n{\n.reg .b32 %r<4>;\n\
                 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 64;\n\
                 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\nret;\n}\n\
                 .func put()\n{\n.reg .b32 %r<4>;\nld.shared.b32 %r1, [slot];\n\
                 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 64;\nret;\n}\n";
    let kernel = |body: &str| {
        format!(
            ".version 8.6\n.target sm_100a\n{funcs}.visible .entry k()\n.reqntid 128, 1, 1\n{{\n\
             .reg .b32 %r<8>;\n.reg .pred %p<4>;\nmov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n\
             {body}\nret;\n}}\n"
        )
    };
    let entry_rules = |src: &str| -> Vec<RuleId> {
        check_source(src, "c.ptx", &Options::default())
            .unwrap()
            .into_iter()
            .filter(|k| k.entry)
            .flat_map(|k| k.findings)
            .map(|f| f.rule)
            .collect()
    };
    assert_eq!(entry_rules(&kernel("@%p1 call get;\n@%p1 call put;")), []);
    assert_eq!(
        entry_rules(&kernel("@%p1 call get;")),
        [RuleId::AllocFreeBeforeExit]
    );
    // The callee's .aligned alloc under the kernel's elect-one branch (§9.7.16.7.1).
    assert!(
        entry_rules(&kernel(
            "elect.sync %r2|%p2, -1;\n@%p2 call get;\n@%p1 call put;"
        ))
        .contains(&RuleId::GenAlignedConvergent)
    );
    // The functions are also reported on their own, once each, with no finding.
    let ks = check_source(
        &kernel("@%p1 call get;\n@%p1 call put;"),
        "c.ptx",
        &Options::default(),
    )
    .unwrap();
    assert_eq!(ks.iter().filter(|k| !k.entry).count(), 2);
    assert!(
        ks.iter()
            .all(|k| k.notes.iter().all(|n| !n.contains("not followed"))),
        "{ks:?}"
    );
}
