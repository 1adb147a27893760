//! The path-sensitive walk of one warp through a kernel's control flow, tracking its TMEM
//! protocol state (allocations, the permit, outstanding `tcgen05.ld`/`st`, divergence, cluster
//! synchronization, fences) and reporting the rules it breaks.
//!
//! States are joined only when equal (property simulation in the style of ESP): register values
//! come from the path-insensitive data flow of `value.rs`, refined by the branch conditions the
//! path assumed on warp-uniform predicates it could not decide. Each rule cites its catalogue row
//! (reference §6) and section.

use super::value::{Decoded, V};
use std::collections::{HashMap, VecDeque};
use tcgen05_ir::ptx::cfg::{BlockId, Cfg, Class, EdgeKind, MbarOp, Terminator};
use tcgen05_ir::{Family, FenceKind, Form, RuleId, WaitOp};

/// States kept per block before path conditions are dropped (bounds the walk on kernels with
/// many independent uniform branches; 48 covers every corpus kernel without dropping).
const STATES_PER_BLOCK: usize = 48;
/// Hard cap per block after path conditions are dropped; past it the walk stops exploring there
/// and the report says so.
const HARD_STATES_PER_BLOCK: usize = 4 * STATES_PER_BLOCK;
/// Path conditions remembered per state.
const MAX_ASSUMPTIONS: usize = 4;

/// The protocol state of one warp on one path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
struct St {
    /// Allocations minus deallocations by this warp, clamped to -2..=3.
    net: i8,
    /// The last alloc of this warp on the path.
    last_alloc: Option<u32>,
    /// The relinquish this warp executed (RELQ-CTA-WIDE).
    relinquished: Option<u32>,
    /// nCols of the last alloc, when known (ALLOC-NONINCREASING).
    last_ncols: Option<u32>,
    /// The first `tcgen05.ld` not yet followed by `wait::ld` (LD-ASYNC).
    pending_ld: Option<u32>,
    /// The first `tcgen05.st` not yet followed by `wait::st` (ST-ASYNC).
    pending_st: Option<u32>,
    /// Inside the region of a lane-divergent branch: (reconvergence block or u32::MAX, branch).
    diverged: Option<(u32, u32)>,
    /// A `barrier.cluster.wait` has been passed since the kernel started.
    cluster_synced: bool,
    /// The last TMEM access or alloc of this warp not yet followed by a cluster barrier.
    pair_access: Option<u32>,
    /// A `@p ret`/`exit` with a lane-divergent `p` that some lanes of the warp took.
    exited: Option<u32>,
    /// An async tcgen05 op (or commit) has been issued on this path: before that, a thread
    /// synchronization orders no async op of another thread that this warp could depend on
    /// (after an alloc, OQ-26 leaves the need for fences unstated).
    async_seen: bool,
    /// The first thread synchronization passed while `pending_ld` or `pending_st` was set.
    published: Option<u32>,
    /// An async tcgen05 op not yet followed by `fence::before_thread_sync` (or commit).
    unfenced_async: Option<u32>,
    /// A thread synchronization not yet followed by `fence::after_thread_sync`.
    unfenced_sync: Option<u32>,
    /// The first dealloc on the path that took `net` below zero.
    unmatched: Option<u32>,
    /// Values of warp-uniform predicates this path assumed at branches and guards.
    assume: Vec<(u32, bool)>,
}

/// A rule broken at an instruction, with the node whose path shows it.
#[derive(Debug, Clone)]
pub(crate) struct Raw {
    pub rule: RuleId,
    pub instr: usize,
    pub msg: String,
    pub path: Vec<BlockId>,
}

/// How one warp can leave the kernel.
#[derive(Debug, Clone)]
pub(crate) struct ExitInfo {
    pub net: i8,
    pub last_alloc: Option<u32>,
    /// The first dealloc that took the count below zero.
    pub unmatched: Option<u32>,
    pub instr: usize,
    pub path: Vec<BlockId>,
}

/// What the walk of one warp found.
#[derive(Debug, Default)]
pub(crate) struct WarpResult {
    pub findings: Vec<Raw>,
    /// The exit with the most outstanding allocations, and the one with the fewest.
    pub max_exit: Option<ExitInfo>,
    pub min_exit: Option<ExitInfo>,
    /// The state cap was hit somewhere.
    pub truncated: bool,
}

