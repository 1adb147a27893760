//! Litmus families: the canonical synchronization patterns of reference §4.4,
//! each with every one-step weakening (one synchronizing step removed), plus targeted families
//! for lane quarters, capacity boundaries and 2-CTA pairing under timing skew.
//!
//! A family is named and enumerable: [`FAMILIES`] lists them, [`Family::members`] builds every
//! member. A weakening is a near-miss whose rule is the one the removed step satisfied.

use crate::mmaenc;
use crate::stmts::*;
use tcgen05_ir::form::*;
use tcgen05_ir::*;

/// One member of a family.
#[derive(Debug, Clone)]
pub struct Member {
    /// `family/member`.
    pub name: String,
    /// `Valid` for the canonical pattern, `NearMiss` for a weakening.
    pub intent: Intent,
    /// The program.
    pub program: Program,
}

/// A named, enumerable family.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// The name (`--family NAME`).
    pub name: &'static str,
    /// What it exercises.
    pub about: &'static str,
    /// Builds every member.
    pub members: fn() -> Vec<Member>,
}

/// Every family.
pub const FAMILIES: &[Family] = &[
    Family {
        name: "pipelined-same-thread",
        about: "§4.4 row 1: cp → mma and mma → mma in one thread need nothing",
        members: pipelined_same_thread,
    },
    Family {
        name: "nonpipelined-same-thread",
        about: "§4.4 row 2: st; wait::st; ld and mma; commit; wait; fence::after; ld",
        members: nonpipelined_same_thread,
    },
    Family {
        name: "pipelined-cross-thread",
        about: "§4.4 row 3: cp; fence::before; arrive → wait; fence::after; mma",
        members: pipelined_cross_thread,
    },
    Family {
        name: "nonpipelined-cross-thread",
        about: "§4.4 row 4: st; wait::st; fence::before; arrive → wait; fence::after; mma",
        members: nonpipelined_cross_thread,
    },
    Family {
        name: "register-dependency",
        about: "§4.4 row 5: ld results through registers; WAR needs wait::ld",
        members: register_dependency,
    },
    Family {
        name: "lane-quarters",
        about: "§2.4: every warp of one or two warpgroups in its own quarter",
        members: lane_quarters,
    },
    Family {
        name: "capacity",
        about: "§2.3: allocations that fill the 512 columns exactly, and one more",
        members: capacity,
    },
    Family {
        name: "pair-skew",
        about: "§2.5: the 2-CTA protocol with delays in one CTA of the pair",
        members: pair_skew,
    },
];

/// The family named `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// Every member of every family, in order.
pub fn all_members() -> Vec<Member> {
    FAMILIES.iter().flat_map(|f| (f.members)()).collect()
}

// ---------------------------------------------------------------------------------------------
// A skeleton every member shares: warp 0 allocates, everyone synchronizes, works, synchronizes,
// and warp 0 frees (the builder's protocol, fixed).

struct Sk {
    cg: CtaGroup,
    cluster: u8,
    warps: usize,
    allocs: Vec<u32>,
    mbars: u8,
    regions: Vec<u32>,
    /// Extra setup statements per warp (after warp 0's allocs).
    setup: Vec<Vec<Stmt>>,
    /// Work statements per warp.
    work: Vec<Vec<Stmt>>,
    /// Statements of warp 0 between its allocs and the first sync (timing skew).
    pre_alloc: Vec<Stmt>,
    /// Statements of warp 0 before its deallocs.
    pre_dealloc: Vec<Stmt>,
}

impl Sk {
    fn new(warps: usize, allocs: &[u32]) -> Sk {
        Sk {
            cg: CtaGroup::One,
            cluster: 1,
            warps,
            allocs: allocs.to_vec(),
            mbars: 0,
            regions: Vec::new(),
            setup: vec![Vec::new(); warps],
            work: vec![Vec::new(); warps],
            pre_alloc: Vec::new(),
            pre_dealloc: Vec::new(),
        }
    }

