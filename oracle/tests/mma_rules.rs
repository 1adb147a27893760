//! The MMA rows of reference §6 judged from the instruction descriptor, the zero-column mask
//! and the collector sequence (oracle/src/run/mma_rules.rs). For each row, a program that
//! breaks it is `Undefined` with that RuleId, and a nearby program that keeps it is not
//! flagged with it. Expected verdicts come from the rule text (reference §2.7, §2.8, §3.7, §6).

use tcgen05_ir::samples::{self, alloc, dealloc, elect, fence, relinquish};
use tcgen05_ir::*;
use tcgen05_oracle::probes::{self, commit, mma};
use tcgen05_oracle::*;

const CG: CtaGroup = CtaGroup::One;

fn mbar_wait() -> Stmt {
    samples::mbar_wait(0, 100)
}

/// One CTA, one warp: alloc 256 columns, the MMAs under one elected thread, commit, wait, free.
fn one_warp(launch: Launch, mmas: Vec<Mma>) -> Program {
    let mut issue: Vec<Stmt> = mmas
        .into_iter()
        .map(|m| Stmt::Tc(Op::Mma(Box::new(m))))
        .collect();
    issue.push(commit());
    let smem = Smem {
        slots: 1,
        mbarriers: 1,
        regions: vec![32768, 32768],
    };
    let body = vec![
        Stmt::MbarInit { bar: 0, count: 1 },
        elect(issue),
        mbar_wait(),
        fence(FenceKind::AfterThreadSync),
    ];
    samples::one_warp(launch, smem, 256, body)
}

/// A cluster of two CTAs with `::2` allocations; the even CTA issues `m` and a multicast
/// commit to both CTAs; both wait on it, then synchronize and free.
fn pair_mma(target: Target, m: Mma) -> Program {
    let cg = CtaGroup::Two;
    let commit2 = Stmt::Tc(Op::Commit {
        form: form::CommitForm {
            cta_group: cg,
            arrive_one: true,
            shared_cluster: true,
            multicast: true,
            ty: Ty::B64,
        },
        mbar: 0,
        addr: MbarAddr::Shared,
        cta_mask: Some(0b11),
    });
    let cluster_sync = || {
        vec![
            fence(FenceKind::BeforeThreadSync),
            Stmt::ClusterArrive { relaxed: false },
            Stmt::ClusterWait,
            fence(FenceKind::AfterThreadSync),
        ]
    };
    // GEN-PEER-ACTIVE (§9.7.16.7.1): a cluster barrier before the pair allocation.
    let mut code = vec![
        Stmt::ClusterArrive { relaxed: false },
        Stmt::ClusterWait,
        alloc(cg, 0, 256),
        Stmt::MbarInit { bar: 0, count: 1 },
    ];
    code.extend(cluster_sync());
    code.push(Stmt::If {
        cond: Cond::CtaOdd,
        then: vec![],
        els: vec![elect(vec![Stmt::Tc(Op::Mma(Box::new(m))), commit2])],
    });
    code.push(mbar_wait());
    code.extend(cluster_sync());
    code.push(dealloc(cg, 0, 256));
    code.push(relinquish(cg));
    Program {
        launch: Launch {
            target,
            // sm_110a/f exist from PTX 9.0 (reference §1).
            ptx_version: if matches!(target, Target::Sm110a | Target::Sm110f) {
                PtxVersion::new(9, 0)
            } else {
                PtxVersion::new(8, 8)
            },
            cluster_size: 2,
            declare_cluster: true,
            ..samples::launch(1)
        },
        smem: Smem {
            slots: 1,
            mbarriers: 1,
            regions: vec![32768, 32768],
        },
        warps: vec![code],
        funcs: vec![],
    }
}

fn launch(target: Target) -> Launch {
    Launch {
        target,
        ptx_version: PtxVersion::new(8, 8),
        ..samples::launch(1)
    }
}

/// The rules of an `Undefined` verdict (empty for any other verdict). The program must be
/// statically well-formed and judged.
fn undefined_rules(p: &Program) -> Vec<RuleId> {
    let e = expect(p);
    assert!(e.violations.is_empty(), "{:?}", e.violations);
    assert!(
        !e.notes.iter().any(|n| n.starts_with("not judged")),
        "{:?}",
        e.notes
    );
    match e.run.verdict {
        RunVerdict::Undefined(r) => r,
        _ => vec![],
    }
}

