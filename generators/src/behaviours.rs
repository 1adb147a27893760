//! The behaviour inventory: one row per behaviour the reference specifies, each citing its
//! PTX ISA section and rule, and [`analyse`], which finds the behaviours a program exercises
//! and the observed words that each of them wrote.
//!
//! A *behaviour* is finer than an instruction form ([`crate::coverage`]): a pipelined pair of
//! reference §4.2 in one thread or across threads, an ld whose registers are read before
//! `wait::ld` (§4.4, last row), a commit that arrives on a peer CTA's mbarrier. A program
//! *exercises* a row when it contains it; it *observes* it through [`Watch`]es: the observation
//! records (ld sites, alloc-address and mbarrier-wait sites) whose words the behaviour wrote, or
//! which hold the result of the operation whose ordering the behaviour decides. The campaign
//! counts a row as observed exactly when a judged case compared at least one watched word
//! against an exact (or one-of) oracle expectation.
//!
//! Footprints (which TMEM cells an operation writes) are the generator's own reading of
//! reference §2.6 (ld/st and cp shapes), §3.6 (shift: 32 rows of 256 bits) and §2.7 (MMA D:
//! M rows per CTA, at most 128, by N 32-bit columns); where the figures leave the exact cells
//! open (OQ-10, OQ-22) the footprint covers every cell the operation may write, and only
//! `.32x32b` lds without `.pack` are used to watch other operations' cells (thread `t` reads
//! lane `base + t`, register `i` reads column `base + i`, §2.6).

use crate::walk::CodeRef;
use tcgen05_ir::form::*;
use tcgen05_ir::idesc::Idesc;
use tcgen05_ir::observe::site_of;
use tcgen05_ir::*;

