//! The nested `{ }` scopes of a function body, found again in the source text, for resolving
//! scoped labels (PTX ISA §4.4.1).

use super::super::parse::{Function, Pos, Stmt};

/// Where each statement of a body sits in the nested `{ }` scopes.
pub(super) struct Scopes {
    /// Scope of each statement.
    pub(super) of_stmt: Vec<usize>,
    /// Parent of each scope (scope 0 = the body; its parent is itself).
    pub(super) parent: Vec<usize>,
}

/// Byte offset of `pos` in `src`, by counting lines from the start.
pub(super) fn offset_of(src: &str, pos: Pos) -> Option<usize> {
    let mut line = 1u32;
    let mut start = 0usize;
    if pos.line > 1 {
        for (i, b) in src.bytes().enumerate() {
            if b == b'\n' {
                line += 1;
                if line == pos.line {
                    start = i + 1;
                    break;
                }
            }
        }
        if line != pos.line {
            return None;
        }
    }
    Some(start + pos.col.saturating_sub(1) as usize)
}

/// Rebuilds the scopes of `f`'s body from its text: a `{` opens a scope when the previous
/// significant character ends a statement (`;`, `{`, `}`, a label's `:`), and a vector operand
/// otherwise (`{%r1, %r2}` follows an opcode or a comma).
pub(super) fn find_scopes(f: &Function<'_>, body: &[Stmt<'_>], src: &str) -> Option<Scopes> {
    let start = offset_of(src, f.pos)?;
    let b = src.as_bytes();
    let mut i = start;
    // Find the body's opening brace.
    let mut in_comment = false;
    while i < b.len() {
        if in_comment {
            if b[i] == b'\n' {
                in_comment = false;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            in_comment = true;
        } else if b[i] == b'{' {
            break;
        } else if b[i] == b';' {
            return None; // a declaration without a body
        }
        i += 1;
    }
    if i >= b.len() {
        return None;
    }
    // Scope events: (line, col, open scope id or close).
    let mut parent = vec![0usize];
    let mut stack: Vec<Option<usize>> = vec![Some(0)]; // Some(scope) or None for a vector brace
    let mut events: Vec<(u32, u32, Option<usize>)> = Vec::new(); // None = close of current scope
    let (mut line, mut col) = (f.pos.line, f.pos.col);
    // Recompute line/col at `i` by walking from `start`.
    for &c in &b[start..i] {
        if c == b'\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    let mut prev = b'{';
    let mut k = i + 1;
    col += 1;
    while k < b.len() && !stack.is_empty() {
        let c = b[k];
        match c {
            b'\n' => {
                line += 1;
                col = 0;
            }
            b'/' if b.get(k + 1) == Some(&b'/') => {
                while k < b.len() && b[k] != b'\n' {
                    k += 1;
                }
                continue;
            }
            b'/' if b.get(k + 1) == Some(&b'*') => {
                k += 2;
                col += 2;
                while k + 1 < b.len() && !(b[k] == b'*' && b[k + 1] == b'/') {
                    if b[k] == b'\n' {
                        line += 1;
                        col = 0;
                    }
                    k += 1;
                    col += 1;
                }
                k += 2;
                col += 2;
                continue;
            }
            b'"' => {
                k += 1;
                col += 1;
                while k < b.len() && b[k] != b'"' && b[k] != b'\n' {
                    k += 1;
                    col += 1;
                }
                prev = b'"';
            }
            b'{' => {
                if matches!(prev, b';' | b'{' | b'}' | b':') {
                    let id = parent.len();
                    let cur = stack.iter().rev().find_map(|s| *s).unwrap_or(0);
                    parent.push(cur);
                    stack.push(Some(id));
                    events.push((line, col, Some(id)));
                } else {
                    stack.push(None);
                }
                prev = b'{';
            }
            b'}' => {
                if let Some(Some(_)) = stack.pop() {
                    events.push((line, col, None));
                }
                prev = b'}';
            }
            b' ' | b'\t' | b'\r' => {}
            _ => prev = c,
        }
        k += 1;
        col += 1;
    }
    // Assign statements to scopes by position.
    let mut of_stmt = Vec::with_capacity(body.len());
    let mut cur: Vec<usize> = vec![0];
    let mut e = 0;
    for s in body {
        let p = stmt_pos(s);
        while e < events.len() && (events[e].0, events[e].1) < (p.line, p.col) {
            match events[e].2 {
                Some(id) => cur.push(id),
                None => {
                    if cur.len() > 1 {
                        cur.pop();
                    }
                }
            }
            e += 1;
        }
        of_stmt.push(*cur.last().unwrap_or(&0));
    }
    Some(Scopes { of_stmt, parent })
}

pub(super) fn stmt_pos(s: &Stmt<'_>) -> Pos {
    match s {
        Stmt::Label(_, p) | Stmt::Decl(_, p) => *p,
        Stmt::Instr(i) => i.pos,
    }
}
