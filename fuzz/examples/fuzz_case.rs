//! Turns a fuzz input (a crash file from `fuzz/artifacts/<target>/`, or a corpus entry) into the
//! case the target built from it, so `tcgen05-fuzz show` can print it:
//!
//! ```text
//! cargo run -p tcgen05-fuzz-targets --example fuzz_case -- diff_sim fuzz/artifacts/diff_sim/crash-... crash.case
//! tcgen05-fuzz show crash.case
//! ```

use arbitrary::Unstructured;
use tcgen05_fuzz_targets::{backend, diff_sim, near_miss, ptx_roundtrip};
use tcgen05_ir::{Case, Intent, Provenance};

fn case_of(target: &str, data: &[u8]) -> Result<Case, String> {
    let mut u = Unstructured::new(data);
    let none = || format!("this {target} input builds no case (the target returns early on it)");
    match target {
        "diff_sim" => diff_sim::case_of(&mut u)
            .map(|(c, _)| c)
            .map_err(|e| e.to_string()),
        "near_miss" => near_miss::case_of(&mut u)
            .map_err(|e| e.to_string())?
            .map(|(c, _)| c)
            .ok_or_else(none),
        "ptxas" | "cuda" => backend::case_of(&mut u)
            .map_err(|e| e.to_string())?
            .map(|(c, _)| c)
            .ok_or_else(none),
        "ptx_roundtrip" => {
            let program = ptx_roundtrip::program_of(&mut u).map_err(|e| e.to_string())?;
            Ok(Case {
                program,
                intent: Intent::Unknown,
                provenance: Provenance {
                    seed: None,
                    origin: "cargo fuzz ptx_roundtrip".into(),
                    family: None,
                },
            })
        }
        "codec" => tcgen05_ir::codec::decode(data)
            .map_err(|e| format!("the input is not a case file: {e}")),
        "parse_ptx" => Err("parse_ptx inputs are PTX text already: read the file itself".into()),
        t => Err(format!(
            "unknown fuzz target `{t}` (diff_sim, near_miss, ptxas, cuda, ptx_roundtrip, codec, parse_ptx)"
        )),
    }
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [target, input, out] = args.as_slice() else {
        eprintln!("usage: fuzz_case <target> <fuzz input> <out.case>");
        return std::process::ExitCode::from(2);
    };
    let data = match std::fs::read(input) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{input}: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match case_of(target, &data) {
        Ok(case) => {
            if let Err(e) = std::fs::write(out, tcgen05_ir::codec::encode(&case)) {
                eprintln!("{out}: {e}");
                return std::process::ExitCode::from(2);
            }
            println!(
                "{out}: {} statements; print it with: tcgen05-fuzz show {out}",
                case.program.size()
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::from(2)
        }
    }
}
