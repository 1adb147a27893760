//! Per-warp values of registers: an interval (over the 32 lanes of one warp) with a
//! warp-uniformity flag, enough to resolve warp-role branches (`%tid.x < 32`, `%tid.x >> 5 == k`,
//! `%cluster_ctarank & 1`) for one concrete warp, and to tell warp-uniform guards from
//! lane-divergent ones (`elect.sync`, `%laneid`, `%tid.x == 0`) for the `.aligned` rules
//! (reference §3, GEN-ALIGNED-CONVERGENT).
//!
//! The analysis is a forward data flow over the blocks of [`tcgen05_ir::ptx::cfg::Cfg`], joined at
//! merges and widened at loop heads; it is path-insensitive (the protocol walk in
//! `protocol.rs` adds the path conditions it branches on).

use std::collections::HashMap;
use tcgen05_ir::ptx::cfg::{BlockId, Cfg};
use tcgen05_ir::ptx::parse::{Instr, Operand};

/// An abstract value: the set of values the register holds across the lanes of one warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum V {
    /// Not yet defined on any path.
    Bot,
    /// Every lane holds a value in `lo..=hi`; `uni`: all lanes hold the same value.
    I { lo: i64, hi: i64, uni: bool },
    /// Unknown; `uni`: all lanes hold the same value.
    Top { uni: bool },
}

/// Bounds beyond which intervals are given up (no role computation needs them).
const LIMIT: i64 = 1 << 40;

impl V {
    pub(crate) fn c(v: i64) -> V {
        V::I {
            lo: v,
            hi: v,
            uni: true,
        }
    }

    fn range(lo: i64, hi: i64, uni: bool) -> V {
        if lo.abs() > LIMIT || hi.abs() > LIMIT || lo > hi {
            V::Top { uni }
        } else {
            V::I {
                lo,
                hi,
                uni: uni || lo == hi,
            }
        }
    }

    /// All lanes hold the same value.
    pub(crate) fn uni(self) -> bool {
        match self {
            V::Bot => true,
            V::I { uni, .. } | V::Top { uni } => uni,
        }
    }

    /// A predicate's truth: `Some(b)` when every lane has the value `b`.
    pub(crate) fn truth(self) -> Option<bool> {
        match self {
            V::I { lo: 0, hi: 0, .. } => Some(false),
            V::I { lo, hi, .. } if lo == hi => Some(true),
            V::I { lo, hi, .. } if lo > 0 || hi < 0 => Some(true),
            _ => None,
        }
    }

    pub(crate) fn join(self, o: V) -> V {
        match (self, o) {
            (V::Bot, x) | (x, V::Bot) => x,
            (
                V::I {
                    lo: a,
                    hi: b,
                    uni: u,
                },
                V::I {
                    lo: c,
                    hi: d,
                    uni: w,
                },
            ) => V::range(a.min(c), b.max(d), u && w),
            (a, b) => V::Top {
                uni: a.uni() && b.uni(),
            },
        }
    }

    fn widen(old: V, new: V) -> V {
        match (old, new) {
            (V::Bot, x) => x,
            (a, b) if a == b => a,
            (a, b) => V::Top {
                uni: a.uni() && b.uni(),
            },
        }
    }

    fn bits(self) -> Option<(i64, i64, bool)> {
        match self {
            V::I { lo, hi, uni } => Some((lo, hi, uni)),
            _ => None,
        }
    }
}

/// The launch facts one warp is analysed under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WarpCtx {
    /// The warp's rank in the CTA (`%tid` linearized / 32).
    pub warp: u32,
    /// `%cluster_ctarank`, when enumerated (pairs of a cluster of two).
    pub rank: Option<u32>,
    /// `.reqntid`/`.maxntid` (x, y, z), when declared.
    pub ntid: Option<(u32, u32, u32)>,
    /// The block shape `%tid` is computed from: `ntid`, or, when the kernel declares none, the
    /// assumed 1-D block of the warps walked (CUTLASS and Triton launch 1-D blocks of whole
    /// warps), so that `%tid.x >> 5`, `%tid.x / 32` and `%tid.x & ~31` are warp-uniform.
    pub tid_shape: Option<(u32, u32, u32)>,
}