fn flagged(p: &Program, rule: RuleId) {
    let r = undefined_rules(p);
    assert!(
        r.contains(&rule),
        "{rule}: expected Undefined with it, got {r:?}"
    );
}

fn kept(p: &Program, rule: RuleId) {
    let r = undefined_rules(p);
    assert!(
        !r.contains(&rule),
        "{rule} flagged a program that keeps it: {r:?}"
    );
}

/// A program that keeps every rule completes.
fn completes(p: &Program) {
    let e = expect(p);
    assert!(e.violations.is_empty(), "{:?}", e.violations);
    assert_eq!(e.run.verdict, RunVerdict::Completes, "{:#?}", e.notes);
}

/// Layout (c) (mxf4, mxf4nvf4), reference §2.8: A = E2M1 (1) at bits 7-9, B = E2M1 at bits
/// 10-11, scale type at bit 23, N >> 3 at 17-22, M >> 7 at 27-28.
fn idesc_c(m: u32, n: u32, ue8m0: bool) -> u32 {
    1 << 7 | 1 << 10 | u32::from(ue8m0) << 23 | (n >> 3) << 17 | (m >> 7) << 27
}

/// Layout (b) (mxf8f6f4): A/B types with f8f6f4 codes, UE8M0 scale type.
fn idesc_b(m: u32, n: u32, a: u32, b: u32) -> u32 {
    a << 7 | b << 10 | 1 << 23 | (n >> 3) << 17 | (m >> 7) << 27
}

/// A block-scaled MMA: A and B in shared memory, scale factors at columns 128 and 160.
fn block_scaled(kind: MmaKind, scale_vec: Option<ScaleVec>, cg: CtaGroup, idesc: u32) -> Mma {
    let mut m = mma(kind, false);
    m.form.block_scale = true;
    m.form.scale_vec = scale_vec;
    m.form.cta_group = cg;
    m.idesc = idesc;
    m.scale_a = Some(TmemRef::slot(0, 0, 128));
    m.scale_b = Some(TmemRef::slot(0, 0, 160));
    m
}

fn mxf4(idesc: u32) -> Program {
    one_warp(
        launch(Target::Sm100a),
        vec![block_scaled(MmaKind::Mxf4, None, CG, idesc)],
    )
}

#[test]
fn layouts_b_and_c_keep_every_rule() {
    completes(&mxf4(idesc_c(128, 64, true)));
    completes(&one_warp(
        launch(Target::Sm100a),
        vec![block_scaled(
            MmaKind::Mxf8f6f4,
            Some(ScaleVec::X1),
            CG,
            idesc_b(128, 64, 0, 1) | 3 << 29 | 3 << 4,
        )],
    ));
}

#[test]
fn layouts_b_and_c_reserved_encoding_and_shape() {
    // IDESC-RESERVED: bits 24-26 are reserved in layouts (b) and (c); bit 12 in (c).
    flagged(
        &mxf4(idesc_c(128, 64, true) | 1 << 25),
        RuleId::IdescReserved,
    );
    flagged(
        &mxf4(idesc_c(128, 64, true) | 1 << 12),
        RuleId::IdescReserved,
    );
    // IDESC-ENC: layout (c) A is E2M1 = 1; mxf4 scale type is UE8M0 = 1.
    flagged(
        &mxf4(idesc_c(128, 64, true) & !(7 << 7) | 5 << 7),
        RuleId::IdescEnc,
    );
    flagged(&mxf4(idesc_c(128, 64, false)), RuleId::IdescEnc);
    // MMA-SHAPE-VALID: mx kinds with ::1 have M = 128 only.
    flagged(&mxf4(idesc_c(256, 64, true)), RuleId::MmaShapeValid);
    kept(&mxf4(idesc_c(128, 64, true)), RuleId::MmaShapeValid);
}

