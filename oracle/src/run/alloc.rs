//! The allocation model (reference §2.3, §3.1; docs/architecture.md, "The oracle's run model").
//!
//! Per CTA (or per SM under [`CoResidency::SharedSm`], OQ-7): capacity 512 columns in units
//! of 32; the allocation permit (RELQ-CTA-WIDE, ALLOC-AFTER-RELINQUISH); the non-increasing
//! rule (ALLOC-NONINCREASING); dealloc matching an earlier allocation (DEALLOC-TADDR-PREV,
//! OQ-3); leaks at exit (ALLOC-FREE-BEFORE-EXIT); blocking (ALLOC-BLOCKS): an alloc whose
//! columns are held by allocations that can only be freed after it must deadlock, one that
//! may find them held may block; `::2` pairing (ALLOC-PAIR-BLOCK, DEALLOC-PAIR-BLOCK,
//! DEALLOC-BARRIER-ORDER, GEN-PEER-ACTIVE). The stored address is opaque (OQ-1): only
//! observation checks are expected of it.

use super::sync::{self, Clocks};
use super::unroll::{EvKind, Unrolled};
use super::{Findings, block_site};
use crate::types::*;
use tcgen05_ir::*;

/// TMEM columns per CTA (reference §2.1).
pub const CAPACITY: u32 = 512;

/// One allocation: an executed alloc and, if any, the dealloc that frees it.
#[derive(Debug, Clone)]
pub struct Inst {
    /// Number (the `alloc` of [`AddrCheck`]).
    pub id: u32,
    /// Global CTA.
    pub cta: u32,
    /// Global warp and event index of the alloc.
    pub at: (usize, usize),
    /// Columns.
    pub ncols: u32,
    /// Slot it stores to.
    pub slot: u8,
    /// `.cta_group`.
    pub cg: CtaGroup,
    /// The dealloc that frees it.
    pub dealloc: Option<(usize, usize)>,
    /// The peer CTA's instance of a `::2` allocation.
    pub peer: Option<u32>,
}

/// What the slot read by a thread holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotRead {
    /// The address of this instance.
    Inst(u32),
    /// A race with an alloc's weak store (ALLOC-STORE-WEAK).
    Racy,
    /// No alloc stored to it before: uninitialised shared memory.
    Never,
}

/// The result of the allocation analysis.
#[derive(Debug)]
pub struct AllocAnalysis {
    /// Every executed allocation.
    pub insts: Vec<Inst>,
    /// Leak status.
    pub leak: LeakExpect,
    /// Expectations of the ObserveAddr records.
    pub addr_obs: Vec<ObsItem>,
}

impl AllocAnalysis {
    /// What the slot `slot` read at event (g, i) of CTA `cta` holds.
    pub fn read_slot(&self, c: &Clocks, cta: u32, slot: u8, g: usize, i: usize) -> SlotRead {
        // The stores ordered before the read; racing ones make it racy. The last of them is
        // found in two passes (no allocation): a streaming maximum, then a check that every
        // other one happens before it.
        let mine = || {
            self.insts
                .iter()
                .filter(move |x| x.cta == cta && x.slot == slot)
        };
        let mut last: Option<&Inst> = None;
        // The stores to the slot (with one, the check below has nothing to compare).
        let mut stores = 0usize;
        for inst in mine() {
            stores += 1;
            let (ag, ai) = inst.at;
            if c.hb(ag, ai, g, i) && (ag, ai) != (g, i) {
                if last.is_none_or(|m| c.hb(m.at.0, m.at.1, ag, ai)) {
                    last = Some(inst);
                }
            } else if !c.hb(g, i, ag, ai) {
                return SlotRead::Racy;
            }
        }
        let Some(m) = last else {
            return SlotRead::Never;
        };
        if stores == 1 {
            return SlotRead::Inst(m.id);
        }
        let before = |x: &Inst| c.hb(x.at.0, x.at.1, g, i) && x.at != (g, i);
        if mine().all(|y| y.id == m.id || !before(y) || c.hb(y.at.0, y.at.1, m.at.0, m.at.1)) {
            SlotRead::Inst(m.id)
        } else {
            SlotRead::Racy
        }
    }
}

