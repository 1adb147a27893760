//! 16-bit MMA D (f16 D of kind::f16 and kind::f8f6f4, §9.7.16.10.2 D type code 0): the
//! element occupies the low half of its 32-bit cell and the high half is not stated
//! (MMA-D-UNPACKED, §9.7.16.10.4.1), so the oracle states the low 16 bits only
//! (`WordExpect::Masked`).
//!
//! Like an f32 D (`run::mma`), a value is exact only where no rounding can happen whatever
//! the accumulation order and intermediate precision (OQ-19): every term is a multiple of
//! one grid step g and the magnitudes of the terms (and of the old D value) add up to less
//! than 2^11 steps. Every partial sum is then k·g with |k| < 2^11, which an IEEE binary16
//! holds exactly (11 significant bits; g ≥ 2^-24, the smallest subnormal, for every g the
//! oracle uses: 2^-8 for f8f6f4 times a scale-input-d grain of at least 2^-15), and the
//! final result too.

/// Sums of fewer grid steps than this are exact in f16 in any order (11 significant bits).
pub const F16_STEPS: f64 = 2048.0;

/// The IEEE binary16 encoding of `x` when `x` is exactly representable (finite, 11
/// significant bits, exponent in range); `None` otherwise. Zero is `+0`.
pub fn f16_bits(x: f64) -> Option<u16> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        return Some(0);
    }
    let sign: u16 = if x < 0.0 { 0x8000 } else { 0 };
    let a = x.abs();
    // Subnormal range: multiples of 2^-24 below 2^-14.
    let sub = 2f64.powi(-24);
    if a < 2f64.powi(-14) {
        let k = a / sub;
        return (k.fract() == 0.0).then_some(sign | k as u16);
    }
    // a = 2^e · (1 + f/1024), e in -14..=15.
    let e = a.log2().floor() as i32;
    // `log2` may be off by one near powers of two: fix e so that 2^e <= a < 2^(e+1).
    let e = if 2f64.powi(e) > a {
        e - 1
    } else if 2f64.powi(e + 1) <= a {
        e + 1
    } else {
        e
    };
    if e > 15 {
        return None;
    }
    let f = (a / 2f64.powi(e) - 1.0) * 1024.0;
    if f.fract() != 0.0 {
        return None;
    }
    Some(sign | ((e + 15) as u16) << 10 | f as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodings worked by hand from the IEEE 754 binary16 format (sign, 5 exponent bits,
    /// bias 15, 10 fraction bits).
    #[test]
    fn exact_values_encode_as_ieee_binary16() {
        assert_eq!(f16_bits(1.0), Some(0x3C00));
        assert_eq!(f16_bits(-2.0), Some(0xC000));
        assert_eq!(f16_bits(3.0), Some(0x4200));
        assert_eq!(f16_bits(0.5), Some(0x3800));
        assert_eq!(f16_bits(-7.0), Some(0xC700));
        assert_eq!(f16_bits(2047.0), Some(0x67FF));
        assert_eq!(f16_bits(2048.0), Some(0x6800));
        assert_eq!(f16_bits(65504.0), Some(0x7BFF));
        assert_eq!(f16_bits(2f64.powi(-14)), Some(0x0400));
        assert_eq!(f16_bits(2f64.powi(-24)), Some(0x0001));
        assert_eq!(f16_bits(3.0 * 2f64.powi(-24)), Some(0x0003));
        assert_eq!(f16_bits(0.0), Some(0));
    }

    #[test]
    fn values_that_would_round_have_no_encoding() {
        assert_eq!(f16_bits(2049.0), None);
        assert_eq!(f16_bits(65536.0), None);
        assert_eq!(f16_bits(2f64.powi(-25)), None);
        assert_eq!(f16_bits(1.0 + 2f64.powi(-11)), None);
        assert_eq!(f16_bits(f64::NAN), None);
        assert_eq!(f16_bits(f64::INFINITY), None);
    }

    /// Every finite f16 decodes (by the format's definition) to a value that encodes back to
    /// it: the encoding is the inverse of the decoding on all 63,488 finite non-negative-zero
    /// values.
    #[test]
    fn every_finite_f16_round_trips() {
        for h in 0u16..=0xFFFF {
            let e = i32::from(h >> 10 & 0x1F);
            if e == 31 || h == 0x8000 {
                continue;
            }
            let frac = f64::from(h & 0x3FF);
            let mag = if e == 0 {
                frac * 2f64.powi(-24)
            } else {
                (1.0 + frac / 1024.0) * 2f64.powi(e - 15)
            };
            let x = if h >> 15 == 1 { -mag } else { mag };
            assert_eq!(f16_bits(x), Some(h), "{h:#06x}");
        }
    }
}
