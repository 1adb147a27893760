//! Happens-before with vector clocks (docs/architecture.md, "The oracle's run model"), computed by advancing
//! every warp's event list as far as synchronization allows; one pass, each event once, so
//! the cost is O(events × warps) and no interleaving is enumerated.
//!
//! Clock components: `po[g]` (events of global warp `g` known, index `g`) and `cm[g]` (commit
//! arrivals of warp `g` known, index `G + g`). A commit's arrival knows every operation it
//! tracks (COMMIT-TRACK) and carries the implicit `fence::before_thread_sync`
//! (COMMIT-IMPLICIT-FENCE).
//!
//! Synchronization: `barrier.sync 0` (warps that have finished count as arrived: an
//! assumption outside the tcgen05 chapter, noted), `barrier.cluster.arrive/wait` (a
//! `.relaxed` arrive carries no memory ordering), mbarrier arrive → completed phase → try_wait
//! (phases assigned in rounds, see [`Mbar`]), and, when [`Partners`] are given, the `::2`
//! collectives they pair as execution rendezvous without memory ordering (DEALLOC-PAIR-BLOCK,
//! §9.7.16.7.1: a `::2` dealloc "may block to collectively perform the deallocation with the
//! other peer CTA's warp"; ALLOC-PAIR-BLOCK in edition ptx93).

use super::unroll::{Ev, EvKind, Unrolled};
use tcgen05_ir::*;

/// Outcome of one mbarrier wait event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitResult {
    /// The awaited phase completes on every schedule that gets there (the loop is bounded, so
    /// a target may still give up).
    MayComplete,
    /// As [`WaitResult::MayComplete`], but the barrier receives enough arrivals to complete
    /// the next phase too, so the next phase may complete before the wait looks: its parity
    /// then names the phase in progress, and even a fair wait may never see the awaited one
    /// complete (mbarrier phase parity, PTX ISA §9.7.13.15.16). Conservative: the later
    /// arrivals are not checked for being ordered after the wait.
    MayOverrun,
    /// The phase can never complete: the loop gives up.
    GivesUp,
}

/// The clocks and synchronization outcomes of a run.
#[derive(Debug)]
pub struct Clocks {
    /// Global warps.
    pub g: usize,
    /// Warps per CTA.
    pub w: usize,
    /// The distinct vector clocks of the events of every warp, flat (stride `2G`): a row is
    /// stored at every synchronizing event; a plain event (no synchronization) shares the
    /// row of the event before it, since its clock differs only in its own program-order
    /// component, which no query reads (a warp's own events are ordered by index).
    rows: Vec<u32>,
    /// Per event, flat (event `i` of warp `g` at `first[g] + i`): its row, its last
    /// after-fence and its processing number (events past `reached` keep the default).
    evc: Vec<EvClock>,
    /// The index in `evc` of every warp's first event.
    first: Vec<usize>,
    /// Mbarrier wait results by (g, event index).
    pub waits: Vec<(usize, usize, WaitResult)>,
    /// Events each warp processed (all of them unless it deadlocked).
    pub reached: Vec<usize>,
    /// Warps stuck forever, with the event index they are stuck at.
    pub stuck: Vec<(usize, usize)>,
    /// Notes (assumptions taken).
    pub notes: Vec<String>,
    /// Malformed synchronization (uninitialised mbarrier, bad cluster rank).
    pub malformed: Option<String>,
}

/// What the clocks keep of one event.
#[derive(Debug, Clone, Copy, Default)]
struct EvClock {
    /// Its vector clock: the row of `rows` starting at index `row` (a multiple of `2G`).
    row: u32,
    /// Index of the last `fence::after_thread_sync` before it (itself for that fence;
    /// `u32::MAX`: none).
    after: u32,
    /// Its processing number: a linearization consistent with happens-before.
    seq: u32,
}

impl Clocks {
    /// Vector clock of event `i` of warp `g` (full knowledge at the event), except its own
    /// program-order component `g` (see `rows`: never read, a warp's events are ordered by
    /// index).
    pub fn at(&self, g: usize, i: usize) -> &[u32] {
        let r = self.ev(g, i).row as usize;
        &self.rows[r..r + 2 * self.g]
    }

    /// Component `k` of [`Clocks::at`]`(g, i)` (`k < 2G`), read directly.
    fn at_k(&self, g: usize, i: usize, k: usize) -> u32 {
        debug_assert!(k < 2 * self.g);
        self.rows[self.ev(g, i).row as usize + k]
    }

