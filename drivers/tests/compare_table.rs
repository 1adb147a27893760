//! Every row of the decision table of `tcgen05_drivers::diff` (its module documentation), for
//! every outcome kind, and the observation comparison at every word of every lane's record.
//!
//! The expected verdicts are written out here from the table (three outcomes;
//! only one side failing is a discrepancy), not taken from `compare`: [`want`] is the table,
//! and each outcome kind meets each kind of expectation. The observation buffers are built from
//! the oracle's expectation of the ISA's own example program (reference §3.1), then changed one
//! word at a time.

use tcgen05_drivers::diff::{self, DiscrepancyKind as K, SkipReason, Verdict};
use tcgen05_drivers::outcome::{HangSite, Outcome, TrapKind};
use tcgen05_ir::observe::Layout;
use tcgen05_ir::samples::single_warp_roundtrip;
use tcgen05_ir::{Program, RuleId};
use tcgen05_oracle::catalogue::{self, Kind, Provenance};
use tcgen05_oracle::{
    AddrCheck, Expected, LeakStatus, ObsExpect, ObsItem, RunVerdict, SiteExpect, Violation,
    WordExpect,
};

/// The program every comparison is about: alloc, st, wait, ld, wait, dealloc, relinquish
/// (reference §3.1), one warp, one CTA.
fn program() -> Program {
    single_warp_roundtrip()
}

/// The observation buffer the oracle's expectation allows exactly: every expected lane of
/// every site records the words its expectation names (an address check's record: column 0).
fn allowed_words(p: &Program, e: &Expected) -> Vec<u32> {
    let layout = Layout::of(p);
    let mut words = vec![0u32; layout.total_words()];
    for item in &e.obs {
        let (base, n) = record_block(&layout, item);
        for (lane, x) in item.iter() {
            let l = usize::from(lane);
            let data: Vec<u32> = match x.to_owned() {
                ObsExpect::Exact(v) => v,
                ObsExpect::Check(_) => vec![0; n],
                ObsExpect::Absent => continue,
                other => panic!("the sample's expectation is exact: {other:?}"),
            };
            words[base + l] = 1;
            words[base + 32 + l * n..base + 32 + (l + 1) * n].copy_from_slice(&data);
        }
    }
    words
}

/// Where a site's records are: the index of its 32 valid words, and the data words per lane
/// (the layout of `tcgen05_ir::observe`: valid words, then each lane's data words).
fn record_block(layout: &Layout, item: &ObsItem) -> (usize, usize) {
    let tcgen05_oracle::SiteRef::Warp(i) = item.key.site else {
        panic!("the sample has no functions")
    };
    let site = layout.warp_sites[usize::from(item.key.warp)][i as usize];
    (
        layout.warp_block(item.key.cta, usize::from(item.key.warp)) + site.offset as usize,
        site.words as usize,
    )
}

/// The oracle's expectation of the sample: well-formed, completes, no leak, every record exact.
fn real() -> Expected {
    let e = tcgen05_oracle::expect(&program());
    assert!(e.violations.is_empty() && e.run.verdict == RunVerdict::Completes);
    assert_eq!(e.leak.status, LeakStatus::NoLeak);
    e
}

/// A static row (reference §6) chosen by `pick`, from the catalogue.
fn static_rule(pick: impl Fn(&catalogue::Row) -> bool) -> RuleId {
    catalogue::ROWS
        .iter()
        .find(|r| r.kinds.contains(&Kind::Static) && pick(r))
        .map(|r| r.id)
        .expect("the catalogue has such a static row")
}

/// A rule whose stated consequence is rejection (and is not a derived row).
fn rejecting_rule() -> RuleId {
    static_rule(|r| r.provenance != Provenance::Derived && r.consequence.contains("reject"))
}

/// A static rule the seeds or the ISA state without a rejection: its consequence does not say
/// "reject".
fn unstated_rule() -> RuleId {
    static_rule(|r| r.provenance != Provenance::Derived && !r.consequence.contains("reject"))
}

/// A static rule of a derived (D) row: not stated in so many words, so not a rejection the
/// spec requires.
fn derived_rule() -> RuleId {
    static_rule(|r| r.provenance == Provenance::Derived)
}

fn violation(rule: RuleId) -> Violation {
    Violation {
        rule,
        section: catalogue::row(rule).section.to_string(),
        location: None,
        message: "planted by the test".into(),
    }
}

