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
use super::ldst;
use super::mma::{self, RegionData};
use super::sync::Clocks;
use super::unroll::{EvKind, Unrolled};
use crate::types::*;
use tcgen05_ir::form::LdForm;
use tcgen05_ir::*;

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
    /// With enable-input-d: how to read the old D cells (on demand).
    old: Option<OldD>,
    /// MMA-DOL-SEM: lanes whose disable-output-lane bit is set.
    dol: [u32; 4],
    /// `.ashift`: D row 0 is unspecified (what A's first row holds after the shift is not
    /// stated).
    ashift: bool,
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
    /// Per cell (row-major 128 × n): `UNREAD`, `UNKNOWN` or the value.
    memo: std::cell::RefCell<Vec<u64>>,
}

impl OldD {
    const UNREAD: u64 = u64::MAX;
    const UNKNOWN: u64 = 1 << 32;
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

impl<'a> Ctx<'_, 'a> {
    fn cta(&self, g: usize) -> u32 {
        (g / self.c.w) as u32
    }

    /// The `by_col` row of (allocation, lane block).
    fn row_of(inst: u32, lb: u32) -> u32 {
        inst * 4 + lb
    }

    /// Resolves a TMEM address at event (g, i) to (allocation, lane, column).
    fn resolve(&self, t: &TmemRef, g: usize, i: usize) -> Option<(u32, u32, u32)> {
        let TBase::Slot(s) = t.base else { return None };
        match self.a.read_slot(self.c, self.cta(g), s, g, i) {
            SlotRead::Inst(id) => Some((id, u32::from(t.lane), u32::from(t.col))),
            _ => None,
        }
    }

    /// Adds a region; false if it leaves the allocation (OQ-9).
    fn region(
        &self,
        out: &mut Regions,
        inst: u32,
        l: (u32, u32),
        c: (u32, u32),
        rw: (bool, bool),
        clamp: bool,
    ) -> bool {
        let n = self.a.insts[inst as usize].ncols;
        let (mut l1, mut c1) = (l.1, c.1);
        if clamp {
            l1 = l1.min(128);
            c1 = c1.min(n);
            if l.0 >= l1 || c.0 >= c1 {
                return true;
            }
        } else if l1 > 128 || c1 > n {
            return false;
        }
        // Reads matter only through the reader's own values; the region records writes.
        let _ = rw.0;
        out.push(Region {
            inst,
            l0: l.0,
            l1,
            c0: c.0,
            c1,
            write: rw.1,
        });
        true
    }

    /// Builds every access; returns false if a write leaves its allocation.
    fn collect(&mut self, f: &mut Findings, lists: &mut [Vec<u32>; 5]) {
        let w = self.c.w;
        // Per warp, in one pass over its reached events: its accesses, and the indexes of
        // its wait::ld, wait::st, before-fences-or-commits and commits, ascending (the
        // completion witnesses of an access are the first of them after it). Reused from warp
        // to warp, and from call to call ([`Reuse::lists`]).
        let [acc_at, wl, ws, fc, cm] = lists;
        // The first index in `list` at or after `j` (the lists are short: a scan, unless
        // long).
        let first_from = |list: &[u32], j: usize| {
            if list.len() <= 16 {
                return list.iter().find(|&&x| x as usize >= j).map(|&x| x as usize);
            }
            let k = list.partition_point(|&x| (x as usize) < j);
            list.get(k).map(|&x| x as usize)
        };
        for (g, evs) in self.u.warps.iter().enumerate() {
            let reached = self.c.reached[g];
            for v in [&mut *acc_at, &mut *wl, &mut *ws, &mut *fc, &mut *cm] {
                v.clear();
            }
            for (j, e2) in evs.iter().enumerate().take(reached) {
                let ju = j as u32;
                match e2.kind {
                    EvKind::Ld | EvKind::St | EvKind::Mma | EvKind::Cp | EvKind::Shift => {
                        acc_at.push(ju)
                    }
                    EvKind::WaitLd => wl.push(ju),
                    EvKind::WaitSt => ws.push(ju),
                    EvKind::FenceBefore => fc.push(ju),
                    EvKind::Commit => {
                        fc.push(ju);
                        cm.push(ju);
                    }
                    _ => {}
                }
            }
            self.accs.reserve(acc_at.len());
            for &i in acc_at.iter() {
                let (i, e) = (i as usize, &evs[i as usize]);
                if self.work.get() > WORK_BUDGET {
                    // Not judged (checked by the caller): stop building the index.
                    return;
                }
                let Stmt::Tc(op) = e.stmt else { continue };
                let (kind, cg) = match op {
                    Op::Ld { .. } => (Kind::Ld, None),
                    Op::St { .. } => (Kind::St, None),
                    Op::Mma(m) => (Kind::Mma, Some(m.form.cta_group)),
                    Op::Cp { form, .. } => (Kind::Cp, Some(form.cta_group)),
                    Op::Shift { form, .. } => (Kind::Shift, Some(form.cta_group)),
                    _ => continue,
                };
                let mut regions = Regions::default();
                let mut wild = false;
                let mut outside_read = false;
                let mut a_read = None;
                match op {
                    Op::Ld { taddr, split, .. } | Op::St { taddr, split, .. } => {
                        let (shape, num, pack) = match op {
                            Op::Ld { form, .. } => (form.shape, form.num, form.pack.is_some()),
                            Op::St { form, .. } => (form.shape, form.num, form.pack.is_some()),
                            _ => unreachable!("ld or st"),
                        };
                        let (lanes_n, cols) = match shape {
                            LdStShape::S32x32b => (32, 1),
                            LdStShape::S16x64b => (16, 2),
                            LdStShape::S16x128b => (16, 4),
                            LdStShape::S16x256b => (16, 8),
                            LdStShape::S16x32bx2 => (16, 1),
                            // LDST-SHAPE: statically ill-formed, so never run; sized as its
                            // name says.
                            LdStShape::S32x64b => (32, 2),
                        };
                        let cols = cols * num.count() * if pack { 2 } else { 1 };
                        let rw = (kind == Kind::Ld, kind == Kind::St);
                        match self.resolve(taddr, g, i) {
                            Some((inst, l, c)) => {
                                // LDST-LANE-QUARTER (§9.7.16.8.1): warp-rank mod 4 picks the
                                // lanes.
                                let q = ((g % w) % 4) as u32 * 32;
                                let mut ok = self.region(
                                    &mut regions,
                                    inst,
                                    (l, l + lanes_n),
                                    (c, c + cols),
                                    rw,
                                    false,
                                );
                                let mut lane_spans = [(l, l + lanes_n), (l, l + lanes_n)];
                                if let (LdStShape::S16x32bx2, Some(s)) = (shape, split) {
                                    let (l2, c2) = (l + (s >> 16), c + (s & 0xFFFF));
                                    ok &= self.region(
                                        &mut regions,
                                        inst,
                                        (l2, l2 + lanes_n),
                                        (c2, c2 + cols),
                                        rw,
                                        false,
                                    );
                                    lane_spans[1] = (l2, l2 + lanes_n);
                                }
                                if lane_spans.iter().any(|(a, b)| *a < q || *b > q + 32) {
                                    f.undefined.insert(RuleId::LdstLaneQuarter);
                                    f.note("LDST-LANE-QUARTER: a warp accesses lanes outside its quarter (OQ-11)");
                                }
                                if !ok {
                                    if kind == Kind::St {
                                        wild = true
                                    } else {
                                        outside_read = true
                                    }
                                }
                            }
                            None => {
                                if kind == Kind::St {
                                    wild = true
                                } else {
                                    outside_read = true
                                }
                            }
                        }
                    }
                    Op::Mma(m) => {
                        let mm = (m.idesc >> 24 & 0x1F) << 4;
                        let n = ((m.idesc >> 17 & 0x3F) << 3).max(8);
                        let _ = mm;
                        if let MmaA::Tmem(t) = &m.a
                            && let Some((inst, l, c)) = self.resolve(t, g, i)
                        {
                            let mut one = Regions::default();
                            self.region(&mut one, inst, (l, 128), (c, c + 8), (true, false), true);
                            a_read = one.first().copied();
                        }
                        match self.resolve(&m.d, g, i) {
                            Some((inst, l, c)) => {
                                let insts = self.pair_insts(inst, m.form.cta_group);
                                for x in insts {
                                    self.region(
                                        &mut regions,
                                        x,
                                        (l, 128),
                                        (c, c + n),
                                        (m.enable_input_d, true),
                                        true,
                                    );
                                }
                            }
                            None => wild = true,
                        }
                    }
                    Op::Cp { form, taddr, .. } => {
                        let (ln, cols) = match form.shape {
                            CpShape::S128x256b => (128, 8),
                            CpShape::S4x256b => (4, 8),
                            CpShape::S128x128b => (128, 4),
                            CpShape::S64x128b | CpShape::S32x128b => (128, 4),
                            // CP-SHAPE: statically ill-formed, so never run.
                            CpShape::S64x256b => (64, 8),
                        };
                        let cols = if form.dst_fmt.is_some() {
                            cols * 2
                        } else {
                            cols
                        };
                        match self.resolve(taddr, g, i) {
                            Some((inst, l, c)) => {
                                let l0 = if ln == 128 { 0 } else { l };
                                for x in self.pair_insts(inst, form.cta_group) {
                                    self.region(
                                        &mut regions,
                                        x,
                                        (l0, l0.max(l) + ln),
                                        (c, c + cols),
                                        (false, true),
                                        true,
                                    );
                                }
                            }
                            None => wild = true,
                        }
                    }
                    // SHIFT: the `.31x256b` matrix at taddr (§9.7.16.9.3): 32 lanes (row 0 and
                    // the 31 rows moved into lanes 1..32), 8 columns.
                    Op::Shift { form, taddr } => match self.resolve(taddr, g, i) {
                        Some((inst, l, c)) => {
                            for x in self.pair_insts(inst, form.cta_group) {
                                self.region(
                                    &mut regions,
                                    x,
                                    (l, l + 32),
                                    (c, c + 8),
                                    (true, true),
                                    true,
                                );
                            }
                        }
                        None => wild = true,
                    },
                    _ => {}
                }
                if wild {
                    let cta = self.cta(g) as usize;
                    self.poisoned[cta] = true;
                    f.note("a TMEM write goes outside every allocation (OQ-9): reads of that CTA are unspecified");
                }
                let _ = outside_read;
                // Completion witnesses: the first wait, fence or commit after the access.
                let wait = match kind {
                    Kind::Ld => first_from(wl, i + 1),
                    Kind::St => first_from(ws, i + 1),
                    _ => None,
                };
                let xfence = wait.and_then(|w| first_from(fc, w + 1));
                let pfence = first_from(fc, i + 1);
                // The first later commit of the same `.cta_group` by every issuing lane, with
                // its ordinal (1-based: commit `k` of the list is the warp's `k + 1`-th).
                let from = cm.partition_point(|&x| (x as usize) < i + 1);
                let commit = cm[from..].iter().zip(from + 1..).find_map(|(&jj, ord)| {
                    let ej = &evs[jj as usize];
                    match ej.stmt {
                        Stmt::Tc(Op::Commit { form, .. })
                            if Some(form.cta_group) == cg && ej.mask & e.mask == e.mask =>
                        {
                            Some(ord as u32)
                        }
                        _ => None,
                    }
                });
                // Every st shape's values are known (`ldst`); LDST-SHAPE's `.32x64b` is never run.
                let known = match op {
                    Op::St { form, .. } => form.shape != LdStShape::S32x64b,
                    _ => false,
                };
                let idx = self.accs.len();
                for r in regions.iter().filter(|r| r.write) {
                    for lb in r.l0 / 32..r.l1.div_ceil(32) {
                        // One step per (lane block, column) slot written.
                        self.work
                            .set(self.work.get() + u64::from(r.c1.saturating_sub(r.c0)));
                        self.by_col.push(
                            Self::row_of(r.inst, lb),
                            (r.c0, r.c1),
                            idx as u32,
                            kind == Kind::St,
                        );
                    }
                }
                self.accs.push(Acc {
                    g,
                    i,
                    kind,
                    op,
                    cg,
                    issuer: e.mask,
                    regions,
                    wait,
                    xfence,
                    commit,
                    pfence,
                    mma: None,
                    cp: None,
                    shifted: None,
                    known,
                    a_read,
                    in_races: Races::default(),
                    pos: usize::MAX,
                });
            }
        }
    }

