//! Unrolling: every warp of every CTA as one straight event list (docs/architecture.md, "The oracle's run model").
//!
//! Bounded loops are unrolled, calls inlined, and CTA- or warp-uniform conditions resolved.
//! Lane conditions split the warp: each event carries the mask of lanes that execute it. The
//! two sides of a lane-divergent `If` are listed `then` first (the spec does not order them;
//! single-thread operations on both sides of one branch are rare, see oracle/README.md).
//! `elect.sync` is taken to elect the lowest active lane (an assumption, see the README).

use crate::types::{Code, Location, SiteRef};
use tcgen05_ir::*;

/// What an event's statement is, classified once when unrolling ([`Ev::kind`]), so that the
/// later passes (clocks, UB scan, allocation and TMEM analyses) test a byte instead of
/// matching the statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvKind {
    /// A statement named by no other kind (no synchronization, no TMEM access, nothing the
    /// run rules look at).
    Other,
    /// `Stmt::Exit`.
    Exit,
    /// `barrier.sync 0`.
    BarCta,
    /// `barrier.cluster.arrive`.
    ClusterArrive,
    /// `barrier.cluster.wait`.
    ClusterWait,
    /// `mbarrier.init`.
    MbarInit,
    /// `mbarrier.arrive`.
    MbarArrive,
    /// An `mbarrier.try_wait.parity` loop.
    MbarWait,
    /// A generic-proxy fill of a data region.
    Fill,
    /// `fence.proxy.async`.
    FenceProxyAsync,
    /// A read of an alloc slot.
    ObserveAddr,
    /// `tcgen05.alloc` (either `.cta_group`).
    Alloc,
    /// `tcgen05.dealloc`.
    Dealloc,
    /// `tcgen05.relinquish_alloc_permit`.
    Relinquish,
    /// `tcgen05.ld`.
    Ld,
    /// `tcgen05.st`.
    St,
    /// `tcgen05.mma` (every variant).
    Mma,
    /// `tcgen05.cp`.
    Cp,
    /// `tcgen05.shift`.
    Shift,
    /// `tcgen05.wait::ld`.
    WaitLd,
    /// `tcgen05.wait::st`.
    WaitSt,
    /// `tcgen05.fence::after_thread_sync`.
    FenceAfter,
    /// `tcgen05.fence::before_thread_sync`.
    FenceBefore,
    /// `tcgen05.commit`.
    Commit,
}

impl EvKind {
    /// The kind of a statement that becomes an event (not `If`, `Loop` or `Call`).
    pub fn of(s: &Stmt) -> EvKind {
        match s {
            Stmt::Tc(op) => match op {
                Op::Alloc { .. } => EvKind::Alloc,
                Op::Dealloc { .. } => EvKind::Dealloc,
                Op::Relinquish { .. } => EvKind::Relinquish,
                Op::Ld { .. } => EvKind::Ld,
                Op::St { .. } => EvKind::St,
                Op::Wait { form } => match form.op {
                    WaitOp::Ld => EvKind::WaitLd,
                    WaitOp::St => EvKind::WaitSt,
                },
                Op::Fence { kind } => match kind {
                    FenceKind::AfterThreadSync => EvKind::FenceAfter,
                    FenceKind::BeforeThreadSync => EvKind::FenceBefore,
                },
                Op::Commit { .. } => EvKind::Commit,
                Op::Cp { .. } => EvKind::Cp,
                Op::Shift { .. } => EvKind::Shift,
                Op::Mma(_) => EvKind::Mma,
            },
            Stmt::Exit => EvKind::Exit,
            Stmt::BarCta => EvKind::BarCta,
            Stmt::ClusterArrive { .. } => EvKind::ClusterArrive,
            Stmt::ClusterWait => EvKind::ClusterWait,
            Stmt::MbarInit { .. } => EvKind::MbarInit,
            Stmt::MbarArrive { .. } => EvKind::MbarArrive,
            Stmt::MbarWait { .. } => EvKind::MbarWait,
            Stmt::Fill { .. } => EvKind::Fill,
            Stmt::FenceProxyAsync => EvKind::FenceProxyAsync,
            Stmt::ObserveAddr { .. } => EvKind::ObserveAddr,
            _ => EvKind::Other,
        }
    }

