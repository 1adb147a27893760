//! Mutators of blocking rules (reference §6): the run may block or must deadlock.

use super::*;

/// ALLOC-BLOCKS: a second allocation that does not fit while the first (all 512 columns) is
/// live and nobody can free it: the allocating warp itself holds it.
pub(super) fn m_alloc_blocks(p: &mut Program, c: &mut dyn Choices) -> bool {
    let Some(path) = pick_op(
        p,
        c,
        &|op| matches!(op, Op::Alloc { ncols, .. } if ncols.value == 512),
    ) else {
        return false;
    };
    if path.idx.len() != 1 {
        return false;
    }
    let (cg, slot) = match walk::get(p, &path) {
        Stmt::Tc(Op::Alloc { form, .. }) => (form.cta_group, p.smem.slots),
        _ => return false,
    };
    p.smem.slots += 1;
    let n = [32, 64, 128, 256, 512][c.below(5) as usize];
    let (list, i) = walk::parent_mut(p, &path);
    list.insert(i + 1, alloc(cg, slot, n));
    true
}

/// DEALLOC-BARRIER-ORDER: the pair's dealloc after an extra cluster barrier in the even CTA
/// and before it in the odd CTA (reference §2.5, the ISA's own example of a possible hang).
/// The existing barrier before the teardown still orders every TMEM access before either
/// dealloc (DEALLOC-PAIR-SYNC holds).
pub(super) fn m_dealloc_barrier_order(p: &mut Program, _: &mut dyn Choices) -> bool {
    let Some(aw) = alloc_warp(p) else {
        return false;
    };
    let code = &p.warps[aw];
    let deallocs: Vec<usize> = (0..code.len())
        .filter(|&i| matches!(code[i], Stmt::Tc(Op::Dealloc { .. })))
        .collect();
    if deallocs.is_empty() {
        return false;
    }
    let first = deallocs[0];
    let last = *deallocs.last().expect("non-empty");
    let moved: Vec<Stmt> = p.warps[aw].drain(first..=last).collect();
    let barrier = [Stmt::ClusterArrive { relaxed: false }, Stmt::ClusterWait];
    let mut then = moved.clone();
    then.extend(barrier.iter().cloned());
    let mut els: Vec<Stmt> = barrier.to_vec();
    els.extend(moved);
    p.warps[aw].insert(
        first,
        Stmt::If {
            cond: Cond::CtaOdd,
            then,
            els,
        },
    );
    // Every other warp takes part in the extra cluster barrier too (before any exit).
    for (w, code) in p.warps.iter_mut().enumerate() {
        if w == aw {
            continue;
        }
        let at = code
            .iter()
            .position(|s| matches!(s, Stmt::Exit))
            .unwrap_or(code.len());
        code.insert(at, Stmt::ClusterWait);
        code.insert(at, Stmt::ClusterArrive { relaxed: false });
    }
    true
}

/// GEN-PEER-ACTIVE (seeds wording: the peer must take part): the odd CTA never executes the
/// pair's relinquish.
pub(super) fn m_peer_relinquish(p: &mut Program, c: &mut dyn Choices) -> bool {
    let Some(path) = pick_op(
        p,
        c,
        &|op| matches!(op, Op::Relinquish { form } if form.cta_group == CtaGroup::Two),
    ) else {
        return false;
    };
    let s = walk::get_mut(p, &path);
    let inner = std::mem::replace(s, Stmt::Spin(0));
    *s = Stmt::If {
        cond: Cond::CtaOdd,
        then: vec![],
        els: vec![inner],
    };
    true
}

/// GEN-PEER-EXISTS: a `::2` program launched with clusters of one CTA, declared.
pub(super) fn m_peer_exists(p: &mut Program, _: &mut dyn Choices) -> bool {
    if p.launch.cluster_size < 2 {
        return false;
    }
    p.launch.cluster_size = 1;
    p.launch.declare_cluster = true;
    true
}

