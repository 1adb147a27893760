//! Choices of the scheduler: a seeded random source, and the exhaustive enumerator of choice
//! sequences (stateless model checking: each run replays a prefix, then takes first choices).

/// Picks one of `n` alternatives (`n >= 1`).
pub trait Chooser {
    /// A number in `0..n`.
    fn choose(&mut self, n: usize) -> usize;
}

/// SplitMix64: small, fast and deterministic for a seed (the simulator needs no cryptographic
/// quality, only reproducibility and a good spread).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Chooser for Rng {
    fn choose(&mut self, n: usize) -> usize {
        if n <= 1 {
            0
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
