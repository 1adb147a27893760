//! The emulation's routines: the parts of the lowering that are the same for every case,
//! printed once as `.visible .func`s of one module of their own ([`module`]) and called by
//! every lowered module, which declares them `.extern` ([`declarations`]).
//!
//! Why: the driver's JIT (ptxas) spends its time in proportion to a module's code, and most
//! in its loops and checks. An alloc's bounded claim loop and fill loop, and the checks of an
//! ld or st (convergence, uniform address, lane quarter, range, allocation, capacity), were
//! printed again in every case, often several times. As routines the worker compiles them once
//! (`ptxas -c`, a relocatable object) and the driver's JIT linker only links them to each
//! case's own code; without a ptxas the worker hands the linker this module's PTX with every
//! case, which is correct and as slow as before. In a 16-job campaign on the lent H200 a
//! case's compile went from about 214 to 120-163 ms with the routines and JIT level 1 for
//! the case's own code (docs/blackwell.md, "The routines").
//!
//! A routine's values come from its parameters and from the emulated state of its CTA
//! (`emu_state`, whose address is the first parameter, `sa`, of every routine): the status
//! block's address ([`st::EMUST`]), the CTA's number within its copy ([`st::CTA`]) and the
//! emulated columns ([`st::COLS`]), which the kernel's preamble stores. A routine records a
//! violation exactly as the inline checks do (the same codes and detail words, through its
//! own violation tail), so a routine's check and the inline one it replaced are one check
//! (rules and codes: [`super::Code`]).

use super::ops::{Cols, EmuOps, Val};
use super::traps::{EmuTraps, Guard};
use super::{Code, Ctx, Emu, st};
use std::fmt::Write as _;
use std::sync::OnceLock;
use tcgen05_ir::observe::Layout;
use tcgen05_ir::ptx::Body;

/// A routine of [`module`]: its name, its parameters after `sa` (each `.b32`) and whether it
/// returns a `.b32`.
#[derive(Debug)]
pub(super) struct Routine {
    pub(super) name: &'static str,
    params: &'static [&'static str],
    returns: bool,
}

/// `emu_alloc1(sa, n, slot, seed)`: the part of a `cta_group::1` alloc after the checks of
/// its operands (ALLOC-NCOLS-*, convergence): lane 0 checks the permit and the size
/// (ALLOC-AFTER-RELINQUISH, ALLOC-NONINCREASING), claims `n` columns first fit with a bounded
/// spin while none fit (ALLOC-BLOCKS, reference §2.3) and writes their address to the shared
/// word at `slot`; the warp then joins lane 0 and, where `seed` is not 0 (a perturbed run),
/// fills the new columns' cells with the run's pattern (module docs of [`super`], "Perturbed
/// runs").
pub(super) const ALLOC1: Routine = Routine {
    name: "emu_alloc1",
    params: &["n", "slot", "seed"],
    returns: false,
};

/// `emu_cells(sa, taddr, lanes, ncols, flags) -> cell`: the checks of an ld or st at TMEM
/// address `taddr` over `lanes` lanes and `ncols` columns, as one group (the first failing
/// one is recorded): where `flags` bit 0 is set, every lane of the warp executes it
/// (`.sync.aligned`, [`Code::NotConverged`]); where bit 1 is set, `taddr` is the same in every
/// lane ([`Code::TaddrDivergent`], left out where the first check fails); the lanes lie in the
/// warp's lane quarter (LDST-LANE-QUARTER, [`Code::LaneQuarter`]); the cells exist, are
/// allocated and are emulated ([`EmuOps::check_cells`]). Returns the word index of the
/// address's cell in `emu_tmem` (`col * 128 + lane`).
pub(super) const CELLS: Routine = Routine {
    name: "emu_cells",
    params: &["taddr", "lanes", "ncols", "flags"],
    returns: true,
};

/// `emu_pair(sa, op, n, slot, taddr)`: a `::2` collective (`op`: 1 alloc, 2 dealloc, 3
/// relinquish, `ops::PairOp`) of `n` columns, by lane 0, after the checks of its operands:
/// an alloc's permit and size, then it meets the peer CTA's k-th `::2` collective through the
/// mailboxes (a bounded spin, ALLOC-PAIR-BLOCK / DEALLOC-PAIR-BLOCK, reference §2.5; a
/// different collective is PAIR-MISMATCH); then the even CTA of an alloc claims the columns
/// in both masks and posts their address to the odd one, which writes it to the shared word at
/// `slot`; a dealloc frees `taddr`'s columns in this CTA (DEALLOC-TADDR-PREV); a relinquish
/// sets the permit. The warp then joins lane 0.
pub(super) const PAIR: Routine = Routine {
    name: "emu_pair",
    params: &["op", "n", "slot", "taddr"],
    returns: false,
};

