//! The minimizer on injected simulator faults: it keeps the discrepancy's signature, shrinks
//! the case to a handful of instructions, and is deterministic. The discrepancies are checked
//! here with `diff::compare` directly, not through the judge the minimizer uses.

use std::time::Duration;
use tcgen05_drivers::diff::{self, DiscrepancyKind, Signature, SkipReason, Verdict};
use tcgen05_drivers::target;
use tcgen05_engine::{judge, minimize};
use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_ir::samples::single_warp_roundtrip;
use tcgen05_ir::{Case, Intent, Op, Provenance, Stmt, TBase};

fn case(p: tcgen05_ir::Program) -> Case {
    Case {
        program: p,
        intent: Intent::Valid,
        provenance: Provenance::default(),
    }
}

#[test]
fn minimizing_an_injected_fault_keeps_its_signature_and_shrinks() {
    // wait::ld returning early shows on the sample; padding makes it larger first.
    let mut p = single_warp_roundtrip();
    for i in 0..40 {
        p.warps[0].insert(1, Stmt::Checkpoint(i));
    }
    let c = case(p);
    let mut t = target::build("sim:adversarial+wait-ld-early").unwrap();
    let opts = tcgen05_oracle::Options::default();
    let sig = judge::signature_of(&c, &opts, t.as_mut()).expect("the fault shows");
    let mut smaller = 0;
    let m = minimize::minimize(&c, t.as_mut(), &opts, Duration::from_secs(20), &mut |_| {
        smaller += 1
    })
    .unwrap();
    // The minimized case, run again and compared here (not through the minimizer's own
    // functions), shows the same discrepancy as the input did.
    let e = tcgen05_oracle::expect_with(&m.case.program, &opts);
    let again = match diff::compare(&m.case.program, &e, &t.run(&m.case)) {
        Verdict::Discrepancy(d) => Signature::of(&d, &t.name()),
        v => panic!("the minimized case shows no discrepancy: {v:?}"),
    };
    assert_eq!(again, sig);
    assert_eq!(m.signature, sig);
    // It is smaller, and the sizes the minimizer reports are those of its input and result.
    assert_eq!(m.sizes, (c.program.size(), m.case.program.size()));
    assert!(
        smaller > 0 && m.sizes.1 < m.sizes.0 && m.sizes.1 <= 12,
        "{:?}",
        m.sizes
    );
    // Deterministic: the same input gives the same result.
    let again =
        minimize::minimize(&c, t.as_mut(), &opts, Duration::from_secs(20), &mut |_| {}).unwrap();
    assert_eq!(again.case, m.case);
    // A case without a discrepancy is refused.
    let mut good = target::build("sim").unwrap();
    assert!(
        minimize::minimize(
            &c,
            good.as_mut(),
            &opts,
            Duration::from_secs(1),
            &mut |_| {}
        )
        .is_err()
    );
}

/// Positive control, and strict compare end to end: a simulator that loses a commit's
/// mbarrier arrive (`commit-lost-arrive`) lets a bounded wait give up where the oracle says
/// every arrive happens (drivers/tests/sim_campaign.rs); the discrepancy minimizes like the
/// other faults (drivers/README.md, "Fault injection": ≤ 12 instructions).
#[test]
fn a_lost_commit_arrive_minimizes() {
    let stream = Stream::new(tcgen05_generators::Config::default(), 18, Mode::Mixed);
    let mut t = target::resolve("sim:adversarial+commit-lost-arrive").expect("builds");
    let opts = tcgen05_oracle::Options::default();
    let (case, d) = (0..200)
        .find_map(|i| {
            let case = stream.case_at(i);
            let e = tcgen05_oracle::expect_with(&case.program, &opts);
            match diff::compare(&case.program, &e, &t.run(&case)) {
                Verdict::Discrepancy(d)
                    if d.kind == DiscrepancyKind::WaitGaveUpWhereArriveRequired =>
                {
                    Some((case, d))
                }
                _ => None,
            }
        })
        .expect("a wait-gave-up discrepancy within 200 cases of seed 18");
    assert_eq!(d.forms, vec!["mbarrier.try_wait".to_string()]);
    let m = minimize::minimize(
        &case,
        t.as_mut(),
        &opts,
        Duration::from_secs(30),
        &mut |_| {},
    )
    .expect("the discrepancy minimizes");
    assert_eq!(
        m.signature.kind,
        DiscrepancyKind::WaitGaveUpWhereArriveRequired
    );
    let n = minimize::instructions(&m.case.program);
    assert!(n <= 12, "minimized to {n} instructions");
    // The same outcome on a watchdog-bounded target (hardware) stays a skip.
    let e = tcgen05_oracle::expect(&m.case.program);
    let o = t.run(&m.case);
    assert_eq!(
        diff::compare_bounded(&m.case.program, &e, &o, diff::WaitBound::Watchdog),
        Verdict::Skip(SkipReason::WaitGaveUp)
    );
    // The real simulator agrees on the minimized case.
    let mut good = target::resolve("sim:adversarial").expect("builds");
    let o = good.run(&m.case);
    assert_eq!(diff::compare(&m.case.program, &e, &o), Verdict::Agree);
}

