//! `diff_sim`: a valid program from the fuzzer's bytes (swarm configuration, then the
//! valid-by-construction builder), judged by the oracle and run on the simulator under a chosen
//! scheduler. Two things are findings:
//!
//! - the oracle flags a static violation in a program the generator built as valid
//!   (docs/architecture.md rule 2: the generator's legality tracking and the oracle disagree);
//! - the judge (`tcgen05_engine::judge`) finds a discrepancy between `expect(p)` and `sim(p)`
//!   (rule 1: the oracle and the simulator disagree).

use arbitrary::{Arbitrary, Unstructured};
use tcgen05_drivers::diff::Verdict;
use tcgen05_drivers::sim::{SimConfig, simulate};
use tcgen05_engine::judge;
use tcgen05_generators::Config;
use tcgen05_ir::observe::Layout;
use tcgen05_ir::{Case, Intent, Provenance};

/// The schedulers the fuzzer chooses from (target names, `tcgen05_drivers::target`).
pub const SCHEDULERS: &[&str] = &["sim", "sim:rr", "sim:adversarial"];

/// The case and scheduler the bytes describe.
pub fn case_of(u: &mut Unstructured<'_>) -> arbitrary::Result<(Case, &'static str)> {
    let mut cfg = Config::arbitrary(u)?;
    cfg.sanitize();
    let sched = *u.choose(SCHEDULERS)?;
    let program = tcgen05_generators::valid_program_from_bytes(&cfg, u);
    let case = Case {
        program,
        intent: Intent::Valid,
        provenance: Provenance {
            seed: None,
            origin: format!("cargo fuzz diff_sim ({sched})"),
            family: None,
        },
    };
    Ok((case, sched))
}

/// Judges one case on one simulator configuration; a finding panics (after saving the case).
/// Returns whether the case was judged: the oracle's check passed and the comparison with the
/// simulator's outcome was not a skip.
pub fn check(case: &Case, sched: &str) -> bool {
    let v = tcgen05_oracle::check(&case.program);
    if let Some(first) = v.first() {
        let key = format!("generator-ill-formed / {}", first.rule.as_str());
        crate::finding::report(
            "diff_sim",
            case,
            &key,
            &format!("the generator built a program the oracle rejects: {first}"),
        );
        return false;
    }
    let Some(Ok(cfg)) = SimConfig::parse(sched) else {
        panic!("{sched} is one of SCHEDULERS, all valid simulator names");
    };
    let outcome = simulate(&case.program, cfg, case.provenance.seed.unwrap_or(0));
    let expected = tcgen05_oracle::expect(&case.program);
    let layout = Layout::of(&case.program);
    let bound = judge::wait_bound_of(sched);
    let ruling = judge::rule(&case.program, &layout, &expected, &outcome, sched, bound);
    match (&ruling.verdict, &ruling.signature) {
        (Verdict::Discrepancy(d), Some(sig)) => {
            crate::finding::report(
                "diff_sim",
                case,
                &sig.to_string(),
                &format!("oracle and simulator disagree: {}", d.detail),
            );
            false
        }
        (Verdict::Agree, _) => true,
        _ => false,
    }
}

/// One iteration; `Ok(true)` when the case was judged ([`check`]).
pub fn judge(u: &mut Unstructured<'_>) -> arbitrary::Result<bool> {
    let (case, sched) = case_of(u)?;
    Ok(check(&case, sched))
}

/// One iteration (the fuzz target).
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    judge(u).map(drop)
}

#[cfg(test)]
mod tests {
    /// 300 inputs: the oracle and the simulator agree on each, and at least 270 are judged
    /// (all 300 are: a valid program's run is rarely undefined; `cargo test -p
    /// tcgen05-fuzz-targets --lib smoke -- --nocapture` prints the counts).
    #[test]
    fn smoke() {
        let s = crate::smoke(300, 2048, 8, super::judge);
        s.assert_clean("diff_sim", 270);
    }
}