    fn region(&mut self, bytes: u32) -> u8 {
        self.regions.push(bytes);
        (self.regions.len() - 1) as u8
    }

    fn build(self) -> Program {
        let cg = self.cg;
        let sync = |c: &mut Vec<Stmt>| {
            if cg == CtaGroup::Two {
                c.push(Stmt::ClusterArrive { relaxed: false });
                c.push(Stmt::ClusterWait);
            } else {
                c.push(Stmt::BarCta);
            }
        };
        let mut warps = Vec::with_capacity(self.warps);
        for w in 0..self.warps {
            let mut c = Vec::new();
            if cg == CtaGroup::Two {
                sync(&mut c);
            }
            c.push(Stmt::Checkpoint(1));
            if w == 0 {
                c.extend(self.pre_alloc.iter().cloned());
                for (i, n) in self.allocs.iter().enumerate() {
                    c.push(alloc(cg, i as u8, *n));
                }
                c.push(fence_before());
            }
            c.extend(self.setup[w].iter().cloned());
            sync(&mut c);
            c.push(Stmt::Checkpoint(2));
            c.push(fence_after());
            c.extend(self.work[w].iter().cloned());
            c.push(fence_before());
            sync(&mut c);
            if w == 0 {
                c.push(Stmt::Checkpoint(3));
                c.push(fence_after());
                c.extend(self.pre_dealloc.iter().cloned());
                for (i, n) in self.allocs.iter().enumerate().rev() {
                    c.push(dealloc(cg, i as u8, *n));
                }
                c.push(relinquish(cg));
            }
            warps.push(c);
        }
        Program {
            launch: Launch {
                target: Target::Sm100a,
                ptx_version: PtxVersion::new(8, 6),
                cluster_size: self.cluster,
                clusters: 1,
                warps_per_cta: self.warps as u8,
                declare_cluster: self.cluster > 1,
            },
            smem: Smem {
                slots: self.allocs.len() as u8,
                mbarriers: self.mbars,
                regions: self.regions,
            },
            warps,
            funcs: Vec::new(),
        }
    }
}

fn valid(family: &str, member: &str, p: Program) -> Member {
    Member {
        name: format!("{family}/{member}"),
        intent: Intent::Valid,
        program: p,
    }
}

fn weak(family: &str, member: &str, rule: RuleId, p: Program) -> Member {
    Member {
        name: format!("{family}/{member}"),
        intent: Intent::NearMiss { breaks: rule },
        program: p,
    }
}

const D_COL: u16 = 0;
const A_COL: u16 = 64;
const N: u32 = 32;
const KIND: MmaKind = MmaKind::F16;

fn mma_stmt(a: MmaA, b_region: u8, enable: bool) -> Stmt {
    Stmt::Tc(Op::Mma(Box::new(Mma {
        form: MmaForm {
            ws: false,
            sp: false,
            cta_group: CtaGroup::One,
            kind: KIND,
            block_scale: false,
            scale_vec: None,
            ashift: false,
            collector: None,
        },
        d: TmemRef::slot(0, 0, D_COL),
        a,
        b: mmaenc::kmajor_desc(b_region),
        sp_meta: None,
        idesc: mmaenc::idesc_for(KIND, 128, N, 0).encode(),
        scale_a: None,
        scale_b: None,
        disable_output_lane: None,
        enable_input_d: enable,
        scale_input_d: None,
        zero_col_mask: None,
    })))
}

fn cp_a(region: u8) -> Stmt {
    Stmt::Tc(Op::Cp {
        form: CpForm {
            cta_group: CtaGroup::One,
            shape: CpShape::S128x256b,
            multicast: None,
            dst_fmt: None,
            src_fmt: None,
        },
        taddr: TmemRef::slot(0, 0, A_COL),
        src: mmaenc::kmajor_desc(region),
    })
}

fn elect(then: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond: Cond::ElectOne,
        then,
        els: vec![],
    }
}

fn ld32(lane: u16, col: u16, num: Num) -> Stmt {
    ld(
        ld_form(LdStShape::S32x32b, num, false),
        TmemRef::slot(0, lane, col),
        None,
    )
}

