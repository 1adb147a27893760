//! MMA numerics of the simulator (reference §3.7), for the forms it implements:
//! `tcgen05.mma{.ws}.cta_group::1` dense, not `.block_scale`, kinds f16 (A/B f16 or bf16,
//! D f16 or f32), tf32, f8f6f4 with e4m3/e5m2 A/B, and i8 (A/B s8/u8, D s32); M = 128 (and
//! M = 32, 64 for `.ws`); A from shared memory in the canonical K-major layout without
//! swizzle, or from TMEM; no transpose. Collector qualifiers change nothing (reuse is
//! opportunistic); a zero-column mask must be 0.
//!
//! - Shared-memory layout (canonical K-major, no swizzle; the ISA gives it in figures,
//!   OQ-29): element (row r, k) of an operand with `T = 16 / element bytes` elements per
//!   16-byte core-matrix row lives at `start + (r % 8) * 16 + (r / 8) * SBO + (k % T) * bytes
//!   + (k / T) * LBO`, with LBO and SBO the descriptor's byte offsets. A is M x K, B is N x K.
//! - A from TMEM: row m in lane m, its K elements packed little-endian across the columns
//!   from `a` (4 bytes per cell).
//! - D (data-path layouts A and D, §9.7.16.10.5): row m in lane m, column n in column
//!   `d + n`. The folded layouts B (`cta_group::2`, M = 128: 64 rows per CTA), E (`.ws`,
//!   M = 64) and G (`.ws`, M = 32) put the N columns in 128 / R blocks of N·R/128 columns, block
//!   j in lanes `R·j ..` (R rows): row m, column n in lane `m + R·(n / (N·R/128))`, column
//!   `d + n % (N·R/128)` (the "2x2" and "1x4" atoms of CUTLASS's `UMMA::tmem_frg` /
//!   `tmem_frg_ws`; the ISA gives these layouts only in figures, OQ-22). A 16-bit D
//!   sits in the low half of its cell, the high half 0 (MMA-D-UNPACKED).
//! - Numerics (OQ-19 leaves them open): products summed in f32 in eight interleaved partial
//!   sums (k mod 8) added pairwise, then added to
//!   `D * 2^-scale` when enable-input-d holds; an f16 D is rounded to nearest even; i8 sums
//!   in 32-bit wrapping arithmetic, saturating when idesc bit 3 is set.
//! - A NaN result is written as the canonical quiet NaN, `0x7FC0_0000` (f16 D: `0x7E00`):
//!   the sign and payload of a NaN otherwise depend on the host's operand order.
//! - disable-output-lane: lane m is not written when bit m is set (MMA-DOL-SEM).
//!
//! - Block scaling (`.block_scale`): kinds mxf8f6f4 (e4m3/e5m2), mxf4 and mxf4nvf4 (e2m1)
//!   with UE8M0 factors, `::1` M = 128 and `::2` M = 256: module `scaled`.
//! - Sparse A (`.sp`) of kinds f16, tf32, f8f6f4 and i8, `::1` M = 128 and `::2` M = 256,
//!   not `.ws`: module `sparse` (A packed, expanded through the metadata in TMEM, K doubled).
//!   Other block-scaled and sparse forms write placeholder values ([`OPAQUE`]).
//!
//! Every other form makes the run `NotRun` (the target cannot run it), decided at issue.

use super::faults::{Fault, Faults};
use super::smem::Region;
use super::tmem::{Lazy, Tmem};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use tcgen05_ir::{CtaGroup, Mma, MmaA, MmaKind, Program, SmemDesc};

mod numbers;
mod operands;
mod scaled;
mod sparse;

/// Why the simulator cannot run an MMA: a form it does not implement (decided at issue), or an
/// operand outside its memory (found when the MMA performs). The run becomes
/// [`tcgen05_ir::outcome::Outcome::NotRun`] with this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MmaError {
    /// A form outside the implemented ones (see the module documentation).
    #[error("the simulator does not implement {0} (tcgen05.mma)")]
    NotImplemented(&'static str),
    /// An A or B element type outside the implemented ones.
    #[error("the simulator does not implement this {0} type")]
    OperandType(&'static str),
    /// A descriptor names a data region the program does not have.
    #[error("an MMA operand's data region does not exist")]
    NoRegion,
    /// An operand element lies beyond its data region.
    #[error("MMA operand at byte {0} is outside its data region")]
    OutsideRegion(u32),
    /// A from TMEM reaches past the 128 x 512 cells.
    #[error("MMA A outside TMEM")]
    AOutsideTmem,
    /// D reaches past the 128 x 512 cells.
    #[error("MMA D outside TMEM")]
    DOutsideTmem,
    /// Block-scale factors reach past the 128 x 512 cells.
    #[error("MMA scale factors outside TMEM")]
    ScaleOutsideTmem,
    /// Sparse metadata reaches past the 128 x 512 cells, or its address has a lane field.
    #[error("MMA sparse metadata outside TMEM (or not from lane 0)")]
    MetaOutsideTmem,
}

use numbers::*;
pub use numbers::{f16_to_f32, f32_to_f16};
use operands::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    F16,
    Bf16,
    Tf32,
    S8,
    U8,
    E4m3,
    E5m2,
}

impl Elem {
    fn bytes(self) -> u32 {
        match self {
            Elem::F16 | Elem::Bf16 => 2,
            Elem::Tf32 => 4,
            Elem::S8 | Elem::U8 | Elem::E4m3 | Elem::E5m2 => 1,
        }
    }
}