macro_rules! behaviours {
    ($($(#[$m:meta])* $v:ident => $name:literal, $cite:literal;)*) => {
        /// One behaviour of the inventory.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum B {
            $($(#[$m])* #[doc = concat!("`", $name, "` (", $cite, ")")] $v,)*
        }

        impl B {
            /// Every row, in table order.
            pub const ALL: &'static [B] = &[$(B::$v,)*];

            /// The row's name (stable: reports key on it).
            pub fn name(self) -> &'static str {
                match self { $(B::$v => $name,)* }
            }

            /// The PTX ISA section and rule that specify it.
            pub fn cite(self) -> &'static str {
                match self { $(B::$v => $cite,)* }
            }
        }
    };
}

behaviours! {
    LdS32x32b => "ld.32x32b", "§9.7.16.8.3, §9.7.16.2.3; LDST-SHAPE";
    LdS16x64b => "ld.16x64b", "§9.7.16.8.3, §9.7.16.2.3; LDST-SHAPE";
    LdS16x128b => "ld.16x128b", "§9.7.16.8.3, §9.7.16.2.3; LDST-SHAPE";
    LdS16x256b => "ld.16x256b", "§9.7.16.8.3, §9.7.16.2.3; LDST-SHAPE";
    LdS16x32bx2 => "ld.16x32bx2", "§9.7.16.8.3, §9.7.16.2.3; LDST-SHAPE";
    StS32x32b => "st.32x32b", "§9.7.16.8.4, §9.7.16.2.3; LDST-SHAPE";
    StS16x64b => "st.16x64b", "§9.7.16.8.4, §9.7.16.2.3; LDST-SHAPE";
    StS16x128b => "st.16x128b", "§9.7.16.8.4, §9.7.16.2.3; LDST-SHAPE";
    StS16x256b => "st.16x256b", "§9.7.16.8.4, §9.7.16.2.3; LDST-SHAPE";
    StS16x32bx2 => "st.16x32bx2", "§9.7.16.8.4, §9.7.16.2.3; LDST-SHAPE";
    NumX1 => "ldst.num.x1", "§9.7.16.2.3.1; LDST-NUM";
    NumX2 => "ldst.num.x2", "§9.7.16.2.3.1; LDST-NUM";
    NumX4 => "ldst.num.x4", "§9.7.16.2.3.1; LDST-NUM";
    NumX8 => "ldst.num.x8", "§9.7.16.2.3.1; LDST-NUM";
    NumX16 => "ldst.num.x16", "§9.7.16.2.3.1; LDST-NUM";
    NumX32 => "ldst.num.x32", "§9.7.16.2.3.1; LDST-NUM";
    NumX64 => "ldst.num.x64", "§9.7.16.2.3.1; LDST-NUM";
    NumX128 => "ldst.num.x128", "§9.7.16.2.3.1; LDST-NUM";
    LdPack => "ld.pack::16b", "§9.7.16.8.2; LD-PACK-ONLY";
    StUnpack => "st.unpack::16b", "§9.7.16.8.2; ST-UNPACK-ONLY";
    RedMin => "ld.red.min", "§9.7.16.8.3; LD-RED-*";
    RedMax => "ld.red.max", "§9.7.16.8.3; LD-RED-*";
    RedAbs => "ld.red.abs", "§9.7.16.8.3; LD-RED-*";
    RedNan => "ld.red.NaN", "§9.7.16.8.3; LD-RED-*";
    RedU32 => "ld.red.u32", "§9.7.16.8.3; LD-RED-*";
    RedS32 => "ld.red.s32", "§9.7.16.8.3; LD-RED-*";
    RedF32 => "ld.red.f32", "§9.7.16.8.3; LD-RED-*";
    /// The ld's registers are recorded before any `wait::ld` (a true register dependency).
    LdRegDep => "ld.regs-before-wait::ld", "§9.7.16.6.4.5 (§4.4 last row); MCM-LD-REGDEP";
    Cp128x256b => "cp.128x256b", "§9.7.16.9.2; CP-SHAPE";
    Cp4x256b => "cp.4x256b", "§9.7.16.9.2; CP-SHAPE";
    Cp128x128b => "cp.128x128b", "§9.7.16.9.2; CP-SHAPE";
    Cp64x128b0213 => "cp.64x128b.warpx2::02_13", "§9.7.16.9.2; CP-MCAST-REQ";
    Cp64x128b0123 => "cp.64x128b.warpx2::01_23", "§9.7.16.9.2; CP-MCAST-REQ";
    Cp32x128bX4 => "cp.32x128b.warpx4", "§9.7.16.9.2; CP-MCAST-REQ";
    CpB6x16 => "cp.b8x16.b6x16_p32", "§9.7.16.9.1; CP-DECOMP-FMT";
    CpB4x16 => "cp.b8x16.b4x16_p64", "§9.7.16.9.1; CP-DECOMP-FMT";
    Shift => "shift.down", "§9.7.16.9.3; SHIFT-*";
    MmaF16 => "mma.kind::f16", "§9.7.16.10; MMA-KIND";
    MmaTf32 => "mma.kind::tf32", "§9.7.16.10; MMA-KIND";
    MmaF8f6f4 => "mma.kind::f8f6f4", "§9.7.16.10; MMA-KIND";
    MmaI8 => "mma.kind::i8", "§9.7.16.10; MMA-KIND, MMA-I8-TARGET";
    MmaMxf8f6f4 => "mma.kind::mxf8f6f4", "§9.7.16.10; MMA-BS-KINDS";
    MmaMxf4 => "mma.kind::mxf4", "§9.7.16.10; MMA-BS-KINDS";
    MmaMxf4nvf4 => "mma.kind::mxf4nvf4", "§9.7.16.10; MMA-BS-KINDS";
    MmaATmem => "mma.a-tmem", "§9.7.16.10.9.1; MMA-A-TMEM";
    MmaAshift => "mma.ashift", "§9.7.16.10.9.1; MMA-ASHIFT-*";
    MmaAccumulate => "mma.enable-input-d", "§9.7.16.10.9.1; MMA-ENABLE-D";
    MmaScaleInputD => "mma.scale-input-d", "§9.7.16.10.9.1; MMA-SCALE-D-SEM";
    MmaWs => "mma.ws", "§9.7.16.10.9.3; MMA-WS-*";
    MmaCollectorDiscard => "mma.collector::discard", "§9.7.16.10.9.1; MMA-COLLECTOR-*";
    MmaCollectorFill => "mma.collector::fill", "§9.7.16.10.9.1; MMA-COLLECTOR-VALID";
    MmaCollectorUse => "mma.collector::use-or-lastuse", "§9.7.16.10.9.1; MMA-COLLECTOR-VALID";
    MmaDisableOutputLane => "mma.disable-output-lane", "§9.7.16.10.9.1; MMA-DOL-SIZE";
    MmaZeroColMask => "mma.ws.zero-column-mask", "§9.7.16.10.9.3; MMA-WS-ZCM";
    MmaBlockScale => "mma.block_scale", "§9.7.16.10.9.2; MMA-BS-*";
    MmaSparse => "mma.sp", "§9.7.16.10.9.1, §9.7.16.10.5; MMA-SP-*";
    MmaK96 => "mma.k96", "§9.7.16.10.3; MMA-K96-TARGET";
    PipeMmaMma => "pipe.same-thread.mma->mma", "§9.7.16.6.4.1 pair 1; MCM-PIPE-MMA-MMA";
    PipeCpMma => "pipe.same-thread.cp->mma", "§9.7.16.6.4.1 pair 2; MCM-PIPE-CP-MMA";
    PipeShiftMma => "pipe.same-thread.shift->mma", "§9.7.16.6.4.1 pair 3; MCM-PIPE-SHIFT-MMA";
    PipeShiftCp => "pipe.same-thread.shift->cp.4x256b", "§9.7.16.6.4.1 pair 4; MCM-PIPE-SHIFT-CP";
    PipeMmaShift => "pipe.same-thread.mma->shift", "§9.7.16.6.4.1 pair 5; MCM-PIPE-MMA-SHIFT";
    PipeCommit => "pipe.same-thread.commit-after-async", "§9.7.16.6.4.1; COMMIT-TRACK";
    XPipeMmaMma => "pipe.cross-thread.mma->mma", "§9.7.16.6.4.3; MCM-XTHREAD";
    XPipeCpMma => "pipe.cross-thread.cp->mma", "§9.7.16.6.4.3; MCM-XTHREAD";
    XPipeShiftMma => "pipe.cross-thread.shift->mma", "§9.7.16.6.4.3; MCM-XTHREAD";
    XPipeShiftCp => "pipe.cross-thread.shift->cp.4x256b", "§9.7.16.6.4.3; MCM-XTHREAD";
    XPipeMmaShift => "pipe.cross-thread.mma->shift", "§9.7.16.6.4.3; MCM-XTHREAD";
    XStMma => "cross-thread.st->mma", "§9.7.16.6.4.4; MCM-XTHREAD-NONPIPE";
    CommitOwn => "commit.own-mbarrier", "§9.7.16.12.1; COMMIT-TRACK";
    CommitPeer => "commit.peer-mbarrier", "§9.7.16.12.1; COMMIT-MCAST-MASK";
    CommitMulticast => "commit.multicast", "§9.7.16.12.1; COMMIT-MCAST-MASK";
    CommitSharedCluster => "commit.shared::cluster-address", "§9.7.16.12.1; COMMIT-MBAR-WINDOW";
    AllocN32 => "alloc.ncols.32", "§9.7.16.7.1; ALLOC-NCOLS";
    AllocN64 => "alloc.ncols.64", "§9.7.16.7.1; ALLOC-NCOLS";
    AllocN128 => "alloc.ncols.128", "§9.7.16.7.1; ALLOC-NCOLS";
    AllocN256 => "alloc.ncols.256", "§9.7.16.7.1; ALLOC-NCOLS";
    AllocN512 => "alloc.ncols.512", "§9.7.16.7.1; ALLOC-NCOLS";
    /// Allocations of one CTA that together hold all 512 columns at once.
    AllocFull => "alloc.capacity-512", "§9.7.16.7.1; ALLOC-BLOCKS";
    Relinquish => "relinquish_alloc_permit", "§9.7.16.7.1; RELINQUISH-*";
    PairAlloc => "pair.alloc::2", "§9.7.16.7.1, §9.7.16.5; ALLOC-PAIR-*";
    PairMma => "pair.mma::2", "§9.7.16.10, §9.7.16.5; MMA-PAIR";
    PairCp => "pair.cp::2", "§9.7.16.9.2; CP-PAIR";
    PairShift => "pair.shift::2", "§9.7.16.9.3; SHIFT-PAIR";
    FenceBefore => "fence::before_thread_sync", "§9.7.16.11.1; MCM-XTHREAD";
    FenceAfter => "fence::after_thread_sync", "§9.7.16.11.1; FENCE-AFTER";
}

/// A few rows of one op, without allocating (an op has at most 16).
#[derive(Default)]
struct Rows {
    v: [Option<B>; 16],
    n: usize,
}

impl Rows {
    fn push(&mut self, b: B) {
        if self.n < self.v.len() {
            self.v[self.n] = Some(b);
            self.n += 1;
        }
    }

    fn extend(&mut self, b: Option<B>) {
        if let Some(b) = b {
            self.push(b);
        }
    }

    fn iter(&self) -> impl Iterator<Item = B> + '_ {
        self.v[..self.n].iter().flatten().copied()
    }
}

