//! The minimizer: a builder of smaller candidates plus a predicate (after
//! wasm-shrink).
//!
//! [`minimize`] keeps a current case and tries candidates in a fixed order of passes, each
//! making the program smaller or simpler:
//!
//! 1. the cluster shape declared in the PTX where the launch has clusters (so that `check`
//!    on the minimized PTX sees the CTA pairs); fewer clusters, then CTAs per cluster toward 1;
//! 2. fewer warps: drop one warp's code, or move one warp's code into another's, leaving it
//!    empty; where both warps meet the same barriers, phase by phase (each statement stays
//!    between the same two barriers), otherwise before or after the other's code
//!    (`steps.rs`);
//! 3. groups of related statements that only go together without breaking a rule
//!    (`groups.rs`): an allocation with its deallocs and slot reads (then with every access of
//!    it), an mbarrier with its init, arrives, commits and waits, every relinquish, a barrier
//!    round (the k-th `barrier.sync`, or the k-th cluster arrive and wait, of every code body)
//!    with the tcgen05 fences around it, then without;
//! 4. fewer statements: delta debugging over every statement (chunks of half, a quarter, ...,
//!    one statement), children included;
//! 5. unwrap: an `If` replaced by its `then` or `els` statements, a `Loop` by its body, loop
//!    counts toward 1, unused functions dropped;
//! 6. schedule knobs: spins removed;
//! 7. operands (`operands.rs`): every `.cta_group::2` made `::1` (then in a one-CTA cluster);
//!    one shared-memory operand made to read another operand's region or descriptor, an
//!    mma's A from TMEM replaced by a descriptor, so the fills and copies that fed only it
//!    can go (only toward more sharing, so the step ends); a block-scaled `mxf8f6f4` mma made
//!    the unscaled `f8f6f4` one, and an mma's two scale-factor addresses made one, so the
//!    copies and fills of scale factors can go; every nCols toward 32 (all occurrences of one
//!    value at once, so alloc and dealloc stay matched, never below a column the program
//!    addresses), ld/st shapes toward `.32x32b.x1`.
//!
//! A candidate is kept when the predicate holds: it breaks no rule the original does not break
//! (by the oracle's static and run verdicts, [`broken_rules`]: a minimized program frees what it
//! allocates and waits where it must, unless the original did not; and by the path analysis of
//! `tcgen05-fuzz check` on its PTX, `paths.rs`: it keeps the fences and the cluster barrier
//! the original had where `check` asks for them), and the same target still
//! gives a discrepancy with the same [`Signature`] ([`crate::judge`]); a candidate whose every
//! run outcome gets one verdict (ill-formed, undefined) is not run for a discrepancy that a
//! run outcome shows (`from_a_run`), since no run can show it. On a target whose
//! schedule comes from the case's seed (the simulator's random scheduler without `@seed`), a
//! candidate that loses the discrepancy under the current seed is also tried under
//! [`RESEEDS`] other seeds, derived from the current one: a smaller program shifts every
//! later random choice, and the bug it shows usually needs only some schedule, not that one.
//! Candidates already tried are skipped (by hash). Each pass is repeated while it keeps a
//! candidate, going on after a kept one from the same index of the smaller program's
//! candidates, not from the first: delta debugging then goes on at about the same chunk size
//! and place instead of from halves of the program again (the candidates before that index
//! are tried in the next round of all passes). On the 72 simulator minimizations of
//! [`SIM_JUDGED_PER_SECOND`] this judged 7,339 candidates instead of 13,254 (-45%; most in
//! one minimization 319 instead of 1,061, 90th percentile 184 instead of 322), to the same
//! minimized sizes in 71 and a smaller one in 1 (40 instructions to 33). The search is
//! deterministic, reports each new smallest case through a callback, and stops at a fixed
//! point (a round of every pass from its first candidate that keeps nothing) or when the
//! [`Budget`] is spent (a fixed time, or one scaled to the target's cost per candidate,
//! `budget.rs`). Every pass either makes the program smaller by a measure that cannot decrease
//! forever (statements, CTAs, warps, `::2` and block-scaled instructions, operands not yet
//! shared, nCols, shapes) or moves code between warps, of which there are finitely many
//! arrangements, each tried once; so a fixed point is always reached. [`Profile`] tells where
//! the time went.

