//! Both judges on the same programs: the oracle on the program that the general lifter
//! (`tcgen05_ir::ptx::model`) reads out of PTX, and `check`'s path analysis on the PTX itself.
//! Over the printed PTX of generated valid programs and near-misses, and the real corpora
//! (`corpus/realworld/`, `corpus/check-*`), every liftable program must get the same answer to
//! "does it break a rule?" from both, unless the difference is one of the documented
//! imprecisions of `check` in the safe direction ([`CHECK_SAFE_IMPRECISIONS`]: `check` reports
//! a rule the oracle finds kept, because its per-warp path analysis over-approximates).
//!
//! "Breaks a rule" for the oracle: a static violation, undefined behaviour or a certain
//! deadlock (a run that may block is neither). For `check`: a finding.

use std::collections::BTreeMap;
use tcgen05_generators::Config;
use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_ir::ptx::model::{Shape, lift_source};
use tcgen05_ir::{Program, RuleId};
use tcgen05_oracle::kernel::{Options as CheckOptions, check_source};
use tcgen05_oracle::{Expected, RunVerdict};

/// Rules `check` may report on a program the oracle judges to keep every rule, and why each is
/// an over-approximation (never a miss).
const CHECK_SAFE_IMPRECISIONS: &[(&str, &str)] = &[
    (
        "MCM-XTHREAD",
        "the path analysis asks for tcgen05.fence::after_thread_sync between every thread synchronization and the next asynchronous tcgen05 operation; the oracle (§9.7.16.6.3-4) only where that synchronization is what orders the operation after another thread's access (a later mbarrier wait that orders nothing the operation touches needs no fence)",
    ),
    (
        "MCM-XTHREAD-NONPIPE",
        "the same over-approximation for the before-fence of a non-pipelined producer: the path analysis asks for it before every synchronization that follows an asynchronous operation, the oracle only where a consumer in another thread depends on it",
    ),
    (
        "MCM-LD-WAR",
        "the path analysis asks for tcgen05.wait::ld between every tcgen05.ld and a later dealloc; the oracle also takes tcgen05.fence::before_thread_sync, a barrier and fence::after_thread_sync as ordering the ld before the dealloc (§9.7.16.6.3: an asynchronous operation before the before-fence is ordered before all subsequent tcgen05 operations)",
    ),
];

fn shape(p: &Program) -> Shape {
    Shape {
        warps_per_cta: p.launch.warps_per_cta,
        cluster_size: p.launch.cluster_size,
        clusters: p.launch.clusters,
    }
}

/// The oracle's rules when it says the program breaks one, else `None`. A possible leak at
/// exit (ALLOC-FREE-BEFORE-EXIT, whose consequence is unstated) counts: `check` reports it.
fn oracle_broken(e: &Expected) -> Option<Vec<RuleId>> {
    if e.leak.status == tcgen05_oracle::LeakStatus::MayLeak && e.violations.is_empty() {
        return Some(vec![
            "ALLOC-FREE-BEFORE-EXIT"
                .parse::<RuleId>()
                .expect("a catalogue row"),
        ]);
    }
    if !e.violations.is_empty() {
        return Some(e.violations.iter().map(|v| v.rule).collect());
    }
    match &e.run.verdict {
        RunVerdict::Undefined(r) => Some(r.clone()),
        RunVerdict::MustDeadlock { .. } => Some(e.run.rules.clone()),
        _ => None,
    }
}

#[derive(Default, Debug)]
struct Tally {
    programs: usize,
    lifted: usize,
    both_broken: usize,
    both_clean: usize,
    safe: BTreeMap<String, usize>,
    contradictions: Vec<String>,
    unliftable: BTreeMap<String, usize>,
    /// Rules the oracle reports where the path analysis alone reports nothing (what the
    /// oracle adds to `check` for liftable kernels).
    path_misses: BTreeMap<String, usize>,
}

