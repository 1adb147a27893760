//! The one seeded random source of the workspace: SplitMix64 (Steele, Lea and Flood, "Fast
//! splittable pseudorandom number generators", OOPSLA 2014). It is tiny, fast (one
//! multiply-xorshift round per draw), has no bad seeds, and a seeded sequence repeats
//! exactly, which every reproducible run needs: the generators' choices, the simulator's
//! random scheduler and the ptxas campaign's mutations all draw from it. None of them needs
//! cryptographic quality.

/// SplitMix64: a 64-bit state advanced by the golden-ratio increment, each output the
/// state passed through the finalizer [`mix`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

/// The increment of the state: `2^64 / φ`, odd.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    /// The generator whose state starts at `seed` (its first output is `mix(seed + GAMMA)`).
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }
}

/// SplitMix64's finalizer (a variant of MurmurHash3's `fmix64`): a bijection of `u64` that
/// spreads every input bit over every output bit.
#[inline]
pub const fn mix(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs for seed 1234567, from the reference implementation
    /// (`splitmix64.c` of Vigna's xoshiro page, http://prng.di.unimi.it/splitmix64.c).
    #[test]
    fn matches_the_reference_sequence() {
        let mut r = SplitMix64::new(1_234_567);
        let want = [
            6_457_827_717_110_365_317,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423,
            4_593_380_528_125_082_431,
            16_408_922_859_458_223_821,
        ];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
    }

    #[test]
    fn seed_zero_is_not_stuck() {
        let mut r = SplitMix64::new(0);
        let a = r.next_u64();
        let b = r.next_u64();
        assert_ne!(a, 0);
        assert_ne!(a, b);
        assert_eq!(a, mix(GAMMA));
    }
}
