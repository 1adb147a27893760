//! The instruction-level and target rows on parsed PTX: each tcgen05 instruction of a function
//! goes through [`crate::instr::check_instr`], the rule code of the oracle's static check, with
//! its operands read from the PTX ([`operands`]); an ill-formed one
//! ([`tcgen05_ir::ptx::parse::IllFormed`]) becomes a finding with the rule of what is wrong
//! ([`ill_formed_rule`]).

use crate::instr::{Ctx, MmaOperands, Operands, check_instr};
use tcgen05_ir::form::{Form, FormError};
use tcgen05_ir::ptx::parse::{IllFormed, Instr, Module, Operand};
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

/// Every instruction-level finding of one tcgen05 instruction, as `(rule, message)`.
pub(crate) fn instr_findings(
    ins: &Instr<'_>,
    target: &ModuleTarget,
    cluster: Option<u32>,
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
        Err(msg) => {
            out.push((RuleId::GenSyntax, msg));
            return out;
        }
    };
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
        IllFormed::Operands(_) => RuleId::GenSyntax,
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
pub(crate) fn operands(form: &Form, ops: &[Operand<'_>]) -> Result<Operands, String> {
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
                split: ops.get(base).map(|o| imm(o).map_or(0, as_u32)),
                nregs: vec_len(ops.first()),
                ..Operands::default()
            }
        }
        Form::St(_) => Operands {
            split: (ops.len() == 3).then(|| imm(&ops[1]).map_or(0, as_u32)),
            nregs: vec_len(ops.last()),
            ..Operands::default()
        },
        Form::Commit(_) => Operands {
            cta_mask: ops.len() == 2,
            ..Operands::default()
        },
        Form::Mma(f) => Operands {
            mma: mma_operands(f.ws, ops)?,
            ..Operands::default()
        },
        _ => Operands::default(),
    })
}

/// `[d-tmem], a-desc|[a-tmem], b-desc, {[sp-meta-tmem],} idesc, {[scale-A-tmem],
/// [scale-B-tmem],} {{disable-output-lane},} enable-input-d {, scale-input-d |
/// zero-column-mask-desc}` (reference §3.7).
fn mma_operands(ws: bool, ops: &[Operand<'_>]) -> Result<MmaOperands, String> {
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
        return Err(
            "expected the idesc operand (a register or immediate) after b-desc and [sp-meta-tmem]"
                .into(),
        );
    }
    i += 1;
    let mut scales = 0;
    while rest.get(i).is_some_and(is_addr) {
        scales += 1;
        i += 1;
    }
    if scales > 2 {
        return Err(format!(
            "{scales} [tmem] operands after idesc; the block-scale forms have 2"
        ));
    }
    m.scale_a = scales >= 1;
    m.scale_b = scales >= 2;
    if let Some(Operand::Vec(v)) = rest.get(i) {
        m.disable_output_lane = Some(v.len());
        i += 1;
    }
    // enable-input-d.
    if rest.get(i).is_none() {
        return Err("missing the enable-input-d predicate operand".into());
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
        return Err(format!(
            "{} operand(s) more than any tcgen05.mma form has",
            rest.len() - i
        ));
    }
    Ok(m)
}