    /// What the clocks keep of event `i` of warp `g`.
    fn ev(&self, g: usize, i: usize) -> &EvClock {
        &self.evc[self.first[g] + i]
    }

    /// Processing order of event `i` of warp `g`: a linearization consistent with
    /// happens-before (every event numbered once, from 0).
    pub fn seq(&self, g: usize, i: usize) -> u32 {
        self.ev(g, i).seq
    }

    /// Whether event (g1, i1) happens before event (g2, i2) (or is it).
    pub fn hb(&self, g1: usize, i1: usize, g2: usize, i2: usize) -> bool {
        if g1 == g2 {
            return i1 <= i2;
        }
        i2 < self.reached[g2] && self.at_k(g2, i2, g1) > i1 as u32
    }

    /// The knowledge of the issue of an asynchronous operation at (g, i): everything up to the
    /// last `fence::after_thread_sync` before it, plus its own thread's program order
    /// (FENCE-AFTER, MCM-XTHREAD).
    pub fn issue_knows(&self, g: usize, i: usize, other: usize, idx: u32) -> bool {
        if other == g {
            return idx <= i as u32;
        }
        let a = self.ev(g, i).after;
        a != u32::MAX && self.at_k(g, a as usize, other) > idx
    }

    /// The index of the last `fence::after_thread_sync` of warp `g` before its event `i`
    /// (the event itself if it is one), if any.
    pub fn after_fence(&self, g: usize, i: usize) -> Option<usize> {
        let a = self.ev(g, i).after;
        (a != u32::MAX).then_some(a as usize)
    }

    /// Whether the issue of the async op at (g, i) knows commit arrival `j` (1-based) of warp
    /// `other`.
    pub fn issue_knows_commit(&self, g: usize, i: usize, other: usize, j: u32) -> bool {
        let a = self.ev(g, i).after;
        a != u32::MAX && self.at_k(g, a as usize, self.g + other) >= j
    }

    /// Whether event (g, i) (full knowledge) knows commit arrival `j` of warp `other`.
    pub fn knows_commit(&self, g: usize, i: usize, other: usize, j: u32) -> bool {
        i < self.reached[g] && self.at_k(g, i, self.g + other) >= j
    }
}

/// One arrival on an mbarrier.
#[derive(Debug, Clone, Copy)]
struct Arrival {
    g: usize,
    i: usize,
    weight: u32,
    /// Phase it lands in, if the rounds assignment is certain.
    phase: Option<u32>,
}

/// An mbarrier of one CTA. Phases are assigned in rounds: when the total arrival count is a
/// multiple of the expected count and each arriving warp contributes the same share to every
/// phase, its k-th share lands in phase k; otherwise the arrival's phase is uncertain and it
/// orders nothing (conservative: values become unspecified, never wrongly defined).
#[derive(Debug, Default)]
struct Mbar {
    count: Option<u32>,
    arrivals: Vec<Arrival>,
    total: u32,
}

/// The progress of one warp through its events (see [`Engine`]).
#[derive(Debug, Clone, Copy, Default)]
struct WarpState {
    /// Events processed (the index of the current one).
    pos: usize,
    /// Every event processed, or the warp exited.
    done: bool,
    /// Blocked at a CTA barrier (already arrived).
    at_bar: bool,
    /// Waiting for its partner at a `::2` collective (rendezvous mode).
    pair_waiting: bool,
    /// CTA barriers, cluster arrivals, cluster waits and commits so far.
    bar_count: u32,
    arrive_count: u32,
    wait_count: u32,
    commit_count: u32,
}

/// The `::2` collectives that wait for each other (rendezvous mode of [`clocks`]): each event
/// (global warp, event index) with the event of the peer CTA's warp it is paired with, both
/// ways, sorted.
#[derive(Debug, Default, Clone)]
pub struct Partners(Vec<((usize, usize), (usize, usize))>);

impl Partners {
    /// Adds a pair of collectives that wait for each other.
    pub fn add(&mut self, a: (usize, usize), b: (usize, usize)) {
        self.0.push((a, b));
        self.0.push((b, a));
    }

    /// Sorts the pairs (before a lookup).
    pub fn seal(&mut self) {
        self.0.sort_unstable();
    }

    /// The collective paired with event `e`, if it waits for one.
    fn of(&self, e: (usize, usize)) -> Option<(usize, usize)> {
        self.0
            .binary_search_by_key(&e, |x| x.0)
            .ok()
            .map(|k| self.0[k].1)
    }

