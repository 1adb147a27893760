//! The minimizer: a builder of smaller candidates plus a predicate (after
//! wasm-shrink).
//!
//! [`minimize`] keeps a current case and tries candidates in a fixed order of passes, each
//! making the program smaller or simpler:
//!
//! 1. fewer clusters, then CTAs per cluster toward 1;
//! 2. fewer warps: drop one warp's code, or move one warp's code into another's (before or
//!    after it), leaving it empty;
//! 3. fewer statements: delta debugging over every statement (chunks of half, a quarter, ...,
//!    one statement), children included;
//! 4. unwrap: an `If` replaced by its `then` or `els` statements, a `Loop` by its body, loop
//!    counts toward 1, unused functions dropped;
//! 5. schedule knobs: spins removed;
//! 6. operands: every nCols toward 32 (all occurrences of one value at once, so alloc and
//!    dealloc stay matched), ld/st shapes toward `.32x32b.x1`.
//!
//! A candidate is kept when the predicate holds: it breaks no rule the original does not break
//! (by the oracle's static and run verdicts, [`broken_rules`]: a minimized program frees what it
//! allocates and waits where it must, unless the original did not), and the same target still
//! gives a discrepancy with the same [`Signature`] ([`crate::judge`]). On a target whose
//! schedule comes from the case's seed (the simulator's random scheduler without `@seed`), a
//! candidate that loses the discrepancy under the current seed is also tried under
//! [`RESEEDS`] other seeds, derived from the current one: a smaller program shifts every
//! later random choice, and the bug it shows usually needs only some schedule, not that one.
//! Candidates already tried are skipped (by hash). The search is deterministic, reports each
//! new smallest case through a callback, and stops at a fixed point or when the time budget
//! is spent.

pub mod batched;

use crate::judge;
use std::collections::{BTreeSet, HashSet};
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::time::{Duration, Instant};
use tcgen05_drivers::diff::Signature;
use tcgen05_drivers::target::Target;
use tcgen05_ir::{Case, LdStShape, NCols, Num, Op, Program, RuleId, Stmt};
use tcgen05_oracle::{Expected, LeakStatus, Options, RunVerdict};

/// Why minimization could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MinimizeError {
    /// The input case does not show a discrepancy on this target.
    NotInteresting(String),
}

impl std::fmt::Display for MinimizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MinimizeError::NotInteresting(why) => write!(f, "the case is not interesting: {why}"),
        }
    }
}

impl std::error::Error for MinimizeError {}

/// The result of a minimization.
#[derive(Debug, Clone)]
pub struct Minimized {
    /// The smallest case found.
    pub case: Case,
    /// The signature it keeps.
    pub signature: Signature,
    /// Candidates tried.
    pub tries: u64,
    /// Of those, candidates dropped without running because they break a rule the original
    /// does not ([`broken_rules`]).
    pub rejected: u64,
    /// Size ([`Program::size`]) before and after.
    pub sizes: (usize, usize),
    /// Whether the time budget ran out before a fixed point.
    pub timed_out: bool,
}

/// The rules a program breaks by the oracle's verdicts on it: its static violations, the rules
/// that make its run undefined, possibly blocking or deadlocking, and those that let it leak
/// TMEM (ALLOC-FREE-BEFORE-EXIT). The rules a run checked and found kept (`Completes`) are
/// not among them.
pub fn broken_rules(e: &Expected) -> BTreeSet<RuleId> {
    let mut v: BTreeSet<RuleId> = e.violations.iter().map(|x| x.rule).collect();
    match &e.run.verdict {
        RunVerdict::Completes | RunVerdict::NotJudged(_) => {}
        RunVerdict::Undefined(rules) => {
            v.extend(rules.iter().copied());
            v.extend(e.run.rules.iter().copied());
        }
        RunVerdict::MayBlock { .. } | RunVerdict::MustDeadlock { .. } => {
            v.extend(e.run.rules.iter().copied());
        }
    }
    if e.leak.status != LeakStatus::NoLeak {
        v.extend(e.leak.rules.iter().copied());
        v.insert(RuleId::AllocFreeBeforeExit);
    }
    v
}

