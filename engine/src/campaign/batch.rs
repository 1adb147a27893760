//! The judging of a worker's claim: the claim's cases on each running target in order
//! (`Target::run_repeated_batch`), a batch of [`COMPILE_ONLY_BATCH`] cases per compile-only
//! target (`Target::run_batch`), each case judged by [`crate::judge::rule`]; and the size of a
//! claim under a `--time` limit.

use crate::expectations::Expectations;
use crate::judge;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tcgen05_drivers::diff::{self, Signature, Verdict};
use tcgen05_drivers::outcome::Outcome as TargetOutcome;
use tcgen05_drivers::report::{self, RuleSet, WordCounts, coverage::rules_exercised};
use tcgen05_drivers::target::{Observed, Target, TargetKind};
use tcgen05_generators::behaviours::{self, BSet};
use tcgen05_ir::Case;
use tcgen05_ir::observe::Layout;

/// Runs one case on every target: the verdicts, in target order, the rules it exercised and
/// the words of its records (`WordCounts::of`: valid, race-free programs only) ([`judge_batch`]
/// of one case: every target runs it with `Target::run`).
pub fn judge(
    case: &Case,
    targets: &mut [Box<dyn Target>],
    oracle: &mut Expectations,
) -> (Vec<Verdict>, RuleSet, Option<WordCounts>) {
    judge_batch(std::slice::from_ref(case), targets, oracle)
        .pop()
        .expect("one judgement per case")
}

/// Cases a worker claims at once when one of its targets is compile-only: those targets judge
/// them through [`Target::run_batch`] (ptxas: one process per batch instead of one per case,
/// docs/ptxas.md). ptxas can merge only cases of the same `.version` and `.target`, and the mixed
/// stream has about a dozen such headers, so a claim of 32 gives groups of about three. 128:
/// 512 mixed cases on ptxas 13.5 took 22.5 s of CPU one process per case, 14.7 s with claims
/// of 32 and 12.7 s with claims of 128 (docs/ptxas.md, "Campaigns"). Under `--time` the claim
/// shrinks near the end ([`claim_within`]).
pub const COMPILE_ONLY_BATCH: u64 = 128;

/// Cases a worker claims at once for these targets: [`COMPILE_ONLY_BATCH`] when one of them is
/// compile-only, else the largest [`Target::pipeline_depth`] (1 for the simulator: one case at
/// a time keeps `--time` and Ctrl-C prompt; more for the hardware targets, which compile a
/// case while the one before it runs, `Target::run_repeated_batch`).
pub fn claim_size(targets: &[Box<dyn Target>]) -> u64 {
    if targets.iter().any(|t| t.kind() == TargetKind::CompileOnly) {
        COMPILE_ONLY_BATCH
    } else {
        targets
            .iter()
            .map(|t| t.pipeline_depth())
            .max()
            .unwrap_or(1)
            .max(1)
    }
}

/// The first claim of a worker under `--time`, before it knows what a case costs: a probe.
/// A whole [`COMPILE_ONLY_BATCH`] on ptxas takes seconds, so `--time 1s` ran for 7 s when the
/// first claim was a whole batch.
pub const PROBE_CLAIM: u64 = 1;

/// The claim a worker takes with `left` of a `--time` limit to go, having spent `per_case` on
/// each case of its last claim: no more cases than fit in the time left (at least one), so
/// that a batch overruns the limit by about one case's time, not by a whole batch. Under a
/// time limit with no claim timed yet, [`PROBE_CLAIM`] cases.
pub fn claim_within(claim: u64, left: Option<Duration>, per_case: Option<Duration>) -> u64 {
    match (left, per_case) {
        (Some(left), Some(c)) if !c.is_zero() => {
            let fit = (left.as_secs_f64() / c.as_secs_f64()).ceil();
            (fit as u64).clamp(1, claim)
        }
        (Some(_), None) => claim.min(PROBE_CLAIM),
        _ => claim,
    }
}

/// [`judge`] for many cases at once: the same verdicts and rules, per case in order, but each
/// compile-only target judges all the cases in one [`Target::run_batch`] call; the other
/// targets run them one by one. A target that only runs programs ([`Target::only_runs`]) does
/// not run a case whose verdict no run outcome can change ([`diff::verdict_for_any_run`]:
/// ill-formed programs, undefined runs); the case gets that verdict.
pub fn judge_batch(
    cases: &[Case],
    targets: &mut [Box<dyn Target>],
    oracle: &mut Expectations,
) -> Vec<(Vec<Verdict>, RuleSet, Option<WordCounts>)> {
    static NEVER: AtomicBool = AtomicBool::new(false);
    judge_batch_observed(cases, targets, oracle, &NEVER)
        .into_iter()
        .map(|j| (j.verdicts, j.rules, j.words))
        .collect()
}

