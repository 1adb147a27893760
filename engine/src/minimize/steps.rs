//! The minimizer's reduction steps (passes): each maps the current program to the candidates
//! it tries, in order, biggest reductions first.

use super::tree::{Path, delete, map_stmts, paths};
use std::collections::HashSet;
use tcgen05_ir::{Op, Program, Stmt};

/// The cluster shape declared (`.reqnctapercluster`, `.explicitcluster`) where the launch
/// has clusters of several CTAs and the PTX does not say so: a minimized PTX then carries its
/// launch's cluster, and `check` on it sees each CTA pair (GEN-PEER-EXISTS, GEN-PEER-ACTIVE,
/// §9.7.16.5) instead of one CTA. Only ever from undeclared to declared, so the step ends.
pub(super) fn declare_cluster(p: &Program) -> Vec<Program> {
    if p.launch.cluster_size < 2 || p.launch.declare_cluster {
        return vec![];
    }
    let mut q = p.clone();
    q.launch.declare_cluster = true;
    vec![q]
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

/// Whether `s` synchronizes warps: a CTA barrier, a cluster arrive or wait.
fn is_barrier(s: &Stmt) -> bool {
    matches!(
        s,
        Stmt::BarCta | Stmt::ClusterArrive { .. } | Stmt::ClusterWait
    )
}

/// A code body cut at its top-level barriers: the statements between them (one more list
/// than barriers) and the barriers.
fn phases(body: &[Stmt]) -> (Vec<Vec<Stmt>>, Vec<Stmt>) {
    let mut segs = vec![Vec::new()];
    let mut bars = Vec::new();
    for s in body {
        if is_barrier(s) {
            bars.push(s.clone());
            segs.push(Vec::new());
        } else if let Some(last) = segs.last_mut() {
            last.push(s.clone());
        }
    }
    (segs, bars)
}

/// The code of warp `from` merged into the code of warp `into`, `from`'s statements first
/// (`before`) or last. Where both meet the same barriers in the same order (or one meets
/// the first of the other's), the merge goes phase by phase: what each warp runs between its k-th and (k+1)-th barrier is put between
/// the merged code's k-th and (k+1)-th barrier, so every statement keeps its place relative
/// to the barriers (what the barriers ordered stays ordered). Otherwise `from`'s whole code
/// goes before or after `into`'s.
fn merged(from: &[Stmt], into: &[Stmt], before: bool) -> Vec<Stmt> {
    let (mut fs, fb) = phases(from);
    let (mut is, ib) = phases(into);
    let (mut first, mut second) = (from.to_vec(), into.to_vec());
    // The same barriers, or one warp's a prefix of the other's (a warp that leaves after its
    // last arrive): phase by phase over the longer list.
    if fb.starts_with(&ib) || ib.starts_with(&fb) {
        let bars = if fb.len() >= ib.len() { fb } else { ib };
        fs.resize(bars.len() + 1, Vec::new());
        is.resize(bars.len() + 1, Vec::new());
        let mut out = Vec::with_capacity(from.len() + into.len());
        let mut bars = bars.into_iter();
        for (k, (f, i)) in fs.into_iter().zip(is).enumerate() {
            if k > 0 {
                out.extend(bars.next());
            }
            let (a, b) = if before { (f, i) } else { (i, f) };
            out.extend(a);
            out.extend(b);
        }
        return out;
    }
    if !before {
        std::mem::swap(&mut first, &mut second);
    }
    first.extend(second);
    first
}

/// One warp's code moved into another warp ([`merged`]: before, then after, its code),
/// leaving the first warp empty: the same statements in fewer warps, so that barrier rounds
/// and the synchronization between the two warps can go.
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
            // The moved statements as they are, and with their lds and sts moved to the
            // lanes the receiving warp may access (LDST-LANE-QUARTER, §9.7.16.8.3: warp w
            // reaches lanes 32·(w mod 4) ..), where the quarters differ.
            let mut sources = vec![p.warps[from].clone()];
            if from % 4 != into % 4 {
                let mut moved = p.warps[from].clone();
                rehome(&mut moved, (from % 4) as u16, (into % 4) as u16);
                if moved != p.warps[from] {
                    sources.push(moved);
                }
            }
            for (src, before) in sources.iter().flat_map(|w| [(w, true), (w, false)]) {
                let mut q = p.clone();
                q.warps[into] = merged(src, &p.warps[into], before);
                // The source warp stays, empty: every other warp keeps its rank (and lane
                // quarter); `drop_warps` removes it where the ranks do not matter.
                q.warps[from].clear();
                v.push(q);
            }
        }
    }
    v
}