/// One MMA, decoded at issue and performed later.
#[derive(Debug, Clone)]
pub struct MmaPlan {
    kind: MmaKind,
    m: u32,
    n: u32,
    k: u32,
    a_ty: Elem,
    b_ty: Elem,
    d_f16: bool,
    neg_a: bool,
    neg_b: bool,
    saturate: bool,
    a: Option<SmemDesc>,
    a_col: u32,
    b: SmemDesc,
    d_col: u32,
    enable_d: bool,
    scale_d: u8,
    dol: Option<Vec<u32>>,
    dol_inverted: bool,
    /// `cta_group::2`: D in both CTAs of the pair (see the module documentation).
    pair: bool,
    /// `.ashift`: A's rows shifted down by one.
    ashift: bool,
    /// `.sp` or a `.block_scale` form not implemented: D cells get [`OPAQUE`] values.
    opaque: bool,
    /// An implemented `.block_scale` form (`scaled`): where its scale factors are.
    sf: Option<scaled::SfSpec>,
    /// An implemented `.sp` form (`sparse`): its selector and metadata column; `k` is the
    /// sparse K, A's stored rows hold `k / 2` elements.
    sp: Option<sparse::Sp>,
}

/// The value base of the cells a `.sp` MMA or a block-scaled form that `scaled` does not
/// implement writes: the simulator does not compute them (their layouts are figure-only,
/// OQ-22, OQ-23, OQ-29, OQ-32); cell (lane, column) gets `OPAQUE ^ (lane * 512 + column)`.
pub const OPAQUE: u32 = 0x5BA5_0000;

/// One CTA's part of an MMA: its data regions and its TMEM.
pub type Half<'a> = (&'a [Rc<Region>], &'a mut Tmem);

impl MmaPlan {
    /// Whether D is in both CTAs of the pair (`cta_group::2`).
    pub fn pair(&self) -> bool {
        self.pair
    }

    /// Block scaling: the TMEM addresses `[scale-A-tmem]` and `[scale-B-tmem]` as issued
    /// (`scaled`); nothing for other MMAs. `Err` for an address whose lane field is not 0.
    pub fn scale_addrs(&mut self, a: u32, b: u32) -> Result<(), MmaError> {
        match &mut self.sf {
            Some(sf) => sf.at(a, b),
            None => Ok(()),
        }
    }

    /// Sparse A: the TMEM address `[sp-meta-tmem]` as issued (`sparse`); nothing for other
    /// MMAs. `Err` for an address whose lane field is not 0.
    pub fn meta_addr(&mut self, a: u32) -> Result<(), MmaError> {
        match &mut self.sp {
            Some(sp) if a >> 16 == 0 => {
                sp.col = a & 0xFFFF;
                Ok(())
            }
            Some(_) => Err(MmaError::MetaOutsideTmem),
            None => Ok(()),
        }
    }

    /// Whether an earlier MMA `self` is pipeline-ordered before `later` (MCM-PIPE-MMA-MMA:
    /// same accumulator and shape, and with `same_kind` (the 9.2+ reading, OQ-27) the same
    /// kind).
    pub fn same_pipeline(&self, later: &MmaPlan, same_kind: bool) -> bool {
        self.d_col == later.d_col
            && self.m == later.m
            && self.n == later.n
            && (!same_kind || self.kind == later.kind)
    }

    /// Performs the MMA: reads A and B now (from the CTA's data regions, or A from `tmem`),
    /// and writes D into `tmem` as a lazy layer whose cells are computed when read (the
    /// values are those of an eager computation now).
    pub fn perform(&self, regions: &[Rc<Region>], tmem: &mut Tmem) -> Result<(), MmaError> {
        self.perform_halves([Some((regions, tmem)), None])
    }

