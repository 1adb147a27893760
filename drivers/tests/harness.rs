//! The harness parts around the simulator: compare, store, external protocol (the minimizer's
//! tests are in the engine crate, engine/tests/minimize.rs).

use tcgen05_drivers::diff::{self, DiscrepancyKind, Signature, SkipReason, Verdict};
use tcgen05_drivers::outcome::{HangSite, Outcome};
use tcgen05_drivers::store::{self, Added, Store};
use tcgen05_drivers::target;
use tcgen05_ir::samples::single_warp_roundtrip;
use tcgen05_ir::{Case, Intent, Provenance, Stmt};
use tcgen05_oracle::{Expected, RunVerdict};

fn case(p: tcgen05_ir::Program) -> Case {
    Case {
        program: p,
        intent: Intent::Valid,
        provenance: Provenance::default(),
    }
}

fn expected(verdict: RunVerdict) -> Expected {
    Expected::with_verdict(verdict)
}

#[test]
fn compare_follows_the_three_valued_table() {
    let p = single_warp_roundtrip();
    let hung = Outcome::Hung {
        blocked: vec![HangSite {
            cta: 0,
            warp: 0,
            lane: 0,
            checkpoint: 0,
            blocked_on: None,
        }],
        words: vec![],
    };
    // A hang where the spec requires completion (only one side failing).
    let v = diff::compare(&p, &expected(RunVerdict::Completes), &hung);
    assert!(
        matches!(v, Verdict::Discrepancy(d) if d.kind == DiscrepancyKind::HangWhereCompletionRequired)
    );
    // A hang where blocking is allowed agrees; undefined behaviour is skipped.
    assert_eq!(
        diff::compare(
            &p,
            &expected(RunVerdict::MayBlock { where_: vec![] }),
            &hung
        ),
        Verdict::Agree
    );
    assert!(matches!(
        diff::compare(&p, &expected(RunVerdict::Undefined(vec![])), &hung),
        Verdict::Skip(SkipReason::Unspecified(_))
    ));
    // Completion where a deadlock is required.
    let done = Outcome::Completed {
        words: vec![0; tcgen05_ir::observe::Layout::of(&p).total_words()],
    };
    let v = diff::compare(
        &p,
        &expected(RunVerdict::MustDeadlock { where_: vec![] }),
        &done,
    );
    assert!(
        matches!(v, Verdict::Discrepancy(d) if d.kind == DiscrepancyKind::CompletionWhereDeadlockRequired)
    );
    // A leak on a program that frees everything.
    let leak = Outcome::Leaked {
        columns: 32,
        words: vec![],
    };
    let v = diff::compare(&p, &expected(RunVerdict::Completes), &leak);
    assert!(matches!(v, Verdict::Discrepancy(d) if d.kind == DiscrepancyKind::LeakOnDefined));
    // A well-formed program rejected by a compiler.
    let v = diff::compare(
        &p,
        &expected(RunVerdict::Completes),
        &Outcome::Rejected(vec![]),
    );
    assert!(matches!(v, Verdict::Discrepancy(d) if d.kind == DiscrepancyKind::WellFormedRejected));
    // Not run is never a discrepancy.
    assert!(matches!(
        diff::compare(
            &p,
            &expected(RunVerdict::Completes),
            &Outcome::NotRun("x".into())
        ),
        Verdict::Skip(SkipReason::TargetCannotRun(_))
    ));
}

#[test]
fn the_correct_simulator_agrees_with_the_oracle_on_the_sample() {
    let c = case(single_warp_roundtrip());
    for name in ["sim", "sim:rr", "sim:adversarial", "sim:exhaustive"] {
        let mut t = target::build(name).unwrap();
        let e = tcgen05_oracle::expect(&c.program);
        let v = diff::compare(&c.program, &e, &t.run(&c));
        assert!(!matches!(v, Verdict::Discrepancy(_)), "{name}: {v:?}");
    }
}