#[test]
fn mma_k_explicit() {
    // K = 96 (bit 31) only for dense mxf4/mxf4nvf4 ::2 with M = 256 (§2.7, §6).
    let k96 = |cg, m| block_scaled(MmaKind::Mxf4, None, cg, idesc_c(m, 128, true) | 1 << 31);
    flagged(
        &one_warp(launch(Target::Sm103a), vec![k96(CG, 128)]),
        RuleId::MmaKExplicit,
    );
    flagged(
        &pair_mma(Target::Sm103a, k96(CtaGroup::Two, 128)),
        RuleId::MmaKExplicit,
    );
    let mut sparse = k96(CtaGroup::Two, 256);
    sparse.form.sp = true;
    sparse.sp_meta = Some(TmemRef::slot(0, 0, 192));
    flagged(&pair_mma(Target::Sm103a, sparse), RuleId::MmaKExplicit);
    let keep = pair_mma(Target::Sm103a, k96(CtaGroup::Two, 256));
    kept(&keep, RuleId::MmaKExplicit);
    completes(&keep);
}

#[test]
fn mma_k96_target() {
    let k96 = block_scaled(
        MmaKind::Mxf4,
        None,
        CtaGroup::Two,
        idesc_c(256, 128, true) | 1 << 31,
    );
    for t in [Target::Sm100a, Target::Sm103f, Target::Sm110a] {
        let p = pair_mma(t, k96.clone());
        flagged(&p, RuleId::MmaK96Target);
        kept(&p, RuleId::MmaKExplicit);
    }
    kept(&pair_mma(Target::Sm103a, k96), RuleId::MmaK96Target);
    // K = 64 on sm_100a keeps it.
    let k64 = block_scaled(MmaKind::Mxf4, None, CtaGroup::Two, idesc_c(256, 128, true));
    completes(&pair_mma(Target::Sm100a, k64));
}

/// A `.ws` f16 MMA with M, N = 64 and a zero-column mask with column shift `shift`.
fn ws_zcm(m: u32, shift: u64) -> Program {
    let mut x = mma(MmaKind::F16, false);
    x.form.ws = true;
    x.idesc = probes::idesc(MmaKind::F16, m, 64);
    x.zero_col_mask = Some(shift << 56 | 1 << 39);
    one_warp(launch(Target::Sm100a), vec![x])
}

#[test]
fn mma_zcm_shift() {
    // At most 16 when M = 32, at most 32 otherwise (§2.8 zero-column mask).
    kept(&ws_zcm(32, 16), RuleId::MmaZcmShift);
    flagged(&ws_zcm(32, 17), RuleId::MmaZcmShift);
    kept(&ws_zcm(64, 32), RuleId::MmaZcmShift);
    completes(&ws_zcm(64, 32));
    flagged(&ws_zcm(64, 33), RuleId::MmaZcmShift);
    flagged(&ws_zcm(128, 63), RuleId::MmaZcmShift);
}

#[test]
fn mma_bs_sfid() {
    // mxf4 / mxf4nvf4 (layout (c)): IDs 0 or 2 (K != 96).
    let sf = |a: u32, b: u32| idesc_c(128, 64, true) | a << 29 | b << 4;
    kept(&mxf4(sf(2, 2)), RuleId::MmaBsSfid);
    completes(&mxf4(sf(2, 0)));
    flagged(&mxf4(sf(1, 0)), RuleId::MmaBsSfid);
    flagged(&mxf4(sf(0, 3)), RuleId::MmaBsSfid);
    // With scale_vec::4X both IDs must be 0.
    let nv = |a: u32, b: u32| {
        let mut l = launch(Target::Sm100a);
        l.ptx_version = PtxVersion::new(8, 7);
        one_warp(
            l,
            vec![block_scaled(
                MmaKind::Mxf4nvf4,
                Some(ScaleVec::X4),
                CG,
                sf(a, b),
            )],
        )
    };
    kept(&nv(0, 0), RuleId::MmaBsSfid);
    flagged(&nv(2, 0), RuleId::MmaBsSfid);
    flagged(&nv(0, 2), RuleId::MmaBsSfid);
    // mxf8f6f4 (layout (b)): IDs 0-3 are all valid.
    let b = one_warp(
        launch(Target::Sm100a),
        vec![block_scaled(
            MmaKind::Mxf8f6f4,
            Some(ScaleVec::X1),
            CG,
            idesc_b(128, 64, 0, 0) | 1 << 29 | 3 << 4,
        )],
    );
    kept(&b, RuleId::MmaBsSfid);
}

