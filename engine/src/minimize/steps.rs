//! The minimizer's reduction steps (passes): each maps the current program to the candidates
//! it tries, in order, biggest reductions first.

use super::tree::{Path, delete, map_stmts, paths, rewrite_all, stmt_of};
use std::collections::HashSet;
use tcgen05_ir::{LdStShape, NCols, Num, Op, Program, Stmt};

fn is_bar(s: &Stmt) -> bool {
    matches!(s, Stmt::BarCta)
}

fn is_cluster_bar(s: &Stmt) -> bool {
    matches!(s, Stmt::ClusterArrive { .. } | Stmt::ClusterWait)
}

/// Removes the k-th CTA barrier (or cluster arrive/wait) of every code body at once: a
/// barrier round only disappears whole, or the remaining barriers would pair differently.
pub(super) fn drop_barrier_rounds(p: &Program) -> Vec<Program> {
    let mut v = Vec::new();
    let all = paths(p);
    let codes = p.warps.len() + p.funcs.len();
    for pred in [is_bar as fn(&Stmt) -> bool, is_cluster_bar] {
        let lists: Vec<Vec<Path>> = (0..codes)
            .map(|code| {
                all.iter()
                    .filter(|(c, path)| *c == code && stmt_of(p, *c, path).is_some_and(pred))
                    .cloned()
                    .collect()
            })
            .collect();
        let rounds = lists.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..rounds {
            let dels: HashSet<Path> = lists.iter().filter_map(|l| l.get(k).cloned()).collect();
            v.push(delete(p, &dels));
        }
    }
    v
}

pub(super) fn shrink_grid(p: &Program) -> Vec<Program> {
    let mut v = Vec::new();
    if p.launch.clusters > 1 {
        let mut q = p.clone();
        q.launch.clusters = 1;
        v.push(q);
        let mut q = p.clone();
        q.launch.clusters -= 1;
        v.push(q);
    }
    let mut cs = p.launch.cluster_size;
    while cs > 1 {
        cs /= 2;
        let mut q = p.clone();
        q.launch.cluster_size = cs;
        v.push(q);
    }
    v
}

pub(super) fn drop_warps(p: &Program) -> Vec<Program> {
    let mut v = Vec::new();
    if p.warps.len() > 1 {
        for k in (0..p.warps.len()).rev() {
            let mut q = p.clone();
            q.warps.remove(k);
            q.launch.warps_per_cta -= 1;
            v.push(q);
        }
    }
    v
}

/// One warp's code moved into another warp (before, then after, its code), leaving the first
/// warp empty: the same statements in fewer warps, so that barrier rounds and the
/// synchronization between the two warps can go.
pub(super) fn merge_warps(p: &Program) -> Vec<Program> {
    let mut v = Vec::new();
    let n = p.warps.len();
    if n < 2 {
        return v;
    }
    for from in (0..n).rev() {
        for into in 0..n {
            if into == from || p.warps[from].is_empty() {
                continue;
            }
            for before in [true, false] {
                let mut q = p.clone();
                let moved = q.warps[from].clone();
                let dst = &mut q.warps[into];
                if before {
                    dst.splice(0..0, moved);
                } else {
                    dst.extend(moved);
                }
                // The source warp stays, empty: every other warp keeps its rank (and lane
                // quarter); `drop_warps` removes it where the ranks do not matter.
                q.warps[from].clear();
                v.push(q);
            }
        }
    }
    v
}

/// Delta debugging over statements: chunks of n/2, n/4, ..., 1.
pub(super) fn drop_statements(p: &Program) -> Vec<Program> {
    let all = paths(p);
    let mut v = Vec::new();
    let mut k = all.len().div_ceil(2).max(1);
    loop {
        for chunk in all.chunks(k) {
            let dels: HashSet<Path> = chunk.iter().cloned().collect();
            v.push(delete(p, &dels));
        }
        if k == 1 {
            break;
        }
        k = k.div_ceil(2);
    }
    v
}

pub(super) fn unwrap(p: &Program) -> Vec<Program> {
    let mut v = map_stmts(p, &mut |s| match s {
        Stmt::If { then, .. } => Some(then.clone()),
        Stmt::Loop { body, .. } => Some(body.clone()),
        _ => None,
    });
    v.extend(map_stmts(p, &mut |s| match s {
        Stmt::If { els, .. } => Some(els.clone()),
        Stmt::Loop { count, body } if *count > 1 => Some(vec![Stmt::Loop {
            count: 1,
            body: body.clone(),
        }]),
        _ => None,
    }));
    if !p.funcs.is_empty() {
        let mut used = false;
        p.walk(&mut |s| used |= matches!(s, Stmt::Call(_)));
        if !used {
            let mut q = p.clone();
            q.funcs.clear();
            v.push(q);
        }
    }
    v
}

