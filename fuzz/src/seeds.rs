//! Seed corpora of the fuzz targets (`corpus/seeds/<target>/`), written by
//! `cargo run -p tcgen05-fuzz-targets --example gen_seeds -- corpus/seeds`.
//!
//! A seed is an input in the form its target reads, so that libFuzzer starts from programs that
//! already reach deep into the generators, the oracle and the simulator instead of from empty
//! inputs. Every seed is deterministic (no clock, no randomness): rerunning the command gives
//! the same files as long as the generators map bytes to programs the same way.
//!
//! | target | seeds |
//! | --- | --- |
//! | `diff_sim` | byte strings (1 KiB) whose valid program uses a tcgen05 instruction spelling no earlier seed used, or a scheduler or program size no earlier seed had |
//! | `near_miss` | for every mutator, byte strings that select it and give a near miss (two bases each) |
//! | `ptxas`, `cuda` | byte strings of `backend::case_of` giving valid programs and near misses with new spellings |
//! | `ptx_roundtrip` | byte strings whose arbitrary program has a new statement spelling |
//! | `parse_ptx` | the real-world PTX of `corpus/realworld/` (small files whole; of the large ones, the module header and the lines around their first tcgen05 instructions), and the PTX of generated cases |
//! | `codec` | the case files of `corpus/regressions/` and of generated cases, both as whole files and as payloads behind a generated header (the two input forms of `codec::run`) |
//!
//! Byte strings come from the same 64-bit LCG as [`crate::test_n_times`], one stream per
//! candidate number; candidates are tried in order and kept by the rule in the table above.

use crate::{backend, diff_sim, near_miss, ptx_roundtrip};
use arbitrary::Unstructured;
use std::collections::{BTreeMap, BTreeSet};
use tcgen05_generators::Config;
use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_generators::mutate::MUTATORS;
use tcgen05_ir::{Case, Program};

/// Every seed target, in the order of `fuzz/Cargo.toml`.
pub const TARGETS: &[&str] = &[
    "ptx_roundtrip",
    "parse_ptx",
    "codec",
    "diff_sim",
    "near_miss",
    "ptxas",
    "cuda",
];

/// One seed input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// The fuzz target it is for.
    pub target: &'static str,
    /// File name inside `corpus/seeds/<target>/` (says where the seed comes from).
    pub name: String,
    /// The input.
    pub bytes: Vec<u8>,
}

/// Inputs the seeds are made from besides the generators.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// Real-world PTX modules: (file name, text).
    pub realworld_ptx: Vec<(String, String)>,
    /// Stored case files: (name, bytes), e.g. the regression cases.
    pub case_files: Vec<(String, Vec<u8>)>,
}

/// Candidates tried per byte-driven target before giving up on finding more new spellings. It
/// bounds the run time (a few seconds) and is far more than the spellings the generators have.
const CANDIDATES: u64 = 1500;
/// At most this many seeds per byte-driven target: enough to start every instruction family,
/// small enough that `corpus/seeds` stays well under 1 MB (about 0.5 MB in all).
const MAX_PER_TARGET: usize = 40;
/// Real-world files up to this size are seeds whole (the five nvcc modules); larger ones are
/// cut to an excerpt (libFuzzer's `-max_len` grows to the largest seed: keep seeds short).
const PTX_WHOLE_MAX: usize = 10 * 1024;
/// Size of an excerpt of a large real-world module, and the largest generated PTX kept.
const PTX_EXCERPT: usize = 6 * 1024;
/// Generated cases kept for the text and codec seeds.
const GENERATED: usize = 16;

/// `len` bytes from candidate `k` (the LCG of [`crate::test_n_times`], seeded per candidate).
pub fn candidate_bytes(k: u64, len: usize) -> Vec<u8> {
    let mut s = k
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(0x2545_f491_4f6c_dd1d);
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (s >> 56) as u8
        })
        .collect()
}

/// The tcgen05 instruction spellings of a program (the first token of each printed tcgen05
/// line: opcode with every qualifier), which the seeds try to cover.
pub fn spellings(p: &Program) -> BTreeSet<String> {
    tcgen05_ir::ptx::emit(p)
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix('@').map_or(t, |r| {
                r.split_once(char::is_whitespace).map_or("", |(_, x)| x)
            });
            t.trim_start()
                .starts_with("tcgen05.")
                .then(|| t.split_whitespace().next().unwrap_or("").to_string())
        })
        .collect()
}

