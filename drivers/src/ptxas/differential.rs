//! The differential check of ptxas (issue 6, item 4): each version against
//! `tcgen05_oracle::check` (an ill-formed case accepted, a well-formed case rejected), and the
//! versions against each other (the range of versions that accept a case).
//!
//! Verdicts are three-valued (docs/architecture.md rule 3):
//! - a static violation of a rule with provenance D (derived, reference §0) never makes a
//!   discrepancy: the oracle is not sure enough;
//! - a rejection that says the ptxas does not know the module's `.version` or `.target` is a
//!   Skip (the tool is older than the case), not a disagreement with the spec;
//! - a crash or a timeout is always a discrepancy.

use super::install::PtxasInstall;
use super::verdict::CompileVerdict;
use std::collections::BTreeSet;
use tcgen05_ir::RuleId;
use tcgen05_oracle::Violation;
use tcgen05_oracle::catalogue::{self, Provenance};

/// What one version's verdict means against the oracle.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Judgement {
    /// ptxas and the oracle agree.
    Agree,
    /// Not comparable, and why.
    Skip(String),
    /// ptxas accepted a case the oracle finds statically ill-formed.
    IllFormedAccepted {
        /// The rules broken (provenance S or W only).
        rules: Vec<RuleId>,
    },
    /// ptxas rejected a case the oracle finds well-formed.
    WellFormedRejected {
        /// ptxas's first error, as it printed it.
        diagnostic: String,
        /// The opcode it points at, if it points at a tcgen05 instruction.
        opcode: Option<String>,
    },
    /// ptxas crashed (signal or internal error).
    Crashed(String),
    /// ptxas ran past its time limit.
    TimedOut,
}

impl Judgement {
    /// Whether this is a discrepancy.
    pub fn is_discrepancy(&self) -> bool {
        !matches!(self, Judgement::Agree | Judgement::Skip(_))
    }

    /// The discrepancy kind, for signatures and tables.
    pub fn kind(&self) -> &'static str {
        match self {
            Judgement::Agree => "agree",
            Judgement::Skip(_) => "skip",
            Judgement::IllFormedAccepted { .. } => "ill-formed-accepted",
            Judgement::WellFormedRejected { .. } => "well-formed-rejected",
            Judgement::Crashed(_) => "crashed",
            Judgement::TimedOut => "timed-out",
        }
    }
}

/// The oracle's static violations that may make a discrepancy: provenance S or W.
pub fn firm_violations(v: &[Violation]) -> Vec<&Violation> {
    v.iter()
        .filter(|x| catalogue::row(x.rule).provenance != Provenance::Derived)
        .collect()
}

/// Whether a rejection only says the tool does not know the module's `.version`/`.target`
/// (the tool predates the case).
pub fn is_too_old(v: &CompileVerdict) -> bool {
    v.first_error().is_some_and(|d| d.diag.is_header_level())
}

/// Judges one version's verdict against the oracle's static violations.
pub fn judge(verdict: &CompileVerdict, violations: &[Violation]) -> Judgement {
    let firm = firm_violations(violations);
    match verdict {
        CompileVerdict::Crashed { signal, message } => Judgement::Crashed(match signal {
            Some(s) => format!("signal {s}"),
            None => message
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("internal error")
                .to_string(),
        }),
        CompileVerdict::TimedOut { .. } => Judgement::TimedOut,
        v if is_too_old(v) => Judgement::Skip(format!(
            "this ptxas does not know the module header: {}",
            v.first_error()
                .map(|d| d.diag.message.clone())
                .unwrap_or_default()
        )),
        v if v.accepted() => {
            if firm.is_empty() {
                if violations.is_empty() {
                    Judgement::Agree
                } else {
                    Judgement::Skip("only derived (provenance D) rules are broken".into())
                }
            } else {
                let rules: BTreeSet<RuleId> = firm.iter().map(|v| v.rule).collect();
                Judgement::IllFormedAccepted {
                    rules: rules.into_iter().collect(),
                }
            }
        }
        v => {
            if violations.is_empty() {
                let e = v.first_error();
                Judgement::WellFormedRejected {
                    diagnostic: e
                        .map(|d| d.diag.message.clone())
                        .unwrap_or_else(|| v.summary()),
                    opcode: e
                        .and_then(|d| d.instruction.as_ref())
                        .map(|i| i.opcode.clone())
                        .filter(|o| o.starts_with("tcgen05.")),
                }
            } else {
                Judgement::Agree
            }
        }
    }
}

/// Accept / reject / other, per version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stance {
    /// Accepted (with or without warnings).
    Accepts,
    /// Rejected for the case itself.
    Rejects,
    /// Did not judge the case (too old for its header, crashed, timed out).
    NoVerdict,
}

/// The stance of a verdict.
pub fn stance(v: &CompileVerdict) -> Stance {
    if v.accepted() {
        Stance::Accepts
    } else if v.rejected() && !is_too_old(v) {
        Stance::Rejects
    } else {
        Stance::NoVerdict
    }
}

