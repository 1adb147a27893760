//! Reads a module printed by [`super::emit`] back into the [`Program`] it came from.
//!
//! The lifter parses the module with [`super::parse_module`], then walks each body with a small
//! abstract interpreter over the printer's idioms: it tracks what each register holds (a slot
//! read, a TMEM address, an immediate, a descriptor under construction, a condition) and turns
//! each tcgen05 instruction and scaffolding instruction into its statement, reading every
//! qualifier and operand from the instruction text. Structured statements are found by their
//! labels (`$I<n>_else`, `$L<n>_top`, `$S<n>_top`, `$MW<n>_top`, `$F<n>_top`). Observation
//! records are derived from the layout and skipped. The launch's cluster count, which PTX
//! cannot express, is read from the `// launch:` comment the printer writes.

use super::parse::{Function, Instr, Operand, ParseError, Stmt as PStmt, parse_module};
use crate::form::{Form, MmaForm};
use crate::observe;
use crate::program::*;
use crate::qual::*;
use std::collections::HashMap;

/// Why a module is not one this crate printed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiftError {
    /// The text does not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// It parses, but is not in the printer's shape.
    #[error("line {line}: {msg} (not a module printed by tcgen05-fuzz)")]
    Shape {
        /// 1-based line (0 when not tied to a line).
        line: u32,
        /// What was expected.
        msg: String,
    },
}

fn shape(line: u32, msg: impl Into<String>) -> LiftError {
    LiftError::Shape {
        line,
        msg: msg.into(),
    }
}

/// What a register holds, as far as the printer's idioms go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val<'a> {
    Imm(i64),
    /// `ld.shared.u32` of an alloc slot.
    Slot(u8),
    /// A TMEM address.
    Taddr(TBase, u32, bool),
    /// `%lane & 1`.
    LaneBit,
    /// `value << (%lane & 1)`.
    NColsDiv(u32),
    /// A symbol's address plus an offset (shared or generic).
    Sym(&'a str, u32),
    /// A descriptor's start address field under construction.
    DescStart(&'a str, u32),
    /// A finished descriptor.
    Desc(SmemDesc),
    /// A `mapa` of an mbarrier into cluster CTA `rank`.
    Remote(u32, u8),
    /// `mad.lo.u32 r, %lane, mul, add` of a st value.
    StValue(u32),
    /// A predicate holding a condition.
    Cond(Cond),
    /// A predicate holding a constant.
    Pred(bool),
}

struct Lifter<'a, 'm> {
    instrs: Vec<&'m PStmt<'a>>,
    i: usize,
    env: HashMap<&'a str, Val<'a>>,
    /// Addend of the first `mad` since the last st: register 0's, i.e. the seed.
    last_st_seed: Option<u32>,
}

fn imm(o: &Operand<'_>) -> Option<i64> {
    match o {
        Operand::Imm(v) => Some(*v),
        _ => None,
    }
}

fn region_of(sym: &str) -> Option<u8> {
    sym.strip_prefix("tc_data")?.parse().ok()
}

/// Lifts a printed module back to its program.
pub fn lift(src: &str) -> Result<Program, LiftError> {
    let m = parse_module(src, "<printed module>")?;
    let version = m.version.ok_or_else(|| shape(0, "no .version"))?;
    let target = m
        .target
        .first()
        .and_then(|t| Target::from_ptx(t))
        .ok_or_else(|| shape(0, "no .target this crate knows"))?;
    let mut smem = Smem {
        slots: 0,
        mbarriers: 0,
        regions: vec![],
    };
    for g in &m.globals {
        let name_at = g
            .words
            .iter()
            .position(|w| w.starts_with("tc_"))
            .ok_or_else(|| shape(g.pos.line, "unexpected global"))?;
        let n: u32 = g
            .words
            .get(name_at + 2)
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| shape(g.pos.line, "expected an array size"))?;
        match g.words[name_at] {
            "tc_slot" => smem.slots = n as u8,
            "tc_mbar" => smem.mbarriers = n as u8,
            "tc_scratch" => {}
            name => {
                let r = region_of(name)
                    .ok_or_else(|| shape(g.pos.line, format!("unexpected global {name}")))?;
                if usize::from(r) != smem.regions.len() {
                    return Err(shape(g.pos.line, "data regions out of order"));
                }
                smem.regions.push(n);
            }
        }
    }
    let launch_line = src
        .lines()
        .find_map(|l| l.strip_prefix("// launch: "))
        .ok_or_else(|| shape(0, "no `// launch:` comment"))?;
    let field = |k: &str| -> Result<u32, LiftError> {
        launch_line
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('=')?.parse().ok())
            .ok_or_else(|| shape(0, format!("`// launch:` comment lacks {k}")))
    };
    let entry = m
        .functions
        .iter()
        .find(|f| f.is_entry)
        .ok_or_else(|| shape(0, "no .entry"))?;
    let declare_cluster = entry
        .directives
        .iter()
        .any(|d| d[0] == ".reqnctapercluster");
    let launch = Launch {
        target,
        ptx_version: version,
        cluster_size: field("cluster_size")? as u8,
        clusters: field("clusters")? as u16,
        warps_per_cta: field("warps_per_cta")? as u8,
        declare_cluster,
    };
    let mut funcs = Vec::new();
    for (i, f) in m
        .functions
        .iter()
        .filter(|f| !f.is_entry && f.body.is_some())
        .enumerate()
    {
        if f.name != format!("f{i}") {
            return Err(shape(
                f.pos.line,
                format!("expected function f{i}, found {}", f.name),
            ));
        }
        funcs.push(Func {
            body: lift_func(f)?,
        });
    }
    let warps = lift_entry(entry)?;
    Ok(Program {
        launch,
        smem,
        warps,
        funcs,
    })
}

