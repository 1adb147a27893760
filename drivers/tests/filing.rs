//! A finding is filed under the rule of the behaviour that differed (the instruction
//! whose result or progress is wrong), with the observing instruction named as well.
//!
//! Each injected simulator fault (`sim+<fault>`, `sim:adversarial+<fault>`) runs on generated
//! valid programs; every value discrepancy is compared with the rule the fault's own
//! description breaks (reference §6, docs/reference.md). The expected rules come from those
//! descriptions, not from the code under test.
//!
//! A record read from TMEM cells the program never wrote before the read (the fault let the
//! read run before the write) has no value the oracle predicts: OQ-9 leaves such cells
//! unspecified. It is filed under the behaviour's rule where an edited program (a `wait::st`
//! returning before its st lands, say) accounts for the whole run and leaves open exactly the
//! words that differ, as reads of never-written cells; else it stays under the observing ld's
//! rule (LD-ASYNC). The tests below check that no finding is filed under a rule of another
//! behaviour, that each fault whose records the oracle can account for is filed under its own
//! rule, that an address record a barrier let be read early is filed under the barrier's,
//! and that a plain value slip is not taken for a read of never-written cells.

use tcgen05_drivers::diff::{Discrepancy, DiscrepancyKind, Verdict, compare};
use tcgen05_drivers::sim::{SimConfig, simulate};
use tcgen05_ir::{Program, RuleId};

/// Generated programs per fault.
const PROGRAMS: u64 = 300;

/// Each fault and the rules its description breaks (reference §6), then the rules of
/// behaviours that give the very same records on some programs (observationally equivalent
/// there, so either filing is right).
///
/// - An MMA that has not completed when the ld reads its accumulator leaves D as the earlier
///   MMAs left it: when the earlier MMA overwrote D (enable-input-d false), that is what the two
///   completing in the other order leaves (MCM-PIPE-MMA-MMA), and a lane the later MMA has not
///   written is a lane it skipped (MMA-DOL-SEM). It is also what a consumer whose
///   `fence::after_thread_sync` orders nothing reads (its ld hoisted above the wait sees D
///   before the MMA, FENCE-AFTER). So for the faults that let an ld read an accumulator early
///   (a commit that signals early, a fence that orders nothing).
/// - A fence that orders nothing breaks the `fence::before_thread_sync` → sync →
///   `fence::after_thread_sync` chain that orders async operations across threads, as a
///   barrier that does not wait does (MCM-XTHREAD).
/// - A wait that returns while an ld's registers are partly delivered leaves the later
///   repetitions' registers stale: the behaviour of a truncated `.num` (LDST-NUM).
/// - An accumulating MMA that a barrier let run before another warp's st of its accumulator
///   adds A·B to cells never written (zero in the simulator): the record is what the same
///   MMA gives with enable-input-d read as false (MMA-ENABLE-D), and no edited program in
///   which the barrier orders nothing predicts it (the removed barrier makes it a race).
/// - A consumer that overwrites columns of an MMA's D by st, waits (`wait::st`) and loads them
///   after its `fence::after_thread_sync` (the builder's st inside D): a `wait::st` that
///   returns early leaves D's words there, and so does the fence ordering nothing (its ld
///   hoisted above the wait reads D as the MMA left it, before the st, FENCE-AFTER).
const FAULTS: [(&str, &[RuleId], &[RuleId]); 13] = [
    // "wait::ld returns before the thread's loads complete": WAIT-SCOPE (§9.7.16.8.5).
    ("wait-ld-early", &[RuleId::WaitScope], &[RuleId::LdstNum]),
    // "wait::st returns before the thread's stores reach TMEM": WAIT-SCOPE (the next ld
    // reads the cells as before the st: never written, OQ-9, or an earlier write's value).
    (
        "wait-st-early",
        &[RuleId::WaitScope],
        &[RuleId::LdstNum, RuleId::FenceAfter],
    ),
    // ".num > .x1 fills only the first repetition's registers": the `.num` register map
    // (LDST-NUM, §9.7.16.8.3; reference §2.6).
    ("ld-num-truncated", &[RuleId::LdstNum], &[]),
    // "computes the warp's lane quarter from warp rank + 1": LDST-LANE-QUARTER (§9.7.16.8.1).
    ("lane-quarter-off-by-one", &[RuleId::LdstLaneQuarter], &[]),
    // "commit arrives at once, before the committed MMAs complete": COMMIT-TRACK (it signals
    // when every tracked operation has completed, §9.7.16.12.1).
    ("commit-arrive-early", &[RuleId::CommitTrack], EARLY_READ),
    // "barrier.sync lets each warp through": the sync of MCM-XTHREAD (§9.7.16.6.3-4).
    (
        "bar-cta-no-wait",
        &[RuleId::McmXthread],
        &[RuleId::MmaEnableD],
    ),
    // "barrier.cluster.wait does not wait": likewise.
    (
        "cluster-barrier-no-wait",
        &[RuleId::McmXthread],
        &[RuleId::MmaEnableD],
    ),
    // "always accumulates into D": MMA-ENABLE-D (§9.7.16.10.9).
    ("mma-ignores-enable-d", &[RuleId::MmaEnableD], &[]),
    // "reads disable-output-lane inverted": MMA-DOL-SEM.
    ("mma-dol-inverted", &[RuleId::MmaDolSem], &[]),
    // "ignores scale-input-d": MMA-SCALE-D-SEM.
    ("mma-scale-d-ignored", &[RuleId::MmaScaleDSem], &[]),
    // "two mma on the same accumulator complete out of issue order": MCM-PIPE-MMA-MMA
    // (§9.7.16.6.2).
    ("mma-pipeline-reordered", &[RuleId::McmPipeMmaMma], &[]),
    // "commit tracks only the first outstanding operation": COMMIT-TRACK.
    (
        "commit-tracks-first-only",
        &[RuleId::CommitTrack],
        EARLY_READ,
    ),
    // "fences are no-ops": FENCE-BEFORE / FENCE-AFTER (§9.7.16.11.1), whichever fence the
    // program relied on.
    (
        "fence-noop",
        &[RuleId::FenceBefore, RuleId::FenceAfter],
        &[RuleId::McmPipeMmaMma, RuleId::MmaDolSem, RuleId::McmXthread],
    ),
];

