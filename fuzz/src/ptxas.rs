//! `ptxas` (opt-in: needs a ptxas binary): valid cases and near misses compiled by ptxas,
//! judged against the oracle's static check. The ptxas is `$TCGEN05_FUZZ_PTXAS` (a target name
//! such as `ptxas@12.8`), else the newest one installed (`tcgen05-fuzz targets` lists them).

use crate::backend::{self, Backend};
use arbitrary::Unstructured;
use tcgen05_drivers::target::{Availability, available_targets};

fn newest_ptxas() -> Option<String> {
    available_targets()
        .into_iter()
        .filter(|i| i.name.starts_with("ptxas@") && i.availability == Availability::Available)
        .map(|i| i.name)
        .max_by(|a, b| {
            let v = |s: &str| {
                s.trim_start_matches("ptxas@")
                    .split('.')
                    .map(|x| x.parse::<u32>().unwrap_or(0))
                    .collect::<Vec<_>>()
            };
            v(a).cmp(&v(b))
        })
}

static PTXAS: Backend = Backend::new("TCGEN05_FUZZ_PTXAS", newest_ptxas);

/// One iteration.
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    if let Some((case, edition)) = backend::case_of(u)? {
        PTXAS.check("ptxas", &case, edition);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn smoke() {
        let found = crate::finding::collecting(|| crate::test_n_times(4, 512, 10, super::run));
        for f in &found {
            eprintln!("ptxas smoke: finding: {f}");
        }
    }
}
