use super::*;
use tcgen05_ir::samples::single_warp_roundtrip;

fn expected(verdict: RunVerdict) -> Expected {
    Expected::with_verdict(verdict)
}

/// A finding filed under the observing ld's rule is sharpened by the same discrepancy
/// under the rule of the behaviour that differed, never by another kind, target, or a finding that already names one.
#[test]
fn only_an_observers_rule_is_sharpened() {
    let sig = |kind, rule, target: &str, forms: &[&str]| Signature {
        kind,
        rule,
        target: target.into(),
        forms: forms.iter().map(|f| f.to_string()).collect(),
    };
    let v = DiscrepancyKind::ValueOutsideAllowed;
    let ld = "tcgen05.ld.sync.aligned.32x32b.x1.b32";
    let mma = "tcgen05.mma.cta_group::1.kind::f16";
    let orig = sig(v, Some(RuleId::LdAsync), "sim", &[ld]);
    let sharp = sig(v, Some(RuleId::MmaEnableD), "sim", &[ld, mma]);
    assert!(sharp.sharpens(&orig));
    assert!(!orig.sharpens(&sharp));
    assert!(!orig.sharpens(&orig));
    assert!(!sig(v, Some(RuleId::MmaEnableD), "sim:rr", &[ld, mma]).sharpens(&orig));
    assert!(!sig(v, Some(RuleId::MmaEnableD), "sim", &[mma]).sharpens(&orig));
    let other = sig(v, Some(RuleId::MmaDolSem), "sim", &[ld, mma]);
    assert!(!other.sharpens(&sharp));
}

#[test]
fn a_program_the_oracle_does_not_judge_is_skipped_whatever_the_outcome() {
    let p = single_warp_roundtrip();
    let e = expected(RunVerdict::NotJudged("past the work bound".into()));
    let words = vec![0; Layout::of(&p).total_words()];
    for o in [
        Outcome::Completed { words },
        Outcome::Trapped {
            kind: crate::outcome::TrapKind::IllegalInstruction,
            words: vec![],
        },
    ] {
        match compare(&p, &e, &o) {
            Verdict::Skip(SkipReason::Incomparable(why)) => {
                assert!(why.contains("does not judge"), "{why}")
            }
            v => panic!("{o:?}: expected a skip, got {v:?}"),
        }
    }
}

#[test]
fn exact_site_records_are_compared_lane_by_lane() {
    let p = single_warp_roundtrip();
    let layout = Layout::of(&p);
    let real = tcgen05_oracle::expect(&p);
    let item = real
        .obs
        .iter()
        .find(|o| matches!(o.expect, SiteExpect::Exact { .. }))
        .expect("the roundtrip's ld is predicted exactly");
    // Build the buffer the spec allows: every expected lane records its exact words.
    let mut words = vec![0u32; layout.total_words()];
    let site = site_for(&layout, &item.key).expect("site");
    let base = layout.warp_block(item.key.cta, usize::from(item.key.warp)) + site.offset as usize;
    let n = site.words as usize;
    for (lane, e) in item.iter() {
        let l = usize::from(lane);
        words[base + l] = 1;
        words[base + 32 + l * n..base + 32 + (l + 1) * n]
            .copy_from_slice(e.exact().expect("exact"));
    }
    // A whole-warp ld: every lane is expected (the whole-block comparison's case).
    assert_eq!(item.lanes, u32::MAX);
    let mut only = real.clone();
    only.obs = vec![item.clone()];
    assert_eq!(
        compare(
            &p,
            &only,
            &Outcome::Completed {
                words: words.clone()
            }
        ),
        Verdict::Agree
    );
    let lane_named = |words: Vec<u32>| match compare(&p, &only, &Outcome::Completed { words }) {
        Verdict::Discrepancy(d) => {
            assert_eq!(d.kind, DiscrepancyKind::ValueOutsideAllowed);
            d.key.map(|k| k.lane)
        }
        v => panic!("expected a discrepancy, got {v:?}"),
    };
    // Lane 7 recorded nothing: a discrepancy naming lane 7.
    let mut missing = words.clone();
    missing[base + 7] = 0;
    assert_eq!(lane_named(missing), Some(7));
    // One word of lane 5 off (and of lane 9): the first such lane, 5, is named.
    words[base + 32 + 5 * n] ^= 1;
    words[base + 32 + 9 * n] ^= 1;
    assert_eq!(lane_named(words), Some(5));
}