/// A set of rows (bit `i`: `B::ALL[i]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BSet(pub u128);

impl BSet {
    /// Adds a row.
    pub fn insert(&mut self, b: B) {
        self.0 |= 1 << (b as u32);
    }

    /// Whether the row is in the set.
    pub fn contains(&self, b: B) -> bool {
        self.0 >> (b as u32) & 1 != 0
    }

    /// The rows in the set, in table order.
    pub fn iter(&self) -> impl Iterator<Item = B> + '_ {
        B::ALL.iter().copied().filter(|b| self.contains(*b))
    }
}

/// One observation record (or part of one) whose words a behaviour wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    /// The behaviour.
    pub row: B,
    /// The code holding the site (a function's sites are recorded in each calling warp's block).
    pub code: CodeRef,
    /// The site's index in that code's pre-order site list (`observe::Layout`).
    pub site: u32,
    /// Only the records of odd CTAs (the peer CTA of a pair) count.
    pub odd_cta: bool,
    /// Lanes whose words count (bit `l`: lane `l`).
    pub lanes: u32,
    /// Data words `lo..hi` of each lane's record that count.
    pub words: (u16, u16),
}

impl Watch {
    /// The record it names, as a sort key: functions first, then warps, then the site.
    pub fn key(&self) -> (bool, usize, u32) {
        match self.code {
            CodeRef::Func(f) => (false, f, self.site),
            CodeRef::Warp(w) => (true, w, self.site),
        }
    }
}

/// What [`analyse`] finds in a program (watches sorted by [`Watch::key`]).
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Rows the program exercises.
    pub exercised: BSet,
    /// Observed words per row.
    pub watches: Vec<Watch>,
}

impl Analysis {
    /// The rows with at least one watched record: the program makes their words observable.
    pub fn watched(&self) -> BSet {
        let mut s = BSet::default();
        for w in &self.watches {
            s.insert(w.row);
        }
        s
    }
}

/// TMEM cells an operation may write: allocation slot, lanes `lo..hi`, columns `lo..hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Foot {
    slot: u8,
    lanes: (u16, u16),
    cols: (u16, u16),
}

impl Foot {
    fn at(t: &TmemRef, lanes: u16, cols: u16) -> Option<Foot> {
        match t.base {
            TBase::Slot(slot) => Some(Foot {
                slot,
                lanes: (t.lane, t.lane + lanes),
                cols: (t.col, t.col + cols),
            }),
            TBase::Abs => None,
        }
    }

    /// The cells both footprints hold.
    fn meet(&self, o: &Foot) -> Option<Foot> {
        self.overlaps(o).then(|| Foot {
            slot: self.slot,
            lanes: (self.lanes.0.max(o.lanes.0), self.lanes.1.min(o.lanes.1)),
            cols: (self.cols.0.max(o.cols.0), self.cols.1.min(o.cols.1)),
        })
    }

    fn overlaps(&self, o: &Foot) -> bool {
        self.slot == o.slot
            && self.lanes.0 < o.lanes.1
            && o.lanes.0 < self.lanes.1
            && self.cols.0 < o.cols.1
            && o.cols.0 < self.cols.1
    }
}

