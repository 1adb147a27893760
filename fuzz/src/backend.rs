//! The opt-in fuzz targets `ptxas` and `cuda` share this: a case from the bytes (valid or near
//! miss), run on an external back end, compared with the oracle. The back end is built once per
//! process; where it is not available the target does nothing (and says so once), so the
//! targets build everywhere; their smoke tests need the back end and are ignored without it.

use arbitrary::Unstructured;
use std::sync::{Mutex, OnceLock};
use tcgen05_drivers::diff::Verdict;
use tcgen05_drivers::target::{self, Target};
use tcgen05_engine::judge;
use tcgen05_ir::Case;
use tcgen05_oracle::{Edition, Options};

/// One back end, resolved on first use.
#[derive(Debug)]
pub struct Backend {
    cell: OnceLock<Option<Mutex<Box<dyn Target>>>>,
    /// Environment variable naming the target (e.g. `TCGEN05_FUZZ_PTXAS=ptxas@12.8`).
    pub var: &'static str,
    /// Chooses the default target name among the available ones.
    pub pick: fn() -> Option<String>,
}

impl Backend {
    /// A back end chosen by `var`, else by `pick`.
    pub const fn new(var: &'static str, pick: fn() -> Option<String>) -> Self {
        Backend {
            cell: OnceLock::new(),
            var,
            pick,
        }
    }

    fn target(&self) -> Option<&Mutex<Box<dyn Target>>> {
        self.cell
            .get_or_init(|| {
                let name = std::env::var(self.var).ok().or_else(self.pick)?;
                match target::resolve(&name) {
                    Ok(t) => Some(Mutex::new(t)),
                    Err(e) => {
                        eprintln!("{}: {e}; this fuzz target does nothing here", self.var);
                        None
                    }
                }
            })
            .as_ref()
    }

    /// Runs one case on the back end (if any), judges it in `edition` and reports a
    /// discrepancy as a finding. Returns whether the case was judged: the back end exists and
    /// the comparison was not a skip.
    pub fn check(&self, fuzzer: &str, case: &Case, edition: Edition) -> bool {
        let Some(t) = self.target() else {
            return false;
        };
        let mut t = t.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let j = judge::judge(case, &Options::edition(edition), t.as_mut());
        match (j.verdict(), j.signature()) {
            (Verdict::Discrepancy(d), Some(sig)) => {
                crate::finding::report(
                    fuzzer,
                    case,
                    &sig.to_string(),
                    &format!("oracle and {} disagree: {}", t.name(), d.detail),
                );
                false
            }
            (Verdict::Agree, _) => true,
            _ => false,
        }
    }
}

/// A valid case or a near miss, from the bytes, with the edition it is judged in: a near miss
/// in the edition of the rule its mutator breaks (an edition-specific rule such as
/// DEALLOC-PAIR-BLOCK is only broken in its edition, reference §7 OQ-28), a valid case in the
/// default edition.
pub fn case_of(u: &mut Unstructured<'_>) -> arbitrary::Result<Option<(Case, Edition)>> {
    if u.arbitrary::<bool>()? {
        Ok(crate::near_miss::case_of(u)?.map(|(c, m)| (c, crate::near_miss::edition(m))))
    } else {
        Ok(Some((crate::diff_sim::case_of(u)?.0, Edition::default())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A near miss whose mutator breaks a rule of the ptx93 wording (e.g. DEALLOC-BARRIER-ORDER)
    /// is judged in ptx93, the edition whose verdicts name that rule.
    #[test]
    fn near_misses_are_judged_in_their_rules_edition() {
        let (seen, seen_ptx93) = (Cell::new(0), Cell::new(0));
        crate::test_n_times(4000, 512, 29, |u| {
            let rest = u.bytes(u.len())?;
            // `case_of` reads a flag first: an odd byte picks the near-miss branch.
            let ours: Vec<u8> = std::iter::once(1).chain(rest.iter().copied()).collect();
            let nm = crate::near_miss::case_of(&mut Unstructured::new(rest))?;
            let got = case_of(&mut Unstructured::new(&ours))?;
            if let (Some((c, m)), Some((c2, e))) = (nm, got) {
                assert_eq!(
                    c2.program, c.program,
                    "the same bytes give the same near miss"
                );
                assert_eq!(e, crate::near_miss::edition(m), "mutator {}", m.name);
                seen.set(seen.get() + 1);
                if e == Edition::Ptx93 {
                    seen_ptx93.set(seen_ptx93.get() + 1);
                }
            }
            Ok(())
        });
        assert!(seen.get() > 100, "only {} near misses", seen.get());
        assert!(
            seen_ptx93.get() > 0,
            "no near miss of a ptx93 rule among {}",
            seen.get()
        );
    }
}
