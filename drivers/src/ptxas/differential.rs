//! The version matrix across ptxas versions: each version's stance on a case (accepts,
//! rejects, no verdict), the range of versions that accept, and the signature of a finding of
//! the matrix, for deduplication.
//!
//! Each version's verdict against the spec is the one judge's (`tcgen05_engine::judge`, the
//! table of [`crate::diff`]: an unstated consequence is unspecified, not a discrepancy, and a
//! ptxas too old for the module's header cannot judge it). What the matrix adds is the
//! comparison of the versions with one another: a case that some versions accept and others
//! reject, where no version's verdict is a discrepancy with the spec, is a
//! [`FindingKind::VersionDisagreement`] naming the rules the case breaks and the versions that
//! accept it.

use super::install::PtxasInstall;
use super::verdict::CompileVerdict;
use crate::diff::{Discrepancy, DiscrepancyKind};
use std::collections::BTreeSet;
use tcgen05_ir::RuleId;

/// What kind of finding a case of the matrix is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// A version's verdict is a discrepancy with the spec, as the one judge found it.
    Spec(DiscrepancyKind),
    /// No version's verdict is a discrepancy with the spec, but some versions accept the case
    /// and others reject it.
    VersionDisagreement,
    /// The newest version's SASS for an accepted case is not what its PTX asks for
    /// ([`super::sass`]).
    SassMismatch,
}

