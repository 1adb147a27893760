//! A small greedy reducer for compile-only findings (a builder plus a predicate).
//!
//! The shared minimizer (`crate::minimize`) is the general one; this one serves the ptxas
//! campaign, whose predicate ("ptxas still disagrees with the oracle with the same signature")
//! needs only compiles. Each pass tries, in order: dropping a warp, dropping a function (and its
//! calls), collapsing the launch to one CTA, and at every statement path deleting the statement
//! or replacing an `If`/`Loop` by its body. A candidate is kept when the predicate holds; passes
//! repeat until none is kept. Deterministic; candidates already tried are skipped.

use std::collections::HashSet;
use tcgen05_ir::{Program, Stmt};

/// Statistics of one reduction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReduceStats {
    /// Predicate calls.
    pub tries: usize,
    /// Candidates kept.
    pub kept: usize,
}

fn paths(stmts: &[Stmt], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    for (i, s) in stmts.iter().enumerate() {
        prefix.push(i);
        out.push(prefix.clone());
        match s {
            Stmt::If { then, els, .. } => {
                prefix.push(0);
                paths(then, prefix, out);
                prefix.pop();
                prefix.push(1);
                paths(els, prefix, out);
                prefix.pop();
            }
            Stmt::Loop { body, .. } => {
                prefix.push(0);
                paths(body, prefix, out);
                prefix.pop();
            }
            _ => {}
        }
        prefix.pop();
    }
}

/// Path encoding: statement index, then for an `If` 0 (then) or 1 (else) and an index, for a
/// `Loop` 0 and an index.
fn edit(
    stmts: &mut Vec<Stmt>,
    path: &[usize],
    f: &mut dyn FnMut(&mut Vec<Stmt>, usize) -> bool,
) -> bool {
    match path {
        [] => false,
        [i] => *i < stmts.len() && f(stmts, *i),
        [i, branch, rest @ ..] => match stmts.get_mut(*i) {
            Some(Stmt::If { then, els, .. }) => {
                edit(if *branch == 0 { then } else { els }, rest, f)
            }
            Some(Stmt::Loop { body, .. }) => edit(body, rest, f),
            _ => false,
        },
    }
}

fn delete(v: &mut Vec<Stmt>, i: usize) -> bool {
    v.remove(i);
    true
}

fn inline(v: &mut Vec<Stmt>, i: usize, branch: usize) -> bool {
    let body = match &v[i] {
        Stmt::If { then, els, .. } => {
            if branch == 0 {
                then.clone()
            } else {
                els.clone()
            }
        }
        Stmt::Loop { body, .. } if branch == 0 => body.clone(),
        _ => return false,
    };
    v.splice(i..=i, body);
    true
}

fn drop_calls(stmts: &mut Vec<Stmt>, f: u8) {
    stmts.retain(|s| !matches!(s, Stmt::Call(g) if *g == f));
    for s in stmts.iter_mut() {
        match s {
            Stmt::Call(g) if *g > f => *g -= 1,
            Stmt::If { then, els, .. } => {
                drop_calls(then, f);
                drop_calls(els, f);
            }
            Stmt::Loop { body, .. } => drop_calls(body, f),
            _ => {}
        }
    }
}

fn candidates(p: &Program) -> Vec<Program> {
    let mut out = Vec::new();
    if p.warps.len() > 1 {
        for w in (0..p.warps.len()).rev() {
            let mut q = p.clone();
            q.warps.remove(w);
            q.launch.warps_per_cta = q.warps.len() as u8;
            out.push(q);
        }
    }
    for f in (0..p.funcs.len()).rev() {
        let mut q = p.clone();
        q.funcs.remove(f);
        for w in &mut q.warps {
            drop_calls(w, f as u8);
        }
        for g in &mut q.funcs {
            drop_calls(&mut g.body, f as u8);
        }
        out.push(q);
    }
    if p.launch.clusters > 1 || p.launch.cluster_size > 1 || p.launch.declare_cluster {
        let mut q = p.clone();
        q.launch.clusters = 1;
        q.launch.cluster_size = 1;
        q.launch.declare_cluster = false;
        out.push(q);
    }
    let mut bodies: Vec<(bool, usize, Vec<usize>)> = Vec::new();
    for (w, code) in p.warps.iter().enumerate() {
        let mut ps = Vec::new();
        paths(code, &mut Vec::new(), &mut ps);
        bodies.extend(ps.into_iter().map(|x| (true, w, x)));
    }
    for (f, func) in p.funcs.iter().enumerate() {
        let mut ps = Vec::new();
        paths(&func.body, &mut Vec::new(), &mut ps);
        bodies.extend(ps.into_iter().map(|x| (false, f, x)));
    }
    // Later statements first: deleting them disturbs fewer paths still to try.
    for (is_warp, k, path) in bodies.into_iter().rev() {
        for action in 0..3 {
            let mut q = p.clone();
            let code = if is_warp {
                &mut q.warps[k]
            } else {
                &mut q.funcs[k].body
            };
            let ok = match action {
                0 => edit(code, &path, &mut delete),
                1 => edit(code, &path, &mut |v, i| inline(v, i, 0)),
                _ => edit(code, &path, &mut |v, i| inline(v, i, 1)),
            };
            if ok {
                out.push(q);
            }
        }
    }
    out
}

