//! The simulator's state and its step function: CTAs (column allocator, permit, TMEM, shared
//! memory, mbarriers, CTA barrier), warps (program counter, lane masks, registers, per-thread
//! ld/st/mma queues, fence state), asynchronous operations with their ordering constraints, and
//! the scheduler loop. See `sim/mod.rs` for the documented concrete behaviours.

use super::code::{Code, Ins};
use super::faults::{Fault, Faults};
use super::mma::{self, MmaPlan};
use super::sched::Chooser;
use super::smem::Region;
use super::tmem::{self, Tmem};
use tcgen05_ir::form::{LdForm, StForm};
use tcgen05_ir::observe::{self, Site};
use tcgen05_ir::outcome::{HangSite, Outcome, TrapKind};
use tcgen05_ir::values::{st_coeffs, st_value};
use tcgen05_ir::*;

/// How the scheduler picks the next action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Every choice through the [`Chooser`] (seeded random or exhaustive).
    Choose,
    /// Round robin over warps; asynchronous operations perform as soon as they may.
    RoundRobin,
    /// Round robin over warps; asynchronous operations perform only when forced or when no
    /// warp can move, newest first.
    Adversarial,
}

/// Upper bound on scheduler steps. Programs have bounded loops and the simulator never spins,
/// so a run takes about (statements x iterations x warps) steps; 4 million is far above any
/// generated program and still well under a second.
pub const MAX_STEPS: u64 = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PairKind {
    Alloc,
    Dealloc,
    Relinquish,
}

#[derive(Debug, Clone)]
struct PairReq {
    warp: usize,
    kind: PairKind,
    ncols: u32,
    col: u32,
    slot: u8,
    done: bool,
}

#[derive(Debug, Clone, Default)]
struct Mbar {
    init: bool,
    count: u32,
    pending: u32,
    phase: u32,
    released: Vec<u32>,
}

#[derive(Debug)]
struct Cta {
    cluster: u32,
    rank: u32,
    tmem: Tmem,
    used: u16,
    permit: bool,
    slots: Vec<u32>,
    mbars: Vec<Mbar>,
    /// Shared, so that a performed MMA keeps the words it read (copy on write).
    regions: Vec<std::rc::Rc<Region>>,
    bar_gen: u32,
    bar_count: u32,
    bar_released: Vec<u32>,
    pairs: Vec<PairReq>,
    /// Its warps (consecutive indices of `Machine::warps`).
    warps: std::ops::Range<usize>,
}

#[derive(Debug, Clone)]
enum Frame {
    If { saved: u32, els: u32 },
    Loop { left: u8 },
    Call { body: usize, ret: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Alloc { ncols: u32 },
    Pair,
    Bar { generation: u32 },
    Cluster { target: u32 },
    Mbar { bar: u8, parity: bool },
}

/// What the scheduler scans every step, one small entry per warp (kept apart from [`Warp`]).
#[derive(Debug, Clone, Copy)]
struct Hot {
    /// The warp has finished.
    done: bool,
    /// What the warp is blocked on, if anything.
    block: Option<Block>,
    /// The warp's CTA (as [`Warp::cta`]).
    cta: u32,
}

#[derive(Debug)]
struct Warp {
    cta: usize,
    rank: u32,
    body: usize,
    pc: u32,
    stack: Vec<Frame>,
    mask: u32,
    exited: u32,
    regs: Vec<Vec<u32>>,
    pending_ld: Vec<u32>,
    pending_st: Vec<u32>,
    pending_mma: Vec<u32>,
    fenced: Vec<u32>,
    acquired: Vec<u32>,
    after_preds: Vec<u32>,
    cluster_arrivals: u32,
    pair_req: Option<usize>,
    bar_arrived: bool,
    /// With the `fence-noop` fault: TMEM as it was when the warp began its last wait, which
    /// loads hoisted above that wait read.
    snapshot: Option<Box<Tmem>>,
}

#[derive(Debug)]
enum AKind {
    Ld {
        ld: u32,
        lanes: u32,
        lane0: u32,
        col0: u32,
        split: u32,
        form: LdForm,
        nregs: u32,
        snap: bool,
    },
    St {
        lanes: u32,
        lane0: u32,
        col0: u32,
        split: u32,
        form: StForm,
        nregs: u32,
        seed: u32,
    },
    Mma(Box<MmaPlan>),
    Shift {
        lane0: u32,
        col0: u32,
        both: bool,
    },
    Cp {
        desc: SmemDesc,
        col0: u32,
        rows: u32,
        row_bytes: u32,
        /// The destination lanes of row r: [`cp_lanes`].
        multicast: Option<CpMulticast>,
        lane0: u32,
        both: bool,
    },
}

#[derive(Debug)]
struct AsyncOp {
    warp: usize,
    lane: u32,
    cta_group: Option<CtaGroup>,
    kind: AKind,
    preds: Vec<u32>,
    /// `preds[..met]` are done (ops are never undone, so the index only grows).
    met: u32,
    done: bool,
}

#[derive(Debug)]
struct Tracker {
    ops: Vec<u32>,
    targets: Vec<(usize, u8)>,
}

/// One run of one program under one schedule.
#[derive(Debug)]
pub struct Machine<'p> {
    p: &'p Program,
    code: std::rc::Rc<Code<'p>>,
    faults: Faults,
    wording: super::Wording,
    policy: Policy,
    words: Vec<u32>,
    ctas: Vec<Cta>,
    warps: Vec<Warp>,
    /// Per warp, its [`Hot`] state.
    hot: Vec<Hot>,
    ops: Vec<AsyncOp>,
    pending: Vec<u32>,
    trackers: Vec<Tracker>,
    cluster_released: Vec<Vec<u32>>,
    abort: Option<Outcome>,
    rr: usize,
    /// `::2` collectives waiting for their peer (no matching to do when 0).
    open_pairs: usize,
    /// Per cluster, the fewest cluster arrivals of its unfinished warps (`u32::MAX`: none, the
    /// low 32 bits), computed when asked for: valid when bit 32 is set, cleared
    /// ([`Machine::cluster_changed`]) when a warp of the cluster arrives or finishes.
    cluster_min: Vec<std::cell::Cell<u64>>,
    /// Reused buffers of `perform_st` and `perform_ld` (empty between operations).
    scratch: [Vec<u32>; 2],
    /// Reused cell buffer of `perform_ld` (512 cells once used).
    ld_cells: Vec<u32>,
    /// Counts the changes of the state that a blocked warp waits on (the allocator's used
    /// columns, `::2` collectives completing, CTA barrier generations, cluster arrivals and
    /// finished warps, mbarrier phases and initializations): while it stays the same, a
    /// blocked warp's readiness ([`Machine::unblocked`]) stays the same.
    wake: u64,
    /// Reused list of the operations a wait or a register read forces (empty between uses).
    force_buf: Vec<u32>,
    /// The scheduler's buffers (in [`Machine::run`]), and, once the machine is dropped, the
    /// buffers it gives back for the next machine of the thread.
    spare: Box<Spare>,
}

/// The buffers of one machine, all empty: kept per thread between runs ([`Spare::take`],
/// given back when a machine is dropped), so that a run allocates them only when it needs
/// more than an earlier run of the thread did.
#[derive(Debug, Default)]
struct Spare {
    ctas: Vec<Cta>,
    warps: Vec<Warp>,
    hot: Vec<Hot>,
    ops: Vec<AsyncOp>,
    pending: Vec<u32>,
    cluster_released: Vec<Vec<u32>>,
    cluster_min: Vec<std::cell::Cell<u64>>,
    scratch: [Vec<u32>; 2],
    ld_cells: Vec<u32>,
    force_buf: Vec<u32>,
    /// [`Machine::run`]'s ready warps, ready bits, eligible operations and warp priorities.
    ready_buf: Vec<usize>,
    ready_bits: Vec<u64>,
    eligible: Vec<u32>,
    prio: Vec<usize>,
}

thread_local! {
    static SPARE: std::cell::Cell<Option<Box<Spare>>> = const { std::cell::Cell::new(None) };
}

impl Spare {
    /// The thread's spare buffers (new ones when none are kept, or while another machine of
    /// the thread holds them).
    fn take() -> Box<Spare> {
        SPARE
            .try_with(|s| s.take())
            .ok()
            .flatten()
            .unwrap_or_default()
    }
}

impl Drop for Machine<'_> {
    /// Empties the machine's buffers into its [`Spare`] and keeps that for the thread's next
    /// machine. Emptying drops the CTAs and warps, whose own drops give their TMEM blocks and
    /// register buffers to their pools.
    fn drop(&mut self) {
        let mut s = std::mem::take(&mut self.spare);
        fn put<T>(dst: &mut Vec<T>, mut src: Vec<T>) {
            src.clear();
            if src.capacity() > dst.capacity() {
                *dst = src;
            }
        }
        put(&mut s.ctas, std::mem::take(&mut self.ctas));
        put(&mut s.warps, std::mem::take(&mut self.warps));
        put(&mut s.hot, std::mem::take(&mut self.hot));
        put(&mut s.ops, std::mem::take(&mut self.ops));
        put(&mut s.pending, std::mem::take(&mut self.pending));
        put(
            &mut s.cluster_released,
            std::mem::take(&mut self.cluster_released),
        );
        put(&mut s.cluster_min, std::mem::take(&mut self.cluster_min));
        let [a, b] = std::mem::take(&mut self.scratch);
        put(&mut s.scratch[0], a);
        put(&mut s.scratch[1], b);
        put(&mut s.ld_cells, std::mem::take(&mut self.ld_cells));
        put(&mut s.force_buf, std::mem::take(&mut self.force_buf));
        s.ready_buf.clear();
        s.ready_bits.clear();
        s.eligible.clear();
        s.prio.clear();
        let _ = SPARE.try_with(|c| c.set(Some(s)));
    }
}

enum Step {
    Progress,
    Blocked(Block),
}

