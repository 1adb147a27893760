//! The minimizer's budget on a slow target: a real simulator with an injected fault, wrapped
//! so that every run also sleeps (the cost of a GPU target's compile per candidate, modelled).
//! Under a budget scaled to the target's cost ([`minimize::Budget::scaled`]) its finding shrinks
//! to the same case as on the plain simulator; under the same time as a fixed budget it does
//! not. Candidates no run can show the discrepancy on are not run; passes go on after a kept
//! candidate from where it was and still end at a fixed point. A campaign's findings carry
//! the minimizer's statistics in their reports.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tcgen05_drivers::diff::{self, WaitBound};
use tcgen05_drivers::outcome::Outcome;
use tcgen05_drivers::target::{self, Target, TargetKind};
use tcgen05_engine::campaign::{self, CaseMix, Config, Identity, Shard};
use tcgen05_engine::judge;
use tcgen05_engine::minimize::{self, Budget};
use tcgen05_engine::progress::Silent;
use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_ir::Case;
use tcgen05_oracle::{Edition, Options};

/// The fault: a commit that loses its mbarrier arrive, on the deterministic adversarial
/// scheduler (no reseeding: one run per candidate).
const TARGET: &str = "sim:adversarial+commit-lost-arrive";

/// A target that runs the simulator and then sleeps `delay` per run, keeping the programs it
/// ran.
struct Slow {
    inner: Box<dyn Target>,
    delay: Duration,
    ran: Vec<tcgen05_ir::Program>,
}

impl Target for Slow {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn version(&self) -> String {
        self.inner.version()
    }
    fn kind(&self) -> TargetKind {
        self.inner.kind()
    }
    fn only_runs(&self) -> bool {
        self.inner.only_runs()
    }
    fn wait_bound(&self) -> WaitBound {
        self.inner.wait_bound()
    }
    fn run(&mut self, case: &Case) -> Outcome {
        std::thread::sleep(self.delay);
        self.ran.push(case.program.clone());
        self.inner.run(case)
    }
}

fn slow(delay: Duration) -> Slow {
    slow_on(TARGET, delay)
}

fn slow_on(name: &str, delay: Duration) -> Slow {
    Slow {
        inner: target::build(name).expect("the simulator builds"),
        delay,
        ran: Vec::new(),
    }
}

/// The first valid generated case of seed 1 that shows the fault.
fn finding(opts: &Options) -> Case {
    finding_on(TARGET, 1, opts)
}

/// The first valid generated case of `seed` that shows a discrepancy on `name`.
fn finding_on(name: &str, seed: u64, opts: &Options) -> Case {
    let stream = Stream::new(tcgen05_generators::Config::default(), seed, Mode::Valid);
    let mut t = target::build(name).expect("the simulator builds");
    (0..200)
        .map(|i| stream.case_at(i))
        .find(|c| judge::signature_of(c, opts, t.as_mut()).is_some())
        .expect("a case among the first 200 shows the fault")
}

#[test]
fn a_slow_target_is_minimized_like_the_simulator_under_the_scaled_budget_only() {
    let opts = Options::default();
    let case = finding(&opts);
    let second = Duration::from_secs(1);
    // The plain simulator reaches its fixed point well within a second on an idle machine;
    // ten leave room for a loaded one (this is the reference size, not what is measured).
    let mut plain = target::build(TARGET).unwrap();
    let fast = minimize::minimize(&case, plain.as_mut(), &opts, 10 * second, &mut |_| {}).unwrap();
    assert!(!fast.timed_out, "{:?}", fast.profile);
    assert!(fast.sizes.1 < fast.sizes.0, "{:?}", fast.sizes);
    // At 40 ms a run, the candidates it judged need more than two seconds.
    let delay = Duration::from_millis(40);
    let judged = fast.tries - fast.rejected;
    assert!(delay * judged as u32 > 2 * second, "{judged} candidates");
    // A fixed second: the budget runs out before the fixed point, on a larger case.
    let fixed = minimize::minimize(&case, &mut slow(delay), &opts, second, &mut |_| {}).unwrap();
    assert!(fixed.timed_out);
    assert!(
        fixed.sizes.1 > fast.sizes.1,
        "{:?} vs {:?}",
        fixed.sizes,
        fast.sizes
    );
    // The same second scaled to the target's cost: the same case as on the simulator.
    let budget = Budget::scaled(second, Duration::from_secs(120));
    assert!(budget.candidates() >= judged);
    let scaled = minimize::minimize(&case, &mut slow(delay), &opts, budget, &mut |_| {}).unwrap();
    assert!(!scaled.timed_out);
    assert!(scaled.time > 2 * second, "{:?}", scaled.time);
    assert_eq!(scaled.case, fast.case);
    assert_eq!(scaled.signature, fast.signature);
}

