//! The ptxas campaign: a short smoke run (always), and the full run (ignored; run it with
//! `TCGEN05_CAMPAIGN_SECS=600 cargo test -p tcgen05-engine --release --test ptxas_campaign
//! -- --ignored --nocapture`), which writes `target/ptxas-campaign/REPORT.md` and one PTX file
//! per finding.

use std::time::Duration;
use tcgen05_drivers::ptxas;
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
        .filter(|f| f.signature.kind != "sass-mismatch")
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

/// The version matrix's verdict table (`ptxas::differential::judge`, against the oracle's static
/// check) beside the one judge's (`tcgen05_engine::judge::rule`, the table of `diff`) on one
/// round of the matrix's cases, every installed version: the judge is never stricter (a
/// discrepancy of the judge is one of the matrix), and the cross table of the two shows where
/// the matrix is (accepting a rule whose consequence is not "reject"). `cargo test -p
/// tcgen05-engine --test ptxas_campaign the_judge -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: about a minute of ptxas time, prints the cross table"]
fn the_judge_is_never_stricter_than_the_version_matrix() {
    use std::collections::BTreeMap;
    use tcgen05_drivers::diff::Verdict;
    use tcgen05_drivers::ptxas::differential;
    use tcgen05_drivers::target::Target;
    use tcgen05_generators::field_mutate::{Rng, mutated_case};
    use tcgen05_ir::observe::Layout;

    let installs = ptxas::installed();
    assert!(
        !installs.is_empty(),
        "no ptxas installed (run scripts/setup-ptxas)"
    );
    let mut rng = Rng::new(campaign::CampaignConfig::default().seed);
    let cases: Vec<_> = (0..256).map(|_| mutated_case(&mut rng)).collect();
    let modules: Vec<String> = cases
        .iter()
        .map(|c| tcgen05_ir::ptx::emit(&c.program))
        .collect();
    let opts = tcgen05_oracle::Options::default();
    let expected: Vec<_> = cases
        .iter()
        .map(|c| tcgen05_oracle::expect_with(&c.program, &opts))
        .collect();
    let mut table: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for install in &installs {
        let target = ptxas::PtxasTarget::new(install.clone());
        let (verdicts, _) = target.module_verdicts(&modules);
        for ((case, exp), v) in cases.iter().zip(&expected).zip(&verdicts) {
            let matrix = differential::judge(v, &tcgen05_oracle::check(&case.program));
            let ruling = tcgen05_engine::judge::rule(
                &case.program,
                &Layout::of(&case.program),
                exp,
                &ptxas::outcome_of(v),
                &target.name(),
                target.wait_bound(),
            );
            let judge = match &ruling.verdict {
                Verdict::Agree => "agree".to_string(),
                Verdict::Skip(_) => "skip".to_string(),
                Verdict::Discrepancy(d) => d.kind.as_str().to_string(),
            };
            assert!(
                !matches!(ruling.verdict, Verdict::Discrepancy(_)) || matrix.is_discrepancy(),
                "{}: the judge finds {judge}, the matrix {matrix:?}, on\n{}",
                target.name(),
                tcgen05_ir::ptx::emit(&case.program)
            );
            *table
                .entry((target.name(), matrix.kind().to_string(), judge))
                .or_default() += 1;
        }
    }
    println!("version | matrix | judge | cases");
    for ((version, matrix, judge), n) in &table {
        println!("{version} | {matrix} | {judge} | {n}");
    }
}
