//! Cross-tests of `tcgen05-generators` against `tcgen05-oracle` (docs/architecture.md rule 2): the
//! generator's own legality tracking is checked by the independent oracle.

use tcgen05_generators::{Config, case_seed, valid_program};
use tcgen05_oracle::{Edition, Options, RunVerdict, check, expect_with};

/// Number of seeded Valid cases the issue asks for.
const VALID_CASES: u64 = 10_000;

fn configs() -> [(&'static str, Config); 4] {
    [
        ("default", Config::default()),
        ("sm100a", Config::sm100a()),
        // Every MMA that can be sparse is, with its metadata copied by `tcgen05.cp` from a
        // shared-memory region of valid metadata (FillElem::SpMeta, reference §3.7 "Sparse A").
        (
            "sparse",
            Config {
                sparse_pct: 100,
                ..Config::default()
            },
        ),
        // cta_group::2 in clusters of four CTAs: two pairs, each issued by its even CTA with
        // its own ctaMask (reference §2.5, §3.9).
        (
            "two-pairs",
            Config {
                cluster_sizes: vec![4],
                cta_groups: vec![tcgen05_ir::CtaGroup::Two],
                ..Config::default()
            },
        ),
    ]
}

#[test]
fn valid_cases_pass_the_static_check() {
    for (name, cfg) in configs() {
        for i in 0..VALID_CASES {
            let seed = case_seed(0x7C05, i);
            let p = valid_program(&cfg, seed);
            let v = check(&p);
            assert!(
                v.is_empty(),
                "config {name}, seed {seed:#x}: {v:#?}\n{}",
                tcgen05_ir::ptx::emit(&p)
            );
        }
    }
}

/// Valid by construction means complete on every schedule, in both editions: no undefined
/// behaviour, no deadlock, and no place that may block (e.g. `::2` deallocs that may wait for
/// each other across a cluster barrier, §9.7.16.7.1 "tcgen05.dealloc may block").
#[test]
fn valid_cases_complete_in_both_editions() {
    for (name, cfg) in configs() {
        // Cases the oracle declines to judge (its work bounds, RunVerdict::NotJudged): allowed,
        // but few, or this test would check little.
        let mut not_judged = 0u64;
        for i in 0..VALID_CASES {
            let seed = case_seed(0xE5EC, i);
            let p = valid_program(&cfg, seed);
            for ed in Edition::ALL {
                let e = expect_with(&p, &Options::edition(*ed));
                match &e.run.verdict {
                    RunVerdict::Undefined(r) => {
                        panic!(
                            "config {name}, seed {seed:#x}, {ed}: undefined {r:?}\n{:#?}",
                            e.notes
                        )
                    }
                    RunVerdict::MustDeadlock { where_ } => {
                        panic!("config {name}, seed {seed:#x}, {ed}: must deadlock at {where_:?}")
                    }
                    RunVerdict::MayBlock { where_ } => {
                        panic!(
                            "config {name}, seed {seed:#x}, {ed}: may block at {where_:?}\n{}",
                            tcgen05_ir::ptx::emit(&p)
                        )
                    }
                    RunVerdict::NotJudged(_) => not_judged += 1,
                    RunVerdict::Completes => {}
                }
            }
        }
        eprintln!("config {name}: {not_judged} (case, edition) runs not judged by the oracle");
        assert!(
            not_judged * 100 <= VALID_CASES * Edition::ALL.len() as u64,
            "config {name}: {not_judged} runs not judged (over 1%)"
        );
    }
}

#[test]
fn litmus_members_are_statically_well_formed() {
    // Every family member, canonical or weakened, keeps every static rule: a weakening removes
    // a synchronizing step, which only run-time rules see.
    for m in tcgen05_generators::litmus::all_members() {
        let v = check(&m.program);
        assert!(v.is_empty(), "{}: {v:#?}", m.name);
    }
}

#[test]
fn canonical_litmus_members_complete_in_both_editions() {
    for m in tcgen05_generators::litmus::all_members() {
        if m.intent != tcgen05_ir::Intent::Valid {
            continue;
        }
        for ed in Edition::ALL {
            let e = expect_with(&m.program, &Options::edition(*ed));
            assert!(
                matches!(e.run.verdict, RunVerdict::Completes),
                "{} ({ed}): {:?}\n{:?}",
                m.name,
                e.run,
                e.notes
            );
        }
    }
}

#[test]
fn fixup_repairs_arbitrary_programs_into_valid_ones() {
    use tcgen05_generators::arbitrary::{Arbitrary, Unstructured};
    // Arbitrary programs (bytes from a fixed LCG, no RNG dependency) are almost never valid;
    // after fixup the oracle must find nothing static, and the run must complete in both
    // editions (or be past the oracle's work bounds).
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut invalid_before = 0;
    for case in 0..500 {
        let bytes: Vec<u8> = (0..2048)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 56) as u8
            })
            .collect();
        let mut u = Unstructured::new(&bytes);
        let Ok(raw) = tcgen05_ir::Program::arbitrary(&mut u) else {
            continue;
        };
        // Only the static check on the raw input: its loops may be huge (the run model would
        // unroll them).
        if !check(&raw).is_empty() {
            invalid_before += 1;
        }
        let p = tcgen05_generators::fixup::fixup(&raw);
        let v = check(&p);
        assert!(
            v.is_empty(),
            "case {case}: {v:#?}\n{}",
            tcgen05_ir::ptx::emit(&p)
        );
        for ed in Edition::ALL {
            let e = expect_with(&p, &Options::edition(*ed));
            assert!(
                matches!(
                    e.run.verdict,
                    RunVerdict::Completes | RunVerdict::NotJudged(_)
                ),
                "case {case}, {ed}: {:?}",
                e.run
            );
        }
    }
    assert!(
        invalid_before > 0,
        "some inputs should be statically invalid"
    );
}
