//! Exact results of block-scaled MMAs (`.block_scale`, §9.7.16.10.7; reference §3.7):
//! `D = (A·scale_A)·(B·scale_B) + D`, where row m of A is split along K into blocks of
//! `K / SFA_N` elements, block j multiplied by scale_A[m][j], and column n of B likewise by
//! scale_B[j][n].
//!
//! The oracle computes kind::mxf8f6f4 with e4m3 / e5m2 A and B (the f8f6f4 element formats,
//! §9.7.16.10.1, read as [`mma::f8_operand`] reads them) and UE8M0 scale factors,
//! `scale_vec::1X` / `.block32` (one factor per row of A and per column of B at K = 32), and
//! kinds mxf4 / mxf4nvf4 with e2m1 A and B ([`fp4_value`], packed two to a byte:
//! [`fp4_operand`]) and UE8M0 factors, `scale_vec::2X` / `.block32` (two blocks of 32 at
//! K = 64) and, for mxf4nvf4, `scale_vec::4X` / `.block16` (four blocks of 16) with UE8M0
//! or UE4M3 factors ([`ue4m3`]); K = 96 (OQ-32) stays unspecified;
//! `cta_group::1`, M = 128, A in shared memory or TMEM, B in shared memory, K-major, no
//! transpose; and the same with sparse A (`.sp`, K doubled, A expanded through its
//! metadata: [`super::mma_sparse`], [`ScaledForm::sp`]). Every other
//! block-scaled form is left unspecified with its reason ([`scaled_form`]'s `Err`, naming the
//! open question), and so is a result whose scale factors are not duplicated (MMA-BS-DUP) or
//! would leave the exact range ([`Scales::cell`]).
//!
//! # Where the scale factors are in TMEM (derived from §9.7.16.10.7.2-3)
//!
//! The ISA gives the scale-factor layouts only as figures (OQ-29). Read from the
//! `scale_vec::1X` / `block32` figures of scale_A (M × 1) and scale_B (1 × N), and the text
//! around them:
//!
//! - the factors are bytes; a 32-bit TMEM cell holds four, and the scale-factor ID of the
//!   instruction descriptor (SFA_ID at idesc bits 29-30, SFB_ID at bits 4-5, §9.7.16.4.2)
//!   selects the byte "sub-column" of the cell (0-3 for mxf8f6f4, MMA-BS-SFID);
//! - the M factors of scale_A are laid out 32 to a column: factor m in lane `m mod 32` of
//!   column `[scale-A-tmem] + m / 32` (M = 128: four columns), and likewise factor n of
//!   scale_B in lane `n mod 32` of column `[scale-B-tmem] + n / 32` (N / 32 columns, rounded
//!   up);
//! - that 32-lane picture is duplicated into all four 32-lane partitions of TMEM
//!   (MMA-BS-DUP: "must be duplicated"): lanes `m mod 32 + 32q`, q = 0..3, hold the same
//!   byte. Which copy the hardware reads is not stated, so the oracle computes a result only
//!   where the four copies agree.
//!
//! With several factors per row (`SFA_N` > 1: 2X, 4X) block j sits in byte `SFA_ID + j` of
//! the same cell (the 2X figures select half-word sub-columns with SF ID 0 or 2, the 4X
//! figures the whole cell with ID 0, MMA-BS-SFID).
//!
//! # Packed e2m1 operands (kinds mxf4, mxf4nvf4)
//!
//! A row of K = 64 e2m1 elements is 32 bytes, laid out in shared memory like the 32-byte
//! rows of the 8-bit kinds (two 16-byte core-matrix rows, [`mma::chunk_base`]); element k is
//! the nibble `k mod 2` (low nibble first) of byte `k / 2`: the "packed" 4-bit format of
//! §9.7.16.10.1 (the figure places element 0 in the least significant bits, OQ-29). A from
//! TMEM packs the same 32 bytes into the row's 8 cells, little-endian.
//!
//! # Scale-factor values and when a result is exact
//!
//! A UE8M0 byte e is the power of two `2^(e - 127)`; 0xFF is NaN (§5.2.3, OCP MX). A UE4M3
//! byte is the 7-bit unsigned E4M3 of §5.2.3 ([`ue4m3`]). Each factor is held as
//! `mult · 2^exp` with an integer `mult` (1 for UE8M0, at most 15 for UE4M3).
//!
//! The order and precision of the intermediate steps are open (OQ-19): the hardware may
//! form `A·scale_A`, `B·scale_B`, `scale_A·scale_B` or the element products first. A cell is
//! exact where every one of these candidates is an f32 normal (or zero) for every element
//! and block it uses, and the sum is exact under the same condition as an unscaled one
//! (every term a multiple of one grid step of at least 2^-126, fewer than 2^24 steps and
//! less than 2^127 in all): then every order computes the same f32 without rounding
//! ([`Scales::cell`]). A cell outside these bounds (an extreme factor, a subnormal UE8M0
//! 0x00 = 2^-127) is left unspecified; its neighbours with other factors may be exact.

use super::mma::{self, Prepared};
use tcgen05_ir::*;

/// A block-scaled MMA whose result the oracle computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaledForm {
    /// M (rows of D, one per lane).
    pub m: u32,
    /// N.
    pub n: u32,
    /// Scale factors per row of A and per column of B (`SFA_N`, `SFB_M`).
    pub blocks: u32,
    /// The byte of the scale_A cells the first factor is in (SFA_ID, idesc bits 29-30).
    pub sfa_id: u32,
    /// The byte of the scale_B cells (SFB_ID, idesc bits 4-5).
    pub sfb_id: u32,
    /// `cta_group::2` with M = 256: each CTA of the pair holds 128 rows of D (data-path
    /// layout A, row m of its half in lane m), from its own A; B's rows 0..N/2 come from the
    /// even CTA's shared memory, N/2..N from the odd CTA's (as for the unscaled kinds,
    /// `mma::pair_shape`).
    pub pair: bool,
    /// Packed e2m1 elements (kinds mxf4, mxf4nvf4; K = 64), else e4m3 / e5m2 (K = 32).
    pub fp4: bool,
    /// UE4M3 scale factors (idesc bit 23 clear; mxf4nvf4 with 4X / block16 only), else
    /// UE8M0.
    pub ue4m3: bool,
    /// `.sp` (`super::mma_sparse`): A stored with half of K (the dense K above), expanded
    /// through the metadata; B and the products over twice that K. The factor counts are the
    /// table's for every K (§3.7: M × 1 for 1X, M × 2 for 2X, M × 4 for 4X), each block
    /// covering its share of the sparse K (the stored elements of a block's chunks are
    /// that share of the stored row, so a block is the same whichever K it is counted in).
    pub sp: bool,
}

