//! The decision table of [`super`], row by row: each test names its row, builds the
//! expectation the row describes and checks the verdict of every outcome the row lists.

use super::*;
use crate::outcome::{Diagnostic, HangSite, Severity, TrapKind};
use tcgen05_ir::samples::single_warp_roundtrip;
use tcgen05_oracle::{BlockSite, Code, LeakStatus, Location, Violation};

fn expected(verdict: RunVerdict) -> Expected {
    Expected::with_verdict(verdict)
}

fn violating(rule: RuleId) -> Expected {
    let mut e = expected(RunVerdict::Completes);
    e.violations = vec![Violation {
        rule,
        section: String::new(),
        location: None,
        message: "broken".into(),
    }];
    e
}

/// A static rule of the catalogue whose consequence is rejection (or, with `false`, one whose
/// consequence is unstated or that is derived): reference §6, by the catalogue's own text.
fn rule(rejecting: bool) -> RuleId {
    *RuleId::ALL
        .iter()
        .find(|r| {
            let row = catalogue::row(**r);
            let rejects = row.provenance != catalogue::Provenance::Derived
                && row.consequence.contains("reject");
            rejects == rejecting
        })
        .expect("the catalogue has both kinds")
}

fn kind(v: &Verdict) -> Option<DiscrepancyKind> {
    match v {
        Verdict::Discrepancy(d) => Some(d.kind),
        _ => None,
    }
}

fn words(p: &Program) -> Vec<u32> {
    vec![0; Layout::of(p).total_words()]
}

fn block() -> BlockSite {
    BlockSite {
        cta: 0,
        warp: 0,
        location: Location {
            code: Code::Warp(0),
            path: vec![0],
        },
        reason: "waits".into(),
    }
}

fn run_outcomes(p: &Program) -> Vec<Outcome> {
    let w = words(p);
    vec![
        Outcome::Completed { words: w.clone() },
        Outcome::Trapped {
            kind: TrapKind::IllegalInstruction,
            words: w.clone(),
        },
        Outcome::Hung {
            blocked: vec![],
            words: w.clone(),
        },
        Outcome::Leaked {
            columns: 32,
            words: w,
        },
        Outcome::Faulted {
            code: 700,
            detail: "illegal address".into(),
        },
    ]
}

#[test]
fn row_accepted_with_a_rejecting_violation_is_ill_formed_accepted() {
    let p = single_warp_roundtrip();
    let r = rule(true);
    let v = compare(&p, &violating(r), &Outcome::Accepted);
    let Verdict::Discrepancy(d) = v else {
        panic!("{v:?}")
    };
    assert_eq!(
        (d.kind, d.rules),
        (DiscrepancyKind::IllFormedAccepted, vec![r])
    );
    // Accepted with warnings is accepted.
    let v = compare(&p, &violating(r), &Outcome::AcceptedWithWarnings(vec![]));
    assert_eq!(kind(&v), Some(DiscrepancyKind::IllFormedAccepted));
}

#[test]
fn row_accepted_with_an_unstated_consequence_is_skipped_as_unspecified() {
    let p = single_warp_roundtrip();
    let r = rule(false);
    assert_eq!(
        compare(&p, &violating(r), &Outcome::Accepted),
        Verdict::Skip(SkipReason::Unspecified(vec![r]))
    );
    // And a well-formed program accepted agrees.
    assert_eq!(
        compare(&p, &expected(RunVerdict::Completes), &Outcome::Accepted),
        Verdict::Agree
    );
}

#[test]
fn row_rejected_well_formed_is_a_discrepancy_and_rejected_ill_formed_agrees() {
    let p = single_warp_roundtrip();
    let rejected = Outcome::Rejected(vec![Diagnostic {
        severity: Severity::Error,
        line: Some(3),
        opcode: None,
        message: "no".into(),
    }]);
    let v = compare(&p, &expected(RunVerdict::Completes), &rejected);
    assert_eq!(kind(&v), Some(DiscrepancyKind::WellFormedRejected));
    assert_eq!(
        compare(&p, &violating(rule(true)), &rejected),
        Verdict::Agree
    );
}

#[test]
fn row_crash_and_timeout_of_the_tool() {
    let p = single_warp_roundtrip();
    for e in [expected(RunVerdict::Completes), violating(rule(true))] {
        let v = compare(
            &p,
            &e,
            &Outcome::Crashed {
                detail: "sig".into(),
            },
        );
        assert_eq!(kind(&v), Some(DiscrepancyKind::TargetCrash));
    }
    let to = Outcome::TimedOut { limit_ms: 10 };
    // A timeout is a discrepancy only where completion is required of a well-formed program.
    assert_eq!(
        kind(&compare(&p, &expected(RunVerdict::Completes), &to)),
        Some(DiscrepancyKind::TargetTimeout)
    );
    for e in [
        violating(rule(true)),
        expected(RunVerdict::MayBlock {
            where_: vec![block()],
        }),
    ] {
        assert!(matches!(
            compare(&p, &e, &to),
            Verdict::Skip(SkipReason::Incomparable(_))
        ));
    }
}

