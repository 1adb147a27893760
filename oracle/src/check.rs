//! The static check: every catalogue row of kind *static* that the program model can express,
//! applied to every instruction of the kernel (warp code, reached or not, and every function
//! the warps call, directly or not). Each violation cites its rule and spec section. The rules
//! one instruction decides on its own are [`crate::instr`]'s, shared with `check` of real PTX.
//!
//! Rows whose value lives in a register in the printed PTX (nCols in a register, `idesc`,
//! descriptors, TMEM addresses) are dynamic there (reference §6, "Where the value is in a
//! register, the same rule is dynamic") and are judged by [`crate::expect()`] instead.

use crate::catalogue;
use crate::instr;
use crate::types::{Code, Location, Violation};
use tcgen05_ir::*;

/// A statement's location, borrowed while walking.
#[derive(Clone, Copy)]
struct Loc<'p> {
    code: Code,
    path: &'p [u16],
}

impl Loc<'_> {
    fn owned(self) -> Location {
        Location {
            code: self.code,
            path: self.path.to_vec(),
        }
    }
}

/// Collects violations with their locations.
struct Checker {
    out: Vec<Violation>,
    /// The `.cta_group` of the first instruction that has one (GEN-CTAGROUP-UNIFORM).
    cta_groups: instr::CtaGroupUniform<Location>,
    /// The target, version and declared cluster of the program.
    ctx: instr::Ctx,
    /// Scratch for [`instr::check_instr`].
    found: Vec<(RuleId, String)>,
}

impl Checker {
    fn flag(&mut self, rule: RuleId, loc: Option<Loc<'_>>, message: impl Into<String>) {
        self.out.push(Violation {
            rule,
            section: catalogue::section(rule).to_string(),
            location: loc.map(Loc::owned),
            message: message.into(),
        });
    }

    fn block(&mut self, code: Code, path: &mut Vec<u16>, stmts: &[Stmt]) {
        self.children(code, path, stmts, 0);
    }

    fn children(&mut self, code: Code, path: &mut Vec<u16>, stmts: &[Stmt], first: usize) {
        if stmts.is_empty() {
            return;
        }
        // One path entry for the children, renumbered for each (a child's own children push
        // theirs after it and pop it before the next child).
        let depth = path.len();
        path.push(0);
        for (i, s) in stmts.iter().enumerate() {
            // Children are numbered from `first` (an If's else statements follow its then).
            path[depth] = (first + i) as u16;
            self.block_one(code, path, s);
        }
        path.pop();
    }

    fn block_one(&mut self, code: Code, path: &mut Vec<u16>, s: &Stmt) {
        match s {
            Stmt::Tc(op) => {
                self.op(op, Loc { code, path });
            }
            Stmt::If { then, els, .. } => {
                self.children(code, path, then, 0);
                self.children(code, path, els, then.len());
            }
            Stmt::Loop { body, .. } => self.children(code, path, body, 0),
            _ => {}
        }
    }

    fn op(&mut self, op: &Op, loc: Loc<'_>) {
        let form = op.form();
        // GEN-CTAGROUP-UNIFORM (instr.rs).
        if let Some(msg) = self.cta_groups.see(&form, || loc.owned()) {
            self.flag(RuleId::GenCtagroupUniform, Some(loc), msg);
        }
        // Every rule one instruction decides on its own (instr.rs), target rows included.
        instr::check_instr(&form, &instr::Operands::of(op), &self.ctx, &mut self.found);
        for (rule, msg) in self.found.drain(..) {
            self.out.push(Violation {
                rule,
                section: catalogue::section(rule).to_string(),
                location: Some(loc.owned()),
                message: msg,
            });
        }
    }
}

/// Every function index reachable through `Call`s from the warps' code.
pub(crate) fn called_funcs(p: &Program) -> Vec<bool> {
    fn go(b: &[Stmt], p: &Program, seen: &mut Vec<bool>) {
        for s in b {
            match s {
                Stmt::Call(f) => {
                    let f = usize::from(*f);
                    if f < p.funcs.len() && !seen[f] {
                        seen[f] = true;
                        go(&p.funcs[f].body, p, seen);
                    }
                }
                Stmt::If { then, els, .. } => {
                    go(then, p, seen);
                    go(els, p, seen);
                }
                Stmt::Loop { body, .. } => go(body, p, seen),
                _ => {}
            }
        }
    }
    let mut seen = vec![false; p.funcs.len()];
    if p.funcs.is_empty() {
        // Nothing to call (and no walk needed to find it out).
        return seen;
    }
    for w in &p.warps {
        go(w, p, &mut seen);
    }
    seen
}

/// Every static violation of `p`, in order: warps by rank, then called functions by index.
pub fn check(p: &Program) -> Vec<Violation> {
    let mut c = Checker {
        out: Vec::new(),
        cta_groups: instr::CtaGroupUniform::default(),
        ctx: instr::Ctx::new(
            p.launch.target,
            p.launch.ptx_version,
            p.launch
                .declare_cluster
                .then_some(u32::from(p.launch.cluster_size)),
        ),
        found: Vec::new(),
    };
    let mut path = Vec::with_capacity(8);
    for (w, code) in p.warps.iter().enumerate() {
        c.block(Code::Warp(w as u8), &mut path, code);
    }
    for (i, called) in called_funcs(p).into_iter().enumerate() {
        if called {
            c.block(Code::Func(i as u8), &mut path, &p.funcs[i].body);
        }
    }
    c.out
}
