//! tcgen05 instructions of real PTX as [`Op`]s of the program model: each operand read from
//! the value domain (reference §3 syntax lines; operand order as in the printer,
//! [`crate::ptx::emit`]).

use super::exec::{Env, Warp, fail};
use super::value::V;
use super::{LdInfo, StInfo};
use crate::form::{Form, MmaForm};
use crate::program::*;
use crate::ptx::parse::{Instr, Operand};

type R<T> = Result<T, super::Unliftable>;

fn active_lanes(active: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |i| active >> i & 1 == 1)
}

/// A TMEM address operand (reference §2.2): an alloc slot's value plus an offset, or a number.
fn tmem<'a>(
    w: &mut Warp<'a, '_, '_>,
    env: &Env<'a>,
    ins: &Instr<'a>,
    o: &Operand<'a>,
    active: u32,
) -> R<TmemRef> {
    let line = ins.pos.line;
    let v = w.addr(env, o, line);
    let (base, lanes) = match v {
        V::Tmem(s, off, l) => (TBase::Slot(w.roles.slot(s, off, ins)?), l),
        V::Num(l) => (TBase::Abs, l),
        V::Unknown(at) => {
            return Err(fail(
                ins,
                format!("TMEM address from a value the lifter does not know (line {at})"),
            ));
        }
        other => return Err(fail(ins, format!("TMEM address holds {other:?}"))),
    };
    let mut it = active_lanes(active);
    let first = it.next().map_or(0, |i| lanes[i]);
    let uniform = active_lanes(active).all(|i| lanes[i] == first);
    let even = active_lanes(active).find(|i| i % 2 == 0).map(|i| lanes[i]);
    let divergent = !uniform
        && even.is_some_and(|e| {
            active_lanes(active).all(|i| lanes[i] == if i % 2 == 0 { e } else { e + 1 })
        });
    if !uniform && !divergent {
        return Err(fail(
            ins,
            "the TMEM address differs between lanes in a way the model cannot express",
        ));
    }
    let off = even.unwrap_or(first) as u32;
    Ok(TmemRef {
        base,
        lane: (off >> 16) as u16,
        col: off as u16,
        divergent,
    })
}

fn ncols<'a>(
    w: &Warp<'a, '_, '_>,
    env: &Env<'a>,
    ins: &Instr<'a>,
    o: &Operand<'a>,
    active: u32,
) -> R<NCols> {
    if let Operand::Imm(v) = o {
        return Ok(NCols::imm(*v as u32));
    }
    let V::Num(l) = w.get(env, o, ins.pos.line) else {
        return Err(fail(ins, "nCols is not a known number"));
    };
    let even = active_lanes(active)
        .find(|i| i % 2 == 0)
        .map_or(l[0], |i| l[i]);
    if active_lanes(active).all(|i| l[i] == even) {
        return Ok(NCols {
            value: even as u32,
            form: NColsForm::Reg,
        });
    }
    if active_lanes(active).all(|i| l[i] == if i % 2 == 0 { even } else { 2 * even }) {
        return Ok(NCols {
            value: even as u32,
            form: NColsForm::RegDivergent,
        });
    }
    Err(fail(
        ins,
        "nCols differs between lanes in a way the model cannot express",
    ))
}

fn desc<'a>(
    w: &mut Warp<'a, '_, '_>,
    env: &Env<'a>,
    ins: &Instr<'a>,
    o: &Operand<'a>,
) -> R<SmemDesc> {
    match w.get(env, o, ins.pos.line) {
        V::Desc(s, off, f) => Ok(SmemDesc::from_fields(w.roles.region(s), off as u32, f)),
        V::DescStart(s, off) => Ok(SmemDesc::from_fields(w.roles.region(s), off as u32, 0)),
        V::Unknown(at) => Err(fail(
            ins,
            format!("matrix descriptor from a value the lifter does not know (line {at})"),
        )),
        other => Err(fail(
            ins,
            format!("matrix descriptor not built from a shared variable's address: {other:?}"),
        )),
    }
}

fn uniform<'a>(
    w: &Warp<'a, '_, '_>,
    env: &Env<'a>,
    ins: &Instr<'a>,
    o: &Operand<'a>,
    active: u32,
    what: &str,
) -> R<u64> {
    w.get(env, o, ins.pos.line).uniform(active).ok_or_else(|| {
        fail(
            ins,
            format!("{what} is not a known number, the same in every lane"),
        )
    })
}