pub mod batched;
mod budget;
mod groups;
mod operands;
mod paths;
mod steps;
mod tree;

use crate::judge;
pub use budget::{Budget, DEFAULT_CAP, SIM_JUDGED_PER_SECOND};
use groups::{drop_barrier_rounds, drop_resources};
use operands::{
    densify_mmas, share_operands, share_scales, simplify_ncols, simplify_shapes, single_cta_group,
    unscale_mmas,
};
use std::collections::{BTreeSet, HashSet};
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::time::{Duration, Instant};
use steps::{
    declare_cluster, drop_spins, drop_statements, drop_warps, merge_warps, shrink_grid, unwrap,
};
use tcgen05_drivers::diff::Signature;
use tcgen05_drivers::target::Target;
use tcgen05_ir::{Case, Program, RuleId, Stmt};
use tcgen05_oracle::{Expected, Options};

/// Why minimization could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MinimizeError {
    /// The input case does not show a discrepancy on this target.
    NotInteresting(String),
}

impl std::fmt::Display for MinimizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MinimizeError::NotInteresting(why) => write!(f, "the case is not interesting: {why}"),
        }
    }
}

impl std::error::Error for MinimizeError {}

/// The result of a minimization.
#[derive(Debug, Clone)]
pub struct Minimized {
    /// The smallest case found.
    pub case: Case,
    /// The signature it keeps: the original's, or the same discrepancy under a sharper rule
    /// found on a smaller program ([`Signature::sharpens`]).
    pub signature: Signature,
    /// Candidates tried.
    pub tries: u64,
    /// Of those, candidates dropped without running because they break a rule the original
    /// does not ([`broken_rules`], or `check`'s path analysis of their PTX), or because no run
    /// of them can show the discrepancy (an ill-formed or undefined program, for a
    /// discrepancy of a run outcome).
    pub rejected: u64,
    /// Size ([`Program::size`]) before and after.
    pub sizes: (usize, usize),
    /// Whether the budget ran out (or its stop flag was set) before a fixed point.
    pub timed_out: bool,
    /// How long it ran.
    pub time: Duration,
    /// Where the time went, pass by pass.
    pub profile: Profile,
}

/// Where a minimization's time went: per pass, and over all candidates the oracle's
/// expectation and the target's run with the comparison.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// Per pass, in the order the passes are tried: its name and statistics.
    pub passes: Vec<(&'static str, PassStats)>,
    /// Time in the oracle's expectation of candidates.
    pub expect: Duration,
    /// Time in the target's runs and the comparisons (all seeds tried).
    pub judge: Duration,
}

/// One pass's share of a minimization.
#[derive(Debug, Clone, Copy, Default)]
pub struct PassStats {
    /// Candidates judged (not counting those skipped as already seen).
    pub tries: u64,
    /// Of those, dropped without running (the rule check, or no run can show the discrepancy).
    pub rejected: u64,
    /// Candidates kept.
    pub kept: u64,
    /// Time spent, making and judging candidates.
    pub time: Duration,
}

/// The rules a program breaks by the oracle's verdicts on it ([`Expected::broken_rules`]).
pub fn broken_rules(e: &Expected) -> BTreeSet<RuleId> {
    e.broken_rules()
}

