//! Mutators of dynamic-UB rules (reference §6): the run is undefined.

use super::*;

/// GEN-ALIGNED-CONVERGENT: an st (or the alloc) under a lane-divergent branch.
pub(super) fn m_aligned_convergent(p: &mut Program, c: &mut dyn Choices) -> bool {
    let alloc = c.percent(30);
    let pred: &dyn Fn(&Op) -> bool = if alloc { &is_alloc } else { &is_st };
    let Some(path) = pick_op(p, c, pred) else {
        return false;
    };
    let s = walk::get_mut(p, &path);
    let inner = std::mem::replace(s, Stmt::Spin(0));
    *s = Stmt::If {
        cond: Cond::LaneLt(16),
        then: vec![inner],
        els: vec![],
    };
    true
}

/// GEN-NO-EXITED-THREAD: one lane of the allocating warp exits before the dealloc (after the
/// last barrier, so no barrier waits for it).
pub(super) fn m_exited_thread(p: &mut Program, c: &mut dyn Choices) -> bool {
    let Some(path) = pick_op(p, c, &|op| matches!(op, Op::Dealloc { .. })) else {
        return false;
    };
    if path.idx.len() != 1 {
        return false;
    }
    let (list, i) = walk::parent_mut(p, &path);
    list.insert(
        i,
        Stmt::If {
            cond: Cond::LaneEq(31),
            then: vec![Stmt::Exit],
            els: vec![],
        },
    );
    true
}

/// ALLOC-NCOLS-UNIFORM: nCols in a register that differs between lanes.
pub(super) fn m_ncols_uniform(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Alloc { .. }), &mut |op, _| {
        if let Op::Alloc { ncols, .. } = op {
            ncols.form = NColsForm::RegDivergent;
        }
    })
}

/// ALLOC-DST-SHARED: a generic `dst` that points at global memory.
pub(super) fn m_dst_shared(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Alloc { .. }), &mut |op, _| {
        if let Op::Alloc {
            form, dst_global, ..
        } = op
        {
            form.space = None;
            *dst_global = true;
        }
    })
}

/// LDST-TADDR-UNIFORM: threads of the warp pass different taddr.
pub(super) fn m_taddr_uniform(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| matches!(op, Op::Ld { .. } | Op::St { .. }),
        &mut |op, _| {
            if let Op::Ld { taddr, .. } | Op::St { taddr, .. } = op {
                taddr.divergent = true;
            }
        },
    )
}

/// COMMIT-MBAR-WINDOW: the commit's mbarrier address lies in global memory.
pub(super) fn m_mbar_window(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Commit { .. }), &mut |op, _| {
        if let Op::Commit { form, addr, .. } = op {
            form.shared_cluster = false;
            *addr = MbarAddr::GlobalUb;
        }
    })
}
