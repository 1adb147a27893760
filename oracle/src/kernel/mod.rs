//! `check` for real kernels (docs/check.md): checks every tcgen05 instruction of every kernel and
//! device function against the instruction-level and target rows of the catalogue (`rules.rs`,
//! through the oracle's shared instruction check), recovers each kernel's TMEM protocol from
//! the PTX and applies the rules of the catalogue (reference §6) along its paths. Calls of
//! module functions with tcgen05 instructions are inlined (`inline.rs`); a `.func` is checked
//! as a callee in an unknown context (instruction-level rules only).
//!
//! For every `.entry`, [`check_module`] builds the control flow ([`tcgen05_ir::ptx::cfg`]) and
//! walks it once per warp of the CTA (the warp count comes from `.reqntid`/`.maxntid`; for a
//! cluster of two, once per CTA of the pair), with `%tid`, `%laneid` and `%cluster_ctarank` given
//! their values for that warp, so that warp-role branches (`%tid.x < 32`, `%tid.x >> 5 == 4`)
//! resolve. The walk is a path-sensitive abstract interpretation (`protocol.rs`) over
//! the register values of `value.rs`; it is not the oracle's run semantics (`crate::run`), which
//! needs a whole program.
//!
//! Rules applied, each finding naming its [`RuleId`] and spec section:
//! - `ALLOC-FREE-BEFORE-EXIT`: a path on which the CTA exits with TMEM allocated (summed over
//!   its warps, so one warp may allocate and another free);
//! - `ALLOC-AFTER-RELINQUISH`, `ALLOC-NONINCREASING` (along one warp's path);
//! - `GEN-CTAGROUP-UNIFORM`: `.cta_group::1` and `::2` in one kernel;
//! - `DEALLOC-TADDR-PREV`: a dealloc with no matching alloc on the path (summed over warps);
//! - `MCM-LD-WAR`: dealloc while a `tcgen05.ld` has not been waited for;
//! - `MCM-XTHREAD-NONPIPE`: a barrier or mbarrier arrive (handing TMEM to other threads) while a
//!   `tcgen05.ld`/`st` of the warp has not been waited for;
//! - `MCM-ST-BEFORE-USE`: ld/mma/cp/shift while a `tcgen05.st` has not been waited for;
//! - `MCM-XTHREAD`: an async tcgen05 op before a thread synchronization without
//!   `fence::before_thread_sync`, or after one without `fence::after_thread_sync`
//!   ([`FenceMode`]);
//! - `GEN-ALIGNED-CONVERGENT` / `WAIT-ALIGNED-CONVERGENT`: a `.sync.aligned` tcgen05 instruction
//!   under a lane-divergent guard or inside the region of a lane-divergent branch (elect-one);
//! - `GEN-NO-EXITED-THREAD`: such an instruction after some lanes left through `@p ret`/`exit`;
//! - `GEN-PEER-ACTIVE`: a `::2` operation with no cluster barrier before it; `DEALLOC-PAIR-SYNC`:
//!   a `::2` dealloc with no cluster barrier after the warp's last TMEM access.

mod inline;
mod protocol;
mod rules;
mod value;

use crate::catalogue;
use protocol::{Walk, WarpResult};
use rules::ModuleTarget;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use tcgen05_ir::RuleId;
use tcgen05_ir::ptx::cfg::{BlockId, Cfg};
use tcgen05_ir::ptx::parse::{Function, Module, ParseError, parse_module};
use value::{Decoded, Eval, WarpCtx};

/// When the fence rules (MCM-XTHREAD) apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum FenceMode {
    /// Only in kernels that use `tcgen05.fence` at all: their author follows the fence
    /// protocol, so a missing fence is an omission. Triton 3.9 and Gluon never emit
    /// `tcgen05.fence` (docs/check.md), and would otherwise get findings at every handoff.
    #[default]
    Auto,
    /// In every kernel.
    Always,
    /// Never.
    Never,
}

