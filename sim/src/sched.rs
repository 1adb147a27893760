//! Choices of the scheduler: a seeded random source, and the exhaustive enumerator of choice
//! sequences (stateless model checking: each run replays a prefix, then takes first choices).

use tcgen05_ir::rng::SplitMix64;

/// Picks one of `n` alternatives (`n >= 1`).
pub trait Chooser {
    /// A number in `0..n`.
    fn choose(&mut self, n: usize) -> usize;
}

/// The random scheduler's source: the workspace's SplitMix64 ([`SplitMix64`]), its state
/// started at the seed xor a constant, so that a scheduler seed and a generator seed of the
/// same value give unrelated sequences.
#[derive(Debug, Clone)]
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed ^ 0x5DEE_CE66_D1CE_4E5B))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
}

/// Divisors below this use [`RECIP`] instead of a 64-bit division.
const SMALL: usize = 64;

/// `RECIP[n] = floor((2^64 - 1) / n)` for `1 <= n < SMALL` (`RECIP[0]` unused).
const RECIP: [u64; SMALL] = {
    let mut t = [0u64; SMALL];
    let mut n = 1;
    while n < SMALL {
        t[n] = u64::MAX / n as u64;
        n += 1;
    }
    t
};

/// `x % n` for `2 <= n < SMALL` without a division instruction (the scheduler's choices are
/// among a handful of alternatives, and a 64-bit `div` is tens of cycles). With
/// `m = floor((2^64 - 1) / n)`, `q = floor(x * m / 2^64)` is `floor(x / n)` or one less
/// (`x * m / 2^64 > x / n - x / 2^64 > x / n - 1`, and `<= x / n`), so `x - q * n` is the
/// remainder or the remainder plus `n`: one conditional subtraction gives exactly `x % n`.
#[inline]
fn small_mod(x: u64, n: usize) -> u64 {
    let q = ((u128::from(x) * u128::from(RECIP[n])) >> 64) as u64;
    let r = x - q * n as u64;
    if r >= n as u64 { r - n as u64 } else { r }
}

impl Chooser for Rng {
    fn choose(&mut self, n: usize) -> usize {
        if n <= 1 {
            0
        } else if n < SMALL {
            small_mod(self.next_u64(), n) as usize
        } else if n.is_power_of_two() {
            (self.next_u64() & (n as u64 - 1)) as usize
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// Enumerates choice sequences depth first: run `k` replays the prefix of run `k - 1` up to
/// its last choice that still has an untried alternative, takes that alternative, then takes
/// alternative 0 at every later choice.
#[derive(Debug, Clone, Default)]
pub struct Exhaustive {
    /// The choices of the current run: (taken, alternatives).
    trail: Vec<(usize, usize)>,
    /// Position in the trail during a run.
    pos: usize,
}

impl Exhaustive {
    /// A fresh enumerator (its first run takes alternative 0 everywhere).
    pub fn new() -> Self {
        Self::default()
    }

    /// Prepares the next run; `false` when every sequence has been tried.
    pub fn next_run(&mut self) -> bool {
        while let Some((taken, n)) = self.trail.pop() {
            if taken + 1 < n {
                self.trail.push((taken + 1, n));
                self.pos = 0;
                return true;
            }
        }
        false
    }

    /// Restarts replay at the beginning of the trail.
    pub fn rewind(&mut self) {
        self.pos = 0;
    }
}

impl Chooser for Exhaustive {
    fn choose(&mut self, n: usize) -> usize {
        let k = if self.pos < self.trail.len() {
            self.trail[self.pos].0.min(n.saturating_sub(1))
        } else {
            self.trail.push((0, n));
            0
        };
        self.pos += 1;
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_choices() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for n in 1..50 {
            assert_eq!(a.choose(n), b.choose(n));
        }
    }

    #[test]
    fn the_division_free_remainder_is_the_remainder() {
        // Every small divisor against `%`, on random numerators and on those next to
        // multiples of the divisor and to 2^64 (where an off-by-one quotient would show).
        let mut r = Rng::new(1);
        for n in 2..SMALL {
            let m = n as u64;
            let edges = [0, 1, m - 1, m, m + 1, u64::MAX, u64::MAX - 1, u64::MAX - m];
            let top = (u64::MAX / m) * m;
            let near = [top, top - 1, top.wrapping_add(m - 1), (1 << 63) / m * m - 1];
            for x in edges
                .into_iter()
                .chain(near)
                .chain((0..2000).map(|_| r.next_u64()))
            {
                assert_eq!(small_mod(x, n), x % m, "{x} % {n}");
            }
        }
    }

    #[test]
    fn choices_are_the_remainder_of_the_random_bits() {
        // `choose` is `next_u64() % n` for every n (the recorded schedules depend on it).
        for n in [2usize, 3, 7, 63, 64, 65, 100, 1 << 16, 1000] {
            let (mut a, mut b) = (Rng::new(9), Rng::new(9));
            for _ in 0..500 {
                assert_eq!(a.choose(n) as u64, b.next_u64() % n as u64);
            }
        }
    }

    #[test]
    fn exhaustive_enumerates_every_sequence_once() {
        // Two choices of 2 and 3 alternatives: 6 sequences.
        let mut e = Exhaustive::new();
        let mut seen = std::collections::HashSet::new();
        loop {
            let s = (e.choose(2), e.choose(3));
            assert!(seen.insert(s));
            if !e.next_run() {
                break;
            }
        }
        assert_eq!(seen.len(), 6);
    }
}
