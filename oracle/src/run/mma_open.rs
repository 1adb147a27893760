//! Why the results of an MMA stay unspecified: the open question or rule each record of them
//! names (reference §7; the note an ld of them carries).

use super::mma::{exact_shape, pair_shape};
use tcgen05_ir::*;

/// Why the results of an MMA the oracle does not compute stay unspecified, naming the open
/// question or rule (the note an ld of them carries).
pub fn open_reason(m: &Mma) -> &'static str {
    let f = &m.form;
    let d = m.idesc;
    let m128 = (d >> 24 & 0x1F) << 4 == 128;
    if f.cta_group == CtaGroup::Two && m128 && matches!(m.a, MmaA::Tmem(_)) {
        return "OQ-22: an ld reads results of a cta_group::2 M = 128 MMA with A in TMEM whose lanes 64-127 do not duplicate lanes 0-63, or with .ashift (which lanes hold A's rows in data-path layout B is figure-only): unspecified";
    }
    if f.collector
        .is_some_and(|c| matches!(c.op, CollectorOp::Use | CollectorOp::Lastuse))
    {
        return "MMA-COLLECTOR-DEFAULT: an ld reads results of an MMA reading a collector buffer that may not hold its own operand (not the same descriptor and data as the fill, another warp's fill, or .ws): unspecified";
    }
    if exact_shape(m).is_some() || pair_shape(m).is_some() {
        return "OQ-19: an ld reads results of an MMA whose operands are not known small integers, or not known at its issue (rounding, accumulation order and precision are open): unspecified";
    }
    if f.block_scale {
        return "OQ-29, OQ-32: an ld reads block-scale MMA results (the scale-factor layouts in TMEM are figure-only): unspecified";
    }
    if f.sp {
        return "OQ-19, OQ-29: an ld reads results of a sparse MMA the oracle does not compute (kind, shape, metadata or operands not known exactly; `run::mma_sparse`): unspecified";
    }
    if f.cta_group == CtaGroup::Two && m.disable_output_lane.is_some() {
        return "OQ-31: an ld reads results of a cta_group::2 MMA with disable-output-lane (how mask bits 128-255 map onto the peer's lanes is not stated): unspecified";
    }
    if f.kind == MmaKind::F8f6f4 && (d >> 7 & 7 > 1 || d >> 10 & 7 > 1) {
        return "OQ-29: an ld reads results of an f8f6f4 MMA with 6- or 4-bit operands (their packing in shared memory is figure-only): unspecified";
    }
    "OQ-19, OQ-22: an ld reads MMA results the oracle does not compute (kind, shape, transpose, zero-column mask, or a D lane field other than 0): unspecified"
}
