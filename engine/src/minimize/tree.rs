//! Statement addressing for the minimizer's reduction steps: every statement of a program
//! has a [`Path`] (its code body and the child indices down to it), and candidates are made
//! by deleting a set of paths or rewriting the statement at one path.

use std::collections::HashSet;
use tcgen05_ir::{Op, Program, Stmt};

/// A statement position: the code body (warps first, then functions) and the path of child
/// indices (for an `If`, `then` children are `2i`, `els` children `2i + 1`).
pub(super) type Path = (usize, Vec<u32>);

pub(super) fn paths(p: &Program) -> Vec<Path> {
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

pub(super) fn stmt_of<'p>(p: &'p Program, code: usize, path: &[u32]) -> Option<&'p Stmt> {
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

pub(super) fn delete(p: &Program, dels: &HashSet<Path>) -> Program {
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

pub(super) fn map_stmts(
    p: &Program,
    f: &mut dyn FnMut(&Stmt) -> Option<Vec<Stmt>>,
) -> Vec<Program> {
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

pub(super) fn rewrite_at(
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

pub(super) fn rewrite_all(p: &Program, f: &dyn Fn(&Op) -> Option<Op>) -> Option<Program> {
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

/// The statement next to `path` in the same list: the one before it (`before`) or after it.
pub(super) fn sibling(p: &Program, (code, path): &Path, before: bool) -> Option<Path> {
    let (&last, parent) = path.split_last()?;
    // Children of an `If` are numbered 2i (then) and 2i + 1 (els): a neighbour is two away.
    let step = match parent {
        [] => 1,
        _ => match stmt_of(p, *code, parent)? {
            Stmt::If { .. } => 2,
            _ => 1,
        },
    };
    let at = if before {
        last.checked_sub(step)?
    } else {
        last + step
    };
    let mut q = parent.to_vec();
    q.push(at);
    stmt_of(p, *code, &q)?;
    Some((*code, q))
}

/// The paths of every statement `pred` holds for, in [`paths`] order.
pub(super) fn paths_where(p: &Program, pred: &dyn Fn(&Stmt) -> bool) -> Vec<Path> {
    paths(p)
        .into_iter()
        .filter(|(c, path)| stmt_of(p, *c, path).is_some_and(pred))
        .collect()
}

/// `p` without every statement `pred` holds for (children of a deleted `If` or `Loop` go
/// with it), or `None` where it holds for none.
pub(super) fn delete_where(p: &Program, pred: &dyn Fn(&Stmt) -> bool) -> Option<Program> {
    let dels: HashSet<Path> = paths_where(p, pred).into_iter().collect();
    (!dels.is_empty()).then(|| delete(p, &dels))
}
