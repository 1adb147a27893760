//! Translation validation: the PTX a compiler produced against the printer's PTX of the same
//! program, thread by thread ([`super::interp`] runs both).
//!
//! For every thread checked ([`threads`]), the two traces must agree on:
//! 1. the *ordering points*, in order: the tcgen05 instructions the memory model orders
//!    against everything else (`wait::ld`, `wait::st`, `commit`, `fence::*`, `alloc`,
//!    `dealloc`, `relinquish_alloc_permit`; reference §4.2-§4.3) and every barrier, mbarrier
//!    operation and fence, with their forms and operand values;
//! 2. between two consecutive ordering points, the same multiset of the other tcgen05
//!    instructions (`ld`, `st`, `mma`, `cp`, `shift`: asynchronous, unordered among
//!    themselves, §4.1) and of the stores into shared memory the program observes (the data
//!    regions a descriptor reads, [`observed_shared`]; an `ld` moved past its `wait::ld`, an
//!    `mma` past its `commit`, a store past a fence or barrier breaks this);
//! 3. the final value of every global word the thread writes (the observation records);
//! 4. every store of a value an `ld` delivered comes after a `wait::ld` that follows that ld
//!    (LD-WAIT: the registers are defined only after the wait, §4.2).
//!
//! Instructions are compared by their normalized form (same opcode and qualifiers,
//! [`super::interp::normalize`]) and the values of their operands, so dropped, duplicated,
//! reordered or changed instructions, and swapped operands, are all reported.

use super::interp::{self, Event, InterpError, Space, Thread, Trace};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use tcgen05_ir::form::{Family, Form};
use tcgen05_ir::program::{Cond, MmaA, Op, Program, Stmt};

/// The most instructions one thread may run before validation gives up (a long `Spin`).
pub const STEP_LIMIT: usize = 200_000;

/// One disagreement, in words.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Mismatch {
    /// The thread: CTA rank, cluster, warp, lane.
    pub thread: (u32, u32, u32, u32),
    /// What differs, with the lines of both modules.
    pub what: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (c, k, w, l) = self.thread;
        write!(f, "cta {c} cluster {k} warp {w} lane {l}: {}", self.what)
    }
}

/// Why validation could not be done (neither a pass nor a finding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotValidated {
    /// A module does not parse.
    Parse(String),
    /// A thread of a module could not be interpreted.
    Interp {
        /// `source` or `produced`.
        side: &'static str,
        /// Why.
        err: InterpError,
    },
}

impl std::fmt::Display for NotValidated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotValidated::Parse(e) => write!(f, "parse: {e}"),
            NotValidated::Interp { side, err } => write!(f, "{side} PTX: {err}"),
        }
    }
}

/// The threads validation runs: every warp of every CTA of the grid, and the lanes that can
/// behave differently (0, 1, 31, and both sides of every lane condition of the program).
pub fn threads(p: &Program) -> Vec<Thread> {
    let mut lanes = vec![0u32, 1, 31];
    p.walk(&mut |s| {
        if let Stmt::If {
            cond: Cond::LaneLt(n) | Cond::LaneEq(n),
            ..
        } = s
        {
            let n = u32::from(*n);
            lanes.push(n.min(31));
            lanes.push(n.saturating_sub(1).min(31));
            lanes.push((n + 1).min(31));
        }
    });
    lanes.sort_unstable();
    lanes.dedup();
    let l = &p.launch;
    let mut out = Vec::new();
    for cluster in 0..u32::from(l.clusters) {
        for cta_rank in 0..u32::from(l.cluster_size) {
            for warp in 0..u32::from(l.warps_per_cta) {
                for &lane in &lanes {
                    out.push(Thread {
                        cta_rank,
                        cluster,
                        cluster_size: u32::from(l.cluster_size),
                        warp,
                        lane,
                    });
                }
            }
        }
    }
    out
}

fn is_ordering(e: &Event) -> bool {
    match e {
        Event::Sync { .. } => true,
        Event::Tc { form, .. } => !matches!(
            form.family(),
            Family::Ld | Family::St | Family::Mma | Family::Cp | Family::Shift
        ),
        Event::Store { .. } => false,
    }
}

/// An event without its line, for comparison.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    Tc(String, Vec<u64>),
    Sync(String, Vec<u64>),
    Store(Space, u64, u64),
}

fn key(e: &Event) -> Key {
    match e {
        Event::Tc { form, args, .. } => Key::Tc(describe_form(form), args.clone()),
        Event::Sync { op, args, .. } => Key::Sync(op.clone(), args.clone()),
        Event::Store {
            space, addr, value, ..
        } => Key::Store(*space, *addr, *value),
    }
}

fn describe_form(f: &Form) -> String {
    f.opcode()
}

fn show(k: &Key) -> String {
    match k {
        Key::Tc(op, args) | Key::Sync(op, args) => {
            let a: Vec<String> = args.iter().map(|v| format!("{v:#x}")).collect();
            format!("{op} {}", a.join(", "))
        }
        Key::Store(s, a, v) => format!("st.{:?} [{a:#x}] = {v:#x}", s).to_lowercase(),
    }
}