/// Options of [`check_source`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// When the fence rules apply.
    pub fences: FenceMode,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The catalogue row, e.g. `ALLOC-AFTER-RELINQUISH`.
    #[serde(serialize_with = "rule_name")]
    pub rule: RuleId,
    /// Its spec section (seed numbering).
    pub section: &'static str,
    /// The PTX line of the instruction.
    pub line: u32,
    /// Its column.
    pub col: u32,
    /// Its opcode.
    pub opcode: String,
    /// What is wrong.
    pub message: String,
    /// The warps whose paths show it: `w3`, or `cta1.w0` in a pair.
    pub warps: Vec<String>,
    /// The blocks (labels, or `B<n>@<line>`) of one path from the kernel's entry that shows it.
    pub path: Vec<String>,
}

fn rule_name<S: serde::Serializer>(r: &RuleId, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.as_str())
}

/// The result for one kernel or device function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelReport {
    /// The kernel's (or device function's) name.
    pub kernel: String,
    /// A kernel (`.entry`) rather than a device function (`.func`).
    pub entry: bool,
    /// The line of its `.entry`.
    pub line: u32,
    /// Warps per CTA walked.
    pub warps: u32,
    /// CTAs of the cluster walked (2 for a pair, else 1).
    pub ctas: u32,
    /// Basic blocks.
    pub blocks: usize,
    /// tcgen05 instructions.
    pub tcgen05: usize,
    /// Findings, by line.
    pub findings: Vec<Finding>,
    /// What the analysis could not do (unresolved branches, calls not followed, state cap).
    pub notes: Vec<String>,
}

/// Parses `src` and checks every kernel in it.
pub fn check_source(
    src: &str,
    file: &str,
    opts: &Options,
) -> Result<Vec<KernelReport>, ParseError> {
    let m = parse_module(src, file)?;
    Ok(check_module(&m, Some(src), opts))
}

/// Checks every kernel (`.entry`) and device function (`.func`) with a body of `m`; `src` is
/// its text, for label scopes.
pub fn check_module(m: &Module<'_>, src: Option<&str>, opts: &Options) -> Vec<KernelReport> {
    let target = ModuleTarget::of(m);
    m.functions
        .iter()
        .filter(|f| f.body.is_some())
        .map(|f| check_kernel(m, f, src, opts, &target))
        .collect()
}

/// Launch facts from a kernel's performance directives.
fn launch(f: &Function<'_>) -> (Option<(u32, u32, u32)>, Option<u32>) {
    let dims = |d: &[&str]| -> Option<(u32, u32, u32)> {
        let v: Vec<u32> = d
            .iter()
            .filter_map(|w| w.trim_end_matches(',').parse().ok())
            .collect();
        Some((
            *v.first()?,
            v.get(1).copied().unwrap_or(1),
            v.get(2).copied().unwrap_or(1),
        ))
    };
    let mut ntid = None;
    let mut cluster = None;
    for d in &f.directives {
        match d.first().copied() {
            Some(".reqntid" | ".maxntid") => ntid = dims(&d[1..]).or(ntid),
            Some(".reqnctapercluster") => cluster = dims(&d[1..]).map(|(x, y, z)| x * y * z),
            _ => {}
        }
    }
    (ntid, cluster)
}

/// What one warp's walk depends on: each guard's (truth, uniformity), and each alloc's nCols.
type Signature = (Vec<(Option<bool>, bool)>, Vec<Option<u32>>);

/// Warps walked when the kernel declares no block size: a guess, reported in the notes.
const DEFAULT_WARPS: u32 = 4;
/// Most warps a CTA can have (1024 threads).
const MAX_WARPS: u32 = 32;