#[test]
fn row_any_run_outcome_of_an_ill_formed_program_is_skipped() {
    let p = single_warp_roundtrip();
    let r = rule(true);
    for o in run_outcomes(&p) {
        assert_eq!(
            compare(&p, &violating(r), &o),
            Verdict::Skip(SkipReason::IllFormedProgram(vec![r])),
            "{}",
            o.name()
        );
    }
}

#[test]
fn row_not_run_is_skipped_whatever_the_oracle_says() {
    let p = single_warp_roundtrip();
    for e in [expected(RunVerdict::Completes), violating(rule(true))] {
        assert_eq!(
            compare(&p, &e, &Outcome::NotRun("no".into())),
            Verdict::Skip(SkipReason::TargetCannotRun("no".into()))
        );
    }
}

#[test]
fn row_undefined_runs_are_skipped_as_unspecified() {
    let p = single_warp_roundtrip();
    let r = RuleId::ALL[0];
    for o in run_outcomes(&p) {
        assert_eq!(
            compare(&p, &expected(RunVerdict::Undefined(vec![r])), &o),
            Verdict::Skip(SkipReason::Unspecified(vec![r])),
            "{}",
            o.name()
        );
    }
}

#[test]
fn row_hung_where_completion_is_required() {
    let p = single_warp_roundtrip();
    let hung = Outcome::Hung {
        blocked: vec![HangSite {
            cta: 0,
            warp: 0,
            lane: 0,
            checkpoint: 1,
            blocked_on: Some("tcgen05.alloc".into()),
        }],
        words: words(&p),
    };
    let v = compare(&p, &expected(RunVerdict::Completes), &hung);
    let Verdict::Discrepancy(d) = v else {
        panic!("{v:?}")
    };
    assert_eq!(d.kind, DiscrepancyKind::HangWhereCompletionRequired);
    assert_eq!(d.forms, vec!["tcgen05.alloc".to_string()]);
    // Hanging is allowed where the run may block or must deadlock.
    for e in [
        RunVerdict::MayBlock {
            where_: vec![block()],
        },
        RunVerdict::MustDeadlock {
            where_: vec![block()],
        },
    ] {
        assert_eq!(compare(&p, &expected(e), &hung), Verdict::Agree);
    }
}

#[test]
fn row_completion_where_a_deadlock_is_required() {
    let p = single_warp_roundtrip();
    let e = expected(RunVerdict::MustDeadlock {
        where_: vec![block()],
    });
    for o in [
        Outcome::Completed { words: words(&p) },
        Outcome::Leaked {
            columns: 32,
            words: words(&p),
        },
    ] {
        assert_eq!(
            kind(&compare(&p, &e, &o)),
            Some(DiscrepancyKind::CompletionWhereDeadlockRequired),
            "{}",
            o.name()
        );
    }
}

#[test]
fn row_trap_or_fault_on_a_defined_program() {
    let p = single_warp_roundtrip();
    for e in [
        RunVerdict::Completes,
        RunVerdict::MayBlock {
            where_: vec![block()],
        },
        RunVerdict::MustDeadlock {
            where_: vec![block()],
        },
    ] {
        for o in [
            Outcome::Trapped {
                kind: TrapKind::TmemOutOfRange,
                words: words(&p),
            },
            Outcome::Faulted {
                code: 700,
                detail: "x".into(),
            },
        ] {
            assert_eq!(
                kind(&compare(&p, &expected(e.clone()), &o)),
                Some(DiscrepancyKind::TrapOnDefined),
                "{e:?} {}",
                o.name()
            );
        }
    }
}

#[test]
fn row_leak_on_a_program_that_frees_everything() {
    let p = single_warp_roundtrip();
    let leaked = Outcome::Leaked {
        columns: 32,
        words: words(&p),
    };
    let e = expected(RunVerdict::Completes);
    assert_eq!(e.leak.status, LeakStatus::NoLeak);
    assert_eq!(
        kind(&compare(&p, &e, &leaked)),
        Some(DiscrepancyKind::LeakOnDefined)
    );
    // Where the oracle says it may leak, the observations decide (none expected here).
    let mut may = e;
    may.leak.status = LeakStatus::MayLeak;
    assert_eq!(compare(&p, &may, &leaked), Verdict::Agree);
}

