//! Mutators of dynamic rules (reference §6): allocator lifecycle and memory-consistency rules
//! that the oracle judges at run time.

use super::*;

/// ALLOC-AFTER-RELINQUISH in a loop: the teardown ends with a loop of two iterations that
/// allocates (the last size again), frees and relinquishes: the second alloc follows the
/// first relinquish.
pub(super) fn m_alloc_after_relinquish(p: &mut Program, _: &mut dyn Choices) -> bool {
    let Some(aw) = alloc_warp(p) else {
        return false;
    };
    let code = &p.warps[aw];
    let Some(last) = code
        .iter()
        .rposition(|s| matches!(s, Stmt::Tc(Op::Dealloc { .. })))
    else {
        return false;
    };
    let (cg, slot, n) = match &code[last] {
        Stmt::Tc(Op::Dealloc {
            form,
            taddr: TmemRef {
                base: TBase::Slot(s),
                ..
            },
            ncols,
        }) => (form.cta_group, *s, ncols.value),
        _ => return false,
    };
    // The smallest allocation keeps ALLOC-NONINCREASING.
    let min = walk::find_ops(p, &|op| matches!(op, Op::Alloc { .. }))
        .iter()
        .filter_map(|x| match walk::get(p, x) {
            Stmt::Tc(Op::Alloc { ncols, .. }) => Some(ncols.value),
            _ => None,
        })
        .min()
        .unwrap_or(n);
    let code = &mut p.warps[aw];
    code.retain(|s| !matches!(s, Stmt::Tc(Op::Relinquish { .. })));
    let at = code
        .iter()
        .position(|s| matches!(s, Stmt::Exit))
        .unwrap_or(code.len());
    code.insert(
        at,
        Stmt::Loop {
            count: 2,
            body: vec![alloc(cg, slot, min), dealloc(cg, slot, min), relinquish(cg)],
        },
    );
    true
}

/// ALLOC-FREE-BEFORE-EXIT on one exit path (reference §6, §9.7.16.1.2, §9.7.16.7.1): a
/// dealloc runs only in cluster rank 0, in a cluster of at least two CTAs whose shape the
/// entry declares (`.reqnctapercluster`). Declared, the static check sees the same ranks as
/// the run: with the shape left out it must assume ranks other than 0 (a possible leak) even
/// where the launch, or a minimized one of a single CTA, has rank 0 only (no leak).
pub(super) fn m_leak_one_path(p: &mut Program, c: &mut dyn Choices) -> bool {
    if p.launch.cluster_size < 2 {
        return false;
    }
    let Some(path) = pick_op(p, c, &|op| matches!(op, Op::Dealloc { .. })) else {
        return false;
    };
    p.launch.declare_cluster = true;
    let s = walk::get_mut(p, &path);
    let inner = std::mem::replace(s, Stmt::Spin(0));
    *s = Stmt::If {
        cond: Cond::CtaRank(0),
        then: vec![inner],
        els: vec![],
    };
    true
}

/// ALLOC-NONINCREASING: two allocations of different sizes swapped, so the smaller comes first.
pub(super) fn m_nonincreasing(p: &mut Program, _: &mut dyn Choices) -> bool {
    let Some(aw) = alloc_warp(p) else {
        return false;
    };
    let code = &mut p.warps[aw];
    let idx: Vec<usize> = (0..code.len())
        .filter(|&i| matches!(code[i], Stmt::Tc(Op::Alloc { .. })))
        .collect();
    let size = |s: &Stmt| match s {
        Stmt::Tc(Op::Alloc { ncols, .. }) => ncols.value,
        _ => 0,
    };
    for a in 0..idx.len() {
        for b in a + 1..idx.len() {
            if size(&code[idx[a]]) > size(&code[idx[b]]) {
                code.swap(idx[a], idx[b]);
                return true;
            }
        }
    }
    false
}

