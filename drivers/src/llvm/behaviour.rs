//! The PTX LLVM produced, run: its outcome on the simulator must be one the oracle allows for
//! the source program (docs/llvm.md).
//!
//! [`check`] reads the produced PTX back into a program with a [`Lifter`], runs that program
//! on the built-in simulator (`sim`, seeded random scheduler) and judges the outcome against the
//! oracle's expectation of the *source* program with the judge's verdict step (`diff::rule`,
//! with the `sim` target's name and wait bound, as `tcgen05_engine::judge` does). An outcome
//! the oracle does not allow is a finding against the compiler ([`Subject::Lifted`]).
//! The check runs inside the LLVM target of this crate, below the engine, so it calls the
//! verdict step where that lives rather than the engine's judge.
//!
//! Where the lifter cannot read the PTX, the run falls back to the source program itself
//! ([`Subject::Source`], with the lifter's reason): translation validation has established,
//! thread by thread, that the produced PTX issues the source's tcgen05 instructions with the
//! same operands in an order the memory model allows, so the source program is the model of
//! the produced PTX's tcgen05 behaviour. A disagreement there is one between the simulator and
//! the oracle, never LLVM's, and is reported as such, not as a compiler finding.
//!
//! [`lift_produced`] (the default, `pipeline::Options::lifter`) tries [`model_lifter`], then
//! [`printer_lifter`]. [`model_lifter`] is the general lifter of real
//! PTX, `tcgen05_ir::ptx::model`, run with the source program's launch shape; it keeps the
//! lifted program only where its observation layout is the source's and every `tcgen05.st`
//! stores values the source's seeds produce (see [`model_lifter`]). [`printer_lifter`] is
//! `tcgen05_ir::ptx::lift`, which reads the printer's own idioms only.

use crate::diff::{self, Verdict};
use crate::sim::{SimConfig, simulate};
use crate::sim_target::SimTarget;
use crate::target::Target;
use std::collections::HashMap;
use tcgen05_ir::observe::Layout;
use tcgen05_ir::ptx::model::{self, Shape};
use tcgen05_ir::{Form, MmaA, Op, Program, SmemDesc, Stmt, values};

/// Reads the PTX module compiled from the source program (first argument) back into a
/// program, or says why it cannot.
pub type Lifter = fn(&Program, &str) -> Result<Program, NotLifted>;

/// Why the PTX a compiler produced is not read back into a program that stands in for the
/// source ([`Lifter`]); the check then runs the source program itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotLifted {
    /// The lifter cannot read the PTX (its own message).
    #[error("{0}")]
    Unreadable(String),
    /// A data region is written by generic stores the model does not track.
    #[error("line {0}: a data region is written by stores the model does not track")]
    UntrackedData(u32),
    /// A register a `tcgen05.st` stores holds a value the lifter does not evaluate.
    #[error(
        "line {line}: register {reg} of the tcgen05.st of CTA {cta} warp {warp} holds a value the lifter does not know"
    )]
    UnknownStValue {
        /// The line of the st.
        line: u32,
        /// The register's index in the st's vector.
        reg: usize,
        /// The CTA.
        cta: u32,
        /// The warp.
        warp: u8,
    },
    /// One `tcgen05.st` stores different values in different warps or CTAs.
    #[error("line {0}: the tcgen05.st stores different values in different warps or CTAs")]
    StValuesDiffer(u32),
    /// The observation sites (`observe::Layout`) differ from the source's.
    #[error("the lifted program's observation sites {lifted} are not the source's {source_sites}")]
    OtherSites {
        /// The lifted program's site kinds per warp.
        lifted: String,
        /// The source's.
        source_sites: String,
    },
    /// The lifted tcgen05 ops do not pair with the source's, in order and by form.
    #[error(
        "the lifted tcgen05 ops ({lifted}) do not pair with the source's ({source_ops}) in order: op {first} is {lifted_form}, the source's {source_form}"
    )]
    OpsDoNotPair {
        /// Lifted ops.
        lifted: usize,
        /// Source ops.
        source_ops: usize,
        /// The first op that differs.
        first: usize,
        /// Its form in the lifted program.
        lifted_form: String,
        /// Its form in the source.
        source_form: String,
    },
    /// The source's data-region fills cannot be carried into the lifted program (why).
    #[error("{0}")]
    Fills(&'static str),
}

/// The lifter of the printer's own PTX (`tcgen05_ir::ptx::lift`); the source is not used.
pub fn printer_lifter(_source: &Program, ptx: &str) -> Result<Program, NotLifted> {
    tcgen05_ir::ptx::lift(ptx).map_err(|e| NotLifted::Unreadable(e.to_string()))
}