impl WarpCtx {
    fn special(&self, r: &str) -> Option<V> {
        let nt = self.ntid;
        let lin = 32 * i64::from(self.warp);
        let tid = |dim: usize| -> V {
            match self.tid_shape {
                Some((x, y, _)) if x % 32 == 0 => {
                    let (x, y) = (i64::from(x), i64::from(y.max(1)));
                    match dim {
                        0 => V::range(lin % x, lin % x + 31, false),
                        1 => V::c((lin / x) % y),
                        _ => V::c(lin / (x * y)),
                    }
                }
                _ => V::Top { uni: false },
            }
        };
        Some(match r {
            "%tid.x" => tid(0),
            "%tid.y" => tid(1),
            "%tid.z" => tid(2),
            "%laneid" => V::range(0, 31, false),
            "%ntid.x" => nt.map_or(V::Top { uni: true }, |n| V::c(n.0.into())),
            "%ntid.y" => nt.map_or(V::Top { uni: true }, |n| V::c(n.1.into())),
            "%ntid.z" => nt.map_or(V::Top { uni: true }, |n| V::c(n.2.into())),
            "%cluster_ctarank" => self.rank.map_or(V::Top { uni: true }, |r| V::c(r.into())),
            "%lanemask_eq" | "%lanemask_lt" | "%lanemask_le" | "%lanemask_gt" | "%lanemask_ge"
            | "%clock" | "%clock64" | "%globaltimer" => V::Top { uni: false },
            _ if r.starts_with("%warpid")
                || r.starts_with("%ctaid")
                || r.starts_with("%nctaid")
                || r.starts_with("%cluster")
                || r.starts_with("%nclusterid")
                || r.starts_with("%smid")
                || r.starts_with("%nsmid")
                || r.starts_with("%gridid")
                || r.starts_with("%is_explicit_cluster") =>
            {
                V::Top { uni: true }
            }
            _ => return None,
        })
    }
}

/// A source operand, decoded once.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Src {
    Reg(u32),
    /// `!%p`.
    NotReg(u32),
    Imm(i64),
    Special(u32),
    /// A symbol, float, sink or address: warp-uniform, unknown value.
    Uniform,
    /// Something lane-dependent we cannot name.
    Varying,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Mov,
    Add,
    Sub,
    Mul,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Not,
    Div,
    Rem,
    Setp(Cmp, Option<BoolOp>),
    Selp,
    ShflIdx,
    Elect,
    /// Result is warp-uniform whatever the sources (ld.param, try_wait, vote, activemask).
    Uniform,
    /// Result is warp-uniform when the address is (ordinary loads).
    Load,
    /// Result varies by lane (tcgen05.ld, atomics, other shuffles).
    Varying,
    /// No register result.
    NoDest,
    /// Dests are unknown, uniform iff all sources are.
    Generic,
}

/// One decoded instruction.
#[derive(Debug, Clone)]
pub(crate) struct Dec {
    op: Op,
    pub dests: Vec<u32>,
    srcs: Vec<Src>,
}

/// Register names interned to indices, and every instruction of a function decoded.
#[derive(Debug)]
pub(crate) struct Decoded<'a> {
    pub regs: HashMap<&'a str, u32>,
    /// Registers `0..slots` are the ones guards, branch conditions and alloc sizes depend on
    /// (a backward slice); only they are tracked.
    pub slots: usize,
    pub specials: Vec<&'a str>,
    pub instrs: Vec<Dec>,
}

