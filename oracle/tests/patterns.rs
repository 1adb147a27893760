//! The canonical patterns of reference §4.4 and each one-step weakening of them (drop one
//! wait, fence, commit, mbarrier wait or barrier), with the verdicts the spec gives. The table
//! is in oracle/README.md, "Canonical patterns".
//!
//! Expected values are derived from the spec and the IR's value functions
//! (`values::st_value`), never from the oracle's output.

use tcgen05_ir::samples::{self, fence, ld, st, wait};
use tcgen05_ir::*;
use tcgen05_oracle::probes::{commit, idesc};
use tcgen05_oracle::*;

const CG: CtaGroup = CtaGroup::One;
/// Producer warp 0 and consumer warp 4: both have warp-rank mod 4 = 0, so both may access
/// lanes 0-31 (LDST-LANE-QUARTER).
const CONSUMER: u8 = 4;

fn elect(body: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond: Cond::ElectOne,
        then: body,
        els: vec![],
    }
}

fn commit_to(bar: u8) -> Stmt {
    let mut c = commit();
    if let Stmt::Tc(Op::Commit { mbar, .. }) = &mut c {
        *mbar = bar;
    }
    c
}

fn mbar_wait(bar: u8) -> Stmt {
    Stmt::MbarWait {
        bar,
        parity: false,
        scope: Scope::Cta,
        max_tries: 1 << 20,
    }
}

fn desc(region: u8) -> SmemDesc {
    // K-major, no swizzle: core matrices of 8 rows × 16 B; 32 B of K per row = 2 core
    // matrices along K (LBO = 128 B), 8-row groups 256 B apart (SBO).
    SmemDesc {
        region,
        offset: 0,
        lbo_enc: 8,
        sbo_enc: 16,
        fixed: 1,
        base_offset: 0,
        lbo_abs: false,
        swizzle: 0,
        reserved: 0,
    }
}

/// `mma.cta_group::1.kind::f16` D[slot 0] (M=128, N=32) = A(region 0)·B(region 1) (+ D).
fn mma(enable_input_d: bool, kind: MmaKind) -> Stmt {
    mma_from(enable_input_d, kind, 0)
}

/// As [`mma`], with A and B in regions `first` and `first + 1`.
fn mma_from(enable_input_d: bool, kind: MmaKind, first: u8) -> Stmt {
    Stmt::Tc(Op::Mma(Box::new(Mma {
        form: form::MmaForm {
            ws: false,
            sp: false,
            cta_group: CG,
            kind,
            block_scale: false,
            scale_vec: None,
            ashift: false,
            collector: None,
        },
        d: TmemRef::slot(0, 0, 0),
        a: MmaA::Desc(desc(first)),
        b: desc(first + 1),
        sp_meta: None,
        idesc: idesc(kind, 128, 32),
        scale_a: None,
        scale_b: None,
        disable_output_lane: None,
        enable_input_d,
        scale_input_d: None,
        zero_col_mask: None,
    })))
}

fn fills(elem: FillElem) -> Vec<Stmt> {
    vec![
        Stmt::Fill {
            region: 0,
            seed: 11,
            elem,
        },
        Stmt::Fill {
            region: 1,
            seed: 22,
            elem,
        },
        Stmt::FenceProxyAsync,
    ]
}

/// One CTA of `warps` warps: warp 0 allocates 128 columns and publishes the address behind a
/// barrier with the tcgen05 fences (OQ-26), every warp runs its body, a barrier, warp 0 frees.
fn program(warps: u8, bodies: Vec<Vec<Stmt>>) -> Program {
    let mut code = Vec::new();
    for (w, body) in bodies.into_iter().enumerate() {
        let mut v = Vec::new();
        if w == 0 {
            v.push(samples::alloc(CG, 0, 128));
            for bar in 0..2 + warps {
                v.push(Stmt::MbarInit { bar, count: 1 });
            }
            v.push(Stmt::FenceMbarInit);
        }
        v.push(fence(FenceKind::BeforeThreadSync));
        v.push(Stmt::BarCta);
        v.push(fence(FenceKind::AfterThreadSync));
        v.extend(body);
        // Teardown: complete every asynchronous operation before the dealloc (OQ-4), with its
        // own waits and commit, so that a weakening inside the body changes only the body.
        v.push(wait(WaitOp::St));
        v.push(wait(WaitOp::Ld));
        v.push(elect(vec![commit_to(2 + w as u8)]));
        v.push(mbar_wait(2 + w as u8));
        v.push(fence(FenceKind::BeforeThreadSync));
        v.push(Stmt::BarCta);
        v.push(fence(FenceKind::AfterThreadSync));
        if w == 0 {
            v.push(samples::dealloc(CG, 0, 128));
            v.push(samples::relinquish(CG));
        }
        code.push(v);
    }
    while code.len() < usize::from(warps) {
        code.push(vec![
            fence(FenceKind::BeforeThreadSync),
            Stmt::BarCta,
            fence(FenceKind::AfterThreadSync),
            fence(FenceKind::BeforeThreadSync),
            Stmt::BarCta,
            fence(FenceKind::AfterThreadSync),
        ]);
    }
    Program {
        launch: samples::launch(warps),
        smem: Smem {
            slots: 1,
            mbarriers: 2 + warps,
            regions: vec![8192, 8192, 8192, 8192],
        },
        warps: code,
        funcs: vec![],
    }
}

