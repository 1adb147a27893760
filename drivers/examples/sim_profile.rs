//! Runs the simulator on generated cases in a loop (for profiling):
//! `cargo run --release -p tcgen05-drivers --example sim_profile -- [cases]`.

use tcgen05_drivers::sim::faults::Faults;
use tcgen05_drivers::sim::{Sched, SimConfig, simulate};

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let cfg = tcgen05_generators::Config::default();
    let cases: Vec<_> = (0..256)
        .map(|i| tcgen05_generators::valid_case(&cfg, tcgen05_generators::case_seed(1, i)))
        .collect();
    let sim = SimConfig {
        sched: Sched::Random(None),
        faults: Faults::NONE,
    };
    let t = std::time::Instant::now();
    let mut done = 0u64;
    for i in 0..n {
        let o = simulate(&cases[(i % 256) as usize].program, sim, i);
        done += u64::from(o.words().is_some());
    }
    println!(
        "{n} runs ({done} with words) in {:.2} s: {:.0} runs/s",
        t.elapsed().as_secs_f64(),
        n as f64 / t.elapsed().as_secs_f64()
    );
}