/// MMA-WS-CTA1 (§3.7: `.ws` forms accept only `.cta_group::1`): the pair's `::2` MMA spelled
/// `.ws`. The operands `.ws` forms lack go (disable-output-lane, MMA-DOL-SIZE; scale-input-d,
/// MMA-SCALE-D-KIND; the `::a` collector, MMA-COLLECTOR-BUF), so only the cta_group speaks.
pub(super) fn m_ws_cta2(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| matches!(op, Op::Mma(m) if m.form.cta_group == CtaGroup::Two && !m.form.block_scale),
        &mut |op, _| {
            if let Op::Mma(m) = op {
                m.form.ws = true;
                m.form.collector = None;
                m.disable_output_lane = None;
                m.scale_input_d = None;
            }
        },
    )
}

/// MMA-BS-NVF4-EXPLICIT (§3.7: mxf4nvf4 must state its scale-vector size): the qualifier
/// dropped, with UE8M0 scale factors (idesc bit 23), which every size of mxf4nvf4 accepts, so
/// the descriptor stays valid whatever size is meant (MMA-BS-VEC).
pub(super) fn m_nvf4_implicit(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| matches!(op, Op::Mma(m) if m.form.kind == MmaKind::Mxf4nvf4),
        &mut |op, _| {
            if let Op::Mma(m) = op {
                m.form.scale_vec = None;
                m.idesc |= 1 << 23;
            }
        },
    )
}

/// MMA-K96-TARGET (§2.7, §2.8 layout (c) bit 31: K = 96 needs sm_103a): a dense `::2`
/// M = 256 mxf4/mxf4nvf4 MMA (the one shape where K = 96 exists, MMA-K-EXPLICIT) asks for
/// K = 96 on sm_100a, sm_100f or sm_110f.
pub(super) fn m_k96_target(p: &mut Program, c: &mut dyn Choices) -> bool {
    if p.launch.target == Target::Sm103a {
        return false;
    }
    with_op(
        p,
        c,
        &|op| {
            matches!(op, Op::Mma(m) if m.form.cta_group == CtaGroup::Two
                && !m.form.sp
                && matches!(m.form.kind, MmaKind::Mxf4 | MmaKind::Mxf4nvf4)
                && idesc::Idesc::new(m.form.kind, m.idesc).m() == 256)
        },
        &mut |op, _| {
            if let Op::Mma(m) = op {
                m.idesc |= 1 << 31;
            }
        },
    )
}

/// DEALLOC-PAIR-BLOCK (§2.5, §3.1, ptx93 wording: a `::2` dealloc may block until the peer
/// warp's dealloc): the odd CTA skips the pair's last dealloc, so the even CTA's dealloc has
/// no partner. The optional relinquish goes from both CTAs first (reference §3.1), so no later
/// collective of the odd CTA pairs with the lonely dealloc (ALLOC-ISSUER).
pub(super) fn m_dealloc_pair_block(p: &mut Program, _: &mut dyn Choices) -> bool {
    let Some(aw) = alloc_warp(p) else {
        return false;
    };
    let code = &mut p.warps[aw];
    code.retain(|s| !matches!(s, Stmt::Tc(Op::Relinquish { .. })));
    let Some(last) = code.iter().rposition(
        |s| matches!(s, Stmt::Tc(Op::Dealloc { form, .. }) if form.cta_group == CtaGroup::Two),
    ) else {
        return false;
    };
    let d = std::mem::replace(&mut code[last], Stmt::Spin(0));
    code[last] = Stmt::If {
        cond: Cond::CtaOdd,
        then: vec![],
        els: vec![d],
    };
    true
}

