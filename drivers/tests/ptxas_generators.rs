//! Every installed ptxas >= 13.0 accepts a sample of 1,000 Valid generated cases.
//!
//! ptxas is found where the ptxas targets find it (`ptxas::installed`: `.tools/cuda` of
//! `scripts/setup-ptxas`, `TCGEN05_PTXAS`, `PATH`). Without any ptxas at build time the test is
//! ignored (`cfg(tcgen05_no_ptxas)`, `drivers/build.rs`); with only ptxas 12.x it fails, naming
//! what to install (`scripts/setup-ptxas` installs 13.0 and 13.5).

use std::path::PathBuf;
use std::process::Command;
use tcgen05_generators::Config;
use tcgen05_generators::cases::{Mode, Stream};

/// Valid cases assembled by each ptxas.
const SAMPLE: u64 = 1_000;

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn every_installed_ptxas_13_or_later_accepts_1000_valid_cases() {
    let ptxases: Vec<(PathBuf, (u16, u16))> = tcgen05_drivers::ptxas::installed()
        .into_iter()
        .map(|i| (i.path, (i.version.major, i.version.minor)))
        .filter(|(_, v)| *v >= (13, 0))
        .collect();
    assert!(
        !ptxases.is_empty(),
        "no ptxas >= 13.0 found: run scripts/setup-ptxas (it installs 13.0 and 13.5), or name one \
         in TCGEN05_PTXAS"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let stream = Stream::new(Config::default(), 0x9A5, Mode::Valid);
    let mut files: Vec<(PathBuf, String)> = Vec::with_capacity(SAMPLE as usize);
    let mut families = std::collections::BTreeSet::new();
    let mut forms = std::collections::BTreeSet::new();
    for i in 0..SAMPLE {
        let g = stream.case(i);
        for op in g.case.program.ops() {
            families.insert(op.form().family());
            forms.insert(op.form().opcode());
        }
        let path = dir.path().join(format!("{}.ptx", g.name));
        std::fs::write(&path, tcgen05_ir::ptx::emit(&g.case.program)).expect("write ptx");
        files.push((path, g.case.program.launch.target.as_str().to_string()));
    }
    // The sample exercises every tcgen05 family (foundation issue: "covering every
    // instruction form"; the form-level reach is the generators' 10,000-case coverage test).
    assert_eq!(
        families.len(),
        tcgen05_ir::Family::ALL.len(),
        "the sample reaches only {families:?}"
    );
    eprintln!(
        "sample: {} distinct tcgen05 opcodes across all {} families",
        forms.len(),
        families.len()
    );
    for (ptxas, (maj, min)) in &ptxases {
        // Two workers: the machine is shared, and ptxas is single-threaded.
        let failures: Vec<String> = std::thread::scope(|s| {
            let chunks: Vec<&[(PathBuf, String)]> = files.chunks(files.len().div_ceil(2)).collect();
            let handles: Vec<_> = chunks
                .into_iter()
                .map(|chunk| {
                    s.spawn(move || {
                        let mut bad = Vec::new();
                        for (f, arch) in chunk {
                            let out = Command::new(ptxas)
                                .args(["-arch", arch, "-o", "/dev/null"])
                                .arg(f)
                                .output()
                                .expect("run ptxas");
                            if !out.status.success() {
                                bad.push(format!(
                                    "{}: {}",
                                    f.display(),
                                    String::from_utf8_lossy(&out.stderr)
                                ));
                            }
                        }
                        bad
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("worker"))
                .collect()
        });
        assert!(
            failures.is_empty(),
            "ptxas {maj}.{min} ({}) rejected {} of {SAMPLE} valid cases; first: {}",
            ptxas.display(),
            failures.len(),
            failures[0]
        );
        eprintln!("ptxas {maj}.{min}: {SAMPLE} valid cases accepted");
    }
}
