//! The simulator's state and its step function: CTAs (column allocator, permit, TMEM, shared
//! memory, mbarriers, CTA barrier), warps (program counter, lane masks, registers, per-thread
//! ld/st/mma queues, fence state), asynchronous operations with their ordering constraints, and
//! the scheduler loop (the instructions' execution, issue and performing are in the submodules).
//! The crate's documentation tables the concrete behaviours.

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

mod decomp;
mod exec;
mod issue;
mod perform;

use issue::find_free;

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
        /// The decompression source format (`.b8x16` with it): [`decomp`].
        decomp: Option<CpSrcFmt>,
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

#[cfg(test)]
mod tests {
    use super::issue::{ncols_of, unit_mask};
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