fn st32(lane: u16, col: u16, num: Num, seed: u32) -> Stmt {
    st(
        st_form(LdStShape::S32x32b, num, false),
        TmemRef::slot(0, lane, col),
        None,
        seed,
    )
}

/// The consumer of D: wait for phase 0 of mbarrier 0, fence, load the warp's quarter.
fn consume_d(w: usize, fence: bool) -> Vec<Stmt> {
    let mut v = vec![mbar_wait(0, Scope::Cta)];
    if fence {
        v.push(fence_after());
    }
    v.push(ld32(32 * (w % 4) as u16, D_COL, Num::X8));
    v.push(wait(WaitOp::Ld));
    v
}

/// Sets up the MMA scaffolding in `sk`: mbarrier 0 (and 1 if `two_bars`), the B region and,
/// with `a_region`, the A source region; warp `w` fills them.
fn mma_setup(sk: &mut Sk, w: usize, two_bars: bool) -> (u8, u8) {
    sk.mbars = if two_bars { 2 } else { 1 };
    let a = sk.region(128 * 32);
    let b = sk.region(N * 32);
    let mut s = vec![mbar_init_one(0)];
    if two_bars {
        s.push(mbar_init_one(1));
    }
    s.push(Stmt::Fill {
        region: a,
        seed: 0xA,
        elem: mmaenc::fill_elem(KIND),
    });
    s.push(Stmt::Fill {
        region: b,
        seed: 0xB,
        elem: mmaenc::fill_elem(KIND),
    });
    s.push(Stmt::FenceProxyAsync);
    sk.setup[w].extend(s);
    (a, b)
}

// ---------------------------------------------------------------------------------------------

fn pipelined_same_thread() -> Vec<Member> {
    const F: &str = "pipelined-same-thread";
    let make = |second_mma: bool, cp: bool| {
        let mut sk = Sk::new(2, &[128]);
        let (a, b) = mma_setup(&mut sk, 0, false);
        let mut issue = Vec::new();
        let a_op = if cp {
            issue.push(cp_a(a));
            MmaA::Tmem(TmemRef::slot(0, 0, A_COL))
        } else {
            MmaA::Desc(mmaenc::kmajor_desc(a))
        };
        issue.push(mma_stmt(a_op, b, false));
        if second_mma {
            issue.push(mma_stmt(a_op, b, true));
        }
        issue.push(commit(CtaGroup::One, 0, true));
        sk.work[0].push(elect(issue));
        for w in 0..2 {
            sk.work[w].extend(consume_d(w, true));
        }
        sk.build()
    };
    let mut v = vec![
        valid(F, "cp-mma", make(false, true)),
        valid(F, "mma-mma", make(true, false)),
        valid(F, "cp-mma-mma", make(true, true)),
    ];
    // Weakening: the cp is issued by another warp's thread, with no synchronization at all,
    // so the pipeline pair (same thread) no longer orders it before the mma (MCM-XTHREAD).
    let mut sk = Sk::new(2, &[128]);
    let (a, b) = mma_setup(&mut sk, 0, false);
    sk.work[1].push(elect(vec![cp_a(a)]));
    sk.work[0].push(elect(vec![
        mma_stmt(MmaA::Tmem(TmemRef::slot(0, 0, A_COL)), b, false),
        commit(CtaGroup::One, 0, true),
    ]));
    for w in 0..2 {
        sk.work[w].extend(consume_d(w, true));
    }
    // The cp also needs completion before the dealloc: its warp commits to mbarrier 1.
    sk.mbars = 2;
    sk.setup[0].push(mbar_init_one(1));
    sk.work[1][0] = elect(vec![cp_a(a), commit(CtaGroup::One, 1, true)]);
    sk.work[1].push(mbar_wait(1, Scope::Cta));
    v.push(weak(
        F,
        "cp-in-other-thread",
        RuleId::McmXthread,
        sk.build(),
    ));
    v
}