    /// A TMEM access: ld, st, mma, cp or shift.
    pub fn is_access(self) -> bool {
        matches!(
            self,
            EvKind::Ld | EvKind::St | EvKind::Mma | EvKind::Cp | EvKind::Shift
        )
    }

    /// An alloc, dealloc or relinquish (a `::2` collective when its `.cta_group` is 2).
    pub fn is_collective(self) -> bool {
        matches!(self, EvKind::Alloc | EvKind::Dealloc | EvKind::Relinquish)
    }

    /// A `tcgen05` instruction (`Stmt::Tc`).
    pub fn is_tc(self) -> bool {
        matches!(
            self,
            EvKind::Alloc
                | EvKind::Dealloc
                | EvKind::Relinquish
                | EvKind::Ld
                | EvKind::St
                | EvKind::Mma
                | EvKind::Cp
                | EvKind::Shift
                | EvKind::WaitLd
                | EvKind::WaitSt
                | EvKind::FenceAfter
                | EvKind::FenceBefore
                | EvKind::Commit
        )
    }
}

/// One executed statement of one warp.
#[derive(Debug, Clone, Copy)]
pub struct Ev<'a> {
    /// The statement.
    pub stmt: &'a Stmt,
    /// What the statement is.
    pub kind: EvKind,
    /// Lanes executing it.
    pub mask: u32,
    /// Lanes alive (not exited) when it executes.
    pub live: u32,
    /// Its observation site, if it records.
    pub site: Option<SiteRef>,
}

/// The unrolled program.
#[derive(Debug)]
pub struct Unrolled<'a> {
    /// Events per global warp `cta * warps_per_cta + w`.
    pub warps: Vec<Vec<Ev<'a>>>,
    /// The program.
    p: &'a Program,
    /// Set if the event budget ran out or the program is malformed (a call to a missing
    /// function, recursion): the reason.
    pub broken: Option<String>,
    /// The `mbarrier.init`, `mbarrier.arrive` and `tcgen05.commit` events as (global warp,
    /// event index), in warp and event order (what the clocks collect before their pass,
    /// without walking every event).
    pub mbar_events: Vec<(u32, u32)>,
    /// Per global warp: whether its events are a copy of those of the same warp rank in the
    /// first CTA (the same statements, masks and live lanes; its code never tests the CTA's
    /// rank or cluster).
    pub copied: Vec<bool>,
    /// CTAs per cluster of the grid unrolled (the launch's, or 1 for [`unroll_first_cta`]).
    pub cluster_size: u32,
    /// Statements visited while unrolling (what [`VISIT_BUDGET`] bounds).
    pub visits: usize,
}

impl Unrolled<'_> {
    /// The location of an event's statement ([`Ev::stmt`], a statement of the program's
    /// code): found by a walk over the code (only reports of blocking sites and notes need
    /// one); `None` for a statement that is not the program's.
    pub fn location(&self, e: &Ev<'_>) -> Option<Location> {
        let p = self.p;
        let mut path = Vec::new();
        for (w, code) in p.warps.iter().enumerate() {
            if find(code, e.stmt, &mut path) {
                path.reverse();
                return Some(Location {
                    code: Code::Warp(w as u8),
                    path,
                });
            }
        }
        for (f, func) in p.funcs.iter().enumerate() {
            if find(&func.body, e.stmt, &mut path) {
                path.reverse();
                return Some(Location {
                    code: Code::Func(f as u8),
                    path,
                });
            }
        }
        None
    }
}

/// Whether `target` is one of `stmts` or inside one; if so, its path (as
/// [`Location::path`] counts it) is pushed innermost first.
fn find(stmts: &[Stmt], target: &Stmt, path: &mut Vec<u16>) -> bool {
    for (i, s) in stmts.iter().enumerate() {
        if find_one(s, target, path) {
            path.push(i as u16);
            return true;
        }
    }
    false
}