/// The record of the first ld site of warp `w` for `lane`.
fn ld_record(e: &Expected, w: u8, lane: u8) -> ObsExpect {
    let item = e
        .per_lane()
        .into_iter()
        .find(|o| o.key.warp == w && o.key.lane == lane && o.rules.contains(&RuleId::LdAsync))
        .unwrap_or_else(|| panic!("no ld record for warp {w} lane {lane}: {:#?}", e.obs));
    item.expect
}

fn exact(e: &Expected, w: u8, lane: u8) -> Option<Vec<u32>> {
    assert_eq!(e.run.verdict, RunVerdict::Completes, "{:#?}", e.notes);
    match ld_record(e, w, lane) {
        ObsExpect::Exact(v) => Some(v),
        _ => None,
    }
}

fn st_vals(seed: u32, lane: u32, n: u32) -> Vec<u32> {
    (0..n).map(|i| values::st_value(seed, lane, i)).collect()
}

// ---- Pattern 2: non-pipelined, same thread: st; wait::st; ld ----

fn p2(with_wait: bool) -> Program {
    let mut body = vec![st(0, 0, 0, Num::X4, 99)];
    if with_wait {
        body.push(wait(WaitOp::St));
    }
    body.push(ld(0, 0, 0, Num::X4));
    body.push(wait(WaitOp::Ld));
    program(1, vec![body])
}

#[test]
fn pattern2_st_wait_ld_is_exact() {
    let e = expect(&p2(true));
    for lane in [0u8, 7, 31] {
        assert_eq!(exact(&e, 0, lane), Some(st_vals(99, u32::from(lane), 4)));
    }
}

#[test]
fn pattern2_without_wait_st_is_unspecified() {
    // MCM-ST-BEFORE-USE: the ld races with the st; the cells were never written before, so
    // the value is unspecified.
    let e = expect(&p2(false));
    assert_eq!(exact(&e, 0, 0), None);
}

// ---- Pattern 5: register dependency: ld without wait::ld is still the ld's value ----

#[test]
fn pattern5_ld_without_wait_ld_delivers_its_value() {
    // MCM-LD-REGDEP: the record is written through a true register dependency.
    let p = program(
        1,
        vec![vec![
            st(0, 0, 0, Num::X2, 5),
            wait(WaitOp::St),
            ld(0, 0, 0, Num::X2),
        ]],
    );
    let e = expect(&p);
    assert_eq!(exact(&e, 0, 3), Some(st_vals(5, 3, 2)));
}

#[test]
fn pattern5_weakened_war_without_wait_ld_races() {
    // MCM-LD-WAR: a later st to the same cells without wait::ld races with the ld.
    let p = program(
        1,
        vec![vec![
            st(0, 0, 0, Num::X2, 5),
            wait(WaitOp::St),
            ld(0, 0, 0, Num::X2),
            st(0, 0, 0, Num::X2, 6),
            wait(WaitOp::St),
        ]],
    );
    let e = expect(&p);
    match ld_record(&e, 0, 3) {
        ObsExpect::PerWord(ws) => {
            for (i, w) in ws.iter().enumerate() {
                let mut want = vec![
                    values::st_value(5, 3, i as u32),
                    values::st_value(6, 3, i as u32),
                ];
                want.sort();
                assert_eq!(*w, WordExpect::OneOf(want));
            }
        }
        other => panic!("expected a race, got {other:?}"),
    }
    // With wait::ld before the second st, the ld is ordered before it: exact.
    let p = program(
        1,
        vec![vec![
            st(0, 0, 0, Num::X2, 5),
            wait(WaitOp::St),
            ld(0, 0, 0, Num::X2),
            wait(WaitOp::Ld),
            st(0, 0, 0, Num::X2, 6),
            wait(WaitOp::St),
        ]],
    );
    assert_eq!(exact(&expect(&p), 0, 3), Some(st_vals(5, 3, 2)));
}