/// Minimizes `case` on `target` while its discrepancy signature stays the same; `budget`
/// bounds the time; `on_smaller` sees each new smallest case.
pub fn minimize(
    case: &Case,
    target: &mut dyn Target,
    opts: &Options,
    budget: Duration,
    on_smaller: &mut dyn FnMut(&Case),
) -> Result<Minimized, MinimizeError> {
    let Some(signature) = judge::signature_of(case, opts, target) else {
        return Err(MinimizeError::NotInteresting(format!(
            "no discrepancy on `{}`",
            target.name()
        )));
    };
    let start = Instant::now();
    let allowed = broken_rules(&tcgen05_oracle::expect_with(&case.program, opts));
    let mut rejected = 0u64;
    let mut cur = case.clone();
    let mut seen: HashSet<u64> = HashSet::new();
    seen.insert(hash(&cur.program));
    let mut tries = 0u64;
    let mut timed_out = false;
    let reseed = seeded_by_case(&target.name());
    'outer: loop {
        let mut progressed = false;
        for pass in PASSES {
            loop {
                let cands = pass(&cur.program);
                let mut took = false;
                for p in cands {
                    if start.elapsed() > budget {
                        timed_out = true;
                        break 'outer;
                    }
                    if !seen.insert(hash(&p)) {
                        continue;
                    }
                    tries += 1;
                    // A smaller program that breaks a rule the original kept (drops the
                    // dealloc, a wait, a barrier) would be handed on as a reproducer of that
                    // other mistake too: never kept, and never run.
                    let expected = Rc::new(tcgen05_oracle::expect_with(&p, opts));
                    if !broken_rules(&expected).is_subset(&allowed) {
                        rejected += 1;
                        continue;
                    }
                    let mut cand = Case {
                        program: p,
                        intent: cur.intent.clone(),
                        provenance: cur.provenance.clone(),
                    };
                    let seed = cur.provenance.seed.unwrap_or(0);
                    let seeds = if reseed { RESEEDS } else { 0 };
                    let found = (0..=seeds).any(|k| {
                        if k > 0 {
                            cand.provenance.seed = Some(reseeded(seed, k));
                        }
                        judge::judge_against(&cand, Rc::clone(&expected), target).signature()
                            == Some(&signature)
                    });
                    if found {
                        cur = cand;
                        on_smaller(&cur);
                        took = true;
                        progressed = true;
                        break;
                    }
                }
                if !took {
                    break;
                }
            }
        }
        if !progressed {
            break;
        }
    }
    let sizes = (case.program.size(), cur.program.size());
    Ok(Minimized {
        case: cur,
        signature,
        tries,
        rejected,
        sizes,
        timed_out,
    })
}

/// Other seeds a candidate is tried under when the target's schedule follows the case's seed.
pub const RESEEDS: u64 = 3;

/// Whether `target`'s schedule comes from the case's seed: the simulator's random scheduler
/// without an `@seed` (`sim`, `sim:random`, with any faults or wording).
fn seeded_by_case(target: &str) -> bool {
    matches!(
        tcgen05_drivers::sim::SimConfig::parse(target),
        Some(Ok(c)) if c.sched == tcgen05_drivers::sim::Sched::Random(None)
    )
}

