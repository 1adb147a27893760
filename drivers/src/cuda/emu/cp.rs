//! The emulated `tcgen05.cp` (§9.7.16.9.2, reference §3.5): the copy completes at issue, by
//! each thread that issues it, with the layouts the oracle computes (`oracle::run::tmem`,
//! `cp_values` and `cp_row`): the source rows are read through the descriptor in the K-major
//! no-swizzle layout of the MMA operands (core matrices of 8 rows × 16 bytes, LBO between the
//! 16-byte chunks of a row, SBO between groups of 8 rows, §9.7.16.4), one 32-bit word per
//! column, and land in the lanes the shape and multicast name. The decompressions (`.b8x16`
//! with `.b6x16_p32` / `.b4x16_p64`, which the oracle computes: `oracle::run::tmem`'s
//! `decomp`) are not emulated: a program with one is refused (`check`). Forms whose values
//! the oracle leaves unspecified (swizzled or unusual descriptors, a shape without the
//! multicast it requires) check their footprint (the shape's columns) and leave the cells
//! unchanged.

use super::ops::EmuOps;
use super::{Code, Emu};
use tcgen05_ir::form::CpForm;
use tcgen05_ir::ptx::Body;
use tcgen05_ir::{CpMulticast, CpShape, CtaGroup, SmemDesc, TmemRef};

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

/// The source rows and bytes per row of the forms whose values are computed: no
/// decompression, a plain K-major no-swizzle descriptor, and the multicast each shape
/// requires (CP-MULTICAST).
pub(super) fn computed(form: &CpForm, src: &SmemDesc) -> Option<(u32, u32)> {
    if form.dst_fmt.is_some()
        || form.src_fmt.is_some()
        || src.swizzle != 0
        || src.lbo_abs
        || src.base_offset != 0
        || src.fixed != 1
        || src.reserved != 0
    {
        return None;
    }
    match (form.shape, form.multicast) {
        (CpShape::S128x256b, None) => Some((128, 32)),
        (CpShape::S4x256b, None) => Some((4, 32)),
        (CpShape::S128x128b, None) => Some((128, 16)),
        (CpShape::S64x128b, Some(CpMulticast::Warpx2_02_13 | CpMulticast::Warpx2_01_23)) => {
            Some((64, 16))
        }
        (CpShape::S32x128b, Some(CpMulticast::Warpx4)) => Some((32, 16)),
        _ => None,
    }
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
    fn cp_emu(&mut self, form: &CpForm, taddr: &TmemRef, src: &SmemDesc) {
        let t = self.taddr(taddr);
        let (lane, col) = self.split_taddr(t);
        let (lanes, cols) = footprint(form);
        self.check_cells(lane, lanes, col, cols);
        if form.cta_group == CtaGroup::Two && self.p.launch.cluster_size < 2 {
            self.trap(Code::PeerMissing, "0");
            return;
        }
        let Some((rows, row_bytes)) = computed(form, src) else {
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
        // The cell (lane + l, col + c) is word (col + c) * 128 + lane + l of emu_tmem; the
        // 128-lane footprints start at lane 0 (checked above), the others at `lane`. A loop
        // over the rows and words (an unrolled copy is thousands of instructions per cp,
        // which the JIT compiles slowly).
        let (base, row, j, at, v, dst) =
            (self.r(), self.r(), self.r(), self.r(), self.r(), self.r());
        let (p, q) = (self.pr(), self.pr());
        self.line(&format!("mov.u32 %r{base}, emu_tmem;"));
        self.line(&format!("mad.lo.u32 %r{base}, %r{col}, 512, %r{base};"));
        if lanes != 128 {
            self.line(&format!("mad.lo.u32 %r{base}, %r{lane}, 4, %r{base};"));
        }
        let n = self.next_label();
        self.line(&format!("mov.u32 %r{row}, 0;"));
        self.label(&format!("$CP{n}_row"));
        self.line(&format!("mov.u32 %r{j}, 0;"));
        self.label(&format!("$CP{n}_word"));
        // source_offset: offset + (row % 8) * 16 + (row / 8) * SBO + (j / 4) * LBO + 4 (j % 4).
        let sbo = 16 * u64::from(src.sbo_enc);
        let lbo = 16 * u64::from(src.lbo_enc);
        self.line(&format!("and.b32 %r{at}, %r{row}, 7;"));
        self.line(&format!("mul.lo.u32 %r{at}, %r{at}, 16;"));
        self.line(&format!("add.u32 %r{at}, %r{at}, {};", src.offset));
        self.line(&format!("shr.u32 %r{v}, %r{row}, 3;"));
        self.line(&format!("mad.lo.u32 %r{at}, %r{v}, {sbo}, %r{at};"));
        self.line(&format!("shr.u32 %r{v}, %r{j}, 2;"));
        self.line(&format!("mad.lo.u32 %r{at}, %r{v}, {lbo}, %r{at};"));
        self.line(&format!("and.b32 %r{v}, %r{j}, 3;"));
        self.line(&format!("mad.lo.u32 %r{at}, %r{v}, 4, %r{at};"));
        // A word beyond the region: the oracle does not model it (left unchanged).
        self.line(&format!("setp.gt.u32 %p{p}, %r{at}, {};", region_bytes - 4));
        self.line(&format!("@%p{p} bra $CP{n}_next;"));
        let data = self.r();
        self.line(&format!("mov.u32 %r{data}, tc_data{};", src.region));
        self.line(&format!("add.u32 %r{at}, %r{at}, %r{data};"));
        self.line(&format!("ld.shared.u32 %r{v}, [%r{at}];"));
        // The destination lanes of the row (`dest_lanes`): the row itself, or lane row % 32 of
        // each receiving quarter, quarter = mul * (row / 32) + add.
        let quarters = quarters(form.multicast);
        // The cell address of column j: base + 4 * (j * 128 + lane).
        self.line(&format!("mad.lo.u32 %r{dst}, %r{j}, 512, %r{base};"));
        if quarters.is_empty() {
            self.line(&format!("mad.lo.u32 %r{at}, %r{row}, 4, %r{dst};"));
            self.line(&format!("st.shared.u32 [%r{at}], %r{v};"));
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
                self.line(&format!("st.shared.u32 [%r{at}+{}], %r{v};", 128 * add));
            }
        }
        self.label(&format!("$CP{n}_next"));
        self.line(&format!("add.u32 %r{j}, %r{j}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{j}, {};", row_bytes / 4));
        self.line(&format!("@%p{q} bra $CP{n}_word;"));
        self.line(&format!("add.u32 %r{row}, %r{row}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{row}, {rows};"));
        self.line(&format!("@%p{q} bra $CP{n}_row;"));
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