/// The inputs of a walk.
pub(crate) struct Walk<'w, 'a> {
    pub cfg: &'w Cfg<'a>,
    pub dec: &'w Decoded<'a>,
    /// The value of each instruction's guard predicate for this warp (`value::instr_facts`).
    pub guards: &'w [V],
    /// nCols of each alloc, when known.
    pub ncols: &'w [Option<u32>],
    pub ipdom: &'w [Option<BlockId>],
    pub fences: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum G {
    T,
    F,
    /// Warp-uniform, unknown: (register, negated).
    Uni(u32, bool),
    /// Lane-divergent.
    Div,
}

impl Walk<'_, '_> {
    fn guard(&self, st: &St, ii: usize) -> G {
        let ins = self.cfg.instrs[ii];
        let Some(g) = ins.guard else { return G::T };
        let Some(&r) = self.dec.regs.get(g.pred) else {
            return G::Uni(u32::MAX, g.negated);
        };
        let v = self.guards[ii];
        let known = st
            .assume
            .iter()
            .find(|a| a.0 == r)
            .map(|a| a.1)
            .or_else(|| v.truth());
        match known {
            Some(t) => {
                if t != g.negated {
                    G::T
                } else {
                    G::F
                }
            }
            None if v.uni() || ins.opcode.starts_with("bra.uni") => G::Uni(r, g.negated),
            None => G::Div,
        }
    }

    fn path(nodes: &[(BlockId, St, Option<usize>)], mut n: usize) -> Vec<BlockId> {
        let mut p = vec![nodes[n].0];
        while let Some(par) = nodes[n].2 {
            if nodes[par].0 != *p.last().unwrap_or(&usize::MAX) {
                p.push(nodes[par].0);
            }
            n = par;
        }
        p.reverse();
        p
    }

