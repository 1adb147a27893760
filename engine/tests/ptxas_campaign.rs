//! The ptxas campaign: a short smoke run (always), and the full run (ignored; run it with
//! `TCGEN05_CAMPAIGN_SECS=600 cargo test -p tcgen05-engine --release --test ptxas_campaign
//! -- --ignored --nocapture`), which writes `target/ptxas-campaign/REPORT.md` and one PTX file
//! per finding.

use std::time::Duration;
use tcgen05_drivers::ptxas;
use tcgen05_drivers::ptxas::differential::FindingKind;
use tcgen05_engine::campaign::ptxas as campaign;

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn a_short_campaign_reports_reproducible_minimized_findings() {
    let installs = ptxas::installed();
    assert!(
        !installs.is_empty(),
        "no ptxas found, though the build found one: run scripts/setup-ptxas, or `touch \
         drivers/build.rs` so the tests that need ptxas are ignored"
    );
    let cfg = campaign::CampaignConfig {
        duration: Duration::from_secs(4),
        round_cases: 32,
        reduce_tries: 20,
        sass_every: 4,
        ..Default::default()
    };
    let rep = campaign::run(&installs, &cfg, &mut campaign::default_source, &mut |_| {});
    assert!(rep.cases >= 32);
    for v in &rep.versions {
        assert_eq!(v.cases, rep.cases, "{}", v.name);
        assert!(v.processes > 0 && v.rate() > 0.0, "{}", v.name);
    }
    // Every finding's signature holds for its minimized case, which is no bigger.
    for f in rep
        .findings
        .iter()
        .filter(|f| f.signature.kind != FindingKind::SassMismatch)
    {
        let again = campaign::judge_program(&installs, &f.minimized.program);
        assert_eq!(again.signature.as_ref(), Some(&f.signature));
        assert!(f.minimized.program.size() <= f.original.program.size());
    }
    let md = rep.to_markdown();
    assert!(md.contains("| version | cases |"));
}

/// The verdict counts of one round of 256 cases of the default seed, printed (docs/ptxas.md,
/// "Verdicts of one round"): `cargo test -p tcgen05-engine --test ptxas_campaign one_round -- --ignored
/// --nocapture`.
#[test]
#[ignore = "a measurement: about a minute of ptxas time, prints the verdict counts"]
fn one_round_verdict_counts() {
    let installs = ptxas::installed();
    assert!(
        !installs.is_empty(),
        "no ptxas installed (run scripts/setup-ptxas)"
    );
    let cfg = campaign::CampaignConfig {
        duration: Duration::from_millis(1),
        round_cases: 256,
        reduce_tries: 16,
        sass_every: 0,
        ..Default::default()
    };
    let rep = campaign::run(&installs, &cfg, &mut campaign::default_source, &mut |_| {});
    assert_eq!(rep.cases, 256, "one round");
    use tcgen05_drivers::diff::DiscrepancyKind;
    for v in &rep.versions {
        let judged: usize = rep
            .judgements
            .iter()
            .filter(|((name, _), _)| *name == v.name)
            .map(|(_, n)| n)
            .sum();
        assert_eq!(judged, rep.cases, "{}: every case judged once", v.name);
    }
    for ((version, kind), n) in &rep.judgements {
        println!("{version} {kind} {n}");
    }
    // The one judge calls accepting an ill-formed case a discrepancy only for a rule whose
    // consequence is rejection (reference §6): every ill-formed-accepted finding names one.
    for f in &rep.findings {
        if f.signature.kind == FindingKind::Spec(DiscrepancyKind::IllFormedAccepted) {
            assert!(
                f.signature.rules.iter().any(|r| {
                    let id: tcgen05_ir::RuleId = r.parse().expect("a rule id");
                    tcgen05_oracle::catalogue::row(id)
                        .consequence
                        .contains("reject")
                }),
                "{}",
                f.signature
            );
        }
    }
    println!("versions disagree on {} cases", rep.version_disagreements);
    for f in &rep.findings {
        println!("finding {} ({} cases)", f.signature, f.hits);
    }
}

#[test]
#[ignore = "the full campaign: minutes of ptxas time"]
fn full_campaign() {
    let installs = ptxas::installed();
    assert!(
        !installs.is_empty(),
        "no ptxas installed (run scripts/setup-ptxas)"
    );
    let secs = std::env::var("TCGEN05_CAMPAIGN_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let cfg = campaign::CampaignConfig {
        duration: Duration::from_secs(secs),
        ..Default::default()
    };
    let rep = campaign::run(&installs, &cfg, &mut campaign::default_source, &mut |r| {
        eprintln!(
            "{:>5.0} s: {} cases, {} findings",
            r.elapsed.as_secs_f64(),
            r.cases,
            r.findings.len()
        );
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ptxas-campaign");
    std::fs::create_dir_all(&dir).unwrap();
    for (n, f) in rep.findings.iter().enumerate() {
        std::fs::write(
            dir.join(format!("finding-{:02}.ptx", n + 1)),
            tcgen05_ir::ptx::emit(&f.minimized.program),
        )
        .unwrap();
    }
    let md = rep.to_markdown();
    std::fs::write(dir.join("REPORT.md"), &md).unwrap();
    println!("{md}");
}

/// A dealloc of 96 columns breaks ALLOC-NCOLS-POW2 (§9.7.16.7.1), whose consequence the ISA
/// leaves unstated: compiled by every installed ptxas, no version's verdict is a discrepancy
/// with the spec (an accepting version is skipped as unspecified), and where the versions
/// disagree the case is a version disagreement naming the rule and the accepting versions.
#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn a_rule_of_unstated_consequence_makes_a_version_disagreement_not_a_discrepancy() {
    use tcgen05_drivers::diff::Verdict;
    use tcgen05_drivers::ptxas::differential::Stance;
    use tcgen05_ir::{CtaGroup, samples};

    let installs = ptxas::installed();
    assert!(!installs.is_empty(), "no ptxas found (scripts/setup-ptxas)");
    // The dealloc alone, as the campaign minimized it: ptxas 12.8 to 13.0 accept it, 13.5
    // rejects it ("value must be power of 2").
    let mut p = samples::single_warp_roundtrip();
    p.warps[0] = vec![samples::dealloc(CtaGroup::One, 0, 96)];
    let r = campaign::judge_program(&installs, &p);
    for (i, ruling) in installs.iter().zip(&r.rulings) {
        assert!(
            !matches!(ruling.verdict, Verdict::Discrepancy(_)),
            "{}: {:?}",
            i.name(),
            ruling.verdict
        );
    }
    let stances: Vec<Stance> = r.verdicts.iter().map(ptxas::differential::stance).collect();
    eprintln!("stances {stances:?}, accepted by {:?}", r.accepted_by);
    // With 12.8 and 13.5 installed (scripts/setup-ptxas), the versions disagree.
    if stances.contains(&Stance::Accepts) && stances.contains(&Stance::Rejects) {
        let sig = r.signature.expect("the versions disagree");
        assert_eq!(sig.kind, FindingKind::VersionDisagreement);
        assert!(sig.rules.iter().any(|r| r == "ALLOC-NCOLS-POW2"), "{sig}");
        assert_eq!(sig.accepted_by, r.accepted_by);
    } else {
        assert!(r.signature.is_none(), "{:?}", r.signature);
    }
}