fn check_kernel(
    m: &Module<'_>,
    f: &Function<'_>,
    src: Option<&str>,
    opts: &Options,
    target: &ModuleTarget,
) -> KernelReport {
    // Calls of functions with tcgen05 instructions are followed by inlining them (inline.rs);
    // their instructions' own rules are reported with the function.
    let calls_tc = f.is_entry
        && f.instrs().any(|i| {
            i.opcode.starts_with("call")
                && i.operands.iter().any(|o| {
                    matches!(o, tcgen05_ir::ptx::parse::Operand::Sym(c)
                        if m.function(c).is_some_and(|g| g.body.is_some() && inline::reaches_tcgen05(m, g, 1)))
                })
        });
    let arena = calls_tc.then(|| inline::Inlined::new(m, f));
    let expanded = arena.as_ref().map(|a| a.function(m, f));
    let (cfg, from_callee) = match &expanded {
        // Label scopes come from the text, which the inlined body no longer matches.
        Some((g, fc)) => (Cfg::new(g, None), fc.as_slice()),
        None => (Cfg::new(f, src), &[][..]),
    };
    let dec = Decoded::new(&cfg);
    let (ntid, cluster) = launch(f);
    let mut notes = Vec::new();
    let warps = match ntid {
        Some((x, y, z)) => (x * y * z).div_ceil(32).clamp(1, MAX_WARPS),
        None if !f.is_entry => {
            notes.push(
                "device function: checked as a callee in an unknown context (instruction-level, \
                 target and GEN-CTAGROUP-UNIFORM rules; its paths are not walked)"
                    .to_string(),
            );
            0
        }
        None => {
            notes.push(format!(
                "no .reqntid/.maxntid: walked {DEFAULT_WARPS} warps of an assumed 1-D block \
                 (warp w holds %tid.x 32w..32w+31; %ntid unknown)"
            ));
            DEFAULT_WARPS
        }
    };
    let ranks: Vec<Option<u32>> = match cluster {
        Some(1) => vec![Some(0)],
        Some(2) => vec![Some(0), Some(1)],
        _ => vec![None],
    };
    for u in &cfg.unresolved {
        notes.push(format!(
            "line {}: branch target `{}` not found; that edge is not followed",
            cfg.instrs[u.instr].pos.line, u.target
        ));
    }
    for (i, callee) in cfg.calls() {
        let has_tc = callee
            .and_then(|c| m.function(c))
            .is_some_and(|g| g.instrs().any(|x| x.opcode.starts_with("tcgen05.")));
        if has_tc || callee.is_none() {
            notes.push(format!(
                "line {}: call to {} is not followed; tcgen05 instructions in it are not checked",
                cfg.instrs[i].pos.line,
                callee.unwrap_or("an indirect target")
            ));
        }
    }
    let tcgen05 = cfg
        .instrs
        .iter()
        .filter(|i| i.opcode.starts_with("tcgen05."))
        .count();
    let mut report = KernelReport {
        kernel: f.name.to_string(),
        entry: f.is_entry,
        line: f.pos.line,
        warps,
        ctas: ranks.len() as u32,
        blocks: cfg.blocks.len(),
        tcgen05,
        findings: vec![],
        notes,
    };
    if tcgen05 == 0 {
        return report;
    }
    let fences = match opts.fences {
        FenceMode::Always => true,
        FenceMode::Never => false,
        FenceMode::Auto => cfg
            .instrs
            .iter()
            .any(|i| i.opcode.starts_with("tcgen05.fence")),
    };
    let ipdom = cfg.post_dominators();
    let mut merged: BTreeMap<(usize, RuleId), Finding> = BTreeMap::new();
    let add = |rule: RuleId,
               instr: usize,
               msg: String,
               who: String,
               path: &[BlockId],
               merged: &mut BTreeMap<(usize, RuleId), Finding>| {
        let e = merged.entry((instr, rule)).or_insert_with(|| Finding {
            rule,
            section: catalogue::section(rule),
            line: cfg.instrs[instr].pos.line,
            col: cfg.instrs[instr].pos.col,
            opcode: cfg.instrs[instr].opcode.to_string(),
            message: msg,
            warps: vec![],
            path: path_names(&cfg, path),
        });
        if !e.warps.contains(&who) {
            e.warps.push(who);
        }
    };
    // The instruction-level and target rows (rules.rs, the oracle's per-instruction rules).
    let types = rules::RegTypes::of(f);
    for (i, ins) in cfg.instrs.iter().enumerate() {
        if !ins.opcode.starts_with("tcgen05.") || from_callee.get(i) == Some(&true) {
            continue;
        }
        for (rule, msg) in rules::instr_findings(ins, target, cluster, &types) {
            let b = cfg.block_of[i];
            add(
                rule,
                i,
                msg,
                "static".to_string(),
                &shortest_path(&cfg, b),
                &mut merged,
            );
        }
    }
    let mut truncated = false;
    // A device function is a callee in an unknown context: its paths are not walked.
    let walked: &[Option<u32>] = if f.is_entry { &ranks } else { &[] };
    for &rank in walked {
        let mut results: Vec<(String, std::rc::Rc<WarpResult>)> = Vec::new();
        // Warps whose guards and branches evaluate alike walk alike: walk each class once.
        let mut by_signature: HashMap<Signature, std::rc::Rc<WarpResult>> = HashMap::new();
        for w in 0..warps {
            let ctx = WarpCtx {
                warp: w,
                rank,
                ntid,
                tid_shape: ntid.or(Some((32 * warps, 1, 1))),
            };
            let ev = Eval::new(&dec, &ctx);
            let guard_of = |env: &[value::V], ii: usize| -> Option<bool> {
                let Some(g) = cfg.instrs[ii].guard else {
                    return Some(true);
                };
                let r = *dec.regs.get(g.pred)?;
                env.get(r as usize)?.truth().map(|t| t != g.negated)
            };
            let entries = value::block_entries(&cfg, &ev, &guard_of);
            let (guards, ncols) = value::instr_facts(&cfg, &ev, &entries, &guard_of);
            // The walk reads only the truth and uniformity of each guard and the known nCols.
            let sig: Signature = (
                guards.iter().map(|v| (v.truth(), v.uni())).collect(),
                ncols.clone(),
            );
            let res = match by_signature.get(&sig) {
                Some(r) => r.clone(),
                _ => {
                    let walk = Walk {
                        cfg: &cfg,
                        dec: &dec,
                        guards: &guards,
                        ncols: &ncols,
                        ipdom: &ipdom,
                        fences,
                    };
                    let r = std::rc::Rc::new(walk.run());
                    by_signature.insert(sig, r.clone());
                    r
                }
            };
            truncated |= res.truncated;
            let who = match rank {
                Some(r) if ranks.len() > 1 => format!("cta{r}.w{w}"),
                _ => format!("w{w}"),
            };
            for r in &res.findings {
                add(
                    r.rule,
                    r.instr,
                    r.msg.clone(),
                    who.clone(),
                    &r.path,
                    &mut merged,
                );
            }
            results.push((who, res));
        }
        // CTA level: allocations minus deallocations summed over the warps (one warp may
        // allocate and another free: OQ-35 leaves it open, so it is not flagged).
        let sum_max: i32 = results
            .iter()
            .map(|(_, r)| r.max_exit.as_ref().map_or(0, |e| i32::from(e.net)))
            .sum();
        let sum_min: i32 = results
            .iter()
            .map(|(_, r)| r.min_exit.as_ref().map_or(0, |e| i32::from(e.net)))
            .sum();
        if sum_max > 0 {
            // ALLOC-FREE-BEFORE-EXIT (§9.7.16.1.2, §9.7.16.7.1).
            if let Some((who, e)) = results
                .iter()
                .filter_map(|(w, r)| r.max_exit.as_ref().map(|e| (w, e)))
                .filter(|(_, e)| e.net > 0)
                .max_by_key(|(_, e)| e.net)
            {
                let at = e.last_alloc.map_or(String::new(), |a| {
                    format!(" (last alloc at line {})", cfg.instrs[a as usize].pos.line)
                });
                add(
                    RuleId::AllocFreeBeforeExit,
                    e.instr,
                    format!(
                        "the kernel can exit here with TMEM still allocated{at}: no dealloc on this path by this or any other warp"
                    ),
                    who.clone(),
                    &e.path,
                    &mut merged,
                );
            }
        }
        if sum_min < 0 {
            // DEALLOC-TADDR-PREV (§9.7.16.7.1).
            if let Some((who, e, d)) = results
                .iter()
                .filter_map(|(w, r)| {
                    r.min_exit
                        .as_ref()
                        .and_then(|e| e.unmatched.map(|d| (w, e, d)))
                        .filter(|x| x.1.net < 0)
                })
                .next()
            {
                add(
                    RuleId::DeallocTaddrPrev,
                    d as usize,
                    "dealloc with no earlier alloc on this path by this or any other warp"
                        .to_string(),
                    who.clone(),
                    &e.path,
                    &mut merged,
                );
            } else if let Some((who, e)) = results
                .iter()
                .filter_map(|(w, r)| r.min_exit.as_ref().map(|e| (w, e)))
                .find(|(_, e)| e.net < 0)
            {
                add(
                    RuleId::DeallocTaddrPrev,
                    e.instr,
                    "on this path the warps deallocate more than they allocated".to_string(),
                    who.clone(),
                    &e.path,
                    &mut merged,
                );
            }
        }
    }
    // GEN-CTAGROUP-UNIFORM (instr.rs), reported at the first instruction that differs.
    let mut groups = crate::instr::CtaGroupUniform::default();
    for (i, ins) in cfg.instrs.iter().enumerate() {
        let Some(form) = &ins.form else { continue };
        if let Some(msg) = groups.see(form, || format!("line {}", ins.pos.line)) {
            add(
                RuleId::GenCtagroupUniform,
                i,
                msg,
                "static".to_string(),
                &shortest_path(&cfg, cfg.block_of[i]),
                &mut merged,
            );
            break;
        }
    }
    if truncated {
        report.notes.push(
            "the number of path states hit its cap in some block: some paths were not walked"
                .to_string(),
        );
    }
    let mut findings: Vec<Finding> = merged.into_values().collect();
    findings.sort_by_key(|f| (f.line, f.col, f.rule));
    report.findings = findings;
    report
}