/// Minimizes `case` on `target` while its discrepancy signature stays the same (or its rule
/// becomes sharper, [`Signature::sharpens`]); `budget` (a [`Budget`], or a `Duration` for a
/// fixed one) bounds the time; `on_smaller` sees each new smallest case.
pub fn minimize<'b>(
    case: &Case,
    target: &mut dyn Target,
    opts: &Options,
    budget: impl Into<Budget<'b>>,
    on_smaller: &mut dyn FnMut(&Case),
) -> Result<Minimized, MinimizeError> {
    let budget = budget.into();
    let Some(mut signature) = judge::signature_of(case, opts, target) else {
        return Err(MinimizeError::NotInteresting(format!(
            "no discrepancy on `{}`",
            target.name()
        )));
    };
    let start = Instant::now();
    let allowed = broken_rules(&tcgen05_oracle::expect_with(&case.program, opts));
    let allowed_paths = paths::allowed_by_check(&case.program);
    let mut rejected = 0u64;
    let mut cur = case.clone();
    let mut seen: HashSet<u64> = HashSet::new();
    seen.insert(hash(&cur.program));
    let mut tries = 0u64;
    let mut timed_out = false;
    let reseed = seeded_by_case(&target.name());
    let mut profile = Profile {
        passes: PASSES
            .iter()
            .map(|(n, _)| (*n, PassStats::default()))
            .collect(),
        ..Profile::default()
    };
    'outer: loop {
        let mut progressed = false;
        for (pass_index, (_, pass)) in PASSES.iter().enumerate() {
            let pass_start = Instant::now();
            let stats = &mut profile.passes[pass_index].1;
            // After a kept candidate the pass goes on from the same place in the smaller
            // program's list (module documentation); the candidates before it are tried again
            // in the next round of all passes.
            let mut from = 0;
            loop {
                let cands = pass(&cur.program);
                let mut took = false;
                for (index, p) in cands.into_iter().enumerate().skip(from) {
                    if budget.spent(start.elapsed(), tries - rejected) {
                        timed_out = true;
                        stats.time += pass_start.elapsed();
                        break 'outer;
                    }
                    if !seen.insert(hash(&p)) {
                        continue;
                    }
                    tries += 1;
                    stats.tries += 1;
                    // A smaller program that breaks a rule the original kept (drops the
                    // dealloc, a wait, a barrier) would be handed on as a reproducer of that
                    // other mistake too: never kept, and never run.
                    let t = Instant::now();
                    let expected = Rc::new(tcgen05_oracle::expect_with(&p, opts));
                    profile.expect += t.elapsed();
                    // Nor is one whose every run outcome gets the same verdict (ill-formed,
                    // undefined): no run of it can show a run outcome's discrepancy.
                    if !broken_rules(&expected).is_subset(&allowed)
                        || !paths::check_rules(&p).is_subset(&allowed_paths)
                        || (from_a_run(signature.kind)
                            && tcgen05_drivers::diff::verdict_for_any_run(&expected).is_some())
                    {
                        rejected += 1;
                        stats.rejected += 1;
                        continue;
                    }
                    let mut cand = Case {
                        program: p,
                        intent: cur.intent.clone(),
                        provenance: cur.provenance.clone(),
                    };
                    let seed = cur.provenance.seed.unwrap_or(0);
                    let seeds = if reseed { RESEEDS } else { 0 };
                    // The same signature, or the same discrepancy filed under a sharper
                    // rule (`Signature::sharpens`), which is kept from then on.
                    let mut sharper = None;
                    let t = Instant::now();
                    let found = (0..=seeds).any(|k| {
                        if k > 0 {
                            cand.provenance.seed = Some(reseeded(seed, k));
                        }
                        match judge::judge_against(&cand, Rc::clone(&expected), target).signature()
                        {
                            Some(s) if *s == signature => true,
                            Some(s) if s.sharpens(&signature) => {
                                sharper = Some(s.clone());
                                true
                            }
                            _ => false,
                        }
                    });
                    profile.judge += t.elapsed();
                    if found {
                        if let Some(s) = sharper {
                            signature = s;
                        }
                        cur = cand;
                        on_smaller(&cur);
                        stats.kept += 1;
                        took = true;
                        from = index;
                        progressed = true;
                        break;
                    }
                }
                if !took {
                    break;
                }
            }
            stats.time += pass_start.elapsed();
        }
        if !progressed {
            break;
        }
    }
    let sizes = (case.program.size(), cur.program.size());
    Ok(Minimized {
        case: cur,
        signature,
        tries,
        rejected,
        sizes,
        timed_out,
        time: start.elapsed(),
        profile,
    })
}