// ---- Pattern 2b: mma; commit; mbarrier wait; fence::after; ld ----

/// Which step to drop from a pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Drop {
    Nothing,
    Commit,
    MbarWait,
    FenceAfter,
    FenceBefore,
    Arrive,
    WaitLd,
    Barrier,
}

fn p2b(d: Drop, elem: FillElem, kind: MmaKind) -> Program {
    let mut body = fills(elem);
    let mut issue = vec![mma(false, kind)];
    if d != Drop::Commit {
        issue.push(commit());
    }
    body.push(elect(issue));
    if d != Drop::MbarWait {
        body.push(mbar_wait(0));
    }
    if d != Drop::FenceAfter {
        body.push(fence(FenceKind::AfterThreadSync));
    }
    body.push(ld(0, 0, 0, Num::X4));
    body.push(wait(WaitOp::Ld));
    program(1, vec![body])
}

/// D[m][n] = sum_k A[m][k]·B[n][k] for the fills above, computed here from the K-major
/// no-swizzle layout (reference §2.8, CUTLASS canonical layout) for f16 small integers.
fn f16_dot(m: u32, n: u32) -> f32 {
    let elem = |seed: u32, row: u32, k: u32| -> f32 {
        let kb = k * 2;
        let addr = (row % 8) * 16 + (row / 8) * 256 + (kb / 16) * 128 + kb % 16;
        let w = values::fill_word(FillElem::F16Small, seed, addr / 4);
        let h = (w >> ((addr % 4) * 8)) as u16;
        // Small integers only: find v with f16_bits(v) == h.
        (-4..=4)
            .find(|v| values::f16_bits(*v) == h)
            .expect("small integer") as f32
    };
    (0..16).map(|k| elem(11, m, k) * elem(22, n, k)).sum()
}

#[test]
fn pattern2b_mma_commit_wait_fence_ld_is_exact() {
    let e = expect(&p2b(Drop::Nothing, FillElem::F16Small, MmaKind::F16));
    for lane in [0u8, 5, 31] {
        let got = exact(&e, 0, lane).expect("exact");
        let want: Vec<u32> = (0..4)
            .map(|n| f16_dot(u32::from(lane), n).to_bits())
            .collect();
        assert_eq!(got, want, "lane {lane}");
    }
}

#[test]
fn pattern2b_weakenings_are_unspecified() {
    for d in [Drop::Commit, Drop::MbarWait, Drop::FenceAfter] {
        let e = expect(&p2b(d, FillElem::F16Small, MmaKind::F16));
        assert_eq!(e.run.verdict, RunVerdict::Completes, "{d:?}");
        assert_eq!(
            exact(&e, 0, 0),
            None,
            "dropping {d:?} must leave the ld unordered with the mma"
        );
    }
}

#[test]
fn i8_and_tf32_mma_results_are_exact() {
    for (elem, kind) in [
        (FillElem::I8Small, MmaKind::I8),
        (FillElem::Tf32Small, MmaKind::Tf32),
    ] {
        let e = expect(&p2b(Drop::Nothing, elem, kind));
        assert!(
            exact(&e, 0, 0).is_some(),
            "{kind:?}: {:#?}",
            ld_record(&e, 0, 0)
        );
    }
    // f8f6f4 values are not computed (only region and ordering).
    let e = expect(&p2b(Drop::Nothing, FillElem::Word, MmaKind::F8f6f4));
    assert_eq!(exact(&e, 0, 0), None);
}

// ---- Pattern 1: pipelined, same thread: mma; mma (same accumulator and shape) ----

fn p1(second: Stmt, elem: FillElem) -> Program {
    let mut body = fills(elem);
    body.push(Stmt::Fill {
        region: 2,
        seed: 33,
        elem: FillElem::Tf32Small,
    });
    body.push(Stmt::Fill {
        region: 3,
        seed: 44,
        elem: FillElem::Tf32Small,
    });
    body.push(Stmt::FenceProxyAsync);
    body.push(elect(vec![mma(false, MmaKind::F16), second, commit()]));
    body.push(mbar_wait(0));
    body.push(fence(FenceKind::AfterThreadSync));
    body.push(ld(0, 0, 0, Num::X4));
    body.push(wait(WaitOp::Ld));
    program(1, vec![body])
}