fn op_of(opcode: &str) -> Op {
    let mut parts = opcode.split('.');
    let head = parts.next().unwrap_or("");
    let has = |q: &str| opcode.split('.').any(|w| w == q);
    match head {
        "mov" | "cvt" | "cvta" => Op::Mov,
        "add" => Op::Add,
        "sub" => Op::Sub,
        "mul" | "mul24" => Op::Mul,
        "shl" => Op::Shl,
        "shr" => Op::Shr,
        "and" => Op::And,
        "or" => Op::Or,
        "xor" => Op::Xor,
        "not" => Op::Not,
        "div" => Op::Div,
        "rem" => Op::Rem,
        "setp" => {
            let cmp = match parts.next().unwrap_or("") {
                "eq" => Cmp::Eq,
                "ne" => Cmp::Ne,
                "lt" | "lo" => Cmp::Lt,
                "le" | "ls" => Cmp::Le,
                "gt" | "hi" => Cmp::Gt,
                "ge" | "hs" => Cmp::Ge,
                _ => Cmp::Other,
            };
            let b = if has("and") {
                Some(BoolOp::And)
            } else if has("or") {
                Some(BoolOp::Or)
            } else if has("xor") {
                Some(BoolOp::Xor)
            } else {
                None
            };
            Op::Setp(cmp, b)
        }
        "selp" => Op::Selp,
        "shfl" if has("idx") => Op::ShflIdx,
        "shfl" => Op::Varying,
        "elect" => Op::Elect,
        "ld" if has("param") || has("const") => Op::Uniform,
        "ld" | "ldu" => Op::Load,
        "vote" | "activemask" | "match" | "redux" => Op::Uniform,
        "mbarrier" if has("try_wait") || has("test_wait") => Op::Uniform,
        "tcgen05" if opcode.starts_with("tcgen05.ld") => Op::Varying,
        "atom" | "tld4" | "tex" | "suld" => Op::Varying,
        "st"
        | "bra"
        | "brx"
        | "call"
        | "ret"
        | "exit"
        | "bar"
        | "barrier"
        | "mbarrier"
        | "tcgen05"
        | "cp"
        | "fence"
        | "membar"
        | "prefetch"
        | "prefetchu"
        | "red"
        | "trap"
        | "setmaxnreg"
        | "griddepcontrol"
        | "wgmma"
        | "stmatrix"
        | "multimem"
        | "discard"
        | "applypriority"
        | "nanosleep"
        | "pmevent"
        | "brkpt"
        | "cp.async"
        | "clusterlaunchcontrol" => Op::NoDest,
        _ => Op::Generic,
    }
}

impl<'a> Decoded<'a> {
    pub(crate) fn new(cfg: &Cfg<'a>) -> Decoded<'a> {
        let mut d = Decoded {
            regs: HashMap::new(),
            slots: 0,
            specials: Vec::new(),
            instrs: Vec::with_capacity(cfg.instrs.len()),
        };
        let mut spec_ix: HashMap<&'a str, u32> = HashMap::new();
        let probe = WarpCtx {
            warp: 0,
            rank: None,
            ntid: None,
            tid_shape: None,
        };
        let mut seeds = Vec::new();
        for i in &cfg.instrs {
            let dec = d.decode(i, &mut spec_ix, &probe);
            d.instrs.push(dec);
            if let Some(g) = i.guard {
                seeds.push(d.reg(g.pred));
            }
            if matches!(i.form, Some(tcgen05_ir::Form::Alloc(_)))
                && let Some(Operand::Reg(r)) = i.operands.get(1)
            {
                seeds.push(d.reg(r));
            }
        }
        d.slice(&seeds);
        d
    }

    /// Renumbers the registers so that those `seeds` depend on (through the instructions that
    /// define them, flow-insensitively) come first; the others are never tracked.
    fn slice(&mut self, seeds: &[u32]) {
        let n = self.regs.len();
        let mut rel = vec![false; n];
        for &s in seeds {
            rel[s as usize] = true;
        }
        let mut changed = true;
        while changed {
            changed = false;
            for d in self.instrs.iter().rev() {
                if d.dests.iter().any(|&x| rel[x as usize]) {
                    for s in &d.srcs {
                        if let Src::Reg(r) | Src::NotReg(r) = *s
                            && !rel[r as usize]
                        {
                            rel[r as usize] = true;
                            changed = true;
                        }
                    }
                }
            }
        }
        let mut map = vec![0u32; n];
        let mut next = 0u32;
        for (r, &is) in rel.iter().enumerate() {
            if is {
                map[r] = next;
                next += 1;
            }
        }
        self.slots = next as usize;
        for (r, &is) in rel.iter().enumerate() {
            if !is {
                map[r] = next;
                next += 1;
            }
        }
        for v in self.regs.values_mut() {
            *v = map[*v as usize];
        }
        for d in &mut self.instrs {
            for x in &mut d.dests {
                *x = map[*x as usize];
            }
            for s in &mut d.srcs {
                if let Src::Reg(r) | Src::NotReg(r) = s {
                    *r = map[*r as usize];
                }
            }
        }
    }

    fn reg(&mut self, r: &'a str) -> u32 {
        let n = self.regs.len() as u32;
        *self.regs.entry(r).or_insert(n)
    }

    fn decode(
        &mut self,
        i: &Instr<'a>,
        spec_ix: &mut HashMap<&'a str, u32>,
        probe: &WarpCtx,
    ) -> Dec {
        let op = op_of(i.opcode);
        let mut dests = Vec::new();
        let mut srcs = Vec::new();
        let ops = &i.operands;
        let has_dest = !matches!(op, Op::NoDest);
        let push_dest = |o: &Operand<'a>, this: &mut Self, dests: &mut Vec<u32>| match o {
            Operand::Reg(r) => dests.push(this.reg(r)),
            Operand::Pair(a, b) => {
                for x in [a.as_ref(), b.as_ref()] {
                    if let Operand::Reg(r) = x {
                        dests.push(this.reg(r));
                    }
                }
            }
            Operand::Vec(v) => {
                for x in v {
                    if let Operand::Reg(r) = x {
                        dests.push(this.reg(r));
                    }
                }
            }
            _ => {}
        };
        let start = if has_dest && !ops.is_empty() {
            push_dest(&ops[0], self, &mut dests);
            1
        } else {
            0
        };
        // tcgen05.ld writes its vector (first operand) even though the family has no result
        // otherwise; mbarrier.arrive returns a state, ignored.
        for o in &ops[start..] {
            srcs.push(self.src(o, spec_ix, probe));
        }
        Dec { op, dests, srcs }
    }

