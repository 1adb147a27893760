//! The value domain of the general lifter: what a register holds in each of the 32 lanes of
//! one warp of one CTA, as far as the lifter can tell.
//!
//! Numbers are exact per lane (the lifter runs each warp of each CTA on its own, so `%tid`,
//! `%laneid`, `%ctaid` and `%cluster_ctarank` are numbers). Addresses of shared variables, TMEM
//! addresses read from an alloc slot (reference §2.2, §4.5) and matrix descriptors under
//! construction (reference §2.8) are symbolic. Anything else (loads from global memory or
//! kernel parameters, instructions the lifter does not evaluate) is [`V::Unknown`], with the
//! line that produced it, so a use that matters can say why it cannot be lifted.

/// Per-lane numbers.
pub type Lanes = Box<[u64; 32]>;

/// What a register holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum V<'a> {
    /// A number in each lane (predicates: 0 or 1).
    Num(Lanes),
    /// The predicate of `elect.sync` (true in the elected lane), or its negation.
    Elect(bool),
    /// The address of a shared variable plus a byte offset (uniform).
    Addr(&'a str, i64),
    /// A TMEM address: the value alloc stored in the slot at `(variable, offset)`, read back
    /// with `ld.shared`, plus a per-lane offset.
    Tmem(&'a str, i64, Lanes),
    /// `(address & 0x3FFFF) >> 4` of a shared variable's address: a descriptor's start field.
    DescStart(&'a str, i64),
    /// A descriptor: start field of the variable's address plus the other fields' bits.
    Desc(&'a str, i64, u64),
    /// `mapa` of a shared variable into the cluster CTA of this rank.
    Remote(&'a str, i64, u8),
    /// Not known; the line of the instruction that produced it.
    Unknown(u32),
}

/// Every lane holding `v`.
pub fn splat(v: u64) -> Lanes {
    Box::new([v; 32])
}

impl<'a> V<'a> {
    /// A uniform number.
    pub fn num(v: u64) -> V<'a> {
        V::Num(splat(v))
    }

    /// The value shared by every lane of `active`, if it is a number and they agree.
    pub fn uniform(&self, active: u32) -> Option<u64> {
        let V::Num(l) = self else { return None };
        let mut it = (0..32).filter(|i| active >> i & 1 == 1).map(|i| l[i]);
        let first = it.next()?;
        it.all(|x| x == first).then_some(first)
    }
}

/// Bit width of a PTX type suffix (`.u32` → 32); 64 when unknown.
pub fn width(ty: &str) -> u32 {
    let digits: String = ty.chars().filter(char::is_ascii_digit).collect();
    digits
        .parse::<u32>()
        .ok()
        .filter(|w| [8, 16, 32, 64].contains(w))
        .unwrap_or(64)
}

fn mask(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

fn sext(v: u64, w: u32) -> i64 {
    if w >= 64 {
        v as i64
    } else {
        let s = 64 - w;
        ((v << s) as i64) >> s
    }
}

/// Lanewise binary arithmetic `op` (`add`, `sub`, `mul`, `shl`, `shr`, `and`, `or`, `xor`,
/// `div`, `rem`, `min`, `max`) of `ty` (e.g. `u32`, `s32`, `b64`); `wide` for `mul.wide`
/// (a double-width result). `None` for an operator this domain does not evaluate.
pub fn arith(op: &str, ty: &str, wide: bool, a: &[u64; 32], b: &[u64; 32]) -> Option<Lanes> {
    let w = width(ty);
    let signed = ty.starts_with('s');
    let out_w = if wide { 2 * w } else { w };
    let m = mask(w);
    let mut out = splat(0);
    for i in 0..32 {
        let (x, y) = (a[i] & m, b[i] & m);
        let (sx, sy) = (sext(x, w), sext(y, w));
        let r = match op {
            "add" => x.wrapping_add(y),
            "sub" => x.wrapping_sub(y),
            "mul" if wide && signed => (sx.wrapping_mul(sy)) as u64,
            "mul" => x.wrapping_mul(y),
            "shl" => {
                if y >= u64::from(w) {
                    0
                } else {
                    x << y
                }
            }
            "shr" if signed => (sx >> y.min(63)) as u64,
            "shr" => {
                if y >= u64::from(w) {
                    0
                } else {
                    x >> y
                }
            }
            "and" => x & y,
            "or" => x | y,
            "xor" => x ^ y,
            "div" | "rem" if y == 0 => return None,
            "div" if signed => sx.wrapping_div(sy) as u64,
            "div" => x / y,
            "rem" if signed => sx.wrapping_rem(sy) as u64,
            "rem" => x % y,
            "min" if signed => sx.min(sy) as u64,
            "min" => x.min(y),
            "max" if signed => sx.max(sy) as u64,
            "max" => x.max(y),
            _ => return None,
        };
        out[i] = r & mask(out_w);
    }
    Some(out)
}

/// Lanewise comparison `cmp` (`eq`, `ne`, `lt`, `le`, `gt`, `ge`, and the unsigned `lo`, `ls`,
/// `hi`, `hs`) of `ty`: 1 or 0 per lane.
pub fn compare(cmp: &str, ty: &str, a: &[u64; 32], b: &[u64; 32]) -> Option<Lanes> {
    let w = width(ty);
    let signed = ty.starts_with('s');
    let m = mask(w);
    let mut out = splat(0);
    for i in 0..32 {
        let (x, y) = (a[i] & m, b[i] & m);
        let (sx, sy) = (sext(x, w), sext(y, w));
        let r = match (cmp, signed) {
            ("eq", _) => x == y,
            ("ne", _) => x != y,
            ("lt", true) => sx < sy,
            ("le", true) => sx <= sy,
            ("gt", true) => sx > sy,
            ("ge", true) => sx >= sy,
            ("lt" | "lo", false) => x < y,
            ("le" | "ls", false) => x <= y,
            ("gt" | "hi", false) => x > y,
            ("ge" | "hs", false) => x >= y,
            _ => return None,
        };
        out[i] = u64::from(r);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_index_arithmetic_as_cutlass_writes_it() {
        // %tid.x of warp 3: 96..128; `shr.u32 5` gives 3 in every lane, `and 31` the lane.
        let tid: Lanes = Box::new(std::array::from_fn(|l| 96 + l as u64));
        let w = arith("shr", "u32", false, &tid, &splat(5)).unwrap();
        assert!(w.iter().all(|&x| x == 3));
        let lane = arith("and", "b32", false, &tid, &splat(31)).unwrap();
        assert_eq!(lane[7], 7);
        let q = arith("div", "u32", false, &tid, &splat(32)).unwrap();
        assert_eq!(q, w);
    }

    #[test]
    fn signed_comparison_and_wrapping() {
        let a = splat(0xFFFF_FFFF);
        assert!(
            compare("lt", "s32", &a, &splat(0))
                .unwrap()
                .iter()
                .all(|&x| x == 1)
        );
        assert!(
            compare("lt", "u32", &a, &splat(0))
                .unwrap()
                .iter()
                .all(|&x| x == 0)
        );
        assert_eq!(arith("add", "u32", false, &a, &splat(1)).unwrap()[0], 0);
        assert_eq!(
            arith("mul", "u32", true, &a, &splat(2)).unwrap()[0],
            0x1_FFFF_FFFE
        );
    }
}