/// All statement spellings of a program (every printed instruction's first token), for the
/// targets whose programs need not use tcgen05 (`ptx_roundtrip`).
fn statement_spellings(p: &Program) -> BTreeSet<String> {
    tcgen05_ir::ptx::emit(p)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//") && l.ends_with(';'))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// Keeps candidates that bring something new (a key of `keys` not seen yet).
fn pick_new(
    target: &'static str,
    len: usize,
    mut keys: impl FnMut(&[u8]) -> Option<(String, BTreeSet<String>)>,
) -> Vec<Seed> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for k in 0..CANDIDATES {
        if out.len() >= MAX_PER_TARGET {
            break;
        }
        let bytes = candidate_bytes(k, len);
        let Some((label, ks)) = keys(&bytes) else {
            continue;
        };
        let new: Vec<String> = ks.difference(&seen).cloned().collect();
        if new.is_empty() {
            continue;
        }
        seen.extend(new);
        out.push(Seed {
            target,
            name: format!("{label}-{k:04}"),
            bytes,
        });
    }
    out
}

fn size_bucket(p: &Program) -> &'static str {
    // Statement counts of the generators' small, default and large programs.
    match p.size() {
        0..=15 => "small",
        16..=60 => "medium",
        _ => "large",
    }
}

/// `diff_sim` seeds.
pub fn diff_sim() -> Vec<Seed> {
    pick_new("diff_sim", 1024, |b| {
        let (case, sched) = diff_sim::case_of(&mut Unstructured::new(b)).ok()?;
        let mut ks = spellings(&case.program);
        ks.insert(format!("{sched} {}", size_bucket(&case.program)));
        Some((sched.replace(':', "-"), ks))
    })
}

/// `near_miss` seeds: two per mutator (two different base programs).
pub fn near_miss() -> Vec<Seed> {
    let mut per: BTreeMap<&'static str, Vec<(u64, Vec<u8>)>> = BTreeMap::new();
    for k in 0..CANDIDATES * 4 {
        if per.len() == MUTATORS.len() && per.values().all(|v| v.len() >= 2) {
            break;
        }
        let bytes = candidate_bytes(k, 1024);
        let Ok(Some((case, m))) = near_miss::case_of(&mut Unstructured::new(&bytes)) else {
            continue;
        };
        let v = per.entry(m.name).or_default();
        if v.len() < 2
            && v.iter().all(|(_, b)| {
                near_miss::case_of(&mut Unstructured::new(b))
                    .ok()
                    .flatten()
                    .is_none_or(|(c, _)| c.program != case.program)
            })
        {
            v.push((k, bytes));
        }
    }
    per.into_iter()
        .flat_map(|(name, v)| {
            v.into_iter().map(move |(k, bytes)| Seed {
                target: "near_miss",
                name: format!("{name}-{k:05}"),
                bytes,
            })
        })
        .collect()
}

/// `ptxas` and `cuda` seeds (the two read the same input form, `backend::case_of`).
pub fn backend(target: &'static str) -> Vec<Seed> {
    pick_new(target, 512, |b| {
        let (case, _) = backend::case_of(&mut Unstructured::new(b)).ok()??;
        let intent = match case.intent {
            tcgen05_ir::Intent::Valid => "valid",
            _ => "near-miss",
        };
        let mut ks = spellings(&case.program);
        ks.insert(intent.to_string());
        Some((intent.to_string(), ks))
    })
}

/// `ptx_roundtrip` seeds.
pub fn ptx_roundtrip() -> Vec<Seed> {
    pick_new("ptx_roundtrip", 2048, |b| {
        let p = ptx_roundtrip::program_of(&mut Unstructured::new(b)).ok()?;
        Some(("program".to_string(), statement_spellings(&p)))
    })
}

/// Generated cases for the text and codec seeds: valid programs and near misses of the
/// generators' streams (seed 0), kept when they bring a new tcgen05 spelling and print in at
/// most [`PTX_EXCERPT`] bytes.
fn generated_cases() -> Vec<(String, Case)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (mode, label) in [(Mode::Mixed, "mixed"), (Mode::NearMiss(None), "near-miss")] {
        let stream = Stream::new(Config::default(), 0, mode);
        for i in 0..300 {
            let g = stream.case(i);
            let s = spellings(&g.case.program);
            if s.is_subset(&seen) || tcgen05_ir::ptx::emit(&g.case.program).len() > PTX_EXCERPT {
                continue;
            }
            seen.extend(s);
            out.push((format!("{label}-{i:04}"), g.case));
            if out.len() >= GENERATED {
                return out;
            }
        }
    }
    out
}