#[test]
fn mma_bs_vec_scale_type_from_idesc() {
    // mxf4nvf4 with UE4M3 scales (bit 23 = 0) allows only 4X / block16 (§3.7 table).
    let nv = |v: ScaleVec, ue8m0: bool| {
        let mut l = launch(Target::Sm100a);
        l.ptx_version = PtxVersion::new(8, 7);
        one_warp(
            l,
            vec![block_scaled(
                MmaKind::Mxf4nvf4,
                Some(v),
                CG,
                idesc_c(128, 64, ue8m0),
            )],
        )
    };
    flagged(&nv(ScaleVec::X2, false), RuleId::MmaBsVec);
    kept(&nv(ScaleVec::X2, true), RuleId::MmaBsVec);
    kept(&nv(ScaleVec::X4, false), RuleId::MmaBsVec);
}

#[test]
fn mma_transpose_kind_mxf4() {
    // mxf4 and mxf4nvf4 cannot transpose (§3.7).
    flagged(
        &mxf4(idesc_c(128, 64, true) | 1 << 15),
        RuleId::MmaTransposeKind,
    );
    flagged(
        &mxf4(idesc_c(128, 64, true) | 1 << 16),
        RuleId::MmaTransposeKind,
    );
    // Negate is allowed for them.
    kept(
        &mxf4(idesc_c(128, 64, true) | 1 << 13),
        RuleId::MmaTransposeKind,
    );
}

fn dense(kind: MmaKind, f: &dyn Fn(&mut Mma)) -> Program {
    let mut m = mma(kind, false);
    f(&mut m);
    one_warp(launch(Target::Sm100a), vec![m])
}

#[test]
fn mma_transpose_swz() {
    // tf32 transposes only with swizzle code 1 (128B, 32B atomicity) ...
    let tf32 = |swizzle: u8| {
        dense(MmaKind::Tf32, &|m| {
            m.idesc |= 1 << 16;
            m.b.swizzle = swizzle;
        })
    };
    flagged(&tf32(2), RuleId::MmaTransposeSwz);
    flagged(&tf32(0), RuleId::MmaTransposeSwz);
    kept(&tf32(1), RuleId::MmaTransposeSwz);
    completes(&tf32(1));
    // ... and other kinds never transpose in that mode.
    let f16 = |swizzle: u8| {
        dense(MmaKind::F16, &|m| {
            m.idesc |= 1 << 15;
            if let MmaA::Desc(a) = &mut m.a {
                a.swizzle = swizzle;
            }
        })
    };
    flagged(&f16(1), RuleId::MmaTransposeSwz);
    kept(&f16(2), RuleId::MmaTransposeSwz);
    // A non-transposed operand may use mode 1.
    kept(
        &dense(MmaKind::F16, &|m| m.b.swizzle = 1),
        RuleId::MmaTransposeSwz,
    );
}

#[test]
fn mma_t8b_n() {
    // 8-bit transposed B: N = 16..256 step 16 for ::1.
    let f8 = |n: u32, b_type: u32| {
        dense(MmaKind::F8f6f4, &|m| {
            m.idesc = probes::idesc(MmaKind::F8f6f4, 128, n) & !(7 << 10) | b_type << 10 | 1 << 16;
        })
    };
    flagged(&f8(24, 0), RuleId::MmaT8bN);
    flagged(&f8(8, 1), RuleId::MmaT8bN);
    kept(&f8(32, 0), RuleId::MmaT8bN);
    completes(&f8(32, 0));
    // Not transposed: N = 24 is fine (§2.7: 8..256 step 8).
    kept(
        &dense(MmaKind::F8f6f4, &|m| {
            m.idesc = probes::idesc(MmaKind::F8f6f4, 128, 24)
        }),
        RuleId::MmaT8bN,
    );
    // i8 is 8-bit.
    flagged(
        &dense(MmaKind::I8, &|m| {
            m.idesc = probes::idesc(MmaKind::I8, 128, 24) | 1 << 16
        }),
        RuleId::MmaT8bN,
    );
}