/// The behaviours an accumulator read before its last MMA completed is equivalent to (see
/// [`FAULTS`]).
const EARLY_READ: &[RuleId] = &[RuleId::McmPipeMmaMma, RuleId::MmaDolSem, RuleId::FenceAfter];

/// The value discrepancies of `fault` on the first [`PROGRAMS`] generated programs, each
/// program changed by `prepare` (`None`: left out), on both simulator flavours.
fn findings(fault: &str, prepare: fn(Program) -> Option<Program>) -> Vec<(u64, Discrepancy)> {
    let gen_cfg = tcgen05_generators::Config::default();
    let mut out = Vec::new();
    for seed in 0..PROGRAMS {
        let Some(p) = prepare(tcgen05_generators::valid_program(&gen_cfg, seed)) else {
            continue;
        };
        let e = tcgen05_oracle::expect(&p);
        for name in [format!("sim+{fault}"), format!("sim:adversarial+{fault}")] {
            let Some(Ok(cfg)) = SimConfig::parse(&name) else {
                panic!("{name} is a simulator name")
            };
            if let Verdict::Discrepancy(d) = compare(&p, &e, &simulate(&p, cfg, seed))
                && d.kind == DiscrepancyKind::ValueOutsideAllowed
            {
                out.push((seed, d));
                break;
            }
        }
    }
    out
}

/// Whether `d` is filed as it should be for a fault breaking `rules` (or a behaviour
/// equivalent there, `same`): under one of them, with the observing ld named (an address
/// record: with the barrier named); or, for a record no edited program accounts for, under
/// the observation's own rules (an ld's LD-ASYNC, an address record's ALLOC-ADDR-STORE),
/// with no diagnosis claimed.
fn filed_well(d: &Discrepancy, rules: &[RuleId], same: &[RuleId]) -> bool {
    // A diagnosis says what gives the record ("... is what the program gives with ...", "...
    // is what the same ld in warp ... is expected to record") or which repetitions differ, or
    // for an address record which barrier let the read through.
    let address = d.detail.contains("the address slot is read before");
    let claimed = d.detail.contains(" is what the ") || d.detail.contains("repetitions") || address;
    match d.rules.first() {
        Some(r) if rules.contains(r) || same.contains(r) => {
            claimed
                && (d.detail.contains("observed by tcgen05.ld")
                    || address && d.forms.iter().any(|f| f.starts_with("barrier.")))
        }
        Some(RuleId::LdAsync) => !claimed && d.detail.contains("observed by tcgen05.ld"),
        Some(RuleId::AllocAddrStore) => !claimed && d.detail.contains("observation check"),
        _ => false,
    }
}