pub(super) fn drop_spins(p: &Program) -> Vec<Program> {
    map_stmts(p, &mut |s| match s {
        Stmt::Spin(_) => Some(vec![]),
        _ => None,
    })
}

pub(super) fn simplify_ncols(p: &Program) -> Vec<Program> {
    let mut values: Vec<u32> = Vec::new();
    for op in p.ops() {
        if let Op::Alloc { ncols, .. } | Op::Dealloc { ncols, .. } = op
            && ncols.value > 32
            && !values.contains(&ncols.value)
        {
            values.push(ncols.value);
        }
    }
    values.sort_unstable();
    let mut v = Vec::new();
    for from in values {
        for to in [32, from / 2] {
            if to >= from || to < 32 {
                continue;
            }
            let f = move |op: &Op| -> Option<Op> {
                let mut op = op.clone();
                match &mut op {
                    Op::Alloc { ncols, .. } | Op::Dealloc { ncols, .. } if ncols.value == from => {
                        *ncols = NCols {
                            value: to,
                            form: ncols.form,
                        };
                        Some(op)
                    }
                    _ => None,
                }
            };
            v.extend(rewrite_all(p, &f));
        }
    }
    v
}

pub(super) fn simplify_shapes(p: &Program) -> Vec<Program> {
    let target =
        |shape: &mut LdStShape, num: &mut Num, nregs: &mut u16, split: &mut Option<u32>| -> bool {
            let before = (*shape, *num);
            if *num != Num::X1 {
                *num = Num::X1;
            } else if *shape != LdStShape::S32x32b {
                *shape = LdStShape::S32x32b;
                *split = None;
            }
            *nregs = tcgen05_ir::vec_len(*shape, *num).unwrap_or(1);
            before != (*shape, *num)
        };
    let mut v = Vec::new();
    let lds = p
        .ops()
        .into_iter()
        .filter(|o| matches!(o, Op::Ld { .. } | Op::St { .. }))
        .count();
    for k in 0..lds {
        let counter = std::cell::Cell::new(0usize);
        let f = |op: &Op| -> Option<Op> {
            let mut op = op.clone();
            let (shape, num, nregs, split) = match &mut op {
                Op::Ld {
                    form, nregs, split, ..
                } => (&mut form.shape, &mut form.num, nregs, split),
                Op::St {
                    form, nregs, split, ..
                } => (&mut form.shape, &mut form.num, nregs, split),
                _ => return None,
            };
            let i = counter.get();
            counter.set(i + 1);
            if i != k {
                return None;
            }
            target(shape, num, nregs, split).then_some(op)
        };
        v.extend(rewrite_all(p, &f));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minimize::tree::delete;
    use tcgen05_ir::samples::single_warp_roundtrip;

    #[test]
    fn deleting_every_path_leaves_empty_code() {
        let p = single_warp_roundtrip();
        let all: HashSet<Path> = paths(&p).into_iter().collect();
        assert_eq!(all.len(), p.size());
        assert!(delete(&p, &all).warps[0].is_empty());
    }

    #[test]
    fn merging_warps_keeps_every_statement_and_every_rank() {
        let mut p = single_warp_roundtrip();
        p.warps.push(vec![Stmt::Spin(3)]);
        p.launch.warps_per_cta = 2;
        let c = merge_warps(&p);
        // Warp 1 into warp 0 (before, after), warp 0 into warp 1 (before, after).
        assert_eq!(c.len(), 4);
        for q in &c {
            assert_eq!(q.warps.len(), 2);
            assert_eq!(q.size(), p.size());
            assert!(q.warps.iter().any(Vec::is_empty));
        }
        assert_eq!(c[0].warps[0].first(), Some(&Stmt::Spin(3)));
        assert_eq!(c[1].warps[0].last(), Some(&Stmt::Spin(3)));
    }

    #[test]
    fn nested_statements_are_addressed_and_unwrapped() {
        let mut p = single_warp_roundtrip();
        let inner = p.warps[0].clone();
        p.warps[0] = vec![Stmt::Loop {
            count: 3,
            body: vec![Stmt::If {
                cond: tcgen05_ir::Cond::LaneLt(4),
                then: inner,
                els: vec![Stmt::Spin(1)],
            }],
        }];
        assert_eq!(paths(&p).len(), p.size());
        // Unwrapping the loop and the if gives a program with the original statements on top.
        let c = unwrap(&p);
        assert!(
            c.iter()
                .any(|q| matches!(q.warps[0].first(), Some(Stmt::If { .. })))
        );
        assert!(drop_spins(&p).iter().all(|q| q.size() == p.size() - 1));
    }
}