/// Moves the lane of every ld and st in `body` that is in lane quarter `from` to the same
/// lane of quarter `to` (the ld/st address's lane field, §9.7.16.8.3).
fn rehome(body: &mut [Stmt], from: u16, to: u16) {
    for s in body {
        match s {
            Stmt::Tc(Op::Ld { taddr, .. } | Op::St { taddr, .. }) if taddr.lane / 32 == from => {
                taddr.lane = taddr.lane % 32 + 32 * to;
            }
            Stmt::If { then, els, .. } => {
                rehome(then, from, to);
                rehome(els, from, to);
            }
            Stmt::Loop { body, .. } => rehome(body, from, to),
            _ => {}
        }
    }
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

    /// Two warps that meet at one barrier.sync merge phase by phase: what each ran before
    /// the barrier stays before it, what each ran after stays after it.
    #[test]
    fn warps_that_share_barriers_merge_phase_by_phase() {
        let mut p = single_warp_roundtrip();
        p.warps = vec![
            vec![Stmt::Spin(1), Stmt::BarCta, Stmt::Spin(2)],
            vec![Stmt::Spin(3), Stmt::BarCta, Stmt::Spin(4)],
        ];
        p.launch.warps_per_cta = 2;
        let c = merge_warps(&p);
        // Warp 1 into warp 0, before, then after warp 0's statements of each phase.
        assert_eq!(
            c[0].warps[0],
            [
                Stmt::Spin(3),
                Stmt::Spin(1),
                Stmt::BarCta,
                Stmt::Spin(4),
                Stmt::Spin(2)
            ]
        );
        assert_eq!(
            c[1].warps[0],
            [
                Stmt::Spin(1),
                Stmt::Spin(3),
                Stmt::BarCta,
                Stmt::Spin(2),
                Stmt::Spin(4)
            ]
        );
        assert!(c[0].warps[1].is_empty());
        // A warp that leaves after its arrive (its barriers a prefix of the other's) also
        // merges phase by phase: warp 0 into warp 1 keeps warp 0's last phase after the wait.
        p.warps = vec![
            vec![
                Stmt::Spin(1),
                Stmt::ClusterArrive { relaxed: false },
                Stmt::ClusterWait,
                Stmt::Spin(2),
            ],
            vec![Stmt::Spin(3), Stmt::ClusterArrive { relaxed: false }],
        ];
        let c = merge_warps(&p);
        // c[2]: warp 0 into warp 1, warp 0's statements first in each phase.
        assert_eq!(
            c[2].warps[1],
            [
                Stmt::Spin(1),
                Stmt::Spin(3),
                Stmt::ClusterArrive { relaxed: false },
                Stmt::ClusterWait,
                Stmt::Spin(2)
            ]
        );
        p.warps = vec![
            vec![Stmt::Spin(1), Stmt::BarCta, Stmt::Spin(2)],
            vec![Stmt::Spin(3), Stmt::BarCta, Stmt::Spin(4)],
        ];
        // Different barriers: the whole code goes before or after.
        p.warps[1].retain(|s| *s != Stmt::BarCta);
        let c = merge_warps(&p);
        assert_eq!(
            c[0].warps[0],
            [
                Stmt::Spin(3),
                Stmt::Spin(4),
                Stmt::Spin(1),
                Stmt::BarCta,
                Stmt::Spin(2)
            ]
        );
    }

    #[test]
    fn merging_warps_keeps_every_statement_and_every_rank() {
        let mut p = single_warp_roundtrip();
        p.warps.push(vec![Stmt::Spin(3)]);
        p.launch.warps_per_cta = 2;
        let c = merge_warps(&p);
        // Warp 1 into warp 0 (before, after), warp 0 into warp 1 (before, after), and again
        // with warp 0's st and ld moved to lane quarter 1.
        assert_eq!(c.len(), 6);
        for q in &c {
            assert_eq!(q.warps.len(), 2);
            assert_eq!(q.size(), p.size());
            assert!(q.warps.iter().any(Vec::is_empty));
        }
        assert_eq!(c[0].warps[0].first(), Some(&Stmt::Spin(3)));
        assert_eq!(c[1].warps[0].last(), Some(&Stmt::Spin(3)));
    }

    /// Warp 1's ld of lane quarter 1 merged into warp 0 also comes as the same ld of lane
    /// quarter 0, the lanes warp 0 may access (LDST-LANE-QUARTER); an ld of another quarter
    /// stays where it is.
    #[test]
    fn merged_lds_move_to_the_receiving_warps_lane_quarter() {
        use tcgen05_ir::{Num, samples};
        let mut p = single_warp_roundtrip();
        p.warps = vec![
            vec![Stmt::Spin(1)],
            vec![
                samples::ld(0, 33, 4, Num::X1),
                samples::ld(0, 64, 4, Num::X1),
            ],
        ];
        p.launch.warps_per_cta = 2;
        let c = merge_warps(&p);
        // Warp 1 into warp 0 as it is (before, after), rehomed (before, after), then warp 0
        // into warp 1 (before, after).
        assert_eq!(c.len(), 6);
        assert_eq!(
            c[2].warps[0],
            [
                samples::ld(0, 1, 4, Num::X1),
                samples::ld(0, 64, 4, Num::X1),
                Stmt::Spin(1)
            ]
        );
        assert_eq!(c[0].warps[0][0], samples::ld(0, 33, 4, Num::X1));
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