/// Every value discrepancy of every fault is filed under the rule the fault breaks (or one of
/// a behaviour that gives the same records), or, a record the oracle cannot account for,
/// under the observing ld's rule; none under the rule of another behaviour (for example
/// `bar-cta-no-wait` under MMA-ENABLE-D through an address record, which no MMA writes, or
/// `mma-pipeline-reordered` under LD-ASYNC).
#[test]
fn every_fault_is_filed_under_its_own_rule_or_the_observers() {
    let mut bad = Vec::new();
    for (fault, rules, same) in FAULTS {
        for (seed, d) in findings(fault, Some) {
            if !filed_well(&d, rules, same) {
                bad.push(format!("{fault} seed {seed}: {:?}: {}", d.rules, d.detail));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The faults whose wrong records the oracle can account for on generated programs (the MMA
/// result and pipeline faults, the `.num` map) have findings filed under their own rule, the
/// MMA's (or the ld's) form among the forms. `mma-ignores-enable-d` needs a program whose D
/// holds written values before an MMA that overwrites it (the generator's st of D before the
/// first kind::i8 MMA): on D's never-written cells accumulating is open (OQ-9).
#[test]
fn faults_the_oracle_accounts_for_are_filed_under_their_own_rule() {
    for fault in [
        "ld-num-truncated",
        "lane-quarter-off-by-one",
        "mma-ignores-enable-d",
        "mma-dol-inverted",
        "mma-scale-d-ignored",
        "mma-pipeline-reordered",
    ] {
        let rules = FAULTS
            .iter()
            .find(|(f, _, _)| *f == fault)
            .map(|(_, r, _)| *r)
            .expect("a fault of the table");
        let found = findings(fault, Some);
        let own: Vec<_> = found
            .iter()
            .filter(|(_, d)| d.rules.first().is_some_and(|r| rules.contains(r)))
            .collect();
        assert!(
            !own.is_empty(),
            "{fault}: none of {} findings filed under {rules:?}: {:?}",
            found.len(),
            found.iter().map(|(s, d)| (s, &d.rules)).collect::<Vec<_>>()
        );
        for (seed, d) in own {
            let family =
                if rules.contains(&RuleId::LdstNum) || rules.contains(&RuleId::LdstLaneQuarter) {
                    "tcgen05.ld"
                } else {
                    "tcgen05.mma"
                };
            assert!(
                d.forms.iter().any(|f| f.starts_with(family)),
                "{fault} seed {seed}: {:?}",
                d.forms
            );
        }
    }
}

/// An address record that differs because a barrier let the reading thread through before
/// the allocating warp stored the address is filed under the barrier's rule (MCM-XTHREAD,
/// §9.7.16.6.3-4), the barrier among the forms, not under ALLOC-ADDR-STORE, the rule of the
/// observation (as every such record was before).
#[test]
fn address_records_of_a_barrier_that_lets_threads_through_are_filed_under_the_barrier() {
    for fault in ["bar-cta-no-wait", "cluster-barrier-no-wait"] {
        let found = findings(fault, Some);
        let address: Vec<_> = found
            .iter()
            .filter(|(_, d)| d.detail.contains("observation check"))
            .collect();
        assert!(
            !address.is_empty(),
            "{fault}: no address record among {} findings",
            found.len()
        );
        for (seed, d) in address {
            assert_eq!(
                d.rules.first(),
                Some(&RuleId::McmXthread),
                "{fault} seed {seed}: {}",
                d.detail
            );
            assert!(
                d.forms.iter().any(|f| f.starts_with("barrier.")),
                "{fault} seed {seed}: {:?}",
                d.forms
            );
        }
    }
}

/// A `.num` truncation seen by an `ld.red` is filed under LDST-NUM as by a plain ld: the
/// reduction's `redval` after the registers (§9.7.16.8.3) does not hide the repetitions that
/// differ (every such finding was under LD-ASYNC, the observing ld's rule).
#[test]
fn a_truncated_ld_red_is_filed_under_ldst_num() {
    let found = findings("ld-num-truncated", Some);
    let red: Vec<_> = found
        .iter()
        .filter(|(_, d)| d.detail.contains("observed by tcgen05.ld.red"))
        .collect();
    assert!(!red.is_empty(), "no ld.red among {} findings", found.len());
    for (seed, d) in red {
        assert_eq!(
            d.rules.first(),
            Some(&RuleId::LdstNum),
            "seed {seed}: {}",
            d.detail
        );
    }
}

/// A `wait::st` that returns before its st lands lets the next ld read cells no write is
/// ordered before (OQ-9 leaves them open): such findings are filed under WAIT-SCOPE
/// (§9.7.16.8.5), the `wait::st` among the forms and the observing ld named, not under the
/// observing ld's LD-ASYNC.
///
/// Where no word of the read is as first predicted, a `wait::ld` returning before the ld's
/// registers are delivered gives the same record (also WAIT-SCOPE); the detail says so, and
/// `wait-ld-early`'s findings so accounted for are filed under WAIT-SCOPE as well.
#[test]
fn a_store_landing_after_the_read_is_filed_under_wait_scope() {
    let mut found = findings("wait-st-early", Some);
    found.extend(findings("wait-ld-early", Some));
    let unwritten: Vec<_> = found
        .iter()
        .filter(|(_, d)| d.detail.contains("no write is ordered before"))
        .collect();
    assert!(
        !unwritten.is_empty(),
        "no read of never-written cells accounted for among {} findings",
        found.len()
    );
    for (seed, d) in unwritten {
        assert_eq!(
            d.rules.first(),
            Some(&RuleId::WaitScope),
            "seed {seed}: {}",
            d.detail
        );
        assert!(
            d.forms.iter().any(|f| f.starts_with("tcgen05.wait::st")),
            "seed {seed}: {:?}",
            d.forms
        );
        assert!(
            d.detail.contains("observed by tcgen05.ld"),
            "seed {seed}: {}",
            d.detail
        );
        if d.detail
            .contains("no word of the read is as first predicted")
        {
            assert!(
                d.detail.contains("a wait::ld returning before"),
                "seed {seed}: {}",
                d.detail
            );
        }
    }
}

/// A plain value slip (one word of an ld's record off by one bit, on the correct simulator's
/// run) is not taken for a read of never-written cells, nor for any other behaviour's
/// ordering: it stays under the record's own rules (LD-ASYNC first), or, where an edit of an
/// MMA predicts the slipped word, under that MMA's rule.
#[test]
fn a_value_slip_is_not_filed_under_an_ordering_rule() {
    let gen_cfg = tcgen05_generators::Config::default();
    let Some(Ok(cfg)) = SimConfig::parse("sim") else {
        panic!("sim is a simulator name")
    };
    let mma_rules = [
        RuleId::MmaEnableD,
        RuleId::MmaScaleDSem,
        RuleId::MmaDolSem,
        RuleId::McmPipeMmaMma,
    ];
    let mut slipped = 0;
    for seed in 0..PROGRAMS {
        let p = tcgen05_generators::valid_program(&gen_cfg, seed);
        let e = tcgen05_oracle::expect(&p);
        let layout = tcgen05_ir::observe::Layout::of(&p);
        let tcgen05_drivers::outcome::Outcome::Completed { mut words } = simulate(&p, cfg, seed)
        else {
            continue;
        };
        // The first ld record (lane 0 of a warp's own site) predicted exactly, in an
        // expectation that reads MMA results or st values: slip its word 0 by one bit.
        let Some((item, site)) = e.obs.iter().find_map(|item| {
            let tcgen05_oracle::SiteRef::Warp(i) = item.key.site else {
                return None;
            };
            let site = *layout.warp_sites[usize::from(item.key.warp)].get(i as usize)?;
            (site.kind == tcgen05_ir::observe::SiteKind::Ld
                && item.lane(0).is_some_and(|l| l.exact().is_some()))
            .then_some((item, site))
        }) else {
            continue;
        };
        let at = layout.warp_block(item.key.cta, usize::from(item.key.warp))
            + site.data_word(0, 0) as usize;
        words[at] ^= 1;
        let outcome = tcgen05_drivers::outcome::Outcome::Completed { words };
        let Verdict::Discrepancy(d) = compare(&p, &e, &outcome) else {
            panic!("seed {seed}: a slipped word agrees");
        };
        slipped += 1;
        let rule = d.rules.first().copied();
        assert!(
            rule == Some(RuleId::LdAsync) || rule.is_some_and(|r| mma_rules.contains(&r)),
            "seed {seed}: {:?}: {}",
            d.rules,
            d.detail
        );
        assert!(
            !d.detail.contains("no write is ordered before"),
            "seed {seed}: {}",
            d.detail
        );
    }
    assert!(slipped > PROGRAMS / 2, "only {slipped} programs slipped");
}

/// Values the program wrote, landing in the wrong cells (an st whose register map slips, so
/// an ld reads each lane's words in another lane), are not taken for a read of cells no write
/// reached: every ld record predicted exactly whose lanes are rotated by one is filed under
/// the record's own rule (LD-ASYNC) or an MMA's, never under an ordering rule.
#[test]
fn written_values_in_the_wrong_cells_are_not_filed_as_an_early_read() {
    let gen_cfg = tcgen05_generators::Config::default();
    let Some(Ok(cfg)) = SimConfig::parse("sim") else {
        panic!("sim is a simulator name")
    };
    let ordering = [
        RuleId::WaitScope,
        RuleId::CommitTrack,
        RuleId::McmXthread,
        RuleId::FenceBefore,
        RuleId::FenceAfter,
    ];
    let mut rotated = 0;
    for seed in 0..PROGRAMS {
        let p = tcgen05_generators::valid_program(&gen_cfg, seed);
        let e = tcgen05_oracle::expect(&p);
        let layout = tcgen05_ir::observe::Layout::of(&p);
        let tcgen05_drivers::outcome::Outcome::Completed { mut words } = simulate(&p, cfg, seed)
        else {
            continue;
        };
        for item in &e.obs {
            let tcgen05_oracle::SiteRef::Warp(i) = item.key.site else {
                continue;
            };
            let Some(site) = layout.warp_sites[usize::from(item.key.warp)].get(i as usize) else {
                continue;
            };
            if site.kind != tcgen05_ir::observe::SiteKind::Ld
                || item.lanes != u32::MAX
                || !item.iter().all(|(_, l)| l.exact().is_some())
            {
                continue;
            }
            // Lane l's words hold lane l + 1's.
            let block = layout.warp_block(item.key.cta, usize::from(item.key.warp));
            let n = site.words as usize;
            let at = |l: usize, w: usize| block + site.data_word(l as u32, w as u32) as usize;
            let old: Vec<u32> = (0..32 * n).map(|k| words[at(k / n, k % n)]).collect();
            for l in 0..32 {
                for w in 0..n {
                    words[at(l, w)] = old[((l + 1) % 32) * n + w];
                }
            }
            break;
        }
        let outcome = tcgen05_drivers::outcome::Outcome::Completed { words };
        let Verdict::Discrepancy(d) = compare(&p, &e, &outcome) else {
            continue;
        };
        rotated += 1;
        assert!(
            !d.rules.first().is_some_and(|r| ordering.contains(r)),
            "seed {seed}: {:?}: {}",
            d.rules,
            d.detail
        );
    }
    assert!(rotated > PROGRAMS / 4, "only {rotated} programs rotated");
}

/// Every finding of an injected `.num` truncation is filed under LDST-NUM (§9.7.16.8.3),
/// the issue's own example: also where a later register happens to be predicted as the
/// value the undelivered registers hold (a 0 among an MMA's results) and where the first
/// repetition reads cells the oracle leaves open (OQ-9); none stays under LD-ASYNC.
#[test]
fn every_truncated_ld_is_filed_under_ldst_num() {
    let found = findings("ld-num-truncated", Some);
    assert!(
        found.len() > PROGRAMS as usize / 2,
        "{} findings",
        found.len()
    );
    let other: Vec<_> = found
        .iter()
        .filter(|(_, d)| d.rules.first() != Some(&RuleId::LdstNum))
        .map(|(seed, d)| format!("seed {seed}: {:?}: {}", d.rules, d.detail))
        .collect();
    assert!(other.is_empty(), "{}", other.join("\n"));
}