/// The op of a tcgen05 instruction.
pub(super) fn op<'a>(
    w: &mut Warp<'a, '_, '_>,
    env: &Env<'a>,
    ins: &Instr<'a>,
    active: u32,
) -> R<Op> {
    let Some(form) = ins.form else {
        return Err(fail(ins, "ill-formed tcgen05 instruction"));
    };
    if let Some(why) = &ins.ill_formed {
        return Err(fail(ins, format!("ill-formed tcgen05 instruction: {why}")));
    }
    let line = ins.pos.line;
    let ops = &ins.operands;
    let at = |k: usize| {
        ops.get(k)
            .ok_or_else(|| fail(ins, format!("lacks operand {k}")))
    };
    Ok(match form {
        Form::Alloc(form) => {
            let slot = match w.addr(env, at(0)?, line) {
                V::Addr(s, off) => w.roles.slot(s, off, ins)?,
                _ => {
                    return Err(fail(
                        ins,
                        "alloc's destination is not a shared variable the lifter can name",
                    ));
                }
            };
            Op::Alloc {
                form,
                slot,
                dst_global: false,
                ncols: ncols(w, env, ins, at(1)?, active)?,
            }
        }
        Form::Dealloc(form) => Op::Dealloc {
            form,
            taddr: tmem(w, env, ins, at(0)?, active)?,
            ncols: ncols(w, env, ins, at(1)?, active)?,
        },
        Form::Relinquish(form) => Op::Relinquish { form },
        Form::Wait(form) => Op::Wait { form },
        Form::Fence(kind) => Op::Fence { kind },
        Form::Ld(form) => {
            let Operand::Vec(regs) = at(0)? else {
                return Err(fail(ins, "expected a register vector"));
            };
            let a = if form.red { 2 } else { 1 };
            let mut names: Vec<String> = regs
                .iter()
                .map(|r| match r {
                    Operand::Reg(r) => r.to_string(),
                    _ => String::new(),
                })
                .collect();
            if form.red
                && let Some(Operand::Reg(r)) = ops.get(1)
            {
                names.push(r.to_string());
            }
            let split = match ops.get(a + 1) {
                Some(o) => Some(uniform(w, env, ins, o, active, "immHalfSplitoff")? as u32),
                None => None,
            };
            let taddr = tmem(w, env, ins, at(a)?, active)?;
            w.record_ld(LdInfo { line, regs: names });
            Op::Ld {
                form,
                taddr,
                split,
                nregs: regs.len() as u16,
            }
        }
        Form::St(form) => {
            let Some(Operand::Vec(regs)) = ops.last() else {
                return Err(fail(ins, "expected a register vector"));
            };
            let split = if ops.len() == 3 {
                Some(uniform(w, env, ins, &ops[1], active, "immHalfSplitoff")? as u32)
            } else {
                None
            };
            let values = regs
                .iter()
                .map(|r| match w.get(env, r, line) {
                    V::Num(l) => Some(std::array::from_fn(|i| l[i] as u32)),
                    _ => None,
                })
                .collect();
            let seed = 0x5EED_0000u32
                ^ (line.wrapping_mul(0x9E37_79B9))
                ^ (w.sts.len() as u32).wrapping_mul(0x85EB_CA6B);
            w.record_st(StInfo { seed, line, values });
            Op::St {
                form,
                taddr: tmem(w, env, ins, at(0)?, active)?,
                split,
                nregs: regs.len() as u16,
                seed,
            }
        }
        Form::Commit(form) => {
            let mbar = match w.addr(env, at(0)?, line) {
                V::Addr(s, off) => w.roles.mbar(s, off, ins)?,
                V::Remote(s, off, r) if r == w.rank => w.roles.mbar(s, off, ins)?,
                _ => {
                    return Err(fail(
                        ins,
                        "commit's mbarrier is not a shared variable of this CTA the lifter can name",
                    ));
                }
            };
            let cta_mask = match ops.get(1) {
                Some(o) => Some(uniform(w, env, ins, o, active, "ctaMask")? as u16),
                None => None,
            };
            Op::Commit {
                form,
                mbar,
                addr: MbarAddr::Shared,
                cta_mask,
            }
        }
        Form::Cp(form) => Op::Cp {
            form,
            taddr: tmem(w, env, ins, at(0)?, active)?,
            src: desc(w, env, ins, at(1)?)?,
        },
        Form::Shift(form) => Op::Shift {
            form,
            taddr: tmem(w, env, ins, at(0)?, active)?,
        },
        Form::Mma(form) => Op::Mma(Box::new(mma(w, env, ins, form, active)?)),
    })
}

fn mma<'a>(
    w: &mut Warp<'a, '_, '_>,
    env: &Env<'a>,
    ins: &Instr<'a>,
    form: MmaForm,
    active: u32,
) -> R<Mma> {
    let ops = &ins.operands;
    if ops.len() < 5 {
        return Err(fail(
            ins,
            "mma needs [d-tmem], a, b-desc, idesc, enable-input-d",
        ));
    }
    let d = tmem(w, env, ins, &ops[0], active)?;
    let a = match &ops[1] {
        o @ Operand::Addr { .. } => MmaA::Tmem(tmem(w, env, ins, o, active)?),
        o => MmaA::Desc(desc(w, env, ins, o)?),
    };
    let b = desc(w, env, ins, &ops[2])?;
    let mut rest: Vec<&Operand<'a>> = ops[3..].iter().collect();
    rest.reverse();
    let mut sp_meta = None;
    if let Some(o @ Operand::Addr { .. }) = rest.last() {
        sp_meta = Some(tmem(w, env, ins, o, active)?);
        rest.pop();
    }
    let idesc_op = rest.pop().ok_or_else(|| fail(ins, "expected idesc"))?;
    let idesc = uniform(w, env, ins, idesc_op, active, "the instruction descriptor")? as u32;
    let mut scales = Vec::new();
    while let Some(o @ Operand::Addr { .. }) = rest.last() {
        scales.push(tmem(w, env, ins, o, active)?);
        rest.pop();
    }
    let mut dol = None;
    if let Some(Operand::Vec(v)) = rest.last() {
        let mut vals = Vec::new();
        for o in v {
            vals.push(uniform(w, env, ins, o, active, "disable-output-lane")? as u32);
        }
        dol = Some(vals);
        rest.pop();
    }
    let p = rest
        .pop()
        .ok_or_else(|| fail(ins, "expected enable-input-d"))?;
    let enable_input_d = uniform(w, env, ins, p, active, "enable-input-d")? != 0;
    let mut scale_input_d = None;
    if let Some(Operand::Imm(v)) = rest.last() {
        scale_input_d = Some(*v as u8);
        rest.pop();
    }
    let mut zero_col_mask = None;
    if let Some(o) = rest.pop() {
        zero_col_mask = Some(uniform(w, env, ins, o, active, "zero-column-mask")?);
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