/// `emu_dealloc1(sa, taddr, n)`: the part of a `cta_group::1` dealloc after the checks of its
/// operands: lane 0 frees the `n` columns at `taddr`, which must be allocated
/// (DEALLOC-TADDR-PREV, [`EmuOps::free_local`]); the warp then joins lane 0.
pub(super) const DEALLOC1: Routine = Routine {
    name: "emu_dealloc1",
    params: &["taddr", "n"],
    returns: false,
};

/// Every routine, in the module's order.
const ALL: [&Routine; 4] = [&ALLOC1, &CELLS, &PAIR, &DEALLOC1];

impl Routine {
    /// `(.param .b32 ret) name(.param .b32 sa, ...)`.
    fn signature(&self) -> String {
        let ret = if self.returns {
            "(.param .b32 ret) "
        } else {
            ""
        };
        let params: Vec<String> = std::iter::once("sa")
            .chain(self.params.iter().copied())
            .map(|p| format!(".param .b32 {p}"))
            .collect();
        format!("{ret}{}({})", self.name, params.join(", "))
    }
}

/// The `.extern .func` declarations of every routine, which a lowered module starts with.
pub(super) fn declarations(out: &mut String) {
    for r in ALL {
        let _ = writeln!(out, ".extern .func {};", r.signature());
    }
}

/// The routines' module: sm_90 PTX, the same for every case, compiled once per worker
/// (`ptxas -c`) and linked with each lowered module.
pub fn module() -> &'static str {
    static MODULE: OnceLock<String> = OnceLock::new();
    MODULE.get_or_init(print_module)
}

fn print_module() -> String {
    let mut out = String::with_capacity(16 * 1024);
    let _ = writeln!(
        out,
        "//\n// tcgen05-fuzz cuda-emu routines (tcgen05-drivers {})\n//",
        env!("CARGO_PKG_VERSION")
    );
    out.push_str(".version 8.0\n.target sm_90\n.address_size 64\n\n");
    out.push_str(".extern .shared .align 16 .b32 emu_tmem[];\n");
    // A routine's thread ends through the case module's finishing protocol.
    out.push_str(".extern .func emu_finish(.param .u64 emust, .param .b32 how);\n\n");
    // The routines use nothing of the program their bodies are printed for: a body needs one.
    let p = tcgen05_ir::samples::single_warp_roundtrip();
    let layout = Layout::of(&p);
    let ctx = Ctx::for_routines();
    for r in ALL {
        let _ = writeln!(out, ".visible .func {}\n{{", r.signature());
        let mut b = Body::new(&p, &layout, Emu::routine(&ctx));
        b.special_regs();
        b.line("ld.param.u32 %emsa, [sa];");
        b.line(&format!("ld.shared.u64 %emust, [%emsa+{}];", 4 * st::EMUST));
        let args: Vec<u32> = r
            .params
            .iter()
            .map(|name| {
                let a = b.r();
                b.line(&format!("ld.param.u32 %r{a}, [{name}];"));
                a
            })
            .collect();
        match r.name {
            "emu_alloc1" => alloc1(&mut b, args[0], args[1], args[2]),
            "emu_cells" => cells(&mut b, args[0], args[1], args[2], args[3]),
            "emu_dealloc1" => {
                let p = b.pr();
                b.line(&format!("setp.ne.u32 %p{p}, %lane, 0;"));
                b.line(&format!("@%p{p} bra $D_skip;"));
                b.free_local(
                    args[0],
                    Cols {
                        reg: args[1],
                        known: None,
                    },
                );
                b.label("$D_skip");
                b.line("bar.warp.sync -1;");
                b.line("ret;");
            }
            "emu_pair" => {
                b.pair_op(args[0], args[1], args[2], args[3]);
                b.line("ret;");
            }
            other => unreachable!("routine {other} has no body"),
        }
        let mut body = String::new();
        b.finish(&mut body);
        // The routine reaches its CTA's state through `sa`, not by the kernel module's name.
        out.push_str(&body.replace("emu_state", "%emsa"));
        out.push_str("}\n\n");
    }
    out
}

/// [`ALLOC1`]'s body.
fn alloc1(b: &mut Body<'_, Emu<'_>>, n: u32, slot: u32, seed: u32) {
    let p = b.pr();
    b.line(&format!("setp.ne.u32 %p{p}, %lane, 0;"));
    b.line(&format!("@%p{p} bra $A_skip;"));
    b.alloc_checks(&format!("%r{n}"));
    let (addr, _) = b.claim_local(Cols {
        reg: n,
        known: None,
    });
    b.line(&format!("st.shared.u32 [%r{slot}], %r{addr};"));
    b.label("$A_skip");
    b.join_lane0();
    b.fill_new_columns(slot, n, seed);
    b.line("ret;");
}

