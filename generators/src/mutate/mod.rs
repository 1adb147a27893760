//! Near-miss mutators: each takes a valid program and breaks exactly one row
//! of the rules catalogue (reference §6), leaving every other rule intact.
//!
//! A [`Mutator`] has a config patch (so the builder makes programs that contain what the
//! mutation needs, and leaves out features whose rules the mutation would also break, e.g.
//! shift on a GEN-TARGET mutation), and an `apply` that edits the program or says it cannot.
//! [`near_miss`] retries a few seeds until `apply` succeeds.

use crate::builder;
use crate::choice::{Choices, SeedChoices};
use crate::config::Config;
use crate::stmts::*;
use crate::walk::{self, CodeRef, Path};
use tcgen05_ir::form::*;
use tcgen05_ir::*;

mod blocking;
mod dynamic;
mod dynamic_ub;
mod helpers;
mod patches;
mod static_rules;
mod table;

use blocking::*;
use dynamic::*;
use dynamic_ub::*;
use helpers::*;
use patches::*;
use static_rules::*;
pub use table::MUTATORS;

/// The edition a mutator's rule belongs to, where the spec wordings differ (reference §0,
/// OQ-28): a near-miss is judged in the edition that states the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditionHint {
    /// The rule reads the same in every edition.
    Any,
    /// The seed documents' wording (PTX ISA 9.0/9.1).
    Seeds,
    /// The newer wording (PTX ISA 9.2/9.3).
    Ptx93,
}

/// One near-miss mutator.
#[derive(Debug, Clone, Copy)]
pub struct Mutator {
    /// A short unique name (`--near-miss` selects by rule or by name).
    pub name: &'static str,
    /// The rule it breaks.
    pub rule: RuleId,
    /// The edition that states the rule.
    pub edition: EditionHint,
    /// Makes the builder produce a suitable base program.
    pub patch: fn(&mut Config),
    /// Breaks the rule in `p`; `false` if `p` has nothing to break (try another seed).
    pub apply: fn(&mut Program, &mut dyn Choices) -> bool,
}

/// How many base programs [`near_miss`] tries before giving up.
pub const ATTEMPTS: u64 = 64;

/// A near-miss program for mutator `m` from `seed`: the first base program (seeds `seed`,
/// `seed + 1`, ...) that `m.apply` can break. `None` if none of [`ATTEMPTS`] could be.
pub fn near_miss(m: &Mutator, seed: u64) -> Option<Program> {
    // No `.ashift` in base programs: mutators that change an MMA's kind, `.ws`, group or A
    // operand would also break MMA-ASHIFT-* (a near miss breaks one rule).
    let mut cfg = Config {
        ashift_pct: 0,
        ..Config::default()
    };
    (m.patch)(&mut cfg);
    for k in 0..ATTEMPTS {
        let s = seed.wrapping_add(k);
        let mut c = SeedChoices::new(s);
        let mut p = builder::build_with(&cfg, &mut c, builder::forms_for(&cfg, s));
        if (m.apply)(&mut p, &mut c) {
            return Some(p);
        }
    }
    None
}

/// The mutator named `name`, or the first that breaks the rule `name` names.
pub fn by_name(name: &str) -> Option<&'static Mutator> {
    MUTATORS.iter().find(|m| m.name == name).or_else(|| {
        MUTATORS
            .iter()
            .find(|m| m.rule.as_str().eq_ignore_ascii_case(name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mutator_applies_and_changes_the_program() {
        for m in MUTATORS {
            let p = near_miss(m, 1).unwrap_or_else(|| panic!("{} never applies", m.name));
            let mut cfg = Config::default();
            (m.patch)(&mut cfg);
            // Some base program was changed: the result is not any of the attempted bases.
            let same = (0..ATTEMPTS).any(|k| builder::build_seeded(&cfg, 1 + k) == p);
            assert!(!same, "{} left the program unchanged", m.name);
        }
    }

    /// MCM-XTHREAD-NONPIPE (reference §4.3-4.4: a non-pipelined producer must wait::st before
    /// its fence and sync): in every mutant, some warp other than the MMA's issuer stores A and
    /// reaches the next synchronization with no `wait::st` after that store.
    #[test]
    fn publish_without_wait_st_leaves_the_a_store_unwaited_at_the_sync() {
        let m = by_name("publish-without-wait-st").expect("exists");
        for seed in 0..200u64 {
            let Some(p) = near_miss(m, seed * 31) else {
                continue;
            };
            let a = p
                .ops()
                .into_iter()
                .find_map(|op| match op {
                    Op::Mma(x) => match x.a {
                        MmaA::Tmem(t) => Some(t),
                        _ => None,
                    },
                    _ => None,
                })
                .expect("an MMA with A in TMEM");
            let unwaited = p.warps.iter().any(|code| {
                let issues = walk::contains(&p, code, &|s| matches!(s, Stmt::Tc(Op::Mma(_))));
                let Some(i) = code.iter().position(|s| {
                    matches!(s, Stmt::Tc(Op::St { taddr, .. }) if taddr.base == a.base && taddr.col == a.col)
                }) else {
                    return false;
                };
                let sync = code[i..]
                    .iter()
                    .position(|s| matches!(s, Stmt::BarCta | Stmt::ClusterArrive { .. }))
                    .map(|k| i + k);
                !issues
                    && sync.is_some_and(|j| {
                        !walk::contains(&p, &code[i + 1..j], &|s| {
                            matches!(s, Stmt::Tc(op) if is_wait(op, WaitOp::St))
                        })
                    })
            });
            assert!(
                unwaited,
                "seed {}: no unwaited A store at a sync",
                seed * 31
            );
        }
    }

    #[test]
    fn names_are_unique() {
        for (i, a) in MUTATORS.iter().enumerate() {
            assert!(
                MUTATORS[i + 1..].iter().all(|b| b.name != a.name),
                "{}",
                a.name
            );
            assert_eq!(by_name(a.name).map(|m| m.name), Some(a.name));
        }
    }
}
