//! Constructors of well-formed statements: every qualifier set as the syntax lines of
//! reference §3 require (`.sync.aligned` on alloc/dealloc/relinquish/ld/st/wait, GEN-SYNC-QUAL;
//! `.b32` on alloc/dealloc/ld/st, LDST-TYPE; `.mbarrier::arrive::one` and `.b64` on commit,
//! COMMIT-COMPLETION).

use tcgen05_ir::form::*;
use tcgen05_ir::*;

// The well-formed alloc, dealloc, relinquish, st form and wait constructors are the IR's own
// (same qualifiers: `.sync.aligned`, `.shared::cta`, `.b32`); they build syntax, not legality.
pub use tcgen05_ir::samples::{alloc, dealloc, relinquish, st_form, wait};

/// `tcgen05.fence::before_thread_sync`.
pub fn fence_before() -> Stmt {
    Stmt::Tc(Op::Fence {
        kind: FenceKind::BeforeThreadSync,
    })
}

/// `tcgen05.fence::after_thread_sync`.
pub fn fence_after() -> Stmt {
    Stmt::Tc(Op::Fence {
        kind: FenceKind::AfterThreadSync,
    })
}

/// A well-formed ld form (not `.red`).
pub fn ld_form(shape: LdStShape, num: Num, pack: bool) -> LdForm {
    LdForm {
        red: false,
        sync: true,
        aligned: true,
        shape,
        num,
        pack: pack.then_some(Pack::Pack16b),
        red_op: None,
        abs: false,
        nan: false,
        ty: Ty::B32,
    }
}

/// `tcgen05.ld` of `form` at `taddr`.
pub fn ld(form: LdForm, taddr: TmemRef, split: Option<u32>) -> Stmt {
    let nregs = vec_len(form.shape, form.num).unwrap_or(1);
    Stmt::Tc(Op::Ld {
        form,
        taddr,
        split,
        nregs,
    })
}

/// `tcgen05.st` of `form` at `taddr` with values from `seed`.
pub fn st(form: StForm, taddr: TmemRef, split: Option<u32>, seed: u32) -> Stmt {
    let nregs = vec_len(form.shape, form.num).unwrap_or(1);
    Stmt::Tc(Op::St {
        form,
        taddr,
        split,
        nregs,
        seed,
    })
}

/// `tcgen05.commit.cta_group::N.mbarrier::arrive::one{.shared::cluster}.b64 [mbar]`.
pub fn commit(cg: CtaGroup, mbar: u8, shared_cluster: bool) -> Stmt {
    Stmt::Tc(Op::Commit {
        form: CommitForm {
            cta_group: cg,
            arrive_one: true,
            shared_cluster,
            multicast: false,
            ty: Ty::B64,
        },
        mbar,
        addr: MbarAddr::Shared,
        cta_mask: None,
    })
}

/// A bounded wait for phase 0 of `bar` to complete. The bound (2^20 tries) is far above any
/// legitimate completion time and only keeps a broken target from hanging the harness.
pub fn mbar_wait(bar: u8, scope: Scope) -> Stmt {
    Stmt::MbarWait {
        bar,
        parity: false,
        scope,
        max_tries: 1 << 20,
    }
}

/// `if (lane == 0) { init(bar, 1); fence.mbarrier_init }`.
pub fn mbar_init_one(bar: u8) -> Stmt {
    mbar_init_by(bar, 0)
}

/// `if (lane == n) { init(bar, 1); fence.mbarrier_init }`: one thread of a full warp inits
/// the mbarrier (PTX ISA §9.7.13.15.9, `mbarrier.init`, by any one thread); a lane other than
/// 0 makes the program tell `%laneid == n` apart from `%laneid == 0` (and from no lane).
pub fn mbar_init_by(bar: u8, lane: u8) -> Stmt {
    Stmt::If {
        cond: Cond::LaneEq(lane),
        then: vec![Stmt::MbarInit { bar, count: 1 }, Stmt::FenceMbarInit],
        els: vec![],
    }
}

/// TMEM columns one repetition of an ld/st shape covers in a lane (reference §2.6).
pub fn cols_per_rep(shape: LdStShape) -> u32 {
    match shape {
        LdStShape::S32x32b | LdStShape::S16x32bx2 => 1,
        LdStShape::S16x64b => 2,
        LdStShape::S16x128b => 4,
        LdStShape::S16x256b => 8,
        // Not a shape (LDST-SHAPE near-misses only): two columns, as its name says.
        LdStShape::S32x64b => 2,
    }
}

/// Whether the shape covers 16 lanes (so its lane offset in the quarter is 0 or 16).
pub fn is_16_lane(shape: LdStShape) -> bool {
    !matches!(shape, LdStShape::S32x32b | LdStShape::S32x64b)
}
