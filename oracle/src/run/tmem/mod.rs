//! TMEM accesses, their order, and the values every `tcgen05.ld` may deliver (reference §4,
//! docs/architecture.md, "The oracle's run model").
//!
//! A cell is (allocation, lane, column): the address alloc returns is opaque (OQ-1), so cells
//! of different allocations are kept apart and accesses outside their allocation are
//! unspecified (OQ-9). For an ld R and a cell c, the writes of c are split into those ordered
//! before R (happens-before from the write's completion to R's issue, or a pipeline pair),
//! those ordered after R, and the rest, which race with R. R may deliver the last write
//! ordered before it (every maximal one, if several) and every racing write; a cell no write
//! is ordered before is unspecified (fresh allocation, OQ-9).
//!
//! Completion of an operation is known to another event only through: `wait::ld`/`wait::st`
//! of the issuing warp (WAIT-SCOPE), then, for another thread, a `fence::before_thread_sync`
//! and synchronization (MCM-XTHREAD-NONPIPE); for mma/cp/shift, `commit` + mbarrier
//! (COMMIT-TRACK, MMA-ASYNC). The issue of an async operation knows other threads' events only
//! through a `fence::after_thread_sync` (FENCE-AFTER, MCM-XTHREAD).

use super::Findings;
use super::alloc::{AllocAnalysis, SlotRead};
use super::dp_layout;
use super::ldst;
use super::mma::{self, RegionData};
use super::sync::Clocks;
use super::unroll::{EvKind, Unrolled};
use crate::types::*;
use tcgen05_ir::form::LdForm;
use tcgen05_ir::*;

mod decomp;
mod mma_prep;
mod order;
mod reads;
mod scaled_prep;
mod sparse_prep;
mod written;

pub use reads::ORACLE_GAP;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ld,
    St,
    Mma,
    Cp,
    Shift,
}

/// A TMEM region of one allocation.
#[derive(Debug, Clone, Copy)]
struct Region {
    inst: u32,
    l0: u32,
    l1: u32,
    c0: u32,
    c1: u32,
    write: bool,
}

impl Region {
    fn covers(&self, lane: u32, col: u32) -> bool {
        (self.l0..self.l1).contains(&lane) && (self.c0..self.c1).contains(&col)
    }
}

/// The regions of one access: at most two (a split ld/st, or a `::2` operation's own and peer
/// allocation), kept inline (no allocation per access).
#[derive(Debug, Clone, Copy, Default)]
struct Regions {
    r: [Option<Region>; 2],
    n: usize,
}