    /// The allocations a `::2` operation touches: its own and its peer's (MMA-PAIR, CP-PAIR).
    fn pair_insts(&self, inst: u32, cg: CtaGroup) -> impl Iterator<Item = u32> + use<> {
        let peer = if cg == CtaGroup::Two {
            self.a.insts[inst as usize].peer
        } else {
            None
        };
        std::iter::once(inst).chain(peer)
    }

    /// Whether the completion of `x` is known at the issue of `y`.
    fn done_before_issue(&self, x: &Acc<'_>, y: &Acc<'_>) -> bool {
        match x.kind {
            Kind::Ld | Kind::St => match (x.wait, x.xfence) {
                (Some(wi), _) if x.g == y.g => y.i > wi,
                (Some(_), Some(fi)) => self.c.issue_knows(y.g, y.i, x.g, fi as u32),
                _ => false,
            },
            _ => x
                .commit
                .is_some_and(|j| self.c.issue_knows_commit(y.g, y.i, x.g, j)),
        }
    }

    /// Whether the completion of `x` is known at event (g, i) (full knowledge).
    fn done_before_event(&self, x: &Acc<'_>, g: usize, i: usize) -> bool {
        match x.kind {
            Kind::Ld | Kind::St => match (x.wait, x.xfence) {
                (Some(wi), _) if x.g == g => i >= wi,
                (Some(_), Some(fi)) => self.c.hb(x.g, fi, g, i),
                _ => false,
            },
            _ => x.commit.is_some_and(|j| self.c.knows_commit(g, i, x.g, j)),
        }
    }

    /// The five pipelined pairs (MCM-PIPE-*), same `.cta_group` (MCM-PIPE-CTAGROUP).
    fn pipelined(&self, x: &Acc<'_>, y: &Acc<'_>) -> bool {
        if x.cg.is_none() || x.cg != y.cg {
            return false;
        }
        let pair = match (x.kind, y.kind, x.op, y.op) {
            (Kind::Mma, Kind::Mma, Op::Mma(a), Op::Mma(b)) => {
                // MCM-PIPE-MMA-MMA: same accumulator and shape; ptx93 also the same kind (OQ-27).
                let shape = |m: &Mma| {
                    (
                        m.idesc >> 17 & 0x3F,
                        m.idesc >> 24 & 0x1F,
                        m.form.ws,
                        m.form.sp,
                    )
                };
                let same_kind = self.opts.edition == Edition::Seeds || a.form.kind == b.form.kind;
                a.d == b.d && shape(a) == shape(b) && same_kind
            }
            (Kind::Cp, Kind::Mma, ..)
            | (Kind::Shift, Kind::Mma, ..)
            | (Kind::Mma, Kind::Shift, ..) => true,
            (Kind::Shift, Kind::Cp, _, Op::Cp { form, .. }) => form.shape == CpShape::S4x256b,
            _ => false,
        };
        if !pair {
            return false;
        }
        if x.g == y.g {
            // Same thread: issue order (§9.7.16.6.4.1). Lanes of one warp are different
            // threads (§9.7.16.6.4.3: before-fence, synchronization, after-fence).
            return x.i < y.i
                && (x.issuer & y.issuer != 0
                    || x.pfence.is_some_and(|fi| self.lanes_synced(x, fi, y)));
        }
        // Across threads: before-fence → sync → after-fence (canonical pattern 3).
        x.pfence
            .is_some_and(|fi| self.c.issue_knows(y.g, y.i, x.g, fi as u32))
    }

    /// Canonical pattern 3 between two threads of one warp (§9.7.16.6.4.3): after the
    /// before-fence at `fi` that follows `x`, a warp-collective `.sync.aligned` instruction
    /// or barrier executed by both issuing threads, then a `fence::after_thread_sync` of
    /// `y`'s thread before `y`.
    fn lanes_synced(&self, x: &Acc<'_>, fi: usize, y: &Acc<'_>) -> bool {
        let evs = &self.u.warps[y.g];
        let Some(a) = self.c.after_fence(y.g, y.i) else {
            return false;
        };
        let both = x.issuer | y.issuer;
        a > fi
            && evs[fi].mask & x.issuer == x.issuer
            && evs[a].mask & y.issuer == y.issuer
            && evs[fi + 1..a].iter().any(|e| {
                e.mask & both == both
                    && matches!(
                        e.kind,
                        EvKind::BarCta
                            | EvKind::ClusterWait
                            | EvKind::Alloc
                            | EvKind::Dealloc
                            | EvKind::Relinquish
                            | EvKind::Ld
                            | EvKind::St
                            | EvKind::WaitLd
                            | EvKind::WaitSt
                    )
            })
    }

    fn ordered(&self, x: &Acc<'_>, y: &Acc<'_>) -> bool {
        self.done_before_issue(x, y) || self.pipelined(x, y)
    }

    /// The value `w` wrote at (lane, col) of allocation `inst`: `None` if unknown.
    fn value_at(&self, w: &Acc<'_>, inst: u32, lane: u32, col: u32) -> Option<u32> {
        self.value_as_of(w, inst, lane, col, usize::MAX)
    }

    /// [`Ctx::value_at`] as known when the access at position `as_of` of the processing order
    /// was processed: an MMA's values are known from its own position on.
    fn value_as_of(
        &self,
        w: &Acc<'_>,
        inst: u32,
        lane: u32,
        col: u32,
        as_of: usize,
    ) -> Option<u32> {
        let r = w.regions.iter().find(|r| r.inst == inst)?;
        match w.op {
            Op::St { seed, form, .. } if w.known => {
                if form.pack.is_some() {
                    // `.unpack::16b` writes the low half of the cell; the other half is not
                    // shown (OQ-10, `ldst`).
                    return None;
                }
                if st_plain(w.op) {
                    return Some(values::st_value(*seed, lane - r.l0, col - r.c0));
                }
                let (t, reg) = self.st_owner(w, inst, lane, col)?;
                Some(values::st_value(*seed, t, reg))
            }
            Op::Mma(_) if w.pos < as_of => self.mma_value(w, lane - r.l0, col - r.c0),
            Op::Cp { .. } if w.pos < as_of => self.cp_value(w, inst, lane, col),
            Op::Shift { .. } if w.pos < as_of => {
                // Only the issuing CTA's allocation (the first region) was read.
                let own = w.regions.first()?;
                let old = w.shifted.as_ref()?;
                if own.inst != inst || lane <= own.l0 {
                    // Row 0 after the shift: not stated (OQ-16).
                    return None;
                }
                *old.get(((lane - own.l0 - 1) * 8 + col - own.c0) as usize)?
            }
            _ => None,
        }
    }

