//! The run-time rows of the catalogue (reference §6: dynamic-UB, dynamic, blocking, defined):
//! for each, a program that breaks it gets the verdict the spec gives, and a nearby program
//! that keeps it does not.

use tcgen05_ir::samples::{self, alloc, dealloc, fence, ld, relinquish, st, wait};
use tcgen05_ir::*;
use tcgen05_oracle::probes::{self, commit, mma};
use tcgen05_oracle::*;

const CG: CtaGroup = CtaGroup::One;

fn one_warp(body: Vec<Stmt>) -> Program {
    let mut code = vec![alloc(CG, 0, 128), Stmt::MbarInit { bar: 0, count: 1 }];
    code.extend(body);
    code.push(dealloc(CG, 0, 128));
    code.push(relinquish(CG));
    Program {
        launch: samples::launch(1),
        smem: Smem {
            slots: 2,
            mbarriers: 1,
            regions: vec![32768, 32768],
        },
        warps: vec![code],
        funcs: vec![],
    }
}

fn verdict(p: &Program) -> RunVerdict {
    let e = expect(p);
    assert!(e.violations.is_empty(), "{:?}", e.violations);
    e.run.verdict
}

fn undefined(p: &Program, rule: RuleId) {
    match verdict(p) {
        RunVerdict::Undefined(r) => assert!(r.contains(&rule), "{r:?} lacks {rule}"),
        v => panic!("{rule}: expected Undefined, got {v:?}"),
    }
}

fn completes(p: &Program) {
    let e = expect(p);
    assert_eq!(e.run.verdict, RunVerdict::Completes, "{:#?}", e.notes);
}

fn roundtrip() -> Vec<Stmt> {
    vec![
        st(0, 0, 0, Num::X2, 1),
        wait(WaitOp::St),
        ld(0, 0, 0, Num::X2),
        wait(WaitOp::Ld),
    ]
}

fn lane_if(cond: Cond, then: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond,
        then,
        els: vec![],
    }
}

#[test]
fn gen_aligned_convergent() {
    completes(&one_warp(roundtrip()));
    let mut b = roundtrip();
    b[2] = lane_if(Cond::LaneLt(16), vec![ld(0, 0, 0, Num::X2)]);
    undefined(&one_warp(b), RuleId::GenAlignedConvergent);
    // A warp-uniform condition keeps it.
    let mut b = roundtrip();
    b[2] = lane_if(Cond::WarpRank(0), vec![ld(0, 0, 0, Num::X2)]);
    completes(&one_warp(b));
}

#[test]
fn wait_aligned_convergent() {
    let mut b = roundtrip();
    b[3] = lane_if(Cond::LaneLt(16), vec![wait(WaitOp::Ld)]);
    undefined(&one_warp(b), RuleId::WaitAlignedConvergent);
}

#[test]
fn gen_no_exited_thread() {
    let mut b = vec![lane_if(Cond::LaneEq(31), vec![Stmt::Exit])];
    b.extend(roundtrip());
    undefined(&one_warp(b), RuleId::GenNoExitedThread);
}

#[test]
fn alloc_ncols_dynamic() {
    let with = |form: NColsForm, value: u32| {
        let mut p = one_warp(roundtrip());
        if let Stmt::Tc(Op::Alloc { ncols, .. }) = &mut p.warps[0][0] {
            *ncols = NCols { value, form };
        }
        p
    };
    completes(&with(NColsForm::Reg, 128));
    undefined(
        &with(NColsForm::RegDivergent, 128),
        RuleId::AllocNcolsUniform,
    );
    undefined(&with(NColsForm::Reg, 96), RuleId::AllocNcolsPow2);
    // 1024 is a power of two outside [32, 512]: the dealloc of 128 then mismatches too.
    undefined(&with(NColsForm::Reg, 1024), RuleId::AllocNcolsRange);
}

#[test]
fn alloc_nonincreasing_and_relinquish() {
    let two = |first: u32, second: u32| Program {
        warps: vec![vec![
            alloc(CG, 0, first),
            dealloc(CG, 0, first),
            alloc(CG, 1, second),
            dealloc(CG, 1, second),
            relinquish(CG),
        ]],
        ..one_warp(vec![])
    };
    completes(&two(64, 32));
    completes(&two(64, 64));
    undefined(&two(32, 64), RuleId::AllocNonincreasing);
    let after = Program {
        warps: vec![vec![
            alloc(CG, 0, 32),
            dealloc(CG, 0, 32),
            relinquish(CG),
            alloc(CG, 1, 32),
            dealloc(CG, 1, 32),
        ]],
        ..one_warp(vec![])
    };
    undefined(&after, RuleId::AllocAfterRelinquish);
}

#[test]
fn alloc_dst_shared() {
    let with = |global: bool| {
        let mut p = one_warp(roundtrip());
        if let Stmt::Tc(Op::Alloc {
            form, dst_global, ..
        }) = &mut p.warps[0][0]
        {
            form.space = None;
            *dst_global = global;
        }
        p
    };
    completes(&with(false));
    undefined(&with(true), RuleId::AllocDstShared);
}

