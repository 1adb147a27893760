//! What the oracle's examples share: reading a folder of `.case` files (as written by
//! `tcgen05-fuzz generate`).

use std::path::{Path, PathBuf};
use tcgen05_ir::Case;

/// The first `n` `.case` files of `dir` in name order, decoded; an error names the file.
pub fn load_cases(dir: &str, n: usize) -> Result<Vec<Case>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(dir))
        .map_err(|e| format!("{dir}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    files.sort();
    files.truncate(n);
    files
        .iter()
        .map(|f| {
            let bytes = std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
            tcgen05_ir::codec::decode(&bytes).map_err(|e| format!("{}: {e}", f.display()))
        })
        .collect()
}