    /// The value the cp `w` wrote at (lane, col) of allocation `inst` (§9.7.16.9.2, reference
    /// §3.5): source row `row` lands in the lanes `cp_lanes` gives, its 32-bit words in
    /// consecutive columns; the row's 16-byte chunks are read through the descriptor in the
    /// K-major no-swizzle layout of the MMA operands (`mma::chunk_base`: core matrices of 8
    /// rows × 16 bytes, LBO between chunks of a row, SBO between groups of 8 rows, §9.7.16.4).
    /// Only the issuing CTA's copy (a `::2` peer copies its own shared memory).
    fn cp_value(&self, w: &Acc<'_>, inst: u32, lane: u32, col: u32) -> Option<u32> {
        let cv = w.cp.as_ref()?;
        let own = w.regions.first()?;
        let Op::Cp { src, .. } = w.op else {
            return None;
        };
        if own.inst != inst || col < own.c0 {
            return None;
        }
        let row = cp_row(cv, lane)?;
        let j = col - own.c0;
        if j >= cv.row_bytes / 4 {
            return None;
        }
        let at = mma::chunk_base(src, row, u64::from(j / 4)) + u64::from(4 * (j % 4));
        if !at.is_multiple_of(4) || at + 4 > u64::from(cv.data.bytes) {
            // A word across two source words, or beyond the data region: not modelled.
            return None;
        }
        Some(values::fill_word(
            cv.data.elem,
            cv.data.seed,
            (at / 4) as u32,
        ))
    }

    /// Records what a cp's values need, if they are known: a source region filled once and
    /// fenced into the async proxy before it (MCM-PROXY, as for MMA operands), a descriptor
    /// the K-major no-swizzle layout reads, the multicast its shape requires (CP-MULTICAST),
    /// and no decompression (`.b8x16` with `.b6x16_p32` / `.b4x16_p64`: the expansion of
    /// each element is shown only in figures, OQ-29: unspecified).
    fn cp_values(&mut self, ai: usize) {
        let acc = &self.accs[ai];
        let Op::Cp { form, taddr, src } = acc.op else {
            return;
        };
        if form.dst_fmt.is_some()
            || form.src_fmt.is_some()
            || src.swizzle != 0
            || src.lbo_abs
            || src.base_offset != 0
            || src.fixed != 1
            || src.reserved != 0
            || self.poisoned[self.cta(acc.g) as usize]
        {
            return;
        }
        let (rows, row_bytes) = match (form.shape, form.multicast) {
            (CpShape::S128x256b, None) => (128, 32),
            (CpShape::S4x256b, None) => (4, 32),
            (CpShape::S128x128b, None) => (128, 16),
            (CpShape::S64x128b, Some(CpMulticast::Warpx2_02_13 | CpMulticast::Warpx2_01_23)) => {
                (64, 16)
            }
            (CpShape::S32x128b, Some(CpMulticast::Warpx4)) => (32, 16),
            _ => return,
        };
        let Some((_, lane, _)) = self.resolve(taddr, acc.g, acc.i) else {
            return;
        };
        let Some(data) = self.region_data(acc, src.region) else {
            return;
        };
        self.accs[ai].cp = Some(CpVals {
            data,
            multicast: form.multicast,
            lane,
            rows,
            row_bytes,
        });
        self.accs[ai].known = true;
    }

    /// Reads the rows a shift moves (§9.7.16.9.3, reference §3.6: the `.31x256b` matrix at
    /// `taddr`, 32-byte rows, each row but the last moved down by one lane): rows 0..31 of
    /// lanes `[l, l + 31)`, 8 columns, as an ld would read them at this point of the
    /// processing order. The races of that read are the shift's (cited by the lds of what it
    /// wrote, like an MMA's A read).
    fn shift_values(&mut self, ai: usize, sc: &mut Scratch) {
        let Some(own) = self.accs[ai].regions.first().copied() else {
            return;
        };
        if own.l1 != own.l0 + 32 || own.c1 != own.c0 + 8 {
            // Clamped at the allocation's edge: not the documented shape.
            return;
        }
        let rect = (own.l0, own.l0 + 31, own.c0, own.c1);
        self.plan(ai, own.inst, rect, sc);
        let mut buf = Vec::new();
        let races = self.cells(own.inst, rect, sc, &mut buf);
        for &wi in &sc.writers {
            self.accs[ai].in_races.0 |= self.accs[wi].in_races.0;
        }
        self.accs[ai].in_races.0 |= races.0;
        if sc.unknown || buf.len() != 31 * 8 {
            return;
        }
        let old: Box<[Option<u32>]> = buf
            .iter()
            .map(|w| match w {
                WordExpect::Exact(v) => Some(*v),
                _ => None,
            })
            .collect();
        self.accs[ai].shifted = Some(old);
        self.accs[ai].known = true;
    }

    /// The low 16 bits of the cell (lane, col) of allocation `inst` as `w` wrote it (what a
    /// `.pack::16b` ld reads of it, §9.7.16.8.2): the 16-bit half an `.unpack::16b` st put
    /// there, else the low half of [`Ctx::value_at`].
    fn half_at(&self, w: &Acc<'_>, inst: u32, lane: u32, col: u32) -> Option<u32> {
        match w.op {
            Op::St { seed, form, .. } if w.known && form.pack.is_some() => {
                let (t, reg) = self.st_owner(w, inst, lane, col)?;
                let r = w.regions.iter().find(|r| r.inst == inst)?;
                let half = (col - r.c0) % 2;
                Some(values::st_value(*seed, t, reg) >> (16 * half) & 0xFFFF)
            }
            _ => self.value_at(w, inst, lane, col).map(|v| v & 0xFFFF),
        }
    }

    /// [`Ctx::value_at`], or [`Ctx::half_at`] when `half`.
    fn cell_value(&self, w: &Acc<'_>, inst: u32, lane: u32, col: u32, half: bool) -> Option<u32> {
        if half {
            self.half_at(w, inst, lane, col)
        } else {
            self.value_at(w, inst, lane, col)
        }
    }

    /// The (thread, register) of the st `w` that wrote (lane, col) of allocation `inst`
    /// (`ldst::owner`; the region that covers the cell is the `.16x32bx2` half).
    fn st_owner(&self, w: &Acc<'_>, inst: u32, lane: u32, col: u32) -> Option<(u32, u32)> {
        let Op::St { form, .. } = w.op else {
            return None;
        };
        let (half, r) = w
            .regions
            .iter()
            .enumerate()
            .find(|(_, r)| r.inst == inst && r.covers(lane, col))?;
        let co = col - r.c0;
        let ucol = if form.pack.is_some() { co / 2 } else { co };
        Some(ldst::owner(
            form.shape,
            ldst::Cell {
                half,
                lane: lane - r.l0,
                col: ucol,
            },
        ))
    }

    /// The value an exact MMA `w` wrote at (row, col) of its D: `None` if unknown.
    fn mma_value(&self, w: &Acc<'_>, row: u32, col: u32) -> Option<u32> {
        let m = w.mma.as_ref()?;
        if m.ashift && row == 0 {
            return None;
        }
        let old = m.old.as_ref().and_then(|o| self.old_cell(w, o, row, col));
        if m.dol
            .get((row / 32) as usize)
            .is_some_and(|x| x >> (row % 32) & 1 == 1)
        {
            // Not written: the lane keeps its old value, known only when enable-input-d read it.
            return old;
        }
        m.p.cell(row, col, old)
    }

    /// The old value of D cell (row, col) the MMA `x` read (enable-input-d): the cell's
    /// only candidate when it has one value, as [`Ctx::cells`] gives it at `x`'s position.
    fn old_cell(&self, x: &Acc<'_>, o: &OldD, row: u32, col: u32) -> Option<u32> {
        if row >= 128 || col >= o.n {
            return None;
        }
        let idx = (row * o.n + col) as usize;
        if let Some(&v) = o.memo.borrow().get(idx)
            && v != OldD::UNREAD
        {
            return (v != OldD::UNKNOWN).then_some(v as u32);
        }
        let (l, c, inst) = (row, o.c0 + col, o.inst);
        if let Some(wi) = o.single {
            let v = self.value_as_of(&self.accs[wi], inst, l, c, x.pos);
            let mut memo = o.memo.borrow_mut();
            if memo.is_empty() {
                memo.resize(128 * o.n as usize, OldD::UNREAD);
            }
            memo[idx] = v.map_or(OldD::UNKNOWN, u64::from);
            return v;
        }
        let covers = |wi: usize| {
            self.accs[wi]
                .regions
                .iter()
                .any(|r| r.write && r.inst == inst && r.covers(l, c))
        };
        let k = o.writers.len();
        let mut val: Option<Option<u32>> = None;
        let mut add = |v: Option<u32>| match val {
            None => val = Some(v),
            Some(Some(p)) if v == Some(p) => {}
            _ => val = Some(None),
        };
        let mut covered = false;
        for &a in &o.before {
            if !covers(o.writers[a]) {
                continue;
            }
            covered = true;
            let maximal = !o
                .before
                .iter()
                .any(|&b| b != a && o.ord[a * k + b] && covers(o.writers[b]));
            if maximal {
                add(self.value_as_of(&self.accs[o.writers[a]], inst, l, c, x.pos));
            }
        }
        if !covered {
            // Never written in this allocation (OQ-9): unspecified.
            add(None);
        }
        for &wi in &o.race {
            if covers(wi) {
                add(self.value_as_of(&self.accs[wi], inst, l, c, x.pos));
            }
        }
        let v = val.flatten();
        let mut memo = o.memo.borrow_mut();
        if memo.is_empty() {
            memo.resize(128 * o.n as usize, OldD::UNREAD);
        }
        memo[idx] = v.map_or(OldD::UNKNOWN, u64::from);
        v
    }

