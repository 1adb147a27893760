//! Helpers shared by the mutators: picking a path or an op, op predicates.

use super::*;

pub(super) fn pick_path(c: &mut dyn Choices, paths: &[Path]) -> Option<Path> {
    if paths.is_empty() {
        None
    } else {
        Some(paths[c.below(paths.len() as u32) as usize].clone())
    }
}

pub(super) fn pick_op(
    p: &Program,
    c: &mut dyn Choices,
    pred: &dyn Fn(&Op) -> bool,
) -> Option<Path> {
    pick_path(c, &walk::find_ops(p, pred))
}

pub(super) fn is_red_ld(op: &Op) -> bool {
    matches!(op, Op::Ld { form, .. } if form.red)
}

pub(super) fn is_plain_ld(op: &Op) -> bool {
    matches!(op, Op::Ld { form, .. } if !form.red)
}

pub(super) fn is_alloc(op: &Op) -> bool {
    matches!(op, Op::Alloc { .. })
}

pub(super) fn is_st(op: &Op) -> bool {
    matches!(op, Op::St { .. })
}

pub(super) fn is_mma(op: &Op, ws: bool) -> bool {
    matches!(op, Op::Mma(m) if m.form.ws == ws)
}

pub(super) fn is_wait(op: &Op, w: WaitOp) -> bool {
    matches!(op, Op::Wait { form } if form.op == w)
}

pub(super) fn with_op(
    p: &mut Program,
    c: &mut dyn Choices,
    pred: &dyn Fn(&Op) -> bool,
    f: &mut dyn FnMut(&mut Op, &mut dyn Choices),
) -> bool {
    match pick_op(p, c, pred) {
        Some(path) => {
            f(walk::op_mut(p, &path), c);
            true
        }
        None => false,
    }
}

/// The top-level index of the first (alloc-containing) warp's statement matching `pred`.
pub(super) fn alloc_warp(p: &Program) -> Option<usize> {
    p.warps
        .iter()
        .position(|w| w.iter().any(|s| matches!(s, Stmt::Tc(Op::Alloc { .. }))))
}
