//! Claims of the seed texts (the PTX ISA sections the user gave; they win over the reference)
//! that the oracle once judged otherwise: for each, a program that breaks the claim gets the
//! verdict the seed sentence gives, and a nearby program that keeps it does not. Each test
//! quotes its sentence.

use tcgen05_ir::samples::{self, alloc, dealloc, fence, ld, relinquish, st, wait};
use tcgen05_ir::*;
use tcgen05_oracle::probes::{self, commit, mma};
use tcgen05_oracle::*;

const ONE: CtaGroup = CtaGroup::One;
const TWO: CtaGroup = CtaGroup::Two;

fn lane_if(cond: Cond, then: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond,
        then,
        els: vec![],
    }
}

fn cluster_barrier() -> Vec<Stmt> {
    vec![Stmt::ClusterArrive { relaxed: false }, Stmt::ClusterWait]
}

/// A cluster of two CTAs with one entry per warp rank: (even CTA's code, odd CTA's code),
/// each after a cluster barrier (GEN-PEER-ACTIVE, §9.7.16.7.1: it makes sure the peer CTA
/// runs).
fn pair_of_ctas(warps: Vec<(Vec<Stmt>, Vec<Stmt>)>) -> Program {
    Program {
        launch: Launch {
            cluster_size: 2,
            declare_cluster: true,
            ..samples::launch(warps.len() as u8)
        },
        smem: Smem {
            slots: 2,
            mbarriers: 1,
            regions: vec![],
        },
        warps: warps
            .into_iter()
            .map(|(even, odd)| {
                let mut code = cluster_barrier();
                code.push(Stmt::If {
                    cond: Cond::CtaOdd,
                    then: odd,
                    els: even,
                });
                code
            })
            .collect(),
        funcs: vec![],
    }
}

fn verdict_in(p: &Program, ed: Edition) -> RunVerdict {
    let e = expect_with(p, &Options::edition(ed));
    assert!(e.violations.is_empty(), "{:?}", e.violations);
    e.run.verdict
}

fn undefined_with(v: &RunVerdict, rule: RuleId) -> bool {
    matches!(v, RunVerdict::Undefined(r) if r.contains(&rule))
}

/// Seed 004 (§9.7.16.6.2.1, §9.7.16.6.4.3): the implicit pipelined order holds for
/// instructions "from the same thread"; for "Pipelined instructions, different thread",
/// "no explicit waiting mechanism is needed but proper synchronization between threads is
/// needed" (before-fence, synchronization, after-fence). Lanes of one warp are different
/// threads.
#[test]
fn pipelining_is_per_thread_not_per_warp() {
    // Lane 0: mma (D = A·B), before-fence, commit. Lane 1: mma accumulating into the same D
    // (D = A·B + D), commit. With synchronization and an after-fence between them D is 2·A·B
    // exactly; without, the two MMAs race.
    let prog = |synchronized: bool| {
        let mut first = mma(MmaKind::F16, false);
        first.idesc = probes::idesc(MmaKind::F16, 128, 64);
        let mut second = mma(MmaKind::F16, true);
        second.idesc = probes::idesc(MmaKind::F16, 128, 64);
        let mut b = vec![
            alloc(ONE, 0, 128),
            Stmt::MbarInit { bar: 0, count: 1 },
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
            lane_if(
                Cond::LaneEq(0),
                vec![
                    Stmt::Tc(Op::Mma(Box::new(first))),
                    fence(FenceKind::BeforeThreadSync),
                    commit(),
                ],
            ),
        ];
        if synchronized {
            b.extend([Stmt::BarCta, fence(FenceKind::AfterThreadSync)]);
        }
        b.push(lane_if(
            Cond::LaneEq(1),
            vec![Stmt::Tc(Op::Mma(Box::new(second))), commit()],
        ));
        for parity in [false, true] {
            b.push(Stmt::MbarWait {
                bar: 0,
                parity,
                scope: Scope::Cta,
                max_tries: 100,
            });
        }
        b.extend([
            fence(FenceKind::AfterThreadSync),
            ld(0, 0, 0, Num::X1),
            wait(WaitOp::Ld),
            dealloc(ONE, 0, 128),
            relinquish(ONE),
        ]);
        Program {
            launch: samples::launch(1),
            smem: Smem {
                slots: 1,
                mbarriers: 1,
                regions: vec![32768, 32768],
            },
            warps: vec![b],
            funcs: vec![],
        }
    };
    let ld_exact = |p: &Program| {
        let e = expect(p);
        assert_eq!(e.run.verdict, RunVerdict::Completes, "{:#?}", e.notes);
        let lds: Vec<_> = e
            .per_lane()
            .into_iter()
            .filter(|o| o.rules.contains(&RuleId::LdAsync))
            .collect();
        assert!(!lds.is_empty());
        lds.iter().all(|o| matches!(o.expect, ObsExpect::Exact(_)))
    };
    assert!(ld_exact(&prog(true)), "synchronized lanes: D is exact");
    assert!(
        !ld_exact(&prog(false)),
        "lane 1's mma is not ordered after lane 0's: D is not exact"
    );
}