    fn src(
        &mut self,
        o: &Operand<'a>,
        spec_ix: &mut HashMap<&'a str, u32>,
        probe: &WarpCtx,
    ) -> Src {
        match o {
            Operand::Reg(r) => {
                if probe.special(r).is_some() {
                    let n = self.specials.len() as u32;
                    let ix = *spec_ix.entry(r).or_insert_with(|| n);
                    if ix == n {
                        self.specials.push(r);
                    }
                    Src::Special(ix)
                } else {
                    Src::Reg(self.reg(r))
                }
            }
            Operand::Imm(v) => Src::Imm(*v),
            Operand::Addr { base, .. } if base.starts_with('%') => {
                self.src(&Operand::Reg(base), spec_ix, probe)
            }
            Operand::Not(x) => match self.src(x, spec_ix, probe) {
                Src::Reg(r) => Src::NotReg(r),
                s => s,
            },
            Operand::Vec(_) | Operand::Paren(_) | Operand::Tensor { .. } | Operand::Pair(..) => {
                Src::Varying
            }
            _ => Src::Uniform,
        }
    }
}

/// Evaluates decoded instructions for one warp.
#[derive(Debug)]
pub(crate) struct Eval<'d, 'a> {
    pub dec: &'d Decoded<'a>,
    specials: Vec<V>,
}

impl<'d, 'a> Eval<'d, 'a> {
    pub(crate) fn new(dec: &'d Decoded<'a>, ctx: &WarpCtx) -> Self {
        let specials = dec
            .specials
            .iter()
            .map(|s| ctx.special(s).unwrap_or(V::Top { uni: false }))
            .collect();
        Eval { dec, specials }
    }

    pub(crate) fn src(&self, env: &[V], s: Src) -> V {
        match s {
            Src::Reg(r) | Src::NotReg(r) if r as usize >= env.len() => V::Top { uni: false },
            Src::Reg(r) => env[r as usize],
            Src::NotReg(r) => match env[r as usize].truth() {
                Some(t) => V::c(i64::from(!t)),
                None => V::range(0, 1, env[r as usize].uni()),
            },
            Src::Imm(v) => V::c(v),
            Src::Special(i) => self.specials[i as usize],
            Src::Uniform => V::Top { uni: true },
            Src::Varying => V::Top { uni: false },
        }
    }

