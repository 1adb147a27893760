//! The emulated `tcgen05.cp` (§9.7.16.9.2, reference §3.5): the copy completes at issue, by
//! each thread that issues it, with the layouts the oracle computes (`oracle::run::tmem`,
//! `cp_values` and `cp_row`): the source rows are read through the descriptor in the K-major
//! no-swizzle layout of the MMA operands (core matrices of 8 rows × 16 bytes, LBO between the
//! 16-byte chunks of a row, SBO between groups of 8 rows, §9.7.16.4), one 32-bit word per
//! column, and land in the lanes the shape and multicast name. The decompressions (`.b8x16`
//! with `.b6x16_p32` / `.b4x16_p64`, §9.7.16.9.1) expand each 16-byte source unit into the
//! same four columns (`oracle::run::tmem`'s `decomp`). A `cta_group::2` cp also writes the
//! peer CTA's copy, from the peer's shared memory (CP-PAIR). Forms whose values the oracle
//! leaves unspecified (swizzled or unusual descriptors, a shape without the multicast it
//! requires) check their footprint (the shape's columns) and leave the cells unchanged.

use super::ops::{EmuOps, Val};
use super::traps::EmuTraps;
use super::{Code, Emu};
use tcgen05_ir::form::CpForm;
use tcgen05_ir::ptx::Body;
use tcgen05_ir::{CpDstFmt, CpMulticast, CpShape, CpSrcFmt, CtaGroup, SmemDesc, TmemRef};

/// The lanes and columns a cp writes from its `taddr` (CP-SHAPE, §3.5; the oracle's
/// footprint): the 128-lane shapes (and the multicasts, which cover all four lane quarters)
/// from lane 0, the others from the address's lane. A decompression covers the same columns:
/// each 16-byte source unit (16 elements and their padding) becomes 16 bytes of TMEM
/// (§9.7.16.9.1), and the shape counts TMEM bits (§9.7.16.2.3).
pub(super) fn footprint(form: &CpForm) -> (u32, u32) {
    match form.shape {
        CpShape::S128x256b => (128, 8),
        CpShape::S4x256b => (4, 8),
        CpShape::S128x128b | CpShape::S64x128b | CpShape::S32x128b => (128, 4),
        CpShape::S64x256b => (64, 8),
    }
}

/// The source rows, bytes per row and decompression of the forms whose values are
/// computed (the oracle's `cp_values`): a plain K-major no-swizzle descriptor, the multicast
/// each shape requires (CP-MULTICAST), and both decompression formats or neither
/// (CP-DECOMP-FMT; `.b8x16` with `.b6x16_p32` / `.b4x16_p64`, §9.7.16.9.1).
pub(super) fn computed(form: &CpForm, src: &SmemDesc) -> Option<(u32, u32, Option<CpSrcFmt>)> {
    let decomp = match (form.dst_fmt, form.src_fmt) {
        (None, None) => None,
        (Some(CpDstFmt::B8x16), Some(fmt)) => Some(fmt),
        _ => return None,
    };
    if src.swizzle != 0
        || src.lbo_abs
        || src.base_offset != 0
        || src.fixed != 1
        || src.reserved != 0
    {
        return None;
    }
    let (rows, row_bytes) = match (form.shape, form.multicast) {
        (CpShape::S128x256b, None) => (128, 32),
        (CpShape::S4x256b, None) => (4, 32),
        (CpShape::S128x128b, None) => (128, 16),
        (CpShape::S64x128b, Some(CpMulticast::Warpx2_02_13 | CpMulticast::Warpx2_01_23)) => {
            (64, 16)
        }
        (CpShape::S32x128b, Some(CpMulticast::Warpx4)) => (32, 16),
        _ => return None,
    };
    Some((rows, row_bytes, decomp))
}