/// A site of the observation layout.
#[derive(Debug, Clone, Copy)]
struct SiteAt {
    code: CodeRef,
    index: u32,
    /// For a `.32x32b` ld without pack or red: the cells it reads.
    reads: Option<Foot>,
    kind: SiteKindX,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SiteKindX {
    Ld,
    Addr(u8),
    Mbar(u8),
}

/// An asynchronous op with its place in the program.
#[derive(Debug, Clone, Copy)]
struct AsyncAt<'a> {
    op: &'a Op,
    code: CodeRef,
    /// Statement list id (ops of one list are in issue order).
    list: u32,
    /// Position in program pre-order.
    pos: u32,
    /// A `fence::before_thread_sync` follows it in its code.
    fenced_before: bool,
    /// A `fence::after_thread_sync` precedes it in its code.
    fenced_after: bool,
}

struct Walker<'a> {
    sites: Vec<SiteAt>,
    asyncs: Vec<AsyncAt<'a>>,
    /// (code, pos) of every fence.
    fences: Vec<(CodeRef, u32, FenceKind)>,
    allocs: Vec<(u8, u32, CtaGroup)>,
    out: Analysis,
    next_list: u32,
    pos: u32,
}

/// The rows `p` exercises and the observed words each of them wrote.
pub fn analyse(p: &Program) -> Analysis {
    let mut w = Walker {
        sites: Vec::with_capacity(16),
        asyncs: Vec::with_capacity(8),
        fences: Vec::with_capacity(16),
        allocs: Vec::with_capacity(4),
        out: Analysis::default(),
        next_list: 0,
        pos: 0,
    };
    for (f, func) in p.funcs.iter().enumerate() {
        let mut n = 0;
        w.list(&func.body, CodeRef::Func(f), &mut n);
    }
    for (i, code) in p.warps.iter().enumerate() {
        let mut n = 0;
        w.list(code, CodeRef::Warp(i), &mut n);
    }
    w.finish();
    w.out.watches.sort_unstable_by_key(|x| x.key());
    w.out
}

fn ld_row(s: LdStShape) -> Option<B> {
    Some(match s {
        LdStShape::S32x32b => B::LdS32x32b,
        LdStShape::S16x64b => B::LdS16x64b,
        LdStShape::S16x128b => B::LdS16x128b,
        LdStShape::S16x256b => B::LdS16x256b,
        LdStShape::S16x32bx2 => B::LdS16x32bx2,
        LdStShape::S32x64b => return None,
    })
}

fn st_row(s: LdStShape) -> Option<B> {
    Some(match s {
        LdStShape::S32x32b => B::StS32x32b,
        LdStShape::S16x64b => B::StS16x64b,
        LdStShape::S16x128b => B::StS16x128b,
        LdStShape::S16x256b => B::StS16x256b,
        LdStShape::S16x32bx2 => B::StS16x32bx2,
        LdStShape::S32x64b => return None,
    })
}

fn num_row(n: Num) -> Option<B> {
    Some(match n {
        Num::X1 => B::NumX1,
        Num::X2 => B::NumX2,
        Num::X4 => B::NumX4,
        Num::X8 => B::NumX8,
        Num::X16 => B::NumX16,
        Num::X32 => B::NumX32,
        Num::X64 => B::NumX64,
        Num::X128 => B::NumX128,
        Num::X256 => return None,
    })
}

fn kind_row(k: MmaKind) -> B {
    match k {
        MmaKind::F16 => B::MmaF16,
        MmaKind::Tf32 => B::MmaTf32,
        MmaKind::F8f6f4 => B::MmaF8f6f4,
        MmaKind::I8 => B::MmaI8,
        MmaKind::Mxf8f6f4 => B::MmaMxf8f6f4,
        MmaKind::Mxf4 => B::MmaMxf4,
        MmaKind::Mxf4nvf4 => B::MmaMxf4nvf4,
    }
}

/// The cells an MMA writes: D's rows in this CTA (M, or M / 2 per CTA of a pair, at most
/// 128) by N columns (§2.7; 32-bit accumulators); in the folded data-path layouts B (dense
/// `::2` M = 128), E (`.ws` M = 64) and G (`.ws` M = 32) all 128 lanes by N·R/128 columns
/// (R rows, §9.7.16.10.5: the column blocks go to the lane blocks).
fn mma_foot(m: &Mma) -> Option<Foot> {
    let id = Idesc::new(m.form.kind, m.idesc);
    let rows = if m.form.cta_group == CtaGroup::Two {
        id.m() / 2
    } else {
        id.m()
    };
    let folded = !m.form.sp && !m.form.block_scale && (rows == 64 || rows == 32);
    let fold_ok = m.form.ws || m.form.cta_group == CtaGroup::Two && rows == 64;
    if folded && fold_ok {
        let cols = id.n() * rows / 128;
        return Foot::at(&m.d, 128, cols.max(1) as u16);
    }
    Foot::at(&m.d, rows.clamp(1, 128) as u16, id.n().max(1) as u16)
}

/// The cells a cp writes (§3.5): the shape's lanes (every quarter for the multicasts) by its
/// bits per lane in 32-bit columns; decompression keeps the column count (16 x 8-bit).
fn cp_foot(shape: CpShape, t: &TmemRef) -> Option<Foot> {
    let (lanes, cols) = match shape {
        CpShape::S128x256b => (128, 8),
        CpShape::S4x256b => (4, 8),
        CpShape::S128x128b => (128, 4),
        CpShape::S64x128b | CpShape::S32x128b => (128, 4),
        CpShape::S64x256b => (64, 8),
    };
    Foot::at(t, lanes, cols)
}

/// The cells a shift moves (§3.6): 32 rows of 256 bits from `taddr`.
fn shift_foot(t: &TmemRef) -> Option<Foot> {
    Foot::at(t, 32, 8)
}