/// [`CELLS`]'s body.
fn cells(b: &mut Body<'_, Emu<'_>>, taddr: u32, lanes: u32, ncols: u32, flags: u32) {
    let opened = b.checks_begin();
    // Convergence, where flags bit 0 asks for it (the same in every lane, so every lane
    // votes or none does).
    let (f, m) = (b.r(), b.r());
    let (pv, pnc) = (b.pr(), b.pr());
    b.line(&format!("and.b32 %r{f}, %r{flags}, 1;"));
    b.line(&format!("setp.ne.u32 %p{pv}, %r{f}, 0;"));
    b.line(&format!("mov.u32 %r{m}, -1;"));
    b.line(&format!("@%p{pv} vote.sync.ballot.b32 %r{m}, 1, -1;"));
    b.line(&format!("setp.ne.b32 %p{pnc}, %r{m}, -1;"));
    b.trap_if(pnc, Code::NotConverged, &format!("%r{m}"));
    // A uniform address, where flags bit 1 asks for it and the warp is converged.
    let (skip, pu) = (b.pr(), b.pr());
    let mm = b.r();
    b.line(&format!("and.b32 %r{f}, %r{flags}, 2;"));
    b.line(&format!("setp.eq.or.u32 %p{skip}, %r{f}, 0, %p{pnc};"));
    b.line(&format!("setp.eq.u32 %p{pu}, %r{f}, %r{f};"));
    b.line(&format!(
        "@!%p{skip} match.all.sync.b32 %r{mm}|%p{pu}, %r{taddr}, -1;"
    ));
    b.trap_on(
        Guard::Unless(pu),
        Code::TaddrDivergent,
        &format!("%r{taddr}"),
    );
    // Lane quarter: lane - 32 * (warp % 4) <= 32 - lanes as unsigned (a lane below the
    // quarter wraps).
    let (lane, col) = b.split_taddr(taddr);
    let (q, room) = (b.r(), b.r());
    let pq = b.pr();
    b.line(&format!("and.b32 %r{q}, %warp, 3;"));
    b.line(&format!("shl.b32 %r{q}, %r{q}, 5;"));
    b.line(&format!("sub.u32 %r{q}, %r{lane}, %r{q};"));
    b.line(&format!("sub.u32 %r{room}, 32, %r{lanes};"));
    b.line(&format!("setp.gt.u32 %p{pq}, %r{q}, %r{room};"));
    b.trap_if(pq, Code::LaneQuarter, &format!("%r{taddr}"));
    b.check_cells(lane, Val::Reg(lanes), col, Val::Reg(ncols));
    b.checks_end(opened);
    let cell = b.r();
    b.line(&format!("mad.lo.u32 %r{cell}, %r{col}, 128, %r{lane};"));
    b.line(&format!("st.param.b32 [ret], %r{cell};"));
    b.line("ret;");
}

/// Calls to the routines from a body being printed.
pub(super) trait EmuCalls {
    fn call_routine(&mut self, r: &Routine, args: &[String]) -> Option<u32>;
}

impl EmuCalls for Body<'_, Emu<'_>> {
    /// Calls routine `r` with the CTA's state and `args` (registers or immediates); returns
    /// the register its result went to, if it returns one.
    fn call_routine(&mut self, r: &Routine, args: &[String]) -> Option<u32> {
        debug_assert_eq!(args.len(), r.params.len(), "{}'s arguments", r.name);
        let sa = self.state_base();
        let args = std::iter::once(sa)
            .chain(args.iter().cloned())
            .collect::<Vec<_>>()
            .join(", ");
        if r.returns {
            let v = self.r();
            self.line(&format!("call (%r{v}), {}, ({args});", r.name));
            Some(v)
        } else {
            self.line(&format!("call {}, ({args});", r.name));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every routine is defined once, with the signature the lowered modules declare, and
    /// refers to the CTA's state only through its `sa` parameter.
    #[test]
    fn the_module_defines_what_modules_declare() {
        let m = module();
        let mut decls = String::new();
        declarations(&mut decls);
        for r in ALL {
            let def = format!(".visible .func {}\n{{", r.signature());
            assert_eq!(m.matches(&def).count(), 1, "{def}\n{m}");
            assert!(decls.contains(&format!(".extern .func {};", r.signature())));
        }
        assert!(!m.contains("emu_state"), "{m}");
        assert!(!m.contains("tc_slot"), "{m}");
        assert!(
            !m.contains("%tprev, %clid"),
            "a routine's CTA comes from the state: {m}"
        );
    }
}
