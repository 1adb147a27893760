//! The instruction-level and target rows on parsed PTX: each tcgen05 instruction of a function
//! goes through `instr::check_instr`, the rule code of the oracle's static check, with
//! its operands read from the PTX ([`operands`]); an ill-formed one
//! ([`tcgen05_ir::ptx::parse::IllFormed`]) becomes a finding with the rule of what is wrong
//! ([`ill_formed_rule`]).

use crate::instr::{Ctx, MmaOperands, Operands, check_instr};
use std::collections::HashMap;
use tcgen05_ir::form::{Form, FormError};
use tcgen05_ir::ptx::parse::{Function, IllFormed, Instr, Module, Operand, Stmt};
use tcgen05_ir::{PtxVersion, RuleId, Target};

/// The module's `.target` and `.version` as the rules see them.
#[derive(Debug, Clone)]
pub(crate) enum ModuleTarget {
    /// A target of the catalogue's [`Target`] list, and the version the gating rows compare.
    Known(Target, PtxVersion),
    /// A target name outside that list (`sm_90`, `sm_120f`, ...): every tcgen05 instruction is
    /// GEN-TARGET; the other gating rows are not applied.
    Other(String),
    /// No `.target`: the gating rows are not applied.
    None,
}

impl ModuleTarget {
    /// Reads `m`'s `.target` and `.version` (reference §1).
    pub(crate) fn of(m: &Module<'_>) -> ModuleTarget {
        let Some(name) = m
            .target
            .iter()
            .find(|t| t.starts_with("sm_") || t.starts_with("compute_"))
        else {
            return ModuleTarget::None;
        };
        let version = m.version.unwrap_or(PtxVersion::new(9, 9));
        match *name {
            // PTX 8.6-8.8 name sm_110a/f `sm_101a/f` (renamed in PTX 9.0; reference §1).
            "sm_101a" => ModuleTarget::Known(Target::Sm110a, version.max(PtxVersion::new(9, 0))),
            "sm_101f" => ModuleTarget::Known(Target::Sm110f, version.max(PtxVersion::new(9, 0))),
            n => match Target::from_ptx(n) {
                Some(t) => ModuleTarget::Known(t, version),
                None => ModuleTarget::Other(n.to_string()),
            },
        }
    }
}

/// The rows of reference §1 that depend on the target (skipped for [`ModuleTarget::Other`] and
/// [`ModuleTarget::None`]).
fn is_target_row(r: RuleId) -> bool {
    matches!(
        r,
        RuleId::GenTarget
            | RuleId::GenPtxver
            | RuleId::LdRedTarget
            | RuleId::ShiftTarget
            | RuleId::MmaI8Target
            | RuleId::MmaSpMxf4Target
            | RuleId::MmaBsVecTarget
            | RuleId::MmaScaleDTarget
            | RuleId::MmaK96Target
    )
}

/// The width class of a register's declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    Pred,
    W16,
    W32,
    W64,
    /// Declared with several widths in different scopes, or another type.
    Unknown,
}

impl Width {
    fn of(ty: &str) -> Width {
        match ty {
            ".pred" => Width::Pred,
            _ => match ty.get(2..).and_then(|n| n.parse::<u32>().ok()) {
                Some(16) => Width::W16,
                Some(32) => Width::W32,
                Some(64) => Width::W64,
                _ => Width::Unknown,
            },
        }
    }

    fn name(self) -> &'static str {
        match self {
            Width::Pred => "a predicate",
            Width::W16 => "16-bit",
            Width::W32 => "32-bit",
            Width::W64 => "64-bit",
            Width::Unknown => "unknown",
        }
    }
}

/// The declared width of a function's registers (`.reg .b32 %r<16>;`, `.reg .pred p;`), from
/// its declarations in every scope; a name declared with two widths is unknown.
#[derive(Debug, Default)]
pub(crate) struct RegTypes<'a> {
    exact: HashMap<&'a str, Width>,
    prefix: HashMap<&'a str, Width>,
}