/// Runs of consecutive versions (in `installs` order) that accept: e.g. `12.8–13.0` and
/// `13.5`, written `12.8..=13.0, 13.5`. Empty when none accepts.
pub fn accepting_range(installs: &[PtxasInstall], verdicts: &[CompileVerdict]) -> String {
    range_of(installs, &verdicts.iter().map(stance).collect::<Vec<_>>())
}

/// [`accepting_range`] from stances. A version without a verdict ends a run.
pub fn range_of(installs: &[PtxasInstall], stances: &[Stance]) -> String {
    let mut runs: Vec<(String, String)> = Vec::new();
    let mut open = false;
    for (i, s) in installs.iter().zip(stances) {
        let label = i.version.label();
        if *s == Stance::Accepts {
            match (open, runs.last_mut()) {
                (true, Some(last)) => last.1 = label,
                _ => runs.push((label.clone(), label)),
            }
            open = true;
        } else {
            open = false;
        }
    }
    runs.into_iter()
        .map(|(a, b)| if a == b { a } else { format!("{a}..={b}") })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the versions that judged the case disagree (some accept, some reject).
pub fn versions_disagree(verdicts: &[CompileVerdict]) -> bool {
    let s: BTreeSet<Stance> = verdicts
        .iter()
        .map(stance)
        .filter(|s| *s != Stance::NoVerdict)
        .collect();
    s.len() > 1
}

/// The signature of a finding, for deduplication: kind, rules and the accepting version range
/// (issue 6: "deduplicated by rule and version range").
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Signature {
    /// The discrepancy kind (`ill-formed-accepted`, `well-formed-rejected`, `crashed`,
    /// `timed-out`, or `versions-disagree` when only the versions disagree).
    pub kind: String,
    /// The rules: the oracle's for `ill-formed-accepted`; for `well-formed-rejected` the
    /// opcode family ptxas pointed at (there is no rule), as `tcgen05.<family>`.
    pub rules: Vec<String>,
    /// The versions that accept, as [`accepting_range`] writes them.
    pub accepted_by: String,
    /// Each version's stance, in install order.
    pub stances: Vec<Stance>,
}

impl Signature {
    /// Whether `other` is the same finding: same kind and rules, and no version where both
    /// have a verdict and the verdicts differ (a version too old for one case's `.version`
    /// has no verdict, and does not split a finding).
    pub fn compatible(&self, other: &Signature) -> bool {
        self.kind == other.kind
            && self.rules == other.rules
            && self.stances.len() == other.stances.len()
            && self
                .stances
                .iter()
                .zip(&other.stances)
                .all(|(a, b)| *a == Stance::NoVerdict || *b == Stance::NoVerdict || a == b)
    }

    /// Fills this signature's versions without a verdict from `other` (a compatible one).
    pub fn merge(&mut self, other: &Signature, installs: &[PtxasInstall]) {
        if self.stances.is_empty() {
            return;
        }
        for (a, b) in self.stances.iter_mut().zip(&other.stances) {
            if *a == Stance::NoVerdict {
                *a = *b;
            }
        }
        self.accepted_by = range_of(installs, &self.stances);
    }
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let acc = if self.accepted_by.is_empty() {
            "none"
        } else {
            &self.accepted_by
        };
        write!(
            f,
            "{} [{}] accepted by: {acc}",
            self.kind,
            self.rules.join(", ")
        )
    }
}

/// The judgement of one case by every version.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// One verdict per install (same order).
    pub verdicts: Vec<CompileVerdict>,
    /// One judgement per install.
    pub judgements: Vec<Judgement>,
    /// The oracle's static violations.
    pub violations: Vec<Violation>,
    /// The accepting range.
    pub accepted_by: String,
    /// The signature when there is a discrepancy (with the oracle, or between versions).
    pub signature: Option<Signature>,
}

fn family_of(opcode: &str) -> String {
    let mut it = opcode.split('.');
    match (it.next(), it.next()) {
        (Some(a), Some(b)) => format!("{a}.{b}"),
        _ => opcode.to_string(),
    }
}