    /// Whether no collective waits for another.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

struct Engine<'u, 'a> {
    u: &'u Unrolled<'a>,
    g: usize,
    w: usize,
    /// Per warp.
    ws: Vec<WarpState>,
    /// The current vector clock of every warp, flat (stride `2G`).
    cur: Vec<u32>,
    /// See [`Clocks`]'s `rows`, `evc` and `first`.
    rows: Vec<u32>,
    evc: Vec<EvClock>,
    first: Vec<usize>,
    /// Per cluster, the joined arrival VCs of its barrier generations, flat (generation
    /// `k` (1-based) at `(k - 1) * 2G`; zeros where no ordering arrival joined).
    cluster_arrivals: Vec<Vec<u32>>,
    /// Mbarriers by (cta, bar).
    mbars: FastMap<(u32, u8), Mbar>,
    /// Per event (indexed like `evc`), for processed arrivals (commits, mbarrier arrives):
    /// where its VC snapshot starts in `snaps` (`u32::MAX`: not an arrival, or not yet
    /// processed). Empty when the program has no arrival.
    arrived: Vec<u32>,
    /// Arrival VC snapshots, flat (see `arrived`).
    snaps: Vec<u32>,
    /// Per (g, bar) of g's CTA: the next phase it expects, and how many phases it has
    /// joined the arrivals of (joins only add knowledge: an arrival joined once need not be
    /// joined again, and stays arrived).
    expect_phase: FastMap<(usize, u8), (u32, u32)>,
    waits: Vec<(usize, usize, WaitResult)>,
    pair_rendezvous: bool,
    /// The collectives that wait for each other (rendezvous mode).
    partners: &'u Partners,
    notes: Vec<String>,
    malformed: Option<String>,
    /// Waits currently stalled: resolve as giving up when nothing else moves.
    give_up: bool,
    counter: u32,
    /// The join of a CTA barrier's clocks (reused).
    join_buf: Vec<u32>,
}

/// A hash map with a cheap multiplicative hasher (the keys are small integers chosen by the
/// program, not by an adversary; no iteration order of these maps reaches a result).
type FastMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<MulHasher>>;

/// The hasher of [`FastMap`]: every written integer is mixed in with a multiply and a rotate.
#[derive(Debug, Default, Clone, Copy)]
struct MulHasher(u64);

impl std::hash::Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_u8(&mut self, x: u8) {
        self.write_u64(u64::from(x));
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// `a` becomes the componentwise maximum of `a` and `b` (written without a branch, so the
/// loop is vectorized).
fn join(a: &mut [u32], b: &[u32]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = (*x).max(*y);
    }
}

/// Whether event `e` takes the last arm of [`Engine::step`] (no synchronization, never
/// blocks).
fn plain(e: &Ev<'_>, pair_rendezvous: bool) -> bool {
    // The kinds that are plain whatever the event (every kind but the ones matched below),
    // tested with one shift (most events are of these kinds; `EvKind` has fewer than 32).
    const ALWAYS: u32 = !(1 << EvKind::Exit as u32
        | 1 << EvKind::FenceAfter as u32
        | 1 << EvKind::Commit as u32
        | 1 << EvKind::MbarArrive as u32
        | 1 << EvKind::BarCta as u32
        | 1 << EvKind::ClusterArrive as u32
        | 1 << EvKind::ClusterWait as u32
        | 1 << EvKind::MbarWait as u32
        | 1 << EvKind::Alloc as u32
        | 1 << EvKind::Dealloc as u32
        | 1 << EvKind::Relinquish as u32);
    if ALWAYS
        .checked_shr(e.kind as u32)
        .is_some_and(|x| x & 1 == 1)
    {
        return true;
    }
    match e.kind {
        EvKind::Exit => e.mask != e.live,
        EvKind::FenceAfter
        | EvKind::Commit
        | EvKind::MbarArrive
        | EvKind::BarCta
        | EvKind::ClusterArrive
        | EvKind::ClusterWait
        | EvKind::MbarWait => false,
        EvKind::Alloc | EvKind::Dealloc | EvKind::Relinquish => {
            !(pair_rendezvous && pair_collective(e.stmt))
        }
        _ => true,
    }
}

/// The bits of ranks `0..n` (n ≤ 16).
fn cluster_mask(n: u32) -> u32 {
    (1u32 << n) - 1
}

/// Whether a statement is a `::2` alloc, dealloc or relinquish.
pub fn pair_collective(s: &Stmt) -> bool {
    match s {
        Stmt::Tc(Op::Alloc { form, .. }) => form.cta_group == CtaGroup::Two,
        Stmt::Tc(Op::Dealloc { form, .. }) => form.cta_group == CtaGroup::Two,
        Stmt::Tc(Op::Relinquish { form }) => form.cta_group == CtaGroup::Two,
        _ => false,
    }
}

impl<'a> Engine<'_, 'a> {
    fn cta_of(&self, g: usize) -> u32 {
        (g / self.w) as u32
    }

