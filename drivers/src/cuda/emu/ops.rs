//! The emulation's lowering of each tcgen05 instruction: the checks of the rules it can see
//! (each a recorded [`Code`] and an exit) and the operation on the emulated state (module docs
//! of [`super`]).

use super::cp::EmuCp;
use super::defer::Step;
use super::mma::EmuMma;
use super::routines::{self, EmuCalls};
use super::traps::EmuTraps;
use super::{Code, DeferredSt, Emu, SPIN_NS, st};
use tcgen05_ir::observe::Site;
use tcgen05_ir::ptx::{Body, Pending};
use tcgen05_ir::{
    CtaGroup, LdStShape, MbarAddr, NColsForm, Op, RedOp, TmemRef, Ty, WaitOp, values,
};

/// The emulation's helpers on a body being printed.
pub(super) trait EmuOps {
    fn loop_head(&mut self, label: &str);
    fn ncols(&mut self, n: &tcgen05_ir::NCols) -> Cols;
    fn ncols_valid(&mut self, n: u32);
    fn ncols_checks(&mut self, n: Cols) -> bool;
    fn unit_bits(&mut self, n: Cols, pos: u32) -> u32;
    fn check_cells(&mut self, lane: u32, lanes: Val, col: u32, ncols: Val);
    fn cols_limit(&mut self) -> String;
    fn split_taddr(&mut self, t: u32) -> (u32, u32);
    fn lower_op(&mut self, op: &Op, site: Option<Site>, pending: &mut Vec<Pending>);
    fn alloc_checks(&mut self, n: &str);
    fn claim(&mut self, n: Cols, peer: Option<u32>) -> (u32, u32);
    fn claim_local(&mut self, n: Cols) -> (u32, u32);
    fn free_local(&mut self, t: u32, n: Cols);
    fn pair_op(&mut self, op: u32, n: u32, slot: u32, taddr: u32);
    fn pair_call(&mut self, op: PairOp, n: &str, slot: Option<u8>, taddr: Option<u32>);
    #[expect(clippy::too_many_arguments, reason = "the operands of one ld/st")]
    fn ldst(
        &mut self,
        shape: LdStShape,
        reps: u32,
        pack: bool,
        taddr: &TmemRef,
        split: Option<u32>,
        nregs: u16,
        store_seed: Option<u32>,
    ) -> Vec<u32>;
    fn shift_emu(&mut self, cg: CtaGroup, taddr: &TmemRef);
    fn deferred_stores(&mut self, d: &DeferredSt, pred: &str);
    fn fill_new_columns(&mut self, slot: u32, n: u32, seed: u32);
    fn slot_address(&mut self, slot: u8) -> String;
    fn land_deferred_sts(&mut self);
    fn may_be_pending(&self, bit: u32) -> bool;
    fn tmem_base(&mut self) -> String;
    fn state_base(&mut self) -> String;
}

impl EmuOps for Body<'_, Emu<'_>> {
    /// The label at the head of a loop of the emulation, with `.pragma "nounroll"` (PTX ISA,
    /// "Descriptions of .pragma strings"): ptxas and the driver JIT otherwise unroll the constant-count loops of cp and
    /// MMA (hundreds of iterations), which made a module's compile 5-9 times slower (ptxas
    /// 13.5 `-arch sm_90` on lowered generated programs: 3.7 s against 0.4 s for one with six
    /// cp loops).
    fn loop_head(&mut self, label: &str) {
        self.label(label);
        self.line(".pragma \"nounroll\";");
    }

    /// An nCols operand: an immediate where the lowering knows it ([`Cols::of`]), else a
    /// register computed here.
    fn ncols(&mut self, n: &tcgen05_ir::NCols) -> Cols {
        let r = self.r();
        if n.form == NColsForm::RegDivergent {
            let d = self.r();
            self.line(&format!("mov.u32 %r{r}, {};", n.value));
            self.line(&format!("and.b32 %r{d}, %lane, 1;"));
            self.line(&format!("shl.b32 %r{r}, %r{r}, %r{d};"));
        }
        Cols::of(n, r)
    }

    /// Traps unless `n` (a register) is a power of two in [32, 512] (ALLOC-NCOLS-*).
    fn ncols_valid(&mut self, n: u32) {
        let t = self.r();
        let (p, q) = (self.pr(), self.pr());
        self.line(&format!("sub.u32 %r{t}, %r{n}, 1;"));
        self.line(&format!("and.b32 %r{t}, %r{t}, %r{n};"));
        self.line(&format!("setp.ne.u32 %p{p}, %r{t}, 0;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{n}, 32;"));
        self.line(&format!("or.pred %p{p}, %p{p}, %p{q};"));
        self.line(&format!("setp.gt.u32 %p{q}, %r{n}, 512;"));
        self.line(&format!("or.pred %p{p}, %p{p}, %p{q};"));
        self.trap_if(p, Code::NcolsInvalid, &format!("%r{n}"));
    }

    /// The nCols checks of an alloc or dealloc whose nCols operand is in register `n`:
    /// ALLOC-NCOLS-UNIFORM ([`Code::NcolsDivergent`]) and ALLOC-NCOLS-POW2 / -RANGE
    /// ([`Code::NcolsInvalid`]), in that order. An nCols the lowering knows (every form but
    /// `RegDivergent`, [`Cols::of`]) holds the same value in every lane, so the uniformity
    /// check cannot fail and is left out, and its validity is decided here: nothing is
    /// printed for a valid one, an unconditional branch to the violation tail for an invalid
    /// one, and then `false` (the rest of the instruction is never reached).
    fn ncols_checks(&mut self, n: Cols) -> bool {
        match n.known {
            None => {
                self.uniform(n.reg, Code::NcolsDivergent, None);
                self.ncols_valid(n.reg);
                true
            }
            Some(v) if v.is_power_of_two() && (32..=512).contains(&v) => true,
            Some(v) => {
                self.trap(Code::NcolsInvalid, &v.to_string());
                false
            }
        }
    }

