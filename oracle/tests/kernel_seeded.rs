//! Seeded-bug variants of the real-world corpus: each edit of the PTX text breaks one
//! rule, and `check` must report that rule.
//!
//! The edits (each applied to a copy of one corpus file):
//! - `no-dealloc-N`: delete the N-th `tcgen05.dealloc` line: TMEM stays allocated on the paths
//!   through it (ALLOC-FREE-BEFORE-EXIT, §9.7.16.1.2);
//! - `relinquish-before-alloc`: move the first `relinquish_alloc_permit` line to just before the
//!   first alloc (ALLOC-AFTER-RELINQUISH, §9.7.16.7.1);
//! - `no-wait-ld`: delete the last `tcgen05.wait::ld` before the first dealloc: the ld is then
//!   pending at the dealloc in the same warp (MCM-LD-WAR, §9.7.16.6.4.5) or when it hands TMEM
//!   to another warp (MCM-XTHREAD-NONPIPE, §9.7.16.6.4.4);
//! - `flip-cta-group`: flip `.cta_group::1`/`::2` on the first dealloc (GEN-CTAGROUP-UNIFORM);
//! - `elect-dealloc`: put the first dealloc under an elect-one branch (GEN-ALIGNED-CONVERGENT,
//!   §9.7.16.7.1);
//! - `no-cluster-barrier`: delete the `barrier.cluster.*` lines before a `::2` alloc
//!   (GEN-PEER-ACTIVE, §9.7.16.7.1); only where the kernel has them.
//!
//! `TCGEN05_WRITE_BUGS=1 cargo test -p tcgen05-oracle --test kernel_seeded` also writes every
//! variant to `corpus/realworld/bugs/`.

use std::path::{Path, PathBuf};
use tcgen05_ir::RuleId;
use tcgen05_oracle::kernel::{Options, check_source};

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/realworld")
}

/// One variant: its name, the rules any of which is the right report, and its text.
struct Variant {
    name: String,
    expect: &'static [RuleId],
    text: String,
    /// The line of the edit in the variant (for the report).
    line: usize,
}

fn is_instr(l: &str, op: &str) -> bool {
    let t = l.trim_start();
    let t = if t.starts_with('@') {
        t.split_once(char::is_whitespace)
            .map_or("", |x| x.1)
            .trim_start()
    } else {
        t
    };
    t.starts_with(op)
}