fn body<'a, 'm>(f: &'m Function<'a>) -> Vec<&'m PStmt<'a>> {
    f.body
        .iter()
        .flatten()
        .filter(|s| !matches!(s, PStmt::Decl(..)))
        .collect()
}

fn lift_func(f: &Function<'_>) -> Result<Vec<Stmt>, LiftError> {
    let mut lf = Lifter {
        instrs: body(f),
        i: 0,
        env: HashMap::new(),
        last_st_seed: None,
    };
    // Preamble: special registers, the param, the lane's checkpoint address.
    lf.skip_preamble(|ins| {
        ins.opcode == "add.u64" && ins.operands.first() == Some(&Operand::Reg("%obsl"))
    })?;
    let out = lf.block(&|s| matches!(s, PStmt::Instr(i) if i.opcode == "ret"))?;
    Ok(out)
}

fn lift_entry(f: &Function<'_>) -> Result<Vec<Vec<Stmt>>, LiftError> {
    let mut lf = Lifter {
        instrs: body(f),
        i: 0,
        env: HashMap::new(),
        last_st_seed: None,
    };
    lf.skip_preamble(|ins| ins.opcode == "bra.uni")?;
    let mut warps = Vec::new();
    while let Some(PStmt::Label(name, pos)) = lf.instrs.get(lf.i).copied() {
        if *name == "$END" {
            break;
        }
        if *name != format!("$W{}", warps.len()) {
            return Err(shape(pos.line, format!("expected label $W{}", warps.len())));
        }
        lf.i += 1;
        // add obsw, mul.wide, add obsl, checkpoint START.
        lf.skip_preamble(|ins| ins.opcode == "st.global.u32")?;
        let done = observe::CHECKPOINT_DONE as i64;
        let code = lf.block(&|s| {
            matches!(s, PStmt::Instr(i) if i.opcode == "st.global.u32"
                && i.operands.first() == Some(&Operand::Addr { base: "%obsl", offset: 0 })
                && i.operands.get(1).and_then(imm) == Some(done))
        })?;
        lf.i += 1;
        match lf.instrs.get(lf.i) {
            Some(PStmt::Instr(i)) if i.opcode == "bra.uni" => lf.i += 1,
            _ => return Err(shape(0, "expected bra.uni $END after a warp's code")),
        }
        warps.push(code);
    }
    Ok(warps)
}