    /// If the read planned in `sc` has one write ordered before it, covering the whole
    /// rectangle, with known st values, and nothing racing: its values, lane-major.
    fn single_st(
        &self,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &Scratch,
        adds: &mut Vec<u32>,
    ) -> Option<Vec<u32>> {
        if !sc.race.is_empty() || sc.before.len() != 1 {
            return None;
        }
        let w = &self.accs[sc.writers[sc.before[0]]];
        let Op::St { seed, .. } = w.op else {
            return None;
        };
        let wr = w.regions.iter().find(|x| x.inst == inst)?;
        if !(w.known
            && st_plain(w.op)
            && wr.write
            && wr.l0 <= l0
            && wr.l1 >= l1
            && wr.c0 <= c0
            && wr.c1 >= c1)
        {
            return None;
        }
        // `st_value(seed, lane, reg)` is `lane * mul + add(reg)` (wrapping; the coefficients
        // the printer emits, `values::st_coeffs`): one coefficient pair per column, then one
        // multiply-add per word, written in place.
        let (mul, _) = values::st_coeffs(*seed, 0);
        adds.clear();
        adds.extend((c0..c1).map(|c| values::st_coeffs(*seed, c - wr.c0).1));
        let n = (c1 - c0) as usize;
        let mut v = vec![0u32; (l1 - l0) as usize * n];
        let adds = &adds[..n];
        let lanes = (l0 - wr.l0)..(l1 - wr.l0);
        match n {
            1 => fill_rows::<1>(&mut v, adds, lanes, mul),
            2 => fill_rows::<2>(&mut v, adds, lanes, mul),
            4 => fill_rows::<4>(&mut v, adds, lanes, mul),
            _ => fill_rows_any(&mut v, adds, lanes, mul),
        }
        debug_assert!((l0..l1).all(|l| {
            (c0..c1).all(|c| {
                v[(l - l0) as usize * n + (c - c0) as usize]
                    == values::st_value(*seed, l - wr.l0, c - wr.c0)
            })
        }));
        Some(v)
    }

    /// If the read planned in `sc` has one write ordered before it, an exact MMA covering the
    /// whole rectangle (32 lanes), nothing racing, and the MMA's value is known at every cell
    /// of the lanes in `mask`: the words of an ld record, lane-major (0 for lanes outside
    /// `mask`), as [`Ctx::cells`] and [`ld_expect`] give them.
    /// If the read planned in `sc` has one write ordered before it, covering the whole
    /// rectangle, nothing racing, and every value known (a st of any shape, a cp, a shift: no
    /// MMA, see [`Ctx::single_mma`]): the values, lane-major (the low halves when `half`).
    /// What [`Ctx::cells`] gives then, without a candidate list per cell.
    fn single_known(
        &self,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &Scratch,
        half: bool,
    ) -> Option<Vec<u32>> {
        if !sc.race.is_empty() || sc.before.len() != 1 {
            return None;
        }
        let w = &self.accs[sc.writers[sc.before[0]]];
        if matches!(w.op, Op::Mma(_)) || !self.may_know(w) {
            return None;
        }
        let full = w.regions.iter().any(|x| {
            x.write && x.inst == inst && x.l0 <= l0 && x.l1 >= l1 && x.c0 <= c0 && x.c1 >= c1
        });
        if !full {
            return None;
        }
        let width = c1 - c0;
        if let Op::St { seed, form, .. } = w.op {
            // Cell by cell, inline: the (thread, register) that wrote it (`ldst::owner`) and
            // its `st_value`.
            let unpack = form.pack.is_some();
            if unpack && !half {
                // The upper halves are not shown (OQ-10).
                return None;
            }
            let (mul, _) = values::st_coeffs(*seed, 0);
            let regions = [w.regions.r[0], w.regions.r[1]];
            let mut v = Vec::with_capacity(((l1 - l0) * width) as usize);
            for l in l0..l1 {
                for c in c0..c1 {
                    let (h, r) = regions.iter().enumerate().find_map(|(h, r)| {
                        r.filter(|r| r.inst == inst && r.covers(l, c))
                            .map(|r| (h, r))
                    })?;
                    let co = c - r.c0;
                    let cell = ldst::Cell {
                        half: h,
                        lane: l - r.l0,
                        col: if unpack { co / 2 } else { co },
                    };
                    let (t, reg) = ldst::owner(form.shape, cell);
                    let val = t.wrapping_mul(mul).wrapping_add(values::st_add(*seed, reg));
                    v.push(if unpack {
                        val >> (16 * (co % 2)) & 0xFFFF
                    } else if half {
                        val & 0xFFFF
                    } else {
                        val
                    });
                }
            }
            return Some(v);
        }
        let mut v = Vec::with_capacity(((l1 - l0) * width) as usize);
        for l in l0..l1 {
            for c in c0..c1 {
                v.push(self.cell_value(w, inst, l, c, half)?);
            }
        }
        Some(v)
    }

    fn single_mma(
        &self,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &Scratch,
        mask: u32,
    ) -> Option<Vec<u32>> {
        if !sc.race.is_empty() || sc.before.len() != 1 || l1 - l0 != 32 {
            return None;
        }
        let w = &self.accs[sc.writers[sc.before[0]]];
        if !matches!(w.op, Op::Mma(_)) || w.mma.is_none() {
            return None;
        }
        let full = w.regions.iter().any(|x| {
            x.write && x.inst == inst && x.l0 <= l0 && x.l1 >= l1 && x.c0 <= c0 && x.c1 >= c1
        });
        let r = w.regions.iter().find(|r| r.inst == inst)?;
        if !full {
            return None;
        }
        let n = (c1 - c0) as usize;
        let mut v = vec![0u32; 32 * n];
        for (t, row) in v.chunks_exact_mut(n.max(1)).enumerate() {
            if mask >> t & 1 == 0 {
                continue;
            }
            let l = l0 + t as u32;
            self.mma_row(w, l - r.l0, c0 - r.c0..c1 - r.c0, &mut row[..n])?;
        }
        Some(v)
    }

    /// [`Ctx::mma_value`] of the cells (`row`, c) of the exact MMA `w`'s D for `c` in `cols`,
    /// into `out`; `None` as soon as one of them is `None` (callers then drop the row). A row
    /// at a time: the row of A and the columns of B fetched once, and the old D row (MMA-ENABLE-D)
    /// read once ([`Ctx::old_row`]).
    fn mma_row(
        &self,
        w: &Acc<'_>,
        row: u32,
        cols: std::ops::Range<u32>,
        out: &mut [u32],
    ) -> Option<()> {
        let m = w.mma.as_ref()?;
        if m.ashift && row == 0 {
            return None;
        }
        // MMA-DOL-SEM: a lane whose bit is set keeps its old value (known only when
        // enable-input-d read it).
        let kept = m
            .dol
            .get((row / 32) as usize)
            .is_some_and(|x| x >> (row % 32) & 1 == 1);
        let Some(o) = &m.old else {
            return if kept {
                None
            } else {
                m.p.row_cells(row, cols, out)
            };
        };
        const MAX: usize = 128;
        if cols.len() > MAX {
            for (x, c) in out.iter_mut().zip(cols) {
                *x = self.mma_value(w, row, c)?;
            }
            return Some(());
        }
        if kept {
            return self.old_row(w, o, row, cols, out);
        }
        let mut old = [0u32; MAX];
        let old = &mut old[..cols.len()];
        self.old_row(w, o, row, cols.clone(), old)?;
        m.p.row_cells_old(row, cols, Some(old), out)
    }

    /// [`Ctx::old_cell`] of the cells (`row`, c) for `c` in `cols`, into `out`; `None` as
    /// soon as one of them is `None`. With one write before the MMA covering its old D
    /// (`OldD::single`), that write's row is read at once (an MMA's through
    /// [`Ctx::mma_row`]) and kept in the memo; otherwise cell by cell.
    fn old_row(
        &self,
        x: &Acc<'_>,
        o: &OldD,
        row: u32,
        cols: std::ops::Range<u32>,
        out: &mut [u32],
    ) -> Option<()> {
        let by_cell = |out: &mut [u32], cols: std::ops::Range<u32>| {
            for (v, c) in out.iter_mut().zip(cols) {
                *v = self.old_cell(x, o, row, c)?;
            }
            Some(())
        };
        let (Some(wi), true) = (o.single, row < 128 && cols.end <= o.n) else {
            return by_cell(out, cols);
        };
        let at = (row * o.n) as usize;
        let span = at + cols.start as usize..at + cols.end as usize;
        if let Some(known) = o.memo.borrow().get(span.clone())
            && known.iter().all(|&v| v < OldD::UNKNOWN)
        {
            for (v, &k) in out.iter_mut().zip(known) {
                *v = k as u32;
            }
            return Some(());
        }
        // What `value_as_of` gives each cell (lane `row`, column `o.c0 + c`) of write `wi`.
        let w = &self.accs[wi];
        let r = w.regions.iter().find(|r| r.inst == o.inst)?;
        match w.op {
            Op::St { .. } if !st_plain(w.op) => return by_cell(out, cols),
            Op::St { seed, .. } if w.known => {
                for (v, c) in out.iter_mut().zip(cols) {
                    *v = values::st_value(*seed, row - r.l0, o.c0 + c - r.c0);
                }
            }
            Op::Mma(_) if w.pos < x.pos => {
                let (s, e) = (o.c0 + cols.start - r.c0, o.c0 + cols.end - r.c0);
                self.mma_row(w, row - r.l0, s..e, out)?;
            }
            _ => return None,
        }
        let mut memo = o.memo.borrow_mut();
        if memo.is_empty() {
            memo.resize(128 * o.n as usize, OldD::UNREAD);
        }
        for (m, &v) in memo[span].iter_mut().zip(out.iter()) {
            *m = u64::from(v);
        }
        Some(())
    }

