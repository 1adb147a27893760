//! Exact MMA results where the spec makes them exact: kinds i8 (integer arithmetic) and
//! f16 (f16 or bf16 A/B) / tf32 / f8f6f4 (e4m3 or e5m2 A/B) with inputs whose products and
//! sums are exact in an f32 accumulator whatever the accumulation order (OQ-19 leaves order,
//! rounding and intermediate precision open, so only results with no rounding anywhere are
//! exact): every product is an integer multiple of one grid step (1 for f16/bf16/tf32/i8,
//! 2^-8 for f8f6f4, whose elements are held scaled by 2^4, [`F8_SCALE`]) and the sum of the
//! magnitudes of the terms stays below 2^24 grid steps ([`Prepared::finish`]).
//!
//! Element formats (§9.7.16.10.1, the PTX ISA's "Alternate floating point data formats"):
//! bf16 is the high half of an f32; e5m2 is the high byte of an f16 (5 exponent bits, bias
//! 15, 2 mantissa bits, infinities and NaNs); e4m3 has 4 exponent bits (bias 7), 3 mantissa
//! bits, no infinities, and NaN only at S.1111.111 ([`fp8_value`]).
//!
//! The data layouts come from the ISA's figures, not the reference text (OQ-22, OQ-29); the
//! oracle uses them only when [`crate::Options::figure_layouts`] is set, and only for:
//! A and B in shared memory, K-major, no swizzle (core matrices of 8 rows × 16 bytes, LBO
//! between core matrices along K, SBO along M/N), and D in the data-path layouts A, B, D, E
//! and G (§9.7.16.10.5; derived and checked against CUTLASS in [`super::dp_layout`]).
//! Everything else is unspecified in value (its region and ordering are still modelled).

use tcgen05_ir::*;

/// What the oracle knows of a shared-memory data region at the MMA's issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionData {
    /// Element kind written by the region's fill.
    pub elem: FillElem,
    /// Fill seed.
    pub seed: u32,
    /// Region size in bytes.
    pub bytes: u32,
}

/// The shape (M, N) and kind of an exactly computable `cta_group::1` MMA, or `None`: M = 128
/// (data-path layout D), or `.ws` with M = 64 / 32 (layouts E / G: D's rows folded over the
/// lanes, [`super::dp_layout`]). A may come from shared memory ([`prepare`]) or, with
/// M = 128, TMEM ([`prepare_tmem_a`], with or without `.ashift`).
pub fn exact_shape(m: &Mma) -> Option<(u32, u32)> {
    let ws_m = if m.form.ws { [128, 64, 32] } else { [128; 3] };
    ws_m.iter().find_map(|&mm| shape_of(m, CtaGroup::One, mm))
}

/// (rows of D per CTA, N) of an exactly computable `cta_group::2` MMA, or `None`: M = 256
/// (data-path layout A, §9.7.16.10.5: each CTA of the pair holds 128 rows of D, row m of its
/// half in lane m, column n in column n of D) or dense M = 128 (layout B: 64 rows per CTA,
/// folded over the lanes, [`super::dp_layout`]). A in shared memory (CTA h supplies rows
/// M/2·h.. of A from its own shared memory, through the same descriptor), B's N rows split in
/// halves: rows 0..N/2 from the even CTA's shared memory, N/2..N from the odd CTA's
/// (§9.7.16.10: "B ... in Shared Memory of the current CTA and optionally in peer CTA"; the
/// simulator reads them the same way). With M = 256, A may also come from TMEM: CTA h's 128
/// rows of A from its own TMEM at `[a-tmem]`, row m in lane m as for `cta_group::1`
/// ([`tmem_a_row`]; layout A is layout D in each CTA), with or without `.ashift` (each CTA's
/// D row m ≥ 1 uses its A row m - 1; what D row 0 of either CTA uses is not stated: row 127
/// of the even CTA's A if the shift runs over the 256 rows, nothing stated if it runs per
/// CTA, so it is unspecified). With M = 128 (layout B: D row m in lanes m and m + 64, one
/// column half each), which lanes hold A's 64 rows is figure-only (OQ-22); CUTLASS keeps
/// them duplicated over the lane halves (`TmemAllocMode::Duplicated`: row m in lanes m and
/// m + 64), and where the program does so (every cell of lane m + 64 equal to lane m's,
/// `tmem::Ctx::pair_values`) each reading gives the same values: exact there, without
/// `.ashift` (D row 0 sits in two lanes of layout B).
/// With enable-input-d each CTA's cells add its own old D (MMA-ENABLE-D). Without
/// disable-output-lane (how bits 128-255 map onto the peer's lanes is open, OQ-31).
pub fn pair_shape(m: &Mma) -> Option<(u32, u32)> {
    if m.disable_output_lane.is_some() {
        return None;
    }
    let sizes: &[u32] = match m.a {
        MmaA::Tmem(_) if m.form.ashift => &[256],
        _ => &[256, 128],
    };
    sizes
        .iter()
        .find_map(|&mm| shape_of(m, CtaGroup::Two, mm))
        .map(|(mm, n)| (mm / 2, n))
}

/// [`exact_shape`] and [`pair_shape`]: the checks for `.cta_group` `cg` and M `want_m`.
fn shape_of(m: &Mma, cg: CtaGroup, want_m: u32) -> Option<(u32, u32)> {
    let f = &m.form;
    // `::fill` reads A from memory like `::discard`; `::use` / `::lastuse` read the collector
    // buffer, exact only where it holds this MMA's own A (`tmem::Ctx::collector_holds_a`).
    let coll_ok = f.collector.is_none_or(|c| {
        matches!(c.op, CollectorOp::Discard | CollectorOp::Fill) || c.buf == CollectorBuf::A
    });
    if f.sp || f.block_scale || f.cta_group != cg || !coll_ok {
        return None;
    }
    // `.ws` with M = 128 uses data-path layout D like the non-ws form (§9.7.16.10.5: M = 128,
    // `::1`, ".ws: either"); a zero-column mask other than 0 zeroes columns of B
    // (§9.7.16.10.6), not modelled: unspecified.
    if f.ws && m.zero_col_mask.is_some_and(|z| z != 0) {
        return None;
    }
    if f.ashift && !matches!(m.a, MmaA::Tmem(_)) {
        return None;
    }
    if !matches!(
        f.kind,
        MmaKind::F16 | MmaKind::Tf32 | MmaKind::I8 | MmaKind::F8f6f4
    ) {
        return None;
    }
    let d = m.idesc;
    let mm = (d >> 24 & 0x1F) << 4;
    let n = (d >> 17 & 0x3F) << 3;
    // Dense, no transposes, no B-reuse shift, M = `want_m`.
    if mm != want_m || d & 0b111 != 0 || d & (0b11 << 15) != 0 || d >> 30 != 0 || n == 0 {
        return None;
    }
    exact_types(f.kind, d).then_some((mm, n))
}