impl<'p> Machine<'p> {
    /// A machine at the start of the kernel.
    pub fn new(p: &'p Program, config: super::SimConfig, policy: Policy) -> Machine<'p> {
        let faults = config.faults;
        let code = Code::of(p);
        let words = vec![0u32; code.layout.total_words()];
        let l = &p.launch;
        let cs = u32::from(l.cluster_size.max(1));
        let nctas = l.ctas();
        let nw = p.warps.len();
        let mut spare = Spare::take();
        let mut ctas = std::mem::take(&mut spare.ctas);
        ctas.reserve(nctas as usize);
        let mut warps = std::mem::take(&mut spare.warps);
        warps.reserve(nctas as usize * nw);
        for c in 0..nctas {
            let ws = c as usize * nw..(c as usize + 1) * nw;
            ctas.push(Cta {
                cluster: c / cs,
                rank: c % cs,
                tmem: Tmem::new(),
                used: 0,
                permit: true,
                slots: vec![0; usize::from(p.smem.slots)],
                mbars: vec![Mbar::default(); usize::from(p.smem.mbarriers)],
                regions: p
                    .smem
                    .regions
                    .iter()
                    .map(|b| std::rc::Rc::new(Region::zeroed((b.max(&16) / 4) as usize)))
                    .collect(),
                bar_gen: 0,
                bar_count: 0,
                bar_released: Vec::new(),
                pairs: Vec::new(),
                warps: ws,
            });
            for w in 0..nw {
                warps.push(Warp {
                    cta: c as usize,
                    rank: w as u32,
                    body: w,
                    pc: 0,
                    stack: Vec::new(),
                    mask: u32::MAX,
                    exited: 0,
                    regs: Vec::new(),
                    pending_ld: Vec::new(),
                    pending_st: Vec::new(),
                    pending_mma: Vec::new(),
                    fenced: Vec::new(),
                    acquired: Vec::new(),
                    after_preds: Vec::new(),
                    cluster_arrivals: 0,
                    pair_req: None,
                    bar_arrived: false,
                    snapshot: None,
                });
            }
        }
        let clusters = (nctas / cs.max(1)).max(1) as usize;
        let mut hot = std::mem::take(&mut spare.hot);
        hot.extend(warps.iter().map(|wr| Hot {
            done: false,
            block: None,
            cta: wr.cta as u32,
        }));
        let mut cluster_released = std::mem::take(&mut spare.cluster_released);
        cluster_released.resize(clusters, Vec::new());
        let mut cluster_min = std::mem::take(&mut spare.cluster_min);
        cluster_min.resize(clusters, std::cell::Cell::new(0));
        let mut m = Machine {
            p,
            code: std::rc::Rc::new(code),
            faults,
            wording: config.wording,
            policy,
            words,
            ctas,
            hot,
            warps,
            ops: std::mem::take(&mut spare.ops),
            pending: std::mem::take(&mut spare.pending),
            trackers: Vec::new(),
            cluster_released,
            abort: None,
            rr: 0,
            open_pairs: 0,
            cluster_min,
            scratch: std::mem::take(&mut spare.scratch),
            ld_cells: std::mem::take(&mut spare.ld_cells),
            wake: 0,
            force_buf: std::mem::take(&mut spare.force_buf),
            spare,
        };
        for w in 0..m.warps.len() {
            let base = m.warp_block(w);
            put_lanes(&mut m.words, base, u32::MAX, observe::CHECKPOINT_START);
        }
        m
    }

    fn fault(&self, f: Fault) -> bool {
        self.faults.has(f)
    }

    fn warp_block(&self, w: usize) -> usize {
        let wr = &self.warps[w];
        self.code.layout.warp_block(wr.cta as u32, wr.rank as usize)
    }

    /// Runs to the end and reports the outcome.
    pub fn run(mut self, chooser: &mut dyn Chooser) -> Outcome {
        let mut steps = 0u64;
        // The random scheduler runs half of its schedules uniformly (any ready warp or async
        // operation at each step) and half by random warp priorities (the highest-priority
        // ready warp runs; async operations perform one time in four), which runs whole
        // CTAs or warps ahead of others.
        let by_priority = self.policy == Policy::Choose && chooser.choose(2) == 1;
        let mut prio = std::mem::take(&mut self.spare.prio);
        if by_priority {
            prio.extend((0..self.warps.len()).map(|_| chooser.choose(1 << 16)));
        }
        // The ready warps of a step are `ready_buf[..n]`, in warp order: the set bits of
        // `ready_bits` (bit w: warp w may step). A warp's bit changes when it steps or gives
        // up, or, for a blocked warp, when `wake` changes: only then is it recomputed.
        let mut ready_buf = std::mem::take(&mut self.spare.ready_buf);
        ready_buf.resize(self.warps.len(), 0);
        let mut ready_bits = std::mem::take(&mut self.spare.ready_bits);
        ready_bits.resize(self.warps.len().div_ceil(64), 0);
        for w in 0..self.warps.len() {
            self.refresh(&mut ready_bits, w);
        }
        let mut woken = self.wake;
        let mut eligible = std::mem::take(&mut self.spare.eligible);
        let end = loop {
            if self.abort.is_some()
                && let Some(o) = self.abort.take()
            {
                break Some(o);
            }
            steps += 1;
            if steps > MAX_STEPS {
                break Some(Outcome::TimedOut { limit_ms: 0 });
            }
            if self.open_pairs > 0 {
                self.match_pairs();
            }
            if self.wake != woken {
                woken = self.wake;
                for w in 0..self.hot.len() {
                    if self.hot[w].block.is_some() {
                        self.refresh(&mut ready_bits, w);
                    }
                }
            }
            let mut n = 0;
            for (i, &word) in ready_bits.iter().enumerate() {
                let mut b = word;
                while b != 0 {
                    // n <= the warp's index < the number of warps.
                    if let Some(slot) = ready_buf.get_mut(n) {
                        *slot = 64 * i + b.trailing_zeros() as usize;
                    }
                    n += 1;
                    b &= b - 1;
                }
            }
            let ready = &ready_buf[..n];
            eligible.clear();
            let need_eligible = self.policy != Policy::Adversarial || ready.is_empty();
            if need_eligible {
                for i in 0..self.pending.len() {
                    let id = self.pending[i];
                    if self.preds_done(id) {
                        eligible.push(id);
                    }
                }
            }
            if ready.is_empty() && eligible.is_empty() {
                if self.hot.iter().all(|h| h.done) {
                    break None;
                }
                // Bounded mbarrier waits give up only when nothing else can move.
                if let Some(w) = (0..self.warps.len()).find(|&w| {
                    !self.hot[w].done && matches!(self.hot[w].block, Some(Block::Mbar { .. }))
                }) {
                    self.give_up(w);
                    self.refresh(&mut ready_bits, w);
                    continue;
                }
                break Some(self.hung());
            }
            match self.policy {
                Policy::RoundRobin => {
                    if let Some(&id) = eligible.first() {
                        self.perform(id);
                    } else {
                        let w = self.next_rr(ready);
                        self.step(w);
                        self.refresh(&mut ready_bits, w);
                    }
                }
                Policy::Adversarial => {
                    if !ready.is_empty() {
                        let w = self.next_rr(ready);
                        self.step(w);
                        self.refresh(&mut ready_bits, w);
                    } else if let Some(&id) = eligible.last() {
                        self.perform(id);
                    }
                }
                Policy::Choose if by_priority => {
                    if !eligible.is_empty() && (ready.is_empty() || chooser.choose(4) == 0) {
                        let k = chooser.choose(eligible.len());
                        self.perform(eligible[k]);
                    } else if let Some(&w) = ready
                        .iter()
                        .max_by_key(|&&w| (prio[w], std::cmp::Reverse(w)))
                    {
                        self.step(w);
                        self.refresh(&mut ready_bits, w);
                    }
                }
                Policy::Choose => {
                    let k = chooser.choose(ready.len() + eligible.len());
                    if k < ready.len() {
                        let w = ready[k];
                        self.step(w);
                        self.refresh(&mut ready_bits, w);
                    } else {
                        self.perform(eligible[k - ready.len()]);
                    }
                }
            }
        };
        self.spare.ready_buf = ready_buf;
        self.spare.ready_bits = ready_bits;
        self.spare.eligible = eligible;
        self.spare.prio = prio;
        end.unwrap_or_else(|| self.finish())
    }

    /// Sets warp `w`'s bit in `bits` to whether it may step now: not finished, and not
    /// blocked or [`Machine::unblocked`].
    #[inline(always)]
    fn refresh(&self, bits: &mut [u64], w: usize) {
        // The common case, a warp that stepped and goes on: set its bit here, without a call.
        if let Some(h) = self.hot.get(w)
            && !h.done
            && h.block.is_none()
            && let Some(word) = bits.get_mut(w / 64)
        {
            *word |= 1 << (w % 64);
            return;
        }
        self.refresh_slow(bits, w);
    }

    /// [`Machine::refresh`] of a finished or blocked warp.
    #[inline(never)]
    fn refresh_slow(&self, bits: &mut [u64], w: usize) {
        let h = &self.hot[w];
        let can = match h.block {
            _ if h.done => false,
            None => true,
            Some(b) => self.unblocked(w, h.cta as usize, b),
        };
        if let Some(word) = bits.get_mut(w / 64) {
            *word = (*word & !(1 << (w % 64))) | u64::from(can) << (w % 64);
        }
    }

    /// Whether every predecessor of op `id` has performed.
    fn preds_done(&mut self, id: u32) -> bool {
        let op = &self.ops[id as usize];
        let mut k = op.met as usize;
        while let Some(&p) = op.preds.get(k) {
            if !self.ops[p as usize].done {
                break;
            }
            k += 1;
        }
        let all = k == op.preds.len();
        self.ops[id as usize].met = k as u32;
        all
    }

    fn next_rr(&mut self, ready: &[usize]) -> usize {
        let n = self.warps.len();
        let pick = ready
            .iter()
            .copied()
            .min_by_key(|&w| (w + n - self.rr % n) % n)
            .expect("non-empty");
        self.rr = pick + 1;
        pick
    }

    fn finish(&mut self) -> Outcome {
        let columns: u32 = self.ctas.iter().map(|c| c.used.count_ones() * 32).sum();
        if columns > 0 {
            Outcome::Leaked {
                columns,
                words: std::mem::take(&mut self.words),
            }
        } else {
            Outcome::Completed {
                words: std::mem::take(&mut self.words),
            }
        }
    }

    fn hung(&mut self) -> Outcome {
        let mut blocked = Vec::new();
        for (w, wr) in self.warps.iter().enumerate() {
            if self.hot[w].done {
                continue;
            }
            let base = self.warp_block(w);
            let on = match self.hot[w].block {
                Some(Block::Alloc { ncols }) => format!(
                    "tcgen05.alloc of {ncols} columns ({} of 512 in use)",
                    self.ctas[wr.cta].used.count_ones() * 32
                ),
                Some(Block::Pair) => "a ::2 collective waiting for its peer warp".to_string(),
                Some(Block::Bar { .. }) => "barrier.sync".to_string(),
                Some(Block::Cluster { .. }) => "barrier.cluster.wait".to_string(),
                Some(Block::Mbar { bar, parity }) => {
                    format!("mbarrier {bar} parity {}", u8::from(parity))
                }
                None => "waiting for other lanes to reconverge".to_string(),
            };
            let lanes = if wr.mask != 0 { wr.mask } else { !wr.exited };
            for lane in 0..32 {
                if lanes >> lane & 1 == 1 {
                    blocked.push(HangSite {
                        cta: wr.cta as u32,
                        warp: wr.rank,
                        lane,
                        checkpoint: self.words[base + lane as usize],
                        blocked_on: Some(on.clone()),
                    });
                }
            }
        }
        Outcome::Hung {
            blocked,
            words: std::mem::take(&mut self.words),
        }
    }

    // ----- readiness -----

    /// Whether warp `w` of CTA `c`, blocked on `b`, may step.
    fn unblocked(&self, w: usize, c: usize, b: Block) -> bool {
        let cta = &self.ctas[c];
        match b {
            Block::Alloc { ncols } => find_free(cta.used, ncols).is_some(),
            Block::Pair => self.warps[w]
                .pair_req
                .is_none_or(|i| cta.pairs.get(i).is_none_or(|r| r.done)),
            Block::Bar { generation } => cta.bar_gen != generation,
            Block::Cluster { target } => self.cluster_min(cta.cluster) >= target,
            Block::Mbar { bar, parity } => self.mbar_passes(c, bar, parity),
        }
    }

    /// A warp of `w`'s cluster arrived or finished: forgets the cluster's
    /// [`Machine::cluster_min`].
    fn cluster_changed(&mut self, w: usize) {
        self.wake += 1;
        let cl = self.ctas[self.warps[w].cta].cluster as usize;
        if let Some(m) = self.cluster_min.get(cl) {
            m.set(0);
        }
    }

    /// The fewest cluster arrivals of an unfinished warp of `cluster` (`u32::MAX`: none):
    /// [`Machine::cluster_arrived`] of every target at once.
    fn cluster_min(&self, cluster: u32) -> u32 {
        let memo = self.cluster_min.get(cluster as usize);
        if let Some(m) = memo
            && m.get() >> 32 == 1
        {
            return m.get() as u32;
        }
        let mut min = u32::MAX;
        for c in self.ctas.iter().filter(|c| c.cluster == cluster) {
            for w in c.warps.clone() {
                if !self.hot[w].done {
                    min = min.min(self.warps[w].cluster_arrivals);
                }
            }
        }
        if let Some(m) = memo {
            m.set(1 << 32 | u64::from(min));
        }
        min
    }

    fn cluster_arrived(&self, cluster: u32, target: u32) -> bool {
        self.ctas.iter().filter(|c| c.cluster == cluster).all(|c| {
            c.warps
                .clone()
                .all(|w| self.hot[w].done || self.warps[w].cluster_arrivals >= target)
        })
    }

    fn mbar_passes(&self, cta: usize, bar: u8, parity: bool) -> bool {
        let Some(m) = self.ctas[cta].mbars.get(usize::from(bar)) else {
            return false;
        };
        if !m.init {
            return false;
        }
        let current = m.phase & 1 == 1;
        if self.fault(Fault::MbarParityInverted) {
            current == parity
        } else {
            current != parity
        }
    }

    fn give_up(&mut self, w: usize) {
        if let Some(Ins::MbarWait { site, .. }) = self.ins(w).cloned() {
            let mask = self.warps[w].mask;
            self.record(w, site, mask, observe::MBAR_GAVE_UP);
        }
        self.hot[w].block = None;
        self.warps[w].pc += 1;
    }

    fn ins(&self, w: usize) -> Option<&Ins<'p>> {
        let wr = &self.warps[w];
        self.code.bodies[wr.body].get(wr.pc as usize)
    }

