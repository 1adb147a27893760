//! Exact MMA results where the spec makes them exact: kinds i8 (integer arithmetic) and
//! f16 / tf32 with small-integer inputs, whose products and sums are exact in an f32
//! accumulator whatever the accumulation order (OQ-19 leaves order and rounding open, so only
//! results with no rounding anywhere are exact).
//!
//! The data layouts come from the ISA's figures, not the reference text (OQ-22, OQ-29); the
//! oracle uses them only when [`crate::Options::figure_layouts`] is set, and only for:
//! A and B in shared memory, K-major, no swizzle (core matrices of 8 rows × 16 bytes, LBO
//! between core matrices along K, SBO along M/N), and D in data-path layout D (M = 128,
//! `cta_group::1`: row m in lane m, column n in column n). Everything else is unspecified in
//! value (its region and ordering are still modelled).

use tcgen05_ir::*;

/// What the oracle knows of a shared-memory data region at the MMA's issue.
#[derive(Debug, Clone, Copy)]
pub struct RegionData {
    /// Element kind written by the region's fill.
    pub elem: FillElem,
    /// Fill seed.
    pub seed: u32,
    /// Region size in bytes.
    pub bytes: u32,
}

/// The shape and kind of an exactly computable MMA, or `None`.
pub fn exact_shape(m: &Mma) -> Option<(u32, u32)> {
    let f = &m.form;
    let coll_ok = f.collector.is_none_or(|c| c.op == CollectorOp::Discard);
    if f.ws || f.sp || f.block_scale || f.ashift || f.cta_group != CtaGroup::One || !coll_ok {
        return None;
    }
    if !matches!(m.a, MmaA::Desc(_))
        || !matches!(f.kind, MmaKind::F16 | MmaKind::Tf32 | MmaKind::I8)
    {
        return None;
    }
    let d = m.idesc;
    let mm = (d >> 24 & 0x1F) << 4;
    let n = (d >> 17 & 0x3F) << 3;
    // Dense, no transposes, no B-reuse shift, M = 128.
    if mm != 128 || d & 0b111 != 0 || d & (0b11 << 15) != 0 || d >> 30 != 0 || n == 0 {
        return None;
    }
    let (dt, at, bt) = (d >> 4 & 3, d >> 7 & 7, d >> 10 & 7);
    let ok = match f.kind {
        MmaKind::F16 => dt == 1 && at == 0 && bt == 0,
        MmaKind::Tf32 => dt == 1 && at == 2 && bt == 2,
        MmaKind::I8 => dt == 2 && at <= 1 && bt <= 1,
        _ => false,
    };
    ok.then_some((mm, n))
}

