//! Reduction steps that remove a group of related statements at once. The minimizer keeps a
//! candidate only if it breaks no rule the original keeps, so a statement whose removal alone
//! would break one (an alloc without its dealloc, a commit without the wait on its mbarrier,
//! one warp's barrier without the others') can only go together with its partners:
//!
//! - an allocation: the alloc into a slot, the deallocs of its address and the reads of the
//!   slot (ALLOC-FREE-BEFORE-EXIT, DEALLOC-TADDR-PREV, reference §3.1), then with every
//!   instruction that accesses the allocation too;
//! - an mbarrier: its init, arrives, waits and the commits to it (COMMIT-ARRIVE, reference
//!   §3.9), then with the `fence.mbarrier_init` too;
//! - every `relinquish_alloc_permit` (reference §3.1);
//! - a barrier round: the k-th `barrier.sync` of every code body, or the k-th
//!   `barrier.cluster.arrive` and `.wait` pair, first with the `tcgen05.fence::before_thread_sync`
//!   just before it and the `::after_thread_sync` just after it (the fences order tcgen05
//!   operations across that synchronization only, reference §3.8), then alone.

use super::tree::{Path, delete, delete_where, paths_where, sibling, stmt_of};
use std::collections::HashSet;
use tcgen05_ir::{FenceKind, Op, Program, Stmt, TBase};

/// Whether `s` makes or frees the allocation whose address is in `slot`, or reads the slot.
fn owns_slot(s: &Stmt, slot: u8) -> bool {
    match s {
        Stmt::Tc(Op::Alloc { slot: k, .. }) | Stmt::ObserveAddr { slot: k } => *k == slot,
        Stmt::Tc(Op::Dealloc { taddr, .. }) => taddr.base == TBase::Slot(slot),
        _ => false,
    }
}

/// Whether `s` accesses TMEM through the address in `slot`.
fn uses_slot(s: &Stmt, slot: u8) -> bool {
    matches!(s, Stmt::Tc(op) if op.tmem_refs().iter().any(|t| t.base == TBase::Slot(slot)))
}

/// Whether `s` initializes, arrives on or waits for mbarrier `bar`, or commits to it.
fn on_mbarrier(s: &Stmt, bar: u8) -> bool {
    match s {
        Stmt::MbarInit { bar: b, .. }
        | Stmt::MbarArrive { bar: b, .. }
        | Stmt::MbarWait { bar: b, .. }
        | Stmt::Tc(Op::Commit { mbar: b, .. }) => *b == bar,
        _ => false,
    }
}

/// Allocations, mbarriers and permits removed whole (see the module documentation).
pub(super) fn drop_resources(p: &Program) -> Vec<Program> {
    let mut v = Vec::new();
    for slot in 0..p.smem.slots {
        v.extend(delete_where(p, &|s| owns_slot(s, slot)));
        v.extend(delete_where(p, &|s| {
            owns_slot(s, slot) || uses_slot(s, slot)
        }));
    }
    for bar in 0..p.smem.mbarriers {
        v.extend(delete_where(p, &|s| on_mbarrier(s, bar)));
    }
    v.extend(delete_where(p, &|s| {
        matches!(s, Stmt::FenceMbarInit) || (0..p.smem.mbarriers).any(|b| on_mbarrier(s, b))
    }));
    v.extend(delete_where(p, &|s| {
        matches!(s, Stmt::Tc(Op::Relinquish { .. }))
    }));
    v
}

/// The paths `pred` holds for, per code body (warps first, then functions).
fn per_code(p: &Program, pred: &dyn Fn(&Stmt) -> bool) -> Vec<Vec<Path>> {
    let all = paths_where(p, pred);
    (0..p.warps.len() + p.funcs.len())
        .map(|c| all.iter().filter(|x| x.0 == c).cloned().collect())
        .collect()
}

fn is_fence(p: &Program, at: &Path, kind: FenceKind) -> bool {
    matches!(stmt_of(p, at.0, &at.1), Some(Stmt::Tc(Op::Fence { kind: k })) if *k == kind)
}

