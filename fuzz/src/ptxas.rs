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

/// One iteration; `Ok(true)` when the bytes made a case and ptxas's verdict on it was judged.
pub fn judge(u: &mut Unstructured<'_>) -> arbitrary::Result<bool> {
    Ok(match backend::case_of(u)? {
        Some((case, edition)) => PTXAS.check("ptxas", &case, edition),
        None => false,
    })
}

/// One iteration (the fuzz target).
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    judge(u).map(drop)
}

#[cfg(test)]
mod tests {
    /// 8 inputs compiled by the newest installed ptxas: no finding, and at least 4 judged (7
    /// are; a near miss of a rule whose consequence is not rejection is a skip).
    #[test]
    #[cfg_attr(
        tcgen05_no_ptxas,
        ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
    )]
    fn smoke() {
        assert!(
            super::newest_ptxas().is_some() || std::env::var_os("TCGEN05_FUZZ_PTXAS").is_some(),
            "no ptxas found, though the build found one: run scripts/setup-ptxas"
        );
        let s = crate::smoke(8, 512, 10, super::judge);
        s.assert_clean("ptxas", 4);
    }
}
