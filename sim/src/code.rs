//! The simulator's view of a program: each code body (a warp's code or a function) flattened
//! into instructions with explicit jumps, so that a warp is a program counter plus a small
//! stack and the scheduler can interleave warps one instruction at a time.
//!
//! Structured control flow keeps the PTX printer's meaning (`tcgen05_ir::ptx::emit`): an `If`
//! runs its `then` statements with the lanes where the condition holds, then its `els`
//! statements with the others, and the lanes reconverge after it; a `Loop` runs its body
//! `count` times with the same lanes. An ld's registers are recorded where the printer records
//! them: right after the first `tcgen05.wait::ld` that follows it in the same statement list,
//! or at the end of that list (observe.rs).

use tcgen05_ir::observe::{Layout, Site, next_site};
use tcgen05_ir::{Cond, FillElem, Op, Program, Scope, Stmt, WaitOp};

/// One flattened instruction.
#[derive(Debug, Clone)]
pub enum Ins<'p> {
    /// A tcgen05 instruction other than ld and wait::ld.
    Tc(&'p Op),
    /// A tcgen05.ld; `ld` indexes the program's ld table.
    Ld {
        /// The instruction.
        op: &'p Op,
        /// Index in [`Code::lds`].
        ld: u32,
    },
    /// `tcgen05.wait::ld`, then the records of the lds it covers in this statement list.
    WaitLd {
        /// The lds whose registers are recorded right after the wait.
        records: Vec<u32>,
    },
    /// Records of lds at the end of a statement list (register dependency, MCM-LD-REGDEP).
    Record(Vec<u32>),
    /// Start of an `If`: lanes where `cond` holds run on; `else_at` is the `Else` instruction.
    If {
        /// Condition.
        cond: Cond,
        /// Index of the matching [`Ins::Else`].
        else_at: u32,
    },
    /// End of the `then` statements: switch to the `els` lanes; `end_at` is the `EndIf`.
    Else {
        /// Index of the matching [`Ins::EndIf`].
        end_at: u32,
    },
    /// Reconvergence after an `If`.
    EndIf,
    /// Start of a loop of `count` iterations; `end_at` is the instruction after `LoopEnd`.
    Loop {
        /// Iterations.
        count: u8,
        /// Index after the matching [`Ins::LoopEnd`].
        end_at: u32,
    },
    /// End of a loop body; `top` is the first instruction of the body.
    LoopEnd {
        /// First instruction of the body.
        top: u32,
    },
    /// Call of a function.
    Call(u8),
    /// End of a code body: return from a function, or finish the warp.
    End,
    /// `exit`.
    Exit,
    /// `barrier.sync 0`.
    BarCta,
    /// `barrier.cluster.arrive`.
    ClusterArrive,
    /// `barrier.cluster.wait`.
    ClusterWait,
    /// `mbarrier.init`.
    MbarInit {
        /// mbarrier.
        bar: u8,
        /// Count.
        count: u32,
    },
    /// `mbarrier.arrive`.
    MbarArrive {
        /// mbarrier.
        bar: u8,
        /// Cluster rank of the target CTA.
        cta: Option<u8>,
    },
    /// The bounded `mbarrier.try_wait.parity` loop, recorded at `site`.
    MbarWait {
        /// mbarrier.
        bar: u8,
        /// Parity waited for.
        parity: bool,
        /// Scope.
        scope: Scope,
        /// Tries before giving up.
        max_tries: u32,
        /// Record.
        site: Site,
    },
    /// Generic-proxy fill of a data region.
    Fill {
        /// Region.
        region: u8,
        /// Seed.
        seed: u32,
        /// Element kind.
        elem: FillElem,
    },
    /// `ld.shared` of an alloc slot, recorded at `site`.
    ObserveAddr {
        /// Slot.
        slot: u8,
        /// Record.
        site: Site,
    },
    /// A checkpoint store.
    Checkpoint(u16),
    /// Anything without an effect in the simulator (fences of other proxies, spins: a spin is
    /// a schedule knob, and the scheduler already chooses every interleaving it allows).
    Nop,
}

/// An ld of the program: its site.
#[derive(Debug, Clone, Copy)]
pub struct LdInfo {
    /// Its record.
    pub site: Site,
    /// Data words per lane (registers, +1 for `.red`).
    pub words: u32,
}

/// Every code body of a program, flattened.
#[derive(Debug)]
pub struct Code<'p> {
    /// Bodies: warp ranks first (`0..warps`), then functions (`warps + f`).
    pub bodies: Vec<Vec<Ins<'p>>>,
    /// The ld table.
    pub lds: Vec<LdInfo>,
    /// Number of warp bodies.
    pub warps: usize,
    /// The observation layout.
    pub layout: Layout,
}