impl<'a> RegTypes<'a> {
    /// Reads `f`'s `.reg` declarations.
    pub(crate) fn of(f: &Function<'a>) -> RegTypes<'a> {
        let mut t = RegTypes::default();
        for s in f.body.iter().flatten() {
            let Stmt::Decl(w, _) = s else { continue };
            if w.first() != Some(&".reg") {
                continue;
            }
            let Some(ty) = w
                .iter()
                .skip(1)
                .find(|x| x.starts_with('.') && !x.starts_with(".v"))
            else {
                continue;
            };
            let width = Width::of(ty);
            for (k, name) in w.iter().enumerate().skip(1) {
                if name.starts_with('.')
                    || !name.starts_with(|c: char| {
                        c.is_alphabetic() || c == '%' || c == '_' || c == '$'
                    })
                {
                    continue;
                }
                let map = if w.get(k + 1) == Some(&"<") {
                    &mut t.prefix
                } else {
                    &mut t.exact
                };
                let e = map.entry(*name).or_insert(width);
                if *e != width {
                    *e = Width::Unknown;
                }
            }
        }
        t
    }

    fn width(&self, r: &str) -> Option<Width> {
        if let Some(w) = self.exact.get(r) {
            return Some(*w);
        }
        let stem = r.trim_end_matches(|c: char| c.is_ascii_digit());
        (stem.len() < r.len())
            .then(|| self.prefix.get(stem).copied())
            .flatten()
            .filter(|w| *w != Width::Unknown)
    }
}

/// The first operand whose declared register width is not what the syntax line has there
/// (reference §3: TMEM addresses, nCols, idesc, ld/st vectors are 32-bit; descriptors and
/// zero-column-mask-desc 64-bit; ctaMask 16-bit; enable-input-d a predicate). Registers of
/// unknown width pass.
fn operand_widths(form: &Form, ops: &[Operand<'_>], types: &RegTypes<'_>) -> Option<String> {
    let bad = |o: &Operand<'_>, want: Width, what: &str| -> Option<String> {
        let (r, want) = match o {
            Operand::Reg(r) => (*r, want),
            Operand::Not(x) => match x.as_ref() {
                Operand::Reg(r) => (*r, want),
                _ => return None,
            },
            // A TMEM address is a 32-bit register in brackets.
            Operand::Addr { base, .. } if base.starts_with('%') => (*base, want),
            Operand::Vec(v) => {
                return v.iter().find_map(|x| {
                    let Operand::Reg(r) = x else { return None };
                    let w = types.width(r)?;
                    (w != want).then(|| {
                        format!(
                            "{what} holds {r}, {} where the syntax line has {}",
                            w.name(),
                            want.name()
                        )
                    })
                });
            }
            _ => return None,
        };
        let w = types.width(r)?;
        (w != want).then(|| {
            format!(
                "{what} is {r}, {} where the syntax line has {}",
                w.name(),
                want.name()
            )
        })
    };
    let at = |k: usize| ops.get(k);
    let check = |list: &[(usize, Width, &str)]| {
        list.iter()
            .find_map(|(k, w, what)| at(*k).and_then(|o| bad(o, *w, what)))
    };
    use Width::*;
    match form {
        Form::Alloc(_) => check(&[(1, W32, "nCols")]),
        Form::Dealloc(_) => check(&[(0, W32, "taddr"), (1, W32, "nCols")]),
        Form::Ld(l) if l.red => check(&[
            (0, W32, "the register vector"),
            (1, W32, "redval"),
            (2, W32, "[taddr]"),
        ]),
        Form::Ld(_) => check(&[(0, W32, "the register vector"), (1, W32, "[taddr]")]),
        Form::St(_) => check(&[
            (0, W32, "[taddr]"),
            (ops.len().saturating_sub(1), W32, "the register vector"),
        ]),
        Form::Commit(_) => check(&[(1, W16, "ctaMask")]),
        Form::Cp(_) => check(&[(0, W32, "[taddr]"), (1, W64, "s-desc")]),
        Form::Shift(_) => check(&[(0, W32, "[taddr]")]),
        Form::Mma(f) => {
            let mut list = vec![(0, W32, "[d-tmem]"), (2, W64, "b-desc")];
            list.push((
                1,
                if matches!(at(1), Some(Operand::Addr { .. })) {
                    W32
                } else {
                    W64
                },
                "a-desc / [a-tmem]",
            ));
            // idesc and enable-input-d: the first non-address operand after b-desc, and the
            // operand after the optional [tmem] operands and vector.
            let rest: Vec<usize> = (3..ops.len()).collect();
            let idesc = rest
                .iter()
                .copied()
                .find(|&k| !matches!(ops[k], Operand::Addr { .. }));
            if let Some(k) = idesc {
                list.push((k, W32, "idesc"));
                let mut e = k + 1;
                while matches!(at(e), Some(Operand::Addr { .. } | Operand::Vec(_))) {
                    if matches!(at(e), Some(Operand::Addr { .. })) {
                        list.push((e, W32, "a [tmem] operand"));
                    } else {
                        list.push((e, W32, "disable-output-lane"));
                    }
                    e += 1;
                }
                list.push((e, Pred, "enable-input-d"));
                if f.ws {
                    list.push((e + 1, W64, "zero-column-mask-desc"));
                }
            }
            check(&list)
        }
        _ => None,
    }
}

/// Every instruction-level finding of one tcgen05 instruction, as `(rule, message)`.
pub(crate) fn instr_findings(
    ins: &Instr<'_>,
    target: &ModuleTarget,
    cluster: Option<u32>,
    types: &RegTypes<'_>,
) -> Vec<(RuleId, String)> {
    let mut out = Vec::new();
    if let ModuleTarget::Other(name) = target {
        out.push((
            RuleId::GenTarget,
            format!(
                "{} is not available on {name}; it needs sm_100a/f, sm_103a/f or sm_110a/f",
                ins.opcode
            ),
        ));
    }
    if let Some(e) = &ins.ill_formed {
        out.push(ill_formed_rule(e, ins.opcode));
        return out;
    }
    let Some(form) = &ins.form else {
        return out;
    };
    let ops = match operands(form, &ins.operands) {
        Ok(o) => o,
        Err((rule, msg)) => {
            out.push((rule, msg));
            return out;
        }
    };
    if let Some(msg) = operand_widths(form, &ins.operands, types) {
        out.push((RuleId::GenSyntax, format!("`{}`: {msg}", ins.opcode)));
    }
    let ctx = match target {
        ModuleTarget::Known(t, v) => Ctx::new(*t, *v, cluster),
        _ => Ctx::new(Target::Sm100a, PtxVersion::new(9, 9), cluster),
    };
    let from = out.len();
    check_instr(form, &ops, &ctx, &mut out);
    if !matches!(target, ModuleTarget::Known(..)) {
        let mut i = from;
        while i < out.len() {
            if is_target_row(out[i].0) {
                out.remove(i);
            } else {
                i += 1;
            }
        }
    }
    out
}

/// The rule an ill-formed instruction breaks: the row naming the qualifier or operand that is
/// wrong, else GEN-SYNTAX (reference §3 syntax lines).
pub(crate) fn ill_formed_rule(e: &IllFormed, opcode: &str) -> (RuleId, String) {
    let msg = format!("ill-formed `{opcode}`: {e}");
    let rule = match e {
        IllFormed::Operands { .. } => RuleId::GenSyntax,
        IllFormed::Form(f) => form_error_rule(f, opcode),
    };
    (rule, msg)
}

fn form_error_rule(e: &FormError, opcode: &str) -> RuleId {
    let is_shape = |q: &str| {
        let b = q.trim_start_matches('.').as_bytes();
        b.first().is_some_and(u8::is_ascii_digit) && q.contains('x')
    };
    let is_num = |q: &str| {
        q.strip_prefix(".x")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
    };
    let is_type = |q: &str| {
        let t = q.trim_start_matches('.');
        t.len() >= 2
            && matches!(t.as_bytes()[0], b'b' | b'u' | b's' | b'f' | b'e')
            && t[1..].bytes().all(|c| c.is_ascii_digit())
    };
    let is_space = |q: &str| {
        [".shared", ".global", ".local", ".const", ".param"]
            .iter()
            .any(|s| q.starts_with(s))
    };
    let red = opcode.starts_with("tcgen05.ld.red") || opcode.contains(".red.");
    match e {
        // WAIT-KIND (§9.7.16.8.5): `.wait_operation = { .wait::ld, .wait::st }`.
        FormError::UnknownInstruction(op) if op.starts_with("tcgen05.wait") => RuleId::WaitKind,
        FormError::UnknownInstruction(_) => RuleId::GenSyntax,
        FormError::UnknownQualifier { family, qual, .. } | FormError::Repeated { family, qual } => {
            let q = qual.as_str();
            match *family {
                _ if q.starts_with(".cta_group") => RuleId::GenCtagroupValid,
                "ld" | "st" if is_shape(q) => RuleId::LdstShape,
                "ld" | "st" if is_num(q) => RuleId::LdstNum,
                "ld" if red && (is_type(q) || q == ".abs" || q == ".NaN") => RuleId::LdRedType,
                "ld" | "st" if is_type(q) => RuleId::LdstType,
                "alloc" if is_space(q) => RuleId::AllocDstStatespace,
                "alloc" | "dealloc" if is_type(q) => RuleId::AllocDstStatespace,
                "commit" if is_type(q) => RuleId::CommitCompletion,
                "cp" if is_shape(q) => RuleId::CpShape,
                "mma" if q.starts_with(".scale_vec") || q.starts_with(".block") => RuleId::MmaBsVec,
                "mma" if q.starts_with(".collector") => RuleId::MmaCollectorValid,
                _ => RuleId::GenSyntax,
            }
        }
        FormError::Missing { family, what } => match *family {
            _ if what.contains(".cta_group") => RuleId::GenCtagroupValid,
            "alloc" | "dealloc" if what.contains("type") => RuleId::AllocDstStatespace,
            "ld" if red && what.contains("type") => RuleId::LdRedType,
            "ld" | "st" if what.contains("type") => RuleId::LdstType,
            "ld" | "st" if what.contains("shape") => RuleId::LdstShape,
            "ld" | "st" if what.contains("repetition") => RuleId::LdstNum,
            "cp" if what.contains("shape") => RuleId::CpShape,
            "commit" if what.contains("type") => RuleId::CommitCompletion,
            _ => RuleId::GenSyntax,
        },
    }
}

fn imm(o: &Operand<'_>) -> Option<i64> {
    match o {
        Operand::Imm(v) => Some(*v),
        _ => None,
    }
}

fn as_u32(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// What the per-instruction rules read of a parsed instruction's operands. The parser has
/// checked the operand counts and kinds of every family but mma
/// (`check_operand_shape` in `tcgen05_ir::ptx::parse`); an mma's optional operands are told
/// apart here by kind and position (reference §3.7 syntax lines), and an operand list that no
/// mma form has is an error message (GEN-SYNTAX).
pub(crate) fn operands(form: &Form, ops: &[Operand<'_>]) -> Result<Operands, (RuleId, String)> {
    let vec_len = |o: Option<&Operand<'_>>| match o {
        Some(Operand::Vec(v)) => v.len() as u16,
        _ => 0,
    };
    Ok(match form {
        Form::Alloc(_) | Form::Dealloc(_) => Operands {
            ncols_imm: ops.get(1).and_then(imm).map(as_u32),
            ..Operands::default()
        },
        Form::Ld(l) => {
            let base = if l.red { 3 } else { 2 };
            Operands {
                split: ops.get(base).map(split_imm).transpose()?,
                nregs: vec_len(ops.first()),
                ..Operands::default()
            }
        }
        Form::St(_) => Operands {
            split: (ops.len() == 3).then(|| split_imm(&ops[1])).transpose()?,
            nregs: vec_len(ops.last()),
            ..Operands::default()
        },
        Form::Commit(_) => Operands {
            cta_mask: ops.len() == 2,
            ..Operands::default()
        },
        Form::Mma(f) => Operands {
            mma: mma_operands(f.ws, ops).map_err(|e| (RuleId::GenSyntax, e.to_string()))?,
            ..Operands::default()
        },
        _ => Operands::default(),
    })
}

/// `immHalfSplitoff` is an immediate (§9.7.16.8.3 syntax line; ptxas: "must be constant").
fn split_imm(o: &Operand<'_>) -> Result<u32, (RuleId, String)> {
    imm(o).map(as_u32).ok_or_else(|| {
        (
            RuleId::LdstSplitoff,
            format!("immHalfSplitoff must be an immediate, not {o}"),
        )
    })
}

/// Why the operands of a `tcgen05.mma` do not fit its syntax line (reference §3.7, PTX ISA
/// §9.7.16.10.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum MmaOperandsError {
    /// No register or immediate where idesc goes.
    #[error("expected the idesc operand (a register or immediate) after b-desc and [sp-meta-tmem]")]
    NoIdesc,
    /// More than the two `[tmem]` scale operands of the block-scale forms.
    #[error("{0} [tmem] operands after idesc; the block-scale forms have 2")]
    Scales(usize),
    /// No enable-input-d operand.
    #[error("missing the enable-input-d predicate operand")]
    NoEnableInputD,
    /// Operands beyond the last one any form has.
    #[error("{0} operand(s) more than any tcgen05.mma form has")]
    Extra(usize),
}

/// `[d-tmem], a-desc|[a-tmem], b-desc, {[sp-meta-tmem],} idesc, {[scale-A-tmem],
/// [scale-B-tmem],} {{disable-output-lane},} enable-input-d {, scale-input-d |
/// zero-column-mask-desc}` (reference §3.7).
fn mma_operands(ws: bool, ops: &[Operand<'_>]) -> Result<MmaOperands, MmaOperandsError> {
    let is_addr = |o: &Operand<'_>| matches!(o, Operand::Addr { .. });
    let mut m = MmaOperands {
        a_tmem: ops.get(1).is_some_and(is_addr),
        ..MmaOperands::default()
    };
    let rest = ops.get(3..).unwrap_or(&[]);
    let mut i = 0;
    if rest.first().is_some_and(is_addr) {
        m.sp_meta = true;
        i += 1;
    }
    // idesc.
    if rest
        .get(i)
        .is_none_or(|o| is_addr(o) || matches!(o, Operand::Vec(_)))
    {
        return Err(MmaOperandsError::NoIdesc);
    }
    i += 1;
    let mut scales = 0;
    while rest.get(i).is_some_and(is_addr) {
        scales += 1;
        i += 1;
    }
    if scales > 2 {
        return Err(MmaOperandsError::Scales(scales));
    }
    m.scale_a = scales >= 1;
    m.scale_b = scales >= 2;
    if let Some(Operand::Vec(v)) = rest.get(i) {
        m.disable_output_lane = Some(v.len());
        i += 1;
    }
    // enable-input-d.
    if rest.get(i).is_none() {
        return Err(MmaOperandsError::NoEnableInputD);
    }
    i += 1;
    if let Some(o) = rest.get(i) {
        // Non-.ws forms have scale-input-d there, an immediate; a register there can only be
        // a zero-column-mask-desc, which only .ws forms have (MMA-ZCM-WS-ONLY).
        match (ws, imm(o)) {
            (false, Some(v)) => m.scale_input_d = Some(as_u32(v)),
            _ => m.zero_col_mask = true,
        }
        i += 1;
    }
    if i < rest.len() {
        return Err(MmaOperandsError::Extra(rest.len() - i));
    }
    Ok(m)
}