#[test]
fn row_observations_are_compared_with_their_expectations() {
    // The roundtrip's real expectation against the simulator's run: agree; one word off: a
    // value discrepancy. (Lane by lane: `tests::exact_site_records_are_compared_lane_by_lane`.)
    let p = single_warp_roundtrip();
    let e = tcgen05_oracle::expect(&p);
    assert_eq!(e.run.verdict, RunVerdict::Completes);
    let o = crate::sim::simulate(
        &p,
        crate::sim::SimConfig::new(crate::sim::Sched::RoundRobin),
        0,
    );
    assert_eq!(compare(&p, &e, &o), Verdict::Agree);
    let Outcome::Completed { mut words } = o else {
        panic!("completes")
    };
    let layout = Layout::of(&p);
    let ld = layout.warp_sites[0][1];
    words[layout.warp_block(0, 0) + ld.offset as usize + 32] ^= 1;
    assert_eq!(
        kind(&compare(&p, &e, &Outcome::Completed { words })),
        Some(DiscrepancyKind::ValueOutsideAllowed)
    );
}

/// A program with bounded mbarrier waits the oracle assumes completed (the litmus member
/// `pipelined-same-thread/mma-mma`: commit → wait), its expectation, and the simulator's
/// words with every such wait's record turned into "gave up".
fn gave_up() -> (Program, Expected, Vec<u32>) {
    let p = tcgen05_generators::litmus::all_members()
        .into_iter()
        .find(|m| m.name == "pipelined-same-thread/mma-mma")
        .expect("litmus member")
        .program;
    let e = tcgen05_oracle::expect(&p);
    assert_eq!(e.run.verdict, RunVerdict::Completes);
    assert!(!e.assumes_completed.is_empty());
    let o = crate::sim::simulate(
        &p,
        crate::sim::SimConfig::new(crate::sim::Sched::RoundRobin),
        0,
    );
    assert_eq!(
        compare(&p, &e, &o),
        Verdict::Agree,
        "the unchanged run agrees"
    );
    let Outcome::Completed { mut words } = o else {
        panic!("completes")
    };
    let layout = Layout::of(&p);
    for key in &e.assumes_completed {
        let site = site_for(&layout, &key.site_key()).expect("site");
        let base = layout.warp_block(key.cta, usize::from(key.warp)) + site.offset as usize;
        assert_ne!(words[base + usize::from(key.lane)], 0, "the lane recorded");
        words[base + 32 + usize::from(key.lane) * site.words as usize] = MBAR_GAVE_UP;
    }
    (p, e, words)
}

#[test]
fn row_a_fair_target_giving_up_where_every_arrive_happens_is_a_discrepancy() {
    let (p, e, words) = gave_up();
    for o in [
        Outcome::Completed {
            words: words.clone(),
        },
        Outcome::Leaked { columns: 0, words },
    ] {
        let mut e = e.clone();
        e.leak.status = LeakStatus::MayLeak;
        let v = compare_bounded(&p, &e, &o, WaitBound::Fair);
        let Verdict::Discrepancy(d) = v else {
            panic!("{v:?}")
        };
        assert_eq!(d.kind, DiscrepancyKind::WaitGaveUpWhereArriveRequired);
        assert_eq!(d.rules[0], RuleId::CommitArrive);
        assert_eq!(d.key, Some(e.assumes_completed[0]));
        // The site as the value details name it (no `Warp(1)` in a report).
        let site = e.assumes_completed[0].site;
        assert!(
            d.detail.contains(&format!("observation {site}:")) && !d.detail.contains("Warp("),
            "{}",
            d.detail
        );
        // `compare` is the fair target's comparison.
        assert_eq!(compare(&p, &e, &o), Verdict::Discrepancy(d));
    }
}

#[test]
fn row_giving_up_is_skipped_on_a_watchdog_bounded_target_or_where_the_run_may_block() {
    let (p, e, words) = gave_up();
    let o = Outcome::Completed { words };
    assert_eq!(
        compare_bounded(&p, &e, &o, WaitBound::Watchdog),
        Verdict::Skip(SkipReason::WaitGaveUp)
    );
    let mut may = e;
    may.run.verdict = RunVerdict::MayBlock {
        where_: vec![block()],
    };
    for b in [WaitBound::Fair, WaitBound::Watchdog] {
        assert_eq!(
            compare_bounded(&p, &may, &o, b),
            Verdict::Skip(SkipReason::WaitGaveUp),
            "{b:?}"
        );
    }
}

#[test]
fn the_simulator_is_fair_and_other_targets_are_watchdog_bounded_by_default() {
    for n in ["sim", "sim:rr", "sim:adversarial", "sim:exhaustive"] {
        let sim = crate::target::resolve(n).expect("sim");
        assert_eq!(sim.wait_bound(), WaitBound::Fair, "{n}");
    }
    /// A target that says nothing of its waits.
    struct Plain;
    impl crate::target::Target for Plain {
        fn name(&self) -> String {
            "plain".into()
        }
        fn version(&self) -> String {
            String::new()
        }
        fn kind(&self) -> crate::target::TargetKind {
            crate::target::TargetKind::Running
        }
        fn run(&mut self, _: &tcgen05_ir::Case) -> Outcome {
            Outcome::NotRun("plain".into())
        }
    }
    assert_eq!(
        crate::target::Target::wait_bound(&Plain),
        WaitBound::Watchdog
    );
}
