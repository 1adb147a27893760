//! Sparse A (`tcgen05.mma.sp`, §9.7.16.10.8) for kinds f16, tf32, f8f6f4 (e4m3 / e5m2) and
//! i8, `cta_group::1` M = 128 and `cta_group::2` M = 256 (128 rows in each CTA), not `.ws`;
//! and for the block-scaled kinds `scaled` implements (mxf8f6f4 2:4 on its f8 elements;
//! mxf4 / mxf4nvf4 4:8 in pairs, which on the bytes `scaled` reads, two e2m1 a byte, is
//! 2:4 on bytes).
//!
//! A is stored packed, K/2 elements per row (the dense A layout of the kind: 32 bytes per
//! row). The metadata in TMEM gives, per chunk of each row, where the stored elements go;
//! the others are zero. The MMA is then the dense product with K = 2 × the dense K.
//!
//! Metadata layout (the figures of §9.7.16.10.8.4, as CUTLASS's `UMMA::tmem_e_frg` lays the
//! metadata out), described from the cells' side, for the 128 rows of the CTA and the
//! metadata address's column `c` (lane field 0):
//! - f16 / tf32 (8 chunks of 4 / 2 elements per row): the column `c + selector`; the cell
//!   of lane `l` holds 8 nibbles; nibble `q` describes row `(l & !8) | (q / 4) · 8`,
//!   chunk `(q mod 4) + 4 · ((l / 8) mod 2)`;
//! - f8f6f4 / i8 / the block-scaled kinds (16 chunks): columns `c` and `c + 1`; nibble `q`
//!   of column `c + h` in lane `l` describes row `l`, chunk `8h + q`. The selector is not
//!   used (it must be 0, or is taken as 0).
//!
//! A nibble's bits `2s..2s+2` give the position in the chunk of stored element s (2:4);
//! for tf32 (1:2) the position is bit 1 of the nibble (`0b0100` → 0, `0b1110` → 1: the
//! index pairs count 16-bit halves). Values the ISA leaves undefined or unstated are read
//! by the same rule.

use super::*;

/// Where a sparse MMA's metadata is and how it is read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sp {
    /// The sparsity selector (idesc bits 0-1).
    pub(super) sel: u32,
    /// The metadata's column (`[sp-meta-tmem]`), set at issue ([`MmaPlan::meta_addr`]).
    pub(super) col: u32,
}

/// Whether the simulator computes sparse MMA `m` (module documentation); the others write
/// placeholder values.
pub(super) fn implemented(m: &Mma) -> bool {
    let f = &m.form;
    let mm = (m.idesc >> 24 & 0x1F) << 4;
    f.sp && !f.block_scale
        && !f.ws
        && matches!(
            f.kind,
            MmaKind::F16 | MmaKind::Tf32 | MmaKind::I8 | MmaKind::F8f6f4
        )
        && mm
            == if f.cta_group == CtaGroup::Two {
                256
            } else {
                128
            }
}

/// The metadata nibbles of the CTA's 128 rows, `chunks` per row (row-major), read from
/// `tmem` at column `col` (module documentation).
fn nibbles(kind: MmaKind, tmem: &mut Tmem, sp: Sp) -> Result<Vec<u8>, MmaError> {
    let mut out = vec![0u8; 128 * 16];
    let wide = !matches!(kind, MmaKind::F16 | MmaKind::Tf32);
    let cols: &[u32] = if wide { &[0, 1] } else { &[0] };
    let first = if wide { sp.col } else { sp.col + sp.sel };
    for l in 0..128u32 {
        for &h in cols {
            let cell = tmem.read(l, first + h).ok_or(MmaError::MetaOutsideTmem)?;
            for q in 0..8u32 {
                let v = (cell >> (4 * q) & 0xF) as u8;
                let (row, chunk) = if wide {
                    (l, 8 * h + q)
                } else {
                    ((l & !8) | ((q / 4) * 8), q % 4 + 4 * (l / 8 % 2))
                };
                out[(row * 16 + chunk) as usize] = v;
            }
        }
    }
    Ok(out)
}

