//! The fault-injection table of `drivers/README.md`: for each injectable
//! simulator fault, a campaign (`tcgen05_engine::campaign::run`, one job, valid cases) until
//! the first finding (at most 60 s), then the finding minimized. Regenerate the table with
//!
//! ```text
//! cargo run --profile test -p tcgen05-engine --example fault_table -- --write drivers/README.md
//! ```
//!
//! Options: `--seconds S` (campaign limit per fault, default 60), `--seed N`, `--only NAME`,
//! `--store DIR` (keep the findings).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tcgen05_drivers::sim::faults::Fault;
use tcgen05_engine::campaign::{self, CaseMix, Config, Identity, Shard};
use tcgen05_engine::minimize;
use tcgen05_engine::progress::Silent;
use tcgen05_oracle::Edition;

const BEGIN: &str = "<!-- fault-table:begin -->";
const END: &str = "<!-- fault-table:end -->";
/// A finding within 60 s, minimized to at most 12 instructions; `cluster-barrier-no-wait` at
/// most 16, the fewest its value discrepancy takes without breaking a rule (the argument is
/// `LIMIT_CLUSTER_BARRIER` in engine/tests/minimize.rs).
const LIMIT_S: f64 = 60.0;
const LIMIT_SIZE: usize = 12;
const LIMIT_CLUSTER_BARRIER: usize = 16;

/// The instruction limit of `fault`.
fn limit_size(fault: &str) -> usize {
    if fault == "cluster-barrier-no-wait" {
        LIMIT_CLUSTER_BARRIER
    } else {
        LIMIT_SIZE
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let seconds: f64 = get("--seconds")
        .and_then(|s| s.parse().ok())
        .unwrap_or(LIMIT_S);
    let seed: u64 = get("--seed").and_then(|s| s.parse().ok()).unwrap_or(1);
    let only = get("--only");
    // The findings of each fault go to `<store>/<fault>/findings`.
    let store = get("--store").map(PathBuf::from);
    let mut rows = Vec::new();
    let mut all_ok = true;
    for f in Fault::ALL
        .iter()
        .filter(|f| only.as_deref().is_none_or(|o| o == f.name()))
    {
        let names = vec![
            format!("sim+{}", f.name()),
            format!("sim:adversarial+{}", f.name()),
        ];
        let dir = tempfile::tempdir().expect("a temporary folder");
        let out = store.clone().unwrap_or_else(|| dir.path().to_path_buf());
        let cfg = Config {
            identity: Identity {
                seed,
                targets: names,
                edition: Edition::default(),
                shard: Shard { index: 0, count: 1 },
                mix: CaseMix::Valid,
                generator: tcgen05_generators::ORIGIN.to_string(),
            },
            max_cases: None,
            max_time: Some(Duration::from_secs_f64(seconds)),
            jobs: 1,
            minimize: true,
            stop_at_first: true,
            minimize_budget: Duration::from_secs(30).into(),
            out: out.join(f.name()),
            checkpoint_every: Duration::from_secs(1),
            reports_every: Duration::from_secs(30),
            invocation: String::new(),
        };
        let report = campaign::run(&cfg, &AtomicBool::new(false), &mut Silent)
            .expect("a campaign on simulator targets runs");
        let row = match report.new_findings.first() {
            Some(x) => {
                let found = minimize::instructions(&x.original.program);
                let minimized = minimize::instructions(&x.stored.program);
                let ok =
                    x.found_after.as_secs_f64() <= LIMIT_S && minimized <= limit_size(f.name());
                all_ok &= ok;
                format!(
                    "| `{}` | {} | {:.2} s (case {}) | {} → {} ({} tcgen05; {} statements) | {:.2} s | `{}` / {} | {} |",
                    f.name(),
                    f.description(),
                    x.found_after.as_secs_f64(),
                    x.case_index,
                    found,
                    minimized,
                    x.stored.program.ops().len(),
                    x.stored.program.size(),
                    x.minimize_time.as_secs_f64(),
                    x.signature.kind.as_str(),
                    x.signature
                        .rule
                        .map_or("-".to_string(), |r| format!("`{r}`")),
                    if ok { "yes" } else { "**no**" }
                )
            }
            None => {
                all_ok = false;
                format!(
                    "| `{}` | {} | **not found** in {:.0} s ({} cases) | - | - | - | **no** |",
                    f.name(),
                    f.description(),
                    report.wall.as_secs_f64(),
                    report.cases_this_run
                )
            }
        };
        eprintln!("{row}");
        rows.push(row);
    }
    let mut table = String::new();
    table.push_str(&format!(
        "Generated by `cargo run --profile test -p tcgen05-engine --example fault_table -- --write drivers/README.md` \
         (seed {seed}, campaign limit {seconds:.0} s per fault, targets `sim+<fault>` and `sim:adversarial+<fault>`, \
         generator default configuration, one core; times are of the test profile).\n\n"
    ));
    table.push_str("| fault | the bug | first finding | instructions: found → minimized | minimizing | signature (kind / rule) | within limits (60 s, ≤ 12; cluster-barrier-no-wait ≤ 16) |\n");
    table.push_str("| --- | --- | --- | --- | --- | --- | --- |\n");
    for r in &rows {
        table.push_str(r);
        table.push('\n');
    }
    println!("{table}");
    if let Some(path) = get("--write") {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let new = match (text.find(BEGIN), text.find(END)) {
            (Some(a), Some(b)) if a < b => format!("{}{BEGIN}\n{table}{}", &text[..a], &text[b..]),
            _ => format!("{text}\n{BEGIN}\n{table}{END}\n"),
        };
        std::fs::write(&path, new).expect("the README can be written");
        eprintln!("wrote {path}");
    }
    if !all_ok {
        std::process::exit(1);
    }
}
