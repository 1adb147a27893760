//! Runs the simulator on the campaign's mixed case stream in a loop (for profiling):
//! `cargo run --release -p tcgen05-drivers --example sim_profile -- [cases]`;
//! `... -- once [cases]` runs the `sim` target once on each of the first cases of the seed-0
//! stream (for `valgrind --tool=callgrind`);
//! `... -- digest [cases]` prints a digest of every scheduler's outcomes (with and without
//! faults) instead, to check that a change to the simulator keeps its behaviour.

use tcgen05_drivers::sim::faults::Faults;

// The allocator of the `tcgen05-fuzz` binary, so that profiles see the same allocation costs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use tcgen05_drivers::sim::{Sched, SimConfig, simulate};
use tcgen05_generators::cases::{Mode, Stream};

fn digest(n: u64) {
    use std::hash::{Hash, Hasher};
    let stream = Stream::new(tcgen05_generators::Config::default(), 7, Mode::Mixed);
    let mut names: Vec<String> = ["sim", "sim:rr", "sim:adversarial", "sim:random@3"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for f in tcgen05_drivers::sim::faults::Fault::ALL {
        names.push(format!("sim+{}", f.name()));
        names.push(format!("sim:adversarial+{}", f.name()));
    }
    let cases: Vec<_> = (0..n).map(|i| stream.case(i).case).collect();
    for name in &names {
        let cfg = SimConfig::parse(name)
            .expect("a sim name")
            .expect("well formed");
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let mut notrun = 0;
        for (i, c) in cases.iter().enumerate() {
            let o = simulate(&c.program, cfg, c.provenance.seed.unwrap_or(0));
            notrun += u32::from(matches!(o, tcgen05_drivers::outcome::Outcome::NotRun(_)));
            if name == "sim:rr" && std::env::var_os("SIM_DUMP").is_some() {
                eprintln!("{i} {o:?}");
            }
            format!("{o:?}").hash(&mut h);
        }
        println!("{name:40} {:016x} notrun {notrun}", h.finish());
    }
}

/// Prints the statements of a case file, one a line, indented by nesting.
fn dump(path: &str) {
    fn go(b: &[tcgen05_ir::Stmt], depth: usize) {
        for s in b {
            let pad = "  ".repeat(depth);
            match s {
                tcgen05_ir::Stmt::If { cond, then, els } => {
                    println!("{pad}if {cond:?}");
                    go(then, depth + 1);
                    println!("{pad}else");
                    go(els, depth + 1);
                }
                tcgen05_ir::Stmt::Loop { count, body } => {
                    println!("{pad}loop {count}");
                    go(body, depth + 1);
                }
                tcgen05_ir::Stmt::Tc(op) => {
                    let t = format!("{op:?}");
                    println!("{pad}{}", &t[..t.len().min(150)]);
                }
                other => println!("{pad}{other:?}"),
            }
        }
    }
    let bytes = std::fs::read(path).expect("readable");
    let c = tcgen05_ir::codec::decode(&bytes).expect("a case");
    println!("{:?} regions {:?}", c.program.launch, c.program.smem);
    for (w, code) in c.program.warps.iter().enumerate() {
        println!("warp {w}:");
        go(code, 1);
    }
    for (f, func) in c.program.funcs.iter().enumerate() {
        println!("func {f}:");
        go(&func.body, 1);
    }
}

/// Runs the `sim` target once on each of the first `n` cases of the mixed stream of seed 0
/// (for instruction counts: `valgrind --tool=callgrind --toggle-collect=...simulate*`).
fn once(n: u64) {
    let stream = Stream::new(tcgen05_generators::Config::default(), 0, Mode::Mixed);
    let cases: Vec<_> = (0..n).map(|i| stream.case(i).case).collect();
    let sim = SimConfig::new(Sched::Random(None));
    let mut done = 0u64;
    for c in &cases {
        let o = simulate(&c.program, sim, c.provenance.seed.unwrap_or(0));
        done += u64::from(o.words().is_some());
    }
    println!("{n} cases ({done} with words)");
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("once") {
        let n = std::env::args()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(2000);
        return once(n);
    }
    if let Some(path) = std::env::args().nth(1).filter(|a| a.ends_with(".case")) {
        return dump(&path);
    }
    if std::env::args().nth(1).as_deref() == Some("digest") {
        let n = std::env::args()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(2000);
        return digest(n);
    }
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20000);
    let stream = Stream::new(tcgen05_generators::Config::default(), 1, Mode::Mixed);
    let cases: Vec<_> = (0..3000).map(|i| stream.case(i).case).collect();
    let sim = SimConfig {
        sched: Sched::Random(None),
        faults: Faults::NONE,
        wording: Default::default(),
    };
    if let Ok(find) = std::env::var("SIM_FIND") {
        for (i, c) in cases.iter().enumerate() {
            let o = simulate(&c.program, sim, c.provenance.seed.unwrap_or(0));
            if let tcgen05_drivers::outcome::Outcome::NotRun(why) = &o
                && why.contains(&find)
            {
                println!(
                    "case {i} ({:?}, {:?}): {why}",
                    c.intent, c.provenance.family
                );
                println!("regions {:?}", c.program.smem.regions);
                c.program.walk(&mut |s| {
                    if let tcgen05_ir::Stmt::Tc(op @ tcgen05_ir::Op::Cp { .. }) = s {
                        println!("  {op:?}");
                    }
                });
                return;
            }
        }
        return;
    }
    if let Some(one) = std::env::var("SIM_ONE")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
    {
        let c = &cases[one];
        eprintln!("{:#?}", c.program);
        for _ in 0..n {
            simulate(&c.program, sim, c.provenance.seed.unwrap_or(0));
        }
        return;
    }
    if std::env::var_os("SIM_SETUP").is_some() {
        // The per-run setup alone: building the machine (code, layout, state) and dropping it.
        let cpu0 = thread_cpu_ns().unwrap_or(0);
        for i in 0..n {
            let c = &cases[(i % 3000) as usize];
            let m = tcgen05_drivers::sim::machine::Machine::new(
                &c.program,
                sim,
                tcgen05_drivers::sim::machine::Policy::Choose,
            );
            std::hint::black_box(&m);
        }
        let cpu = thread_cpu_ns().unwrap_or(0) - cpu0;
        println!("setup only: {:.2} us per run", cpu as f64 * 1e-3 / n as f64);
        return;
    }
    if std::env::var_os("SIM_WORDS").is_some() {
        let mut w: Vec<usize> = cases
            .iter()
            .map(|c| tcgen05_ir::observe::Layout::of(&c.program).total_words())
            .collect();
        w.sort_unstable();
        let sum: usize = w.iter().sum();
        println!(
            "observation words per case: mean {} median {} p90 {} max {}",
            sum / w.len(),
            w[w.len() / 2],
            w[w.len() * 9 / 10],
            w[w.len() - 1]
        );
        return;
    }
    if std::env::var_os("SIM_SLOWEST").is_some() {
        let mut times: Vec<(f64, usize)> = cases
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let t = std::time::Instant::now();
                for _ in 0..5 {
                    simulate(&c.program, sim, c.provenance.seed.unwrap_or(0));
                }
                (t.elapsed().as_secs_f64() / 5.0, i)
            })
            .collect();
        let total: f64 = times.iter().map(|t| t.0).sum();
        times.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut acc = 0.0;
        for (k, (t, i)) in times.iter().enumerate().take(40) {
            acc += t;
            let c = &cases[*i];
            println!(
                "case {i}: {:.1} us ({:.1}% cumulative) stmts {} warps {} ctas {}",
                t * 1e6,
                100.0 * acc / total,
                c.program.warps.iter().map(Vec::len).sum::<usize>(),
                c.program.warps.len(),
                c.program.launch.ctas(),
            );
            if k == 39 {
                println!(
                    "total {:.1} us per case on average",
                    total / cases.len() as f64 * 1e6
                );
            }
        }
        return;
    }
    let t = std::time::Instant::now();
    let cpu0 = thread_cpu_ns();
    let mut done = 0u64;
    for i in 0..n {
        let c = &cases[(i % 3000) as usize];
        let o = simulate(&c.program, sim, c.provenance.seed.unwrap_or(0));
        done += u64::from(o.words().is_some());
    }
    let cpu = match (cpu0, thread_cpu_ns()) {
        (Some(a), Some(b)) => format!(
            "; CPU {:.2} s: {:.0} runs/s, {:.2} us per run",
            (b - a) as f64 * 1e-9,
            n as f64 / ((b - a) as f64 * 1e-9),
            (b - a) as f64 * 1e-3 / n as f64
        ),
        _ => String::new(),
    };
    println!(
        "{n} runs ({done} with words) in {:.2} s: {:.0} runs/s{cpu}",
        t.elapsed().as_secs_f64(),
        n as f64 / t.elapsed().as_secs_f64()
    );
}

/// CPU time of this thread in nanoseconds (Linux: `/proc/thread-self/schedstat`), so that the
/// figure does not count the time other processes of a shared machine take from it.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
