//! Exact results of sparse MMAs (`tcgen05.mma.sp`, §9.7.16.10.8; reference §3.7 "Sparse A")
//! of kinds f16 (f16 / bf16), tf32, f8f6f4 (e4m3 / e5m2) and i8 (the block-scaled kinds
//! mxf8f6f4, mxf4 and mxf4nvf4 take [`expand`] from `super::mma_scaled`): a sparse M × N × K
//! MMA is
//! the dense MMA of the M × K matrix A whose row holds, in each chunk, the stored elements
//! at the positions the metadata names and zeros elsewhere, with B's K rows
//! (§9.7.16.10.8: "the matrix A of shape MxK is stored in a packed form as Mx(K/2)").
//! The packed A is read like a dense A (K/2 elements per row: 32 bytes for every kind, in
//! shared memory through its descriptor or from 8 TMEM cells per row), B as a dense B of K
//! elements per column, and the products and sums are those of [`mma::Prepared`] (exact
//! under the same conditions, OQ-19).
//!
//! # Metadata values (§9.7.16.10.8.1-3)
//!
//! A 4-bit metadata nibble describes one chunk of a row of A:
//! - tf32 (1:2, chunks of 2 elements): `0b0100` puts the stored element at position 0,
//!   `0b1110` at position 1 (in the 16-bit halves the hardware counts, the index pairs
//!   (0, 1) and (2, 3)); every other value is UB (MMA-SP-META-TF32);
//! - f16, f8f6f4, i8 (2:4, chunks of 4): two 2-bit indices, bits 0-1 the position of the
//!   first stored element and bits 2-3 that of the second. Of the seven listed meaningful
//!   values, the six with increasing indices are computed; `0b0110` (indices 2 then 1) is
//!   listed, but which stored element lands where is shown only in a figure (OQ-29), and the
//!   unlisted values have no stated meaning (OQ-23). mxf8f6f4 reads its nibbles the same way;
//! - mxf4, mxf4nvf4 (4:8 in pairs, chunks of 8): the two indices name pairs of elements
//!   (§9.7.16.10.8.3), so stored elements 2s, 2s + 1 go to elements 2i_s, 2i_s + 1; values
//!   outside the seven listed ones are UB (MMA-SP-META-MXF4).
//!
//! # Where the metadata is in TMEM (derived from §9.7.16.10.8.4, figures 262-267)
//!
//! The ISA gives the metadata layouts only as figures. This derivation is the layout of
//! CUTLASS's `UMMA::tmem_e_frg` (`cute/atom/mma_traits_sm100_frag.hpp`, M = 128 per CTA),
//! read as "TMEM bit address = lane · 2^21 + bit" (its `tmem_restride`, `TMEM::DP_b`), with
//! the element types' bits per logical element of A (f16 and 8-bit: 1 bit, tf32: 2 bits).
//! For row m of the CTA's 128 rows (lane field 0 of `[sp-meta-tmem]`, column `c`) and
//! chunk `j` of the row:
//!
//! - kinds f16 and tf32 (8 chunks: K = 32 of 4, K = 16 of 2): one column; the atom
//!   `((8,2,8),(X,2)):((1,Y,16),(128,8))` puts row m's chunks 0-3 in lane
//!   `m & !8` and chunks 4-7 in lane `m | 8`, nibble `4·((m >> 3) & 1) + (j & 3)` of the
//!   cell: lanes m and m ^ 8 exchange the K halves of rows m and m ^ 8;
//! - kinds f8f6f4, i8 and mxf8f6f4 (16 chunks of 4, K = 64): the atom `(128,64):(1,128)`;
//!   mxf4 and mxf4nvf4 (16 chunks of 8, K = 128) the atom `(128,128):(1,128)` at half a bit
//!   per element: row m in lane m, chunk j in nibble `j mod 8` of column `c + j / 8` (two
//!   columns).
//!
//! The same 16-bit-per-row pattern follows from JAX's `format_tcgen05_sparse_metadata`,
//! written against figure 263 (JAX's Mosaic GPU utilities; checked in the
//! tests with CUTLASS's atoms).
//!
//! The sparsity selector (idesc bits 0-1, §9.7.16.4.2) "selects the sub-columns" of the
//! metadata matrix (§9.7.16.10.8.4). It must be 0 for i8 and f8f6f4 (MMA-SP-SELECTOR, with
//! no stated consequence otherwise: unspecified) and is taken as 0 by the block-scaled
//! kinds (whose instruction descriptor has no selector field). For f16 and tf32 the single-column
//! fragment of K block b sits in column `base + b`, and CUTLASS issues it with the even
//! column `base + (b & !1)` and selector `b & 1` (`id2 = tmem_e & 1`): selector s reads
//! column `[sp-meta-tmem] + s`, for s = 0, 1 from an even column. Selectors 2 and 3, and
//! odd metadata columns, are not witnessed: unspecified (OQ-29).

