//! MMA rules judged at run time from the instruction descriptor, the zero-column mask, the
//! collector-buffer sequence ([`event`], [`collector`], called from `ub.rs`) and the TMEM data
//! of sparse metadata and scale factors ([`data`], called after the allocation analysis)
//! (reference §2.7, §2.8, §3.7; §6 rows MMA-*). Every rule here has an unstated consequence
//! (or UB), so a reachable breach makes the run `Undefined([rule])`.
//!
//! The layout-(a) rows that existed before (IDESC-RESERVED/ENC/SAT, MMA-SHAPE-VALID,
//! MMA-SP-SELECTOR, the i8 half of MMA-TRANSPOSE-KIND) stay in `ub.rs`; this module adds the
//! layouts (b) and (c) and the rows that need them.

use super::Findings;
use super::alloc::{AllocAnalysis, SlotRead};
use super::sync::Clocks;
use super::unroll::{Ev, EvKind, Unrolled};
use crate::types::{Code, Location};
use tcgen05_ir::idesc::{Idesc, IdescLayout};
use tcgen05_ir::*;

/// Rule breaches of one MMA event, from its operands alone (no TMEM contents).
pub fn event(m: &Mma, target: Target, out: &mut Vec<(RuleId, String)>) {
    let d = Idesc::new(m.form.kind, m.idesc);
    if d.layout != IdescLayout::A {
        mx_layout(m, &d, out);
        block_scale(m, &d, out);
        k_select(m, &d, target, out);
    }
    transpose(m, &d, out);
    zero_column_mask(m, &d, out);
}

/// Layouts (b) and (c): reserved bits (IDESC-RESERVED), type codes (IDESC-ENC) and M/N
/// (MMA-SHAPE-VALID), reference §2.7 and §2.8.
fn mx_layout(m: &Mma, d: &Idesc, out: &mut Vec<(RuleId, String)>) {
    if d.bits & d.reserved_mask() != 0 {
        out.push((
            RuleId::IdescReserved,
            format!("instruction descriptor {:#010x} sets reserved bits", d.bits),
        ));
    }
    let k = m.form.kind;
    // IDESC-ENC: (b) A/B use the f8f6f4 codes and the scale type is UE8M0 = 1; (c) A is
    // E2M1 = 1, mxf4 needs UE8M0 = 1 and mxf4nvf4 allows both scale types. The B code of
    // layout (c) is not stated in the reference and is left alone.
    let f8 = [0, 1, 3, 4, 5];
    let enc_ok = match d.layout {
        IdescLayout::B => {
            f8.contains(&d.a_type()) && f8.contains(&d.b_type()) && d.scale_type() == 1
        }
        _ => d.a_type() == 1 && (k == MmaKind::Mxf4nvf4 || d.scale_type() == 1),
    };
    if !enc_ok {
        out.push((
            RuleId::IdescEnc,
            format!(
                "the A/B type or scale-type fields of {:#010x} are not valid for {}",
                d.bits,
                k.as_str()
            ),
        ));
    }
    // MMA-SHAPE-VALID (§2.7): ::1 M = 128, N = 8..256 step 8; ::2 dense M = 128 or 256,
    // sparse M = 256, N = 16..256 step 16. (K = 96 is judged by MMA-K-EXPLICIT.)
    let (mm, n) = (d.m(), d.n());
    let ok = if m.form.cta_group == CtaGroup::Two {
        let m_ok = if m.form.sp {
            mm == 256
        } else {
            matches!(mm, 128 | 256)
        };
        m_ok && (16..=256).contains(&n) && n.is_multiple_of(16)
    } else {
        mm == 128 && (8..=256).contains(&n) && n.is_multiple_of(8)
    };
    if !ok {
        out.push((
            RuleId::MmaShapeValid,
            format!(
                "M={mm}, N={n} is not a valid shape for {} {}",
                k.as_str(),
                m.form.cta_group.as_str()
            ),
        ));
    }
}

/// The scale-vector size in force: the written one, or `.block32` for mxf4
/// (MMA-BS-MXF4-DEFAULT).
fn scale_vec(m: &Mma) -> Option<ScaleVec> {
    m.form
        .scale_vec
        .or((m.form.kind == MmaKind::Mxf4).then_some(ScaleVec::Block32))
}