    fn cluster_size(&self) -> u32 {
        self.u.cluster_size
    }

    /// The current vector clock of warp `h`.
    fn cur(&self, h: usize) -> &[u32] {
        let n = 2 * self.g;
        &self.cur[h * n..(h + 1) * n]
    }

    /// The current vector clock of warp `h`, to change.
    fn cur_mut(&mut self, h: usize) -> &mut [u32] {
        let n = 2 * self.g;
        &mut self.cur[h * n..(h + 1) * n]
    }

    /// Records warp `g`'s current event (a synchronizing one: its clock gets a row) with
    /// `after` as its last after-fence.
    fn record_with(&mut self, g: usize, after: u32) {
        let n = 2 * self.g;
        let row = self.rows.len() as u32;
        self.rows.extend_from_slice(&self.cur[g * n..(g + 1) * n]);
        let pos = self.ws[g].pos;
        self.evc[self.first[g] + pos] = EvClock {
            row,
            after,
            seq: self.counter,
        };
        self.counter += 1;
        self.ws[g].pos = pos + 1;
    }

    /// Records warp `g`'s current event, a synchronizing one that joined no other clock
    /// (an arrive, a commit, a fence, an exit, a wait that joined nothing): its clock differs
    /// from the event before it only in its own component (which no query reads, see
    /// `rows`), so it shares that event's row (the warp's first event gets a row).
    fn record_shared(&mut self, g: usize, after: u32) {
        let pos = self.ws[g].pos;
        if pos == 0 {
            return self.record_with(g, after);
        }
        let at = self.first[g] + pos;
        self.evc[at] = EvClock {
            row: self.evc[at - 1].row,
            after,
            seq: self.counter,
        };
        self.counter += 1;
        self.ws[g].pos = pos + 1;
    }

    /// [`Engine::record_shared`] with the last after-fence of the event before it.
    fn share(&mut self, g: usize) {
        let after = self.after_before(g);
        self.record_shared(g, after);
    }

    /// Records warp `g`'s current event, whose last after-fence is the one of the event
    /// before it.
    fn record(&mut self, g: usize) {
        let after = self.after_before(g);
        self.record_with(g, after);
    }

    /// The last after-fence of warp `g`'s event before its current one (`u32::MAX` at its
    /// first event).
    fn after_before(&self, g: usize) -> u32 {
        match self.ws[g].pos {
            0 => u32::MAX,
            pos => self.evc[self.first[g] + pos - 1].after,
        }
    }