/// Runs the allocation analysis.
pub fn analyse(
    p: &Program,
    u: &Unrolled<'_>,
    c: &Clocks,
    opts: &Options,
    f: &mut Findings,
) -> AllocAnalysis {
    let w = c.w;
    let mut insts: Vec<Inst> = Vec::new();
    // The lists of this pass, kept per thread from one call to the next (cleared: no
    // result depends on what they held).
    let mut lists = LISTS.with(|x| std::mem::take(&mut *x.borrow_mut()));
    let Lists {
        deallocs,
        relinquishes,
        observes,
        pairs,
    } = &mut lists;
    deallocs.clear();
    relinquishes.clear();
    observes.clear();
    pairs.clear();
    // One pass over the events: the allocs, deallocs and relinquishes reached, the address
    // observations reached (in event order), and every `::2` collective, reached or not, in
    // warp and event order (`pairing`).
    for (g, evs) in u.warps.iter().enumerate() {
        let reached = c.reached[g];
        for (i, e) in evs.iter().enumerate() {
            if !matches!(
                e.kind,
                EvKind::ObserveAddr | EvKind::Alloc | EvKind::Dealloc | EvKind::Relinquish
            ) {
                // Neither a collective (`EvKind::is_collective`) nor a slot read.
                continue;
            }
            if e.kind.is_collective() && sync::pair_collective(e.stmt) {
                pairs.push((g, i));
            }
            if i >= reached {
                continue;
            }
            match e.stmt {
                Stmt::Tc(Op::Alloc {
                    form, slot, ncols, ..
                }) => insts.push(Inst {
                    id: insts.len() as u32,
                    cta: (g / w) as u32,
                    at: (g, i),
                    ncols: ncols.value,
                    slot: *slot,
                    cg: form.cta_group,
                    dealloc: None,
                    peer: None,
                }),
                Stmt::Tc(Op::Dealloc { taddr, ncols, .. }) => {
                    deallocs.push((g, i, *taddr, ncols.value))
                }
                Stmt::Tc(Op::Relinquish { .. }) => relinquishes.push((g, i)),
                Stmt::ObserveAddr { slot } => observes.push((g, i, *slot)),
                _ => {}
            }
        }
    }
    let mut a = AllocAnalysis {
        insts,
        leak: LeakExpect {
            status: LeakStatus::NoLeak,
            rules: vec![RuleId::AllocFreeBeforeExit],
        },
        addr_obs: Vec::new(),
    };
    // OQ-35: several allocating warps per CTA.
    if !opts.multi_warp_alloc {
        for x in &a.insts {
            if a.insts.iter().any(|y| y.cta == x.cta && y.at.0 != x.at.0) {
                f.undefined.insert(RuleId::AllocIssuer);
                f.note("ALLOC-ISSUER: several warps of one CTA allocate (OQ-35; option multi_warp_alloc is off)");
            }
        }
    }
    // Deallocs (DEALLOC-TADDR-PREV, OQ-3).
    for &(g, i, taddr, n) in deallocs.iter() {
        let cta = (g / w) as u32;
        let bad = |f: &mut Findings, why: &str| {
            f.undefined.insert(RuleId::DeallocTaddrPrev);
            f.note(format!("DEALLOC-TADDR-PREV: {why} (OQ-3)"));
        };
        let TBase::Slot(s) = taddr.base else {
            bad(f, "dealloc of an address no alloc returned");
            continue;
        };
        match a.read_slot(c, cta, s, g, i) {
            SlotRead::Inst(id) => {
                let inst = &mut a.insts[id as usize];
                if taddr.offset() != 0 {
                    bad(f, "dealloc of an address inside an allocation");
                } else if n != inst.ncols {
                    bad(f, "dealloc with an nCols different from the allocation's");
                } else if inst.dealloc.is_some() {
                    bad(f, "a second dealloc of one allocation");
                } else {
                    inst.dealloc = Some((g, i));
                    if !opts.multi_warp_alloc && inst.at.0 != g {
                        f.undefined.insert(RuleId::AllocIssuer);
                        f.note("ALLOC-ISSUER: a warp frees another warp's allocation (OQ-35)");
                    }
                }
            }
            SlotRead::Racy => {
                f.undefined.insert(RuleId::AllocStoreWeak);
                bad(
                    f,
                    "the dealloc address is read from a slot without synchronizing with the alloc's store",
                );
            }
            SlotRead::Never => bad(f, "the dealloc address is read from a slot no alloc wrote"),
        }
    }
    // OQ-35 with the option on: say that the answer rests on it.
    if opts.multi_warp_alloc
        && a.insts.iter().any(|x| {
            x.dealloc.is_some_and(|(dg, _)| dg != x.at.0)
                || a.insts.iter().any(|y| y.cta == x.cta && y.at.0 != x.at.0)
        })
    {
        f.note("several warps of a CTA allocate, or a warp frees another warp's allocation: taken as allowed (OQ-35, not stated by §9.7.16.7.1; option multi_warp_alloc)");
    }
    // A CTA that relinquishes the permit more than once: §9.7.16.7.1 forbids only an alloc
    // after a relinquish; whether a second relinquish is allowed is not stated.
    for (k, &(g, _)) in relinquishes.iter().enumerate() {
        if relinquishes[..k].iter().any(|&(h, _)| h / w == g / w) {
            f.not_judged = Some(format!(
                "CTA {} relinquishes the allocation permit more than once: §9.7.16.7.1 does not say whether that is allowed",
                g / w
            ));
            break;
        }
    }
    // ALLOC-AFTER-RELINQUISH and RELQ-CTA-WIDE: reachable when an alloc is not before every
    // relinquish of its CTA.
    for x in &a.insts {
        for (rg, ri) in relinquishes.iter() {
            if (*rg / w) as u32 == x.cta && !c.hb(x.at.0, x.at.1, *rg, *ri) {
                f.undefined.insert(RuleId::AllocAfterRelinquish);
                f.note("ALLOC-AFTER-RELINQUISH: an alloc can run after its CTA relinquished the permit");
            }
        }
    }
    // ALLOC-NONINCREASING: a larger request that is not ordered before a smaller one.
    for x in &a.insts {
        for y in &a.insts {
            if x.cta == y.cta && y.ncols > x.ncols && !c.hb(y.at.0, y.at.1, x.at.0, x.at.1) {
                f.undefined.insert(RuleId::AllocNonincreasing);
                f.note(format!(
                    "ALLOC-NONINCREASING: an alloc of {} columns can follow one of {} in the CTA's execution order",
                    y.ncols, x.ncols
                ));
            }
        }
    }
    peer_launched(u, f);
    pairing(p, u, c, opts, pairs, &mut a, f);
    capacity(u, c, opts, &a, f);
    // Leaks (ALLOC-FREE-BEFORE-EXIT: consequence unstated, so reported, never judged).
    if a.insts.iter().any(|x| x.dealloc.is_none()) {
        a.leak.status = LeakStatus::MayLeak;
    }
    // Address observations (ALLOC-ADDR-STORE, ALLOC-STORE-WEAK, OQ-1).
    for &(g, i, slot) in observes.iter() {
        let e = &u.warps[g][i];
        let Some(site) = e.site else { continue };
        let cta = (g / w) as u32;
        let (expect, rules) = match a.read_slot(c, cta, slot, g, i) {
            SlotRead::Inst(id) => {
                let x = &a.insts[id as usize];
                let disjoint_from = a
                    .insts
                    .iter()
                    .filter(|y| y.cta == x.cta && y.id != x.id && overlap(c, x, y))
                    .map(|y| y.id)
                    .collect();
                (
                    ObsExpect::Check(AddrCheck {
                        alloc: id,
                        ncols: x.ncols,
                        lane_zero: true,
                        capacity: CAPACITY,
                        disjoint_from,
                        basis: "observation check (OQ-1), not a spec fact".into(),
                    }),
                    vec![RuleId::AllocAddrStore, RuleId::AllocSameAddrOrder],
                )
            }
            SlotRead::Racy => (
                ObsExpect::Unspecified(vec![RuleId::AllocStoreWeak]),
                vec![RuleId::AllocStoreWeak],
            ),
            SlotRead::Never => (
                ObsExpect::Unspecified(vec![RuleId::AllocAddrStore]),
                vec![RuleId::AllocAddrStore],
            ),
        };
        a.addr_obs.push(ObsItem {
            key: ObsSite {
                cta,
                warp: (g % w) as u8,
                site,
            },
            lanes: e.mask,
            expect: SiteExpect::Same(expect),
            rules,
        });
    }
    LISTS.with(|x| *x.borrow_mut() = lists);
    a
}