/// The lane quarters that source row `row` of a multicast lands in, as `(mul, add)`: quarter
/// `mul * (row / 32) + add`, lane `row % 32` of it (the oracle's `cp_row`, §9.7.16.9.2):
/// `.warpx4` all four; `.warpx2::02_13` rows 0-31 in quarters 0 and 2, rows 32-63 in 1 and 3;
/// `.warpx2::01_23` rows 0-31 in quarters 0 and 1, rows 32-63 in 2 and 3. Empty without a
/// multicast (row `r` lands in lane `taddr.lane + r`).
pub(super) fn quarters(multicast: Option<CpMulticast>) -> &'static [(u32, u32)] {
    match multicast {
        None => &[],
        Some(CpMulticast::Warpx4) => &[(0, 0), (0, 1), (0, 2), (0, 3)],
        Some(CpMulticast::Warpx2_02_13) => &[(1, 0), (1, 2)],
        Some(CpMulticast::Warpx2_01_23) => &[(2, 0), (2, 1)],
    }
}

/// The emulated cp on a body being printed.
pub(super) trait EmuCp {
    /// Prints the emulation of a cp of `form` to `taddr` from the matrix `src` describes.
    fn cp_emu(&mut self, form: &CpForm, taddr: &TmemRef, src: &SmemDesc);
}

impl EmuCp for Body<'_, Emu<'_>> {
    /// The copy by the issuing thread; a `cta_group::2` cp also writes the peer CTA's copy,
    /// from the peer's own shared memory into the same cells of its TMEM (CP-PAIR, the
    /// oracle's `CpVals::peer`), through the cluster window.
    fn cp_emu(&mut self, form: &CpForm, taddr: &TmemRef, src: &SmemDesc) {
        let t = self.taddr(taddr);
        let (lane, col) = self.split_taddr(t);
        let (lanes, cols) = footprint(form);
        self.check_cells(lane, Val::Imm(lanes), col, Val::Imm(cols));
        if form.cta_group == CtaGroup::Two && self.p.launch.cluster_size < 2 {
            self.trap(Code::PeerMissing, "0");
            return;
        }
        let Some((rows, row_bytes, decomp)) = computed(form, src) else {
            return;
        };
        // Every word of a source at an offset not a multiple of 4 straddles two words, which
        // the oracle does not model (left unchanged).
        if !src.offset.is_multiple_of(4) {
            return;
        }
        let region_bytes = self
            .p
            .smem
            .regions
            .get(usize::from(src.region))
            .map_or(16, |b| (*b).max(16));
        // The cluster-window addresses of this CTA's (and a `::2` cp's peer's) emulated TMEM
        // and source region.
        let tm = self.tmem_base();
        let data = self.r();
        self.line(&format!("mov.u32 %r{data}, tc_data{};", src.region));
        let mut ctas = vec![];
        let (otm, odata) = (self.r(), self.r());
        self.line(&format!(
            "mapa.shared::cluster.u32 %r{otm}, {tm}, %ctarank;"
        ));
        self.line(&format!(
            "mapa.shared::cluster.u32 %r{odata}, %r{data}, %ctarank;"
        ));
        ctas.push((otm, odata));
        if form.cta_group == CtaGroup::Two {
            let (pr, ptm, pdata) = (self.r(), self.r(), self.r());
            self.line(&format!("xor.b32 %r{pr}, %ctarank, 1;"));
            self.line(&format!("mapa.shared::cluster.u32 %r{ptm}, {tm}, %r{pr};"));
            self.line(&format!(
                "mapa.shared::cluster.u32 %r{pdata}, %r{data}, %r{pr};"
            ));
            ctas.push((ptm, pdata));
        }
        for (tmem, data) in ctas {
            let copy = Copy {
                tmem,
                data,
                lane,
                col,
                lanes,
                rows,
                row_bytes,
                region_bytes,
                decomp,
            };
            self.cp_copy(form, src, &copy);
        }
    }
}

/// One CTA's copy of a cp: cluster-window bases and the shape's figures.
struct Copy {
    tmem: u32,
    data: u32,
    lane: u32,
    col: u32,
    lanes: u32,
    rows: u32,
    row_bytes: u32,
    region_bytes: u32,
    decomp: Option<CpSrcFmt>,
}

trait CpCopy {
    fn cp_copy(&mut self, form: &CpForm, src: &SmemDesc, c: &Copy);
    fn decompressed_word(&mut self, fmt: CpSrcFmt, unit: u32, cw: u32, out: u32);
}