/// Whether `target` is `s` or inside it (the children of an `If` numbered `then` first,
/// then `els`); the path below `s` pushed innermost first.
fn find_one(s: &Stmt, target: &Stmt, path: &mut Vec<u16>) -> bool {
    if std::ptr::eq(s, target) {
        return true;
    }
    let children: &mut dyn Iterator<Item = &Stmt> = match s {
        Stmt::If { then, els, .. } => &mut then.iter().chain(els),
        Stmt::Loop { body, .. } => &mut body.iter(),
        _ => return false,
    };
    for (k, c) in children.enumerate() {
        if find_one(c, target, path) {
            path.push(k as u16);
            return true;
        }
    }
    false
}

/// Most events the oracle will unroll (about 10 MB of events): beyond it, the program is not
/// judged ([`crate::RunVerdict::NotJudged`]).
pub const EVENT_BUDGET: usize = 1 << 18;

/// Most warps in a grid (CTAs × warps per CTA) the oracle will judge: vector clocks cost
/// warps × warps words per step.
pub const WARP_BUDGET: usize = 1024;

/// Most vector-clock words (events × 2 × warps) the oracle will keep: beyond it, the program
/// is not judged (64 MiB).
pub const CLOCK_WORD_BUDGET: usize = 1 << 24;

/// Most statements the unroller will visit, events or not (nested loops whose bodies produce
/// no event cost time too): beyond it, the program is not judged.
pub const VISIT_BUDGET: usize = 1 << 22;

struct Ctx<'a> {
    p: &'a Program,
    rank: u8,
    odd: bool,
    cluster: u16,
    warp: u8,
    out: Vec<Ev<'a>>,
    live: u32,
    budget: usize,
    visits: usize,
    broken: Option<String>,
    depth: u32,
    /// See [`Unrolled::mbar_events`] (this warp's).
    mbar_events: Vec<u32>,
}

/// What one walk over a code finds: whether a condition tests the CTA's rank or cluster,
/// whether it calls a function.
#[derive(Debug, Default)]
struct Shape {
    cta_test: bool,
    calls: bool,
}

impl Shape {
    fn add(&mut self, s: &Stmt) {
        match s {
            Stmt::If { cond, then, els } => {
                self.cta_test |= matches!(cond, Cond::CtaRank(_) | Cond::CtaOdd | Cond::Cluster(_));
                for c in then.iter().chain(els) {
                    self.add(c);
                }
            }
            Stmt::Loop { body, .. } => {
                for c in body {
                    self.add(c);
                }
            }
            Stmt::Call(_) => self.calls = true,
            _ => {}
        }
    }
}

fn sites(s: &Stmt) -> u32 {
    let own = u32::from(observe::site_of(s).is_some());
    match s {
        Stmt::If { then, els, .. } => own + then.iter().chain(els).map(sites).sum::<u32>(),
        Stmt::Loop { body, .. } => own + body.iter().map(sites).sum::<u32>(),
        _ => own,
    }
}

