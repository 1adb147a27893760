//! What a fuzz target does when it finds something: write the case where a person can read it
//! (`tcgen05-fuzz show <file>`), then panic with a message that names the file, so libFuzzer
//! records the input as a crash. Any crash input also turns back into a case with
//! `cargo run -p tcgen05-fuzz-targets --example fuzz_case -- <target> <input> <out.case>`.

use std::cell::RefCell;
use std::path::PathBuf;
use tcgen05_ir::Case;

/// Where finding cases go: `$TCGEN05_FUZZ_CASES`, else `<temp dir>/tcgen05-fuzz-cases`.
pub fn cases_dir() -> PathBuf {
    std::env::var_os("TCGEN05_FUZZ_CASES").map_or_else(
        || std::env::temp_dir().join("tcgen05-fuzz-cases"),
        PathBuf::from,
    )
}

/// Why a finding's case could not be written ([`save`]).
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct SaveError {
    /// The folder or file being created.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// Writes `case` (binary and PTX) under [`cases_dir`], named by a hash of its bytes, and
/// returns the path of the binary file (or why it could not be written).
pub fn save(target: &str, case: &Case) -> Result<PathBuf, SaveError> {
    let bytes = tcgen05_ir::codec::encode(case);
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in &bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    let dir = cases_dir();
    std::fs::create_dir_all(&dir).map_err(|source| SaveError {
        path: dir.clone(),
        source,
    })?;
    let p = dir.join(format!("{target}-{h:016x}.case"));
    std::fs::write(&p, &bytes).map_err(|source| SaveError {
        path: p.clone(),
        source,
    })?;
    let _ = std::fs::write(
        p.with_extension("ptx"),
        tcgen05_ir::ptx::emit(&case.program),
    );
    Ok(p)
}

/// Whether a finding whose signature text is `key` is to be ignored: `$TCGEN05_FUZZ_IGNORE`
/// holds comma-separated pieces of signatures already known (e.g. a finding id's signature
/// `hang-where-completion-required / - / sim / [a, barrier.cluster.wait]`, or just
/// `barrier.cluster.wait`), so a long run is not stopped by a finding already recorded.
pub fn ignored(key: &str) -> bool {
    std::env::var("TCGEN05_FUZZ_IGNORE")
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .any(|k| !k.is_empty() && key.contains(k))
        })
        .unwrap_or(false)
}

thread_local! {
    /// While `Some`, findings are collected here instead of panicking ([`collecting`]).
    static COLLECT: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Runs `f` with findings collected instead of panicking, and returns their signatures and
/// descriptions. Smoke tests use it ([`crate::smoke`]) to count the findings of many inputs and
/// fail on any.
pub fn collecting(f: impl FnOnce()) -> Vec<String> {
    COLLECT.with(|c| *c.borrow_mut() = Some(Vec::new()));
    f();
    COLLECT.with(|c| c.borrow_mut().take().unwrap_or_default())
}

/// Saves the case and panics with `what` and where the case is, unless `key` (the finding's
/// signature text) is [`ignored`].
pub fn report(target: &str, case: &Case, key: &str, what: &str) {
    if ignored(key) {
        return;
    }
    let collected = COLLECT.with(|c| {
        c.borrow_mut().as_mut().map(|v| {
            v.push(format!("{key}: {what}"));
        })
    });
    if collected.is_some() {
        return;
    }
    let at = match save(target, case) {
        Ok(p) => format!(
            "case written to {} (print it: tcgen05-fuzz show {})",
            p.display(),
            p.display()
        ),
        Err(e) => format!("the case could not be written: {e}"),
    };
    panic!("{target}: {what}\nsignature: {key}\n{at}");
}
