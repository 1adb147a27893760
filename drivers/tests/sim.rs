//! The simulator against facts of the spec (reference §3, §4), on hand-built programs.

use tcgen05_drivers::outcome::{Outcome, TrapKind};
use tcgen05_drivers::sim::faults::{Fault, Faults};
use tcgen05_drivers::sim::{Sched, SimConfig, Wording, explore, simulate};
use tcgen05_ir::observe::{CHECKPOINT_DONE, Layout, View};
use tcgen05_ir::samples::*;
use tcgen05_ir::values::st_value;
use tcgen05_ir::*;

fn cfg(sched: Sched) -> SimConfig {
    SimConfig::new(sched)
}

const ALL: [Sched; 4] = [
    Sched::Random(Some(1)),
    Sched::RoundRobin,
    Sched::Adversarial,
    Sched::Exhaustive,
];

fn words(o: &Outcome) -> &[u32] {
    match o {
        Outcome::Completed { words } => words,
        other => panic!("expected completion, got {}", other.summary()),
    }
}

#[test]
fn roundtrip_reads_back_what_it_stored_under_every_scheduler() {
    // Reference §4.4 row 2: st; wait::st; ld; wait::ld reads the stored value (ST-ASYNC,
    // LD-ASYNC, WAIT-SCOPE). .32x32b: thread t holds lane t, register i column i (§2.6).
    let p = single_warp_roundtrip();
    let layout = Layout::of(&p);
    for s in ALL {
        let o = simulate(&p, cfg(s), 3);
        let w = words(&o);
        let view = View {
            layout: &layout,
            words: w,
        };
        let ld_site = layout.warp_sites[0][1];
        for lane in 0..32 {
            let rec = view
                .record(0, 0, &ld_site, lane)
                .expect("every lane records the ld");
            assert_eq!(
                rec,
                &[st_value(0xC0FFEE, lane, 0), st_value(0xC0FFEE, lane, 1)],
                "{s:?} lane {lane}"
            );
            assert_eq!(view.checkpoint(0, 0, lane), CHECKPOINT_DONE);
        }
        // The address: lane field 0 and 32 columns within 512 (observation checks of OQ-1).
        let a = view.record(0, 0, &layout.warp_sites[0][0], 0).unwrap()[0];
        assert_eq!(a >> 16, 0);
        assert!((a & 0xFFFF) + 32 <= 512);
    }
}

#[test]
fn an_alloc_that_can_never_be_satisfied_deadlocks_and_says_where() {
    // ALLOC-BLOCKS: a second alloc of 512 columns in a CTA holding 512 waits forever when the
    // only warp that could free them is the one waiting.
    let cg = CtaGroup::One;
    let mut p = single_warp_roundtrip();
    p.warps[0] = vec![
        alloc(cg, 0, 512),
        Stmt::Checkpoint(7),
        alloc(cg, 0, 512),
        dealloc(cg, 0, 512),
    ];
    for s in ALL {
        match simulate(&p, cfg(s), 0) {
            Outcome::Hung { blocked, .. } => {
                assert_eq!(blocked.len(), 32);
                assert!(blocked.iter().all(|b| b.checkpoint == 7 && b.warp == 0));
                assert!(
                    blocked[0]
                        .blocked_on
                        .as_deref()
                        .unwrap()
                        .contains("tcgen05.alloc")
                );
            }
            other => panic!("{s:?}: expected a hang, got {}", other.summary()),
        }
    }
}

#[test]
fn a_blocked_alloc_resumes_when_another_warp_frees_columns() {
    // ALLOC-BLOCKS: "resumes once enough is free". Warp 1 waits for warp 0's dealloc.
    let cg = CtaGroup::One;
    let mut p = single_warp_roundtrip();
    p.launch.warps_per_cta = 2;
    p.smem.slots = 2;
    p.warps = vec![
        vec![alloc(cg, 0, 512), Stmt::BarCta, dealloc(cg, 0, 512)],
        vec![Stmt::BarCta, alloc(cg, 1, 256), dealloc(cg, 1, 256)],
    ];
    for s in ALL {
        let o = simulate(&p, cfg(s), 5);
        assert!(
            matches!(o, Outcome::Completed { .. }),
            "{s:?}: {}",
            o.summary()
        );
    }
}