use super::mma::{self, Prepared, RegionData};
use super::mma_rules::{META_SEVEN, META_TF32};
use tcgen05_ir::*;

/// A sparse MMA whose result the oracle computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SparseForm {
    /// `cta_group::2` with M = 256: each CTA of the pair holds 128 rows of D (data-path
    /// layout A), from its own A and its own metadata; B's rows 0..N/2 from the even CTA's
    /// shared memory, N/2..N from the odd CTA's (as for the dense kinds, `mma::pair_shape`).
    pub pair: bool,
    /// N.
    pub n: u32,
    /// K of the sparse MMA (twice the dense K of the kind).
    pub kk: u32,
    /// The sparsity selector (0 or 1 for f16 / tf32, 0 for the others).
    pub sel: u32,
}

impl SparseForm {
    /// Rows of D (and of A) in each CTA: 128.
    pub fn rows(&self) -> u32 {
        128
    }
}

/// Elements of A per metadata chunk (one nibble): 2 for tf32, 8 for the 4:8 kinds (mxf4,
/// mxf4nvf4), 4 for the 2:4 kinds.
fn chunk_len(kind: MmaKind) -> u32 {
    match kind {
        MmaKind::Tf32 => 2,
        MmaKind::Mxf4 | MmaKind::Mxf4nvf4 => 8,
        _ => 4,
    }
}

/// Elements per position a metadata index names: 2 for the pairwise 4:8 kinds (mxf4,
/// mxf4nvf4: "sub-chunks of two elements", §9.7.16.10.8.3), 1 for the others.
fn group_len(kind: MmaKind) -> u32 {
    if matches!(kind, MmaKind::Mxf4 | MmaKind::Mxf4nvf4) {
        2
    } else {
        1
    }
}

/// The metadata columns a sparse MMA of kind `kind` with selector `sel` reads, relative to
/// `[sp-meta-tmem]`: (first, count). `None` where the oracle does not place them
/// (selectors 2 and 3 of f16 / tf32).
pub fn meta_cols(kind: MmaKind, sel: u32) -> Option<(u32, u32)> {
    match kind {
        MmaKind::F16 | MmaKind::Tf32 => (sel <= 1).then_some((sel, 1)),
        _ => Some((0, 2)),
    }
}

/// Where the nibble of chunk `j` of row `m` (0..128) is: (lane, column relative to the
/// first column read, bit shift in the cell). The module documentation derives it.
pub fn meta_at(kind: MmaKind, m: u32, j: u32) -> (u32, u32, u32) {
    match kind {
        MmaKind::F16 | MmaKind::Tf32 => {
            let lane = (m & !8) | (j >> 2) << 3;
            (lane, 0, 16 * (m >> 3 & 1) + 4 * (j & 3))
        }
        _ => (m, j / 8, 4 * (j % 8)),
    }
}

/// The positions (within its chunk) of the stored elements a metadata nibble names, or why
/// the oracle does not compute the chunk (UB or not stated, naming the rule).
pub fn positions(kind: MmaKind, nibble: u32) -> Result<[u32; 2], &'static str> {
    if kind == MmaKind::Tf32 {
        return match nibble {
            0b0100 => Ok([0, 0]),
            0b1110 => Ok([1, 1]),
            _ => Err(
                "MMA-SP-META-TF32: tf32 sparse metadata other than 0b0100 / 0b1110 is undefined behaviour: unspecified",
            ),
        };
    }
    debug_assert_eq!(META_TF32.len(), 2);
    if !META_SEVEN.contains(&nibble) {
        if matches!(kind, MmaKind::Mxf4 | MmaKind::Mxf4nvf4) {
            return Err(
                "MMA-SP-META-MXF4: mxf4 / mxf4nvf4 sparse metadata outside the seven listed values is undefined behaviour: unspecified",
            );
        }
        return Err(
            "OQ-23: 2:4 sparse metadata outside the seven listed values (its meaning is not stated): unspecified",
        );
    }
    let (i0, i1) = (nibble & 3, nibble >> 2);
    if i0 >= i1 {
        return Err(
            "OQ-29: sparse metadata 0b0110 names its positions out of order (where each stored element goes is figure-only): unspecified",
        );
    }
    Ok([i0, i1])
}