    /// The unit mask of `n` columns at unit `pos`: `((1 << (n/32)) - 1) << pos`, into a fresh
    /// register (the part before the shift by `pos` computed here when `n` is known).
    fn unit_bits(&mut self, n: Cols, pos: u32) -> u32 {
        let b = self.r();
        match n.known {
            Some(v) => {
                let mask = 1u32.checked_shl(v / 32).unwrap_or(0).wrapping_sub(1);
                self.line(&format!("shl.b32 %r{b}, {mask}, %r{pos};"));
            }
            None => {
                let u = self.r();
                self.line(&format!("shr.u32 %r{u}, %r{}, 5;", n.reg));
                self.line(&format!("mov.u32 %r{b}, 1;"));
                self.line(&format!("shl.b32 %r{b}, %r{b}, %r{u};"));
                self.line(&format!("sub.u32 %r{b}, %r{b}, 1;"));
                self.line(&format!("shl.b32 %r{b}, %r{b}, %r{pos};"));
            }
        }
        b
    }

    /// The lane (bits 31-16) and column (bits 15-0) of the TMEM address in `%r{t}`, in two
    /// new registers (reference §2.2, TMEM addresses).
    fn split_taddr(&mut self, t: u32) -> (u32, u32) {
        let (lane, col) = (self.r(), self.r());
        self.line(&format!("shr.u32 %r{lane}, %r{t}, 16;"));
        self.line(&format!("and.b32 %r{col}, %r{t}, 65535;"));
        (lane, col)
    }

    /// Checks that the cells of lanes `[lane, lane + lanes)` and columns `[col, col + ncols)`
    /// (`lane`, `col` registers of a split address, below 2^16; `lanes` and `ncols` at most
    /// 2^16) exist ([`Code::OutOfRange`]), are allocated ([`Code::Unallocated`]) and are
    /// emulated ([`Code::Capacity`]), in that order, in one group of checks (that of the
    /// caller, if it opened one). `x + k > limit` is printed as `x > limit - k` where `k` is an
    /// immediate `<= limit` (no wrap).
    fn check_cells(&mut self, lane: u32, lanes: Val, col: u32, ncols: Val) {
        let opened = self.checks_begin();
        let (p, pa, pc) = (self.pr(), self.pr(), self.pr());
        // Lanes: lane + lanes <= 128; columns: col + ncols <= 512.
        let e = self.r();
        for (i, (x, k, limit)) in [(lane, lanes, 128), (col, ncols, 512)]
            .into_iter()
            .enumerate()
        {
            let (or, acc) = match i {
                0 => ("", String::new()),
                _ => (".or", format!(", %p{p}")),
            };
            let (x, bound) = match k {
                Val::Imm(k) if k <= limit => (x, limit - k),
                k => {
                    self.line(&format!("add.u32 %r{e}, %r{x}, {k};"));
                    (e, limit)
                }
            };
            self.line(&format!("setp.gt{or}.u32 %p{p}, %r{x}, {bound}{acc};"));
        }
        self.trap_if(p, Code::OutOfRange, &format!("%r{col}"));
        // Allocated: units u0 = col/32 ..= (col+ncols-1)/32 all set in the mask. Their mask
        // is `bmsk` (PTX ISA, "bmsk") of the n = (col+ncols+31)/32 - u0 bits from bit u0
        // (u0 <= 15, u0 + n <= 16 after the range check, so no clamping).
        let (u0, u1, m) = (self.r(), self.r(), self.r());
        self.line(&format!("shr.u32 %r{u0}, %r{col}, 5;"));
        match ncols {
            Val::Imm(n) => self.line(&format!("add.u32 %r{u1}, %r{col}, {};", n + 31)),
            Val::Reg(n) => {
                self.line(&format!("add.u32 %r{u1}, %r{col}, %r{n};"));
                self.line(&format!("add.u32 %r{u1}, %r{u1}, 31;"));
            }
        }
        self.line(&format!("shr.u32 %r{u1}, %r{u1}, 5;"));
        self.line(&format!("sub.u32 %r{u1}, %r{u1}, %r{u0};"));
        self.line(&format!("bmsk.clamp.b32 %r{u1}, %r{u0}, %r{u1};"));
        self.line(&format!(
            "ld.volatile.shared.u32 %r{m}, [emu_state+{}];",
            4 * st::MASK
        ));
        self.line(&format!("and.b32 %r{m}, %r{m}, %r{u1};"));
        self.line(&format!("setp.ne.u32 %p{pa}, %r{m}, %r{u1};"));
        self.trap_if(pa, Code::Unallocated, &format!("%r{col}"));
        // Emulated: col + ncols <= cols; the detail word is col + ncols.
        let cols = self.cols_limit();
        let end = self.r();
        self.line(&format!("add.u32 %r{end}, %r{col}, {ncols};"));
        self.line(&format!("setp.gt.u32 %p{pc}, %r{end}, {cols};"));
        self.trap_if(pc, Code::Capacity, &format!("%r{end}"));
        self.checks_end(opened);
    }

    /// The emulated columns (state word [`st::COLS`]; [`EmuTraps::case_value`]).
    fn cols_limit(&mut self) -> String {
        let cols = self.low.c.cols;
        self.case_value(cols, st::COLS)
    }

