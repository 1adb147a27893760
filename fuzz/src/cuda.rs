//! `cuda` (opt-in: needs a CUDA device and driver): valid cases and near misses run on the
//! `cuda` target (or `$TCGEN05_FUZZ_CUDA`, e.g. `cuda-emu` or `cuda:1`), judged against the
//! oracle. On a machine without a device it does nothing.

use crate::backend::{self, Backend};
use arbitrary::Unstructured;

fn default_cuda() -> Option<String> {
    Some("cuda".to_string())
}

static CUDA: Backend = Backend::new("TCGEN05_FUZZ_CUDA", default_cuda);

/// One iteration.
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    if let Some((case, edition)) = backend::case_of(u)? {
        CUDA.check("cuda", &case, edition);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn smoke() {
        let found = crate::finding::collecting(|| crate::test_n_times(4, 512, 11, super::run));
        for f in &found {
            eprintln!("cuda smoke: finding: {f}");
        }
    }
}