/// The lists [`analyse`] gathers in its pass over the events (the deallocs, relinquishes
/// and address observations reached; every `::2` collective), kept per thread.
#[derive(Debug, Default)]
struct Lists {
    deallocs: Vec<(usize, usize, TmemRef, u32)>,
    relinquishes: Vec<(usize, usize)>,
    observes: Vec<(usize, usize, u8)>,
    pairs: Vec<(usize, usize)>,
}

thread_local! {
    static LISTS: std::cell::RefCell<Lists> = std::cell::RefCell::new(Lists::default());
}

/// Whether the lifetimes of two allocations may overlap.
fn overlap(c: &Clocks, x: &Inst, y: &Inst) -> bool {
    let freed_before = |a: &Inst, b: &Inst| {
        a.dealloc
            .is_some_and(|(dg, di)| c.hb(dg, di, b.at.0, b.at.1))
    };
    !freed_before(x, y) && !freed_before(y, x)
}

/// ALLOC-BLOCKS: capacity and blocking, per CTA (or SM, OQ-7).
///
/// An alloc `x` must deadlock when it belongs to a set of allocations of its CTA that must all
/// be held at once on every schedule (each one's alloc happens before every other one's
/// dealloc, or the other is never freed) and whose columns exceed the capacity: whichever of
/// them allocates last waits for a free that can only come after it (§9.7.16.7.1 "blocks if
/// the requested amount of Tensor Memory is not available"). It may block when some
/// allocation not ordered around it may hold columns it needs.
fn capacity(u: &Unrolled<'_>, c: &Clocks, opts: &Options, a: &AllocAnalysis, f: &mut Findings) {
    // Whether `y` is still held when `x` completes, whatever the schedule: `x`'s alloc
    // happens before `y`'s dealloc (or `y` is never freed).
    let held_at = |x: &Inst, y: &Inst| {
        y.dealloc
            .is_none_or(|(dg, di)| c.hb(x.at.0, x.at.1, dg, di))
    };
    for x in &a.insts {
        let (xg, xi) = x.at;
        // The allocations of x's CTA held together with x on every schedule (greedy: each
        // added one is held with every one already in; missing one leaves "may block").
        let mut together: Vec<&Inst> = vec![x];
        for y in &a.insts {
            if y.id != x.id
                && y.cta == x.cta
                && together.iter().all(|z| held_at(z, y) && held_at(y, z))
            {
                together.push(y);
            }
        }
        let definite: u32 = together.iter().map(|y| y.ncols).sum::<u32>() - x.ncols;
        let mut blocking = 0u32;
        for y in &a.insts {
            if y.id == x.id || together.iter().any(|z| z.id == y.id) {
                continue;
            }
            let same_pool = y.cta == x.cta || opts.co_residency == CoResidency::SharedSm;
            if !same_pool {
                continue;
            }
            let freed_before_x = y.dealloc.is_some_and(|(dg, di)| c.hb(dg, di, xg, xi));
            if freed_before_x || c.hb(xg, xi, y.at.0, y.at.1) {
                continue;
            }
            // Its free can only come after x completes (or never).
            if held_at(x, y) {
                blocking += y.ncols;
            }
        }
        if definite + x.ncols > CAPACITY {
            f.run_rules.insert(RuleId::AllocBlocks);
            f.must_deadlock.push(block_site(
                u,
                c.w,
                xg,
                xi,
                format!(
                    "alloc of {} columns is held with {definite} other columns of its CTA on every schedule (more than {CAPACITY}): the last of them to allocate waits for a free that comes only after it",
                    x.ncols
                ),
            ));
        } else if definite + blocking + x.ncols > CAPACITY {
            f.run_rules.insert(RuleId::AllocBlocks);
            f.may_block.push(block_site(
                u,
                c.w,
                xg,
                xi,
                format!("alloc of {} columns may find its columns held by an allocation freed only after it", x.ncols),
            ));
        }
    }
}