    fn lower_op(&mut self, op: &Op, site: Option<Site>, pending: &mut Vec<Pending>) {
        // The plans' entries for this instruction (the kernel's only); the deferral step if it
        // is one of its kind.
        let at = self.low.at;
        self.low.at += 1;
        let kernel = self.low.kernel;
        let step = self.low.c.plan.get(at).copied().filter(|_| kernel);
        self.low.converged = kernel && self.low.c.converged.get(at) == Some(&true);
        self.low.warp = self.low.c.warps.get(at).copied().filter(|_| kernel);
        let lands = matches!(op, Op::Dealloc { .. })
            || matches!(op, Op::Wait { form } if form.op == WaitOp::St);
        self.low.step = step.filter(|s| match s {
            Step::St { .. } => matches!(op, Op::St { .. }),
            Step::Land { .. } => lands,
            Step::Other => false,
        });
        match op {
            Op::Alloc {
                form,
                slot,
                dst_global,
                ncols,
            } => {
                self.converged();
                let n = self.ncols(ncols);
                if !self.ncols_checks(n) {
                    return;
                }
                if *dst_global && form.space.is_none() {
                    self.trap(Code::DstNotShared, "0");
                    return;
                }
                if form.cta_group == CtaGroup::Two {
                    self.pair_call(PairOp::Alloc, &n.op(), Some(*slot), None);
                } else {
                    // The rest is the routine's (`routines::ALLOC1`), which also fills the
                    // new columns in a perturbed run (not for `::2`: the peer's shift::2 may
                    // already write those cells).
                    let a = self.slot_address(*slot);
                    let seed = if self.low.c.defer { "%emseed" } else { "0" };
                    self.call_routine(&routines::ALLOC1, &[n.op(), a, seed.to_string()]);
                }
            }
            Op::Dealloc { form, taddr, ncols } => {
                self.converged();
                // Deferred sts land before their columns can go to another allocation.
                self.land_deferred_sts();
                let t = self.taddr(taddr);
                self.uniform(t, Code::DeallocNotAllocated, None);
                let n = self.ncols(ncols);
                if !self.ncols_checks(n) {
                    return;
                }
                if form.cta_group == CtaGroup::Two {
                    self.pair_call(PairOp::Dealloc, &n.op(), None, Some(t));
                } else {
                    self.call_routine(&routines::DEALLOC1, &[format!("%r{t}"), n.op()]);
                }
            }
            Op::Relinquish { form } => {
                self.converged();
                if form.cta_group == CtaGroup::Two {
                    self.pair_call(PairOp::Relinquish, "0", None, None);
                } else {
                    self.line(&format!(
                        "st.volatile.shared.u32 [emu_state+{}], 1;",
                        4 * st::RELQ
                    ));
                    self.line("bar.warp.sync -1;");
                }
            }
            Op::Wait { form } => {
                self.converged();
                if form.op == WaitOp::St {
                    self.land_deferred_sts();
                }
                self.line("bar.warp.sync -1;");
                if form.op == WaitOp::Ld {
                    self.flush(pending);
                }
            }
            Op::Fence { .. } => self.line("fence.acq_rel.cluster;"),
            Op::Ld {
                form,
                taddr,
                split,
                nregs,
            } => {
                let regs = self.ldst(
                    form.shape,
                    form.num.count(),
                    form.pack.is_some(),
                    taddr,
                    *split,
                    *nregs,
                    None,
                );
                let mut all = regs;
                if form.red {
                    let rv = self.r();
                    let first = all[0];
                    self.line(&format!("mov.b32 %r{rv}, %r{first};"));
                    let ty = match form.ty {
                        Ty::F32 => "f32",
                        Ty::S32 => "s32",
                        _ => "u32",
                    };
                    let opn = if form.red_op == Some(RedOp::Max) {
                        "max"
                    } else {
                        "min"
                    };
                    let nan = if form.nan && ty == "f32" { ".NaN" } else { "" };
                    let tmp = self.r();
                    for (i, r) in all.clone().iter().enumerate() {
                        let src = if form.abs && ty == "f32" {
                            self.line(&format!("abs.f32 %r{tmp}, %r{r};"));
                            tmp
                        } else {
                            *r
                        };
                        if i == 0 {
                            self.line(&format!("mov.b32 %r{rv}, %r{src};"));
                        } else {
                            self.line(&format!("{opn}{nan}.{ty} %r{rv}, %r{rv}, %r{src};"));
                        }
                    }
                    all.push(rv);
                }
                if let Some(site) = site {
                    pending.push(Pending { regs: all, site });
                }
            }
            Op::St {
                form,
                taddr,
                split,
                nregs,
                seed,
            } => {
                self.ldst(
                    form.shape,
                    form.num.count(),
                    form.pack.is_some(),
                    taddr,
                    *split,
                    *nregs,
                    Some(*seed),
                );
            }
            Op::Commit {
                form,
                mbar,
                addr,
                cta_mask,
            } => {
                if *addr == MbarAddr::GlobalUb {
                    self.trap(Code::CommitWindow, "0");
                    return;
                }
                let a = self.r();
                self.line(&format!("mov.u32 %r{a}, tc_mbar;"));
                self.line(&format!("add.u32 %r{a}, %r{a}, {};", 8 * u32::from(*mbar)));
                let ranks: Vec<u32> = match cta_mask {
                    Some(mask) if form.multicast => {
                        (0..16).filter(|i| mask >> i & 1 == 1).collect()
                    }
                    _ => vec![],
                };
                if ranks.is_empty() {
                    let s = self.rd();
                    self.line(&format!(
                        "mbarrier.arrive.release.cluster.shared::cta.b64 %rd{s}, [%r{a}];"
                    ));
                } else {
                    for rank in ranks {
                        if rank >= u32::from(self.p.launch.cluster_size) {
                            self.trap(Code::CommitRank, &rank.to_string());
                            return;
                        }
                        let m = self.r();
                        self.line(&format!("mapa.shared::cluster.u32 %r{m}, %r{a}, {rank};"));
                        self.line(&format!(
                            "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r{m}];"
                        ));
                    }
                }
            }
            Op::Shift { form, taddr } => self.shift_emu(form.cta_group, taddr),
            Op::Cp { form, taddr, src } => self.cp_emu(form, taddr, src),
            Op::Mma(m) => self.mma_emu(m),
        }
    }

    /// alloc's per-CTA rules, by the allocating lane: the permit (ALLOC-AFTER-RELINQUISH) and
    /// non-increasing sizes (ALLOC-NONINCREASING), one group of checks; then the size is
    /// recorded.
    fn alloc_checks(&mut self, n: &str) {
        let (f, last) = (self.r(), self.r());
        let (p, q) = (self.pr(), self.pr());
        let opened = self.checks_begin();
        self.line(&format!(
            "ld.volatile.shared.u32 %r{f}, [emu_state+{}];",
            4 * st::RELQ
        ));
        self.line(&format!("setp.ne.u32 %p{p}, %r{f}, 0;"));
        self.trap_if(p, Code::AllocAfterRelinquish, n);
        self.line(&format!(
            "ld.volatile.shared.u32 %r{last}, [emu_state+{}];",
            4 * st::LAST
        ));
        self.line(&format!("setp.ne.u32 %p{q}, %r{last}, 0;"));
        self.line(&format!("setp.gt.and.u32 %p{q}, {n}, %r{last}, %p{q};"));
        self.trap_if(q, Code::AllocIncreasing, n);
        self.checks_end(opened);
        self.line(&format!(
            "st.volatile.shared.u32 [emu_state+{}], {n};",
            4 * st::LAST
        ));
    }