    /// The writes a read must consider, into `sc`: `writers`, the `ord` matrix between them,
    /// those ordered `before` it (indexes into `writers`) and those that `race` with it
    /// (access indexes, with their `race_rule`).
    fn plan(&self, ri: usize, inst: u32, (l0, l1, c0, c1): (u32, u32, u32, u32), sc: &mut Scratch) {
        let r = &self.accs[ri];
        let full = |x: &Region| {
            x.write && x.inst == inst && x.l0 <= l0 && x.l1 >= l1 && x.c0 <= c0 && x.c1 >= c1
        };
        if sc.seen.len() < self.accs.len() {
            sc.seen.resize(self.accs.len(), 0);
        }
        sc.epoch = sc.epoch.wrapping_add(1);
        if sc.epoch == 0 {
            sc.seen.fill(0);
            sc.epoch = 1;
        }
        let epoch = sc.epoch;
        sc.seen[ri] = epoch;
        // For an ld, "ordered after R" is monotone along each warp's program order (R's
        // completion is known to a later issue of a warp once it is known to an earlier one;
        // an ld is in no pipeline), so the writes after R are cut by a binary search.
        let monotone = r.kind == Kind::Ld;
        // Latest first within each warp's writes: skip writes ordered after R, and writes
        // ordered before a kept write that is before R and covers what they wrote of R's cells
        // (dominated: never the last). Once a st is dominated by a same-warp write covering all
        // of R, every older st of that warp is too (waits are monotone): stop there.
        sc.writers.clear();
        sc.kept_before.clear();
        let (mut row, mut row_st) = (
            std::mem::take(&mut sc.slot),
            std::mem::take(&mut sc.slot_st),
        );
        let mut cuts = std::mem::take(&mut sc.col_cuts);
        for lb in l0 / 32..l1.div_ceil(32) {
            let rowi = Self::row_of(inst, lb) as usize;
            // Columns between two edges of the row's writes have the same writes: once a
            // column left every write of its slot seen (no cut below), the next columns of the
            // span find nothing new and only count their work.
            cuts.clear();
            cuts.extend([c0, c1]);
            self.by_col.edges(rowi, (c0, c1), &mut cuts);
            cuts.sort_unstable();
            cuts.dedup();
            let mut span = 0;
            let mut col = c0;
            while col < c1 {
                while cuts[span + 1] <= col {
                    span += 1;
                }
                let span_end = cuts[span + 1];
                self.by_col
                    .slot(rowi, col, &self.accs, &mut row, &mut row_st);
                let work0 = self.work.get();
                let mut cut_any = false;
                let mut s0 = 0;
                while s0 < row.len() {
                    // One warp's writes to this slot, in program order.
                    let seg_g = self.accs[row[s0] as usize].g;
                    let mut s1 = s0 + 1;
                    while s1 < row.len() && self.accs[row[s1] as usize].g == seg_g {
                        s1 += 1;
                    }
                    let (seg, seg_st) = (&row[s0..s1], &row_st[s0..s1]);
                    s0 = s1;
                    let end = if monotone {
                        seg.partition_point(|&wi| !self.ordered(r, &self.accs[wi as usize]))
                    } else {
                        seg.len()
                    };
                    self.work.set(self.work.get() + end as u64 + 1);
                    for p in (0..end).rev() {
                        let wi = seg[p] as usize;
                        if sc.seen[wi] == epoch {
                            continue;
                        }
                        sc.seen[wi] = epoch;
                        let w = &self.accs[wi];
                        // The write's region that meets the read (a `.16x32bx2` st has two).
                        let meets = |wr: &&Region| {
                            wr.write
                                && wr.inst == inst
                                && wr.l0.max(l0) < wr.l1.min(l1)
                                && wr.c0.max(c0) < wr.c1.min(c1)
                        };
                        let Some(wr) = w.regions.iter().find(meets) else {
                            continue;
                        };
                        let (il0, il1, ic0, ic1) =
                            (wr.l0.max(l0), wr.l1.min(l1), wr.c0.max(c0), wr.c1.min(c1));
                        if !monotone && self.ordered(r, w) {
                            continue;
                        }
                        let mut dominated = false;
                        let mut cut = false;
                        for (&k, &b) in sc.writers.iter().zip(&sc.kept_before) {
                            let kk = &self.accs[k];
                            let covers = kk.regions.iter().any(|x| {
                                x.write
                                    && x.inst == inst
                                    && x.l0 <= il0
                                    && x.l1 >= il1
                                    && x.c0 <= ic0
                                    && x.c1 >= ic1
                            });
                            if b && covers && self.ordered(w, kk) {
                                dominated = true;
                                cut = kk.g == seg_g && seg_st[p] && kk.regions.iter().any(full);
                                break;
                            }
                        }
                        if cut {
                            cut_any = true;
                            break;
                        }
                        if dominated {
                            continue;
                        }
                        sc.kept_before.push(self.ordered(w, r));
                        sc.writers.push(wi);
                    }
                }
                if cut_any {
                    col += 1;
                } else {
                    // The rest of the span: the same steps, nothing new.
                    let rest = u64::from(span_end - col - 1);
                    let inc = self.work.get() - work0;
                    self.work.set(self.work.get() + inc * rest);
                    col = span_end;
                }
            }
        }
        sc.col_cuts = cuts;
        sc.slot = row;
        sc.slot_st = row_st;
        // Direct order with R, then closed transitively through the other writers (a write
        // ordered before a write that is ordered before R is before R, and so on).
        let writers = &sc.writers;
        let k = writers.len();
        let ord = &mut sc.ord;
        ord.clear();
        ord.resize(k * k, false);
        for a in 0..k {
            for b in 0..k {
                if a != b {
                    ord[a * k + b] = self.ordered(&self.accs[writers[a]], &self.accs[writers[b]]);
                }
            }
        }
        for m in 0..k {
            for a in 0..k {
                if ord[a * k + m] {
                    for b in 0..k {
                        if ord[m * k + b] {
                            ord[a * k + b] = true;
                        }
                    }
                }
            }
        }
        sc.is_before.clear();
        sc.is_before.extend(sc.kept_before.iter().copied());
        sc.is_after.clear();
        sc.is_after
            .extend(writers.iter().map(|&wi| self.ordered(r, &self.accs[wi])));
        for a in 0..k {
            for b in 0..k {
                if ord[a * k + b] && sc.is_before[b] {
                    sc.is_before[a] = true;
                }
                if ord[b * k + a] && sc.is_after[b] {
                    sc.is_after[a] = true;
                }
            }
        }
        sc.before.clear();
        sc.before.extend((0..k).filter(|&a| sc.is_before[a]));
        sc.race.clear();
        sc.race.extend(
            (0..k)
                .filter(|&a| !sc.is_before[a] && !sc.is_after[a])
                .map(|a| writers[a]),
        );
        sc.race_rule.clear();
        sc.race_rule
            .extend(sc.race.iter().map(|&wi| self.race_rule(&self.accs[wi], r)));
    }

    /// The candidate values of every cell of a read planned in `sc` ([`Ctx::plan`]),
    /// lane-major into `out`, and the rules its races break. When every cell is
    /// `Unspecified` for want of a known candidate, `out` is left empty and `sc.unknown` set.
    fn cells(
        &self,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &mut Scratch,
        out: &mut Vec<WordExpect>,
    ) -> Races {
        self.cells_or_races(inst, (l0, l1, c0, c1), sc, Some(out), false)
    }

    /// [`Ctx::cells_or_races`] of the cells' low halves ([`Ctx::half_at`]) when `half`.
    fn cells_half(
        &self,
        inst: u32,
        rect: (u32, u32, u32, u32),
        sc: &mut Scratch,
        out: &mut Vec<WordExpect>,
        half: bool,
    ) -> Races {
        self.cells_or_races(inst, rect, sc, Some(out), half)
    }