fn nonpipelined_same_thread() -> Vec<Member> {
    const F: &str = "nonpipelined-same-thread";
    let stld = |wait_st: bool, wait_ld: bool| {
        let mut sk = Sk::new(1, &[32]);
        let mut w = vec![st32(0, 0, Num::X4, 0x51)];
        if wait_st {
            w.push(wait(WaitOp::St));
        }
        w.push(ld32(0, 0, Num::X4));
        if wait_ld {
            w.push(wait(WaitOp::Ld));
        }
        if !wait_st {
            w.push(wait(WaitOp::St));
        }
        sk.work[0] = w;
        sk.build()
    };
    let mma = |commit_: bool, wait_: bool, fence: bool| {
        let mut sk = Sk::new(1, &[128]);
        let (a, b) = mma_setup(&mut sk, 0, false);
        let mut issue = vec![mma_stmt(MmaA::Desc(mmaenc::kmajor_desc(a)), b, false)];
        if commit_ {
            issue.push(commit(CtaGroup::One, 0, true));
        }
        sk.work[0].push(elect(issue));
        if wait_ {
            sk.work[0].push(mbar_wait(0, Scope::Cta));
        }
        if fence {
            sk.work[0].push(fence_after());
        }
        sk.work[0].push(ld32(0, D_COL, Num::X8));
        sk.work[0].push(wait(WaitOp::Ld));
        sk.build()
    };
    vec![
        valid(F, "st-wait-ld", stld(true, true)),
        weak(
            F,
            "st-ld-no-wait-st",
            RuleId::McmStBeforeUse,
            stld(false, true),
        ),
        weak(F, "st-ld-no-wait-ld", RuleId::McmLdWar, stld(true, false)),
        valid(F, "mma-commit-wait-fence-ld", mma(true, true, true)),
        weak(
            F,
            "mma-no-commit",
            RuleId::CommitTrack,
            mma(false, true, true),
        ),
        weak(F, "mma-no-wait", RuleId::MmaAsync, mma(true, false, true)),
        weak(
            F,
            "mma-no-fence-after",
            RuleId::FenceAfter,
            mma(true, true, false),
        ),
    ]
}

fn pipelined_cross_thread() -> Vec<Member> {
    const F: &str = "pipelined-cross-thread";
    // T0 (warp 0): cp; fence::before; arrive(1). T1 (warp 1): wait(1); fence::after; mma;
    // commit(0). Everyone: wait(0); fence::after; ld D.
    let make = |fb: bool, arrive: bool, wt: bool, fa: bool| {
        let mut sk = Sk::new(2, &[128]);
        let (a, b) = mma_setup(&mut sk, 0, true);
        sk.mbars = 3;
        sk.setup[0].push(mbar_init_one(2));
        let mut t0 = vec![cp_a(a)];
        if fb {
            t0.push(fence_before());
        }
        if arrive {
            t0.push(Stmt::MbarArrive { bar: 1, cta: None });
        }
        // The cp's own completion, for the dealloc (OQ-4: nothing says a dealloc may overtake
        // an async write): T0 commits it to mbarrier 2 after the pattern and waits for it.
        t0.push(commit(CtaGroup::One, 2, true));
        sk.work[0].push(elect(t0));
        sk.work[0].push(mbar_wait(2, Scope::Cta));
        let mut t1 = Vec::new();
        if wt {
            t1.push(mbar_wait(1, Scope::Cta));
        }
        if fa {
            t1.push(fence_after());
        }
        t1.push(elect(vec![
            mma_stmt(MmaA::Tmem(TmemRef::slot(0, 0, A_COL)), b, false),
            commit(CtaGroup::One, 0, true),
        ]));
        sk.work[1].extend(t1);
        for w in 0..2 {
            sk.work[w].extend(consume_d(w, true));
        }
        sk.build()
    };
    vec![
        valid(F, "canonical", make(true, true, true, true)),
        weak(
            F,
            "no-fence-before",
            RuleId::FenceBefore,
            make(false, true, true, true),
        ),
        weak(
            F,
            "no-arrive",
            RuleId::McmXthread,
            make(true, false, true, true),
        ),
        weak(
            F,
            "no-wait",
            RuleId::McmXthread,
            make(true, true, false, true),
        ),
        weak(
            F,
            "no-fence-after",
            RuleId::FenceAfter,
            make(true, true, true, false),
        ),
    ]
}