impl ScaledForm {
    /// TMEM columns of scale_A and of scale_B (32 factors per column): scale_A holds the
    /// rows of D in the CTA (128).
    pub fn sf_cols(&self) -> (u32, u32) {
        (self.rows().div_ceil(32), self.n.div_ceil(32))
    }

    /// Rows of D (and of A) in each CTA.
    pub fn rows(&self) -> u32 {
        if self.pair { self.m / 2 } else { self.m }
    }
}

/// The form of a block-scaled MMA the oracle computes, or why it does not (the note of its
/// unspecified words, naming the open question).
pub fn scaled_form(m: &Mma) -> Result<ScaledForm, &'static str> {
    let f = &m.form;
    let d = m.idesc;
    if !f.block_scale {
        return Err("not block-scaled");
    }
    let fp4 = f.kind != MmaKind::Mxf8f6f4;
    let pair = f.cta_group == CtaGroup::Two;
    if f.ws {
        return Err("MMA-WS-KINDS: a block-scaled .ws MMA: unspecified");
    }
    // MMA-BS-VEC (§9.7.16.10.7.1): mxf8f6f4 1X / block32; mxf4 2X / block32 (the default);
    // mxf4nvf4 2X / block32 or 4X / block16 (MMA-BS-NVF4-EXPLICIT: stated).
    let blocks = match (f.kind, f.scale_vec) {
        (MmaKind::Mxf8f6f4, None | Some(ScaleVec::X1 | ScaleVec::Block32)) => 1,
        (MmaKind::Mxf4, None) => 2,
        (MmaKind::Mxf4 | MmaKind::Mxf4nvf4, Some(ScaleVec::X2 | ScaleVec::Block32)) => 2,
        (MmaKind::Mxf4nvf4, Some(ScaleVec::X4 | ScaleVec::Block16)) => 4,
        _ => return Err("MMA-BS-VEC: a scale-vector size not valid for the kind: unspecified"),
    };
    if f.collector.is_some_and(|c| c.op != CollectorOp::Discard) {
        return Err(
            "OQ-29: a block-scaled MMA with a collector buffer (not modelled): unspecified",
        );
    }
    // idesc layouts (b) and (c), §9.7.16.4.2: bits 0-3 (bit 2 dense) and 6, 24-26 reserved,
    // and 31 (mxf8f6f4; the K selector of the mxf4 kinds, 1 = K 96, left open: OQ-32) and
    // 12 (mxf4 kinds: B type is bits 10-11); transposes (15, 16) off; scale type (23) UE8M0
    // = 1; M >> 7 at 27-28.
    if fp4 && d >> 31 == 1 {
        return Err(
            "OQ-32: a K = 96 block-scaled MMA (its scale-factor counts and IDs contradict each other): unspecified",
        );
    }
    // Bit 2 is the sparse flag: set exactly for `.sp` (the mx kinds treat the selector bits
    // 0-1 as 0, §9.7.16.10.8.4; they are reserved here).
    if (d >> 2 & 1 == 1) != f.sp {
        return Err(
            "OQ-24: a block-scaled MMA whose idesc sparse bit differs from its form: unspecified",
        );
    }
    let reserved =
        d & 0b1011 | d & 1 << 6 | d & 0b111 << 24 | d & 1 << 31 | d & u32::from(fp4) << 12;
    let (at, bt) = (d >> 7 & 7, d >> 10 & 7);
    let mm = (d >> 27 & 3) << 7;
    let n = (d >> 17 & 0x3F) << 3;
    if reserved != 0 || d >> 15 & 3 != 0 {
        return Err("OQ-24: a block-scaled MMA with reserved or transpose bits set: unspecified");
    }
    // Scale type (bit 23): UE8M0 = 1; UE4M3 = 0 only for mxf4nvf4 with four factors per
    // row (MMA-BS-VEC, reference §3.7 table).
    let ue4m3 = d >> 23 & 1 == 0;
    if ue4m3 && (f.kind != MmaKind::Mxf4nvf4 || blocks != 4) {
        return Err("MMA-BS-VEC: UE4M3 scale factors outside mxf4nvf4 4X / block16: unspecified");
    }
    // Element types: e4m3 0 / e5m2 1 for mxf8f6f4; E2M1 = 1 for the mxf4 kinds.
    let types_ok = if fp4 {
        at == 1 && bt & 3 == 1
    } else {
        at <= 1 && bt <= 1
    };
    if !types_ok {
        return Err(
            "OQ-29: e2m3 / e3m2 / e2m1 elements of mxf8f6f4 (their padding in shared memory is given only in figures): unspecified",
        );
    }
    if pair && mm == 128 {
        return Err(
            "OQ-29: a cta_group::2 block-scaled MMA with M = 128 (data-path layout B: which factors the folded rows use is given only in figures): unspecified",
        );
    }
    if mm != if pair { 256 } else { 128 } || n == 0 || (pair && !n.is_multiple_of(16)) {
        return Err("MMA-SHAPE-VALID: a block-scaled M or N outside the shape table: unspecified");
    }
    Ok(ScaledForm {
        m: mm,
        n,
        blocks,
        sfa_id: d >> 29 & 3,
        sfb_id: d >> 4 & 3,
        pair,
        fp4,
        ue4m3,
        sp: f.sp,
    })
}

/// One scale factor's value, `mult · 2^exp` (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Factor {
    /// The integer significand: 1 for UE8M0, 0..=15 for UE4M3.
    pub mult: u32,
    /// The power of two.
    pub exp: i32,
}

impl Factor {
    /// The value as an f64 (exact: at most 4 significant bits, exponents within ±140).
    pub fn value(self) -> f64 {
        f64::from(self.mult) * mma::pow2(self.exp)
    }
}

/// 2^-126, the smallest f32 normal.
const F32_MIN_NORMAL: f64 = f64::from_bits((1023 - 126) << 52);

/// 2^127: every f32 normal is below it.
const F32_OVER: f64 = f64::from_bits((1023 + 127) << 52);

