//! Fixed-seed campaigns on the simulator's schedulers against the oracle: the test that kills
//! the mutants of the simulator crate `sim/` (`scripts/mutants`, docs/mutants.md), and its positive
//! control (a planted bug is found by the same check).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};
use tcgen05_drivers::diff::{self, DiscrepancyKind, SkipReason, Verdict};
use tcgen05_drivers::outcome::Outcome;
use tcgen05_drivers::report::TargetCounts;
use tcgen05_drivers::target::{self, Target};
use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_ir::observe::Layout;
use tcgen05_ir::qual::MmaKind;
use tcgen05_ir::rule::RuleId;
use tcgen05_ir::{Case, Op, Program, Stmt};
use tcgen05_oracle::Edition;

/// The campaign seed of the mutation test.
const SEED: u64 = 18;

/// A run of the simulator that takes longer than this hangs: an endless loop outside the
/// simulator's step count (which ends a run that spins at its step bound). Runs take
/// milliseconds (a case on `sim:exhaustive`, up to 256 schedules, a few seconds on a loaded
/// machine), so the test exits, failing, long before the mutant's time limit.
const HANG: Duration = Duration::from_secs(15);

/// The simulator runs in progress (id → start, what), checked once a second by the watchdog
/// thread of [`watched`].
static RUNS: Mutex<BTreeMap<u64, (Instant, String)>> = Mutex::new(BTreeMap::new());

/// `run()`, watched: when any watched run has taken longer than [`HANG`], the process exits
/// with status 1 naming it (a hang fails the test; the stuck thread cannot be stopped).
fn watched<T>(what: String, run: impl FnOnce() -> T) -> T {
    static DOG: Once = Once::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    DOG.call_once(|| {
        std::thread::spawn(|| {
            loop {
                std::thread::sleep(Duration::from_secs(1));
                let runs = RUNS.lock().unwrap_or_else(|e| e.into_inner());
                if let Some((t, what)) = runs.values().find(|(t, _)| t.elapsed() > HANG) {
                    eprintln!(
                        "a run of {what} has taken {:.0?} (limit {HANG:?}): the simulator hangs",
                        t.elapsed()
                    );
                    std::process::exit(1);
                }
            }
        });
    });
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let lock = || RUNS.lock().unwrap_or_else(|e| e.into_inner());
    lock().insert(id, (Instant::now(), what));
    let out = run();
    lock().remove(&id);
    out
}

/// The schedulers every case runs on.
const SCHEDULERS: &[&str] = &["sim", "sim:rr", "sim:adversarial", "sim:random@5"];

/// The schedulers that also run the first cases in the ptx93 wording (judged in the oracle's
/// ptx93 edition): the behaviours where the wordings differ (`::2` dealloc and relinquish
/// waiting for the peer, mma→mma pipelining by kind) take the other branch there.
const PTX93_SCHEDULERS: &[&str] = &["sim:rr", "sim:adversarial"];

/// The first cases of the mixed stream that also run on `sim:exhaustive` (every schedule of
/// the random scheduler's choice points, up to 256 per case).
const EXHAUSTIVE_CASES: u64 = 40;

/// What a campaign of `cases` mixed cases (valid programs, near-misses, litmus members) saw
/// on `targets`.
#[derive(Debug, Default)]
struct Seen {
    /// `(case index, target, discrepancy)` for the first discrepancies (at most 20).
    discrepancies: Vec<(u64, String, diff::Discrepancy)>,
    /// All discrepancies.
    discrepant: u64,
    /// Judged cases (not skipped) over all targets.
    judged: u64,
    /// Cases the oracle judges (a run the spec defines) that the target did not run.
    not_run: u64,
    /// Case/target pairs.
    runs: u64,
    /// Runs that ended at the simulator's step bound (`Outcome::TimedOut`).
    timed_out: u64,
    /// `(case index, target, why)` of the cases the oracle judges that the simulator did not
    /// run for a reason it does not document for the case's program ([`documented_refusal`]).
    unexplained: Vec<(u64, String, String)>,
    /// The verdict counts per target, as the campaign report keeps them.
    counts: Vec<TargetCounts>,
}

