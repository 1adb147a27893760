//! Small hand-written programs in the shape of the ISA's own examples (reference §3.1 example
//! order: alloc, read the address back, use, dealloc, relinquish). For tests and documentation
//! in every crate; they carry no expectations (those come from the spec, per test).

use crate::form::*;
use crate::program::*;
use crate::qual::*;

/// A launch on sm_100a, PTX 8.6, one CTA of `warps` warps.
pub fn launch(warps: u8) -> Launch {
    Launch {
        target: Target::Sm100a,
        ptx_version: PtxVersion::new(8, 6),
        cluster_size: 1,
        clusters: 1,
        warps_per_cta: warps,
        declare_cluster: false,
    }
}

/// `tcgen05.alloc.cta_group::N.sync.aligned.shared::cta.b32 [slot], ncols`.
pub fn alloc(cg: CtaGroup, slot: u8, ncols: u32) -> Stmt {
    Stmt::Tc(Op::Alloc {
        form: AllocForm {
            cta_group: cg,
            exclusive: false,
            sync: true,
            aligned: true,
            space: Some(StateSpace::SharedCta),
            ty: Ty::B32,
        },
        slot,
        dst_global: false,
        ncols: NCols::imm(ncols),
    })
}

/// `tcgen05.dealloc.cta_group::N.sync.aligned.b32 [slot address], ncols`.
pub fn dealloc(cg: CtaGroup, slot: u8, ncols: u32) -> Stmt {
    Stmt::Tc(Op::Dealloc {
        form: DeallocForm {
            cta_group: cg,
            exclusive: false,
            sync: true,
            aligned: true,
            ty: Ty::B32,
        },
        taddr: TmemRef::slot(slot, 0, 0),
        ncols: NCols::imm(ncols),
    })
}

/// `tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned`.
pub fn relinquish(cg: CtaGroup) -> Stmt {
    Stmt::Tc(Op::Relinquish {
        form: RelinquishForm {
            cta_group: cg,
            sync: true,
            aligned: true,
        },
    })
}

/// `tcgen05.st.sync.aligned.32x32b.xN.b32` at `slot` + (lane, col).
pub fn st(slot: u8, lane: u16, col: u16, num: Num, seed: u32) -> Stmt {
    st_at(
        st_form(LdStShape::S32x32b, num, false),
        TmemRef::slot(slot, lane, col),
        0,
        seed,
    )
}

/// `tcgen05.ld.sync.aligned.32x32b.xN.b32` at `slot` + (lane, col).
pub fn ld(slot: u8, lane: u16, col: u16, num: Num) -> Stmt {
    ld_at(
        ld_form(LdStShape::S32x32b, num),
        TmemRef::slot(slot, lane, col),
        0,
    )
}

/// The form `tcgen05.st.sync.aligned.<shape>.<num>[.unpack::16b].b32`.
pub fn st_form(shape: LdStShape, num: Num, unpack: bool) -> StForm {
    StForm {
        sync: true,
        aligned: true,
        shape,
        num,
        pack: unpack.then_some(Pack::Unpack16b),
        ty: Ty::B32,
    }
}

/// The form `tcgen05.ld.sync.aligned.<shape>.<num>.b32` (no pack, no reduction).
pub fn ld_form(shape: LdStShape, num: Num) -> LdForm {
    LdForm {
        red: false,
        sync: true,
        aligned: true,
        shape,
        num,
        pack: None,
        red_op: None,
        abs: false,
        nan: false,
        ty: Ty::B32,
    }
}

/// The immediate offset of a `.16x32bx2` access (§9.7.16.8.3: the upper half-warp's
/// columns start `split` columns on); other shapes take none.
fn split_of(shape: LdStShape, split: u32) -> Option<u32> {
    (shape == LdStShape::S16x32bx2).then_some(split)
}

/// `tcgen05.st` of `form` at `taddr`, writing the values of `seed`
/// (`values::st_value`), with the whole vector its shape and `.num` take; a `.16x32bx2`
/// store's upper half-warp writes `split` columns on.
pub fn st_at(form: StForm, taddr: TmemRef, split: u32, seed: u32) -> Stmt {
    Stmt::Tc(Op::St {
        form,
        taddr,
        split: split_of(form.shape, split),
        nregs: vec_len(form.shape, form.num).expect("every shape and .num has a length"),
        seed,
    })
}

/// `tcgen05.ld` of `form` at `taddr`, into the whole vector its shape and `.num` take; a
/// `.16x32bx2` load's upper half-warp reads `split` columns on.
pub fn ld_at(form: LdForm, taddr: TmemRef, split: u32) -> Stmt {
    Stmt::Tc(Op::Ld {
        form,
        taddr,
        split: split_of(form.shape, split),
        nregs: vec_len(form.shape, form.num).expect("every shape and .num has a length"),
    })
}

/// `tcgen05.wait::ld` or `wait::st`.
pub fn wait(op: WaitOp) -> Stmt {
    Stmt::Tc(Op::Wait {
        form: WaitForm {
            op,
            cta_group: None,
            sync: true,
            aligned: true,
        },
    })
}

/// `tcgen05.fence::*`.
pub fn fence(kind: FenceKind) -> Stmt {
    Stmt::Tc(Op::Fence { kind })
}

/// `if (elect.sync) { body }`: one elected thread of the warp runs `body`.
pub fn elect(body: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond: Cond::ElectOne,
        then: body,
        els: vec![],
    }
}

/// A bounded wait on phase 0 of mbarrier `bar` of the CTA (`try_wait.parity` 0, at most
/// `max_tries` tries).
pub fn mbar_wait(bar: u8, max_tries: u32) -> Stmt {
    Stmt::MbarWait {
        bar,
        parity: false,
        scope: Scope::Cta,
        max_tries,
    }
}

/// One CTA of one warp (`launch` with one warp) and shared memory `smem`: alloc `ncols`
/// columns of `cta_group::1` into slot 0, `body`, dealloc, relinquish (the ISA example
/// order, reference §3.1).
pub fn one_warp(launch: Launch, smem: Smem, ncols: u32, body: Vec<Stmt>) -> Program {
    let cg = CtaGroup::One;
    let mut code = Vec::with_capacity(body.len() + 3);
    code.push(alloc(cg, 0, ncols));
    code.extend(body);
    code.push(dealloc(cg, 0, ncols));
    code.push(relinquish(cg));
    Program {
        launch,
        smem,
        warps: vec![code],
        funcs: vec![],
    }
}

/// One warp: alloc 32 columns, read the address, st, wait::st, ld, wait::ld, dealloc,
/// relinquish: the canonical non-pipelined same-thread pattern (reference §4.4, row 2).
pub fn single_warp_roundtrip() -> Program {
    one_warp(
        launch(1),
        Smem {
            slots: 1,
            mbarriers: 0,
            regions: vec![],
        },
        32,
        vec![
            Stmt::ObserveAddr { slot: 0 },
            st(0, 0, 0, Num::X2, 0xC0FFEE),
            wait(WaitOp::St),
            ld(0, 0, 0, Num::X2),
            wait(WaitOp::Ld),
        ],
    )
}