impl Regions {
    fn push(&mut self, x: Region) {
        if let Some(slot) = self.r.get_mut(self.n) {
            *slot = Some(x);
            self.n += 1;
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Region> {
        self.r[..self.n].iter().flatten()
    }

    fn first(&self) -> Option<&Region> {
        self.iter().next()
    }

    fn len(&self) -> usize {
        self.n
    }
}

impl<'r> IntoIterator for &'r Regions {
    type Item = &'r Region;
    type IntoIter = std::iter::Flatten<std::slice::Iter<'r, Option<Region>>>;
    fn into_iter(self) -> Self::IntoIter {
        self.r[..self.n].iter().flatten()
    }
}

/// One asynchronous TMEM operation.
#[derive(Debug)]
struct Acc<'a> {
    g: usize,
    i: usize,
    kind: Kind,
    op: &'a Op,
    cg: Option<CtaGroup>,
    issuer: u32,
    regions: Regions,
    /// ld/st: the index of the first later wait of the same kind.
    wait: Option<usize>,
    /// ld/st: the first before-fence (or commit) at or after the wait.
    xfence: Option<usize>,
    /// mma/cp/shift: the 1-based ordinal of the first later commit of the warp that tracks it.
    commit: Option<u32>,
    /// The first before-fence or commit after the issue (pipelines across threads).
    pfence: Option<usize>,
    /// The operands and old D values of an exact MMA (its values are computed per cell, on
    /// demand).
    mma: Option<Box<MmaVals>>,
    /// cp: the source data, when its values are known ([`Ctx::cp_values`]).
    cp: Option<CpVals>,
    /// shift: the old values of the rows it moves, row-major (31 × 8; `None`: unknown),
    /// read when it is processed ([`Ctx::shift_values`]).
    shifted: Option<Box<[Option<u32>]>>,
    /// Whether the values it writes are known (st of every shape, exact mma).
    known: bool,
    /// mma with A in TMEM: the cells of the issuing CTA's allocation that A is read from
    /// (8 columns: 256 bits of A per row for every kind, dense or sparse; lanes clamped like D).
    a_read: Option<Region>,
    /// Block-scaled mma: the cells of scale_A and scale_B it reads (`scaled_prep`).
    sf_read: [Option<Region>; 2],
    /// mma whose values are not computed: why (the note of the words read from it), where
    /// more precise than the general one ([`Ctx::note_open`]).
    open: Option<&'static str>,
    /// mma: the races of its A read (reference §4.3-4.4); an ld of what it wrote cites them.
    in_races: Races,
    /// Position in the processing order (`usize::MAX` until it is set).
    pos: usize,
}

/// What a cp needs to give the value of any cell it writes ([`Ctx::cp_value`]).
#[derive(Debug, Clone, Copy)]
struct CpVals {
    /// The source region's data.
    data: RegionData,
    /// The multicast qualifier.
    multicast: Option<CpMulticast>,
    /// The lane field of `taddr`.
    lane: u32,
    /// Source rows and bytes per row of the shape.
    rows: u32,
    row_bytes: u32,
    /// `cta_group::2` (CP-PAIR): the peer CTA's allocation and the data of its own copy of the
    /// source region (each CTA copies from its own shared memory).
    peer: Option<(u32, RegionData)>,
    /// The decompression source format (`.b8x16` with it), if any ([`decomp`]).
    decomp: Option<CpSrcFmt>,
}

/// The source row of a cp that lands in `lane` (§9.7.16.9.2, reference §3.5), if one does:
/// - no multicast: row `r` in lane `taddr.lane + r`;
/// - `.warpx4` (`.32x128b`): the 32 rows in every lane quarter, row `r` in lane `32q + r`;
/// - `.warpx2::02_13` (`.64x128b`): the warp pairs {0, 2} and {1, 3} each receive half of
///   the 64 rows: rows 0-31 in quarters 0 and 2, rows 32-63 in quarters 1 and 3;
/// - `.warpx2::01_23`: rows 0-31 in quarters 0 and 1, rows 32-63 in quarters 2 and 3.
fn cp_row(cv: &CpVals, lane: u32) -> Option<u32> {
    let (q, r) = (lane / 32, lane % 32);
    let row = match cv.multicast {
        None => lane.checked_sub(cv.lane)?,
        Some(CpMulticast::Warpx4) => r,
        Some(CpMulticast::Warpx2_02_13) => r + 32 * (q % 2),
        Some(CpMulticast::Warpx2_01_23) => r + 32 * (q / 2),
    };
    (row < cv.rows).then_some(row)
}

/// What an exact MMA needs to give the value of any cell it writes.
#[derive(Debug)]
struct MmaVals {
    p: std::rc::Rc<mma::Prepared>,
    /// With enable-input-d: how to read the old D cells (on demand); `peer_old` those of the
    /// peer CTA's allocation (`cta_group::2`).
    old: Option<OldD>,
    peer_old: Option<OldD>,
    /// MMA-DOL-SEM: lanes whose disable-output-lane bit is set.
    dol: [u32; 4],
    /// `.ashift`: D row 0 is unspecified (what A's first row holds after the shift is not
    /// stated).
    ashift: bool,
    /// `cta_group::2` (`mma::pair_shape`): the peer CTA's allocation and the rows of D it
    /// holds (`p` holds the issuing CTA's).
    peer: Option<(u32, std::rc::Rc<mma::Prepared>)>,
    /// D's data-path layout (`dp_layout`): which row and column of D a (lane, column) of
    /// the region holds.
    fold: dp_layout::Fold,
}

impl MmaVals {
    /// The rows of D that allocation `inst` holds.
    fn prepared(&self, inst: u32) -> &mma::Prepared {
        match &self.peer {
            Some((pi, pp)) if *pi == inst => pp,
            _ => &self.p,
        }
    }

    /// The old D cells of allocation `inst` (enable-input-d).
    fn old_for(&self, inst: u32) -> Option<&OldD> {
        [&self.old, &self.peer_old]
            .into_iter()
            .flatten()
            .find(|o| o.inst == inst)
    }

    /// D's (row, column) held in (`lane`, `col`) of the region (`dp_layout::Fold::logical`).
    fn logical(&self, lane: u32, col: u32) -> (u32, u32) {
        self.fold.logical(lane, col, self.p.n)
    }
}

/// The old D cells an MMA with enable-input-d reads (lanes 0..128, columns `c0..c0 + n` of
/// allocation `inst`), read on demand: the read is planned ([`Ctx::plan`]) when the MMA is
/// processed, and a cell's candidates are those [`Ctx::cells`] would give at that point of
/// the processing order (an MMA processed later is not known yet: [`Ctx::value_as_of`]).
/// Only the cells some ld needs are computed, each once.
#[derive(Debug)]
struct OldD {
    inst: u32,
    c0: u32,
    n: u32,
    /// The plan: the writers, those before the MMA (indexes into `writers`), the racing
    /// ones (access indexes) and the order between the writers (`k × k`).
    writers: Vec<usize>,
    before: Vec<usize>,
    race: Vec<usize>,
    ord: Vec<bool>,
    /// The access index of the one write before the MMA when it covers every old D cell and
    /// nothing races: every cell's only candidate is its value (what the general loop of
    /// [`Ctx::old_cell`] finds).
    single: Option<usize>,
    /// Per cell (128 rows, each of n cells allocated when one of its cells is first read):
    /// `UNREAD`, `UNKNOWN` or the value.
    memo: std::cell::RefCell<Vec<Vec<u64>>>,
    /// The reading MMA has 16-bit D: it reads the low halves only, so a cell whose high half
    /// is not stated ([`low16`] writers) still has a known old value.
    low16: bool,
}

impl OldD {
    const UNREAD: u64 = u64::MAX;
    const UNKNOWN: u64 = 1 << 32;

