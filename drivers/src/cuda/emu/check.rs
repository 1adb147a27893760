//! What the emulation supports, checked before lowering: a program it refuses is "not run"
//! with the reason.

use super::Unsupported;
use tcgen05_ir::{CpShape, CtaGroup, Op, Pack, Program, Stmt, TBase, TmemRef};

/// Checks what the emulation supports, statically.
pub(super) fn check_supported(p: &Program) -> Result<(), Unsupported> {
    let mut err = None;
    let l = &p.launch;
    if l.warps_per_cta == 0 || l.warps_per_cta > 16 || p.warps.len() != usize::from(l.warps_per_cta)
    {
        err = Some(format!(
            "launch of {} warps with {} warp bodies",
            l.warps_per_cta,
            p.warps.len()
        ));
    }
    if !(1..=8).contains(&l.cluster_size) || l.clusters == 0 {
        err = Some(format!(
            "cluster size {} x {} clusters",
            l.cluster_size, l.clusters
        ));
    }
    p.walk(&mut |s| {
        if err.is_some() {
            return;
        }
        match s {
            // CP-SHAPE: not a shape of the spec (a static violation).
            Stmt::Tc(Op::Cp { form, .. }) if form.shape == CpShape::S64x256b => {
                err = Some(format!(
                    "ill-formed `{}` (a static violation; not emulated)",
                    form_opcode(s)
                ));
            }
            Stmt::Tc(Op::Cp { src, .. }) if usize::from(src.region) >= p.smem.regions.len() => {
                err = Some(format!(
                    "cp descriptor of region {} of {}",
                    src.region,
                    p.smem.regions.len()
                ));
            }
            Stmt::Tc(Op::Mma(m)) => {
                let regions = [mma_desc(m).map(|d| d.region), Some(m.b.region)];
                if let Some(r) = regions
                    .into_iter()
                    .flatten()
                    .find(|r| usize::from(*r) >= p.smem.regions.len())
                {
                    err = Some(format!(
                        "mma descriptor of region {r} of {}",
                        p.smem.regions.len()
                    ));
                }
            }
            Stmt::Tc(Op::Ld { form, nregs, .. }) => {
                let ok = tcgen05_ir::vec_len(form.shape, form.num) == Some(*nregs)
                    && form.sync
                    && form.aligned
                    && form.pack != Some(Pack::Unpack16b)
                    && (!form.red || (form.pack.is_none() && form.red_op.is_some()));
                if !ok {
                    err = Some(format!(
                        "ill-formed `{}` with {nregs} registers (a static violation; not emulated)",
                        form_opcode(s)
                    ));
                }
            }
            Stmt::Tc(Op::St { form, nregs, .. }) => {
                let ok = tcgen05_ir::vec_len(form.shape, form.num) == Some(*nregs)
                    && form.sync
                    && form.aligned
                    && form.pack != Some(Pack::Pack16b);
                if !ok {
                    err = Some(format!(
                        "ill-formed `{}` with {nregs} registers (a static violation; not emulated)",
                        form_opcode(s)
                    ));
                }
            }
            Stmt::Call(f) if usize::from(*f) >= p.funcs.len() => {
                err = Some(format!("call of missing function f{f}"))
            }
            Stmt::Tc(Op::Alloc { slot, .. }) | Stmt::ObserveAddr { slot }
                if *slot >= p.smem.slots =>
            {
                err = Some(format!("slot {slot} of {}", p.smem.slots));
            }
            Stmt::Tc(Op::Commit { mbar, .. })
            | Stmt::MbarInit { bar: mbar, .. }
            | Stmt::MbarArrive { bar: mbar, .. }
            | Stmt::MbarWait { bar: mbar, .. }
                if *mbar >= p.smem.mbarriers =>
            {
                err = Some(format!("mbarrier {mbar} of {}", p.smem.mbarriers));
            }
            Stmt::Fill { region, .. } if usize::from(*region) >= p.smem.regions.len() => {
                err = Some(format!("region {region} of {}", p.smem.regions.len()));
            }
            _ => {}
        }
        if let Stmt::Tc(op) = s {
            for t in taddrs(op) {
                if let TBase::Slot(n) = t.base
                    && n >= p.smem.slots
                    && err.is_none()
                {
                    err = Some(format!("address from slot {n} of {}", p.smem.slots));
                }
            }
        }
    });
    // Recursion between functions would not terminate in PTX either, but the printer would
    // still print it; refuse cycles so a generated case cannot make the GPU spin forever.
    if err.is_none() && calls_recursive(p) {
        err = Some("recursive function calls".into());
    }
    err.map_or(Ok(()), |e| Err(Unsupported(e)))
}