fn same_cell(a: &TmemRef, b: &TmemRef) -> bool {
    a.base == b.base && a.col == b.col
}

impl<'a> Walker<'a> {
    fn list(&mut self, list: &'a [Stmt], code: CodeRef, n: &mut u32) {
        let id = self.next_list;
        self.next_list += 1;
        for (i, s) in list.iter().enumerate() {
            self.pos += 1;
            if site_of(s).is_some() {
                let kind = match s {
                    Stmt::ObserveAddr { slot } => SiteKindX::Addr(*slot),
                    Stmt::MbarWait { bar, .. } => SiteKindX::Mbar(*bar),
                    _ => SiteKindX::Ld,
                };
                let reads = match s {
                    Stmt::Tc(Op::Ld {
                        form, taddr, nregs, ..
                    }) if !form.red && form.pack.is_none() && form.shape == LdStShape::S32x32b => {
                        Foot::at(taddr, 32, *nregs)
                    }
                    _ => None,
                };
                self.sites.push(SiteAt {
                    code,
                    index: *n,
                    reads,
                    kind,
                });
                *n += 1;
            }
            match s {
                Stmt::Tc(op) => self.op(
                    op,
                    code,
                    id,
                    &list[i + 1..],
                    *n - u32::from(site_of(s).is_some()),
                ),
                Stmt::If { then, els, .. } => {
                    self.list(then, code, n);
                    self.list(els, code, n);
                }
                Stmt::Loop { body, .. } => self.list(body, code, n),
                _ => {}
            }
        }
    }

    /// One op; `rest` is what follows it in its list; `site` its own site index (lds).
    fn op(&mut self, op: &'a Op, code: CodeRef, list: u32, rest: &[Stmt], site: u32) {
        let ex = &mut self.out.exercised;
        match op {
            Op::Ld { form, .. } => {
                let mut rows = Rows::default();
                rows.extend(ld_row(form.shape));
                rows.extend(num_row(form.num));
                if form.pack.is_some() {
                    rows.push(B::LdPack);
                }
                if form.red {
                    rows.push(match form.red_op {
                        Some(RedOp::Max) => B::RedMax,
                        _ => B::RedMin,
                    });
                    if form.abs {
                        rows.push(B::RedAbs);
                    }
                    if form.nan {
                        rows.push(B::RedNan);
                    }
                    match form.ty {
                        Ty::U32 => rows.push(B::RedU32),
                        Ty::S32 => rows.push(B::RedS32),
                        Ty::F32 => rows.push(B::RedF32),
                        _ => {}
                    }
                }
                // Recorded at the end of its list when no wait::ld follows (MCM-LD-REGDEP).
                let waited = rest
                    .iter()
                    .any(|s| matches!(s, Stmt::Tc(Op::Wait { form }) if form.op == WaitOp::Ld));
                if !waited {
                    rows.push(B::LdRegDep);
                }
                for r in rows.iter() {
                    ex.insert(r);
                    self.out.watches.push(whole(r, code, site));
                }
            }
            Op::St { form, taddr, .. } => {
                let mut rows = Rows::default();
                rows.extend(st_row(form.shape));
                rows.extend(num_row(form.num));
                if form.pack.is_some() {
                    rows.push(B::StUnpack);
                }
                // The ld of the same cells that follows in the same list (a flow).
                let mut k = site;
                let mut reader = None;
                for s in rest {
                    if let Stmt::Tc(Op::Ld {
                        taddr: t, form: f, ..
                    }) = s
                        && t == taddr
                        && f.shape == form.shape
                    {
                        reader = Some(k);
                        break;
                    }
                    if site_of(s).is_some() {
                        k += 1;
                    }
                    if matches!(s, Stmt::If { .. } | Stmt::Loop { .. }) {
                        break;
                    }
                }
                for r in rows.iter() {
                    ex.insert(r);
                    if let Some(k) = reader {
                        self.out.watches.push(whole(r, code, k));
                    }
                }
                self.push_async(op, code, list);
            }
            Op::Fence { kind } => self.fences.push((code, self.pos, *kind)),
            Op::Alloc {
                form, slot, ncols, ..
            } => {
                self.allocs.push((*slot, ncols.value, form.cta_group));
            }
            Op::Relinquish { .. } => ex.insert(B::Relinquish),
            Op::Mma(_) | Op::Cp { .. } | Op::Shift { .. } | Op::Commit { .. } => {
                self.push_async(op, code, list)
            }
            _ => {}
        }
    }

    fn push_async(&mut self, op: &'a Op, code: CodeRef, list: u32) {
        self.asyncs.push(AsyncAt {
            op,
            code,
            list,
            pos: self.pos,
            fenced_before: false,
            fenced_after: false,
        })
    }

    /// Watches every `.32x32b` ld site reading cells of `f` (odd CTAs only with `odd`).
    fn watch_cells(&mut self, row: B, f: Option<Foot>, odd: bool) {
        let Some(f) = f else { return };
        for s in &self.sites {
            let Some(r) = s.reads else { continue };
            if !r.overlaps(&f) {
                continue;
            }
            let (l0, l1) = (f.lanes.0.max(r.lanes.0), f.lanes.1.min(r.lanes.1));
            let (c0, c1) = (f.cols.0.max(r.cols.0), f.cols.1.min(r.cols.1));
            let lanes = (l0..l1).fold(0u32, |m, l| m | 1 << (l - r.lanes.0));
            self.out.watches.push(Watch {
                row,
                code: s.code,
                site: s.index,
                odd_cta: odd,
                lanes,
                words: (c0 - r.cols.0, c1 - r.cols.0),
            });
        }
    }