/// WAIT-SCOPE (§3.4: wait::ld waits for the loads *issued by the executing thread* before
/// it): the `wait::ld` that completes a warp's last load moves to another warp, just before
/// that warp's last synchronization; the loading warp relies on another thread's wait.
pub(super) fn m_wait_scope(p: &mut Program, c: &mut dyn Choices) -> bool {
    let n = p.warps.len();
    if n < 2 {
        return false;
    }
    let loads = |code: &[Stmt]| {
        code.iter()
            .any(|s| matches!(s, Stmt::Tc(op) if is_plain_ld(op)))
    };
    // A warp whose loads are all top level, each followed by its wait::ld (an ld nested in a
    // loop, such as a register-dependency flow's, has a wait::ld after its loop that would
    // still complete the top-level loads).
    let nested = |code: &[Stmt]| {
        code.iter().any(|s| {
            matches!(s, Stmt::Loop { .. } | Stmt::If { .. } | Stmt::Call(_))
                && walk::contains(
                    p,
                    std::slice::from_ref(s),
                    &|t| matches!(t, Stmt::Tc(op) if is_plain_ld(op)),
                )
        })
    };
    let cands: Vec<usize> =
        (0..n)
            .filter(|&w| {
                let code = &p.warps[w];
                loads(code) && !nested(code) && (0..code.len()).all(|i| {
                    !matches!(&code[i], Stmt::Tc(op) if is_plain_ld(op))
                        || matches!(code.get(i + 1), Some(Stmt::Tc(op)) if is_wait(op, WaitOp::Ld))
                })
            })
            .collect();
    let Some(&w) = cands.get(c.below(cands.len().max(1) as u32) as usize) else {
        return false;
    };
    let others: Vec<usize> = (0..n).filter(|&o| o != w).collect();
    let other = others[c.below(others.len() as u32) as usize];
    // The last load of warp w loses its wait::ld.
    let code = &mut p.warps[w];
    let Some(i) = code
        .iter()
        .rposition(|s| matches!(s, Stmt::Tc(op) if is_plain_ld(op)))
    else {
        return false;
    };
    let wt = code.remove(i + 1);
    // The other warp waits instead, before its last barrier.
    let oc = &mut p.warps[other];
    let Some(at) = oc
        .iter()
        .rposition(|s| matches!(s, Stmt::BarCta | Stmt::ClusterArrive { .. }))
    else {
        return false;
    };
    oc.insert(at, wt);
    true
}

/// MMA-SP-MXF4-TARGET (§1: mma.sp with mxf4/mxf4nvf4 needs sm_100a, sm_110a or sm_103a):
/// the sm_103a program moved to sm_103f (same PTX version; no shift, i8 or scale-vector
/// qualifier in the base, so no other target rule applies).
pub(super) fn m_sp_mxf4_target(p: &mut Program, _: &mut dyn Choices) -> bool {
    let has = !walk::find_ops(p, &|op| {
        matches!(op, Op::Mma(m) if m.form.sp && matches!(m.form.kind, MmaKind::Mxf4 | MmaKind::Mxf4nvf4))
    })
    .is_empty();
    if !has || p.launch.target != Target::Sm103a {
        return false;
    }
    p.launch.target = Target::Sm103f;
    true
}

/// Sets the seed of the st that writes the first metadata cell (lane 0 of the
/// `[sp-meta-tmem]` column) of a sparse MMA of one of `kinds` to 0: that cell then holds 0,
/// and no nibble of 0 is a listed metadata value (§3.7 "Sparse A").
pub(super) fn zero_metadata(p: &mut Program, kinds: &[MmaKind]) -> bool {
    let metas: Vec<TmemRef> = p
        .ops()
        .into_iter()
        .filter_map(|op| match op {
            Op::Mma(m) if m.form.sp && kinds.contains(&m.form.kind) => m.sp_meta,
            _ => None,
        })
        .collect();
    let Some(t) = metas.first().copied() else {
        return false;
    };
    let paths = walk::find_ops(
        p,
        &|op| matches!(op, Op::St { taddr, .. } if taddr.base == t.base && taddr.col == t.col && taddr.lane == t.lane),
    );
    if paths.is_empty() {
        return false;
    }
    for path in paths {
        if let Op::St { seed, .. } = walk::op_mut(p, &path) {
            *seed = 0;
        }
    }
    true
}

/// MMA-SP-META-TF32 (UB, §3.7: tf32 metadata nibbles other than 0b1110 / 0b0100): the first
/// metadata cell of a sparse tf32 MMA holds 0.
pub(super) fn m_sp_meta_tf32(p: &mut Program, _: &mut dyn Choices) -> bool {
    zero_metadata(p, &[MmaKind::Tf32])
}

/// MMA-SP-META-MXF4 (UB, §3.7: mxf4/mxf4nvf4 metadata outside the seven listed values): the
/// first metadata cell of a sparse mxf4/mxf4nvf4 MMA holds 0.
pub(super) fn m_sp_meta_mxf4(p: &mut Program, _: &mut dyn Choices) -> bool {
    zero_metadata(p, &[MmaKind::Mxf4, MmaKind::Mxf4nvf4])
}
