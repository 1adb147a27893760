//! A digest of the PTX grammar: the printed PTX of generated programs, the parse of every
//! printed module and of every `.ptx` file under `corpus/`, and the [`Form::parse`] result
//! (form or error message) of every tcgen05 opcode seen and of its one-qualifier variants
//! (one qualifier dropped, one doubled, `.bogus` appended). Two trees that print the same
//! digests print, parse and reject tcgen05 opcodes alike.
//!
//! ```text
//! cargo run -p tcgen05-generators --example grammar_digest -- 3000 corpus
//! ```
//!
//! Arguments: the number of cases of the mixed stream (seed 0), then the folders to walk for
//! `.ptx` files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tcgen05_generators::Config;
use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_ir::Form;
use tcgen05_ir::ptx::{emit, parse_module};

/// FNV-1a 64 over `bytes`, continuing from `h`.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

const FNV0: u64 = 0xcbf2_9ce4_8422_2325;

/// Every `.ptx` file under `dir`, in path order.
fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in rd {
        let p = e.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if p.is_dir() {
            ptx_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
    Ok(())
}

/// The tcgen05 opcodes of `text`: each line's first token that starts with `tcgen05.`, after
/// an optional guard predicate.
fn opcodes(text: &str, seen: &mut BTreeSet<String>) {
    for line in text.lines() {
        let mut toks = line.split_whitespace();
        let mut t = toks.next().unwrap_or("");
        if t.starts_with('@') {
            t = toks.next().unwrap_or("");
        }
        if t.starts_with("tcgen05.") {
            seen.insert(t.trim_end_matches(';').to_string());
        }
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u64 = args
        .first()
        .ok_or("usage: grammar_digest <cases> <folder>...")?
        .parse()
        .map_err(|e| format!("cases: {e}"))?;
    let mut seen = BTreeSet::new();

    let stream = Stream::new(Config::default(), 0, Mode::Mixed);
    let (mut printed, mut parsed) = (FNV0, FNV0);
    for i in 0..n {
        let text = emit(&stream.case_at(i).program);
        printed = fnv(printed, text.as_bytes());
        let m = format!("{:?}", parse_module(&text, "generated.ptx"));
        parsed = fnv(parsed, m.as_bytes());
        opcodes(&text, &mut seen);
    }
    println!("generated: {n} programs, printed {printed:016x}, parsed {parsed:016x}");

    let mut files = Vec::new();
    for d in &args[1..] {
        ptx_files(Path::new(d), &mut files)?;
    }
    files.sort();
    let mut corpus = FNV0;
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let name = f.display().to_string();
        let m = format!("{:?}", parse_module(&text, &name));
        corpus = fnv(corpus, m.as_bytes());
        opcodes(&text, &mut seen);
    }
    println!("corpus: {} files, parsed {corpus:016x}", files.len());

    let (mut forms, mut variants, mut count) = (FNV0, FNV0, 0usize);
    for op in &seen {
        forms = fnv(forms, format!("{op} {:?}", Form::parse(op)).as_bytes());
        if let Ok(f) = Form::parse(op) {
            forms = fnv(forms, f.opcode().as_bytes());
        }
        let quals: Vec<&str> = op.split('.').collect();
        let mut vs = vec![format!("{op}.bogus")];
        for i in 2..quals.len() {
            let mut drop = quals.clone();
            drop.remove(i);
            vs.push(drop.join("."));
            let mut dup = quals.clone();
            dup.insert(i, quals[i]);
            vs.push(dup.join("."));
        }
        for v in vs {
            let r = match Form::parse(&v) {
                Ok(f) => format!("{v} ok {f:?} {}", f.opcode()),
                Err(e) => format!("{v} err {e:?} {e}"),
            };
            variants = fnv(variants, r.as_bytes());
            count += 1;
        }
    }
    println!(
        "opcodes: {} distinct, forms {forms:016x}; {count} variants {variants:016x}",
        seen.len()
    );
    Ok(())
}
