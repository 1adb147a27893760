//! Block-scaled MMAs in the simulator (`.block_scale`, reference §3.7, §9.7.16.10.7):
//! `D = (A·scale_A)·(B·scale_B) + D` for kind::mxf8f6f4 with e4m3 / e5m2 A and B and UE8M0
//! scale factors, `scale_vec::1X` / `.block32` (one factor per row of A and per column of B),
//! `cta_group::1` with M = 128 or `::2` with M = 256 (each CTA reads the factors in its own
//! TMEM), A in shared memory or TMEM, B in shared memory (K-major, no
//! swizzle, no transpose).
//! Other block-scaled forms keep the placeholder values ([`super::OPAQUE`]).
//!
//! # Scale-factor placement (after CUTLASS's `UMMA::tmem_sf_frg`)
//!
//! CUTLASS allocates scale factors in TMEM with the atom (MN index, scale-factor index along
//! K) → virtual TMEM address `dp + 128·c`, where `dp` is the data-path lane and `c` counts
//! 8-bit sub-columns:
//!
//! ```text
//! (((32, MN/32), 4), (VS, NSF)) : (((1, 512), 32), (0, 128))
//! ```
//!
//! so factor (mn, s) of replica `rep` (the 4 replicas: one per 32-lane partition) is at
//! virtual address `mn % 32 + 512·(mn / 32) + 32·rep + 128·s`: lane `mn % 32 + 32·rep`,
//! sub-column `4·(mn / 32) + s`. The MMA's `[scale-tmem]` address carries the byte offset
//! inside its 32-bit column in the scale-factor ID of the instruction descriptor (CUTLASS's
//! runtime descriptor takes `a_sf_id_` from bits 30-31 of the scale-factor TMEM address), so
//! sub-column `sub = SF_ID + 4·(mn / 32) + s` is byte `sub % 4` of column
//! `[scale-tmem] + sub / 4` ([`factor_at`]).
//!
//! The simulator reads, for D row m, the replica of m's own 32-lane partition (`rep = m /
//! 32`), for scale_A and for scale_B alike: with the factors duplicated (MMA-BS-DUP) every
//! replica is the same; without, rows of different partitions see different factors.
//!
//! A UE8M0 byte e is `2^(e - 127)`, 0xFF NaN; mxf4nvf4 with four factors per row may take
//! UE4M3 factors instead (idesc bit 23 clear, [`ue4m3`]). The scaled dot product is the f32 dot product
//! of the module's order ([`super::dot8`]) times `scale_A · scale_B`, then added to D.

use super::*;
use tcgen05_ir::ScaleVec;

/// Where an implemented block-scaled MMA's scale factors are (columns of the addresses,
/// SF IDs from the instruction descriptor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct SfSpec {
    a_col: u32,
    b_col: u32,
    a_id: u32,
    b_id: u32,
    /// Factors per row of A / column of B (1X: 1, 2X: 2, 4X: 4).
    blocks: u32,
    /// Packed e2m1 operands (mxf4 kinds): the rows hold bytes, decoded per cell.
    fp4: bool,
    /// UE4M3 factor bytes ([`ue4m3`]), else UE8M0 ([`ue8m0`]).
    ue4m3: bool,
    /// The product of the negate bits' signs (fp4: applied to the dot product, the byte rows
    /// are not negated).
    sign: f32,
}

/// The scale factors of one performed MMA: `a[m]` for D row m, `b[p * n + col]` for the rows
/// of 32-lane partition p.
#[derive(Debug)]
pub(super) struct Factors {
    a: Vec<f32>,
    b: Vec<f32>,
    n: u32,
    blocks: u32,
    fp4: bool,
    sign: f32,
}