/// GEN-PEER-ACTIVE (§9.7.16.5, §9.7.16.7.1), the judgement `check` makes on a kernel's paths
/// too (`crate::peer`): a `::2` operation a warp reaches before it passed a
/// `barrier.cluster.wait` has not made sure of its peer CTA (consequence unstated: undefined).
/// Like `check`'s, the judgement is on the warp's program order, whether or not the warp
/// blocks before the operation.
fn peer_launched(u: &Unrolled<'_>, f: &mut Findings) {
    for evs in &u.warps {
        for e in evs {
            match e.stmt {
                // Every later operation of the warp comes after a cluster barrier.
                Stmt::ClusterWait => break,
                Stmt::Tc(op) => {
                    let form = op.form();
                    if let Some(need) = crate::peer::peer_need(&form) {
                        f.undefined.insert(RuleId::GenPeerActive);
                        f.note(format!("GEN-PEER-ACTIVE: {}", need.explain(&form.opcode())));
                    }
                }
                _ => {}
            }
        }
    }
}

/// `::2` pairing (§9.7.16.5, §9.7.16.7.1: "one warp from each of the peer CTAs must
/// collectively perform the allocation and de-allocation"): any one warp per CTA. The `::2`
/// collectives of each CTA are taken in the order the CTA issues them, and the k-th of the
/// even CTA pairs with the k-th of the odd CTA. Where several warps of a CTA issue them in no
/// fixed order, which pairs with which is not stated: the program is not judged (say so,
/// never guess).
///
/// Then: a collective without a partner (GEN-PEER-ACTIVE; ptx93: ALLOC-PAIR-BLOCK /
/// DEALLOC-PAIR-BLOCK, must deadlock); paired deallocs whose warps do not synchronize after
/// the allocation (DEALLOC-PAIR-SYNC, unstated consequence); and paired collectives that may
/// wait for each other in a cycle with other synchronization (may block): the deallocs in
/// both editions (DEALLOC-PAIR-BLOCK, §9.7.16.7.1 "tcgen05.dealloc may block"), every
/// collective in ptx93 (ALLOC-PAIR-BLOCK).
fn pairing(
    p: &Program,
    u: &Unrolled<'_>,
    c: &Clocks,
    opts: &Options,
    pairs: &[(usize, usize)],
    a: &mut AllocAnalysis,
    f: &mut Findings,
) {
    let w = c.w;
    if pairs.is_empty() || p.launch.cluster_size < 2 {
        return;
    }
    let kind = |s: &Stmt| match s {
        Stmt::Tc(Op::Alloc { .. }) => 0,
        Stmt::Tc(Op::Dealloc { .. }) => 1,
        _ => 2,
    };
    // The `::2` collectives of CTA `cta`, in warp and event order (`pairs` is sorted).
    let of_cta = |cta: usize| {
        let lo = pairs.partition_point(|&(x, _)| x < cta * w);
        let hi = pairs.partition_point(|&(x, _)| x < (cta + 1) * w);
        &pairs[lo..hi]
    };
    let ctas = u.warps.len() / w.max(1);
    let mut missing = false;
    let mut partners = sync::Partners::default();
    let mut several = false;
    for even in (0..ctas).step_by(2) {
        let odd = even + 1;
        if odd >= ctas {
            continue;
        }
        let (mine, theirs) = match (issue_order(c, of_cta(even)), issue_order(c, of_cta(odd))) {
            (Ok(m), Ok(t)) => (m, t),
            (Err(why), _) | (_, Err(why)) => {
                f.not_judged = Some(why.to_string());
                return;
            }
        };
        several |= [&mine, &theirs]
            .iter()
            .any(|v| v.iter().any(|e| e.0 != v[0].0));
        for (&(g, mi), &(peer, ti)) in mine.iter().zip(&theirs) {
            let (ks, kp) = (kind(u.warps[g][mi].stmt), kind(u.warps[peer][ti].stmt));
            if ks != kp {
                f.undefined.insert(RuleId::AllocIssuer);
                f.note("ALLOC-ISSUER: the two CTAs of a pair issue different ::2 collectives at the same step");
                continue;
            }
            if ks == 1 || opts.edition == Edition::Ptx93 {
                partners.add((g, mi), (peer, ti));
            }
            let xi = a.insts.iter().position(|x| x.at == (g, mi));
            let yi = a.insts.iter().position(|x| x.at == (peer, ti));
            if let (Some(xi), Some(yi)) = (xi, yi) {
                a.insts[xi].peer = Some(yi as u32);
                a.insts[yi].peer = Some(xi as u32);
            }
            if ks == 1 {
                dealloc_pair_sync(c, a, (g, mi), (peer, ti), f);
            }
        }
        if mine.len() != theirs.len() {
            missing = true;
            let (lonely, idx) = if mine.len() > theirs.len() {
                mine[theirs.len()]
            } else {
                theirs[mine.len()]
            };
            match opts.edition {
                Edition::Seeds => {
                    // Seeds: the peer must be active and take part (GEN-PEER-ACTIVE); a
                    // violated precondition, consequence unstated.
                    f.undefined.insert(RuleId::GenPeerActive);
                    f.note("GEN-PEER-ACTIVE: a ::2 collective has no partner in the peer CTA (seeds: precondition)");
                }
                Edition::Ptx93 => {
                    let rule = if kind(u.warps[lonely][idx].stmt) == 1 {
                        RuleId::DeallocPairBlock
                    } else {
                        RuleId::AllocPairBlock
                    };
                    f.run_rules.insert(rule);
                    f.must_deadlock.push(block_site(
                        u,
                        w,
                        lonely,
                        idx,
                        "a ::2 collective whose peer warp never issues the matching one blocks forever (ptx93)".into(),
                    ));
                }
            }
        }
    }
    if several {
        f.note("::2 collectives pair in issue order: the k-th of the even CTA with the k-th of the odd CTA, whichever warps issue them (§9.7.16.7.1: one warp from each of the peer CTAs)");
    }
    // Paired collectives that may wait for each other (deallocs in both editions, every
    // collective in ptx93): a wait cycle through them and other synchronization may hang
    // (DEALLOC-BARRIER-ORDER, the §9.7.16.5 cluster-barrier/dealloc example).
    if missing || partners.is_empty() {
        return;
    }
    partners.seal();
    let blocking = sync::clocks(u, p, Some(&partners));
    for (g, i) in &blocking.stuck {
        let at_pair = u.warps[*g]
            .get(*i)
            .is_some_and(|e| sync::pair_collective(e.stmt));
        if at_pair || c.stuck.is_empty() {
            // Seeds: DEALLOC-PAIR-BLOCK (only deallocs wait); ptx93 names the pattern
            // (DEALLOC-BARRIER-ORDER, its §9.7.16.5 example).
            f.run_rules.insert(match opts.edition {
                Edition::Seeds => RuleId::DeallocPairBlock,
                Edition::Ptx93 => RuleId::DeallocBarrierOrder,
            });
            f.may_block.push(block_site(
                u,
                w,
                *g,
                *i,
                "a ::2 collective may wait for its peer, which waits for this warp (DEALLOC-PAIR-BLOCK, DEALLOC-BARRIER-ORDER)".into(),
            ));
        }
    }
}