/// MCM-LD-WAR: the last `wait::ld` of a warp removed, so its last ld may still be reading when
/// the allocation is freed (docs/architecture.md, "The oracle's run model": a dealloc not ordered after the read).
pub(super) fn m_ld_war(p: &mut Program, c: &mut dyn Choices) -> bool {
    let start = c.below(p.warps.len() as u32) as usize;
    for k in 0..p.warps.len() {
        let w = (start + k) % p.warps.len();
        let code = &p.warps[w];
        let Some(i) = code
            .iter()
            .rposition(|s| matches!(s, Stmt::Tc(op) if is_wait(op, WaitOp::Ld)))
        else {
            continue;
        };
        let later_wait = walk::contains(
            p,
            &code[i + 1..],
            &|s| matches!(s, Stmt::Tc(op) if is_wait(op, WaitOp::Ld)),
        );
        let prev_ld = i > 0 && matches!(code[i - 1], Stmt::Tc(Op::Ld { .. }));
        if !later_wait && prev_ld {
            p.warps[w].remove(i);
            return true;
        }
    }
    false
}

/// MCM-ST-BEFORE-USE: an ld of cells an st of the same warp wrote, with the `wait::st` moved
/// after the ld (the write is not complete when it is read).
///
/// The race must be visible in the values the ld records (docs/architecture.md, "The oracle's run model": a race makes the
/// raced words unspecified only where the alternatives differ), so:
/// - the st is not inside a loop: the record holds the last iteration, whose "before" value is
///   the previous iteration's store of the same data;
/// - the st's seed differs from every other st's (byte-driven bases can repeat a seed when
///   the bytes run out, and an overwrite with the same data is no visible race).
pub(super) fn m_st_before_use(p: &mut Program, c: &mut dyn Choices) -> bool {
    let paths: Vec<Path> = walk::find(p, &|s| matches!(s, Stmt::Tc(op) if is_st(op)))
        .into_iter()
        .filter(|x| !in_loop(p, x))
        .collect();
    let Some(path) = pick_path(c, &paths) else {
        return false;
    };
    let seeds: Vec<u32> = p
        .ops()
        .into_iter()
        .filter_map(|op| match op {
            Op::St { seed, .. } => Some(*seed),
            _ => None,
        })
        .collect();
    let (list, i) = walk::parent_mut(p, &path);
    // Flows are `st; wait::st; [spin]; ld; wait::ld`.
    if !matches!(list.get(i + 1), Some(Stmt::Tc(op)) if is_wait(op, WaitOp::St)) {
        return false;
    }
    let Some(j) = (i + 2..list.len().min(i + 5))
        .find(|&j| matches!(&list[j], Stmt::Tc(op) if is_wait(op, WaitOp::Ld)))
    else {
        return false;
    };
    if let Stmt::Tc(Op::St { seed, .. }) = &mut list[i] {
        // `seeds` holds this st's own seed once; a second copy is another st's.
        let mut s = *seed;
        while seeds.iter().filter(|x| **x == s).count() > usize::from(s == *seed) {
            s = s.wrapping_add(0x9E37_79B9);
        }
        *seed = s;
    }
    let w = list.remove(i + 1);
    list.insert(j, w);
    true
}

/// Whether a statement path goes through a loop body.
pub(super) fn in_loop(p: &Program, path: &Path) -> bool {
    (1..path.idx.len()).any(|k| {
        let outer = Path {
            code: path.code,
            idx: path.idx[..k].to_vec(),
        };
        matches!(walk::get(p, &outer), Stmt::Loop { .. })
    })
}