    /// [`Ctx::cells`]; with `out` `None`, only the races (no value is computed); with
    /// `half`, the candidates are the cells' low 16 bits ([`Ctx::half_at`]).
    fn cells_or_races(
        &self,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &mut Scratch,
        mut out: Option<&mut Vec<WordExpect>>,
        half: bool,
    ) -> Races {
        if let Some(out) = out.as_deref_mut() {
            out.clear();
        }
        sc.unknown = false;
        let writers = &sc.writers;
        let k = writers.len();
        let ord = &sc.ord;
        let nb = sc.before.len();
        let before = &sc.before;
        let covers = |wi: usize, l: u32, c: u32| {
            self.accs[wi]
                .regions
                .iter()
                .any(|x| x.write && x.inst == inst && x.covers(l, c))
        };
        self.work.set(
            self.work.get() + u64::from((l1 - l0) * (c1 - c0)) * (k as u64 + 1) + (k * k) as u64,
        );
        let mut races = Races::default();
        // Fast path: one write ordered before the read, covering all of it, nothing racing:
        // every cell's only candidate is that write's value (what the loop below gives).
        if sc.race.is_empty()
            && let [b] = before[..]
        {
            let w = &self.accs[writers[b]];
            let full = w.regions.iter().any(|x| {
                x.write && x.inst == inst && x.l0 <= l0 && x.l1 >= l1 && x.c0 <= c0 && x.c1 >= c1
            });
            if full {
                if let Some(out) = out {
                    if self.may_know(w) {
                        out.reserve(((l1 - l0) * (c1 - c0)) as usize);
                        self.values_into(w, inst, (l0, l1, c0, c1), out, half);
                    } else {
                        // `values_into` would give `Unspecified` everywhere.
                        sc.unknown = true;
                    }
                }
                return races;
            }
        }
        // The read's rectangle cut into blocks along every edge of the regions of the writes
        // it considers: within a block, every cell is covered by the same writes, so the
        // maximal ones, the races and the rules are the same; only the values differ.
        let edges = |lo: u32, hi: u32, pick: fn(&Region) -> (u32, u32), v: &mut Vec<u32>| {
            v.clear();
            v.push(lo);
            v.push(hi);
            let ws = before
                .iter()
                .map(|&a| writers[a])
                .chain(sc.race.iter().copied());
            for wi in ws {
                for x in self.accs[wi].regions.iter() {
                    if x.write && x.inst == inst {
                        let (a, b) = pick(x);
                        v.extend([a.clamp(lo, hi), b.clamp(lo, hi)]);
                    }
                }
            }
            v.sort_unstable();
            v.dedup();
        };
        let (mut le, mut ce) = (
            std::mem::take(&mut sc.lane_edges),
            std::mem::take(&mut sc.col_edges),
        );
        edges(l0, l1, |x| (x.l0, x.l1), &mut le);
        edges(c0, c1, |x| (x.c0, x.c1), &mut ce);
        let width = (c1 - c0) as usize;
        // `out` is filled with `Unspecified` when the first block with known candidates is
        // met (a block without keeps it); none met: every cell is unspecified.
        let mut filled = false;
        for lw in le.windows(2) {
            let (la, lb) = (lw[0], lw[1]);
            for cw in ce.windows(2) {
                let (ca, cb) = (cw[0], cw[1]);
                // The candidates of the block's first cell stand for every cell of it.
                let (l, c) = (la, ca);
                sc.cov.clear();
                sc.cov
                    .extend((0..nb).filter(|&a| covers(writers[before[a]], l, c)));
                sc.block.clear();
                let mut maximal = 0;
                for &a in &sc.cov {
                    if !sc
                        .cov
                        .iter()
                        .any(|&b| b != a && ord[before[a] * k + before[b]])
                    {
                        maximal += 1;
                        sc.block.push(Some(writers[before[a]]));
                    }
                }
                // Two unordered writes both before R: they race with each other
                // (MCM-ASYNC-UNORDERED).
                if maximal > 1 {
                    races.add(RuleId::McmAsyncUnordered);
                }
                if sc.cov.is_empty() {
                    // Never written in this allocation (OQ-9): unspecified.
                    sc.block.push(None);
                }
                for (&wi, &rule) in sc.race.iter().zip(&sc.race_rule) {
                    if covers(wi, l, c) {
                        races.add(rule);
                        sc.block.push(Some(wi));
                    }
                }
                // A candidate whose value is never known makes every cell unspecified
                // (`word_expect`): the block keeps the `Unspecified` it was filled with.
                let Some(out) = out.as_deref_mut() else {
                    continue;
                };
                if sc
                    .block
                    .iter()
                    .any(|w| w.is_none_or(|wi| !self.may_know(&self.accs[wi])))
                {
                    continue;
                }
                if !filled {
                    out.resize((l1 - l0) as usize * width, WordExpect::Unspecified);
                    filled = true;
                }
                for l in la..lb {
                    let row = (l - l0) as usize * width;
                    for c in ca..cb {
                        sc.cands.clear();
                        for &wi in &sc.block {
                            let wi = wi.expect("checked above");
                            sc.cands
                                .push(self.cell_value(&self.accs[wi], inst, l, c, half));
                        }
                        out[row + (c - c0) as usize] = word_expect(&mut sc.cands);
                    }
                }
            }
        }
        sc.lane_edges = le;
        sc.col_edges = ce;
        if out.is_some() && !filled {
            sc.unknown = true;
        }
        races
    }

    /// Whether `value_at` may know a value `w` wrote (false: it never does).
    fn may_know(&self, w: &Acc<'_>) -> bool {
        match w.op {
            Op::St { .. } => w.known,
            Op::Mma(_) => w.mma.is_some(),
            Op::Cp { .. } => w.cp.is_some(),
            Op::Shift { .. } => w.shifted.is_some(),
            _ => false,
        }
    }

    /// The values `w` wrote over the rectangle `(l0, l1, c0, c1)` of allocation `inst`,
    /// lane-major into `out` (`Unspecified` where unknown): `value_at` cell by cell.
    fn values_into(
        &self,
        w: &Acc<'_>,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        out: &mut Vec<WordExpect>,
        half: bool,
    ) {
        let word = |v: Option<u32>| v.map_or(WordExpect::Unspecified, WordExpect::Exact);
        let r = w.regions.iter().find(|r| r.inst == inst);
        match (w.op, r) {
            (Op::St { .. }, Some(_)) if w.known && (half || !st_plain(w.op)) => {
                for l in l0..l1 {
                    for c in c0..c1 {
                        out.push(word(self.cell_value(w, inst, l, c, half)));
                    }
                }
            }
            (Op::Mma(_), Some(r)) if half && w.mma.is_some() => {
                for l in l0..l1 {
                    for c in c0..c1 {
                        out.push(word(
                            self.mma_value(w, l - r.l0, c - r.c0).map(|v| v & 0xFFFF),
                        ));
                    }
                }
            }
            (Op::St { seed, .. }, Some(r)) if w.known => {
                for l in l0..l1 {
                    for c in c0..c1 {
                        out.push(WordExpect::Exact(values::st_value(
                            *seed,
                            l - r.l0,
                            c - r.c0,
                        )));
                    }
                }
            }
            (Op::Mma(_), Some(r)) if w.mma.is_some() => {
                for l in l0..l1 {
                    for c in c0..c1 {
                        out.push(word(self.mma_value(w, l - r.l0, c - r.c0)));
                    }
                }
            }
            // cp and shift: cell by cell.
            (Op::Cp { .. } | Op::Shift { .. }, Some(_)) if self.may_know(w) => {
                for l in l0..l1 {
                    for c in c0..c1 {
                        out.push(word(self.cell_value(w, inst, l, c, half)));
                    }
                }
            }
            _ => out.resize(
                out.len() + ((l1 - l0) * (c1 - c0)) as usize,
                WordExpect::Unspecified,
            ),
        }
    }

    /// The most specific rule of reference §6 a write `w` racing with the read `r` breaks
    /// (neither is ordered before the other):
    /// - an earlier st of the reader's own warp with no `wait::st` between: MCM-ST-BEFORE-USE
    ///   (§9.7.16.6.4.2);
    /// - a later write of the reader's own warp with no `wait::ld` between: MCM-LD-WAR
    ///   (§9.7.16.6.4.5);
    /// - a write of another warp whose completion is known to the reader's thread, but not at
    ///   its issue (the consumer lacks `fence::after_thread_sync`), or whose issue is
    ///   synchronized with the reader without the fences: MCM-XTHREAD (§9.7.16.6.3-4);
    /// - a write of another warp synchronized through the fences before its completion
    ///   (no `wait::st` / commit + mbarrier before the producer's fence and sync):
    ///   MCM-XTHREAD-NONPIPE (§9.7.16.6.4.4);
    /// - otherwise MCM-ASYNC-UNORDERED (§9.7.16.6.1-2).
    fn race_rule(&self, w: &Acc<'_>, r: &Acc<'_>) -> RuleId {
        if w.g == r.g {
            return match (w.kind, w.i < r.i, r.kind) {
                (Kind::St, true, _) => RuleId::McmStBeforeUse,
                (_, false, Kind::Ld) => RuleId::McmLdWar,
                _ => RuleId::McmAsyncUnordered,
            };
        }
        if self.done_before_event(w, r.g, r.i) {
            return RuleId::McmXthread;
        }
        // The completion witness (wait or commit) happens before R, without the fence pair.
        let witnessed = match w.kind {
            Kind::Ld | Kind::St => w.wait.is_some_and(|wi| self.c.hb(w.g, wi, r.g, r.i)),
            _ => false,
        };
        if witnessed {
            return RuleId::McmXthread;
        }
        if w.pfence
            .is_some_and(|fi| self.c.issue_knows(r.g, r.i, w.g, fi as u32))
        {
            return RuleId::McmXthreadNonpipe;
        }
        if self.c.hb(w.g, w.i, r.g, r.i) {
            return RuleId::McmXthread;
        }
        RuleId::McmAsyncUnordered
    }