    /// The memo of row `row` (< 128, `n` cells), allocated (every cell `UNREAD`) on first use.
    fn memo_row(&self, row: u32) -> std::cell::RefMut<'_, [u64]> {
        std::cell::RefMut::map(self.memo.borrow_mut(), |m| {
            if m.is_empty() {
                m.resize_with(128, Vec::new);
            }
            let r = &mut m[row as usize];
            if r.is_empty() {
                r.resize(self.n as usize, Self::UNREAD);
            }
            r.as_mut_slice()
        })
    }
}

/// The rules a read's races break, as flags (most specific rule of reference §6 per racing
/// write; see [`Ctx::race_rule`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Races(u8);

impl Races {
    const RULES: [RuleId; 5] = [
        RuleId::McmAsyncUnordered,
        RuleId::McmStBeforeUse,
        RuleId::McmXthread,
        RuleId::McmXthreadNonpipe,
        RuleId::McmLdWar,
    ];

    fn add(&mut self, r: RuleId) {
        if let Some(i) = Self::RULES.iter().position(|x| *x == r) {
            self.0 |= 1 << i;
        }
    }

    /// Whether some cell races.
    pub fn any(self) -> bool {
        self.0 != 0
    }

    /// The rules, in catalogue order.
    pub fn rules(self) -> impl Iterator<Item = RuleId> {
        Self::RULES
            .into_iter()
            .enumerate()
            .filter(move |(i, _)| self.0 >> i & 1 == 1)
            .map(|(_, r)| r)
    }
}

/// Reusable buffers of [`Ctx::plan`] and [`Ctx::cells`] (no allocation per read or per cell).
#[derive(Debug, Default)]
struct Scratch {
    /// `seen[a] == epoch`: access `a` was examined by the current read.
    seen: Vec<u32>,
    epoch: u32,
    writers: Vec<usize>,
    kept_before: Vec<bool>,
    ord: Vec<bool>,
    is_before: Vec<bool>,
    is_after: Vec<bool>,
    before: Vec<usize>,
    race: Vec<usize>,
    race_rule: Vec<RuleId>,
    cands: Vec<Option<u32>>,
    cov: Vec<usize>,
    /// The writes of one slot ([`ColIndex::slot`]) and their `all_st` flags.
    slot: Vec<u32>,
    slot_st: Vec<bool>,
    /// The column edges of one row's writes ([`Ctx::plan`]).
    col_cuts: Vec<u32>,
    /// The candidate writes of one block of cells (`None`: never written, OQ-9).
    block: Vec<Option<usize>>,
    lane_edges: Vec<u32>,
    col_edges: Vec<u32>,
    /// Set by [`Ctx::cells`] when every cell is `Unspecified` (some candidate of every cell
    /// is never known): the cells are then left unwritten (`out` empty).
    unknown: bool,
    /// Set by [`Ctx::cells`] when a cell of the read has no write ordered before it (OQ-9);
    /// cleared at each ld ([`Ctx::note_open`] names it).
    never_written: bool,
}

/// Whether `w` is an MMA with 16-bit D: its cells' values are the low halves only, the high
/// halves are not stated (MMA-D-UNPACKED, `run::d16`).
fn low16(w: &Acc<'_>) -> bool {
    matches!(w.op, Op::Mma(m) if mma::d16_of(m))
}

/// The word of a cell whose one candidate wrote only its low half ([`low16`]).
fn low_half(v: Option<u32>) -> WordExpect {
    v.map_or(WordExpect::Unspecified, |v| WordExpect::Masked {
        value: v & 0xFFFF,
        mask: 0xFFFF,
    })
}

/// The cell value candidates of one word (sorts `cands`).
fn word_expect(cands: &mut [Option<u32>]) -> WordExpect {
    if let [one] = cands {
        return one.map_or(WordExpect::Unspecified, WordExpect::Exact);
    }
    if cands.is_empty() || cands.iter().any(|c| c.is_none()) {
        return WordExpect::Unspecified;
    }
    cands.sort_unstable();
    if cands.iter().all(|c| *c == cands[0]) {
        return cands[0].map_or(WordExpect::Unspecified, WordExpect::Exact);
    }
    let mut v: Vec<u32> = cands.iter().map(|c| c.expect("checked")).collect();
    v.dedup();
    WordExpect::OneOf(v)
}