#[test]
fn mma_transpose_subbyte() {
    // e2m3 (3), e3m2 (4), e2m1 (5) must be K-major; e4m3 (0) may be M-major.
    let f = |a_type: u32| {
        dense(MmaKind::F8f6f4, &|m| {
            m.idesc = probes::idesc(MmaKind::F8f6f4, 128, 64) & !(7 << 7) | a_type << 7 | 1 << 15;
        })
    };
    for t in [3, 4, 5] {
        flagged(&f(t), RuleId::MmaTransposeSubbyte);
    }
    kept(&f(0), RuleId::MmaTransposeSubbyte);
    completes(&f(0));
    // mxf8f6f4 too (B operand).
    let b = one_warp(
        launch(Target::Sm100a),
        vec![block_scaled(
            MmaKind::Mxf8f6f4,
            Some(ScaleVec::X1),
            CG,
            idesc_b(128, 64, 0, 5) | 1 << 16,
        )],
    );
    flagged(&b, RuleId::MmaTransposeSubbyte);
}

fn coll(op: Option<CollectorOp>) -> Mma {
    let mut m = mma(MmaKind::F16, false);
    m.form.collector = op.map(|op| form::Collector {
        buf: CollectorBuf::A,
        op,
    });
    m
}

#[test]
fn mma_collector_valid() {
    use CollectorOp::*;
    let prog = |ops: &[Option<CollectorOp>]| {
        one_warp(
            launch(Target::Sm100a),
            ops.iter().map(|o| coll(*o)).collect(),
        )
    };
    // fill, use, lastuse: every use follows a valid fill.
    kept(
        &prog(&[Some(Fill), Some(Use), Some(Lastuse)]),
        RuleId::MmaCollectorValid,
    );
    completes(&prog(&[Some(Fill), Some(Use), Some(Lastuse)]));
    // use with no fill.
    flagged(&prog(&[Some(Use)]), RuleId::MmaCollectorValid);
    flagged(&prog(&[Some(Lastuse)]), RuleId::MmaCollectorValid);
    // lastuse and discard drop the buffer; no qualifier means ::a::discard.
    flagged(
        &prog(&[Some(Fill), Some(Lastuse), Some(Use)]),
        RuleId::MmaCollectorValid,
    );
    flagged(
        &prog(&[Some(Fill), Some(Discard), Some(Use)]),
        RuleId::MmaCollectorValid,
    );
    flagged(
        &prog(&[Some(Fill), None, Some(Use)]),
        RuleId::MmaCollectorValid,
    );
    // A fill after a drop makes it valid again.
    kept(
        &prog(&[Some(Fill), None, Some(Fill), Some(Use)]),
        RuleId::MmaCollectorValid,
    );
}

// ---- TMEM data rules (metadata and scale factors written by tcgen05.st) ----
//
// A `tcgen05.st .32x32b.x1` at (lane l, column c) by the warp of that lane quarter writes
// `values::st_value(seed, t, 0)` into lane l + t (reference §2.6, `tcgen05_ir::values`). The
// rules below are judged on the cell at the operand's own address (and, for scale factors,
// its copies in the other 32-lane partitions): which further cells, nibbles and bytes an MMA
// reads is shown only in figures (OQ-29).

/// The value thread 0 writes with register 0.
fn lane0(seed: u32) -> u32 {
    values::st_value(seed, 0, 0)
}

fn nibbles(v: u32) -> impl Iterator<Item = u32> {
    (0..8).map(move |k| v >> (4 * k) & 0xF)
}

const SEVEN: [u32; 7] = [0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110];
const TF32: [u32; 2] = [0b1110, 0b0100];

/// One warp: st of the metadata (seed `meta`) at column 192, optionally `wait::st`, then a
/// sparse MMA of `kind` reading it.
fn sparse(kind: MmaKind, meta: u32, wait_st: bool) -> Program {
    let mut m = match kind {
        MmaKind::Mxf4 => block_scaled(kind, None, CG, idesc_c(128, 64, true) | 1 << 2),
        _ => {
            let mut m = mma(kind, false);
            m.idesc = probes::idesc(kind, 128, 64) | 1 << 2;
            m
        }
    };
    m.form.sp = true;
    m.sp_meta = Some(TmemRef::slot(0, 0, 192));
    let mut code = vec![
        alloc(CG, 0, 256),
        Stmt::MbarInit { bar: 0, count: 1 },
        samples::st(0, 0, 192, Num::X1, meta),
    ];
    if wait_st {
        code.push(samples::wait(WaitOp::St));
    }
    code.extend([
        elect(vec![Stmt::Tc(Op::Mma(Box::new(m))), commit()]),
        mbar_wait(),
        fence(FenceKind::AfterThreadSync),
        dealloc(CG, 0, 256),
        relinquish(CG),
    ]);
    Program {
        launch: launch(Target::Sm100a),
        smem: Smem {
            slots: 1,
            mbarriers: 1,
            regions: vec![32768, 32768],
        },
        warps: vec![code],
        funcs: vec![],
    }
}