/// The k-th other seed of `seed` (SplitMix64's increment: distinct, deterministic).
fn reseeded(seed: u64, k: u64) -> u64 {
    seed.wrapping_add(k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

fn hash(p: &Program) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    p.hash(&mut h);
    h.finish()
}

type Pass = fn(&Program) -> Vec<Program>;

const PASSES: &[Pass] = &[
    shrink_grid,
    drop_warps,
    merge_warps,
    drop_statements,
    drop_barrier_rounds,
    unwrap,
    drop_spins,
    simplify_ncols,
    simplify_shapes,
];

/// The size measure of the fault table: statements, not counting the `If` and `Loop`
/// wrappers themselves (their bodies count), i.e. the instructions a program executes
/// besides control flow.
pub fn instructions(p: &Program) -> usize {
    let mut n = 0;
    p.walk(&mut |s| n += usize::from(!matches!(s, Stmt::If { .. } | Stmt::Loop { .. })));
    n
}

fn is_bar(s: &Stmt) -> bool {
    matches!(s, Stmt::BarCta)
}

fn is_cluster_bar(s: &Stmt) -> bool {
    matches!(s, Stmt::ClusterArrive { .. } | Stmt::ClusterWait)
}

/// Removes the k-th CTA barrier (or cluster arrive/wait) of every code body at once: a
/// barrier round only disappears whole, or the remaining barriers would pair differently.
fn drop_barrier_rounds(p: &Program) -> Vec<Program> {
    let mut v = Vec::new();
    let all = paths(p);
    let codes = p.warps.len() + p.funcs.len();
    for pred in [is_bar as fn(&Stmt) -> bool, is_cluster_bar] {
        let lists: Vec<Vec<Path>> = (0..codes)
            .map(|code| {
                all.iter()
                    .filter(|(c, path)| *c == code && stmt_of(p, *c, path).is_some_and(pred))
                    .cloned()
                    .collect()
            })
            .collect();
        let rounds = lists.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..rounds {
            let dels: HashSet<Path> = lists.iter().filter_map(|l| l.get(k).cloned()).collect();
            v.push(delete(p, &dels));
        }
    }
    v
}

fn stmt_of<'p>(p: &'p Program, code: usize, path: &[u32]) -> Option<&'p Stmt> {
    let nw = p.warps.len();
    let mut list: &[Stmt] = if code < nw {
        &p.warps[code]
    } else {
        &p.funcs.get(code - nw)?.body
    };
    let mut cur: Option<&Stmt> = None;
    for &i in path {
        let s = match cur {
            None => list.get(i as usize)?,
            Some(Stmt::Loop { body, .. }) => body.get(i as usize)?,
            Some(Stmt::If { then, els, .. }) => {
                if i % 2 == 0 {
                    then.get((i / 2) as usize)?
                } else {
                    els.get((i / 2) as usize)?
                }
            }
            Some(_) => return None,
        };
        cur = Some(s);
        list = &[];
    }
    cur
}

fn shrink_grid(p: &Program) -> Vec<Program> {
    let mut v = Vec::new();
    if p.launch.clusters > 1 {
        let mut q = p.clone();
        q.launch.clusters = 1;
        v.push(q);
        let mut q = p.clone();
        q.launch.clusters -= 1;
        v.push(q);
    }
    let mut cs = p.launch.cluster_size;
    while cs > 1 {
        cs /= 2;
        let mut q = p.clone();
        q.launch.cluster_size = cs;
        v.push(q);
    }
    v
}

fn drop_warps(p: &Program) -> Vec<Program> {
    let mut v = Vec::new();
    if p.warps.len() > 1 {
        for k in (0..p.warps.len()).rev() {
            let mut q = p.clone();
            q.warps.remove(k);
            q.launch.warps_per_cta -= 1;
            v.push(q);
        }
    }
    v
}

/// One warp's code moved into another warp (before, then after, its code), leaving the first
/// warp empty: the same statements in fewer warps, so that barrier rounds and the
/// synchronization between the two warps can go.
fn merge_warps(p: &Program) -> Vec<Program> {
    let mut v = Vec::new();
    let n = p.warps.len();
    if n < 2 {
        return v;
    }
    for from in (0..n).rev() {
        for into in 0..n {
            if into == from || p.warps[from].is_empty() {
                continue;
            }
            for before in [true, false] {
                let mut q = p.clone();
                let moved = q.warps[from].clone();
                let dst = &mut q.warps[into];
                if before {
                    dst.splice(0..0, moved);
                } else {
                    dst.extend(moved);
                }
                // The source warp stays, empty: every other warp keeps its rank (and lane
                // quarter); `drop_warps` removes it where the ranks do not matter.
                q.warps[from].clear();
                v.push(q);
            }
        }
    }
    v
}