fn nonpipelined_cross_thread() -> Vec<Member> {
    const F: &str = "nonpipelined-cross-thread";
    // T0 (warp 0): st A quarter 0; wait::st; fence::before; arrive(1). T1 (warp 1): wait(1);
    // fence::after; mma reading A from TMEM; commit(0). Everyone: wait(0); fence::after; ld D.
    let make = |ws: bool, fb: bool, arrive: bool, wt: bool, fa: bool| {
        let mut sk = Sk::new(2, &[128]);
        let (_, b) = mma_setup(&mut sk, 1, true);
        let mut t0 = vec![st32(0, A_COL, Num::X8, 0x5EED)];
        if ws {
            t0.push(wait(WaitOp::St));
        }
        if fb {
            t0.push(fence_before());
        }
        if arrive {
            t0.push(elect(vec![Stmt::MbarArrive { bar: 1, cta: None }]));
        }
        if !ws {
            // Completed later, so the dealloc still follows it.
            t0.push(wait(WaitOp::St));
        }
        sk.work[0].extend(t0);
        if wt {
            sk.work[1].push(mbar_wait(1, Scope::Cta));
        }
        if fa {
            sk.work[1].push(fence_after());
        }
        sk.work[1].push(elect(vec![
            mma_stmt(MmaA::Tmem(TmemRef::slot(0, 0, A_COL)), b, false),
            commit(CtaGroup::One, 0, true),
        ]));
        for w in 0..2 {
            sk.work[w].extend(consume_d(w, true));
        }
        sk.build()
    };
    // The second example of the row: T0: mma; commit → T1: wait; fence::after; ld.
    let mma_ld = |fa: bool| {
        let mut sk = Sk::new(2, &[128]);
        let (a, b) = mma_setup(&mut sk, 0, false);
        sk.work[0].push(elect(vec![
            mma_stmt(MmaA::Desc(mmaenc::kmajor_desc(a)), b, false),
            commit(CtaGroup::One, 0, true),
        ]));
        sk.work[0].extend(consume_d(0, true));
        sk.work[1].extend(consume_d(1, fa));
        sk.build()
    };
    vec![
        valid(F, "st-canonical", make(true, true, true, true, true)),
        weak(
            F,
            "st-no-wait-st",
            RuleId::McmXthreadNonpipe,
            make(false, true, true, true, true),
        ),
        weak(
            F,
            "st-no-fence-before",
            RuleId::FenceBefore,
            make(true, false, true, true, true),
        ),
        weak(
            F,
            "st-no-arrive",
            RuleId::McmXthread,
            make(true, true, false, true, true),
        ),
        weak(
            F,
            "st-no-wait",
            RuleId::McmXthread,
            make(true, true, true, false, true),
        ),
        weak(
            F,
            "st-no-fence-after",
            RuleId::FenceAfter,
            make(true, true, true, true, false),
        ),
        valid(F, "mma-commit-ld", mma_ld(true)),
        weak(
            F,
            "mma-commit-ld-no-fence-after",
            RuleId::FenceAfter,
            mma_ld(false),
        ),
    ]
}

