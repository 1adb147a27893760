//! Cases with an MMA of each form whose D `cuda-emu` computes (`cuda::emu::mma_macs` > 0;
//! reference §3.7, the kinds of §9.7.16.10.1 and the layouts of §9.7.16.10.5), found among the
//! generator's valid programs, for the tests that assemble their lowering and compare the
//! emulated D with the oracle's on a GPU. A case qualifies only where every MMA of the program
//! is computed and the oracle states some observed words that MMA results decide (words it
//! states with the ISA's figure layouts and leaves unspecified without them,
//! `diff::not_emulated::leave_out`): the known answers come from the oracle.

use tcgen05_drivers::cuda::emu::mma_macs;
use tcgen05_drivers::diff::not_emulated;
use tcgen05_ir::*;

/// An MMA form the emulation computes, by a test on the MMA.
pub struct Feature {
    /// The form, in words.
    pub name: &'static str,
    /// Whether an MMA has it.
    pub has: fn(&Mma) -> bool,
}

/// A type code of the instruction descriptor (reference §2.8 (a)): D at bits 4-5, A at 7-9,
/// B at 10-12.
fn code(m: &Mma, at: u32) -> u32 {
    m.idesc >> at & if at == 4 { 3 } else { 7 }
}

fn f8_has(m: &Mma, c: u32) -> bool {
    m.form.kind == MmaKind::F8f6f4 && (code(m, 7) == c || code(m, 10) == c)
}

fn i8_has(m: &Mma, c: u32) -> bool {
    m.form.kind == MmaKind::I8 && (code(m, 7) == c || code(m, 10) == c)
}

/// Every form the tests must cover: each element type, an f16 D, `cta_group::2` M = 256, A in
/// TMEM with and without `.ashift`, disable-output-lane, enable-input-d with a scale.
pub const FEATURES: &[Feature] = &[
    Feature {
        name: "f16 A/B, f32 D",
        has: |m| m.form.kind == MmaKind::F16 && code(m, 7) == 0 && code(m, 4) == 1,
    },
    Feature {
        name: "bf16 A/B",
        has: |m| m.form.kind == MmaKind::F16 && code(m, 7) == 1,
    },
    Feature {
        name: "f16 D",
        has: |m| matches!(m.form.kind, MmaKind::F16 | MmaKind::F8f6f4) && code(m, 4) == 0,
    },
    Feature {
        name: "tf32",
        has: |m| m.form.kind == MmaKind::Tf32,
    },
    Feature {
        name: "i8 signed",
        has: |m| i8_has(m, 1),
    },
    Feature {
        name: "i8 unsigned",
        has: |m| i8_has(m, 0),
    },
    Feature {
        name: "f8f6f4 e4m3",
        has: |m| f8_has(m, 0),
    },
    Feature {
        name: "f8f6f4 e5m2",
        has: |m| f8_has(m, 1),
    },
    Feature {
        name: "cta_group::2 M = 256",
        has: |m| m.form.cta_group == CtaGroup::Two,
    },
    Feature {
        name: "A in TMEM",
        has: |m| matches!(m.a, MmaA::Tmem(_)) && !m.form.ashift,
    },
    Feature {
        name: "A in TMEM with .ashift",
        has: |m| m.form.ashift,
    },
    Feature {
        name: "disable-output-lane",
        has: |m| m.disable_output_lane.is_some(),
    },
    Feature {
        name: "enable-input-d with scale",
        has: |m| m.enable_input_d && m.scale_input_d.is_some_and(|s| s > 0),
    },
];

/// Seeds of valid programs searched for each feature.
pub const SEEDS: u64 = 4000;

/// Observed words of `p` that MMA results decide and the oracle states (default edition).
pub fn mma_words(p: &Program) -> u64 {
    let e = tcgen05_oracle::expect(p);
    if !e.violations.is_empty() {
        return 0;
    }
    let opaque = tcgen05_oracle::expect_with(p, &not_emulated::opaque_options(&e));
    not_emulated::leave_out(&e, &opaque).1
}

/// The first valid case (seed below [`SEEDS`]) with an MMA of `f`, every MMA computed by the
/// emulation, and MMA-decided words the oracle states; with its seed and those words.
pub fn find(f: &Feature) -> Option<(u64, Case, u64)> {
    let cfg = tcgen05_generators::Config::default();
    (0..SEEDS).find_map(|seed| {
        let c = tcgen05_generators::valid_case(&cfg, seed);
        let p = &c.program;
        let mmas: Vec<&Mma> = p
            .ops()
            .into_iter()
            .filter_map(|op| match op {
                Op::Mma(m) => Some(&**m),
                _ => None,
            })
            .collect();
        let all_computed = mmas.iter().all(|m| mma_macs(m, &p.smem.regions) > 0);
        if !all_computed || !mmas.iter().any(|m| (f.has)(m)) {
            return None;
        }
        let words = mma_words(p);
        (words > 0).then_some((seed, c, words))
    })
}