/// The default lifter: [`model_lifter`], else [`printer_lifter`] (the printer's own PTX, e.g.
/// a compiler that passes it through); the error is the general lifter's reason.
pub fn lift_produced(source: &Program, ptx: &str) -> Result<Program, NotLifted> {
    model_lifter(source, ptx).or_else(|why| printer_lifter(source, ptx).map_err(|_| why))
}

/// The general lifter (`tcgen05_ir::ptx::model::lift_source`) with the source's launch shape
/// (the produced PTX declares no cluster count), its result held to the source's observation
/// words so that the comparison (`diff::rule`) reads the lifted run's outcome in the source's layout:
/// - the observation layout (`observe::Layout`: the sites of every warp, in order) must be the
///   source's;
/// - the values of every lifted `tcgen05.st` must be known (evaluated by the lifter) and are
///   matched against the source's st seeds (`values::st_value`, all 32 lanes of every
///   register): a match takes that seed, so the lifted run observes the source's values; a st
///   whose values no source seed produces keeps a seed of its own, so its values differ from
///   every value the oracle allows for the source and the run is `disallowed`;
/// - the source fills no data region (`Stmt::Fill`: the PTX writes it with `st.shared` at
///   per-lane addresses, which the lifted program does not carry), and the PTX writes none
///   with generic stores the model does not track.
///
/// Anything else is an error naming what does not match, and the check falls back to the
/// source program.
pub fn model_lifter(source: &Program, ptx: &str) -> Result<Program, NotLifted> {
    let shape = Shape {
        warps_per_cta: source.launch.warps_per_cta,
        cluster_size: source.launch.cluster_size,
        clusters: source.launch.clusters,
    };
    let lifted = model::lift_source(ptx, "produced.ptx", None, Some(shape))
        .map_err(|e| NotLifted::Unreadable(e.to_string()))?;
    if let Some(line) = lifted.untracked_data.first() {
        return Err(NotLifted::UntrackedData(*line));
    }
    let mut program = lifted.program;
    program.launch.declare_cluster = source.launch.declare_cluster;
    let mut seeds = HashMap::new();
    for (cta, warp, st) in &lifted.sts {
        let mut regs = Vec::with_capacity(st.values.len());
        for (r, v) in st.values.iter().enumerate() {
            regs.push(v.ok_or(NotLifted::UnknownStValue {
                line: st.line,
                reg: r,
                cta: *cta,
                warp: *warp,
            })?);
        }
        let new = source_seed(source, &regs).unwrap_or(st.seed);
        if *seeds.entry(st.seed).or_insert(new) != new {
            return Err(NotLifted::StValuesDiffer(st.line));
        }
    }
    reseed(&mut program.warps, &seeds);
    carry_fills(source, &mut program)?;
    let (ours, theirs) = (
        Layout::of(&program),
        Layout::of(&judged_source(source, &program)),
    );
    if ours != theirs {
        let kinds = |l: &Layout| {
            l.warp_sites
                .iter()
                .map(|w| {
                    w.iter()
                        .map(|s| format!("{:?}", s.kind))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        };
        return Err(NotLifted::OtherSites {
            lifted: format!("{:?}", kinds(&ours)),
            source_sites: format!("{:?}", kinds(&theirs)),
        });
    }
    Ok(program)
}

/// The source program the lifted one is judged against: without its alloc-slot observations
/// (`Stmt::ObserveAddr`, which record the value an alloc wrote and change nothing else) where
/// the lifted program has none, since a compiler's PTX stores those values to the observation
/// buffer with generic stores that the general lifter does not read as observations. The
/// remaining sites (every `tcgen05.ld` and mbarrier wait) are compared word for word.
pub fn judged_source(source: &Program, lifted: &Program) -> Program {
    let mut any = false;
    lifted.walk(&mut |s| any |= matches!(s, Stmt::ObserveAddr { .. }));
    let mut p = source.clone();
    if !any {
        fn strip(b: &mut Vec<Stmt>) {
            b.retain(|s| !matches!(s, Stmt::ObserveAddr { .. }));
            for s in b {
                match s {
                    Stmt::If { then, els, .. } => {
                        strip(then);
                        strip(els);
                    }
                    Stmt::Loop { body, .. } => strip(body),
                    _ => {}
                }
            }
        }
        for w in &mut p.warps {
            strip(w);
        }
        for f in &mut p.funcs {
            strip(&mut f.body);
        }
    }
    p
}

/// The descriptors an op reads shared memory through.
fn descs(op: &Op) -> Vec<SmemDesc> {
    match op {
        Op::Cp { src, .. } => vec![*src],
        Op::Mma(m) => match m.a {
            MmaA::Desc(a) => vec![a, m.b],
            MmaA::Tmem(_) => vec![m.b],
        },
        _ => vec![],
    }
}

/// Whether two ops have one form, an mma without a collector qualifier being the same as
/// one with `.collector::a::discard`, the default that LLVM prints (§9.7.16.10).
fn same_form(a: &Op, b: &Op) -> bool {
    use tcgen05_ir::form::Collector;
    use tcgen05_ir::{CollectorBuf, CollectorOp};
    let norm = |o: &Op| match o.form() {
        Form::Mma(mut f) => {
            f.collector = f.collector.or(Some(Collector {
                buf: CollectorBuf::A,
                op: CollectorOp::Discard,
            }));
            Form::Mma(f)
        }
        f => f,
    };
    norm(a) == norm(b)
}

/// Gives the lifted program the source's data-region fills (`Stmt::Fill`), which the PTX
/// writes with `st.shared` at per-lane addresses the lifter does not evaluate (without them
/// an mma or cp of the lifted program reads zeros). Each source warp's fills must be
/// top-level statements with no cp or mma of that warp before them (those alone read a data
/// region), so that putting them first in the lifted warp moves them past nothing that reads
/// what they write, and they still precede the synchronization that orders them before other
/// warps' reads; the lifted regions (numbered by
/// first use) are renumbered to the source's by pairing the two programs' tcgen05 ops in
/// order (same forms), descriptor by descriptor.
fn carry_fills(source: &Program, lifted: &mut Program) -> Result<(), NotLifted> {
    let mut fills = Vec::new();
    for w in &source.warps {
        // The fills move to the warp's start: past no statement that reads shared memory
        // through a descriptor (cp, mma), which alone read a data region.
        let lead = w
            .iter()
            .rposition(|s| matches!(s, Stmt::Fill { .. }))
            .map_or(0, |i| i + 1);
        let mut reads = false;
        Program {
            warps: vec![w[..lead].to_vec()],
            funcs: vec![],
            ..source.clone()
        }
        .walk(&mut |s| reads |= matches!(s, Stmt::Tc(op) if !descs(op).is_empty()));
        if reads {
            return Err(NotLifted::Fills(
                "a data-region fill of the source comes after a cp or mma of its warp",
            ));
        }
        let mut all = 0;
        Program {
            warps: vec![w.clone()],
            funcs: vec![],
            ..source.clone()
        }
        .walk(&mut |s| all += usize::from(matches!(s, Stmt::Fill { .. })));
        let ws: Vec<Stmt> = w[..lead]
            .iter()
            .filter(|s| matches!(s, Stmt::Fill { .. }))
            .cloned()
            .collect();
        if ws.len() != all {
            return Err(NotLifted::Fills(
                "a data-region fill of the source is inside a branch or loop",
            ));
        }
        fills.push(ws);
    }
    for f in &source.funcs {
        let mut any = false;
        for s in &f.body {
            any |= matches!(s, Stmt::Fill { .. });
        }
        if any {
            return Err(NotLifted::Fills(
                "the source fills a data region in a function",
            ));
        }
    }
    if fills.iter().all(Vec::is_empty) {
        return Ok(());
    }
    let (ops_s, ops_l) = (source.ops(), lifted.ops());
    if ops_s.len() != ops_l.len() || ops_s.iter().zip(&ops_l).any(|(a, b)| !same_form(a, b)) {
        let first = ops_s
            .iter()
            .zip(&ops_l)
            .position(|(a, b)| !same_form(a, b))
            .unwrap_or(ops_s.len().min(ops_l.len()));
        return Err(NotLifted::OpsDoNotPair {
            lifted: ops_l.len(),
            source_ops: ops_s.len(),
            first,
            lifted_form: format!("{:?}", ops_l.get(first).map(|o| o.form())),
            source_form: format!("{:?}", ops_s.get(first).map(|o| o.form())),
        });
    }
    let mut map: HashMap<u8, u8> = HashMap::new();
    for (a, b) in ops_s.iter().zip(&ops_l) {
        let (xs, ys) = (descs(a), descs(b));
        if xs.len() != ys.len() {
            return Err(NotLifted::Fills(
                "the lifted descriptors do not pair with the source's",
            ));
        }
        for (da, db) in xs.iter().zip(&ys) {
            if *map.entry(db.region).or_insert(da.region) != da.region || da.offset != db.offset {
                return Err(NotLifted::Fills(
                    "the lifted descriptors do not name the source's data regions",
                ));
            }
        }
    }
    fn to(map: &HashMap<u8, u8>, r: u8) -> u8 {
        map.get(&r).copied().unwrap_or(r)
    }
    fn rename(b: &mut [Stmt], map: &HashMap<u8, u8>) {
        for s in b {
            match s {
                Stmt::Tc(Op::Cp { src, .. }) => src.region = to(map, src.region),
                Stmt::Tc(Op::Mma(m)) => {
                    if let MmaA::Desc(a) = &mut m.a {
                        a.region = to(map, a.region);
                    }
                    m.b.region = to(map, m.b.region);
                }
                Stmt::If { then, els, .. } => {
                    rename(then, map);
                    rename(els, map);
                }
                Stmt::Loop { body, .. } => rename(body, map),
                _ => {}
            }
        }
    }
    for w in &mut lifted.warps {
        rename(w, &map);
    }
    lifted.smem.regions = source.smem.regions.clone();
    for (w, f) in lifted.warps.iter_mut().zip(fills) {
        w.splice(0..0, f);
    }
    Ok(())
}

/// The seed of a `tcgen05.st` of `source` whose values are `regs` (per register, 32 lanes).
fn source_seed(source: &Program, regs: &[[u32; 32]]) -> Option<u32> {
    source.ops().into_iter().find_map(|op| match op {
        Op::St { seed, nregs, .. }
            if usize::from(*nregs) == regs.len()
                && regs.iter().enumerate().all(|(r, lanes)| {
                    (0..32).all(|l| lanes[l as usize] == values::st_value(*seed, l, r as u32))
                }) =>
        {
            Some(*seed)
        }
        _ => None,
    })
}

/// Replaces the seeds of the sts of `warps` by their images in `map`.
fn reseed(warps: &mut [Vec<Stmt>], map: &HashMap<u32, u32>) {
    fn go(b: &mut [Stmt], map: &HashMap<u32, u32>) {
        for s in b {
            match s {
                Stmt::Tc(Op::St { seed, .. }) => {
                    if let Some(n) = map.get(seed) {
                        *seed = *n;
                    }
                }
                Stmt::If { then, els, .. } => {
                    go(then, map);
                    go(els, map);
                }
                Stmt::Loop { body, .. } => go(body, map),
                _ => {}
            }
        }
    }
    for w in warps {
        go(w, map);
    }
}

/// Which program the simulator ran.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Subject {
    /// The program lifted from the produced PTX.
    Lifted,
    /// The source program, because the lifter could not read the produced PTX (its reason).
    Source {
        /// The lifter's error.
        not_lifted: String,
    },
}

/// The produced PTX's behaviour against the oracle.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Behaviour {
    /// What ran.
    pub subject: Subject,
    /// The simulator's outcome against the oracle's expectation of the source program.
    pub verdict: Verdict,
}