fn register_dependency() -> Vec<Member> {
    const F: &str = "register-dependency";
    // ld; [wait::ld]; st over the same cells; wait::st; ld; wait::ld. The first ld's registers
    // are recorded through their true dependency (MCM-LD-REGDEP); the st after it is a WAR
    // hazard unless wait::ld comes first (MCM-LD-WAR).
    let make = |first_wait: bool| {
        let mut sk = Sk::new(1, &[32]);
        let mut w = vec![
            st32(0, 0, Num::X2, 1),
            wait(WaitOp::St),
            ld32(0, 0, Num::X2),
        ];
        if first_wait {
            w.push(wait(WaitOp::Ld));
        }
        w.extend([
            st32(0, 0, Num::X2, 2),
            wait(WaitOp::St),
            ld32(0, 0, Num::X2),
            wait(WaitOp::Ld),
        ]);
        sk.work[0] = w;
        sk.build()
    };
    vec![
        valid(F, "wait-ld-before-overwrite", make(true)),
        weak(F, "overwrite-before-wait-ld", RuleId::McmLdWar, make(false)),
    ]
}

fn lane_quarters() -> Vec<Member> {
    const F: &str = "lane-quarters";
    let make = |warps: usize, upper16: bool, wrong: bool| {
        let mut sk = Sk::new(warps, &[64]);
        for w in 0..warps {
            // Warps w and w + 4 share quarter w % 4 (warp-rank mod 4, §2.4): disjoint columns.
            let q = (w % 4) as u16;
            let q = if wrong && w == 1 { 0 } else { q };
            let col = 8 * (w / 4) as u16;
            let (shape, lane) = if upper16 {
                (LdStShape::S16x64b, 32 * q + 16)
            } else {
                (LdStShape::S32x32b, 32 * q)
            };
            let t = TmemRef::slot(0, lane, col);
            sk.work[w] = vec![
                st(st_form(shape, Num::X2, false), t, None, 0x100 + w as u32),
                wait(WaitOp::St),
                ld(ld_form(shape, Num::X2, false), t, None),
                wait(WaitOp::Ld),
            ];
        }
        sk.build()
    };
    vec![
        valid(F, "one-warpgroup", make(4, false, false)),
        valid(F, "two-warpgroups", make(8, false, false)),
        valid(F, "upper-16-lanes", make(4, true, false)),
        weak(
            F,
            "warp1-in-quarter0",
            RuleId::LdstLaneQuarter,
            make(4, false, true),
        ),
    ]
}

fn capacity() -> Vec<Member> {
    const F: &str = "capacity";
    let make = |sizes: &[u32]| {
        let mut sk = Sk::new(1, sizes);
        // Touch the last column of every allocation.
        for (i, n) in sizes.iter().enumerate() {
            let t = TmemRef::slot(i as u8, 0, (*n - 1) as u16);
            sk.work[0].extend([
                st(
                    st_form(LdStShape::S32x32b, Num::X1, false),
                    t,
                    None,
                    7 + i as u32,
                ),
                wait(WaitOp::St),
                ld(ld_form(LdStShape::S32x32b, Num::X1, false), t, None),
                wait(WaitOp::Ld),
            ]);
        }
        sk.build()
    };
    // Free everything, then take all 512 columns again.
    let realloc = {
        let mut sk = Sk::new(1, &[512]);
        sk.pre_dealloc = vec![
            dealloc(CtaGroup::One, 0, 512),
            alloc(CtaGroup::One, 0, 512),
            Stmt::ObserveAddr { slot: 0 },
        ];
        sk.build()
    };
    vec![
        valid(F, "512", make(&[512])),
        valid(F, "256+256", make(&[256, 256])),
        valid(F, "256+128+128", make(&[256, 128, 128])),
        valid(F, "128x4", make(&[128, 128, 128, 128])),
        valid(F, "32x16", make(&[32; 16])),
        valid(F, "512-free-512", realloc),
        weak(F, "512+32", RuleId::AllocBlocks, {
            let mut sk = Sk::new(1, &[512]);
            sk.pre_alloc.clear();
            let mut p = sk.build();
            p.smem.slots = 2;
            let at = p.warps[0]
                .iter()
                .position(|s| matches!(s, Stmt::Tc(Op::Alloc { .. })))
                .expect("alloc")
                + 1;
            p.warps[0].insert(at, alloc(CtaGroup::One, 1, 32));
            p
        }),
        weak(
            F,
            "64-then-128",
            RuleId::AllocNonincreasing,
            make(&[64, 128]),
        ),
    ]
}