    /// Applies instruction `ii` (already known to execute) to `env`. A guarded instruction
    /// whose guard is not known true joins its result with the old value.
    pub(crate) fn step(&self, env: &mut [V], ii: usize, guard_known_true: bool) {
        let d = &self.dec.instrs[ii];
        let slots = env.len() as u32;
        if d.dests.iter().all(|&x| x >= slots) {
            return;
        }
        let s = |k: usize| {
            d.srcs
                .get(k)
                .map_or(V::Top { uni: true }, |&x| self.src(env, x))
        };
        let all_uni = d.srcs.iter().all(|&x| self.src(env, x).uni());
        let arith = |f: &dyn Fn(i64, i64) -> Option<i64>| -> V {
            match (s(0).bits(), s(1).bits()) {
                (Some((a, b, u)), Some((c, e, w))) => {
                    let mut lo = i64::MAX;
                    let mut hi = i64::MIN;
                    for (x, y) in [(a, c), (a, e), (b, c), (b, e)] {
                        match f(x, y) {
                            Some(v) => {
                                lo = lo.min(v);
                                hi = hi.max(v);
                            }
                            None => return V::Top { uni: u && w },
                        }
                    }
                    V::range(lo, hi, u && w)
                }
                _ => V::Top { uni: all_uni },
            }
        };
        let mut out: Vec<V> = Vec::with_capacity(2);
        match d.op {
            Op::Mov => out.push(s(0)),
            Op::Add => out.push(arith(&|x, y| x.checked_add(y))),
            Op::Sub => out.push(arith(&|x, y| x.checked_sub(y))),
            Op::Mul => out.push(arith(&|x, y| x.checked_mul(y))),
            Op::Shl => out.push(match s(1).bits() {
                Some((k, k2, _)) if k == k2 && (0..40).contains(&k) => {
                    arith(&|x, _| x.checked_mul(1 << k))
                }
                _ => V::Top { uni: all_uni },
            }),
            Op::Shr => out.push(match (s(0).bits(), s(1).bits()) {
                (Some((a, b, u)), Some((k, k2, _)))
                    if k == k2 && (0..64).contains(&k) && a >= 0 =>
                {
                    V::range(a >> k, b >> k, u || (a >> k) == (b >> k))
                }
                _ => V::Top { uni: all_uni },
            }),
            Op::Div => out.push(match (s(0).bits(), s(1).bits()) {
                (Some((a, b, u)), Some((k, k2, _))) if k == k2 && k > 0 && a >= 0 => {
                    V::range(a / k, b / k, u || a / k == b / k)
                }
                _ => V::Top { uni: all_uni },
            }),
            Op::Rem => out.push(match (s(0).bits(), s(1).bits()) {
                (Some((a, b, u)), Some((k, k2, _)))
                    if k == k2 && k > 0 && a >= 0 && a / k == b / k =>
                {
                    V::range(a % k, b % k, u)
                }
                (Some((_, _, u)), Some((k, k2, _))) if k == k2 && k > 0 => V::range(0, k - 1, u),
                _ => V::Top { uni: all_uni },
            }),
            Op::And => out.push(match (s(0).bits(), s(1).bits()) {
                (Some((a, b, _)), Some((m, m2, _))) if a == b && m == m2 => V::c(a & m),
                (Some((a, b, u)), Some((c, e, w)))
                    if [a, b, c, e].iter().all(|x| (0..=1).contains(x)) =>
                {
                    // Predicates.
                    three(V::range(a, b, u), V::range(c, e, w), BoolOp::And)
                }
                (Some((a, b, u)), Some((m, m2, _))) if m == m2 && a >= 0 => {
                    // Bits above the highest bit that differs between a and b are the same in
                    // every lane: `%tid.x & 96` is the warp's (w & 3) << 5 for all its lanes,
                    // `%tid.x & -32` its first thread's index.
                    let low = if a == b {
                        0
                    } else {
                        (1i64 << (64 - (a ^ b).leading_zeros())) - 1
                    };
                    let fixed = a & m & !low;
                    if m & low == 0 {
                        V::range(fixed, fixed, true)
                    } else {
                        V::range(fixed, fixed | (m & low), u)
                    }
                }
                _ => V::Top { uni: all_uni },
            }),
            Op::Or | Op::Xor => {
                let bo = if d.op == Op::Or {
                    BoolOp::Or
                } else {
                    BoolOp::Xor
                };
                out.push(match (s(0).bits(), s(1).bits()) {
                    (Some((a, b, _)), Some((c, e, _))) if a == b && c == e => {
                        V::c(if bo == BoolOp::Or { a | c } else { a ^ c })
                    }
                    (Some((a, b, _)), Some((c, e, _))) if a >= 0 && b <= 1 && c >= 0 && e <= 1 => {
                        three(s(0), s(1), bo)
                    }
                    _ => V::Top { uni: all_uni },
                })
            }
            Op::Not => out.push(match s(0).truth() {
                Some(t) if matches!(s(0).bits(), Some((0..=1, 0..=1, _))) => V::c(i64::from(!t)),
                _ => match s(0).bits() {
                    Some((0, 1, u)) => V::range(0, 1, u),
                    _ => V::Top { uni: all_uni },
                },
            }),
            Op::Setp(c, b) => {
                let p = cmp(s(0), s(1), c);
                let p = match b {
                    Some(bo) => three(p, s(2), bo),
                    None => p,
                };
                out.push(p);
                if d.dests.len() > 1 {
                    out.push(match p.truth() {
                        Some(t) => V::c(i64::from(!t)),
                        None => V::range(0, 1, p.uni()),
                    });
                }
            }
            Op::Selp => out.push(match s(2).truth() {
                Some(true) => s(0),
                Some(false) => s(1),
                None => {
                    let j = s(0).join(s(1));
                    if s(2).uni() {
                        j
                    } else {
                        V::Top { uni: false }.join(j)
                    }
                }
            }),
            Op::ShflIdx => out.push(if d.srcs.get(1).is_some_and(|&x| self.src(env, x).uni()) {
                match s(0) {
                    V::I { lo, hi, .. } => V::range(lo, hi, true),
                    _ => V::Top { uni: true },
                }
            } else {
                V::Top { uni: false }
            }),
            Op::Elect => {
                // `elect.sync d|p, membermask`: d is the elected lane (uniform), p true in one lane.
                out.push(V::Top { uni: true });
                out.push(V::range(0, 1, false));
            }
            Op::Uniform => out.push(V::Top { uni: true }),
            Op::Load => out.push(V::Top {
                uni: d.srcs.first().is_none_or(|&x| self.src(env, x).uni()),
            }),
            Op::Varying => out.push(V::Top { uni: false }),
            Op::NoDest => {}
            Op::Generic => out.push(V::Top { uni: all_uni }),
        }
        for (k, &r) in d.dests.iter().enumerate() {
            if r >= slots {
                continue;
            }
            let v = out
                .get(k)
                .copied()
                .unwrap_or_else(|| out.first().copied().unwrap_or(V::Top { uni: false }));
            let v = if d.op == Op::Elect && k == 0 && d.dests.len() == 1 {
                V::range(0, 1, false)
            } else {
                v
            };
            env[r as usize] = if guard_known_true {
                v
            } else {
                env[r as usize].join(v)
            };
        }
    }
}