/// The write index: per (allocation, lane block of 32) row, the writing accesses with the
/// columns they write, in access order (so grouped by warp, program order within a warp). The
/// writes of one (allocation, lane block, column) slot are those whose columns contain it, in
/// the same order ([`ColIndex::slot`]): memory and build time follow the accesses, not the
/// cells they write.
#[derive(Debug, Default)]
struct ColIndex {
    /// Per row: `(first column, one past the last, access, is_st)`.
    rows: Vec<Vec<(u32, u32, u32, bool)>>,
    /// Per row with more than [`ColIndex::LONG`] writes: its writes by column
    /// ([`ColIndex::by_column`]), so that a slot costs its own writes, not the row's.
    cols: Vec<Option<RowCols>>,
}

/// The writes of one row by column: column `c0 + k` holds the entries (indexes into the
/// row) `ent[start[k]..start[k + 1]]`, in row order; `edge[k]`: some write starts or ends
/// at column `c0 + k`.
#[derive(Debug, Default)]
struct RowCols {
    c0: u32,
    start: Vec<u32>,
    ent: Vec<u32>,
    edge: Vec<bool>,
}

impl ColIndex {
    /// Records that access `acc` writes columns `c0..c1` of `row` (rows past the index are
    /// never read: dropped).
    fn push(&mut self, row: u32, (c0, c1): (u32, u32), acc: u32, is_st: bool) {
        if let Some(r) = self.rows.get_mut(row as usize) {
            r.push((c0, c1, acc, is_st));
        }
    }

    /// Rows with more writes than this get a by-column index.
    const LONG: usize = 32;

    /// Builds the by-column index of the long rows (after every write is recorded).
    fn by_column(&mut self) {
        self.cols.clear();
        self.cols.resize_with(self.rows.len(), || None);
        for (r, ws) in self.rows.iter().enumerate() {
            if ws.len() <= Self::LONG {
                continue;
            }
            let live = ws.iter().filter(|w| w.0 < w.1);
            let (Some(c0), Some(c1)) = (live.clone().map(|w| w.0).min(), live.map(|w| w.1).max())
            else {
                continue;
            };
            let width = (c1 - c0) as usize;
            let mut start = vec![0u32; width + 1];
            let mut edge = vec![false; width + 1];
            for &(a0, a1, _, _) in ws.iter().filter(|w| w.0 < w.1) {
                for k in (a0 - c0) as usize..(a1 - c0) as usize {
                    start[k + 1] += 1;
                }
                edge[(a0 - c0) as usize] = true;
                edge[(a1 - c0) as usize] = true;
            }
            for k in 0..width {
                start[k + 1] += start[k];
            }
            let mut at: Vec<u32> = start[..width].to_vec();
            let mut ent = vec![0u32; start[width] as usize];
            for (e, &(a0, a1, _, _)) in ws.iter().enumerate() {
                for k in (a0.max(c0) - c0) as usize..(a1.min(c1).max(a0.max(c0)) - c0) as usize {
                    ent[at[k] as usize] = e as u32;
                    at[k] += 1;
                }
            }
            self.cols[r] = Some(RowCols {
                c0,
                start,
                ent,
                edge,
            });
        }
    }

    /// Pushes onto `cuts` every column in `lo + 1..hi` where a write of `row` starts or ends.
    fn edges(&self, row: usize, (lo, hi): (u32, u32), cuts: &mut Vec<u32>) {
        if let Some(Some(rc)) = self.cols.get(row) {
            let n = rc.edge.len() as u32;
            let (a, b) = ((lo + 1).max(rc.c0), hi.min(rc.c0 + n));
            for c in a..b {
                if rc.edge[(c - rc.c0) as usize] {
                    cuts.push(c);
                }
            }
        } else if let Some(ws) = self.rows.get(row) {
            for &(a0, a1, _, _) in ws {
                cuts.extend([a0, a1].into_iter().filter(|x| (lo + 1..hi).contains(x)));
            }
        }
    }

