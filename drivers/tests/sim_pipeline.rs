//! The simulator keeps the pipelined pairs of reference §4.2 between operations of one thread
//! (MCM-PIPE-MMA-MMA, MCM-PIPE-CP-MMA, MCM-PIPE-SHIFT-MMA, MCM-PIPE-SHIFT-CP,
//! MCM-PIPE-MMA-SHIFT, and commit after earlier mma/cp/shift, COMMIT-TRACK): a valid program
//! whose only ordering between two async operations is such a pair has one outcome, so every
//! scheduler must observe the same words.

use tcgen05_drivers::outcome::Outcome;
use tcgen05_drivers::sim::{EXHAUSTIVE_RUNS, Sched, SimConfig, explore_with, simulate};
use tcgen05_generators::litmus;
use tcgen05_ir::form::{CpForm, ShiftForm};
use tcgen05_ir::*;

/// The program of the litmus member `family/member`.
fn member(name: &str) -> Program {
    litmus::all_members()
        .into_iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no litmus member {name}"))
        .program
}

/// The statements of warp 0's `elect.sync` block: the single thread issuing the async ops.
fn issue_block(p: &mut Program) -> &mut Vec<Stmt> {
    p.warps[0]
        .iter_mut()
        .find_map(|s| match s {
            Stmt::If {
                cond: Cond::ElectOne,
                then,
                ..
            } => Some(then),
            _ => None,
        })
        .expect("warp 0 issues its async ops in an elect.sync block")
}

fn position(block: &[Stmt], pick: impl Fn(&Op) -> bool) -> usize {
    block
        .iter()
        .position(|s| matches!(s, Stmt::Tc(op) if pick(op)))
        .expect("the op is in the issue block")
}

fn words(o: &Outcome) -> Vec<u32> {
    match o {
        Outcome::Completed { words } => words.clone(),
        other => panic!("expected completion, got {}", other.summary()),
    }
}

/// Every scheduler, including every schedule the exhaustive one reaches, gives one outcome;
/// returns its words.
fn one_outcome_under_every_scheduler(name: &str, p: &Program) -> Vec<u32> {
    let reference = words(&simulate(p, SimConfig::new(Sched::RoundRobin), 0));
    let mut scheds = vec![Sched::Adversarial, Sched::Exhaustive];
    scheds.extend((0..16).map(|s| Sched::Random(Some(s))));
    for s in scheds {
        let w = words(&simulate(p, SimConfig::new(s), 0));
        let differ = w.iter().zip(&reference).filter(|(a, b)| a != b).count();
        assert!(
            w == reference,
            "{name}: {s:?} observed {differ} of {} words unlike sim:rr",
            w.len()
        );
    }
    let all = explore_with(p, SimConfig::new(Sched::Exhaustive), EXHAUSTIVE_RUNS);
    assert_eq!(all.len(), 1, "{name}: {} distinct outcomes", all.len());
    reference
}

#[test]
fn cp_then_mma_of_one_thread_runs_in_issue_order_under_every_scheduler() {
    // MCM-PIPE-CP-MMA (reference §4.2 pair 2): the mma reads A from the columns the cp wrote.
    let p = member("pipelined-same-thread/cp-mma");
    let got = one_outcome_under_every_scheduler("cp-mma", &p);

    // Independent of the order the scheduler picks: the same MMA taking A straight from the
    // shared-memory region the cp copied (same descriptor, K-major, no swizzle) computes the
    // same D. The cp of a 128x256b block puts row r's 32 bytes in lane r (reference §2.6),
    // which is the TMEM A operand's layout for K = 16 f16 elements (reference §3.7).
    let mut direct = p;
    let block = issue_block(&mut direct);
    let cp = position(block, |o| matches!(o, Op::Cp { .. }));
    let Stmt::Tc(Op::Cp { src, .. }) = block.remove(cp) else {
        unreachable!()
    };
    let mma = position(block, |o| matches!(o, Op::Mma(_)));
    let Stmt::Tc(Op::Mma(m)) = &mut block[mma] else {
        unreachable!()
    };
    m.a = MmaA::Desc(src);
    let want = words(&simulate(&direct, SimConfig::new(Sched::RoundRobin), 0));
    assert_eq!(got.len(), want.len());
    let differ = got.iter().zip(&want).filter(|(a, b)| a != b).count();
    assert_eq!(
        differ,
        0,
        "{differ} of {} words differ from the MMA reading A from shared memory",
        got.len()
    );
}

#[test]
fn cp_mma_mma_of_one_thread_runs_in_issue_order_under_every_scheduler() {
    // Pairs 1 and 2: cp → mma → mma (same accumulator and shape).
    one_outcome_under_every_scheduler("cp-mma-mma", &member("pipelined-same-thread/cp-mma-mma"));
    one_outcome_under_every_scheduler("mma-mma", &member("pipelined-same-thread/mma-mma"));
}

#[test]
fn mma_shift_mma_of_one_thread_runs_in_issue_order_under_every_scheduler() {
    // Pairs 5 and 3: mma → shift of its accumulator → accumulating mma; then commit tracks
    // all three (COMMIT-TRACK).
    let mut p = member("pipelined-same-thread/mma-mma");
    let block = issue_block(&mut p);
    let first = position(block, |o| matches!(o, Op::Mma(_)));
    let Stmt::Tc(Op::Mma(m)) = &block[first] else {
        unreachable!()
    };
    let shift = Stmt::Tc(Op::Shift {
        form: ShiftForm {
            cta_group: CtaGroup::One,
            down_first: false,
        },
        taddr: m.d,
    });
    block.insert(first + 1, shift);
    one_outcome_under_every_scheduler("mma-shift-mma", &p);
}

#[test]
fn shift_then_cp_4x256b_then_mma_of_one_thread_run_in_issue_order() {
    // Pair 4 (shift → cp.4x256b), then pairs 2 and 3 (cp → mma, shift → mma): the shift and
    // the small cp both write the A columns the mma reads.
    let mut p = member("pipelined-same-thread/cp-mma");
    let block = issue_block(&mut p);
    let cp = position(block, |o| matches!(o, Op::Cp { .. }));
    let Stmt::Tc(Op::Cp { form, taddr, src }) = block[cp].clone() else {
        unreachable!()
    };
    // The 128x256b cp becomes a shift of the same columns followed by a 4x256b cp of the
    // same source: nothing but the pipeline pairs orders the three ops (the A columns start
    // as the simulator's fill of unwritten TMEM, which is deterministic, OQ-9).
    block[cp] = Stmt::Tc(Op::Shift {
        form: ShiftForm {
            cta_group: CtaGroup::One,
            down_first: false,
        },
        taddr,
    });
    block.insert(
        cp + 1,
        Stmt::Tc(Op::Cp {
            form: CpForm {
                shape: CpShape::S4x256b,
                ..form
            },
            taddr,
            src,
        }),
    );
    one_outcome_under_every_scheduler("shift-cp4x256b-mma", &p);
}