fn f16_value(h: u16) -> f64 {
    let sign = if h >> 15 == 1 { -1.0 } else { 1.0 };
    let e = i32::from(h >> 10 & 0x1F);
    let frac = f64::from(h & 0x3FF);
    match e {
        0 => sign * frac * 2f64.powi(-24),
        31 => f64::NAN,
        _ => sign * (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// Element bytes and K (dense) of a kind.
fn elem_k(kind: MmaKind) -> (u32, u32) {
    match kind {
        MmaKind::F16 => (2, 16),
        MmaKind::Tf32 => (4, 8),
        _ => (1, 32),
    }
}

/// Reads element (row, k) of an operand through its descriptor (K-major, no swizzle).
fn element(
    desc: &SmemDesc,
    data: &RegionData,
    kind: MmaKind,
    signed: bool,
    row: u32,
    k: u32,
) -> Option<f64> {
    if desc.swizzle != 0
        || desc.lbo_abs
        || desc.base_offset != 0
        || desc.fixed != 1
        || desc.reserved != 0
    {
        return None;
    }
    let want = match kind {
        MmaKind::F16 => FillElem::F16Small,
        MmaKind::Tf32 => FillElem::Tf32Small,
        _ => FillElem::I8Small,
    };
    // Arbitrary words are exact only as 8-bit integers.
    if data.elem != want && !(kind == MmaKind::I8 && data.elem == FillElem::Word) {
        return None;
    }
    let (eb, _) = elem_k(kind);
    let kb = k * eb;
    let addr = u64::from(desc.offset)
        + u64::from(row % 8) * 16
        + u64::from(row / 8) * u64::from(desc.sbo_enc) * 16
        + u64::from(kb / 16) * u64::from(desc.lbo_enc) * 16
        + u64::from(kb % 16);
    if addr + u64::from(eb) > u64::from(data.bytes.max(16)) {
        return None;
    }
    let word = values::fill_word(data.elem, data.seed, (addr / 4) as u32);
    let shift = (addr % 4) * 8;
    let v = match kind {
        MmaKind::F16 => f16_value((word >> shift) as u16),
        MmaKind::Tf32 => {
            // tf32 keeps 10 mantissa bits: a Word fill may hold more; only exact ones count.
            let x = f32::from_bits(word & 0xFFFF_E000);
            if (word & 0x1FFF) != 0 {
                return None;
            }
            f64::from(x)
        }
        _ => {
            let b = (word >> shift) as u8;
            if signed {
                f64::from(b as i8)
            } else {
                f64::from(b)
            }
        }
    };
    v.is_finite().then_some(v)
}

/// The operands of an exact MMA, read once: A by row and B by column (negation applied), so
/// that any D cell is one K-long dot product, computed only when some reader asks for it
/// (demand-driven: an ld reads a few columns of the M × N result).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// M.
    pub mm: u32,
    /// N.
    pub n: u32,
    kk: u32,
    kind: MmaKind,
    enable_input_d: bool,
    scale: u8,
    arow: Vec<f64>,
    bcol: Vec<f64>,
}

/// Reads the operands of an exact MMA; `None` for a whole-result miss (a shape, layout or
/// element that is not exact).
pub fn prepare(m: &Mma, a: &RegionData, b: &RegionData) -> Option<Prepared> {
    let (mm, n) = exact_shape(m)?;
    let MmaA::Desc(ad) = &m.a else { return None };
    let kind = m.form.kind;
    let (_, kk) = elem_k(kind);
    let d = m.idesc;
    let (sa, sb) = (d >> 7 & 7 == 1, d >> 10 & 7 == 1);
    let (na, nb) = (d >> 13 & 1 == 1, d >> 14 & 1 == 1);
    let mut arow = vec![0f64; (mm * kk) as usize];
    for r in 0..mm {
        for k in 0..kk {
            let v = element(ad, a, kind, sa, r, k)?;
            arow[(r * kk + k) as usize] = if na { -v } else { v };
        }
    }
    let mut bcol = vec![0f64; (n * kk) as usize];
    for c in 0..n {
        for k in 0..kk {
            let v = element(&m.b, b, kind, sb, c, k)?;
            bcol[(c * kk + k) as usize] = if nb { -v } else { v };
        }
    }
    Some(Prepared {
        mm,
        n,
        kk,
        kind,
        enable_input_d: m.enable_input_d,
        scale: m.scale_input_d.unwrap_or(0),
        arow,
        bcol,
    })
}

impl Prepared {
    /// D at (row, col): `Some(bits)` where exact, `None` otherwise. `old` is the old D cell
    /// value (used when enable-input-d is set).
    pub fn cell(&self, r: u32, c: u32, old: Option<u32>) -> Option<u32> {
        if r >= self.mm || c >= self.n {
            return None;
        }
        let kk = self.kk as usize;
        let a = &self.arow[r as usize * kk..(r as usize + 1) * kk];
        let b = &self.bcol[c as usize * kk..(c as usize + 1) * kk];
        let mut sum = 0f64;
        let mut abs = 0f64;
        for (x, y) in a.iter().zip(b) {
            let t = x * y;
            sum += t;
            abs += t.abs();
        }
        if self.kind == MmaKind::I8 {
            // MMA-ENABLE-D: D = A·B (+ D); exact while no s32 overflow (OQ-19).
            let prev = if self.enable_input_d {
                old.map(|v| i64::from(v as i32))
            } else {
                Some(0)
            };
            prev.and_then(|p| {
                let v = p + sum as i64;
                (i64::from(i32::MIN)..=i64::from(i32::MAX))
                    .contains(&v)
                    .then_some(v as i32 as u32)
            })
        } else {
            // MMA-SCALE-D-SEM: D = A·B + D·2^-s; exact when every partial sum fits the
            // 24-bit significand at the 2^-s grain.
            let s = i32::from(self.scale);
            let prev = if self.enable_input_d {
                old.map(|v| f64::from(f32::from_bits(v)) * 2f64.powi(-s))
            } else {
                Some(0.0)
            };
            prev.and_then(|p| {
                let grain = 2f64.powi(-s);
                let exact = p.is_finite()
                    && (p / grain).fract() == 0.0
                    && (abs + p.abs()) / grain < 16_777_216.0;
                exact.then(|| ((sum + p) as f32).to_bits())
            })
        }
    }
}

/// The D values (row-major M × N) of an exact MMA: `Some(v)` per written cell (`None` where
/// the value is not exact), or `None` for a whole-result miss. `old` gives the old D cell
/// values when enable-input-d is set. (Every cell at once; the oracle itself uses
/// [`prepare`] and [`Prepared::cell`] on demand.)
pub fn compute(
    m: &Mma,
    a: &RegionData,
    b: &RegionData,
    old: &dyn Fn(u32, u32) -> Option<u32>,
) -> Option<Vec<Option<u32>>> {
    let p = prepare(m, a, b)?;
    let mut out = Vec::with_capacity((p.mm * p.n) as usize);
    for r in 0..p.mm {
        for c in 0..p.n {
            out.push(p.cell(r, c, old(r, c)));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_decoding_matches_ieee() {
        assert_eq!(f16_value(0x3C00), 1.0);
        assert_eq!(f16_value(0xC400), -4.0);
        assert_eq!(f16_value(0x4200), 3.0);
        assert_eq!(f16_value(0), 0.0);
    }
}