    /// The data of a shared-memory region at the MMA issue (g, i), if one fill is ordered
    /// before it through a proxy fence (MCM-PROXY) and none races or follows before the MMA
    /// completes (MMA-SRC-STABLE).
    fn region_data(&self, acc: &Acc<'_>, region: u8) -> Option<RegionData> {
        let bytes = *self.p.smem.regions.get(usize::from(region))?;
        let cta = self.cta(acc.g);
        let (g, i) = (acc.g, acc.i);
        let mut best: Option<(usize, usize, u32, FillElem, u32)> = None;
        let mut proxies = Vec::new();
        for (h, evs) in self.u.warps.iter().enumerate() {
            if self.cta(h) != cta {
                continue;
            }
            self.work.set(self.work.get() + self.c.reached[h] as u64);
            for (j, e) in evs.iter().enumerate().take(self.c.reached[h]) {
                if !matches!(e.kind, EvKind::Fill | EvKind::FenceProxyAsync) {
                    continue;
                }
                match e.stmt {
                    Stmt::Fill {
                        region: r,
                        seed,
                        elem,
                    } if *r == region => {
                        if self.c.hb(h, j, g, i) {
                            if best.is_some_and(|(bg, bj, ..)| !self.c.hb(bg, bj, h, j)) {
                                if !best.is_some_and(|(bg, bj, ..)| self.c.hb(h, j, bg, bj)) {
                                    return None;
                                }
                            } else {
                                best = Some((h, j, *seed, *elem, e.mask));
                            }
                        } else if !self.done_before_event(acc, h, j) {
                            return None;
                        }
                    }
                    Stmt::FenceProxyAsync => proxies.push((h, j)),
                    _ => {}
                }
            }
        }
        let (fg, fj, seed, elem, mask) = best?;
        let fenced = proxies
            .iter()
            .any(|&(h, j)| self.c.hb(fg, fj, h, j) && self.c.hb(h, j, g, i));
        (mask == u32::MAX && fenced).then_some(RegionData { elem, seed, bytes })
    }

    /// Whether a `wait` for `op` of a warp other than `x`'s happens before event `(g, i)`
    /// without happening before `x`'s issue: the program seems to count on a wait that does
    /// not cover `x` (WAIT-SCOPE, reference §3.4: a wait covers the executing thread's own
    /// ld/st only). Used only to cite the rule beside the race `x` is already in.
    fn waited_elsewhere(&self, x: &Acc<'_>, op: WaitOp, g: usize, i: usize) -> bool {
        self.u.warps.iter().enumerate().any(|(h, evs)| {
            h != x.g
                && evs.iter().enumerate().any(|(j, e)| {
                    e.kind
                        == match op {
                            WaitOp::Ld => EvKind::WaitLd,
                            WaitOp::St => EvKind::WaitSt,
                        }
                        && self.c.hb(h, j, g, i)
                        && !self.c.hb(h, j, x.g, x.i)
                })
        })
    }

    /// Notes the open questions that leave the cells of the read planned last in `sc`
    /// unspecified when nothing races: cells no write is ordered before (OQ-9), and writers
    /// whose values the oracle does not compute (an MMA: OQ-19 numerics, OQ-22 layouts; a cp
    /// with decompression or an unknown source: OQ-29; the upper half of an unpacked st:
    /// OQ-10; a shift whose rows were not known).
    fn note_open(&self, sc: &Scratch, f: &mut Findings) {
        if sc.before.is_empty() {
            f.note("OQ-9: an ld reads TMEM cells that no write is ordered before (a fresh allocation): unspecified");
        }
        for &a in &sc.before {
            // `sc` may hold the plan of an earlier read where a fast path did not plan this
            // one: a note is only a diagnostic, so an index that does not fit is skipped.
            let Some(w) = sc.writers.get(a).and_then(|&wi| self.accs.get(wi)) else {
                continue;
            };
            let why = match w.op {
                Op::Mma(_) if w.mma.is_none() => {
                    "OQ-19, OQ-22: an ld reads MMA results the oracle does not compute (kind, shape, cta_group::2, sparse, block scale, or data that would round): unspecified"
                }
                Op::Cp { .. } if w.cp.is_none() => {
                    "OQ-29: an ld reads a cp's cells whose values the oracle does not compute (decompression, a swizzled or unknown source): unspecified"
                }
                Op::Shift { .. } => {
                    "OQ-16: an ld reads rows of a shift that are not stated (row 0) or were not known: unspecified"
                }
                Op::St { form, .. } if form.pack.is_some() => {
                    "OQ-10: an ld reads the upper half of a cell an .unpack::16b st wrote: unspecified"
                }
                _ => continue,
            };
            f.note(why);
        }
    }

    /// The record of an ld of any shape, with `.pack::16b` or `.red` (§9.7.16.8.3): the
    /// candidates of the cells of each of its regions ([`Ctx::cells`]; their low halves for
    /// pack), then each thread's registers from its cells ([`ldst::cell`]), two cells per
    /// register for pack ([`pack_words`]), and the `redval` word last for red
    /// ([`ldst::reduce`]). Also the races of its cells.
    fn ld_shaped(
        &self,
        k: usize,
        form: &LdForm,
        n: u32,
        mask: u32,
        sc: &mut Scratch,
        f: &mut Findings,
    ) -> (SiteExpect, Races) {
        let x = &self.accs[k];
        let pack = form.pack.is_some();
        if let Some(r) = self.ld_shaped_known(k, form, n, mask, sc) {
            return r;
        }
        let mut races = Races::default();
        let mut cells: [Vec<WordExpect>; 2] = Default::default();
        for (h, r) in x.regions.iter().enumerate() {
            let rect = (r.l0, r.l1, r.c0, r.c1);
            self.plan(k, r.inst, rect, sc);
            races.0 |= self.cells_half(r.inst, rect, sc, &mut cells[h], pack).0;
            // An MMA that wrote (or may have written) these cells read a racing A.
            for &wi in &sc.writers {
                races.0 |= self.accs[wi].in_races.0;
            }
            if sc.unknown {
                cells[h].clear();
                let area = (r.l1 - r.l0) * (r.c1 - r.c0);
                cells[h].resize(area as usize, WordExpect::Unspecified);
            }
        }
        let words = n + u32::from(form.red);
        let mut out = Vec::with_capacity((32 * words) as usize);
        let mut open = false;
        for t in 0..32 {
            let start = out.len();
            for reg in 0..n {
                let c = ldst::cell(form.shape, t, reg);
                let Some(r) = x.regions.r.get(c.half).copied().flatten() else {
                    out.push(WordExpect::Unspecified);
                    continue;
                };
                let width = r.c1 - r.c0;
                let at = |col: u32| {
                    cells[c.half]
                        .get((c.lane * width + col) as usize)
                        .cloned()
                        .unwrap_or(WordExpect::Unspecified)
                };
                out.push(if pack {
                    pack_words(&at(2 * c.col), &at(2 * c.col + 1))
                } else {
                    at(c.col)
                });
            }
            if form.red {
                let regs: Option<Vec<u32>> = out[start..]
                    .iter()
                    .map(|w| match w {
                        WordExpect::Exact(v) => Some(*v),
                        _ => None,
                    })
                    .collect();
                let red = regs.and_then(|v| {
                    let r = ldst::reduce(form, &v);
                    open |= r.is_none() && mask >> t & 1 == 1;
                    r
                });
                out.push(red.map_or(WordExpect::Unspecified, WordExpect::Exact));
            }
        }
        if open {
            f.note("OQ-13: an ld.red result is left open (an f32 NaN input without .NaN, or +0 against -0)");
        }
        (ld_expect(&out, words as usize, mask), races)
    }

    /// [`Ctx::ld_shaped`] where each region of the ld has one known write before it and
    /// nothing racing ([`Ctx::single_known`]), and the `.red` result is stated: the registers
    /// straight from the cells, no candidate lists. `None`: the general path decides.
    fn ld_shaped_known(
        &self,
        k: usize,
        form: &LdForm,
        n: u32,
        mask: u32,
        sc: &mut Scratch,
    ) -> Option<(SiteExpect, Races)> {
        let x = &self.accs[k];
        let pack = form.pack.is_some();
        let mut races = Races::default();
        let mut cells: [Vec<u32>; 2] = Default::default();
        let mut widths = [0u32; 2];
        // The st whose registers this ld reads back one for one (same shape, registers,
        // regions and packing): thread t's register r is that st's (thread t, register r).
        let mut same_st: Option<u32> = None;
        let mut same = true;
        for (h, r) in x.regions.iter().enumerate() {
            let rect = (r.l0, r.l1, r.c0, r.c1);
            self.plan(k, r.inst, rect, sc);
            if same
                && sc.race.is_empty()
                && let [b] = sc.before[..]
                && let w = &self.accs[sc.writers[b]]
                && let Op::St {
                    form: sf,
                    nregs,
                    seed,
                    ..
                } = w.op
                && sf.shape == form.shape
                && u32::from(*nregs) == n
                && sf.pack.is_some() == pack
                && w.regions.len() == x.regions.len()
                && w.regions.iter().zip(x.regions.iter()).all(|(a, b)| {
                    (a.inst, a.l0, a.l1, a.c0, a.c1) == (b.inst, b.l0, b.l1, b.c0, b.c1)
                })
                && same_st.is_none_or(|s| s == *seed)
            {
                same_st = Some(*seed);
                let kk = sc.writers.len() as u64;
                let area = u64::from((r.l1 - r.l0) * (r.c1 - r.c0));
                self.work.set(self.work.get() + area * (kk + 1) + kk * kk);
                for &wi in &sc.writers {
                    races.0 |= self.accs[wi].in_races.0;
                }
                continue;
            }
            same = false;
            cells[h] = self.single_known(r.inst, rect, sc, pack)?;
            widths[h] = r.c1 - r.c0;
            let kk = sc.writers.len() as u64;
            let area = u64::from((r.l1 - r.l0) * (r.c1 - r.c0));
            self.work.set(self.work.get() + area * (kk + 1) + kk * kk);
            for &wi in &sc.writers {
                races.0 |= self.accs[wi].in_races.0;
            }
        }
        let words = n + u32::from(form.red);
        let mut data = vec![0u32; (32 * words) as usize];
        let read_back = same.then_some(same_st).flatten();
        if !same && same_st.is_some() {
            // A region read back one for one, another not: the cells of the first are
            // needed too.
            return None;
        }
        for (t, row) in data.chunks_exact_mut(words as usize).enumerate() {
            let t = t as u32;
            if mask >> t & 1 == 0 {
                // Lanes that do not record: 0 (`SiteExpect::Exact`).
                continue;
            }
            if let Some(seed) = read_back {
                for (reg, x) in row[..n as usize].iter_mut().enumerate() {
                    *x = values::st_value(seed, t, reg as u32);
                }
                if form.red {
                    row[n as usize] = ldst::reduce(form, &row[..n as usize])?;
                }
                continue;
            }
            for reg in 0..n {
                let c = ldst::cell(form.shape, t, reg);
                let (cs, w) = (cells.get(c.half)?, widths[c.half]);
                let at = |col: u32| cs.get((c.lane * w + col) as usize).copied();
                row[reg as usize] = if pack {
                    at(2 * c.col)? & 0xFFFF | (at(2 * c.col + 1)? & 0xFFFF) << 16
                } else {
                    at(c.col)?
                };
            }
            if form.red {
                row[n as usize] = ldst::reduce(form, &row[..n as usize])?;
            }
        }
        Some((SiteExpect::Exact { words, data }, races))
    }