/// Whether `lo` and `hi` (`lo <= hi`, both non-negative) lie in the f32 normal range.
fn normal(lo: f64, hi: f64) -> bool {
    lo >= F32_MIN_NORMAL && hi < F32_OVER
}

/// The checks of [`Scales::cell`] that one block of one operand's row (or column) passes or
/// fails whatever the other operand: its factor `f` has a value that is zero or an f32 normal,
/// and every non-zero element of `elems` (integers of `elem_unit`) times it is an f32 normal.
fn side_ok(f: Option<Factor>, elems: &[f64], elem_unit: f64) -> bool {
    let Some(f) = f else { return false };
    let s = f.value();
    let (mut max, mut min) = (0f64, f64::INFINITY);
    for &x in elems {
        let x = x.abs();
        if x != 0.0 {
            (max, min) = (max.max(x), min.min(x));
        }
    }
    (s == 0.0 || normal(s, s))
        && (max == 0.0 || s == 0.0 || normal(min * elem_unit * s, max * elem_unit * s))
}

/// The most blocks a row has (`ScaledForm::blocks`: 1, 2 or 4): [`row_sides`] gives one bit
/// each.
const MAX_BLOCKS: usize = 8;

/// [`side_ok`] of each block of one row of A (or column of B) `row`, whose block j has the
/// factor `factors[j]`: bit j set where block j passes. None set with no blocks, more than
/// [`MAX_BLOCKS`], or a row they do not divide.
fn row_sides(factors: &[Option<Factor>], blocks: usize, row: &[f64], elem_unit: f64) -> u16 {
    if blocks == 0 || blocks > MAX_BLOCKS || !row.len().is_multiple_of(blocks) {
        return 0;
    }
    let mut bits = 0;
    for (j, elems) in row.chunks_exact(row.len() / blocks).enumerate() {
        let ok = side_ok(factors.get(j).copied().flatten(), elems, elem_unit);
        bits |= u16::from(ok) << j;
    }
    bits
}

/// Largest magnitude of an element for [`block_dot`]'s reordered sum: products below 2^40,
/// and the sums of up to 2^12 of them below 2^53, exact in `f64`.
const ANY_ORDER_MAX: f64 = 1_048_576.0;

/// Whether every element of `v` is an integer of magnitude at most [`ANY_ORDER_MAX`], and
/// there are at most 2^12 a row (`kk`): every product and partial sum of a block is then an
/// exact `f64`, so [`block_dot`] may add in any order.
fn any_order(v: &[f64], kk: usize) -> bool {
    kk <= 4096
        && v.iter()
            .all(|&x| x.abs() <= ANY_ORDER_MAX && (x as i64) as f64 == x)
}

/// The dot product of one block and the sum of the magnitudes of its terms, added in `k`
/// order; with `any_order` (both operands [`any_order`]: every partial sum exact) four
/// running sums at a time, the same values.
fn block_dot(a: &[f64], b: &[f64], any_order: bool) -> (f64, f64) {
    let (mut dot, mut mag) = (0f64, 0f64);
    if !any_order {
        for (x, y) in a.iter().zip(b) {
            let t = x * y;
            dot += t;
            mag += t.abs();
        }
        return (dot, mag);
    }
    let (mut d4, mut m4) = ([0f64; 4], [0f64; 4]);
    let (ac, bc) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for i in 0..4 {
            let t = x[i] * y[i];
            d4[i] += t;
            m4[i] += t.abs();
        }
    }
    for (x, y) in ar.iter().zip(br) {
        let t = x * y;
        dot += t;
        mag += t.abs();
    }
    (
        dot + (d4[0] + d4[1]) + (d4[2] + d4[3]),
        mag + (m4[0] + m4[1]) + (m4[2] + m4[3]),
    )
}

/// A UE8M0 byte (§5.2.3: 8 exponent bits, bias 127, no mantissa): `2^(e - 127)`; 0xFF is
/// NaN (`None`).
pub fn ue8m0(e: u8) -> Option<Factor> {
    (e != 0xFF).then_some(Factor {
        mult: 1,
        exp: i32::from(e) - 127,
    })
}

/// A UE4M3 byte (§5.2.3: "a 7-bit unsigned floating-point format with 4 bits for exponent
/// and 3 bits for mantissa", no infinity, "NaN value is limited to 0x7f", held in a byte
/// "having MSB bit padded with zero"; exponent bias 7 as for E4M3): exponent field e (bits
/// 3-6), mantissa m (bits 0-2); e = 0 is subnormal, `m/8 · 2^-6 = m · 2^-9`; otherwise
/// `(1 + m/8) · 2^(e - 7) = (8 + m) · 2^(e - 10)`. `Err` for NaN (0x7F) and for a byte with
/// bit 7 set (not a UE4M3 encoding).
pub fn ue4m3(b: u8) -> Result<Factor, &'static str> {
    if b & 0x80 != 0 {
        return Err(
            "OQ-19: a UE4M3 scale factor with bit 7 set (a 7-bit format whose byte has its MSB zero, §5.2.3): unspecified",
        );
    }
    if b == 0x7F {
        return Err("OQ-19: a UE4M3 scale factor is NaN (0x7F): unspecified");
    }
    let (e, m) = (i32::from(b >> 3), u32::from(b & 7));
    Ok(match e {
        0 => Factor { mult: m, exp: -9 },
        _ => Factor {
            mult: 8 + m,
            exp: e - 10,
        },
    })
}

/// The scale factors of one MMA: `a[row * blocks + j]`, `b[col * blocks + j]`; `None` for a
/// factor with no value (NaN, or a UE4M3 byte with bit 7 set), which leaves the cells that use
/// it unspecified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scales {
    blocks: u32,
    a: Vec<Option<Factor>>,
    b: Vec<Option<Factor>>,
    /// Why some cells may be left unspecified: a factor with no value, or one outside
    /// 2^-64 .. 2^64 (whose cells [`Scales::cell`] may leave); `None` when neither occurs.
    pub open: Option<&'static str>,
}