/// The form of a sparse MMA the oracle computes, or why it does not (the note of its
/// unspecified words, naming the open question or rule).
pub fn sparse_form(m: &Mma) -> Result<SparseForm, &'static str> {
    let f = &m.form;
    let d = m.idesc;
    if !f.sp || f.block_scale {
        return Err("not a sparse MMA of a layout-(a) kind");
    }
    if !matches!(
        f.kind,
        MmaKind::F16 | MmaKind::Tf32 | MmaKind::I8 | MmaKind::F8f6f4
    ) {
        return Err("not a sparse MMA of a layout-(a) kind");
    }
    if f.ws {
        return Err(
            "OQ-29: a .ws sparse MMA (its metadata layouts for M = 32 / 64 are figure-only): unspecified",
        );
    }
    if f.collector
        .is_some_and(|c| matches!(c.op, CollectorOp::Use | CollectorOp::Lastuse))
    {
        return Err(
            "MMA-COLLECTOR-DEFAULT: a sparse MMA reading a collector buffer (not followed for sparse A): unspecified",
        );
    }
    if f.ashift {
        return Err(
            "OQ-29: a sparse MMA with .ashift (which metadata row a shifted A row uses is not stated): unspecified",
        );
    }
    if !mma::exact_types(f.kind, d) {
        return Err(
            "OQ-19, OQ-29: a sparse MMA whose element types the oracle does not read exactly (6- and 4-bit f8f6f4 packing is figure-only): unspecified",
        );
    }
    if d >> 15 & 3 != 0 || d >> 30 != 0 {
        return Err(
            "OQ-29: a sparse MMA with a transposed operand or a B-reuse shift (not modelled): unspecified",
        );
    }
    let mm = (d >> 24 & 0x1F) << 4;
    let n = (d >> 17 & 0x3F) << 3;
    let pair = f.cta_group == CtaGroup::Two;
    if mm != if pair { 256 } else { 128 } || n == 0 {
        return Err(
            "OQ-22: a sparse MMA using half of the data path (M = 64 ::1, layout F; M = 128 ::2, layout C; figure-only): unspecified",
        );
    }
    if pair && m.disable_output_lane.is_some() {
        return Err(
            "OQ-31: a sparse cta_group::2 MMA with disable-output-lane (how mask bits 128-255 map onto the peer's lanes is not stated): unspecified",
        );
    }
    let sel = d & 3;
    if sel != 0 && matches!(f.kind, MmaKind::I8 | MmaKind::F8f6f4) {
        return Err(
            "MMA-SP-SELECTOR: a sparsity selector other than 0 for i8 / f8f6f4 (its effect is not stated): unspecified",
        );
    }
    if meta_cols(f.kind, sel).is_none() {
        return Err(
            "OQ-29: sparsity selector 2 or 3 of an f16 / tf32 MMA (which sub-columns it selects is figure-only): unspecified",
        );
    }
    Ok(SparseForm {
        pair,
        n,
        kk: 2 * mma::elem_k(f.kind).1,
        sel,
    })
}

/// Where a sparse MMA's packed A comes from (the rows of one CTA).
#[derive(Debug, Clone)]
pub enum SparseA {
    /// Shared memory, through the MMA's A descriptor, with this data.
    Smem(RegionData),
    /// TMEM: 8 cells per row, lane-major (row m in lane m, `mma::tmem_a_row`).
    Tmem(Vec<u32>),
}