/// Removes barrier rounds whole: the k-th `barrier.sync` of every code body, or its k-th
/// cluster arrive and wait (a round only disappears whole, or the remaining barriers would
/// pair differently); first with the fences around it, then alone.
pub(super) fn drop_barrier_rounds(p: &Program) -> Vec<Program> {
    let mut v = Vec::new();
    let bars = per_code(p, &|s| matches!(s, Stmt::BarCta));
    let arrives = per_code(p, &|s| matches!(s, Stmt::ClusterArrive { .. }));
    let waits = per_code(p, &|s| matches!(s, Stmt::ClusterWait));
    let rounds = bars.iter().map(Vec::len).max().unwrap_or(0);
    for k in 0..rounds {
        let round: Vec<(Path, Path)> = bars
            .iter()
            .filter_map(|l| l.get(k))
            .map(|x| (x.clone(), x.clone()))
            .collect();
        push_round(p, &round, &mut v);
    }
    let rounds = arrives
        .iter()
        .chain(&waits)
        .map(Vec::len)
        .max()
        .unwrap_or(0);
    for k in 0..rounds {
        let round: Vec<(Path, Path)> = arrives
            .iter()
            .zip(&waits)
            .filter_map(|(a, w)| match (a.get(k), w.get(k)) {
                (Some(a), Some(w)) => Some((a.clone(), w.clone())),
                (Some(x), None) | (None, Some(x)) => Some((x.clone(), x.clone())),
                (None, None) => None,
            })
            .collect();
        push_round(p, &round, &mut v);
    }
    v
}

/// `p` without any cluster barrier: every `barrier.cluster.arrive` with the
/// `fence::before_thread_sync` just before it, every `barrier.cluster.wait` with the
/// `fence::after_thread_sync` just after it; `None` where it has none.
pub(super) fn without_cluster_barriers(p: &Program) -> Option<Program> {
    let arrives = paths_where(p, &|s| matches!(s, Stmt::ClusterArrive { .. }));
    let waits = paths_where(p, &|s| matches!(s, Stmt::ClusterWait));
    if arrives.is_empty() && waits.is_empty() {
        return None;
    }
    let mut dels: HashSet<Path> = HashSet::new();
    for a in &arrives {
        dels.extend(sibling(p, a, true).filter(|x| is_fence(p, x, FenceKind::BeforeThreadSync)));
    }
    for w in &waits {
        dels.extend(sibling(p, w, false).filter(|x| is_fence(p, x, FenceKind::AfterThreadSync)));
    }
    dels.extend(arrives);
    dels.extend(waits);
    Some(delete(p, &dels))
}

