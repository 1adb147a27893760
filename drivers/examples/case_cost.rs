//! Where the pipeline's time goes case by case: the CPU time of the oracle's `expect` and of
//! one `sim` run (random scheduler, only on the cases the campaign runs it on) for each of the
//! first cases of the seed-0 mixed stream, then how concentrated each is (the share of time of
//! the costliest 1%, 5%, ... of cases) and the 15 costliest cases with their shape.
//!
//! ```text
//! cargo run --release -p tcgen05-drivers --example case_cost -- 3000
//! ```
//!
//! `... -- verdicts [cases]` prints instead a digest of `diff::compare_with`'s verdicts on the
//! outcomes of `sim` and `sim:adversarial`, without and with each injected fault (so that a
//! change to the comparison can be shown to keep every verdict).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;
use tcgen05_drivers::sim::{Sched, SimConfig, simulate};
use tcgen05_generators::cases::{Mode, Stream};

fn verdicts(n: u64) {
    use std::hash::{Hash, Hasher};
    let stream = Stream::new(tcgen05_generators::Config::default(), 3, Mode::Mixed);
    let opts = tcgen05_oracle::Options::default();
    let cases: Vec<_> = (0..n)
        .map(|i| {
            let c = stream.case_at(i);
            let e = tcgen05_oracle::expect_with(&c.program, &opts);
            let l = tcgen05_ir::observe::Layout::of(&c.program);
            (c, e, l)
        })
        .collect();
    let mut names = vec!["sim".to_string(), "sim:adversarial".to_string()];
    for f in tcgen05_drivers::sim::faults::Fault::ALL {
        names.push(format!("sim+{}", f.name()));
        names.push(format!("sim:adversarial+{}", f.name()));
    }
    let mut all = std::collections::hash_map::DefaultHasher::new();
    for name in &names {
        let cfg = SimConfig::parse(name)
            .expect("a sim name")
            .expect("well formed");
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let mut agree = 0;
        for (c, e, l) in &cases {
            let o = simulate(&c.program, cfg, c.provenance.seed.unwrap_or(0));
            let v = tcgen05_drivers::diff::compare_with(&c.program, l, e, &o);
            agree += u32::from(v == tcgen05_drivers::diff::Verdict::Agree);
            format!("{v:?}").hash(&mut h);
        }
        println!("{name:40} {:016x} agree {agree}", h.finish());
        h.finish().hash(&mut all);
    }
    println!("all: {:016x}", all.finish());
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("verdicts") {
        let n = std::env::args()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(2000);
        return verdicts(n);
    }
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    let reps = 10;
    let stream = Stream::new(tcgen05_generators::Config::default(), 0, Mode::Mixed);
    let opts = tcgen05_oracle::Options::default();
    let sim = SimConfig::new(Sched::Random(None));
    let mut rows = Vec::new();
    for i in 0..n {
        let c = stream.case_at(i);
        let t = Instant::now();
        let mut e = None;
        for _ in 0..reps {
            e = Some(tcgen05_oracle::expect_with(&c.program, &opts));
        }
        let te = t.elapsed().as_nanos() as f64 / reps as f64 / 1000.0;
        let e = e.unwrap();
        let mut ts = 0.0;
        if tcgen05_drivers::diff::verdict_for_any_run(&e).is_none() {
            let t = Instant::now();
            for _ in 0..reps {
                std::hint::black_box(simulate(&c.program, sim, c.provenance.seed.unwrap_or(0)));
            }
            ts = t.elapsed().as_nanos() as f64 / reps as f64 / 1000.0;
        }
        let mut stmts = 0;
        let mut tc = 0;
        c.program.walk(&mut |s| {
            stmts += 1;
            if let tcgen05_ir::Stmt::Tc(_) = s {
                tc += 1;
            }
        });
        let l = &c.program.launch;
        rows.push((
            te,
            ts,
            format!(
                "{i} {:?} {:?} ctas {} warps {} stmts {stmts} tc {tc}",
                c.intent,
                c.provenance.family,
                l.ctas(),
                l.warps_per_cta
            ),
        ));
    }
    for (k, name) in [(0usize, "expect"), (1, "sim")] {
        let mut v: Vec<_> = rows
            .iter()
            .map(|r| (if k == 0 { r.0 } else { r.1 }, &r.2))
            .collect();
        v.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
        let total: f64 = v.iter().map(|x| x.0).sum();
        println!("{name}: mean {:.1} us", total / n as f64);
        for frac in [0.01, 0.05, 0.1, 0.25, 0.5] {
            let m = (n as f64 * frac) as usize;
            let s: f64 = v[..m].iter().map(|x| x.0).sum();
            println!(
                "  top {:>4.0}%: {:.0}% of time",
                frac * 100.0,
                s / total * 100.0
            );
        }
        for x in &v[..15] {
            println!("  {:8.1} {}", x.0, x.1);
        }
    }
}