/// End to end: the simulator with an injected MMA bug (`sim+<fault>`) on generated
/// programs gives value discrepancies observed by an ld; those the oracle can account for
/// (the program with that MMA behaving as the fault does has a specified expectation that
/// allows the record) are filed under the rule of the MMA behaviour the fault breaks, with
/// the mma's form among the forms and the observing ld named in the detail. The others
/// (e.g. enable-input-d forced on over cells nothing wrote: unspecified for the oracle)
/// stay under the ld's rule; none is filed under any other rule.
#[test]
fn injected_mma_bugs_are_filed_under_the_mma_rule_they_break() {
    use crate::sim::{SimConfig, simulate};
    let gen_cfg = tcgen05_generators::Config::default();
    // `must_file`: the generated programs give at least one discrepancy the oracle can
    // account for. Not so for enable-input-d: in these programs every MMA with
    // enable-input-d false writes cells nothing wrote before, so forcing it on reads
    // uninitialized TMEM, which the oracle leaves unspecified.
    for (fault, rule, must_file) in [
        ("mma-scale-d-ignored", RuleId::MmaScaleDSem, true),
        ("mma-dol-inverted", RuleId::MmaDolSem, true),
        ("mma-ignores-enable-d", RuleId::MmaEnableD, false),
    ] {
        let Some(Ok(cfg)) = SimConfig::parse(&format!("sim+{fault}")) else {
            panic!("sim+{fault} is a simulator name")
        };
        let mut filed = Vec::new();
        for seed in 0..600u64 {
            let p = tcgen05_generators::valid_program(&gen_cfg, seed);
            if !p.ops().iter().any(|o| matches!(o, Op::Mma(_))) {
                continue;
            }
            let e = tcgen05_oracle::expect(&p);
            if let Verdict::Discrepancy(d) = compare(&p, &e, &simulate(&p, cfg, seed))
                && d.kind == DiscrepancyKind::ValueOutsideAllowed
            {
                filed.push((seed, d));
            }
            if filed
                .iter()
                .filter(|(_, d)| d.rules.first() == Some(&rule))
                .count()
                >= 2
            {
                break;
            }
        }
        let under: Vec<_> = filed
            .iter()
            .filter(|(_, d)| d.rules.first() == Some(&rule))
            .collect();
        assert!(!filed.is_empty(), "{fault}: no discrepancy in 600 programs");
        assert!(
            !under.is_empty() || !must_file,
            "{fault}: none of {} discrepancies filed under {rule}: {filed:?}",
            filed.len()
        );
        for (seed, d) in &filed {
            assert!(
                matches!(d.rules.first(), Some(r) if *r == rule || *r == RuleId::LdAsync),
                "{fault} seed {seed}: {d:?}"
            );
            assert!(d.detail.contains("observed by tcgen05.ld"), "{}", d.detail);
        }
        for (seed, d) in under {
            assert!(
                d.forms.iter().any(|f| f.starts_with("tcgen05.mma")),
                "{fault} seed {seed}: {:?}",
                d.forms
            );
        }
    }
}

/// The roundtrip sample, its layout and expectation, the expectation of its ld (`.32x32b.x2`,
/// predicted exactly) and the first observation word of that ld's site.
fn roundtrip_ld() -> (Program, Layout, Expected, ObsItem, usize) {
    let p = single_warp_roundtrip();
    let layout = Layout::of(&p);
    let real = tcgen05_oracle::expect(&p);
    let item = real
        .obs
        .iter()
        .find(|o| matches!(o.expect, SiteExpect::Exact { .. }))
        .expect("the roundtrip's ld is predicted exactly")
        .clone();
    let site = site_for(&layout, &item.key).expect("site");
    assert_eq!(site.words, 2, "an .x2 ld of .32x32b records two registers");
    let base = layout.warp_block(item.key.cta, usize::from(item.key.warp)) + site.offset as usize;
    (p, layout, real, item, base)
}