    fn watch_kind(&mut self, row: B, pred: impl Fn(SiteKindX) -> bool, odd: bool) {
        for s in &self.sites {
            if pred(s.kind) {
                self.out.watches.push(Watch {
                    row,
                    code: s.code,
                    site: s.index,
                    odd_cta: odd,
                    lanes: !0,
                    words: (0, u16::MAX),
                });
            }
        }
    }

    fn mark(&mut self, row: B, f: Option<Foot>, odd: bool) {
        self.out.exercised.insert(row);
        self.watch_cells(row, f, odd);
    }

    /// The cells the op writes.
    fn foot_of(op: &Op) -> Option<Foot> {
        match op {
            Op::Mma(m) => mma_foot(m),
            Op::Cp { form, taddr, .. } => cp_foot(form.shape, taddr),
            Op::Shift { taddr, .. } => shift_foot(taddr),
            _ => None,
        }
    }

    fn finish(&mut self) {
        // Fences around the async ops, in their own code.
        let fences = std::mem::take(&mut self.fences);
        for a in &mut self.asyncs {
            a.fenced_before = fences
                .iter()
                .any(|(c, p, k)| *c == a.code && *p > a.pos && *k == FenceKind::BeforeThreadSync);
            a.fenced_after = fences
                .iter()
                .any(|(c, p, k)| *c == a.code && *p < a.pos && *k == FenceKind::AfterThreadSync);
        }
        for (c, _, k) in &fences {
            let row = match k {
                FenceKind::BeforeThreadSync => B::FenceBefore,
                FenceKind::AfterThreadSync => B::FenceAfter,
            };
            if self.out.exercised.contains(row) {
                // One fence of each kind names the records (the row is the same).
                continue;
            }
            self.out.exercised.insert(row);
            // The lds after the fence in its code (after), or in other codes (before).
            let out = &mut self.out;
            for st in self
                .sites
                .iter()
                .filter(|st| st.kind == SiteKindX::Ld)
                .filter(|st| match k {
                    FenceKind::AfterThreadSync => st.code == *c,
                    FenceKind::BeforeThreadSync => st.code != *c,
                })
                .take(4)
            {
                out.watches.push(whole(row, st.code, st.index));
            }
        }
        // Allocations: the address records of their slot, and the lds of it.
        let allocs = std::mem::take(&mut self.allocs);
        let mut total = 0;
        for (slot, ncols, cg) in &allocs {
            total += ncols;
            let row = match ncols {
                32 => B::AllocN32,
                64 => B::AllocN64,
                128 => B::AllocN128,
                256 => B::AllocN256,
                512 => B::AllocN512,
                _ => continue,
            };
            let f = Some(Foot {
                slot: *slot,
                lanes: (0, 128),
                cols: (0, *ncols as u16),
            });
            self.out.exercised.insert(row);
            self.watch_kind(row, |k| k == SiteKindX::Addr(*slot), false);
            self.watch_cells(row, f, false);
            if *cg == CtaGroup::Two {
                self.out.exercised.insert(B::PairAlloc);
                self.watch_kind(B::PairAlloc, |k| k == SiteKindX::Addr(*slot), true);
                self.watch_cells(B::PairAlloc, f, true);
            }
        }
        if total >= 512 && allocs.len() <= 16 {
            self.out.exercised.insert(B::AllocFull);
            self.watch_kind(B::AllocFull, |k| matches!(k, SiteKindX::Addr(_)), false);
            for (slot, ncols, _) in &allocs {
                let f = Some(Foot {
                    slot: *slot,
                    lanes: (0, 128),
                    cols: (0, *ncols as u16),
                });
                self.watch_cells(B::AllocFull, f, false);
            }
        }
        if self.out.exercised.contains(B::Relinquish) {
            // Relinquishing changes no word; the records of the CTA's allocations (which a
            // wrong relinquish would block or corrupt) are what the case compares.
            self.watch_kind(B::Relinquish, |k| matches!(k, SiteKindX::Addr(_)), false);
        }
        let asyncs = std::mem::take(&mut self.asyncs);
        for (j, y) in asyncs.iter().enumerate() {
            let fy = Self::foot_of(y.op);
            match y.op {
                Op::Mma(m) => self.mma_rows(m, fy),
                Op::Cp { form, .. } => {
                    let row = match (form.shape, form.multicast) {
                        (CpShape::S128x256b, _) => Some(B::Cp128x256b),
                        (CpShape::S4x256b, _) => Some(B::Cp4x256b),
                        (CpShape::S128x128b, _) => Some(B::Cp128x128b),
                        (CpShape::S64x128b, Some(CpMulticast::Warpx2_02_13)) => {
                            Some(B::Cp64x128b0213)
                        }
                        (CpShape::S64x128b, Some(CpMulticast::Warpx2_01_23)) => {
                            Some(B::Cp64x128b0123)
                        }
                        (CpShape::S32x128b, Some(CpMulticast::Warpx4)) => Some(B::Cp32x128bX4),
                        _ => None,
                    };
                    if let Some(r) = row {
                        self.mark(r, fy, false);
                    }
                    match form.src_fmt {
                        Some(CpSrcFmt::B6x16P32) => self.mark(B::CpB6x16, fy, false),
                        Some(CpSrcFmt::B4x16P64) => self.mark(B::CpB4x16, fy, false),
                        None => {}
                    }
                    if form.cta_group == CtaGroup::Two {
                        self.mark(B::PairCp, fy, true);
                    }
                }
                Op::Shift { form, .. } => {
                    self.mark(B::Shift, fy, false);
                    if form.cta_group == CtaGroup::Two {
                        self.mark(B::PairShift, fy, true);
                    }
                }
                Op::Commit {
                    form,
                    mbar,
                    cta_mask,
                    ..
                } => {
                    let bar = *mbar;
                    let is_bar = move |k| k == SiteKindX::Mbar(bar);
                    let mask = cta_mask.unwrap_or(0);
                    if !form.multicast {
                        self.out.exercised.insert(B::CommitOwn);
                        self.watch_kind(B::CommitOwn, is_bar, false);
                    } else {
                        if mask.count_ones() > 1 {
                            self.out.exercised.insert(B::CommitMulticast);
                            self.watch_kind(B::CommitMulticast, is_bar, false);
                        }
                        // An odd CTA's bit: the peer of the even CTA that issues pair ops.
                        if mask & 0xAAAA != 0 {
                            self.out.exercised.insert(B::CommitPeer);
                            self.watch_kind(B::CommitPeer, is_bar, true);
                        }
                    }
                    if form.shared_cluster {
                        self.out.exercised.insert(B::CommitSharedCluster);
                        self.watch_kind(B::CommitSharedCluster, is_bar, false);
                    }
                }
                _ => {}
            }
            for x in &asyncs[..j] {
                self.pair(x, y, fy);
            }
        }
    }