/// Whether the D, A and B types of instruction descriptor `d` (layout (a)) are ones whose
/// elements the oracle reads exactly, for kind `kind` (also the sparse forms,
/// `super::mma_sparse`).
pub(crate) fn exact_types(kind: MmaKind, d: u32) -> bool {
    let (dt, at, bt) = (d >> 4 & 3, d >> 7 & 7, d >> 10 & 7);
    // F32 D, or F16 D for kind::f16 and kind::f8f6f4 (code 0: the low half of each cell
    // is stated, the high half is not, MMA-D-UNPACKED, `super::d16`);
    // A/B type codes (§9.7.16.10.2, idesc bits 7-9 and 10-12): f16 0 / bf16 1 (the same for
    // A and B), tf32 2, u8 0 / s8 1, e4m3 0 / e5m2 1 (the 6- and 4-bit f8f6f4 types stay
    // unspecified: their packing in shared memory is figure-only, OQ-29).
    match kind {
        MmaKind::F16 => dt <= 1 && at == bt && at <= 1,
        MmaKind::Tf32 => dt == 1 && at == 2 && bt == 2,
        MmaKind::I8 => dt == 2 && at <= 1 && bt <= 1,
        MmaKind::F8f6f4 => dt <= 1 && at <= 1 && bt <= 1,
        _ => false,
    }
}

/// Whether an MMA of an exact kind has F16 D (idesc bits 4-5, D type code 0 for kind::f16
/// and kind::f8f6f4, §9.7.16.4.2).
pub(crate) fn d16_of(m: &Mma) -> bool {
    matches!(m.form.kind, MmaKind::F16 | MmaKind::F8f6f4) && m.idesc >> 4 & 3 == 0
}

fn f16_value(h: u16) -> f64 {
    let sign = if h >> 15 == 1 { -1.0 } else { 1.0 };
    let e = i32::from(h >> 10 & 0x1F);
    let frac = f64::from(h & 0x3FF);
    match e {
        0 => sign * frac * pow2(-24),
        31 => f64::NAN,
        _ => sign * (1.0 + frac / 1024.0) * pow2(e - 15),
    }
}

/// A bf16 value: the high half of an f32.
fn bf16_value(h: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(h) << 16))
}

/// An OCP FP8 value (§9.7.16.10.1): e5m2 (`e5m2` set: 5 exponent bits, bias 15, 2 mantissa
/// bits, exponent 31 infinite or NaN) or e4m3 (4 exponent bits, bias 7, 3 mantissa bits, no
/// infinities, NaN only where exponent and mantissa are all ones). Exponent 0 is subnormal.
fn fp8_value(b: u8, e5m2: bool) -> f64 {
    let (eb, mb, bias) = if e5m2 { (5, 2, 15) } else { (4, 3, 7) };
    let sign = if b >> 7 == 1 { -1.0 } else { 1.0 };
    let e = i32::from(b >> mb) & ((1 << eb) - 1);
    let frac = f64::from(b & ((1 << mb) - 1));
    let one = f64::from(1u8 << mb);
    if e5m2 && e == 31 {
        return if frac == 0.0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if !e5m2 && b & 0x7F == 0x7F {
        return f64::NAN;
    }
    match e {
        0 => sign * frac / one * pow2(1 - bias),
        _ => sign * (1.0 + frac / one) * pow2(e - bias),
    }
}

/// kind::f8f6f4 elements are held scaled by this power of two, so that every e4m3 / e5m2
/// value that is a multiple of 1/16 is an integer ([`Prepared`]'s integer operands); the dot
/// products are then scaled by its square ([`Prepared::finish`] scales back).
const F8_SCALE: f64 = 16.0;

/// [`fp8_value`] of every byte times [`F8_SCALE`], e4m3 (`[0]`) and e5m2 (`[1]`), computed
/// once: the kind::f8f6f4 elements as [`Prepared`] holds them, looked up per element.
fn f8_table() -> &'static [[f64; 256]; 2] {
    static T: std::sync::OnceLock<[[f64; 256]; 2]> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        std::array::from_fn(|alt| std::array::from_fn(|b| fp8_value(b as u8, alt == 1) * F8_SCALE))
    })
}

/// The grid step of a kind's products as [`Prepared`] holds them (scaled back by it).
fn unit(kind: MmaKind) -> f64 {
    if kind == MmaKind::F8f6f4 {
        1.0 / (F8_SCALE * F8_SCALE)
    } else {
        1.0
    }
}

/// An element of kind `kind` from its bits (`v`, low bits; `alt`: type code 1 of the kind,
/// bf16 / s8 / e5m2), as [`Prepared`] holds it (f8f6f4 scaled by [`F8_SCALE`]).
fn elem_value(kind: MmaKind, alt: bool, v: u32) -> f64 {
    match kind {
        MmaKind::F16 if alt => bf16_value(v as u16),
        MmaKind::F16 => f16_value(v as u16),
        MmaKind::Tf32 => f64::from(f32::from_bits(v)),
        MmaKind::F8f6f4 => f8_table()[usize::from(alt)][usize::from(v as u8)],
        _ if alt => f64::from(v as u8 as i8),
        _ => f64::from(v as u8),
    }
}