    /// Performs the MMA on the CTAs of `halves`: `[even, odd]` of the pair for
    /// `cta_group::2` (`None` where the CTA does not exist), `[own, None]` for `::1`.
    pub fn perform_halves(&self, mut halves: [Option<Half<'_>>; 2]) -> Result<(), MmaError> {
        let kk = self.k as usize;
        let parts = if self.pair { 2 } else { 1 };
        // Rows of D (and A) in each CTA; N columns, B's rows split between the CTAs.
        let rows = if self.pair && self.m == 128 {
            64
        } else {
            self.m.min(128)
        };
        let b_parts: Vec<(u32, &[Rc<Region>])> = if self.opaque {
            Vec::new()
        } else {
            let own = halves.iter().flatten().map(|h| h.0).next().unwrap_or(&[]);
            let even = halves[0].as_ref().map_or(own, |h| h.0);
            let odd = halves[1].as_ref().map_or(own, |h| h.0);
            if self.pair {
                vec![(0, even), (self.n / 2, odd)]
            } else {
                vec![(0, even)]
            }
        };
        let b = if self.opaque {
            None
        } else {
            Some(Rc::new(Rows::smem(
                &b_parts, &self.b, self.b_ty, self.neg_b, self.n, self.k,
            )?))
        };
        // A's stored elements per row: K, or K / 2 for sparse A (`sparse`).
        let ak = if self.sp.is_some() {
            self.k / 2
        } else {
            self.k
        };
        for (h, half) in halves.iter_mut().enumerate().take(parts) {
            let Some((regions, tmem)) = half else {
                continue;
            };
            let a = if self.opaque {
                None
            } else {
                Some(match &self.a {
                    Some(desc) => {
                        Rows::smem(&[(0, *regions)], desc, self.a_ty, self.neg_a, rows, ak)?
                    }
                    None => {
                        let mut a = Vec::with_capacity(rows as usize * ak as usize);
                        let at = vec![Cell::new(NOT_YET); rows as usize];
                        let mut raw = Vec::new();
                        // Every kind's K elements fill 32 bytes: 8 cells, 2 core-matrix rows.
                        let cells = (ak * self.a_ty.bytes()).div_ceil(4);
                        let last_col = self.a_col + cells.max(1) - 1;
                        // The lanes that a lazy layer owns in A's columns, looked up once
                        // (`Tmem::lane_clean` of lane r is its bit being clear; reading a
                        // lane's cells below changes only that lane's bits).
                        let owned = if cells == 8 && last_col < super::tmem::COLS {
                            tmem.owned_lanes(self.a_col, last_col)
                        } else {
                            u128::MAX
                        };
                        for r in 0..rows {
                            if owned >> r & 1 == 0 {
                                // No lazy cell: keep the stored cells, decoded on first use
                                // (`Rows::decode_row`; reading them changes nothing).
                                if raw.is_empty() {
                                    raw.resize(8 * rows as usize, 0);
                                }
                                let r8 = 8 * r as usize;
                                tmem.stored_run(r, self.a_col, &mut raw[r8..r8 + 8]);
                                continue;
                            }
                            at[r as usize].set(a.len() as u32);
                            // Elements narrower than a cell share it: read each cell once.
                            let mut last: Option<(u32, u32)> = None;
                            for k in 0..ak {
                                let byte = k * self.a_ty.bytes();
                                let col = self.a_col + byte / 4;
                                let cell = match last {
                                    Some((c, v)) if c == col => v,
                                    _ => {
                                        let v = tmem.read(r, col).ok_or(MmaError::AOutsideTmem)?;
                                        last = Some((col, v));
                                        v
                                    }
                                };
                                let v = decode(self.a_ty, cell >> (8 * (byte % 4)), cell);
                                a.push(if self.neg_a { -v } else { v });
                            }
                        }
                        Rows::decoded(a, at, raw, self.a_ty, self.neg_a, ak)
                    }
                })
            };
            // Sparse A: the stored rows placed through this CTA's metadata (`sparse`).
            let a = match (a, self.sp) {
                (Some(packed), Some(sp)) => {
                    let full = sparse::expand(self.kind, &packed, kk, tmem, sp)?;
                    let at = (0..rows).map(|r| Cell::new(r * self.k)).collect();
                    Some(Rows::decoded(
                        full,
                        at,
                        Vec::new(),
                        self.a_ty,
                        self.neg_a,
                        self.k,
                    ))
                }
                (a, _) => a,
            };
            // The folded layouts B, E and G (module documentation): every lane, N·R/128
            // columns. `.sp` and `.block_scale` results keep rows in lanes (their values are
            // not computed).
            let fold = rows < 128 && !self.opaque;
            let (lanes_used, cols) = if fold {
                (128, self.n / (128 / rows))
            } else {
                (rows, self.n)
            };
            let mut lanes = 0u128;
            if self.dol.is_none() && lanes_used > 0 {
                // No disable-output-lane: every lane used (at most 128).
                lanes = u128::MAX >> (128 - lanes_used.min(128));
            }
            for m in (0..lanes_used).filter(|_| self.dol.is_some()) {
                // DOL bit 128 * h + m for lane m of the pair's CTA h (OQ-31 for ::2).
                let bit = 128 * h as u32 + m;
                let skip = self.dol.as_ref().is_some_and(|d| {
                    d.get((bit / 32) as usize)
                        .is_some_and(|w| (w >> (bit % 32) & 1 == 1) != self.dol_inverted)
                });
                if !skip {
                    lanes |= 1 << m;
                }
            }
            // Block scaling (`scaled`): the factors as they are in this CTA's TMEM now.
            let sf = match &self.sf {
                Some(spec) => Some(spec.read(tmem, self.n)?),
                None => None,
            };
            let product = Product {
                sf,
                int: self.kind == MmaKind::I8,
                k: kk,
                a,
                b: b.clone(),
                ashift: self.ashift,
                d_col: self.d_col,
                enable_d: self.enable_d,
                d_f16: self.d_f16,
                saturate: self.saturate,
                scale: (2f32).powi(-i32::from(self.scale_d)),
                rows: if fold { rows } else { 128 },
                cols,
            };
            if !tmem.write_lazy(self.d_col, cols, lanes, Rc::new(product)) {
                return Err(MmaError::DOutsideTmem);
            }
        }
        Ok(())
    }
}

/// The D of one performed MMA, cell by cell (row m in lane m, column n at `d + n`).
#[derive(Debug)]
struct Product {
    /// Block scaling: the scale factors (`scaled`), applied to each cell's dot product.
    sf: Option<scaled::Factors>,
    int: bool,
    k: usize,
    /// `None` for `.sp` / `.block_scale`: the cells get [`OPAQUE`] values.
    a: Option<Rows>,
    b: Option<Rc<Rows>>,
    ashift: bool,
    d_col: u32,
    enable_d: bool,
    d_f16: bool,
    saturate: bool,
    scale: f32,
    /// Rows of D per block of lanes (128: no fold; 64, 32: layouts B/E, G).
    rows: u32,
    /// Columns of D per block (N with no fold).
    cols: u32,
}

impl Lazy for Product {
    fn needs_old(&self) -> bool {
        self.enable_d
    }

    fn value(&self, lane: u32, col: u32, old: u32) -> u32 {
        let (Some(ra), Some(rb)) = (&self.a, &self.b) else {
            return OPAQUE ^ (lane * 512 + self.d_col + col);
        };
        let (lane, col) = self.logical(lane, col);
        let kk = self.k;
        let (ao, bo) = (ra.row(self.a_row(lane)), rb.row(col as usize));
        let (a, b) = (ra.data.borrow(), rb.data.borrow());
        let (ar, br) = (&a[ao..ao + kk], &b[bo..bo + kk]);
        match &self.sf {
            Some(sf) => self.finish(sf.dot(ar, br, lane, col), old),
            None => self.finish(dot8(ar, br), old),
        }
    }