#[test]
fn dealloc_taddr_prev() {
    let with = |f: &dyn Fn(&mut TmemRef, &mut NCols)| {
        let mut p = one_warp(roundtrip());
        let n = p.warps[0].len() - 2;
        if let Stmt::Tc(Op::Dealloc { taddr, ncols, .. }) = &mut p.warps[0][n] {
            f(taddr, ncols);
        }
        p
    };
    undefined(&with(&|_, n| n.value = 64), RuleId::DeallocTaddrPrev);
    undefined(&with(&|t, _| t.base = TBase::Abs), RuleId::DeallocTaddrPrev);
    undefined(&with(&|t, _| t.col = 32), RuleId::DeallocTaddrPrev);
    // A second dealloc of the same allocation.
    let mut p = one_warp(roundtrip());
    let at = p.warps[0].len() - 2;
    p.warps[0].insert(at, dealloc(CG, 0, 128));
    undefined(&p, RuleId::DeallocTaddrPrev);
}

#[test]
fn alloc_free_before_exit_is_a_leak_not_a_verdict() {
    let e = expect(&one_warp(roundtrip()));
    assert_eq!(e.leak.status, LeakStatus::NoLeak);
    let mut p = one_warp(roundtrip());
    let n = p.warps[0].len() - 2;
    p.warps[0].remove(n);
    let e = expect(&p);
    assert_eq!(e.leak.status, LeakStatus::MayLeak);
    assert!(e.leak.rules.contains(&RuleId::AllocFreeBeforeExit));
    assert_eq!(e.run.verdict, RunVerdict::Completes);
}

#[test]
fn alloc_blocks_must_deadlock_and_may_block() {
    // One warp holds 512 columns and asks for 512 more: nobody can free them first.
    let p = Program {
        warps: vec![vec![
            alloc(CG, 0, 512),
            alloc(CG, 1, 512),
            dealloc(CG, 1, 512),
            dealloc(CG, 0, 512),
            relinquish(CG),
        ]],
        ..one_warp(vec![])
    };
    assert!(
        matches!(verdict(&p), RunVerdict::MustDeadlock { .. }),
        "{:?}",
        verdict(&p)
    );
    // Freed in between: completes.
    let p = Program {
        warps: vec![vec![
            alloc(CG, 0, 512),
            dealloc(CG, 0, 512),
            alloc(CG, 1, 512),
            dealloc(CG, 1, 512),
            relinquish(CG),
        ]],
        ..one_warp(vec![])
    };
    completes(&p);
    // Two warps each take 512 columns and free them after a CTA barrier: whichever allocates
    // second waits for a free that comes after the barrier it cannot reach, on every schedule.
    let w = |slot| vec![alloc(CG, slot, 512), Stmt::BarCta, dealloc(CG, slot, 512)];
    let p = Program {
        launch: samples::launch(2),
        warps: vec![w(0), w(1)],
        ..one_warp(vec![])
    };
    assert!(
        matches!(verdict(&p), RunVerdict::MustDeadlock { .. }),
        "{:?}",
        verdict(&p)
    );
    // Without the barrier the second waits for the first's free, then completes (ALLOC-BLOCKS).
    let w = |slot| vec![alloc(CG, slot, 512), dealloc(CG, slot, 512)];
    let p = Program {
        launch: samples::launch(2),
        warps: vec![w(0), w(1)],
        ..one_warp(vec![])
    };
    completes(&p);
}

#[test]
fn co_residency_option_makes_other_ctas_share() {
    // Every CTA keeps its 512 columns to the end (a leak, reported apart): per CTA that is
    // fine; if the two CTAs share an SM (OQ-7), the second may never get its columns.
    let w = vec![alloc(CG, 0, 512)];
    let p = Program {
        launch: Launch {
            clusters: 2,
            ..samples::launch(1)
        },
        warps: vec![w],
        ..one_warp(vec![])
    };
    assert_eq!(expect(&p).run.verdict, RunVerdict::Completes);
    let shared = Options {
        co_residency: CoResidency::SharedSm,
        ..Options::default()
    };
    let e = expect_with(&p, &shared);
    assert!(
        matches!(e.run.verdict, RunVerdict::MayBlock { .. }),
        "{:?}",
        e.run.verdict
    );
}

#[test]
fn ldst_taddr_uniform_and_lane_quarter() {
    let mut b = roundtrip();
    if let Stmt::Tc(Op::Ld { taddr, .. }) = &mut b[2] {
        taddr.divergent = true;
    }
    undefined(&one_warp(b), RuleId::LdstTaddrUniform);
    // Warp 1 reaches lanes 32-63 only.
    let two = |lane: u16| {
        let mut p = one_warp(vec![
            fence(FenceKind::BeforeThreadSync),
            Stmt::BarCta,
            Stmt::BarCta,
        ]);
        p.launch = samples::launch(2);
        p.warps.push(vec![
            Stmt::BarCta,
            fence(FenceKind::AfterThreadSync),
            st(0, lane, 0, Num::X1, 3),
            wait(WaitOp::St),
            fence(FenceKind::BeforeThreadSync),
            Stmt::BarCta,
        ]);
        p
    };
    completes(&two(32));
    undefined(&two(0), RuleId::LdstLaneQuarter);
}