fn three(a: V, b: V, op: BoolOp) -> V {
    let (ta, tb) = (a.truth(), b.truth());
    let r = match op {
        BoolOp::And => match (ta, tb) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        BoolOp::Or => match (ta, tb) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
        BoolOp::Xor => match (ta, tb) {
            (Some(x), Some(y)) => Some(x != y),
            _ => None,
        },
    };
    match r {
        Some(t) => V::c(i64::from(t)),
        None => {
            // Unknown: uniform when the undecided operands are (a decided operand that does not
            // settle the result contributes its constant, which is uniform).
            let u = (ta.is_some() || a.uni()) && (tb.is_some() || b.uni());
            V::range(0, 1, u)
        }
    }
}

fn cmp(a: V, b: V, c: Cmp) -> V {
    let uni = a.uni() && b.uni();
    let (Some((al, ah, _)), Some((bl, bh, _))) = (a.bits(), b.bits()) else {
        return V::range(0, 1, uni);
    };
    let r = match c {
        Cmp::Lt => decide(ah < bl, al >= bh),
        Cmp::Le => decide(ah <= bl, al > bh),
        Cmp::Gt => decide(al > bh, ah <= bl),
        Cmp::Ge => decide(al >= bh, ah < bl),
        Cmp::Eq => decide(al == ah && bl == bh && al == bl, ah < bl || bh < al),
        Cmp::Ne => decide(ah < bl || bh < al, al == ah && bl == bh && al == bl),
        Cmp::Other => None,
    };
    match r {
        Some(t) => V::c(i64::from(t)),
        None => V::range(0, 1, uni),
    }
}

fn decide(all: bool, none: bool) -> Option<bool> {
    if all {
        Some(true)
    } else if none {
        Some(false)
    } else {
        None
    }
}

