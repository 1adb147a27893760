//! Race citations that name the rule a program breaks, not only its consequence (reference
//! §4.3-4.4, §6): WAIT-SCOPE for an ld counted as waited by another warp's `wait::ld`, and the
//! races of an MMA's A operand read from TMEM, cited by the lds of what the MMA wrote.

use tcgen05_ir::samples::{self, alloc, dealloc, fence, ld, relinquish, st, wait};
use tcgen05_ir::*;
use tcgen05_oracle::*;

const CG: CtaGroup = CtaGroup::One;

/// The rules of every ld record of `p` (the program must complete).
fn ld_rules(p: &Program) -> Vec<RuleId> {
    let e = expect(p);
    assert!(e.violations.is_empty(), "{:?}", e.violations);
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
