//! The committed seed corpora (`corpus/seeds/<target>/`, written by the `gen_seeds` example)
//! are there for every target, small, and still read by their targets as what they were made
//! to be: when the generators change how bytes map to programs, this says to regenerate them.
//! A few seeds that no longer build what they were chosen for are harmless (libFuzzer just
//! starts from other inputs), so the tests allow up to a tenth of them before failing.

use arbitrary::Unstructured;
use std::collections::BTreeSet;
use std::path::PathBuf;
use tcgen05_fuzz_targets::seeds::TARGETS;
use tcgen05_fuzz_targets::{backend, diff_sim, near_miss};
use tcgen05_generators::mutate::MUTATORS;

const REGENERATE: &str =
    "regenerate them: cargo run -p tcgen05-fuzz-targets --example gen_seeds -- corpus/seeds";

fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/seeds")
        .join(target);
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}; {REGENERATE}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_target_has_seeds_and_they_are_small() {
    let mut total = 0;
    for t in TARGETS {
        let s = seeds(t);
        assert!(!s.is_empty(), "corpus/seeds/{t} is empty; {REGENERATE}");
        total += s.iter().map(|(_, b)| b.len()).sum::<usize>();
    }
    // The issue asks for a small committed set: well under 1 MB.
    assert!(total < 1 << 20, "corpus/seeds holds {total} bytes");
}

/// Fails when more than a tenth of `total` are `bad`.
fn at_most_a_tenth(what: &str, bad: &[String], total: usize) {
    assert!(
        bad.len() * 10 <= total,
        "{} of {total} {what}: {bad:?}; {REGENERATE}",
        bad.len()
    );
}

#[test]
fn near_miss_seeds_still_build_near_misses_of_every_mutator() {
    let mut reached = BTreeSet::new();
    let all = seeds("near_miss");
    let mut bad = Vec::new();
    for (name, bytes) in &all {
        match near_miss::case_of(&mut Unstructured::new(bytes)) {
            Ok(Some((_, m))) => {
                reached.insert(m.name);
            }
            _ => bad.push(name.clone()),
        }
    }
    at_most_a_tenth("near_miss seeds build no near miss", &bad, all.len());
    let missing: Vec<&str> = MUTATORS
        .iter()
        .map(|m| m.name)
        .filter(|n| !reached.contains(n))
        .collect();
    // A mutator added since the seeds were written has none: allowed for a few, not for many.
    assert!(
        missing.len() * 10 <= MUTATORS.len(),
        "no seed selects the mutators {missing:?}; {REGENERATE}"
    );
}

#[test]
fn diff_sim_and_backend_seeds_still_build_tcgen05_programs() {
    let all = seeds("diff_sim");
    let bad: Vec<String> = all
        .iter()
        .filter(|(_, bytes)| {
            diff_sim::case_of(&mut Unstructured::new(bytes)).map_or(true, |(c, _)| {
                tcgen05_fuzz_targets::seeds::spellings(&c.program).is_empty()
            })
        })
        .map(|(n, _)| n.clone())
        .collect();
    at_most_a_tenth("diff_sim seeds build no tcgen05 program", &bad, all.len());
    for t in ["ptxas", "cuda"] {
        let all = seeds(t);
        let bad: Vec<String> = all
            .iter()
            .filter(|(_, b)| {
                backend::case_of(&mut Unstructured::new(b))
                    .ok()
                    .flatten()
                    .is_none()
            })
            .map(|(n, _)| n.clone())
            .collect();
        at_most_a_tenth(&format!("{t} seeds build no case"), &bad, all.len());
    }
}

#[test]
fn codec_and_parse_ptx_seeds_are_what_their_targets_read() {
    let mut decoded = 0;
    for (name, bytes) in seeds("codec") {
        // `codec::run`: an even first byte means the rest is a whole case file.
        if bytes[0] & 1 == 0 {
            tcgen05_ir::codec::decode(&bytes[1..])
                .unwrap_or_else(|e| panic!("codec/{name} does not decode: {e}; {REGENERATE}"));
            decoded += 1;
        }
    }
    assert!(decoded > 0, "no whole case file among the codec seeds");
    let mut parsed = 0;
    for (name, bytes) in seeds("parse_ptx") {
        let text = String::from_utf8(bytes).unwrap_or_else(|_| panic!("parse_ptx/{name}"));
        if name.starts_with("generated-") {
            tcgen05_ir::ptx::parse_module(&text, &name)
                .unwrap_or_else(|e| panic!("parse_ptx/{name}: the printer's PTX: {e}"));
            parsed += 1;
        }
        tcgen05_fuzz_targets::parse_ptx::run_text(&text);
    }
    assert!(parsed > 0, "no generated PTX among the parse_ptx seeds");
}
