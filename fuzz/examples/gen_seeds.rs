//! Writes the seed corpora of every fuzz target (`tcgen05_fuzz_targets::seeds`):
//!
//! ```text
//! cargo run -p tcgen05-fuzz-targets --example gen_seeds -- corpus/seeds
//! ```
//!
//! run from the repository root (it reads `corpus/realworld/*.ptx` and
//! `corpus/regressions/*/case.case`). Each `corpus/seeds/<target>/` is replaced whole.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcgen05_fuzz_targets::seeds::{self, Sources, TARGETS};

fn files(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| keep(p))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn name(p: &Path) -> String {
    p.file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned())
}

fn run(out: &Path) -> std::io::Result<()> {
    let mut src = Sources::default();
    for p in files(Path::new("corpus/realworld"), |p| {
        p.extension().is_some_and(|e| e == "ptx")
    }) {
        src.realworld_ptx
            .push((name(&p), std::fs::read_to_string(&p)?));
    }
    for d in files(Path::new("corpus/regressions"), |p| p.is_dir()) {
        let c = d.join("case.case");
        if c.exists() {
            src.case_files.push((name(&d), std::fs::read(&c)?));
        }
    }
    if src.realworld_ptx.is_empty() {
        eprintln!("warning: no corpus/realworld/*.ptx here: run from the repository root");
    }
    let all = seeds::all(&src);
    for t in TARGETS {
        let dir = out.join(t);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        let mut n = 0;
        let mut bytes = 0;
        for s in all.iter().filter(|s| s.target == *t) {
            std::fs::write(dir.join(&s.name), &s.bytes)?;
            n += 1;
            bytes += s.bytes.len();
        }
        println!("{}: {n} seeds, {bytes} bytes", dir.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [out] = args.as_slice() else {
        eprintln!("usage: gen_seeds <output folder, e.g. corpus/seeds>");
        return ExitCode::from(2);
    };
    match run(Path::new(out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_seeds: {e}");
            ExitCode::from(2)
        }
    }
}