/// 2^k, exactly, for a normal exponent (`-1022 <= k <= 1023`; `2f64.powi(k)` is the same
/// value, through a call).
pub(crate) fn pow2(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Whether a finite `x` is an integer (`x.fract() == 0.0`, without the call): from 2^52 up
/// every f64 is one; below, the round trip through `i64` is exact.
fn is_integer(x: f64) -> bool {
    x.abs() >= 4_503_599_627_370_496.0 || (x as i64) as f64 == x
}

/// Element bytes and K (dense) of a kind.
pub(crate) fn elem_k(kind: MmaKind) -> (u32, u32) {
    match kind {
        MmaKind::F16 => (2, 16),
        MmaKind::Tf32 => (4, 8),
        _ => (1, 32),
    }
}

/// Whether an operand's descriptor and data can give exact elements at all (the checks of
/// every element that do not depend on its position).
pub(crate) fn operand_ok(desc: &SmemDesc, data: &RegionData, kind: MmaKind, alt: bool) -> bool {
    if desc.swizzle != 0
        || desc.lbo_abs
        || desc.base_offset != 0
        || desc.fixed != 1
        || desc.reserved != 0
    {
        return false;
    }
    // The fills whose elements are small integers of the type (`alt`: type code 1): bf16
    // pairs are the halves of an f32 small integer (its high half, and 0), or two bf16 small
    // integers (`Bf16Small`); e5m2 bytes are the high byte of an f16 small integer (and 0),
    // e4m3 reads of the same bytes 0, ±1.5, ±2, ±2.5, ±3.
    if kind == MmaKind::F16 && alt && data.elem == FillElem::Bf16Small {
        return true;
    }
    // e4m3 bytes 0x7B..0x7E (`ScaleSmall`): 352..448, exponent field 15, which e4m3 uses for
    // numbers (§9.7.16.10.1). Multiples of 32, so their products with the small-integer
    // fills' elements lie on the grid; whether a sum is exact is `Prepared::finish`'s check.
    if kind == MmaKind::F8f6f4 && !alt && data.elem == FillElem::ScaleSmall {
        return true;
    }
    let want = match kind {
        MmaKind::F16 if alt => FillElem::Tf32Small,
        MmaKind::F16 | MmaKind::F8f6f4 => FillElem::F16Small,
        MmaKind::Tf32 => FillElem::Tf32Small,
        _ => FillElem::I8Small,
    };
    // Arbitrary words are exact only as 8-bit integers.
    data.elem == want || (kind == MmaKind::I8 && data.elem == FillElem::Word)
}

/// Reads the elements (row, 0..K) of an operand, rows `0..rows`, row-major into `out`,
/// through its descriptor (K-major, no swizzle; [`operand_ok`] checked). `None` if an element
/// is outside the region or not exact.
///
/// A row's K elements fill whole 16-byte chunks (K × element bytes is 32 for every kind):
/// each chunk's words are generated once, then its elements decoded.
fn read_rows(
    desc: &SmemDesc,
    data: &RegionData,
    kind: MmaKind,
    flags: (bool, bool),
    rows: u32,
    out: &mut Vec<f64>,
) -> Option<()> {
    read_rows_k(desc, data, kind, flags, rows, elem_k(kind).1, out)
}

/// [`read_rows`] with `kk` elements per row instead of the kind's dense K (a multiple of
/// 16 bytes of elements): the K = 2 × dense rows of B of a sparse MMA (`super::mma_sparse`).
pub(crate) fn read_rows_k(
    desc: &SmemDesc,
    data: &RegionData,
    kind: MmaKind,
    flags: (bool, bool),
    rows: u32,
    kk: u32,
    out: &mut Vec<f64>,
) -> Option<()> {
    for row in 0..rows {
        read_row(desc, data, kind, flags, row, kk, out)?;
    }
    Some(())
}

/// The byte offset of chunk `j` of row `row` of an operand (K-major, no swizzle); also the
/// source layout of `tcgen05.cp` (`tmem::Ctx::cp_value`) and of the packed 4-bit operands of
/// `super::mma_scaled`.
pub(crate) fn chunk_base(desc: &SmemDesc, row: u32, j: u64) -> u64 {
    u64::from(desc.offset)
        + u64::from(row % 8) * 16
        + u64::from(row / 8) * u64::from(desc.sbo_enc) * 16
        + j * u64::from(desc.lbo_enc) * 16
}

/// The 16 bytes of a region's fill from byte `base` on (little-endian in its words), each
/// fill word generated once: one 16-byte chunk of an operand row ([`chunk_base`]).
pub(crate) fn chunk_bytes(data: &RegionData, base: u64) -> [u8; 16] {
    let w0 = base / 4;
    let nwords = if base.is_multiple_of(4) { 4 } else { 5 };
    let mut bytes = [0u8; 20];
    for (t, b) in bytes.chunks_exact_mut(4).enumerate().take(nwords) {
        let w = values::fill_word(data.elem, data.seed, (w0 + t as u64) as u32);
        b.copy_from_slice(&w.to_le_bytes());
    }
    let off = (base % 4) as usize;
    let mut out = [0u8; 16];
    out.copy_from_slice(&bytes[off..off + 16]);
    out
}

/// Whether every chunk of rows `0..rows` lies inside the region (what [`read_rows`] checks
/// first for each chunk).
fn rows_inside(desc: &SmemDesc, data: &RegionData, kind: MmaKind, rows: u32) -> bool {
    rows_inside_k(desc, data, kind, rows, elem_k(kind).1)
}

/// [`rows_inside`] for rows of `kk` elements ([`read_rows_k`]).
pub(crate) fn rows_inside_k(
    desc: &SmemDesc,
    data: &RegionData,
    kind: MmaKind,
    rows: u32,
    kk: u32,
) -> bool {
    let (eb, _) = elem_k(kind);
    let limit = u64::from(data.bytes.max(16));
    (0..rows)
        .all(|row| (0..u64::from(kk * eb / 16)).all(|j| chunk_base(desc, row, j) + 16 <= limit))
}

/// [`read_rows_k`] for the one row `row` (`kk` elements).
fn read_row(
    desc: &SmemDesc,
    data: &RegionData,
    kind: MmaKind,
    (alt, neg): (bool, bool),
    row: u32,
    kk: u32,
    out: &mut Vec<f64>,
) -> Option<()> {
    let (eb, _) = elem_k(kind);
    debug_assert_eq!(kk * eb % 16, 0);
    let limit = u64::from(data.bytes.max(16));
    let per_chunk = u64::from(16 / eb);
    for j in 0..u64::from(kk * eb / 16) {
        let base = chunk_base(desc, row, j);
        // The chunk's last element ends at `base + 16`.
        if base + 16 > limit {
            return None;
        }
        let w0 = base / 4;
        let mut words = [0u32; 5];
        let nwords = if base.is_multiple_of(4) { 4 } else { 5 };
        for (t, w) in words.iter_mut().enumerate().take(nwords) {
            *w = values::fill_word(data.elem, data.seed, (w0 + t as u64) as u32);
        }
        // The chunk's elements, decoded by kind (one loop per kind).
        let mut buf = [0f64; 16];
        let at = |e: u64| {
            let addr = base + e * u64::from(eb);
            (words[(addr / 4 - w0) as usize], (addr % 4) * 8)
        };
        match kind {
            MmaKind::F16 => {
                for (e, x) in buf.iter_mut().enumerate().take(per_chunk as usize) {
                    let (word, shift) = at(e as u64);
                    *x = elem_value(kind, alt, word >> shift);
                }
            }
            MmaKind::Tf32 => {
                for (e, x) in buf.iter_mut().enumerate().take(per_chunk as usize) {
                    let (word, _) = at(e as u64);
                    // tf32 keeps 10 mantissa bits: a Word fill may hold more; only exact
                    // ones count.
                    if (word & 0x1FFF) != 0 {
                        return None;
                    }
                    *x = f64::from(f32::from_bits(word & 0xFFFF_E000));
                }
            }
            _ => {
                for (e, x) in buf.iter_mut().enumerate().take(per_chunk as usize) {
                    let (word, shift) = at(e as u64);
                    *x = elem_value(kind, alt, word >> shift);
                }
            }
        }
        let chunk = &mut buf[..per_chunk as usize];
        if chunk.iter().any(|v| !v.is_finite()) {
            return None;
        }
        if neg {
            chunk.iter_mut().for_each(|v| *v = -*v);
        }
        out.extend_from_slice(chunk);
    }
    Some(())
}

/// Largest magnitude of an element kept as an integer ([`Prepared`]'s integer operands): with
/// K ≤ 32, every product and partial sum stays below 2^27, exact in `i32` and in `f64`.
const INT_ELEM_MAX: f64 = 2047.0;

/// `x` as an integer, if it is one of magnitude at most [`INT_ELEM_MAX`].
fn small_int(x: f64) -> Option<i32> {
    (x.abs() <= INT_ELEM_MAX && f64::from(x as i32) == x).then_some(x as i32)
}

/// The operands as integers, if every element is an integer of magnitude at most
/// [`INT_ELEM_MAX`].
fn as_ints(v: &[f64]) -> Option<Vec<i32>> {
    v.iter()
        .all(|&x| x.abs() <= INT_ELEM_MAX && f64::from(x as i32) == x)
        .then(|| v.iter().map(|&x| x as i32).collect())
}

/// The operands of an exact MMA, read once: A by row and B by column (negation applied), so
/// that any D cell is one K-long dot product, computed only when some reader asks for it
/// (demand-driven: an ld reads a few columns of the M × N result).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// M.
    pub mm: u32,
    /// N.
    pub n: u32,
    kk: u32,
    kind: MmaKind,
    enable_input_d: bool,
    /// F16 D (idesc D type code 0): a cell's value is the f16 in its low half, the high half
    /// is not stated (MMA-D-UNPACKED, [`super::d16`]).
    pub d16: bool,
    /// 2^-scale (MMA-SCALE-D-SEM), once.
    grain: f64,
    /// The value of one unit of the dot products as held (`unit(kind)`: f8f6f4 elements are
    /// scaled by [`F8_SCALE`]).
    unit: f64,
    arow: Vec<f64>,
    bcol: Vec<f64>,
    /// `arow` and `bcol` as integers, when every element is a small integer (the fill
    /// kinds the generators use): the dot products are then exact integer sums, equal to the
    /// `f64` ones (no rounding below 2^53), computed with integer arithmetic.
    ints: Option<(Vec<i32>, Vec<i32>)>,
    /// A and B read on demand instead (`arow`, `bcol` and `ints` empty), when every element
    /// is known to be a small integer ([`lazy_ok`]): an ld reads a few rows and columns of
    /// the M × N result, and the operands hold (M + N) × K elements.
    lazy: Option<std::cell::RefCell<(LazyOperand, LazyOperand)>>,
    /// A block-scaled MMA (`super::mma_scaled`): its scale factors bound to `arow` and
    /// `bcol`; the cells are then its block sums ([`super::mma_scaled::Scales::cell`]).
    scaled: Option<Box<super::mma_scaled::Scaled>>,
    /// A block-scaled MMA's B read on demand (`bcol` empty then).
    scaled_b: Option<std::cell::RefCell<LazyOperand<f64>>>,
}