    /// The entries of (row, column) into `out` (accesses) and `all_st` (every entry of the
    /// same warp up to this one is a `tcgen05.st`).
    fn slot(
        &self,
        row: usize,
        col: u32,
        accs: &[Acc<'_>],
        out: &mut Vec<u32>,
        all_st: &mut Vec<bool>,
    ) {
        out.clear();
        all_st.clear();
        let Some(r) = self.rows.get(row) else { return };
        let (mut prev_g, mut all) = (usize::MAX, true);
        let mut take = |(_, _, a, is_st): (u32, u32, u32, bool)| {
            let g = accs[a as usize].g;
            if g != prev_g {
                all = true;
                prev_g = g;
            }
            all &= is_st;
            out.push(a);
            all_st.push(all);
        };
        if let Some(Some(rc)) = self.cols.get(row) {
            // Long row: its entries of this column only, in row order.
            if col >= rc.c0 && ((col - rc.c0) as usize) < rc.start.len() - 1 {
                let k = (col - rc.c0) as usize;
                for &e in &rc.ent[rc.start[k] as usize..rc.start[k + 1] as usize] {
                    take(r[e as usize]);
                }
            }
            return;
        }
        for &w in r {
            if w.0 <= col && col < w.1 {
                take(w);
            }
        }
    }
}

struct Ctx<'c, 'a> {
    p: &'a Program,
    u: &'c Unrolled<'a>,
    c: &'c Clocks,
    a: &'c AllocAnalysis,
    opts: &'c Options,
    accs: Vec<Acc<'a>>,
    /// Writing accesses per (allocation, lane block of 32, column), in program order per
    /// warp: index [`Ctx::slot`]. A read visits only the columns it reads.
    by_col: ColIndex,
    /// CTAs where a write went outside every allocation (OQ-9): their reads are unspecified.
    poisoned: Vec<bool>,
    /// The operands of the exact MMAs prepared so far ([`mma::prepare`]), by what they
    /// depend on.
    #[expect(
        clippy::type_complexity,
        reason = "a small list of (key, value) pairs, searched linearly"
    )]
    prepared: Vec<(
        (&'a Mma, RegionData, RegionData),
        Option<std::rc::Rc<mma::Prepared>>,
    )>,
    /// Elementary steps taken (index entries, writes examined, cells, events scanned): past
    /// [`WORK_BUDGET`] the program is not judged.
    work: std::cell::Cell<u64>,
}

/// Most elementary steps the value analysis takes before it gives up judging the program.
pub const WORK_BUDGET: u64 = 1 << 26;

/// The expected records of every `tcgen05.ld`.
pub fn values(
    p: &Program,
    u: &Unrolled<'_>,
    c: &Clocks,
    a: &AllocAnalysis,
    opts: &Options,
    f: &mut Findings,
) -> Vec<ObsItem> {
    values_reserving(p, u, c, a, opts, f, 0)
}

/// [`values`] with room for `extra` more records in the list it gives (the records the
/// caller appends: the list is then allocated once, never grown).
pub fn values_reserving(
    p: &Program,
    u: &Unrolled<'_>,
    c: &Clocks,
    a: &AllocAnalysis,
    opts: &Options,
    f: &mut Findings,
    extra: usize,
) -> Vec<ObsItem> {
    // Borrowed in place (`values_with` does not call `values`): no buffers moved in and out.
    REUSE.with(|r| values_with(p, u, c, a, opts, f, &mut r.borrow_mut(), extra))
}

/// Buffers [`values`] keeps from one call to the next on a thread (cleared before every use,
/// so no result depends on them): fewer allocations per program.
#[derive(Debug, Default)]
struct Reuse {
    sc: Scratch,
    buf: Vec<WordExpect>,
    adds: Vec<u32>,
    rows: Vec<Vec<(u32, u32, u32, bool)>>,
    /// Per access: in flight at / after its allocation's dealloc, and WAIT-SCOPE.
    war: Vec<bool>,
    scope: Vec<bool>,
    /// The processing order, and the (`seq`, access) pairs sorted to find it.
    order: Vec<usize>,
    keyed: Vec<(u32, u32)>,
    /// `Ctx::collect`'s per-warp lists: accesses, wait::ld, wait::st, before-fences and
    /// commits, commits.
    lists: [Vec<u32>; 5],
    /// The most accesses a program of this thread had (capped at [`ACCS_HINT_MAX`]): the
    /// room the access list of the next call starts with (a capacity only: no result
    /// depends on it).
    accs_hint: usize,
}

/// The largest room [`Reuse::accs_hint`] asks for (a bigger program grows its list).
const ACCS_HINT_MAX: usize = 256;

thread_local! {
    static REUSE: std::cell::RefCell<Reuse> = std::cell::RefCell::new(Reuse::default());
}

