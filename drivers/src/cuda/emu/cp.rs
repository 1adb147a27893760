//! The emulated `tcgen05.cp` (§9.7.16.9.2, reference §3.5): the copy completes at issue, by
//! each thread that issues it, with the layouts the oracle computes (`oracle::run::tmem`,
//! `cp_values` and `cp_row`): the source rows are read through the descriptor in the K-major
//! no-swizzle layout of the MMA operands (core matrices of 8 rows × 16 bytes, LBO between the
//! 16-byte chunks of a row, SBO between groups of 8 rows, §9.7.16.4), one 32-bit word per
//! column, and land in the lanes the shape and multicast name. Forms whose values the oracle
//! leaves unspecified (the decompressions `.b8x16` with `.b6x16_p32` / `.b4x16_p64`, whose
//! expansion the ISA shows only in figures (OQ-29), swizzled or unusual descriptors, a shape
//! without the multicast it requires) check their footprint and leave the cells unchanged.

use super::ops::EmuOps;
use super::{Code, Emu};
use tcgen05_ir::form::CpForm;
use tcgen05_ir::ptx::Body;
use tcgen05_ir::{CpMulticast, CpShape, CtaGroup, SmemDesc, TmemRef};

/// The lanes and columns a cp writes from its `taddr` (CP-SHAPE, §3.5; the oracle's
/// footprint): the 128-lane shapes (and the multicasts, which cover all four lane quarters)
/// from lane 0, the others from the address's lane; a decompression doubles the columns.
pub(super) fn footprint(form: &CpForm) -> (u32, u32) {
    let (lanes, cols) = match form.shape {
        CpShape::S128x256b => (128, 8),
        CpShape::S4x256b => (4, 8),
        CpShape::S128x128b | CpShape::S64x128b | CpShape::S32x128b => (128, 4),
        CpShape::S64x256b => (64, 8),
    };
    (
        lanes,
        if form.dst_fmt.is_some() {
            cols * 2
        } else {
            cols
        },
    )
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

/// The byte offset in the source region of word `j` of row `row` (the oracle's
/// `mma::chunk_base` plus the word's place in its 16-byte chunk).
pub(super) fn source_offset(src: &SmemDesc, row: u32, j: u32) -> u64 {
    u64::from(src.offset)
        + u64::from(row % 8) * 16
        + u64::from(row / 8) * u64::from(src.sbo_enc) * 16
        + u64::from(j / 4) * u64::from(src.lbo_enc) * 16
        + u64::from(4 * (j % 4))
}

/// The lanes, relative to the destination's first lane, that source row `row` lands in: the
/// row itself without multicast; with one, lane `r` (`row % 32`) of the lane quarters that
/// receive the row (`.warpx4`: all four; `.warpx2::02_13`: rows 0-31 in quarters 0 and 2,
/// rows 32-63 in 1 and 3; `.warpx2::01_23`: rows 0-31 in quarters 0 and 1, 32-63 in 2 and 3).
pub(super) fn dest_lanes(multicast: Option<CpMulticast>, row: u32) -> Vec<u32> {
    let (h, r) = (row / 32, row % 32);
    let quarters: Vec<u32> = match multicast {
        None => return vec![row],
        Some(CpMulticast::Warpx4) => vec![0, 1, 2, 3],
        Some(CpMulticast::Warpx2_02_13) => vec![h, h + 2],
        Some(CpMulticast::Warpx2_01_23) => vec![2 * h, 2 * h + 1],
    };
    quarters.into_iter().map(|q| 32 * q + r).collect()
}

/// The emulated cp on a body being printed.
pub(super) trait EmuCp {
    /// Prints the emulation of a cp of `form` to `taddr` from the matrix `src` describes.
    fn cp_emu(&mut self, form: &CpForm, taddr: &TmemRef, src: &SmemDesc);
}

impl EmuCp for Body<'_, Emu<'_>> {
    fn cp_emu(&mut self, form: &CpForm, taddr: &TmemRef, src: &SmemDesc) {
        let t = self.taddr(taddr);
        let (lane, col) = (self.r(), self.r());
        self.line(&format!("shr.u32 %r{lane}, %r{t}, 16;"));
        self.line(&format!("and.b32 %r{col}, %r{t}, 65535;"));
        let (lanes, cols) = footprint(form);
        self.check_cells(lane, lanes, col, cols);
        if form.cta_group == CtaGroup::Two && self.p.launch.cluster_size < 2 {
            self.trap(Code::PeerMissing, "0");
            return;
        }
        let Some((rows, row_bytes)) = computed(form, src) else {
            return;
        };
        let region_bytes = self
            .p
            .smem
            .regions
            .get(usize::from(src.region))
            .map_or(16, |b| (*b).max(16));
        // The cell (lane + l, col + c) is word (col + c) * 128 + lane + l of emu_tmem; the
        // 128-lane footprints start at lane 0 (checked above), the others at `lane`.
        let base = self.r();
        self.line(&format!("mov.u32 %r{base}, emu_tmem;"));
        let first = if lanes == 128 { None } else { Some(lane) };
        self.line(&format!("mad.lo.u32 %r{col}, %r{col}, 512, %r{base};"));
        if let Some(l) = first {
            self.line(&format!("mad.lo.u32 %r{col}, %r{l}, 4, %r{col};"));
        }
        let v = self.r();
        for row in 0..rows {
            for j in 0..row_bytes / 4 {
                let at = source_offset(src, row, j);
                // A word beyond the region: the oracle does not model it (left unchanged).
                if at % 4 != 0 || at + 4 > u64::from(region_bytes) {
                    continue;
                }
                self.line(&format!(
                    "ld.shared.u32 %r{v}, [tc_data{}+{at}];",
                    src.region
                ));
                for l in dest_lanes(form.multicast, row) {
                    self.line(&format!(
                        "st.shared.u32 [%r{col}+{}], %r{v};",
                        4 * (j * 128 + l)
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multicast maps of §9.7.16.9.2 (reference §3.5), written out lane by lane.
    #[test]
    fn multicast_rows_land_in_the_quarters_the_spec_names() {
        assert_eq!(dest_lanes(None, 5), vec![5]);
        assert_eq!(
            dest_lanes(Some(CpMulticast::Warpx4), 3),
            vec![3, 35, 67, 99]
        );
        // .warpx2::02_13: rows 0-31 to warps 0 and 2, rows 32-63 to warps 1 and 3.
        assert_eq!(dest_lanes(Some(CpMulticast::Warpx2_02_13), 1), vec![1, 65]);
        assert_eq!(
            dest_lanes(Some(CpMulticast::Warpx2_02_13), 33),
            vec![33, 97]
        );
        // .warpx2::01_23: rows 0-31 to warps 0 and 1, rows 32-63 to warps 2 and 3.
        assert_eq!(dest_lanes(Some(CpMulticast::Warpx2_01_23), 1), vec![1, 33]);
        assert_eq!(
            dest_lanes(Some(CpMulticast::Warpx2_01_23), 40),
            vec![72, 104]
        );
    }

    /// The K-major no-swizzle layout (§9.7.16.4): 8 rows of 16-byte chunks, SBO between
    /// groups of 8 rows, LBO between a row's chunks (both in 16-byte units).
    #[test]
    fn source_offsets_follow_the_canonical_layout() {
        let d = SmemDesc {
            region: 0,
            offset: 64,
            lbo_enc: 8,
            sbo_enc: 16,
            fixed: 1,
            base_offset: 0,
            lbo_abs: false,
            swizzle: 0,
            reserved: 0,
        };
        assert_eq!(source_offset(&d, 0, 0), 64);
        assert_eq!(source_offset(&d, 0, 3), 64 + 12);
        assert_eq!(source_offset(&d, 3, 1), 64 + 3 * 16 + 4);
        assert_eq!(source_offset(&d, 9, 0), 64 + 16 + 256);
        assert_eq!(source_offset(&d, 0, 5), 64 + 128 + 4);
    }
}