    fn values(&self, lane: u32, col: u32, olds: &[u32], out: &mut [u32]) {
        let (Some(ra), Some(rb)) = (&self.a, &self.b) else {
            for (k, x) in out.iter_mut().enumerate() {
                *x = OPAQUE ^ (lane * 512 + self.d_col + col + k as u32);
            }
            return;
        };
        if self.sf.is_some() {
            // Block-scaled: cell by cell (`value` applies the factors).
            for (k, (x, &old)) in out.iter_mut().zip(olds).enumerate() {
                *x = self.value(lane, col + k as u32, old);
            }
            return;
        }
        let (lane, col) = self.logical(lane, col);
        let ao = ra.row(self.a_row(lane));
        match self.k {
            32 => self.run_k::<32>(ra, rb, ao, col as usize, olds, out),
            16 => self.run_k::<16>(ra, rb, ao, col as usize, olds, out),
            8 => self.run_k::<8>(ra, rb, ao, col as usize, olds, out),
            kk => {
                for k in 0..out.len() {
                    rb.row(col as usize + k);
                }
                let (a, b) = (ra.data.borrow(), rb.data.borrow());
                let arow = &a[ao..ao + kk];
                for (k, (x, &old)) in out.iter_mut().zip(olds).enumerate() {
                    let bo = rb.row(col as usize + k);
                    *x = self.finish(dot8(arow, &b[bo..bo + kk]), old);
                }
            }
        }
    }
}

impl Product {
    /// D's (row, column) held in the cell (`lane`, `col`) (relative to D's column): in the
    /// folded layouts, block `lane / rows` of the columns (module documentation).
    #[inline]
    fn logical(&self, lane: u32, col: u32) -> (u32, u32) {
        if self.rows >= 128 {
            (lane, col)
        } else {
            (lane % self.rows, col + lane / self.rows * self.cols)
        }
    }

    /// [`Lazy::values`] for `K` = `self.k` (8, 16 or 32), A row at `ao`: a run of a multiple
    /// of 4 cells in groups of 4 columns from its first ([`Rows::group`], four dot products
    /// at a time, [`dots4`]); another run in the groups of 4 columns from a multiple of 4
    /// that it meets ([`dots4`] where it covers 2 or more cells of one, a single cell alone
    /// with [`dot_k`]). Both give every cell the same sums in the same order.
    fn run_k<const K: usize>(
        &self,
        ra: &Rows,
        rb: &Rows,
        ao: usize,
        c0: usize,
        olds: &[u32],
        out: &mut [u32],
    ) {
        // The accumulate flag decided once per run, not per cell: the layers of a chain
        // alternate between accumulating and not, and a per-cell test of the flag is
        // mispredicted.
        if self.enable_d {
            self.run_kd::<K, true>(ra, rb, ao, c0, olds, out);
        } else {
            self.run_kd::<K, false>(ra, rb, ao, c0, olds, out);
        }
    }

    /// [`Product::run_k`] with `ACC` = `self.enable_d`.
    #[inline(always)]
    fn run_kd<const K: usize, const ACC: bool>(
        &self,
        ra: &Rows,
        rb: &Rows,
        ao: usize,
        c0: usize,
        olds: &[u32],
        out: &mut [u32],
    ) {
        let n = out.len();
        if n.is_multiple_of(4) && olds.len() == n && c0 + n <= rb.at.len() {
            // Whole groups of 4 columns from `c0` (the common case: an ld's runs are 8 or
            // more columns; the groups need not start at a multiple of 4).
            for q in 0..n / 4 {
                rb.group(c0 + 4 * q);
            }
            let (a, bt) = (ra.data.borrow(), rb.groups.borrow());
            let Some(arow) = a
                .get(ao..ao + K)
                .and_then(|x| <&[f32; K]>::try_from(x).ok())
            else {
                return;
            };
            for (q, (o, old)) in out
                .chunks_exact_mut(4)
                .zip(olds.chunks_exact(4))
                .enumerate()
            {
                let go = bt.at[c0 + 4 * q] as usize;
                let d = dots4::<K>(arow, &bt.data[go..go + 4 * K]);
                for j in 0..4 {
                    o[j] = self.finish_acc::<ACC>(d[j], old[j]);
                }
            }
            return;
        }
        // The run in pieces, one per group of 4 columns it meets: the cells of the piece from
        // cell k. The groups (or single rows) are built first.
        let piece = |k: usize| (4 - (c0 + k) % 4).min(n - k);
        let mut k = 0;
        while k < n {
            let take = piece(k);
            if take >= 2 {
                rb.group((c0 + k) / 4 * 4);
            } else {
                rb.row(c0 + k);
            }
            k += take;
        }
        let (a, b, bt) = (ra.data.borrow(), rb.data.borrow(), rb.groups.borrow());
        let Some(arow) = a
            .get(ao..ao + K)
            .and_then(|x| <&[f32; K]>::try_from(x).ok())
        else {
            return;
        };
        let mut k = 0;
        while k < n {
            let take = piece(k);
            let c = c0 + k;
            if take >= 2 {
                let go = bt.at[c / 4 * 4] as usize;
                let d = dots4::<K>(arow, &bt.data[go..go + 4 * K]);
                for (j, x) in out[k..k + take].iter_mut().enumerate() {
                    *x = self.finish_acc::<ACC>(d[c % 4 + j], olds[k + j]);
                }
            } else {
                let bo = rb.row(c);
                out[k] = self.finish_acc::<ACC>(dot_k::<K>(arow, &b[bo..bo + K]), olds[k]);
            }
            k += take;
        }
    }

    /// The A row that D row (lane) `lane` uses: `.ashift` makes D row m use A row m - 1
    /// (row 0 keeps A row 0).
    #[inline]
    fn a_row(&self, lane: u32) -> usize {
        if self.ashift {
            lane.saturating_sub(1) as usize
        } else {
            lane as usize
        }
    }