    /// First-fit claim of `n` columns in this CTA's mask (or, with `peer`, in both masks of
    /// the pair); spins (bounded) while nothing fits. Returns (address register, bits register).
    fn claim(&mut self, n: Cols, peer: Option<u32>) -> (u32, u32) {
        let l = self.next_label();
        let (old, pos, units, got, c, addr, pm, both) = (
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
        );
        let (p, q) = (self.pr(), self.pr());
        // The request's units: an immediate when nCols is known.
        let units = match n.known {
            Some(v) => (v / 32).to_string(),
            None => {
                self.line(&format!("shr.u32 %r{units}, %r{}, 5;", n.reg));
                format!("%r{units}")
            }
        };
        self.line(&format!("mov.u32 %r{c}, 0;"));
        self.label(&format!("$C{l}_top"));
        self.line(&format!(
            "ld.volatile.shared.u32 %r{old}, [emu_state+{}];",
            4 * st::MASK
        ));
        // The columns taken in this CTA's mask, or in either mask of the pair.
        let both = match peer {
            Some(pe) => {
                self.line(&format!(
                    "ld.relaxed.cluster.shared::cluster.u32 %r{pm}, [%r{pe}+{}];",
                    4 * st::MASK
                ));
                self.line(&format!("or.b32 %r{both}, %r{old}, %r{pm};"));
                both
            }
            None => old,
        };
        self.line(&format!("mov.u32 %r{pos}, 0;"));
        self.label(&format!("$C{l}_scan"));
        // Full when pos + units > 16 (pos + units <= 16 < 2^32 - 16 when units is known).
        match n.known {
            Some(v) if v / 32 <= 16 => {
                self.line(&format!("setp.gt.u32 %p{p}, %r{pos}, {};", 16 - v / 32));
            }
            _ => {
                self.line(&format!("add.u32 %r{got}, %r{pos}, {units};"));
                self.line(&format!("setp.gt.u32 %p{p}, %r{got}, 16;"));
            }
        }
        self.line(&format!("@%p{p} bra $C{l}_full;"));
        let bits = self.unit_bits(n, pos);
        self.line(&format!("and.b32 %r{got}, %r{both}, %r{bits};"));
        self.line(&format!("setp.eq.u32 %p{q}, %r{got}, 0;"));
        self.line(&format!("@%p{q} bra $C{l}_try;"));
        self.line(&format!("add.u32 %r{pos}, %r{pos}, {units};"));
        self.line(&format!("bra $C{l}_scan;"));
        self.label(&format!("$C{l}_full"));
        self.line(&format!("add.u32 %r{c}, %r{c}, 1;"));
        let a = self.r();
        self.abort_check(c, a, p);
        let limit = self.spin_limit();
        self.line(&format!("setp.ge.u32 %p{p}, %r{c}, {limit};"));
        self.trap_if(p, Code::HangAlloc, &format!("%r{both}"));
        self.line(&format!("nanosleep.u32 {SPIN_NS};"));
        self.line(&format!("bra $C{l}_top;"));
        self.label(&format!("$C{l}_try"));
        let new = self.r();
        self.line(&format!("or.b32 %r{new}, %r{old}, %r{bits};"));
        self.line(&format!(
            "atom.shared.cas.b32 %r{got}, [emu_state+{}], %r{old}, %r{new};",
            4 * st::MASK
        ));
        self.line(&format!("setp.ne.u32 %p{p}, %r{got}, %r{old};"));
        self.line(&format!("@%p{p} bra $C{l}_top;"));
        if let Some(pe) = peer {
            let pnew = self.r();
            self.line(&format!("or.b32 %r{pnew}, %r{pm}, %r{bits};"));
            self.line(&format!("atom.relaxed.cluster.shared::cluster.cas.b32 %r{got}, [%r{pe}+{}], %r{pm}, %r{pnew};", 4 * st::MASK));
            self.line(&format!("setp.ne.u32 %p{p}, %r{got}, %r{pm};"));
            // The peer's mask changed under us: give our claim back and start over.
            let inv = self.r();
            self.line(&format!("not.b32 %r{inv}, %r{bits};"));
            self.line(&format!(
                "@%p{p} atom.shared.and.b32 %r{got}, [emu_state+{}], %r{inv};",
                4 * st::MASK
            ));
            self.line(&format!("@%p{p} bra $C{l}_top;"));
        }
        self.line(&format!("shl.b32 %r{addr}, %r{pos}, 5;"));
        (addr, bits)
    }

    fn claim_local(&mut self, n: Cols) -> (u32, u32) {
        self.claim(n, None)
    }

    /// Frees `n` columns at address `t` in this CTA's mask, checking that they are allocated:
    /// lane 0, a column at a unit boundary (`t & 0xFFFF001F == 0`), at most column 512, and
    /// every unit set in the mask (DEALLOC-TADDR-PREV): one check (one code and detail word)
    /// of both conditions (the mask is read either way; the read has no effect).
    fn free_local(&mut self, t: u32, n: Cols) {
        let (col, pos, e) = (self.r(), self.r(), self.r());
        let p = self.pr();
        self.line(&format!("and.b32 %r{col}, %r{t}, 65535;"));
        self.line(&format!("and.b32 %r{e}, %r{t}, {};", 0xFFFF_001Fu32));
        self.line(&format!("setp.ne.u32 %p{p}, %r{e}, 0;"));
        // col + n > 512 (col < 2^16: no wrap).
        match n.known {
            Some(v) if v <= 512 => {
                self.line(&format!(
                    "setp.gt.or.u32 %p{p}, %r{col}, {}, %p{p};",
                    512 - v
                ));
            }
            _ => {
                self.line(&format!("add.u32 %r{e}, %r{col}, %r{};", n.reg));
                self.line(&format!("setp.gt.or.u32 %p{p}, %r{e}, 512, %p{p};"));
            }
        }
        self.line(&format!("shr.u32 %r{pos}, %r{col}, 5;"));
        let bits = self.unit_bits(n, pos);
        let (m, inv) = (self.r(), self.r());
        self.line(&format!(
            "ld.volatile.shared.u32 %r{m}, [emu_state+{}];",
            4 * st::MASK
        ));
        self.line(&format!("and.b32 %r{m}, %r{m}, %r{bits};"));
        self.line(&format!("setp.ne.or.u32 %p{p}, %r{m}, %r{bits}, %p{p};"));
        self.trap_if(p, Code::DeallocNotAllocated, &format!("%r{t}"));
        self.line(&format!("not.b32 %r{inv}, %r{bits};"));
        self.line(&format!(
            "atom.shared.and.b32 %r{m}, [emu_state+{}], %r{inv};",
            4 * st::MASK
        ));
    }