impl CpCopy for Body<'_, Emu<'_>> {
    /// The rows of one CTA's copy into its emulated TMEM. The cell (lane + l, col + c) is
    /// word (col + c) * 128 + lane + l of emu_tmem; the 128-lane footprints start at lane 0
    /// (checked by the caller), the others at `lane`. A loop over the rows and words (an
    /// unrolled copy is thousands of instructions per cp, which the JIT compiles slowly).
    fn cp_copy(&mut self, form: &CpForm, src: &SmemDesc, c: &Copy) {
        let (base, row, j, at, v, dst) =
            (self.r(), self.r(), self.r(), self.r(), self.r(), self.r());
        let (p, q) = (self.pr(), self.pr());
        self.line(&format!(
            "mad.lo.u32 %r{base}, %r{}, 512, %r{};",
            c.col, c.tmem
        ));
        if c.lanes != 128 {
            self.line(&format!("mad.lo.u32 %r{base}, %r{}, 4, %r{base};", c.lane));
        }
        let n = self.next_label();
        self.line(&format!("mov.u32 %r{row}, 0;"));
        self.loop_head(&format!("$CP{n}_row"));
        self.line(&format!("mov.u32 %r{j}, 0;"));
        self.loop_head(&format!("$CP{n}_word"));
        // The chunk of word j (`mma::chunk_base`): offset + (row % 8) * 16 + (row / 8) * SBO
        // + (j / 4) * LBO; the word itself is 4 (j % 4) bytes further.
        let sbo = 16 * u64::from(src.sbo_enc);
        let lbo = 16 * u64::from(src.lbo_enc);
        self.line(&format!("and.b32 %r{at}, %r{row}, 7;"));
        self.line(&format!("mul.lo.u32 %r{at}, %r{at}, 16;"));
        self.line(&format!("add.u32 %r{at}, %r{at}, {};", src.offset));
        self.line(&format!("shr.u32 %r{v}, %r{row}, 3;"));
        self.line(&format!("mad.lo.u32 %r{at}, %r{v}, {sbo}, %r{at};"));
        self.line(&format!("shr.u32 %r{v}, %r{j}, 2;"));
        self.line(&format!("mad.lo.u32 %r{at}, %r{v}, {lbo}, %r{at};"));
        let cw = self.r();
        self.line(&format!("and.b32 %r{cw}, %r{j}, 3;"));
        match c.decomp {
            None => {
                self.line(&format!("mad.lo.u32 %r{at}, %r{cw}, 4, %r{at};"));
                // A word beyond the region: the oracle does not model it (left unchanged).
                self.line(&format!(
                    "setp.gt.u32 %p{p}, %r{at}, {};",
                    c.region_bytes - 4
                ));
                self.line(&format!("@%p{p} bra $CP{n}_next;"));
                self.line(&format!("add.u32 %r{at}, %r{at}, %r{};", c.data));
                self.line(&format!("ld.shared::cluster.u32 %r{v}, [%r{at}];"));
            }
            Some(fmt) => {
                // The whole 16-byte source unit must lie in the region (the oracle reads its
                // four words).
                self.line(&format!(
                    "setp.gt.u32 %p{p}, %r{at}, {};",
                    c.region_bytes - 16
                ));
                self.line(&format!("@%p{p} bra $CP{n}_next;"));
                self.line(&format!("add.u32 %r{at}, %r{at}, %r{};", c.data));
                self.decompressed_word(fmt, at, cw, v);
            }
        }
        // The destination lanes of the row (`dest_lanes`): the row itself, or lane row % 32 of
        // each receiving quarter, quarter = mul * (row / 32) + add.
        let quarters = quarters(form.multicast);
        // The cell address of column j: base + 4 * (j * 128 + lane).
        self.line(&format!("mad.lo.u32 %r{dst}, %r{j}, 512, %r{base};"));
        if quarters.is_empty() {
            self.line(&format!("mad.lo.u32 %r{at}, %r{row}, 4, %r{dst};"));
            self.line(&format!("st.shared::cluster.u32 [%r{at}], %r{v};"));
        } else {
            let (h, r32) = (self.r(), self.r());
            self.line(&format!("shr.u32 %r{h}, %r{row}, 5;"));
            self.line(&format!("and.b32 %r{r32}, %r{row}, 31;"));
            self.line(&format!("mad.lo.u32 %r{dst}, %r{r32}, 4, %r{dst};"));
            for (mul, add) in quarters {
                // Lane 32 q + row % 32: 128 bytes per quarter.
                self.line(&format!(
                    "mad.lo.u32 %r{at}, %r{h}, {}, %r{dst};",
                    128 * mul
                ));
                self.line(&format!(
                    "st.shared::cluster.u32 [%r{at}+{}], %r{v};",
                    128 * add
                ));
            }
        }
        self.label(&format!("$CP{n}_next"));
        self.line(&format!("add.u32 %r{j}, %r{j}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{j}, {};", c.row_bytes / 4));
        self.line(&format!("@%p{q} bra $CP{n}_word;"));
        self.line(&format!("add.u32 %r{row}, %r{row}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{row}, {};", c.rows));
        self.line(&format!("@%p{q} bra $CP{n}_row;"));
    }