/// The rows (0..`rows`, `kk` elements each: 32, or 64 for the B of a sparse MMA,
/// row-major) of an operand of kind::f8f6f4 elements (e4m3,
/// or e5m2 with `alt`; negated with `neg`) held as integers of the [`unit`] grid, read through
/// its descriptor as [`prepare`] reads them; `None` where [`operand_ok`] or [`read_rows`]
/// misses. Also the element reads of the block-scaled kind::mxf8f6f4 (`super::mma_scaled`),
/// whose e4m3 / e5m2 elements are those of kind::f8f6f4 (§9.7.16.10.1).
pub(crate) fn f8_operand(
    desc: &SmemDesc,
    data: &RegionData,
    alt: bool,
    neg: bool,
    rows: u32,
    kk: u32,
) -> Option<Vec<f64>> {
    if !operand_ok(desc, data, MmaKind::F8f6f4, alt) {
        return None;
    }
    let mut out = Vec::with_capacity((rows * kk) as usize);
    read_rows_k(desc, data, MmaKind::F8f6f4, (alt, neg), rows, kk, &mut out)?;
    Some(out)
}

impl Prepared {
    /// A block-scaled MMA's scale factors, if it is one.
    pub(crate) fn scales(&self) -> Option<&super::mma_scaled::Scales> {
        self.scaled.as_deref().map(|s| &s.scales)
    }

    /// A block-scaled MMA's operands (`super::mma_scaled::prepare_scaled`): M × K and
    /// N × K elements as integers of the grid step `step` (products: `step` is the step of
    /// one product), and the scale factors. B is `bcol` (N × K), or read on demand from
    /// `lazy_b` (`bcol` empty).
    #[allow(clippy::too_many_arguments)] // the fields of a block-scaled MMA, set once
    pub(crate) fn scaled(
        (mm, n, kk): (u32, u32, u32),
        enable_input_d: bool,
        arow: Vec<f64>,
        (bcol, lazy_b): (Vec<f64>, Option<LazyOperand<f64>>),
        step: f64,
        scales: super::mma_scaled::Scales,
    ) -> Prepared {
        let scaled =
            super::mma_scaled::Scaled::new(scales, (mm as usize, n as usize), kk as usize, step);
        Prepared {
            mm,
            n,
            kk,
            kind: MmaKind::F8f6f4,
            enable_input_d,
            // Block-scaled kinds accumulate into an f32 D (§9.7.16.10.7).
            d16: false,
            grain: 1.0,
            unit: step,
            arow,
            bcol,
            ints: None,
            lazy: None,
            scaled: Some(Box::new(scaled)),
            scaled_b: lazy_b.map(std::cell::RefCell::new),
        }
    }
}

/// Operands read whole: A's rows and B's columns of K elements each, and the same as
/// integers when every element is one ([`Prepared`]'s `arow`, `bcol`, `ints`).
type WholeOperands = (Vec<f64>, Vec<f64>, Option<(Vec<i32>, Vec<i32>)>);

impl Prepared {
    /// The operands of an exact sparse MMA (`super::mma_sparse`): A's rows expanded to K
    /// elements (zeros where the metadata says), B's columns of K elements, `(M, N, K)`;
    /// the rest as [`prepare`] sets it from the instruction.
    pub(crate) fn from_rows(
        m: &Mma,
        (mm, n, kk): (u32, u32, u32),
        arow: Vec<f64>,
        bcol: Vec<f64>,
    ) -> Option<Prepared> {
        if arow.len() != (mm * kk) as usize || bcol.len() != (n * kk) as usize {
            return None;
        }
        let ints = as_ints(&arow).zip(as_ints(&bcol));
        Some(Prepared::unscaled(m, (mm, n, kk), (arow, bcol, ints), None))
    }
}

impl Prepared {
    /// An exact MMA of `(M, N, K)` whose operands are read on demand (`a` by row, `b` by
    /// column, [`LazyOperand`]); the rest as [`prepare`] sets it from the instruction.
    fn lazy(m: &Mma, dims: (u32, u32, u32), a: LazyOperand, b: LazyOperand) -> Prepared {
        let none = (Vec::new(), Vec::new(), None);
        Prepared::unscaled(m, dims, none, Some((a, b)))
    }

    /// The one constructor of a [`Prepared`] without block scaling: shape, kind and the D
    /// options from the instruction (§9.7.16.10.7: f16 D, scale-input-d as a grain of
    /// 2^-scale), the operands read whole (`(arow, bcol, ints)`) or on demand (`lazy`).
    fn unscaled(
        m: &Mma,
        (mm, n, kk): (u32, u32, u32),
        (arow, bcol, ints): WholeOperands,
        lazy: Option<(LazyOperand, LazyOperand)>,
    ) -> Prepared {
        let kind = m.form.kind;
        Prepared {
            mm,
            n,
            kk,
            kind,
            enable_input_d: m.enable_input_d,
            d16: d16_of(m),
            grain: 2f64.powi(-i32::from(m.scale_input_d.unwrap_or(0))),
            unit: unit(kind),
            arow,
            bcol,
            ints,
            lazy: lazy.map(std::cell::RefCell::new),
            scaled: None,
            scaled_b: None,
        }
    }
}

