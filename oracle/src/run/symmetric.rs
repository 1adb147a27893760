//! A grid of identical, independent CTAs judged once: `expect` of the first CTA alone, its
//! records copied to every CTA.
//!
//! TMEM, its allocator and permit are per CTA (reference §2.1, §2.3, §3.1; co-residency
//! `PerCta`, OQ-7), and so are `barrier.sync 0`, the mbarriers a CTA-local `mbarrier.arrive`
//! or a non-multicast `tcgen05.commit` signals (§3.9, COMMIT-ARRIVE) and the shared-memory
//! regions and slots. When no warp's code tests the CTA's rank or cluster (every CTA runs
//! the same events) and no statement reaches another CTA (no `::2` form, §2.5 GEN-PEER-*;
//! no `.multicast::cluster` commit, COMMIT-MCAST-MASK; no `mbarrier.arrive` to another
//! cluster rank), the CTAs are images of each other: the only synchronization between them,
//! the cluster barrier, is symmetric (a generation completes when every warp of every CTA
//! arrived, and within one CTA it orders what the same barrier orders in a cluster of one).
//! Each CTA's events, happens-before, allocations and TMEM values are then the first CTA's,
//! and `expect` computes them once.
//!
//! The copy is taken only where the whole grid's run could differ in nothing but the CTA
//! index: the first CTA's run completes without a note (a note's place in the list follows
//! the processing order of the whole grid) and without an mbarrier wait that gives up (the
//! clocks decide that when nothing in the whole grid moves), and the grid stays within every
//! work bound the whole run would check (events, visits, warps, clock words, TMEM work: each
//! a sum over the CTAs). Otherwise the grid is judged whole. One assumption is left: the
//! whole grid interleaves the CTAs' events in its processing order, which the TMEM value
//! analysis reads only as a linearization of happens-before (the same within each CTA);
//! `oracle/examples/expect_digest.rs` checks the results equal to the whole grid's over the
//! stored case folders, and `tests/symmetric.rs` on a program of its own.

use super::unroll::{self, CLOCK_WORD_BUDGET, EVENT_BUDGET, VISIT_BUDGET, WARP_BUDGET};
use super::{Judged, judge, tmem};
use crate::types::*;
use tcgen05_ir::*;

/// `expect` of a statically well-formed `p` whose CTAs are identical and independent (see
/// the module documentation), from its first CTA's run; `None` where that does not apply or
/// is not certain (the caller judges the grid whole).
pub fn expect(p: &Program, opts: &Options) -> Option<Expected> {
    let ctas = p.launch.ctas() as usize;
    if ctas < 2 || opts.co_residency != CoResidency::PerCta || !independent(p) {
        return None;
    }
    let u = unroll::unroll_first_cta(p);
    if u.broken.is_some() {
        return None;
    }
    // The whole grid's bounds: every CTA unrolls (or copies, charged the same) the first
    // CTA's events and visits (`unroll`).
    let events: usize = u
        .warps
        .iter()
        .map(Vec::len)
        .sum::<usize>()
        .checked_mul(ctas)?;
    let warps = u.warps.len().checked_mul(ctas)?;
    let clock_words = events.checked_mul(warps.checked_mul(2)?)?;
    if events > EVENT_BUDGET
        || u.visits.checked_mul(ctas)? > VISIT_BUDGET
        || warps > WARP_BUDGET
        || clock_words > CLOCK_WORD_BUDGET
    {
        return None;
    }
    let mut judged = Judged::default();
    let one = judge(p, opts, Vec::new(), &u, &mut judged);
    if one.run.verdict != RunVerdict::Completes
        || !one.notes.is_empty()
        || judged.gave_up
        || judged.tmem_work.checked_mul(ctas as u64)? > tmem::WORK_BUDGET
    {
        return None;
    }
    Some(copy(one, ctas as u32, judged.insts))
}

/// Whether no code of `p` tests the CTA's rank or cluster, and no statement reaches another
/// CTA (see the module documentation). Every function is looked at, called or not.
fn independent(p: &Program) -> bool {
    p.warps.iter().all(|code| local(code)) && p.funcs.iter().all(|f| local(&f.body))
}

fn local(stmts: &[Stmt]) -> bool {
    stmts.iter().all(|s| match s {
        Stmt::If { cond, then, els } => {
            !matches!(cond, Cond::CtaRank(_) | Cond::CtaOdd | Cond::Cluster(_))
                && local(then)
                && local(els)
        }
        Stmt::Loop { body, .. } => local(body),
        Stmt::MbarArrive { cta, .. } => cta.is_none(),
        Stmt::Tc(op) => {
            // The `.cta_group` of each form that has one (a wait's `.cta_group` is no group).
            let cg = match op {
                Op::Alloc { form, .. } => form.cta_group,
                Op::Dealloc { form, .. } => form.cta_group,
                Op::Relinquish { form } => form.cta_group,
                Op::Mma(m) => m.form.cta_group,
                Op::Cp { form, .. } => form.cta_group,
                Op::Shift { form, .. } => form.cta_group,
                Op::Commit { form, cta_mask, .. } => {
                    if form.multicast || cta_mask.is_some() {
                        return false;
                    }
                    form.cta_group
                }
                Op::Ld { .. } | Op::St { .. } | Op::Wait { .. } | Op::Fence { .. } => CtaGroup::One,
            };
            cg != CtaGroup::Two
        }
        _ => true,
    })
}

/// The expectation of `ctas` copies of the first CTA, whose run `one` executed `insts`
/// allocations: every record and assumed-completed key once per CTA, in CTA order (keys
/// order by CTA first), allocation numbers offset per CTA (they are numbered in warp order,
/// so CTA by CTA).
fn copy(mut one: Expected, ctas: u32, insts: u32) -> Expected {
    // The first CTA's records are its own (moved, not cloned); the others' follow.
    let mut obs = std::mem::take(&mut one.obs);
    let n = obs.len();
    obs.reserve(n * (ctas as usize - 1));
    for cta in 1..ctas {
        let off = cta * insts;
        for k in 0..n {
            let mut item = obs[k].clone();
            item.key.cta = cta;
            match &mut item.expect {
                SiteExpect::Same(e) => offset(e, off),
                SiteExpect::Each(each) => each.iter_mut().for_each(|e| offset(e, off)),
                SiteExpect::Exact { .. } => {}
            }
            obs.push(item);
        }
    }
    let mut assumes = std::mem::take(&mut one.assumes_completed);
    let n = assumes.len();
    assumes.reserve(n * (ctas as usize - 1));
    for cta in 1..ctas {
        for k in 0..n {
            let key = ObsKey { cta, ..assumes[k] };
            assumes.push(key);
        }
    }
    let mut may = std::mem::take(&mut one.may_give_up);
    let n = may.len();
    may.reserve(n * (ctas as usize - 1));
    for cta in 1..ctas {
        for k in 0..n {
            let key = ObsKey { cta, ..may[k] };
            may.push(key);
        }
    }
    Expected {
        obs,
        assumes_completed: assumes,
        may_give_up: may,
        ..one
    }
}

/// Offsets the allocation numbers of an address check by `off`.
fn offset(e: &mut ObsExpect, off: u32) {
    if let ObsExpect::Check(c) = e {
        c.alloc += off;
        for x in &mut c.disjoint_from {
            *x += off;
        }
    }
}
