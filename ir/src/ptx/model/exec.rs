//! The interpreter of the general lifter: runs the PTX of one warp of one CTA over the value
//! domain of [`super::value`] and writes the [`Stmt`]s of the program model (reference §2-§4)
//! that the warp executes.
//!
//! Uniform control flow (every active lane agrees) is followed, so loops with constant trip
//! counts unroll. A branch on which the lanes disagree must be a forward, structured region
//! (`@p bra L; ...; L:` or `@p bra E; ...; bra J; E: ...; J:`) whose lane set is a condition of
//! the model ([`Cond::LaneLt`], [`Cond::LaneEq`], [`Cond::ElectOne`]); it becomes a
//! [`Stmt::If`]. Everything else is an [`Unliftable`] with the instruction and the reason.

use super::value::{V, arith, compare, splat, width};
use super::{LdInfo, Roles, Shape, StInfo, Unliftable};
use crate::program::{Cond, Stmt};
use crate::ptx::cfg::{Class, MbarOp, classify};
use crate::ptx::parse::{Function, Instr, Module, Operand, Stmt as PStmt};
use crate::qual::Scope;
use std::collections::HashMap;

/// Instructions one warp may execute before the lifter gives up (an unbounded loop).
pub const MAX_STEPS: u64 = 400_000;
/// Nesting of inlined calls.
const MAX_DEPTH: u32 = 16;

/// A function body, flattened, with its labels.
pub struct Code<'a, 'm> {
    pub(super) body: Vec<&'m PStmt<'a>>,
    labels: HashMap<&'a str, usize>,
    /// `.branchtargets` tables by their label (the operand of `brx.idx`).
    tables: HashMap<&'a str, Vec<&'a str>>,
    is_entry: bool,
}

impl<'a, 'm> Code<'a, 'm> {
    /// The body of `f`.
    pub fn of(f: &'m Function<'a>) -> Self {
        let body: Vec<&'m PStmt<'a>> = f
            .body
            .iter()
            .flatten()
            .filter(|s| !matches!(s, PStmt::Decl(..)))
            .collect();
        let labels = body
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                PStmt::Label(l, _) => Some((*l, i)),
                _ => None,
            })
            .collect();
        let all: Vec<&PStmt<'a>> = f.body.iter().flatten().collect();
        let tables = all
            .windows(2)
            .filter_map(|w| match (w[0], w[1]) {
                (PStmt::Label(l, _), PStmt::Decl(words, _))
                    if words.first() == Some(&".branchtargets") =>
                {
                    let targets = words[1..]
                        .iter()
                        .map(|t| t.trim_end_matches([',', ';']))
                        .filter(|t| !t.is_empty())
                        .collect();
                    Some((*l, targets))
                }
                _ => None,
            })
            .collect();
        Code {
            body,
            labels,
            tables,
            is_entry: f.is_entry,
        }
    }
}

/// Registers of one frame.
pub type Env<'a> = HashMap<&'a str, V<'a>>;

/// The state of one warp's run.
pub struct Warp<'a, 'm, 'r> {
    pub(super) module: &'m Module<'a>,
    pub(super) roles: &'r mut Roles<'a>,
    pub(super) shape: Shape,
    /// Cluster index and rank in the cluster of the CTA.
    pub(super) cluster: u16,
    pub(super) rank: u8,
    pub(super) warp: u8,
    pub(super) steps: u64,
    pub(super) depth: u32,
    pub(super) lds: Vec<LdInfo>,
    pub(super) sts: Vec<StInfo>,
    pub(super) callees: HashMap<&'a str, Code<'a, 'm>>,
}

/// Which lanes a guard selects; `elect`: `Some(true)` when the set is `elect.sync`'s lane,
/// `Some(false)` when it is every active lane but that one.
#[derive(Clone, Copy)]
struct Sel {
    mask: u32,
    elect: Option<bool>,
}

pub(super) fn fail(ins: &Instr<'_>, why: impl Into<String>) -> Unliftable {
    Unliftable {
        line: ins.pos.line,
        col: ins.pos.col,
        instr: ins.opcode.to_string(),
        why: why.into(),
    }
}

/// The condition of the model that holds, among the `active` lanes, exactly in `mask`.
fn cond_for(mask: u32, active: u32, elect: bool) -> Option<Cond> {
    if elect {
        return Some(Cond::ElectOne);
    }
    (0..=32u8)
        .map(Cond::LaneLt)
        .chain((0..32u8).map(Cond::LaneEq))
        .find(|c| {
            let m = match *c {
                Cond::LaneLt(n) if n >= 32 => u32::MAX,
                Cond::LaneLt(n) => (1u32 << n) - 1,
                Cond::LaneEq(n) => 1u32 << n,
                _ => 0,
            };
            m & active == mask
        })
}

fn lowest(active: u32) -> u32 {
    active & active.wrapping_neg()
}