/// The values of `count` scale factors, `blocks` each, with the first in byte `id` of
/// their cell, from the cells of the factor matrix in TMEM: `cells` lane-major, 128 lanes ×
/// `cols` columns from the matrix's address (the layout of the module documentation), each
/// byte a UE4M3 (`ue4m3`) or else a UE8M0: `Err` for a factor with no value, with its note.
/// `Err` as a whole names why they give no exact result.
pub fn decode_factors(
    cells: &[u32],
    cols: u32,
    count: u32,
    (blocks, id): (u32, u32),
    ue4m3: bool,
) -> Result<Vec<Result<Factor, &'static str>>, &'static str> {
    if id + blocks > 4 {
        return Err("MMA-BS-SFID: the scale-factor ID selects bytes past the cell: unspecified");
    }
    if cells.len() != (128 * cols) as usize || count.div_ceil(32) > cols {
        return Err("OQ-29: the scale factors were not read whole: unspecified");
    }
    let mut out = Vec::with_capacity((count * blocks) as usize);
    for i in 0..count {
        let (lane, col) = (i % 32, i / 32);
        for j in 0..blocks {
            let byte =
                |q: u32| cells[((lane + 32 * q) * cols + col) as usize] >> (8 * (id + j)) & 0xFF;
            let e = byte(0);
            if (1..4).any(|q| byte(q) != e) {
                return Err(
                    "MMA-BS-DUP: a scale factor differs between the 32-lane partitions of TMEM (which copy is read is not stated): unspecified",
                );
            }
            out.push(if ue4m3 {
                self::ue4m3(e as u8)
            } else {
                ue8m0(e as u8).ok_or("OQ-19: a UE8M0 scale factor is NaN (0xFF): unspecified")
            });
        }
    }
    Ok(out)
}

impl Scales {
    /// The scale factors of `form` from the cells of scale_A and scale_B (lane-major, 128
    /// lanes × [`ScaledForm::sf_cols`] each).
    pub fn read(form: &ScaledForm, sfa: &[u32], sfb: &[u32]) -> Result<Scales, &'static str> {
        let (ca, cb) = form.sf_cols();
        let a = decode_factors(sfa, ca, form.rows(), (form.blocks, form.sfa_id), form.ue4m3)?;
        let b = decode_factors(sfb, cb, form.n, (form.blocks, form.sfb_id), form.ue4m3)?;
        let wide = "OQ-19: a scale factor outside 2^-64 .. 2^64 (cells whose factors, their product or a scaled element leave the f32 normal range): unspecified";
        let open = a.iter().chain(&b).fold(None, |open, f| match f {
            Err(why) => Some(*why),
            Ok(f) if open.is_none() && f.mult != 0 && f.exp.abs() > 64 => Some(wide),
            _ => open,
        });
        Ok(Scales {
            blocks: form.blocks,
            a: a.into_iter().map(Result::ok).collect(),
            b: b.into_iter().map(Result::ok).collect(),
            open,
        })
    }

    /// D at (r, c) from row r of A and column c of B (`arow`, `bcol`: K elements each, as
    /// integers of the grid step `unit`), the old D cell `old` when enable-input-d is set
    /// (`prev_on`): `Some(bits)` where exact.
    ///
    /// Block j contributes `dot_j · unit · sA · sB` with `sA · sB = mA · mB · 2^(eA + eB)`.
    /// Every term is a multiple of the finest `unit · 2^(eA + eB)`, g; with g at least
    /// 2^-126 (no subnormal), the old value a multiple of g, fewer than 2^24 steps and less
    /// than 2^127 in the sum of the magnitudes, and every intermediate the hardware may form
    /// first (`sA`, `sB`, `sA · sB`, each element times its factor) an f32 normal or zero,
    /// every partial sum in any order is an f32, so the result is exact (OQ-19 leaves the
    /// order open; module documentation).
    #[allow(clippy::too_many_arguments)] // one cell: its operands, position, old value, flags
    pub fn cell(
        &self,
        arow: &[f64],
        bcol: &[f64],
        r: u32,
        c: u32,
        unit: f64,
        prev_on: bool,
        old: Option<u32>,
    ) -> Option<u32> {
        let nb = self.blocks as usize;
        let kk = arow.len();
        if nb == 0 || !kk.is_multiple_of(nb) || bcol.len() != kk {
            return None;
        }
        // One operand's elements are integers of `unit.sqrt()` (`unit` is a product's step).
        let elem_unit = unit.sqrt();
        let from = |v: &[Option<Factor>], i: u32| (i as usize * nb).min(v.len());
        let a_ok = row_sides(&self.a[from(&self.a, r)..], nb, arow, elem_unit);
        let b_ok = row_sides(&self.b[from(&self.b, c)..], nb, bcol, elem_unit);
        self.cell_checked(
            (arow, bcol),
            (r, c),
            unit,
            (prev_on, old),
            (a_ok, b_ok),
            false,
        )
    }

    /// [`Scales::cell`] with the checks of each side done ([`row_sides`] of row r and column
    /// c: bit j for block j), adding each block in any order where `any_order` allows
    /// ([`block_dot`]).
    fn cell_checked(
        &self,
        (arow, bcol): (&[f64], &[f64]),
        (r, c): (u32, u32),
        unit: f64,
        (prev_on, old): (bool, Option<u32>),
        (a_ok, b_ok): (u16, u16),
        any_order: bool,
    ) -> Option<u32> {
        let nb = self.blocks as usize;
        let kk = arow.len();
        if nb == 0 || !kk.is_multiple_of(nb) || bcol.len() != kk {
            return None;
        }
        let per = kk / nb;
        let (mut sum, mut abs) = (0f64, 0f64);
        let mut g = f64::INFINITY;
        for j in 0..nb {
            if j >= MAX_BLOCKS || (a_ok & b_ok) >> j & 1 == 0 {
                return None;
            }
            let (fa, fb) = (
                (*self.a.get(r as usize * nb + j)?)?,
                (*self.b.get(c as usize * nb + j)?)?,
            );
            let grid = unit * mma::pow2(fa.exp + fb.exp);
            g = g.min(grid);
            let both = f64::from(fa.mult * fb.mult);
            let sab = fa.value() * fb.value();
            if !(sab == 0.0 || normal(sab, sab)) {
                return None;
            }
            let k = j * per..(j + 1) * per;
            let (dot, mag) = block_dot(&arow[k.clone()], &bcol[k], any_order);
            sum += dot * grid * both;
            abs += mag * grid * both;
        }
        let prev = if prev_on {
            f64::from(f32::from_bits(old?))
        } else {
            0.0
        };
        let on_grid = |x: f64| (x / g).fract() == 0.0;
        let exact = prev.is_finite()
            && g >= F32_MIN_NORMAL
            && on_grid(prev)
            && (abs + prev.abs()) / g < 16_777_216.0
            && abs + prev.abs() < F32_OVER;
        exact.then(|| ((sum + prev) as f32).to_bits())
    }
}