impl<'a> Ctx<'a> {
    /// Runs `stmts` with lanes `mask`; site indexes continue from `site`.
    /// Returns false once every lane has exited.
    fn block(&mut self, stmts: &'a [Stmt], mask: u32, site: &mut u32, func: Option<u8>) -> bool {
        for s in stmts {
            let m = mask & self.live;
            self.visits += 1;
            if self.visits > VISIT_BUDGET && self.broken.is_none() {
                self.broken = Some(format!(
                    "more than {VISIT_BUDGET} statements visited while unrolling (work bound)"
                ));
            }
            if m == 0 || self.broken.is_some() {
                *site += sites(s);
                continue;
            }
            // The statement's kind (`Other` for `If`, `Loop` and `Call`), which also says
            // whether it records: the statements `observe::site_of` gives a site.
            let kind = EvKind::of(s);
            let records = matches!(kind, EvKind::Ld | EvKind::ObserveAddr | EvKind::MbarWait);
            debug_assert_eq!(records, observe::site_of(s).is_some());
            let my_site = records.then(|| {
                *site += 1;
                match func {
                    Some(f) => SiteRef::Func {
                        func: f,
                        index: *site - 1,
                    },
                    None => SiteRef::Warp(*site - 1),
                }
            });
            match s {
                Stmt::If { cond, then, els } => {
                    let c = self.cond(cond, m);
                    let mut s2 = *site;
                    self.block(then, c, &mut s2, func);
                    self.block(els, m & !c, &mut s2, func);
                    *site = s2;
                }
                Stmt::Loop { count: n, body } => {
                    let start_site = *site;
                    let mut whole = false;
                    for _ in 0..*n {
                        *site = start_site;
                        whole = self.block(body, m, site, func);
                    }
                    if !whole {
                        // No iteration, or the last stopped early (every lane exited): the
                        // sites after the body, counted (a body run to its end leaves them
                        // there).
                        *site = start_site + body.iter().map(sites).sum::<u32>();
                    } else {
                        debug_assert_eq!(*site, start_site + body.iter().map(sites).sum::<u32>());
                    }
                }
                Stmt::Call(f) => {
                    let f = usize::from(*f);
                    if f >= self.p.funcs.len() || self.depth >= 16 {
                        self.broken = Some(format!(
                            "call of f{f}: missing function or recursion deeper than 16"
                        ));
                        continue;
                    }
                    self.depth += 1;
                    let mut fsite = 0;
                    self.block(&self.p.funcs[f].body, m, &mut fsite, Some(f as u8));
                    self.depth -= 1;
                }
                _ => {
                    if self.out.len() >= self.budget {
                        self.broken = Some(format!(
                            "more than {EVENT_BUDGET} unrolled events (work bound)"
                        ));
                        continue;
                    }
                    if matches!(kind, EvKind::MbarInit | EvKind::MbarArrive | EvKind::Commit) {
                        self.mbar_events.push(self.out.len() as u32);
                    }
                    self.out.push(Ev {
                        stmt: s,
                        kind,
                        mask: m,
                        live: self.live,
                        site: my_site,
                    });
                    if matches!(s, Stmt::Exit) {
                        self.live &= !m;
                    }
                }
            }
            if self.live == 0 {
                return false;
            }
        }
        true
    }

    fn cond(&self, c: &Cond, m: u32) -> u32 {
        let lanes = |n: u8| if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        match *c {
            Cond::LaneLt(n) => m & lanes(n),
            Cond::LaneEq(n) => m & if n < 32 { 1 << n } else { 0 },
            Cond::ElectOne => m & m.wrapping_neg(),
            Cond::CtaRank(n) => {
                if self.rank == n {
                    m
                } else {
                    0
                }
            }
            Cond::CtaOdd => {
                if self.odd {
                    m
                } else {
                    0
                }
            }
            Cond::Cluster(n) => {
                if self.cluster == n {
                    m
                } else {
                    0
                }
            }
            Cond::WarpRank(n) => {
                if self.warp == n {
                    m
                } else {
                    0
                }
            }
        }
    }
}

/// Whether `stmts` (and the functions they call) test the CTA's rank or cluster: only then
/// can a warp's events differ from CTA to CTA. `seen` marks the functions already looked at
/// (each is looked at once; a call of a missing function counts as dependent, so that the
/// unroller reports it as it does).
fn cta_dependent(p: &Program, stmts: &[Stmt], seen: &mut Vec<bool>) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::If { cond, then, els } => {
            matches!(cond, Cond::CtaRank(_) | Cond::CtaOdd | Cond::Cluster(_))
                || cta_dependent(p, then, seen)
                || cta_dependent(p, els, seen)
        }
        Stmt::Loop { body, .. } => cta_dependent(p, body, seen),
        Stmt::Call(f) => {
            let f = usize::from(*f);
            match seen.get(f) {
                None => true,
                Some(true) => false,
                Some(false) => {
                    seen[f] = true;
                    cta_dependent(p, &p.funcs[f].body, seen)
                }
            }
        }
        _ => false,
    })
}

/// Unrolls every warp of every CTA of `p`.
pub fn unroll(p: &Program) -> Unrolled<'_> {
    let l = &p.launch;
    unroll_grid(p, l.ctas(), u32::from(l.cluster_size.max(1)))
}

/// Unrolls the warps of `p`'s first CTA alone, as a grid of one CTA in a cluster of one (what
/// `expect` analyses once for a grid of identical, independent CTAs: `run::symmetric`).
pub fn unroll_first_cta(p: &Program) -> Unrolled<'_> {
    unroll_grid(p, 1, 1)
}