    /// Precomputes every mbarrier's arrivals and phases, from the `mbarrier.init`,
    /// `mbarrier.arrive` and `tcgen05.commit` events the unroller listed
    /// ([`Unrolled::mbar_events`]), in warp and event order.
    fn collect_mbars(&mut self) {
        let cs = self.cluster_size();
        let mut arrivals = false;
        let u = self.u;
        for &(g, i) in &u.mbar_events {
            let (g, i) = (g as usize, i as usize);
            let cta = self.cta_of(g);
            {
                let e = &u.warps[g][i];
                debug_assert!(matches!(
                    e.kind,
                    EvKind::MbarInit | EvKind::MbarArrive | EvKind::Commit
                ));
                // Arrival weights (counted only for the arrivals below: most events are not).
                let lanes = || e.mask.count_ones();
                match e.stmt {
                    Stmt::MbarInit { bar, count } => {
                        let m = self.mbars.entry((cta, *bar)).or_default();
                        if m.count.is_none() {
                            m.count = Some(*count);
                        }
                    }
                    Stmt::MbarArrive { bar, cta: target } => {
                        arrivals = true;
                        let t = match target {
                            None => cta,
                            Some(r) if u32::from(*r) < cs => cta - cta % cs + u32::from(*r),
                            Some(r) => {
                                self.malformed = Some(format!(
                                    "mbarrier.arrive to cluster rank {r} outside the cluster"
                                ));
                                continue;
                            }
                        };
                        let m = self.mbars.entry((t, *bar)).or_default();
                        m.arrivals.push(Arrival {
                            g,
                            i,
                            weight: lanes(),
                            phase: None,
                        });
                        m.total += lanes();
                    }
                    Stmt::Tc(Op::Commit {
                        form,
                        mbar,
                        cta_mask,
                        ..
                    }) => {
                        arrivals = true;
                        // COMMIT-ARRIVE: one arrive-on per issuing thread (OQ-14 literal
                        // reading), to each CTA of ctaMask with .multicast::cluster
                        // (COMMIT-MCAST-MASK), else to the executing CTA's mbarrier (OQ-15).
                        // The ranks of the targets, as a mask over the cluster (bit r: rank r),
                        // or the executing CTA.
                        let (ranks, own) = match (form.multicast, cta_mask) {
                            (true, Some(mask)) => {
                                (u32::from(*mask) & cluster_mask(cs.min(16)), false)
                            }
                            _ => (0, true),
                        };
                        let targets = (0..cs.min(16))
                            .filter(move |r| ranks >> r & 1 == 1)
                            .map(move |r| cta - cta % cs + r)
                            .chain(own.then_some(cta));
                        for t in targets {
                            let m = self.mbars.entry((t, *mbar)).or_default();
                            m.arrivals.push(Arrival {
                                g,
                                i,
                                weight: lanes(),
                                phase: None,
                            });
                            m.total += lanes();
                        }
                    }
                    _ => {}
                }
            }
        }
        if arrivals {
            self.arrived.resize(self.evc.len(), u32::MAX);
        }
        for m in self.mbars.values_mut() {
            let Some(c) = m.count.filter(|c| *c > 0) else {
                continue;
            };
            if m.total % c != 0 || m.total == 0 {
                continue;
            }
            let phases = m.total / c;
            let mut per: FastMap<usize, (u32, u32)> = FastMap::default();
            for a in &m.arrivals {
                per.entry(a.g).or_insert((0, 0)).0 += a.weight;
            }
            if per.values().any(|(t, _)| t % phases != 0) {
                continue;
            }
            for a in &mut m.arrivals {
                let (t, seen) = per.get_mut(&a.g).expect("counted above");
                let share = *t / phases;
                let start = *seen;
                *seen += a.weight;
                if share > 0 && start / share == (start + a.weight - 1) / share {
                    a.phase = Some(start / share);
                }
            }
        }
    }

    /// Keeps the current clock of warp `g` as the snapshot of its arrival at event `i`
    /// (`commit`: the warp's commit count, known to the arrival).
    fn snapshot(&mut self, g: usize, i: usize, commit: Option<u32>) {
        let n = 2 * self.g;
        let o = self.snaps.len();
        self.snaps.extend_from_slice(&self.cur[g * n..(g + 1) * n]);
        if let Some(k) = commit {
            self.snaps[o + self.g + g] = k;
        }
        self.arrived[self.first[g] + i] = o as u32;
    }