/// One case's judgement ([`judge_batch_observed`]).
#[derive(Debug, Clone)]
pub struct Judged {
    /// The verdicts, in target order.
    pub verdicts: Vec<Verdict>,
    /// The signatures of the discrepancies among them, in target order (`None` for the other
    /// verdicts).
    pub signatures: Vec<Option<Signature>>,
    /// The rules it exercised.
    pub rules: RuleSet,
    /// The words of its observation records by what the oracle expected of them
    /// (`WordCounts::of`: valid, race-free programs only).
    pub words: Option<WordCounts>,
    /// The behaviours of the inventory it exercised (`tcgen05_generators::behaviours`).
    pub exercised: BSet,
    /// Of those, the ones whose written words its observation records hold.
    pub watched: BSet,
    /// Of those, the ones whose written words the oracle expects exactly.
    pub observed: BSet,
    /// Per target that ran the case more than once (`--runs`): its distinct outcomes and,
    /// for each, whether the spec forbids it (for `runs.md`).
    pub runs: Vec<Option<(Vec<Observed>, Vec<bool>)>>,
    /// Per target: the reason it does not compute some MMA results of the case and the
    /// observed words left out of its compare for it (`judge::expected_for`).
    pub not_emulated: Vec<Option<(String, u64)>>,
}

/// [`judge_batch`], with the signatures of the discrepancies and the behaviours each case
/// exercised and observed exactly. Once `stop` is set the targets not yet run answer "not run"
/// (the caller abandons the whole claim).
pub fn judge_batch_observed(
    cases: &[Case],
    targets: &mut [Box<dyn Target>],
    oracle: &mut Expectations,
    stop: &AtomicBool,
) -> Vec<Judged> {
    let expected: Vec<_> = cases.iter().map(|c| oracle.of(c)).collect();
    // The verdicts no run outcome can change (ill-formed programs, undefined runs): targets
    // that only run programs (`Target::only_runs`: the simulator) skip those cases unrun.
    let settled: Vec<Option<Verdict>> = expected
        .iter()
        .map(|e| diff::verdict_for_any_run(e))
        .collect();
    // How each target's bounded waits end (`diff::WaitBound`), for judging a wait that gave up.
    let bounds: Vec<diff::WaitBound> = targets.iter().map(|t| t.wait_bound()).collect();
    let names: Vec<String> = targets.iter().map(|t| t.name()).collect();
    // outcomes[k][i]: the distinct outcomes of target k's runs of case i
    // (`Target::run_repeated`); `None`: not run, `settled[i]` is the verdict.
    let outcomes: Vec<Vec<Option<Vec<Observed>>>> = targets
        .iter_mut()
        .map(|t| {
            if stop.load(Ordering::Relaxed) {
                // The caller abandons the whole claim: the rest of the targets need not run.
                let o = TargetOutcome::NotRun("the campaign was interrupted".into());
                return vec![Some(vec![Observed::once(o)]); cases.len()];
            }
            if t.kind() == TargetKind::CompileOnly && cases.len() > 1 {
                let o = t.run_batch(cases);
                assert_eq!(
                    o.len(),
                    cases.len(),
                    "{}: run_batch must give one outcome per case",
                    t.name()
                );
                o.into_iter()
                    .map(|o| Some(vec![Observed::once(o)]))
                    .collect()
            } else {
                let only_runs = t.only_runs();
                let skip = |s: &Option<Verdict>| only_runs && s.is_some();
                let to_run: Vec<&Case> = cases
                    .iter()
                    .zip(&settled)
                    .filter(|(_, s)| !skip(s))
                    .map(|(c, _)| c)
                    .collect();
                let ran = t.run_repeated_batch(&to_run);
                assert_eq!(
                    ran.len(),
                    to_run.len(),
                    "{}: run_repeated_batch must give one result per case",
                    t.name()
                );
                let mut ran = ran.into_iter();
                settled
                    .iter()
                    .map(|s| (!skip(s)).then(|| ran.next().expect("one result per case run")))
                    .collect()
            }
        })
        .collect();
    cases
        .iter()
        .zip(expected.iter().zip(settled))
        .enumerate()
        .map(|(i, (case, (exp, settled)))| {
            // The layout: to read a run outcome's observations, and to count the words.
            let mut layout = None;
            let mut runs = vec![None; outcomes.len()];
            let mut not_emulated = vec![None; outcomes.len()];
            let (verdicts, signatures) = outcomes
                .iter()
                .enumerate()
                .map(|(k, o)| match &o[i] {
                    Some(o) => {
                        let l = layout.get_or_insert_with(|| Layout::of(&case.program));
                        let (exp, left) =
                            judge::expected_for(&case.program, exp, targets[k].as_ref());
                        not_emulated[k] = left;
                        let mut all =
                            judge::rule_each(&case.program, l, &exp, o, &names[k], bounds[k]);
                        if o.iter().any(|x| x.of > 1) {
                            let forbidden = all
                                .iter()
                                .map(|r| matches!(r.verdict, Verdict::Discrepancy(_)))
                                .collect();
                            runs[k] = Some((o.clone(), forbidden));
                        }
                        let r = all.swap_remove(judge::decisive(&all));
                        (r.verdict, r.signature)
                    }
                    // A settled verdict is a skip: no signature.
                    None => (
                        settled.clone().expect("a target skips only settled cases"),
                        None,
                    ),
                })
                .unzip();
            let l = layout.get_or_insert_with(|| Layout::of(&case.program));
            let words = WordCounts::of(&case.program, l, exp);
            let a = behaviours::analyse(&case.program);
            Judged {
                verdicts,
                signatures,
                rules: rules_exercised(case, exp),
                words,
                exercised: a.exercised,
                watched: a.watched(),
                observed: report::behaviours::observed(&a, exp),
                runs,
                not_emulated,
            }
        })
        .collect()
}