/// A block-scaled MMA's factors bound to its operands: the checks of [`Scales::cell`] that
/// depend on one side only ([`side_ok`]) and whether its elements may be added in any order
/// ([`any_order`]), done once per row of A and column of B (when a cell first uses it)
/// instead of once per cell.
#[derive(Debug, Clone)]
pub(crate) struct Scaled {
    /// The factors.
    pub(crate) scales: Scales,
    /// Elements per row.
    kk: usize,
    /// The step of one element (the square root of a product's step).
    elem_unit: f64,
    /// Rows of A.
    m: usize,
    /// Per row of A, then per column of B: 0 until a cell uses it, then [`Scaled::DONE`],
    /// with bit j set where block j passes [`side_ok`] and [`Scaled::INTS`] where the row is
    /// [`any_order`].
    sides: Vec<std::cell::Cell<u16>>,
}

impl Scaled {
    /// The row's facts are known.
    const DONE: u16 = 1 << 15;
    /// Every element of the row is an integer that [`block_dot`] may add in any order.
    const INTS: u16 = 1 << 14;

    /// `scales` for operands of `m` rows of A and `n` columns of B (`kk` elements each),
    /// integers of the product step `unit` as [`Scales::cell`] takes them.
    pub(crate) fn new(scales: Scales, (m, n): (usize, usize), kk: usize, unit: f64) -> Scaled {
        Scaled {
            scales,
            kk,
            elem_unit: unit.sqrt(),
            m,
            sides: vec![std::cell::Cell::new(0); m + n],
        }
    }

    /// The facts of row `i` of A (`b` false) or column `i` of B (`b`), whose elements are
    /// `elems`, computed when first asked for.
    fn side(&self, b: bool, i: usize, elems: &[f64]) -> Option<u16> {
        let at = if b { self.m + i } else { i };
        let st = self.sides.get(at)?;
        if st.get() & Self::DONE != 0 {
            return Some(st.get());
        }
        let nb = self.scales.blocks as usize;
        let factors = if b { &self.scales.b } else { &self.scales.a };
        let from = (i * nb).min(factors.len());
        let mut v = Self::DONE | row_sides(&factors[from..], nb, elems, self.elem_unit);
        if any_order(elems, self.kk) {
            v |= Self::INTS;
        }
        st.set(v);
        Some(v)
    }

    /// [`Scales::cell`] of row r of A (`arow`, its K elements) and column c of B (`bcol`): the
    /// same value.
    #[allow(clippy::too_many_arguments)] // one cell: its operands, position, old value, flags
    pub(crate) fn cell(
        &self,
        arow: &[f64],
        bcol: &[f64],
        r: u32,
        c: u32,
        unit: f64,
        prev_on: bool,
        old: Option<u32>,
    ) -> Option<u32> {
        let (sa, sb) = (
            self.side(false, r as usize, arow)?,
            self.side(true, c as usize, bcol)?,
        );
        self.scales.cell_checked(
            (arow, bcol),
            (r, c),
            unit,
            (prev_on, old),
            (sa, sb),
            sa & sb & Self::INTS != 0,
        )
    }
}

/// Where the A operand of a block-scaled MMA comes from.
#[derive(Debug, Clone)]
pub enum ScaledA {
    /// Shared memory, through the MMA's descriptor: the region's data.
    Smem(mma::RegionData),
    /// TMEM (`[a-tmem]`): the 128 rows' 8 cells each, lane-major (row m in lane m, its 32
    /// bytes little-endian from the first column, as for kind::f8f6f4: [`mma::tmem_a_row`]).
    Tmem(Vec<u32>),
}

/// The operands of an exact block-scaled MMA ([`scaled_form`]) with the scale factors
/// `scales`: A (M rows) and B (N rows) read as kind::f8f6f4 elements ([`mma::f8_operand`],
/// [`mma::tmem_a_row`]); a sparse one's A expanded through its metadata cells `meta`
/// ([`super::mma_sparse::expand`]). `Err` names why the result is not exact.
pub fn prepare_scaled(
    m: &Mma,
    form: &ScaledForm,
    a: ScaledA,
    b: &[mma::RegionData],
    scales: Scales,
    meta: Option<&[u32]>,
) -> Result<Prepared, &'static str> {
    let d = m.idesc;
    // K of the stored rows of A; B's rows and the products take twice it when sparse.
    let kk = if form.fp4 { 64 } else { 32 };
    let kb = if form.sp { 2 * kk } else { kk };
    let not_exact = "OQ-19: block-scaled operands that are not small integers of the element type, or outside their region: unspecified";
    let operand = |desc: &SmemDesc, data: &mma::RegionData, alt, neg, rows, k: usize| {
        if form.fp4 {
            fp4_operand(desc, data, neg, rows, k as u32).ok_or(not_exact)
        } else {
            mma::f8_operand(desc, data, alt, neg, rows, k as u32).ok_or(not_exact)
        }
    };
    let (alt_a, neg_a) = (d >> 7 & 7 == 1, d >> 13 & 1 == 1);
    let rows = form.rows() as usize;
    let arow = match (&m.a, a) {
        (MmaA::Desc(ad), ScaledA::Smem(data)) => operand(ad, &data, alt_a, neg_a, form.rows(), kk)?,
        (MmaA::Tmem(_), ScaledA::Tmem(cells)) => {
            let mut out = Vec::with_capacity(rows * kk);
            for row in cells.chunks_exact(8).take(rows) {
                if form.fp4 {
                    let bytes = row.iter().flat_map(|c| c.to_le_bytes());
                    out.extend(fp4_bytes(bytes, neg_a));
                } else {
                    mma::tmem_a_row(MmaKind::F8f6f4, alt_a, neg_a, row, &mut out)
                        .ok_or(not_exact)?;
                }
            }
            if out.len() != rows * kk {
                return Err("OQ-29: A in TMEM not read whole: unspecified");
            }
            out
        }
        _ => return Err("OQ-29: the A operand does not match its source: unspecified"),
    };
    let arow = match (form.sp, meta) {
        (false, _) => arow,
        (true, Some(meta)) => super::mma_sparse::expand(m.form.kind, &arow, meta, 2, kb as u32)?,
        (true, None) => {
            return Err(
                "OQ-19: a sparse MMA reads metadata whose values are not known (unwritten, racing or not computed): unspecified",
            );
        }
    };
    // B: N rows from one region, or N / 2 from each CTA of the pair (even first).
    if b.is_empty() || !form.n.is_multiple_of(b.len() as u32) {
        return Err("OQ-29: B's regions do not split N: unspecified");
    }
    let (alt_b, neg_b) = (d >> 10 & 7 == 1, d >> 14 & 1 == 1);
    let part_rows = form.n / b.len() as u32;
    // B's columns read when a cell first needs them, where every read is known to succeed
    // (the checks `operand` makes before its first element: descriptor, fill, bounds; every
    // element of such a fill is finite).
    let fits = |part: &mma::RegionData| {
        let desc_ok = if form.fp4 {
            fp4_desc_ok(&m.b)
        } else {
            mma::operand_ok(&m.b, part, MmaKind::F8f6f4, alt_b)
        };
        desc_ok
            && mma::rows_inside_k(
                &m.b,
                part,
                MmaKind::F8f6f4,
                part_rows,
                kb as u32 / if form.fp4 { 2 } else { 1 },
            )
    };
    let b_operand = if b.len() <= 2 && b.iter().all(fits) {
        let halves = [&b[0], b.last().unwrap_or(&b[0])];
        let lazy =
            mma::LazyOperand::halves(&m.b, halves, (alt_b, neg_b), (part_rows, form.n), kb as u32);
        (Vec::new(), Some(if form.fp4 { lazy.fp4() } else { lazy }))
    } else {
        let mut bcol = Vec::with_capacity(form.n as usize * kb);
        for part in b {
            bcol.extend(operand(&m.b, part, alt_b, neg_b, part_rows, kb)?);
        }
        (bcol, None)
    };
    // The grid step of one product: f8 elements are held ×16 (`mma::f8_operand`), e2m1 ×2.
    let step = if form.fp4 { 0.25 } else { 1.0 / 256.0 };
    Ok(Prepared::scaled(
        (form.rows(), form.n, kb as u32),
        m.enable_input_d,
        arow,
        b_operand,
        step,
        scales,
    ))
}