    /// Tries to process warp g's current event; false if it cannot move.
    fn step(&mut self, g: usize) -> bool {
        let WarpState { done, pos: i, .. } = self.ws[g];
        if done {
            return false;
        }
        // The event, borrowed from the unrolled program (not from the engine).
        let u = self.u;
        let Some(e) = u.warps[g].get(i) else {
            self.ws[g].done = true;
            return true;
        };
        let n = 2 * self.g;
        self.cur[g * n + g] = i as u32 + 1;
        if plain(e, self.pair_rendezvous) {
            if i == 0 {
                // The warp's first event: its clock gets the warp's first row.
                self.record(g);
            }
            self.plain_run(g);
            return true;
        }
        let cta = self.cta_of(g);
        match e.stmt {
            Stmt::Exit if e.mask == e.live => {
                self.share(g);
                self.ws[g].done = true;
                true
            }
            Stmt::Tc(Op::Fence {
                kind: FenceKind::AfterThreadSync,
            }) => {
                self.record_shared(g, i as u32);
                // Later events see this fence as their last after-fence.
                true
            }
            Stmt::Tc(Op::Commit { .. }) => {
                self.ws[g].commit_count += 1;
                // The arrival happens when the tracked operations complete: it knows them,
                // but the committing thread does not, until it observes the phase.
                self.snapshot(g, i, Some(self.ws[g].commit_count));
                self.share(g);
                true
            }
            Stmt::MbarArrive { .. } => {
                self.snapshot(g, i, None);
                self.share(g);
                true
            }
            Stmt::BarCta => {
                if !self.ws[g].at_bar {
                    self.ws[g].at_bar = true;
                    self.ws[g].bar_count += 1;
                }
                let k = self.ws[g].bar_count;
                let base = cta as usize * self.w;
                let team = base..base + self.w;
                let ready = self.ws[team.clone()]
                    .iter()
                    .all(|h| h.done || (h.at_bar && h.bar_count == k));
                if !ready {
                    return false;
                }
                if self.ws[team.clone()].iter().any(|h| h.done) {
                    self.note("barrier.sync 0 is reached after some warps finished: they are taken as arrived (outside the tcgen05 chapter)");
                }
                let mut j = std::mem::take(&mut self.join_buf);
                j.clear();
                j.resize(n, 0);
                for h in team.clone() {
                    if !self.ws[h].done {
                        join(&mut j, self.cur(h));
                    }
                }
                for h in team {
                    if !self.ws[h].done {
                        let pos = self.ws[h].pos as u32;
                        let c = self.cur_mut(h);
                        c.copy_from_slice(&j);
                        c[h] = pos + 1;
                        self.ws[h].at_bar = false;
                        self.record(h);
                    }
                }
                self.join_buf = j;
                true
            }
            Stmt::ClusterArrive { relaxed } => {
                self.ws[g].arrive_count += 1;
                let k = self.ws[g].arrive_count;
                let cl = (cta / self.cluster_size()) as usize;
                if self.cluster_arrivals.len() <= cl {
                    self.cluster_arrivals.resize_with(cl + 1, Vec::new);
                }
                let gens = &mut self.cluster_arrivals[cl];
                let end = k as usize * n;
                if gens.len() < end {
                    gens.resize(end, 0);
                }
                if !relaxed {
                    join(&mut gens[end - n..end], &self.cur[g * n..(g + 1) * n]);
                }
                self.share(g);
                true
            }
            Stmt::ClusterWait => {
                let k = self.ws[g].wait_count + 1;
                let cs = self.cluster_size() as usize;
                let cl = cta as usize / cs;
                let first = cl * cs * self.w;
                let team = &self.ws[first..first + cs * self.w];
                let ready = team.iter().all(|h| h.done || h.arrive_count >= k);
                if !ready {
                    return false;
                }
                if team.iter().any(|h| h.done && h.arrive_count < k) {
                    self.note("barrier.cluster.wait is reached after some warps finished without arriving: they are taken as arrived (outside the tcgen05 chapter)");
                }
                self.ws[g].wait_count = k;
                let k = k as usize;
                if let Some(v) = self
                    .cluster_arrivals
                    .get(cl)
                    .and_then(|gens| gens.get((k - 1) * n..k * n))
                {
                    join(&mut self.cur[g * n..(g + 1) * n], v);
                }
                self.cur[g * n + g] = i as u32 + 1;
                self.record(g);
                true
            }
            Stmt::MbarWait { bar, parity, .. } => self.mbar_wait(g, i, cta, *bar, *parity),
            s if self.pair_rendezvous && pair_collective(s) => {
                let Some((peer, pi)) = self.partners.of((g, i)) else {
                    // A collective that waits for no one.
                    self.share(g);
                    return true;
                };
                self.ws[g].pair_waiting = true;
                if self.ws[peer].pair_waiting && self.ws[peer].pos == pi {
                    for h in [g, peer] {
                        self.ws[h].pair_waiting = false;
                        self.cur[h * n + h] = self.ws[h].pos as u32 + 1;
                        self.share(h);
                    }
                    true
                } else {
                    false
                }
            }
            _ => {
                if i == 0 {
                    // The warp's first event: its clock gets the warp's first row.
                    self.record(g);
                }
                self.plain_run(g);
                true
            }
        }
    }

    /// Processes the events of warp `g` from its current one while they are plain (the last
    /// arm of [`Engine::step`]: no synchronization), in one loop, in order, each given its
    /// own component, after-fence index and processing number; their clocks differ from the
    /// previous event's only in the own component, so they share its row (see `rows`).
    fn plain_run(&mut self, g: usize) {
        let evs = &self.u.warps[g];
        let mut i = self.ws[g].pos;
        let first = self.first[g];
        // The event before (processed: the warp's first event is recorded before this).
        let EvClock { row, after, .. } = self.evc[first + i - 1];
        let evc = &mut self.evc[first..first + evs.len()];
        while let Some(e) = evs.get(i) {
            if !plain(e, self.pair_rendezvous) {
                break;
            }
            evc[i] = EvClock {
                row,
                after,
                seq: self.counter,
            };
            self.counter += 1;
            i += 1;
        }
        self.cur[2 * self.g * g + g] = i as u32;
        self.ws[g].pos = i;
    }