    // ----- stepping -----

    fn step(&mut self, w: usize) {
        let code = std::rc::Rc::clone(&self.code);
        let wr = &self.warps[w];
        let Some(ins) = code.bodies[wr.body].get(wr.pc as usize) else {
            self.hot[w].done = true;
            self.cluster_changed(w);
            return;
        };
        match self.exec(w, ins) {
            Step::Progress => {
                self.hot[w].block = None;
            }
            Step::Blocked(b) => self.hot[w].block = Some(b),
        }
    }

    fn advance(&mut self, w: usize) -> Step {
        self.warps[w].pc += 1;
        Step::Progress
    }

    fn exec(&mut self, w: usize, ins: &Ins<'p>) -> Step {
        let mask = self.warps[w].mask;
        match ins {
            Ins::If { cond, else_at } => {
                let t = mask & self.eval(w, cond);
                let wr = &mut self.warps[w];
                wr.stack.push(Frame::If {
                    saved: mask,
                    els: mask & !t,
                });
                wr.mask = t;
                if t == 0 {
                    wr.pc = *else_at;
                } else {
                    wr.pc += 1;
                }
                Step::Progress
            }
            Ins::Else { end_at } => {
                let wr = &mut self.warps[w];
                if let Some(Frame::If { els, .. }) = wr.stack.last() {
                    wr.mask = els & !wr.exited;
                }
                if wr.mask == 0 {
                    wr.pc = *end_at;
                } else {
                    wr.pc += 1;
                }
                Step::Progress
            }
            Ins::EndIf => {
                let wr = &mut self.warps[w];
                if let Some(Frame::If { saved, .. }) = wr.stack.pop() {
                    wr.mask = saved & !wr.exited;
                }
                self.advance(w)
            }
            Ins::Loop { count, end_at } => {
                let wr = &mut self.warps[w];
                if *count == 0 || wr.mask == 0 {
                    wr.pc = *end_at;
                } else {
                    wr.stack.push(Frame::Loop { left: *count });
                    wr.pc += 1;
                }
                Step::Progress
            }
            Ins::LoopEnd { top } => {
                let wr = &mut self.warps[w];
                let mut again = false;
                if let Some(Frame::Loop { left }) = wr.stack.last_mut() {
                    *left -= 1;
                    again = *left > 0 && wr.mask != 0;
                }
                if again {
                    wr.pc = *top;
                } else {
                    wr.stack.pop();
                    wr.pc += 1;
                }
                Step::Progress
            }
            Ins::Call(f) => {
                let body = self.code.warps + usize::from(*f);
                let wr = &mut self.warps[w];
                if body < self.code.bodies.len() && wr.mask != 0 {
                    wr.stack.push(Frame::Call {
                        body: wr.body,
                        ret: wr.pc + 1,
                    });
                    wr.body = body;
                    wr.pc = 0;
                } else {
                    wr.pc += 1;
                }
                Step::Progress
            }
            Ins::End => {
                let wr = &mut self.warps[w];
                if let Some(Frame::Call { body, ret }) = wr.stack.pop() {
                    wr.body = body;
                    wr.pc = ret;
                    return Step::Progress;
                }
                let live = !wr.exited;
                let base = self.warp_block(w);
                put_lanes(&mut self.words, base, live, observe::CHECKPOINT_DONE);
                self.hot[w].done = true;
                self.cluster_changed(w);
                self.check_bar(self.warps[w].cta);
                Step::Progress
            }
            Ins::Nop => self.advance(w),
            Ins::Checkpoint(id) => {
                if mask == 0 {
                    return self.advance(w);
                }
                let base = self.warp_block(w);
                put_lanes(&mut self.words, base, mask, u32::from(*id));
                self.advance(w)
            }
            Ins::Exit => {
                if mask == 0 {
                    return self.advance(w);
                }
                let base = self.warp_block(w);
                put_lanes(&mut self.words, base, mask, observe::CHECKPOINT_EXIT);
                let wr = &mut self.warps[w];
                wr.exited |= mask;
                wr.mask = 0;
                if wr.exited == u32::MAX {
                    self.hot[w].done = true;
                    let c = wr.cta;
                    self.cluster_changed(w);
                    self.check_bar(c);
                    return Step::Progress;
                }
                self.advance(w)
            }
            Ins::BarCta => {
                if mask == 0 {
                    return self.advance(w);
                }
                if self.fault(Fault::BarCtaNoWait) {
                    return self.advance(w);
                }
                let c = self.warps[w].cta;
                if !self.warps[w].bar_arrived {
                    self.hoist_point(w);
                    self.warps[w].bar_arrived = true;
                    let f = std::mem::take(&mut self.warps[w].fenced);
                    let cta = &mut self.ctas[c];
                    cta.bar_count += 1;
                    cta.bar_released.extend(f);
                    let generation = cta.bar_gen;
                    self.check_bar(c);
                    if self.ctas[c].bar_gen == generation {
                        return Step::Blocked(Block::Bar { generation });
                    }
                } else if let Some(Block::Bar { generation }) = self.hot[w].block
                    && self.ctas[c].bar_gen == generation
                {
                    return Step::Blocked(Block::Bar { generation });
                }
                self.warps[w].bar_arrived = false;
                let rel = self.live_ids(&self.ctas[c].bar_released);
                self.ctas[c].bar_released = rel.clone();
                self.warps[w].acquired.extend(rel);
                self.advance(w)
            }
            Ins::ClusterArrive => {
                if mask == 0 {
                    return self.advance(w);
                }
                let f = std::mem::take(&mut self.warps[w].fenced);
                let cl = self.ctas[self.warps[w].cta].cluster as usize;
                self.cluster_released[cl].extend(f);
                self.warps[w].cluster_arrivals += 1;
                self.cluster_changed(w);
                self.advance(w)
            }
            Ins::ClusterWait => {
                if mask == 0 {
                    return self.advance(w);
                }
                self.hoist_point(w);
                let cl = self.ctas[self.warps[w].cta].cluster;
                let target = self.warps[w].cluster_arrivals;
                if !self.fault(Fault::ClusterBarrierNoWait) && !self.cluster_arrived(cl, target) {
                    return Step::Blocked(Block::Cluster { target });
                }
                let rel = self.live_ids(&self.cluster_released[cl as usize]);
                self.warps[w].acquired.extend(rel);
                self.advance(w)
            }
            Ins::MbarInit { bar, count } => {
                if mask == 0 {
                    return self.advance(w);
                }
                let c = self.warps[w].cta;
                if let Some(m) = self.ctas[c].mbars.get_mut(usize::from(*bar)) {
                    self.wake += 1;
                    *m = Mbar {
                        init: true,
                        count: *count,
                        pending: *count,
                        phase: 0,
                        released: Vec::new(),
                    };
                }
                self.advance(w)
            }
            Ins::MbarArrive { bar, cta } => {
                if mask == 0 {
                    return self.advance(w);
                }
                let own = self.warps[w].cta;
                let target = match cta {
                    None => Some(own),
                    Some(r) => self.cta_of_rank(own, u32::from(*r)),
                };
                let f = std::mem::take(&mut self.warps[w].fenced);
                if let Some(t) = target {
                    if let Some(m) = self.ctas[t].mbars.get_mut(usize::from(*bar)) {
                        m.released.extend(f);
                    }
                    for _ in lanes(mask) {
                        self.arrive(t, *bar);
                    }
                }
                self.advance(w)
            }
            Ins::MbarWait {
                bar, parity, site, ..
            } => {
                if mask == 0 {
                    return self.advance(w);
                }
                let c = self.warps[w].cta;
                self.hoist_point(w);
                if !self.mbar_passes(c, *bar, *parity) {
                    return Step::Blocked(Block::Mbar {
                        bar: *bar,
                        parity: *parity,
                    });
                }
                if let Some(m) = self.ctas[c].mbars.get(usize::from(*bar)) {
                    let rel = self.live_ids(&m.released);
                    self.warps[w].acquired.extend(rel);
                }
                self.record(w, *site, mask, observe::MBAR_COMPLETED);
                self.advance(w)
            }
            Ins::Fill { region, seed, elem } => {
                if mask == 0 {
                    return self.advance(w);
                }
                let c = self.warps[w].cta;
                if let Some(r) = self.ctas[c].regions.get_mut(usize::from(*region)) {
                    std::rc::Rc::make_mut(r).fill(mask, *elem, *seed);
                }
                self.advance(w)
            }
            Ins::ObserveAddr { slot, site } => {
                if mask == 0 {
                    return self.advance(w);
                }
                let c = self.warps[w].cta;
                let v = self.ctas[c]
                    .slots
                    .get(usize::from(*slot))
                    .copied()
                    .unwrap_or(0);
                self.record(w, *site, mask, v);
                self.advance(w)
            }
            Ins::Ld { op, ld } => {
                if mask == 0 {
                    return self.advance(w);
                }
                self.issue_ld(w, op, *ld);
                self.advance(w)
            }
            Ins::WaitLd { records } => {
                if mask == 0 {
                    return self.advance(w);
                }
                if !self.fault(Fault::WaitLdEarly) {
                    let mut pend = std::mem::take(&mut self.force_buf);
                    pend.extend_from_slice(&self.warps[w].pending_ld);
                    self.force_all(pend);
                }
                for &ld in records {
                    self.record_ld(w, ld, mask);
                }
                self.advance(w)
            }
            Ins::Record(records) => {
                if mask == 0 {
                    return self.advance(w);
                }
                for &ld in records {
                    // A register read waits for the load that writes it (MCM-LD-REGDEP).
                    let mut pend = std::mem::take(&mut self.force_buf);
                    pend.extend(
                        self.warps[w]
                        .pending_ld
                        .iter()
                        .copied()
                        .filter(|&id| matches!(self.ops[id as usize].kind, AKind::Ld { ld: l, .. } if l == ld)));
                    self.force_all(pend);
                    self.record_ld(w, ld, mask);
                }
                self.advance(w)
            }
            Ins::Tc(op) => {
                if mask == 0 {
                    return self.advance(w);
                }
                self.exec_tc(w, op)
            }
        }
    }

