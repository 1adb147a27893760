//! The simulator against the oracle on block-scaled MMAs (`.block_scale`, §9.7.16.10.7;
//! reference §3.7, MMA-BS-*): generated programs whose only MMA kind is kind::mxf8f6f4, their
//! scale factors copied into TMEM by `cp.32x128b.warpx4` (or stored by st). The oracle reads
//! the factors by the layout it derives from the ISA's figures, the simulator by CUTLASS's
//! `tmem_sf_frg` atom (two independent readings); both must agree on every case, and the
//! block-scaled MMAs' results must be exact on most of the words read from them.

use tcgen05_drivers::diff::{self, Verdict};
use tcgen05_drivers::report::WordCounts;
use tcgen05_drivers::sim::{Sched, SimConfig, simulate};
use tcgen05_generators::{Config, case_seed, valid_program};
use tcgen05_ir::observe::Layout;
use tcgen05_ir::{CtaGroup, MmaKind, Op, Stmt, Target};

/// Whether a statement list holds a block-scaled MMA.
fn has_block_scale(code: &[Stmt]) -> bool {
    code.iter().any(|s| match s {
        Stmt::Tc(Op::Mma(m)) => m.form.block_scale,
        Stmt::If { then, els, .. } => has_block_scale(then) || has_block_scale(els),
        Stmt::Loop { body, .. } => has_block_scale(body),
        _ => false,
    })
}

/// Runs `count` generated programs of `cfg` holding a block-scaled MMA on the simulator
/// (round-robin and adversarial schedulers) against the oracle; every case must agree, and
/// the words of the valid race-free cases are counted.
fn run(cfg: &Config, seed: u64, count: u64) -> (u32, WordCounts) {
    let (mut cases, mut all) = (0, WordCounts::default());
    let mut notes = std::collections::BTreeMap::<String, u32>::new();
    for i in 0..count {
        let p = valid_program(cfg, case_seed(seed, i));
        let bodies = p.warps.iter().chain(p.funcs.iter().map(|f| &f.body));
        if !bodies.into_iter().any(|c| has_block_scale(c)) {
            continue;
        }
        let e = tcgen05_oracle::expect(&p);
        let layout = Layout::of(&p);
        let Some(w) = WordCounts::of(&p, &layout, &e) else {
            continue;
        };
        cases += 1;
        all.add(&w);
        for n in &e.notes {
            *notes.entry(n.clone()).or_default() += 1;
        }
        for (k, sched) in [Sched::RoundRobin, Sched::Adversarial]
            .into_iter()
            .enumerate()
        {
            let o = simulate(&p, SimConfig::new(sched), k as u64);
            match diff::compare(&p, &e, &o) {
                Verdict::Agree | Verdict::Skip(_) => {}
                v => panic!("case {i} {sched:?}: {v:?}\n{}", tcgen05_ir::ptx::emit(&p)),
            }
        }
    }
    eprintln!("{cases} cases: {all:?}; notes {notes:#?}");
    (cases, all)
}

fn mx_config(cg: CtaGroup) -> Config {
    kinds_config(cg, MmaKind::Mxf8f6f4)
}

fn kinds_config(cg: CtaGroup, kind: MmaKind) -> Config {
    Config {
        mma_kinds: vec![kind],
        targets: vec![Target::Sm100a],
        cta_groups: vec![cg],
        sparse_pct: 0,
        ..Config::default()
    }
}

#[test]
fn block_scaled_mxf8f6f4_agrees_with_the_oracle_and_is_exact() {
    let (cases, all) = run(&mx_config(CtaGroup::One), 0xB5CA, 400);
    assert!(
        cases >= 50,
        "only {cases} valid race-free block-scaled cases"
    );
    // Most of the observed words are exact (before the block-scaled results were computed,
    // every word an MMA wrote was unspecified).
    assert!(
        all.unspecified * 10 < all.total(),
        "{all:?} over {cases} cases"
    );
}

/// `cta_group::2`, M = 256 (and M = 128, left unspecified: layout B, OQ-29): D in both CTAs
/// of the pair, each from its own A and scale factors and both CTAs' halves of B.
#[test]
fn block_scaled_pairs_agree_with_the_oracle_and_are_exact() {
    let (cases, all) = run(&mx_config(CtaGroup::Two), 0xB5CB, 300);
    assert!(
        cases >= 40,
        "only {cases} valid race-free block-scaled cases"
    );
    assert!(
        all.unspecified * 4 < all.total(),
        "{all:?} over {cases} cases"
    );
}

/// Kinds mxf4 and mxf4nvf4 (packed e2m1, 2X / block32 and 4X / block16 with UE8M0 factors;
/// UE4M3 factors and K = 96 stay unspecified, OQ-19 / OQ-32), `::1` and `::2`.
#[test]
fn block_scaled_mxf4_kinds_agree_with_the_oracle() {
    let mut all = WordCounts::default();
    let mut total = 0;
    for (k, kind) in [MmaKind::Mxf4, MmaKind::Mxf4nvf4].into_iter().enumerate() {
        for cg in [CtaGroup::One, CtaGroup::Two] {
            let (cases, w) = run(&kinds_config(cg, kind), 0xB5CC + k as u64, 150);
            total += cases;
            all.add(&w);
        }
    }
    assert!(
        total >= 100,
        "only {total} valid race-free block-scaled cases"
    );
    assert!(
        all.unspecified * 4 < all.total(),
        "{all:?} over {total} cases"
    );
}