    fn mbar_wait(&mut self, g: usize, i: usize, cta: u32, bar: u8, parity: bool) -> bool {
        let key = (g, bar);
        let (next, joined) = *self.expect_phase.get(&key).unwrap_or(&(0, 0));
        let mut joined_to = joined;
        let Some(m) = self.mbars.get(&(cta, bar)) else {
            self.malformed = Some(format!("mbarrier {bar} is waited on but never initialised"));
            self.waits.push((g, i, WaitResult::GivesUp));
            self.record(g);
            return true;
        };
        let Some(c) = m.count else {
            self.malformed = Some(format!("mbarrier {bar} is used but never initialised"));
            self.waits.push((g, i, WaitResult::GivesUp));
            self.record(g);
            return true;
        };
        // try_wait.parity(P) returns once the phase of parity P before the current one has
        // completed; a fresh barrier is in phase 0, so P = 1 returns at once.
        let target: i64 = if u32::from(parity) == next % 2 {
            i64::from(next)
        } else {
            i64::from(next) - 1
        };
        // The arrivals that complete the phase after the awaited one: the awaited one may be
        // overrun before the wait looks.
        let overrun = i64::from(c) * (target + 2) <= i64::from(m.total);
        let complete = if overrun {
            WaitResult::MayOverrun
        } else {
            WaitResult::MayComplete
        };
        let result;
        if target < 0 {
            result = complete;
        } else if u64::from(c) * (target as u64 + 1) > u64::from(m.total) || c == 0 {
            result = WaitResult::GivesUp;
        } else {
            let t = target as u32;
            // The snapshot offsets of the arrivals the phase needs (`u32::MAX`: not yet
            // processed), less those of the phases this warp joined before (arrived then).
            let (arrived, first) = (&self.arrived, &self.first);
            let needed = m
                .arrivals
                .iter()
                .filter(|a| a.phase.is_some_and(|p| joined <= p && p <= t))
                .map(|a| arrived[first[a.g] + a.i]);
            let missing = needed.clone().any(|o| o == u32::MAX);
            if missing {
                if self.give_up {
                    result = WaitResult::GivesUp;
                } else {
                    return false;
                }
            } else {
                let n = 2 * self.g;
                let cur = &mut self.cur[g * n..(g + 1) * n];
                for o in needed {
                    let o = o as usize;
                    join(cur, &self.snaps[o..o + n]);
                }
                cur[g] = i as u32 + 1;
                joined_to = joined.max(t + 1);
                result = complete;
            }
        }
        let next_to = if result != WaitResult::GivesUp && u32::from(parity) == next % 2 {
            next + 1
        } else {
            next
        };
        if (next_to, joined_to) != (next, joined) {
            self.expect_phase.insert(key, (next_to, joined_to));
        }
        self.waits.push((g, i, result));
        if joined_to != joined {
            self.record(g);
        } else {
            // Nothing joined: the clock is the one before.
            self.share(g);
        }
        true
    }

    fn note(&mut self, s: &str) {
        if !self.notes.iter().any(|n| n == s) {
            self.notes.push(s.to_string());
        }
    }
}