    /// Prepares the values an exact MMA writes (computed per cell when read).
    fn mma_values(&mut self, ai: usize, sc: &mut Scratch) {
        // A read from TMEM (§3.7 "[a-tmem]"): the writes it races with (an st not waited and
        // published, MCM-XTHREAD-NONPIPE; the issuer's own st without wait::st,
        // MCM-ST-BEFORE-USE; ...), cited by every ld of what this MMA wrote.
        // Its cells, when every one is known (A's rows: [`mma::tmem_a_row`]).
        let mut a_cells: Option<Vec<u32>> = None;
        if let Some(r) = self.accs[ai].a_read {
            let rect = (r.l0, r.l1, r.c0, r.c1);
            self.plan(ai, r.inst, rect, sc);
            // A's values are read only for an MMA whose result may be exact (the checks
            // below, before the operands): the others need only the races.
            let acc = &self.accs[ai];
            let may_be_exact = match acc.op {
                Op::Mma(m) => {
                    self.opts.figure_layouts
                        && acc.issuer.count_ones() == 1
                        && mma::exact_shape(m).is_some()
                        && acc.regions.first().is_some_and(|d| d.l0 == 0)
                        && !self.poisoned[self.cta(acc.g) as usize]
                }
                _ => false,
            };
            let exact_a = may_be_exact && r.l0 == 0 && r.l1 == 128 && r.c1 == r.c0 + 8;
            let direct = if exact_a {
                self.single_known(r.inst, rect, sc, false)
            } else {
                None
            };
            let mut buf = Vec::new();
            let races = if direct.is_some() || !exact_a {
                self.cells_or_races(r.inst, rect, sc, None, false)
            } else {
                self.cells_or_races(r.inst, rect, sc, Some(&mut buf), false)
            };
            self.accs[ai].in_races = races;
            if direct.is_some() {
                a_cells = direct;
            } else if exact_a && !sc.unknown {
                a_cells = buf
                    .iter()
                    .map(|w| match w {
                        WordExpect::Exact(v) => Some(*v),
                        _ => None,
                    })
                    .collect();
            }
        }
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else { return };
        if !self.opts.figure_layouts
            || acc.issuer.count_ones() != 1
            || mma::exact_shape(m).is_none()
        {
            return;
        }
        let Some(r) = acc.regions.first().copied() else {
            return;
        };
        if r.l0 != 0 || self.poisoned[self.cta(acc.g) as usize] {
            return;
        }
        let n = r.c1 - r.c0;
        let (_, nn) = mma::exact_shape(m).expect("checked");
        if n != nn {
            return;
        }
        let Some(b) = self.region_data(acc, m.b.region) else {
            return;
        };
        let a = match &m.a {
            MmaA::Desc(ad) => self.region_data(acc, ad.region),
            MmaA::Tmem(_) => None,
        };
        let p = match (&m.a, a, a_cells) {
            (MmaA::Desc(_), Some(a), _) => self.prepared_for(m, a, b),
            (MmaA::Tmem(_), _, Some(cells)) => {
                // A from TMEM: row m in lane m (`a_read`), 8 cells per row.
                let d = m.idesc;
                let (signed, neg) = (d >> 7 & 7 == 1, d >> 13 & 1 == 1);
                let mut arow = Vec::with_capacity(128 * 32);
                let ok = cells
                    .chunks_exact(8)
                    .all(|row| mma::tmem_a_row(m.form.kind, signed, neg, row, &mut arow).is_some());
                if m.form.ashift {
                    // `.ashift` (§9.7.16.10.9.1, reference §3.7): A's rows move down by one, so
                    // D row m uses A row m - 1; what row 0 uses is not stated
                    // (`MmaVals::ashift`: D row 0 is unspecified).
                    let kk = arow.len() / 128;
                    arow.copy_within(..127 * kk, kk);
                }
                ok.then(|| mma::prepare_tmem_a(m, arow, &b).map(std::rc::Rc::new))
                    .flatten()
            }
            _ => None,
        };
        let Some(p) = p else {
            return;
        };
        self.finish_mma_values(ai, p, sc);
    }

    /// [`mma::prepare`] of an MMA with A in shared memory, reused for an MMA issued again with
    /// the same operands and data (a loop, a chain accumulating into one D).
    fn prepared_for(
        &mut self,
        m: &'a Mma,
        a: RegionData,
        b: RegionData,
    ) -> Option<std::rc::Rc<mma::Prepared>> {
        // `prepare` depends on these operands and the two regions' data only: an MMA issued
        // again with the same ones (a loop, a chain accumulating into one D) reuses it.
        let same = |(m2, a2, b2): &(&Mma, RegionData, RegionData)| {
            *a2 == a
                && *b2 == b
                && m2.form == m.form
                && m2.a == m.a
                && m2.b == m.b
                && m2.idesc == m.idesc
                && m2.enable_input_d == m.enable_input_d
                && m2.scale_input_d == m.scale_input_d
        };
        match self.prepared.iter().find(|(k, _)| same(k)) {
            Some((_, p)) => p.clone(),
            None => {
                let p = mma::prepare(m, &a, &b).map(std::rc::Rc::new);
                self.prepared.push(((m, a, b), p.clone()));
                p
            }
        }
    }

    /// Records the values an exact MMA writes (`p`; with enable-input-d, the old D cells it
    /// reads, planned now and read on demand).
    fn finish_mma_values(&mut self, ai: usize, p: std::rc::Rc<mma::Prepared>, sc: &mut Scratch) {
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else { return };
        let Some(r) = acc.regions.first().copied() else {
            return;
        };
        let old = if m.enable_input_d {
            // The old D cells: planned now, read on demand (`OldD`); the work is counted as
            // if every cell were read now.
            let rect = (0, 128, r.c0, r.c1);
            self.plan(ai, r.inst, rect, sc);
            let k = sc.writers.len() as u64;
            self.work
                .set(self.work.get() + u64::from(128 * (r.c1 - r.c0)) * (k + 1) + k * k);
            let single = match (&sc.before[..], sc.race.is_empty()) {
                (&[b], true) => {
                    let wi = sc.writers[b];
                    self.accs[wi]
                        .regions
                        .iter()
                        .any(|x| {
                            x.write
                                && x.inst == r.inst
                                && x.l0 == 0
                                && x.l1 >= 128
                                && x.c0 <= r.c0
                                && x.c1 >= r.c1
                        })
                        .then_some(wi)
                }
                _ => None,
            };
            Some(OldD {
                inst: r.inst,
                c0: r.c0,
                n: r.c1 - r.c0,
                single,
                writers: sc.writers.clone(),
                before: sc.before.clone(),
                race: sc.race.clone(),
                ord: sc.ord.clone(),
                memo: std::cell::RefCell::new(Vec::new()),
            })
        } else {
            None
        };
        // MMA-DOL-SEM: a lane whose disable-output-lane bit is set is not written.
        let mut dol = [0u32; 4];
        if let Some(d) = &m.disable_output_lane {
            for (x, y) in dol.iter_mut().zip(d) {
                *x = *y;
            }
        }
        let ashift = m.form.ashift;
        self.accs[ai].mma = Some(Box::new(MmaVals {
            p,
            old,
            dol,
            ashift,
        }));
        self.accs[ai].known = true;
    }
}

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
                    SiteExpect::Same(ObsExpect::Unspecified(vec![RuleId::LdAsync]))
                } else if !simple {
                    let (expect, races) = cx.ld_shaped(k, form, u32::from(*nregs), e.mask, sc, f);
                    rules.extend(races.rules());
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
                        rules.extend(races.rules());
                        if sc.unknown && n > 0 {
                            // What `ld_expect` gives when every cell is unspecified (the
                            // record's lanes are never empty).
                            SiteExpect::Same(ObsExpect::Unspecified(vec![
                                RuleId::McmAsyncUnordered,
                            ]))
                        } else {
                            if sc.unknown {
                                buf.resize(32 * n as usize, WordExpect::Unspecified);
                            }
                            ld_expect(buf, n as usize, e.mask)
                        }
                    }
                };
                if rules.len() == 1 && !matches!(expect, SiteExpect::Exact { .. }) {
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
        WordExpect::Unspecified => None,
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

/// The site expectation of an ld from its cells (lane-major, `n` words per lane).
fn ld_expect(cells: &[WordExpect], n: usize, mask: u32) -> SiteExpect {
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
        return SiteExpect::Same(ObsExpect::Unspecified(vec![RuleId::McmAsyncUnordered]));
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
            ObsExpect::Unspecified(vec![RuleId::McmAsyncUnordered])
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