/// MCM-XTHREAD: the consumer's `fence::after_thread_sync` between the mbarrier wait and the
/// ld of D removed, in a warp other than the MMA's issuer (the §4.3 consumer side of a
/// producer in another warp; the issuing warp's own consumer is §4.4's "non-pipelined, same
/// thread" example, which needs the fence as well but which the oracle does not see at the
/// time of writing: see generators/README.md).
pub(super) fn m_xthread(p: &mut Program, c: &mut dyn Choices) -> bool {
    let issues = |code: &[Stmt]| {
        code.iter().any(|s| {
            matches!(s, Stmt::If { cond: Cond::ElectOne, then, .. }
                if then.iter().any(|t| matches!(t, Stmt::Tc(Op::Mma(_)))))
        })
    };
    let paths: Vec<Path> = walk::find(p, &|s| matches!(s, Stmt::MbarWait { .. }))
        .into_iter()
        .filter(|x| matches!(x.code, CodeRef::Warp(w) if !issues(&p.warps[w])))
        .collect();
    let Some(path) = pick_path(c, &paths) else {
        return false;
    };
    let (list, i) = walk::parent_mut(p, &path);
    if matches!(
        list.get(i + 1),
        Some(Stmt::Tc(Op::Fence {
            kind: FenceKind::AfterThreadSync
        }))
    ) {
        list.remove(i + 1);
        true
    } else {
        false
    }
}

/// Whether a statement path is in warp code (not a function).
pub(super) fn in_warp(path: &Path) -> bool {
    matches!(path.code, CodeRef::Warp(_))
}

/// MCM-XTHREAD-NONPIPE: a warp other than the MMA's issuer stores its quarter of the MMA's A
/// operand and synchronizes without `wait::st` (the st is not complete when the MMA reads it). The st moves to the end
/// of its phase, just before the `fence::before_thread_sync` that precedes the next
/// synchronization, so no later `wait::st` of the warp's flows (or of its scale-factor and
/// metadata stores) completes it before the sync; its wait moves to just before the last
/// barrier, so the store still completes before the teardown's dealloc (a store in flight at
/// the dealloc would be OQ-4 as well).
pub(super) fn m_xthread_nonpipe(p: &mut Program, _: &mut dyn Choices) -> bool {
    // A stores are the sts whose address is the MMA's a-tmem.
    let a_tmem: Vec<TmemRef> = p
        .ops()
        .into_iter()
        .filter_map(|op| match op {
            Op::Mma(m) => match m.a {
                MmaA::Tmem(t) => Some(t),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let Some(a) = a_tmem.first().copied() else {
        return false;
    };
    let paths = walk::find(
        p,
        &|s| matches!(s, Stmt::Tc(Op::St { taddr, .. }) if taddr.base == a.base && taddr.col == a.col),
    );
    let is_sync = |s: &Stmt| matches!(s, Stmt::BarCta | Stmt::ClusterArrive { .. });
    for path in paths.iter().filter(|x| in_warp(x) && x.idx.len() == 1) {
        let CodeRef::Warp(w) = path.code else {
            continue;
        };
        // Another thread than the MMA's issuer (in the issuing warp the unwaited st and the
        // MMA are one thread's: MCM-ST-BEFORE-USE, not a cross-thread publication).
        if walk::contains(p, &p.warps[w], &|s| matches!(s, Stmt::Tc(Op::Mma(_)))) {
            continue;
        }
        let i = path.idx[0];
        let code = &mut p.warps[w];
        if !matches!(code.get(i + 1), Some(Stmt::Tc(op)) if is_wait(op, WaitOp::St)) {
            continue;
        }
        // The sync that publishes the store, and the last one (teardown).
        let (Some(next_sync), Some(last_sync)) = (
            (i..code.len()).find(|&k| is_sync(&code[k])),
            code.iter().rposition(is_sync),
        ) else {
            continue;
        };
        // The phase must end `fence::before_thread_sync; sync` (§4.3 producer side), and the
        // teardown sync must come later (the wait goes before it).
        let fence_before = |s: &Stmt| {
            matches!(
                s,
                Stmt::Tc(Op::Fence {
                    kind: FenceKind::BeforeThreadSync
                })
            )
        };
        if next_sync < 1 || !fence_before(&code[next_sync - 1]) || last_sync <= next_sync {
            continue;
        }
        let w_st = code.remove(i + 1);
        let st = code.remove(i);
        // Indices after i moved down by two.
        code.insert(next_sync - 3, st);
        let last_sync = last_sync - 1;
        // Before the fence that precedes the last barrier.
        let at = if fence_before(&code[last_sync - 1]) {
            last_sync - 1
        } else {
            last_sync
        };
        code.insert(at, w_st);
        return true;
    }
    false
}
