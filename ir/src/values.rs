//! The data that programs write, as pure functions of a seed, so that the printer (which
//! computes them in PTX), the simulator and the oracle agree on what was written without
//! sharing any semantics.

use crate::program::FillElem;

/// Multiplier of [`st_value`]: odd, so distinct lanes give distinct values.
fn st_mul(seed: u32) -> u32 {
    (seed >> 7) | 1
}

/// Addend of [`st_value`] for register `reg`: the golden-ratio constant spreads registers.
pub fn st_add(seed: u32, reg: u32) -> u32 {
    seed.wrapping_add(reg.wrapping_mul(0x9E37_79B9))
}

/// The value that lane `lane` holds in register `reg` of a `tcgen05.st` with seed `seed`:
/// `lane * mul(seed) + add(seed, reg)` (wrapping). The printer emits exactly this as one
/// `mad.lo.u32` per register.
pub fn st_value(seed: u32, lane: u32, reg: u32) -> u32 {
    lane.wrapping_mul(st_mul(seed))
        .wrapping_add(st_add(seed, reg))
}

/// `(mul, add)` of register `reg`, for the printer.
pub fn st_coeffs(seed: u32, reg: u32) -> (u32, u32) {
    (st_mul(seed), st_add(seed, reg))
}

/// The multiplier of a fill's hash, `h = i * FILL_MUL + seed` ([`fill_word`]); the printers
/// compute the same hash in the kernel.
pub const FILL_MUL: u32 = 0x9E37_79B9;

/// Word `i` of a data region filled by [`crate::Stmt::Fill`].
///
/// The printer computes it as `h = i * FILL_MUL + seed` (wrapping), then per element kind:
/// - `Word`: `h`;
/// - `F16Small`: two f16 values, each `((h >> s) & 7) - 4` in [-4, 3] (s = 8 and 20);
/// - `Tf32Small`: the f32 bits of `((h >> 8) & 7) - 4`;
/// - `I8Small`: four bytes, each `((h >> s) & 15) - 8` in [-8, 7] (s = 4, 10, 16, 22);
/// - `SpMeta`: `((h >> 1) & 0x1111_1111) * 10 | 0x4444_4444`: each nibble is 0b0100, or
///   0b1110 where bit `4k + 1` of `h` is set (sparse metadata valid for every kind, §3.7);
/// - `ScaleSmall`: four bytes, each `((h >> s) & 3) + 123` (s = 3, 9, 15, 21): scale factors
///   valid as UE8M0 (2^-4 .. 2^-1) and as UE4M3 (0x7B..0x7E: 352, 384, 416, 448; 0x7F would
///   be NaN), so the same fill serves both scale types (§3.7 `.block_scale`, PTX ISA §5.2.3);
/// - `Bf16Small`: two bf16 values, each `((h >> s) & 7) - 4` in [-4, 3] (s = 8 and 20), the
///   high halves of the f32 bits of those integers.
///
/// Small integers keep f16/tf32 products exact in an f32 accumulator, so the oracle can state them.
pub fn fill_word(elem: FillElem, seed: u32, i: u32) -> u32 {
    let h = i.wrapping_mul(FILL_MUL).wrapping_add(seed);
    let small = |s: u32, mask: u32, bias: i32| ((h >> s) & mask) as i32 - bias;
    // The 3-bit fields of F16Small and Tf32Small, looked up (fill_word is called per word by
    // the simulator's operand reads): entry k is the encoding of k - 4.
    let field = |s: u32| ((h >> s) & 7) as usize;
    match elem {
        FillElem::Word => h,
        FillElem::F16Small => {
            u32::from(F16_SMALL[field(8)]) | u32::from(F16_SMALL[field(20)]) << 16
        }
        FillElem::Tf32Small => TF32_SMALL[field(8)],
        FillElem::I8Small => {
            let b = |s| (small(s, 15, 8) as i8 as u8) as u32;
            b(4) | b(10) << 8 | b(16) << 16 | b(22) << 24
        }
        // 0b1010 * bit: no carry between nibbles (10 < 16), so 0b0100 | 0b1010 = 0b1110.
        FillElem::SpMeta => ((h >> 1) & 0x1111_1111).wrapping_mul(10) | 0x4444_4444,
        FillElem::ScaleSmall => {
            let b = |s: u32| ((h >> s) & 3) + 123;
            b(3) | b(9) << 8 | b(15) << 16 | b(21) << 24
        }
        FillElem::Bf16Small => TF32_SMALL[field(8)] >> 16 | (TF32_SMALL[field(20)] & 0xFFFF_0000),
    }
}