/// Seed 000 (§9.7.16.7.1): "If `.cta_group::2` is specified, ... `tcgen05.dealloc` may block
/// to collectively performs the deallocation with the other peer CTA's warp." Deallocs on
/// opposite sides of a cluster barrier may hang, in both editions.
#[test]
fn pair_deallocs_across_a_cluster_barrier_may_block_in_both_editions() {
    // Both CTAs allocate, synchronize (DEALLOC-PAIR-SYNC), then the even CTA passes a
    // second cluster barrier before its dealloc, the odd CTA after.
    let mut head = vec![alloc(TWO, 0, 32)];
    head.extend(cluster_barrier());
    let mut before = head.clone();
    before.extend(cluster_barrier());
    before.push(dealloc(TWO, 0, 32));
    let mut after = head.clone();
    after.push(dealloc(TWO, 0, 32));
    after.extend(cluster_barrier());
    let opposite = pair_of_ctas(vec![(before.clone(), after.clone())]);
    for ed in Edition::ALL {
        let v = verdict_in(&opposite, *ed);
        assert!(matches!(v, RunVerdict::MayBlock { .. }), "{ed}: {v:?}");
    }
    // The same side of the barrier in both CTAs: completes in both editions.
    for same in [before, after] {
        let p = pair_of_ctas(vec![(same.clone(), same)]);
        for ed in Edition::ALL {
            assert_eq!(verdict_in(&p, *ed), RunVerdict::Completes, "{ed}");
        }
    }
}

/// Seed 000 (§9.7.16.7.1): "issuing warp and peer CTA warp must synchronize Tensor Memory
/// accesses before attempting to collectively deallocate the Tensor Memory" (DEALLOC-PAIR-SYNC,
/// consequence unstated: `Undefined`).
#[test]
fn pair_dealloc_needs_synchronization_between_the_ctas() {
    let bare = vec![alloc(TWO, 0, 32), dealloc(TWO, 0, 32), relinquish(TWO)];
    let p = pair_of_ctas(vec![(bare.clone(), bare)]);
    for ed in Edition::ALL {
        let v = verdict_in(&p, *ed);
        assert!(undefined_with(&v, RuleId::DeallocPairSync), "{ed}: {v:?}");
    }
    // Synchronized through a cluster barrier: completes.
    let mut synced = vec![alloc(TWO, 0, 32)];
    synced.extend(cluster_barrier());
    synced.extend([dealloc(TWO, 0, 32), relinquish(TWO)]);
    let p = pair_of_ctas(vec![(synced.clone(), synced)]);
    for ed in Edition::ALL {
        assert_eq!(verdict_in(&p, *ed), RunVerdict::Completes, "{ed}");
    }
    // A st of the even CTA left in flight (no wait::st) across the barrier: the peer's
    // dealloc is not ordered after it either.
    let mut even = vec![alloc(TWO, 0, 32), st(0, 0, 0, Num::X1, 7)];
    even.extend([fence(FenceKind::BeforeThreadSync)]);
    even.extend(cluster_barrier());
    even.extend([
        fence(FenceKind::AfterThreadSync),
        dealloc(TWO, 0, 32),
        relinquish(TWO),
    ]);
    let mut odd = vec![alloc(TWO, 0, 32)];
    odd.extend(cluster_barrier());
    odd.extend([dealloc(TWO, 0, 32), relinquish(TWO)]);
    let v = verdict_in(
        &pair_of_ctas(vec![(even.clone(), odd.clone())]),
        Edition::Seeds,
    );
    assert!(undefined_with(&v, RuleId::DeallocPairSync), "{v:?}");
    even.insert(2, wait(WaitOp::St));
    assert_eq!(
        verdict_in(&pair_of_ctas(vec![(even, odd)]), Edition::Seeds),
        RunVerdict::Completes
    );
}