    fn cta_of_rank(&self, own: usize, rank: u32) -> Option<usize> {
        let cs = u32::from(self.p.launch.cluster_size.max(1));
        if rank >= cs {
            return None;
        }
        let c = self.ctas[own].cluster * cs + rank;
        ((c as usize) < self.ctas.len()).then_some(c as usize)
    }

    fn peer(&self, own: usize) -> Option<usize> {
        self.cta_of_rank(own, self.ctas[own].rank ^ 1)
    }

    fn live_ids(&self, v: &[u32]) -> Vec<u32> {
        v.iter()
            .copied()
            .filter(|&id| !self.ops[id as usize].done)
            .collect()
    }

    fn check_bar(&mut self, c: usize) {
        let live = self.ctas[c]
            .warps
            .clone()
            .filter(|&w| !self.hot[w].done)
            .count() as u32;
        let cta = &mut self.ctas[c];
        if cta.bar_count > 0 && cta.bar_count >= live {
            cta.bar_gen += 1;
            self.wake += 1;
            cta.bar_count = 0;
        }
    }

    fn arrive(&mut self, c: usize, bar: u8) {
        if let Some(m) = self.ctas[c].mbars.get_mut(usize::from(bar)) {
            if !m.init {
                return;
            }
            m.pending = m.pending.saturating_sub(1);
            if m.pending == 0 {
                m.phase += 1;
                self.wake += 1;
                m.pending = m.count;
            }
        }
    }

    fn eval(&self, w: usize, c: &Cond) -> u32 {
        let wr = &self.warps[w];
        let cta = &self.ctas[wr.cta];
        let all = |b: bool| if b { u32::MAX } else { 0 };
        match c {
            Cond::LaneLt(n) => {
                if *n >= 32 {
                    u32::MAX
                } else {
                    (1u32 << n) - 1
                }
            }
            Cond::LaneEq(n) => {
                if *n < 32 {
                    1 << n
                } else {
                    0
                }
            }
            Cond::ElectOne => wr.mask & wr.mask.wrapping_neg(),
            Cond::CtaRank(n) => all(cta.rank == u32::from(*n)),
            Cond::CtaOdd => all(cta.rank & 1 == 1),
            Cond::Cluster(n) => all(cta.cluster == u32::from(*n)),
            Cond::WarpRank(n) => all(wr.rank == u32::from(*n)),
        }
    }

    /// Records a one-word observation (the same word for every lane of `mask`).
    fn record(&mut self, w: usize, site: Site, mask: u32, v: u32) {
        let base = self.warp_block(w) + site.offset as usize;
        put_lanes(&mut self.words, base, mask, 1);
        for lane in lanes(mask) {
            if site.words > 0 {
                self.words[base + 32 + (lane * site.words) as usize] = v;
            }
        }
    }

    fn record_ld(&mut self, w: usize, ld: u32, mask: u32) {
        let info = self.code.lds[ld as usize];
        let site = info.site;
        let base = self.warp_block(w) + site.offset as usize;
        let words = info.words as usize;
        let sw = site.words as usize;
        let regs: &[u32] = self.warps[w].regs.get(ld as usize).map_or(&[], |r| r);
        let n = words.min(sw);
        put_lanes(&mut self.words, base, mask, 1);
        for lane in lanes(mask) {
            let d = base + 32 + lane as usize * sw;
            let src = regs.get(lane as usize * words..).unwrap_or_default();
            let dst = &mut self.words[d..d + n];
            if src.len() >= n {
                copy_words(dst, &src[..n]);
            } else {
                for (i, x) in dst.iter_mut().enumerate() {
                    *x = src.get(i).copied().unwrap_or(0);
                }
            }
        }
    }

    /// The TMEM address a warp computes for `t` (the lowest active lane's, when lanes disagree:
    /// LDST-TADDR-UNIFORM, undefined behaviour).
    fn taddr(&self, w: usize, t: &TmemRef) -> u32 {
        let wr = &self.warps[w];
        let base = match t.base {
            TBase::Slot(s) => self.ctas[wr.cta]
                .slots
                .get(usize::from(s))
                .copied()
                .unwrap_or(0),
            TBase::Abs => 0,
        };
        let mut a = base.wrapping_add(t.offset());
        if t.divergent && wr.mask.trailing_zeros() & 1 == 1 {
            a = a.wrapping_add(1);
        }
        a
    }

    /// First lane of the warp's 32-lane window for an ld/st at lane field `lane_field`
    /// (LDST-LANE-QUARTER: a lane field outside the quarter wraps into it).
    fn window(&self, w: usize, lane_field: u32, is_ld: bool) -> u32 {
        let mut q = self.warps[w].rank % 4;
        if is_ld && self.fault(Fault::LaneQuarterOffByOne) {
            q = (q + 1) % 4;
        }
        32 * q + (lane_field % 32)
    }