#[test]
fn leaving_columns_allocated_is_reported_as_a_leak() {
    let mut p = single_warp_roundtrip();
    p.warps[0] = vec![alloc(CtaGroup::One, 0, 64)];
    assert!(matches!(
        simulate(&p, cfg(Sched::RoundRobin), 0),
        Outcome::Leaked { columns: 64, .. }
    ));
}

#[test]
fn alloc_after_relinquish_traps() {
    // ALLOC-AFTER-RELINQUISH is "illegal" with no stated consequence; the simulator's documented
    // concrete behaviour is a trap.
    let cg = CtaGroup::One;
    let mut p = single_warp_roundtrip();
    p.warps[0] = vec![relinquish(cg), alloc(cg, 0, 32)];
    assert!(matches!(
        simulate(&p, cfg(Sched::RoundRobin), 0),
        Outcome::Trapped {
            kind: TrapKind::AllocWithoutPermit,
            ..
        }
    ));
}

#[test]
fn a_pair_alloc_waits_for_its_peer_and_gets_the_same_address() {
    // ALLOC-PAIR-BLOCK: one warp per CTA of the pair, collectively; both see one allocation.
    let cg = CtaGroup::Two;
    let mut p = single_warp_roundtrip();
    p.launch.cluster_size = 2;
    p.warps[0] = vec![
        Stmt::If {
            cond: Cond::CtaOdd,
            then: vec![Stmt::Spin(10)],
            els: vec![],
        },
        alloc(cg, 0, 64),
        Stmt::ObserveAddr { slot: 0 },
        dealloc(cg, 0, 64),
        relinquish(cg),
    ];
    let layout = Layout::of(&p);
    for s in ALL {
        let o = simulate(&p, cfg(s), 9);
        let w = words(&o);
        let view = View {
            layout: &layout,
            words: w,
        };
        let site = layout.warp_sites[0][0];
        assert_eq!(
            view.record(0, 0, &site, 0),
            view.record(1, 0, &site, 0),
            "{s:?}"
        );
    }
    // Without a peer CTA the collective never completes.
    p.launch.cluster_size = 1;
    assert!(matches!(
        simulate(&p, cfg(Sched::RoundRobin), 0),
        Outcome::Hung { .. }
    ));
}

#[test]
fn runs_are_deterministic_for_a_seed() {
    let p = single_warp_roundtrip();
    for s in ALL {
        assert_eq!(simulate(&p, cfg(s), 11), simulate(&p, cfg(s), 11));
    }
}

#[test]
fn without_wait_st_the_adversary_lets_the_load_see_the_old_value() {
    // MCM-ST-BEFORE-USE: without wait::st the ld races with the st (unspecified), and the
    // adversarial scheduler performs the st as late as it may: after the ld.
    let cg = CtaGroup::One;
    let mut p = single_warp_roundtrip();
    p.warps[0] = vec![
        alloc(cg, 0, 32),
        st(0, 0, 0, Num::X1, 5),
        ld(0, 0, 0, Num::X1),
        wait(WaitOp::Ld),
        wait(WaitOp::St),
        dealloc(cg, 0, 32),
    ];
    let layout = Layout::of(&p);
    let o = simulate(&p, cfg(Sched::Adversarial), 0);
    let view = View {
        layout: &layout,
        words: words(&o),
    };
    assert_ne!(
        view.record(0, 0, &layout.warp_sites[0][0], 0).unwrap()[0],
        st_value(5, 0, 0)
    );
    // And the exhaustive scheduler finds both orders.
    assert!(explore(&p, Faults::NONE, 64).len() >= 2);
}