    fn mma_rows(&mut self, m: &Mma, f: Option<Foot>) {
        let mut rows = Rows::default();
        rows.push(kind_row(m.form.kind));
        if matches!(m.a, MmaA::Tmem(_)) {
            rows.push(B::MmaATmem);
        }
        if m.form.ashift {
            rows.push(B::MmaAshift);
        }
        if m.enable_input_d {
            rows.push(B::MmaAccumulate);
        }
        if m.scale_input_d.is_some() {
            rows.push(B::MmaScaleInputD);
        }
        if m.form.ws {
            rows.push(B::MmaWs);
        }
        if let Some(c) = m.form.collector {
            rows.push(match c.op {
                CollectorOp::Discard => B::MmaCollectorDiscard,
                CollectorOp::Fill => B::MmaCollectorFill,
                CollectorOp::Use | CollectorOp::Lastuse => B::MmaCollectorUse,
            });
        }
        if m.disable_output_lane.is_some() {
            rows.push(B::MmaDisableOutputLane);
        }
        if m.zero_col_mask.is_some() {
            rows.push(B::MmaZeroColMask);
        }
        if m.form.block_scale {
            rows.push(B::MmaBlockScale);
        }
        if m.form.sp {
            rows.push(B::MmaSparse);
        }
        if Idesc::new(m.form.kind, m.idesc).k96() {
            rows.push(B::MmaK96);
        }
        for r in rows.iter() {
            self.mark(r, f, false);
        }
        if m.form.cta_group == CtaGroup::Two {
            self.mark(B::PairMma, f, true);
        }
    }

    /// Pipelined pairs x → y (x earlier), same thread (one statement list) or across threads
    /// (x before a `fence::before_thread_sync` in its code, y after a
    /// `fence::after_thread_sync` in another code), where y depends on x's cells.
    fn pair(&mut self, x: &AsyncAt<'_>, y: &AsyncAt<'_>, fy: Option<Foot>) {
        let same = x.list == y.list;
        let cross = x.code != y.code && x.fenced_before && y.fenced_after;
        if !same && !cross {
            return;
        }
        if let (Op::St { taddr, .. }, Op::Mma(b)) = (x.op, y.op) {
            // Non-pipelined, different thread (§4.4 row 4): st; wait::st; fence::before;
            // sync → fence::after; mma reading the stored cells as A, scale factors or
            // metadata.
            if cross && mma_reads(b).any(|t| same_cell(&t, taddr)) {
                self.mark(B::XStMma, fy, false);
            }
            return;
        }
        let cg = |o: &Op| match o {
            Op::Mma(m) => Some(m.form.cta_group),
            Op::Cp { form, .. } => Some(form.cta_group),
            Op::Shift { form, .. } => Some(form.cta_group),
            Op::Commit { form, .. } => Some(form.cta_group),
            _ => None,
        };
        if cg(x.op) != cg(y.op) {
            return;
        }
        // The cells whose values depend on the pair's order: all of y's for an MMA that reads
        // x's cells or accumulates on x's D; where a shift and a later op both write, only
        // the cells they share (an MMA's columns beyond the shifted 256 bits do not depend
        // on the shift).
        let fy = match (x.op, y.op) {
            (Op::Shift { taddr, .. }, Op::Mma(_) | Op::Cp { .. }) => {
                shift_foot(taddr).zip(fy).and_then(|(a, b)| a.meet(&b))
            }
            _ => fy,
        };
        let (s, c) = match (x.op, y.op) {
            (Op::Mma(a), Op::Mma(b)) if same_cell(&a.d, &b.d) => (B::PipeMmaMma, B::XPipeMmaMma),
            (Op::Cp { taddr, .. }, Op::Mma(b)) if mma_reads(b).any(|t| same_cell(&t, taddr)) => {
                (B::PipeCpMma, B::XPipeCpMma)
            }
            (Op::Shift { taddr, .. }, Op::Mma(b)) if same_cell(taddr, &b.d) => {
                (B::PipeShiftMma, B::XPipeShiftMma)
            }
            (
                Op::Shift { .. },
                Op::Cp {
                    form:
                        CpForm {
                            shape: CpShape::S4x256b,
                            ..
                        },
                    ..
                },
            ) if fy.is_some() => (B::PipeShiftCp, B::XPipeShiftCp),
            (Op::Mma(a), Op::Shift { taddr, .. }) if same_cell(&a.d, taddr) => {
                (B::PipeMmaShift, B::XPipeMmaShift)
            }
            (Op::Mma(_) | Op::Cp { .. } | Op::Shift { .. }, Op::Commit { .. }) if same => {
                // The commit tracks x: x's cells are read after the mbarrier wait.
                let fx = Self::foot_of(x.op);
                self.mark(B::PipeCommit, fx, false);
                return;
            }
            _ => return,
        };
        self.mark(if same { s } else { c }, fy, false);
    }
}