/// The full rows (128 × `k`) of a sparse A whose packed rows (`k / 2` elements each) are
/// `packed`, placed through the metadata in `tmem` (module documentation).
pub(super) fn expand(
    kind: MmaKind,
    packed: &Rows,
    k: usize,
    tmem: &mut Tmem,
    sp: Sp,
) -> Result<Vec<f32>, MmaError> {
    let meta = nibbles(kind, tmem, sp)?;
    let tf32 = kind == MmaKind::Tf32;
    let width = if tf32 { 2 } else { 4 };
    let stored = width / 2;
    let mut full = vec![0f32; 128 * k];
    for r in 0..128usize {
        let at = packed.row(r);
        let data = packed.data.borrow();
        let src = &data[at..at + k / 2];
        let dst = &mut full[r * k..(r + 1) * k];
        for (chunk, vals) in src.chunks_exact(stored).enumerate() {
            let v = meta[r * 16 + chunk];
            for (s, &x) in vals.iter().enumerate() {
                let pos = if tf32 {
                    usize::from(v >> 1 & 1)
                } else {
                    usize::from(v >> (2 * s) & 3)
                };
                dst[chunk * width + pos] = x;
            }
        }
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::super::tests::mma as i8_mma;
    use super::*;
    use crate::faults::Faults;

    /// An i8 sparse MMA (K = 64), A all ones (packed), B column 0 holding k at row k, the
    /// metadata of row 0 naming positions (0, 1) in every chunk but chunk 0, which names
    /// (1, 3) (0b1101): D[0][0] = (1 + 3) + Σ_{j=1..15} (4j + 4j + 1) = 4 + 975.
    #[test]
    fn i8_rows_take_the_elements_their_metadata_names() {
        let idesc = 1 << 2 | 2 << 4 | 8 << 17 | 8 << 24;
        let (p, m) = i8_mma(CtaGroup::One, idesc, true);
        let mut plan = plan(&p, &m, 0, None, Faults::NONE).expect("runs");
        plan.meta_addr(64).expect("lane 0");
        let mut t = Tmem::new();
        for lane in 0..128 {
            for col in [64, 65] {
                assert!(t.set(lane, col, 0x4444_4444));
            }
        }
        assert!(t.set(0, 64, 0x4444_444D));
        // A: every stored byte 1. B: row n, element k at (n % 8) * 16 + (k % 16) + (k / 16)
        // * LBO (128) + (n / 8) * SBO (256); column 0 of B is row 0.
        let a = Region::from_words(vec![0x0101_0101; 1024]);
        let mut bw = vec![0u32; 1024];
        for k in 0..64u32 {
            let addr = (k % 16 + k / 16 * 128) as usize;
            bw[addr / 4] |= k << (8 * (addr % 4));
        }
        let regions = vec![Rc::new(a), Rc::new(Region::from_words(bw))];
        plan.perform(&regions, &mut t).expect("in range");
        assert_eq!(t.get(0, 0), Some(979));
        // Row 8 (lane 8) uses its own metadata, (0, 1) everywhere: Σ_j (8j + 1) = 976.
        assert_eq!(t.get(8, 0), Some(976));
    }

    /// f16 / tf32 metadata: nibble q of lane l describes row (l & !8) | (q / 4) · 8, chunk
    /// q % 4 + 4 · ((l / 8) % 2); every (row, chunk) exactly once.
    #[test]
    fn every_f16_row_chunk_has_one_nibble() {
        let mut seen = vec![0u32; 128 * 8];
        for l in 0..128u32 {
            for q in 0..8u32 {
                let (row, chunk) = ((l & !8) | ((q / 4) * 8), q % 4 + 4 * (l / 8 % 2));
                seen[(row * 8 + chunk) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }
}