    /// Walks every path of one warp.
    pub(crate) fn run(&self) -> WarpResult {
        let cfg = self.cfg;
        let mut res = WarpResult::default();
        if cfg.blocks.is_empty() {
            return res;
        }
        let mut nodes: Vec<(BlockId, St, Option<usize>)> = Vec::new();
        let mut index: HashMap<(BlockId, St), usize> = HashMap::new();
        let mut per_block = vec![0usize; cfg.blocks.len()];
        let mut queue = VecDeque::new();
        let mut seen_finding: HashMap<(RuleId, usize), ()> = HashMap::new();
        let mut add = |b: BlockId,
                       mut st: St,
                       parent: Option<usize>,
                       nodes: &mut Vec<(BlockId, St, Option<usize>)>,
                       queue: &mut VecDeque<usize>,
                       res: &mut WarpResult| {
            if per_block[b] >= STATES_PER_BLOCK {
                st.assume.clear();
            }
            if index.contains_key(&(b, st.clone())) {
                return;
            }
            if per_block[b] >= HARD_STATES_PER_BLOCK {
                res.truncated = true;
                return;
            }
            per_block[b] += 1;
            let n = nodes.len();
            nodes.push((b, st.clone(), parent));
            index.insert((b, st), n);
            queue.push_back(n);
        };
        add(0, St::default(), None, &mut nodes, &mut queue, &mut res);
        while let Some(n) = queue.pop_front() {
            let (b, st0, _) = nodes[n].clone();
            let mut st0 = st0;
            if st0.diverged.is_some_and(|d| d.0 as usize == b) {
                st0.diverged = None;
            }
            let mut states = vec![st0];
            let block = &cfg.blocks[b];
            let mut report = |rule: RuleId, ii: usize, msg: String, res: &mut WarpResult| {
                if seen_finding.insert((rule, ii), ()).is_none() {
                    res.findings.push(Raw {
                        rule,
                        instr: ii,
                        msg,
                        path: vec![n],
                    });
                }
            };
            for ii in block.instrs.clone() {
                let class = cfg.class(ii);
                let relevant = !matches!(
                    class,
                    Class::Other
                        | Class::Branch { .. }
                        | Class::BranchIndirect
                        | Class::LdShared
                        | Class::Elect
                );
                if relevant {
                    let mut next = Vec::with_capacity(states.len());
                    for st in states.drain(..) {
                        let g = self.guard(&st, ii);
                        match g {
                            G::F => next.push(st),
                            G::T | G::Div => {
                                let mut s = st;
                                self.effect(ii, class, &mut s, g == G::Div, &mut |r, m| {
                                    report(r, ii, m, &mut res)
                                });
                                next.push(s);
                            }
                            G::Uni(r, neg) => {
                                let mut taken = st.clone();
                                let mut skipped = st;
                                if r != u32::MAX {
                                    assume(&mut taken, r, !neg);
                                    assume(&mut skipped, r, neg);
                                }
                                self.effect(ii, class, &mut taken, false, &mut |r, m| {
                                    report(r, ii, m, &mut res)
                                });
                                next.push(taken);
                                next.push(skipped);
                            }
                        }
                    }
                    next.dedup();
                    states = next;
                }
                // Path conditions on redefined registers are forgotten.
                let dests = &self.dec.instrs[ii].dests;
                if !dests.is_empty() {
                    for s in &mut states {
                        s.assume.retain(|a| !dests.contains(&a.0));
                    }
                }
            }
            // Leave the block.
            let last = if block.instrs.is_empty() {
                None
            } else {
                Some(block.instrs.end - 1)
            };
            for st in states {
                match block.term {
                    Terminator::Return | Terminator::Exit | Terminator::Trap | Terminator::End => {
                        self.exit(
                            &st,
                            last.unwrap_or(block.instrs.start.saturating_sub(1)),
                            Self::path(&nodes, n),
                            &mut res,
                        );
                    }
                    Terminator::CondLeave => {
                        let l = last.unwrap_or(block.instrs.start.saturating_sub(1));
                        match self.guard(&st, l) {
                            G::T => self.exit(&st, l, Self::path(&nodes, n), &mut res),
                            G::F => {
                                for e in &block.succs {
                                    add(
                                        e.to,
                                        st.clone(),
                                        Some(n),
                                        &mut nodes,
                                        &mut queue,
                                        &mut res,
                                    );
                                }
                            }
                            G::Div => {
                                // Some lanes leave, the warp goes on without them.
                                let mut s = st.clone();
                                s.exited = s.exited.or(Some(l as u32));
                                for e in &block.succs {
                                    add(e.to, s.clone(), Some(n), &mut nodes, &mut queue, &mut res);
                                }
                            }
                            G::Uni(..) => {
                                self.exit(&st, l, Self::path(&nodes, n), &mut res);
                                for e in &block.succs {
                                    add(
                                        e.to,
                                        st.clone(),
                                        Some(n),
                                        &mut nodes,
                                        &mut queue,
                                        &mut res,
                                    );
                                }
                            }
                        }
                    }
                    Terminator::CondBranch => {
                        let l = last.unwrap_or(block.instrs.start.saturating_sub(1));
                        let g = self.guard(&st, l);
                        for e in &block.succs {
                            let taken = e.kind == EdgeKind::Taken;
                            let mut s = st.clone();
                            match g {
                                G::T if !taken => continue,
                                G::F if taken => continue,
                                G::Uni(r, neg) if r != u32::MAX => {
                                    assume(&mut s, r, if taken { !neg } else { neg })
                                }
                                G::Div if s.diverged.is_none() => {
                                    s.diverged = Some((
                                        self.ipdom[b].map_or(u32::MAX, |x| x as u32),
                                        l as u32,
                                    ));
                                }
                                _ => {}
                            }
                            add(e.to, s, Some(n), &mut nodes, &mut queue, &mut res);
                        }
                    }
                    Terminator::Jump | Terminator::Indirect | Terminator::Fallthrough => {
                        for e in &block.succs {
                            add(e.to, st.clone(), Some(n), &mut nodes, &mut queue, &mut res);
                        }
                    }
                }
            }
        }
        // Findings carry their node until the walk ends; now the path of blocks that shows it.
        for f in &mut res.findings {
            f.path = Self::path(&nodes, f.path[0]);
        }
        res
    }

    fn exit(&self, st: &St, instr: usize, path: Vec<BlockId>, res: &mut WarpResult) {
        let info = ExitInfo {
            net: st.net,
            last_alloc: st.last_alloc,
            unmatched: st.unmatched,
            instr,
            path,
        };
        if res.max_exit.as_ref().is_none_or(|m| info.net > m.net) {
            res.max_exit = Some(info.clone());
        }
        if res.min_exit.as_ref().is_none_or(|m| info.net < m.net) {
            res.min_exit = Some(info);
        }
    }