/// MMA-BS-SFID (§9.7.16.4.2, .10.7.2-3) and the idesc half of MMA-BS-VEC (§9.7.16.10.7.1).
fn block_scale(m: &Mma, d: &Idesc, out: &mut Vec<(RuleId, String)>) {
    let four = matches!(scale_vec(m), Some(ScaleVec::X4 | ScaleVec::Block16));
    // MMA-BS-VEC: mxf4nvf4 with UE4M3 scales allows only 4X / block16.
    if m.form.kind == MmaKind::Mxf4nvf4 && d.scale_type() == 0 && !four {
        out.push((
            RuleId::MmaBsVec,
            "mxf4nvf4 with UE4M3 scale factors needs .scale_vec::4X or .block16".into(),
        ));
    }
    let ids = [d.a_sf_id(), d.b_sf_id()];
    // Layout (b): IDs 0-3 are all valid (2-bit fields). Layout (c): 0 or 2, and both 0 with
    // 4X / block16, when K != 96. With K = 96 the figures show IDs 1 and 3 too (OQ-32): not
    // judged.
    if d.layout != IdescLayout::C || d.k96() {
        return;
    }
    if ids.iter().any(|i| !matches!(i, 0 | 2)) {
        out.push((
            RuleId::MmaBsSfid,
            format!(
                "scale-factor IDs A={}, B={}: {} allows only 0 or 2",
                ids[0],
                ids[1],
                m.form.kind.as_str()
            ),
        ));
    } else if four && ids != [0, 0] {
        out.push((
            RuleId::MmaBsSfid,
            format!(
                "scale-factor IDs A={}, B={}: with a scale-vector size of 4 both must be 0",
                ids[0], ids[1]
            ),
        ));
    }
}

/// MMA-K-EXPLICIT (§9.7.16.2.1-2, .4.2) and MMA-K96-TARGET (§9.7.16.2.1.1): the layout-(c) K
/// selector.
fn k_select(m: &Mma, d: &Idesc, target: Target, out: &mut Vec<(RuleId, String)>) {
    if !d.k96() {
        return;
    }
    if m.form.sp || m.form.cta_group != CtaGroup::Two || d.m() != 256 {
        out.push((
            RuleId::MmaKExplicit,
            format!(
                "K = 96 (idesc bit 31) exists only for dense ::2 M = 256; this MMA is {}{} M = {}",
                if m.form.sp { "sparse " } else { "" },
                m.form.cta_group.as_str(),
                d.m()
            ),
        ));
    }
    if target != Target::Sm103a {
        out.push((
            RuleId::MmaK96Target,
            format!("K = 96 needs sm_103a, the target is {}", target.as_str()),
        ));
    }
}

/// Whether the element code `t` of operand A or B is an 8-bit type, for the kind.
fn is_8bit(kind: MmaKind, t: u32) -> bool {
    match kind {
        MmaKind::I8 => true,
        MmaKind::F8f6f4 | MmaKind::Mxf8f6f4 => matches!(t, 0 | 1),
        _ => false,
    }
}