/// Reads the operands of an exact MMA; `None` for a whole-result miss (a shape, layout or
/// element that is not exact).
pub fn prepare(m: &Mma, a: &RegionData, b: &RegionData) -> Option<Prepared> {
    let (mm, n) = exact_shape(m)?;
    let MmaA::Desc(ad) = &m.a else { return None };
    let kind = m.form.kind;
    let (_, kk) = elem_k(kind);
    let d = m.idesc;
    let (sa, sb) = (d >> 7 & 7 == 1, d >> 10 & 7 == 1);
    let (na, nb) = (d >> 13 & 1 == 1, d >> 14 & 1 == 1);
    if !operand_ok(ad, a, kind, sa) || !operand_ok(&m.b, b, kind, sb) {
        return None;
    }
    if lazy_ok(ad, &m.b, kind) {
        // Every element is a small integer (see `lazy_ok`): only the bounds can miss, and
        // the rows are read when a cell needs them.
        if !rows_inside(ad, a, kind, mm) || !rows_inside(&m.b, b, kind, n) {
            return None;
        }
        return Some(Prepared::lazy(
            m,
            (mm, n, kk),
            LazyOperand::new(ad, a, (sa, na), mm, kk),
            LazyOperand::new(&m.b, b, (sb, nb), n, kk),
        ));
    }
    let mut arow = Vec::with_capacity((mm * kk) as usize);
    read_rows(ad, a, kind, (sa, na), mm, &mut arow)?;
    let mut bcol = Vec::with_capacity((n * kk) as usize);
    read_rows(&m.b, b, kind, (sb, nb), n, &mut bcol)?;
    let ints = if kind == MmaKind::I8 {
        // Bytes (negated or not): integers of magnitude at most 255, what `as_ints` keeps.
        let cast = |v: &[f64]| v.iter().map(|&x| x as i32).collect::<Vec<i32>>();
        debug_assert!(as_ints(&arow).is_some() && as_ints(&bcol).is_some());
        Some((cast(&arow), cast(&bcol)))
    } else {
        as_ints(&arow).zip(as_ints(&bcol))
    };
    Some(Prepared::unscaled(m, (mm, n, kk), (arow, bcol, ints), None))
}

/// [`prepare`] for a `cta_group::2` MMA ([`pair_shape`]): the 128 rows of D one CTA of the
/// pair holds, from that CTA's A data `a` and the B data of the even and odd CTAs (`b`).
pub fn prepare_pair(m: &Mma, a: &RegionData, b: [&RegionData; 2]) -> Option<Prepared> {
    let (rows, _) = pair_shape(m)?;
    let MmaA::Desc(ad) = &m.a else { return None };
    let kind = m.form.kind;
    let (_, kk) = elem_k(kind);
    let d = m.idesc;
    let (sa, na) = (d >> 7 & 7 == 1, d >> 13 & 1 == 1);
    if !operand_ok(ad, a, kind, sa) {
        return None;
    }
    if lazy_ok(ad, &m.b, kind) {
        // As in `prepare`: only the bounds can miss, rows read when a cell needs them.
        if !rows_inside(ad, a, kind, rows) {
            return None;
        }
        return pair_lazy(m, LazyOperand::new(ad, a, (sa, na), rows, kk), b);
    }
    let mut arow = Vec::with_capacity((rows * kk) as usize);
    read_rows(ad, a, kind, (sa, na), rows, &mut arow)?;
    prepare_pair_rows(m, arow, b)
}

/// [`prepare_pair_rows`] with A given as `a` and B ([`lazy_ok`]) read on demand from its two
/// halves (columns `0..N/2` from `b[0]`, the others from `b[1]`).
fn pair_lazy(m: &Mma, a: LazyOperand, b: [&RegionData; 2]) -> Option<Prepared> {
    let (rows, n) = pair_shape(m)?;
    let (_, kk) = elem_k(m.form.kind);
    let b = lazy_b(m, &[*b[0], *b[1]], n, kk)?;
    Some(Prepared::lazy(m, (rows, n, kk), a, b))
}

/// B's `n` columns of `kk` elements read on demand through the MMA's B descriptor from `b`
/// (one region, or the even and odd CTAs' halves of a `cta_group::2` MMA, `n / 2` columns
/// each), when every element is a small integer ([`lazy_one`], [`operand_ok`]) and every
/// column lies inside its region; `None` otherwise (B is then read whole, where the same
/// misses are found).
fn lazy_b(m: &Mma, b: &[RegionData], n: u32, kk: u32) -> Option<LazyOperand> {
    let kind = m.form.kind;
    let d = m.idesc;
    let (sb, nb) = (d >> 10 & 7 == 1, d >> 14 & 1 == 1);
    let halves = match b {
        [x] => [x, x],
        [x, y] => [x, y],
        _ => return None,
    };
    let part = n / b.len() as u32;
    let fits =
        |h: &RegionData| operand_ok(&m.b, h, kind, sb) && rows_inside_k(&m.b, h, kind, part, kk);
    if !lazy_one(&m.b, kind) || !b.iter().all(fits) {
        return None;
    }
    Some(LazyOperand::halves(&m.b, halves, (sb, nb), (part, n), kk))
}

impl Prepared {
    /// [`Prepared::from_rows`] (and [`prepare_tmem_a`], [`prepare_pair_rows`]) with B's
    /// columns read when a cell first needs them ([`lazy_b`] from `b`), A's rows given
    /// (`arow`, M × K); `None` where an element of A is not a small integer or B is not read
    /// lazily (then read it whole: the same values, the integer sums of [`int_dot`]).
    pub(crate) fn lazy_rows(
        m: &Mma,
        (mm, n, kk): (u32, u32, u32),
        arow: &[f64],
        b: &[RegionData],
    ) -> Option<Prepared> {
        if arow.len() != (mm * kk) as usize {
            return None;
        }
        let lb = lazy_b(m, b, n, kk)?;
        let a = LazyOperand::ready(as_ints(arow)?, mm);
        Some(Prepared::lazy(m, (mm, n, kk), a, lb))
    }
}

/// [`prepare_pair`] with A's rows given (`arow`, rows × K, negated as the idesc says): from
/// shared memory, or from TMEM ([`tmem_a_row`], M = 256).
pub fn prepare_pair_rows(m: &Mma, arow: Vec<f64>, b: [&RegionData; 2]) -> Option<Prepared> {
    let (rows, n) = pair_shape(m)?;
    let kind = m.form.kind;
    let (_, kk) = elem_k(kind);
    let d = m.idesc;
    let (sb, nb) = (d >> 10 & 7 == 1, d >> 14 & 1 == 1);
    if arow.len() != (rows * kk) as usize || b.iter().any(|b| !operand_ok(&m.b, b, kind, sb)) {
        return None;
    }
    if let Some(p) = Prepared::lazy_rows(m, (rows, n, kk), &arow, &[*b[0], *b[1]]) {
        // Every element of A an integer and B's all small integers (`lazy_ok`): the same
        // integer sums, B's columns read when a cell needs them.
        return Some(p);
    }
    let mut bcol = Vec::with_capacity((n * kk) as usize);
    for half in b {
        read_rows(&m.b, half, kind, (sb, nb), n / 2, &mut bcol)?;
    }
    let ints = as_ints(&arow).zip(as_ints(&bcol));
    Some(Prepared {
        mm: rows,
        n,
        kk,
        kind,
        enable_input_d: m.enable_input_d,
        d16: d16_of(m),
        grain: 2f64.powi(-i32::from(m.scale_input_d.unwrap_or(0))),
        unit: unit(kind),
        arow,
        bcol,
        ints,
        lazy: None,
        scaled: None,
        scaled_b: None,
    })
}