/// The kinds of expectation the table distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exp {
    /// Well-formed, completes, no leak.
    Completes,
    /// Well-formed, may block.
    MayBlock,
    /// Well-formed, must deadlock.
    MustDeadlock,
    /// Well-formed, undefined at run time.
    Undefined,
    /// Well-formed, past the oracle's bounds.
    NotJudged,
    /// Well-formed, completes, may leak.
    MayLeak,
    /// A static violation whose consequence is rejection.
    IllFormedReject,
    /// A static violation with an unstated consequence.
    IllFormedUnstated,
    /// A static violation of a derived row.
    IllFormedDerived,
}

const EXPS: [Exp; 9] = [
    Exp::Completes,
    Exp::MayBlock,
    Exp::MustDeadlock,
    Exp::Undefined,
    Exp::NotJudged,
    Exp::MayLeak,
    Exp::IllFormedReject,
    Exp::IllFormedUnstated,
    Exp::IllFormedDerived,
];

fn expectation(x: Exp) -> Expected {
    let mut e = real();
    match x {
        Exp::Completes => {}
        Exp::MayBlock => e.run.verdict = RunVerdict::MayBlock { where_: vec![] },
        Exp::MustDeadlock => e.run.verdict = RunVerdict::MustDeadlock { where_: vec![] },
        Exp::Undefined => e.run.verdict = RunVerdict::Undefined(vec![RuleId::AllocFreeBeforeExit]),
        Exp::NotJudged => e.run.verdict = RunVerdict::NotJudged("past the work bound".into()),
        Exp::MayLeak => e.leak.status = LeakStatus::MayLeak,
        Exp::IllFormedReject => e.violations = vec![violation(rejecting_rule())],
        Exp::IllFormedUnstated => e.violations = vec![violation(unstated_rule())],
        Exp::IllFormedDerived => e.violations = vec![violation(derived_rule())],
    }
    e
}

fn ill_formed(x: Exp) -> bool {
    matches!(
        x,
        Exp::IllFormedReject | Exp::IllFormedUnstated | Exp::IllFormedDerived
    )
}

/// Every outcome kind, with the observation buffer the expectation allows where it has one.
fn outcomes(words: &[u32]) -> Vec<Outcome> {
    let hang = HangSite {
        cta: 0,
        warp: 0,
        lane: 0,
        checkpoint: 0,
        blocked_on: Some("tcgen05.wait::ld".into()),
    };
    vec![
        Outcome::Accepted,
        Outcome::AcceptedWithWarnings(vec![]),
        Outcome::Rejected(vec![]),
        Outcome::Crashed {
            detail: "signal 11".into(),
        },
        Outcome::TimedOut { limit_ms: 1000 },
        Outcome::Completed {
            words: words.to_vec(),
        },
        Outcome::Trapped {
            kind: TrapKind::IllegalInstruction,
            words: vec![],
        },
        Outcome::Trapped {
            kind: TrapKind::Guardrail("tmem access".into()),
            words: words.to_vec(),
        },
        Outcome::Hung {
            blocked: vec![hang],
            words: vec![],
        },
        Outcome::Leaked {
            columns: 32,
            words: words.to_vec(),
        },
        Outcome::Faulted {
            code: 700,
            detail: "illegal address".into(),
        },
        Outcome::NotRun("the target cannot run this form".into()),
    ]
}

/// What the table says, in the terms the test checks.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Want {
    Agree,
    Unspecified,
    IllFormedProgram,
    CannotRun,
    Incomparable,
    Disc(K),
}

/// The decision table (module documentation of `diff`), written out: `o` is an outcome
/// whose observation buffer, where it has one, is the one the expectation allows.
fn want(o: &Outcome, x: Exp) -> Want {
    use Want::*;
    match o {
        // Compile outcomes.
        Outcome::Accepted | Outcome::AcceptedWithWarnings(_) => match x {
            Exp::IllFormedReject => Disc(K::IllFormedAccepted),
            Exp::IllFormedUnstated | Exp::IllFormedDerived => Unspecified,
            _ => Agree,
        },
        Outcome::Rejected(_) if ill_formed(x) => Agree,
        Outcome::Rejected(_) => Disc(K::WellFormedRejected),
        Outcome::Crashed { .. } => Disc(K::TargetCrash),
        // A time-out is a discrepancy only where the program must complete.
        Outcome::TimedOut { .. } if x == Exp::Completes || x == Exp::MayLeak => {
            Disc(K::TargetTimeout)
        }
        Outcome::TimedOut { .. } => Incomparable,
        Outcome::NotRun(_) => CannotRun,
        // Run outcomes: an ill-formed program's run is not judged.
        _ if ill_formed(x) => IllFormedProgram,
        _ if x == Exp::Undefined => Unspecified,
        _ if x == Exp::NotJudged => Incomparable,
        Outcome::Trapped { .. } | Outcome::Faulted { .. } => Disc(K::TrapOnDefined),
        Outcome::Hung { .. } => match x {
            Exp::Completes | Exp::MayLeak => Disc(K::HangWhereCompletionRequired),
            _ => Agree,
        },
        Outcome::Completed { .. } | Outcome::Leaked { .. } if x == Exp::MustDeadlock => {
            Disc(K::CompletionWhereDeadlockRequired)
        }
        Outcome::Leaked { .. } if x != Exp::MayLeak => Disc(K::LeakOnDefined),
        // Completed (or leaked where a leak is allowed): the observations, all allowed here.
        _ => Agree,
    }
}