/// MMA-TRANSPOSE-KIND (mxf4 half), MMA-TRANSPOSE-SWZ, MMA-T8B-N, MMA-TRANSPOSE-SUBBYTE
/// (§9.7.16.10.1, .10.3).
fn transpose(m: &Mma, d: &Idesc, out: &mut Vec<(RuleId, String)>) {
    let k = m.form.kind;
    let (ta, tb) = (d.transpose_a(), d.transpose_b());
    if !(ta || tb) {
        return;
    }
    if d.layout == IdescLayout::C {
        out.push((
            RuleId::MmaTransposeKind,
            format!("{} cannot transpose A or B", k.as_str()),
        ));
        return;
    }
    // MMA-TRANSPOSE-SWZ: tf32 transposes only with swizzle code 1 (128B with 32B atomicity);
    // other kinds never transpose in that mode. A from TMEM has no descriptor (and its
    // transpose bit is unspecified, OQ-36).
    let mut swz = |name: &str, desc: &SmemDesc| {
        let atom32 = desc.swizzle == 1;
        if (k == MmaKind::Tf32) != atom32 {
            out.push((
                RuleId::MmaTransposeSwz,
                if k == MmaKind::Tf32 {
                    format!("tf32 transposes {name} only with 128B swizzle, 32B atomicity")
                } else {
                    format!(
                        "{} cannot transpose {name} in the 128B-swizzle 32B-atomicity mode",
                        k.as_str()
                    )
                },
            ));
        }
    };
    if ta && let MmaA::Desc(a) = &m.a {
        swz("A", a);
    }
    if tb {
        swz("B", &m.b);
    }
    // MMA-T8B-N: 8-bit transposed B needs N = 16..256 step 16 (::1) or 32..256 step 32 (::2).
    if tb && is_8bit(k, d.b_type()) {
        let step = if m.form.cta_group == CtaGroup::Two {
            32
        } else {
            16
        };
        let n = d.n();
        if !(step..=256).contains(&n) || !n.is_multiple_of(step) {
            out.push((
                RuleId::MmaT8bN,
                format!("8-bit transposed B needs N = {step}..256 step {step}; N is {n}"),
            ));
        }
    }
    // MMA-TRANSPOSE-SUBBYTE: e2m3, e3m2, e2m1 (codes 3, 4, 5) must be K-major.
    if matches!(k, MmaKind::F8f6f4 | MmaKind::Mxf8f6f4) {
        let sub = |t: u32| matches!(t, 3..=5);
        if (ta && sub(d.a_type())) || (tb && sub(d.b_type())) {
            out.push((
                RuleId::MmaTransposeSubbyte,
                "4-bit and 6-bit element types must be K-major (transpose bit 0)".into(),
            ));
        }
    }
}

/// MMA-ZCM-SHIFT (§9.7.16.4.3): the column shift (bits 56-61) is at most 16 when M = 32 and at
/// most 32 otherwise.
fn zero_column_mask(m: &Mma, d: &Idesc, out: &mut Vec<(RuleId, String)>) {
    let Some(z) = m.zero_col_mask else { return };
    let shift = (z >> 56 & 0x3F) as u32;
    let max = if d.m() == 32 { 16 } else { 32 };
    if shift > max {
        out.push((
            RuleId::MmaZcmShift,
            format!(
                "zero-column-mask column shift {shift} exceeds {max} (M = {})",
                d.m()
            ),
        ));
    }
}

/// The collector buffers: `a` (non-ws) and `b0..b3` (ws).
fn buffer_index(b: CollectorBuf) -> usize {
    match b {
        CollectorBuf::A => 0,
        CollectorBuf::B0 => 1,
        CollectorBuf::B1 => 2,
        CollectorBuf::B2 => 3,
        CollectorBuf::B3 => 4,
    }
}

/// What a warp's own program order says about one collector buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Buf {
    /// No fill yet, or dropped by `lastuse` / `discard`.
    Invalid,
    /// Filled and not dropped since.
    Valid,
    /// An MMA of the other family (ws vs non-ws) came between: the reference does not say
    /// whether it touches this buffer.
    Unknown,
}

