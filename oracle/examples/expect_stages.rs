//! Where `expect` spends its time on stored cases: the stages of `run::expect` (check,
//! unroll, clocks, UB scan, allocation analysis, TMEM data rules, TMEM values, the whole
//! call) timed separately, and how the whole call's time is spread over the cases (the share
//! of the costliest tenth).
//!
//! ```text
//! cargo run --release -p tcgen05-oracle --example expect_stages -- /tmp/s4o/mixed 2000 3
//! ```
//!
//! Arguments: the folder, how many cases (files in name order), how many rounds (the best
//! round of each stage is reported). The stages after `check` run only on statically valid
//! programs whose clocks are well formed, as in `expect`; their sum differs from the whole
//! call by what `expect` does around them (notes, sorting, merging, dropping). The stages
//! run on the whole grid: where `expect` judges a grid of identical CTAs on its first CTA
//! (`run::symmetric`), the whole call does less than the stages.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use std::hint::black_box;
use std::time::Instant;
use tcgen05_oracle::run::{Findings, alloc, mma_rules, sync, tmem, ub, unroll};
use tcgen05_oracle::{Options, expect_with};

const STAGES: [&str; 8] = [
    "check",
    "unroll",
    "clocks",
    "ub scan",
    "alloc",
    "data rules",
    "values",
    "expect",
];

fn main() -> Result<(), String> {
    let (programs, rounds) =
        common::programs_and_rounds("usage: expect_stages <folder> [cases] [rounds]")?;
    let opts = Options::default();
    let mut best = [f64::MAX; 8];
    let mut per_case = vec![f64::MAX; programs.len()];
    for _ in 0..rounds {
        let mut total = [0f64; 8];
        for (k, p) in programs.iter().enumerate() {
            let t = Instant::now();
            let v = black_box(tcgen05_oracle::check(black_box(p)));
            total[0] += t.elapsed().as_secs_f64();
            if !v.is_empty() {
                continue;
            }
            let t = Instant::now();
            let u = black_box(unroll::unroll(p));
            total[1] += t.elapsed().as_secs_f64();
            if u.broken.is_some() {
                continue;
            }
            let t = Instant::now();
            let c = black_box(sync::clocks(&u, p, None));
            total[2] += t.elapsed().as_secs_f64();
            if c.malformed.is_some() {
                continue;
            }
            let mut f = Findings::default();
            let t = Instant::now();
            ub::scan(p, &u, &mut f);
            total[3] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let a = black_box(alloc::analyse(p, &u, &c, &opts, &mut f));
            total[4] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            mma_rules::data(&u, &c, &a, &mut f);
            total[5] += t.elapsed().as_secs_f64();
            if f.undefined.is_empty() {
                let t = Instant::now();
                black_box(tmem::values(p, &u, &c, &a, &opts, &mut f));
                total[6] += t.elapsed().as_secs_f64();
            }
            let _ = k;
        }
        for (k, p) in programs.iter().enumerate() {
            let t = Instant::now();
            black_box(expect_with(black_box(p), &opts));
            let s = t.elapsed().as_secs_f64();
            total[7] += s;
            per_case[k] = per_case[k].min(s);
        }
        for (b, t) in best.iter_mut().zip(total) {
            *b = b.min(t);
        }
    }
    let cases = programs.len().max(1) as f64;
    for (name, b) in STAGES.iter().zip(best) {
        println!(
            "{name:>10}: {:8.2} us/case ({:5.1}% of expect)",
            b / cases * 1e6,
            100.0 * b / best[7]
        );
    }
    per_case.sort_by(|a, b| b.total_cmp(a));
    let sum: f64 = per_case.iter().sum();
    let tenth = per_case.len().div_ceil(10);
    let top: f64 = per_case[..tenth].iter().sum();
    println!(
        "costliest tenth of the cases: {:.1}% of the time (best per case: median {:.2} us, 90th percentile {:.2} us, max {:.2} us)",
        100.0 * top / sum,
        per_case[per_case.len() / 2] * 1e6,
        per_case[tenth.saturating_sub(1)] * 1e6,
        per_case[0] * 1e6
    );
    Ok(())
}