#[test]
fn mma_sp_meta_tf32() {
    // tf32 metadata nibbles other than 0b1110 and 0b0100 are UB (§9.7.16.10.8.1).
    let (bad, good) = (0x0000_0000, 0x4E4E_4E4E);
    assert!(nibbles(lane0(bad)).all(|n| !TF32.contains(&n)));
    assert!(nibbles(lane0(good)).all(|n| TF32.contains(&n)));
    flagged(&sparse(MmaKind::Tf32, bad, true), RuleId::MmaSpMetaTf32);
    kept(&sparse(MmaKind::Tf32, good, true), RuleId::MmaSpMetaTf32);
    // Without wait::st the store may not have completed (MCM-ST-BEFORE-USE): the MMA may read
    // the never-written cell, whose value is unspecified, so no breach is certain.
    kept(&sparse(MmaKind::Tf32, bad, false), RuleId::MmaSpMetaTf32);
    // 0b1000 is valid for 2:4 but not for tf32.
    let only8 = 0x8888_8888;
    assert!(nibbles(lane0(only8)).all(|n| !TF32.contains(&n) && SEVEN.contains(&n)));
    flagged(&sparse(MmaKind::Tf32, only8, true), RuleId::MmaSpMetaTf32);
    kept(&sparse(MmaKind::F16, only8, true), RuleId::MmaSpMeta24);
}

#[test]
fn mma_sp_meta_mxf4() {
    // mxf4 / mxf4nvf4 metadata outside the 7 listed values is UB (§9.7.16.10.8.3).
    let (bad, good) = (0xFFFF_FFFF, 0x4444_4444);
    assert!(nibbles(lane0(bad)).all(|n| !SEVEN.contains(&n)));
    assert!(nibbles(lane0(good)).all(|n| SEVEN.contains(&n)));
    flagged(&sparse(MmaKind::Mxf4, bad, true), RuleId::MmaSpMetaMxf4);
    kept(&sparse(MmaKind::Mxf4, good, true), RuleId::MmaSpMetaMxf4);
}

#[test]
fn mma_sp_meta_24() {
    // 2:4 metadata should be one of the 7 listed values (§9.7.16.10.8.2; consequence unstated,
    // OQ-23): f16, f8f6f4, i8.
    let (bad, good) = (0x2222_2222, 0xE6D9_C84E);
    assert!(nibbles(lane0(bad)).all(|n| !SEVEN.contains(&n)));
    assert!(nibbles(lane0(good)).all(|n| SEVEN.contains(&n)));
    for k in [MmaKind::F16, MmaKind::F8f6f4, MmaKind::I8] {
        flagged(&sparse(k, bad, true), RuleId::MmaSpMeta24);
        kept(&sparse(k, good, true), RuleId::MmaSpMeta24);
    }
}

