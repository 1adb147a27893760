//! Shape statistics of stored cases (`.case` files): warps, events and synchronizing events
//! per case, to see where the oracle's per-event costs come from.
//!
//! ```text
//! cargo run --release -p tcgen05-oracle --example stream_stats -- /tmp/s4o/mixed 2000
//! ```

mod common;

use tcgen05_oracle::run::unroll::unroll;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args.first().ok_or("usage: stream_stats <folder> [cases]")?;
    let n: usize = args
        .get(1)
        .map_or(Ok(2000), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let cases = common::load_cases(dir, n)?;
    let (mut warps, mut events, mut stmts, mut checked) = (0usize, 0usize, 0usize, 0usize);
    let mut tc = 0usize;
    for case in &cases {
        let p = &case.program;
        if !tcgen05_oracle::check(p).is_empty() {
            continue;
        }
        checked += 1;
        stmts += p.warps.iter().map(Vec::len).sum::<usize>();
        let u = unroll(p);
        warps += u.warps.len();
        events += u.warps.iter().map(Vec::len).sum::<usize>();
        tc += u
            .warps
            .iter()
            .flatten()
            .filter(|e| matches!(e.stmt, tcgen05_ir::Stmt::Tc(_)))
            .count();
    }
    let c = checked.max(1) as f64;
    println!(
        "{} cases, {checked} statically valid: per valid case {:.1} global warps, {:.1} events, {:.1} top-level statements, {:.1} tcgen05 events",
        cases.len(),
        warps as f64 / c,
        events as f64 / c,
        stmts as f64 / c,
        tc as f64 / c
    );
    Ok(())
}