/// Seeds 000 and 003 (§9.7.16.7.1, §9.7.16.5): "When `.cta_group::2` is specified, one warp
/// from each of the peer CTAs must collectively perform the allocation and de-allocation."
/// Any one warp per CTA: warp 0 of the even CTA pairs with warp 1 of the odd CTA.
#[test]
fn any_one_warp_per_cta_takes_part_in_a_pair_collective() {
    let mut pairwork = vec![alloc(TWO, 0, 32)];
    pairwork.extend(cluster_barrier());
    pairwork.extend([dealloc(TWO, 0, 32), relinquish(TWO)]);
    let idle = cluster_barrier();
    let p = pair_of_ctas(vec![(pairwork.clone(), idle.clone()), (idle, pairwork)]);
    for ed in Edition::ALL {
        assert_eq!(verdict_in(&p, *ed), RunVerdict::Completes, "{ed}");
    }
    // Two warps of the even CTA each allocate, in no fixed order, and the odd CTA's warp
    // allocates twice: which even warp pairs with the odd CTA's first alloc is not stated.
    // The oracle does not guess.
    let one = |slot| {
        let mut v = vec![alloc(TWO, slot, 32)];
        v.extend(cluster_barrier());
        v.push(dealloc(TWO, slot, 32));
        v
    };
    let mut odd_twice = vec![alloc(TWO, 0, 32), alloc(TWO, 1, 32)];
    odd_twice.extend(cluster_barrier());
    odd_twice.extend([dealloc(TWO, 0, 32), dealloc(TWO, 1, 32)]);
    let p = pair_of_ctas(vec![(one(0), odd_twice), (one(1), cluster_barrier())]);
    match verdict_in(&p, Edition::Seeds) {
        RunVerdict::NotJudged(why) => assert!(why.contains("not stated"), "{why}"),
        v => panic!("{v:?}"),
    }
}

/// Seed 002 (§9.7.16.8.5): "The mandatory `.aligned` qualifier indicates that all threads in
/// the warp must execute the same `tcgen05.wait_operation` instruction." A thread that has
/// exited does not (WAIT-ALIGNED-CONVERGENT, consequence unstated: `Undefined`).
#[test]
fn wait_after_a_lane_exited_breaks_wait_aligned_convergent() {
    let prog = |exit_first: bool| {
        let exit = lane_if(Cond::LaneEq(31), vec![Stmt::Exit]);
        let mut b = vec![
            alloc(ONE, 0, 32),
            st(0, 0, 0, Num::X1, 3),
            wait(WaitOp::St),
            ld(0, 0, 0, Num::X1),
        ];
        if exit_first {
            b.push(exit.clone());
        }
        b.push(wait(WaitOp::Ld));
        if !exit_first {
            b.push(exit);
        }
        // No dealloc after the exit (GEN-NO-EXITED-THREAD): the leak is reported, not judged.
        Program {
            launch: samples::launch(1),
            smem: Smem {
                slots: 1,
                mbarriers: 0,
                regions: vec![],
            },
            warps: vec![b],
            funcs: vec![],
        }
    };
    let v = verdict_in(&prog(true), Edition::Seeds);
    assert!(undefined_with(&v, RuleId::WaitAlignedConvergent), "{v:?}");
    assert_eq!(
        verdict_in(&prog(false), Edition::Seeds),
        RunVerdict::Completes
    );
}