fn campaign(targets: &[&str], cases: u64) -> Seen {
    campaign_in(&mixed(), Edition::Seeds, targets, cases, false)
}

/// The campaign's default stream: mixed cases of the default configuration.
fn mixed() -> Stream {
    Stream::new(tcgen05_generators::Config::default(), SEED, Mode::Mixed)
}

/// Valid programs of a wider launch than the default configuration's: two clusters of 2 or 4
/// CTAs (so peer and multicast operations name CTAs of a later cluster, whose ranks map to
/// other CTA indices, reference §2.5), up to 8 warps, and more called functions and early
/// exits (DEALLOC-EXIT-AFTER) than the default.
fn wide() -> Stream {
    let cfg = tcgen05_generators::Config {
        cluster_sizes: vec![2, 4],
        max_clusters: 2,
        max_warps: 8,
        call_pct: 40,
        exit_pct: 40,
        ..tcgen05_generators::Config::default()
    };
    Stream::new(cfg, SEED, Mode::Valid)
}

/// [`campaign`] over the first `cases` cases of `stream`, judged in the oracle's `edition`,
/// with the simulator in that edition's wording; with `fail_fast`, it stops at the end of the
/// first case with a discrepancy or a run at the simulator's step bound (a mutant that the
/// check catches then costs the cases up to that one, not the whole campaign).
fn campaign_in(
    stream: &Stream,
    edition: Edition,
    targets: &[&str],
    cases: u64,
    fail_fast: bool,
) -> Seen {
    let opts = tcgen05_oracle::Options {
        edition,
        ..tcgen05_oracle::Options::default()
    };
    let mut ts: Vec<Box<dyn Target>> = targets
        .iter()
        .map(|n| target::resolve_in(n, edition).expect("the simulator builds"))
        .collect();
    let mut seen = Seen {
        counts: ts
            .iter()
            .map(|t| TargetCounts::new(&t.name(), &t.version()))
            .collect(),
        ..Seen::default()
    };
    for i in 0..cases {
        let case = stream.case_at(i);
        let e = tcgen05_oracle::expect_with(&case.program, &opts);
        let layout = Layout::of(&case.program);
        for (k, t) in ts.iter_mut().enumerate() {
            let o = watched(format!("case {i} on {}", t.name()), || t.run(&case));
            seen.runs += 1;
            if matches!(o, Outcome::TimedOut { .. }) {
                seen.timed_out += 1;
            }
            let v = diff::compare_with_bound(&case.program, &layout, &e, &o, t.wait_bound());
            seen.counts[k].record(&v);
            match v {
                Verdict::Agree => seen.judged += 1,
                Verdict::Discrepancy(d) => {
                    seen.judged += 1;
                    seen.discrepant += 1;
                    if seen.discrepancies.len() < 20 {
                        seen.discrepancies.push((i, t.name(), d));
                    }
                }
                Verdict::Skip(SkipReason::TargetCannotRun(_)) => {
                    if let Outcome::NotRun(why) = &o
                        && diff::verdict_for_any_run(&e).is_none()
                    {
                        seen.not_run += 1;
                        if !documented_refusal(&case.program, why) {
                            seen.unexplained.push((i, t.name(), why.clone()));
                        }
                    }
                }
                Verdict::Skip(_) => {}
            }
        }
        if fail_fast && !seen.clean() {
            break;
        }
    }
    seen
}

impl Seen {
    /// No discrepancy and no run at the step bound so far.
    fn clean(&self) -> bool {
        self.discrepant == 0 && self.timed_out == 0 && self.unexplained.is_empty()
    }

    /// Adds the counts of another pass.
    fn add(&mut self, other: Seen) {
        self.discrepancies.extend(other.discrepancies);
        self.discrepant += other.discrepant;
        self.judged += other.judged;
        self.not_run += other.not_run;
        self.runs += other.runs;
        self.timed_out += other.timed_out;
        self.unexplained.extend(other.unexplained);
        self.counts.extend(other.counts);
    }
}