/// Runs the clocks over the unrolled program. With `rendezvous`, the `::2` collectives it pairs
/// wait for each other (the others run as if plain).
pub fn clocks(u: &Unrolled<'_>, p: &Program, rendezvous: Option<&Partners>) -> Clocks {
    let none = Partners::default();
    let pair_rendezvous = rendezvous.is_some();
    let partners = rendezvous.unwrap_or(&none);
    let g = u.warps.len();
    let w = p.warps.len().max(1);
    let n = 2 * g;
    // The buffers of the last run on this thread (each cleared and sized as a new one would
    // be: no result depends on what they held).
    let mut b = POOL.with(|x| std::mem::take(&mut *x.borrow_mut()));
    b.first.clear();
    let mut events = 0;
    for evs in &u.warps {
        b.first.push(events);
        events += evs.len();
    }
    b.ws.clear();
    b.ws.resize(g, WarpState::default());
    b.cur.clear();
    b.cur.resize(g * n, 0);
    b.rows.clear();
    b.evc.clear();
    b.evc.resize(events, EvClock::default());
    // An empty generation list is one no arrival reached yet.
    for gens in &mut b.cluster_arrivals {
        gens.clear();
    }
    b.mbars.clear();
    b.arrived.clear();
    b.snaps.clear();
    b.expect_phase.clear();
    b.waits.clear();
    b.reached.clear();
    let mut e = Engine {
        u,
        g,
        w,
        ws: b.ws,
        cur: b.cur,
        rows: b.rows,
        evc: b.evc,
        first: b.first,
        cluster_arrivals: b.cluster_arrivals,
        mbars: b.mbars,
        arrived: b.arrived,
        snaps: b.snaps,
        expect_phase: b.expect_phase,
        waits: b.waits,
        pair_rendezvous,
        partners,
        notes: Vec::new(),
        malformed: None,
        give_up: false,
        counter: 0,
        join_buf: b.join_buf,
    };
    e.collect_mbars();
    // A row per synchronizing event and one per warp's first event, at most (every event
    // is an upper bound on the synchronizing ones).
    e.rows.reserve_exact((events + g) * n);
    loop {
        let mut moved = false;
        for h in 0..g {
            while e.step(h) {
                moved = true;
            }
        }
        if e.ws.iter().all(|x| x.done) {
            break;
        }
        if moved {
            e.give_up = false;
            continue;
        }
        if !e.give_up {
            // Nothing moves: the stalled mbarrier waits can only give up.
            e.give_up = true;
            continue;
        }
        break;
    }
    let stuck: Vec<(usize, usize)> = (0..g)
        .filter(|h| !e.ws[*h].done)
        .map(|h| (h, e.ws[h].pos))
        .collect();
    let waits = std::mem::take(&mut e.waits);
    let mut reached = b.reached;
    reached.extend(e.ws.iter().map(|x| x.pos));
    // The engine's own buffers back to the thread (those of `Clocks` follow when it drops).
    POOL.with(|x| {
        let mut x = x.borrow_mut();
        x.ws = e.ws;
        x.cur = e.cur;
        x.cluster_arrivals = e.cluster_arrivals;
        x.mbars = e.mbars;
        x.arrived = e.arrived;
        x.snaps = e.snaps;
        x.expect_phase = e.expect_phase;
        x.join_buf = e.join_buf;
    });
    Clocks {
        g,
        w,
        rows: e.rows,
        evc: e.evc,
        first: e.first,
        waits,
        reached,
        stuck,
        notes: e.notes,
        malformed: e.malformed,
    }
}

/// The buffers of [`clocks`] kept from one run to the next on a thread (fewer allocations
/// per program): the engine's, given back at the end of a run, and the per-event ones of
/// [`Clocks`], given back when it drops.
#[derive(Default)]
struct Pool {
    ws: Vec<WarpState>,
    cur: Vec<u32>,
    rows: Vec<u32>,
    evc: Vec<EvClock>,
    first: Vec<usize>,
    waits: Vec<(usize, usize, WaitResult)>,
    reached: Vec<usize>,
    cluster_arrivals: Vec<Vec<u32>>,
    mbars: FastMap<(u32, u8), Mbar>,
    arrived: Vec<u32>,
    snaps: Vec<u32>,
    expect_phase: FastMap<(usize, u8), (u32, u32)>,
    join_buf: Vec<u32>,
}

thread_local! {
    static POOL: std::cell::RefCell<Pool> = std::cell::RefCell::new(Pool::default());
}

impl Drop for Clocks {
    fn drop(&mut self) {
        // Kept only if the pool has none (a second run while this one lived, e.g. the
        // rendezvous clocks of the `::2` pairing, took fresh ones).
        let _ = POOL.try_with(|x| {
            if let Ok(mut x) = x.try_borrow_mut() {
                if x.rows.capacity() == 0 {
                    x.rows = std::mem::take(&mut self.rows);
                }
                if x.evc.capacity() == 0 {
                    x.evc = std::mem::take(&mut self.evc);
                }
                if x.first.capacity() == 0 {
                    x.first = std::mem::take(&mut self.first);
                }
                if x.waits.capacity() == 0 {
                    x.waits = std::mem::take(&mut self.waits);
                }
                if x.reached.capacity() == 0 {
                    x.reached = std::mem::take(&mut self.reached);
                }
            }
        });
    }
}