/// `f16_bits(k - 4)` for k in 0..8: the values of a [`FillElem::F16Small`] field.
const F16_SMALL: [u16; 8] = {
    let mut t = [0u16; 8];
    let mut k = 0;
    while k < 8 {
        t[k] = f16_bits(k as i32 - 4);
        k += 1;
    }
    t
};

/// The f32 bits of `k - 4` for k in 0..8: the values of a [`FillElem::Tf32Small`] word.
const TF32_SMALL: [u32; 8] = {
    let mut t = [0u32; 8];
    let mut k = 0;
    while k < 8 {
        t[k] = ((k as i32 - 4) as f32).to_bits();
        k += 1;
    }
    t
};

/// The f16 bit pattern of a small integer in [-16, 16] (exact).
pub const fn f16_bits(v: i32) -> u16 {
    if v == 0 {
        return 0;
    }
    let sign = if v < 0 { 0x8000u16 } else { 0 };
    let m = v.unsigned_abs();
    let e = 31 - m.leading_zeros(); // floor(log2 m)
    let frac = (m - (1 << e)) << (10 - e); // 10-bit mantissa
    sign | ((e as u16 + 15) << 10) | frac as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_fills_follow_their_documented_formula() {
        // The doc comment's formula, computed without the lookup tables.
        for seed in [0u32, 1, 0xDEAD_BEEF, 397_520_864] {
            for i in 0..4096u32 {
                let h = i.wrapping_mul(0x9E37_79B9).wrapping_add(seed);
                let small = |s: u32| ((h >> s) & 7) as i32 - 4;
                let f16 = u32::from(f16_bits(small(8))) | u32::from(f16_bits(small(20))) << 16;
                assert_eq!(fill_word(FillElem::F16Small, seed, i), f16);
                let tf32 = (small(8) as f32).to_bits();
                assert_eq!(fill_word(FillElem::Tf32Small, seed, i), tf32);
                let bf16 = |v: i32| (v as f32).to_bits() >> 16;
                assert_eq!(
                    fill_word(FillElem::Bf16Small, seed, i),
                    bf16(small(8)) | bf16(small(20)) << 16
                );
            }
        }
    }

    #[test]
    fn f16_small_integers_match_the_ieee_encoding() {
        // Known IEEE-754 binary16 encodings.
        assert_eq!(f16_bits(1), 0x3C00);
        assert_eq!(f16_bits(2), 0x4000);
        assert_eq!(f16_bits(3), 0x4200);
        assert_eq!(f16_bits(-4), 0xC400);
        assert_eq!(f16_bits(0), 0);
    }

    #[test]
    fn sparse_metadata_nibbles_are_valid_for_every_kind() {
        // Reference §3.7 "Sparse A": tf32 defines only 0b1110 and 0b0100; both are among the
        // seven values listed for 2:4 and 4:8.
        let mut seen = [false; 2];
        for seed in [0, 1, 0xFFFF_FFFF, 0x1234_5678] {
            for i in 0..256 {
                let w = fill_word(FillElem::SpMeta, seed, i);
                for k in 0..8 {
                    let nib = w >> (4 * k) & 0xF;
                    assert!(nib == 0b0100 || nib == 0b1110, "{w:#010x} nibble {k}");
                    seen[usize::from(nib == 0b1110)] = true;
                }
            }
        }
        assert_eq!(seen, [true, true], "both values occur");
    }

    #[test]
    fn scale_fill_bytes_are_valid_ue8m0_and_ue4m3() {
        // Every byte is 123..=126 (UE8M0 2^-4 .. 2^-1; UE4M3 352 .. 448, below the NaN 0x7F
        // and with bit 7 clear), from its own two bits of h.
        let mut seen = [false; 4];
        for seed in [0, 7, 0xFFFF_FFFF, 0x1234_5678] {
            for i in 0..256u32 {
                let h = i.wrapping_mul(0x9E37_79B9).wrapping_add(seed);
                let w = fill_word(FillElem::ScaleSmall, seed, i);
                for (k, s) in [3u32, 9, 15, 21].into_iter().enumerate() {
                    let b = w >> (8 * k) & 0xFF;
                    assert_eq!(b, 123 + (h >> s & 3), "{w:#010x} byte {k}");
                    assert!(b < 0x7F, "{b:#x}");
                    seen[(b - 123) as usize] = true;
                }
            }
        }
        assert_eq!(seen, [true; 4], "every exponent occurs");
    }

    #[test]
    fn st_values_differ_across_lanes_and_registers() {
        let s = 0x1234_5678;
        let mut seen = std::collections::HashSet::new();
        for lane in 0..32 {
            for reg in 0..8 {
                assert!(seen.insert(st_value(s, lane, reg)));
            }
        }
    }
}
