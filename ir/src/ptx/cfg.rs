//! Control flow of parsed PTX functions: basic blocks, branches, calls, barriers and mbarrier
//! operations, enough for an analysis to reason about the paths around the tcgen05
//! instructions (foundation issue, point 5).
//!
//! [`Cfg::new`] splits a [`Function`] body at labels and after every branch, `ret`, `exit` and
//! `trap`, and links the blocks with their successor edges: the taken and fall-through edges of
//! `@p bra`, the jump of `bra`, the targets of `brx.idx` (read from the `.branchtargets` table its
//! operand names), and the edge to the function's end after `ret`/`exit`. Calls do not end a
//! block; [`Cfg::calls`] lists them. [`classify`] names the role of every instruction that matters
//! to the TMEM protocol: CTA and cluster barriers, mbarrier operations, `elect.sync`, fences,
//! reads of `%tid`/`%laneid`/`%warpid`, and `ld.shared` of the slot an alloc wrote
//! ([`Cfg::alloc_slot_loads`]).
//!
//! Labels are scoped in PTX: inline-asm blocks of Triton and nvcc put `waitLoop:` in a nested
//! `{ }` scope, many times in one function. The parser flattens scopes, so `Cfg::new` takes the
//! source text, finds the scopes again, and resolves each branch target to the label of the
//! innermost enclosing scope that declares it (PTX ISA §4.4.1, "Statements" / §11 scoping of
//! labels). Without the source it falls back to the nearest declaration by statement order.

use super::parse::{Function, Instr, Operand, Pos, Stmt};
use std::collections::HashMap;

mod class;
mod scopes;

pub use class::{Class, MbarOp, classify, role_registers};
use scopes::find_scopes;

/// Index of a basic block in [`Cfg::blocks`].
pub type BlockId = usize;

/// Index of an instruction in [`Cfg::instrs`].
pub type InstrId = usize;

/// How control reaches a successor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum EdgeKind {
    /// The next block in the text (no branch, or a conditional branch not taken).
    Fallthrough,
    /// A conditional branch taken.
    Taken,
    /// An unconditional `bra`.
    Jump,
    /// One target of `brx.idx`.
    Indirect,
}

/// A successor edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Edge {
    /// The successor.
    pub to: BlockId,
    /// How control gets there.
    pub kind: EdgeKind,
}

/// How a block ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Terminator {
    /// Falls through into the next block (no control instruction at its end).
    Fallthrough,
    /// `bra` (unconditional).
    Jump,
    /// `@p bra`.
    CondBranch,
    /// `brx.idx`.
    Indirect,
    /// `ret` (unguarded).
    Return,
    /// `exit` (unguarded).
    Exit,
    /// `trap` (unguarded).
    Trap,
    /// A guarded `@p ret` / `@p exit`: the block either leaves the function or falls through.
    CondLeave,
    /// The end of the body without `ret` / `exit`.
    End,
}

/// A basic block.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Block<'a> {
    /// The labels that name its first instruction (may be empty).
    pub labels: Vec<&'a str>,
    /// Its instructions: a range of indices into [`Cfg::instrs`].
    pub instrs: std::ops::Range<InstrId>,
    /// Successors, in order (taken before fall-through).
    pub succs: Vec<Edge>,
    /// Predecessors.
    pub preds: Vec<BlockId>,
    /// How it ends.
    pub term: Terminator,
    /// Where it starts (its first label or instruction).
    pub pos: Pos,
}

impl Block<'_> {
    /// Whether control can leave the function from this block (ret, exit, trap, end of body).
    pub fn leaves(&self) -> bool {
        matches!(
            self.term,
            Terminator::Return
                | Terminator::Exit
                | Terminator::Trap
                | Terminator::CondLeave
                | Terminator::End
        )
    }
}

/// A branch whose target label could not be found, or an indirect branch without a table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unresolved {
    /// The branch instruction.
    pub instr: InstrId,
    /// The label or table name it names.
    pub target: String,
}

