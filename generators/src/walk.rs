//! Statement paths: finding statements in a program and editing them in place (used by the
//! near-miss mutators, the litmus families and `fixup`).
//!
//! A path is the code (a warp or a function) plus indices: the first indexes the top-level
//! list; each further one indexes the children of the statement named so far (a loop's body;
//! an `If`'s `then` statements numbered from 0, then its `els` statements).

use tcgen05_ir::{Op, Program, Stmt};

/// Which code a path starts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeRef {
    /// `Program::warps[n]`.
    Warp(usize),
    /// `Program::funcs[n].body`.
    Func(usize),
}

/// Where a statement is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    /// The code.
    pub code: CodeRef,
    /// The indices.
    pub idx: Vec<usize>,
}

fn code_mut(p: &mut Program, c: CodeRef) -> &mut Vec<Stmt> {
    match c {
        CodeRef::Warp(w) => &mut p.warps[w],
        CodeRef::Func(f) => &mut p.funcs[f].body,
    }
}

fn code(p: &Program, c: CodeRef) -> &Vec<Stmt> {
    match c {
        CodeRef::Warp(w) => &p.warps[w],
        CodeRef::Func(f) => &p.funcs[f].body,
    }
}

/// Every path whose statement satisfies `pred`, in pre-order (warps first, then functions).
pub fn find(p: &Program, pred: &dyn Fn(&Stmt) -> bool) -> Vec<Path> {
    fn visit(
        s: &Stmt,
        code: CodeRef,
        prefix: &mut Vec<usize>,
        pred: &dyn Fn(&Stmt) -> bool,
        out: &mut Vec<Path>,
    ) {
        if pred(s) {
            out.push(Path {
                code,
                idx: prefix.clone(),
            });
        }
        let kids: Box<dyn Iterator<Item = &Stmt>> = match s {
            Stmt::Loop { body, .. } => Box::new(body.iter()),
            Stmt::If { then, els, .. } => Box::new(then.iter().chain(els.iter())),
            _ => return,
        };
        for (j, t) in kids.enumerate() {
            prefix.push(j);
            visit(t, code, prefix, pred, out);
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    let mut prefix = Vec::with_capacity(4);
    for w in 0..p.warps.len() {
        for (i, s) in p.warps[w].iter().enumerate() {
            prefix.push(i);
            visit(s, CodeRef::Warp(w), &mut prefix, pred, &mut out);
            prefix.pop();
        }
    }
    for f in 0..p.funcs.len() {
        for (i, s) in p.funcs[f].body.iter().enumerate() {
            prefix.push(i);
            visit(s, CodeRef::Func(f), &mut prefix, pred, &mut out);
            prefix.pop();
        }
    }
    out
}

/// Every path of a tcgen05 op satisfying `pred`.
pub fn find_ops(p: &Program, pred: &dyn Fn(&Op) -> bool) -> Vec<Path> {
    find(p, &|s| matches!(s, Stmt::Tc(op) if pred(op)))
}

/// The list holding the statement at `path`, and its index in that list.
pub fn parent_mut<'a>(p: &'a mut Program, path: &Path) -> (&'a mut Vec<Stmt>, usize) {
    let mut list = code_mut(p, path.code);
    let mut i = path.idx[0];
    for &next in &path.idx[1..] {
        let (l, n) = match &mut list[i] {
            Stmt::Loop { body, .. } => (body, next),
            Stmt::If { then, els, .. } => {
                if next >= then.len() {
                    let n = next - then.len();
                    (els, n)
                } else {
                    (then, next)
                }
            }
            _ => panic!("path goes through a statement without children"),
        };
        list = l;
        i = n;
    }
    (list, i)
}

/// The statement at `path`.
pub fn get_mut<'a>(p: &'a mut Program, path: &Path) -> &'a mut Stmt {
    let (list, i) = parent_mut(p, path);
    &mut list[i]
}

/// The statement at `path`.
pub fn get<'a>(p: &'a Program, path: &Path) -> &'a Stmt {
    let mut list = code(p, path.code);
    let mut i = path.idx[0];
    for &next in &path.idx[1..] {
        let (l, n) = match &list[i] {
            Stmt::Loop { body, .. } => (body, next),
            Stmt::If { then, els, .. } => {
                if next >= then.len() {
                    (els, next - then.len())
                } else {
                    (then, next)
                }
            }
            _ => panic!("path goes through a statement without children"),
        };
        list = l;
        i = n;
    }
    &list[i]
}

/// The op at `path` (which must be a `Stmt::Tc`).
pub fn op_mut<'a>(p: &'a mut Program, path: &Path) -> &'a mut Op {
    match get_mut(p, path) {
        Stmt::Tc(op) => op,
        _ => panic!("not an op"),
    }
}

/// Whether any statement of `b` (recursively, following calls into `funcs`) satisfies `pred`.
pub fn contains(p: &Program, b: &[Stmt], pred: &dyn Fn(&Stmt) -> bool) -> bool {
    fn go(p: &Program, b: &[Stmt], pred: &dyn Fn(&Stmt) -> bool, depth: u32) -> bool {
        b.iter().any(|s| {
            pred(s)
                || match s {
                    Stmt::Loop { body, .. } => go(p, body, pred, depth),
                    Stmt::If { then, els, .. } => {
                        go(p, then, pred, depth) || go(p, els, pred, depth)
                    }
                    Stmt::Call(f) if depth < 8 => p
                        .funcs
                        .get(*f as usize)
                        .is_some_and(|f| go(p, &f.body, pred, depth + 1)),
                    _ => false,
                }
        })
    }
    go(p, b, pred, 0)
}