/// Whether the simulator documents that it does not run `p` for the reason `why`, recomputed
/// from the program: the only refusal that programs of these streams meet is a `tcgen05.cp`
/// with a swizzled or out-of-range source descriptor (sim/src/lib.rs, "Concrete behaviours",
/// cp source layout); the MMA forms it models (sim/src/mma) cover the builder's.
fn documented_refusal(p: &Program, why: &str) -> bool {
    let mut cp_refused = false;
    p.walk(&mut |s| {
        if let Stmt::Tc(Op::Cp { src, .. }) = s
            && (src.swizzle != 0 || usize::from(src.region) >= p.smem.regions.len())
        {
            cp_refused = true;
        }
    });
    cp_refused && why.contains("swizzled or out-of-range cp descriptors")
}

fn list(seen: &Seen) -> String {
    seen.discrepancies
        .iter()
        .map(|(i, t, d)| format!("\n  case {i} on {t}: {} ({})", d.kind.as_str(), d.detail))
        .collect()
}

/// The mutation test, in passes that each stop at the first case with a discrepancy:
/// 3,000 cases of the campaign's mixed stream on four schedulers; the first 1,000 again on two
/// schedulers in the ptx93 wording and edition; the first 40 on `sim:exhaustive`; 500 valid
/// programs of a wider launch ([`wide`]) on two schedulers. No discrepancy, and the simulator
/// runs the cases the oracle judges (a mutant that makes it refuse them, "not run", would hide
/// behind the skip).
#[test]
#[ignore = "a fixed-seed campaign of 3,000 cases x 4 schedulers and more (about 10 s in the mutants profile); scripts/mutants runs it"]
fn a_fixed_seed_campaign_on_every_scheduler_has_no_discrepancy() {
    let cases = std::env::var("TCGEN05_MUTANTS_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    let mut seen = campaign_in(&mixed(), Edition::Seeds, SCHEDULERS, cases, true);
    if seen.clean() {
        seen.add(campaign_in(
            &mixed(),
            Edition::Ptx93,
            PTX93_SCHEDULERS,
            cases / 3,
            true,
        ));
    }
    if seen.clean() {
        seen.add(campaign_in(
            &mixed(),
            Edition::Seeds,
            &["sim:exhaustive"],
            EXHAUSTIVE_CASES,
            true,
        ));
    }
    if seen.clean() {
        seen.add(campaign_in(
            &wide(),
            Edition::Seeds,
            PTX93_SCHEDULERS,
            cases / 6,
            true,
        ));
    }
    for t in &seen.counts {
        eprintln!(
            "{}: {} cases, {} agree, {} discrepancies, skips {:?}",
            t.target,
            t.cases,
            t.agree,
            t.discrepant(),
            t.skip
        );
    }
    assert_eq!(
        seen.discrepant,
        0,
        "{} discrepancies:{}",
        seen.discrepant,
        list(&seen)
    );
    // The simulator reports a deadlock as `Hung` when every live warp is blocked and no
    // asynchronous operation can perform (sim/src/lib.rs, "Blocking and deadlock"); its step
    // bound (4,000,000 steps) is far above any case of this stream. A time-out, which compare
    // skips as a hardware watchdog's view of a hang, means the simulator spun instead.
    assert_eq!(
        seen.timed_out, 0,
        "{} runs reached the simulator's step bound",
        seen.timed_out
    );
    assert!(
        seen.unexplained.is_empty(),
        "the simulator did not run judged cases for reasons it does not document: {:?}",
        seen.unexplained
    );
    // The simulator documents the forms it does not run (sim/src/lib.rs, "Concrete
    // behaviours": swizzled cp, mma forms outside its model); they are a few percent of the
    // judged cases of this stream at most.
    assert!(
        seen.not_run * 20 <= seen.runs,
        "the simulator did not run {} of {} judged runs",
        seen.not_run,
        seen.runs
    );
    // And the check judges most cases at all (a campaign of skips proves nothing).
    assert!(
        seen.judged * 2 >= seen.runs,
        "only {} of {} runs judged",
        seen.judged,
        seen.runs
    );
}

/// The litmus member `pipelined-same-thread/mma-mma` (two MMAs of one thread on one
/// accumulator, the second accumulating, then commit and a wait) with the second MMA of
/// `kind::f8f6f4` (e4m3 A and B: the same 32-byte rows read as bytes, exact products;
/// §9.7.16.10.1 formats) instead of `kind::f16`, and D and its lds 32 columns further (from
/// column 32 of the allocation, where the member and the builder start D at column 0);
/// without the second MMA when `first_only`.
fn mma_pair_of_two_kinds(first_only: bool) -> Case {
    let stream = Stream::new(
        tcgen05_generators::Config::default(),
        SEED,
        Mode::Family(
            tcgen05_generators::litmus::FAMILIES
                .iter()
                .find(|f| f.name == "pipelined-same-thread")
                .expect("the family exists"),
        ),
    );
    let mut case = (0..16)
        .map(|i| stream.case_at(i))
        .find(|c| c.provenance.family.as_deref() == Some("pipelined-same-thread/mma-mma"))
        .expect("the member exists");
    let mut found = 0;
    for s in &mut case.program.warps[0] {
        if let Stmt::If { then, .. } = s
            && let Some(at) = then
                .iter()
                .enumerate()
                .filter(|(_, s)| matches!(s, Stmt::Tc(Op::Mma(_))))
                .map(|(i, _)| i)
                .nth(1)
        {
            found += 1;
            if first_only {
                then.remove(at);
            } else if let Stmt::Tc(Op::Mma(m)) = &mut then[at] {
                m.form.kind = MmaKind::F8f6f4;
            }
        }
    }
    assert_eq!(found, 1, "one block of warp 0 issues the two MMAs");
    // N = 32 columns of D from column 32 stay inside the member's 128-column allocation.
    for warp in &mut case.program.warps {
        for s in warp.iter_mut() {
            match s {
                Stmt::Tc(Op::Ld { taddr, .. }) => taddr.col += 32,
                Stmt::If { then, .. } => {
                    for s in then.iter_mut() {
                        if let Stmt::Tc(Op::Mma(m)) = s {
                            m.d.col += 32;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    case
}

/// MCM-PIPE-MMA-MMA (reference §4.2) in the seeds wording: two MMAs of one thread on the same
/// accumulator and shape are pipelined whatever their kinds (the ptx93 text also asks for the
/// same kind, OQ-27). The generators' accumulating MMAs keep the first one's kind, and their
/// D starts at TMEM column 0, so this targeted case runs one MMA of each kind with D from
/// column 32 on every scheduler; the adversarial one performs the newest eligible operation
/// first, so a simulator that does not order the pair shows the first MMA's words.
#[test]
fn an_mma_pair_of_two_kinds_on_one_accumulator_is_ordered_in_the_seeds_wording() {
    let case = mma_pair_of_two_kinds(false);
    let e = tcgen05_oracle::expect(&case.program);
    assert!(e.is_well_formed(), "{:?}", e.violations);
    // Every record is exact but the bounded mbarrier waits' (completed, or gave up: their
    // rules are the commit's).
    let inexact: Vec<_> = e
        .obs
        .iter()
        .filter(|o| {
            o.has_inexact()
                && !o
                    .rules
                    .iter()
                    .all(|r| matches!(r, RuleId::CommitArrive | RuleId::CommitTrack))
        })
        .collect();
    assert!(
        inexact.is_empty() && e.obs.iter().filter(|o| !o.has_inexact()).count() >= 2,
        "the oracle judges the lds of D exactly: {inexact:#?}"
    );
    // Performed newest first, the accumulating MMA comes before the one that overwrites D,
    // which leaves the first MMA's words: the case tells them apart.
    let first = tcgen05_oracle::expect(&mma_pair_of_two_kinds(true).program);
    assert_ne!(e.obs, first.obs, "the second MMA changes the words");
    let layout = Layout::of(&case.program);
    for name in SCHEDULERS {
        let mut t = target::resolve(name).expect("the simulator builds");
        let o = t.run(&case);
        let v = diff::compare_with_bound(&case.program, &layout, &e, &o, t.wait_bound());
        assert_eq!(v, Verdict::Agree, "{name}");
    }
}

/// The simulator refuses the instruction descriptors it does not model, as its documentation
/// says (`sim/src/mma/mod.rs`: every other form is `NotRun`), rather than running them as if
/// the bits were 0: transposed (MN-major) A or B (idesc bits 15-16, §9.7.16.4.2; their
/// shared-memory layouts are given only as figures, OQ-29), and on a non-`.ws` MMA the
/// bits 30-31 that only `.ws` defines (max B-reuse shift, reference §2.8 layout (a)). Those
/// words would be wrong, and the oracle, which leaves such results open, could not tell.
#[test]
fn the_simulator_refuses_descriptors_it_does_not_model() {
    for bit in [15, 16, 30, 31] {
        let mut case = mma_pair_of_two_kinds(true);
        let mut n = 0;
        for warp in &mut case.program.warps {
            for s in warp.iter_mut() {
                if let Stmt::If { then, .. } = s {
                    for s in then.iter_mut() {
                        if let Stmt::Tc(Op::Mma(m)) = s
                            && !m.form.ws
                        {
                            m.idesc |= 1 << bit;
                            n += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(n, 1, "the case has one MMA, not .ws");
        for name in SCHEDULERS {
            let mut t = target::resolve(name).expect("the simulator builds");
            match watched(format!("idesc bit {bit} on {name}"), || t.run(&case)) {
                Outcome::NotRun(why) => assert!(why.contains("descriptors"), "{name}: {why}"),
                o => panic!("{name} ran an MMA with idesc bit {bit} set: {o:?}"),
            }
        }
    }
}

/// A named predicate on programs.
type Form = (&'static str, fn(&Program) -> bool);

/// The MMA forms the builder makes so that the simulator's MMA paths are observed (the
/// survivors of docs/mutants.md), each a predicate on a program.
const MMA_FORMS: &[Form] = &[
    // MMA-SHAPE-VALID's largest N (§2.7 table).
    ("N = 256", |p| {
        mmas(p).iter().any(|m| mma_n(m) == 256 && dense(m))
    }),
    // idesc bits 13-14 (§2.8 layout (a)).
    ("negated A or B", |p| {
        mmas(p).iter().any(|m| m.idesc >> 13 & 3 != 0 && dense(m))
    }),
    // `[a-tmem]` cells an earlier MMA of the thread wrote (§9.7.16.10).
    ("A = an earlier MMA's D", |p| {
        let ms = mmas(p);
        ms.iter().enumerate().any(
            |(i, m)| matches!(m.a, tcgen05_ir::MmaA::Tmem(t) if ms[..i].iter().any(|e| e.d == t)),
        )
    }),
    // One accumulator under 48 or more MMAs (MCM-PIPE-MMA-MMA).
    ("an MMA in a loop of 48 or more", |p| {
        let mut found = false;
        p.walk(&mut |s| {
            if let Stmt::Loop { count, body } = s
                && *count >= 48
                && body.iter().any(|s| matches!(s, Stmt::Tc(Op::Mma(_))))
            {
                found = true;
            }
        });
        found
    }),
    // D from a column other than the allocation's first.
    ("D off column 0", |p| {
        mmas(p).last().is_some_and(|m| m.d.col != 0)
    }),
    // A st into the columns of a dense MMA's D (read back by the same warp's ld).
    ("a st inside an MMA's D", |p| {
        let ms = mmas(p);
        let mut found = false;
        p.walk(&mut |s| {
            if let Stmt::Tc(Op::St { taddr, .. }) = s
                && ms.iter().any(|m| {
                    dense(m)
                        && m.d.base == taddr.base
                        && (m.d.col..m.d.col + mma_n(m) as u16).contains(&taddr.col)
                })
            {
                found = true;
            }
        });
        found
    }),
];

/// The MMAs of `p` in program order.
fn mmas(p: &Program) -> Vec<tcgen05_ir::Mma> {
    let mut out = Vec::new();
    p.walk(&mut |s| {
        if let Stmt::Tc(Op::Mma(m)) = s {
            out.push((**m).clone());
        }
    });
    out
}

/// N of an MMA's instruction descriptor (bits 17-22, N >> 3).
fn mma_n(m: &tcgen05_ir::Mma) -> u32 {
    (m.idesc >> 17 & 0x3F) << 3
}

/// Neither sparse nor block-scaled (the forms whose values the simulator and the oracle
/// compute).
fn dense(m: &tcgen05_ir::Mma) -> bool {
    !m.form.sp && !m.form.block_scale
}

/// Every MMA form of [`MMA_FORMS`] occurs in the mutation test's stream, and the oracle
/// judges every record of some such case exactly (so the simulator's words are compared
/// word for word, and a wrong one is a discrepancy): the bounded mbarrier waits aside, whose
/// rules are the commit's.
#[test]
fn the_builders_mma_forms_are_judged_exactly() {
    let stream = mixed();
    let mut seen = vec![(0u32, 0u32); MMA_FORMS.len()];
    for i in 0..3000 {
        let case = stream.case_at(i);
        let hits: Vec<usize> = (0..MMA_FORMS.len())
            .filter(|&k| (MMA_FORMS[k].1)(&case.program))
            .collect();
        if hits.is_empty() {
            continue;
        }
        let e = tcgen05_oracle::expect(&case.program);
        let exact = e.is_well_formed()
            && e.obs.iter().all(|o| {
                !o.has_inexact()
                    || o.rules
                        .iter()
                        .all(|r| matches!(r, RuleId::CommitArrive | RuleId::CommitTrack))
            });
        for k in hits {
            seen[k].0 += 1;
            seen[k].1 += u32::from(exact);
        }
    }
    let missing: Vec<String> = MMA_FORMS
        .iter()
        .zip(&seen)
        .filter(|(_, (_, exact))| *exact == 0)
        .map(|((name, _), (cases, _))| format!("{name}: {cases} cases, none exact"))
        .collect();
    eprintln!("(cases with the form, cases judged exactly): {seen:?}");
    assert!(missing.is_empty(), "{missing:?} (all: {seen:?})");
}

/// Positive controls for the fault injection (`sim/src/faults.rs`): every planted fault is
/// found within the first 2,000 valid programs of seed 1 on `sim+<fault>` or
/// `sim:adversarial+<fault>` (the fault table of drivers/README.md finds each within 815), so a
/// change that disarms a fault's hook in the simulator fails here.
#[test]
fn every_injected_fault_is_found() {
    let stream = Stream::new(tcgen05_generators::Config::default(), 1, Mode::Valid);
    let mut missed = Vec::new();
    for f in tcgen05_drivers::sim::faults::Fault::ALL {
        let targets = [
            format!("sim+{}", f.name()),
            format!("sim:adversarial+{}", f.name()),
        ];
        let names: Vec<&str> = targets.iter().map(String::as_str).collect();
        let seen = campaign_in(&stream, Edition::Seeds, &names, 2000, true);
        if seen.discrepant == 0 {
            missed.push(f.name());
        }
    }
    assert!(missed.is_empty(), "faults not found: {missed:?}");
}

/// Positive control, and strict compare end to end: a simulator that loses a commit's
/// mbarrier arrive (`commit-lost-arrive`) lets a bounded wait give up where the oracle says
/// every arrive happens; the fair simulator's give-up is a discrepancy, not a skip.
#[test]
fn a_lost_commit_arrive_is_a_discrepancy() {
    let seen = campaign(&["sim:adversarial+commit-lost-arrive"], 200);
    let (i, _, d) = seen
        .discrepancies
        .iter()
        .find(|(_, _, d)| d.kind == DiscrepancyKind::WaitGaveUpWhereArriveRequired)
        .unwrap_or_else(|| panic!("no wait-gave-up discrepancy in 200 cases:{}", list(&seen)));
    assert_eq!(d.forms, vec!["mbarrier.try_wait".to_string()]);
    let case = mixed().case_at(*i);
    let mut t = target::resolve("sim:adversarial+commit-lost-arrive").expect("builds");
    // The same outcome on a watchdog-bounded target (hardware) stays a skip.
    let e = tcgen05_oracle::expect(&case.program);
    let o = t.run(&case);
    assert_eq!(
        diff::compare_bounded(&case.program, &e, &o, diff::WaitBound::Watchdog),
        Verdict::Skip(SkipReason::WaitGaveUp)
    );
    // The real simulator agrees on the case (its minimization: engine/tests/minimize.rs).
    let mut good = target::resolve("sim:adversarial").expect("builds");
    let o = good.run(&case);
    assert_eq!(diff::compare(&case.program, &e, &o), Verdict::Agree);
}