/// Expands packed rows (`rows` × K/2 stored elements, row-major) to `rows` × K through the
/// metadata cells `meta` (128 lanes × `cols` columns, lane-major, the columns of
/// [`meta_cols`]), or why not (a nibble the oracle does not compute, [`positions`]).
pub fn expand(
    kind: MmaKind,
    packed: &[f64],
    meta: &[u32],
    cols: u32,
    kk: u32,
) -> Result<Vec<f64>, &'static str> {
    let half = (kk / 2) as usize;
    let rows = packed.len() / half.max(1);
    let (cl, unit) = (chunk_len(kind), group_len(kind) as usize);
    let chunks = kk / cl;
    // Stored elements per chunk: 1 for tf32 (1:2), 2 for 2:4, 4 for 4:8 (two pairs).
    let per = (cl / 2) as usize;
    let mut out = vec![0f64; rows * kk as usize];
    for m in 0..rows as u32 {
        for j in 0..chunks {
            let (lane, col, shift) = meta_at(kind, m, j);
            let cell = *meta
                .get((lane * cols + col) as usize)
                .ok_or("OQ-29: the metadata cells were not read whole: unspecified")?;
            let pos = positions(kind, cell >> shift & 0xF)?;
            // Stored element s of the chunk goes to element `unit · pos[s / unit] + s % unit`.
            for s in 0..per {
                let p = pos[(s / unit).min(1)] as usize * unit + s % unit;
                let src = m as usize * half + (j as usize) * per + s;
                let dst = m as usize * kk as usize + (j * cl) as usize + p;
                out[dst] = packed[src];
            }
        }
    }
    Ok(out)
}