/// Reduces `p` while `keep` holds. `keep(p)` should be true on entry; if it is not, `p` is
/// returned unchanged. At most `max_tries` predicate calls.
pub fn reduce(
    p: &Program,
    max_tries: usize,
    keep: &mut dyn FnMut(&Program) -> bool,
) -> (Program, ReduceStats) {
    reduce_batched(p, max_tries, 1, &mut |ps| {
        ps.iter().map(&mut *keep).collect()
    })
}

/// The same as [`reduce`] with a predicate that judges `chunk` candidates at once (one ptxas
/// process per version for the lot): the first candidate of the chunk that keeps the property
/// is taken. `max_tries` counts candidates judged.
pub fn reduce_batched(
    p: &Program,
    max_tries: usize,
    chunk: usize,
    keep: &mut dyn FnMut(&[Program]) -> Vec<bool>,
) -> (Program, ReduceStats) {
    let mut stats = ReduceStats::default();
    let mut best = p.clone();
    let mut tried: HashSet<Program> = HashSet::new();
    tried.insert(best.clone());
    'outer: loop {
        let fresh: Vec<Program> = candidates(&best)
            .into_iter()
            .filter(|c| !tried.contains(c))
            .collect();
        for group in fresh.chunks(chunk.max(1)) {
            let room = max_tries.saturating_sub(stats.tries);
            if room == 0 {
                break 'outer;
            }
            let group = &group[..group.len().min(room)];
            tried.extend(group.iter().cloned());
            stats.tries += group.len();
            let verdicts = keep(group);
            if let Some(k) = verdicts.iter().position(|&b| b) {
                stats.kept += 1;
                best = group[k].clone();
                continue 'outer;
            }
        }
        break;
    }
    (best, stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::samples;

    #[test]
    fn reduces_to_the_statement_the_predicate_needs() {
        let p = samples::single_warp_roundtrip();
        // Keep programs that still have a dealloc: the smallest is that one statement.
        let has_dealloc = |p: &Program| {
            p.ops()
                .iter()
                .any(|o| matches!(o, tcgen05_ir::Op::Dealloc { .. }))
        };
        let (r, stats) = reduce(&p, 1000, &mut |q| has_dealloc(q));
        assert_eq!(r.size(), 1, "{r:?}");
        assert!(has_dealloc(&r));
        assert!(stats.kept >= 7);
        // A predicate that fails on everything but the input keeps the input.
        let (same, _) = reduce(&p, 1000, &mut |q| q == &p);
        assert_eq!(same, p);
    }

    #[test]
    fn batched_reduction_reaches_the_same_result() {
        let p = samples::single_warp_roundtrip();
        let has = |q: &Program| {
            q.ops()
                .iter()
                .any(|o| matches!(o, tcgen05_ir::Op::Dealloc { .. }))
        };
        let (r, stats) = reduce_batched(&p, 1000, 8, &mut |qs| qs.iter().map(&has).collect());
        assert_eq!(r.size(), 1);
        assert!(stats.tries >= stats.kept);
    }

    #[test]
    fn if_bodies_are_inlined() {
        let mut p = samples::single_warp_roundtrip();
        let inner = p.warps[0].clone();
        p.warps[0] = vec![Stmt::If {
            cond: tcgen05_ir::Cond::ElectOne,
            then: vec![],
            els: inner,
        }];
        let (r, _) = reduce(&p, 1000, &mut |q| {
            q.ops().len() >= 2 && !matches!(q.warps[0][0], Stmt::If { .. })
        });
        assert!(!matches!(r.warps[0][0], Stmt::If { .. }));
    }
}