    /// The cell's value from its dot product and its value before the MMA.
    #[inline(always)]
    fn finish(&self, dot: f32, old: u32) -> u32 {
        if self.enable_d {
            self.finish_acc::<true>(dot, old)
        } else {
            self.finish_acc::<false>(dot, old)
        }
    }

    /// [`Product::finish`] with `ACC` = `self.enable_d`.
    #[inline(always)]
    fn finish_acc<const ACC: bool>(&self, dot: f32, old: u32) -> u32 {
        if self.int {
            // |a|, |b| <= 255 and K = 32: every partial sum of `dot8` is an integer below
            // 2^24 in magnitude, so the f32 sum is exact and the dot product fits an i32.
            let mut acc = i64::from(dot as i32);
            if ACC {
                acc += i64::from(old as i32);
            }
            if self.saturate {
                acc.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
            } else {
                acc as i32 as u32
            }
        } else {
            let mut acc = dot;
            if ACC {
                let prev = if self.d_f16 {
                    f16_to_f32(old as u16)
                } else {
                    f32::from_bits(old)
                };
                acc += prev * self.scale;
            }
            // A NaN's sign and payload depend on operand order in the host's float unit (and
            // so on the compiler): the simulator writes the canonical quiet NaN. Both values
            // are computed and one is selected (NaN results are frequent enough for a
            // branch on them to be mispredicted).
            let (v, nan) = if self.d_f16 {
                (u32::from(f32_to_f16(acc)), 0x7E00)
            } else {
                (acc.to_bits(), 0x7FC0_0000)
            };
            let keep = u32::from(!acc.is_nan()).wrapping_neg();
            (v & keep) | (nan & !keep)
        }
    }
}

/// [`dot_k`] of one `K`-element row `a` with 4 rows given transposed in `bt` (element `k` of
/// row `j` at `bt[4 * k + j]`): per row the same eight partial sums, each added in the same
/// order, then the same pairwise sum, so each result is bit-identical to [`dot_k`]'s (the
/// four rows side by side in vector lanes).
#[inline(never)]
fn dots4<const K: usize>(a: &[f32; K], bt: &[f32]) -> [f32; 4] {
    let mut lanes = [[0f32; 4]; 8];
    // Element k in partial sum k % 8, k increasing: written as K / 8 rounds of the 8 sums
    // (each `lanes[i]` a constant index, so the sums stay in registers; a `k % 8` index
    // kept them in memory).
    if bt.len() >= 4 * K {
        for c in 0..K / 8 {
            for (i, lane) in lanes.iter_mut().enumerate() {
                let k = 8 * c + i;
                let x = a[k];
                for (j, s) in lane.iter_mut().enumerate() {
                    *s += x * bt[4 * k + j];
                }
            }
        }
    }
    std::array::from_fn(|j| {
        ((lanes[0][j] + lanes[1][j]) + (lanes[2][j] + lanes[3][j]))
            + ((lanes[4][j] + lanes[5][j]) + (lanes[6][j] + lanes[7][j]))
    })
}

/// [`dot8`] of two `K`-element rows (`K` a multiple of 8), unrolled.
#[inline(always)]
fn dot_k<const K: usize>(a: &[f32], b: &[f32]) -> f32 {
    let (Ok(a), Ok(b)) = (<&[f32; K]>::try_from(a), <&[f32; K]>::try_from(b)) else {
        return dot8(a, b);
    };
    let mut lanes = [0f32; 8];
    for c in 0..K / 8 {
        for i in 0..8 {
            lanes[i] += a[8 * c + i] * b[8 * c + i];
        }
    }
    ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
        + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
}

/// A dot product in eight interleaved f32 partial sums, added pairwise at the end (a concrete
/// choice of accumulation order, OQ-19; exact for the small-integer data the generator writes).
#[inline(always)]
fn dot8(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        let (x, y): (&[f32; 8], &[f32; 8]) = (
            x.try_into().unwrap_or(&[0.0; 8]),
            y.try_into().unwrap_or(&[0.0; 8]),
        );
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    for (i, (x, y)) in ra.iter().zip(rb).enumerate() {
        lanes[i] += x * y;
    }
    ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
        + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
}

fn elem(code: u32, kind: MmaKind) -> Option<Elem> {
    match (kind, code) {
        (MmaKind::F16, 0) => Some(Elem::F16),
        (MmaKind::F16, 1) => Some(Elem::Bf16),
        (MmaKind::Tf32, 2) => Some(Elem::Tf32),
        (MmaKind::I8, 0) => Some(Elem::U8),
        (MmaKind::I8, 1) => Some(Elem::S8),
        (MmaKind::F8f6f4, 0) => Some(Elem::E4m3),
        (MmaKind::F8f6f4, 1) => Some(Elem::E5m2),
        _ => None,
    }
}

/// Decodes an MMA at issue; `Err` names what the simulator does not implement.
/// `faults` injects the MMA faults of [`super::faults`].
pub fn plan(
    p: &Program,
    m: &Mma,
    d: u32,
    a_tmem: Option<u32>,
    faults: Faults,
) -> Result<MmaPlan, MmaError> {
    let f = &m.form;
    let no = |what: &'static str| Err(MmaError::NotImplemented(what));
    let pair = f.cta_group == CtaGroup::Two;
    if m.zero_col_mask.is_some_and(|z| z != 0) {
        return no("a non-zero zero-column mask");
    }
    let idesc = m.idesc;
    let n = (idesc >> 17 & 0x3F) << 3;
    if f.block_scale
        && let Some(plan) = scaled::plan_scaled(p, m, d, a_tmem, faults)
    {
        return Ok(plan);
    }
    if f.block_scale || (f.sp && !sparse::implemented(m)) {
        if d >> 16 != 0 || n == 0 || n > 256 {
            return no("a D lane field other than 0 (or N outside 8..256)");
        }
        return Ok(MmaPlan {
            kind: f.kind,
            m: (idesc >> 24 & 0x1F) << 4,
            n,
            k: 0,
            a_ty: Elem::F16,
            b_ty: Elem::F16,
            d_f16: false,
            neg_a: false,
            neg_b: false,
            saturate: false,
            a: None,
            a_col: 0,
            b: m.b,
            d_col: d & 0xFFFF,
            enable_d: m.enable_input_d,
            scale_d: 0,
            dol: m.disable_output_lane.clone(),
            dol_inverted: faults.has(Fault::MmaDolInverted),
            pair,
            ashift: false,
            opaque: true,
            sf: None,
            sp: None,
        });
    }
    let (a, a_col) = match (&m.a, a_tmem) {
        (MmaA::Desc(d), _) => (Some(*d), 0),
        (MmaA::Tmem(_), Some(t)) if t >> 16 == 0 => (None, t & 0xFFFF),
        _ => return no("A in TMEM with a lane field other than 0"),
    };
    let kind = f.kind;
    let k = match kind {
        MmaKind::F16 => 16,
        MmaKind::Tf32 => 8,
        MmaKind::I8 | MmaKind::F8f6f4 => 32,
        _ => return no("this kind"),
    };
    // Sparse A (`sparse`): idesc bit 2 set, bits 0-1 the selector; K doubles.
    let (k, sp, sp_bits) = if f.sp {
        let sel = idesc & 3;
        (2 * k, Some(sparse::Sp { sel, col: 0 }), 0b100 | sel)
    } else {
        (k, None, 0)
    };
    if idesc & 0b111 != sp_bits || idesc >> 15 & 3 != 0 || (!f.ws && idesc >> 30 != 0) {
        return no("sparse, transposed or B-reuse instruction descriptors");
    }
    let mm = (idesc >> 24 & 0x1F) << 4;
    let m_ok = if pair {
        mm == 128 || mm == 256
    } else {
        mm == 128 || (f.ws && (mm == 32 || mm == 64))
    };
    if !m_ok || n == 0 || n > 256 {
        return no("this M (or N outside 8..256)");
    }
    let a_ty = elem(idesc >> 7 & 7, kind).ok_or(MmaError::OperandType("A"))?;
    let b_ty = elem(idesc >> 10 & 7, kind).ok_or(MmaError::OperandType("B"))?;
    let dt = idesc >> 4 & 3;
    let d_f16 = match (kind, dt) {
        (MmaKind::F16 | MmaKind::F8f6f4, 0) => true,
        (MmaKind::F16 | MmaKind::Tf32 | MmaKind::F8f6f4, 1) | (MmaKind::I8, 2) => false,
        _ => return no("this D type"),
    };
    for desc in a.iter().chain([&m.b]) {
        if desc.swizzle != 0 || desc.lbo_abs || usize::from(desc.region) >= p.smem.regions.len() {
            return no("swizzled, absolute-LBO or out-of-range descriptors");
        }
    }
    if d >> 16 != 0 {
        return no("a D lane field other than 0 with M = 128");
    }
    Ok(MmaPlan {
        kind,
        m: mm,
        n,
        k,
        a_ty,
        b_ty,
        d_f16,
        neg_a: idesc >> 13 & 1 == 1,
        neg_b: idesc >> 14 & 1 == 1,
        saturate: idesc >> 3 & 1 == 1,
        a,
        a_col,
        b: m.b,
        d_col: d & 0xFFFF,
        enable_d: m.enable_input_d || faults.has(Fault::MmaIgnoresEnableD),
        scale_d: if faults.has(Fault::MmaScaleDIgnored) {
            0
        } else {
            m.scale_input_d.unwrap_or(0)
        },
        dol: m.disable_output_lane.clone(),
        dol_inverted: faults.has(Fault::MmaDolInverted),
        pair,
        ashift: f.ashift,
        opaque: false,
        sf: None,
        sp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn mma(cg: CtaGroup, idesc: u32, sp: bool) -> (Program, Mma) {
        let desc = |region| SmemDesc {
            region,
            offset: 0,
            lbo_enc: 128 >> 4,
            sbo_enc: 256 >> 4,
            fixed: 1,
            base_offset: 0,
            lbo_abs: false,
            swizzle: 0,
            reserved: 0,
        };
        let mut p = tcgen05_ir::samples::single_warp_roundtrip();
        p.smem.regions = vec![4096, 4096];
        let m = Mma {
            form: tcgen05_ir::form::MmaForm {
                ws: false,
                sp,
                cta_group: cg,
                kind: MmaKind::I8,
                block_scale: false,
                scale_vec: None,
                ashift: false,
                collector: None,
            },
            d: tcgen05_ir::TmemRef::slot(0, 0, 0),
            a: MmaA::Desc(desc(0)),
            b: desc(1),
            sp_meta: None,
            idesc,
            scale_a: None,
            scale_b: None,
            disable_output_lane: None,
            enable_input_d: false,
            scale_input_d: None,
            zero_col_mask: None,
        };
        (p, m)
    }

    #[test]
    fn a_pair_mma_writes_its_rows_in_both_ctas() {
        // i8 (idesc D s32 = 2 at bits 4-5, A and B s8 = 1 at bits 7-9 / 10-12), N = 8 (bits
        // 17-22 hold N >> 3), M = 256 (bits 24-28 hold M >> 4): reference §2.8.
        let idesc = 2 << 4 | 1 << 7 | 1 << 10 | 1 << 17 | 16 << 24;
        let (p, m) = mma(CtaGroup::Two, idesc, false);
        let plan = plan(&p, &m, 0, None, Faults::NONE).expect("a ::2 i8 MMA runs");
        // A: every s8 element 1; B: every element 2 in the even CTA, 3 in the odd CTA.
        let fill = |b: u8| Rc::new(Region::from_words(vec![u32::from_le_bytes([b; 4]); 1024]));
        let even_regions = vec![fill(1), fill(2)];
        let odd_regions = vec![fill(1), fill(3)];
        let (mut te, mut to) = (Tmem::new(), Tmem::new());
        plan.perform_halves([
            Some((&even_regions, &mut te)),
            Some((&odd_regions, &mut to)),
        ])
        .expect("in range");
        // K = 32: D = 32 * 1 * 2 for B rows 0..4 (the even CTA's half of N), 32 * 3 after.
        for (t, lane) in [(&te, 0), (&te, 127), (&to, 5)] {
            assert_eq!(t.get(lane, 0), Some(64));
            assert_eq!(t.get(lane, 7), Some(96));
            assert_eq!(t.get(lane, 8), Some(crate::tmem::poison(lane, 8)));
        }
    }

    #[test]
    fn a_pair_mma_with_m_128_folds_the_column_halves_over_the_lanes() {
        // Layout B (§9.7.16.10.5; CUTLASS's 2SM "2x2" atom: D row m, column n in lane
        // m + 64 (n / (N/2)), column n mod (N/2)). i8, N = 16, M = 128 (bits 24-28 = 8): each
        // CTA holds 64 rows; columns 0..8 of D (B rows of the even CTA, all 2) in lanes 0..64,
        // columns 8..16 (the odd CTA's, all 3) in lanes 64..128, 8 columns written.
        let idesc = 2 << 4 | 1 << 7 | 1 << 10 | 2 << 17 | 8 << 24;
        let (p, m) = mma(CtaGroup::Two, idesc, false);
        let plan = plan(&p, &m, 0, None, Faults::NONE).expect("a ::2 i8 MMA runs");
        let fill = |b: u8| Rc::new(Region::from_words(vec![u32::from_le_bytes([b; 4]); 1024]));
        let even_regions = vec![fill(1), fill(2)];
        let odd_regions = vec![fill(1), fill(3)];
        let (mut te, mut to) = (Tmem::new(), Tmem::new());
        plan.perform_halves([
            Some((&even_regions, &mut te)),
            Some((&odd_regions, &mut to)),
        ])
        .expect("in range");
        // K = 32: 32 * 1 * 2 = 64 from the even CTA's B, 32 * 3 = 96 from the odd CTA's.
        for t in [&te, &to] {
            for lane in [0, 63] {
                assert_eq!(t.get(lane, 0), Some(64));
                assert_eq!(t.get(lane, 7), Some(64));
            }
            for lane in [64, 127] {
                assert_eq!(t.get(lane, 0), Some(96));
                assert_eq!(t.get(lane, 7), Some(96));
            }
            assert_eq!(t.get(5, 8), Some(crate::tmem::poison(5, 8)));
        }
    }

    #[test]
    fn run_reads_at_any_column_give_each_columns_dot_product() {
        // i8 (D s32, A and B s8: reference §2.8), N = 16, M = 128, K = 32. B row n holds
        // n + 1 in every element and A is all 1, so D (row m, column n) = 32 * (n + 1)
        // (§3.7). Runs of 8 cells from every column offset (the transposed B groups need not
        // start at a multiple of 4) must give each column its own row of B.
        let idesc = 2 << 4 | 1 << 7 | 1 << 10 | 2 << 17 | 8 << 24;
        let (p, m) = mma(CtaGroup::One, idesc, false);
        let plan = plan(&p, &m, 0, None, Faults::NONE).expect("an i8 MMA runs");
        // Canonical K-major layout of the test descriptors: LBO 128 bytes, SBO 256 bytes.
        let mut b = vec![0u8; 4096 * 4];
        for n in 0..16usize {
            for k in 0..32usize {
                b[(n % 8) * 16 + (n / 8) * 256 + (k % 16) + (k / 16) * 128] = n as u8 + 1;
            }
        }
        let words = b
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let a = Rc::new(Region::from_words(vec![0x0101_0101; 4096]));
        let regions = vec![a, Rc::new(Region::from_words(words))];
        let mut t = Tmem::new();
        plan.perform(&regions, &mut t).expect("in range");
        for lane in [0, 37, 127] {
            for c0 in 0..=8u32 {
                let mut run = [0u32; 8];
                assert!(t.get_run(lane, c0, &mut run));
                let want: [u32; 8] = std::array::from_fn(|j| 32 * (c0 + j as u32 + 1));
                assert_eq!(run, want, "lane {lane}, columns from {c0}");
            }
            // Shorter runs (the pieces path) agree too.
            let mut three = [0u32; 3];
            assert!(t.get_run(lane, 5, &mut three));
            assert_eq!(three, [6 * 32, 7 * 32, 8 * 32]);
        }
    }

    /// `dots4` of 4 transposed rows against `dot8` (the module's documented summation order)
    /// of each row: bit-identical for K = 8, 16, 32.
    fn dots4_matches_dot8<const K: usize>(seed: u32) {
        // Floats of widely varying magnitude and sign, so that the order of the additions
        // changes the rounded sums.
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let mag = (2f32).powi((x >> 24) as i32 % 40 - 20);
            if x & 0x100 == 0 { mag } else { -mag * 1.5 }
        };
        let a: [f32; K] = std::array::from_fn(|_| next());
        let rows: [[f32; K]; 4] = std::array::from_fn(|_| std::array::from_fn(|_| next()));
        let bt: Vec<f32> = (0..4 * K).map(|i| rows[i % 4][i / 4]).collect();
        let got = dots4::<K>(&a, &bt);
        for j in 0..4 {
            assert_eq!(
                got[j].to_bits(),
                dot8(&a, &rows[j]).to_bits(),
                "K {K} row {j}"
            );
        }
    }

    #[test]
    fn four_dot_products_at_once_sum_in_the_documented_order() {
        for seed in 0..200 {
            dots4_matches_dot8::<8>(seed);
            dots4_matches_dot8::<16>(seed);
            dots4_matches_dot8::<32>(seed);
        }
    }

    #[test]
    fn eight_halves_decode_as_one_at_a_time() {
        // Every f16 pattern in some chunk: zeros, normals, subnormals, infinities and NaNs
        // (IEEE 754 binary16) decode as `f16_to_f32` of each; chunks with a special value
        // are left to it.
        for base in (0..=u16::MAX as u32).step_by(8) {
            let words: [u32; 4] =
                std::array::from_fn(|i| (base + 2 * i as u32) | (base + 2 * i as u32 + 1) << 16);
            let mut out = [f32::NAN; 8];
            decode_chunk(Elem::F16, &words, &mut out);
            for (j, x) in out.iter().enumerate() {
                let want = f16_to_f32((base + j as u32) as u16);
                assert_eq!(x.to_bits(), want.to_bits(), "f16 {:#06x}", base + j as u32);
            }
        }
        // A chunk of normals and zeros takes the vector path: 1.0, -2.0, 0, -0, 65504, 2^-14.
        let mut out = [0f32; 8];
        let halves = [0x3C00u32, 0xC000, 0, 0x8000, 0x7BFF, 0x0400, 0x3800, 0xB800];
        let words = std::array::from_fn(|i| halves[2 * i] | halves[2 * i + 1] << 16);
        assert!(f16_plain8(&words, &mut out));
        let want = [1.0, -2.0, 0.0, -0.0, 65504.0, (2f32).powi(-14), 0.5, -0.5];
        assert_eq!(out.map(f32::to_bits), want.map(f32::to_bits));
    }

    #[test]
    fn an_unimplemented_sparse_mma_writes_documented_values_in_its_region() {
        // M = 64 `::1` (the half data path, layout F): not computed.
        let idesc = 1 << 2 | 2 << 4 | 1 << 7 | 1 << 10 | 2 << 17 | 4 << 24;
        let (p, m) = mma(CtaGroup::One, idesc, true);
        let plan = plan(&p, &m, 32, None, Faults::NONE).expect("runs");
        let mut t = Tmem::new();
        let regions = vec![Rc::new(Region::zeroed(1024)), Rc::new(Region::zeroed(1024))];
        plan.perform(&regions, &mut t).expect("in range");
        // N = 16 columns from column 32, lanes 0..64 (lanes 0..128 are written).
        assert_eq!(t.get(3, 40), Some(OPAQUE ^ (3 * 512 + 40)));
        assert_eq!(t.get(3, 48), Some(crate::tmem::poison(3, 48)));
    }

    #[test]
    fn half_precision_conversions_match_ieee_encodings() {
        // IEEE-754 binary16: 1.0 = 0x3C00, -2.0 = 0xC000, 0.5 = 0x3800, 65504 = 0x7BFF.
        assert_eq!(f32_to_f16(1.0), 0x3C00);
        assert_eq!(f32_to_f16(-2.0), 0xC000);
        assert_eq!(f32_to_f16(0.5), 0x3800);
        assert_eq!(f32_to_f16(65504.0), 0x7BFF);
        assert_eq!(f16_to_f32(0x3C00), 1.0);
        assert_eq!(f16_to_f32(0xC400), -4.0);
        assert_eq!(f32_to_f16(0.0), 0);
        // Rounding to nearest even: 1 + 2^-11 is halfway between 1.0 (0x3C00, even) and the
        // next f16; 1 + 3 * 2^-11 halfway between 0x3C01 and 0x3C02 (even).
        assert_eq!(f32_to_f16(1.0 + (2f32).powi(-11)), 0x3C00);
        assert_eq!(f32_to_f16(1.0 + 3.0 * (2f32).powi(-11)), 0x3C02);
        // 65519 rounds down to 65504 (0x7BFF), 65520 (halfway) up to infinity; NaN is quiet.
        assert_eq!(f32_to_f16(65519.0), 0x7BFF);
        assert_eq!(f32_to_f16(-65520.0), 0xFC00);
        assert_eq!(f32_to_f16(f32::NAN), 0x7E00);
        // Subnormals: 2^-24 is 0x0001; 2^-25 is halfway between 0 and 0x0001 (0 is even);
        // 1.5 * 2^-25 rounds up; 2^-14 - 2^-25 rounds up to the smallest normal, 0x0400.
        assert_eq!(f32_to_f16((2f32).powi(-24)), 0x0001);
        assert_eq!(f32_to_f16((2f32).powi(-25)), 0);
        assert_eq!(f32_to_f16(1.5 * (2f32).powi(-25)), 0x0001);
        assert_eq!(f32_to_f16((2f32).powi(-14) - (2f32).powi(-25)), 0x0400);
        assert_eq!(f32_to_f16(-(2f32).powi(-13)), 0x8800);
        // OCP FP8: e4m3 0x38 = 1.0, 0xC0 = -2.0; e5m2 0x3C = 1.0, 0x7C = +inf.
        assert_eq!(fp8(0x38, 4, 3, 7), 1.0);
        assert_eq!(fp8(0xC0, 4, 3, 7), -2.0);
        assert_eq!(fp8(0x3C, 5, 2, 15), 1.0);
        assert_eq!(fp8(0x7C, 5, 2, 15), f64::INFINITY);
    }
}