    /// The effect of instruction `ii` (executing, under a lane-divergent guard when `div`).
    fn effect(
        &self,
        ii: usize,
        class: Class<'_>,
        st: &mut St,
        div: bool,
        report: &mut dyn FnMut(RuleId, String),
    ) {
        let ins = self.cfg.instrs[ii];
        let line = |i: u32| self.cfg.instrs[i as usize].pos.line;
        let divergent = div || st.diverged.is_some();
        let div_why = || match st.diverged {
            _ if div => format!(
                "its guard `{}` is not warp-uniform",
                ins.guard.map_or("", |g| g.pred)
            ),
            Some((_, br)) => format!(
                "it is inside the region of the lane-divergent branch at line {}",
                line(br)
            ),
            None => String::new(),
        };
        match class {
            Class::Tcgen05(fam) => {
                let form = ins.form.as_ref();
                // GEN-ALIGNED-CONVERGENT (§9.7.16.7.1, .8.3, .8.4) and WAIT-ALIGNED-CONVERGENT
                // (§9.7.16.8.5): `.sync.aligned` tcgen05 instructions need warp-uniform control.
                // GEN-NO-EXITED-THREAD (§9.7.16.7.1, .8.3, .8.4): no thread of the warp may
                // have exited.
                if let Some(x) = st.exited
                    && matches!(
                        fam,
                        Family::Alloc
                            | Family::Dealloc
                            | Family::Relinquish
                            | Family::Ld
                            | Family::St
                    )
                {
                    report(
                        RuleId::GenNoExitedThread,
                        format!(
                            "`{}` after some threads of the warp left at line {}",
                            ins.opcode,
                            line(x)
                        ),
                    );
                }
                if divergent {
                    match fam {
                        Family::Alloc
                        | Family::Dealloc
                        | Family::Relinquish
                        | Family::Ld
                        | Family::St => report(
                            RuleId::GenAlignedConvergent,
                            format!(
                                "`{}` is .sync.aligned but {}: every thread of the warp must execute it",
                                ins.opcode,
                                div_why()
                            ),
                        ),
                        Family::Wait => report(
                            RuleId::WaitAlignedConvergent,
                            format!(
                                "`{}` must be executed by every thread of the warp, but {}",
                                ins.opcode,
                                div_why()
                            ),
                        ),
                        _ => {}
                    }
                }
                // wait's `.cta_group` is WAIT-OPS (instruction-level), not a pair operation.
                let cta2 = form.and_then(Form::cta_group).is_some_and(|g| g.n() == 2)
                    && !matches!(form, Some(Form::Wait(_)));
                // GEN-PEER-ACTIVE (§9.7.16.5, §9.7.16.7.1): the judgement the oracle's run
                // makes too (`crate::peer`): kept once a cluster barrier wait is on the path.
                if let Some(need) = form.and_then(crate::peer::peer_need)
                    && !st.cluster_synced
                {
                    report(RuleId::GenPeerActive, need.explain(ins.opcode));
                }
                match form {
                    Some(Form::Alloc(_)) => {
                        // ALLOC-AFTER-RELINQUISH (§9.7.16.7.1).
                        if let Some(r) = st.relinquished {
                            report(
                                RuleId::AllocAfterRelinquish,
                                format!(
                                    "alloc after this CTA relinquished its allocation permit at line {}",
                                    line(r)
                                ),
                            );
                        }
                        let ncols = self.ncols[ii];
                        // ALLOC-NONINCREASING (§9.7.16.7.1).
                        if let (Some(n), Some(m)) = (ncols, st.last_ncols)
                            && n > m
                        {
                            report(
                                RuleId::AllocNonincreasing,
                                format!(
                                    "alloc of {n} columns after an alloc of {m} on this path: allocation sizes must not increase"
                                ),
                            );
                        }
                        st.net = (st.net + 1).min(3);
                        st.last_alloc = Some(ii as u32);
                        if ncols.is_some() {
                            st.last_ncols = ncols;
                        }
                        st.pair_access = Some(ii as u32);
                    }
                    Some(Form::Dealloc(_)) => {
                        // MCM-LD-WAR (§9.7.16.6.4.5): a tcgen05.ld not yet waited for may still read
                        // the columns being freed.
                        if let Some(l) = st.pending_ld {
                            report(
                                RuleId::McmLdWar,
                                format!(
                                    "dealloc while the tcgen05.ld at line {} has not been waited for (no tcgen05.wait::ld in between)",
                                    line(l)
                                ),
                            );
                        }
                        // DEALLOC-PAIR-SYNC (§9.7.16.7.1): before a ::2 dealloc the two warps must
                        // synchronize their TMEM accesses: a cluster barrier after the last one.
                        if cta2 && let Some(a) = st.pair_access {
                            report(
                                RuleId::DeallocPairSync,
                                format!(
                                    "cta_group::2 dealloc with no cluster barrier since the TMEM access or alloc at line {}",
                                    line(a)
                                ),
                            );
                        }
                        st.net = (st.net - 1).max(-2);
                        if st.net < 0 && st.unmatched.is_none() {
                            st.unmatched = Some(ii as u32);
                        }
                    }
                    Some(Form::Relinquish(_)) if st.relinquished.is_none() => {
                        st.relinquished = Some(ii as u32);
                    }
                    Some(Form::Ld(_)) => {
                        if let Some(s) = st.pending_st {
                            if let Some(p) = st.published {
                                // MCM-XTHREAD-NONPIPE (§9.7.16.6.4.4).
                                report(
                                    RuleId::McmXthreadNonpipe,
                                    format!(
                                        "tcgen05.ld after the synchronization at line {} while the tcgen05.st at line {} was not waited for before it (no tcgen05.wait::st)",
                                        line(p),
                                        line(s)
                                    ),
                                );
                            } else if tmem_base(self.cfg.instrs[s as usize]) == tmem_base(ins) {
                                // MCM-ST-BEFORE-USE (§9.7.16.6.4.2): same address register.
                                report(
                                    RuleId::McmStBeforeUse,
                                    format!(
                                        "tcgen05.ld of the address the tcgen05.st at line {} wrote, with no tcgen05.wait::st in between",
                                        line(s)
                                    ),
                                );
                            }
                        }
                        st.pending_ld = st.pending_ld.or(Some(ii as u32));
                        self.async_op(ii, st, report);
                    }
                    Some(Form::St(_)) => {
                        st.pending_st = st.pending_st.or(Some(ii as u32));
                        self.async_op(ii, st, report);
                    }
                    Some(Form::Wait(w)) => {
                        match w.op {
                            WaitOp::Ld => st.pending_ld = None,
                            WaitOp::St => st.pending_st = None,
                        }
                        if st.pending_ld.is_none() && st.pending_st.is_none() {
                            st.published = None;
                        }
                    }
                    Some(Form::Mma(_) | Form::Cp(_) | Form::Shift(_)) => {
                        if let Some(s) = st.pending_st {
                            match st.published {
                                // MCM-XTHREAD-NONPIPE (§9.7.16.6.4.4).
                                Some(p) => report(
                                    RuleId::McmXthreadNonpipe,
                                    format!(
                                        "`{}` after the synchronization at line {} while the tcgen05.st at line {} was not waited for before it (no tcgen05.wait::st)",
                                        ins.opcode,
                                        line(p),
                                        line(s)
                                    ),
                                ),
                                // MCM-ST-BEFORE-USE (§9.7.16.6.4.2).
                                None => report(
                                    RuleId::McmStBeforeUse,
                                    format!(
                                        "`{}` while the tcgen05.st at line {} has not been waited for (no tcgen05.wait::st)",
                                        ins.opcode,
                                        line(s)
                                    ),
                                ),
                            }
                        }
                        if let (Some(l), Some(p)) = (st.pending_ld, st.published) {
                            // MCM-XTHREAD-NONPIPE (§9.7.16.6.4.4), write after read across threads.
                            report(
                                RuleId::McmXthreadNonpipe,
                                format!(
                                    "`{}` (writes TMEM) after the synchronization at line {} while the tcgen05.ld at line {} was not waited for before it (no tcgen05.wait::ld)",
                                    ins.opcode,
                                    line(p),
                                    line(l)
                                ),
                            );
                        }
                        self.async_op(ii, st, report);
                    }
                    // COMMIT-IMPLICIT-FENCE (§9.7.16.6.4.2): commit acts as fence::before_thread_sync.
                    Some(Form::Commit(_)) => st.unfenced_async = None,
                    Some(Form::Fence(FenceKind::BeforeThreadSync)) => st.unfenced_async = None,
                    Some(Form::Fence(FenceKind::AfterThreadSync)) => st.unfenced_sync = None,
                    Some(Form::Relinquish(_)) | None => {}
                }
            }
            Class::BarCta { waits, .. } => {
                self.release(ii, st, report);
                if waits && st.async_seen {
                    st.unfenced_sync = Some(ii as u32);
                }
            }
            Class::ClusterArrive { .. } => self.release(ii, st, report),
            Class::ClusterWait => {
                st.cluster_synced = true;
                st.pair_access = None;
                if st.async_seen {
                    st.unfenced_sync = Some(ii as u32);
                }
            }
            Class::Mbarrier(MbarOp::Arrive) => self.release(ii, st, report),
            Class::Mbarrier(MbarOp::TryWait | MbarOp::TestWait) if st.async_seen => {
                st.unfenced_sync = Some(ii as u32)
            }
            _ => {}
        }
    }

