//! `expect_with` in a loop over stored cases (`.case` files from `tcgen05-fuzz generate`): the
//! CPU time per case, and a steady load to profile (callgrind, perf).
//!
//! ```text
//! cargo run --release -p tcgen05-oracle --example expect_loop -- /tmp/s4o/mixed 2000 3
//! valgrind --tool=callgrind --toggle-collect='expect_loop::one' \
//!     target/release/examples/expect_loop /tmp/s4o/mixed 2000 1
//! ```
//!
//! Arguments: the folder, how many cases (files in name order), how many rounds.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use std::hint::black_box;
use tcgen05_oracle::{Options, expect_with};

/// This thread's CPU time in nanoseconds (`/proc/thread-self/schedstat`, field 1), if readable.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// One `expect_with` call and the drop of its result, never inlined: with fat LTO the
/// oracle's entry points are inlined into `main`, so this is what callgrind's
/// `--toggle-collect='expect_loop::one'` counts (the loading of the cases stays out).
#[inline(never)]
fn one(p: &tcgen05_ir::Program, opts: &Options) {
    black_box(expect_with(black_box(p), opts));
}

fn main() -> Result<(), String> {
    let (programs, rounds) =
        common::programs_and_rounds("usage: expect_loop <folder> [cases] [rounds]")?;
    let opts = Options::default();
    for r in 0..rounds {
        let c0 = thread_cpu_ns();
        for p in &programs {
            one(p, &opts);
        }
        if let (Some(c0), Some(c1)) = (c0, thread_cpu_ns()) {
            let per = (c1 - c0) as f64 / programs.len() as f64;
            println!(
                "round {r}: {} cases, {:.2} us/case CPU ({:.0} cases/s)",
                programs.len(),
                per / 1e3,
                1e9 / per
            );
        }
    }
    Ok(())
}