#[test]
fn injected_faults_change_defined_outcomes() {
    let p = single_warp_roundtrip();
    let good = simulate(&p, cfg(Sched::Adversarial), 0);
    for f in [
        Fault::WaitLdEarly,
        Fault::WaitStEarly,
        Fault::LdNumTruncated,
        Fault::LaneQuarterOffByOne,
        Fault::DeallocWrongColumns,
    ] {
        let bad = simulate(
            &p,
            SimConfig {
                sched: Sched::Adversarial,
                faults: Faults::one(f),
                wording: Default::default(),
            },
            0,
        );
        assert_ne!(good, bad, "{}", f.name());
    }
}

#[test]
fn a_pair_dealloc_waits_for_its_peer_only_in_the_ptx93_wording() {
    // The §2.5 example: the even CTA deallocates (::2) before a cluster barrier, the odd CTA
    // after it. PTX ISA 9.2/9.3 (DEALLOC-PAIR-BLOCK): the even CTA's dealloc may wait for the
    // odd CTA's, which waits at the barrier for the even CTA: a wait cycle. The simulator's
    // seeds wording takes the branch where the dealloc does not wait (allowed too: it "may"
    // block), so the program completes and frees every column.
    let cg = CtaGroup::Two;
    let mut p = single_warp_roundtrip();
    p.launch.cluster_size = 2;
    let barrier = || vec![Stmt::ClusterArrive { relaxed: false }, Stmt::ClusterWait];
    let mut even = vec![dealloc(cg, 0, 64)];
    even.extend(barrier());
    let mut odd = barrier();
    odd.push(dealloc(cg, 0, 64));
    p.warps[0] = vec![
        alloc(cg, 0, 64),
        Stmt::If {
            cond: Cond::CtaOdd,
            then: odd,
            els: even,
        },
        relinquish(cg),
    ];
    for s in ALL {
        let seeds = simulate(&p, cfg(s), 3);
        assert!(
            matches!(seeds, Outcome::Completed { .. }),
            "{s:?} seeds: {}",
            seeds.summary()
        );
        let ptx93 = SimConfig {
            wording: Wording::PTX93,
            ..cfg(s)
        };
        let o = simulate(&p, ptx93, 3);
        assert!(
            matches!(o, Outcome::Hung { .. }),
            "{s:?} ptx93: {}",
            o.summary()
        );
    }
    // A ::2 relinquish by the even CTA alone: no peer ever arrives. The 9.2/9.3 text lets a
    // ::2 collective wait for its peer (a missing peer deadlocks); the seed documents' does
    // not make relinquish wait.
    let mut q = single_warp_roundtrip();
    q.launch.cluster_size = 2;
    q.warps[0] = vec![Stmt::If {
        cond: Cond::CtaOdd,
        then: vec![],
        els: vec![relinquish(cg)],
    }];
    for s in ALL {
        assert!(matches!(simulate(&q, cfg(s), 3), Outcome::Completed { .. }));
        let ptx93 = SimConfig {
            wording: Wording::PTX93,
            ..cfg(s)
        };
        assert!(matches!(simulate(&q, ptx93, 3), Outcome::Hung { .. }));
    }
    // Target names choose the wording; a campaign's edition chooses it where they do not.
    let named = |n: &str| SimConfig::parse(n).unwrap().unwrap().wording;
    assert_eq!(named("sim"), Wording::SEEDS);
    assert_eq!(named("sim:adversarial~ptx93+fence-noop"), Wording::PTX93);
    assert!(SimConfig::parse("sim~ptx94").unwrap().is_err());
    let case = Case {
        program: p.clone(),
        intent: Intent::Valid,
        provenance: Provenance {
            seed: Some(3),
            origin: "test".into(),
            family: None,
        },
    };
    for (name, edition, hangs) in [
        ("sim:rr", tcgen05_oracle::Edition::Seeds, false),
        ("sim:rr", tcgen05_oracle::Edition::Ptx93, true),
        ("sim:rr~seeds", tcgen05_oracle::Edition::Ptx93, false),
    ] {
        let mut t = tcgen05_drivers::target::resolve_in(name, edition).unwrap();
        assert_eq!(
            matches!(t.run(&case), Outcome::Hung { .. }),
            hangs,
            "{name} {edition}"
        );
    }
}