#[test]
fn alloc_store_weak_needs_synchronization() {
    // Warp 1 reads the slot with and without a barrier after the alloc.
    let two = |sync: bool| {
        let mut p = one_warp(if sync {
            vec![Stmt::BarCta, Stmt::BarCta]
        } else {
            vec![]
        });
        p.launch = samples::launch(2);
        p.warps.push(if sync {
            vec![Stmt::BarCta, Stmt::ObserveAddr { slot: 0 }, Stmt::BarCta]
        } else {
            vec![Stmt::ObserveAddr { slot: 0 }]
        });
        p
    };
    let e = expect(&two(true));
    let w1 = e.per_lane().into_iter().find(|o| o.key.warp == 1).unwrap();
    assert!(matches!(
        w1.expect,
        ObsExpect::Check(AddrCheck {
            ncols: 128,
            lane_zero: true,
            capacity: 512,
            ..
        })
    ));
    let e = expect(&two(false));
    let w1 = e.per_lane().into_iter().find(|o| o.key.warp == 1).unwrap();
    assert_eq!(
        w1.expect,
        ObsExpect::Unspecified(vec![RuleId::AllocStoreWeak])
    );
}

#[test]
fn shift_lane_align_and_commit_window() {
    let sh = |lane: u16| {
        let op = Op::Shift {
            form: form::ShiftForm {
                cta_group: CG,
                down_first: false,
            },
            taddr: TmemRef::slot(0, lane, 0),
        };
        one_warp(vec![
            lane_if(Cond::ElectOne, vec![Stmt::Tc(op), commit()]),
            Stmt::MbarWait {
                bar: 0,
                parity: false,
                scope: Scope::Cta,
                max_tries: 100,
            },
        ])
    };
    completes(&sh(32));
    undefined(&sh(16), RuleId::ShiftLaneAlign);
    let mut p = sh(0);
    if let Stmt::If { then, .. } = &mut p.warps[0][2]
        && let Stmt::Tc(Op::Commit { addr, .. }) = &mut then[1]
    {
        *addr = MbarAddr::GlobalUb;
    }
    undefined(&p, RuleId::CommitMbarWindow);
}

fn mma_prog(f: &dyn Fn(&mut Mma)) -> Program {
    let mut m = mma(MmaKind::F16, false);
    f(&mut m);
    one_warp(vec![
        lane_if(
            Cond::ElectOne,
            vec![Stmt::Tc(Op::Mma(Box::new(m))), commit()],
        ),
        Stmt::MbarWait {
            bar: 0,
            parity: false,
            scope: Scope::Cta,
            max_tries: 100,
        },
    ])
}

#[test]
fn idesc_and_descriptor_rows() {
    completes(&mma_prog(&|_| {}));
    undefined(&mma_prog(&|m| m.idesc |= 1 << 23), RuleId::IdescReserved);
    undefined(&mma_prog(&|m| m.idesc |= 1 << 3), RuleId::IdescSat);
    undefined(
        &mma_prog(&|m| m.idesc = (m.idesc & !(0x1F << 24)) | (3 << 24)),
        RuleId::MmaShapeValid,
    );
    undefined(&mma_prog(&|m| m.idesc |= 2 << 7), RuleId::IdescEnc);
    undefined(
        &mma_prog(&|m| {
            m.form.kind = MmaKind::I8;
            m.idesc = probes::idesc(MmaKind::I8, 128, 64) | 1 << 13;
        }),
        RuleId::MmaTransposeKind,
    );
    undefined(
        &mma_prog(&|m| {
            m.form.kind = MmaKind::I8;
            m.idesc = probes::idesc(MmaKind::I8, 128, 64) | 1;
        }),
        RuleId::MmaSpSelector,
    );
    undefined(&mma_prog(&|m| m.b.offset = 8), RuleId::SdescAlign16);
    undefined(&mma_prog(&|m| m.b.fixed = 0), RuleId::SdescFixed);
    undefined(&mma_prog(&|m| m.b.swizzle = 3), RuleId::SdescSwizzle);
    undefined(
        &mma_prog(&|m| m.b.reserved = 1 << 14),
        RuleId::SdescReserved,
    );
    undefined(
        &mma_prog(&|m| {
            m.b.swizzle = 2;
            m.b.base_offset = 1;
        }),
        RuleId::SdescBaseoff,
    );
    undefined(&mma_prog(&|m| m.b.lbo_abs = true), RuleId::SdescLboAbs);
    undefined(
        &mma_prog(&|m| {
            m.form.ashift = true;
            m.a = MmaA::Tmem(TmemRef::slot(0, 0, 64));
            m.idesc = probes::idesc(MmaKind::F16, 64, 64);
        }),
        RuleId::MmaAshiftM,
    );
}

