//! Judging one litmus file: lift, ask the oracle, read off the verdict, each observed
//! location's allowed values and each condition; optionally run targets.

use super::format::{Litmus, eval};
use crate::cmd::bad_input;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use tcgen05_drivers::diff::Verdict;
use tcgen05_drivers::target;
use tcgen05_engine::judge;
use tcgen05_ir::observe::Layout;
use tcgen05_ir::ptx::model::{LiftFailure, Lifted, lift_source};
use tcgen05_ir::{Case, Intent, Provenance, RuleId};
use tcgen05_oracle::{Expected, ObsExpect, ObsSite, Options, RunVerdict, SiteRef, WordExpect};

/// One observed location's allowed values.
#[derive(Debug, Clone, Serialize)]
pub struct Location {
    /// Its name in the header.
    pub name: String,
    /// `exact`, `one-of` or `unspecified`.
    pub kind: &'static str,
    /// The allowed values (one for `exact`; empty for `unspecified`).
    pub values: Vec<u64>,
    /// Why it is unspecified, or where a value comes from when it is not a number of the PTX.
    pub reason: String,
}

/// A condition and whether it can hold.
#[derive(Debug, Clone, Serialize)]
pub struct CondResult {
    /// `exists` or `forall`.
    pub quantifier: &'static str,
    /// As written.
    pub condition: String,
    /// `exists`: some allowed outcome satisfies it; `forall`: every allowed outcome does.
    /// `null`: it depends on an unspecified location.
    pub holds: Option<bool>,
}

/// What one target did.
#[derive(Debug, Clone, Serialize)]
pub struct TargetResult {
    /// Target name.
    pub target: String,
    /// Its outcome, summarized.
    pub outcome: String,
    /// `allowed`, `not-allowed` or `skipped`.
    pub judgement: &'static str,
    /// The discrepancy or skip reason.
    pub detail: String,
}

/// The report of one file.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The file.
    pub file: String,
    /// `litmus NAME`.
    pub name: Option<String>,
    /// The edition judged.
    pub edition: String,
    /// `completes`, `may-block`, `must-deadlock`, `undefined`, `ill-formed` (or `not-judged`
    /// past the oracle's work bound).
    pub verdict: &'static str,
    /// The rules that decided it.
    pub rules: Vec<String>,
    /// Where a run may block or must deadlock, or why it was not judged.
    pub detail: Vec<String>,
    /// The observed locations.
    pub locations: Vec<Location>,
    /// The conditions.
    pub conditions: Vec<CondResult>,
    /// The targets.
    pub targets: Vec<TargetResult>,
    /// `//@ expect`: met or not (absent without one).
    pub expectation: Option<String>,
    #[serde(skip)]
    failed: bool,
}

impl Report {
    /// An expectation not met, or a target outcome the spec does not allow.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The text form.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}{} ({} edition)",
            self.file,
            self.name
                .as_ref()
                .map(|n| format!(": litmus {n}"))
                .unwrap_or_default(),
            self.edition
        );
        let _ = writeln!(
            s,
            "  verdict: {}{}",
            self.verdict,
            if self.rules.is_empty() {
                String::new()
            } else {
                format!(" [{}]", self.rules.join(", "))
            }
        );
        for d in &self.detail {
            let _ = writeln!(s, "    {d}");
        }
        for l in &self.locations {
            let vals = l
                .values
                .iter()
                .map(|v| format!("{v:#x}"))
                .collect::<Vec<_>>()
                .join(", ");
            let what = match l.kind {
                "exact" if !l.values.is_empty() => format!("exact {vals}"),
                "one-of" => format!("one of {{{vals}}}"),
                k => k.to_string(),
            };
            let why = if l.reason.is_empty() {
                String::new()
            } else {
                format!(" ({})", l.reason)
            };
            let _ = writeln!(s, "  {}: {what}{why}", l.name);
        }
        for c in &self.conditions {
            let h = match (c.quantifier, c.holds) {
                ("exists", Some(true)) => "can hold",
                ("exists", Some(false)) => "cannot hold",
                ("forall", Some(true)) => "holds in every allowed outcome",
                ("forall", Some(false)) => "does not hold in every allowed outcome",
                _ => "unknown (it depends on an unspecified location)",
            };
            let _ = writeln!(s, "  {} {}: {h}", c.quantifier, c.condition);
        }
        for t in &self.targets {
            let _ = writeln!(
                s,
                "  target {}: {}: {}{}",
                t.target,
                t.outcome,
                t.judgement,
                if t.detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", t.detail)
                }
            );
        }
        if let Some(e) = &self.expectation {
            let _ = writeln!(s, "  expectation: {e}");
        }
        s
    }
}

fn names(r: &[RuleId]) -> Vec<String> {
    r.iter().map(|r| r.as_str().to_string()).collect()
}

