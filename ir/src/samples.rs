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
    let shape = LdStShape::S32x32b;
    Stmt::Tc(Op::St {
        form: StForm {
            sync: true,
            aligned: true,
            shape,
            num,
            pack: None,
            ty: Ty::B32,
        },
        taddr: TmemRef::slot(slot, lane, col),
        split: None,
        nregs: vec_len(shape, num).expect("valid"),
        seed,
    })
}

/// `tcgen05.ld.sync.aligned.32x32b.xN.b32` at `slot` + (lane, col).
pub fn ld(slot: u8, lane: u16, col: u16, num: Num) -> Stmt {
    let shape = LdStShape::S32x32b;
    Stmt::Tc(Op::Ld {
        form: LdForm {
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
        },
        taddr: TmemRef::slot(slot, lane, col),
        split: None,
        nregs: vec_len(shape, num).expect("valid"),
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

/// One warp: alloc 32 columns, read the address, st, wait::st, ld, wait::ld, dealloc,
/// relinquish: the canonical non-pipelined same-thread pattern (reference §4.4, row 2).
pub fn single_warp_roundtrip() -> Program {
    let cg = CtaGroup::One;
    Program {
        launch: launch(1),
        smem: Smem {
            slots: 1,
            mbarriers: 0,
            regions: vec![],
        },
        warps: vec![vec![
            alloc(cg, 0, 32),
            Stmt::ObserveAddr { slot: 0 },
            st(0, 0, 0, Num::X2, 0xC0FFEE),
            wait(WaitOp::St),
            ld(0, 0, 0, Num::X2),
            wait(WaitOp::Ld),
            dealloc(cg, 0, 32),
            relinquish(cg),
        ]],
        funcs: vec![],
    }
}