/// A cluster of two CTAs; `even` runs in the even CTA, `odd` in the odd one, both after a
/// cluster barrier (GEN-PEER-ACTIVE, §9.7.16.7.1: it makes sure the peer CTA runs).
fn pair(even: Vec<Stmt>, odd: Vec<Stmt>) -> Program {
    Program {
        launch: Launch {
            cluster_size: 2,
            declare_cluster: true,
            ..samples::launch(1)
        },
        smem: Smem {
            slots: 1,
            mbarriers: 1,
            regions: vec![],
        },
        warps: vec![vec![
            Stmt::ClusterArrive { relaxed: false },
            Stmt::ClusterWait,
            Stmt::If {
                cond: Cond::CtaOdd,
                then: odd,
                els: even,
            },
        ]],
        funcs: vec![],
    }
}

#[test]
fn pair_without_partner_differs_between_editions() {
    let cg = CtaGroup::Two;
    let p = pair(
        vec![alloc(cg, 0, 32), dealloc(cg, 0, 32), relinquish(cg)],
        vec![],
    );
    match expect_with(&p, &Options::edition(Edition::Seeds))
        .run
        .verdict
    {
        RunVerdict::Undefined(r) => assert!(r.contains(&RuleId::GenPeerActive)),
        v => panic!("{v:?}"),
    }
    let v = expect_with(&p, &Options::edition(Edition::Ptx93))
        .run
        .verdict;
    assert!(matches!(v, RunVerdict::MustDeadlock { .. }), "{v:?}");
    // Both CTAs take part, synchronized before the dealloc (DEALLOC-PAIR-SYNC): completes in
    // both editions.
    let both = vec![
        alloc(cg, 0, 32),
        Stmt::ClusterArrive { relaxed: false },
        Stmt::ClusterWait,
        dealloc(cg, 0, 32),
        relinquish(cg),
    ];
    let p = pair(both.clone(), both);
    for ed in Edition::ALL {
        assert_eq!(
            expect_with(&p, &Options::edition(*ed)).run.verdict,
            RunVerdict::Completes,
            "{ed}"
        );
    }
}

#[test]
fn dealloc_barrier_order_may_hang_in_both_editions() {
    // Reference §2.5: warp A does cluster barrier then dealloc, its peer dealloc then barrier
    // (after a first barrier that synchronizes the two CTAs, DEALLOC-PAIR-SYNC). §9.7.16.7.1:
    // "tcgen05.dealloc may block to collectively performs the deallocation with the other peer
    // CTA's warp" (both editions).
    let cg = CtaGroup::Two;
    let bar = || vec![Stmt::ClusterArrive { relaxed: false }, Stmt::ClusterWait];
    let mut head = vec![alloc(cg, 0, 32)];
    head.extend(bar());
    let mut even = head.clone();
    even.extend(bar());
    even.push(dealloc(cg, 0, 32));
    let mut odd = head;
    odd.push(dealloc(cg, 0, 32));
    odd.extend(bar());
    let p = pair(even.clone(), odd);
    for ed in Edition::ALL {
        let v = expect_with(&p, &Options::edition(*ed)).run.verdict;
        assert!(matches!(v, RunVerdict::MayBlock { .. }), "{ed}: {v:?}");
    }
    // Same side of the barrier in both CTAs: no hang in either edition.
    let p = pair(even.clone(), even);
    for ed in Edition::ALL {
        assert_eq!(
            expect_with(&p, &Options::edition(*ed)).run.verdict,
            RunVerdict::Completes,
            "{ed}"
        );
    }
}

#[test]
fn gen_peer_exists_at_run_time() {
    let cg = CtaGroup::Two;
    let mut p = pair(vec![alloc(cg, 0, 32), dealloc(cg, 0, 32)], vec![]);
    p.launch.cluster_size = 1;
    p.launch.declare_cluster = false;
    undefined(&p, RuleId::GenPeerExists);
}

#[test]
fn mcm_proxy_fence_is_needed_for_exact_mma_values() {
    // The operands are written through the generic proxy; without fence.proxy.async the MMA's
    // async-proxy reads are unordered with them (MCM-PROXY): the result is not exact.
    let prog = |proxy: bool| {
        let mut b = vec![
            Stmt::Fill {
                region: 0,
                seed: 1,
                elem: FillElem::F16Small,
            },
            Stmt::Fill {
                region: 1,
                seed: 2,
                elem: FillElem::F16Small,
            },
        ];
        if proxy {
            b.push(Stmt::FenceProxyAsync);
        }
        let mut m = mma(MmaKind::F16, false);
        m.idesc = probes::idesc(MmaKind::F16, 128, 64);
        b.push(lane_if(
            Cond::ElectOne,
            vec![Stmt::Tc(Op::Mma(Box::new(m))), commit()],
        ));
        b.push(Stmt::MbarWait {
            bar: 0,
            parity: false,
            scope: Scope::Cta,
            max_tries: 100,
        });
        b.push(fence(FenceKind::AfterThreadSync));
        b.push(ld(0, 0, 0, Num::X1));
        b.push(wait(WaitOp::Ld));
        one_warp(b)
    };
    let is_exact = |p: &Program| {
        let e = expect(p);
        e.per_lane()
            .iter()
            .any(|o| o.rules.contains(&RuleId::LdAsync) && matches!(o.expect, ObsExpect::Exact(_)))
    };
    assert!(is_exact(&prog(true)));
    assert!(!is_exact(&prog(false)));
}