fn verdict(e: &Expected) -> (&'static str, Vec<String>, Vec<String>) {
    if !e.violations.is_empty() {
        let mut rules: Vec<String> = e
            .violations
            .iter()
            .map(|v| v.rule.as_str().to_string())
            .collect();
        rules.dedup();
        let detail = e.violations.iter().map(ToString::to_string).collect();
        return ("ill-formed", rules, detail);
    }
    let sites = |w: &[tcgen05_oracle::BlockSite]| {
        w.iter()
            .map(|b| {
                format!(
                    "cta {} warp {} at {}: {}",
                    b.cta, b.warp, b.location, b.reason
                )
            })
            .collect()
    };
    match &e.run.verdict {
        RunVerdict::Completes => ("completes", names(&e.run.rules), vec![]),
        RunVerdict::MayBlock { where_ } => ("may-block", names(&e.run.rules), sites(where_)),
        RunVerdict::MustDeadlock { where_ } => {
            ("must-deadlock", names(&e.run.rules), sites(where_))
        }
        RunVerdict::Undefined(r) => ("undefined", names(r), vec![]),
        RunVerdict::NotJudged(why) => ("not-judged", vec![], vec![why.clone()]),
    }
}

/// Model value → what the PTX wrote: (line of the st, register, lane, the PTX value if known).
type StMap = HashMap<(u32, u32), (u32, usize, usize, Option<u32>)>;

fn st_map(l: &Lifted) -> StMap {
    let mut m = HashMap::new();
    for (cta, _warp, st) in &l.sts {
        for (i, vals) in st.values.iter().enumerate() {
            for lane in 0..32 {
                let v = tcgen05_ir::values::st_value(st.seed, lane as u32, i as u32);
                m.insert((*cta, v), (st.line, i, lane, vals.map(|a| a[lane])));
            }
        }
    }
    m
}

fn location(
    file: &str,
    lit_obs: &super::format::Observe,
    l: &Lifted,
    e: &Expected,
    sts: &StMap,
) -> anyhow::Result<Location> {
    let site = l
        .lds
        .iter()
        .rev()
        .find(|s| {
            s.cta == lit_obs.cta && s.warp == lit_obs.warp && s.info.regs.contains(&lit_obs.reg)
        })
        .ok_or_else(|| {
            bad_input(format!(
                "{file}:{}: observe {}: {} is not written by a tcgen05.ld of warp {} of CTA {}",
                lit_obs.line, lit_obs.name, lit_obs.reg, lit_obs.warp, lit_obs.cta
            ))
        })?;
    let word = site
        .info
        .regs
        .iter()
        .position(|r| *r == lit_obs.reg)
        .expect("found");
    let unspecified = |reason: String| Location {
        name: lit_obs.name.clone(),
        kind: "unspecified",
        values: vec![],
        reason,
    };
    if let RunVerdict::Undefined(r) = &e.run.verdict {
        return Ok(unspecified(format!(
            "undefined behaviour: {}",
            names(r).join(", ")
        )));
    }
    if !e.violations.is_empty() {
        return Ok(unspecified("the program is ill-formed".into()));
    }
    let key = ObsSite {
        cta: site.cta,
        warp: site.warp,
        site: SiteRef::Warp(site.site),
    };
    let Some(item) = e.obs.iter().find(|i| i.key == key) else {
        return Ok(unspecified(
            "the oracle has no expectation for this ld (not reached on every schedule)".into(),
        ));
    };
    let Some(lane) = item.lane(lit_obs.lane) else {
        return Ok(unspecified(
            "the oracle has no expectation for this lane".into(),
        ));
    };
    let rules = names(&item.rules).join(", ");
    let (kind, vals): (&'static str, Vec<u32>) = match lane.to_owned() {
        ObsExpect::Exact(w) => ("exact", vec![w[word]]),
        ObsExpect::OneOf(v) => {
            let mut s: Vec<u32> = v.iter().map(|w| w[word]).collect();
            s.sort_unstable();
            s.dedup();
            (if s.len() == 1 { "exact" } else { "one-of" }, s)
        }
        ObsExpect::PerWord(w) => match &w[word] {
            WordExpect::Exact(v) => ("exact", vec![*v]),
            WordExpect::OneOf(v) => ("one-of", v.clone()),
            WordExpect::Masked { value, mask } => {
                return Ok(unspecified(format!(
                    "the bits {mask:#010x} hold {value:#010x}, the others are not stated ({rules})"
                )));
            }
            WordExpect::Unspecified => return Ok(unspecified(format!("unspecified ({rules})"))),
        },
        ObsExpect::Absent => return Ok(unspecified("this lane does not execute the ld".into())),
        ObsExpect::Unspecified(r) if r.is_empty() => {
            // No race: an open question leaves the cells so, and the notes say which.
            let open: Vec<&str> = e
                .notes
                .iter()
                .map(String::as_str)
                .filter(|n| n.starts_with("OQ-"))
                .collect();
            return Ok(unspecified(if open.is_empty() {
                "unspecified: the oracle does not compute these cells".to_string()
            } else {
                format!("unspecified: {}", open.join("; "))
            }));
        }
        ObsExpect::Unspecified(r) => {
            return Ok(unspecified(format!(
                "unspecified: {}",
                names(&r).join(", ")
            )));
        }
        ObsExpect::Check(_) => return Ok(unspecified("an alloc address (opaque, OQ-1)".into())),
    };
    if !l.untracked_data.is_empty() {
        return Ok(unspecified(format!(
            "mma/cp operands are written at line(s) {:?} by stores the model does not track",
            l.untracked_data
        )));
    }
    // Translate the model's st values back to the values the PTX registers held.
    let mut values = Vec::new();
    let mut reasons = Vec::new();
    for v in vals {
        match sts.get(&(site.cta, v)) {
            Some((_, _, _, Some(real))) => values.push(u64::from(*real)),
            Some((line, reg, lane, None)) => {
                reasons.push(format!("the value register {reg} of the tcgen05.st at line {line} held in lane {lane}, not known to the lifter"));
            }
            None => values.push(u64::from(v)),
        }
    }
    if !reasons.is_empty() {
        return Ok(Location {
            name: lit_obs.name.clone(),
            kind,
            values,
            reason: reasons.join("; "),
        });
    }
    values.sort_unstable();
    values.dedup();
    let kind = if values.len() == 1 { "exact" } else { kind };
    Ok(Location {
        name: lit_obs.name.clone(),
        kind,
        values,
        reason: if kind == "one-of" {
            format!("a race ({rules})")
        } else {
            String::new()
        },
    })
}

