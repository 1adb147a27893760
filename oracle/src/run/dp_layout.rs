//! Where an MMA's D lives in TMEM: the data-path layouts of §9.7.16.10.5 that fold D's rows
//! over the 128 lanes (the ISA gives them only as figures, OQ-22).
//!
//! The table of §9.7.16.10.5 names a layout per (M, `.cta_group`, sparsity, `.ws`):
//!
//! | layout | form | organization | D of one CTA |
//! |---|---|---|---|
//! | A | M = 256, `::2` | 4x1 | 128 rows × N |
//! | B | M = 128, `::2`, dense A | 2x2 | 64 rows × N |
//! | D | M = 128, `::1` | 4x1 | 128 rows × N |
//! | E | M = 64, `::1`, `.ws` | 2x2 | 64 rows × N |
//! | G | M = 32, `::1`, `.ws` | 1x4 | 32 rows × N |
//!
//! "4x1" is the identity (row m in lane m, column n in column n). "2x2" and "1x4" split the
//! N columns into 2 (or 4) blocks of N/2 (N/4) columns and put block j in the lanes
//! `j · 64 ..` (`j · 32 ..`): D row m, column n is in
//!
//! ```text
//! lane   = m + R · (n / (N / P))        (R rows per block: 64 or 32; P = 128 / R blocks)
//! column = n % (N / P)
//! ```
//!
//! so the MMA writes all 128 lanes but only N / P columns. Derived from CUTLASS's TMEM
//! fragment atoms (`cute/atom/mma_traits_sm100.hpp`, `UMMA::tmem_frg` and `tmem_frg_ws`),
//! written in "virtual" addresses with lane stride 1 and column stride 128: the 2SM
//! `M_MMA = 64` ("2x2", layout B) and `.ws` `M_MMA = 64` ("2x2", layout E) atoms are
//! `Shape<_64, Shape<N/2, _2>>`, `Stride<_1, Stride<_128, _64>>` (row m, column block j,
//! column n0 in the block at `m + 128 · n0 + 64 · j`: lane m + 64 j, column n0); the `.ws`
//! `M_MMA = 32` ("1x4", layout G) atom is `Shape<_32, Shape<N/4, _4>>`, `Stride<_1,
//! Stride<_128, _32>>` (lane m + 32 j, column n0). The same mapping is documented
//! independently by TVM's `tmem_datapath_layout` ("B": `(r, c) → (r + 64 · (c // (N/2)),
//! c % (N/2))`). In a `::2` pair (layout B) CTA h holds rows M/2 · h .. of D, from the A rows
//! of its own shared memory (CUTLASS's `M_MMA_SM` = 64 "for UMMA_2SM_128xNx16").

use tcgen05_ir::{CtaGroup, Mma};

/// A folded data-path layout (module documentation): `rows` rows of D per block of lanes,
/// `128 / rows` blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fold {
    /// Rows of D (per CTA) and lanes per block: 128 (layouts A, D: no fold), 64 (B, E) or
    /// 32 (G).
    pub rows: u32,
}

impl Fold {
    /// No folding (layouts A and D).
    pub const NONE: Fold = Fold { rows: 128 };

    /// Blocks of columns (1, 2 or 4).
    pub fn parts(self) -> u32 {
        128 / self.rows
    }

    /// The TMEM columns D of N columns takes: N / blocks.
    pub fn cols(self, n: u32) -> u32 {
        n / self.parts()
    }

    /// D's (row, column) held in (`lane`, `col`) (relative to D's address) of a D of `n`
    /// columns.
    pub fn logical(self, lane: u32, col: u32, n: u32) -> (u32, u32) {
        (lane % self.rows, col + lane / self.rows * self.cols(n))
    }
}

/// The layout of an MMA's D where §9.7.16.10.5 gives it and the oracle models it: layouts B
/// (dense `::2` M = 128), E (`.ws` M = 64) and G (`.ws` M = 32) fold; A and D (M = 256
/// `::2`, M = 128 `::1`) do not. `None` for the others: sparse forms (layout C, and `.ws`
/// sparse, whose values the oracle does not compute), block-scaled forms (values not
/// computed), non-ws M = 64 (layout F: rows spread over half the lanes, not modelled); their
/// footprint stays the conservative `lanes from the address × N columns`.
pub fn d_fold(m: &Mma) -> Option<Fold> {
    let f = &m.form;
    if f.sp || f.block_scale {
        return None;
    }
    let mm = (m.idesc >> 24 & 0x1F) << 4;
    match (f.cta_group, f.ws, mm) {
        (CtaGroup::One, _, 128) | (CtaGroup::Two, false, 256) => Some(Fold::NONE),
        (CtaGroup::Two, false, 128) | (CtaGroup::One, true, 64) => Some(Fold { rows: 64 }),
        (CtaGroup::One, true, 32) => Some(Fold { rows: 32 }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CUTLASS's atom as a function: the virtual address `m + 128 · n0 + R · j` of D row m,
    /// column n = n0 + (N / P) · j (CuTe's column-major order of `Shape<N/P, P>`), split into
    /// lane (address mod 128) and column (address / 128).
    fn cutlass_atom(rows: u32, n: u32, m: u32, col: u32) -> (u32, u32) {
        let p = 128 / rows;
        let (n0, j) = (col % (n / p), col / (n / p));
        let addr = m + 128 * n0 + rows * j;
        (addr % 128, addr / 128)
    }

    #[test]
    fn folds_agree_with_cutlass_atoms_cell_for_cell() {
        for rows in [128, 64, 32] {
            let fold = Fold { rows };
            for n in [64, 128, 256] {
                let mut seen = vec![false; (128 * fold.cols(n)) as usize];
                for m in 0..rows {
                    for c in 0..n {
                        let (lane, col) = cutlass_atom(rows, n, m, c);
                        assert!(col < fold.cols(n), "rows {rows} n {n}: ({m}, {c})");
                        // The inverse: (lane, col) holds (m, c), and no cell holds two.
                        assert_eq!(fold.logical(lane, col, n), (m, c));
                        let k = (lane * fold.cols(n) + col) as usize;
                        assert!(!seen[k], "two rows in one cell");
                        seen[k] = true;
                    }
                }
                assert!(
                    seen.iter().all(|&s| s),
                    "every cell of the footprint written"
                );
            }
        }
    }

    #[test]
    fn hand_worked_cells_of_layouts_b_and_g() {
        // Layout B, N = 64: D (5, 40) is in the second column block (n >= 32): lane
        // 5 + 64 = 69, column 40 - 32 = 8.
        let b = Fold { rows: 64 };
        assert_eq!(b.logical(69, 8, 64), (5, 40));
        assert_eq!(b.logical(5, 8, 64), (5, 8));
        // Layout G, N = 128 (blocks of 32 columns): D (31, 127) is in block 3: lane 127,
        // column 31; D (0, 32) in block 1: lane 32, column 0.
        let g = Fold { rows: 32 };
        assert_eq!(g.logical(127, 31, 128), (31, 127));
        assert_eq!(g.logical(32, 0, 128), (0, 32));
        assert_eq!(Fold::NONE.logical(77, 3, 64), (77, 3));
    }
}