#[test]
fn wait_kind_and_commit_not_ldst() {
    // WAIT-KIND: wait::ld does not complete a st; COMMIT-NOT-LDST: nor does a commit.
    let st_then = |mid: Vec<Stmt>| {
        let mut b = vec![st(0, 0, 0, Num::X1, 4)];
        b.extend(mid);
        b.extend([ld(0, 0, 0, Num::X1), wait(WaitOp::Ld), wait(WaitOp::St)]);
        one_warp(b)
    };
    let is_exact = |p: &Program| {
        let e = expect(p);
        e.per_lane()
            .iter()
            .any(|o| o.rules.contains(&RuleId::LdAsync) && matches!(o.expect, ObsExpect::Exact(_)))
    };
    assert!(is_exact(&st_then(vec![wait(WaitOp::St)])));
    assert!(!is_exact(&st_then(vec![wait(WaitOp::Ld)])));
    assert!(!is_exact(&st_then(vec![
        lane_if(Cond::ElectOne, vec![commit()]),
        Stmt::MbarWait {
            bar: 0,
            parity: false,
            scope: Scope::Cta,
            max_tries: 100
        },
        fence(FenceKind::AfterThreadSync),
    ])));
}

#[test]
fn dealloc_pair_sync() {
    // A ::2 dealloc while the peer CTA's st to the pair allocation may be in flight.
    let cg = CtaGroup::Two;
    let body = |waited: bool| {
        let mut v = vec![alloc(cg, 0, 32), st(0, 0, 0, Num::X1, 1)];
        if waited {
            v.push(wait(WaitOp::St));
        }
        v.extend([
            fence(FenceKind::BeforeThreadSync),
            Stmt::ClusterArrive { relaxed: false },
            Stmt::ClusterWait,
            fence(FenceKind::AfterThreadSync),
            dealloc(cg, 0, 32),
            relinquish(cg),
        ]);
        v
    };
    let p = pair(body(true), body(true));
    assert_eq!(verdict(&p), RunVerdict::Completes);
    undefined(&pair(body(false), body(false)), RuleId::DeallocPairSync);
}

#[test]
fn mma_disable_output_lane_and_scale_d() {
    // MMA-DOL-SEM: lanes whose bit is set are not written (their cells were never written:
    // unspecified); MMA-SCALE-D-SEM with D = A·B + D·2^-1 twice: D2 = A·B + A·B/2 = 1.5·A·B.
    let prog = |dol: Option<Vec<u32>>, second: Option<u8>| {
        let mut m = mma(MmaKind::F16, false);
        m.idesc = probes::idesc(MmaKind::F16, 128, 64);
        m.disable_output_lane = dol;
        let mut ops = vec![Stmt::Tc(Op::Mma(Box::new(m.clone())))];
        if let Some(s) = second {
            let mut m2 = m;
            m2.enable_input_d = true;
            m2.scale_input_d = Some(s);
            ops.push(Stmt::Tc(Op::Mma(Box::new(m2))));
        }
        ops.push(commit());
        one_warp(vec![
            Stmt::Fill {
                region: 0,
                seed: 1,
                elem: FillElem::F16Small,
            },
            Stmt::Fill {
                region: 1,
                seed: 2,
                elem: FillElem::F16Small,
            },
            Stmt::FenceProxyAsync,
            lane_if(Cond::ElectOne, ops),
            Stmt::MbarWait {
                bar: 0,
                parity: false,
                scope: Scope::Cta,
                max_tries: 100,
            },
            fence(FenceKind::AfterThreadSync),
            ld(0, 0, 0, Num::X1),
            wait(WaitOp::Ld),
        ])
    };
    let rec = |p: &Program, lane: u8| {
        expect(p)
            .per_lane()
            .into_iter()
            .find(|o| o.rules.contains(&RuleId::LdAsync) && o.key.lane == lane)
            .unwrap()
            .expect
    };
    let base = prog(None, None);
    let ObsExpect::Exact(v) = rec(&base, 3) else {
        panic!()
    };
    let masked = prog(Some(vec![1 << 3, 0, 0, 0]), None);
    assert!(matches!(
        rec(&masked, 3),
        ObsExpect::Unspecified(_) | ObsExpect::PerWord(_)
    ));
    assert_eq!(rec(&masked, 4), rec(&base, 4));
    let scaled = prog(None, Some(1));
    let ObsExpect::Exact(w) = rec(&scaled, 3) else {
        panic!("{:?}", rec(&scaled, 3))
    };
    assert_eq!(f32::from_bits(w[0]), 1.5 * f32::from_bits(v[0]));
}