fn judge(t: &mut Tally, name: &str, ptx: &str, shape: Option<Shape>) {
    t.programs += 1;
    let lifted = match lift_source(ptx, name, None, shape) {
        Ok(l) => l,
        Err(e) => {
            let why = e.to_string();
            let key = why
                .split_once(": ")
                .map_or(why.clone(), |(_, w)| w.to_string());
            *t.unliftable
                .entry(key.chars().take(90).collect())
                .or_default() += 1;
            return;
        }
    };
    t.lifted += 1;
    let e = tcgen05_oracle::expect(&lifted.program);
    let reports = check_source(ptx, name, &CheckOptions::default()).expect("printed PTX parses");
    let path_found: Vec<RuleId> = reports
        .iter()
        .flat_map(|k| k.findings.iter().map(|f| f.rule))
        .collect();
    // What `check` reports: the path analysis completed by the oracle on the lifted kernel.
    let m = tcgen05_ir::ptx::parse_module(ptx, name).expect("parses");
    let full = tcgen05_oracle::lifted::check_module(&m, Some(ptx), &CheckOptions::default(), shape);
    let found: Vec<RuleId> = full
        .iter()
        .flat_map(|k| k.findings.iter().map(|f| f.rule))
        .collect();
    if let (Some(rules), true) = (oracle_broken(&e), path_found.is_empty()) {
        for r in rules {
            *t.path_misses.entry(r.as_str().to_string()).or_default() += 1;
        }
    }
    match (oracle_broken(&e), found.is_empty()) {
        (Some(_), false) => t.both_broken += 1,
        (None, true) => t.both_clean += 1,
        (Some(rules), true) => {
            let names: Vec<&str> = rules.iter().map(|r| r.as_str()).collect();
            t.contradictions.push(format!(
                "{name}: the oracle reports {names:?}, check nothing"
            ));
        }
        (None, false) => {
            if matches!(e.run.verdict, RunVerdict::MayBlock { .. }) {
                return;
            }
            let names: Vec<&str> = found.iter().map(|r| r.as_str()).collect();
            if names
                .iter()
                .all(|r| CHECK_SAFE_IMPRECISIONS.iter().any(|(b, _)| b == r))
            {
                for r in names {
                    *t.safe.entry(r.to_string()).or_default() += 1;
                }
            } else {
                t.contradictions.push(format!(
                    "{name}: check reports {names:?}, the oracle finds every rule kept ({:?})",
                    e.run.verdict
                ));
            }
        }
    }
}

fn generated(mode: Mode, seed: u64, n: u64, t: &mut Tally) {
    let s = Stream::new(Config::default(), seed, mode);
    for i in 0..n {
        let g = s.case(i);
        let ptx = tcgen05_ir::ptx::emit(&g.case.program);
        judge(t, &g.name, &ptx, Some(shape(&g.case.program)));
    }
}

fn report(what: &str, t: &Tally) {
    eprintln!(
        "{what}: {} programs, {} lifted; both broken {}, both clean {}; safe imprecisions {:?}; {} contradiction(s)",
        t.programs,
        t.lifted,
        t.both_broken,
        t.both_clean,
        t.safe,
        t.contradictions.len()
    );
    eprintln!(
        "  the path analysis alone misses (the oracle reports them for liftable kernels): {:?}",
        t.path_misses
    );
    for (why, n) in &t.unliftable {
        eprintln!("  not lifted ({n}): {why}");
    }
    for c in t.contradictions.iter().take(40) {
        eprintln!("  CONTRADICTION {c}");
    }
}

#[test]
fn judges_agree_on_generated_programs() {
    let mut t = Tally::default();
    generated(Mode::Valid, 19, 1500, &mut t);
    generated(Mode::NearMiss(None), 19, 1500, &mut t);
    report("generated", &t);
    assert!(
        t.lifted * 10 >= t.programs * 9,
        "fewer than 90% of printed programs lift"
    );
    assert!(
        t.contradictions.is_empty(),
        "{} contradiction(s)",
        t.contradictions.len()
    );
}

#[test]
fn judges_agree_on_the_real_corpora() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut t = Tally::default();
    for dir in ["realworld", "check-wellformed", "check-rejected"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
            .collect();
        files.sort();
        for f in files {
            let src = std::fs::read_to_string(&f).unwrap();
            let m = tcgen05_ir::ptx::parse_module(&src, "x").unwrap();
            let entries: Vec<&str> = m
                .functions
                .iter()
                .filter(|f| f.is_entry && f.body.is_some())
                .map(|f| f.name)
                .collect();
            if entries.len() != 1 {
                *t.unliftable
                    .entry(format!("{} kernels in one file", entries.len()))
                    .or_default() += 1;
                continue;
            }
            // Kernels that declare no launch shape are judged with one warp.
            let declared = tcgen05_ir::ptx::model::declared_shape(
                m.functions.iter().find(|f| f.is_entry).unwrap(),
            )
            .ok();
            let shape = declared.or(Some(Shape {
                warps_per_cta: 1,
                cluster_size: 1,
                clusters: 1,
            }));
            judge(
                &mut t,
                &format!("{dir}/{}", f.file_name().unwrap().to_string_lossy()),
                &src,
                shape,
            );
        }
    }
    report("real corpora", &t);
    assert!(
        t.contradictions.is_empty(),
        "{} contradiction(s)",
        t.contradictions.len()
    );
}