/// A statement position: the code body (warps first, then functions) and the path of child
/// indices (for an `If`, `then` children are `2i`, `els` children `2i + 1`).
type Path = (usize, Vec<u32>);

fn paths(p: &Program) -> Vec<Path> {
    fn go(
        b: &[Stmt],
        prefix: &mut Vec<u32>,
        code: usize,
        out: &mut Vec<Path>,
        step: fn(u32) -> u32,
    ) {
        for (i, s) in b.iter().enumerate() {
            prefix.push(step(i as u32));
            out.push((code, prefix.clone()));
            match s {
                Stmt::If { then, els, .. } => {
                    go(then, prefix, code, out, |j| 2 * j);
                    go(els, prefix, code, out, |j| 2 * j + 1);
                }
                Stmt::Loop { body, .. } => go(body, prefix, code, out, |j| j),
                _ => {}
            }
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    for (c, w) in p.warps.iter().enumerate() {
        go(w, &mut Vec::new(), c, &mut out, |j| j);
    }
    for (f, func) in p.funcs.iter().enumerate() {
        go(
            &func.body,
            &mut Vec::new(),
            p.warps.len() + f,
            &mut out,
            |j| j,
        );
    }
    out
}

fn delete(p: &Program, dels: &HashSet<Path>) -> Program {
    fn go(
        b: &[Stmt],
        prefix: &mut Vec<u32>,
        code: usize,
        dels: &HashSet<Path>,
        step: fn(u32) -> u32,
    ) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(b.len());
        for (i, s) in b.iter().enumerate() {
            prefix.push(step(i as u32));
            if !dels.contains(&(code, prefix.clone())) {
                out.push(match s {
                    Stmt::If { cond, then, els } => Stmt::If {
                        cond: *cond,
                        then: go(then, prefix, code, dels, |j| 2 * j),
                        els: go(els, prefix, code, dels, |j| 2 * j + 1),
                    },
                    Stmt::Loop { count, body } => Stmt::Loop {
                        count: *count,
                        body: go(body, prefix, code, dels, |j| j),
                    },
                    other => other.clone(),
                });
            }
            prefix.pop();
        }
        out
    }
    let mut q = p.clone();
    let nw = p.warps.len();
    for (c, w) in q.warps.iter_mut().enumerate() {
        *w = go(&p.warps[c], &mut Vec::new(), c, dels, |j| j);
    }
    for (f, func) in q.funcs.iter_mut().enumerate() {
        func.body = go(&p.funcs[f].body, &mut Vec::new(), nw + f, dels, |j| j);
    }
    q
}

/// Delta debugging over statements: chunks of n/2, n/4, ..., 1.
fn drop_statements(p: &Program) -> Vec<Program> {
    let all = paths(p);
    let mut v = Vec::new();
    let mut k = all.len().div_ceil(2).max(1);
    loop {
        for chunk in all.chunks(k) {
            let dels: HashSet<Path> = chunk.iter().cloned().collect();
            v.push(delete(p, &dels));
        }
        if k == 1 {
            break;
        }
        k = k.div_ceil(2);
    }
    v
}

fn map_stmts(p: &Program, f: &mut dyn FnMut(&Stmt) -> Option<Vec<Stmt>>) -> Vec<Program> {
    // One candidate per statement `f` rewrites: the statement replaced by f's output.
    let all = paths(p);
    let mut v = Vec::new();
    for target in all {
        let mut q = p.clone();
        let nw = q.warps.len();
        let body: &mut Vec<Stmt> = if target.0 < nw {
            &mut q.warps[target.0]
        } else {
            &mut q.funcs[target.0 - nw].body
        };
        if let Some(done) = rewrite_at(body, &target.1, f)
            && done
        {
            v.push(q);
        }
    }
    v
}

fn rewrite_at(
    list: &mut Vec<Stmt>,
    path: &[u32],
    f: &mut dyn FnMut(&Stmt) -> Option<Vec<Stmt>>,
) -> Option<bool> {
    let (&first, rest) = path.split_first()?;
    let (branch, idx) = (first, first as usize);
    if rest.is_empty() {
        let i = idx;
        let s = list.get(i)?;
        let new = f(s)?;
        list.splice(i..=i, new);
        return Some(true);
    }
    let _ = branch;
    match list.get_mut(idx)? {
        Stmt::Loop { body, .. } => rewrite_at(body, rest, f),
        Stmt::If { then, els, .. } => {
            let (&c, more) = rest.split_first()?;
            let mut p2 = vec![c / 2];
            p2.extend_from_slice(more);
            if c % 2 == 0 {
                rewrite_at(then, &p2, f)
            } else {
                rewrite_at(els, &p2, f)
            }
        }
        _ => None,
    }
}

fn unwrap(p: &Program) -> Vec<Program> {
    let mut v = map_stmts(p, &mut |s| match s {
        Stmt::If { then, .. } => Some(then.clone()),
        Stmt::Loop { body, .. } => Some(body.clone()),
        _ => None,
    });
    v.extend(map_stmts(p, &mut |s| match s {
        Stmt::If { els, .. } => Some(els.clone()),
        Stmt::Loop { count, body } if *count > 1 => Some(vec![Stmt::Loop {
            count: 1,
            body: body.clone(),
        }]),
        _ => None,
    }));
    if !p.funcs.is_empty() {
        let mut used = false;
        p.walk(&mut |s| used |= matches!(s, Stmt::Call(_)));
        if !used {
            let mut q = p.clone();
            q.funcs.clear();
            v.push(q);
        }
    }
    v
}

fn drop_spins(p: &Program) -> Vec<Program> {
    map_stmts(p, &mut |s| match s {
        Stmt::Spin(_) => Some(vec![]),
        _ => None,
    })
}

fn rewrite_all(p: &Program, f: &dyn Fn(&Op) -> Option<Op>) -> Option<Program> {
    fn go(b: &mut [Stmt], f: &dyn Fn(&Op) -> Option<Op>, changed: &mut bool) {
        for s in b {
            match s {
                Stmt::Tc(op) => {
                    if let Some(n) = f(op) {
                        *op = n;
                        *changed = true;
                    }
                }
                Stmt::If { then, els, .. } => {
                    go(then, f, changed);
                    go(els, f, changed);
                }
                Stmt::Loop { body, .. } => go(body, f, changed),
                _ => {}
            }
        }
    }
    let mut q = p.clone();
    let mut changed = false;
    for w in &mut q.warps {
        go(w, f, &mut changed);
    }
    for func in &mut q.funcs {
        go(&mut func.body, f, &mut changed);
    }
    changed.then_some(q)
}

fn simplify_ncols(p: &Program) -> Vec<Program> {
    let mut values: Vec<u32> = Vec::new();
    for op in p.ops() {
        if let Op::Alloc { ncols, .. } | Op::Dealloc { ncols, .. } = op
            && ncols.value > 32
            && !values.contains(&ncols.value)
        {
            values.push(ncols.value);
        }
    }
    values.sort_unstable();
    let mut v = Vec::new();
    for from in values {
        for to in [32, from / 2] {
            if to >= from || to < 32 {
                continue;
            }
            let f = move |op: &Op| -> Option<Op> {
                let mut op = op.clone();
                match &mut op {
                    Op::Alloc { ncols, .. } | Op::Dealloc { ncols, .. } if ncols.value == from => {
                        *ncols = NCols {
                            value: to,
                            form: ncols.form,
                        };
                        Some(op)
                    }
                    _ => None,
                }
            };
            v.extend(rewrite_all(p, &f));
        }
    }
    v
}

fn simplify_shapes(p: &Program) -> Vec<Program> {
    let target =
        |shape: &mut LdStShape, num: &mut Num, nregs: &mut u16, split: &mut Option<u32>| -> bool {
            let before = (*shape, *num);
            if *num != Num::X1 {
                *num = Num::X1;
            } else if *shape != LdStShape::S32x32b {
                *shape = LdStShape::S32x32b;
                *split = None;
            }
            *nregs = tcgen05_ir::vec_len(*shape, *num).unwrap_or(1);
            before != (*shape, *num)
        };
    let mut v = Vec::new();
    let lds = p
        .ops()
        .into_iter()
        .filter(|o| matches!(o, Op::Ld { .. } | Op::St { .. }))
        .count();
    for k in 0..lds {
        let counter = std::cell::Cell::new(0usize);
        let f = |op: &Op| -> Option<Op> {
            let mut op = op.clone();
            let (shape, num, nregs, split) = match &mut op {
                Op::Ld {
                    form, nregs, split, ..
                } => (&mut form.shape, &mut form.num, nregs, split),
                Op::St {
                    form, nregs, split, ..
                } => (&mut form.shape, &mut form.num, nregs, split),
                _ => return None,
            };
            let i = counter.get();
            counter.set(i + 1);
            if i != k {
                return None;
            }
            target(shape, num, nregs, split).then_some(op)
        };
        v.extend(rewrite_all(p, &f));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::samples::single_warp_roundtrip;

    #[test]
    fn deleting_every_path_leaves_empty_code() {
        let p = single_warp_roundtrip();
        let all: HashSet<Path> = paths(&p).into_iter().collect();
        assert_eq!(all.len(), p.size());
        assert!(delete(&p, &all).warps[0].is_empty());
    }

    #[test]
    fn merging_warps_keeps_every_statement_and_every_rank() {
        let mut p = single_warp_roundtrip();
        p.warps.push(vec![Stmt::Spin(3)]);
        p.launch.warps_per_cta = 2;
        let c = merge_warps(&p);
        // Warp 1 into warp 0 (before, after), warp 0 into warp 1 (before, after).
        assert_eq!(c.len(), 4);
        for q in &c {
            assert_eq!(q.warps.len(), 2);
            assert_eq!(q.size(), p.size());
            assert!(q.warps.iter().any(Vec::is_empty));
        }
        assert_eq!(c[0].warps[0].first(), Some(&Stmt::Spin(3)));
        assert_eq!(c[1].warps[0].last(), Some(&Stmt::Spin(3)));
    }

    #[test]
    fn only_the_case_seeded_scheduler_is_reseeded() {
        assert!(seeded_by_case("sim"));
        assert!(seeded_by_case("sim+fence-noop"));
        assert!(!seeded_by_case("sim:random@4"));
        assert!(!seeded_by_case("sim:adversarial+fence-noop"));
        assert!(!seeded_by_case("ptxas@13.5"));
        let s: HashSet<u64> = (0..=RESEEDS).map(|k| reseeded(7, k)).collect();
        assert_eq!(s.len(), RESEEDS as usize + 1);
        assert_eq!(reseeded(7, 0), 7);
    }

    #[test]
    fn nested_statements_are_addressed_and_unwrapped() {
        let mut p = single_warp_roundtrip();
        let inner = p.warps[0].clone();
        p.warps[0] = vec![Stmt::Loop {
            count: 3,
            body: vec![Stmt::If {
                cond: tcgen05_ir::Cond::LaneLt(4),
                then: inner,
                els: vec![Stmt::Spin(1)],
            }],
        }];
        assert_eq!(paths(&p).len(), p.size());
        // Unwrapping the loop and the if gives a program with the original statements on top.
        let c = unwrap(&p);
        assert!(
            c.iter()
                .any(|q| matches!(q.warps[0].first(), Some(Stmt::If { .. })))
        );
        assert!(drop_spins(&p).iter().all(|q| q.size() == p.size() - 1));
    }
}