/// The candidates without one round, each (first, last) statement pair of one code body:
/// with the `fence::before_thread_sync` just before its first statement and the
/// `fence::after_thread_sync` just after its last, then without the fences.
fn push_round(p: &Program, round: &[(Path, Path)], v: &mut Vec<Program>) {
    let bare: HashSet<Path> = round
        .iter()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    let mut fenced = bare.clone();
    for (first, last) in round {
        fenced.extend(
            sibling(p, first, true).filter(|x| is_fence(p, x, FenceKind::BeforeThreadSync)),
        );
        fenced
            .extend(sibling(p, last, false).filter(|x| is_fence(p, x, FenceKind::AfterThreadSync)));
    }
    if fenced.len() > bare.len() {
        v.push(delete(p, &fenced));
    }
    v.push(delete(p, &bare));
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::samples::{alloc, fence, single_warp_roundtrip};
    use tcgen05_ir::{CtaGroup, Scope};

    /// A two-warp program whose warps meet at one barrier.sync, each behind a
    /// before_thread_sync fence and ahead of an after_thread_sync fence.
    fn fenced_barrier() -> Program {
        let mut p = single_warp_roundtrip();
        let round = vec![
            fence(FenceKind::BeforeThreadSync),
            Stmt::BarCta,
            fence(FenceKind::AfterThreadSync),
        ];
        p.warps = vec![round.clone(), round];
        p.launch.warps_per_cta = 2;
        p
    }

    #[test]
    fn a_barrier_round_goes_whole_with_its_fences_first() {
        let p = fenced_barrier();
        let c = drop_barrier_rounds(&p);
        assert_eq!(c.len(), 2);
        // With the fences: nothing is left.
        assert!(c[0].warps.iter().all(Vec::is_empty));
        // Alone: both warps lose their barrier and keep both fences.
        for w in &c[1].warps {
            assert_eq!(w.len(), 2);
            assert!(!w.contains(&Stmt::BarCta));
        }
    }

    #[test]
    fn a_cluster_round_is_an_arrive_and_its_wait() {
        let mut p = single_warp_roundtrip();
        p.warps = vec![vec![
            Stmt::ClusterArrive { relaxed: false },
            Stmt::ClusterWait,
            Stmt::Spin(1),
            Stmt::ClusterArrive { relaxed: false },
            Stmt::ClusterWait,
        ]];
        let c = drop_barrier_rounds(&p);
        assert_eq!(c.len(), 2);
        // Each candidate keeps one whole round: an arrive, then a wait.
        assert_eq!(c[0].warps[0][0], Stmt::Spin(1));
        assert_eq!(c[0].warps[0][1..], p.warps[0][3..]);
        assert_eq!(c[1].warps[0], p.warps[0][..3]);
    }

    #[test]
    fn cluster_barriers_go_with_their_fences() {
        let mut p = single_warp_roundtrip();
        let body = p.warps[0].clone();
        p.warps[0] = vec![
            fence(FenceKind::BeforeThreadSync),
            Stmt::ClusterArrive { relaxed: false },
            Stmt::ClusterWait,
            fence(FenceKind::AfterThreadSync),
        ];
        p.warps[0].extend(body.clone());
        p.warps[0].push(Stmt::ClusterArrive { relaxed: true });
        // A fence not next to a barrier stays.
        p.warps[0].push(fence(FenceKind::BeforeThreadSync));
        p.warps[0].push(Stmt::ClusterWait);
        let q = without_cluster_barriers(&p).expect("the program has cluster barriers");
        let mut expected = body;
        expected.push(fence(FenceKind::BeforeThreadSync));
        assert_eq!(q.warps[0], expected);
        assert_eq!(without_cluster_barriers(&q), None);
    }

    #[test]
    fn an_allocation_goes_with_its_deallocs_and_then_with_its_users() {
        let p = single_warp_roundtrip();
        let allocs = |q: &Program| {
            q.ops()
                .iter()
                .filter(|o| matches!(o, Op::Alloc { .. } | Op::Dealloc { .. }))
                .count()
        };
        assert!(allocs(&p) >= 2, "the sample allocates and frees");
        let c = drop_resources(&p);
        // Slot 0's alloc and dealloc go together; then every access of it goes too.
        let owned = &c[0];
        let mut expected = p;
        expected.warps[0].retain(|s| {
            !matches!(
                s,
                Stmt::Tc(Op::Alloc { .. } | Op::Dealloc { .. }) | Stmt::ObserveAddr { .. }
            )
        });
        assert_eq!(allocs(owned), 0);
        assert_eq!(owned, &expected);
        let used = &c[1];
        assert!(
            used.ops()
                .iter()
                .all(|o| o.tmem_refs().iter().all(|t| t.base != TBase::Slot(0)))
        );
    }

    #[test]
    fn an_mbarrier_goes_with_its_init_commit_and_wait() {
        let mut p = single_warp_roundtrip();
        p.smem.mbarriers = 1;
        p.warps[0] = vec![
            Stmt::MbarInit { bar: 0, count: 1 },
            alloc(CtaGroup::One, 0, 32),
            Stmt::MbarWait {
                bar: 0,
                parity: false,
                scope: Scope::Cta,
                max_tries: 8,
            },
            Stmt::MbarArrive { bar: 0, cta: None },
        ];
        let c = drop_resources(&p);
        assert!(
            c.iter()
                .any(|q| q.warps[0] == [alloc(CtaGroup::One, 0, 32)]),
            "a candidate keeps only the alloc"
        );
    }
}