impl<'p> Code<'p> {
    /// Flattens `p`.
    pub fn of(p: &'p Program) -> Code<'p> {
        let layout = Layout::of(p);
        let mut lds = Vec::new();
        let mut bodies = Vec::with_capacity(p.warps.len() + p.funcs.len());
        let all = p
            .warps
            .iter()
            .zip(&layout.warp_sites)
            .chain(p.funcs.iter().map(|f| &f.body).zip(&layout.func_sites));
        for (stmts, sites) in all {
            let mut out = Vec::with_capacity(stmts.len() + 8);
            let mut next = 0;
            Self::block(&mut lds, stmts, sites, &mut next, &mut out);
            out.push(Ins::End);
            bodies.push(out);
        }
        Code {
            bodies,
            lds,
            warps: p.warps.len(),
            layout,
        }
    }

    fn block(
        lds: &mut Vec<LdInfo>,
        stmts: &'p [Stmt],
        sites: &[Site],
        next: &mut usize,
        out: &mut Vec<Ins<'p>>,
    ) {
        let mut pending: Vec<u32> = Vec::new();
        for s in stmts {
            let site = next_site(s, sites, next);
            match s {
                Stmt::Tc(op @ Op::Ld { .. }) => {
                    let site = site.expect("an ld is a site");
                    let id = lds.len() as u32;
                    lds.push(LdInfo {
                        site,
                        words: site.words,
                    });
                    pending.push(id);
                    out.push(Ins::Ld { op, ld: id });
                }
                Stmt::Tc(Op::Wait { form }) if form.op == WaitOp::Ld => {
                    out.push(Ins::WaitLd {
                        records: std::mem::take(&mut pending),
                    });
                }
                Stmt::Tc(op) => out.push(Ins::Tc(op)),
                Stmt::If { cond, then, els } => {
                    let at = out.len();
                    out.push(Ins::If {
                        cond: *cond,
                        else_at: 0,
                    });
                    Self::block(lds, then, sites, next, out);
                    let else_at = out.len() as u32;
                    out.push(Ins::Else { end_at: 0 });
                    Self::block(lds, els, sites, next, out);
                    let end_at = out.len() as u32;
                    out.push(Ins::EndIf);
                    out[at] = Ins::If {
                        cond: *cond,
                        else_at,
                    };
                    out[else_at as usize] = Ins::Else { end_at };
                }
                Stmt::Loop { count, body } => {
                    let at = out.len();
                    out.push(Ins::Loop {
                        count: *count,
                        end_at: 0,
                    });
                    let top = out.len() as u32;
                    Self::block(lds, body, sites, next, out);
                    out.push(Ins::LoopEnd { top });
                    let end_at = out.len() as u32;
                    out[at] = Ins::Loop {
                        count: *count,
                        end_at,
                    };
                }
                Stmt::Call(f) => out.push(Ins::Call(*f)),
                Stmt::Exit => out.push(Ins::Exit),
                Stmt::BarCta => out.push(Ins::BarCta),
                Stmt::ClusterArrive { .. } => out.push(Ins::ClusterArrive),
                Stmt::ClusterWait => out.push(Ins::ClusterWait),
                Stmt::MbarInit { bar, count } => out.push(Ins::MbarInit {
                    bar: *bar,
                    count: *count,
                }),
                Stmt::FenceMbarInit | Stmt::FenceProxyAsync | Stmt::Spin(_) => out.push(Ins::Nop),
                Stmt::MbarArrive { bar, cta } => out.push(Ins::MbarArrive {
                    bar: *bar,
                    cta: *cta,
                }),
                Stmt::MbarWait {
                    bar,
                    parity,
                    scope,
                    max_tries,
                } => out.push(Ins::MbarWait {
                    bar: *bar,
                    parity: *parity,
                    scope: *scope,
                    max_tries: *max_tries,
                    site: site.expect("an mbarrier wait is a site"),
                }),
                Stmt::Fill { region, seed, elem } => out.push(Ins::Fill {
                    region: *region,
                    seed: *seed,
                    elem: *elem,
                }),
                Stmt::ObserveAddr { slot } => out.push(Ins::ObserveAddr {
                    slot: *slot,
                    site: site.expect("an address observation is a site"),
                }),
                Stmt::Checkpoint(id) => out.push(Ins::Checkpoint(*id)),
            }
        }
        if !pending.is_empty() {
            out.push(Ins::Record(pending));
        }
    }
}
