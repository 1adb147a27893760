//! A grid of identical, independent CTAs (`run::symmetric`: judged once, copied to every
//! CTA): every CTA gets its own records, as the spec gives them for a CTA alone (TMEM and its
//! allocator are per CTA, reference §2.1, §2.3), and the result is the whole grid's.

use tcgen05_ir::samples::{self, alloc, dealloc, ld, relinquish, st, wait};
use tcgen05_ir::*;
use tcgen05_oracle::*;

const CG: CtaGroup = CtaGroup::One;
const SEED: u32 = 7;

/// Two clusters of two CTAs, two warps per CTA. Warp 0 allocates, reads its slot back,
/// round-trips st/ld in lanes 0-31 and frees; warp 1 only takes part in the cluster
/// barrier. `prefix` runs first in warp 0.
fn grid(prefix: Vec<Stmt>) -> Program {
    let mut w0 = prefix;
    w0.extend([
        alloc(CG, 0, 64),
        Stmt::ClusterArrive { relaxed: false },
        Stmt::ClusterWait,
        Stmt::ObserveAddr { slot: 0 },
        st(0, 0, 0, Num::X2, SEED),
        wait(WaitOp::St),
        ld(0, 0, 0, Num::X2),
        wait(WaitOp::Ld),
        dealloc(CG, 0, 64),
        relinquish(CG),
    ]);
    let w1 = vec![Stmt::ClusterArrive { relaxed: false }, Stmt::ClusterWait];
    let mut launch = samples::launch(2);
    launch.cluster_size = 2;
    launch.clusters = 2;
    Program {
        launch,
        smem: Smem {
            slots: 1,
            mbarriers: 0,
            regions: vec![],
        },
        warps: vec![w0, w1],
        funcs: vec![],
    }
}

fn site(cta: u32, index: u32) -> ObsSite {
    ObsSite {
        cta,
        warp: 0,
        site: SiteRef::Warp(index),
    }
}

#[test]
fn identical_ctas_each_get_the_records_of_a_cta_alone() {
    let p = grid(vec![]);
    assert!(
        run::symmetric::expect(&p, &Options::default()).is_some(),
        "the grid's CTAs are identical and independent"
    );
    let e = expect(&p);
    assert!(e.violations.is_empty(), "{:?}", e.violations);
    assert_eq!(e.run.verdict, RunVerdict::Completes, "{:#?}", e.notes);
    let mut allocs = Vec::new();
    for cta in 0..4 {
        // ALLOC-ADDR-STORE: the slot holds this CTA's allocation; TMEM is per CTA (§2.1),
        // so no other CTA's allocation is claimed disjoint from it.
        let addr = e.site(&site(cta, 0)).expect("an address record per CTA");
        assert_eq!(addr.lanes, u32::MAX);
        let SiteExpect::Same(ObsExpect::Check(c)) = &addr.expect else {
            panic!("CTA {cta}: {:?}", addr.expect);
        };
        assert_eq!(c.ncols, 64);
        assert!(c.disjoint_from.is_empty(), "CTA {cta}: {c:?}");
        allocs.push(c.alloc);
        // The st's values read back (pattern 2: st; wait::st; ld; wait::ld), lane l of the
        // warp in TMEM lane l, register r in column r.
        let rec = e.site(&site(cta, 1)).expect("an ld record per CTA");
        for l in 0..32u8 {
            let want: Vec<u32> = (0..2)
                .map(|r| values::st_value(SEED, u32::from(l), r))
                .collect();
            let got = rec.lane(l).and_then(|x| x.exact().map(<[u32]>::to_vec));
            assert_eq!(got, Some(want), "CTA {cta} lane {l}");
        }
    }
    // Four allocations, one per CTA: distinct numbers (two CTAs' addresses need not agree).
    allocs.sort_unstable();
    allocs.dedup();
    assert_eq!(allocs.len(), 4, "{allocs:?}");
}

#[test]
fn the_copy_equals_the_whole_grid() {
    let p = grid(vec![]);
    // The same program, except that warp 0 tests the CTA's parity (with nothing on either
    // side): judged as a whole grid.
    let q = grid(vec![Stmt::If {
        cond: Cond::CtaOdd,
        then: vec![],
        els: vec![],
    }]);
    assert!(run::symmetric::expect(&q, &Options::default()).is_none());
    for edition in [Edition::Seeds, Edition::Ptx93] {
        let opts = Options::edition(edition);
        let (a, b) = (expect_with(&p, &opts), expect_with(&q, &opts));
        assert_eq!(a.run, b.run);
        assert_eq!(a.obs, b.obs);
        assert_eq!(a.assumes_completed, b.assumes_completed);
        assert_eq!(a.leak, b.leak);
        assert_eq!(a.notes, b.notes);
    }
}

#[test]
fn a_pair_or_a_cta_test_is_judged_whole() {
    let opts = Options::default();
    let test = grid(vec![Stmt::If {
        cond: Cond::CtaRank(1),
        then: vec![],
        els: vec![],
    }]);
    assert!(run::symmetric::expect(&test, &opts).is_none());
    // A `::2` relinquish reaches the peer CTA (§2.5).
    let mut pair = grid(vec![]);
    pair.warps[0].push(relinquish(CtaGroup::Two));
    assert!(run::symmetric::expect(&pair, &opts).is_none());
    // Another CTA's mbarrier.
    let mut remote = grid(vec![]);
    remote.smem.mbarriers = 1;
    remote.warps[1].push(Stmt::MbarArrive {
        bar: 0,
        cta: Some(0),
    });
    assert!(run::symmetric::expect(&remote, &opts).is_none());
    // Other CTAs' allocations counted against an alloc (OQ-7).
    let shared = Options {
        co_residency: CoResidency::SharedSm,
        ..Options::default()
    };
    assert!(run::symmetric::expect(&grid(vec![]), &shared).is_none());
}