    fn new_op(
        &mut self,
        w: usize,
        lane: u32,
        cta_group: Option<CtaGroup>,
        kind: AKind,
        mut preds: Vec<u32>,
    ) -> u32 {
        let id = self.ops.len() as u32;
        preds.retain(|&p| !self.ops[p as usize].done);
        self.ops.push(AsyncOp {
            warp: w,
            lane,
            cta_group,
            kind,
            preds,
            met: 0,
            done: false,
        });
        self.pending.push(id);
        id
    }

    fn issue_ld(&mut self, w: usize, op: &Op, ld: u32) {
        let Op::Ld {
            form,
            taddr,
            split,
            nregs,
        } = op
        else {
            return;
        };
        let a = self.taddr(w, taddr);
        let info = self.code.lds[ld as usize];
        let wr = &mut self.warps[w];
        if wr.regs.len() <= ld as usize {
            wr.regs.resize(ld as usize + 1, Vec::new());
        }
        if wr.regs[ld as usize].is_empty() {
            wr.regs[ld as usize] = regs_buffer(32 * info.words as usize);
        }
        let mask = wr.mask;
        let lane0 = self.window(w, a >> 16, true);
        let kind = AKind::Ld {
            ld,
            lanes: mask,
            lane0,
            col0: a & 0xFFFF,
            split: split.unwrap_or(0),
            form: *form,
            nregs: u32::from(*nregs),
            snap: self.warps[w].snapshot.is_some(),
        };
        let preds = self.warps[w].after_preds.clone();
        let id = self.new_op(w, 0, None, kind, preds);
        self.warps[w].pending_ld.push(id);
    }

    /// With the `fence-noop` fault, a wait the warp begins (not one it is already blocked in)
    /// is where its following loads are hoisted to: remember TMEM as it is now.
    fn hoist_point(&mut self, w: usize) {
        if self.fault(Fault::FenceNoop) && self.hot[w].block.is_none() {
            let t = self.ctas[self.warps[w].cta].tmem.clone();
            self.warps[w].snapshot = Some(Box::new(t));
        }
    }

    fn exec_tc(&mut self, w: usize, op: &Op) -> Step {
        let mask = self.warps[w].mask;
        // (A snapshot exists only under the `fence-noop` fault: test that first, a branch
        // that is always predicted.)
        if self.warps[w].snapshot.is_some() && !matches!(op, Op::Wait { .. } | Op::Fence { .. }) {
            self.warps[w].snapshot = None;
        }
        match op {
            Op::Alloc {
                form,
                slot,
                dst_global,
                ncols,
            } => {
                let n = ncols_of(ncols);
                let c = self.warps[w].cta;
                if form.cta_group == CtaGroup::Two {
                    if self.fault(Fault::AllocPairNotCollective) {
                        return self.alloc_one(w, c, n, *slot, *dst_global, true);
                    }
                    return self.pair(w, PairKind::Alloc, n, 0, *slot);
                }
                self.alloc_one(w, c, n, *slot, *dst_global, false)
            }
            Op::Dealloc { form, taddr, ncols } => {
                let a = self.taddr(w, taddr);
                let n = ncols_of(ncols);
                let c = self.warps[w].cta;
                if form.cta_group == CtaGroup::Two && self.wording.pair_dealloc_waits {
                    return self.pair(w, PairKind::Dealloc, n, a & 0xFFFF, 0);
                }
                self.free(c, a & 0xFFFF, n);
                self.advance(w)
            }
            Op::Relinquish { form } => {
                let c = self.warps[w].cta;
                if form.cta_group == CtaGroup::Two
                    && self.wording.pair_relinquish_waits
                    && !self.fault(Fault::RelinquishClusterWide)
                {
                    return self.pair(w, PairKind::Relinquish, 0, 0, 0);
                }
                if self.fault(Fault::RelinquishClusterWide) {
                    let cl = self.ctas[c].cluster;
                    for cta in self.ctas.iter_mut().filter(|x| x.cluster == cl) {
                        cta.permit = false;
                    }
                } else {
                    self.ctas[c].permit = false;
                    if form.cta_group == CtaGroup::Two
                        && let Some(p) = self.peer(c)
                    {
                        self.ctas[p].permit = false;
                    }
                }
                self.advance(w)
            }
            Op::St {
                form,
                taddr,
                split,
                nregs,
                seed,
            } => {
                let a = self.taddr(w, taddr);
                let lane0 = self.window(w, a >> 16, false);
                let kind = AKind::St {
                    lanes: mask,
                    lane0,
                    col0: a & 0xFFFF,
                    split: split.unwrap_or(0),
                    form: *form,
                    nregs: u32::from(*nregs),
                    seed: *seed,
                };
                let preds = self.warps[w].after_preds.clone();
                let id = self.new_op(w, 0, None, kind, preds);
                self.warps[w].pending_st.push(id);
                self.advance(w)
            }
            Op::Wait { form } => {
                // wait::ld is Ins::WaitLd; this is wait::st (WAIT-SCOPE, WAIT-KIND).
                if form.op == WaitOp::St && !self.fault(Fault::WaitStEarly) {
                    let mut pend = std::mem::take(&mut self.force_buf);
                    pend.extend_from_slice(&self.warps[w].pending_st);
                    self.force_all(pend);
                }
                self.advance(w)
            }
            Op::Fence { kind } => {
                if !self.fault(Fault::FenceNoop) {
                    let wr = &self.warps[w];
                    match kind {
                        FenceKind::BeforeThreadSync => {
                            let mut v: Vec<u32> = wr.pending_ld.clone();
                            v.extend(&wr.pending_st);
                            v.extend(&wr.pending_mma);
                            let v = self.live_ids(&v);
                            self.warps[w].fenced = v;
                        }
                        FenceKind::AfterThreadSync => {
                            let v = self.live_ids(&wr.acquired);
                            let wr = &mut self.warps[w];
                            wr.after_preds = v.clone();
                            wr.acquired = v;
                        }
                    }
                }
                self.advance(w)
            }
            Op::Commit {
                form,
                mbar,
                addr,
                cta_mask,
            } => {
                let c = self.warps[w].cta;
                let mut targets = Vec::new();
                if *addr == MbarAddr::Shared {
                    match (form.multicast, cta_mask) {
                        (true, Some(m)) => {
                            for r in 0..16u32 {
                                if m >> r & 1 == 1
                                    && let Some(t) = self.cta_of_rank(c, r)
                                {
                                    targets.push((t, *mbar));
                                }
                            }
                        }
                        _ => targets.push((c, *mbar)),
                    }
                }
                for lane in lanes(mask) {
                    let tracked: Vec<u32> = self.warps[w]
                        .pending_mma
                        .iter()
                        .copied()
                        .filter(|&id| {
                            let o = &self.ops[id as usize];
                            !o.done && o.lane == lane && o.cta_group == Some(form.cta_group)
                        })
                        .take(if self.fault(Fault::CommitTracksFirstOnly) {
                            1
                        } else {
                            usize::MAX
                        })
                        .collect();
                    if !self.fault(Fault::FenceNoop) {
                        // COMMIT-IMPLICIT-FENCE.
                        self.warps[w].fenced = tracked.clone();
                    }
                    if tracked.is_empty() || self.fault(Fault::CommitArriveEarly) {
                        for &(t, b) in &targets {
                            self.arrive(t, b);
                        }
                    } else {
                        self.trackers.push(Tracker {
                            ops: tracked,
                            targets: targets.clone(),
                        });
                    }
                }
                self.advance(w)
            }
            Op::Mma(m) => {
                let reorder = self.fault(Fault::MmaPipelineReordered);
                let same_kind = self.wording.mma_pipeline_same_kind;
                for lane in lanes(mask) {
                    let plan = match mma::plan(
                        self.p,
                        m,
                        self.taddr(w, &m.d),
                        match &m.a {
                            MmaA::Tmem(t) => Some(self.taddr(w, t)),
                            MmaA::Desc(_) => None,
                        },
                        self.faults,
                    ) {
                        Ok(p) => p,
                        Err(why) => {
                            self.abort = Some(Outcome::NotRun(why));
                            return self.advance(w);
                        }
                    };
                    let mut preds = self.pipeline_preds(
                        w,
                        lane,
                        |k| match k {
                            // MCM-PIPE-MMA-MMA (reference §4.2 pair 1).
                            AKind::Mma(prev) => prev.same_pipeline(&plan, same_kind) && !reorder,
                            // MCM-PIPE-CP-MMA and MCM-PIPE-SHIFT-MMA (pairs 2 and 3).
                            AKind::Cp { .. } | AKind::Shift { .. } => true,
                            _ => false,
                        },
                        m.form.cta_group,
                    );
                    preds.extend(self.warps[w].after_preds.iter().copied());
                    let id = self.new_op(
                        w,
                        lane,
                        Some(m.form.cta_group),
                        AKind::Mma(Box::new(plan)),
                        preds,
                    );
                    self.warps[w].pending_mma.push(id);
                }
                self.advance(w)
            }
            Op::Shift { form, taddr } => {
                for lane in lanes(mask) {
                    let a = self.taddr(w, taddr);
                    let mut preds = self.pipeline_preds(
                        w,
                        lane,
                        |k| matches!(k, AKind::Mma(_)),
                        form.cta_group,
                    );
                    preds.extend(self.warps[w].after_preds.iter().copied());
                    let kind = AKind::Shift {
                        lane0: a >> 16,
                        col0: a & 0xFFFF,
                        both: form.cta_group == CtaGroup::Two,
                    };
                    let id = self.new_op(w, lane, Some(form.cta_group), kind, preds);
                    self.warps[w].pending_mma.push(id);
                }
                self.advance(w)
            }
            Op::Cp { form, taddr, src } => {
                if src.swizzle != 0 || usize::from(src.region) >= self.p.smem.regions.len() {
                    self.abort = Some(Outcome::NotRun(
                        "the simulator does not implement swizzled or out-of-range cp descriptors"
                            .into(),
                    ));
                    return self.advance(w);
                }
                let (rows, row_bytes) = match form.shape {
                    CpShape::S128x256b => (128, 32),
                    CpShape::S4x256b => (4, 32),
                    CpShape::S128x128b => (128, 16),
                    CpShape::S64x128b => (64, 16),
                    CpShape::S32x128b => (32, 16),
                    // Not a shape (CP-SHAPE): copied as its name says.
                    CpShape::S64x256b => (64, 32),
                };
                for lane in lanes(mask) {
                    let a = self.taddr(w, taddr);
                    let l0 = a >> 16;
                    let mut preds = if form.shape == CpShape::S4x256b {
                        self.pipeline_preds(
                            w,
                            lane,
                            |k| matches!(k, AKind::Shift { .. }),
                            form.cta_group,
                        )
                    } else {
                        Vec::new()
                    };
                    preds.extend(self.warps[w].after_preds.iter().copied());
                    let kind = AKind::Cp {
                        desc: *src,
                        col0: a & 0xFFFF,
                        rows,
                        row_bytes,
                        multicast: form.multicast,
                        lane0: l0,
                        both: form.cta_group == CtaGroup::Two,
                    };
                    let id = self.new_op(w, lane, Some(form.cta_group), kind, preds);
                    self.warps[w].pending_mma.push(id);
                }
                self.advance(w)
            }
            Op::Ld { .. } => self.advance(w),
        }
    }