/// The operands of a sparse MMA of one CTA ([`SparseForm`]): A's packed rows from `a`,
/// expanded with the CTA's metadata cells `meta` ([`expand`]), and B from `b` (one region,
/// or the even and odd CTAs' for `cta_group::2`).
pub fn prepare_sparse(
    m: &Mma,
    form: &SparseForm,
    a: &SparseA,
    b: &[RegionData],
    meta: &[u32],
) -> Result<Prepared, &'static str> {
    let kind = m.form.kind;
    let d = m.idesc;
    let (sa, na) = (d >> 7 & 7 == 1, d >> 13 & 1 == 1);
    let (sb, nb) = (d >> 10 & 7 == 1, d >> 14 & 1 == 1);
    let rows = form.rows();
    let half = form.kk / 2;
    let not_exact = "OQ-19: a sparse MMA whose operands are not known small integers (rounding, accumulation order and precision are open): unspecified";
    let mut packed = Vec::with_capacity((rows * half) as usize);
    match (a, &m.a) {
        (SparseA::Smem(data), MmaA::Desc(ad)) => {
            if !mma::operand_ok(ad, data, kind, sa) {
                return Err(not_exact);
            }
            mma::read_rows_k(ad, data, kind, (sa, na), rows, half, &mut packed).ok_or(not_exact)?;
        }
        (SparseA::Tmem(cells), MmaA::Tmem(_)) => {
            if cells.len() != 8 * rows as usize {
                return Err("OQ-19: A in TMEM not read whole: unspecified");
            }
            for row in cells.chunks_exact(8) {
                mma::tmem_a_row(kind, sa, na, row, &mut packed).ok_or(not_exact)?;
            }
        }
        _ => return Err("OQ-19: the A operand does not match its source: unspecified"),
    }
    let (_, cols) = meta_cols(kind, form.sel).ok_or("OQ-29: selector not placed")?;
    let arow = expand(kind, &packed, meta, cols, form.kk)?;
    if let Some(p) = Prepared::lazy_rows(m, (rows, form.n, form.kk), &arow, b) {
        // A's elements and B's small integers: B's columns read when a cell needs them.
        return Ok(p);
    }
    let per_part = form.n / b.len() as u32;
    let mut bcol = Vec::with_capacity((form.n * form.kk) as usize);
    for data in b {
        if !mma::operand_ok(&m.b, data, kind, sb) {
            return Err(not_exact);
        }
        mma::read_rows_k(&m.b, data, kind, (sb, nb), per_part, form.kk, &mut bcol)
            .ok_or(not_exact)?;
    }
    Prepared::from_rows(m, (rows, form.n, form.kk), arow, bcol).ok_or(not_exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CuTe layout mode list: (shape, stride) sub-modes, the first the fastest.
    type Modes = &'static [(u32, u32)];

    /// The index a CuTe layout gives coordinate `x` of a mode (colexicographic).
    fn eval(modes: Modes, mut x: u32) -> u32 {
        let mut v = 0;
        for &(shape, stride) in modes {
            v += (x % shape) * stride;
            x /= shape;
        }
        v
    }

    /// CUTLASS's `UMMA::tmem_e_frg` atoms (`cute/atom/mma_traits_sm100_frag.hpp`, M = 128):
    /// the M modes, the K modes and the bits of one logical element of A as a fraction
    /// (the `sparse_elem` width, with `upcast<2>` for tf32; F4's `tmem_restride1` counts
    /// half bits). The "virtual" index v is lane `v % 128`, element unit `v / 128` of the
    /// lane (`tmem_restride`: lane stride `TMEM::DP_b`, bit addressing).
    const ATOMS: [(MmaKind, Modes, Modes, (u32, u32)); 4] = [
        // FP16: Shape <Shape <_8,_2,_8>, Shape <_16,_2>>, Stride<Stride<_1,_2048,_16>,
        // Stride<_128,_8>>; sparse_elem<8, uint8_t>: 1 bit per element.
        (
            MmaKind::F16,
            &[(8, 1), (2, 2048), (8, 16)],
            &[(16, 128), (2, 8)],
            (1, 1),
        ),
        // TF32: Shape <Shape <_8,_2,_8>, Shape <_8,_2>>, Stride<Stride<_1,_1024,_16>,
        // Stride<_128,_8>>; sparse_elem<4, uint8_t> with upcast<2>: 2 bits per element.
        (
            MmaKind::Tf32,
            &[(8, 1), (2, 1024), (8, 16)],
            &[(8, 128), (2, 8)],
            (2, 1),
        ),
        // S8 / F8F6F4: Shape <_128,_64>, Stride<_1,_128>; 1 bit per element.
        (MmaKind::I8, &[(128, 1)], &[(64, 128)], (1, 1)),
        // F4: Shape <_128,_128>, Stride<_1,_128>; sparse_elem<16, uint8_t>, half a bit per
        // element (K = 128 of the 4:8 kinds).
        (MmaKind::Mxf4, &[(128, 1)], &[(128, 128)], (1, 2)),
    ];

    #[test]
    fn the_metadata_layout_is_cutlass_tmem_e_frg() {
        for (kind, mm, km, (num, den)) in ATOMS {
            // Chunks per row: 8 (f16, tf32), 16 (the 8-bit kinds, K = 64; mxf4, K = 128).
            let chunks = if matches!(kind, MmaKind::F16 | MmaKind::Tf32) {
                8
            } else {
                16
            };
            let kk = chunks * chunk_len(kind);
            let cl = chunk_len(kind);
            for m in 0..128 {
                for k in 0..kk {
                    let v = eval(mm, m) + eval(km, k);
                    let (lane, bit) = (v % 128, v / 128 * num / den);
                    let (l, col, shift) = meta_at(kind, m, k / cl);
                    assert_eq!(lane, l, "{kind:?} row {m} element {k}");
                    assert_eq!(
                        bit,
                        32 * col + shift + (k % cl) * num / den,
                        "{kind:?} row {m} element {k}"
                    );
                }
            }
        }
        // f8f6f4 and mxf8f6f4 share i8's atom (one 8-bit `ValueType`), mxf4nvf4 mxf4's.
        for m in 0..128 {
            for j in 0..16 {
                let i8 = meta_at(MmaKind::I8, m, j);
                assert_eq!(meta_at(MmaKind::F8f6f4, m, j), i8);
                assert_eq!(meta_at(MmaKind::Mxf8f6f4, m, j), i8);
                assert_eq!(
                    meta_at(MmaKind::Mxf4nvf4, m, j),
                    meta_at(MmaKind::Mxf4, m, j)
                );
            }
        }
    }

    /// JAX's `format_tcgen05_sparse_metadata` (kind::f16, written against figure 263): the
    /// (M, K/4, 2) 2-bit indices reshaped to (M/128, 8, 2, 8, K/64, 4, 2, 8), transposed by
    /// (0, 4, 1, 6, 3, 5, 2, 7), reshaped to (M/128, K/64, 128, 64): index `s` of chunk `j`
    /// of row m lands in lane `16a + 8e + c` at 2-bit unit `16d + 8b + f`, where
    /// m = 16a + 8b + c and 2j + s = 16d + 8e + f.
    #[test]
    fn the_f16_layout_is_jax_format_tcgen05_sparse_metadata() {
        for m in 0..128u32 {
            let (a, b, c) = (m / 16, m / 8 % 2, m % 8);
            for j in 0..8u32 {
                for s in 0..2u32 {
                    let idx = 2 * j + s;
                    let (d, e, f) = (idx / 16, idx / 8 % 2, idx % 8);
                    let (lane, bit) = (16 * a + 8 * e + c, 2 * (16 * d + 8 * b + f));
                    let (l, col, shift) = meta_at(MmaKind::F16, m, j);
                    assert_eq!(
                        (lane, bit),
                        (l, 32 * col + shift + 2 * s),
                        "row {m} chunk {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn nibbles_name_positions_as_listed() {
        // §9.7.16.10.8.2: two 2-bit indices, the first in bits 0-1.
        let want = [
            (0b0100, [0, 1]),
            (0b1000, [0, 2]),
            (0b1100, [0, 3]),
            (0b1001, [1, 2]),
            (0b1101, [1, 3]),
            (0b1110, [2, 3]),
        ];
        for kind in [MmaKind::F16, MmaKind::I8, MmaKind::F8f6f4] {
            for (v, p) in want {
                assert_eq!(positions(kind, v), Ok(p), "{kind:?} {v:#06b}");
            }
            for v in [0b0000, 0b0101, 0b1010, 0b1111, 0b0001] {
                assert!(
                    positions(kind, v).unwrap_err().starts_with("OQ-23"),
                    "{v:#06b}"
                );
            }
            assert!(positions(kind, 0b0110).unwrap_err().starts_with("OQ-29"));
        }
        // §9.7.16.10.8.1: tf32, 0b0100 and 0b1110 only.
        assert_eq!(positions(MmaKind::Tf32, 0b0100), Ok([0, 0]));
        assert_eq!(positions(MmaKind::Tf32, 0b1110), Ok([1, 1]));
        for v in [0b1000, 0b1100, 0b0000, 0b0110] {
            let e = positions(MmaKind::Tf32, v).unwrap_err();
            assert!(e.starts_with("MMA-SP-META-TF32"), "{v:#06b}");
        }
    }

    #[test]
    fn expand_places_stored_elements_and_zeros() {
        // i8, K = 64: row r's stored elements 100r + i; every nibble 0b0100 but row 5's
        // chunk 9 (column 1, nibble 1): 0b1101, positions 1 and 3.
        let kk = 64;
        let packed: Vec<f64> = (0..128 * 32)
            .map(|x| f64::from(100 * (x / 32) + x % 32))
            .collect();
        let mut meta = vec![0x4444_4444u32; 128 * 2];
        meta[5 * 2 + 1] = 0x4444_44D4;
        let full = expand(MmaKind::I8, &packed, &meta, 2, kk).expect("valid");
        let row = |r: usize| &full[r * 64..(r + 1) * 64];
        assert_eq!(&row(0)[..8], &[0.0, 1.0, 0.0, 0.0, 2.0, 3.0, 0.0, 0.0]);
        assert_eq!(&row(5)[36..40], &[0.0, 518.0, 0.0, 519.0]);
        assert_eq!(&row(5)[32..36], &[516.0, 517.0, 0.0, 0.0]);
        // f16 (K = 32): row 8's chunk 0 is in lane 0 (m & !8), nibble 4 (bits 16-19).
        let packed: Vec<f64> = (0..128 * 16).map(|x| f64::from(x % 16)).collect();
        let mut meta = vec![0x4444_4444u32; 128];
        meta[0] = 0x4449_4444;
        let full = expand(MmaKind::F16, &packed, &meta, 1, 32).expect("valid");
        assert_eq!(&full[8 * 32..8 * 32 + 4], &[0.0, 0.0, 1.0, 0.0]);
        assert_eq!(&full[..4], &[0.0, 1.0, 0.0, 0.0]);
        // Row 8's chunk 4 is in lane 8 (m | 8), nibble 4: 0b0100, elements 8 and 9.
        assert_eq!(&full[8 * 32 + 16..8 * 32 + 20], &[8.0, 9.0, 0.0, 0.0]);
        // mxf4 (K = 128, 4:8 in pairs): 0b1101 names pairs 1 and 3 of the chunk of 8.
        let packed: Vec<f64> = (0..128 * 64).map(|x| f64::from(x % 64 + 1)).collect();
        let mut meta = vec![0x4444_4444u32; 128 * 2];
        meta[0] = 0x4444_444D;
        let full = expand(MmaKind::Mxf4, &packed, &meta, 2, 128).expect("valid");
        let want = [
            0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 0.0, 0.0, 0.0, 0.0,
        ];
        assert_eq!(&full[..16], &want);
        // Row 0's chunk 8 is in column 1, nibble 0.
        assert_eq!(&full[64..68], &[33.0, 34.0, 35.0, 36.0]);
        assert!(
            expand(MmaKind::Mxf4, &packed, &[0; 256], 2, 128)
                .unwrap_err()
                .starts_with("MMA-SP-META-MXF4")
        );
    }
}