#[test]
fn pattern1_mma_mma_accumulates_in_order() {
    // MCM-PIPE-MMA-MMA: D = A·B, then D = A·B + D = 2·A·B.
    let e = expect(&p1(mma(true, MmaKind::F16), FillElem::F16Small));
    let got = exact(&e, 0, 2).expect("exact");
    let want: Vec<u32> = (0..4).map(|n| (2.0 * f16_dot(2, n)).to_bits()).collect();
    assert_eq!(got, want);
}

#[test]
fn pattern1_kinds_differ_between_editions() {
    // Seeds: same accumulator and shape suffice, so the tf32 MMA (D = A'·B') lands after the
    // f16 one; ptx93 also needs the same kind (OQ-27), so the two race on D.
    let p = p1(mma_from(false, MmaKind::Tf32, 2), FillElem::F16Small);
    let seeds = expect_with(&p, &Options::edition(Edition::Seeds));
    let ptx93 = expect_with(&p, &Options::edition(Edition::Ptx93));
    let s = exact(&seeds, 0, 0).expect("seeds: ordered");
    match ld_record(&ptx93, 0, 0) {
        ObsExpect::PerWord(ws) => {
            for (i, w) in ws.iter().enumerate() {
                let WordExpect::OneOf(v) = w else {
                    panic!("{w:?}")
                };
                assert!(
                    v.contains(&s[i]) && v.contains(&f16_dot(0, i as u32).to_bits()),
                    "{v:?}"
                );
            }
        }
        ObsExpect::OneOf(_)
        | ObsExpect::Exact(_)
        | ObsExpect::Unspecified(_)
        | ObsExpect::Check(_)
        | ObsExpect::Absent => {
            panic!("ptx93: expected a race, got {:?}", ld_record(&ptx93, 0, 0))
        }
    }
}

// ---- Pattern 3: pipelined, different thread: T0 cp; fence::before; arrive. T1 wait; fence::after; mma ----

fn p3(d: Drop) -> Program {
    let cp = Op::Cp {
        form: form::CpForm {
            cta_group: CG,
            shape: CpShape::S128x256b,
            multicast: None,
            dst_fmt: None,
            src_fmt: None,
        },
        taddr: TmemRef::slot(0, 0, 0),
        src: desc(0),
    };
    // Only the consumer fills the MMA's operands (two unordered fills would race).
    let mut t0 = vec![];
    let mut issue = vec![Stmt::Tc(cp)];
    if d != Drop::FenceBefore {
        issue.push(fence(FenceKind::BeforeThreadSync));
    }
    if d != Drop::Arrive {
        issue.push(Stmt::MbarArrive { bar: 1, cta: None });
    }
    t0.push(elect(issue));
    // The consumer waits for the arrive, then overwrites the cp's cells with an exact MMA.
    let mut t1 = fills(FillElem::F16Small);
    if d != Drop::MbarWait {
        t1.push(mbar_wait(1));
    }
    if d != Drop::FenceAfter {
        t1.push(fence(FenceKind::AfterThreadSync));
    }
    t1.push(elect(vec![mma(false, MmaKind::F16), commit()]));
    t1.push(mbar_wait(0));
    t1.push(fence(FenceKind::AfterThreadSync));
    t1.push(ld(0, 0, 0, Num::X4));
    t1.push(wait(WaitOp::Ld));
    let mut bodies = vec![t0, vec![], vec![], vec![], t1];
    bodies.truncate(5);
    program(5, bodies)
}

#[test]
fn pattern3_cp_then_mma_across_threads_is_ordered() {
    let e = expect(&p3(Drop::Nothing));
    let got = exact(&e, CONSUMER, 1)
        .unwrap_or_else(|| panic!("{:?} {:?}", ld_record(&e, CONSUMER, 1), e.notes));
    let want: Vec<u32> = (0..4).map(|n| f16_dot(1, n).to_bits()).collect();
    assert_eq!(got, want);
}

#[test]
fn pattern3_weakenings_race() {
    for d in [
        Drop::FenceBefore,
        Drop::Arrive,
        Drop::MbarWait,
        Drop::FenceAfter,
    ] {
        let e = expect(&p3(d));
        assert_eq!(exact(&e, CONSUMER, 1), None, "dropping {d:?}");
    }
}