fn form_opcode(s: &Stmt) -> String {
    match s {
        Stmt::Tc(op) => op.form().opcode(),
        _ => String::new(),
    }
}

fn taddrs(op: &Op) -> Vec<TmemRef> {
    match op {
        Op::Dealloc { taddr, .. }
        | Op::Ld { taddr, .. }
        | Op::St { taddr, .. }
        | Op::Shift { taddr, .. }
        | Op::Cp { taddr, .. } => vec![*taddr],
        Op::Mma(m) => {
            let mut v = vec![m.d];
            if let tcgen05_ir::MmaA::Tmem(t) = m.a {
                v.push(t);
            }
            v.extend(
                m.sp_meta
                    .iter()
                    .chain(&m.scale_a)
                    .chain(&m.scale_b)
                    .copied(),
            );
            v
        }
        _ => vec![],
    }
}

pub(super) fn mma_desc(m: &tcgen05_ir::Mma) -> Option<&tcgen05_ir::SmemDesc> {
    match &m.a {
        tcgen05_ir::MmaA::Desc(d) => Some(d),
        tcgen05_ir::MmaA::Tmem(_) => None,
    }
}

fn calls_recursive(p: &Program) -> bool {
    fn callees(b: &[Stmt], out: &mut Vec<usize>) {
        for s in b {
            match s {
                Stmt::Call(f) => out.push(usize::from(*f)),
                Stmt::If { then, els, .. } => {
                    callees(then, out);
                    callees(els, out);
                }
                Stmt::Loop { body, .. } => callees(body, out),
                _ => {}
            }
        }
    }
    let n = p.funcs.len();
    let edges: Vec<Vec<usize>> = p
        .funcs
        .iter()
        .map(|f| {
            let mut v = Vec::new();
            callees(&f.body, &mut v);
            v
        })
        .collect();
    // Depth-first search for a cycle.
    fn visit(i: usize, edges: &[Vec<usize>], state: &mut [u8]) -> bool {
        state[i] = 1;
        for &j in &edges[i] {
            if j < state.len() && (state[j] == 1 || (state[j] == 0 && visit(j, edges, state))) {
                return true;
            }
        }
        state[i] = 2;
        false
    }
    let mut state = vec![0u8; n];
    (0..n).any(|i| state[i] == 0 && visit(i, &edges, &mut state))
}

/// Per tcgen05 instruction of the kernel, in printing order (warp 0's body, then warp 1's,
/// ...; in each, statements in order, an `if`'s then-block before its else-block, a loop's
/// body once): whether its convergence check (GEN-ALIGNED-CONVERGENT) cannot fail, so the
/// lowering leaves it out. That holds for an ld, st or wait that directly follows, in the
/// same statement list, an ld, st or wait (or fences after one): every lane of the warp
/// passed that instruction's vote (or its own was left out by this rule), its other checks
/// fail in every lane alike (the address is uniform once matched), and nothing between the
/// two votes branches or exits, so every lane of the warp comes to the next one.
pub(super) fn known_converged(p: &Program) -> Vec<bool> {
    fn block(stmts: &[Stmt], out: &mut Vec<bool>) {
        // Whether the previous statement leaves every lane of the warp together.
        let mut together = false;
        for s in stmts {
            let checked = matches!(s, Stmt::Tc(Op::Ld { .. } | Op::St { .. } | Op::Wait { .. }));
            match s {
                Stmt::Tc(op) => {
                    out.push(checked && together);
                    together = checked || (together && matches!(op, Op::Fence { .. }));
                }
                Stmt::If { then, els, .. } => {
                    block(then, out);
                    block(els, out);
                    together = false;
                }
                Stmt::Loop { body, .. } => {
                    block(body, out);
                    together = false;
                }
                _ => together = false,
            }
        }
    }
    let mut out = Vec::new();
    for body in &p.warps {
        block(body, &mut out);
    }
    out
}