    /// Earlier pending async ops of the same thread and cta_group that `is_pred` says are
    /// pipeline-ordered before the new one (reference §4.2).
    fn pipeline_preds(
        &self,
        w: usize,
        lane: u32,
        is_pred: impl Fn(&AKind) -> bool,
        cg: CtaGroup,
    ) -> Vec<u32> {
        self.warps[w]
            .pending_mma
            .iter()
            .copied()
            .filter(|&id| {
                let o = &self.ops[id as usize];
                !o.done && o.lane == lane && o.cta_group == Some(cg) && is_pred(&o.kind)
            })
            .collect()
    }

    fn alloc_one(
        &mut self,
        w: usize,
        c: usize,
        n: u32,
        slot: u8,
        dst_global: bool,
        both: bool,
    ) -> Step {
        if !self.ctas[c].permit {
            self.abort = Some(Outcome::Trapped {
                kind: TrapKind::AllocWithoutPermit,
                words: self.words.clone(),
            });
            return self.advance(w);
        }
        let peer = if both { self.peer(c) } else { None };
        let used = self.ctas[c].used | peer.map_or(0, |p| self.ctas[p].used);
        let Some(col) = find_free(used, n) else {
            return Step::Blocked(Block::Alloc { ncols: n });
        };
        self.mark(c, col, n);
        if let Some(p) = peer {
            self.mark(p, col, n);
        }
        if !dst_global && let Some(s) = self.ctas[c].slots.get_mut(usize::from(slot)) {
            *s = col;
        }
        self.advance(w)
    }

    fn mark(&mut self, c: usize, col: u32, n: u32) {
        self.wake += 1;
        self.ctas[c].used |= unit_mask(col, n);
    }

    fn free(&mut self, c: usize, col: u32, n: u32) {
        self.wake += 1;
        if self.fault(Fault::DeallocWrongColumns) {
            self.ctas[c].used &= !unit_mask(col + n, n);
        } else {
            self.ctas[c].used &= !unit_mask(col, n);
        }
    }

    fn pair(&mut self, w: usize, kind: PairKind, ncols: u32, col: u32, slot: u8) -> Step {
        let c = self.warps[w].cta;
        if self.warps[w].pair_req.is_none() {
            self.open_pairs += 1;
            self.ctas[c].pairs.push(PairReq {
                warp: w,
                kind,
                ncols,
                col,
                slot,
                done: false,
            });
            self.warps[w].pair_req = Some(self.ctas[c].pairs.len() - 1);
            self.match_pairs();
        }
        let i = self.warps[w].pair_req.expect("set above");
        if self.ctas[c].pairs[i].done {
            self.warps[w].pair_req = None;
            if let Some(Outcome::Trapped { .. }) = self.abort {
                return Step::Progress;
            }
            return self.advance(w);
        }
        Step::Blocked(Block::Pair)
    }

    /// Completes `::2` collectives whose two warps have both arrived: the k-th pending
    /// collective of the even CTA pairs with the k-th of the odd CTA.
    fn match_pairs(&mut self) {
        if self.open_pairs == 0 {
            return;
        }
        for e in 0..self.ctas.len() {
            if self.ctas[e].rank & 1 == 1 {
                continue;
            }
            let Some(o) = self.peer(e) else { continue };
            loop {
                let a = self.ctas[e].pairs.iter().position(|r| !r.done);
                let b = self.ctas[o].pairs.iter().position(|r| !r.done);
                let (Some(a), Some(b)) = (a, b) else { break };
                let (ra, rb) = (self.ctas[e].pairs[a].clone(), self.ctas[o].pairs[b].clone());
                if ra.kind != rb.kind {
                    break;
                }
                match ra.kind {
                    PairKind::Alloc => {
                        if !self.ctas[e].permit || !self.ctas[o].permit {
                            self.abort = Some(Outcome::Trapped {
                                kind: TrapKind::AllocWithoutPermit,
                                words: self.words.clone(),
                            });
                        }
                        let used = self.ctas[e].used | self.ctas[o].used;
                        let n = ra.ncols.max(rb.ncols);
                        let Some(col) = find_free(used, n) else {
                            break;
                        };
                        self.mark(e, col, n);
                        self.mark(o, col, n);
                        if let Some(s) = self.ctas[e].slots.get_mut(usize::from(ra.slot)) {
                            *s = col;
                        }
                        if let Some(s) = self.ctas[o].slots.get_mut(usize::from(rb.slot)) {
                            *s = col;
                        }
                    }
                    PairKind::Dealloc => {
                        self.free(e, ra.col, ra.ncols);
                        self.free(o, rb.col, rb.ncols);
                    }
                    PairKind::Relinquish => {
                        self.ctas[e].permit = false;
                        self.ctas[o].permit = false;
                    }
                }
                self.ctas[e].pairs[a].done = true;
                self.ctas[o].pairs[b].done = true;
                self.wake += 1;
                self.open_pairs -= 2;
                let _ = (ra.warp, rb.warp);
            }
        }
    }

    // ----- asynchronous operations -----

    /// [`Machine::force`] of `ids`, a list taken from [`Machine::force_buf`], which gets it
    /// back empty.
    fn force_all(&mut self, mut ids: Vec<u32>) {
        self.force(&ids);
        ids.clear();
        self.force_buf = ids;
    }

    fn force(&mut self, ids: &[u32]) {
        if self.policy == Policy::Adversarial {
            for &id in ids.iter().rev() {
                self.perform_with_preds(id);
            }
        } else {
            for &id in ids {
                self.perform_with_preds(id);
            }
        }
    }

    fn perform_with_preds(&mut self, id: u32) {
        if self.ops[id as usize].done {
            return;
        }
        // An op's predecessors never change once it is issued.
        let mut k = 0;
        while let Some(&p) = self.ops[id as usize].preds.get(k) {
            self.perform_with_preds(p);
            k += 1;
        }
        self.perform(id);
    }

    fn perform(&mut self, id: u32) {
        if self.ops[id as usize].done {
            return;
        }
        self.ops[id as usize].done = true;
        self.pending.retain(|&x| x != id);
        let w = self.ops[id as usize].warp;
        let c = self.warps[w].cta;
        {
            let wr = &mut self.warps[w];
            wr.pending_ld.retain(|&x| x != id);
            wr.pending_st.retain(|&x| x != id);
            wr.pending_mma.retain(|&x| x != id);
        }
        let kind = std::mem::replace(
            &mut self.ops[id as usize].kind,
            AKind::Shift {
                lane0: 0,
                col0: 0,
                both: false,
            },
        );
        match &kind {
            AKind::Ld { .. } => self.perform_ld(w, c, &kind),
            AKind::St { .. } => self.perform_st(c, &kind),
            AKind::Mma(plan) => self.perform_mma(c, plan),
            AKind::Cp { .. } => self.perform_cp(c, &kind),
            AKind::Shift { .. } => self.perform_shift(c, &kind),
        }
        self.ops[id as usize].kind = kind;
        self.check_trackers();
    }