/// The ordering points and the segments between them.
struct Split {
    points: Vec<(Key, u32)>,
    segments: Vec<Vec<(Key, u32)>>,
    globals: BTreeMap<u64, (u64, u32)>,
}

/// The shared-memory ranges whose contents the program observes: the data regions some
/// descriptor (an mma's A or B, a cp's source) reads. A store anywhere else in shared memory
/// is dead in the program's own semantics, and a compiler may delete it.
pub fn observed_shared(p: &Program) -> Vec<Range<u64>> {
    let mut regions: Vec<u8> = Vec::new();
    for op in p.ops() {
        match op {
            Op::Cp { src, .. } => regions.push(src.region),
            Op::Mma(m) => {
                regions.push(m.b.region);
                if let MmaA::Desc(a) = &m.a {
                    regions.push(a.region);
                }
            }
            _ => {}
        }
    }
    regions.sort_unstable();
    regions.dedup();
    regions
        .into_iter()
        .filter(|&r| usize::from(r) < p.smem.regions.len())
        .map(|r| {
            let base = interp::symbol_address(&format!("tc_data{r}"));
            base..base + u64::from(p.smem.region_bytes(r))
        })
        .collect()
}

fn split(t: &Trace, observed: &[Range<u64>]) -> Split {
    let mut points = Vec::new();
    let mut segments = vec![Vec::new()];
    let mut globals = BTreeMap::new();
    for e in &t.events {
        match e {
            Event::Store {
                space: Space::Global,
                addr,
                value,
                line,
            } => {
                globals.insert(*addr, (*value, *line));
            }
            e if is_ordering(e) => {
                points.push((key(e), e.line()));
                segments.push(Vec::new());
            }
            Event::Store { addr, .. } if !observed.iter().any(|r| r.contains(addr)) => {}
            e => segments.last_mut().expect("one").push((key(e), e.line())),
        }
    }
    Split {
        points,
        segments,
        globals,
    }
}