/// Seed 000 (§9.7.16.7.1): "The `tcgen05.alloc` blocks if the requested amount of Tensor
/// Memory is not available and unblocks as soon as the requested amount of Tensor Memory
/// becomes available for allocation." Two warps each hold 512 columns until after a CTA
/// barrier: whichever allocates second waits for a free behind a barrier it cannot reach, on
/// every schedule.
#[test]
fn two_warps_holding_512_columns_across_a_barrier_must_deadlock() {
    let prog = |barrier: bool| {
        let w = |slot| {
            let mut v = vec![alloc(ONE, slot, 512)];
            if barrier {
                v.push(Stmt::BarCta);
            }
            v.push(dealloc(ONE, slot, 512));
            v
        };
        Program {
            launch: samples::launch(2),
            smem: Smem {
                slots: 2,
                mbarriers: 0,
                regions: vec![],
            },
            warps: vec![w(0), w(1)],
            funcs: vec![],
        }
    };
    let v = verdict_in(&prog(true), Edition::Seeds);
    assert!(matches!(v, RunVerdict::MustDeadlock { .. }), "{v:?}");
    // Without the barrier the second alloc waits for the first's free, then completes.
    assert_eq!(
        verdict_in(&prog(false), Edition::Seeds),
        RunVerdict::Completes
    );
}

/// Questions the seeds leave open get no definite answer of their own: §9.7.16.7.1 says only
/// "it is illegal for a CTA to perform `tcgen05.alloc` after any of its constituent threads
/// execute `tcgen05.relinquish_alloc_permit`" (a second relinquish: not judged), and "one warp
/// from the CTA must perform the allocation and de-allocation" (whether another warp may free
/// it: option `multi_warp_alloc`, OQ-35, named in the notes); whether other CTAs' allocations
/// count against a CTA's 512 columns is option `co_residency` (OQ-7).
#[test]
fn open_questions_are_not_judged_or_rest_on_a_named_option() {
    let one_warp = |warps: Vec<Vec<Stmt>>, clusters: u16| Program {
        launch: Launch {
            clusters,
            ..samples::launch(warps.len() as u8)
        },
        smem: Smem {
            slots: 1,
            mbarriers: 0,
            regions: vec![],
        },
        warps,
        funcs: vec![],
    };
    // Relinquish twice: not judged, with the reason; once: completes.
    let twice = one_warp(
        vec![vec![
            alloc(ONE, 0, 32),
            dealloc(ONE, 0, 32),
            relinquish(ONE),
            relinquish(ONE),
        ]],
        1,
    );
    match verdict_in(&twice, Edition::Seeds) {
        RunVerdict::NotJudged(why) => assert!(why.contains("more than once"), "{why}"),
        v => panic!("{v:?}"),
    }
    let once = one_warp(
        vec![vec![
            alloc(ONE, 0, 32),
            dealloc(ONE, 0, 32),
            relinquish(ONE),
        ]],
        1,
    );
    assert_eq!(verdict_in(&once, Edition::Seeds), RunVerdict::Completes);
    // Warp 0 allocates, warp 1 frees after a barrier: completes under the option's default,
    // and the notes name the assumption; undefined with the option off.
    let handover = one_warp(
        vec![
            vec![alloc(ONE, 0, 32), Stmt::BarCta],
            vec![Stmt::BarCta, dealloc(ONE, 0, 32)],
        ],
        1,
    );
    let e = expect(&handover);
    assert_eq!(e.run.verdict, RunVerdict::Completes);
    assert!(e.notes.iter().any(|n| n.contains("OQ-35")), "{:?}", e.notes);
    let off = Options {
        multi_warp_alloc: false,
        ..Options::default()
    };
    let v = expect_with(&handover, &off).run.verdict;
    assert!(undefined_with(&v, RuleId::AllocIssuer), "{v:?}");
    // Two CTAs each hold 512 columns across a cluster barrier: completes per CTA (the
    // default); may block when the two CTAs may share one SM's Tensor Memory.
    let mut w = vec![alloc(ONE, 0, 512)];
    w.extend(cluster_barrier());
    w.push(dealloc(ONE, 0, 512));
    let mut cluster = one_warp(vec![w], 1);
    cluster.launch.cluster_size = 2;
    cluster.launch.declare_cluster = true;
    assert_eq!(verdict_in(&cluster, Edition::Seeds), RunVerdict::Completes);
    let shared = Options {
        co_residency: CoResidency::SharedSm,
        ..Options::default()
    };
    let v = expect_with(&cluster, &shared).run.verdict;
    assert!(matches!(v, RunVerdict::MayBlock { .. }), "{v:?}");
}