/// A candidate whose every run outcome gets one verdict (ill-formed, undefined:
/// `diff::verdict_for_any_run`) cannot show a discrepancy of a run outcome, so the minimizer
/// does not run it; the result is the same (those candidates were never kept).
#[test]
fn candidates_no_run_can_show_the_discrepancy_on_are_not_run() {
    let opts = Options::default();
    // Seeds whose minimization met such candidates (72 minimizations of the fault table).
    for (name, seed) in [
        ("sim:adversarial+wait-st-early", 3),
        ("sim:adversarial+mma-pipeline-reordered", 3),
    ] {
        let case = finding_on(name, seed, &opts);
        let mut t = slow_on(name, Duration::ZERO);
        let m =
            minimize::minimize(&case, &mut t, &opts, Duration::from_secs(60), &mut |_| {}).unwrap();
        assert!(
            !m.timed_out && m.sizes.1 < m.sizes.0,
            "{name}: {:?}",
            m.sizes
        );
        let open: Vec<_> = t
            .ran
            .iter()
            .filter(|p| diff::verdict_for_any_run(&tcgen05_oracle::expect_with(p, &opts)).is_some())
            .collect();
        assert!(
            open.is_empty(),
            "{name}: {} such candidates ran",
            open.len()
        );
    }
}

/// Passes go on after a kept candidate from where it was, not from their first candidate;
/// the result is still a fixed point: minimizing it again (every pass from its first
/// candidate) makes it no smaller. On a deterministic scheduler: under the case-seeded one a
/// candidate's verdict follows the seed the case carries, which minimizing changes.
#[test]
fn the_result_is_a_fixed_point() {
    let opts = Options::default();
    for (name, seed) in [
        ("sim:adversarial+wait-st-early", 3),
        ("sim:adversarial+commit-arrive-early", 1),
        ("sim:adversarial+mma-ignores-enable-d", 1),
    ] {
        let case = finding_on(name, seed, &opts);
        let mut t = target::build(name).unwrap();
        let m = minimize::minimize(
            &case,
            t.as_mut(),
            &opts,
            Duration::from_secs(60),
            &mut |_| {},
        )
        .unwrap();
        assert!(
            !m.timed_out && m.sizes.1 < m.sizes.0,
            "{name}: {:?}",
            m.sizes
        );
        let again = minimize::minimize(
            &m.case,
            t.as_mut(),
            &opts,
            Duration::from_secs(60),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(
            again.sizes.1, m.sizes.1,
            "{name}: {:?}",
            again.profile.passes
        );
    }
}

#[test]
fn a_stop_flag_ends_a_long_minimization_at_its_next_candidate() {
    let opts = Options::default();
    let case = finding(&opts);
    let stop = AtomicBool::new(false);
    let budget = Budget::scaled(Duration::from_secs(60), Duration::from_secs(600)).with_stop(&stop);
    let start = Instant::now();
    let m = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            stop.store(true, Ordering::SeqCst);
        });
        minimize::minimize(
            &case,
            &mut slow(Duration::from_millis(50)),
            &opts,
            budget,
            &mut |_| {},
        )
        .unwrap()
    });
    // The candidate in flight (one 50 ms run) finishes; none starts after it.
    assert!(m.timed_out);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert!(m.tries - m.rejected <= 8, "{} judged", m.tries - m.rejected);
}

/// Every finding a campaign stores says in its `report.json` and README how the minimizer
/// did: candidates tried, rejected and kept, time, and whether it reached a fixed point.
#[test]
fn a_campaign_finding_reports_its_minimization() {
    let out = tempfile::tempdir().unwrap();
    let cfg = Config {
        identity: Identity {
            seed: 1,
            targets: vec![TARGET.to_string()],
            edition: Edition::default(),
            shard: Shard { index: 0, count: 1 },
            mix: CaseMix::Valid,
            generator: tcgen05_generators::ORIGIN.to_string(),
        },
        max_cases: Some(40),
        max_time: None,
        jobs: 1,
        minimize: true,
        stop_at_first: true,
        minimize_budget: Budget::scaled(Duration::from_secs(10), Duration::from_secs(60)),
        out: out.path().to_path_buf(),
        checkpoint_every: Duration::from_secs(1),
        reports_every: Duration::from_secs(30),
        invocation: String::new(),
    };
    let o = campaign::run(&cfg, &AtomicBool::new(false), &mut Silent).unwrap();
    assert_eq!(o.new_findings.len(), 1, "{:?}", o.summary.findings);
    let folder = out.path().join(&o.summary.findings[0].folder);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("report.json")).unwrap())
            .unwrap();
    let m = &report["minimization"];
    let n = |k: &str| m[k].as_u64().unwrap_or_else(|| panic!("{k} in {m}"));
    assert!(
        n("tries") > 0 && n("kept") > 0 && n("rejected") <= n("tries"),
        "{m}"
    );
    assert!(n("kept") <= n("tries") - n("rejected"), "{m}");
    assert_eq!(m["timed_out"], false, "{m}");
    let sizes = &report["sizes"];
    assert!(sizes[1].as_u64() < sizes[0].as_u64(), "{sizes}");
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(readme.contains("## Minimization"), "{readme}");
    assert!(readme.contains("to a fixed point"), "{readme}");
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(
        !md.contains("(budget spent)") && !md.contains("(not minimized)"),
        "{md}"
    );
}