fn pair_skew() -> Vec<Member> {
    const F: &str = "pair-skew";
    let make = |odd: bool, before_alloc: u32, before_dealloc: u32| {
        let mut sk = Sk::new(2, &[64]);
        sk.cg = CtaGroup::Two;
        sk.cluster = 2;
        let skew = |n: u32| {
            if n == 0 {
                vec![]
            } else if odd {
                vec![Stmt::If {
                    cond: Cond::CtaOdd,
                    then: vec![Stmt::Spin(n)],
                    els: vec![],
                }]
            } else {
                vec![Stmt::If {
                    cond: Cond::CtaOdd,
                    then: vec![],
                    els: vec![Stmt::Spin(n)],
                }]
            }
        };
        sk.pre_alloc = skew(before_alloc);
        sk.pre_dealloc = skew(before_dealloc);
        for w in 0..2 {
            let t = TmemRef::slot(0, 32 * w as u16, 0);
            sk.work[w] = vec![
                st(
                    st_form(LdStShape::S32x32b, Num::X4, false),
                    t,
                    None,
                    0x200 + w as u32,
                ),
                wait(WaitOp::St),
                ld(ld_form(LdStShape::S32x32b, Num::X4, false), t, None),
                wait(WaitOp::Ld),
            ];
        }
        sk.build()
    };
    let mut v = Vec::new();
    for (odd, who) in [(false, "even"), (true, "odd")] {
        for (a, d) in [(0, 0), (1000, 0), (0, 1000), (100_000, 100_000)] {
            v.push(valid(
                F,
                &format!("{who}-late-alloc{a}-dealloc{d}"),
                make(odd, a, d),
            ));
        }
    }
    // The ISA's example of a possible hang: dealloc after an extra cluster barrier in the even
    // CTA and before it in the odd one (DEALLOC-BARRIER-ORDER).
    let mut p = make(true, 0, 1000);
    let aw = &mut p.warps[0];
    let first = aw
        .iter()
        .position(|s| matches!(s, Stmt::Tc(Op::Dealloc { .. })))
        .expect("dealloc");
    let d = aw.remove(first);
    let bar = [Stmt::ClusterArrive { relaxed: false }, Stmt::ClusterWait];
    let mut then = vec![d.clone()];
    then.extend(bar.iter().cloned());
    let mut els = bar.to_vec();
    els.push(d);
    aw.insert(
        first,
        Stmt::If {
            cond: Cond::CtaOdd,
            then,
            els,
        },
    );
    p.warps[1].extend(bar);
    v.push(weak(
        F,
        "dealloc-across-cluster-barrier",
        RuleId::DeallocBarrierOrder,
        p,
    ));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_have_unique_member_names_and_a_valid_base() {
        let mut names = std::collections::HashSet::new();
        for f in FAMILIES {
            let ms = (f.members)();
            assert!(
                ms.iter().any(|m| m.intent == Intent::Valid),
                "{} has no canonical member",
                f.name
            );
            for m in ms {
                assert!(m.name.starts_with(f.name));
                assert!(names.insert(m.name.clone()), "duplicate {}", m.name);
                assert_eq!(
                    m.program.warps.len(),
                    usize::from(m.program.launch.warps_per_cta)
                );
            }
        }
    }

    #[test]
    fn every_weakening_differs_from_its_canonical_pattern_by_little() {
        // One step removed (or moved): the weakening's size is within a few statements of a
        // valid member of the same family.
        for f in FAMILIES {
            let ms = (f.members)();
            let valid: Vec<usize> = ms
                .iter()
                .filter(|m| m.intent == Intent::Valid)
                .map(|m| m.program.size())
                .collect();
            for m in ms.iter().filter(|m| m.intent != Intent::Valid) {
                let s = m.program.size();
                assert!(
                    valid.iter().any(|v| s.abs_diff(*v) <= 6),
                    "{}: size {s}, valid sizes {valid:?}",
                    m.name
                );
            }
        }
    }
}