/// The TMEM operands an MMA reads besides D: A in TMEM, scale factors, sparse metadata.
fn mma_reads(m: &Mma) -> impl Iterator<Item = TmemRef> + '_ {
    let a = match &m.a {
        MmaA::Tmem(t) => Some(*t),
        MmaA::Desc(_) => None,
    };
    [a, m.scale_a, m.scale_b, m.sp_meta].into_iter().flatten()
}

/// A watch of a whole record.
fn whole(row: B, code: CodeRef, site: u32) -> Watch {
    Watch {
        row,
        code,
        site,
        odd_cta: false,
        lanes: !0,
        words: (0, u16::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{Mode, Stream};
    use crate::{Config, litmus};
    use std::collections::HashSet;
    use tcgen05_ir::samples;

    fn member(name: &str) -> Program {
        litmus::all_members()
            .into_iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no member {name}"))
            .program
    }

    /// The distinct records watched for `b`, in order of first appearance.
    fn watched(a: &Analysis, b: B) -> Vec<(CodeRef, u32)> {
        let mut v: Vec<(CodeRef, u32)> = Vec::new();
        for w in a.watches.iter().filter(|w| w.row == b) {
            if !v.contains(&(w.code, w.site)) {
                v.push((w.code, w.site));
            }
        }
        v
    }

    #[test]
    fn a_flow_watches_its_ld_for_the_st_and_the_ld() {
        // alloc; ObserveAddr (site 0); st; wait::st; ld (site 1); wait::ld; ...
        let p = samples::single_warp_roundtrip();
        let a = analyse(&p);
        for b in [B::StS32x32b, B::LdS32x32b, B::NumX2] {
            assert!(a.exercised.contains(b), "{b:?}");
            assert_eq!(watched(&a, b), vec![(CodeRef::Warp(0), 1)], "{b:?}");
        }
        assert!(
            !a.exercised.contains(B::LdRegDep),
            "wait::ld follows the ld"
        );
        assert_eq!(
            watched(&a, B::AllocN32),
            vec![(CodeRef::Warp(0), 0), (CodeRef::Warp(0), 1)]
        );
        assert!(a.exercised.contains(B::Relinquish));
    }

    #[test]
    fn an_ld_without_a_later_wait_ld_in_its_list_is_a_register_dependency() {
        let mut p = samples::single_warp_roundtrip();
        let i = p.warps[0]
            .iter()
            .position(|s| matches!(s, Stmt::Tc(Op::Wait { form }) if form.op == WaitOp::Ld))
            .unwrap();
        p.warps[0].remove(i);
        let a = analyse(&p);
        assert!(a.exercised.contains(B::LdRegDep));
        assert_eq!(watched(&a, B::LdRegDep), vec![(CodeRef::Warp(0), 1)]);
    }

    #[test]
    fn pipelined_pairs_are_told_apart_by_thread() {
        let same = analyse(&member("pipelined-same-thread/cp-mma"));
        assert!(same.exercised.contains(B::PipeCpMma));
        assert!(!same.exercised.contains(B::XPipeCpMma));
        assert!(!watched(&same, B::PipeCpMma).is_empty(), "D is loaded");
        let cross = analyse(&member("pipelined-cross-thread/canonical"));
        assert!(cross.exercised.contains(B::XPipeCpMma));
        assert!(!cross.exercised.contains(B::PipeCpMma));
        assert!(!watched(&cross, B::XPipeCpMma).is_empty());
        let mm = analyse(&member("pipelined-same-thread/mma-mma"));
        assert!(mm.exercised.contains(B::PipeMmaMma));
        assert!(mm.exercised.contains(B::MmaAccumulate));
    }

    #[test]
    fn valid_programs_exercise_and_watch_every_row_within_6000_cases() {
        // The default config, then one that splits every `::1` issue list across two warps.
        let cross = Config {
            cross_pct: 100,
            ..Config::default()
        };
        let mut ex = BSet::default();
        let mut seen = BSet::default();
        for (cfg, seed) in [(Config::default(), 0xBE4A), (cross, 0xC055)] {
            let s = Stream::new(cfg, seed, Mode::Valid);
            for i in 0..3000 {
                let a = analyse(&s.case(i).case.program);
                ex.0 |= a.exercised.0;
                seen.0 |= a.watched().0;
            }
        }
        let missing: Vec<&str> = B::ALL
            .iter()
            .filter(|b| !(ex.contains(**b) && seen.contains(**b)))
            .map(|b| b.name())
            .collect();
        assert!(missing.is_empty(), "not exercised and watched: {missing:?}");
    }

    #[test]
    fn names_are_distinct_and_every_row_cites_a_section() {
        let names: HashSet<&str> = B::ALL.iter().map(|b| b.name()).collect();
        assert_eq!(names.len(), B::ALL.len());
        assert!(B::ALL.len() <= 128, "BSet holds 128 rows");
        for b in B::ALL {
            assert!(b.cite().contains('§'), "{} cites no section", b.name());
        }
    }
}