    /// A `::2` collective by lane 0 of the warp (the body of `routines::PAIR`; `op` a
    /// [`PairOp`], `n` its columns, `slot` the shared address an alloc writes its address to,
    /// `taddr` the columns a dealloc frees, all registers): meet the peer CTA's k-th
    /// collective, then do this CTA's part; the warp then joins lane 0.
    fn pair_op(&mut self, op: u32, n: u32, slot: u32, taddr: u32) {
        let p = self.pr();
        self.line(&format!("setp.ne.u32 %p{p}, %lane, 0;"));
        self.line(&format!("@%p{p} bra $P_skip;"));
        // An alloc's own checks first.
        let pa = self.pr();
        self.line(&format!(
            "setp.ne.u32 %p{pa}, %r{op}, {};",
            PairOp::Alloc as u32
        ));
        self.line(&format!("@%p{pa} bra $P_post;"));
        self.alloc_checks(&format!("%r{n}"));
        self.label("$P_post");
        let (k, s, peer, pe, word, seq, off) = (
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
        );
        self.line(&format!(
            "atom.shared.add.u32 %r{k}, [emu_state+{}], 1;",
            4 * st::PAIRS
        ));
        self.line(&format!("and.b32 %r{s}, %r{k}, 3;"));
        self.line(&format!("xor.b32 %r{peer}, %ctarank, 1;"));
        let sb = self.state_base();
        self.line(&format!("mapa.shared::cluster.u32 %r{pe}, {sb}, %r{peer};"));
        // Post (op, ncols) then the sequence number k+1 to the peer's mailbox slot.
        self.line(&format!("mad.lo.u32 %r{word}, %r{op}, 65536, %r{n};"));
        self.line(&format!("shl.b32 %r{off}, %r{s}, 3;"));
        let ma = self.r();
        self.line(&format!("add.u32 %r{ma}, %r{pe}, %r{off};"));
        self.line(&format!(
            "st.relaxed.cluster.shared::cluster.u32 [%r{ma}+{}], %r{word};",
            4 * st::MAIL
        ));
        self.line(&format!("add.u32 %r{seq}, %r{k}, 1;"));
        self.line(&format!(
            "st.release.cluster.shared::cluster.u32 [%r{ma}+{}], %r{seq};",
            4 * st::MAIL + 4
        ));
        // Wait for the peer's k-th collective in our own mailbox.
        let own = self.r();
        let sb = self.state_base();
        self.line(&format!("add.u32 %r{own}, {sb}, %r{off};"));
        let got = self.r();
        let pd = self.pr();
        self.spin_until(
            &format!(
                "ld.acquire.cluster.shared::cta.u32 %r{got}, [%r{own}+{}];",
                4 * st::MAIL + 4
            ),
            &format!("setp.eq.u32 %p{pd}, %r{got}, %r{seq};"),
            pd,
            Code::HangPair,
            &format!("%r{k}"),
        );
        let theirs = self.r();
        let pm = self.pr();
        self.line(&format!(
            "ld.shared.u32 %r{theirs}, [%r{own}+{}];",
            4 * st::MAIL
        ));
        self.line(&format!("setp.ne.u32 %p{pm}, %r{theirs}, %r{word};"));
        self.trap_if(pm, Code::PairMismatch, &format!("%r{theirs}"));
        let po = self.pr();
        self.line(&format!(
            "setp.eq.u32 %p{po}, %r{op}, {};",
            PairOp::Dealloc as u32
        ));
        self.line(&format!("@%p{po} bra $P_dealloc;"));
        self.line(&format!(
            "setp.eq.u32 %p{po}, %r{op}, {};",
            PairOp::Relinquish as u32
        ));
        self.line(&format!("@%p{po} bra $P_relinquish;"));
        // Alloc: the even CTA claims the columns in both masks and posts their address to
        // the odd one.
        let addr = self.r();
        let odd = self.pr();
        self.line(&format!("setp.ne.u32 %p{odd}, %ctaodd, 0;"));
        self.line(&format!("@%p{odd} bra $P_odd;"));
        let (a, _) = self.claim(
            Cols {
                reg: n,
                known: None,
            },
            Some(pe),
        );
        self.line(&format!("mov.b32 %r{addr}, %r{a};"));
        let rv = self.r();
        self.line(&format!("add.u32 %r{rv}, %r{addr}, 1;"));
        let ra = self.r();
        self.line(&format!("shl.b32 %r{ra}, %r{s}, 2;"));
        self.line(&format!("add.u32 %r{ra}, %r{ra}, %r{pe};"));
        self.line(&format!(
            "st.release.cluster.shared::cluster.u32 [%r{ra}+{}], %r{rv};",
            4 * st::RES
        ));
        self.line("bra $P_store;");
        self.label("$P_odd");
        let (oa, v) = (self.r(), self.r());
        let pv = self.pr();
        self.line(&format!("shl.b32 %r{oa}, %r{s}, 2;"));
        let sb = self.state_base();
        self.line(&format!("add.u32 %r{oa}, %r{oa}, {sb};"));
        self.spin_until(
            &format!(
                "ld.acquire.cluster.shared::cta.u32 %r{v}, [%r{oa}+{}];",
                4 * st::RES
            ),
            &format!("setp.ne.u32 %p{pv}, %r{v}, 0;"),
            pv,
            Code::HangPair,
            &format!("%r{k}"),
        );
        self.line(&format!("st.shared.u32 [%r{oa}+{}], 0;", 4 * st::RES));
        self.line(&format!("sub.u32 %r{addr}, %r{v}, 1;"));
        self.label("$P_store");
        self.line(&format!("st.shared.u32 [%r{slot}], %r{addr};"));
        self.line("bra $P_skip;");
        self.label("$P_dealloc");
        self.free_local(
            taddr,
            Cols {
                reg: n,
                known: None,
            },
        );
        self.line("bra $P_skip;");
        self.label("$P_relinquish");
        self.line(&format!(
            "st.volatile.shared.u32 [emu_state+{}], 1;",
            4 * st::RELQ
        ));
        self.label("$P_skip");
        self.join_lane0();
    }

    /// A `::2` collective: a trap where the cluster has no peer CTA (PEER-MISSING), else a
    /// call of `routines::PAIR` (`n`: the columns, an immediate or register; `slot`: an
    /// alloc's slot; `taddr`: a dealloc's address register).
    fn pair_call(&mut self, op: PairOp, n: &str, slot: Option<u8>, taddr: Option<u32>) {
        if self.p.launch.cluster_size < 2 {
            self.trap(Code::PeerMissing, "0");
            return;
        }
        let slot = slot.map_or("0".to_string(), |s| self.slot_address(s));
        let taddr = taddr.map_or("0".to_string(), |t| format!("%r{t}"));
        self.call_routine(
            &routines::PAIR,
            &[(op as u32).to_string(), n.to_string(), slot, taddr],
        );
    }