#[test]
fn the_store_keeps_one_folder_per_signature_even_with_concurrent_writers() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path()).unwrap();
    let c = case(single_warp_roundtrip());
    let mut t = target::build("sim:adversarial+wait-ld-early").unwrap();
    let e = tcgen05_oracle::expect(&c.program);
    let o = t.run(&c);
    let Verdict::Discrepancy(d) = diff::compare(&c.program, &e, &o) else {
        panic!("the fault shows")
    };
    let sig = Signature::of(&d, &t.name());
    let rep = store::make_report(&sig, &d, vec![(t.name(), t.version())], &e, &o, (8, 8));
    // The report's section is the catalogue's for the signature's rule (reference §6).
    let rule = sig.rule.expect("wait::ld early is decided by a rule");
    assert_eq!(
        rep.section.as_deref(),
        Some(tcgen05_oracle::catalogue::row(rule).section)
    );
    // The original: the same case padded with checkpoints, so the two files differ.
    let mut padded = c.program.clone();
    for i in 0..4 {
        padded.warps[0].insert(1, Stmt::Checkpoint(i));
    }
    let original = case(padded);
    let results: Vec<Added> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..8)
            .map(|_| sc.spawn(|| s.add(&c, &original, &rep).unwrap()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        results
            .iter()
            .filter(|r| matches!(r, Added::New(_)))
            .count(),
        1
    );
    assert_eq!(s.list().unwrap(), vec![sig.id()]);
    let folder = s.folder(&sig.id());
    for f in [
        "minimized.case",
        "minimized.ptx",
        "original.case",
        "original.ptx",
        "report.json",
        "README.md",
    ] {
        assert!(folder.join(f).exists(), "{f}");
    }
    assert_eq!(store::read_report(&folder).unwrap(), rep);
    // Each case file holds the case it is named for.
    for (f, want) in [("minimized.case", &c), ("original.case", &original)] {
        let bytes = std::fs::read(folder.join(f)).unwrap();
        assert_eq!(&tcgen05_ir::codec::decode(&bytes).unwrap(), want, "{f}");
    }
    assert_eq!(
        std::fs::read_to_string(folder.join("original.ptx")).unwrap(),
        tcgen05_ir::ptx::emit(&original.program)
    );
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(readme.contains("tcgen05-fuzz reproduce"));
    // No temporary folders are left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// `diff::verdict_for_any_run` (the verdict the engine gives a target that only runs
/// programs without running it) must be what `compare` gives every run outcome of such a
/// target: checked on the simulator's outcomes under three schedulers over the campaign's
/// mixed stream, which holds ill-formed near misses and undefined runs (both must occur, or
/// the check says nothing).
#[test]
fn settled_verdicts_are_what_every_run_outcome_gets() {
    use tcgen05_generators::cases::{Mode, Stream};
    let stream = Stream::new(tcgen05_generators::Config::default(), 3, Mode::Mixed);
    let (mut ill, mut undefined) = (0, 0);
    let mut targets: Vec<_> = ["sim", "sim:rr", "sim:adversarial"]
        .iter()
        .map(|n| target::resolve(n).expect("the simulator builds"))
        .collect();
    assert!(targets.iter().all(|t| t.only_runs()));
    for i in 0..600 {
        let c = stream.case(i).case;
        let e = tcgen05_oracle::expect(&c.program);
        let Some(settled) = diff::verdict_for_any_run(&e) else {
            continue;
        };
        match &settled {
            Verdict::Skip(SkipReason::IllFormedProgram(r)) => {
                assert!(!r.is_empty() && !e.violations.is_empty());
                ill += 1;
            }
            Verdict::Skip(SkipReason::Unspecified(_)) => undefined += 1,
            Verdict::Skip(SkipReason::Incomparable(_)) => {}
            v => panic!("case {i}: a settled verdict must be a skip, got {v:?}"),
        }
        for t in &mut targets {
            let o = t.run(&c);
            let v = diff::compare(&c.program, &e, &o);
            match o {
                Outcome::NotRun(_) | Outcome::TimedOut { .. } => {
                    assert!(
                        matches!(v, Verdict::Skip(_)),
                        "case {i} on {}: {v:?}",
                        t.name()
                    )
                }
                _ => assert_eq!(v, settled, "case {i} on {}: {o:?}", t.name()),
            }
        }
    }
    assert!(
        ill > 20 && undefined > 5,
        "the sample must hold both kinds: {ill} ill-formed, {undefined} undefined"
    );
}
