//! `cuda` (opt-in: needs a CUDA device and driver): valid cases and near misses run on the
//! `cuda` target (or `$TCGEN05_FUZZ_CUDA`, e.g. `cuda-emu` or `cuda:1`), judged against the
//! oracle. On a machine without a device it does nothing; its smoke test is ignored there.

use crate::backend::{self, Backend};
use arbitrary::Unstructured;

fn default_cuda() -> Option<String> {
    Some("cuda".to_string())
}

static CUDA: Backend = Backend::new("TCGEN05_FUZZ_CUDA", default_cuda);

/// One iteration; `Ok(true)` when the bytes made a case and the device's outcome was judged.
pub fn judge(u: &mut Unstructured<'_>) -> arbitrary::Result<bool> {
    Ok(match backend::case_of(u)? {
        Some((case, edition)) => CUDA.check("cuda", &case, edition),
        None => false,
    })
}

/// One iteration (the fuzz target).
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    judge(u).map(drop)
}

#[cfg(test)]
mod tests {
    /// 8 inputs run on the device: no finding, and at least 2 judged. On a CUDA machine:
    /// `cargo test -p tcgen05-fuzz-targets --lib cuda -- --ignored`.
    #[test]
    #[ignore = "needs a CUDA GPU (docs/testing.md)"]
    fn smoke() {
        let s = crate::smoke(8, 512, 11, super::judge);
        s.assert_clean("cuda", 2);
    }
}
