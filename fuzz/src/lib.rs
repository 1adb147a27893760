//! The logic of every fuzz target, as library functions `run(u) -> arbitrary::Result<()>`
//!: the binaries in `fuzz_targets/` are a few lines of glue, and each module has
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

/// Runs `f` on `n` pseudo-random byte strings of up to `len` bytes from `seed` (for smoke
/// tests), and returns how many of the `n` it ran to the end (`Ok`): an iteration whose bytes
/// ran out before it made a case returns `Err` and is not counted.
pub fn test_n_times(
    n: usize,
    len: usize,
    seed: u64,
    mut f: impl FnMut(&mut arbitrary::Unstructured<'_>) -> arbitrary::Result<()>,
) -> usize {
    let mut s = seed;
    let mut ok = 0;
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
        ok += usize::from(f(&mut arbitrary::Unstructured::new(&bytes)).is_ok());
    }
    ok
}

/// What a smoke run of a checking target did with its inputs ([`smoke`]).
#[derive(Debug)]
pub struct Smoke {
    /// Inputs run.
    pub inputs: usize,
    /// Inputs the target's check judged (compared an outcome with the oracle's expectation,
    /// or checked the oracle's verdict), as its `judge` function reported.
    pub judged: usize,
    /// The findings, by signature and description.
    pub findings: Vec<String>,
}

impl Smoke {
    /// Panics unless at least `min_judged` inputs were judged and none gave a finding: a smoke
    /// test passes only when its target's check ran and found nothing. (A finding the fixed
    /// seeds reach is a bug to fix, or to keep as a regression case; not to print and pass.)
    pub fn assert_clean(&self, target: &str, min_judged: usize) {
        assert!(
            self.findings.is_empty(),
            "{target}: {} finding(s) on {} inputs:\n{}",
            self.findings.len(),
            self.inputs,
            self.findings.join("\n")
        );
        assert!(
            self.judged >= min_judged,
            "{target}: only {} of {} inputs were judged (at least {min_judged} expected)",
            self.judged,
            self.inputs
        );
        eprintln!(
            "{target}: {} of {} inputs judged, no finding",
            self.judged, self.inputs
        );
    }
}

/// Runs a target's `judge` function (`Ok(true)`: the input was judged) on `n` pseudo-random
/// inputs as [`test_n_times`] does, with findings collected instead of panicking
/// ([`finding::collecting`]), and counts what was judged.
pub fn smoke(
    n: usize,
    len: usize,
    seed: u64,
    mut judge: impl FnMut(&mut arbitrary::Unstructured<'_>) -> arbitrary::Result<bool>,
) -> Smoke {
    let mut judged = 0;
    let findings = finding::collecting(|| {
        test_n_times(n, len, seed, |u| {
            judged += usize::from(judge(u)?);
            Ok(())
        });
    });
    Smoke {
        inputs: n,
        judged,
        findings,
    }
}