/// Every injected simulator fault (drivers/README.md, "Fault injection"): the first valid
/// generated case of seed 1 that shows it on `sim+<fault>` or `sim:adversarial+<fault>`
/// minimizes to at most 12 instructions (the limit; `cluster-barrier-no-wait` at most
/// 16, see [`LIMIT_CLUSTER_BARRIER`]), keeps its signature, and breaks no rule the original
/// keeps: checked here with the oracle's verdicts and the unfaulted simulator, not with the
/// minimizer's own filter.
#[test]
fn every_injected_fault_minimizes_small_and_breaks_no_new_rule() {
    let opts = tcgen05_oracle::Options::default();
    let stream = Stream::new(tcgen05_generators::Config::default(), 1, Mode::Valid);
    let mut failures = Vec::new();
    for f in tcgen05_drivers::sim::faults::Fault::ALL {
        let names = [
            format!("sim+{}", f.name()),
            format!("sim:adversarial+{}", f.name()),
        ];
        let found = (0..2_000).find_map(|i| {
            let case = stream.case_at(i);
            let e = tcgen05_oracle::expect_with(&case.program, &opts);
            names.iter().find_map(|n| {
                let mut t = target::resolve(n).expect("simulator targets build");
                match diff::compare(&case.program, &e, &t.run(&case)) {
                    Verdict::Discrepancy(_) => Some((case.clone(), t)),
                    _ => None,
                }
            })
        });
        let Some((case, mut t)) = found else {
            failures.push(format!("{}: no discrepancy in 2,000 cases", f.name()));
            continue;
        };
        let m = minimize::minimize(
            &case,
            t.as_mut(),
            &opts,
            // Three times the campaign's 30 s, for a loaded CI machine (every fault reaches
            // its fixed point in about a second on an idle one).
            Duration::from_secs(90),
            &mut |_| {},
        )
        .expect("the case shows the fault");
        let p = &m.case.program;
        let n = minimize::instructions(p);
        let limit = match f.name() {
            "cluster-barrier-no-wait" => LIMIT_CLUSTER_BARRIER,
            _ => 12,
        };
        if n > limit {
            failures.push(format!("{}: {n} instructions (limit {limit})", f.name()));
        }
        // The same discrepancy, compared here.
        let e = tcgen05_oracle::expect_with(p, &opts);
        match diff::compare(p, &e, &t.run(&m.case)) {
            Verdict::Discrepancy(d) => assert_eq!(Signature::of(&d, &t.name()), m.signature),
            v => failures.push(format!("{}: the minimized case gives {v:?}", f.name())),
        }
        // Valid cases keep every rule, so the minimized one must too: no static violation,
        // a run that completes, no leak (reference §6: ALLOC-FREE-BEFORE-EXIT).
        let before = tcgen05_oracle::expect_with(&case.program, &opts);
        assert!(before.violations.is_empty(), "{}: valid input", f.name());
        if !e.violations.is_empty()
            || !matches!(e.run.verdict, tcgen05_oracle::RunVerdict::Completes)
            || e.leak.status != tcgen05_oracle::LeakStatus::NoLeak
        {
            failures.push(format!(
                "{}: the minimized case breaks a rule: {:?} / {:?} / {:?}",
                f.name(),
                e.violations.iter().map(|v| v.rule).collect::<Vec<_>>(),
                e.run.verdict,
                e.leak.status
            ));
        }
        // It frees what it allocates: every alloc's slot has a dealloc of its address.
        for op in p.ops() {
            if let Op::Alloc { slot, .. } = op {
                let freed = p.ops().iter().any(
                    |o| matches!(o, Op::Dealloc { taddr, .. } if taddr.base == TBase::Slot(*slot)),
                );
                if !freed {
                    failures.push(format!("{}: slot {slot} is never freed", f.name()));
                }
            }
        }
        // `tcgen05-fuzz check` on the minimized PTX (its path analysis and the oracle on the
        // lifted kernel, as the command runs them) breaks no rule but the reported one: the
        // minimizer kept the cluster barrier before a `::2` alloc (GEN-PEER-ACTIVE,
        // §9.7.16.7.1), the fences around a barrier (MCM-XTHREAD, §9.7.16.6.3-4) and the
        // cluster shape that lets `check` see the CTA pair.
        let ptx = tcgen05_ir::ptx::emit(p);
        let module = tcgen05_ir::ptx::parse::parse_module(&ptx, "minimized.ptx").unwrap();
        let reports = tcgen05_oracle::lifted::check_module(
            &module,
            Some(&ptx),
            &tcgen05_oracle::kernel::Options::default(),
            None,
        );
        let broken: Vec<_> = reports
            .iter()
            .flat_map(|k| &k.findings)
            .filter(|x| Some(x.rule) != m.signature.rule)
            .map(|x| format!("{} at line {}: {}", x.rule, x.line, x.message))
            .collect();
        if !broken.is_empty() || p.launch.cluster_size > 1 && !p.launch.declare_cluster {
            failures.push(format!(
                "{}: check on the minimized PTX: {broken:?}, cluster declared: {}",
                f.name(),
                p.launch.declare_cluster
            ));
        }
        // And the simulator without the fault agrees with the oracle on it (no leak, no hang,
        // no wrong value).
        let mut good = target::resolve("sim:adversarial").expect("builds");
        let v = diff::compare(p, &e, &good.run(&m.case));
        if v != Verdict::Agree {
            failures.push(format!("{}: the unfaulted simulator gives {v:?}", f.name()));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The fewest instructions a value discrepancy of `cluster-barrier-no-wait` takes without
/// breaking a rule: the data must cross CTAs (a `::2` cp reads each pair CTA's own shared
/// memory, CP-PAIR, so the peer's fill and `fence.proxy.async` come before the cluster
/// barrier the fault breaks: 2 + 2 statements), the `::2` allocation must be freed by a `::2`
/// dealloc after the pair synchronizes its TMEM accesses (DEALLOC-PAIR-SYNC: fence, second
/// cluster round, alloc and dealloc: 5), and the ld sees the copy only through a commit to an
/// mbarrier both CTAs wait on (init, cp, commit, wait, `fence::after_thread_sync`: 5), then
/// the ld and its `wait::ld` (2): 16.
const LIMIT_CLUSTER_BARRIER: usize = 16;