/// Whether [`fp4_operand`] reads through descriptor `desc` (K-major, no swizzle).
fn fp4_desc_ok(desc: &SmemDesc) -> bool {
    desc.swizzle == 0
        && !desc.lbo_abs
        && desc.base_offset == 0
        && desc.fixed == 1
        && desc.reserved == 0
}

/// Row `row` of a packed e2m1 operand ([`fp4_operand`], `out.len()` elements: a multiple of
/// 32) into `out`, held ×2 and negated with `neg`; `None` for a chunk outside the region.
pub(crate) fn fp4_row(
    desc: &SmemDesc,
    data: &mma::RegionData,
    neg: bool,
    row: u32,
    out: &mut [f64],
) -> Option<()> {
    let limit = u64::from(data.bytes.max(16));
    let sign = if neg { -2.0 } else { 2.0 };
    let table: [f64; 16] = std::array::from_fn(|x| fp4_value(x as u8) * sign);
    for (j, chunk) in out.chunks_exact_mut(32).enumerate() {
        let base = mma::chunk_base(desc, row, j as u64);
        if base + 16 > limit {
            return None;
        }
        for (pair, b) in chunk.chunks_exact_mut(2).zip(mma::chunk_bytes(data, base)) {
            pair[0] = table[usize::from(b & 0xF)];
            pair[1] = table[usize::from(b >> 4)];
        }
    }
    Some(())
}

/// An e2m1 element (§9.7.16.10.1, the OCP FP4 format): sign bit 3, exponent bits 1-2 (bias
/// 1), mantissa bit 0; exponent 0 is subnormal (0 or ±0.5). No infinity or NaN: every value
/// is one of 0, ±0.5, ±1, ±1.5, ±2, ±3, ±4, ±6.
pub fn fp4_value(nibble: u8) -> f64 {
    let sign = if nibble & 8 != 0 { -1.0 } else { 1.0 };
    let e = i32::from(nibble >> 1 & 3);
    let m = f64::from(nibble & 1);
    sign * match e {
        0 => m * 0.5,
        _ => (1.0 + m / 2.0) * 2f64.powi(e - 1),
    }
}

/// The e2m1 elements of packed bytes (element 2i in the low nibble of byte i), held ×2 (so
/// every one is an integer), negated with `neg`.
fn fp4_bytes(bytes: impl Iterator<Item = u8>, neg: bool) -> impl Iterator<Item = f64> {
    let sign = if neg { -2.0 } else { 2.0 };
    bytes.flat_map(move |b| [fp4_value(b & 0xF) * sign, fp4_value(b >> 4) * sign])
}