/// [`values`] with the thread's reusable buffers.
#[expect(
    clippy::too_many_arguments,
    reason = "the analysis inputs of `values_reserving`, the thread's buffers and the room to reserve"
)]
fn values_with(
    p: &Program,
    u: &Unrolled<'_>,
    c: &Clocks,
    a: &AllocAnalysis,
    opts: &Options,
    f: &mut Findings,
    reuse: &mut Reuse,
    extra: usize,
) -> Vec<ObsItem> {
    let mut rows = std::mem::take(&mut reuse.rows);
    // Lanes are below 128 (regions are clamped or rejected past lane 128): 4 lane blocks.
    let nrows = 4 * a.insts.len();
    rows.truncate(nrows);
    for r in &mut rows {
        r.clear();
    }
    rows.resize_with(nrows, Vec::new);
    let mut cx = Ctx {
        p,
        u,
        c,
        a,
        opts,
        // Room for as many accesses as the largest of the thread's recent programs had (at
        // most `ACCS_HINT_MAX`): one allocation instead of a few growths of the list.
        accs: Vec::with_capacity(reuse.accs_hint),
        by_col: ColIndex {
            rows,
            cols: Vec::new(),
        },
        poisoned: vec![false; (c.g / c.w.max(1)).max(1)],
        work: std::cell::Cell::new(0),
        prepared: Vec::new(),
    };
    cx.collect(f, &mut reuse.lists);
    reuse.accs_hint = reuse.accs_hint.max(cx.accs.len()).min(ACCS_HINT_MAX);
    if cx.work.get() > WORK_BUDGET {
        f.not_judged = Some(format!(
            "more than {WORK_BUDGET} TMEM index entries (work bound)"
        ));
        return Vec::new();
    }
    cx.by_col.by_column();
    // In-flight accesses at their allocation's dealloc (DEALLOC-PAIR-SYNC, OQ-4, MCM-LD-WAR)
    // and accesses after it (OQ-9).
    let war = &mut reuse.war;
    war.clear();
    war.resize(cx.accs.len(), false);
    // WAIT-SCOPE: an ld left in flight at the dealloc although another warp's wait::ld is
    // ordered between them (that wait covers only its own warp's loads, §9.7.16.8.5).
    let scope = &mut reuse.scope;
    scope.clear();
    scope.resize(cx.accs.len(), false);
    for (k, x) in cx.accs.iter().enumerate() {
        for r in &x.regions {
            let inst = &a.insts[r.inst as usize];
            let Some((dg, di)) = inst.dealloc else {
                continue;
            };
            if c.hb(dg, di, x.g, x.i) {
                if r.write {
                    let cta = (x.g / c.w) % cx.poisoned.len();
                    cx.poisoned[cta] = true;
                }
                war[k] = true;
                f.note("a TMEM access follows the dealloc of its allocation (OQ-9)");
            } else if !cx.done_before_event(x, dg, di) {
                if inst.cg == CtaGroup::Two {
                    f.undefined.insert(RuleId::DeallocPairSync);
                    f.note("DEALLOC-PAIR-SYNC: a ::2 dealloc is not ordered after a TMEM access of its allocation");
                } else if r.write {
                    f.undefined.insert(RuleId::McmAsyncUnordered);
                    f.note("a TMEM write may still be in flight at the dealloc of its allocation (OQ-4)");
                } else {
                    war[k] = true;
                    scope[k] = cx.waited_elsewhere(x, WaitOp::Ld, dg, di);
                }
            } else if inst
                .peer
                .and_then(|y| a.insts[y as usize].dealloc)
                .is_some_and(|(pg, pi)| !c.hb(pg, pi, x.g, x.i) && !cx.done_before_event(x, pg, pi))
            {
                // DEALLOC-PAIR-SYNC: the peer CTA's half of the collective dealloc too.
                f.undefined.insert(RuleId::DeallocPairSync);
                f.note("DEALLOC-PAIR-SYNC: a ::2 dealloc is not ordered after a TMEM access of the peer CTA's allocation");
            }
        }
    }
    // Process in a linearization of happens-before, so writes are known before their readers.
    let order = &mut reuse.order;
    // By `seq` (every event numbered once, so the keys are distinct; ties, if any, by
    // index): the keys and indexes sorted as pairs of integers (a few dozen accesses).
    let keyed = &mut reuse.keyed;
    keyed.clear();
    keyed.extend(
        cx.accs
            .iter()
            .enumerate()
            .map(|(k, x)| (c.seq(x.g, x.i), k as u32)),
    );
    keyed.sort_unstable();
    order.clear();
    order.extend(keyed.iter().map(|&(_, k)| k as usize));
    for (p, &k) in order.iter().enumerate() {
        cx.accs[k].pos = p;
    }
    let mut out: Vec<ObsItem> =
        Vec::with_capacity(cx.accs.iter().filter(|x| x.kind == Kind::Ld).count() + extra);
    let (sc, buf, adds) = (&mut reuse.sc, &mut reuse.buf, &mut reuse.adds);
    for &k in order.iter() {
        if cx.work.get() > WORK_BUDGET {
            f.not_judged = Some(format!(
                "more than {WORK_BUDGET} steps of TMEM value analysis (work bound)"
            ));
            return Vec::new();
        }
        match cx.accs[k].kind {
            Kind::Mma => cx.mma_values(k, sc),
            Kind::Cp => cx.cp_values(k),
            Kind::Shift => cx.shift_values(k, sc),
            Kind::Ld => {
                let x = &cx.accs[k];
                let e = &u.warps[x.g][x.i];
                let Some(site) = e.site else { continue };
                let Op::Ld { form, nregs, .. } = x.op else {
                    continue;
                };
                let (cta, warp) = ((x.g / c.w) as u32, (x.g % c.w) as u8);
                sc.never_written = false;
                // Whether the record's open words are noted already (an ld outside the
                // allocation, the shaped lds).
                let mut noted = false;
                let simple = !form.red && form.shape == LdStShape::S32x32b && form.pack.is_none();
                // Room for the race rules added below (one allocation).
                let mut rules = Vec::with_capacity(4);
                rules.push(RuleId::LdAsync);
                let expect = if cx.poisoned[cta as usize % cx.poisoned.len()] || war[k] {
                    rules.push(RuleId::McmLdWar);
                    if scope[k] {
                        rules.push(RuleId::WaitScope);
                    }
                    SiteExpect::Same(ObsExpect::Unspecified(vec![RuleId::McmLdWar]))
                } else if x.regions.len() != 1 + usize::from(form.shape == LdStShape::S16x32bx2) {
                    // Outside the allocation (OQ-9).
                    f.note(
                        "OQ-9: an ld reads lanes or columns outside every allocation: unspecified",
                    );
                    noted = true;
                    SiteExpect::Same(ObsExpect::Unspecified(vec![RuleId::LdAsync]))
                } else if !simple {
                    let (expect, races) = cx.ld_shaped(k, form, u32::from(*nregs), e.mask, sc, f);
                    rules.extend(races.rules());
                    noted = true;
                    expect
                } else {
                    let r = *x.regions.first().expect("one region");
                    let n = u32::from(*nregs);
                    let rect = (r.l0, r.l0 + 32, r.c0, r.c0 + n);
                    cx.plan(k, r.inst, rect, sc);
                    if let Some(data) = cx.single_st(r.inst, rect, sc, adds) {
                        // The common case: one st ordered before, nothing racing.
                        SiteExpect::Exact { words: n, data }
                    } else if let Some(data) = cx.single_mma(r.inst, rect, sc, e.mask) {
                        // One exact MMA ordered before, nothing racing, every value of the
                        // lanes that record known: what `cells` + `ld_expect` give, directly.
                        let k = sc.writers.len() as u64;
                        cx.work
                            .set(cx.work.get() + u64::from(32 * n) * (k + 1) + k * k);
                        let mut races = Races::default();
                        for &wi in &sc.writers {
                            races.0 |= cx.accs[wi].in_races.0;
                        }
                        rules.extend(races.rules());
                        SiteExpect::Exact { words: n, data }
                    } else if let Some(data) = cx.single_known(r.inst, rect, sc, false) {
                        // One known write (cp, shift, any st) before, nothing racing.
                        let k = sc.writers.len() as u64;
                        cx.work
                            .set(cx.work.get() + u64::from(32 * n) * (k + 1) + k * k);
                        let mut races = Races::default();
                        for &wi in &sc.writers {
                            races.0 |= cx.accs[wi].in_races.0;
                        }
                        rules.extend(races.rules());
                        SiteExpect::Exact { words: n, data }
                    } else {
                        let mut races = cx.cells(r.inst, rect, sc, buf);
                        // An MMA that wrote (or may have written) these cells read a racing A.
                        for &wi in &sc.writers {
                            races.0 |= cx.accs[wi].in_races.0;
                        }
                        let why: Vec<RuleId> = races.rules().collect();
                        rules.extend(why.iter().copied());
                        if sc.unknown && n > 0 {
                            // What `ld_expect` gives when every cell is unspecified (the
                            // record's lanes are never empty).
                            SiteExpect::Same(ObsExpect::Unspecified(why))
                        } else {
                            if sc.unknown {
                                buf.resize(32 * n as usize, WordExpect::Unspecified);
                            }
                            ld_expect(buf, n as usize, e.mask, &why)
                        }
                    }
                };
                if !noted && rules.len() == 1 && !matches!(expect, SiteExpect::Exact { .. }) {
                    // Not exact, and no race: say which open question leaves it so.
                    cx.note_open(sc, f);
                }
                out.push(ObsItem {
                    key: ObsSite { cta, warp, site },
                    lanes: e.mask,
                    expect,
                    rules,
                });
            }
            _ => {}
        }
    }
    reuse.rows = std::mem::take(&mut cx.by_col.rows);
    f.tmem_work = cx.work.get();
    out
}

