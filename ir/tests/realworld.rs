//! Every real compiler PTX file in `corpus/realworld/` parses, and the per-opcode count of
//! tcgen05 instructions equals the count in `counts.json`, which `scripts/count-tcgen05.py`
//! computes independently (a regular expression over the text with comments stripped).

use std::collections::BTreeMap;
use std::path::PathBuf;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/realworld")
}

#[test]
fn per_opcode_counts_match_the_independent_count() {
    let counts: BTreeMap<String, BTreeMap<String, usize>> =
        serde_json::from_str(&std::fs::read_to_string(corpus().join("counts.json")).unwrap())
            .unwrap();
    assert!(
        counts.len() >= 8,
        "the corpus must hold at least 8 files, has {}",
        counts.len()
    );
    for (file, expected) in &counts {
        let path = corpus().join(file);
        let src =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let m = tcgen05_ir::ptx::parse_module(&src, file).unwrap_or_else(|e| panic!("{e}"));
        let mut got: BTreeMap<String, usize> = BTreeMap::new();
        for f in &m.functions {
            for i in f.instrs().filter(|i| i.opcode.starts_with("tcgen05.")) {
                assert!(
                    i.form.is_some(),
                    "{file}:{}: {} was not decoded",
                    i.pos.line,
                    i.opcode
                );
                *got.entry(i.opcode.to_string()).or_default() += 1;
            }
        }
        assert_eq!(&got, expected, "{file}");
    }
}

#[test]
fn every_corpus_ptx_file_is_listed_in_the_counts() {
    let counts: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(corpus().join("counts.json")).unwrap())
            .unwrap();
    for e in std::fs::read_dir(corpus()).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".ptx") {
            assert!(
                counts.contains_key(&name),
                "{name} is missing from counts.json"
            );
        }
    }
}