/// Judges one case's verdicts (one per install) against the oracle's violations.
pub fn report(
    installs: &[PtxasInstall],
    verdicts: Vec<CompileVerdict>,
    violations: Vec<Violation>,
) -> CaseReport {
    let judgements: Vec<Judgement> = verdicts.iter().map(|v| judge(v, &violations)).collect();
    let accepted_by = accepting_range(installs, &verdicts);
    let stances: Vec<Stance> = verdicts.iter().map(stance).collect();
    let first = judgements.iter().find(|j| j.is_discrepancy());
    let signature = match first {
        Some(j) => {
            let rules = match j {
                Judgement::IllFormedAccepted { rules } => {
                    rules.iter().map(|r| r.as_str().to_string()).collect()
                }
                Judgement::WellFormedRejected { opcode, diagnostic } => {
                    vec![
                        opcode
                            .as_deref()
                            .map(family_of)
                            .unwrap_or_else(|| diagnostic.clone()),
                    ]
                }
                _ => vec![],
            };
            Some(Signature {
                kind: j.kind().into(),
                rules,
                accepted_by: accepted_by.clone(),
                stances,
            })
        }
        None if versions_disagree(&verdicts) => {
            let rules: BTreeSet<String> = violations
                .iter()
                .map(|v| v.rule.as_str().to_string())
                .collect();
            Some(Signature {
                kind: "versions-disagree".into(),
                rules: rules.into_iter().collect(),
                accepted_by: accepted_by.clone(),
                stances,
            })
        }
        None => None,
    };
    CaseReport {
        verdicts,
        judgements,
        violations,
        accepted_by,
        signature,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptxas::install::{Source, ToolVersion};
    use crate::ptxas::run::{Diagnostic, Severity};
    use crate::ptxas::verdict::CaseDiagnostic;
    use std::path::PathBuf;

    fn inst(v: &str) -> PtxasInstall {
        PtxasInstall {
            path: PathBuf::from(v),
            version: ToolVersion::parse(v).unwrap(),
            source: Source::Env,
            wheel: None,
        }
    }

    fn rejected(msg: &str) -> CompileVerdict {
        CompileVerdict::Rejected(vec![CaseDiagnostic {
            diag: Diagnostic {
                severity: Severity::Error,
                line: Some(3),
                message: msg.into(),
            },
            instruction: None,
        }])
    }

    fn violation(rule: RuleId) -> Violation {
        Violation {
            rule,
            section: catalogue::section(rule).into(),
            location: None,
            message: String::new(),
        }
    }

    #[test]
    fn ranges_name_the_accepting_versions() {
        let i = [inst("12.8"), inst("12.9"), inst("13.0"), inst("13.5")];
        let a = CompileVerdict::Accepted;
        let r = rejected("x");
        assert_eq!(
            accepting_range(&i, &[a.clone(), a.clone(), a.clone(), r.clone()]),
            "12.8..=13.0"
        );
        assert_eq!(
            accepting_range(&i, &[a.clone(), r.clone(), a.clone(), a.clone()]),
            "12.8, 13.0..=13.5"
        );
        assert_eq!(
            accepting_range(&i, &[r.clone(), r.clone(), r.clone(), r.clone()]),
            ""
        );
        assert!(versions_disagree(&[a.clone(), r]));
        assert!(!versions_disagree(&[
            a,
            rejected("Unsupported .version 9.0; current version is '8.7'")
        ]));
    }

    #[test]
    fn signatures_that_differ_only_by_missing_verdicts_are_one_finding() {
        use Stance::*;
        let i = [inst("12.8"), inst("12.9"), inst("13.0"), inst("13.5")];
        let sig = |st: [Stance; 4]| Signature {
            kind: "ill-formed-accepted".into(),
            rules: vec!["GEN-SYNC-QUAL".into()],
            accepted_by: range_of(&i, &st),
            stances: st.to_vec(),
        };
        let mut a = sig([NoVerdict, Accepts, Accepts, Rejects]);
        let b = sig([Accepts, Accepts, Accepts, Rejects]);
        let c = sig([Accepts, Rejects, Accepts, Rejects]);
        assert!(a.compatible(&b) && b.compatible(&a));
        assert!(!b.compatible(&c));
        a.merge(&b, &i);
        assert_eq!(a.accepted_by, "12.8..=13.0");
    }

    #[test]
    fn judgements_follow_the_oracle() {
        // ALLOC-NCOLS-POW2 is a seeds (S) rule: accepting it is a discrepancy (§9.7.16.7.1).
        let v = [violation(RuleId::AllocNcolsPow2)];
        assert!(matches!(
            judge(&CompileVerdict::Accepted, &v),
            Judgement::IllFormedAccepted { .. }
        ));
        assert_eq!(
            judge(&rejected("value must be power of 2"), &v),
            Judgement::Agree
        );
        // A well-formed case that is rejected.
        assert!(matches!(
            judge(&rejected("bad"), &[]),
            Judgement::WellFormedRejected { .. }
        ));
        // A ptxas too old for the header is not a spec disagreement.
        let old = rejected("Unsupported .version 8.8; current version is '8.7'");
        assert!(matches!(judge(&old, &[]), Judgement::Skip(_)));
        // CP-MCAST-OTHER has provenance D: never a discrepancy.
        assert!(matches!(
            judge(
                &CompileVerdict::Accepted,
                &[violation(RuleId::CpMcastOther)]
            ),
            Judgement::Skip(_)
        ));
        assert!(
            judge(
                &CompileVerdict::TimedOut {
                    after: std::time::Duration::from_secs(1)
                },
                &[]
            )
            .is_discrepancy()
        );
    }
}