/// [`E2M1`] times 2: every e2m1 value as an integer of halves.
const E2M1_HALVES: [i32; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/// CUTLASS's `float_e2m1_t` values (1 sign, 2 exponent, 1 mantissa bit), by nibble.
const E2M1: [f32; 16] = [
    0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0,
];

impl Factors {
    /// Block `j`'s `scale_A[m][j] · scale_B[j][col]` as D row m sees them.
    #[inline]
    fn of(&self, m: u32, col: u32, j: usize) -> f32 {
        let (p, nb) = ((m / 32) as usize, self.blocks as usize);
        self.a[m as usize * nb + j] * self.b[(p * self.n as usize + col as usize) * nb + j]
    }

    /// The scaled dot product of D (row `m`, column `col`) from row m of A and column col of
    /// B as the rows hold them (f8 elements; or bytes of two packed e2m1 elements, element
    /// 2i in the low nibble of byte i): per block, the f32 sum of its products in K order
    /// (one block: [`dot8`]) times the block's factors, the blocks added in order.
    pub(super) fn dot(&self, a: &[f32], b: &[f32], m: u32, col: u32) -> f32 {
        if !self.fp4 && self.blocks == 1 {
            return dot8(a, b) * self.of(m, col, 0);
        }
        let nb = self.blocks as usize;
        if self.fp4 && nb > 0 && a.len() == b.len() && a.len() <= 64 && a.len().is_multiple_of(nb) {
            // Packed e2m1 with whole bytes to a block. Every e2m1 value is a multiple of 0.5
            // of magnitude at most 6, so every product is a multiple of 0.25 of magnitude at
            // most 36 and every partial sum of a block (at most 128 products) a multiple of
            // 0.25 below 2^13: exact in f32, so the f32 sum in K order below is the exact
            // sum, computed here in integers of 0.25 (a zero sum gives +0 or -0; either adds
            // nothing to `total`, which starts at +0).
            let per = a.len() / nb;
            let mut total = 0f32;
            for j in 0..nb {
                let r = j * per..(j + 1) * per;
                let mut quarters = 0i32;
                for (&x, &y) in a[r.clone()].iter().zip(&b[r]) {
                    let (x, y) = (usize::from(x as u8), usize::from(y as u8));
                    quarters += E2M1_HALVES[x & 0xF] * E2M1_HALVES[y & 0xF]
                        + E2M1_HALVES[x >> 4] * E2M1_HALVES[y >> 4];
                }
                total += quarters as f32 * 0.25 * self.of(m, col, j);
            }
            return total * self.sign;
        }
        // The elements of both rows (at most 128: K = 64 bytes of e2m1 pairs of a sparse
        // MMA, or 64 f8).
        let expand = |v: &[f32], out: &mut [f32; 128]| -> usize {
            if self.fp4 {
                for (pair, &x) in out.chunks_exact_mut(2).zip(v) {
                    let byte = x as u8;
                    pair[0] = E2M1[usize::from(byte & 0xF)];
                    pair[1] = E2M1[usize::from(byte >> 4)];
                }
                (2 * v.len()).min(128)
            } else {
                let n = v.len().min(128);
                out[..n].copy_from_slice(&v[..n]);
                n
            }
        };
        let (mut xa, mut xb) = ([0f32; 128], [0f32; 128]);
        let n = expand(a, &mut xa).min(expand(b, &mut xb));
        let (ea, eb) = (&xa[..n], &xb[..n]);
        let per = ea.len() / self.blocks as usize;
        let mut total = 0f32;
        for j in 0..self.blocks as usize {
            let r = j * per..(j + 1) * per;
            let s: f32 = ea[r.clone()].iter().zip(&eb[r]).map(|(x, y)| x * y).sum();
            total += s * self.of(m, col, j);
        }
        total * self.sign
    }
}

/// The byte of scale factor (`mn`, `s`) in replica `rep`, for the factor matrix at column
/// `col` with scale-factor ID `id` (module documentation). `None` outside TMEM.
pub(super) fn factor_at(
    tmem: &mut Tmem,
    col: u32,
    id: u32,
    mn: u32,
    s: u32,
    rep: u32,
) -> Option<u8> {
    let v = mn % 32 + 512 * (mn / 32) + 32 * rep + 128 * s;
    let (dp, sub) = (v % 128, v / 128 + id);
    let cell = tmem.read(dp, col + sub / 4)?;
    Some((cell >> (8 * (sub % 4))) as u8)
}

/// A UE8M0 scale factor's value: `2^(e - 127)`; 0xFF is NaN.
pub(super) fn ue8m0(e: u8) -> f32 {
    if e == 0xFF {
        f32::NAN
    } else {
        (2f64).powi(i32::from(e) - 127) as f32
    }
}

/// A UE4M3 scale factor's value (PTX ISA §5.2.3: 7 bits, 4 exponent bits with E4M3's bias
/// 7, 3 mantissa bits, no infinity, NaN 0x7F): built as the f32 with the same exponent and
/// the mantissa in its top bits; exponent 0 is subnormal, `m · 2^-9`. The byte's bit 7 (0
/// in a valid factor) is ignored.
pub(super) fn ue4m3(b: u8) -> f32 {
    let (e, m) = (u32::from(b >> 3 & 0xF), u32::from(b & 7));
    match (e, m) {
        (15, 7) => f32::NAN,
        (0, _) => m as f32 / 512.0,
        _ => f32::from_bits((e + 120) << 23 | m << 20),
    }
}

impl SfSpec {
    /// Sets the columns from the addresses as issued; `Err` where a lane field is not 0.
    pub(super) fn at(&mut self, a: u32, b: u32) -> Result<(), MmaError> {
        if a >> 16 != 0 || b >> 16 != 0 {
            return Err(MmaError::NotImplemented(
                "block-scale factors addressed from a lane other than 0",
            ));
        }
        (self.a_col, self.b_col) = (a & 0xFFFF, b & 0xFFFF);
        Ok(())
    }

    /// Reads the factors of the 128 rows × N columns of D one CTA holds from its `tmem`.
    pub(super) fn read(&self, tmem: &mut Tmem, n: u32) -> Result<Factors, MmaError> {
        let nb = self.blocks;
        let value = if self.ue4m3 { ue4m3 } else { ue8m0 };
        let mut a = Vec::with_capacity(128 * nb as usize);
        for m in 0..128 {
            for s in 0..nb {
                let e = factor_at(tmem, self.a_col, self.a_id, m, s, m / 32);
                a.push(value(e.ok_or(MmaError::ScaleOutsideTmem)?));
            }
        }
        let mut b = Vec::with_capacity((4 * n * nb) as usize);
        for rep in 0..4 {
            for c in 0..n {
                for s in 0..nb {
                    let e = factor_at(tmem, self.b_col, self.b_id, c, s, rep);
                    b.push(value(e.ok_or(MmaError::ScaleOutsideTmem)?));
                }
            }
        }
        Ok(Factors {
            a,
            b,
            n,
            blocks: nb,
            fp4: self.fp4,
            sign: self.sign,
        })
    }
}

/// The plan of a block-scaled MMA the simulator computes (module documentation), or `None`
/// (the caller keeps the placeholder values). `d` is D's address.
pub(super) fn plan_scaled(
    p: &Program,
    m: &Mma,
    d: u32,
    a_tmem: Option<u32>,
    faults: Faults,
) -> Option<MmaPlan> {
    let f = &m.form;
    let idesc = m.idesc;
    // Factors per row and column by kind and scale-vector size (reference §3.7 table).
    let blocks = match (f.kind, f.scale_vec) {
        (MmaKind::Mxf8f6f4, None | Some(ScaleVec::X1 | ScaleVec::Block32)) => 1,
        (MmaKind::Mxf4, None) => 2,
        (MmaKind::Mxf4 | MmaKind::Mxf4nvf4, Some(ScaleVec::X2 | ScaleVec::Block32)) => 2,
        (MmaKind::Mxf4nvf4, Some(ScaleVec::X4 | ScaleVec::Block16)) => 4,
        _ => return None,
    };
    let fp4 = f.kind != MmaKind::Mxf8f6f4;
    let forms_ok = f.block_scale
        && !f.ws
        && f.collector
            .is_none_or(|c| c.op == tcgen05_ir::CollectorOp::Discard);
    // idesc (PTX ISA table "Instruction descriptor format for .kind::mxf8f6f4"): reserved
    // bits 0-3, 6, 24-26, 31 zero; no transpose (15-16); UE8M0 scale type (23); M >> 7 at
    // bits 27-28: M = 128 with cta_group::1, M = 256 with ::2 (128 rows in each CTA, data-path
    // layout A; B's rows split between the CTAs as for the other kinds, `perform_halves`).
    // The mxf4 kinds: bit 12 reserved (B type at 10-11), bit 31 the K selector (K = 96 not
    // implemented).
    let pair = f.cta_group == CtaGroup::Two;
    // Scale type (bit 23): UE8M0 = 1, or UE4M3 = 0 for mxf4nvf4 with four factors per row.
    let ue4m3 = idesc >> 23 & 1 == 0;
    // `.sp` (`sparse`): bit 2 set (the sparse flag), the selector bits 0-1 taken as 0.
    let fields_ok = idesc & 0x8700_004B == 0
        && (idesc >> 2 & 1 == 1) == f.sp
        && !(fp4 && idesc >> 12 & 1 == 1)
        && idesc >> 15 & 3 == 0
        && (!ue4m3 || (f.kind == MmaKind::Mxf4nvf4 && blocks == 4))
        && idesc >> 27 & 3 == if pair { 2 } else { 1 };
    let (Some(sa), Some(sb)) = (&m.scale_a, &m.scale_b) else {
        return None;
    };
    // A from shared memory, or from TMEM at lane 0 (row m in lane m, 32 bytes from the
    // address's column, as for kind::f8f6f4).
    let (a, a_col) = match (&m.a, a_tmem) {
        (MmaA::Desc(a), _) => (Some(*a), 0),
        (MmaA::Tmem(_), Some(t)) if t >> 16 == 0 => (None, t & 0xFFFF),
        _ => return None,
    };
    let n = (idesc >> 17 & 0x3F) << 3;
    // e4m3 / e5m2 (mxf8f6f4), or E2M1 = 1 (mxf4 kinds: the rows are read as bytes).
    let (a_ty, b_ty) = if fp4 {
        if idesc >> 7 & 7 != 1 || idesc >> 10 & 3 != 1 {
            return None;
        }
        (Elem::U8, Elem::U8)
    } else {
        (
            elem(idesc >> 7 & 7, MmaKind::F8f6f4)?,
            elem(idesc >> 10 & 7, MmaKind::F8f6f4)?,
        )
    };
    let (neg_a, neg_b) = (idesc >> 13 & 1 == 1, idesc >> 14 & 1 == 1);
    let regions_ok = a
        .iter()
        .chain([&m.b])
        .all(|x| x.swizzle == 0 && !x.lbo_abs && usize::from(x.region) < p.smem.regions.len());
    // Scale-factor addresses from lane 0 (the atom's lanes start at the address's lane).
    let lanes_ok = sa.lane == 0 && sb.lane == 0 && d >> 16 == 0;
    if !(forms_ok && fields_ok && regions_ok && lanes_ok) || n == 0 || n > 256 {
        return None;
    }
    // The columns are the operand fields until the issue sets the addresses
    // ([`SfSpec::at`]).
    let col = |t: &tcgen05_ir::TmemRef| u32::from(t.col);
    Some(MmaPlan {
        kind: f.kind,
        m: if pair { 256 } else { 128 },
        n,
        // Bytes of A's and B's rows: K = 32 f8 elements or 64 e2m1 (two a byte); twice
        // that with sparse A (`sparse`: 2:4 on the bytes of e2m1 pairs, 4:8 pairwise).
        k: if f.sp { 64 } else { 32 },
        a_ty,
        b_ty,
        d_f16: false,
        neg_a: neg_a && !fp4,
        neg_b: neg_b && !fp4,
        saturate: false,
        a,
        a_col,
        b: m.b,
        d_col: d & 0xFFFF,
        enable_d: m.enable_input_d || faults.has(Fault::MmaIgnoresEnableD),
        scale_d: 0,
        dol: None,
        dol_inverted: false,
        pair,
        ashift: false,
        opaque: false,
        sf: Some(SfSpec {
            a_col: col(sa),
            b_col: col(sb),
            a_id: idesc >> 29 & 3,
            b_id: idesc >> 4 & 3,
            blocks,
            fp4,
            ue4m3,
            sign: if fp4 && neg_a != neg_b { -1.0 } else { 1.0 },
        }),
        sp: f.sp.then_some(sparse::Sp { sel: 0, col: 0 }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CUTLASS's atom, evaluated by hand for a few factors: SFA row 40 (partition 1) is lane
    /// 8 (+ 32 rep) of sub-column 4 (column 1, byte 0); with SF ID 2, byte 2. SFB column 100
    /// is lane 4 of sub-column 12 (column 3).
    #[test]
    fn factors_sit_32_to_a_column_in_the_sf_id_byte() {
        let mut t = Tmem::new();
        // Every cell of columns 10..14 holds a distinct word: lane << 16 | column << 8 | 0x7F.
        for lane in 0..128 {
            for col in 10..14 {
                t.set(lane, col, lane << 16 | col << 8 | 0x7F);
            }
        }
        // Row 40, replica 1: lane 8 + 32, column 10 + 1, byte 0.
        assert_eq!(factor_at(&mut t, 10, 0, 40, 0, 1), Some(0x7F));
        // Byte 1 of that cell is its column (11), byte 2 its lane (40).
        assert_eq!(factor_at(&mut t, 10, 1, 40, 0, 1), Some(11));
        assert_eq!(factor_at(&mut t, 10, 2, 40, 0, 1), Some(40));
        // Column 100 of scale_B, replica 3: lane 4 + 96, column 10 + 3, byte 2 = lane 100.
        assert_eq!(factor_at(&mut t, 10, 2, 100, 0, 3), Some(100));
        // A second factor (s = 1) is the next byte.
        assert_eq!(factor_at(&mut t, 10, 0, 40, 1, 1), Some(11));
        assert_eq!(ue8m0(127), 1.0);
        assert_eq!(ue8m0(125), 0.25);
        assert_eq!(ue8m0(130), 8.0);
        assert!(ue8m0(0xFF).is_nan());
        // UE4M3 (§5.2.3), by hand: 0x38 = exponent 7 (bias 7), mantissa 0: 1.0; 0x3C: 1.5;
        // 0x7E: 1.75 · 2^8 = 448; 0x08: 2^-6; subnormal 0x03: 3/8 · 2^-6; 0x7F NaN.
        assert_eq!(ue4m3(0x38), 1.0);
        assert_eq!(ue4m3(0x3C), 1.5);
        assert_eq!(ue4m3(0x7E), 448.0);
        assert_eq!(ue4m3(0x08), 2f32.powi(-6));
        assert_eq!(ue4m3(0x03), 3.0 * 2f32.powi(-9));
        assert_eq!(ue4m3(0x00), 0.0);
        assert!(ue4m3(0x7F).is_nan());
    }

    /// Two blocks of packed e2m1 (2X): A bytes 0x22 (every element 1.0), B bytes 0x44 (2.0);
    /// block 0 (bytes 0..16, elements 0..32) scaled by 2 · 1, block 1 by 0.5 · 4:
    /// 32 · 2 · 2 + 32 · 2 · 2 = 256; negated A gives -256.
    #[test]
    fn packed_e2m1_blocks_take_their_own_factors() {
        let mut f = Factors {
            a: vec![2.0, 0.5],
            b: vec![1.0, 4.0],
            n: 1,
            blocks: 2,
            fp4: true,
            sign: 1.0,
        };
        let (a, b) = ([f32::from(0x22u8); 32], [f32::from(0x44u8); 32]);
        assert_eq!(f.dot(&a, &b, 0, 0), 256.0);
        f.sign = -1.0;
        assert_eq!(f.dot(&a, &b, 0, 0), -256.0);
        assert_eq!(E2M1[0x7], 6.0);
        assert_eq!(E2M1[0xB], -1.5);
    }

    /// The integer table is the value table doubled, nibble by nibble.
    #[test]
    fn e2m1_halves_are_twice_the_values() {
        for (h, v) in E2M1_HALVES.iter().zip(E2M1) {
            assert_eq!(*h as f32, 2.0 * v);
        }
    }

    /// Quarters in the sums: A bytes 0x9F (low nibble -6.0, high -0.5), B bytes 0x31 (low
    /// 0.5, high 1.5): each byte pair gives -6 · 0.5 + -0.5 · 1.5 = -3.75, a block of 16
    /// bytes -60; factors 1 and 2 on the two blocks: -60 - 120 = -180.
    #[test]
    fn packed_e2m1_sums_keep_their_quarters() {
        let f = Factors {
            a: vec![1.0, 2.0],
            b: vec![1.0, 1.0],
            n: 1,
            blocks: 2,
            fp4: true,
            sign: 1.0,
        };
        let (a, b) = ([f32::from(0x9Fu8); 32], [f32::from(0x31u8); 32]);
        assert_eq!(f.dot(&a, &b, 0, 0), -180.0);
        // One byte pair alone: -3.75 in block 0, nothing in block 1.
        let mut one = [0f32; 32];
        one[3] = f32::from(0x9Fu8);
        assert_eq!(f.dot(&one, &b, 0, 0), -3.75);
    }
}
