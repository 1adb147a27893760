//! The one judge: a case and a target in, the oracle's expectation, the target's outcome, the
//! verdict and the discrepancy's signature out (expect → run → compare → sign).
//!
//! Every caller that judges a target's behaviour goes through this module: the campaign
//! engine, the minimizer, `reproduce`, `corpus verify`, the regression replay, the benchmarks
//! and the fuzz targets. The comparison itself is `tcgen05_drivers::diff` (the table of
//! outcome × expectation, reference §6); its verdict step, [`rule`], takes the target's own
//! wait bound ([`tcgen05_drivers::target::Target::wait_bound`]) and signs a discrepancy
//! ([`Signature`]) under the target's name. [`rule`] lives in `tcgen05_drivers::diff` so that
//! the LLVM target's behaviour check, inside that crate, uses the same step.

use std::rc::Rc;
use tcgen05_drivers::diff::{Signature, Verdict, WaitBound};
use tcgen05_drivers::outcome::Outcome;
use tcgen05_drivers::target::{Observed, Target};
use tcgen05_ir::observe::Layout;
use tcgen05_ir::{Case, Program};
use tcgen05_oracle::{Expected, Options};

pub use crate::expectations::Expectations;
/// The verdict step (compare with the target's wait bound, sign a discrepancy): one
/// implementation, in `tcgen05_drivers::diff`, shared with the checks that run inside a
/// target of that crate.
pub use tcgen05_drivers::diff::{Ruling, rule};

/// What the judge found of one case on one target.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// The oracle's expectation of the case.
    pub expected: Rc<Expected>,
    /// What the target did.
    pub outcome: Outcome,
    /// Its verdict and signature.
    pub ruling: Ruling,
}

impl Judgement {
    /// The verdict.
    pub fn verdict(&self) -> &Verdict {
        &self.ruling.verdict
    }

    /// The discrepancy's signature, if the verdict is a discrepancy.
    pub fn signature(&self) -> Option<&Signature> {
        self.ruling.signature.as_ref()
    }
}

/// [`rule`] for each distinct outcome of a case's runs ([`Target::run_repeated`]), in order;
/// a discrepancy's detail names the run that first showed it, its perturbation and how many
/// runs showed it (when the case ran more than once).
pub fn rule_each(
    program: &Program,
    layout: &Layout,
    expected: &Expected,
    observed: &[Observed],
    target: &str,
    bound: WaitBound,
) -> Vec<Ruling> {
    observed
        .iter()
        .map(|o| {
            let mut r = rule(program, layout, expected, &o.outcome, target, bound);
            if let Verdict::Discrepancy(d) = &mut r.verdict
                && o.of > 1
            {
                d.detail = format!(
                    "{} [run {} of {}, perturbation {:#010x}; {} run(s) showed it]",
                    d.detail, o.first_run, o.of, o.perturbation, o.runs
                );
            }
            r
        })
        .collect()
}

/// The ruling that decides a case among those of its distinct outcomes ([`rule_each`]): the
/// first discrepancy, else the first outcome's.
pub fn decisive(rulings: &[Ruling]) -> usize {
    rulings
        .iter()
        .position(|r| matches!(r.verdict, Verdict::Discrepancy(_)))
        .unwrap_or(0)
}

/// [`rule_each`] and [`decisive`]: the index of the deciding outcome and its ruling.
pub fn rule_observed(
    program: &Program,
    layout: &Layout,
    expected: &Expected,
    observed: &[Observed],
    target: &str,
    bound: WaitBound,
) -> (usize, Ruling) {
    let mut all = rule_each(program, layout, expected, observed, target, bound);
    let i = decisive(&all);
    (i, all.swap_remove(i))
}

/// The expectation `target`'s outcomes of `program` are compared with: `expected` itself,
/// or, for a target that does not compute some MMA results of the program
/// ([`Target::values_not_computed`]), `expected` with the words those results decide left
/// out ([`tcgen05_drivers::diff::not_emulated::leave_out`]), together with the target's
/// reason and the number of words left out. Programs whose verdict no run outcome changes
/// ([`tcgen05_drivers::diff::verdict_for_any_run`]) keep `expected`.
pub fn expected_for(
    program: &Program,
    expected: &Rc<Expected>,
    target: &dyn Target,
) -> (Rc<Expected>, Option<(String, u64)>) {
    let why = target.values_not_computed(program);
    match tcgen05_drivers::diff::not_emulated::for_target(program, expected, why) {
        Some((masked, why, n)) => (Rc::new(masked), Some((why, n))),
        None => (Rc::clone(expected), None),
    }
}

/// Runs `case` on `target` (every run of [`Target::run_repeated`]) and judges the outcomes
/// against `expected` (the oracle's expectation of `case.program`, computed by the caller):
/// the deciding outcome of [`rule_observed`].
pub fn judge_against(case: &Case, expected: Rc<Expected>, target: &mut dyn Target) -> Judgement {
    let mut observed = target.run_repeated(case);
    let (compared, _) = expected_for(&case.program, &expected, target);
    let (i, ruling) = rule_observed(
        &case.program,
        &Layout::of(&case.program),
        &compared,
        &observed,
        &target.name(),
        target.wait_bound(),
    );
    Judgement {
        expected,
        outcome: observed.swap_remove(i).outcome,
        ruling,
    }
}