/// A value discrepancy is filed under the rule of the behaviour that differed.
/// The roundtrip's ld is `.32x32b.x2` (one register per repetition, reference §2.6): a
/// wrong second register with a right first one is the ld's `.num` (LDST-NUM); a wrong
/// first register stays under the ld's completion rule (LD-ASYNC). Both name the ld.
#[test]
fn a_wrong_later_repetition_is_filed_under_ldst_num_and_names_the_observing_ld() {
    let (p, layout, real, item, base) = roundtrip_ld();
    let mut words = vec![0u32; layout.total_words()];
    for (lane, e) in item.iter() {
        let l = usize::from(lane);
        words[base + l] = 1;
        words[base + 32 + l * 2..base + 32 + (l + 1) * 2]
            .copy_from_slice(e.exact().expect("exact"));
    }
    let mut only = real;
    only.obs = vec![item];
    let filed = |words: Vec<u32>| match compare(&p, &only, &Outcome::Completed { words }) {
        Verdict::Discrepancy(d) => d,
        v => panic!("expected a discrepancy, got {v:?}"),
    };
    let ld = "tcgen05.ld.sync.aligned.32x32b.x2.b32".to_string();
    let mut second = words.clone();
    second[base + 32 + 3 * 2 + 1] ^= 0x10;
    let d = filed(second);
    assert_eq!(d.rules.first(), Some(&RuleId::LdstNum), "{d:?}");
    assert!(d.rules.contains(&RuleId::LdAsync), "{d:?}");
    assert_eq!(d.forms, vec![ld.clone()]);
    assert!(
        d.detail.contains(&format!("observed by {ld}")),
        "{}",
        d.detail
    );
    let sig = Signature::of(&d, "sim");
    assert_eq!(sig.rule, Some(RuleId::LdstNum));
    let mut first = words;
    first[base + 32 + 3 * 2] ^= 0x10;
    let d = filed(first);
    assert_eq!(d.rules.first(), Some(&RuleId::LdAsync), "{d:?}");
    assert!(
        d.detail.contains(&format!("observed by {ld}")),
        "{}",
        d.detail
    );
}

/// A `.x2` ld with one register per repetition whose first register the expectation leaves
/// open (OQ-9) gives the `.num` diagnosis no evidence: one wrong second register is then any
/// wrong value, not a repetition left undelivered, and is not filed under LDST-NUM.
#[test]
fn one_wrong_register_after_an_open_first_one_is_not_filed_under_ldst_num() {
    use tcgen05_oracle::{ObsExpect, WordExpect};
    let (p, layout, real, mut item, base) = roundtrip_ld();
    let mut words = vec![0u32; layout.total_words()];
    let mut each = Vec::new();
    for lane in 0..32u8 {
        let second = item.lane(lane).and_then(|e| e.exact().map(|w| w[1]));
        each.push(ObsExpect::PerWord(vec![
            WordExpect::Unspecified,
            WordExpect::Exact(second.unwrap_or(0)),
        ]));
        if let Some(v) = second {
            let l = usize::from(lane);
            words[base + l] = 1;
            words[base + 32 + l * 2] = 7;
            words[base + 32 + l * 2 + 1] = v;
        }
    }
    item.expect = SiteExpect::Each(each);
    let mut only = real;
    only.obs = vec![item];
    let mut wrong = words;
    wrong[base + 32 + 3 * 2 + 1] ^= 0x10;
    match compare(&p, &only, &Outcome::Completed { words: wrong }) {
        Verdict::Discrepancy(d) => {
            assert_ne!(d.rules.first(), Some(&RuleId::LdstNum), "{d:?}");
        }
        v => panic!("expected a discrepancy, got {v:?}"),
    }
}