// ---- Pattern 4: non-pipelined, different thread: T0 ld; wait::ld; fence::before; arrive. T1 wait; fence::after; mma ----

fn p4(d: Drop) -> Program {
    let mut t0 = vec![
        st(0, 0, 0, Num::X4, 3),
        wait(WaitOp::St),
        ld(0, 0, 0, Num::X4),
    ];
    if d != Drop::WaitLd {
        t0.push(wait(WaitOp::Ld));
    }
    if d != Drop::FenceBefore {
        t0.push(fence(FenceKind::BeforeThreadSync));
    }
    if d != Drop::Arrive {
        t0.push(elect(vec![Stmt::MbarArrive { bar: 1, cta: None }]));
    }
    let mut t1 = fills(FillElem::F16Small);
    if d != Drop::MbarWait {
        t1.push(mbar_wait(1));
    }
    if d != Drop::FenceAfter {
        t1.push(fence(FenceKind::AfterThreadSync));
    }
    t1.push(elect(vec![mma(false, MmaKind::F16), commit()]));
    t1.push(mbar_wait(0));
    program(5, vec![t0, vec![], vec![], vec![], t1])
}

#[test]
fn pattern4_ld_before_mma_across_threads_is_ordered() {
    let e = expect(&p4(Drop::Nothing));
    assert_eq!(exact(&e, 0, 9), Some(st_vals(3, 9, 4)));
}

#[test]
fn pattern4_weakenings_race() {
    for d in [
        Drop::WaitLd,
        Drop::FenceBefore,
        Drop::Arrive,
        Drop::MbarWait,
        Drop::FenceAfter,
    ] {
        let e = expect(&p4(d));
        assert_eq!(exact(&e, 0, 9), None, "dropping {d:?}");
    }
}

// ---- Pattern 4b: T0 mma; commit → T1 try_wait; fence::after; ld ----

fn p4b(d: Drop) -> Program {
    let mut t0 = fills(FillElem::F16Small);
    t0.push(elect(vec![mma(false, MmaKind::F16), commit()]));
    let mut t1 = vec![];
    if d != Drop::MbarWait {
        t1.push(mbar_wait(0));
    }
    if d != Drop::FenceAfter {
        t1.push(fence(FenceKind::AfterThreadSync));
    }
    t1.push(ld(0, 0, 0, Num::X4));
    t1.push(wait(WaitOp::Ld));
    program(5, vec![t0, vec![], vec![], vec![], t1])
}

#[test]
fn pattern4b_mma_commit_to_other_thread_ld() {
    let e = expect(&p4b(Drop::Nothing));
    let want: Vec<u32> = (0..4).map(|n| f16_dot(4, n).to_bits()).collect();
    assert_eq!(exact(&e, CONSUMER, 4), Some(want));
    for d in [Drop::MbarWait, Drop::FenceAfter] {
        assert_eq!(exact(&expect(&p4b(d)), CONSUMER, 4), None, "dropping {d:?}");
    }
}

// ---- Barrier-published st → ld across warps ----

fn xwarp(d: Drop) -> Program {
    let mut t0 = vec![st(0, 0, 0, Num::X2, 8), wait(WaitOp::St)];
    if d != Drop::FenceBefore {
        t0.push(fence(FenceKind::BeforeThreadSync));
    }
    if d != Drop::Barrier {
        t0.push(Stmt::BarCta);
    }
    let mut t1 = vec![];
    if d != Drop::Barrier {
        t1.push(Stmt::BarCta);
    }
    if d != Drop::FenceAfter {
        t1.push(fence(FenceKind::AfterThreadSync));
    }
    t1.push(ld(0, 0, 0, Num::X2));
    t1.push(wait(WaitOp::Ld));
    let mut bodies = vec![t0, vec![], vec![], vec![], t1];
    for b in bodies.iter_mut().take(4).skip(1) {
        if d != Drop::Barrier {
            b.push(Stmt::BarCta);
        }
    }
    program(5, bodies)
}

#[test]
fn st_published_by_barrier_is_seen_by_another_warp() {
    assert_eq!(
        exact(&expect(&xwarp(Drop::Nothing)), CONSUMER, 6),
        Some(st_vals(8, 6, 2))
    );
    for d in [Drop::FenceBefore, Drop::FenceAfter, Drop::Barrier] {
        assert_eq!(
            exact(&expect(&xwarp(d)), CONSUMER, 6),
            None,
            "dropping {d:?}"
        );
    }
}