/// MMA-COLLECTOR-VALID (§9.7.16.10.9.1/3): `::use` and `::lastuse` need an earlier `::fill` of
/// the same buffer that is still valid. No qualifier means `::a::discard` (ws: `::b0::discard`,
/// MMA-COLLECTOR-DEFAULT).
///
/// Judged per warp in program order, and only where that is sound: every MMA of the warp is
/// issued by the same single lane (several issuing threads: OQ-14), and no other warp of the CTA
/// (or of its pair) fills the same buffer, since another warp's fill might come in between.
pub fn collector(p: &Program, u: &Unrolled<'_>, f: &mut Findings) {
    let w = p.warps.len().max(1);
    // Each warp's MMA events, listed once (the passes below walk them several times).
    let per: Vec<Vec<(&Ev<'_>, &Mma)>> = u
        .warps
        .iter()
        .map(|evs| {
            evs.iter()
                .filter(|e| e.kind == EvKind::Mma)
                .filter_map(|e| match e.stmt {
                    Stmt::Tc(Op::Mma(m)) => Some((e, m.as_ref())),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let mmas = |g: usize| per[g].iter().copied();
    let buf_of = |m: &Mma| {
        let c = m.form.collector.unwrap_or(form::Collector {
            buf: if m.form.ws {
                CollectorBuf::B0
            } else {
                CollectorBuf::A
            },
            op: CollectorOp::Discard,
        });
        (buffer_index(c.buf), c.op)
    };
    if per.iter().all(Vec::is_empty) {
        return;
    }
    // Buffers filled by each CTA (pair members count together: a ::2 MMA acts on both).
    let ctas = u.warps.len() / w;
    let mut filled = vec![[0usize; 5]; ctas];
    for g in 0..u.warps.len() {
        let mut mine = [false; 5];
        for (_, m) in mmas(g) {
            let (b, op) = buf_of(m);
            if op == CollectorOp::Fill {
                mine[b] = true;
            }
        }
        let cta = g / w;
        let pair = cta ^ 1;
        for (b, f2) in mine.iter().enumerate() {
            if *f2 {
                filled[cta][b] += 1;
                if pair < ctas {
                    filled[pair][b] += 1;
                }
            }
        }
    }
    for g in 0..u.warps.len() {
        let mut issuer = None;
        let single = mmas(g)
            .all(|(e, _)| e.mask.count_ones() == 1 && *issuer.get_or_insert(e.mask) == e.mask);
        if !single {
            continue;
        }
        let mut own = [0usize; 5];
        for (_, m) in mmas(g) {
            let (b, op) = buf_of(m);
            if op == CollectorOp::Fill {
                own[b] = 1;
            }
        }
        let mut st = [Buf::Invalid; 5];
        for (e, m) in mmas(g) {
            let (b, op) = buf_of(m);
            // The other family's buffers become unknown.
            let others = if m.form.ws { 0..1 } else { 1..5 };
            for s in &mut st[others] {
                *s = Buf::Unknown;
            }
            let foreign = filled[g / w][b] > own[b];
            if matches!(op, CollectorOp::Use | CollectorOp::Lastuse)
                && st[b] == Buf::Invalid
                && !foreign
            {
                f.undefined.insert(RuleId::MmaCollectorValid);
                let loc = u.location(e).unwrap_or(Location {
                    code: Code::Warp((g % w) as u8),
                    path: vec![],
                });
                f.note(format!(
                    "MMA-COLLECTOR-VALID: {:?} {:?}: collector {} with no valid fill of the buffer before it",
                    loc.code,
                    loc.path,
                    op.as_str()
                ));
            }
            st[b] = match op {
                CollectorOp::Fill | CollectorOp::Use => Buf::Valid,
                CollectorOp::Lastuse | CollectorOp::Discard => Buf::Invalid,
            };
        }
    }
}

/// The 4-bit sparse-metadata values the reference lists as meaningful for 2:4 and 4:8
/// sparsity (§3.7, §9.7.16.10.8.2-3).
pub(crate) const META_SEVEN: [u32; 7] = [0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110];

/// The tf32 (1:2) metadata values (§9.7.16.10.8.1).
pub(crate) const META_TF32: [u32; 2] = [0b1110, 0b0100];

/// Whether every nibble of `v` is outside `valid`.
fn all_nibbles_invalid(v: u32, valid: &[u32]) -> bool {
    (0..8).all(|k| !valid.contains(&(v >> (4 * k) & 0xF)))
}

/// Whether `x` and `y` differ in every byte.
fn every_byte_differs(x: u32, y: u32) -> bool {
    (0..4).all(|k| (x >> (8 * k)) & 0xFF != (y >> (8 * k)) & 0xFF)
}

/// What the TMEM data rules can know about cells, from `tcgen05.st` data only.
struct Cells<'c, 'a> {
    u: &'c Unrolled<'a>,
    c: &'c Clocks,
    a: &'c AllocAnalysis,
}

impl Cells<'_, '_> {
    /// (allocation, lane, column) of a TMEM address at event (g, i), if the slot read is
    /// certain.
    fn resolve(&self, t: &TmemRef, g: usize, i: usize) -> Option<(u32, u32, u32)> {
        let TBase::Slot(s) = t.base else { return None };
        if t.divergent {
            return None;
        }
        match self.a.read_slot(self.c, (g / self.c.w) as u32, s, g, i) {
            SlotRead::Inst(id) => Some((id, u32::from(t.lane), u32::from(t.col))),
            _ => None,
        }
    }

    /// Whether the st at (g, i) has completed before the issue of the operation at (gm, im):
    /// `wait::st` in its warp, then, for another warp, a before-fence (or commit) that the
    /// issue knows through synchronization and its after-fence (reference §4.3, §4.4 pattern 4;
    /// the same witnesses as `tmem.rs`).
    fn st_done_before(&self, g: usize, i: usize, gm: usize, im: usize) -> bool {
        let evs = &self.u.warps[g];
        let reached = self.c.reached[g].min(evs.len());
        let is_wait_st =
            |s: &Stmt| matches!(s, Stmt::Tc(Op::Wait { form }) if form.op == WaitOp::St);
        let Some(w) = (i + 1..reached).find(|&j| is_wait_st(evs[j].stmt)) else {
            return false;
        };
        if g == gm {
            return w < im;
        }
        let fence = (w + 1..reached).find(|&j| {
            matches!(
                evs[j].stmt,
                Stmt::Tc(Op::Fence {
                    kind: FenceKind::BeforeThreadSync
                }) | Stmt::Tc(Op::Commit { .. })
            )
        });
        fence.is_some_and(|fi| self.c.issue_knows(gm, im, g, fi as u32))
    }

    /// Every value the cell (inst, lane, col) may hold when the operation at (gm, im) reads it:
    /// the values of every `tcgen05.st .32x32b` (no unpack) that writes it, provided at least
    /// one of them completed before the issue (otherwise the cell may be unwritten: OQ-9).
    /// `None` when another write may reach the cell (any other st shape, an MMA whose D region
    /// may cover it, an address that does not resolve to one allocation).
    fn values(&self, (inst, lane, col): (u32, u32, u32), gm: usize, im: usize) -> Option<Vec<u32>> {
        let ncols = self.a.insts.get(inst as usize)?.ncols;
        if lane >= 128 || col >= ncols {
            return None;
        }
        let mut vals = Vec::new();
        let mut before = false;
        for (g, evs) in self.u.warps.iter().enumerate() {
            for (i, e) in evs.iter().enumerate().take(self.c.reached[g]) {
                let Stmt::Tc(op) = e.stmt else { continue };
                match op {
                    Op::St {
                        form,
                        taddr,
                        split,
                        seed,
                        ..
                    } => {
                        let (x, l, c) = self.resolve(taddr, g, i)?;
                        if x != inst {
                            continue;
                        }
                        let (lanes, cols) = match form.shape {
                            LdStShape::S32x32b => (32, 1),
                            LdStShape::S16x64b => (16, 2),
                            LdStShape::S16x128b => (16, 4),
                            LdStShape::S16x256b => (16, 8),
                            LdStShape::S16x32bx2 => (16, 1),
                            LdStShape::S32x64b => (32, 2),
                        };
                        let cols =
                            cols * form.num.count() * if form.pack.is_some() { 2 } else { 1 };
                        let covers = |l: u32, c: u32| {
                            (l..l + lanes).contains(&lane) && (c..c + cols).contains(&col)
                        };
                        let second = split.filter(|_| form.shape == LdStShape::S16x32bx2);
                        let hit2 = second.is_some_and(|s| covers(l + (s >> 16), c + (s & 0xFFFF)));
                        if !covers(l, c) && !hit2 {
                            continue;
                        }
                        if form.shape != LdStShape::S32x32b || form.pack.is_some() {
                            return None;
                        }
                        vals.push(values::st_value(*seed, lane - l, col - c));
                        before |= self.st_done_before(g, i, gm, im);
                    }
                    Op::Mma(m) => {
                        let (x, l, c) = self.resolve(&m.d, g, i)?;
                        let n = Idesc::new(m.form.kind, m.idesc).n().max(8);
                        if x == inst && lane >= l && (c..c + n).contains(&col) {
                            return None;
                        }
                    }
                    Op::Cp { .. } | Op::Shift { .. } => return None,
                    _ => {}
                }
            }
        }
        before.then_some(vals)
    }
}

/// The TMEM data rules of sparse and block-scaled MMAs, decided from `tcgen05.st` data:
/// MMA-SP-META-TF32 and MMA-SP-META-MXF4 (UB, §9.7.16.10.8.1/.3), MMA-SP-META-24 (unstated
/// consequence, OQ-23) and MMA-BS-DUP (unstated, §9.7.16.10.7).
///
/// Which cells and nibbles/bytes an MMA reads is shown only in figures (OQ-29), so a breach is
/// reported only where it is certain whatever the figures say:
/// - metadata: the cell at the `[sp-meta-tmem]` address (the start of the metadata, read with
///   sparsity selector 0) holds, in every value it may have, no valid nibble at all;
/// - scale factors: the cell at `[scale-A/B-tmem]` and its copies at the same lane of the other
///   three 32-lane partitions hold values that differ in every byte between two partitions.
///
/// Programs with `::2` operations, cp or shift are not judged (their writes may reach the
/// cells in ways the oracle does not place exactly).
pub fn data(u: &Unrolled<'_>, c: &Clocks, a: &AllocAnalysis, f: &mut Findings) {
    let has_data_rule = |m: &Mma| m.sp_meta.is_some() || m.form.block_scale;
    let mut any = false;
    for evs in &u.warps {
        for e in evs {
            if !matches!(e.kind, EvKind::Mma | EvKind::Cp | EvKind::Shift) {
                continue;
            }
            match e.stmt {
                Stmt::Tc(Op::Mma(m)) => {
                    if m.form.cta_group == CtaGroup::Two {
                        return;
                    }
                    any |= has_data_rule(m);
                }
                Stmt::Tc(Op::Cp { .. } | Op::Shift { .. }) => return,
                _ => {}
            }
        }
    }
    if !any {
        return;
    }
    let cells = Cells { u, c, a };
    for (g, evs) in u.warps.iter().enumerate() {
        for (i, e) in evs.iter().enumerate().take(c.reached[g]) {
            let Stmt::Tc(Op::Mma(m)) = e.stmt else {
                continue;
            };
            let d = Idesc::new(m.form.kind, m.idesc);
            if let (true, Some(t)) = (m.form.sp, &m.sp_meta) {
                let (rule, valid): (RuleId, &[u32]) = match m.form.kind {
                    MmaKind::Tf32 => (RuleId::MmaSpMetaTf32, &META_TF32),
                    MmaKind::Mxf4 | MmaKind::Mxf4nvf4 => (RuleId::MmaSpMetaMxf4, &META_SEVEN),
                    _ => (RuleId::MmaSpMeta24, &META_SEVEN),
                };
                // The selector places the metadata in figures only: judged with selector 0
                // (the mx kinds treat it as 0).
                let sel0 = d.layout != IdescLayout::A || d.sparsity_selector() == 0;
                if sel0
                    && let Some(x) = cells.resolve(t, g, i)
                    && let Some(vals) = cells.values(x, g, i)
                    && vals.iter().all(|v| all_nibbles_invalid(*v, valid))
                {
                    f.undefined.insert(rule);
                    f.note(format!(
                        "{rule}: the sparse metadata at lane {}, column {} holds {:#010x}: no nibble is a valid {} metadata value",
                        t.lane,
                        t.col,
                        vals[0],
                        m.form.kind.as_str()
                    ));
                }
            }
            if m.form.block_scale {
                for t in [&m.scale_a, &m.scale_b].into_iter().flatten() {
                    let Some((x, l, col)) = cells.resolve(t, g, i) else {
                        continue;
                    };
                    let parts: Option<Vec<Vec<u32>>> = (0..4)
                        .map(|k| cells.values((x, l % 32 + 32 * k, col), g, i))
                        .collect();
                    let Some(parts) = parts else { continue };
                    let split = (0..4).any(|j| {
                        (j + 1..4).any(|k| {
                            parts[j]
                                .iter()
                                .all(|v| parts[k].iter().all(|w| every_byte_differs(*v, *w)))
                        })
                    });
                    if split {
                        f.undefined.insert(RuleId::MmaBsDup);
                        f.note(format!(
                            "MMA-BS-DUP: the scale factors at lane {}, column {} differ in every byte between 32-lane partitions",
                            l % 32,
                            col
                        ));
                    }
                }
            }
        }
    }
}