impl<'a, 'm, 'r> Warp<'a, 'm, 'r> {
    fn special(&self, r: &str) -> Option<V<'a>> {
        let s = &self.shape;
        let cta = u64::from(self.cluster) * u64::from(s.cluster_size) + u64::from(self.rank);
        let lanes = |f: &dyn Fn(u64) -> u64| V::Num(Box::new(std::array::from_fn(|l| f(l as u64))));
        let w = u64::from(self.warp);
        Some(match r {
            "%tid.x" => lanes(&|l| 32 * w + l),
            "%tid.y" | "%tid.z" | "%ctaid.y" | "%ctaid.z" | "%clusterid.y" | "%clusterid.z"
            | "%cluster_ctaid.y" | "%cluster_ctaid.z" => V::num(0),
            "%ntid.x" => V::num(32 * u64::from(s.warps_per_cta)),
            "%ntid.y" | "%ntid.z" | "%nctaid.y" | "%nctaid.z" | "%cluster_nctaid.y"
            | "%cluster_nctaid.z" | "%nclusterid.y" | "%nclusterid.z" => V::num(1),
            "%laneid" => lanes(&|l| l),
            "%ctaid.x" => V::num(cta),
            "%nctaid.x" => V::num(u64::from(s.clusters) * u64::from(s.cluster_size)),
            "%cluster_ctarank" | "%cluster_ctaid.x" => V::num(u64::from(self.rank)),
            "%cluster_nctarank" | "%cluster_nctaid.x" => V::num(u64::from(s.cluster_size)),
            "%clusterid.x" => V::num(u64::from(self.cluster)),
            "%nclusterid.x" => V::num(u64::from(s.clusters)),
            "%lanemask_eq" => lanes(&|l| 1 << l),
            "%lanemask_lt" => lanes(&|l| (1 << l) - 1),
            "%lanemask_le" => lanes(&|l| (2 << l) - 1),
            "%lanemask_gt" => lanes(&|l| !((2u64 << l) - 1) & 0xFFFF_FFFF),
            "%lanemask_ge" => lanes(&|l| !((1u64 << l) - 1) & 0xFFFF_FFFF),
            _ => return None,
        })
    }

    /// The value of an operand.
    pub(super) fn get(&self, env: &Env<'a>, o: &Operand<'a>, line: u32) -> V<'a> {
        match o {
            Operand::Imm(v) => V::num(*v as u64),
            Operand::Reg(r) => env
                .get(r)
                .cloned()
                .or_else(|| self.special(r))
                .unwrap_or(V::Unknown(line)),
            // A register whose name has no `%` (`.reg .pred p;` in a `{ }` scope of inline
            // asm) parses as a name: a value set for it is the register's.
            Operand::Sym(s) => env.get(s).cloned().unwrap_or(V::Addr(s, 0)),
            Operand::Not(x) => match self.get(env, x, line) {
                V::Num(l) => V::Num(Box::new(std::array::from_fn(|i| u64::from(l[i] == 0)))),
                V::Elect(b) => V::Elect(!b),
                _ => V::Unknown(line),
            },
            Operand::Vec(v) if v.len() == 2 => {
                match (self.get(env, &v[0], line), self.get(env, &v[1], line)) {
                    (V::Num(lo), V::Num(hi)) => V::Num(Box::new(std::array::from_fn(|i| {
                        (lo[i] & 0xFFFF_FFFF) | hi[i] << 32
                    }))),
                    (V::DescStart(s, o), V::Num(hi)) if hi.iter().all(|&x| x == hi[0]) => {
                        V::Desc(s, o, hi[0] << 32)
                    }
                    (V::Desc(s, o, f), V::Num(hi)) if hi.iter().all(|&x| x == hi[0]) => {
                        V::Desc(s, o, (f & 0xFFFF_FFFF) | hi[0] << 32)
                    }
                    _ => V::Unknown(line),
                }
            }
            _ => V::Unknown(line),
        }
    }

    /// The address an `[...]` operand names: a shared variable plus offset, a remote
    /// (mapa) address, or a register's value.
    pub(super) fn addr(&self, env: &Env<'a>, o: &Operand<'a>, line: u32) -> V<'a> {
        match o {
            Operand::Addr { base, offset } if base.starts_with('%') => {
                add_const(self.get(env, &Operand::Reg(base), line), *offset, line)
            }
            Operand::Addr { base, offset } if !base.is_empty() => V::Addr(base, *offset),
            Operand::Addr { offset, .. } => V::num(*offset as u64),
            other => self.get(env, other, line),
        }
    }

    fn guard(&self, env: &Env<'a>, ins: &Instr<'a>, active: u32) -> Result<Sel, Unliftable> {
        let Some(g) = ins.guard else {
            return Ok(Sel {
                mask: active,
                elect: None,
            });
        };
        match self.get(env, &Operand::Reg(g.pred), ins.pos.line) {
            V::Num(l) => {
                let mut m = 0u32;
                for (i, v) in l.iter().enumerate() {
                    if (*v != 0) != g.negated {
                        m |= 1 << i;
                    }
                }
                Ok(Sel {
                    mask: m & active,
                    elect: None,
                })
            }
            V::Elect(b) => {
                let elected = b != g.negated;
                Ok(Sel {
                    mask: if elected {
                        lowest(active)
                    } else {
                        active & !lowest(active)
                    },
                    elect: (active.count_ones() > 1).then_some(elected),
                })
            }
            V::Unknown(at) => Err(fail(
                ins,
                format!(
                    "guard {} depends on a value the lifter does not know (from line {at}: a load from memory or a kernel parameter)",
                    g.pred
                ),
            )),
            other => Err(fail(ins, format!("guard {} holds {other:?}", g.pred))),
        }
    }

    /// Runs `code` from `start` until control reaches `end` (or every lane has left), with
    /// the `active` lanes, appending the statements to `out`. `region`: inside a lane-divergent
    /// region (a branch out of it cannot be expressed). Returns the lanes still active.
    #[allow(
        clippy::too_many_arguments,
        reason = "the region (start, end, lanes, nesting) is the recursion's state"
    )]
    pub(super) fn run(
        &mut self,
        code: &Code<'a, 'm>,
        env: &mut Env<'a>,
        start: usize,
        end: usize,
        mut active: u32,
        region: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<u32, Unliftable> {
        let mut ip = start;
        while ip < end && active != 0 {
            let PStmt::Instr(ins) = code.body[ip] else {
                ip += 1;
                continue;
            };
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return Err(fail(
                    ins,
                    format!(
                        "warp {} ran past {MAX_STEPS} instructions: a loop without a constant trip count",
                        self.warp
                    ),
                ));
            }
            let sel = self.guard(env, ins, active)?;
            match classify(ins) {
                Class::Branch { .. } => {
                    let Some(Operand::Sym(l)) = ins.operands.first() else {
                        return Err(fail(ins, "branch without a label"));
                    };
                    let t = *code
                        .labels
                        .get(l)
                        .ok_or_else(|| fail(ins, format!("label {l} not found")))?;
                    if sel.mask == 0 {
                        ip += 1;
                    } else if sel.mask == active {
                        if region && (t < start || t > end) {
                            return Err(fail(
                                ins,
                                format!("branch to {l} leaves a lane-divergent region"),
                            ));
                        }
                        if t == end {
                            return Ok(active);
                        }
                        ip = t;
                    } else {
                        let (join, surv) =
                            self.divergent(code, env, ins, ip, t, end, active, sel, out)?;
                        if region && join > end {
                            return Err(fail(
                                ins,
                                "a lane-divergent region leaves its enclosing one",
                            ));
                        }
                        active = surv;
                        ip = join;
                    }
                    continue;
                }
                // `brx.idx` (the PTX ISA's) whose index every active lane agrees on: the branch to
                // that entry of its `.branchtargets` table (a compiler's jump table on a
                // warp number); any other index is not followed.
                Class::BranchIndirect => {
                    if sel.mask == 0 {
                        ip += 1;
                        continue;
                    }
                    let idx = ins
                        .operands
                        .first()
                        .map(|o| self.get(env, o, ins.pos.line))
                        .and_then(|v| v.uniform(active))
                        .filter(|_| sel.mask == active);
                    let table = match ins.operands.get(1) {
                        Some(Operand::Sym(t)) => code.tables.get(t),
                        _ => None,
                    };
                    let (Some(i), Some(table)) = (idx, table) else {
                        return Err(fail(
                            ins,
                            "indirect branch (brx.idx) on an index the lanes do not agree on or the lifter does not know",
                        ));
                    };
                    let l = table
                        .get(i as usize)
                        .ok_or_else(|| fail(ins, format!("brx.idx index {i} outside its table")))?;
                    let t = *code
                        .labels
                        .get(l)
                        .ok_or_else(|| fail(ins, format!("label {l} not found")))?;
                    if region && (t < start || t > end) {
                        return Err(fail(
                            ins,
                            format!("branch to {l} leaves a lane-divergent region"),
                        ));
                    }
                    if t == end {
                        return Ok(active);
                    }
                    ip = t;
                    continue;
                }
                Class::Ret if !code.is_entry => {
                    if sel.mask != active || region {
                        return Err(fail(
                            ins,
                            "return from a lane-divergent part of a called function",
                        ));
                    }
                    return Ok(active);
                }
                Class::Ret | Class::Exit => {
                    if sel.mask == active {
                        if region || !code.is_entry {
                            out.push(Stmt::Exit);
                        }
                        return Ok(0);
                    }
                    let c =
                        cond_for(sel.mask, active, sel.elect == Some(true)).ok_or_else(|| {
                            fail(
                                ins,
                                "exit of a lane set that is not a condition of the model",
                            )
                        })?;
                    out.push(Stmt::If {
                        cond: c,
                        then: vec![Stmt::Exit],
                        els: vec![],
                    });
                    active &= !sel.mask;
                    ip += 1;
                    continue;
                }
                _ => {}
            }
            if sel.mask == 0 {
                ip += 1;
                continue;
            }
            if sel.mask == active {
                self.instr(code, env, ins, active, out)?;
            } else {
                // A lane-divergent guard on a straight-line instruction: its statements go under
                // an `If`; a register it writes keeps its old value in the other lanes.
                let dst = match ins.operands.first() {
                    Some(Operand::Reg(r)) => Some(*r),
                    _ => None,
                };
                let old = dst.map(|r| self.get(env, &Operand::Reg(r), ins.pos.line));
                let mut inner = Vec::new();
                self.instr(code, env, ins, sel.mask, &mut inner)?;
                if let (Some(r), Some(old)) = (dst, old) {
                    let new = self.get(env, &Operand::Reg(r), ins.pos.line);
                    let merged = match (old, new) {
                        (V::Num(o), V::Num(n)) => V::Num(Box::new(std::array::from_fn(|i| {
                            if sel.mask >> i & 1 == 1 { n[i] } else { o[i] }
                        }))),
                        (o, n) if o == n => n,
                        _ => V::Unknown(ins.pos.line),
                    };
                    env.insert(r, merged);
                }
                if !inner.is_empty() {
                    out.push(self.wrap(ins, sel, active, inner)?);
                }
            }
            ip += 1;
        }
        Ok(active)
    }

    fn wrap(
        &self,
        ins: &Instr<'a>,
        sel: Sel,
        active: u32,
        inner: Vec<Stmt>,
    ) -> Result<Stmt, Unliftable> {
        if let Some(c) = cond_for(sel.mask, active, sel.elect == Some(true)) {
            return Ok(Stmt::If {
                cond: c,
                then: inner,
                els: vec![],
            });
        }
        match cond_for(active & !sel.mask, active, sel.elect == Some(false)) {
            Some(c) => Ok(Stmt::If {
                cond: c,
                then: vec![],
                els: inner,
            }),
            None => Err(fail(
                ins,
                format!(
                    "the lanes of its guard ({:#010x} of {active:#010x}) are not a condition of the model (lane < n, lane == n, elect.sync)",
                    sel.mask
                ),
            )),
        }
    }

    /// A branch on which the active lanes disagree: a structured region becomes an `If`.
    /// Returns where control joins and the lanes still active there.
    #[allow(
        clippy::too_many_arguments,
        reason = "the branch, its target and the enclosing region's state"
    )]
    fn divergent(
        &mut self,
        code: &Code<'a, 'm>,
        env: &mut Env<'a>,
        ins: &Instr<'a>,
        ip: usize,
        t: usize,
        end: usize,
        active: u32,
        sel: Sel,
        out: &mut Vec<Stmt>,
    ) -> Result<(usize, u32), Unliftable> {
        if t <= ip || t > end {
            return Err(fail(
                ins,
                "a lane-divergent branch that is not a forward branch inside its region (a loop whose trip count differs between lanes?)",
            ));
        }
        // `@p bra ELSE; then...; bra JOIN; ELSE: else...; JOIN:`?
        let mut fall = (ip + 1, t);
        let mut taken = (t, t);
        let mut join = t;
        if let Some(PStmt::Instr(j)) = code.body.get(t - 1).copied()
            && t - 1 > ip
            && j.guard.is_none()
            && matches!(classify(j), Class::Branch { .. })
            && let Some(Operand::Sym(l)) = j.operands.first()
            && let Some(&e) = code.labels.get(l)
            && e > t
            && e <= end
        {
            fall = (ip + 1, t - 1);
            taken = (t, e);
            join = e;
        }
        let fall_mask = active & !sel.mask;
        let mut then = Vec::new();
        let mut els = Vec::new();
        let (cond, first, second) = if let Some(c) =
            cond_for(fall_mask, active, sel.elect == Some(false))
        {
            (c, (fall, fall_mask), (taken, sel.mask))
        } else if let Some(c) = cond_for(sel.mask, active, sel.elect == Some(true)) {
            (c, (taken, sel.mask), (fall, fall_mask))
        } else {
            return Err(fail(
                ins,
                format!(
                    "the lanes that take this branch ({:#010x} of {active:#010x}) are not a condition of the model (lane < n, lane == n, elect.sync)",
                    sel.mask
                ),
            ));
        };
        let s1 = self.run(code, env, first.0.0, first.0.1, first.1, true, &mut then)?;
        let s2 = self.run(code, env, second.0.0, second.0.1, second.1, true, &mut els)?;
        out.push(Stmt::If { cond, then, els });
        Ok((join, s1 | s2))
    }

    fn set(&self, env: &mut Env<'a>, o: Option<&Operand<'a>>, v: V<'a>) {
        match o {
            Some(Operand::Reg(r) | Operand::Sym(r)) => {
                env.insert(r, v);
            }
            Some(Operand::Pair(a, b)) => {
                self.set(env, Some(a), V::Unknown(0));
                self.set(env, Some(b), v);
            }
            Some(Operand::Vec(rs)) => {
                for r in rs {
                    self.set(env, Some(r), v.clone());
                }
            }
            _ => {}
        }
    }

    /// One straight-line instruction for the `active` lanes.
    fn instr(
        &mut self,
        code: &Code<'a, 'm>,
        env: &mut Env<'a>,
        ins: &Instr<'a>,
        active: u32,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Unliftable> {
        let line = ins.pos.line;
        let op = ins.opcode;
        let ops = &ins.operands;
        let arg = |k: usize| {
            ops.get(k)
                .map(|o| self.get(env, o, line))
                .unwrap_or(V::Unknown(line))
        };
        let words: Vec<&str> = op.split('.').collect();
        let ty = *words.last().unwrap_or(&"");
        match classify(ins) {
            Class::Tcgen05(_) => {
                let s = self.tcgen05(env, ins, active)?;
                out.push(s);
                return Ok(());
            }
            Class::Tcgen05Other => {
                let why = ins
                    .ill_formed
                    .as_ref()
                    .map_or_else(|| "not a tcgen05 form".to_string(), ToString::to_string);
                return Err(fail(ins, format!("ill-formed tcgen05 instruction: {why}")));
            }
            Class::Call { callee } => return self.call(env, ins, callee, active, out),
            Class::Trap => return Err(fail(ins, "trap")),
            Class::BarCta { waits, partial, .. } => {
                if !waits {
                    return Err(fail(
                        ins,
                        "bar.arrive (a split barrier) is not in the program model",
                    ));
                }
                if partial {
                    let count = if op.contains("red") {
                        ops.get(2)
                    } else {
                        ops.get(1)
                    };
                    let all = 32 * u64::from(self.shape.warps_per_cta);
                    match count
                        .map(|o| self.get(env, o, line))
                        .and_then(|v| v.uniform(active))
                    {
                        Some(n) if n == all => {}
                        _ => {
                            return Err(fail(
                                ins,
                                "a named barrier for part of the CTA is not in the program model",
                            ));
                        }
                    }
                }
                if op.contains("red") {
                    return Err(fail(ins, "bar.red is not in the program model"));
                }
                out.push(Stmt::BarCta);
                return Ok(());
            }
            Class::BarWarp => return Ok(()),
            Class::ClusterArrive { relaxed } => {
                out.push(Stmt::ClusterArrive { relaxed });
                return Ok(());
            }
            Class::ClusterWait => {
                out.push(Stmt::ClusterWait);
                return Ok(());
            }
            Class::Mbarrier(m) => {
                if matches!(m, MbarOp::TryWait | MbarOp::TestWait) && !spins(code, ins) {
                    self.roles.bounded_waits += 1;
                }
                return self.mbarrier(env, ins, m, active, out);
            }
            Class::Elect => {
                self.set(env, ops.first(), V::Elect(true));
                return Ok(());
            }
            Class::FenceProxyAsync => {
                out.push(Stmt::FenceProxyAsync);
                return Ok(());
            }
            Class::Fence => {
                if op.starts_with("fence.mbarrier_init") {
                    out.push(Stmt::FenceMbarInit);
                }
                return Ok(());
            }
            Class::LdShared => {
                let v = match self.addr(env, &ops[ops.len().min(2) - 1], line) {
                    V::Addr(s, o) => V::Tmem(s, o, splat(0)),
                    _ => V::Unknown(line),
                };
                self.set(env, ops.first(), v);
                return Ok(());
            }
            _ => {}
        }
        let head = words[0];
        if ["cp", "st", "red"].contains(&head) && (op.contains(".async") || op.contains(".bulk")) {
            return Err(fail(
                ins,
                "an asynchronous bulk copy (TMA) writes shared memory and completes mbarrier transactions outside the program model",
            ));
        }
        if head == "st" && (op.contains(".shared") || op.starts_with("st.shared")) {
            if let V::Addr(s, _) = self.addr(env, &ops[0], line) {
                self.roles.shared_writes.push((s, line));
            }
            return Ok(());
        }
        let v = match head {
            "mov" | "cvt" | "cvta" => match arg(1) {
                V::Num(l) if head == "cvt" => {
                    let w = width(
                        words
                            .get(words.len().wrapping_sub(2))
                            .copied()
                            .unwrap_or(ty),
                    )
                    .min(width(ty));
                    let m = if w >= 64 { u64::MAX } else { (1 << w) - 1 };
                    V::Num(Box::new(std::array::from_fn(|i| l[i] & m)))
                }
                V::Num(l) if head == "mov" && width(ty) == 32 => {
                    V::Num(Box::new(std::array::from_fn(|i| l[i] & 0xFFFF_FFFF)))
                }
                v => v,
            },
            "and"
                if matches!(
                    (arg(1), arg(2)),
                    (V::DescStart(..), V::Num(_)) | (V::Num(_), V::DescStart(..))
                ) =>
            {
                let (a, b) = (arg(1), arg(2));
                let ((V::DescStart(s, o), V::Num(m)) | (V::Num(m), V::DescStart(s, o))) = (a, b)
                else {
                    unreachable!("matched above")
                };
                self.desc_start_and(s, o, &m, line)
            }
            "add" | "sub" | "mul" | "shl" | "shr" | "and" | "or" | "xor" | "div" | "rem"
            | "min" | "max" => {
                if words.contains(&"hi") || words.contains(&"sat") || ty.starts_with('f') {
                    V::Unknown(line)
                } else if ty == "pred" {
                    pred_logic(head, arg(1), arg(2), active, line)
                } else {
                    binop(head, ty, words.contains(&"wide"), arg(1), arg(2), line)
                }
            }
            "mad" if words.contains(&"lo") || words.contains(&"wide") => {
                match binop("mul", ty, words.contains(&"wide"), arg(1), arg(2), line) {
                    V::Num(p) => {
                        let wty = if words.contains(&"wide") { "u64" } else { ty };
                        binop("add", wty, false, V::Num(p), arg(3), line)
                    }
                    _ => V::Unknown(line),
                }
            }
            "not" => match arg(1) {
                V::Num(l) if ty == "pred" => {
                    V::Num(Box::new(std::array::from_fn(|i| u64::from(l[i] == 0))))
                }
                V::Num(l) => {
                    let w = width(ty);
                    let m = if w >= 64 { u64::MAX } else { (1 << w) - 1 };
                    V::Num(Box::new(std::array::from_fn(|i| !l[i] & m)))
                }
                V::Elect(b) => V::Elect(!b),
                _ => V::Unknown(line),
            },
            "setp" => {
                let r = match (arg(1), arg(2)) {
                    (V::Num(a), V::Num(b)) => compare(words.get(1).unwrap_or(&""), ty, &a, &b)
                        .map_or(V::Unknown(line), V::Num),
                    _ => V::Unknown(line),
                };
                let r = match (words.get(2).copied(), ops.get(3)) {
                    (Some(b @ ("and" | "or" | "xor")), Some(c)) => {
                        pred_logic(b, r, self.get(env, c, line), active, line)
                    }
                    _ => r,
                };
                if let Some(Operand::Pair(p, q)) = ops.first() {
                    let neg = match &r {
                        V::Num(l) => {
                            V::Num(Box::new(std::array::from_fn(|i| u64::from(l[i] == 0))))
                        }
                        _ => V::Unknown(line),
                    };
                    self.set(env, Some(p), r);
                    self.set(env, Some(q), neg);
                    return Ok(());
                }
                r
            }
            "selp" => match (arg(1), arg(2), arg(3)) {
                (V::Num(a), V::Num(b), V::Num(c)) => V::Num(Box::new(std::array::from_fn(|i| {
                    if c[i] != 0 { a[i] } else { b[i] }
                }))),
                (a, b, V::Num(c)) if c.iter().all(|&x| x != 0) => {
                    let _ = b;
                    a
                }
                (a, b, V::Num(c)) if c.iter().all(|&x| x == 0) => {
                    let _ = a;
                    b
                }
                _ => V::Unknown(line),
            },
            "shfl" if words.contains(&"idx") => match (arg(1), arg(2)) {
                (V::Num(a), V::Num(b)) => {
                    V::Num(Box::new(std::array::from_fn(|i| a[(b[i] & 31) as usize])))
                }
                _ => V::Unknown(line),
            },
            // `bfe.u32 d, a, 4, 14` of a shared address is `(a & 0x3FFFF) >> 4`, a
            // descriptor's start field (§9.7.16.4.1, reference §2.8); numbers extract
            // lanewise (the PTX ISA's `bfe`, unsigned: no sign extension).
            "bfe" => match (arg(1), arg(2), arg(3)) {
                (V::Addr(s, o), V::Num(p), V::Num(n))
                    if p.iter().all(|&x| x == 4) && n.iter().all(|&x| x == 14) =>
                {
                    V::DescStart(s, o)
                }
                (V::Num(a), V::Num(p), V::Num(n)) if ty.starts_with('u') => {
                    let w = u64::from(width(ty));
                    V::Num(Box::new(std::array::from_fn(|i| {
                        let (pos, len) = (p[i] & 0xFF, (n[i] & 0xFF).min(w));
                        if pos >= w {
                            0
                        } else {
                            (a[i] >> pos) & ((1u64 << len) - 1)
                        }
                    })))
                }
                _ => V::Unknown(line),
            },
            "mapa" => match (arg(1), arg(2)) {
                (V::Addr(s, o), V::Num(r)) if r.iter().all(|&x| x == r[0]) => {
                    V::Remote(s, o, r[0] as u8)
                }
                _ => V::Unknown(line),
            },
            "nanosleep" | "prefetch" | "griddepcontrol" | "setmaxnreg" | "pmevent" => return Ok(()),
            _ => V::Unknown(line),
        };
        let _ = code;
        self.set(env, ops.first(), v);
        Ok(())
    }

    fn call(
        &mut self,
        _env: &mut Env<'a>,
        ins: &Instr<'a>,
        callee: Option<&'a str>,
        active: u32,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Unliftable> {
        let name = callee.ok_or_else(|| fail(ins, "indirect call"))?;
        let f = self
            .module
            .functions
            .iter()
            .find(|f| f.name == name && f.body.is_some())
            .ok_or_else(|| {
                fail(
                    ins,
                    format!("call of {name}, whose body is not in the module"),
                )
            })?;
        if self.depth >= MAX_DEPTH {
            return Err(fail(ins, format!("calls nested deeper than {MAX_DEPTH}")));
        }
        if !self.callees.contains_key(name) {
            self.callees.insert(name, Code::of(f));
        }
        let code = self.callees.remove(name).expect("inserted");
        self.depth += 1;
        let mut env = Env::new();
        let len = code.body.len();
        let r = self.run(&code, &mut env, 0, len, active, false, out);
        self.depth -= 1;
        self.callees.insert(name, code);
        let left = r?;
        if left != active {
            return Err(fail(
                ins,
                "a called function exits some of the lanes that call it: not expressible after inlining",
            ));
        }
        Ok(())
    }

    fn mbarrier(
        &mut self,
        env: &mut Env<'a>,
        ins: &Instr<'a>,
        m: MbarOp,
        active: u32,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Unliftable> {
        let line = ins.pos.line;
        let op = ins.opcode;
        let ops = &ins.operands;
        if op.contains("expect_tx") || op.contains("complete_tx") {
            return Err(fail(
                ins,
                "mbarrier transaction counts (TMA pipelines) are not in the program model",
            ));
        }
        let addr_of = |k: usize| -> Result<V<'a>, Unliftable> {
            let o = ops
                .get(k)
                .ok_or_else(|| fail(ins, "missing mbarrier operand"))?;
            Ok(self.addr(env, o, line))
        };
        match m {
            MbarOp::Init => {
                let a = addr_of(0)?;
                let count = ops
                    .get(1)
                    .map(|o| self.get(env, o, line))
                    .and_then(|v| v.uniform(active))
                    .ok_or_else(|| fail(ins, "mbarrier.init count is not a known number"))?;
                let V::Addr(s, o) = a else {
                    return Err(fail(
                        ins,
                        "mbarrier.init of an address the lifter cannot name",
                    ));
                };
                let bar = self.roles.mbar(s, o, ins)?;
                out.push(Stmt::MbarInit {
                    bar,
                    count: count as u32,
                });
            }
            MbarOp::Arrive => {
                if op.contains("arrive_drop") || ops.len() > 2 {
                    return Err(fail(
                        ins,
                        "arrive_drop or an arrive count other than 1 is not in the program model",
                    ));
                }
                let (bar, cta) = match addr_of(1)? {
                    V::Addr(s, o) => (self.roles.mbar(s, o, ins)?, None),
                    V::Remote(s, o, r) => (self.roles.mbar(s, o, ins)?, Some(r)),
                    _ => return Err(fail(ins, "mbarrier address the lifter cannot name")),
                };
                let cta = cta.filter(|&r| r != self.rank || op.contains("cluster"));
                out.push(Stmt::MbarArrive { bar, cta });
            }
            MbarOp::TryWait | MbarOp::TestWait => {
                if !op.contains("parity") {
                    return Err(fail(
                        ins,
                        "a try_wait on a state token (not .parity) is not in the program model",
                    ));
                }
                let bar = match addr_of(1)? {
                    V::Addr(s, o) => self.roles.mbar(s, o, ins)?,
                    _ => return Err(fail(ins, "mbarrier address the lifter cannot name")),
                };
                let parity = ops
                    .get(2)
                    .map(|o| self.get(env, o, line))
                    .and_then(|v| v.uniform(active))
                    .ok_or_else(|| fail(ins, "the parity is not a known number"))?;
                let scope = if op.contains(".cluster") {
                    Scope::Cluster
                } else {
                    Scope::Cta
                };
                out.push(Stmt::MbarWait {
                    bar,
                    parity: parity & 1 == 1,
                    scope,
                    max_tries: 1 << 20,
                });
                // The model records whether the phase completed; the lifted code goes on as if
                // it did (the oracle judges the case where it cannot).
                self.set(env, ops.first(), V::num(1));
            }
            _ => {
                return Err(fail(
                    ins,
                    "this mbarrier operation is not in the program model",
                ));
            }
        }
        Ok(())
    }

    /// `start & m` of a descriptor start field (`(addr & 0x3FFFF) >> 4`, §9.7.16.4.1): the
    /// same field where the bits `m` clears within the field's 14 are zero in every address
    /// the variable can have: below its declared `.align` and zero in the offset `o`. A
    /// compiler that knows the alignment masks with fewer bits (`and 0x3FC0` of a 1024-aligned
    /// variable).
    fn desc_start_and(&self, s: &'a str, o: i64, m: &[u64; 32], line: u32) -> V<'a> {
        let uni = m.iter().all(|&x| x == m[0]).then_some(m[0]);
        let Some(m) = uni else {
            return V::Unknown(line);
        };
        let cleared = 0x3FFF & !m;
        let low = u64::from(self.roles.align(s) / 16) - 1;
        if o >= 0 && cleared & !low == 0 && (o as u64 >> 4) & cleared == 0 {
            V::DescStart(s, o)
        } else {
            V::Unknown(line)
        }
    }

    pub(super) fn tcgen05(
        &mut self,
        env: &Env<'a>,
        ins: &Instr<'a>,
        active: u32,
    ) -> Result<Stmt, Unliftable> {
        super::ops::op(self, env, ins, active).map(Stmt::Tc)
    }

    pub(super) fn record_ld(&mut self, info: LdInfo) {
        self.lds.push(info);
    }

    pub(super) fn record_st(&mut self, info: StInfo) {
        self.sts.push(info);
    }
}

/// Adds a constant byte offset to an address value.
fn add_const(v: V<'_>, off: i64, line: u32) -> V<'_> {
    if off == 0 {
        return v;
    }
    match v {
        V::Num(l) => V::Num(Box::new(std::array::from_fn(|i| {
            l[i].wrapping_add(off as u64)
        }))),
        V::Addr(s, o) => V::Addr(s, o + off),
        V::Remote(s, o, r) => V::Remote(s, o + off, r),
        V::Tmem(s, o, l) => V::Tmem(
            s,
            o,
            Box::new(std::array::from_fn(|i| l[i].wrapping_add(off as u64))),
        ),
        _ => V::Unknown(line),
    }
}

fn pred_logic<'a>(op: &str, a: V<'a>, b: V<'a>, active: u32, line: u32) -> V<'a> {
    match (a, b) {
        (V::Num(x), V::Num(y)) => arith(op, "b8", false, &x, &y).map_or(V::Unknown(line), V::Num),
        (V::Elect(e), n @ V::Num(_)) | (n @ V::Num(_), V::Elect(e)) => {
            match (op, n.uniform(active)) {
                ("and", Some(1)) | ("or", Some(0)) => V::Elect(e),
                ("and", Some(0)) => V::num(0),
                ("or", Some(1)) => V::num(1),
                _ => V::Unknown(line),
            }
        }
        _ => V::Unknown(line),
    }
}

/// Binary arithmetic over the value domain, numbers lanewise and the symbolic forms where the
/// address and descriptor idioms need them.
fn binop<'a>(op: &str, ty: &str, wide: bool, a: V<'a>, b: V<'a>, line: u32) -> V<'a> {
    let uni = |l: &[u64; 32]| l.iter().all(|&x| x == l[0]).then_some(l[0]);
    match (op, a, b) {
        (_, V::Num(x), V::Num(y)) => arith(op, ty, wide, &x, &y).map_or(V::Unknown(line), V::Num),
        ("add", V::Addr(s, o), V::Num(n)) | ("add", V::Num(n), V::Addr(s, o)) => match uni(&n) {
            Some(k) => V::Addr(s, o.wrapping_add(k as i64)),
            None => V::Unknown(line),
        },
        ("sub", V::Addr(s, o), V::Num(n)) => match uni(&n) {
            Some(k) => V::Addr(s, o.wrapping_sub(k as i64)),
            None => V::Unknown(line),
        },
        ("add" | "or", V::Tmem(s, o, l), V::Num(n))
        | ("add" | "or", V::Num(n), V::Tmem(s, o, l)) => V::Tmem(
            s,
            o,
            Box::new(std::array::from_fn(|i| {
                l[i].wrapping_add(n[i]) & 0xFFFF_FFFF
            })),
        ),
        ("sub", V::Tmem(s, o, l), V::Num(n)) => V::Tmem(
            s,
            o,
            Box::new(std::array::from_fn(|i| {
                l[i].wrapping_sub(n[i]) & 0xFFFF_FFFF
            })),
        ),
        ("and", V::Addr(s, o), V::Num(n)) | ("and", V::Num(n), V::Addr(s, o))
            if uni(&n).is_some_and(|m| m & 0x3FFFF == 0x3FFFF) =>
        {
            V::Addr(s, o)
        }
        ("shr", V::Addr(s, o), V::Num(n)) if uni(&n) == Some(4) => V::DescStart(s, o),
        ("add" | "or", V::DescStart(s, o), V::Num(n))
        | ("add" | "or", V::Num(n), V::DescStart(s, o)) => match uni(&n) {
            Some(k) => V::Desc(s, o, k),
            None => V::Unknown(line),
        },
        ("or", V::Desc(s, o, f), V::Num(n)) | ("or", V::Num(n), V::Desc(s, o, f)) => {
            match uni(&n) {
                Some(k) => V::Desc(s, o, f | k),
                None => V::Unknown(line),
            }
        }
        ("add", V::Desc(s, o, f), V::Num(n)) | ("add", V::Num(n), V::Desc(s, o, f)) => {
            match uni(&n) {
                // A small addend moves the start address field (16-byte units).
                Some(k) if k < 0x4000 => V::Desc(s, o + 16 * k as i64, f),
                Some(k) => V::Desc(s, o, f.wrapping_add(k)),
                None => V::Unknown(line),
            }
        }
        _ => V::Unknown(line),
    }
}

/// Whether the wait `ins` is an unbounded spin loop: the next instruction branches back to it
/// (or above it) while its result predicate is false (`@!p bra LOOP`), or branches out when it
/// is true and the one after branches back unconditionally (`@p bra DONE; bra LOOP;`, as
/// CUTLASS writes it).
fn spins(code: &Code<'_, '_>, ins: &Instr<'_>) -> bool {
    let Some(Operand::Reg(p)) = ins.operands.first() else {
        return false;
    };
    let Some(ip) = code
        .body
        .iter()
        .position(|s| matches!(s, PStmt::Instr(i) if i.pos == ins.pos))
    else {
        return false;
    };
    let instr = |k: usize| match code.body.get(k) {
        Some(PStmt::Instr(i)) => Some(i),
        _ => None,
    };
    let back = |i: &Instr<'_>| {
        matches!(classify(i), Class::Branch { .. })
            && matches!(i.operands.first(), Some(Operand::Sym(l)) if code.labels.get(l).is_some_and(|&t| t <= ip))
    };
    let Some(next) = instr(ip + 1) else {
        return false;
    };
    match &next.guard {
        Some(g) if g.pred == *p && g.negated => back(next),
        Some(g) if g.pred == *p && matches!(classify(next), Class::Branch { .. }) => {
            instr(ip + 2).is_some_and(|i| i.guard.is_none() && back(i))
        }
        _ => false,
    }
}