    /// An asynchronous tcgen05 op (ld, st, mma, cp, shift) issued by this warp.
    fn async_op(&self, ii: usize, st: &mut St, report: &mut dyn FnMut(RuleId, String)) {
        st.pair_access = Some(ii as u32);
        st.async_seen = true;
        if self.fences {
            // MCM-XTHREAD (§9.7.16.6.3-4), consumer side: after a thread synchronization, an
            // async op is ordered after it only through fence::after_thread_sync.
            if let Some(s) = st.unfenced_sync.take() {
                report(
                    RuleId::McmXthread,
                    format!(
                        "asynchronous `{}` after the thread synchronization at line {} without tcgen05.fence::after_thread_sync in between",
                        self.cfg.instrs[ii].opcode, self.cfg.instrs[s as usize].pos.line
                    ),
                );
            }
            st.unfenced_async = Some(ii as u32);
        }
    }

    /// A synchronization that may hand TMEM to other threads (barrier arrive/sync, cluster
    /// arrive, mbarrier arrive).
    fn release(&self, ii: usize, st: &mut St, report: &mut dyn FnMut(RuleId, String)) {
        let line = |i: u32| self.cfg.instrs[i as usize].pos.line;
        let op = self.cfg.instrs[ii].opcode;
        // MCM-XTHREAD-NONPIPE (§9.7.16.6.4.4): a non-pipelined producer must wait for completion
        // (wait::ld / wait::st) before synchronizing with the consumer. An mbarrier arrive is an
        // explicit handoff and is reported at once; after a barrier, the report waits for a TMEM
        // access on the path that the unwaited op races with (the barrier may serve another
        // purpose than handing this TMEM over).
        let is_arrive = matches!(self.cfg.class(ii), Class::Mbarrier(MbarOp::Arrive));
        if is_arrive {
            if let Some(l) = st.pending_ld {
                report(
                    RuleId::McmXthreadNonpipe,
                    format!(
                        "`{op}` hands TMEM to other threads while the tcgen05.ld at line {} has not been waited for (no tcgen05.wait::ld)",
                        line(l)
                    ),
                );
            }
            if let Some(s) = st.pending_st {
                report(
                    RuleId::McmXthreadNonpipe,
                    format!(
                        "`{op}` publishes TMEM to other threads while the tcgen05.st at line {} has not been waited for (no tcgen05.wait::st)",
                        line(s)
                    ),
                );
            }
        } else if st.pending_ld.is_some() || st.pending_st.is_some() {
            st.published = st.published.or(Some(ii as u32));
        }
        if self.fences {
            // MCM-XTHREAD (§9.7.16.6.3-4), producer side.
            if let Some(a) = st.unfenced_async.take() {
                report(
                    RuleId::McmXthread,
                    format!(
                        "`{op}` after the asynchronous tcgen05 op at line {} without tcgen05.fence::before_thread_sync in between",
                        line(a)
                    ),
                );
            }
        }
    }
}

fn assume(st: &mut St, r: u32, v: bool) {
    st.assume.retain(|a| a.0 != r);
    if st.assume.len() >= MAX_ASSUMPTIONS {
        st.assume.remove(0);
    }
    st.assume.push((r, v));
    st.assume.sort_unstable();
}

/// The base register of an instruction's first address operand (the TMEM address of ld/st).
fn tmem_base<'a>(i: &tcgen05_ir::ptx::parse::Instr<'a>) -> Option<&'a str> {
    i.operands.iter().find_map(|o| match o {
        tcgen05_ir::ptx::parse::Operand::Addr { base, .. } => Some(*base),
        _ => None,
    })
}