impl FindingKind {
    /// A short kebab-case name: the discrepancy kind's ([`DiscrepancyKind::as_str`]),
    /// `version-disagreement` or `sass-mismatch`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Spec(k) => k.as_str(),
            FindingKind::VersionDisagreement => "version-disagreement",
            FindingKind::SassMismatch => "sass-mismatch",
        }
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a rejection only says the tool does not know the module's `.version`/`.target`
/// (the tool predates the case).
pub fn is_too_old(v: &CompileVerdict) -> bool {
    v.first_error().is_some_and(|d| d.diag.is_header_level())
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

/// The signature of a finding, for deduplication: kind, rules and each version's stance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Signature {
    /// The kind.
    pub kind: FindingKind,
    /// The rules: the judge's for an ill-formed program accepted, the oracle's static
    /// violations for a version disagreement; for a well-formed program rejected the opcode
    /// family ptxas pointed at (there is no rule), as `tcgen05.<family>`, or its message; the
    /// SASS check's mismatched forms for a SASS mismatch; none for a crash or a timeout.
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

fn family_of(opcode: &str) -> String {
    let mut it = opcode.split('.');
    match (it.next(), it.next()) {
        (Some(a), Some(b)) => format!("{a}.{b}"),
        _ => opcode.to_string(),
    }
}

/// The signature of one case of the matrix, or `None` when it is no finding.
///
/// `verdicts` has one verdict per install (in `installs` order), `discrepancies` the one
/// judge's discrepancy with the spec of each (`None` where it agrees or skips), and
/// `static_rules` the rules the oracle's static check finds broken. The first version with a
/// discrepancy makes a [`FindingKind::Spec`] finding; with none, versions that disagree (one
/// accepts, another rejects) make a [`FindingKind::VersionDisagreement`] naming
/// `static_rules`.
pub fn signature(
    installs: &[PtxasInstall],
    verdicts: &[CompileVerdict],
    discrepancies: &[Option<&Discrepancy>],
    static_rules: &[RuleId],
) -> Option<Signature> {
    let accepted_by = accepting_range(installs, verdicts);
    let stances: Vec<Stance> = verdicts.iter().map(stance).collect();
    // Once each, in the catalogue's order (`RuleId`'s).
    let sorted = |rules: &[RuleId]| -> Vec<String> {
        let set: BTreeSet<RuleId> = rules.iter().copied().collect();
        set.into_iter().map(|r| r.as_str().to_string()).collect()
    };
    let first = verdicts
        .iter()
        .zip(discrepancies)
        .find_map(|(v, d)| d.map(|d| (v, d)));
    let (kind, rules) = match first {
        Some((v, d)) => {
            let rules = match d.kind {
                DiscrepancyKind::IllFormedAccepted => sorted(&d.rules),
                DiscrepancyKind::WellFormedRejected => {
                    let e = v.first_error();
                    vec![
                        e.and_then(|d| d.instruction.as_ref())
                            .map(|i| i.opcode.as_str())
                            .filter(|o| o.starts_with("tcgen05."))
                            .map(family_of)
                            .unwrap_or_else(|| {
                                e.map(|d| d.diag.message.clone())
                                    .unwrap_or_else(|| v.summary())
                            }),
                    ]
                }
                _ => vec![],
            };
            (FindingKind::Spec(d.kind), rules)
        }
        None if versions_disagree(verdicts) => {
            (FindingKind::VersionDisagreement, sorted(static_rules))
        }
        None => return None,
    };
    Some(Signature {
        kind,
        rules,
        accepted_by,
        stances,
    })
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
            kind: FindingKind::Spec(DiscrepancyKind::IllFormedAccepted),
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

    fn discrepancy(kind: DiscrepancyKind, rules: Vec<RuleId>) -> Discrepancy {
        Discrepancy {
            kind,
            rules,
            forms: vec![],
            key: None,
            detail: String::new(),
        }
    }

    /// ALLOC-NCOLS-POW2 (§9.7.16.7.1) states no consequence, so the judge skips the versions
    /// that accept a dealloc of 96 columns: with 13.5 rejecting it, the case is a version
    /// disagreement naming the rule and the accepting versions, not an ill-formed program
    /// accepted.
    #[test]
    fn versions_that_disagree_without_a_discrepancy_are_a_version_disagreement() {
        let i = [inst("12.8"), inst("12.9"), inst("13.0"), inst("13.5")];
        let a = CompileVerdict::Accepted;
        let r = rejected("Argument 1 of 'tcgen05.dealloc' instruction: value must be power of 2");
        let verdicts = [a.clone(), a.clone(), a, r];
        let sig = signature(&i, &verdicts, &[None; 4], &[RuleId::AllocNcolsPow2])
            .expect("the versions disagree");
        assert_eq!(sig.kind, FindingKind::VersionDisagreement);
        assert_eq!(sig.kind.as_str(), "version-disagreement");
        assert_eq!(sig.rules, ["ALLOC-NCOLS-POW2"]);
        assert_eq!(sig.accepted_by, "12.8..=13.0");
        assert_eq!(
            sig.to_string(),
            "version-disagreement [ALLOC-NCOLS-POW2] accepted by: 12.8..=13.0"
        );
    }

    #[test]
    fn the_first_discrepancy_with_the_spec_makes_the_finding() {
        let i = [inst("12.8"), inst("13.5")];
        let a = CompileVerdict::Accepted;
        let r = rejected("bad");
        // 12.8 accepts a case breaking two rules whose consequence is rejection: the judge's
        // rules once each, in the catalogue's order, whatever order it gave them in.
        let d = discrepancy(
            DiscrepancyKind::IllFormedAccepted,
            vec![
                RuleId::AllocNcolsRange,
                RuleId::GenSyncQual,
                RuleId::AllocNcolsRange,
            ],
        );
        let sig = signature(
            &i,
            &[a.clone(), r.clone()],
            &[Some(&d), None],
            &[RuleId::GenSyncQual, RuleId::AllocNcolsRange],
        )
        .unwrap();
        assert_eq!(
            sig.kind,
            FindingKind::Spec(DiscrepancyKind::IllFormedAccepted)
        );
        assert_eq!(sig.rules, ["GEN-SYNC-QUAL", "ALLOC-NCOLS-RANGE"]);
        assert_eq!(sig.accepted_by, "12.8");
        // A well-formed case rejected with no tcgen05 instruction to point at: the message.
        let w = discrepancy(DiscrepancyKind::WellFormedRejected, vec![]);
        let sig = signature(&i, &[a.clone(), r], &[None, Some(&w)], &[]).unwrap();
        assert_eq!(sig.kind.as_str(), "well-formed-rejected");
        assert_eq!(sig.rules, ["bad"]);
        // Every version agreeing, or one too old for the header: no finding.
        let old = rejected("Unsupported .version 9.0; current version is '8.7'");
        assert!(signature(&i, &[a.clone(), a.clone()], &[None, None], &[]).is_none());
        assert!(signature(&i, &[old, a], &[None, None], &[RuleId::AllocNcolsPow2]).is_none());
    }
}
