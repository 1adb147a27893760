//! Every near-miss mutator of `tcgen05-generators` against `tcgen05-oracle`: the oracle must
//! flag exactly the rule the mutator names (docs/architecture.md rule 2), in the edition that
//! states the rule.

use tcgen05_generators::mutate::{ATTEMPTS, EditionHint, MUTATORS, Mutator, near_miss};
use tcgen05_generators::{Config, SeedChoices, builder};
use tcgen05_ir::RuleId;
use tcgen05_oracle::catalogue::{self, Kind};
use tcgen05_oracle::{Edition, Options, RunVerdict, check, expect_with};

/// Seeds per mutator.
const SEEDS: u64 = 40;

#[test]
fn static_near_misses_are_flagged_with_exactly_their_rule() {
    let mut failures = Vec::new();
    for m in MUTATORS {
        let row = catalogue::row(m.rule);
        for seed in 0..SEEDS {
            let p =
                near_miss(m, seed * 1000).unwrap_or_else(|| panic!("{} does not apply", m.name));
            let v = check(&p);
            let others: Vec<RuleId> = v.iter().map(|x| x.rule).filter(|r| *r != m.rule).collect();
            if !others.is_empty() {
                failures.push(format!(
                    "{} (seed {}): also {:?}",
                    m.name,
                    seed * 1000,
                    others
                ));
                break;
            }
            // A rule that is also dynamic (an operand the PTX holds in a register, such as
            // the idesc of MMA-K96-TARGET) may be judged by the run instead: the run test
            // below covers it.
            if row.kinds == [Kind::Static] && v.is_empty() {
                failures.push(format!(
                    "{} (seed {}): {} not flagged by check",
                    m.name,
                    seed * 1000,
                    m.rule
                ));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Race rules for which the oracle (at the time of writing) marks the raced values unspecified
/// but cites a more general rule. From the spec, the mutator's rule is the specific one:
/// reported to the oracle's author, and checked here by the values instead. Empty since the
/// oracle cites WAIT-SCOPE and MCM-XTHREAD-NONPIPE itself.
const CITES_ANOTHER_RULE: &[(RuleId, &str)] = &[];

/// Race rules the oracle (at the time of writing) does not see at all: no verdict, record or
/// rule changes between the base and the mutant. Reported to the oracle's author; the test
/// prints them instead of failing, and fails again once a rule leaves this list. Empty since
/// the oracle reads an MMA's A operand in TMEM.
const ORACLE_BLIND: &[(RuleId, &str)] = &[];

/// The base program `near_miss(m, seed)` mutated, rebuilt the way `near_miss` builds it.
fn base_of(m: &Mutator, seed: u64) -> tcgen05_ir::Program {
    let mut cfg = Config::default();
    (m.patch)(&mut cfg);
    for k in 0..ATTEMPTS {
        let mut c = SeedChoices::new(seed.wrapping_add(k));
        let base = builder::build(&cfg, &mut c);
        let mut p = base.clone();
        if (m.apply)(&mut p, &mut c) {
            return base;
        }
    }
    panic!("{} does not apply", m.name)
}

fn editions(h: EditionHint) -> &'static [Edition] {
    match h {
        EditionHint::Any => Edition::ALL,
        EditionHint::Seeds => &[Edition::Seeds],
        EditionHint::Ptx93 => &[Edition::Ptx93],
    }
}

#[test]
fn run_near_misses_are_flagged_with_exactly_their_rule() {
    let mut failures = Vec::new();
    for m in MUTATORS {
        // Purely static rules are the static test's; a rule that is static and dynamic is
        // judged here too (MMA-K96-TARGET reads the idesc).
        if catalogue::row(m.rule).kinds == [Kind::Static] {
            continue;
        }
        for seed in 0..SEEDS / 4 {
            let p = near_miss(m, seed * 1000).expect("applies");
            for ed in editions(m.edition) {
                let e = expect_with(&p, &Options::edition(*ed));
                let mut flagged: Vec<RuleId> = e.violations.iter().map(|v| v.rule).collect();
                match &e.run.verdict {
                    RunVerdict::Undefined(r) => flagged.extend(r.iter().copied()),
                    RunVerdict::MayBlock { .. } | RunVerdict::MustDeadlock { .. } => {
                        flagged.extend(e.run.rules.iter().copied())
                    }
                    RunVerdict::Completes => {}
                    RunVerdict::NotJudged(why) => {
                        panic!("{}: oracle does not judge: {why}", m.name)
                    }
                }
                flagged.extend(e.leak.rules.iter().copied());
                // A race shows in the values: records that are not exactly predicted carry
                // the rules that made them so.
                for o in e.per_lane() {
                    use tcgen05_oracle::ObsExpect as O;
                    match &o.expect {
                        O::Unspecified(r) => {
                            flagged.extend(r.iter().copied().chain(o.rules.iter().copied()))
                        }
                        O::PerWord(_) | O::OneOf(_) => flagged.extend(o.rules.iter().copied()),
                        O::Exact(_) | O::Check(_) | O::Absent => {}
                    }
                }
                if flagged.contains(&m.rule) {
                    if ORACLE_BLIND.iter().any(|(r, _)| *r == m.rule) {
                        failures.push(format!(
                            "{}: the oracle flags it now: drop it from ORACLE_BLIND",
                            m.name
                        ));
                    }
                    continue;
                }
                if let Some((_, why)) = CITES_ANOTHER_RULE.iter().find(|(r, _)| *r == m.rule) {
                    // The oracle sees the race but names another rule (see the list): demand
                    // at least that some value the base program predicts exactly is no longer
                    // exact in the mutant ...
                    let base = base_of(m, seed * 1000);
                    let eb = expect_with(&base, &Options::edition(*ed));
                    // ... or a record gains a rule it does not have in the base (the race).
                    let lost = e.per_lane().iter().any(|o| match eb.lookup(&o.key) {
                        Some((bi, b)) => {
                            (b.exact().is_some()
                                && !matches!(o.expect, tcgen05_oracle::ObsExpect::Exact(_)))
                                || o.rules.iter().any(|r| !bi.rules.contains(r))
                        }
                        None => false,
                    });
                    if lost {
                        eprintln!(
                            "{}: oracle cites {:?}, not {} ({why})",
                            m.name, flagged, m.rule
                        );
                        continue;
                    }
                }
                if let Some((_, why)) = ORACLE_BLIND.iter().find(|(r, _)| *r == m.rule) {
                    eprintln!("{}: KNOWN ORACLE GAP, not flagged ({why})", m.name);
                    continue;
                }
                failures.push(format!(
                    "{} (seed {}, {ed}): not flagged; got {:?}",
                    m.name,
                    seed * 1000,
                    e.run
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Mutators whose run verdict also names another rule, and why (from the spec, not from the
/// oracle's output): the test below fails if the extra rule disappears or another appears.
const ALSO_FLAGGED: &[(&str, RuleId, &str)] = &[
    (
        "peer-skips-dealloc",
        RuleId::AllocFreeBeforeExit,
        "reference §3.1: the CTA that skips its ::2 dealloc keeps its allocation (the oracle reports MayLeak although the kernel, deadlocked, never exits)",
    ),
    (
        "alloc-beyond-capacity",
        RuleId::AllocFreeBeforeExit,
        "reference §3.1: the blocked alloc never returns, so its warp never frees the first allocation (the oracle reports MayLeak although the kernel, deadlocked, never exits)",
    ),
];

#[test]
fn run_near_misses_flag_no_other_rule() {
    // "Breaks that rule and only that rule", for the run: the verdict's rules, the
    // static violations and a possible leak name nothing but the mutator's rule (race values
    // are left to the test above: a race makes values unspecified under several rules).
    let mut failures = Vec::new();
    for m in MUTATORS {
        if catalogue::row(m.rule).kinds == [Kind::Static] {
            continue;
        }
        let allowed: Vec<RuleId> = ALSO_FLAGGED
            .iter()
            .filter(|(n, _, _)| *n == m.name)
            .map(|(_, r, _)| *r)
            .collect();
        let mut seen_allowed = allowed.is_empty();
        for seed in 0..SEEDS / 4 {
            let p = near_miss(m, seed * 1000).expect("applies");
            for ed in editions(m.edition) {
                let e = expect_with(&p, &Options::edition(*ed));
                let mut named: Vec<RuleId> = e.violations.iter().map(|v| v.rule).collect();
                match &e.run.verdict {
                    RunVerdict::Undefined(r) => named.extend(r.iter().copied()),
                    RunVerdict::Completes => {}
                    _ => named.extend(e.run.rules.iter().copied()),
                }
                if e.leak.status == tcgen05_oracle::LeakStatus::MayLeak {
                    named.extend(e.leak.rules.iter().copied());
                }
                named.retain(|r| *r != m.rule);
                seen_allowed |= named.iter().any(|r| allowed.contains(r));
                named.retain(|r| !allowed.contains(r));
                if !named.is_empty() {
                    failures.push(format!(
                        "{} (seed {}, {ed}): also {named:?}",
                        m.name,
                        seed * 1000
                    ));
                }
            }
        }
        if !seen_allowed {
            failures.push(format!(
                "{}: never flags {allowed:?} now: drop it from ALSO_FLAGGED",
                m.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Rules of kind static, dynamic-UB or blocking without a mutator, and why. A new mutator
/// must remove its rule from this list; a rule that loses its mutator fails the test.
const NO_MUTATOR: &[(RuleId, &str)] = &[
    (
        RuleId::GenCtagroupValid,
        "a missing or unknown .cta_group cannot be written in the program model (Form holds a CtaGroup); check of PTX covers it (corpus/check-rejected)",
    ),
    (
        RuleId::GenSyntax,
        "ill-formed syntax cannot be written in the program model; check of PTX covers it (corpus/check-rejected)",
    ),
    (
        RuleId::MmaScaleDTarget,
        "a new mutator changes MUTATORS.len() and with it the mutator every stored fuzz seed selects (fuzz/tests/seeds.rs, ~380 seed files to regenerate); covered by corpus/check-rejected/mma-scale-d-sm110a.ptx and -sm110f.ptx and the static check's rule (oracle/src/instr.rs)",
    ),
];

#[test]
fn every_static_ub_and_blocking_rule_has_a_mutator_or_a_reason() {
    let mut missing = Vec::new();
    for row in catalogue::ROWS {
        let kinds = [Kind::Static, Kind::DynamicUb, Kind::Blocking];
        if !row.kinds.iter().any(|k| kinds.contains(k)) {
            continue;
        }
        let has = MUTATORS.iter().any(|m| m.rule == row.id);
        let excused = NO_MUTATOR.iter().any(|(r, _)| *r == row.id);
        assert!(
            !(has && excused),
            "{} has a mutator now: drop it from NO_MUTATOR",
            row.id
        );
        if !has && !excused {
            missing.push(row.id);
        }
    }
    assert!(missing.is_empty(), "rules without a mutator: {missing:?}");
}

/// ALLOC-FREE-BEFORE-EXIT (reference §6, §9.7.16.1.2, §9.7.16.7.1): the leak-on-one-path
/// mutant guards a dealloc by `%cluster_ctarank == 0`, so whether it leaks depends on the
/// cluster's ranks. `check` on its PTX and the oracle's run must agree on both the mutant (two
/// CTAs: rank 1 leaks) and the mutant in one CTA (as the minimizer shrinks it: rank 0 only,
/// nothing leaks); they can only if the entry declares its cluster shape.
#[test]
fn leak_on_one_path_is_judged_alike_by_check_and_the_run() {
    let m = tcgen05_generators::mutate::by_name("leak-on-one-path").expect("exists");
    for seed in 0..12u64 {
        let p = near_miss(m, seed * 1000).expect("applies");
        let mut one = p.clone();
        one.launch.cluster_size = 1;
        for (q, leaks) in [(&p, true), (&one, false)] {
            let ptx = tcgen05_ir::ptx::emit(q);
            let reports = tcgen05_oracle::kernel::check_source(&ptx, "t.ptx", &Default::default())
                .expect("emitted PTX parses");
            let by_check = reports
                .iter()
                .flat_map(|r| &r.findings)
                .any(|f| f.rule == RuleId::AllocFreeBeforeExit);
            let by_run =
                tcgen05_oracle::expect(q).leak.status == tcgen05_oracle::LeakStatus::MayLeak;
            assert_eq!(
                (by_check, by_run),
                (leaks, leaks),
                "seed {}, {} CTA(s) per cluster: (check, run) leak",
                seed * 1000,
                q.launch.cluster_size
            );
        }
    }
}