fn join(lines: &[&str]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

fn variants(src: &str) -> Vec<Variant> {
    let lines: Vec<&str> = src.lines().collect();
    let find_all = |op: &str| -> Vec<usize> {
        (0..lines.len())
            .filter(|&i| is_instr(lines[i], op))
            .collect()
    };
    let deallocs = find_all("tcgen05.dealloc");
    let allocs = find_all("tcgen05.alloc");
    let relqs = find_all("tcgen05.relinquish_alloc_permit");
    let mut out = Vec::new();
    for (k, &d) in deallocs.iter().enumerate() {
        let mut v = lines.clone();
        v.remove(d);
        out.push(Variant {
            name: format!("no-dealloc-{}", k + 1),
            expect: &[RuleId::AllocFreeBeforeExit],
            text: join(&v),
            line: d + 1,
        });
    }
    if let (Some(&r), Some(&a)) = (relqs.first(), allocs.first()) {
        let mut v = lines.clone();
        let rl = v.remove(r);
        let a = if r < a { a - 1 } else { a };
        v.insert(a, rl);
        out.push(Variant {
            name: "relinquish-before-alloc".into(),
            expect: &[RuleId::AllocAfterRelinquish],
            text: join(&v),
            line: a + 1,
        });
    }
    if let Some(&d) = deallocs.first() {
        if let Some(w) = (0..d)
            .rev()
            .find(|&i| is_instr(lines[i], "tcgen05.wait::ld"))
        {
            let mut v = lines.clone();
            v.remove(w);
            out.push(Variant {
                name: "no-wait-ld".into(),
                expect: &[RuleId::McmLdWar, RuleId::McmXthreadNonpipe],
                text: join(&v),
                line: w + 1,
            });
        }
        let flipped = if lines[d].contains(".cta_group::1") {
            lines[d].replace(".cta_group::1", ".cta_group::2")
        } else {
            lines[d].replace(".cta_group::2", ".cta_group::1")
        };
        let mut v = lines.clone();
        v[d] = &flipped;
        out.push(Variant {
            name: "flip-cta-group".into(),
            expect: &[RuleId::GenCtagroupUniform],
            text: join(&v),
            line: d + 1,
        });
        let mut v: Vec<&str> = lines[..d].to_vec();
        v.extend_from_slice(&[
            "{",
            ".reg .pred %p_seeded_elect;",
            "elect.sync _|%p_seeded_elect, -1;",
            "@!%p_seeded_elect bra $L__seeded_skip;",
            lines[d],
            "$L__seeded_skip:",
            "}",
        ]);
        v.extend_from_slice(&lines[d + 1..]);
        out.push(Variant {
            name: "elect-dealloc".into(),
            expect: &[RuleId::GenAlignedConvergent],
            text: join(&v),
            line: d + 5,
        });
    }
    if let Some(&a) = allocs.iter().find(|&&a| lines[a].contains("cta_group::2")) {
        let cl: Vec<usize> = (0..a)
            .filter(|&i| is_instr(lines[i], "barrier.cluster."))
            .collect();
        if !cl.is_empty() {
            let v: Vec<&str> = lines
                .iter()
                .enumerate()
                .filter(|(i, _)| !cl.contains(i))
                .map(|x| *x.1)
                .collect();
            out.push(Variant {
                name: "no-cluster-barrier".into(),
                expect: &[RuleId::GenPeerActive],
                text: join(&v),
                line: a + 1 - cl.len(),
            });
        }
    }
    out
}

/// Variants that break nothing, with the evidence: the warp-specialized kernels have a second
/// dealloc site (the first in `triton_*_ws`, the second in `gluon_*_ws`) in the block the worker
/// partitions reach through `brx.idx` (an entry of the `.branchtargets` table) when the default
/// partition tells them to exit; no other edge enters that block. Its guard `%p1` is
/// `%tid.x < 32` (`setp.lt.u32 %p1, %r1, 32`), false in every worker warp (warps 4 and up), and
/// warp 0 leaves through the other dealloc site, so the site is dead: deleting it, or putting it
/// under elect, changes no execution.
const DEAD_SITES: &[&str] = &[
    "gluon_matmul_ws_persistent__no-dealloc-2.ptx",
    "triton_attn_fwd_ws__no-dealloc-1.ptx",
    "triton_attn_fwd_ws__elect-dealloc.ptx",
    "triton_matmul_persistent_ws__no-dealloc-1.ptx",
    "triton_matmul_persistent_ws__elect-dealloc.ptx",
];

#[test]
fn every_seeded_bug_is_found_with_its_rule() {
    let write = std::env::var_os("TCGEN05_WRITE_BUGS").is_some();
    let bugs = corpus_dir().join("bugs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("ptx"))
        .collect();
    files.sort();
    let mut per_kind: std::collections::BTreeMap<String, usize> = Default::default();
    let mut failures = Vec::new();
    let mut total = 0;
    for p in &files {
        let src = std::fs::read_to_string(p).unwrap();
        let stem = p.file_stem().unwrap().to_str().unwrap();
        let base: Vec<(RuleId, u32)> = check_source(&src, "orig", &Options::default())
            .unwrap()
            .into_iter()
            .flat_map(|k| k.findings)
            .map(|f| (f.rule, f.line))
            .collect();
        for v in variants(&src) {
            total += 1;
            let kind = v
                .name
                .trim_end_matches(|c: char| c.is_ascii_digit() || c == '-')
                .to_string();
            *per_kind.entry(kind).or_default() += 1;
            let name = format!("{stem}__{}.ptx", v.name);
            if write {
                std::fs::create_dir_all(&bugs).unwrap();
                std::fs::write(bugs.join(&name), &v.text).unwrap();
            }
            let reps = check_source(&v.text, &name, &Options::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let found: Vec<RuleId> = reps
                .iter()
                .flat_map(|k| &k.findings)
                .map(|f| f.rule)
                .collect();
            // The expected rule must be new: not already reported on the unmodified kernel.
            let new = found
                .iter()
                .any(|r| v.expect.contains(r) && !base.iter().any(|b| b.0 == *r));
            if !new && !DEAD_SITES.contains(&name.as_str()) {
                failures.push(format!(
                    "{name} (edit at line {}): expected one of {:?}, found {found:?}",
                    v.line, v.expect
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} variants missed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(total >= 100, "{total}");
    // Each general edit applies to every kernel of the corpus that has the instruction.
    for k in [
        "no-dealloc",
        "relinquish-before-alloc",
        "no-wait-ld",
        "flip-cta-group",
        "elect-dealloc",
    ] {
        assert!(
            per_kind.get(k).copied().unwrap_or(0) >= 12,
            "{k}: {per_kind:?}"
        );
    }
    assert!(
        per_kind.get("no-cluster-barrier").copied().unwrap_or(0) >= 1,
        "{per_kind:?}"
    );
}

#[test]
fn the_mutator_edits_what_it_says() {
    let src = ".entry k()\n{\n@%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n\
        @%p1 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\ntcgen05.ld.sync.aligned.32x32b.x1.b32 {%r2}, [%r3];\n\
        tcgen05.wait::ld.sync.aligned;\n@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;\nret;\n}\n";
    let v = variants(src);
    let names: Vec<&str> = v.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "no-dealloc-1",
            "relinquish-before-alloc",
            "no-wait-ld",
            "flip-cta-group",
            "elect-dealloc"
        ]
    );
    assert!(!v[0].text.contains("tcgen05.dealloc"));
    let t = &v[1].text;
    assert!(t.find("relinquish").unwrap() < t.find("tcgen05.alloc").unwrap());
    assert!(!v[2].text.contains("wait::ld"));
    assert!(v[3].text.contains("tcgen05.dealloc.cta_group::2"));
    assert!(v[4].text.contains("elect.sync _|%p_seeded_elect"));
    let _ = Path::new("");
}