impl<'a, 'm> Lifter<'a, 'm> {
    fn skip_preamble(&mut self, last: impl Fn(&Instr<'a>) -> bool) -> Result<(), LiftError> {
        while let Some(s) = self.instrs.get(self.i) {
            self.i += 1;
            if let PStmt::Instr(ins) = s
                && last(ins)
            {
                return Ok(());
            }
        }
        Err(shape(0, "unexpected end of body in the preamble"))
    }

    fn next_instr(&mut self) -> Result<&'m Instr<'a>, LiftError> {
        match self.instrs.get(self.i) {
            Some(PStmt::Instr(i)) => {
                self.i += 1;
                Ok(i)
            }
            Some(PStmt::Label(l, p)) => Err(shape(p.line, format!("unexpected label {l}"))),
            _ => Err(shape(0, "unexpected end of body")),
        }
    }

    fn expect_label(&mut self, name: &str) -> Result<(), LiftError> {
        match self.instrs.get(self.i) {
            Some(PStmt::Label(l, _)) if *l == name => {
                self.i += 1;
                Ok(())
            }
            Some(PStmt::Label(l, p)) => {
                Err(shape(p.line, format!("expected label {name}, found {l}")))
            }
            Some(PStmt::Instr(i)) => Err(shape(
                i.pos.line,
                format!("expected label {name}, found {}", i.opcode),
            )),
            _ => Err(shape(0, format!("expected label {name}"))),
        }
    }

    /// Skips up to and including the label `name`.
    fn skip_past_label(&mut self, name: &str) -> Result<(), LiftError> {
        while let Some(s) = self.instrs.get(self.i) {
            self.i += 1;
            if matches!(s, PStmt::Label(l, _) if *l == name) {
                return Ok(());
            }
        }
        Err(shape(0, format!("label {name} not found")))
    }

    fn val(&self, o: &Operand<'a>, line: u32) -> Result<Val<'a>, LiftError> {
        match o {
            Operand::Imm(v) => Ok(Val::Imm(*v)),
            Operand::Reg(r) => self
                .env
                .get(r)
                .copied()
                .ok_or_else(|| shape(line, format!("register {r} holds nothing known"))),
            _ => Err(shape(line, "expected a register or immediate")),
        }
    }

    fn tmem(&self, o: &Operand<'a>, line: u32) -> Result<TmemRef, LiftError> {
        let r = match o {
            Operand::Addr { base, offset: 0 } => Operand::Reg(base),
            other => other.clone(),
        };
        match self.val(&r, line)? {
            Val::Taddr(base, off, divergent) => Ok(TmemRef {
                base,
                lane: (off >> 16) as u16,
                col: off as u16,
                divergent,
            }),
            Val::Imm(v) => Ok(TmemRef {
                base: TBase::Abs,
                lane: (v >> 16) as u16,
                col: v as u16,
                divergent: false,
            }),
            other => Err(shape(
                line,
                format!("expected a TMEM address, register holds {other:?}"),
            )),
        }
    }

    fn ncols(&self, o: &Operand<'a>, line: u32) -> Result<NCols, LiftError> {
        match o {
            Operand::Imm(v) => Ok(NCols {
                value: *v as u32,
                form: NColsForm::Imm,
            }),
            _ => match self.val(o, line)? {
                Val::Imm(v) => Ok(NCols {
                    value: v as u32,
                    form: NColsForm::Reg,
                }),
                Val::NColsDiv(v) => Ok(NCols {
                    value: v,
                    form: NColsForm::RegDivergent,
                }),
                other => Err(shape(
                    line,
                    format!("expected nCols, register holds {other:?}"),
                )),
            },
        }
    }

    fn desc(&self, o: &Operand<'a>, line: u32) -> Result<SmemDesc, LiftError> {
        match self.val(o, line)? {
            Val::Desc(d) => Ok(d),
            other => Err(shape(
                line,
                format!("expected a descriptor, register holds {other:?}"),
            )),
        }
    }

    fn set(&mut self, o: &Operand<'a>, v: Val<'a>) {
        if let Operand::Reg(r) = o {
            self.env.insert(r, v);
        }
    }

    /// Lifts statements until `stop` matches (the stopping statement is not consumed).
    fn block(&mut self, stop: &dyn Fn(&PStmt<'a>) -> bool) -> Result<Vec<Stmt>, LiftError> {
        let mut out = Vec::new();
        loop {
            let Some(s) = self.instrs.get(self.i).copied() else {
                return Err(shape(0, "unexpected end of body"));
            };
            if stop(s) {
                return Ok(out);
            }
            self.i += 1;
            match s {
                PStmt::Label(name, pos) => self.structured(name, pos.line, &mut out)?,
                PStmt::Instr(ins) => self.instr(ins, &mut out)?,
                PStmt::Decl(..) => {}
            }
        }
    }

    fn structured(
        &mut self,
        name: &'a str,
        line: u32,
        out: &mut Vec<Stmt>,
    ) -> Result<(), LiftError> {
        let (kind, rest) = name.trim_start_matches('$').split_at(
            name.trim_start_matches('$')
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(0),
        );
        let n = rest.split('_').next().unwrap_or("");
        let count_of = |ins: &Instr<'a>| {
            ins.operands
                .get(2)
                .and_then(imm)
                .ok_or_else(|| shape(ins.pos.line, "expected a bound"))
        };
        match (kind, rest.ends_with("_top")) {
            ("L", true) | ("S", true) => {
                let setp = self.next_instr()?;
                let count = count_of(setp)?;
                self.next_instr()?; // @p bra end
                let top = format!("$L{n}_top");
                let end = format!("${kind}{n}_end");
                if kind == "S" {
                    self.skip_past_label(&end)?;
                    out.push(Stmt::Spin(count as u32));
                } else {
                    let body = self.block(&|s| matches!(s, PStmt::Instr(i) if i.opcode == "bra" && i.operands.first() == Some(&Operand::Sym(&top))))?;
                    self.i += 1;
                    self.expect_label(&end)?;
                    out.push(Stmt::Loop {
                        count: count as u8,
                        body,
                    });
                }
                Ok(())
            }
            ("MW", true) => {
                let tw = self.next_instr()?;
                let scope = if tw.opcode.contains(".cluster.") {
                    Scope::Cluster
                } else {
                    Scope::Cta
                };
                let bar = match tw.operands.get(1) {
                    Some(Operand::Addr {
                        base: "tc_mbar",
                        offset,
                    }) => (*offset / 8) as u8,
                    _ => return Err(shape(tw.pos.line, "expected [tc_mbar+k] in try_wait")),
                };
                let parity = tw
                    .operands
                    .get(2)
                    .and_then(imm)
                    .ok_or_else(|| shape(tw.pos.line, "expected a parity"))?
                    != 0;
                self.next_instr()?; // @p bra done
                self.next_instr()?; // add
                let setp = self.next_instr()?;
                let max_tries = count_of(setp)? as u32;
                self.skip_past_label(&format!("$MW{n}_rec"))?;
                out.push(Stmt::MbarWait {
                    bar,
                    parity,
                    scope,
                    max_tries,
                });
                Ok(())
            }
            ("F", true) => {
                self.next_instr()?; // setp
                self.next_instr()?; // @p bra end
                let mad = self.next_instr()?;
                let seed = mad
                    .operands
                    .get(3)
                    .and_then(imm)
                    .ok_or_else(|| shape(mad.pos.line, "expected the fill seed"))?
                    as u32;
                let mut elem = FillElem::Word;
                let region = loop {
                    let ins = self.next_instr()?;
                    match ins.opcode {
                        "cvt.rn.f16.s32" => elem = FillElem::F16Small,
                        "cvt.rn.f32.s32" => elem = FillElem::Tf32Small,
                        // After the two cvts of a Bf16Small fill (the printer's prmt).
                        "prmt.b32" => elem = FillElem::Bf16Small,
                        "add.u32" if ins.operands.get(2).and_then(imm) == Some(248) => {
                            elem = FillElem::I8Small
                        }
                        // 123: the printer's ScaleSmall fill (values::fill_word).
                        "add.u32" if ins.operands.get(2).and_then(imm) == Some(123) => {
                            elem = FillElem::ScaleSmall
                        }
                        // 0x44444444: the printer's SpMeta fill (values::fill_word).
                        "or.b32" if ins.operands.get(2).and_then(imm) == Some(0x4444_4444) => {
                            elem = FillElem::SpMeta
                        }
                        "mov.u32" => {
                            if let Some(Operand::Sym(s)) = ins.operands.get(1) {
                                break region_of(s)
                                    .ok_or_else(|| shape(ins.pos.line, "expected tc_data<n>"))?;
                            }
                        }
                        _ => {}
                    }
                };
                self.skip_past_label(&format!("$F{n}_end"))?;
                out.push(Stmt::Fill { region, seed, elem });
                Ok(())
            }
            _ => Err(shape(line, format!("unexpected label {name}"))),
        }
    }

    fn instr(&mut self, ins: &'m Instr<'a>, out: &mut Vec<Stmt>) -> Result<(), LiftError> {
        let line = ins.pos.line;
        let ops = &ins.operands;
        if let Some(e) = &ins.ill_formed {
            return Err(shape(line, format!("ill-formed `{}`: {e}", ins.opcode)));
        }
        if let Some(form) = ins.form {
            out.push(Stmt::Tc(self.op(form, ins)?));
            return Ok(());
        }
        let op1 = |k: usize| {
            ops.get(k)
                .ok_or_else(|| shape(line, format!("{} lacks operand {k}", ins.opcode)))
        };
        match ins.opcode {
            "mov.u32" | "mov.b32" | "mov.u64" | "mov.b64" | "mov.b16" => {
                let v = match op1(1)? {
                    Operand::Imm(v) => Val::Imm(*v),
                    Operand::Sym(s) => Val::Sym(s, 0),
                    // `mov %r, %lane` (fill index) and `mov.b32 %r, {%h, %h}` carry nothing we need.
                    _ => Val::Imm(0),
                };
                self.set(op1(0)?, v);
            }
            "ld.shared.u32" => match op1(1)? {
                Operand::Addr {
                    base: "tc_slot",
                    offset,
                } => self.set(op1(0)?, Val::Slot((*offset / 4) as u8)),
                _ => return Err(shape(line, "expected ld.shared.u32 of tc_slot")),
            },
            "ld.shared.b32" => match op1(1)? {
                Operand::Addr {
                    base: "tc_slot",
                    offset,
                } => out.push(Stmt::ObserveAddr {
                    slot: (*offset / 4) as u8,
                }),
                _ => return Err(shape(line, "expected ld.shared.b32 of tc_slot")),
            },
            "add.u32" | "add.u64" => {
                let dst = op1(0)?;
                if matches!(dst, Operand::Reg("%obsl" | "%obsw" | "%obscta"))
                    || matches!(op1(2)?, Operand::Reg("%obsw"))
                {
                    return Ok(());
                }
                let a = self.val(op1(1)?, line)?;
                let b = self.val(op1(2)?, line)?;
                let v = match (a, b) {
                    (Val::Slot(s), Val::Imm(o)) => Val::Taddr(TBase::Slot(s), o as u32, false),
                    (Val::Taddr(base, o, _), Val::LaneBit) => Val::Taddr(base, o, true),
                    (Val::Imm(o), Val::LaneBit) => Val::Taddr(TBase::Abs, o as u32, true),
                    (Val::Sym(s, o), Val::Imm(k)) => Val::Sym(s, o + k as u32),
                    (Val::Imm(x), Val::Imm(y)) => Val::Imm(x + y),
                    other => return Err(shape(line, format!("unexpected add of {other:?}"))),
                };
                self.set(dst, v);
            }
            "and.b32" => {
                if op1(1)? == &Operand::Reg("%lane") {
                    self.set(op1(0)?, Val::LaneBit);
                }
                // `and` of a descriptor start (0x3FFFF) keeps the symbol; of fill temps: ignored.
            }
            "shl.b32" => {
                if let (Ok(Val::Imm(v)), Ok(Val::LaneBit)) =
                    (self.val(op1(1)?, line), self.val(op1(2)?, line))
                {
                    self.set(op1(0)?, Val::NColsDiv(v as u32));
                }
            }
            "shr.u32" | "sub.s32" | "or.b32" | "cvt.rn.f16.s32" | "cvt.rn.f32.s32" => {}
            "cvt.u64.u32" => {
                if let Val::Sym(s, o) = self.val(op1(1)?, line)? {
                    self.set(op1(0)?, Val::DescStart(s, o));
                }
            }
            "or.b64" => match (self.val(op1(1)?, line)?, op1(2)?) {
                (Val::DescStart(s, o), Operand::Imm(bits)) => {
                    let region = region_of(s)
                        .ok_or_else(|| shape(line, "descriptor of an unknown symbol"))?;
                    self.set(
                        op1(0)?,
                        Val::Desc(SmemDesc::from_fields(region, o, *bits as u64)),
                    );
                }
                _ => return Err(shape(line, "unexpected or.b64")),
            },
            "cvta.shared.u64" | "cvta.global.u64" => {}
            "mad.lo.u32" => {
                if op1(1)? == &Operand::Reg("%lane") {
                    let add = imm(op1(3)?).unwrap_or(0) as u32;
                    // The first `mad` of a st is register 0: its addend is the seed.
                    self.last_st_seed.get_or_insert(add);
                    self.set(op1(0)?, Val::StValue(add));
                }
            }
            "mul.wide.u32" => {}
            "setp.lt.u32" | "setp.eq.u32" | "setp.ne.u32" | "setp.ge.u32" => {
                let n = op1(2)?;
                let c = match (ins.opcode, op1(1)?) {
                    ("setp.lt.u32", Operand::Reg("%lane")) => {
                        Val::Cond(Cond::LaneLt(imm(n).unwrap_or(0) as u8))
                    }
                    ("setp.eq.u32", Operand::Reg("%lane")) => {
                        Val::Cond(Cond::LaneEq(imm(n).unwrap_or(0) as u8))
                    }
                    ("setp.eq.u32", Operand::Reg("%ctarank")) => {
                        Val::Cond(Cond::CtaRank(imm(n).unwrap_or(0) as u8))
                    }
                    ("setp.ne.u32", Operand::Reg("%ctaodd")) => Val::Cond(Cond::CtaOdd),
                    ("setp.eq.u32", Operand::Reg("%clid")) => {
                        Val::Cond(Cond::Cluster(imm(n).unwrap_or(0) as u16))
                    }
                    ("setp.eq.u32", Operand::Reg("%warp")) => {
                        Val::Cond(Cond::WarpRank(imm(n).unwrap_or(0) as u8))
                    }
                    ("setp.ne.u32", r) => match self.val(r, line)? {
                        Val::Imm(v) => Val::Pred(v != 0),
                        other => {
                            return Err(shape(line, format!("unexpected setp.ne of {other:?}")));
                        }
                    },
                    _ => return Err(shape(line, format!("unexpected {}", ins.opcode))),
                };
                self.set(op1(0)?, c);
            }
            "elect.sync" => {
                if let Operand::Pair(_, p) = op1(0)? {
                    self.set(p, Val::Cond(Cond::ElectOne));
                }
            }
            "bra" if ins.guard.is_some_and(|g| g.negated) => {
                let g = ins.guard.expect("checked");
                let Val::Cond(cond) = self.val(&Operand::Reg(g.pred), line)? else {
                    return Err(shape(line, "guard is not a condition"));
                };
                let Some(Operand::Sym(target)) = ops.first() else {
                    return Err(shape(line, "bra without a label"));
                };
                let n = target.trim_start_matches("$I").trim_end_matches("_else");
                let end = format!("$I{n}_end");
                let then = self.block(&|s| matches!(s, PStmt::Instr(i) if i.opcode == "bra" && i.operands.first() == Some(&Operand::Sym(&end))))?;
                self.i += 1;
                self.expect_label(target)?;
                let els = self.block(&|s| matches!(s, PStmt::Label(l, _) if *l == end))?;
                self.i += 1;
                out.push(Stmt::If { cond, then, els });
            }
            "call" => match ops.first() {
                Some(Operand::Sym(f)) => {
                    let n = f
                        .strip_prefix('f')
                        .and_then(|n| n.parse().ok())
                        .ok_or_else(|| shape(line, "call of an unknown function"))?;
                    out.push(Stmt::Call(n));
                }
                _ => return Err(shape(line, "call without a function name")),
            },
            "st.global.u32" => {
                if let (
                    Some(Operand::Addr {
                        base: "%obsl",
                        offset: 0,
                    }),
                    Some(Operand::Imm(v)),
                ) = (ops.first(), ops.get(1))
                {
                    if *v == i64::from(observe::CHECKPOINT_EXIT) {
                        match self.next_instr()? {
                            e if e.opcode == "exit" => out.push(Stmt::Exit),
                            e => {
                                return Err(shape(
                                    e.pos.line,
                                    "expected exit after the exit checkpoint",
                                ));
                            }
                        }
                    } else {
                        out.push(Stmt::Checkpoint(*v as u16));
                    }
                }
                // Other stores are observation records: derived from the layout.
            }
            "barrier.sync" => out.push(Stmt::BarCta),
            "barrier.cluster.arrive.release" => out.push(Stmt::ClusterArrive { relaxed: false }),
            "barrier.cluster.arrive.relaxed" => out.push(Stmt::ClusterArrive { relaxed: true }),
            "barrier.cluster.wait.acquire" => out.push(Stmt::ClusterWait),
            "fence.mbarrier_init.release.cluster" => out.push(Stmt::FenceMbarInit),
            "fence.proxy.async.shared::cta" => out.push(Stmt::FenceProxyAsync),
            "mbarrier.init.shared::cta.b64" => match (ops.first(), ops.get(1).and_then(imm)) {
                (
                    Some(Operand::Addr {
                        base: "tc_mbar",
                        offset,
                    }),
                    Some(count),
                ) => {
                    out.push(Stmt::MbarInit {
                        bar: (*offset / 8) as u8,
                        count: count as u32,
                    });
                }
                _ => return Err(shape(line, "expected mbarrier.init [tc_mbar+k], count")),
            },
            "mbarrier.arrive.release.cta.shared::cta.b64" => match ops.get(1) {
                Some(Operand::Addr {
                    base: "tc_mbar",
                    offset,
                }) => out.push(Stmt::MbarArrive {
                    bar: (*offset / 8) as u8,
                    cta: None,
                }),
                _ => return Err(shape(line, "expected mbarrier.arrive _, [tc_mbar+k]")),
            },
            "mapa.shared::cluster.u32" => {
                let Val::Sym("tc_mbar", off) = self.val(op1(1)?, line)? else {
                    return Err(shape(line, "mapa of something other than an mbarrier"));
                };
                let rank = imm(op1(2)?).ok_or_else(|| shape(line, "expected a rank"))? as u8;
                self.set(op1(0)?, Val::Remote(off / 8, rank));
            }
            "mbarrier.arrive.release.cluster.shared::cluster.b64" => match ops.get(1) {
                Some(Operand::Addr { base, offset: 0 }) => match self
                    .val(&Operand::Reg(base), line)?
                {
                    Val::Remote(bar, rank) => out.push(Stmt::MbarArrive {
                        bar: bar as u8,
                        cta: Some(rank),
                    }),
                    other => return Err(shape(line, format!("remote arrive through {other:?}"))),
                },
                _ => return Err(shape(line, "expected mbarrier.arrive _, [%r]")),
            },
            other => return Err(shape(line, format!("unexpected instruction {other}"))),
        }
        Ok(())
    }

    fn op(&mut self, form: Form, ins: &Instr<'a>) -> Result<Op, LiftError> {
        let line = ins.pos.line;
        let ops = &ins.operands;
        let at = |k: usize| {
            ops.get(k)
                .ok_or_else(|| shape(line, format!("{} lacks operand {k}", ins.opcode)))
        };
        Ok(match form {
            Form::Alloc(form) => {
                let (slot, dst_global) = match at(0)? {
                    Operand::Addr {
                        base: "tc_slot",
                        offset,
                    } => ((*offset / 4) as u8, false),
                    Operand::Addr { base, offset: 0 } => {
                        match self.val(&Operand::Reg(base), line)? {
                            Val::Sym("tc_slot", o) => ((o / 4) as u8, false),
                            Val::Sym("tc_scratch", o) => ((o / 4) as u8, true),
                            other => return Err(shape(line, format!("alloc dst holds {other:?}"))),
                        }
                    }
                    _ => return Err(shape(line, "unexpected alloc dst")),
                };
                Op::Alloc {
                    form,
                    slot,
                    dst_global,
                    ncols: self.ncols(at(1)?, line)?,
                }
            }
            Form::Dealloc(form) => Op::Dealloc {
                form,
                taddr: self.tmem(at(0)?, line)?,
                ncols: self.ncols(at(1)?, line)?,
            },
            Form::Relinquish(form) => Op::Relinquish { form },
            Form::Wait(form) => Op::Wait { form },
            Form::Fence(kind) => Op::Fence { kind },
            Form::Ld(form) => {
                let Operand::Vec(regs) = at(0)? else {
                    return Err(shape(line, "expected a vector"));
                };
                let a = if form.red { 2 } else { 1 };
                Op::Ld {
                    form,
                    taddr: self.tmem(at(a)?, line)?,
                    split: ops.get(a + 1).and_then(imm).map(|v| v as u32),
                    nregs: regs.len() as u16,
                }
            }
            Form::St(form) => {
                let Some(Operand::Vec(regs)) = ops.last() else {
                    return Err(shape(line, "expected a vector"));
                };
                let split = if ops.len() == 3 {
                    imm(&ops[1]).map(|v| v as u32)
                } else {
                    None
                };
                // The seed is register 0's addend: st_add(seed, 0) == seed.
                let seed = self.st_seed(regs, line)?;
                self.last_st_seed = None;
                Op::St {
                    form,
                    taddr: self.tmem(at(0)?, line)?,
                    split,
                    nregs: regs.len() as u16,
                    seed,
                }
            }
            Form::Commit(form) => {
                let (mbar, addr) = match at(0)? {
                    Operand::Addr { base, offset: 0 } => match self
                        .val(&Operand::Reg(base), line)?
                    {
                        Val::Sym("tc_mbar", o) => ((o / 8) as u8, MbarAddr::Shared),
                        Val::Sym("tc_scratch", o) => ((o / 8) as u8, MbarAddr::GlobalUb),
                        other => return Err(shape(line, format!("commit mbar holds {other:?}"))),
                    },
                    _ => return Err(shape(line, "unexpected commit address")),
                };
                let cta_mask = match ops.get(1) {
                    Some(o) => match self.val(o, line)? {
                        Val::Imm(v) => Some(v as u16),
                        other => return Err(shape(line, format!("ctaMask holds {other:?}"))),
                    },
                    None => None,
                };
                Op::Commit {
                    form,
                    mbar,
                    addr,
                    cta_mask,
                }
            }
            Form::Cp(form) => Op::Cp {
                form,
                taddr: self.tmem(at(0)?, line)?,
                src: self.desc(at(1)?, line)?,
            },
            Form::Shift(form) => Op::Shift {
                form,
                taddr: self.tmem(at(0)?, line)?,
            },
            Form::Mma(form) => Op::Mma(Box::new(self.mma(form, ops, line)?)),
        })
    }

    fn st_seed(&self, regs: &[Operand<'a>], line: u32) -> Result<u32, LiftError> {
        match regs.first() {
            Some(o) => match self.val(o, line)? {
                Val::StValue(add) => Ok(add),
                other => Err(shape(line, format!("st register holds {other:?}"))),
            },
            // An empty vector: the printer still computed register 0, the last `mad` seen.
            None => self
                .last_st_seed
                .ok_or_else(|| shape(line, "st without a seed")),
        }
    }

    fn mma(&mut self, form: MmaForm, ops: &[Operand<'a>], line: u32) -> Result<Mma, LiftError> {
        if ops.len() < 3 {
            return Err(shape(line, "mma needs [d-tmem], a, b-desc"));
        }
        let d = self.tmem(&ops[0], line)?;
        let a = match &ops[1] {
            o @ Operand::Addr { .. } => MmaA::Tmem(self.tmem(o, line)?),
            o => MmaA::Desc(self.desc(o, line)?),
        };
        let b = self.desc(&ops[2], line)?;
        let mut rest: Vec<&Operand<'a>> = ops[3..].iter().collect();
        rest.reverse();
        let mut sp_meta = None;
        if let Some(o @ Operand::Addr { .. }) = rest.last() {
            sp_meta = Some(self.tmem(o, line)?);
            rest.pop();
        }
        let idesc = match rest.pop().map(|o| self.val(o, line)).transpose()? {
            Some(Val::Imm(v)) => v as u32,
            _ => return Err(shape(line, "expected idesc")),
        };
        let mut scales = Vec::new();
        while let Some(o @ Operand::Addr { .. }) = rest.last() {
            scales.push(self.tmem(o, line)?);
            rest.pop();
        }
        let mut dol = None;
        if let Some(Operand::Vec(v)) = rest.last() {
            let mut vals = Vec::new();
            for o in v {
                match self.val(o, line)? {
                    Val::Imm(x) => vals.push(x as u32),
                    other => {
                        return Err(shape(line, format!("disable-output-lane holds {other:?}")));
                    }
                }
            }
            dol = Some(vals);
            rest.pop();
        }
        let Some(Val::Pred(enable_input_d)) = rest.pop().map(|o| self.val(o, line)).transpose()?
        else {
            return Err(shape(line, "expected enable-input-d"));
        };
        let mut scale_input_d = None;
        if let Some(Operand::Imm(v)) = rest.last() {
            scale_input_d = Some(*v as u8);
            rest.pop();
        }
        let mut zero_col_mask = None;
        if let Some(o) = rest.pop() {
            match self.val(o, line)? {
                Val::Imm(v) => zero_col_mask = Some(v as u64),
                other => return Err(shape(line, format!("zero-column-mask holds {other:?}"))),
            }
        }
        Ok(Mma {
            form,
            d,
            a,
            b,
            sp_meta,
            idesc,
            scale_a: scales.first().copied(),
            scale_b: scales.get(1).copied(),
            disable_output_lane: dol,
            enable_input_d,
            scale_input_d,
            zero_col_mask,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_program_lifts_back_to_itself() {
        let p = crate::samples::single_warp_roundtrip();
        let text = crate::ptx::emit(&p);
        assert_eq!(lift(&text).unwrap_or_else(|e| panic!("{e}\n{text}")), p);
    }

    #[test]
    fn every_fill_element_lifts_back() {
        for elem in [
            FillElem::Word,
            FillElem::F16Small,
            FillElem::Tf32Small,
            FillElem::I8Small,
            FillElem::SpMeta,
            FillElem::ScaleSmall,
            FillElem::Bf16Small,
        ] {
            let mut p = crate::samples::single_warp_roundtrip();
            p.smem.regions.push(256);
            let region = (p.smem.regions.len() - 1) as u8;
            p.warps[0].insert(
                0,
                Stmt::Fill {
                    region,
                    seed: 0x8765_4321,
                    elem,
                },
            );
            let text = crate::ptx::emit(&p);
            assert_eq!(lift(&text).unwrap_or_else(|e| panic!("{e}\n{text}")), p);
        }
    }

    #[test]
    fn foreign_ptx_is_not_lifted() {
        let e = lift(".version 8.6\n.target sm_100a\n.address_size 64\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("not a module printed by tcgen05-fuzz"),
            "{e}"
        );
    }
}