/// Unrolls every warp of a grid of `ctas` CTAs in clusters of `cs` running `p`'s code.
fn unroll_grid(p: &Program, ctas: u32, cs: u32) -> Unrolled<'_> {
    let total_warps = ctas as usize * p.warps.len();
    if total_warps > WARP_BUDGET {
        return Unrolled {
            warps: Vec::new(),
            p,
            broken: Some(format!(
                "{total_warps} warps in the grid, more than {WARP_BUDGET} (work bound: the clocks are warps × warps)"
            )),
            mbar_events: Vec::new(),
            copied: Vec::new(),
            cluster_size: cs,
            visits: 0,
        };
    }
    let mut warps: Vec<Vec<Ev<'_>>> = Vec::with_capacity(total_warps);
    let mut budget = EVENT_BUDGET;
    let mut visits = 0;
    let mut broken = None;
    // Warp codes whose events are the same in every CTA (no test of the CTA's rank or
    // cluster): unrolled in the first CTA, copied in the others, with the statements visited
    // for them (`same_visits`) counted again, as unrolling them again would.
    let same: Vec<bool> = if ctas > 1 {
        p.warps
            .iter()
            .map(|code| {
                // Whether the code tests the CTA's rank or cluster itself, and whether it
                // calls a function.
                let mut x = Shape::default();
                for s in code {
                    x.add(s);
                }
                !x.cta_test
                    && (!x.calls || !cta_dependent(p, code, &mut vec![false; p.funcs.len()]))
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut same_visits = vec![0usize; p.warps.len()];
    let mut mbar_events: Vec<(u32, u32)> = Vec::new();
    // One warp's `Ctx::mbar_events`, reused from warp to warp.
    let mut scratch: Vec<u32> = Vec::new();
    let mut copied: Vec<bool> = Vec::with_capacity(total_warps);
    'ctas: for cta in 0..ctas {
        for (w, code) in p.warps.iter().enumerate() {
            if cta > 0 && same[w] {
                // The first CTA's events of this warp, if copying them stays within the
                // bounds where unrolling again would not stop (then it unrolls again, to stop
                // exactly where it stops).
                let first = &warps[w];
                if first.len() <= budget && visits + same_visits[w] <= VISIT_BUDGET {
                    budget -= first.len();
                    visits += same_visits[w];
                    let copy = first.clone();
                    warps.push(copy);
                    // The first CTA's warp `w` is global warp `w`.
                    let g = (warps.len() - 1) as u32;
                    let from = mbar_events.partition_point(|&(h, _)| h < w as u32);
                    let to = mbar_events.partition_point(|&(h, _)| h <= w as u32);
                    for k in from..to {
                        let i = mbar_events[k].1;
                        mbar_events.push((g, i));
                    }
                    copied.push(true);
                    continue;
                }
            }
            let rank = (cta % cs) as u8;
            let mut c = Ctx {
                p,
                rank,
                odd: rank & 1 == 1,
                cluster: (cta / cs) as u16,
                warp: w as u8,
                out: Vec::with_capacity(2 * code.len() + 8),
                live: u32::MAX,
                budget,
                visits,
                broken: None,
                depth: 0,
                mbar_events: std::mem::take(&mut scratch),
            };
            let mut site = 0;
            c.block(code, u32::MAX, &mut site, None);
            budget -= c.out.len();
            if cta == 0 {
                same_visits[w] = c.visits - visits;
            }
            let g = warps.len() as u32;
            mbar_events.extend(c.mbar_events.iter().map(|&i| (g, i)));
            scratch = std::mem::take(&mut c.mbar_events);
            scratch.clear();
            copied.push(false);
            visits = c.visits;
            if broken.is_none() {
                broken = c.broken.take();
            }
            warps.push(c.out);
            if broken.is_some() {
                // Not judged: stop unrolling (the rest would only cost time).
                break 'ctas;
            }
        }
    }
    Unrolled {
        warps,
        p,
        broken,
        mbar_events,
        copied,
        cluster_size: cs,
        visits,
    }
}
