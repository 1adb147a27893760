//! Number formats of MMA operands and results: e4m3 and e5m2 (as tables), f16 to and from f32
//! (round to nearest even).

/// Every e4m3 and e5m2 value, decoded once.
pub(super) fn fp8_table() -> &'static [[f32; 256]; 2] {
    static T: std::sync::OnceLock<[[f32; 256]; 2]> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut t = [[0f32; 256]; 2];
        for (b, x) in t[0].iter_mut().enumerate() {
            *x = fp8(b as u8, 4, 3, 7) as f32;
        }
        for (b, y) in t[1].iter_mut().enumerate() {
            *y = fp8(b as u8, 5, 2, 15) as f32;
        }
        t
    })
}

/// An 8-bit float with `e` exponent and `m` mantissa bits (OCP FP8: e4m3 has no infinities,
/// its all-ones pattern is NaN; e5m2 follows IEEE rules).
pub(super) fn fp8(b: u8, e: u32, m: u32, bias: i32) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = (u32::from(b) >> m) & ((1 << e) - 1);
    let man = u32::from(b) & ((1 << m) - 1);
    let emax = (1 << e) - 1;
    if e == 4 && exp == emax && man == (1 << m) - 1 {
        return f64::NAN;
    }
    if e == 5 && exp == emax {
        return if man == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    let frac = f64::from(man) / f64::from(1u32 << m);
    sign * if exp == 0 {
        frac * (2f64).powi(1 - bias)
    } else {
        (1.0 + frac) * (2f64).powi(exp as i32 - bias)
    }
}

/// [`f16_to_f32`] of the 8 halves of `words` (low half first) into `out`, without a branch
/// per element, when each is a zero or a normal number (no subnormal, infinity or NaN):
/// then `true`; otherwise `false` and `out` is not written.
#[inline]
pub(super) fn f16_plain8(words: &[u32; 4], out: &mut [f32; 8]) -> bool {
    let h: [u32; 8] = std::array::from_fn(|i| words[i / 2] >> (16 * (i % 2)) & 0xFFFF);
    // Exponent field 31 (infinity, NaN) or 0 with a non-zero mantissa (subnormal) is special.
    let plain = h.iter().fold(true, |ok, &x| {
        let e = x >> 10 & 0x1F;
        ok & (e != 31) & (e != 0 || x & 0x3FF == 0)
    });
    if !plain {
        return false;
    }
    for (o, &x) in out.iter_mut().zip(&h) {
        // A normal number: exponent rebiased by 127 - 15 = 112, mantissa widened by 13 bits
        // (as `f16_to_f32`); a zero keeps only its sign.
        let mag = x & 0x7FFF;
        let v = if mag == 0 {
            0
        } else {
            (mag << 13) + (112 << 23)
        };
        *o = f32::from_bits((x & 0x8000) << 16 | v);
    }
    true
}

/// IEEE binary16 to f32.
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    let e = u32::from(h >> 10 & 0x1F);
    if e != 0 && e != 31 {
        // Normal numbers: rebias the exponent, widen the mantissa.
        let bits = (u32::from(h & 0x8000) << 16) | ((e + 112) << 23) | (u32::from(h & 0x3FF) << 13);
        return f32::from_bits(bits);
    }
    if h & 0x7FFF == 0 {
        return f32::from_bits(u32::from(h) << 16);
    }
    f16_to_f32_special(h)
}

/// [`f16_to_f32`] of zeros, subnormals, infinities and NaNs.
#[cold]
#[inline(never)]
pub(super) fn f16_to_f32_special(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let e = (h >> 10 & 0x1F) as i32;
    let f = f32::from(h & 0x3FF);
    sign * match e {
        0 => f * (2f32).powi(-24),
        31 => {
            if f == 0.0 {
                f32::INFINITY
            } else {
                f32::NAN
            }
        }
        _ => (1.0 + f / 1024.0) * (2f32).powi(e - 15),
    }
}

/// f32 to IEEE binary16, rounding to nearest even, by bit arithmetic (identical to the
/// earlier `log2`/`powi` formulation for every one of the 2^32 inputs, checked exhaustively
/// when it was replaced).
pub fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let a = bits & 0x7FFF_FFFF;
    if a > 0x7F80_0000 {
        // NaN: the canonical quiet NaN with the sign.
        return sign | 0x7E00;
    }
    if a >= 0x477F_F000 {
        // |x| >= 65520 (halfway above the largest finite f16, 65504): infinity.
        return sign | 0x7C00;
    }
    if a < 0x3300_0000 {
        // |x| < 2^-25 (at most half the smallest subnormal, 2^-24): zero.
        return sign;
    }
    let e = (a >> 23) as i32 - 127;
    let m = (a & 0x7F_FFFF) | 0x80_0000;
    if e < -14 {
        // Subnormal: |x| / 2^-24 = m * 2^(e + 1), rounded; 1024 is the smallest normal's
        // encoding.
        return sign | rne_shift(m, (-(e + 1)) as u32) as u16;
    }
    let r = rne_shift(m, 13);
    let (r, e) = if r >= 2048 { (r / 2, e + 1) } else { (r, e) };
    if e > 15 {
        return sign | 0x7C00;
    }
    sign | (((e + 15) as u16) << 10) | (r as u16 & 0x3FF)
}

/// `m >> s` rounded to nearest, ties to even (`1 <= s <= 24`).
#[inline]
pub(super) fn rne_shift(m: u32, s: u32) -> u32 {
    let q = m >> s;
    let rem = m & ((1 << s) - 1);
    let half = 1 << (s - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}