/// The control flow of one function.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Cfg<'a> {
    /// The function's name.
    pub name: &'a str,
    /// `.entry`.
    pub is_entry: bool,
    /// Its instructions, in order.
    pub instrs: Vec<&'a Instr<'a>>,
    /// The block of each instruction.
    pub block_of: Vec<BlockId>,
    /// Its blocks, in text order; block 0 is the entry.
    pub blocks: Vec<Block<'a>>,
    /// Branches whose target could not be resolved (their blocks get no edge for them).
    pub unresolved: Vec<Unresolved>,
}

impl<'a> Cfg<'a> {
    /// The control flow of `f`. `src` is the module text `f` was parsed from (for label scopes;
    /// `None` resolves duplicate labels to the nearest declaration). A function without a body
    /// gives an empty graph.
    pub fn new(f: &'a Function<'a>, src: Option<&str>) -> Cfg<'a> {
        let empty: &[Stmt<'a>] = &[];
        let body: &'a [Stmt<'a>] = f.body.as_deref().unwrap_or(empty);
        let scopes = src.and_then(|s| find_scopes(f, body, s));
        // Labels: name -> [(stmt index, scope)], and the instruction index each label names.
        let mut labels: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
        let mut instrs: Vec<&'a Instr<'a>> = Vec::new();
        let mut stmt_instr: Vec<usize> = Vec::with_capacity(body.len()); // next instr index at each stmt
        for (si, s) in body.iter().enumerate() {
            stmt_instr.push(instrs.len());
            match s {
                Stmt::Label(l, _) => labels
                    .entry(l)
                    .or_default()
                    .push((si, scopes.as_ref().map_or(0, |sc| sc.of_stmt[si]))),
                Stmt::Instr(i) => instrs.push(i),
                Stmt::Decl(..) => {}
            }
        }
        let n = instrs.len();
        let resolve = |name: &str, si: usize| -> Option<usize> {
            let decls = labels.get(name)?;
            if decls.len() == 1 {
                return Some(decls[0].0);
            }
            if let Some(sc) = &scopes {
                let mut s = sc.of_stmt[si];
                loop {
                    if let Some(d) = decls.iter().find(|d| d.1 == s) {
                        return Some(d.0);
                    }
                    if s == 0 {
                        break;
                    }
                    s = sc.parent[s];
                }
            }
            decls.iter().min_by_key(|d| d.0.abs_diff(si)).map(|d| d.0)
        };
        // Branch targets per instruction (stmt index of the label).
        let mut targets: Vec<Vec<(InstrId, EdgeKind)>> = vec![Vec::new(); n];
        let mut unresolved = Vec::new();
        let mut leaders = vec![false; n + 1];
        if n > 0 {
            leaders[0] = true;
        }
        let mut label_at: Vec<Vec<&'a str>> = vec![Vec::new(); n + 1];
        for (si, s) in body.iter().enumerate() {
            if let Stmt::Label(l, _) = s {
                leaders[stmt_instr[si]] = true;
                label_at[stmt_instr[si]].push(l);
            }
        }
        for (si, s) in body.iter().enumerate() {
            let Stmt::Instr(ins) = s else { continue };
            let ii = stmt_instr[si];
            match classify(ins) {
                Class::Branch { .. } => {
                    leaders[ii + 1] = true;
                    let kind = if ins.guard.is_some() {
                        EdgeKind::Taken
                    } else {
                        EdgeKind::Jump
                    };
                    match ins.operands.first() {
                        Some(Operand::Sym(l)) => match resolve(l, si) {
                            Some(t) => targets[ii].push((stmt_instr[t], kind)),
                            None => unresolved.push(Unresolved {
                                instr: ii,
                                target: l.to_string(),
                            }),
                        },
                        _ => unresolved.push(Unresolved {
                            instr: ii,
                            target: ins
                                .operands
                                .first()
                                .map(|o| o.to_string())
                                .unwrap_or_default(),
                        }),
                    }
                }
                Class::BranchIndirect => {
                    leaders[ii + 1] = true;
                    let table = ins.operands.iter().find_map(|o| {
                        if let Operand::Sym(s) = o {
                            Some(*s)
                        } else {
                            None
                        }
                    });
                    let entries = table.and_then(|t| {
                        let ts = resolve(t, si)?;
                        body[ts..].iter().skip(1).find_map(|s| match s {
                            Stmt::Decl(w, _) if w.first() == Some(&".branchtargets") => Some(
                                w[1..]
                                    .iter()
                                    .filter(|x| **x != ",")
                                    .copied()
                                    .collect::<Vec<_>>(),
                            ),
                            _ => None,
                        })
                    });
                    match entries {
                        Some(list) => {
                            for l in list {
                                match resolve(l, si) {
                                    Some(t) => {
                                        targets[ii].push((stmt_instr[t], EdgeKind::Indirect))
                                    }
                                    None => unresolved.push(Unresolved {
                                        instr: ii,
                                        target: l.to_string(),
                                    }),
                                }
                            }
                        }
                        None => unresolved.push(Unresolved {
                            instr: ii,
                            target: table.unwrap_or("?").to_string(),
                        }),
                    }
                }
                Class::Ret | Class::Exit | Class::Trap => leaders[ii + 1] = true,
                _ => {}
            }
        }
        for t in targets.iter().flatten() {
            leaders[t.0] = true;
        }
        // Blocks.
        let mut blocks: Vec<Block<'a>> = Vec::new();
        let mut block_of = vec![0; n];
        let mut start_block = vec![usize::MAX; n + 1];
        let mut i = 0;
        while i < n || (i == n && blocks.is_empty()) {
            let mut j = i + 1;
            while j < n && !leaders[j] {
                j += 1;
            }
            let j = j.min(n);
            let pos = instrs.get(i).map_or(f.pos, |x| x.pos);
            start_block[i] = blocks.len();
            for b in block_of.iter_mut().take(j).skip(i) {
                *b = blocks.len();
            }
            blocks.push(Block {
                labels: label_at[i].clone(),
                instrs: i..j,
                succs: vec![],
                preds: vec![],
                term: Terminator::End,
                pos,
            });
            if j <= i {
                break;
            }
            i = j;
        }
        // A label after the last instruction names an empty final block (control reaching it
        // leaves the function).
        if n > 0 && !label_at[n].is_empty() {
            start_block[n] = blocks.len();
            blocks.push(Block {
                labels: label_at[n].clone(),
                instrs: n..n,
                succs: vec![],
                preds: vec![],
                term: Terminator::End,
                pos: instrs[n - 1].pos,
            });
        }
        let nb = blocks.len();
        #[expect(
            clippy::needless_range_loop,
            reason = "b names both the block and its successor b + 1"
        )]
        for b in 0..nb {
            let r = blocks[b].instrs.clone();
            let next = if b + 1 < nb { Some(b + 1) } else { None };
            let last = if r.is_empty() { None } else { Some(r.end - 1) };
            let mut succs = Vec::new();
            let term = match last.map(|l| (l, classify(instrs[l]))) {
                Some((l, Class::Branch { .. })) => {
                    for &(t, k) in &targets[l] {
                        succs.push(Edge {
                            to: start_block[t],
                            kind: k,
                        });
                    }
                    if instrs[l].guard.is_some() {
                        if let Some(nx) = next {
                            succs.push(Edge {
                                to: nx,
                                kind: EdgeKind::Fallthrough,
                            });
                        }
                        Terminator::CondBranch
                    } else {
                        Terminator::Jump
                    }
                }
                Some((l, Class::BranchIndirect)) => {
                    for &(t, k) in &targets[l] {
                        succs.push(Edge {
                            to: start_block[t],
                            kind: k,
                        });
                    }
                    Terminator::Indirect
                }
                Some((l, c @ (Class::Ret | Class::Exit | Class::Trap))) => {
                    if instrs[l].guard.is_some() {
                        if let Some(nx) = next {
                            succs.push(Edge {
                                to: nx,
                                kind: EdgeKind::Fallthrough,
                            });
                        }
                        Terminator::CondLeave
                    } else {
                        match c {
                            Class::Ret => Terminator::Return,
                            Class::Exit => Terminator::Exit,
                            _ => Terminator::Trap,
                        }
                    }
                }
                _ => match next {
                    Some(nx) => {
                        succs.push(Edge {
                            to: nx,
                            kind: EdgeKind::Fallthrough,
                        });
                        Terminator::Fallthrough
                    }
                    None => Terminator::End,
                },
            };
            blocks[b].term = term;
            blocks[b].succs = succs;
        }
        for b in 0..nb {
            let succs = blocks[b].succs.clone();
            for e in succs {
                if !blocks[e.to].preds.contains(&b) {
                    blocks[e.to].preds.push(b);
                }
            }
        }
        Cfg {
            name: f.name,
            is_entry: f.is_entry,
            instrs,
            block_of,
            blocks,
            unresolved,
        }
    }

    /// The class of instruction `i`.
    pub fn class(&self, i: InstrId) -> Class<'a> {
        classify(self.instrs[i])
    }

    /// The direct and indirect calls, as (instruction, callee name when direct).
    pub fn calls(&self) -> Vec<(InstrId, Option<&'a str>)> {
        (0..self.instrs.len())
            .filter_map(|i| match self.class(i) {
                Class::Call { callee } => Some((i, callee)),
                _ => None,
            })
            .collect()
    }

    /// A short name of block `b` for paths: its first label that is not a debug-info label
    /// (`$L__tmp*`, `$L__func*`), else its first label, else `B<n>@<line>`.
    pub fn block_name(&self, b: BlockId) -> String {
        let bl = &self.blocks[b];
        match bl
            .labels
            .iter()
            .find(|l| !l.starts_with("$L__tmp") && !l.starts_with("$L__func"))
            .or(bl.labels.first())
        {
            Some(l) => (*l).to_string(),
            None => format!("B{b}@{}", bl.pos.line),
        }
    }

    /// The `ld.shared` instructions that read the shared-memory slot a `tcgen05.alloc` of this
    /// function writes, matched by address: the same register, or the same symbol (+ offset)
    /// after following single `mov`/`cvta` definitions of registers to symbols.
    pub fn alloc_slot_loads(&self) -> Vec<InstrId> {
        // Registers defined exactly once as `mov` of a symbol (or of another such register).
        let mut defs: HashMap<&str, Option<&str>> = HashMap::new();
        for i in &self.instrs {
            if let Some(Operand::Reg(d)) = i.operands.first() {
                let src = match (i.opcode.split('.').next(), i.operands.get(1)) {
                    (Some("mov" | "cvta"), Some(Operand::Sym(s))) => Some(*s),
                    _ => None,
                };
                defs.entry(d).and_modify(|e| *e = None).or_insert(src);
            }
        }
        let norm = |o: &Operand<'a>| -> Option<(&'a str, i64)> {
            match o {
                Operand::Addr { base, offset } => {
                    Some((defs.get(base).copied().flatten().unwrap_or(base), *offset))
                }
                _ => None,
            }
        };
        let slots: Vec<(&str, i64)> = self
            .instrs
            .iter()
            .filter(|i| matches!(i.form, Some(crate::Form::Alloc(_))))
            .filter_map(|i| i.operands.first().and_then(norm))
            .collect();
        (0..self.instrs.len())
            .filter(|&i| {
                self.class(i) == Class::LdShared
                    || (self.instrs[i].opcode.starts_with("ld.")
                        && !self.instrs[i].opcode.contains("param"))
            })
            .filter(|&i| {
                self.instrs[i]
                    .operands
                    .get(1)
                    .and_then(norm)
                    .is_some_and(|a| slots.contains(&a))
            })
            .collect()
    }

    /// Reverse post-order of the blocks reachable from the entry.
    pub fn reverse_postorder(&self) -> Vec<BlockId> {
        let nb = self.blocks.len();
        let mut seen = vec![false; nb];
        let mut order = Vec::with_capacity(nb);
        let mut stack: Vec<(BlockId, usize)> = Vec::new();
        if nb > 0 {
            seen[0] = true;
            stack.push((0, 0));
        }
        while let Some((b, k)) = stack.pop() {
            if k < self.blocks[b].succs.len() {
                stack.push((b, k + 1));
                let s = self.blocks[b].succs[k].to;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                order.push(b);
            }
        }
        order.reverse();
        order
    }

    /// The immediate post-dominator of every block (`None` for blocks whose only post-dominator
    /// is the function's exit, and for blocks that cannot reach an exit). Cooper, Harvey and
    /// Kennedy's iterative algorithm on the reversed graph, with a virtual exit after every
    /// block that leaves the function.
    pub fn post_dominators(&self) -> Vec<Option<BlockId>> {
        let nb = self.blocks.len();
        let exit = nb; // virtual
        // Reverse graph: preds in reverse = succs in forward.
        let rsuccs = |b: usize| -> Vec<usize> {
            if b == exit {
                (0..nb).filter(|&x| self.blocks[x].leaves()).collect()
            } else {
                self.blocks[b].preds.clone()
            }
        };
        let rpreds = |b: usize| -> Vec<usize> {
            let mut v: Vec<usize> = self.blocks[b].succs.iter().map(|e| e.to).collect();
            if self.blocks[b].leaves() {
                v.push(exit);
            }
            v
        };
        // Post-order of the reverse graph from the virtual exit.
        let mut seen = vec![false; nb + 1];
        let mut po = Vec::new();
        let mut stack = vec![(exit, 0usize)];
        seen[exit] = true;
        while let Some((b, k)) = stack.pop() {
            let s = rsuccs(b);
            if k < s.len() {
                stack.push((b, k + 1));
                if !seen[s[k]] {
                    seen[s[k]] = true;
                    stack.push((s[k], 0));
                }
            } else {
                po.push(b);
            }
        }
        let mut num = vec![usize::MAX; nb + 1];
        for (i, &b) in po.iter().enumerate() {
            num[b] = i;
        }
        let mut idom = vec![usize::MAX; nb + 1];
        idom[exit] = exit;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in po.iter().rev() {
                if b == exit {
                    continue;
                }
                let mut new = usize::MAX;
                for p in rpreds(b) {
                    if idom[p] == usize::MAX {
                        continue;
                    }
                    new = if new == usize::MAX {
                        p
                    } else {
                        let (mut x, mut y) = (p, new);
                        while x != y {
                            while num[x] < num[y] {
                                x = idom[x];
                            }
                            while num[y] < num[x] {
                                y = idom[y];
                            }
                        }
                        x
                    };
                }
                if new != usize::MAX && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        (0..nb)
            .map(|b| {
                if idom[b] == usize::MAX || idom[b] == exit {
                    None
                } else {
                    Some(idom[b])
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::parse_module;

    fn corpus(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus/realworld")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn block_with_line(c: &Cfg<'_>, line: u32) -> BlockId {
        let i = c
            .instrs
            .iter()
            .position(|i| i.pos.line == line)
            .unwrap_or_else(|| panic!("no instruction on line {line}"));
        c.block_of[i]
    }

    #[test]
    fn splits_at_labels_and_branches_with_taken_and_fallthrough_edges() {
        let src = ".version 8.6\n.target sm_100a\n.entry k()\n{\n.reg .pred %p;\n\
            setp.eq.u32 %p, 1, 1;\n\
            @%p bra L1;\n\
            add.s32 %r1, 1, 2;\n\
            L1:\n\
            bra L2;\n\
            L3:\n\
            ret;\n\
            L2:\n\
            @%p exit;\n\
            bra L3;\n}\n";
        let m = parse_module(src, "t").unwrap();
        let c = Cfg::new(&m.functions[0], Some(src));
        // Blocks: [setp, @p bra] [add] [L1: bra L2] [L3: ret] [L2: @p exit] [bra L3]
        assert_eq!(c.blocks.len(), 6);
        assert_eq!(
            c.blocks[0].succs,
            vec![
                Edge {
                    to: 2,
                    kind: EdgeKind::Taken
                },
                Edge {
                    to: 1,
                    kind: EdgeKind::Fallthrough
                }
            ]
        );
        assert_eq!(
            c.blocks[1].succs,
            vec![Edge {
                to: 2,
                kind: EdgeKind::Fallthrough
            }]
        );
        assert_eq!(
            c.blocks[2].succs,
            vec![Edge {
                to: 4,
                kind: EdgeKind::Jump
            }]
        );
        assert_eq!(c.blocks[3].term, Terminator::Return);
        assert!(c.blocks[3].succs.is_empty());
        assert_eq!(c.blocks[4].term, Terminator::CondLeave);
        assert_eq!(
            c.blocks[4].succs,
            vec![Edge {
                to: 5,
                kind: EdgeKind::Fallthrough
            }]
        );
        assert_eq!(
            c.blocks[5].succs,
            vec![Edge {
                to: 3,
                kind: EdgeKind::Jump
            }]
        );
        assert_eq!(c.blocks[2].preds, vec![0, 1]);
        assert_eq!(c.block_name(2), "L1");
        // Post-dominators: block 0's paths all pass through L1 (block 2).
        let pd = c.post_dominators();
        assert_eq!(pd[0], Some(2));
        assert_eq!(pd[1], Some(2));
    }

    #[test]
    fn a_label_at_the_end_of_the_body_is_an_empty_exit_block() {
        let src = ".version 8.6\n.entry k()\n{\n@%p bra END;\nadd.s32 %r1, 1, 1;\nEND:\n}\n";
        let m = parse_module(src, "t").unwrap();
        let c = Cfg::new(&m.functions[0], Some(src));
        assert_eq!(c.blocks.len(), 3);
        assert_eq!(
            c.blocks[0].succs[0],
            Edge {
                to: 2,
                kind: EdgeKind::Taken
            }
        );
        assert_eq!(
            c.blocks[1].succs,
            vec![Edge {
                to: 2,
                kind: EdgeKind::Fallthrough
            }]
        );
        assert!(c.blocks[2].instrs.is_empty() && c.blocks[2].leaves());
    }

    #[test]
    fn scoped_inline_asm_labels_resolve_to_their_own_scope() {
        // Two inline-asm blocks declare the same labels; the second's forward branch must not
        // go to the first's `skip` (the nearest declaration by distance).
        let src = ".version 8.6\n.target sm_100a\n.entry k()\n{\n.reg .pred %p;\n\
            {\n@%p bra.uni skip;\nwaitLoop:\nmbarrier.try_wait.parity.shared::cta.b64 %p, [%r1], 0;\n@!%p bra.uni waitLoop;\nskip:\n}\n\
            {\n@%p bra.uni skip;\nadd.s32 %r2, 1, 1;\nadd.s32 %r2, 1, 1;\nadd.s32 %r2, 1, 1;\nadd.s32 %r2, 1, 1;\nwaitLoop:\nmbarrier.try_wait.parity.shared::cta.b64 %p, [%r1], 0;\n@!%p bra.uni waitLoop;\nskip:\n}\n\
            ret;\n}\n";
        let m = parse_module(src, "t").unwrap();
        let c = Cfg::new(&m.functions[0], Some(src));
        let first_bra = block_with_line(&c, 7);
        let second_bra = block_with_line(&c, 14);
        let second_wait = block_with_line(&c, 20);
        let last = block_with_line(&c, 24);
        // The second scope's `@%p bra.uni skip` goes to the block of `ret` (after the second
        // scope's skip), not to the first scope's skip (the block of line 14).
        assert_eq!(
            c.blocks[second_bra].succs[0],
            Edge {
                to: last,
                kind: EdgeKind::Taken
            }
        );
        assert_eq!(c.blocks[first_bra].succs[0].to, second_bra);
        // The back edge of the second wait loop stays in the second scope.
        assert_eq!(
            c.blocks[second_wait].succs[0],
            Edge {
                to: second_wait,
                kind: EdgeKind::Taken
            }
        );
        assert!(c.unresolved.is_empty());
    }

    #[test]
    fn brx_idx_reads_the_branchtargets_table_in_the_gluon_corpus() {
        let src = corpus("gluon_matmul_ws_persistent.ptx");
        let m = parse_module(&src, "g").unwrap();
        let c = Cfg::new(&m.functions[0], Some(&src));
        assert!(c.unresolved.is_empty(), "{:?}", c.unresolved);
        let b = block_with_line(&c, 945);
        assert_eq!(c.blocks[b].term, Terminator::Indirect);
        // JTI0_0 lists $L__BB0_6, $L__BB0_13, $L__BB0_24, $L__BB0_4 (lines 34-37 of the file).
        let names: Vec<String> = c.blocks[b]
            .succs
            .iter()
            .map(|e| c.block_name(e.to))
            .collect();
        assert_eq!(
            names,
            ["$L__BB0_6", "$L__BB0_13", "$L__BB0_24", "$L__BB0_4"]
        );
        assert!(
            c.blocks[b]
                .succs
                .iter()
                .all(|e| e.kind == EdgeKind::Indirect)
        );
    }

    #[test]
    fn every_corpus_function_resolves_its_branches_and_classifies_barriers() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/realworld");
        let mut files = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().and_then(|x| x.to_str()) != Some("ptx") {
                continue;
            }
            files += 1;
            let src = std::fs::read_to_string(&p).unwrap();
            let m = parse_module(&src, "f").unwrap();
            for f in m.functions.iter().filter(|f| f.body.is_some()) {
                let c = Cfg::new(f, Some(&src));
                assert!(
                    c.unresolved.is_empty(),
                    "{}: {:?}",
                    p.display(),
                    c.unresolved
                );
                // Every branch's block has at least one successor; every instruction is in the
                // block whose range holds it.
                for (i, &b) in c.block_of.iter().enumerate() {
                    assert!(c.blocks[b].instrs.contains(&i));
                }
                // An exit is reachable from the entry.
                let rpo = c.reverse_postorder();
                assert!(rpo.iter().any(|&b| c.blocks[b].leaves()), "{}", p.display());
                // Counted independently by text: `bar.sync`/`barrier.sync` lines are CTA barriers.
                let text_bars = src
                    .lines()
                    .filter(|l| {
                        let t = l.trim_start();
                        t.starts_with("bar.sync") || t.starts_with("barrier.sync")
                    })
                    .count();
                let class_bars = (0..c.instrs.len())
                    .filter(|&i| matches!(c.class(i), Class::BarCta { waits: true, .. }))
                    .count();
                if m.functions.iter().filter(|f| f.body.is_some()).count() == 1 {
                    assert_eq!(class_bars, text_bars, "{}", p.display());
                }
            }
        }
        assert!(files >= 20);
    }

    #[test]
    fn triton_alloc_slot_load_and_role_registers_are_found() {
        let src = corpus("triton_matmul_f16_tma.ptx");
        let m = parse_module(&src, "t").unwrap();
        let c = Cfg::new(&m.functions[0], Some(&src));
        // Line 40: alloc [%r9] with %r9 = global_smem (line 38); line 44: ld.shared [global_smem].
        let loads: Vec<u32> = c
            .alloc_slot_loads()
            .iter()
            .map(|&i| c.instrs[i].pos.line)
            .collect();
        assert_eq!(loads, [44]);
        let tid = c.instrs.iter().find(|i| i.pos.line == 36).unwrap();
        assert_eq!(role_registers(tid), ["%tid.x"]);
        let elect = c.instrs.iter().find(|i| i.pos.line == 351).unwrap();
        assert_eq!(classify(elect), Class::Elect);
        let tw = c.instrs.iter().find(|i| i.pos.line == 454).unwrap();
        assert_eq!(classify(tw), Class::Mbarrier(MbarOp::TryWait));
        let inv = c.instrs.iter().find(|i| i.pos.line == 729).unwrap();
        assert_eq!(classify(inv), Class::Mbarrier(MbarOp::Inval));
        let wl = c.instrs.iter().find(|i| i.pos.line == 455).unwrap();
        assert_eq!(classify(wl), Class::Branch { uni: true });
    }

    #[test]
    fn cluster_barriers_and_named_partial_barriers_are_classified() {
        let src = ".version 8.6\n.target sm_100a\n.entry k()\n{\n\
            barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;\nbar.sync 0, 128;\n\
            bar.arrive 1, 64;\nbarrier.sync 0;\nbar.warp.sync -1;\nfence.proxy.async.shared::cta;\nmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16;\nret;\n}\n";
        let m = parse_module(src, "t").unwrap();
        let c = Cfg::new(&m.functions[0], None);
        let cl: Vec<Class<'_>> = (0..c.instrs.len()).map(|i| c.class(i)).collect();
        assert_eq!(
            cl,
            [
                Class::ClusterArrive { relaxed: true },
                Class::ClusterWait,
                Class::BarCta {
                    waits: true,
                    aligned: true,
                    partial: true
                },
                Class::BarCta {
                    waits: false,
                    aligned: true,
                    partial: true
                },
                Class::BarCta {
                    waits: true,
                    aligned: false,
                    partial: false
                },
                Class::BarWarp,
                Class::FenceProxyAsync,
                Class::Mbarrier(MbarOp::Arrive),
                Class::Ret,
            ]
        );
    }
}
