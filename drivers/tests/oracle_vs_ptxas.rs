//! The static verdict of the oracle against every installed ptxas, on the probe programs of
//! `tcgen05_oracle::probes` (at least 100 probes).
//!
//! ptxas is found where the ptxas targets find it (`ptxas::installed`: `.tools/cuda` of
//! `scripts/setup-ptxas`, `TCGEN05_PTXAS`, `PATH`). Without any at build time the test is
//! ignored (`cfg(tcgen05_no_ptxas)`, set by `drivers/build.rs`; never under `CI`, which installs
//! ptxas).
//!
//! A probe whose target or `.version` a ptxas does not know is skipped for that ptxas (an
//! assembler that predates the target cannot judge it). Every other disagreement must be a
//! known finding about ptxas, listed in [`FINDINGS`] and in `oracle/README.md`; a new one
//! fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;
use tcgen05_oracle::probes::{Probe, probes};

/// Known disagreements: (probe name, ptxas versions, what ptxas does). Mirrored in
/// oracle/README.md, section "ptxas findings".
const FINDINGS: &[(&str, &[&str], &str)] = &[
    (
        "ctagroup-mixed-unreached",
        &["12.8", "12.9"],
        "accepts a kernel mixing .cta_group::1 and ::2 when the ::2 code is never reached (GEN-CTAGROUP-UNIFORM); 13.0+ rejects",
    ),
    (
        "ctagroup-mixed-in-func",
        &["12.8", "12.9"],
        "accepts a kernel mixing .cta_group::1 and ::2 across a called .func (GEN-CTAGROUP-UNIFORM); 13.0+ rejects",
    ),
    (
        "pair-declared-1",
        &["12.8", "12.9", "13.0", "13.5"],
        "accepts ::2 alloc/dealloc/relinquish in a kernel declaring .reqnctapercluster 1 (GEN-PEER-EXISTS, a derived row)",
    ),
    (
        "st-noaligned",
        &["12.8", "12.9", "13.0"],
        "accepts tcgen05.st without .aligned (GEN-SYNC-QUAL); 13.5 rejects",
    ),
    (
        "mma.kind::mxf4-sm_100a-8.6",
        &["12.9", "13.0"],
        "rejects .kind::mxf4.block_scale with no scale-vector size at .version 8.6 (\"'.block32' requires 8.8\"): it treats the implicit default (MMA-BS-MXF4-DEFAULT) as a written .block32; 12.8 and 13.5 accept",
    ),
    (
        "mma.kind::mxf8f6f4.scale_vec::1X-sm_103a-8.8",
        &["12.9", "13.0", "13.5"],
        "accepts .scale_vec::1X on sm_103a, where the reference (MMA-BS-VEC-TARGET) lists only sm_100a",
    ),
];

/// Every installed ptxas, as (`major.minor`, binary).
fn ptxas_binaries() -> Vec<(String, PathBuf)> {
    tcgen05_drivers::ptxas::installed()
        .into_iter()
        .map(|i| (i.version.label(), i.path))
        .collect()
}

#[derive(Debug, PartialEq)]
enum Verdict {
    Accepted,
    Rejected(String),
    /// The ptxas does not know the target or the `.version`.
    Unsupported,
}

fn assemble(ptxas: &Path, dir: &Path, p: &Probe) -> Verdict {
    let file = dir.join(format!("{}.ptx", p.name.replace(['/', ':'], "_")));
    std::fs::write(&file, tcgen05_ir::ptx::emit(&p.program)).expect("write probe");
    let out = Command::new(ptxas)
        .arg(format!("-arch={}", p.program.launch.target))
        .arg("-o")
        .arg("/dev/null")
        .arg(&file)
        .output()
        .expect("run ptxas");
    if out.status.success() {
        return Verdict::Accepted;
    }
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if err.contains("Unsupported .version") || err.contains("is not defined for option 'gpu-name'")
    {
        return Verdict::Unsupported;
    }
    Verdict::Rejected(err.lines().take(2).collect::<Vec<_>>().join(" | "))
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn static_verdicts_agree_with_every_installed_ptxas() {
    let bins = ptxas_binaries();
    assert!(
        !bins.is_empty(),
        "no ptxas found, though the build found one: run scripts/setup-ptxas, or `touch \
         drivers/build.rs` so the tests that need ptxas are ignored"
    );
    let ps = probes();
    assert!(ps.len() >= 100);
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let mut new = Vec::new();
    let mut known = 0;
    let mut compared = 0;
    for (ver, bin) in &bins {
        for p in &ps {
            let oracle_ok = tcgen05_oracle::check(&p.program).is_empty();
            let v = assemble(bin, dir, p);
            let ptxas_ok = match &v {
                Verdict::Unsupported => continue,
                Verdict::Accepted => true,
                Verdict::Rejected(_) => false,
            };
            compared += 1;
            if ptxas_ok == oracle_ok {
                continue;
            }
            let is_known = FINDINGS
                .iter()
                .any(|(n, vs, _)| *n == p.name && vs.contains(&ver.as_str()));
            if is_known {
                known += 1;
            } else {
                new.push(format!(
                    "{ver} {}: oracle {}, ptxas {v:?}",
                    p.name,
                    if oracle_ok { "accepts" } else { "rejects" }
                ));
            }
        }
    }
    eprintln!(
        "{} probes, {} ptxas, {compared} comparisons, {known} known findings",
        ps.len(),
        bins.len()
    );
    // Each ptxas judged most probes (the oldest knows neither sm_103a nor .version 9.x).
    assert!(
        compared >= ps.len() * bins.len() / 2,
        "only {compared} comparisons"
    );
    assert!(
        new.is_empty(),
        "disagreements not yet recorded as findings:\n{}",
        new.join("\n")
    );
}