/// The rows (0..`rows`, `kk` elements each: 64, or 128 for the B of a sparse MMA,
/// row-major) of a packed e2m1 operand in shared memory, held ×2 ([`fp4_bytes`]), through
/// its descriptor (K-major, no swizzle: the 16-byte chunks of a row at
/// [`mma::chunk_base`]); `None` for a descriptor the oracle does not read or a chunk
/// outside the region.
pub fn fp4_operand(
    desc: &SmemDesc,
    data: &mma::RegionData,
    neg: bool,
    rows: u32,
    kk: u32,
) -> Option<Vec<f64>> {
    if !fp4_desc_ok(desc) {
        return None;
    }
    let mut out = vec![0f64; (rows * kk) as usize];
    for (row, r) in out.chunks_exact_mut(kk as usize).enumerate() {
        fp4_row(desc, data, neg, row as u32, r)?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// idesc layout (b) of an mxf8f6f4 MMA, M = 128: A and B types, N, SFA_ID, SFB_ID.
    fn idesc(at: u32, bt: u32, n: u32, sfa: u32, sfb: u32) -> u32 {
        sfb << 4 | at << 7 | bt << 10 | (n >> 3) << 17 | 1 << 23 | 1 << 27 | sfa << 29
    }

    fn mma(idesc: u32) -> Mma {
        let desc = |region| SmemDesc {
            region,
            offset: 0,
            lbo_enc: 128 >> 4,
            sbo_enc: 256 >> 4,
            lbo_abs: false,
            base_offset: 0,
            fixed: 1,
            swizzle: 0,
            reserved: 0,
        };
        Mma {
            form: form::MmaForm {
                ws: false,
                sp: false,
                cta_group: CtaGroup::One,
                kind: MmaKind::Mxf8f6f4,
                block_scale: true,
                scale_vec: Some(ScaleVec::X1),
                ashift: false,
                collector: None,
            },
            d: TmemRef::slot(0, 0, 0),
            a: MmaA::Desc(desc(0)),
            b: desc(1),
            sp_meta: None,
            idesc,
            scale_a: Some(TmemRef::slot(0, 0, 64)),
            scale_b: Some(TmemRef::slot(0, 0, 68)),
            disable_output_lane: None,
            enable_input_d: false,
            scale_input_d: None,
            zero_col_mask: None,
        }
    }

    #[test]
    fn the_form_follows_the_idesc_fields() {
        let f = scaled_form(&mma(idesc(0, 1, 16, 2, 3))).expect("computed");
        assert_eq!((f.m, f.n, f.blocks, f.sfa_id, f.sfb_id), (128, 16, 1, 2, 3));
        assert!(!f.pair);
        assert_eq!(f.sf_cols(), (4, 1));
        // Transpose A (bit 15), an e2m1 A (type 5), M = 256 (bits 27-28 = 2): not computed,
        // each with its reason.
        assert!(scaled_form(&mma(idesc(0, 0, 16, 0, 0) | 1 << 15)).is_err());
        assert!(
            scaled_form(&mma(idesc(5, 0, 16, 0, 0)))
                .unwrap_err()
                .contains("OQ-29")
        );
        assert!(scaled_form(&mma(idesc(0, 0, 16, 0, 0) ^ 3 << 27)).is_err());
        // mxf4 (layout (c): E2M1 = 1 for A and B), 2X: two factors per row; K = 96 (bit 31)
        // names OQ-32; a UE4M3 mxf4nvf4 (bit 23 clear) is not computed.
        let mut m = mma(idesc(1, 1, 16, 2, 0));
        m.form.kind = MmaKind::Mxf4;
        m.form.scale_vec = Some(ScaleVec::X2);
        let f = scaled_form(&m).expect("mxf4 computed");
        assert!(f.fp4 && f.blocks == 2 && f.sfa_id == 2);
        m.form.kind = MmaKind::Mxf4nvf4;
        m.form.scale_vec = Some(ScaleVec::Block16);
        assert_eq!(scaled_form(&m).map(|f| f.blocks), Ok(4));
        m.idesc |= 1 << 31;
        assert!(scaled_form(&m).unwrap_err().contains("OQ-32"));
        // UE4M3 (bit 23 clear): computed with four factors per row, refused with two.
        m.idesc &= !(1 << 31 | 1 << 23);
        assert_eq!(scaled_form(&m).map(|f| (f.blocks, f.ue4m3)), Ok((4, true)));
        m.form.scale_vec = Some(ScaleVec::X2);
        assert!(scaled_form(&m).unwrap_err().contains("MMA-BS-VEC"));
    }

    /// Scale-factor cells laid out by hand from the figures' reading (module documentation):
    /// factor i in lane i % 32 (+ 32q) of column i / 32, byte `id`.
    #[test]
    fn factors_are_read_32_to_a_column_from_the_selected_byte() {
        let cols = 4;
        let mut cells = vec![0u32; 128 * cols];
        for i in 0..128u32 {
            for q in 0..4 {
                let lane = i % 32 + 32 * q;
                let at = (lane * cols as u32 + i / 32) as usize;
                // Byte 2 holds 127 + (i % 5) - 2: 2^-2 .. 2^2; the other bytes 0xFF (NaN).
                cells[at] = 0xFF00_FFFF | (125 + i % 5) << 16;
            }
        }
        let e = decode_factors(&cells, 4, 128, (1, 2), false).expect("exact");
        let want: Vec<_> = (0..128)
            .map(|i| {
                Ok(Factor {
                    mult: 1,
                    exp: i % 5 - 2,
                })
            })
            .collect();
        assert_eq!(e, want);
        // Byte 0 is NaN (each factor on its own); byte 3 would need 2 bytes from 3 on (past
        // the cell).
        let nan = decode_factors(&cells, 4, 128, (1, 0), false).expect("read");
        assert!(nan.iter().all(|f| f.is_err_and(|w| w.contains("NaN"))));
        assert!(
            decode_factors(&cells, 4, 128, (2, 3), false)
                .unwrap_err()
                .contains("MMA-BS-SFID")
        );
        // A copy in partition 3 that differs: MMA-BS-DUP.
        cells[(5 + 96) * cols] ^= 1 << 16;
        assert!(
            decode_factors(&cells, 4, 128, (1, 2), false)
                .unwrap_err()
                .contains("MMA-BS-DUP")
        );
    }

    /// The OCP FP4 (e2m1) table: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives; a packed
    /// byte holds element 2i in its low nibble.
    #[test]
    fn e2m1_follows_the_ocp_table_and_packs_low_nibble_first() {
        let table = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        for (n, want) in table.iter().enumerate() {
            assert_eq!(fp4_value(n as u8), *want, "{n:#x}");
            assert_eq!(fp4_value(n as u8 | 8), -want, "{:#x}", n | 8);
        }
        // 0x71: element 0 = 0x1 (0.5), element 1 = 0x7 (6); held ×2.
        let v: Vec<f64> = fp4_bytes([0x71u8].into_iter(), false).collect();
        assert_eq!(v, [1.0, 12.0]);
        let v: Vec<f64> = fp4_bytes([0x71u8].into_iter(), true).collect();
        assert_eq!(v, [-1.0, -12.0]);
    }

    /// UE8M0-style factors `2^e`.
    fn pow2(exps: &[i32]) -> Vec<Option<Factor>> {
        exps.iter()
            .map(|&exp| Some(Factor { mult: 1, exp }))
            .collect()
    }

    /// UE4M3 bytes decoded by hand from §5.2.3 (4 exponent bits, bias 7, 3 mantissa bits,
    /// subnormal at exponent 0, NaN 0x7F, 7 bits in a byte whose MSB is 0).
    #[test]
    fn ue4m3_follows_the_isa_format() {
        let v = |b: u8| ue4m3(b).map(Factor::value);
        // 0x38 = 0 0111 000: exponent 7 - 7 = 0, mantissa 0: 1.0.
        assert_eq!(v(0x38), Ok(1.0));
        // 0x3C = 0 0111 100: 1 + 4/8 = 1.5; 0x40 = 0 1000 000: 2.0; 0x30 = 0 0110 000: 0.5.
        assert_eq!(v(0x3C), Ok(1.5));
        assert_eq!(v(0x40), Ok(2.0));
        assert_eq!(v(0x30), Ok(0.5));
        // Largest: 0x7E = 0 1111 110: (1 + 6/8) · 2^8 = 448.
        assert_eq!(v(0x7E), Ok(448.0));
        // Smallest normal 0x08 = 2^-6; subnormals m/8 · 2^-6: 0x01 = 2^-9, 0x07 = 7 · 2^-9.
        assert_eq!(v(0x08), Ok(2f64.powi(-6)));
        assert_eq!(v(0x01), Ok(2f64.powi(-9)));
        assert_eq!(v(0x07), Ok(7.0 * 2f64.powi(-9)));
        assert_eq!(v(0x00), Ok(0.0));
        // NaN, and a byte with the padding bit set: no value.
        assert!(v(0x7F).unwrap_err().contains("NaN"));
        assert!(v(0x80).unwrap_err().contains("bit 7"));
        assert!(v(0xB8).unwrap_err().contains("bit 7"));
    }

    /// A UE4M3 cell with four blocks (mxf4nvf4 4X): block j of A's row scaled by 1.5 · 2^j
    /// (bytes 0x3C + 8j), B by 0.5 (0x30); e2m1 1.0 everywhere (held ×2, step 1/4): each
    /// block of 16 gives 16 · 1.5 · 2^j · 0.5, in all 12 · (1 + 2 + 4 + 8) = 180.
    #[test]
    fn ue4m3_factors_scale_their_blocks() {
        let a = (0..4).map(|j| ue4m3(0x3C + 8 * j).ok()).collect();
        let mut s = Scales {
            blocks: 4,
            a,
            b: vec![ue4m3(0x30).ok(); 4],
            open: None,
        };
        let ones = vec![2.0; 64];
        assert_eq!(
            s.cell(&ones, &ones, 0, 0, 0.25, false, None),
            Some(180f32.to_bits())
        );
        // A factor with no value (bit 7 set) leaves the cells that use it.
        s.b[3] = ue4m3(0xBC).ok();
        assert_eq!(s.cell(&ones, &ones, 0, 0, 0.25, false, None), None);
    }

    /// Extreme UE8M0 factors: exact where every intermediate stays an f32 normal, not where
    /// one leaves the range (2^-127 is subnormal; 2^100 · 2^100 overflows).
    #[test]
    fn extreme_factors_are_exact_only_inside_the_f32_normal_range() {
        let cell = |ea: i32, eb: i32| {
            let s = Scales {
                blocks: 1,
                a: pow2(&[ea]),
                b: pow2(&[eb]),
                open: None,
            };
            // f8 1.0 (×16) in every element: the dot product is 32.
            let row = vec![16.0; 32];
            s.cell(&row, &row, 0, 0, 1.0 / 256.0, false, None)
        };
        // 32 · 2^(100 - 90) and 32 · 2^(-120 + 20): far outside ±64, still exact.
        assert_eq!(cell(100, -90), Some((32.0f32 * 1024.0).to_bits()));
        assert_eq!(cell(-120, 20), Some(2f32.powi(-95).to_bits()));
        assert_eq!(cell(-127, 10), None);
        assert_eq!(cell(100, 100), None);
        // The combined factor 2^-130 is subnormal though the result 32 · 2^-130 = 2^-125
        // would be normal.
        assert_eq!(cell(-65, -65), None);
    }

    /// Two blocks (2X): row (1 ×32, 2 ×32) · column (1 ×64) with factors (2^1, 2^-1) for A
    /// and (2^0, 2^2) for B, e2m1 held ×2 (step 1/4): 32·1·2^1 + 32·2·2^1 = 64 + 128 = 192.
    #[test]
    fn each_block_takes_its_own_factors() {
        let s = Scales {
            blocks: 2,
            a: pow2(&[1, -1]),
            b: pow2(&[0, 2]),
            open: None,
        };
        let arow: Vec<f64> = (0..64).map(|k| if k < 32 { 2.0 } else { 4.0 }).collect();
        let bcol = vec![2.0; 64];
        // Block 0: 32 · (1 · 1) · 2^(1 + 0) = 64; block 1: 32 · (2 · 1) · 2^(-1 + 2) = 128.
        assert_eq!(
            s.cell(&arow, &bcol, 0, 0, 0.25, false, None),
            Some(192f32.to_bits())
        );
    }

    /// A hand-worked cell: A row (1.5, -2, 0, ...) and B column (2, 1, 0, ...) as integers of
    /// the f8 grid (×16), scale_A 2^-1 and scale_B 2^2: (1.5·2 + (-2)·1) · 2^1 = 2.
    #[test]
    fn a_cell_is_the_dot_product_times_both_factors() {
        let s = Scales {
            blocks: 1,
            a: pow2(&[0, -1]),
            b: pow2(&[2, 0]),
            open: None,
        };
        let mut arow = vec![0f64; 32];
        let mut bcol = vec![0f64; 32];
        arow[..2].copy_from_slice(&[24.0, -32.0]);
        bcol[..2].copy_from_slice(&[32.0, 16.0]);
        let unit = 1.0 / 256.0;
        assert_eq!(
            s.cell(&arow, &bcol, 1, 0, unit, false, None),
            Some(2f32.to_bits())
        );
        // Row 0 (2^0) with column 1 (2^0): 1.0; plus an old D of 0.25 with enable-input-d.
        assert_eq!(
            s.cell(&arow, &bcol, 0, 1, unit, true, Some(0.25f32.to_bits())),
            Some(1.25f32.to_bits())
        );
        // An old D off the grid (2^-40 is finer than the 2^-8 step) is not exact.
        let tiny = 2f32.powi(-40).to_bits();
        assert_eq!(s.cell(&arow, &bcol, 0, 1, unit, true, Some(tiny)), None);
    }
}