/// Compares the traces of one thread; every disagreement found. Shared stores outside
/// `observed` ([`observed_shared`]) are not compared.
pub fn compare(src: &Trace, out: &Trace, observed: &[Range<u64>]) -> Vec<String> {
    let (a, b) = (split(src, observed), split(out, observed));
    let mut found = Vec::new();
    // 1. Ordering points, in order: the first difference, said as a drop, an addition or a
    // change (whichever makes the rest of the two sequences equal).
    let (pa, pb): (Vec<&Key>, Vec<&Key>) = (
        a.points.iter().map(|p| &p.0).collect(),
        b.points.iter().map(|p| &p.0).collect(),
    );
    if let Some(k) = (0..pa.len().max(pb.len())).find(|&k| pa.get(k) != pb.get(k)) {
        let src = a.points.get(k);
        let got = b.points.get(k);
        let dropped = src.is_some() && pa.get(k + 1..) == pb.get(k..);
        let added = got.is_some() && pa.get(k..) == pb.get(k + 1..);
        found.push(match (src, got) {
            (Some((x, lx)), Some(_)) if dropped => format!(
                "ordering point {k} dropped: source `{}` (line {lx})",
                show(x)
            ),
            (Some(_), Some((y, ly))) if added => format!(
                "ordering point {k} added: compiled `{}` (line {ly})",
                show(y)
            ),
            (Some((x, lx)), Some((y, ly))) => format!(
                "ordering point {k} changed: source `{}` (line {lx}), compiled `{}` (line {ly})",
                show(x),
                show(y)
            ),
            (Some((x, lx)), None) => format!(
                "ordering point {k} dropped: source `{}` (line {lx})",
                show(x)
            ),
            (None, Some((y, ly))) => format!(
                "ordering point {k} added: compiled `{}` (line {ly})",
                show(y)
            ),
            (None, None) => unreachable!("k is where the sequences differ"),
        });
    }
    if found.is_empty() {
        // 2. The unordered events between two ordering points.
        let bound = |k: usize, s: &Split| -> String {
            match k {
                0 => "the start".into(),
                k => format!("`{}`", show(&s.points[k - 1].0)),
            }
        };
        for (k, (sa, sb)) in a.segments.iter().zip(&b.segments).enumerate() {
            let mut ca: HashMap<&Key, (i64, u32)> = HashMap::new();
            for (x, l) in sa {
                ca.entry(x).or_insert((0, *l)).0 += 1;
            }
            let mut cb: HashMap<&Key, (i64, u32)> = HashMap::new();
            for (x, l) in sb {
                cb.entry(x).or_insert((0, *l)).0 += 1;
            }
            let mut diffs: Vec<String> = Vec::new();
            let mut keys: Vec<&Key> = ca.keys().chain(cb.keys()).copied().collect();
            keys.sort();
            keys.dedup();
            let in_other = |s: &Split, x: &Key| {
                s.segments
                    .iter()
                    .enumerate()
                    .find(|(j, seg)| *j != k && seg.iter().any(|(y, _)| y == x))
                    .map(|(j, _)| j)
            };
            for x in keys {
                let (na, la) = ca.get(x).copied().unwrap_or((0, 0));
                let (nb, lb) = cb.get(x).copied().unwrap_or((0, 0));
                if na == nb {
                    continue;
                }
                if na > nb {
                    diffs.push(match in_other(&b, x) {
                        Some(j) => format!(
                            "`{}` (source line {la}) belongs between {} and the next ordering point, but was moved {} {}",
                            show(x),
                            bound(k, &a),
                            if j > k { "past" } else { "before" },
                            if j > k { bound(j, &b) } else { bound(k, &b) }
                        ),
                        None => format!(
                            "`{}` (source line {la}) issued {na} time(s) after {}, {nb} time(s) in the compiled code",
                            show(x),
                            bound(k, &a)
                        ),
                    });
                } else if in_other(&a, x).is_none() {
                    diffs.push(if na == 0 {
                        format!("`{}` (compiled line {lb}) is not in the source", show(x))
                    } else {
                        format!(
                            "`{}` (source line {la}) issued {na} time(s) after {}, {nb} time(s) in the compiled code (line {lb})",
                            show(x),
                            bound(k, &a)
                        )
                    });
                }
            }
            diffs.sort();
            found.extend(diffs);
        }
    }
    // 3. Final values of the global words.
    for (addr, (va, la)) in &a.globals {
        match b.globals.get(addr) {
            Some((vb, _)) if vb == va => {}
            Some((vb, lb)) => found.push(format!(
                "global word {addr:#x} ends as {vb:#x} (compiled line {lb}), the source stores {va:#x} (line {la})"
            )),
            None => found.push(format!(
                "global word {addr:#x}: the source stores {va:#x} (line {la}), the compiled code never writes it"
            )),
        }
    }
    for (addr, (vb, lb)) in &b.globals {
        if !a.globals.contains_key(addr) {
            found.push(format!(
                "global word {addr:#x} = {vb:#x} written by the compiled code (line {lb}) only"
            ));
        }
    }
    // 4. A use of an ld's value comes after a wait::ld that follows the ld, unless the source
    // uses it before its wait too: a true register dependency on an ld result needs no wait
    // (reference §4.4, MCM-LD-REGDEP), so such a use is the source's own, not the compiler's.
    let early = |t: &Trace| -> Vec<(u32, u64, u32)> {
        t.events
            .iter()
            .enumerate()
            .filter_map(|(s, e)| {
                let Event::Store { value, addr, line, .. } = e else {
                    return None;
                };
                let id = interp::tag_ld(*value)?;
                let &l = t.ld_at.get(&id)?;
                let waited = t.events[l..s].iter().any(|e| {
                    matches!(e, Event::Tc { form: Form::Wait(w), .. } if w.op == tcgen05_ir::qual::WaitOp::Ld)
                });
                (l < s && !waited).then_some((id, *addr, *line))
            })
            .collect()
    };
    let in_source: Vec<(u32, u64)> = early(src).into_iter().map(|(i, a, _)| (i, a)).collect();
    for (id, addr, line) in early(out) {
        if !in_source.contains(&(id, addr)) {
            found.push(format!(
                "the value of the ld at compiled line {} is stored at line {line} before any tcgen05.wait::ld",
                out.events[out.ld_at[&id]].line()
            ));
        }
    }
    found
}

/// The outcome of validating one compilation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// Threads compared.
    pub threads: usize,
    /// Disagreements (empty: the compilation is validated).
    pub mismatches: Vec<Mismatch>,
}

/// Validates `produced` (a compiler's PTX of `p`) against `source` (the printer's PTX of `p`).
/// At most `max_reported` mismatches are kept.
pub fn validate(
    p: &Program,
    source: &str,
    produced: &str,
    max_reported: usize,
) -> Result<Validation, NotValidated> {
    let ms = tcgen05_ir::ptx::parse_module(source, "source.ptx")
        .map_err(|e| NotValidated::Parse(format!("source: {e}")))?;
    let mo = tcgen05_ir::ptx::parse_module(produced, "produced.ptx")
        .map_err(|e| NotValidated::Parse(format!("produced: {e}")))?;
    let ps = interp::Program::new(&ms, "tc_kernel").map_err(|err| NotValidated::Interp {
        side: "source",
        err,
    })?;
    let po = interp::Program::new(&mo, "tc_kernel").map_err(|err| NotValidated::Interp {
        side: "produced",
        err,
    })?;
    let ts = threads(p);
    let observed = observed_shared(p);
    let mut mismatches = Vec::new();
    for t in &ts {
        let a = ps.run(*t, STEP_LIMIT).map_err(|err| NotValidated::Interp {
            side: "source",
            err,
        })?;
        let b = po.run(*t, STEP_LIMIT).map_err(|err| NotValidated::Interp {
            side: "produced",
            err,
        })?;
        for what in compare(&a, &b, &observed) {
            if mismatches.len() < max_reported {
                mismatches.push(Mismatch {
                    thread: (t.cta_rank, t.cluster, t.warp, t.lane),
                    what,
                });
            }
        }
        if mismatches.len() >= max_reported {
            break;
        }
    }
    Ok(Validation {
        threads: ts.len(),
        mismatches,
    })
}