/// The register values at the entry of every block, for one warp: a forward data flow with
/// joins at merges and widening after a few visits of a block (loop heads).
pub(crate) fn block_entries(
    cfg: &Cfg<'_>,
    ev: &Eval<'_, '_>,
    guard_of: &dyn Fn(&[V], usize) -> Option<bool>,
) -> Vec<Option<Vec<V>>> {
    /// Visits of a block after which its entry values are widened (loop counters).
    const WIDEN_AFTER: u32 = 3;
    let nb = cfg.blocks.len();
    let nregs = ev.dec.slots;
    let mut entry: Vec<Option<Vec<V>>> = vec![None; nb];
    let mut visits = vec![0u32; nb];
    let rpo = cfg.reverse_postorder();
    let mut order = vec![usize::MAX; nb];
    for (k, &b) in rpo.iter().enumerate() {
        order[b] = k;
    }
    let mut work: std::collections::BTreeSet<(usize, BlockId)> = std::collections::BTreeSet::new();
    if nb > 0 {
        entry[0] = Some(vec![V::Bot; nregs]);
        work.insert((order[0], 0));
    }
    while let Some((_, b)) = work.pop_first() {
        let mut env = entry[b].clone().unwrap_or_else(|| vec![V::Bot; nregs]);
        for ii in cfg.blocks[b].instrs.clone() {
            let g = guard_of(&env, ii);
            if g != Some(false) {
                ev.step(&mut env, ii, g == Some(true));
            }
        }
        let last = cfg.blocks[b]
            .instrs
            .end
            .checked_sub(1)
            .filter(|_| !cfg.blocks[b].instrs.is_empty());
        for e in &cfg.blocks[b].succs {
            // Prune edges the branch condition rules out for this warp.
            if let Some(l) = last {
                let g = guard_of(&env, l);
                let is_branch = matches!(cfg.class(l), tcgen05_ir::ptx::cfg::Class::Branch { .. });
                if is_branch {
                    use tcgen05_ir::ptx::cfg::EdgeKind;
                    match (e.kind, g) {
                        (EdgeKind::Taken, Some(false)) | (EdgeKind::Fallthrough, Some(true)) => {
                            continue;
                        }
                        _ => {}
                    }
                }
            }
            let s = e.to;
            let changed = match &mut entry[s] {
                None => {
                    entry[s] = Some(env.clone());
                    true
                }
                Some(old) => {
                    visits[s] += 1;
                    let widen = visits[s] > WIDEN_AFTER;
                    let mut ch = false;
                    for (o, &n) in old.iter_mut().zip(env.iter()) {
                        let j = o.join(n);
                        let j = if widen { V::widen(*o, j) } else { j };
                        if j != *o {
                            *o = j;
                            ch = true;
                        }
                    }
                    ch
                }
            };
            if changed && order[s] != usize::MAX {
                work.insert((order[s], s));
            }
        }
    }
    entry
}

