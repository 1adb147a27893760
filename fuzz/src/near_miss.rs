//! `near_miss`: a near-miss program from the fuzzer's bytes (a mutator, a base program built to
//! suit it, the mutation), checked two ways:
//!
//! - the oracle flags the rule the mutator broke and, for static rules, no other static rule
//!   (docs/architecture.md rule 2; `tests/generators_near_miss.rs` checks the same on fixed seeds);
//! - the simulator runs it without a discrepancy (the judge, `tcgen05_engine::judge`, compares
//!   its outcome with the expectation and signs a discrepancy): an ill-formed or undefined
//!   program is skipped, and a blocking near miss that the oracle says must deadlock must hang.

use arbitrary::Unstructured;
use tcgen05_drivers::diff::Verdict;
use tcgen05_drivers::sim::{SimConfig, simulate};
use tcgen05_engine::judge;
use tcgen05_generators::mutate::{EditionHint, MUTATORS, Mutator};
use tcgen05_generators::{BytesChoices, Config, builder};
use tcgen05_ir::observe::Layout;
use tcgen05_ir::{Case, Intent, Provenance, RuleId};
use tcgen05_oracle::catalogue::{self, Kind};
use tcgen05_oracle::{Edition, Expected, LaneExpect, ObsExpect, Options, RunVerdict};

/// The near miss the bytes describe, with its mutator; `None` when the mutator found nothing
/// to break in the base program.
pub fn case_of(u: &mut Unstructured<'_>) -> arbitrary::Result<Option<(Case, &'static Mutator)>> {
    let m: &'static Mutator = u.choose(MUTATORS)?;
    let mut cfg = Config::default();
    (m.patch)(&mut cfg);
    let mut c = BytesChoices::new(u);
    let mut p = builder::build(&cfg, &mut c);
    if !(m.apply)(&mut p, &mut c) {
        return Ok(None);
    }
    let case = Case {
        program: p,
        intent: Intent::NearMiss { breaks: m.rule },
        provenance: Provenance {
            seed: None,
            origin: format!("cargo fuzz near_miss (mutator {})", m.name),
            family: None,
        },
    };
    Ok(Some((case, m)))
}

/// The edition a mutator's rule is judged in.
pub fn edition(m: &Mutator) -> Edition {
    match m.edition {
        EditionHint::Ptx93 => Edition::Ptx93,
        EditionHint::Any | EditionHint::Seeds => Edition::Seeds,
    }
}

/// Checks one near miss; a finding panics (after saving the case). Returns whether the near
/// miss was judged: the oracle named the broken rule (and no other static rule) and the
/// simulator's outcome was compared with the expectation (a skip of an ill-formed or undefined
/// program counts: it is the comparison's verdict on such a program).
pub fn check(case: &Case, m: &Mutator) -> bool {
    let report = |key: String, what: String| crate::finding::report("near_miss", case, &key, &what);
    let row = catalogue::row(m.rule);
    let v = tcgen05_oracle::check(&case.program);
    if let Some(other) = v.iter().find(|x| x.rule != m.rule) {
        report(
            format!("mutator-also-broke / {} / {}", m.name, other.rule.as_str()),
            format!(
                "mutator {} ({}) also broke {}",
                m.name,
                m.rule.as_str(),
                other
            ),
        );
        return false;
    }
    // A row that is static only must be flagged by the check; a row that is also dynamic
    // (e.g. MMA-K96-TARGET: K sits in the idesc register) may be judged at run time instead.
    let static_only = row.kinds.iter().all(|k| *k == Kind::Static);
    if static_only && v.is_empty() {
        report(
            format!("mutator-not-flagged / {}", m.name),
            format!(
                "mutator {} broke static rule {} but the oracle's check does not flag it",
                m.name,
                m.rule.as_str()
            ),
        );
        return false;
    }
    let e = tcgen05_oracle::expect_with(&case.program, &Options::edition(edition(m)));
    if let RunVerdict::NotJudged(_) = e.run.verdict {
        // Past the oracle's work bound: nothing to check.
        return false;
    }
    if row.kind() != Kind::Static || (!static_only && v.is_empty()) {
        let flagged = named_rules(&e);
        if !flagged.contains(&m.rule) {
            report(
                format!("mutator-not-flagged / {}", m.name),
                format!(
                    "mutator {} broke run rule {} but the oracle's expectation does not name it",
                    m.name,
                    m.rule.as_str()
                ),
            );
            return false;
        }
    }
    // The simulator in the wording of the edition the mutant is judged in.
    let name = format!("sim~{}", edition(m).as_str());
    let sim = SimConfig::parse(&name)
        .and_then(Result::ok)
        .expect("`sim~seeds` and `sim~ptx93` are simulator names");
    let outcome = simulate(&case.program, sim, 0);
    let layout = Layout::of(&case.program);
    let ruling = judge::rule(
        &case.program,
        &layout,
        &e,
        &outcome,
        "sim",
        judge::wait_bound_of(&name),
    );
    if let (Verdict::Discrepancy(d), Some(sig)) = (&ruling.verdict, &ruling.signature) {
        report(
            sig.to_string(),
            format!(
                "oracle and simulator disagree on a near miss of {}: {}",
                m.rule.as_str(),
                d.detail
            ),
        );
        return false;
    }
    true
}