/// MMA-DOL-SEM (§9.7.16.10.9): a lane whose disable-output-lane bit is set is not written, so
/// it keeps what a st wrote there before the MMA, without enable-input-d too; the other lanes
/// hold A·B (the expected old value is the st's, `values::st_value`, not the oracle's).
#[test]
fn mma_disabled_lanes_keep_what_a_st_wrote_before() {
    const SEED: u32 = 0x5EED;
    let prog = |dol: Option<Vec<u32>>| {
        let mut m = mma(MmaKind::F16, false);
        m.idesc = probes::idesc(MmaKind::F16, 128, 64);
        m.disable_output_lane = dol;
        one_warp(vec![
            Stmt::Fill {
                region: 0,
                seed: 1,
                elem: FillElem::F16Small,
            },
            Stmt::Fill {
                region: 1,
                seed: 2,
                elem: FillElem::F16Small,
            },
            Stmt::FenceProxyAsync,
            st(0, 0, 0, Num::X1, SEED),
            wait(WaitOp::St),
            lane_if(
                Cond::ElectOne,
                vec![Stmt::Tc(Op::Mma(Box::new(m))), commit()],
            ),
            Stmt::MbarWait {
                bar: 0,
                parity: false,
                scope: Scope::Cta,
                max_tries: 100,
            },
            fence(FenceKind::AfterThreadSync),
            ld(0, 0, 0, Num::X1),
            wait(WaitOp::Ld),
        ])
    };
    let rec = |p: &Program, lane: u8| {
        expect(p)
            .per_lane()
            .into_iter()
            .find(|o| o.rules.contains(&RuleId::LdAsync) && o.key.lane == lane)
            .unwrap()
            .expect
    };
    let stored = values::st_value(SEED, 3, 0);
    let base = prog(None);
    let ObsExpect::Exact(v) = rec(&base, 3) else {
        panic!("{:?}", rec(&base, 3))
    };
    assert_ne!(
        v,
        vec![stored],
        "the MMA overwrites the st in an enabled lane"
    );
    let masked = prog(Some(vec![1 << 3, 0, 0, 0]));
    assert_eq!(rec(&masked, 3), ObsExpect::Exact(vec![stored]));
    assert_eq!(rec(&masked, 4), rec(&base, 4));
}