/// Whether `op` is a st whose thread `t`, register `r` is lane `t`, column `r` (`.32x32b`
/// without unpack, reference §2.6): the fast paths that compute `st_value` by lane and column.
fn st_plain(op: &Op) -> bool {
    matches!(op, Op::St { form, .. } if form.shape == LdStShape::S32x32b && form.pack.is_none())
}

/// The register a `.pack::16b` ld makes of two cells' low halves (§9.7.16.8.2, `ldst`): the
/// lower column in bits 0-15. Every combination of the candidates (at most 16), or
/// unspecified.
fn pack_words(lo: &WordExpect, hi: &WordExpect) -> WordExpect {
    let set = |w: &WordExpect| match w {
        WordExpect::Exact(v) => Some(vec![*v]),
        WordExpect::OneOf(v) => Some(v.clone()),
        WordExpect::Masked { value, mask } if mask & 0xFFFF == 0xFFFF => Some(vec![*value]),
        WordExpect::Masked { .. } | WordExpect::Unspecified => None,
    };
    let (Some(a), Some(b)) = (set(lo), set(hi)) else {
        return WordExpect::Unspecified;
    };
    if a.len() * b.len() > 16 {
        return WordExpect::Unspecified;
    }
    let mut v: Vec<u32> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| (x & 0xFFFF) | (y & 0xFFFF) << 16))
        .collect();
    v.sort_unstable();
    v.dedup();
    match v[..] {
        [one] => WordExpect::Exact(one),
        _ => WordExpect::OneOf(v),
    }
}