/// The rules the oracle's run expectation names: violations, the rules of an undefined or
/// blocking verdict, leak rules, and the rules of every observation record that is not
/// predicted exactly (a race shows in the values it makes unspecified).
pub fn named_rules(e: &Expected) -> Vec<RuleId> {
    let mut flagged: Vec<RuleId> = e.violations.iter().map(|x| x.rule).collect();
    match &e.run.verdict {
        RunVerdict::Undefined(r) => flagged.extend(r.iter().copied()),
        RunVerdict::MayBlock { .. } | RunVerdict::MustDeadlock { .. } => {
            flagged.extend(e.run.rules.iter().copied())
        }
        RunVerdict::Completes | RunVerdict::NotJudged(_) => {}
    }
    flagged.extend(e.leak.rules.iter().copied());
    for o in &e.obs {
        for (_, lane) in o.iter() {
            match lane {
                LaneExpect::Is(ObsExpect::Unspecified(r)) => {
                    flagged.extend(r.iter().copied().chain(o.rules.iter().copied()))
                }
                LaneExpect::Is(ObsExpect::PerWord(_) | ObsExpect::OneOf(_)) => {
                    flagged.extend(o.rules.iter().copied())
                }
                LaneExpect::Exact(_)
                | LaneExpect::Is(ObsExpect::Exact(_) | ObsExpect::Check(_) | ObsExpect::Absent) => {
                }
            }
        }
    }
    flagged
}

/// One iteration; `Ok(true)` when the bytes made a near miss and it was judged ([`check`]).
pub fn judge(u: &mut Unstructured<'_>) -> arbitrary::Result<bool> {
    Ok(match case_of(u)? {
        Some((case, m)) => check(&case, m),
        None => false,
    })
}

/// One iteration (the fuzz target).
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    judge(u).map(drop)
}

#[cfg(test)]
mod tests {
    use tcgen05_generators::mutate::{by_name, near_miss};

    /// `ld-before-wait-st` (MCM-ST-BEFORE-USE) on 300 seeded bases: the oracle names the rule
    /// on every one. Without the mutator's fix it did not on 16 of them: the moved st rewrote
    /// cells with the data an earlier st of the same seed had put there, or sat in a loop whose
    /// last iteration (the one recorded) rewrote the previous iteration's data; an overwrite
    /// with equal data is no visible race (reference §6 MCM-ST-BEFORE-USE: "race →
    /// unspecified" values).
    #[test]
    fn ld_before_wait_st_is_named_on_every_seeded_base() {
        let m = by_name("ld-before-wait-st").expect("mutator exists");
        let mut missed = Vec::new();
        for seed in 0..300u64 {
            let Some(p) = near_miss(m, seed * 7919) else {
                continue;
            };
            let e = tcgen05_oracle::expect_with(
                &p,
                &tcgen05_oracle::Options::edition(super::edition(m)),
            );
            if !super::named_rules(&e).contains(&m.rule) {
                missed.push(seed * 7919);
            }
        }
        assert!(
            missed.is_empty(),
            "MCM-ST-BEFORE-USE not named for seeds {missed:?}"
        );
    }

    /// The same on bases built from fuzzer-like bytes (short inputs run out of bytes, which is
    /// where equal st seeds came from): 2,000 inputs of 16 to 527 bytes.
    #[test]
    fn ld_before_wait_st_is_named_on_byte_driven_bases() {
        use tcgen05_generators::{BytesChoices, Config, builder};
        let m = by_name("ld-before-wait-st").expect("mutator exists");
        let mut s = 0x5EED_u64;
        let (mut applied, mut missed) = (0, 0);
        for _ in 0..2000 {
            let mut next = || {
                // 64-bit LCG (Knuth's MMIX constants), high byte.
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (s >> 56) as u8
            };
            let len = 16 + usize::from(next()) * 2;
            let bytes: Vec<u8> = (0..len).map(|_| next()).collect();
            let mut u = arbitrary::Unstructured::new(&bytes);
            let mut cfg = Config::default();
            (m.patch)(&mut cfg);
            let mut c = BytesChoices::new(&mut u);
            let mut p = builder::build(&cfg, &mut c);
            if !(m.apply)(&mut p, &mut c) {
                continue;
            }
            applied += 1;
            let e = tcgen05_oracle::expect_with(
                &p,
                &tcgen05_oracle::Options::edition(super::edition(m)),
            );
            if !super::named_rules(&e).contains(&m.rule) {
                missed += 1;
            }
        }
        assert!(applied > 500, "the mutator applied to {applied} bases only");
        assert_eq!(
            missed, 0,
            "MCM-ST-BEFORE-USE not named on {missed} of {applied} bases"
        );
    }

    /// 300 inputs: no finding, and at least 200 make a near miss that is judged (255 do; a
    /// mutator finds nothing to break in some base programs).
    #[test]
    fn smoke() {
        let s = crate::smoke(300, 1024, 9, super::judge);
        s.assert_clean("near_miss", 200);
    }
}