    /// Performs an ld of warp `w` in CTA `c`: its registers get the cells' values.
    #[inline(never)]
    fn perform_ld(&mut self, w: usize, c: usize, kind: &AKind) {
        let AKind::Ld {
            ld,
            lanes: lm,
            lane0,
            col0,
            split,
            form,
            nregs,
            snap,
        } = *kind
        else {
            return;
        };
        // A load hoisted above a wait (fence-noop fault) reads TMEM as it was then.
        let mut stash = if snap {
            self.warps[w].snapshot.take()
        } else {
            None
        };
        if let Some(t) = stash.as_mut() {
            std::mem::swap(&mut self.ctas[c].tmem, &mut **t);
        }
        let info = self.code.lds[ld as usize];
        let per = tmem::regs_per_rep(form.shape);
        let limit = if self.fault(Fault::LdNumTruncated) {
            per.min(nregs)
        } else {
            nregs
        };
        let pack = form.pack.is_some();
        let mut out = std::mem::take(&mut self.warps[w].regs[ld as usize]);
        let tm = &self.ctas[c].tmem;
        let mut outside = false;
        let run = lane_access(form.shape);
        // .16x32bx2 with a split small enough that no column arithmetic wraps: a run per
        // thread too.
        let bx2 = form.shape == LdStShape::S16x32bx2 && split <= 0xFFFF;
        // The lanes that lazy layers own in the columns `[lo, hi]` of the last run read
        // (`Tmem::owned_lanes`, one look per distinct run of columns): the other lanes read
        // their stored cells directly (`Tmem::get_run_in`).
        let mut owned_at = (u32::MAX, 0u32, 0u128);
        let mut owned = |lo: u32, n: u32| -> u128 {
            let hi = lo.saturating_add(n.max(1) - 1);
            if (owned_at.0, owned_at.1) != (lo, hi) {
                owned_at = (lo, hi, tm.owned_lanes(lo, hi));
            }
            owned_at.2
        };
        // The cells of a packed run (reused: its contents are overwritten before use).
        let mut cells = std::mem::take(&mut self.ld_cells);
        cells.resize(4 * 128, 0);
        // The lane of a lane offset in the warp's window (wrapping in the quarter).
        let lane_of = |lo: u32| lane0 - lane0 % 32 + (lane0 % 32 + lo) % 32;
        for t in lanes(lm) {
            let base = (t * info.words) as usize;
            let width = if pack { 2 * limit } else { limit };
            if (run || bx2) && width as usize <= cells.len() {
                // .16x32bx2: thread t's registers are the consecutive columns from its
                // half's offset (cell_of); the 32-lane shapes from column 0, in lane t.
                let (lo, off) = tmem::first_cell(form.shape, t, 0, split, pack);
                let lane = lane_of(lo);
                let c0 = col0 + off;
                let regs = out.get_mut(base..).unwrap_or_default();
                let n = (limit as usize).min(regs.len());
                if width > 0 && (lane >= tmem::LANES || c0 + width > tmem::COLS) {
                    outside = true;
                }
                if pack {
                    let cells = &mut cells[..2 * n];
                    let o = owned(c0, 2 * n as u32);
                    tm.get_run_in(o, lane, c0, cells);
                    for (slot, ab) in regs[..n].iter_mut().zip(cells.chunks_exact(2)) {
                        *slot = (ab[0] & 0xFFFF) | (ab[1] << 16);
                    }
                } else {
                    let o = owned(c0, n as u32);
                    tm.get_run_in(o, lane, c0, &mut regs[..n]);
                }
            } else {
                // Register by register: the 16-lane shapes spread a thread's registers over
                // two lanes (cell_of).
                let mut cell = |lane: u32, col: u32| {
                    tm.get(lane, col).unwrap_or_else(|| {
                        outside = true;
                        0
                    })
                };
                let regs = out.get_mut(base..).unwrap_or_default();
                for i in 0..limit {
                    let (lo, co) = tmem::first_cell(form.shape, t, i, split, pack);
                    let lane = lane_of(lo);
                    let v = if pack {
                        let a = cell(lane, col0.wrapping_add(co));
                        let b = cell(lane, col0.wrapping_add(co).wrapping_add(1));
                        (a & 0xFFFF) | (b << 16)
                    } else {
                        cell(lane, col0.wrapping_add(co))
                    };
                    if let Some(slot) = regs.get_mut(i as usize) {
                        *slot = v;
                    }
                }
            }
            if form.red {
                let n = nregs as usize;
                let r = out.get(base..base + n).map(|vals| reduce(&form, vals));
                if let (Some(r), Some(slot)) = (r, out.get_mut(base + n)) {
                    *slot = r;
                }
            }
        }
        self.ld_cells = cells;
        if outside {
            self.trap_range();
        }
        if let Some(mut t) = stash {
            std::mem::swap(&mut self.ctas[c].tmem, &mut *t);
            self.warps[w].snapshot = Some(t);
        }
        self.warps[w].regs[ld as usize] = out;
    }

    /// Performs an st into CTA `c`'s TMEM.
    #[inline(never)]
    fn perform_st(&mut self, c: usize, kind: &AKind) {
        let AKind::St {
            lanes: lm,
            lane0,
            col0,
            split,
            form,
            nregs,
            seed,
        } = *kind
        else {
            return;
        };
        let unpack = form.pack.is_some();
        let mut ok = true;
        let window = lane0 - lane0 % 32;
        let run = lane_access(form.shape);
        // .16x32bx2 (split small enough that no column arithmetic wraps): thread t writes
        // the consecutive columns from its half's offset in lane t % 16 (cell_of).
        let bx2 = form.shape == LdStShape::S16x32bx2 && split <= 0xFFFF;
        let [mut vals, mut adds] = std::mem::take(&mut self.scratch);
        vals.clear();
        adds.clear();
        let tm = &mut self.ctas[c].tmem;
        // Every run of the op covers at most `[col0, col0 + 2 * nregs * 2)`; writes to cells no
        // layer owns leave the layers as they are: one look for the op.
        let owned = tm.owned_lanes(col0, col0.saturating_add(4 * nregs));
        for t in lanes(lm) {
            if run || bx2 {
                // st_value(seed, t, i) = t * mul + add_i (values.rs): the addends once per
                // operation.
                if adds.is_empty() {
                    adds.extend((0..nregs).map(|i| st_coeffs(seed, i).1));
                }
                let base = t.wrapping_mul(st_coeffs(seed, 0).0);
                vals.clear();
                if unpack {
                    for &add in &adds {
                        let v = base.wrapping_add(add);
                        vals.extend([v & 0xFFFF, v >> 16]);
                    }
                } else {
                    vals.extend(adds.iter().map(|&add| base.wrapping_add(add)));
                }
                if bx2 {
                    // Its columns may lie beyond `owned`'s: `set_run` looks itself.
                    let (lo, off) = tmem::first_cell(form.shape, t, 0, split, unpack);
                    let c0 = col0 + off;
                    ok &= tm.set_run(window + (lane0 % 32 + lo) % 32, c0, &vals);
                } else {
                    ok &= tm.set_run_in(owned, window + (lane0 % 32 + t) % 32, col0, &vals);
                }
                continue;
            }
            for i in 0..nregs {
                let (lo, co) = tmem::first_cell(form.shape, t, i, split, unpack);
                let lane = window + (lane0 % 32 + lo) % 32;
                let v = st_value(seed, t, i);
                if unpack {
                    ok &= tm.set(lane, col0.wrapping_add(co), v & 0xFFFF);
                    ok &= tm.set(lane, col0.wrapping_add(co).wrapping_add(1), v >> 16);
                } else {
                    ok &= tm.set(lane, col0.wrapping_add(co), v);
                }
            }
        }
        self.scratch = [vals, adds];
        if !ok {
            self.trap_range();
        }
    }

    /// Performs an MMA of CTA `c` (and its peer for `cta_group::2`).
    #[inline(never)]
    fn perform_mma(&mut self, c: usize, plan: &MmaPlan) {
        let res = match self.peer(c).filter(|_| plan.pair()) {
            // cta_group::2: D in both CTAs of the pair, the even CTA first.
            Some(p) => {
                let (e, o) = if self.ctas[c].rank & 1 == 0 {
                    (c, p)
                } else {
                    (p, c)
                };
                let (lo, hi) = self.ctas.split_at_mut(e.max(o));
                let (x, y) = (&mut lo[e.min(o)], &mut hi[0]);
                let (even, odd) = if e < o { (x, y) } else { (y, x) };
                plan.perform_halves([
                    Some((&even.regions, &mut even.tmem)),
                    Some((&odd.regions, &mut odd.tmem)),
                ])
            }
            None if plan.pair() && self.ctas[c].rank & 1 == 1 => {
                let cta = &mut self.ctas[c];
                plan.perform_halves([None, Some((&cta.regions, &mut cta.tmem))])
            }
            None => {
                let cta = &mut self.ctas[c];
                plan.perform(&cta.regions, &mut cta.tmem)
            }
        };
        if let Err(e) = res {
            self.abort = Some(Outcome::NotRun(e));
        }
    }

    /// Performs a cp from CTA `c`'s shared memory (and its peer's for `cta_group::2`).
    #[inline(never)]
    fn perform_cp(&mut self, c: usize, kind: &AKind) {
        let AKind::Cp {
            desc,
            col0,
            rows,
            row_bytes,
            multicast,
            lane0,
            both,
        } = *kind
        else {
            return;
        };
        let mut targets = [Some(c), None];
        if both && let Some(p) = self.peer(c) {
            targets[1] = Some(p);
        }
        let lbo = u32::from(desc.lbo_enc) << 4;
        let sbo = u32::from(desc.sbo_enc) << 4;
        let mut ok = true;
        let n = (row_bytes / 4) as usize;
        let mut vals = [0u32; 8];
        for t in targets.into_iter().flatten() {
            let cta = &mut self.ctas[t];
            let region = &cta.regions[usize::from(desc.region)];
            let tm = &mut cta.tmem;
            // Writes to cells no layer owns leave the layers as they are: one look for the op.
            let owned = tm.owned_lanes(col0, col0.saturating_add(n as u32 - 1));
            for r in 0..rows {
                // Row r, byte b at offset + (r % 8) * 16 + (r / 8) * SBO + b % 16 + (b / 16) *
                // LBO (sim/mod.rs, OQ-29): each 16-byte chunk is 4 consecutive words from
                // its first byte's word (the address arithmetic wraps as a u32).
                let row = desc
                    .offset
                    .wrapping_add((r % 8) * 16)
                    .wrapping_add((r / 8) * sbo);
                for (c, chunk) in vals[..n].chunks_exact_mut(4).enumerate() {
                    let at = row.wrapping_add(c as u32 * lbo);
                    // A source word beyond the data region reads as 0 (documented in
                    // sim/mod.rs).
                    if at <= u32::MAX - 12 {
                        region.read_into((at / 4) as usize, chunk);
                    } else {
                        for (j, v) in chunk.iter_mut().enumerate() {
                            let addr = at.wrapping_add(4 * j as u32);
                            *v = region.get((addr / 4) as usize).unwrap_or(0);
                        }
                    }
                }
                for l in cp_lanes(multicast, lane0, r) {
                    ok &= tm.set_run_in(owned, l, col0, &vals[..n]);
                }
            }
        }
        if !ok {
            self.trap_range();
        }
    }

