//! The role of each instruction for the TMEM protocol: barriers, mbarrier operations,
//! branches, calls, fences, `elect.sync`, role registers.

use super::super::parse::{Instr, Operand};
use crate::form::Family;

/// The role of one instruction for the TMEM protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Class<'a> {
    /// A tcgen05 instruction this crate models ([`crate::Form`]).
    Tcgen05(Family),
    /// A `tcgen05.*` opcode the IR does not model.
    Tcgen05Other,
    /// `bra` / `bra.uni` (guarded or not).
    Branch {
        /// `.uni`: the author asserts the condition is warp-uniform.
        uni: bool,
    },
    /// `brx.idx`.
    BranchIndirect,
    /// `call`: the callee's name when it is a direct call.
    Call {
        /// The called function.
        callee: Option<&'a str>,
    },
    /// `ret`.
    Ret,
    /// `exit`.
    Exit,
    /// `trap`.
    Trap,
    /// A CTA barrier: `bar.sync`/`barrier.sync`/`barrier.cta.sync` (waits), `bar.arrive` (does
    /// not wait), `bar.red`/`barrier.red`.
    BarCta {
        /// The thread waits for the others (false for `arrive`).
        waits: bool,
        /// `.aligned` (the `bar.*` spellings are aligned by definition).
        aligned: bool,
        /// An explicit thread count is given (a named barrier for part of the CTA).
        partial: bool,
    },
    /// `bar.warp.sync`.
    BarWarp,
    /// `barrier.cluster.arrive` (`.relaxed`: without release semantics).
    ClusterArrive {
        /// `.relaxed`.
        relaxed: bool,
    },
    /// `barrier.cluster.wait`.
    ClusterWait,
    /// An mbarrier operation.
    Mbarrier(MbarOp),
    /// `elect.sync`: exactly one lane gets a true predicate.
    Elect,
    /// `fence.proxy.async*`.
    FenceProxyAsync,
    /// Any other `fence.*` / `membar.*`.
    Fence,
    /// `ld.shared` (or `ld` with `.shared::cta`).
    LdShared,
    /// Anything else.
    Other,
}

/// mbarrier operations (PTX ISA §9.7.13.15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum MbarOp {
    /// `mbarrier.init`.
    Init,
    /// `mbarrier.arrive*` (including `arrive.expect_tx` and `arrive_drop`).
    Arrive,
    /// `mbarrier.expect_tx`.
    ExpectTx,
    /// `mbarrier.try_wait*`.
    TryWait,
    /// `mbarrier.test_wait*`.
    TestWait,
    /// `mbarrier.inval`.
    Inval,
    /// Any other mbarrier opcode.
    Other,
}

/// The class of `i` (see [`Class`]).
pub fn classify<'a>(i: &Instr<'a>) -> Class<'a> {
    let op = i.opcode;
    if let Some(f) = &i.form {
        return Class::Tcgen05(f.family());
    }
    if op.starts_with("tcgen05.") {
        return Class::Tcgen05Other;
    }
    let head = op.split('.').next().unwrap_or(op);
    let has = |q: &str| op.split('.').any(|w| w == q);
    match head {
        "bra" => Class::Branch { uni: has("uni") },
        "brx" => Class::BranchIndirect,
        "call" => Class::Call {
            callee: i.operands.iter().find_map(|o| {
                if let Operand::Sym(s) = o {
                    Some(*s)
                } else {
                    None
                }
            }),
        },
        "ret" => Class::Ret,
        "exit" => Class::Exit,
        "trap" => Class::Trap,
        "bar" if op.starts_with("bar.warp.sync") => Class::BarWarp,
        "bar" | "barrier" if op.starts_with("barrier.cluster.") => {
            if has("arrive") {
                Class::ClusterArrive {
                    relaxed: has("relaxed"),
                }
            } else {
                Class::ClusterWait
            }
        }
        "bar" | "barrier" => {
            let waits = !has("arrive");
            let aligned = head == "bar" || has("aligned");
            let partial = if has("red") {
                i.operands.len() > 3
            } else {
                i.operands.len() > 1
            };
            Class::BarCta {
                waits,
                aligned,
                partial,
            }
        }
        "mbarrier" => Class::Mbarrier(match op.split('.').nth(1).unwrap_or("") {
            "init" => MbarOp::Init,
            "arrive" | "arrive_drop" => MbarOp::Arrive,
            "expect_tx" => MbarOp::ExpectTx,
            "try_wait" => MbarOp::TryWait,
            "test_wait" => MbarOp::TestWait,
            "inval" => MbarOp::Inval,
            _ => MbarOp::Other,
        }),
        "elect" => Class::Elect,
        "fence" if op.starts_with("fence.proxy.async") => Class::FenceProxyAsync,
        "fence" | "membar" => Class::Fence,
        "ld" if has("shared") || op.contains(".shared::cta") => Class::LdShared,
        _ => Class::Other,
    }
}

/// The special registers an instruction reads that identify a thread's role: `%tid.*`,
/// `%laneid`, `%warpid`, `%cluster_ctarank`, `%ctaid.*`.
pub fn role_registers<'a>(i: &Instr<'a>) -> Vec<&'a str> {
    fn walk<'a>(o: &Operand<'a>, out: &mut Vec<&'a str>) {
        match o {
            Operand::Reg(r) if is_role_register(r) => out.push(r),
            Operand::Vec(v) | Operand::Paren(v) => v.iter().for_each(|o| walk(o, out)),
            Operand::Pair(a, b) => {
                walk(a, out);
                walk(b, out);
            }
            Operand::Not(a) => walk(a, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    i.operands.iter().skip(1).for_each(|o| walk(o, &mut out));
    out
}

fn is_role_register(r: &str) -> bool {
    r.starts_with("%tid")
        || r == "%laneid"
        || r == "%warpid"
        || r == "%cluster_ctarank"
        || r.starts_with("%ctaid")
}
