//! The probes' building blocks: launches, programs around a body, descriptors, MMA and
//! commit statements, ld/st forms.

use tcgen05_ir::form::*;
use tcgen05_ir::samples;
use tcgen05_ir::*;

pub(super) const CG: CtaGroup = CtaGroup::One;

/// A launch of `warps` warps, one CTA, on `target` with `.version v`.
pub(super) fn launch(target: Target, v: PtxVersion, warps: u8) -> Launch {
    Launch {
        target,
        ptx_version: v,
        ..samples::launch(warps)
    }
}

/// A well-formed single-warp program around `body`: alloc 128 columns into slot 0, read the
/// address back, the body, dealloc, relinquish.
pub(super) fn wrap(target: Target, v: PtxVersion, body: Vec<Stmt>) -> Program {
    let mut code = vec![Stmt::ObserveAddr { slot: 0 }];
    code.extend(body);
    let smem = Smem {
        slots: 1,
        mbarriers: 1,
        regions: vec![4096, 4096],
    };
    samples::one_warp(launch(target, v, 1), smem, 128, code)
}

/// A no-swizzle, K-major shared-memory descriptor of region `r` (fixed bits 0b001).
pub fn desc(region: u8) -> SmemDesc {
    SmemDesc {
        region,
        offset: 0,
        lbo_enc: 8,
        sbo_enc: 64,
        fixed: 1,
        base_offset: 0,
        lbo_abs: false,
        swizzle: 0,
        reserved: 0,
    }
}

/// The instruction descriptor for a dense kind::f16/tf32/f8f6f4/i8 MMA (reference §2.8 (a)).
pub fn idesc(kind: MmaKind, m: u32, n: u32) -> u32 {
    let (d, a) = match kind {
        MmaKind::F16 => (1, 0),    // D F32, A/B F16
        MmaKind::Tf32 => (1, 2),   // D F32, A/B TF32
        MmaKind::F8f6f4 => (1, 0), // D F32, A/B E4M3
        MmaKind::I8 => (2, 1),     // D S32, A/B S8
        _ => (1, 0),
    };
    (d << 4) | (a << 7) | (a << 10) | ((n >> 3) << 17) | ((m >> 4) << 24)
}

/// A dense `tcgen05.mma.cta_group::1.kind` with A and B in shared memory (regions 0 and 1),
/// D at slot 0 column 0, M=128, N=64.
pub fn mma(kind: MmaKind, enable_input_d: bool) -> Mma {
    Mma {
        form: MmaForm {
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
        a: MmaA::Desc(desc(0)),
        b: desc(1),
        sp_meta: None,
        idesc: idesc(kind, 128, 64),
        scale_a: None,
        scale_b: None,
        disable_output_lane: None,
        enable_input_d,
        scale_input_d: None,
        zero_col_mask: None,
    }
}

/// `tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar 0]`.
pub fn commit() -> Stmt {
    Stmt::Tc(Op::Commit {
        form: CommitForm {
            cta_group: CG,
            arrive_one: true,
            shared_cluster: true,
            multicast: false,
            ty: Ty::B64,
        },
        mbar: 0,
        addr: MbarAddr::Shared,
        cta_mask: None,
    })
}

/// `tcgen05.cp.cta_group::1.<shape>` from region 0 to slot 0.
pub fn cp(shape: CpShape, multicast: Option<CpMulticast>) -> Op {
    Op::Cp {
        form: CpForm {
            cta_group: CG,
            shape,
            multicast,
            dst_fmt: None,
            src_fmt: None,
        },
        taddr: TmemRef::slot(0, 0, 0),
        src: desc(0),
    }
}

pub(super) fn ld_op(form: LdForm, split: Option<u32>, nregs: u16) -> Stmt {
    Stmt::Tc(Op::Ld {
        form,
        taddr: TmemRef::slot(0, 0, 0),
        split,
        nregs,
    })
}

pub(super) fn st_op(form: StForm, split: Option<u32>, nregs: u16) -> Stmt {
    Stmt::Tc(Op::St {
        form,
        taddr: TmemRef::slot(0, 0, 0),
        split,
        nregs,
        seed: 7,
    })
}

pub(super) fn mma_prog(t: Target, v: PtxVersion, m: Mma) -> Program {
    wrap(
        t,
        v,
        vec![
            Stmt::Fill {
                region: 0,
                seed: 1,
                elem: FillElem::Word,
            },
            Stmt::Fill {
                region: 1,
                seed: 2,
                elem: FillElem::Word,
            },
            Stmt::FenceProxyAsync,
            Stmt::MbarInit { bar: 0, count: 1 },
            samples::elect(vec![Stmt::Tc(Op::Mma(Box::new(m))), commit()]),
            samples::mbar_wait(0, 1 << 20),
            samples::fence(FenceKind::AfterThreadSync),
        ],
    )
}

/// Sets the `.cta_group` of every instruction that has one.
pub fn set_cta_group(p: &mut Program, cg: CtaGroup) {
    fn go(b: &mut [Stmt], cg: CtaGroup) {
        for s in b {
            match s {
                Stmt::Tc(op) => match op {
                    Op::Alloc { form, .. } => form.cta_group = cg,
                    Op::Dealloc { form, .. } => form.cta_group = cg,
                    Op::Relinquish { form } => form.cta_group = cg,
                    Op::Commit { form, .. } => form.cta_group = cg,
                    Op::Cp { form, .. } => form.cta_group = cg,
                    Op::Shift { form, .. } => form.cta_group = cg,
                    Op::Mma(m) => m.form.cta_group = cg,
                    _ => {}
                },
                Stmt::If { then, els, .. } => {
                    go(then, cg);
                    go(els, cg);
                }
                Stmt::Loop { body, .. } => go(body, cg),
                _ => {}
            }
        }
    }
    for w in &mut p.warps {
        go(w, cg);
    }
    for f in &mut p.funcs {
        go(&mut f.body, cg);
    }
}
