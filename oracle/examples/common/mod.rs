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

/// The examples' arguments `<folder> [cases] [rounds]` (cases 2,000 and rounds 3 unless
/// given): the programs of the first `cases` files of the folder, and the rounds.
#[allow(
    dead_code,
    reason = "a module of every example: expect_digest and stream_stats read their own arguments"
)]
pub fn programs_and_rounds(usage: &str) -> Result<(Vec<tcgen05_ir::Program>, u32), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args.first().ok_or(usage)?;
    let n: usize = args
        .get(1)
        .map_or(Ok(2000), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let rounds: u32 = args
        .get(2)
        .map_or(Ok(3), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let programs = load_cases(dir, n)?.into_iter().map(|c| c.program).collect();
    Ok((programs, rounds))
}