/// An excerpt of a large PTX module: its header directives and the lines around its first
/// tcgen05 instructions, up to about [`PTX_EXCERPT`] bytes.
pub fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut keep = BTreeSet::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with(".version") || t.starts_with(".target") || t.starts_with(".address_size") {
            keep.insert(i);
        }
    }
    let mut size: usize = keep.iter().map(|&i| lines[i].len() + 1).sum();
    for (i, l) in lines.iter().enumerate() {
        if !l.contains("tcgen05.") {
            continue;
        }
        let from = i.saturating_sub(8);
        for (j, near) in lines.iter().enumerate().skip(from).take(16) {
            if size >= PTX_EXCERPT {
                break;
            }
            if keep.insert(j) {
                size += near.len() + 1;
            }
        }
    }
    let mut out = String::new();
    for i in keep {
        out.push_str(lines[i]);
        out.push('\n');
    }
    out
}

/// `parse_ptx` seeds.
pub fn parse_ptx(src: &Sources) -> Vec<Seed> {
    let mut out = Vec::new();
    for (name, text) in &src.realworld_ptx {
        let (kind, body) = if text.len() <= PTX_WHOLE_MAX {
            ("realworld", text.clone())
        } else {
            ("realworld-excerpt", excerpt(text))
        };
        out.push(Seed {
            target: "parse_ptx",
            name: format!("{kind}-{name}"),
            bytes: body.into_bytes(),
        });
    }
    for (name, case) in generated_cases() {
        out.push(Seed {
            target: "parse_ptx",
            name: format!("generated-{name}.ptx"),
            bytes: tcgen05_ir::ptx::emit(&case.program).into_bytes(),
        });
    }
    out
}

/// `codec` seeds: each case file as a whole (first byte even: `codec::run` reads the rest as a
/// file) and its payload alone (first byte odd: `codec::run` puts a valid header before it).
pub fn codec(src: &Sources) -> Vec<Seed> {
    let mut files: Vec<(String, Vec<u8>)> = src.case_files.clone();
    files.extend(
        generated_cases()
            .into_iter()
            .map(|(n, c)| (format!("generated-{n}"), tcgen05_ir::codec::encode(&c))),
    );
    let header = tcgen05_ir::codec::MAGIC.len() + 2 + 4 + 4;
    let mut out = Vec::new();
    for (name, bytes) in files {
        let mut whole = vec![0u8];
        whole.extend_from_slice(&bytes);
        out.push(Seed {
            target: "codec",
            name: format!("file-{name}"),
            bytes: whole,
        });
        if bytes.len() > header {
            let mut payload = vec![1u8];
            payload.extend_from_slice(&bytes[header..]);
            out.push(Seed {
                target: "codec",
                name: format!("payload-{name}"),
                bytes: payload,
            });
        }
    }
    out
}

/// Every seed of every target.
pub fn all(src: &Sources) -> Vec<Seed> {
    let mut v = ptx_roundtrip();
    v.extend(parse_ptx(src));
    v.extend(codec(src));
    v.extend(diff_sim());
    v.extend(near_miss());
    v.extend(backend("ptxas"));
    v.extend(backend("cuda"));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_seeds_decode_in_both_forms() {
        // The regression cases are real case files; both seed forms must reach a decoded case
        // through `codec::run`'s reading of the first byte (even: file, odd: payload).
        let case = tcgen05_ir::codec::encode(&generated_cases()[0].1);
        let src = Sources {
            realworld_ptx: vec![],
            case_files: vec![("c".into(), case.clone())],
        };
        let seeds = codec(&src);
        let whole = seeds
            .iter()
            .find(|s| s.name == "file-c")
            .expect("file seed");
        assert_eq!(whole.bytes[0] & 1, 0);
        assert_eq!(&whole.bytes[1..], &case[..]);
        let payload = seeds
            .iter()
            .find(|s| s.name == "payload-c")
            .expect("payload");
        assert_eq!(payload.bytes[0] & 1, 1);
        assert_eq!(&payload.bytes[1..], &case[18..]);
    }

    #[test]
    fn excerpts_keep_the_header_and_the_tcgen05_lines() {
        let mut text = String::from(".version 8.7\n.target sm_100a\n.address_size 64\n");
        for i in 0..4000 {
            text.push_str(&format!("  mov.u32 %r{i}, {i};\n"));
        }
        text.push_str("  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n");
        let e = excerpt(&text);
        assert!(e.len() < 2 * PTX_EXCERPT, "{}", e.len());
        assert!(e.starts_with(".version 8.7\n.target sm_100a\n.address_size 64\n"));
        assert!(e.contains("tcgen05.alloc"));
        assert!(
            !e.contains("%r0,"),
            "a line far from any tcgen05 line was kept"
        );
    }

    #[test]
    fn candidates_are_deterministic_and_distinct() {
        assert_eq!(candidate_bytes(7, 64), candidate_bytes(7, 64));
        assert_ne!(candidate_bytes(7, 64), candidate_bytes(8, 64));
    }
}