/// The whole judge for one case on one target under `opts`: the oracle's expectation
/// (`tcgen05_oracle::expect_with`), the target's run, the verdict and its signature.
pub fn judge(case: &Case, opts: &Options, target: &mut dyn Target) -> Judgement {
    let expected = Rc::new(tcgen05_oracle::expect_with(&case.program, opts));
    judge_against(case, expected, target)
}

/// The discrepancy signature of `case` on `target` under `opts`, if it shows one.
pub fn signature_of(case: &Case, opts: &Options, target: &mut dyn Target) -> Option<Signature> {
    judge(case, opts, target).ruling.signature
}

/// The wait bound of the target named `name`, without building it: the simulator's bounded
/// waits are fair ([`WaitBound::Fair`]: it gives up only where nothing can move), every other
/// target's give up after a watchdog ([`WaitBound::Watchdog`], the default of
/// [`Target::wait_bound`]). For judging stored outcomes of targets that may not be available
/// here (`corpus verify`).
pub fn wait_bound_of(name: &str) -> WaitBound {
    match tcgen05_drivers::sim::SimConfig::parse(name) {
        Some(Ok(_)) => WaitBound::Fair,
        _ => WaitBound::Watchdog,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_drivers::outcome::TrapKind;
    use tcgen05_oracle::RunVerdict;

    /// Of several distinct outcomes the first forbidden one decides, with its run and
    /// perturbation in the detail; with none forbidden, the first outcome decides.
    #[test]
    fn the_first_forbidden_run_decides_and_is_named() {
        let p = tcgen05_ir::samples::single_warp_roundtrip();
        let layout = Layout::of(&p);
        // A program the oracle says completes: a trap is forbidden (reference §6).
        let e = tcgen05_oracle::expect(&p);
        assert_eq!(e.run.verdict, RunVerdict::Completes);
        let Some(Ok(cfg)) = tcgen05_drivers::sim::SimConfig::parse("sim") else {
            panic!("sim is a simulator name")
        };
        let sim = tcgen05_drivers::sim::simulate(&p, cfg, 1);
        let good = Observed {
            outcome: sim,
            runs: 60,
            first_run: 0,
            perturbation: 0,
            of: 64,
        };
        let trap = Observed {
            outcome: Outcome::Trapped {
                kind: TrapKind::IllegalAddress,
                words: vec![],
            },
            runs: 4,
            first_run: 17,
            perturbation: 0xabcd,
            of: 64,
        };
        let both = [good.clone(), trap];
        let (i, r) = rule_observed(&p, &layout, &e, &both, "t", WaitBound::Watchdog);
        assert_eq!(i, 1);
        let Verdict::Discrepancy(d) = &r.verdict else {
            panic!("{r:?}")
        };
        assert!(
            d.detail
                .ends_with("[run 17 of 64, perturbation 0x0000abcd; 4 run(s) showed it]"),
            "{}",
            d.detail
        );
        let (i, r) = rule_observed(&p, &layout, &e, &[good], "t", WaitBound::Watchdog);
        assert_eq!((i, r.verdict), (0, Verdict::Agree));
    }
    use tcgen05_drivers::target;
    use tcgen05_generators::{Config, case_seed, valid_case};

    #[test]
    fn wait_bounds_by_name_match_the_built_targets() {
        for name in [
            "sim",
            "sim:adversarial",
            "sim:random@3+wait-ld-early",
            "sim:rr",
        ] {
            let t = target::resolve(name).expect("simulator targets always build");
            assert_eq!(wait_bound_of(name), t.wait_bound(), "{name}");
        }
        assert_eq!(wait_bound_of("cuda"), WaitBound::Watchdog);
        assert_eq!(wait_bound_of("external:./my-sim"), WaitBound::Watchdog);
    }

    /// A planted simulator bug (`wait-ld-early`) gives a discrepancy whose signature names the
    /// target; the fair simulator agrees with the oracle on the same case.
    #[test]
    fn a_discrepancy_carries_its_signature_and_an_agreement_none() {
        let opts = Options::default();
        let cfg = Config::default();
        let mut faulty = target::resolve("sim:adversarial+wait-ld-early").expect("sim builds");
        let mut fair = target::resolve("sim").expect("sim builds");
        let case = (0..2000)
            .map(|i| valid_case(&cfg, case_seed(1, i)))
            .find(|c| signature_of(c, &opts, faulty.as_mut()).is_some())
            .expect("the fault shows within 2,000 cases");
        let j = judge(&case, &opts, faulty.as_mut());
        let Verdict::Discrepancy(d) = j.verdict() else {
            panic!("not a discrepancy: {:?}", j.verdict());
        };
        let sig = j.signature().expect("signed");
        assert_eq!(sig.target, "sim:adversarial+wait-ld-early");
        assert_eq!(sig.kind, d.kind);
        let k = judge(&case, &opts, fair.as_mut());
        assert_eq!(k.verdict(), &Verdict::Agree);
        assert!(k.signature().is_none());
        assert_eq!(
            *k.expected,
            tcgen05_oracle::expect_with(&case.program, &opts)
        );
    }
}
