//! The logic of every fuzz target, as library functions `run(u) -> arbitrary::Result<()>`
//! (HABITS.md 1): the binaries in `fuzz_targets/` are a few lines of glue, and each module has
//! a seeded smoke test so that `cargo test` exercises every fuzzer.
#![deny(missing_docs)]

pub mod backend;
pub mod codec;
pub mod cuda;
pub mod diff_sim;
pub mod finding;
pub mod near_miss;
pub mod parse_ptx;
pub mod ptx_roundtrip;
pub mod ptxas;
pub mod seeds;

/// Runs `f` on `n` pseudo-random byte strings of up to `len` bytes from `seed` (for smoke tests).
pub fn test_n_times(
    n: usize,
    len: usize,
    seed: u64,
    f: impl Fn(&mut arbitrary::Unstructured<'_>) -> arbitrary::Result<()>,
) {
    let mut s = seed;
    for _ in 0..n {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                // 64-bit LCG (Knuth's MMIX constants), high byte.
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (s >> 56) as u8
            })
            .collect();
        let _ = f(&mut arbitrary::Unstructured::new(&bytes));
    }
}