/// The elements (row, 0..K) of A in TMEM from the row's 8 cells (§9.7.16.10, "[a-tmem]"; the
/// data-path layout of M = 128 `::1`: row m in lane m, the row's K elements packed from the
/// first column on, little-endian in each 32-bit cell, 32 bytes per row for every kind),
/// negated with `neg`, into `out` (f8f6f4 scaled by [`F8_SCALE`]; `alt`: type code 1, bf16 /
/// s8 / e5m2). `None` where an element is not a small integer (what [`prepare_tmem_a`]
/// needs: a float that is not might round, OQ-19; a tf32 cell with low mantissa bits set).
pub fn tmem_a_row(
    kind: MmaKind,
    alt: bool,
    neg: bool,
    cells: &[u32],
    out: &mut Vec<f64>,
) -> Option<()> {
    let (eb, kk) = elem_k(kind);
    for k in 0..kk {
        let byte = k * eb;
        let cell = *cells.get((byte / 4) as usize)?;
        if kind == MmaKind::Tf32 && cell & 0x1FFF != 0 {
            return None;
        }
        let v = elem_value(kind, alt, cell >> (8 * (byte % 4)));
        // Floats are exact only as small integers (`prepare_tmem_a`): give up at the
        // first element that is not one.
        let small = v.is_finite() && v.abs() <= INT_ELEM_MAX && f64::from(v as i32) == v;
        if !small {
            return None;
        }
        out.push(if neg { -v } else { v });
    }
    Some(())
}

/// [`prepare`] for A taken from TMEM: `arow` holds A's rows (M × K, row-major, negated as the
/// instruction descriptor says: [`tmem_a_row`]). Exact only where every element is a small
/// integer (f16, tf32: arbitrary values would round in the accumulator, OQ-19) or a byte (i8).
pub fn prepare_tmem_a(m: &Mma, arow: Vec<f64>, b: &RegionData) -> Option<Prepared> {
    let (mm, n) = exact_shape(m)?;
    let kind = m.form.kind;
    let (_, kk) = elem_k(kind);
    let d = m.idesc;
    let sb = d >> 10 & 7 == 1;
    if arow.len() != (mm * kk) as usize || !operand_ok(&m.b, b, kind, sb) {
        return None;
    }
    let nb = d >> 14 & 1 == 1;
    if let Some(p) = Prepared::lazy_rows(m, (mm, n, kk), &arow, std::slice::from_ref(b)) {
        // B's elements are small integers (`lazy_ok`), A's too: B's columns are read when a
        // cell needs them.
        return Some(p);
    }
    let mut bcol = Vec::with_capacity((n * kk) as usize);
    read_rows(&m.b, b, kind, (sb, nb), n, &mut bcol)?;
    let ints = Some(as_ints(&arow)?).zip(as_ints(&bcol));
    ints.as_ref()?;
    Some(Prepared::unscaled(m, (mm, n, kk), (arow, bcol, ints), None))
}

/// Whether [`read_rows`] would find every element of both operands exact and a small
/// integer (what [`as_ints`] keeps), wherever the rows lie inside their regions: i8 elements
/// are bytes; f16 and tf32 elements read from 4-byte aligned chunks are the fill's own fields
/// (`FillElem::F16Small` and `Tf32Small`, which [`operand_ok`] requires: integers in
/// [-4, 3], finite, tf32 low bits clear). Every chunk of a row is 16-byte aligned relative to
/// the descriptor's offset, so the offset decides.
fn lazy_ok(ad: &SmemDesc, bd: &SmemDesc, kind: MmaKind) -> bool {
    lazy_one(ad, kind) && lazy_one(bd, kind)
}

/// [`lazy_ok`] for the one operand of descriptor `d`.
fn lazy_one(d: &SmemDesc, kind: MmaKind) -> bool {
    matches!(kind, MmaKind::I8 | MmaKind::F8f6f4) || d.offset.is_multiple_of(4)
}

/// An operand read one row (of A) or column (of B) at a time, when a cell first needs it;
/// or given whole ([`LazyOperand::ready`]: A's rows from TMEM). Its elements are integers
/// (`i32`, [`read_row_ints`]) or, for block-scaled B, the `f64` elements of
/// `super::mma_scaled` ([`LazyElem`]).
#[derive(Debug, Clone)]
pub(crate) struct LazyOperand<T = i32> {
    /// Where rows not yet read come from (`None`: every row is in `ints`).
    src: Option<LazySource>,
    /// The rows read so far, K elements each (valid where `have`).
    ints: Vec<T>,
    have: Vec<bool>,
}

/// An element type a [`LazyOperand`] holds: how one row of it is read.
pub(crate) trait LazyElem: Copy + Default {
    /// Reads row `row` of `data` through `src` into `out` (K elements); `None` where the read
    /// misses.
    fn read(
        src: &LazySource,
        data: &RegionData,
        kind: MmaKind,
        row: u32,
        out: &mut [Self],
    ) -> Option<()>;
}

impl LazyElem for i32 {
    fn read(
        src: &LazySource,
        data: &RegionData,
        kind: MmaKind,
        row: u32,
        out: &mut [i32],
    ) -> Option<()> {
        read_row_ints(&src.desc, data, kind, src.flags, row, out)
    }
}

impl LazyElem for f64 {
    /// The elements of a block-scaled operand ([`super::mma_scaled::prepare_scaled`]): packed
    /// e2m1 ([`super::mma_scaled::fp4_row`]) or kind::f8f6f4 ([`read_row`]).
    fn read(
        src: &LazySource,
        data: &RegionData,
        kind: MmaKind,
        row: u32,
        out: &mut [f64],
    ) -> Option<()> {
        if src.fp4 {
            return super::mma_scaled::fp4_row(&src.desc, data, src.flags.1, row, out);
        }
        let mut v = Vec::with_capacity(out.len());
        read_row(
            &src.desc,
            data,
            kind,
            src.flags,
            row,
            out.len() as u32,
            &mut v,
        )?;
        (v.len() == out.len()).then(|| out.copy_from_slice(&v))
    }
}

/// The shared-memory operand a [`LazyOperand`] reads its rows from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LazySource {
    desc: SmemDesc,
    /// The region data of rows `0..split` and of rows `split..` (read as rows
    /// `0..`): the B halves of the even and odd CTAs of a `cta_group::2` MMA
    /// ([`prepare_pair_rows`]); one data twice otherwise.
    data: [RegionData; 2],
    split: u32,
    /// (type code 1: s8 / bf16 / e5m2, negated).
    flags: (bool, bool),
    /// Packed e2m1 elements (block-scaled kind::mxf4 / mxf4nvf4, `f64` rows only).
    fp4: bool,
}

