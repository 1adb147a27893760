//! A digest of `expect_with` over stored cases, under both editions: the proof that a speed
//! change leaves every result identical.
//!
//! The cases are `.case` files written by `tcgen05-fuzz generate` (the oracle does not depend
//! on the generators, docs/architecture.md rule 1), e.g.
//!
//! ```text
//! tcgen05-fuzz generate --mixed --count 20000 --seed 0 --out /tmp/s4o/mixed
//! tcgen05-fuzz generate --count 5000 --seed 1 --out /tmp/s4o/valid
//! tcgen05-fuzz generate --near-miss --count 5000 --seed 2 --out /tmp/s4o/near
//! cargo run --release -p tcgen05-oracle --example expect_digest -- /tmp/s4o/mixed /tmp/s4o/valid /tmp/s4o/near
//! ```
//!
//! It prints, per folder and edition, the number of cases and the FNV-1a 64 hash of the
//! `Debug` text of every `Expected` (files in name order), then one hash over all of them.

mod common;

use tcgen05_oracle::{Edition, Options, expect_with};

/// FNV-1a 64 over `bytes`, continuing from `h`.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn main() -> Result<(), String> {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    if dirs.is_empty() {
        return Err("usage: expect_digest <folder of .case files>...".into());
    }
    let mut all = 0xcbf2_9ce4_8422_2325u64;
    for dir in &dirs {
        let programs: Vec<_> = common::load_cases(dir, usize::MAX)?
            .into_iter()
            .map(|c| c.program)
            .collect();
        for ed in Edition::ALL {
            let opts = Options::edition(*ed);
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            let mut text = String::new();
            for p in &programs {
                text.clear();
                use std::fmt::Write as _;
                let _ = write!(text, "{:?}", expect_with(p, &opts));
                h = fnv(h, text.as_bytes());
            }
            all = fnv(all, &h.to_le_bytes());
            println!("{dir} {ed}: {} cases, digest {h:016x}", programs.len());
        }
    }
    println!("all: {all:016x}");
    Ok(())
}