impl Behaviour {
    /// A finding against the compiler: the lifted program's outcome is one the oracle does not
    /// allow for the source program.
    pub fn is_finding(&self) -> bool {
        self.subject == Subject::Lifted && matches!(self.verdict, Verdict::Discrepancy(_))
    }

    /// One line: what ran and the verdict.
    pub fn summary(&self) -> String {
        let what = match &self.subject {
            Subject::Lifted => "the lifted PTX".to_string(),
            Subject::Source { not_lifted } => {
                format!("the source program (LLVM's PTX not lifted: {not_lifted})")
            }
        };
        let v = match &self.verdict {
            Verdict::Agree => "allowed by the oracle".to_string(),
            Verdict::Skip(r) => format!("not compared ({})", crate::report::skip_words(r)),
            Verdict::Discrepancy(d) => format!(
                "outside what the oracle allows: {} / {}: {}",
                d.kind.as_str(),
                d.rules.first().map_or("-", |r| r.as_str()),
                d.detail
            ),
        };
        format!("{what} on sim: {v}")
    }
}

/// Runs the PTX `produced` for `source` (see the module documentation); `seed` seeds the
/// simulator's scheduler.
pub fn check(source: &Program, produced: &str, lifter: Lifter, seed: u64) -> Behaviour {
    let (subject, lifted) = match lifter(source, produced) {
        Ok(p) => (Subject::Lifted, Some(p)),
        Err(why) => (
            Subject::Source {
                not_lifted: why.to_string(),
            },
            None,
        ),
    };
    let judged = match &lifted {
        Some(l) => judged_source(source, l),
        None => source.clone(),
    };
    let ran = lifted.as_ref().unwrap_or(source);
    let Some(Ok(config)) = SimConfig::parse("sim") else {
        unreachable!("`sim` is the simulator's own name")
    };
    let sim = SimTarget::new("sim", config);
    let outcome = simulate(ran, sim.config(), seed);
    let expected = tcgen05_oracle::expect(&judged);
    let ruling = diff::rule(
        &judged,
        &Layout::of(&judged),
        &expected,
        &outcome,
        &sim.name(),
        sim.wait_bound(),
    );
    Behaviour {
        subject,
        verdict: ruling.verdict,
    }
}