    /// Word `cw` (0..4) of the decompressed 16-byte unit at cluster address `unit` into `out`
    /// (the oracle's `decomp::decompress_word`, §9.7.16.9.1): elements 4 cw .. 4 cw + 4, w
    /// bits each from bit w * i of the unit read little-endian (bytes 2 cw, 2 cw + 1 for
    /// w = 4; 3 cw .. 3 cw + 3 for w = 6), element b in byte b of the word, a 4-bit element
    /// in bits 2-5 of its byte, a 6-bit one in bits 0-5.
    fn decompressed_word(&mut self, fmt: CpSrcFmt, unit: u32, cw: u32, out: u32) {
        let (width, shift, bytes) = match fmt {
            CpSrcFmt::B4x16P64 => (4, 2, 2),
            CpSrcFmt::B6x16P32 => (6, 0, 3),
        };
        let (a, x, e) = (self.r(), self.r(), self.r());
        self.line(&format!("mad.lo.u32 %r{a}, %r{cw}, {bytes}, %r{unit};"));
        self.line(&format!("mov.u32 %r{x}, 0;"));
        for k in 0..bytes {
            self.line(&format!("ld.shared::cluster.u8 %r{e}, [%r{a}+{k}];"));
            self.line(&format!("bfi.b32 %r{x}, %r{e}, %r{x}, {}, 8;", 8 * k));
        }
        self.line(&format!("mov.u32 %r{out}, 0;"));
        for b in 0..4 {
            self.line(&format!("bfe.u32 %r{e}, %r{x}, {}, {width};", width * b));
            self.line(&format!(
                "bfi.b32 %r{out}, %r{e}, %r{out}, {}, {width};",
                8 * b + shift
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lanes of source row `row` by [`quarters`].
    fn lanes(multicast: CpMulticast, row: u32) -> Vec<u32> {
        quarters(Some(multicast))
            .iter()
            .map(|(mul, add)| 32 * (mul * (row / 32) + add) + row % 32)
            .collect()
    }

    /// The multicast maps of §9.7.16.9.2 (reference §3.5), written out lane by lane.
    #[test]
    fn multicast_rows_land_in_the_quarters_the_spec_names() {
        assert!(quarters(None).is_empty());
        assert_eq!(lanes(CpMulticast::Warpx4, 3), vec![3, 35, 67, 99]);
        // .warpx2::02_13: rows 0-31 to warps 0 and 2, rows 32-63 to warps 1 and 3.
        assert_eq!(lanes(CpMulticast::Warpx2_02_13, 1), vec![1, 65]);
        assert_eq!(lanes(CpMulticast::Warpx2_02_13, 33), vec![33, 97]);
        // .warpx2::01_23: rows 0-31 to warps 0 and 1, rows 32-63 to warps 2 and 3.
        assert_eq!(lanes(CpMulticast::Warpx2_01_23, 1), vec![1, 33]);
        assert_eq!(lanes(CpMulticast::Warpx2_01_23, 40), vec![72, 104]);
    }
}
