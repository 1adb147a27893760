//! Why `cuda-emu` does not run cases: the cases of the campaign's default mix
//! (`Mode::Mixed`) that a running target runs (the oracle's verdict depends on the run:
//! `diff::verdict_for_any_run` is `None`), lowered for sm_90 (`cuda::emu::lower`), the
//! refusals counted by reason, and the cases whose MMA results the emulation does not compute
//! (run, with those words left out of the compare) counted by reason
//! (`cuda::emu::not_emulated`).
//!
//! ```text
//! cargo run --release -p tcgen05-drivers --example emu_refusals -- 20000 [seed]
//! ```
//!
//! With `EMU_PTX_DIR=DIR` it also writes each lowered module to `DIR/<case>-<reason>.ptx` and
//! the routines they call (`cuda::emu::routines_module`) to `DIR/routines/emu_routines.ptx`,
//! to time their compiles without a GPU (`ptxas -c -arch=sm_90`, each module then links
//! with the routines' object: `nvlink -arch=sm_90 routines.o module.o`), and each module's
//! launch to `DIR/<case>-<reason>.geom` (CTAs, threads a CTA, CTAs a cluster, dynamic shared
//! memory bytes, observation words).

use std::collections::BTreeMap;
use tcgen05_drivers::cuda::emu::{self, EmuConfig};
use tcgen05_drivers::diff;
use tcgen05_generators::cases::{Mode, Stream};

/// A refusal's reason without its numbers, so equal causes count together.
fn class(reason: &str) -> String {
    reason
        .split('`')
        .enumerate()
        .map(|(i, s)| if i % 2 == 1 { "`...`" } else { s })
        .collect::<String>()
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect()
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Ok(dir) = std::env::var("EMU_PTX_DIR") {
        let sub = format!("{dir}/routines");
        std::fs::create_dir_all(&sub).map_err(|e| format!("{sub}: {e}"))?;
        std::fs::write(format!("{sub}/emu_routines.ptx"), emu::routines_module())
            .map_err(|e| format!("{sub}/emu_routines.ptx: {e}"))?;
    }
    let n: u64 = args
        .first()
        .map_or(Ok(20000), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let seed: u64 = args
        .get(1)
        .map_or(Ok(1), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let stream = Stream::new(tcgen05_generators::Config::default(), seed, Mode::Mixed);
    let (mut runnable, mut lowered) = (0u64, 0u64);
    let mut refused: BTreeMap<String, u64> = BTreeMap::new();
    let mut partial: BTreeMap<String, u64> = BTreeMap::new();
    for i in 0..n {
        let case = stream.case_at(i);
        let p = &case.program;
        if diff::verdict_for_any_run(&tcgen05_oracle::expect(p)).is_some() {
            continue;
        }
        runnable += 1;
        match emu::lower(p, &EmuConfig::default()) {
            Ok(low) => {
                lowered += 1;
                // `EMU_PTX_DIR`: the lowered modules, to time their compiles.
                if let Ok(dir) = std::env::var("EMU_PTX_DIR") {
                    let why = emu::not_emulated(p).unwrap_or_default().replace(' ', "_");
                    let path =
                        format!("{dir}/{i}-{}.ptx", why.chars().take(24).collect::<String>());
                    std::fs::write(&path, &low.ptx).map_err(|e| e.to_string())?;
                    // Its launch: CTAs, threads a CTA, CTAs a cluster, dynamic shared
                    // memory, observation words (what the `cuda-emu` target launches).
                    let l = &p.launch;
                    let geom = format!(
                        "{} {} {} {} {}\n",
                        l.ctas(),
                        32 * u32::from(l.warps_per_cta),
                        l.cluster_size,
                        low.dyn_smem,
                        tcgen05_ir::observe::Layout::of(p).total_words()
                    );
                    let gpath = path.replace(".ptx", ".geom");
                    std::fs::write(&gpath, geom).map_err(|e| format!("{gpath}: {e}"))?;
                }
                if let Some(why) = emu::not_emulated(p) {
                    *partial.entry(why).or_default() += 1;
                }
            }
            Err(e) => {
                let why = match emu::not_emulated(p) {
                    Some(m) if e.0.contains("D is not emulated") => format!("MMA: {m}"),
                    _ => class(&e.0),
                };
                *refused.entry(why).or_default() += 1
            }
        }
    }
    let pct = |x: u64| 100.0 * x as f64 / runnable.max(1) as f64;
    println!(
        "{n} cases, {runnable} whose verdict depends on the run: {lowered} lowered ({:.1}%), {} refused ({:.1}%)",
        pct(lowered),
        runnable - lowered,
        pct(runnable - lowered)
    );
    let mut v: Vec<_> = refused.into_iter().collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.1));
    println!("\nrefused, by reason:");
    for (k, c) in v {
        println!("{c:>8} {:>5.1}%  {k}", pct(c));
    }
    let mut v: Vec<_> = partial.into_iter().collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.1));
    println!("\nrun with MMA results not emulated (words left out), by reason:");
    for (k, c) in v {
        println!("{c:>8} {:>5.1}%  {k}", pct(c));
    }
    Ok(())
}
