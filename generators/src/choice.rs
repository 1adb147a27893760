//! Where the generator's decisions come from: a seed (a small, fast PRNG) or fuzzer bytes
//! (`arbitrary::Unstructured`). The builder only ever asks [`Choices`] for bounded integers, so
//! the same code is deterministic from either kind of input.

use arbitrary::Unstructured;
use tcgen05_ir::rng::SplitMix64;

/// A source of bounded choices.
pub trait Choices {
    /// A value in `0..n` (`0` when `n <= 1`).
    fn below(&mut self, n: u32) -> u32;

    /// True with probability `pct` percent (`pct >= 100` is always true, `0` never).
    fn percent(&mut self, pct: u8) -> bool {
        match pct {
            0 => false,
            100.. => true,
            // Exhausted fuzzer bytes choose 0, which must mean "leave the option out".
            p => self.below(100) >= 100 - u32::from(p),
        }
    }

    /// A value in `lo..=hi` (`lo` when `hi <= lo`).
    fn range(&mut self, lo: u32, hi: u32) -> u32 {
        if hi <= lo {
            lo
        } else {
            lo + self.below(hi - lo + 1)
        }
    }

    /// One element of a non-empty slice, or `None` for an empty one.
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T>
    where
        Self: Sized,
    {
        if xs.is_empty() {
            None
        } else {
            xs.get(self.below(xs.len() as u32) as usize)
        }
    }

    /// A raw 32-bit value (value seeds).
    fn word(&mut self) -> u32;
}

/// A seeded generator: the workspace's SplitMix64 ([`SplitMix64`]), which has no bad seeds,
/// as a per-case seed space needs.
#[derive(Debug, Clone)]
pub struct SeedChoices {
    rng: SplitMix64,
}

impl SeedChoices {
    /// The generator for `seed`.
    pub fn new(seed: u64) -> Self {
        SeedChoices {
            rng: SplitMix64::new(seed),
        }
    }

    fn next(&mut self) -> u64 {
        self.rng.next_u64()
    }
}

impl Choices for SeedChoices {
    fn below(&mut self, n: u32) -> u32 {
        if n <= 1 {
            return 0;
        }
        // Lemire's multiply-shift reduction; the bias (< n / 2^32) is irrelevant here.
        (((self.next() >> 32) * u64::from(n)) >> 32) as u32
    }

    fn word(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
}

/// Choices read from fuzzer bytes. When the bytes run out every choice is 0, which the builder
/// treats as "the smallest option", so shorter inputs give smaller programs (good for
/// shrinking).
#[derive(Debug)]
pub struct BytesChoices<'a, 'b> {
    u: &'b mut Unstructured<'a>,
}

impl<'a, 'b> BytesChoices<'a, 'b> {
    /// Wraps `u`.
    pub fn new(u: &'b mut Unstructured<'a>) -> Self {
        BytesChoices { u }
    }
}

impl Choices for BytesChoices<'_, '_> {
    fn below(&mut self, n: u32) -> u32 {
        if n <= 1 {
            return 0;
        }
        self.u.int_in_range(0..=n - 1).unwrap_or(0)
    }

    fn word(&mut self) -> u32 {
        self.u.arbitrary().unwrap_or(0)
    }
}

/// Mixes a seed and an index into a case seed (SplitMix64 finalizer), so that case `i` of a
/// run with seed `s` is reproducible on its own.
pub fn case_seed(seed: u64, index: u64) -> u64 {
    SplitMix64::new(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_bounds_and_reaches_every_value() {
        let mut c = SeedChoices::new(7);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let v = c.below(5);
            assert!(v < 5);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(c.below(0), 0);
        assert_eq!(c.below(1), 0);
    }

    #[test]
    fn empty_bytes_choose_zero() {
        let mut u = Unstructured::new(&[]);
        let mut c = BytesChoices::new(&mut u);
        assert_eq!(c.below(10), 0);
        assert!(!c.percent(50));
        assert_eq!(c.range(3, 9), 3);
    }

    #[test]
    fn same_seed_same_choices() {
        let a: Vec<u32> = {
            let mut c = SeedChoices::new(42);
            (0..16).map(|_| c.below(1000)).collect()
        };
        let b: Vec<u32> = {
            let mut c = SeedChoices::new(42);
            (0..16).map(|_| c.below(1000)).collect()
        };
        assert_eq!(a, b);
        assert_ne!(case_seed(1, 0), case_seed(1, 1));
    }
}