/// Four warps: warp k stores the A and B scale factors (seeds `sa[k]`, `sb[k]`) into lanes
/// 32k.. of columns 128 and 160; after a fenced barrier warp 0 issues a block-scaled mxf8f6f4
/// MMA whose scale operands are at lane 0 of those columns.
fn scales(sa: [u32; 4], sb: [u32; 4]) -> Program {
    let sync = || {
        vec![
            fence(FenceKind::BeforeThreadSync),
            Stmt::BarCta,
            fence(FenceKind::AfterThreadSync),
        ]
    };
    let m = block_scaled(
        MmaKind::Mxf8f6f4,
        Some(ScaleVec::X1),
        CG,
        idesc_b(128, 64, 0, 0),
    );
    let warps = (0..4u16)
        .map(|k| {
            let mut code = Vec::new();
            if k == 0 {
                code.extend([alloc(CG, 0, 256), Stmt::MbarInit { bar: 0, count: 1 }]);
            }
            code.extend(sync());
            code.extend([
                samples::st(0, 32 * k, 128, Num::X1, sa[usize::from(k)]),
                samples::st(0, 32 * k, 160, Num::X1, sb[usize::from(k)]),
                samples::wait(WaitOp::St),
            ]);
            code.extend(sync());
            if k == 0 {
                code.extend([
                    elect(vec![Stmt::Tc(Op::Mma(Box::new(m.clone()))), commit()]),
                    mbar_wait(),
                ]);
            }
            code.extend(sync());
            if k == 0 {
                code.extend([dealloc(CG, 0, 256), relinquish(CG)]);
            }
            code
        })
        .collect();
    Program {
        launch: Launch {
            warps_per_cta: 4,
            ..launch(Target::Sm100a)
        },
        smem: Smem {
            slots: 1,
            mbarriers: 1,
            regions: vec![32768, 32768],
        },
        warps,
        funcs: vec![],
    }
}

#[test]
fn mma_bs_dup() {
    // Scale factors must be duplicated into all four 32-lane partitions (§9.7.16.10.7).
    let (s, t) = (0x1234_5678, 0x0BAD_F00D);
    let keep = scales([s; 4], [t; 4]);
    kept(&keep, RuleId::MmaBsDup);
    completes(&keep);
    // Partition 3 of the A scales holds a value that differs from partition 0 in every byte,
    // so whichever byte (SF ID) the MMA uses, the copies differ.
    let other = !s;
    let differs = |x: u32, y: u32| (0..4).all(|k| (x >> (8 * k)) & 0xFF != (y >> (8 * k)) & 0xFF);
    assert!(differs(lane0(s), lane0(other)));
    flagged(&scales([s, s, s, other], [t; 4]), RuleId::MmaBsDup);
    // The same for the B scales, partition 1.
    assert!(differs(lane0(t), lane0(!t)));
    flagged(&scales([s; 4], [t, !t, t, t]), RuleId::MmaBsDup);
}

#[test]
fn run_time_probes_break_their_rule_at_run_time() {
    // The `run-*` probes (compared with ptxas in drivers/tests/oracle_vs_ptxas.rs) are statically
    // well-formed; each breaks the run-time rule its name says, except the valid K = 96 one.
    let want = [
        ("run-k-explicit-cta1", Some(RuleId::MmaKExplicit)),
        ("run-k96-sm_100a", Some(RuleId::MmaK96Target)),
        ("run-k96-sm_103a-valid", None),
        ("run-mxf4-m256-cta1", Some(RuleId::MmaShapeValid)),
        ("run-mxf4-idesc-reserved", Some(RuleId::IdescReserved)),
        ("run-mxf4-sfid-1", Some(RuleId::MmaBsSfid)),
        ("run-mxf4nvf4-ue4m3-2x", Some(RuleId::MmaBsVec)),
        ("run-mxf4-transpose", Some(RuleId::MmaTransposeKind)),
        (
            "run-tf32-transpose-noswizzle",
            Some(RuleId::MmaTransposeSwz),
        ),
        ("run-f8-transpose-b-n24", Some(RuleId::MmaT8bN)),
        ("run-e2m1-transpose-a", Some(RuleId::MmaTransposeSubbyte)),
        ("run-ws-zcm-shift-17-m32", Some(RuleId::MmaZcmShift)),
        (
            "run-collector-use-unfilled",
            Some(RuleId::MmaCollectorValid),
        ),
    ];
    let ps = probes::probes();
    for (name, rule) in want {
        let p = ps
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("probe {name} missing"));
        assert_eq!(p.breaks, None, "{name} is statically well-formed");
        let r = undefined_rules(&p.program);
        match rule {
            Some(rule) => assert!(r.contains(&rule), "{name}: {r:?} lacks {rule}"),
            // (A probe is not a full pair program: only the K rules are asked about.)
            None => assert!(
                !r.contains(&RuleId::MmaKExplicit) && !r.contains(&RuleId::MmaK96Target),
                "{name}: {r:?}"
            ),
        }
    }
}