    /// Emulated tcgen05.ld / st: checks, then one shared-memory access per register. Returns
    /// the registers (loaded, or stored with the values of [`values::st_value`]).
    fn ldst(
        &mut self,
        shape: LdStShape,
        reps: u32,
        pack: bool,
        taddr: &TmemRef,
        split: Option<u32>,
        nregs: u16,
        store_seed: Option<u32>,
    ) -> Vec<u32> {
        // The checks are the routine's (`routines::CELLS`): convergence (unless known), the
        // address's uniformity, then per base its lane quarter and cells.
        let t = self.taddr(taddr);
        // Per shape: lanes of the footprint, registers per repetition, columns per repetition.
        let (lanes, rpr, cpr) = match shape {
            LdStShape::S32x32b => (32u32, 1u32, 1u32),
            LdStShape::S16x64b => (16, 1, 2),
            LdStShape::S16x128b => (16, 2, 4),
            LdStShape::S16x256b => (16, 4, 8),
            LdStShape::S16x32bx2 => (16, 1, 1),
            // Not a shape (LDST-SHAPE): lowered as its name says, 32 lanes x 64 bits.
            LdStShape::S32x64b => (32, 2, 2),
        };
        let widen = if pack { 2 } else { 1 };
        let ncols = cpr * reps * widen;
        let cells = |b: &mut Self, t: u32, flags: u32| {
            b.call_routine(
                &routines::CELLS,
                &[
                    format!("%r{t}"),
                    lanes.to_string(),
                    ncols.to_string(),
                    flags.to_string(),
                ],
            )
            .expect("emu_cells returns the cell")
        };
        let first = cells(self, t, if self.low.converged { 2 } else { 3 });
        // The thread's base cell, a word index of emu_tmem: (col0 + widen * C_t) * 128 +
        // lane0 + A_t, with the base's cell col0 * 128 + lane0 (threads 16-31 of .16x32bx2
        // use the second base, checked after the first), and the thread's lane A_t and column
        // C_t of the shape (below); its byte address is emu_tmem + 4 * that.
        let cell = match (shape, split) {
            (LdStShape::S16x32bx2, Some(s)) => {
                let t2 = self.r();
                self.line(&format!("add.u32 %r{t2}, %r{t}, {s};"));
                let second = cells(self, t2, 0);
                let (c, p) = (self.r(), self.pr());
                self.line(&format!("setp.lt.u32 %p{p}, %lane, 16;"));
                self.line(&format!("selp.b32 %r{c}, %r{first}, %r{second}, %p{p};"));
                c
            }
            _ => first,
        };
        let (base, a, c) = (self.r(), self.r(), self.r());
        self.line(&format!("mov.u32 %r{base}, %r{cell};"));
        match shape {
            // A_t = t, C_t = 0.
            LdStShape::S32x32b | LdStShape::S32x64b => {
                self.line(&format!("add.u32 %r{base}, %r{base}, %lane;"));
            }
            // A_t = t/4 + 8 (t mod 2), C_t = (t/2) mod 2 (the oracle's derivation from the
            // ISA figure and CUTLASS's `SM100_TMEM_LOAD_16dp64b1x` layout, `oracle::run::ldst`).
            LdStShape::S16x64b => {
                self.line(&format!("shr.u32 %r{a}, %lane, 2;"));
                self.line(&format!("and.b32 %r{c}, %lane, 1;"));
                self.line(&format!("mad.lo.u32 %r{a}, %r{c}, 8, %r{a};"));
                self.line(&format!("bfe.u32 %r{c}, %lane, 1, 1;"));
                self.line(&format!("mad.lo.u32 %r{a}, %r{c}, {}, %r{a};", 128 * widen));
                self.line(&format!("add.u32 %r{base}, %r{base}, %r{a};"));
            }
            // A_t = t/4, C_t = t mod 4 (.16x128b) or 2 (t mod 4) (.16x256b).
            LdStShape::S16x128b | LdStShape::S16x256b => {
                let k = if shape == LdStShape::S16x256b { 2 } else { 1 };
                self.line(&format!("shr.u32 %r{a}, %lane, 2;"));
                self.line(&format!("and.b32 %r{c}, %lane, 3;"));
                self.line(&format!(
                    "mad.lo.u32 %r{a}, %r{c}, {}, %r{a};",
                    128 * widen * k
                ));
                self.line(&format!("add.u32 %r{base}, %r{base}, %r{a};"));
            }
            // A_t = t mod 16, C_t = 0 (threads 16-31 use the second base, chosen above).
            LdStShape::S16x32bx2 => {
                self.line(&format!("and.b32 %r{a}, %lane, 15;"));
                self.line(&format!("add.u32 %r{base}, %r{base}, %r{a};"));
            }
        }
        let tm = self.tmem_base();
        self.line(&format!("mad.lo.u32 %r{base}, %r{base}, 4, {tm};"));
        self.line("bar.warp.sync -1;");
        let regs: Vec<u32> = (0..nregs).map(|_| self.r()).collect();
        // A st a perturbed run may defer to the warp's next wait::st (module docs of `super`,
        // "Perturbed runs"): its stores are predicated on `%emdefer` being off, and the
        // address and values are kept for the wait.
        let defer = store_seed.is_some() && self.low.c.defer && self.low.deferred.len() < 32;
        // A st no landing printed before it may leave pending stores at issue, predicated on
        // nothing (`defer::undeferrable`); it keeps its bit, never set.
        let at_issue = defer && self.low.c.undeferrable >> self.low.deferred.len() & 1 == 1;
        let mut kept: Vec<(u32, u32)> = Vec::new();
        for (i, &r) in regs.iter().enumerate() {
            let i = i as u32;
            let (rep, j) = (i / rpr, i % rpr);
            // Register i's offset from the thread's base cell: (dlane, dcol) in 32-bit columns.
            let (dl, dc) = match shape {
                LdStShape::S32x32b | LdStShape::S16x32bx2 => (0, rep),
                LdStShape::S16x64b => (0, 2 * rep),
                LdStShape::S16x128b => (8 * j, 4 * rep),
                LdStShape::S16x256b => (8 * (j / 2), 8 * rep + j % 2),
                LdStShape::S32x64b => (0, 2 * rep + j),
            };
            let off = 4 * (dc * widen * 128 + dl);
            match store_seed {
                Some(seed) if defer => {
                    let (m, a) = values::st_coeffs(seed, i);
                    self.line(&format!("mad.lo.u32 %r{r}, %lane, {m}, {a};"));
                    if pack {
                        // The halves once, for the stores now and at the wait.
                        let (lo, hi) = (self.r(), self.r());
                        self.line(&format!("and.b32 %r{lo}, %r{r}, 65535;"));
                        self.line(&format!("shr.u32 %r{hi}, %r{r}, 16;"));
                        kept.push((off, lo));
                        kept.push((off + 512, hi));
                    } else {
                        kept.push((off, r));
                    }
                }
                Some(seed) => {
                    let (m, a) = values::st_coeffs(seed, i);
                    self.line(&format!("mad.lo.u32 %r{r}, %lane, {m}, {a};"));
                    if pack {
                        let hi = self.r();
                        self.line(&format!("and.b32 %r{hi}, %r{r}, 65535;"));
                        self.line(&format!("st.shared.u32 [%r{base}+{off}], %r{hi};"));
                        self.line(&format!("shr.u32 %r{hi}, %r{r}, 16;"));
                        self.line(&format!("st.shared.u32 [%r{base}+{}], %r{hi};", off + 512));
                    } else {
                        self.line(&format!("st.shared.u32 [%r{base}+{off}], %r{r};"));
                    }
                }
                None => {
                    if pack {
                        let hi = self.r();
                        self.line(&format!("ld.shared.u32 %r{r}, [%r{base}+{off}];"));
                        self.line(&format!("ld.shared.u32 %r{hi}, [%r{base}+{}];", off + 512));
                        self.line(&format!("prmt.b32 %r{r}, %r{r}, %r{hi}, 0x5410;"));
                    } else {
                        self.line(&format!("ld.shared.u32 %r{r}, [%r{base}+{off}];"));
                    }
                }
            }
        }
        if defer {
            // An earlier instance still pending (in a loop: the plan says where) lands first,
            // in program order, from its address kept in `pbase`; then this one lands now, or
            // is kept for the wait. A wait lands it from `base` and the value registers, which
            // the st's last execution wrote.
            let bit = self.low.deferred.len() as u32;
            debug_assert!(
                self.low
                    .step
                    .is_none_or(|s| matches!(s, Step::St { bit: b, .. } if b == Some(bit))),
                "the deferral plan numbers this st's bit otherwise"
            );
            let now = DeferredSt {
                bit,
                base,
                stores: kept,
            };
            if at_issue {
                self.deferred_stores(&now, "");
                self.low.deferred.push(now);
                return regs;
            }
            let pbase = self.may_be_pending(bit).then(|| self.r());
            if let Some(pbase) = pbase {
                let (t, q) = (self.r(), self.pr());
                self.line(&format!("and.b32 %r{t}, %emstq, {};", 1u32 << bit));
                self.line(&format!("setp.ne.u32 %p{q}, %r{t}, 0;"));
                let earlier = DeferredSt {
                    base: pbase,
                    ..now.clone()
                };
                self.deferred_stores(&earlier, &format!("@%p{q} "));
            }
            self.deferred_stores(&now, "@!%emdefer ");
            if let Some(pbase) = pbase {
                self.line(&format!("@%emdefer mov.u32 %r{pbase}, %r{base};"));
            }
            self.line(&format!(
                "@%emdefer or.b32 %emstq, %emstq, {};",
                1u32 << bit
            ));
            self.low.deferred.push(now);
        }
        regs
    }

