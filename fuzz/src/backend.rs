//! The opt-in fuzz targets `ptxas` and `cuda` share this: a case from the bytes (valid or near
//! miss), run on an external back end, compared with the oracle. The back end is built once per
//! process; where it is not available the target does nothing (and says so once), so the
//! targets build and smoke-test everywhere.

use arbitrary::Unstructured;
use std::sync::{Mutex, OnceLock};
use tcgen05_drivers::diff::{self, Signature, Verdict};
use tcgen05_drivers::target::{self, Target};
use tcgen05_ir::Case;

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

    /// Runs one case on the back end (if any) and reports a discrepancy as a finding.
    pub fn check(&self, fuzzer: &str, case: &Case) {
        let Some(t) = self.target() else { return };
        let mut t = t.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let outcome = t.run(case);
        let expected = tcgen05_oracle::expect(&case.program);
        if let Verdict::Discrepancy(d) = diff::compare(&case.program, &expected, &outcome) {
            let sig = Signature::of(&d, &t.name());
            crate::finding::report(
                fuzzer,
                case,
                &sig.to_string(),
                &format!("oracle and {} disagree: {}", t.name(), d.detail),
            );
        }
    }
}

/// A valid case or a near miss, from the bytes.
pub fn case_of(u: &mut Unstructured<'_>) -> arbitrary::Result<Option<Case>> {
    if u.arbitrary::<bool>()? {
        Ok(crate::near_miss::case_of(u)?.map(|(c, _)| c))
    } else {
        Ok(Some(crate::diff_sim::case_of(u)?.0))
    }
}