/// Why the `::2` collectives of one CTA have no stated issue order ([`issue_order`]): two of
/// its warps issue them in no fixed order.
#[derive(Debug, thiserror::Error)]
#[error(
    "the ::2 collectives of CTA {cta} are issued by warps {a} and {b} in no fixed order: which of them pairs with which collective of the peer CTA is not stated (§9.7.16.7.1: one warp from each of the peer CTAs)"
)]
struct Unordered {
    cta: usize,
    a: usize,
    b: usize,
}

/// The `::2` collectives of one CTA (`evs`, in warp and event order) in the order the CTA
/// issues them: one warp's in program order, several warps' when happens-before orders them
/// all; otherwise why the order (and so the pairing) is not stated.
fn issue_order(c: &Clocks, evs: &[(usize, usize)]) -> Result<Vec<(usize, usize)>, Unordered> {
    let mut v = evs.to_vec();
    let Some(&(first, _)) = v.first() else {
        return Ok(v);
    };
    if v.iter().all(|e| e.0 == first) {
        return Ok(v);
    }
    let unordered = |a: usize, b: usize| Unordered {
        cta: first / c.w,
        a: a % c.w,
        b: b % c.w,
    };
    if let Some(&(g, _)) = v.iter().find(|&&(g, i)| i >= c.reached[g]) {
        let other = v.iter().find(|e| e.0 != g).map_or(g, |e| e.0);
        return Err(unordered(g, other));
    }
    v.sort_by_key(|&(g, i)| c.seq(g, i));
    for x in v.windows(2) {
        if !c.hb(x[0].0, x[0].1, x[1].0, x[1].1) {
            return Err(unordered(x[0].0, x[1].0));
        }
    }
    Ok(v)
}