    /// The shared-memory stores of `d`, each predicated with `pred` (`@%p3 ` or empty).
    fn deferred_stores(&mut self, d: &DeferredSt, pred: &str) {
        for &(off, r) in &d.stores {
            let base = d.base;
            self.line(&format!("{pred}st.shared.u32 [%r{base}+{off}], %r{r};"));
        }
    }

    /// After an alloc, under a perturbation (`seed`, a register, not 0): the warp writes a
    /// run-dependent pattern (word index xor the perturbation) into the new columns' emulated
    /// cells (`n` columns from the address in the shared word at address `slot`, registers),
    /// so a read of cells nothing wrote, or of a st not yet landed, shows a value of this run
    /// rather than what an earlier run left in shared memory. The contents of newly allocated
    /// columns are not stated (reference §5: `Unspecified`), so any value is allowed. The
    /// kernel passes its `%emseed` where it sets it (no functions), else 0.
    fn fill_new_columns(&mut self, slot: u32, n: u32, seed: u32) {
        let (a, w, end, v, at) = (self.r(), self.r(), self.r(), self.r(), self.r());
        let p = self.pr();
        self.line(&format!("setp.eq.u32 %p{p}, %r{seed}, 0;"));
        self.line(&format!("@%p{p} bra $F_done;"));
        self.line(&format!("ld.volatile.shared.u32 %r{a}, [%r{slot}];"));
        self.line(&format!("and.b32 %r{w}, %r{a}, 65535;"));
        self.line(&format!("add.u32 %r{end}, %r{w}, %r{n};"));
        self.line(&format!("shl.b32 %r{end}, %r{end}, 7;"));
        let cols = self.cols_limit();
        let lim = self.r();
        self.line(&format!("shl.b32 %r{lim}, {cols}, 7;"));
        self.line(&format!("min.u32 %r{end}, %r{end}, %r{lim};"));
        self.line(&format!("shl.b32 %r{w}, %r{w}, 7;"));
        self.line(&format!("add.u32 %r{w}, %r{w}, %lane;"));
        let tm = self.tmem_base();
        self.loop_head("$F_top");
        self.line(&format!("setp.ge.u32 %p{p}, %r{w}, %r{end};"));
        self.line(&format!("@%p{p} bra $F_done;"));
        self.line(&format!("xor.b32 %r{v}, %r{w}, %r{seed};"));
        self.line(&format!("mad.lo.u32 %r{at}, %r{w}, 4, {tm};"));
        self.line(&format!("st.shared.u32 [%r{at}], %r{v};"));
        self.line(&format!("add.u32 %r{w}, %r{w}, 32;"));
        self.line("bra $F_top;");
        self.label("$F_done");
        self.line("bar.warp.sync -1;");
    }