    /// Performs a shift in CTA `c` (and its peer for `cta_group::2`).
    #[inline(never)]
    fn perform_shift(&mut self, c: usize, kind: &AKind) {
        let AKind::Shift { lane0, col0, both } = *kind else {
            return;
        };
        let mut targets = [Some(c), None];
        if both && let Some(p) = self.peer(c) {
            targets[1] = Some(p);
        }
        let mut ok = true;
        for t in targets.into_iter().flatten() {
            let tm = &mut self.ctas[t].tmem;
            let mut row = [0u32; 8];
            for l in (lane0..lane0 + 31).rev() {
                ok &= tm.get_run(l, col0, &mut row);
                ok &= tm.set_run(l + 1, col0, &row);
            }
        }
        if !ok {
            self.trap_range();
        }
    }

    fn check_trackers(&mut self) {
        let mut i = 0;
        while i < self.trackers.len() {
            if self.trackers[i]
                .ops
                .iter()
                .all(|&o| self.ops[o as usize].done)
            {
                let t = self.trackers.swap_remove(i);
                if self.fault(Fault::CommitLostArrive) {
                    continue;
                }
                for (c, b) in t.targets {
                    self.arrive(c, b);
                }
            } else {
                i += 1;
            }
        }
    }

    #[cold]
    fn trap_range(&mut self) {
        if self.abort.is_none() {
            self.abort = Some(Outcome::Trapped {
                kind: TrapKind::TmemOutOfRange,
                words: self.words.clone(),
            });
        }
    }
}

/// Register buffers of finished machines kept per thread for the next ones ([`regs_buffer`]),
/// at most this many.
const REGS_POOL_MAX: usize = 64;

thread_local! {
    static REGS_POOL: std::cell::RefCell<Vec<Vec<u32>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `n` zeroed registers, in a buffer of an earlier machine when one is kept (zeroing memory
/// just used is cheaper than a fresh zeroed allocation of up to 16 KiB per ld).
fn regs_buffer(n: usize) -> Vec<u32> {
    let mut v = REGS_POOL
        .try_with(|p| p.borrow_mut().pop())
        .ok()
        .flatten()
        .unwrap_or_default();
    v.clear();
    v.resize(n, 0);
    v
}

impl Drop for Warp {
    /// Gives the warp's register buffers to the pool of [`regs_buffer`].
    fn drop(&mut self) {
        let _ = REGS_POOL.try_with(|p| {
            let mut p = p.borrow_mut();
            for r in self.regs.drain(..) {
                if p.len() >= REGS_POOL_MAX {
                    break;
                }
                if r.capacity() > 0 {
                    p.push(r);
                }
            }
        });
    }
}

/// The TMEM lanes that row `r` of a cp lands in (reference §2.7: multicast copies a row into
/// one lane of several warps' quarters).
fn cp_lanes(multicast: Option<CpMulticast>, l0: u32, r: u32) -> impl Iterator<Item = u32> {
    let (lanes, n): ([u32; 4], usize) = match multicast {
        Some(CpMulticast::Warpx4) => ([r % 32, 32 + r % 32, 64 + r % 32, 96 + r % 32], 4),
        Some(CpMulticast::Warpx2_02_13) => {
            let q = r / 32 % 2;
            ([32 * q + r % 32, 32 * (q + 2) + r % 32, 0, 0], 2)
        }
        Some(CpMulticast::Warpx2_01_23) => {
            let q = 2 * (r / 32 % 2);
            ([32 * q + r % 32, 32 * (q + 1) + r % 32, 0, 0], 2)
        }
        None => ([l0 + r, 0, 0, 0], 1),
    };
    lanes.into_iter().take(n)
}

/// `dst.copy_from_slice(src)` (the shorter length of the two) for the short runs of the
/// simulator, as fixed-size copies, so that a short run makes no call to `memcpy` (LLVM turns
/// a loop of word or chunk copies into one): from 16 words on, 16 at a time and a last 16
/// ending at the run's end; below, the two halves' widest power of two from each end (8, 4,
/// 2 words, overlapping in the middle: a word written twice gets the same value), or the
/// one word. A length is one branch of four, where testing 32, 16, 8, 4, 2 and 1 in turn
/// took up to six (mispredicted as the lengths vary).
#[inline(always)]
pub(crate) fn copy_words(dst: &mut [u32], src: &[u32]) {
    /// Copies the `N` words at `at` (when both have them).
    #[inline(always)]
    fn piece<const N: usize>(d: &mut [u32], s: &[u32], at: usize) {
        if let (Some(a), Some(b)) = (d.get_mut(at..at + N), s.get(at..at + N))
            && let (Ok(a), Ok(b)) = (<&mut [u32; N]>::try_from(a), <&[u32; N]>::try_from(b))
        {
            *a = *b;
        }
    }
    let n = dst.len().min(src.len());
    let (d, s) = (&mut dst[..n], &src[..n]);
    if n >= 16 {
        let mut at = 0;
        while at + 16 < n {
            piece::<16>(d, s, at);
            at += 16;
        }
        piece::<16>(d, s, n - 16);
    } else if n >= 8 {
        piece::<8>(d, s, 0);
        piece::<8>(d, s, n - 8);
    } else if n >= 4 {
        piece::<4>(d, s, 0);
        piece::<4>(d, s, n - 4);
    } else if n >= 2 {
        piece::<2>(d, s, 0);
        piece::<2>(d, s, n - 2);
    } else if n == 1 {
        d[0] = s[0];
    }
}

/// `words[base + lane] = v` for every lane of `mask` (a warp's 32 words from `base`): one fill
/// for a whole warp (the common case), lane by lane otherwise.
#[inline]
fn put_lanes(words: &mut [u32], base: usize, mask: u32, v: u32) {
    if mask == u32::MAX
        && let Some(all) = words.get_mut(base..base + 32)
    {
        all.fill(v);
        return;
    }
    for lane in lanes(mask) {
        words[base + lane as usize] = v;
    }
}

/// The lanes set in `mask`, lowest first.
/// How the threads of an ld or st of `shape` with `n` registers meet TMEM lanes:
/// Whether thread t of `shape` uses lane t with its registers in consecutive columns (one
/// run of cells): the 32-lane shapes.
fn lane_access(shape: LdStShape) -> bool {
    matches!(shape, LdStShape::S32x32b | LdStShape::S32x64b)
}

fn lanes(mask: u32) -> impl Iterator<Item = u32> {
    let mut m = mask;
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let l = m.trailing_zeros();
            m &= m - 1;
            l
        })
    })
}

/// The column count an nCols operand means to the simulator: the value, rounded up to a power
/// of two and clamped to [32, 512] (ALLOC-NCOLS-POW2/RANGE are unstated; this is the concrete
/// choice). A divergent register (ALLOC-NCOLS-UNIFORM, UB) means lane 0's value.
fn ncols_of(n: &NCols) -> u32 {
    n.value.clamp(32, 512).next_power_of_two()
}

/// The 32-column units `[col, col + n)` covers, as a bit mask of the 16 units.
fn unit_mask(col: u32, n: u32) -> u16 {
    let first = col / 32;
    let last = (col + n).div_ceil(32).min(16);
    let mut m = 0u16;
    for u in first..last {
        m |= 1 << u;
    }
    m
}

/// First fit, aligned to the allocation size: the lowest column `c` with `c % n == 0` whose
/// units are all free.
fn find_free(used: u16, n: u32) -> Option<u32> {
    let units = n / 32;
    let mut u = 0;
    while u + units <= 16 {
        let m = unit_mask(u * 32, n);
        if used & m == 0 {
            return Some(u * 32);
        }
        u += units;
    }
    None
}

/// `ld.red`: min or max over the lane's loaded values (OQ-13: which columns and the NaN rules
/// are unstated; this reduces every register, as u32, s32 or f32 by the type).
fn reduce(form: &LdForm, vals: &[u32]) -> u32 {
    let max = form.red_op == Some(RedOp::Max);
    // `.abs` (PTX ISA 9.3, §9.7.16.8.3): the reduction is over the absolute values, so the
    // result is one of them.
    let abs = |v: u32| {
        if form.ty == Ty::F32 && form.abs {
            v & 0x7FFF_FFFF
        } else {
            v
        }
    };
    // `.NaN`: a NaN input makes the result the canonical NaN.
    if form.ty == Ty::F32 && form.nan && vals.iter().any(|&v| f32::from_bits(v).is_nan()) {
        return 0x7FFF_FFFF;
    }
    let pick = |a: u32, b: u32| -> u32 {
        let gt = match form.ty {
            Ty::S32 => (a as i32) > (b as i32),
            Ty::F32 => f32::from_bits(a) > f32::from_bits(b),
            _ => a > b,
        };
        if gt == max { a } else { b }
    };
    vals.iter().map(|&v| abs(v)).reduce(pick).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_is_aligned_to_the_allocation_size() {
        assert_eq!(find_free(0, 32), Some(0));
        assert_eq!(find_free(0b1, 64), Some(64));
        assert_eq!(find_free(0xFFFF, 32), None);
        assert_eq!(find_free(0, 512), Some(0));
        assert_eq!(unit_mask(64, 64), 0b1100);
    }

    #[test]
    fn copy_words_copies_every_length() {
        // Every length up to 80 words, and the shorter of two lengths: the same words as
        // `copy_from_slice`, nothing written past the end.
        let src: Vec<u32> = (1..=80).collect();
        for n in 0..=80 {
            for extra in [0, 3] {
                let mut dst = vec![0u32; n + extra];
                copy_words(&mut dst, &src[..n]);
                assert_eq!(&dst[..n], &src[..n], "length {n}");
                assert!(dst[n..].iter().all(|&x| x == 0), "length {n}");
                let mut short = vec![0u32; n];
                copy_words(&mut short, &src[..(n + extra).min(80)]);
                assert_eq!(short, src[..n], "length {n} from a longer source");
            }
        }
    }

    #[test]
    fn ncols_outside_the_legal_set_round_up() {
        assert_eq!(ncols_of(&NCols::imm(48)), 64);
        assert_eq!(ncols_of(&NCols::imm(0)), 32);
        assert_eq!(ncols_of(&NCols::imm(4096)), 512);
    }
}