/// Paths longer than this are shown with their middle elided.
const MAX_PATH: usize = 40;

fn path_names(cfg: &Cfg<'_>, path: &[BlockId]) -> Vec<String> {
    let names: Vec<String> = path.iter().map(|&b| cfg.block_name(b)).collect();
    if names.len() <= MAX_PATH {
        return names;
    }
    let mut v = names[..MAX_PATH / 2].to_vec();
    v.push(format!("... {} blocks ...", names.len() - MAX_PATH));
    v.extend_from_slice(&names[names.len() - MAX_PATH / 2..]);
    v
}

/// A shortest path of blocks from the entry to `to` (breadth first).
fn shortest_path(cfg: &Cfg<'_>, to: BlockId) -> Vec<BlockId> {
    let mut prev = vec![usize::MAX; cfg.blocks.len()];
    let mut q = std::collections::VecDeque::from([0usize]);
    prev[0] = 0;
    while let Some(b) = q.pop_front() {
        if b == to {
            break;
        }
        for e in &cfg.blocks[b].succs {
            if prev[e.to] == usize::MAX {
                prev[e.to] = b;
                q.push_back(e.to);
            }
        }
    }
    let mut p = vec![to];
    let mut b = to;
    while b != 0 && prev[b] != usize::MAX {
        b = prev[b];
        p.push(b);
    }
    p.reverse();
    p
}