    /// The shared-memory address of slot `slot` (where an alloc writes its address), in a
    /// fresh register: a routine's operand.
    fn slot_address(&mut self, slot: u8) -> String {
        let a = self.r();
        self.line(&format!("mov.u32 %r{a}, tc_slot;"));
        self.line(&format!("add.u32 %r{a}, %r{a}, {};", 4 * u32::from(slot)));
        format!("%r{a}")
    }

    /// wait::st: the warp's deferred sts land, in program order (ST-ASYNC, WAIT-SCOPE), those
    /// the plan says may be pending ([`super::defer`]); then `%emstq` clears.
    fn land_deferred_sts(&mut self) {
        let all = self.low.deferred.clone();
        let landing: Vec<&DeferredSt> = all.iter().filter(|d| self.may_be_pending(d.bit)).collect();
        for d in landing {
            let (t, q) = (self.r(), self.pr());
            self.line(&format!("and.b32 %r{t}, %emstq, {};", 1u32 << d.bit));
            self.line(&format!("setp.ne.u32 %p{q}, %r{t}, 0;"));
            self.deferred_stores(d, &format!("@%p{q} "));
        }
        // Every bit clears, also those of sts printed after this instruction (a loop); where
        // none may be set, `%emstq` is 0 already.
        let none = matches!(self.low.step, Some(Step::Land { pending: 0 }));
        if !all.is_empty() && !none {
            self.line("mov.u32 %emstq, 0;");
        }
    }

    /// The shared-memory address of `emu_tmem`: `%emtm` in the kernel (its preamble sets it),
    /// else a fresh register.
    fn tmem_base(&mut self) -> String {
        if self.low.kernel {
            return "%emtm".into();
        }
        let tm = self.r();
        self.line(&format!("mov.u32 %r{tm}, emu_tmem;"));
        format!("%r{tm}")
    }

    /// The shared-memory address of `emu_state`: `%emsa` in the kernel (its preamble sets
    /// it), else a fresh register.
    fn state_base(&mut self) -> String {
        if self.low.kernel {
            return "%emsa".into();
        }
        let sb = self.r();
        self.line(&format!("mov.u32 %r{sb}, emu_state;"));
        format!("%r{sb}")
    }

    /// Whether deferred-st bit `bit` may be set where the instruction being printed starts
    /// (every bit where the plan does not say).
    fn may_be_pending(&self, bit: u32) -> bool {
        match self.low.step {
            Some(Step::Land { pending }) => pending >> bit & 1 == 1,
            Some(Step::St {
                bit: b,
                own_pending,
            }) if b == Some(bit) => own_pending,
            _ => true,
        }
    }

    /// Emulated tcgen05.shift: rows lane+0..30 move down by one lane in 8 columns (OQ-16).
    fn shift_emu(&mut self, cg: CtaGroup, taddr: &TmemRef) {
        let t = self.taddr(taddr);
        let (lane, col) = self.split_taddr(t);
        let e = self.r();
        let p = self.pr();
        let opened = self.checks_begin();
        self.line(&format!("and.b32 %r{e}, %r{lane}, 31;"));
        self.line(&format!("setp.ne.u32 %p{p}, %r{e}, 0;"));
        self.trap_if(p, Code::ShiftLaneAlign, &format!("%r{t}"));
        self.check_cells(lane, Val::Imm(32), col, Val::Imm(8));
        self.checks_end(opened);
        if cg == CtaGroup::Two && self.p.launch.cluster_size < 2 {
            self.trap(Code::PeerMissing, "0");
            return;
        }
        // Cluster-window address of row `lane`, column `col` in this CTA (and the peer).
        let base = self.r();
        self.line(&format!("mad.lo.u32 %r{base}, %r{col}, 128, %r{lane};"));
        let tm = self.tmem_base();
        self.line(&format!("mad.lo.u32 %r{base}, %r{base}, 4, {tm};"));
        let mut ctas = vec![];
        let own = self.r();
        self.line(&format!(
            "mapa.shared::cluster.u32 %r{own}, %r{base}, %ctarank;"
        ));
        ctas.push(own);
        if cg == CtaGroup::Two {
            let (pr, pa) = (self.r(), self.r());
            self.line(&format!("xor.b32 %r{pr}, %ctarank, 1;"));
            self.line(&format!(
                "mapa.shared::cluster.u32 %r{pa}, %r{base}, %r{pr};"
            ));
            ctas.push(pa);
        }
        // Rows 30 down to 0, a loop (unrolled, 31 rows × 8 columns per CTA made the module
        // compile slowly, `loop_head`).
        let (v, row, x) = (self.r(), self.r(), self.r());
        let q = self.pr();
        for a in ctas {
            let n = self.next_label();
            self.line(&format!("mov.u32 %r{row}, 30;"));
            self.loop_head(&format!("$SH{n}_row"));
            self.line(&format!("mad.lo.u32 %r{x}, %r{row}, 4, %r{a};"));
            for c in 0..8u32 {
                let from = 4 * (c * 128);
                self.line(&format!("ld.shared::cluster.u32 %r{v}, [%r{x}+{from}];"));
                self.line(&format!(
                    "st.shared::cluster.u32 [%r{x}+{}], %r{v};",
                    from + 4
                ));
            }
            self.line(&format!("setp.ne.u32 %p{q}, %r{row}, 0;"));
            self.line(&format!("sub.u32 %r{row}, %r{row}, 1;"));
            self.line(&format!("@%p{q} bra $SH{n}_row;"));
        }
    }
}

/// The `::2` collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PairOp {
    Alloc = 1,
    Dealloc = 2,
    Relinquish = 3,
}

/// An operand of a printed check: an immediate, or the `%r` register that holds it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Val {
    Imm(u32),
    Reg(u32),
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Imm(v) => write!(f, "{v}"),
            Val::Reg(r) => write!(f, "%r{r}"),
        }
    }
}

/// An nCols operand: its value when the lowering knows it (the same in every lane: every
/// form but `RegDivergent`), else the register that holds it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cols {
    pub(super) reg: u32,
    pub(super) known: Option<u32>,
}

impl Cols {
    /// The operand `n`, in register `reg` where the lowering does not know it
    /// ([`EmuOps::ncols`]).
    fn of(n: &tcgen05_ir::NCols, reg: u32) -> Cols {
        Cols {
            reg,
            known: (n.form != NColsForm::RegDivergent).then_some(n.value),
        }
    }

    /// The operand as text: the immediate where known, else the register.
    fn op(&self) -> String {
        match self.known {
            Some(v) => v.to_string(),
            None => format!("%r{}", self.reg),
        }
    }
}
