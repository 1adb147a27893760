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
use tcgen05_ir::{CtaGroup, Mma, MmaKind, Op, Stmt, Target};

/// Whether a statement list holds a block-scaled MMA that `pick` accepts.
fn has_mma(code: &[Stmt], pick: fn(&Mma) -> bool) -> bool {
    code.iter().any(|s| match s {
        Stmt::Tc(Op::Mma(m)) => m.form.block_scale && pick(m),
        Stmt::If { then, els, .. } => has_mma(then, pick) || has_mma(els, pick),
        Stmt::Loop { body, .. } => has_mma(body, pick),
        _ => false,
    })
}

/// Whether a statement list holds a block-scaled MMA.
fn has_block_scale(code: &[Stmt]) -> bool {
    has_mma(code, |_| true)
}

/// Whether a statement list holds a block-scaled MMA with UE4M3 scale factors (idesc bit
/// 23 clear, PTX ISA §5.2.3).
fn has_ue4m3(code: &[Stmt]) -> bool {
    has_mma(code, |m| m.idesc >> 23 & 1 == 0)
}

/// Runs `count` generated programs of `cfg` holding a block-scaled MMA on the simulator
/// (round-robin and adversarial schedulers) against the oracle; every case must agree, and
/// the words of the valid race-free cases are counted.
fn run(cfg: &Config, seed: u64, count: u64) -> (u32, WordCounts) {
    run_where(cfg, seed, count, has_block_scale)
}

/// [`run`] over the programs one of whose statement lists `keep` accepts.
fn run_where(cfg: &Config, seed: u64, count: u64, keep: fn(&[Stmt]) -> bool) -> (u32, WordCounts) {
    let (mut cases, mut all) = (0, WordCounts::default());
    let mut notes = std::collections::BTreeMap::<String, u32>::new();
    for i in 0..count {
        let p = valid_program(cfg, case_seed(seed, i));
        let bodies = p.warps.iter().chain(p.funcs.iter().map(|f| &f.body));
        if !bodies.into_iter().any(|c| keep(c)) {
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

/// Kinds mxf4 and mxf4nvf4 (packed e2m1, 2X / block32 and 4X / block16 with UE8M0 or UE4M3
/// factors; K = 96 stays unspecified, OQ-32), `::1` and `::2`.
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

/// mxf4nvf4 with UE4M3 scale factors (4X / block16): the oracle's decoding (an integer times
/// a power of two) and the simulator's (f32 bits) agree, and most words read are exact.
#[test]
fn ue4m3_scale_factors_agree_with_the_oracle_and_are_exact() {
    let cfg = kinds_config(CtaGroup::One, MmaKind::Mxf4nvf4);
    let (cases, all) = run_where(&cfg, 0xB5CD, 300, has_ue4m3);
    assert!(cases >= 20, "only {cases} valid race-free UE4M3 cases");
    assert!(
        all.unspecified * 4 < all.total(),
        "{all:?} over {cases} cases"
    );
}