/// Judges one litmus file; `Err` is a bad input naming the file and line (exit 2).
pub fn judge(
    file: &str,
    src: &str,
    lit: &Litmus,
    opts: &Options,
    targets: Option<&str>,
) -> anyhow::Result<Report> {
    let lifted = lift_source(src, file, None, lit.shape).map_err(|e| match e {
        LiftFailure::Parse(p) => bad_input(p.to_string()),
        LiftFailure::Unliftable(u) => bad_input(format!(
            "{file}:{}:{}: unsupported construct `{}`: {}",
            u.line, u.col, u.instr, u.why
        )),
    })?;
    let e = tcgen05_oracle::lifted::expect_lifted(&lifted, opts);
    let (v, rules, detail) = verdict(&e);
    let sts = st_map(&lifted);
    let mut locations = Vec::new();
    for o in &lit.observe {
        locations.push(location(file, o, &lifted, &e, &sts)?);
    }
    let sets: Vec<Option<Vec<u64>>> = locations
        .iter()
        .map(|l| {
            (l.kind != "unspecified" && l.reason.is_empty() || l.kind == "one-of")
                .then(|| l.values.clone())
        })
        .collect();
    let conditions = lit
        .conds
        .iter()
        .map(|c| CondResult {
            quantifier: if c.forall { "forall" } else { "exists" },
            condition: c.text.clone(),
            holds: eval(c, &sets),
        })
        .collect();
    let mut failed = false;
    let expectation = lit.expect.as_ref().map(|x| {
        let missing: Vec<&String> = x.rules.iter().filter(|r| !rules.contains(r)).collect();
        let specified: Vec<&String> = x
            .unspecified
            .iter()
            .filter(|n| {
                locations
                    .iter()
                    .any(|l| l.name == **n && l.kind != "unspecified")
            })
            .collect();
        let ok = x.verdict == v && missing.is_empty() && specified.is_empty();
        failed |= !ok;
        if ok {
            format!("met (verdict={})", x.verdict)
        } else {
            format!(
                "NOT met: expected verdict={} rules={:?}, got {v} {rules:?}",
                x.verdict, x.rules
            )
        }
    });
    let mut target_results = Vec::new();
    if let Some(flag) = targets {
        let case = Case {
            program: lifted.program,
            intent: Intent::Unknown,
            provenance: Provenance {
                seed: None,
                origin: format!("litmus {file}"),
                family: None,
            },
        };
        for n in target::from_env(Some(flag)) {
            let mut t =
                target::resolve_in(&n, opts.edition).map_err(|e| bad_input(e.to_string()))?;
            let outcome = t.run(&case);
            let layout = Layout::of(&case.program);
            let ruling = judge::rule(
                &case.program,
                &layout,
                &e,
                &outcome,
                &t.name(),
                t.wait_bound(),
            );
            let (judgement, detail) = match ruling.verdict {
                Verdict::Agree => ("allowed", String::new()),
                Verdict::Skip(r) => ("skipped", format!("{r:?}")),
                Verdict::Discrepancy(d) => {
                    failed = true;
                    ("not-allowed", format!("{d:?}"))
                }
            };
            target_results.push(TargetResult {
                target: t.name().to_string(),
                outcome: outcome.summary(),
                judgement,
                detail,
            });
        }
    }
    Ok(Report {
        file: file.to_string(),
        name: lit.name.clone(),
        edition: opts.edition.to_string(),
        verdict: v,
        rules,
        detail,
        locations,
        conditions,
        targets: target_results,
        expectation,
        failed,
    })
}