fn got(v: &Verdict) -> Want {
    match v {
        Verdict::Agree => Want::Agree,
        Verdict::Skip(SkipReason::Unspecified(_)) => Want::Unspecified,
        Verdict::Skip(SkipReason::IllFormedProgram(_)) => Want::IllFormedProgram,
        Verdict::Skip(SkipReason::TargetCannotRun(_)) => Want::CannotRun,
        Verdict::Skip(SkipReason::Incomparable(_)) => Want::Incomparable,
        Verdict::Skip(SkipReason::WaitGaveUp) => panic!("no mbarrier wait in the sample"),
        Verdict::Discrepancy(d) => Want::Disc(d.kind),
    }
}

#[test]
fn every_outcome_kind_meets_every_kind_of_expectation_as_the_table_says() {
    let p = program();
    let words = allowed_words(&p, &real());
    let mut wrong = Vec::new();
    let mut cells = 0;
    for x in EXPS {
        let e = expectation(x);
        for o in outcomes(&words) {
            let v = diff::compare(&p, &e, &o);
            cells += 1;
            if got(&v) != want(&o, x) {
                wrong.push(format!(
                    "{} vs {x:?}: the table says {:?}, compare gave {v:?}",
                    o.name(),
                    want(&o, x)
                ));
            }
        }
    }
    assert_eq!(cells, EXPS.len() * 12);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_chosen_rules_are_what_their_rows_need() {
    // The three kinds of static violation are different rules, with the consequences the
    // table distinguishes (reference §6, Consequence and Src columns).
    let (r, u, d) = (rejecting_rule(), unstated_rule(), derived_rule());
    assert!(r != u && u != d && r != d);
    assert!(catalogue::row(r).consequence.contains("reject"));
    assert_ne!(catalogue::row(r).provenance, Provenance::Derived);
    assert!(!catalogue::row(u).consequence.contains("reject"));
    assert_eq!(catalogue::row(d).provenance, Provenance::Derived);
}

#[test]
fn an_accepted_ill_formed_program_names_the_rejecting_rules_only() {
    let p = program();
    let mut e = real();
    let (r, u) = (rejecting_rule(), unstated_rule());
    e.violations = vec![violation(u), violation(r)];
    match diff::compare(&p, &e, &Outcome::Accepted) {
        Verdict::Discrepancy(d) => {
            assert_eq!(d.kind, K::IllFormedAccepted);
            assert_eq!(
                d.rules,
                vec![r],
                "only the rule whose consequence is rejection"
            );
        }
        v => panic!("expected ill-formed-accepted, got {v:?}"),
    }
    // A rejection of the same program agrees, whatever the diagnostics say.
    assert_eq!(
        diff::compare(&p, &e, &Outcome::Rejected(vec![])),
        Verdict::Agree
    );
}

/// Flips one bit of `words[i]` and returns the verdict of a completed run with it.
fn verdict_with_flip(p: &Program, e: &Expected, words: &[u32], i: usize) -> Verdict {
    let mut w = words.to_vec();
    w[i] ^= 0x0000_0100;
    diff::compare(p, e, &Outcome::Completed { words: w })
}

#[test]
fn a_wrong_word_anywhere_in_any_lanes_record_is_a_discrepancy_naming_that_lane() {
    let p = program();
    let e = real();
    let layout = Layout::of(&p);
    let words = allowed_words(&p, &e);
    assert_eq!(
        diff::compare(
            &p,
            &e,
            &Outcome::Completed {
                words: words.clone()
            }
        ),
        Verdict::Agree
    );
    let mut checked = 0;
    for item in &e.obs {
        if matches!(item.expect, SiteExpect::Same(ObsExpect::Check(_))) {
            continue; // an address record: its own test below
        }
        let (base, n) = record_block(&layout, item);
        assert!(n >= 2, "a record of several words: {n}");
        for (lane, _) in item.iter() {
            let l = usize::from(lane);
            for w in 0..n {
                match verdict_with_flip(&p, &e, &words, base + 32 + l * n + w) {
                    Verdict::Discrepancy(d) => {
                        assert_eq!(d.kind, K::ValueOutsideAllowed, "lane {l} word {w}");
                        assert_eq!(d.key.map(|k| k.lane), Some(lane), "lane {l} word {w}");
                        // The observation's rules, led by the diagnosed behaviour's where
                        // compare names one: a wrong register after an `.xN` ld's first
                        // repetition, all of whose registers are right, is the ld's `.num`
                        // (LDST-NUM).
                        assert!(
                            item.rules.iter().all(|r| d.rules.contains(r)),
                            "lane {l} word {w}: {:?}",
                            d.rules
                        );
                        if d.rules.first() != item.rules.first() {
                            assert_eq!(
                                d.rules.first(),
                                Some(&RuleId::LdstNum),
                                "lane {l} word {w}"
                            );
                            assert!(
                                w > 0,
                                "lane {l} word {w}: the first register is never .num's"
                            );
                        }
                    }
                    v => panic!("lane {l} word {w} changed, compare gave {v:?}"),
                }
                checked += 1;
            }
            // A lane that recorded nothing where a record is expected.
            let mut w = words.clone();
            w[base + l] = 0;
            assert!(
                matches!(diff::compare(&p, &e, &Outcome::Completed { words: w }),
                    Verdict::Discrepancy(d) if d.key.map(|k| k.lane) == Some(lane)),
                "lane {l} without its record"
            );
        }
    }
    assert!(checked >= 32 * 2, "only {checked} words checked");
    // A buffer of the wrong size.
    let mut short = words;
    short.pop();
    assert!(matches!(
        diff::compare(&p, &e, &Outcome::Completed { words: short }),
        Verdict::Discrepancy(d) if d.kind == K::ValueOutsideAllowed
    ));
}

/// The sample's exact-ld site, rewritten with `expect` for every lane.
fn with_ld_site(expect: SiteExpect) -> (Expected, ObsItem) {
    let mut e = real();
    let i = e
        .obs
        .iter()
        .position(|o| matches!(o.expect, SiteExpect::Exact { .. }))
        .expect("the sample's ld is predicted exactly");
    e.obs[i].expect = expect;
    e.obs[i].rules = vec![RuleId::McmStBeforeUse];
    let item = e.obs[i].clone();
    (e, item)
}

/// For each lane of `item` and each word of its record: the verdict with that word changed to
/// `0x5A5A_5A5A`, a value no expectation below allows.
fn each_word_changed(e: &Expected, item: &ObsItem, words: &[u32]) -> Vec<(usize, usize, Verdict)> {
    let p = program();
    let layout = Layout::of(&p);
    let (base, n) = record_block(&layout, item);
    let mut v = Vec::new();
    for l in [0usize, 13, 31] {
        for w in 0..n {
            let mut ws = words.to_vec();
            ws[base + 32 + l * n + w] = 0x5A5A_5A5A;
            v.push((
                l,
                w,
                diff::compare(&p, e, &Outcome::Completed { words: ws }),
            ));
        }
    }
    v
}

#[test]
fn every_kind_of_record_expectation_is_checked_at_every_word() {
    let p = program();
    let layout = Layout::of(&p);
    let (_, base_item) = with_ld_site(SiteExpect::Same(ObsExpect::Absent));
    let (_, n) = record_block(&layout, &base_item);
    let words = allowed_words(&p, &real());
    let (base, _) = record_block(&layout, &base_item);
    // What each lane recorded in the allowed buffer, as each kind of expectation that allows it.
    let per_lane = |l: usize| words[base + 32 + l * n..base + 32 + (l + 1) * n].to_vec();
    let kinds: Vec<(&str, SiteExpect)> = vec![
        (
            "each exact",
            SiteExpect::Each((0..32).map(|l| ObsExpect::Exact(per_lane(l))).collect()),
        ),
        (
            "each one-of",
            SiteExpect::Each(
                (0..32)
                    .map(|l| ObsExpect::OneOf(vec![vec![0xFFFF_FFFF; n], per_lane(l)]))
                    .collect(),
            ),
        ),
        (
            "each per-word",
            SiteExpect::Each(
                (0..32)
                    .map(|l| {
                        ObsExpect::PerWord(
                            per_lane(l)
                                .into_iter()
                                .enumerate()
                                .map(|(i, x)| {
                                    if i % 2 == 0 {
                                        WordExpect::Exact(x)
                                    } else {
                                        WordExpect::OneOf(vec![x, x ^ 1])
                                    }
                                })
                                .collect(),
                        )
                    })
                    .collect(),
            ),
        ),
    ];
    for (name, expect) in kinds {
        let (e, item) = with_ld_site(expect);
        assert_eq!(
            diff::compare(
                &p,
                &e,
                &Outcome::Completed {
                    words: words.clone()
                }
            ),
            Verdict::Agree,
            "{name}: the allowed buffer"
        );
        for (l, w, v) in each_word_changed(&e, &item, &words) {
            match v {
                Verdict::Discrepancy(d) => {
                    assert_eq!(d.kind, K::ValueOutsideAllowed, "{name}: lane {l} word {w}");
                    assert_eq!(
                        d.key.map(|k| usize::from(k.lane)),
                        Some(l),
                        "{name}: lane {l} word {w}"
                    );
                }
                v => panic!("{name}: lane {l} word {w} changed, compare gave {v:?}"),
            }
        }
    }
    // Unspecified words and records allow anything; an absent record allows no record only.
    let (e, item) = with_ld_site(SiteExpect::Same(ObsExpect::PerWord(vec![
        WordExpect::Unspecified;
        n
    ])));
    for (l, w, v) in each_word_changed(&e, &item, &words) {
        assert_eq!(v, Verdict::Agree, "unspecified words: lane {l} word {w}");
    }
    let (e, item) = with_ld_site(SiteExpect::Same(ObsExpect::Unspecified(vec![
        RuleId::McmStBeforeUse,
    ])));
    for (l, w, v) in each_word_changed(&e, &item, &words) {
        assert_eq!(v, Verdict::Agree, "unspecified record: lane {l} word {w}");
    }
    let (e, _) = with_ld_site(SiteExpect::Same(ObsExpect::Absent));
    assert!(matches!(
        diff::compare(&p, &e, &Outcome::Completed { words: words.clone() }),
        Verdict::Discrepancy(d) if d.kind == K::ValueOutsideAllowed
    ));
    let mut none = words.clone();
    for l in 0..32 {
        none[base + l] = 0;
    }
    assert_eq!(
        diff::compare(&p, &e, &Outcome::Completed { words: none }),
        Verdict::Agree,
        "no record where none is expected"
    );
}

#[test]
fn address_records_are_checked_against_the_observation_checks() {
    let p = program();
    let layout = Layout::of(&p);
    let e = real();
    let words = allowed_words(&p, &e);
    let item = e
        .obs
        .iter()
        .find(|o| matches!(o.expect, SiteExpect::Same(ObsExpect::Check(_))))
        .expect("the sample records its alloc address");
    let SiteExpect::Same(ObsExpect::Check(AddrCheck {
        ncols, capacity, ..
    })) = item.expect
    else {
        unreachable!()
    };
    let (base, n) = record_block(&layout, item);
    let lanes: Vec<usize> = item.iter().map(|(l, _)| usize::from(l)).collect();
    let with_addr = |f: &dyn Fn(usize) -> u32| {
        let mut w = words.clone();
        for &l in &lanes {
            w[base + 32 + l * n] = f(l);
        }
        diff::compare(&p, &e, &Outcome::Completed { words: w })
    };
    // The same in-range address in every record: allowed.
    assert_eq!(with_addr(&|_| capacity - ncols), Verdict::Agree);
    // A non-zero lane field, a range past the capacity (reference §9.7.16.7.1: the address's
    // lane field is 0, the columns fit the 512 of TMEM).
    for (what, f) in [
        ("lane field", &(|_| 0x0001_0000u32) as &dyn Fn(usize) -> u32),
        ("past the capacity", &|_| capacity - ncols + 1),
    ] {
        assert!(
            matches!(with_addr(f), Verdict::Discrepancy(d) if d.kind == K::ValueOutsideAllowed),
            "{what}"
        );
    }
    // Two addresses for one allocation, where several lanes record it.
    if let [_, .., last] = lanes[..] {
        let two = with_addr(&|l| if l == last { 32 } else { 0 });
        assert!(
            matches!(two, Verdict::Discrepancy(d) if d.kind == K::ValueOutsideAllowed),
            "two addresses"
        );
    }
}