/// For every instruction of the blocks this warp reaches: the value of its guard predicate
/// (`V::c(1)` when unguarded), and for `tcgen05.alloc` its nCols when known.
pub(crate) fn instr_facts(
    cfg: &Cfg<'_>,
    ev: &Eval<'_, '_>,
    entries: &[Option<Vec<V>>],
    guard_of: &dyn Fn(&[V], usize) -> Option<bool>,
) -> (Vec<V>, Vec<Option<u32>>) {
    let n = cfg.instrs.len();
    let mut gv = vec![V::Bot; n];
    let mut ncols = vec![None; n];
    for (b, e) in entries.iter().enumerate() {
        let Some(e) = e else { continue };
        let mut env = e.clone();
        for ii in cfg.blocks[b].instrs.clone() {
            let ins = cfg.instrs[ii];
            gv[ii] = match ins.guard {
                None => V::c(1),
                Some(g) => ev
                    .dec
                    .regs
                    .get(g.pred)
                    .and_then(|&r| env.get(r as usize).copied())
                    .unwrap_or(V::Top { uni: true }),
            };
            if matches!(ins.form, Some(tcgen05_ir::Form::Alloc(_))) {
                ncols[ii] = match ins.operands.get(1) {
                    Some(Operand::Imm(v)) => u32::try_from(*v).ok(),
                    Some(Operand::Reg(r)) => ev.dec.regs.get(r).and_then(|&x| {
                        match env.get(x as usize).copied().unwrap_or(V::Top { uni: true }) {
                            V::I { lo, hi, .. } if lo == hi => u32::try_from(lo).ok(),
                            _ => None,
                        }
                    }),
                    _ => None,
                };
            }
            let g = guard_of(&env, ii);
            if g != Some(false) {
                ev.step(&mut env, ii, g == Some(true));
            }
        }
    }
    (gv, ncols)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::ptx::parse_module;

    /// The guard values of every guarded instruction of `body` for warp `w` of a 128-thread
    /// CTA, in order.
    fn guards(body: &str, w: u32) -> Vec<V> {
        let src = format!(
            ".version 8.6\n.target sm_100a\n.entry k()\n.reqntid 128, 1, 1\n{{\n{body}\nret;\n}}\n"
        );
        let m = parse_module(&src, "t").unwrap();
        let cfg = Cfg::new(&m.functions[0], Some(&src));
        let dec = Decoded::new(&cfg);
        let ev = Eval::new(
            &dec,
            &WarpCtx {
                warp: w,
                rank: None,
                ntid: Some((128, 1, 1)),
                tid_shape: Some((128, 1, 1)),
            },
        );
        let guard_of = |env: &[V], ii: usize| -> Option<bool> {
            let Some(g) = cfg.instrs[ii].guard else {
                return Some(true);
            };
            let r = *dec.regs.get(g.pred)?;
            env.get(r as usize)?.truth().map(|t| t != g.negated)
        };
        let entries = block_entries(&cfg, &ev, &guard_of);
        let (gv, _) = instr_facts(&cfg, &ev, &entries, &guard_of);
        (0..cfg.instrs.len())
            .filter(|&i| cfg.instrs[i].guard.is_some())
            .map(|i| gv[i])
            .collect()
    }

    const T: V = V::I {
        lo: 1,
        hi: 1,
        uni: true,
    };
    const F: V = V::I {
        lo: 0,
        hi: 0,
        uni: true,
    };

    #[test]
    fn warp_role_conditions_are_constant_per_warp() {
        // Warp w holds %tid.x in [32w, 32w+31].
        let body = "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\nand.b32 %r2, %r1, 96;\nsetp.ne.b32 %p2, %r2, 0;\n\
                    shr.u32 %r3, %r1, 5;\nshfl.sync.idx.b32 %r4, %r3, 0, 31, -1;\nsetp.eq.u32 %p3, %r4, 2;\n\
                    @%p1 add.s32 %r9, 1, 1;\n@%p2 add.s32 %r9, 1, 1;\n@%p3 add.s32 %r9, 1, 1;";
        assert_eq!(guards(body, 0), [T, F, F]);
        assert_eq!(guards(body, 2), [F, T, T]);
        assert_eq!(guards(body, 3), [F, T, F]);
    }

    #[test]
    fn lane_conditions_are_divergent_and_parameters_uniform() {
        let body = "mov.u32 %r1, %laneid;\nsetp.eq.u32 %p1, %r1, 0;\nmov.u32 %r2, %tid.x;\nsetp.eq.u32 %p2, %r2, 0;\n\
                    elect.sync %r3|%p3, -1;\nld.param.u32 %r4, [n];\nsetp.eq.u32 %p4, %r4, 0;\n\
                    @%p1 add.s32 %r9, 1, 1;\n@%p2 add.s32 %r9, 1, 1;\n@%p3 add.s32 %r9, 1, 1;\n@%p4 add.s32 %r9, 1, 1;";
        let g = guards(body, 0);
        assert!(
            g[..3].iter().all(|v| v.truth().is_none() && !v.uni()),
            "{g:?}"
        );
        assert!(g[3].truth().is_none() && g[3].uni(), "{g:?}");
        // In warp 1, `%tid.x == 0` is false in every lane.
        assert_eq!(guards(body, 1)[1], F);
    }

    #[test]
    fn loop_counters_widen_and_the_analysis_ends() {
        let body =
            "mov.u32 %r1, 0;\n$L:\nadd.s32 %r1, %r1, 1;\nsetp.lt.u32 %p1, %r1, 1000;\n@%p1 bra $L;";
        let g = guards(body, 0);
        assert!(g[0].truth().is_none() && g[0].uni(), "{g:?}");
    }
}