/// Per tcgen05 instruction of the kernel, in printing order ([`known_converged`]), the warp
/// whose body it is in: only that warp executes it (the kernel branches each warp to its
/// own body), so `%warp` is known there.
pub(super) fn op_warps(p: &Program) -> Vec<usize> {
    fn count(stmts: &[Stmt]) -> usize {
        stmts
            .iter()
            .map(|s| match s {
                Stmt::Tc(_) => 1,
                Stmt::If { then, els, .. } => count(then) + count(els),
                Stmt::Loop { body, .. } => count(body),
                _ => 0,
            })
            .sum()
    }
    p.warps
        .iter()
        .enumerate()
        .flat_map(|(w, body)| std::iter::repeat_n(w, count(body)))
        .collect()
}

/// Whether a CTA of `p` may touch its peer's shared memory: a `::2` alloc, dealloc,
/// relinquish, shift, cp or MMA (the peer's copy, D rows and B half are written and read
/// through the cluster window), so each CTA waits for its peer before it exits (a CTA's
/// shared memory is gone once it exits; an access to it then faults the launch).
pub(super) fn uses_pairs(p: &Program) -> bool {
    let mut any = false;
    p.walk(&mut |s| {
        if let Stmt::Tc(op) = s
            && matches!(
                op,
                Op::Alloc { .. }
                    | Op::Dealloc { .. }
                    | Op::Relinquish { .. }
                    | Op::Shift { .. }
                    | Op::Cp { .. }
                    | Op::Mma(_)
            )
            && op.form().cta_group() == Some(CtaGroup::Two)
        {
            any = true;
        }
    });
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::{WaitOp, samples};

    /// The first ld/st/wait of a statement list keeps its check; one that directly follows
    /// an ld, st or wait (fences between allowed) does not; anything else between, or the
    /// start of a loop body or branch, resets it.
    #[test]
    fn checks_after_a_checked_instruction_cannot_fail() {
        let p = samples::single_warp_roundtrip();
        let st = p
            .ops()
            .into_iter()
            .find(|op| matches!(op, Op::St { .. }))
            .cloned()
            .map(Stmt::Tc)
            .unwrap();
        let fence = Stmt::Tc(Op::Fence {
            kind: tcgen05_ir::FenceKind::AfterThreadSync,
        });
        let wait = samples::wait(WaitOp::St);
        let mut q = p;
        q.warps[0] = vec![
            st.clone(),
            wait.clone(),
            fence,
            st.clone(),
            Stmt::BarCta,
            wait.clone(),
            Stmt::Loop {
                count: 2,
                body: vec![wait.clone(), st],
            },
            samples::relinquish(CtaGroup::One),
            wait,
        ];
        assert_eq!(
            known_converged(&q),
            vec![false, true, false, true, false, false, true, false, false]
        );
    }

    /// Each instruction is attributed to the warp whose body holds it, branches and loop
    /// bodies included.
    #[test]
    fn instructions_belong_to_their_warps_body() {
        let mut p = samples::single_warp_roundtrip();
        let wait = samples::wait(WaitOp::St);
        p.launch.warps_per_cta = 3;
        p.warps = vec![
            vec![wait.clone(), wait.clone()],
            vec![Stmt::BarCta],
            vec![Stmt::If {
                cond: tcgen05_ir::Cond::LaneLt(3),
                then: vec![wait.clone()],
                els: vec![Stmt::Loop {
                    count: 2,
                    body: vec![wait.clone(), wait],
                }],
            }],
        ];
        assert_eq!(op_warps(&p), vec![0, 0, 2, 2, 2]);
        assert_eq!(op_warps(&p).len(), p.ops().len());
    }
}
