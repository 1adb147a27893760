//! Where `expect` spends its time by MMA form: each stored case is put in the class of the
//! first of its MMAs' forms in the order below (block-scaled, sparse, `cta_group::2`, A in
//! TMEM, dense with N > 128, dense with N <= 128, no MMA), `expect_with` is timed on it (best
//! of the rounds), and each class's share of the cases and of the time is printed.
//!
//! ```text
//! tcgen05-fuzz generate --mixed --count 3000 --seed 0 --out /tmp/s4o/mixed
//! cargo run --release -p tcgen05-oracle --example expect_forms -- /tmp/s4o/mixed 3000 3
//! ```
//!
//! Arguments: the folder, how many cases (files in name order), how many rounds.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use std::hint::black_box;
use std::time::Instant;
use tcgen05_ir::{CtaGroup, MmaA, Op, Program};
use tcgen05_oracle::{Options, expect_with};

const CLASSES: [&str; 7] = [
    "block-scaled",
    "sparse",
    "cta_group::2",
    "A in TMEM",
    "dense N > 128",
    "dense N <= 128",
    "no MMA",
];

/// The class (index into [`CLASSES`]) of a program: its costliest MMA form.
fn class(p: &Program) -> usize {
    let mut best = CLASSES.len() - 1;
    for op in p.ops() {
        let Op::Mma(m) = op else { continue };
        let n = (m.idesc >> 17 & 0x3F) << 3;
        let k = if m.form.block_scale {
            0
        } else if m.form.sp {
            1
        } else if m.form.cta_group == CtaGroup::Two {
            2
        } else if matches!(m.a, MmaA::Tmem(_)) {
            3
        } else if n > 128 {
            4
        } else {
            5
        };
        best = best.min(k);
    }
    best
}

fn main() -> Result<(), String> {
    let (programs, rounds) =
        common::programs_and_rounds("usage: expect_forms <folder> [cases] [rounds]")?;
    let opts = Options::default();
    let mut per_case = vec![f64::MAX; programs.len()];
    for _ in 0..rounds {
        for (k, p) in programs.iter().enumerate() {
            let t = Instant::now();
            black_box(expect_with(black_box(p), &opts));
            per_case[k] = per_case[k].min(t.elapsed().as_secs_f64());
        }
    }
    let mut cases = [0usize; CLASSES.len()];
    let mut time = [0f64; CLASSES.len()];
    for (p, t) in programs.iter().zip(&per_case) {
        let c = class(p);
        cases[c] += 1;
        time[c] += t;
    }
    let (all_cases, all_time) = (programs.len().max(1) as f64, time.iter().sum::<f64>());
    println!(
        "{:<16} {:>6} {:>8} {:>8} {:>10}",
        "class", "cases", "% cases", "% time", "us/case"
    );
    for (i, name) in CLASSES.iter().enumerate() {
        println!(
            "{name:<16} {:>6} {:>7.1}% {:>7.1}% {:>10.1}",
            cases[i],
            100.0 * cases[i] as f64 / all_cases,
            100.0 * time[i] / all_time.max(f64::MIN_POSITIVE),
            time[i] / (cases[i].max(1) as f64) * 1e6
        );
    }
    println!(
        "all              {:>6}                   {:>10.1}",
        programs.len(),
        all_time / all_cases * 1e6
    );
    Ok(())
}