impl<T: LazyElem> LazyOperand<T> {
    /// `rows` rows of `kk` elements read through `desc` from `data`, each when first needed.
    pub(crate) fn new(
        desc: &SmemDesc,
        data: &RegionData,
        flags: (bool, bool),
        rows: u32,
        kk: u32,
    ) -> Self {
        Self::halves(desc, [data, data], flags, (rows, rows), kk)
    }

    /// `rows.1` rows of `kk` elements: rows `0..rows.0` read from `data[0]`, the others from
    /// `data[1]` (row `r` there is its row `r - rows.0`).
    pub(crate) fn halves(
        desc: &SmemDesc,
        data: [&RegionData; 2],
        flags: (bool, bool),
        (split, rows): (u32, u32),
        kk: u32,
    ) -> Self {
        LazyOperand {
            src: Some(LazySource {
                desc: *desc,
                data: [*data[0], *data[1]],
                split,
                flags,
                fp4: false,
            }),
            ints: vec![T::default(); (rows * kk) as usize],
            have: vec![false; rows as usize],
        }
    }

    /// The same operand with packed e2m1 elements ([`LazySource::fp4`]).
    pub(crate) fn fp4(mut self) -> Self {
        if let Some(s) = &mut self.src {
            s.fp4 = true;
        }
        self
    }

    /// Every row given (`ints`, K each, row-major).
    fn ready(ints: Vec<T>, rows: u32) -> Self {
        LazyOperand {
            src: None,
            ints,
            have: vec![true; rows as usize],
        }
    }

    /// Row `row` (K integers), read now if not yet; `None` if the read misses (never, after
    /// [`lazy_ok`] and [`rows_inside`]; kept as "not exact" rather than a panic).
    pub(crate) fn row(&mut self, row: u32, kind: MmaKind, kk: usize) -> Option<&[T]> {
        let r = row as usize;
        let out = self.ints.get_mut(r * kk..(r + 1) * kk)?;
        if !*self.have.get(r)? {
            let s = self.src.as_ref()?;
            let (data, row) = if row < s.split {
                (&s.data[0], row)
            } else {
                (&s.data[1], row - s.split)
            };
            T::read(s, data, kind, row, out)?;
            self.have[r] = true;
        }
        Some(out)
    }

    /// Reads rows `rows` now where not yet ([`LazyOperand::row`] of each), and gives them
    /// (K integers each, consecutive).
    fn rows(&mut self, rows: std::ops::Range<u32>, kind: MmaKind, kk: usize) -> Option<&[T]> {
        let (r0, r1) = (rows.start as usize, rows.end as usize);
        if !self.have.get(r0..r1)?.iter().all(|&h| h) {
            for r in rows {
                self.row(r, kind, kk)?;
            }
        }
        self.ints.get(r0 * kk..r1 * kk)
    }
}

/// The integer an f16 holds (`None`: not an integer, infinite or NaN): what [`f16_value`]
/// gives, without the floating point.
fn f16_int(h: u16) -> Option<i32> {
    let e = i32::from(h >> 10 & 0x1F);
    let frac = i32::from(h & 0x3FF);
    let mag = match e {
        0 if frac == 0 => 0,
        0 | 31 => return None,
        _ => {
            // (1 + frac / 1024) * 2^(e - 15) = (1024 + frac) * 2^(e - 25).
            let m = 1024 + frac;
            let s = e - 25;
            if s >= 0 {
                m << s
            } else if m & ((1 << -s) - 1) == 0 {
                m >> -s
            } else {
                return None;
            }
        }
    };
    Some(if h >> 15 == 1 { -mag } else { mag })
}

/// [`read_row`] into integers, for the operands of [`lazy_ok`] (every element a small
/// integer): the same elements, decoded straight from the fill words, into `out` (K of
/// them). `None` where [`read_row`] misses (a chunk outside the region, a non-finite element)
/// or an element is not an integer.
fn read_row_ints(
    desc: &SmemDesc,
    data: &RegionData,
    kind: MmaKind,
    (alt, neg): (bool, bool),
    row: u32,
    out: &mut [i32],
) -> Option<()> {
    let (eb, _) = elem_k(kind);
    debug_assert_eq!(out.len() as u32 * eb % 16, 0);
    let limit = u64::from(data.bytes.max(16));
    let per_chunk = (16 / eb) as usize;
    let sign = if neg { -1 } else { 1 };
    for (j, chunk) in out.chunks_exact_mut(per_chunk).enumerate() {
        let base = chunk_base(desc, row, j as u64);
        // The chunk's last element ends at `base + 16`.
        if base + 16 > limit {
            return None;
        }
        let w0 = base / 4;
        let word = |t: u64| values::fill_word(data.elem, data.seed, (w0 + t) as u32);
        match kind {
            MmaKind::F16 | MmaKind::Tf32 if !base.is_multiple_of(4) => {
                // Not a lazy operand (`lazy_ok` asks for 4-byte aligned offsets).
                return None;
            }
            MmaKind::F16 => {
                for (t, pair) in chunk.chunks_exact_mut(2).enumerate() {
                    let w = word(t as u64);
                    let int = |h: u16| {
                        if alt {
                            small_int(bf16_value(h))
                        } else {
                            f16_int(h)
                        }
                    };
                    pair[0] = sign * int(w as u16)?;
                    pair[1] = sign * int((w >> 16) as u16)?;
                }
            }
            MmaKind::Tf32 => {
                for (t, x) in chunk.iter_mut().enumerate() {
                    let w = word(t as u64);
                    // tf32 keeps 10 mantissa bits: only exact words count (as in `read_row`).
                    if (w & 0x1FFF) != 0 {
                        return None;
                    }
                    let v = f32::from_bits(w);
                    let i = v as i32;
                    if !v.is_finite() || i as f32 != v {
                        return None;
                    }
                    *x = sign * i;
                }
            }
            _ => {
                for (x, &b) in chunk.iter_mut().zip(&chunk_bytes(data, base)) {
                    *x = sign
                        * match kind {
                            MmaKind::F8f6f4 => small_int(elem_value(kind, alt, u32::from(b)))?,
                            _ if alt => i32::from(b as i8),
                            _ => i32::from(b),
                        };
                }
            }
        }
    }
    Some(())
}

/// The exact integer dot product of `a` and `b`, with the sum of the magnitudes of its terms
/// when `magnitudes` is set (0 otherwise: kind::i8 results do not use it, see
/// [`Prepared::finish`]).
fn int_dot(a: &[i32], b: &[i32], magnitudes: bool) -> (f64, f64) {
    if !magnitudes {
        let sum: i32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        return (f64::from(sum), 0.0);
    }
    let (mut sum, mut abs) = (0i32, 0i32);
    for (x, y) in a.iter().zip(b) {
        let t = x * y;
        sum += t;
        abs += t.abs();
    }
    (f64::from(sum), f64::from(abs))
}