/// Whether a discrepancy of `kind` comes only from a run outcome (hung, trapped, faulted,
/// leaked, completed): by the table of `tcgen05_drivers::diff`, a program with a static
/// violation or an undefined or unjudged run ([`tcgen05_drivers::diff::verdict_for_any_run`])
/// is skipped whatever it ran to, so a candidate of that kind need not run. The compile
/// kinds (accepted, rejected, the tool crashed or timed out) come from outcomes that program
/// may still give. The candidates it skips are never kept, so the search is the same, only
/// cheaper: the 72 simulator minimizations of [`SIM_JUDGED_PER_SECOND`] judged 14% fewer
/// candidates with it (measured with passes restarted from their first candidate after a
/// kept one).
fn from_a_run(kind: tcgen05_drivers::diff::DiscrepancyKind) -> bool {
    use tcgen05_drivers::diff::DiscrepancyKind as K;
    match kind {
        K::ValueOutsideAllowed
        | K::HangWhereCompletionRequired
        | K::CompletionWhereDeadlockRequired
        | K::LeakOnDefined
        | K::TrapOnDefined
        | K::WaitGaveUpWhereArriveRequired => true,
        K::IllFormedAccepted | K::WellFormedRejected | K::TargetCrash | K::TargetTimeout => false,
    }
}

/// Other seeds a candidate is tried under when the target's schedule follows the case's seed.
pub const RESEEDS: u64 = 7;

/// Whether `target`'s schedule comes from the case's seed: the simulator's random scheduler
/// without an `@seed` (`sim`, `sim:random`, with any faults or wording).
fn seeded_by_case(target: &str) -> bool {
    matches!(
        tcgen05_drivers::sim::SimConfig::parse(target),
        Some(Ok(c)) if c.sched == tcgen05_drivers::sim::Sched::Random(None)
    )
}

/// The k-th other seed of `seed` (SplitMix64's increment: distinct, deterministic).
fn reseeded(seed: u64, k: u64) -> u64 {
    seed.wrapping_add(k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

fn hash(p: &Program) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    p.hash(&mut h);
    h.finish()
}

type Pass = fn(&Program) -> Vec<Program>;

/// The passes, in the order they are tried, with their names (for [`Profile`]).
const PASSES: &[(&str, Pass)] = &[
    ("declare_cluster", declare_cluster),
    ("shrink_grid", shrink_grid),
    ("drop_warps", drop_warps),
    ("merge_warps", merge_warps),
    ("drop_resources", drop_resources),
    ("drop_barrier_rounds", drop_barrier_rounds),
    ("drop_statements", drop_statements),
    ("unwrap", unwrap),
    ("drop_spins", drop_spins),
    ("single_cta_group", single_cta_group),
    ("share_operands", share_operands),
    ("densify_mmas", densify_mmas),
    ("unscale_mmas", unscale_mmas),
    ("share_scales", share_scales),
    ("simplify_ncols", simplify_ncols),
    ("simplify_shapes", simplify_shapes),
];

/// The size measure of the fault table: statements, not counting the `If` and `Loop`
/// wrappers themselves (their bodies count), i.e. the instructions a program executes
/// besides control flow.
pub fn instructions(p: &Program) -> usize {
    let mut n = 0;
    p.walk(&mut |s| n += usize::from(!matches!(s, Stmt::If { .. } | Stmt::Loop { .. })));
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_case_seeded_scheduler_is_reseeded() {
        assert!(seeded_by_case("sim"));
        assert!(seeded_by_case("sim+fence-noop"));
        assert!(!seeded_by_case("sim:random@4"));
        assert!(!seeded_by_case("sim:adversarial+fence-noop"));
        assert!(!seeded_by_case("ptxas@13.5"));
        let s: HashSet<u64> = (0..=RESEEDS).map(|k| reseeded(7, k)).collect();
        assert_eq!(s.len(), RESEEDS as usize + 1);
        assert_eq!(reseeded(7, 0), 7);
    }
}