/// Fills lane-major rows of `adds.len()` words: word `j` of the row of lane `l` is
/// `l * mul + adds[j]` (wrapping), `l` running over `lanes`.
fn fill_rows_any(v: &mut [u32], adds: &[u32], lanes: std::ops::Range<u32>, mul: u32) {
    for (row, l) in v.chunks_exact_mut(adds.len().max(1)).zip(lanes) {
        let lm = l.wrapping_mul(mul);
        for (x, a) in row.iter_mut().zip(adds) {
            *x = lm.wrapping_add(*a);
        }
    }
}

/// [`fill_rows_any`] for rows of a fixed width `N` (unrolled: the common `.x1/.x2/.x4`).
fn fill_rows<const N: usize>(v: &mut [u32], adds: &[u32], lanes: std::ops::Range<u32>, mul: u32) {
    let Ok(adds) = <&[u32; N]>::try_from(adds) else {
        fill_rows_any(v, adds, lanes, mul);
        return;
    };
    for (row, l) in v.chunks_exact_mut(N).zip(lanes) {
        let lm = l.wrapping_mul(mul);
        for (x, a) in row.iter_mut().zip(adds) {
            *x = lm.wrapping_add(*a);
        }
    }
}

/// The site expectation of an ld from its cells (lane-major, `n` words per lane). `why`: the
/// rules of the races that leave cells unspecified, named by a lane whose words are all
/// unspecified (empty where no cell races: an open question leaves them so, and the
/// expectation's notes name it).
fn ld_expect(cells: &[WordExpect], n: usize, mask: u32, why: &[RuleId]) -> SiteExpect {
    let lane_cells = |t: usize| &cells[t * n..(t + 1) * n];
    let in_mask = |t: usize| mask >> t & 1 == 1;
    if (0..32).filter(|&t| in_mask(t)).all(|t| {
        lane_cells(t)
            .iter()
            .all(|w| matches!(w, WordExpect::Exact(_)))
    }) {
        let mut data = Vec::with_capacity(32 * n);
        for t in 0..32 {
            let m = in_mask(t);
            for w in lane_cells(t) {
                data.push(match w {
                    WordExpect::Exact(v) if m => *v,
                    _ => 0,
                });
            }
        }
        return SiteExpect::Exact {
            words: n as u32,
            data,
        };
    }
    // Every cell unknown (n >= 1 here: some cell is not exact): every lane is the same
    // Unspecified, what the comparison below finds, without comparing.
    if cells[..32 * n]
        .iter()
        .all(|w| matches!(w, WordExpect::Unspecified))
    {
        return SiteExpect::Same(ObsExpect::Unspecified(why.to_vec()));
    }
    let lane = |t: usize| {
        let ws = lane_cells(t);
        if ws.iter().all(|w| matches!(w, WordExpect::Exact(_))) {
            ObsExpect::Exact(
                ws.iter()
                    .map(|w| if let WordExpect::Exact(v) = w { *v } else { 0 })
                    .collect(),
            )
        } else if ws.iter().all(|w| matches!(w, WordExpect::Unspecified)) {
            ObsExpect::Unspecified(why.to_vec())
        } else {
            ObsExpect::PerWord(ws.to_vec())
        }
    };
    // A lane's expectation is a one-to-one function of its cells: the lanes agree exactly
    // when their cells do.
    if (1..32).all(|t| lane_cells(t) == lane_cells(0)) {
        return SiteExpect::Same(lane(0));
    }
    SiteExpect::Each((0..32).map(lane).collect())
}