impl Prepared {
    /// [`Prepared::cell`] of cells (r, c) for `c` in `cols`, with no old value (`old` =
    /// `None`), into `out` (one per column); `None` as soon as one of them is `None`. The
    /// same values, with the row of A fetched once.
    pub fn row_cells(&self, r: u32, cols: std::ops::Range<u32>, out: &mut [u32]) -> Option<()> {
        self.row_cells_old(r, cols, None, out)
    }

    /// [`Prepared::row_cells`] with the old D value of every cell (`old[k]` for column
    /// `cols.start + k`, MMA-ENABLE-D / MMA-SCALE-D-SEM) when `old` is given: what
    /// [`Prepared::cell`] gives each cell with `Some(old[k])`.
    pub fn row_cells_old(
        &self,
        r: u32,
        cols: std::ops::Range<u32>,
        old: Option<&[u32]>,
        out: &mut [u32],
    ) -> Option<()> {
        debug_assert_eq!(out.len(), cols.len());
        debug_assert!(old.is_none_or(|o| o.len() == cols.len()));
        let old_at = |k: usize| old.map(|o| o[k]);
        let Some(lazy) = &self.lazy else {
            for (k, (x, c)) in out.iter_mut().zip(cols).enumerate() {
                *x = self.cell(r, c, old_at(k))?;
            }
            return Some(());
        };
        if r >= self.mm || cols.end > self.n {
            // Some cell is outside the result: `cell` gives None there (and the cells before
            // it do not matter to a caller that stops at the first None).
            for (k, (x, c)) in out.iter_mut().zip(cols).enumerate() {
                *x = self.cell(r, c, old_at(k))?;
            }
            return Some(());
        }
        let kk = self.kk as usize;
        let mut lazy = lazy.borrow_mut();
        let (la, lb) = &mut *lazy;
        let arow = la.row(r, self.kind, kk)?;
        // The columns of B (read once, then every cell is a dot product of two slices).
        let bcols = lb.rows(cols, self.kind, kk)?;
        for (k, (x, bc)) in out.iter_mut().zip(bcols.chunks_exact(kk)).enumerate() {
            let (sum, abs) = int_dot(arow, bc, self.kind != MmaKind::I8);
            *x = self.finish(sum, abs, old_at(k))?;
        }
        Some(())
    }

    /// D at (row, col): `Some(bits)` where exact, `None` otherwise. `old` is the old D cell
    /// value (used when enable-input-d is set).
    pub fn cell(&self, r: u32, c: u32, old: Option<u32>) -> Option<u32> {
        if r >= self.mm || c >= self.n {
            return None;
        }
        let kk = self.kk as usize;
        let (ra, rb) = (
            r as usize * kk..(r as usize + 1) * kk,
            c as usize * kk..(c as usize + 1) * kk,
        );
        if let Some(sc) = &self.scaled {
            let a = self.arow.get(ra)?;
            let Some(lb) = &self.scaled_b else {
                let b = self.bcol.get(rb)?;
                return sc.cell(a, b, r, c, self.unit, self.enable_input_d, old);
            };
            let mut lb = lb.borrow_mut();
            let b = lb.row(c, self.kind, kk)?;
            return sc.cell(a, b, r, c, self.unit, self.enable_input_d, old);
        }
        let (sum, abs) = match (&self.lazy, &self.ints) {
            (Some(lazy), _) => {
                let mut lazy = lazy.borrow_mut();
                let (la, lb) = &mut *lazy;
                let kind = self.kind;
                int_dot(
                    la.row(r, kind, kk)?,
                    lb.row(c, kind, kk)?,
                    kind != MmaKind::I8,
                )
            }
            // Exact integers (see `ints`): the same sums as the f64 loop below.
            (None, Some((ai, bi))) => int_dot(&ai[ra], &bi[rb], self.kind != MmaKind::I8),
            (None, None) => {
                let mut sum = 0f64;
                let mut abs = 0f64;
                for (x, y) in self.arow[ra].iter().zip(&self.bcol[rb]) {
                    let t = x * y;
                    // Integer products only (the grid `finish` assumes): any other would
                    // need its own grid step to be known exact.
                    if !is_integer(t) {
                        return None;
                    }
                    sum += t;
                    abs += t.abs();
                }
                (sum, abs)
            }
        };
        self.finish(sum, abs, old)
    }

    /// A cell's value from its dot product `sum` (and the sum of the magnitudes of its terms,
    /// `abs`) and its old value.
    fn finish(&self, sum: f64, abs: f64, old: Option<u32>) -> Option<u32> {
        if self.kind == MmaKind::I8 {
            // MMA-ENABLE-D: D = A·B (+ D); exact while no s32 overflow (OQ-19).
            let prev = if self.enable_input_d {
                old.map(|v| i64::from(v as i32))
            } else {
                Some(0)
            };
            prev.and_then(|p| {
                let v = p + sum as i64;
                (i64::from(i32::MIN)..=i64::from(i32::MAX))
                    .contains(&v)
                    .then_some(v as i32 as u32)
            })
        } else {
            // MMA-SCALE-D-SEM: D = A·B + D·2^-s; exact when every term is a multiple of one
            // grid step g (the finer of the products' unit and the 2^-s grain, both powers of
            // two) and the magnitudes add up to less than 2^24 steps: every partial sum, in
            // any order, is then an f32 (OQ-19).
            let (grain, unit) = (self.grain, self.unit);
            let g = grain.min(unit);
            let prev = if !self.enable_input_d {
                Some(0.0)
            } else if self.d16 {
                // The old f16 sits in the low half of the cell (MMA-D-UNPACKED).
                old.map(|v| f16_value(v as u16) * grain)
            } else {
                old.map(|v| f64::from(f32::from_bits(v)) * grain)
            };
            if self.d16 {
                // `super::d16`: fewer than 2^11 grid steps, exact in f16 in any order.
                return prev.and_then(|p| {
                    let exact = p.is_finite()
                        && is_integer(p / g)
                        && (abs * unit + p.abs()) / g < super::d16::F16_STEPS;
                    exact
                        .then(|| super::d16::f16_bits(sum * unit + p))
                        .flatten()
                        .map(u32::from)
                });
            }
            prev.and_then(|p| {
                let exact =
                    p.is_finite() && is_integer(p / g) && (abs * unit + p.abs()) / g < 16_777_216.0;
                exact.then(|| ((sum * unit + p) as f32).to_bits())
            })
        }
    }
}

/// The D values (row-major M × N) of an exact MMA: `Some(v)` per written cell (`None` where
/// the value is not exact), or `None` for a whole-result miss. `old` gives the old D cell
/// values when enable-input-d is set. (Every cell at once; the oracle itself uses
/// [`prepare`] and [`Prepared::cell`] on demand.)
pub fn compute(
    m: &Mma,
    a: &RegionData,
    b: &RegionData,
    old: &dyn Fn(u32, u32) -> Option<u32>,
) -> Option<Vec<Option<u32>>> {
    let p = prepare(m, a, b)?;
    let mut out = Vec::with_capacity((p.mm * p.n) as usize);
    for r in 0..p.mm {
        for c in 0..p.n {
            out.push(p.cell(r, c, old(r, c)));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests;