/// DEALLOC-PAIR-SYNC (§9.7.16.7.1: "issuing warp and peer CTA warp must synchronize Tensor
/// Memory accesses before attempting to collectively deallocate the Tensor Memory"): each of
/// the paired deallocs `d` and `e` must know the other CTA's allocation it frees (some
/// synchronization between the two CTAs after the allocation). That every TMEM access of the
/// pair allocation is complete before both deallocs is judged with the accesses
/// (`tmem.rs`).
fn dealloc_pair_sync(
    c: &Clocks,
    a: &AllocAnalysis,
    d: (usize, usize),
    e: (usize, usize),
    f: &mut Findings,
) {
    let freed = |x: (usize, usize)| a.insts.iter().find(|y| y.dealloc == Some(x));
    let (Some(xd), Some(xe)) = (freed(d), freed(e)) else {
        // A dealloc that frees nothing is DEALLOC-TADDR-PREV (found above).
        return;
    };
    let knows = |alloc: (usize, usize), at: (usize, usize)| c.hb(alloc.0, alloc.1, at.0, at.1);
    if !knows(xe.at, d) || !knows(xd.at, e) {
        f.undefined.insert(RuleId::DeallocPairSync);
        f.note("DEALLOC-PAIR-SYNC: the two warps of a ::2 dealloc do not synchronize after the allocation (\"issuing warp and peer CTA warp must synchronize Tensor Memory accesses before attempting to collectively deallocate\")");
    }
}