/// The rules of every ld record of `p` (the program must complete).
fn ld_rules(p: &Program) -> Vec<RuleId> {
    let e = expect(p);
    assert_eq!(e.run.verdict, RunVerdict::Completes, "{:#?}", e.notes);
    let mut v: Vec<RuleId> = e
        .obs
        .iter()
        .filter(|o| o.rules.contains(&RuleId::LdAsync))
        .flat_map(|o| o.rules.iter().copied())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Whether every ld record of `p` is predicted exactly.
fn all_ld_exact(p: &Program) -> bool {
    let e = expect(p);
    e.per_lane()
        .iter()
        .filter(|o| o.rules.contains(&RuleId::LdAsync))
        .all(|o| matches!(o.expect, ObsExpect::Exact(_)))
}

#[test]
fn mcm_st_before_use_is_cited_for_an_ld_before_wait_st() {
    // §9.7.16.6.4.2: a location written by st must not be read until wait::st.
    let broken = one_warp(vec![
        st(0, 0, 0, Num::X1, 3),
        ld(0, 0, 0, Num::X1),
        wait(WaitOp::Ld),
        wait(WaitOp::St),
    ]);
    assert!(ld_rules(&broken).contains(&RuleId::McmStBeforeUse));
    assert!(!all_ld_exact(&broken));
    let kept = one_warp(roundtrip());
    assert!(!ld_rules(&kept).contains(&RuleId::McmStBeforeUse));
    assert!(all_ld_exact(&kept));
}

#[test]
fn mcm_ld_war_is_cited_for_a_st_after_an_unwaited_ld() {
    // §9.7.16.6.4.5: wait::ld must separate an ld from a later write of its cells.
    let body = |waited: bool| {
        let mut b = vec![
            st(0, 0, 0, Num::X1, 1),
            wait(WaitOp::St),
            ld(0, 0, 0, Num::X1),
        ];
        if waited {
            b.push(wait(WaitOp::Ld));
        }
        b.extend([st(0, 0, 0, Num::X1, 2), wait(WaitOp::St), wait(WaitOp::Ld)]);
        one_warp(b)
    };
    assert!(ld_rules(&body(false)).contains(&RuleId::McmLdWar));
    assert!(!ld_rules(&body(true)).contains(&RuleId::McmLdWar));
}

/// Five warps: warp 0 (quarter 0) allocates and produces, warp 4 (quarter 0 too) consumes
/// after the second `barrier.sync`; warps 1-3 only take part in the barriers.
fn producer_consumer(producer: Vec<Stmt>, consumer: Vec<Stmt>) -> Program {
    let sync = |mut v: Vec<Stmt>| {
        v.push(fence(FenceKind::BeforeThreadSync));
        v.push(Stmt::BarCta);
        v.push(fence(FenceKind::AfterThreadSync));
        v
    };
    let mut w0 = sync(vec![alloc(CG, 0, 128)]);
    w0.extend(producer);
    w0.push(Stmt::BarCta);
    w0 = sync(w0);
    w0.extend([dealloc(CG, 0, 128), relinquish(CG)]);
    let mut w4 = sync(vec![]);
    w4.push(Stmt::BarCta);
    w4.extend(consumer);
    w4 = sync(w4);
    let idle = vec![Stmt::BarCta, Stmt::BarCta, Stmt::BarCta];
    Program {
        launch: samples::launch(5),
        smem: Smem {
            slots: 1,
            mbarriers: 0,
            regions: vec![],
        },
        warps: vec![w0, idle.clone(), idle.clone(), idle, w4],
        funcs: vec![],
    }
}

#[test]
fn mcm_xthread_is_cited_without_the_consumer_fence() {
    // §9.7.16.6.3-4: cross-thread order needs before_thread_sync → sync → after_thread_sync.
    let producer = vec![
        st(0, 0, 0, Num::X1, 5),
        wait(WaitOp::St),
        fence(FenceKind::BeforeThreadSync),
    ];
    let consumer = |fenced: bool| {
        let mut v = Vec::new();
        if fenced {
            v.push(fence(FenceKind::AfterThreadSync));
        }
        v.extend([ld(0, 0, 0, Num::X1), wait(WaitOp::Ld)]);
        v
    };
    let broken = producer_consumer(producer.clone(), consumer(false));
    assert!(ld_rules(&broken).contains(&RuleId::McmXthread));
    assert!(!ld_rules(&broken).contains(&RuleId::McmXthreadNonpipe));
    let kept = producer_consumer(producer, consumer(true));
    assert!(!ld_rules(&kept).contains(&RuleId::McmXthread));
    assert!(all_ld_exact(&kept));
}

#[test]
fn mcm_xthread_nonpipe_is_cited_without_the_producer_wait() {
    // §9.7.16.6.4.4: a non-pipelined producer must wait for completion before it syncs.
    let producer = |waited: bool| {
        let mut v = vec![st(0, 0, 0, Num::X1, 5)];
        if waited {
            v.push(wait(WaitOp::St));
        }
        v.push(fence(FenceKind::BeforeThreadSync));
        v
    };
    let consumer = vec![
        fence(FenceKind::AfterThreadSync),
        ld(0, 0, 0, Num::X1),
        wait(WaitOp::Ld),
    ];
    let mut broken = producer_consumer(producer(false), consumer.clone());
    // The st completes before the teardown (its wait moves after the publishing barrier).
    let at = broken.warps[0]
        .iter()
        .rposition(|s| matches!(s, Stmt::BarCta))
        .unwrap();
    broken.warps[0].insert(at - 1, wait(WaitOp::St));
    assert!(ld_rules(&broken).contains(&RuleId::McmXthreadNonpipe));
    assert!(!ld_rules(&broken).contains(&RuleId::McmXthread));
    let kept = producer_consumer(producer(true), consumer);
    assert!(!ld_rules(&kept).contains(&RuleId::McmXthreadNonpipe));
    assert!(all_ld_exact(&kept));
}

#[test]
fn past_the_work_bound_the_program_is_not_judged() {
    // 255^3 unrolled fences: more events than the oracle unrolls (EVENT_BUDGET).
    let nest = |inner: Vec<Stmt>| Stmt::Loop {
        count: 255,
        body: inner,
    };
    let big = one_warp(vec![nest(vec![nest(vec![nest(vec![fence(
        FenceKind::BeforeThreadSync,
    )])])])]);
    let e = expect(&big);
    assert!(e.violations.is_empty(), "{:?}", e.violations);
    assert!(
        matches!(e.run.verdict, RunVerdict::NotJudged(_)),
        "{:?}",
        e.run
    );
    assert!(e.obs.is_empty());
    // Loops whose bodies produce no event still cost visits (VISIT_BUDGET).
    let idle = one_warp(vec![nest(vec![nest(vec![nest(vec![lane_if(
        Cond::WarpRank(3),
        vec![fence(FenceKind::BeforeThreadSync)],
    )])])])]);
    assert!(matches!(
        expect(&idle).run.verdict,
        RunVerdict::NotJudged(_)
    ));
    // A nearby program inside the bound is judged.
    let small = one_warp(vec![nest(vec![fence(FenceKind::BeforeThreadSync)])]);
    assert_eq!(expect(&small).run.verdict, RunVerdict::Completes);
}

// Race citations that name the rule a program breaks, not only its consequence (reference
// §4.3-4.4, §6): WAIT-SCOPE for an ld counted as waited by another warp's `wait::ld`, and the
// races of an MMA's A operand read from TMEM, cited by the lds of what the MMA wrote.

/// `before_thread_sync`, `barrier.sync`, `after_thread_sync`.
fn sync() -> Vec<Stmt> {
    vec![
        fence(FenceKind::BeforeThreadSync),
        Stmt::BarCta,
        fence(FenceKind::AfterThreadSync),
    ]
}

/// Two warps of one CTA (quarters 0 and 1). Warp 0 allocates, publishes the address, stores
/// and loads its cells, then after two more barriers deallocates; the `wait::ld` that must
/// separate its ld from the dealloc is in warp 0 (`own`), in warp 1 between the two barriers
/// (`other`), or nowhere.
fn wait_scope(own: bool, other: bool) -> Program {
    let mut w0 = vec![alloc(CG, 0, 128)];
    w0.extend(sync());
    w0.extend([
        st(0, 0, 0, Num::X1, 7),
        wait(WaitOp::St),
        ld(0, 0, 0, Num::X1),
    ]);
    if own {
        w0.push(wait(WaitOp::Ld));
    }
    w0.extend(sync());
    w0.extend(sync());
    w0.extend([dealloc(CG, 0, 128), relinquish(CG)]);
    let mut w1 = sync();
    w1.extend(sync());
    if other {
        w1.push(wait(WaitOp::Ld));
    }
    w1.extend(sync());
    Program {
        launch: samples::launch(2),
        smem: Smem {
            slots: 1,
            mbarriers: 0,
            regions: vec![],
        },
        warps: vec![w0, w1],
        funcs: vec![],
    }
}

#[test]
fn wait_scope_is_cited_when_only_another_warp_waits() {
    // §3.4 (WAIT-SCOPE): wait::ld covers the loads of the executing thread only, so warp 1's
    // wait leaves warp 0's ld in flight at the dealloc (MCM-LD-WAR, OQ-4).
    let broken = ld_rules(&wait_scope(false, true));
    assert!(broken.contains(&RuleId::WaitScope), "{broken:?}");
    assert!(broken.contains(&RuleId::McmLdWar), "{broken:?}");
    // No wait anywhere: the race, but no wait in the wrong warp to name.
    let none = ld_rules(&wait_scope(false, false));
    assert!(none.contains(&RuleId::McmLdWar), "{none:?}");
    assert!(!none.contains(&RuleId::WaitScope), "{none:?}");
    // The wait in the loading warp: no race at all.
    let kept = ld_rules(&wait_scope(true, true));
    assert!(!kept.contains(&RuleId::WaitScope), "{kept:?}");
    assert!(!kept.contains(&RuleId::McmLdWar), "{kept:?}");
}

/// A program of `tests/cases/` (a binary case file, `tcgen05-fuzz show` prints it).
fn case(name: &str) -> Program {
    let path = format!("{}/tests/cases/{name}.case", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    codec::decode(&bytes)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .program
}

#[test]
fn a_racing_mma_a_operand_in_tmem_is_cited_by_the_lds_of_its_result() {
    // Two warps: warp 0 issues an f16 MMA with A in TMEM (columns 32..) and D at column 0,
    // commits, waits on the mbarrier and loads D; warp 1 stores A's lanes 32-63 before the
    // publishing barrier. §4.3-4.4 (MCM-XTHREAD-NONPIPE): a non-pipelined producer (st) must
    // complete (wait::st) before the fences and the sync that publish it to the MMA.
    let broken = ld_rules(&case("mcm-xthread-nonpipe-mma-reader"));
    assert!(broken.contains(&RuleId::McmXthreadNonpipe), "{broken:?}");
    // The same with warp 1's wait::st before its fence: nothing races.
    let kept = ld_rules(&case("mcm-xthread-nonpipe-mma-reader.base"));
    assert!(!kept.contains(&RuleId::McmXthreadNonpipe), "{kept:?}");
}

/// GEN-PEER-ACTIVE (§9.7.16.7.1: "the issuing warp must make sure that peer CTA is launched"):
/// both CTAs allocate and free as a pair, synchronized before the dealloc, but nothing before
/// the alloc makes sure the peer runs. The run and `check` on the program's PTX give the same
/// judgement: broken without a cluster barrier before the alloc, kept with one.
#[test]
fn a_pair_alloc_needs_a_cluster_barrier_before_it_in_the_run_and_in_check() {
    let cg = CtaGroup::Two;
    let program = |opening: bool| {
        let mut code = vec![];
        if opening {
            code.extend([Stmt::ClusterArrive { relaxed: false }, Stmt::ClusterWait]);
        }
        code.extend([
            alloc(cg, 0, 32),
            Stmt::ClusterArrive { relaxed: false },
            Stmt::ClusterWait,
            dealloc(cg, 0, 32),
            relinquish(cg),
        ]);
        Program {
            launch: Launch {
                cluster_size: 2,
                declare_cluster: true,
                ..samples::launch(1)
            },
            smem: Smem {
                slots: 1,
                mbarriers: 0,
                regions: vec![],
            },
            warps: vec![code],
            funcs: vec![],
        }
    };
    let check_rules = |p: &Program| -> Vec<RuleId> {
        let src = ptx::emit(p);
        let reports = kernel::check_source(&src, "p.ptx", &kernel::Options::default()).unwrap();
        reports
            .iter()
            .flat_map(|r| r.findings.iter().map(|f| f.rule))
            .collect()
    };
    for ed in Edition::ALL {
        let v = expect_with(&program(false), &Options::edition(*ed))
            .run
            .verdict;
        assert!(
            matches!(&v, RunVerdict::Undefined(r) if r.contains(&RuleId::GenPeerActive)),
            "{ed}: {v:?}"
        );
        let v = expect_with(&program(true), &Options::edition(*ed))
            .run
            .verdict;
        assert_eq!(v, RunVerdict::Completes, "{ed}");
    }
    assert!(check_rules(&program(false)).contains(&RuleId::GenPeerActive));
    assert_eq!(check_rules(&program(true)), Vec::<RuleId>::new());
}
