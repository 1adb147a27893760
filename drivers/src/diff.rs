//! `compare(expected, outcome) -> Verdict`: the differential engine (three
//! outcomes; only one side failing is always a discrepancy).
//!
//! [`compare`] also takes the program, because reading an observation buffer needs its layout
//! ([`tcgen05_ir::observe::Layout`]); [`compare_with`] takes a layout computed once.
//!
//! | outcome | oracle | verdict |
//! | --- | --- | --- |
//! | accepted | static violation whose consequence is "reject" | ill-formed accepted |
//! | accepted | static violation with an unstated consequence, or a derived (D) rule | skip (unspecified) |
//! | rejected | no static violation | well-formed rejected |
//! | crashed / timed out (compile) | any | target crash or timeout |
//! | any run outcome | static violations | skip (ill-formed program: a running target's behaviour is not judged) |
//! | not run | any | skip (target cannot run this form) |
//! | any run outcome | `Undefined(rules)` | skip (unspecified) |
//! | hung | `Completes` | hang where completion is required |
//! | completed / leaked | `MustDeadlock` | completion where deadlock is required |
//! | trapped / faulted | `Completes`, `MayBlock`, `MustDeadlock` | trap on a defined program |
//! | leaked | leak status `NoLeak` | leak on a defined program |
//! | completed / leaked, an assumed-complete mbarrier wait gave up | `Completes`, fair target ([`WaitBound::Fair`]) | wait gave up where the arrive is required |
//! | completed / leaked, an assumed-complete mbarrier wait gave up | `MayBlock`, or a watchdog-bounded target | skip (wait gave up) |
//! | completed / leaked | `Completes` / `MayBlock` | each observation against its expectation |
//!
//! A value discrepancy is filed under the rule of the behaviour that differed, the observing
//! instruction named in its detail (`diagnose`: the ld's `.num` map, its lane quarter, or the
//! program edited so one instruction misbehaves, checked against the oracle).

mod diagnose;
pub mod not_emulated;
mod ruling;

use crate::outcome::Outcome;
use diagnose::{diagnose, diagnose_edits, diagnose_quarter};
pub use ruling::{Ruling, rule};
use serde::{Deserialize, Serialize};
use tcgen05_ir::observe::{Layout, MBAR_GAVE_UP, Site, View, site_of};
use tcgen05_ir::{Op, Program, RuleId, Stmt};
use tcgen05_oracle::catalogue;
use tcgen05_oracle::{
    Expected, LaneExpect, LeakStatus, ObsExpect, ObsItem, ObsKey, ObsSite, RunVerdict, SiteExpect,
    SiteRef, WordExpect,
};

/// Why a comparison was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SkipReason {
    /// The spec leaves the outcome unspecified (these rules say why).
    Unspecified(Vec<RuleId>),
    /// The target cannot run this form (its own words).
    TargetCannotRun(String),
    /// The program is statically ill-formed and the target is a running target.
    IllFormedProgram(Vec<RuleId>),
    /// A bounded mbarrier wait the expectations assume completed gave up, and the outcome is
    /// open: the oracle says the run may block (`MayBlock`: the arrive may never come), or the
    /// target's wait loop is bounded by a watchdog ([`WaitBound::Watchdog`]: a slow arrive
    /// looks like a lost one). On a fair target ([`WaitBound::Fair`]) of a program that
    /// always completes it is a discrepancy instead.
    WaitGaveUp,
    /// The outcome is not comparable with this expectation (e.g. a compile outcome from a
    /// running target with a well-formed program accepted).
    Incomparable(String),
}

/// How a target's bounded `mbarrier.try_wait` loops end: what a wait that gave up says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WaitBound {
    /// The loop gives up only when its phase can never complete (the simulator gives up only
    /// when nothing else in the grid can move): where the oracle says the arrive count is
    /// always reached, giving up is a discrepancy.
    Fair,
    /// The loop gives up after a watchdog's bound (hardware, external simulators): a phase
    /// that completes later than the bound looks the same as one that never completes, so
    /// giving up is skipped ([`SkipReason::WaitGaveUp`]).
    Watchdog,
}

/// The kind of a discrepancy.
///
/// In JSON as [`DiscrepancyKind::as_str`] spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiscrepancyKind {
    /// The target accepted a program that breaks a static rule whose consequence is rejection.
    IllFormedAccepted,
    /// The target rejected a statically well-formed program.
    WellFormedRejected,
    /// An observation outside the set the spec allows.
    ValueOutsideAllowed,
    /// The target hung where the spec requires completion.
    HangWhereCompletionRequired,
    /// The target completed where the spec requires a deadlock.
    CompletionWhereDeadlockRequired,
    /// The target leaked TMEM on a program that frees everything on every schedule.
    #[serde(rename = "leak-on-defined-program")]
    LeakOnDefined,
    /// The target trapped or faulted on a defined program.
    #[serde(rename = "trap-on-defined-program")]
    TrapOnDefined,
    /// A fair target's bounded mbarrier wait gave up on a phase the oracle says always
    /// completes (COMMIT-ARRIVE: every arrive of the phase happens on every schedule).
    WaitGaveUpWhereArriveRequired,
    /// The target (tool) crashed.
    TargetCrash,
    /// The target (tool) timed out.
    TargetTimeout,
}

impl DiscrepancyKind {
    /// A short kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            DiscrepancyKind::IllFormedAccepted => "ill-formed-accepted",
            DiscrepancyKind::WellFormedRejected => "well-formed-rejected",
            DiscrepancyKind::ValueOutsideAllowed => "value-outside-allowed",
            DiscrepancyKind::HangWhereCompletionRequired => "hang-where-completion-required",
            DiscrepancyKind::CompletionWhereDeadlockRequired => {
                "completion-where-deadlock-required"
            }
            DiscrepancyKind::LeakOnDefined => "leak-on-defined-program",
            DiscrepancyKind::TrapOnDefined => "trap-on-defined-program",
            DiscrepancyKind::WaitGaveUpWhereArriveRequired => "wait-gave-up-where-arrive-required",
            DiscrepancyKind::TargetCrash => "target-crash",
            DiscrepancyKind::TargetTimeout => "target-timeout",
        }
    }
}

/// One discrepancy, with what identifies it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Discrepancy {
    /// Its kind.
    pub kind: DiscrepancyKind,
    /// The rules that decided the expectation (the first is the signature's rule).
    pub rules: Vec<RuleId>,
    /// The instruction forms involved (opcodes), sorted.
    pub forms: Vec<String>,
    /// The observation that differs, for value discrepancies.
    pub key: Option<ObsKey>,
    /// Expected against observed, in words.
    pub detail: String,
}

/// The result of a comparison.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// The outcome is one the spec allows.
    Agree,
    /// Not compared, and why.
    Skip(SkipReason),
    /// The outcome is one the spec does not allow.
    Discrepancy(Discrepancy),
}

/// What identifies a discrepancy for deduplication: kind, rule, target and the instruction
/// forms involved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Signature {
    /// The kind.
    pub kind: DiscrepancyKind,
    /// The deciding rule, if the oracle named one.
    pub rule: Option<RuleId>,
    /// The target name.
    pub target: String,
    /// The instruction forms involved.
    pub forms: Vec<String>,
}

impl Signature {
    /// The signature of `d` on `target`.
    pub fn of(d: &Discrepancy, target: &str) -> Signature {
        Signature {
            kind: d.kind,
            rule: d.rules.first().copied(),
            target: target.to_string(),
            forms: d.forms.clone(),
        }
    }

    /// Whether `self` is `original` with a sharper rule: the same kind of discrepancy on the
    /// same target, where `original` is filed under the observing instruction's rule (no
    /// diagnosis named the behaviour: LD-ASYNC for an ld's record, ALLOC-ADDR-STORE for an
    /// address record) and `self` under another rule, with `original`'s forms among its own
    /// (the diagnosis adds the form of the instruction it blames). A smaller program often
    /// lets the diagnosis name the behaviour that differed; the minimizer keeps such a
    /// candidate and files the finding under the sharper rule.
    pub fn sharpens(&self, original: &Signature) -> bool {
        self.kind == original.kind
            && self.target == original.target
            && self.rule != original.rule
            && self.rule.is_some()
            && matches!(
                original.rule,
                Some(RuleId::LdAsync | RuleId::AllocAddrStore)
            )
            && original.forms.iter().all(|f| self.forms.contains(f))
    }

    /// A stable 64-bit hash (FNV-1a of the text form), as 16 hex digits: the folder name of
    /// the finding in the store.
    pub fn id(&self) -> String {
        let mut h: u64 = 0xCBF2_9CE4_8422_2325;
        for b in self.to_string().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01B3);
        }
        format!("{h:016x}")
    }
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} / {} / {} / [{}]",
            self.kind.as_str(),
            self.rule.map_or("-", |r| r.as_str()),
            self.target,
            self.forms.join(", ")
        )
    }
}

/// Compares a target's outcome for `program` with the oracle's expectation, for a target
/// whose bounded waits are fair ([`WaitBound::Fair`], the simulator's); [`compare_bounded`]
/// takes the target's bound.
pub fn compare(program: &Program, expected: &Expected, outcome: &Outcome) -> Verdict {
    compare_with(program, &Layout::of(program), expected, outcome)
}

/// [`compare`] for a target whose bounded waits end as `bound` says
/// ([`crate::target::Target::wait_bound`]).
pub fn compare_bounded(
    program: &Program,
    expected: &Expected,
    outcome: &Outcome,
    bound: WaitBound,
) -> Verdict {
    compare_with_bound(program, &Layout::of(program), expected, outcome, bound)
}

fn disc(kind: DiscrepancyKind, rules: Vec<RuleId>, forms: Vec<String>, detail: String) -> Verdict {
    Verdict::Discrepancy(Discrepancy {
        kind,
        rules,
        forms,
        key: None,
        detail,
    })
}

/// The verdict that every outcome of a target which only runs programs gets, when no run
/// outcome can change it; `None` when the outcome decides. Such a target
/// ([`crate::target::Target::only_runs`]: it never rejects a program and never crashes, its
/// every outcome is a run outcome, "not run" or its own step bound) need not run the program
/// at all:
///
/// - the program breaks a static rule: skip, ill-formed program (a running target's behaviour
///   is not judged, rows "any run outcome | static violations" of the table above);
/// - its run is undefined: skip, unspecified (the spec allows anything);
/// - the oracle does not judge it (past its work bounds): skip, incomparable.
///
/// [`compare_with`] gives these same verdicts for every run outcome; for "not run" and a
/// timeout it gives skips with other reasons (target cannot run, incomparable).
pub fn verdict_for_any_run(expected: &Expected) -> Option<Verdict> {
    if !expected.violations.is_empty() {
        return Some(Verdict::Skip(SkipReason::IllFormedProgram(
            expected.violations.iter().map(|v| v.rule).collect(),
        )));
    }
    match &expected.run.verdict {
        RunVerdict::Undefined(r) => Some(Verdict::Skip(SkipReason::Unspecified(r.clone()))),
        RunVerdict::NotJudged(why) => Some(Verdict::Skip(SkipReason::Incomparable(format!(
            "the oracle does not judge this program: {why}"
        )))),
        RunVerdict::Completes | RunVerdict::MayBlock { .. } | RunVerdict::MustDeadlock { .. } => {
            None
        }
    }
}

/// [`compare`] with the layout of `program` already computed (a fair target).
pub fn compare_with(
    program: &Program,
    layout: &Layout,
    expected: &Expected,
    outcome: &Outcome,
) -> Verdict {
    compare_with_bound(program, layout, expected, outcome, WaitBound::Fair)
}

/// [`compare_bounded`] with the layout of `program` already computed: the one implementation
/// of the table at the top of this module.
pub fn compare_with_bound(
    program: &Program,
    layout: &Layout,
    expected: &Expected,
    outcome: &Outcome,
    bound: WaitBound,
) -> Verdict {
    use DiscrepancyKind as K;
    let static_rules: Vec<RuleId> = expected.violations.iter().map(|v| v.rule).collect();
    match outcome {
        Outcome::Accepted | Outcome::AcceptedWithWarnings(_) => {
            if static_rules.is_empty() {
                return Verdict::Agree;
            }
            let rejecting: Vec<RuleId> = static_rules
                .iter()
                .copied()
                .filter(|r| {
                    let row = catalogue::row(*r);
                    row.provenance != catalogue::Provenance::Derived
                        && row.consequence.contains("reject")
                })
                .collect();
            if rejecting.is_empty() {
                return Verdict::Skip(SkipReason::Unspecified(static_rules));
            }
            let forms = violation_forms(program, expected, &rejecting);
            let first = &expected
                .violations
                .iter()
                .find(|v| v.rule == rejecting[0])
                .expect("from the list");
            disc(
                K::IllFormedAccepted,
                rejecting,
                forms,
                format!("accepted, but the spec says: {first}"),
            )
        }
        Outcome::Rejected(d) => {
            if static_rules.is_empty() {
                let msg = d.first().map_or(String::new(), |d| d.message.clone());
                disc(
                    K::WellFormedRejected,
                    vec![],
                    vec![],
                    format!("rejected a well-formed program: {msg}"),
                )
            } else {
                Verdict::Agree
            }
        }
        Outcome::Crashed { detail } => disc(K::TargetCrash, vec![], vec![], detail.clone()),
        Outcome::TimedOut { limit_ms }
            if expected.is_well_formed() && expected.run.verdict == RunVerdict::Completes =>
        {
            disc(
                K::TargetTimeout,
                expected.run.rules.clone(),
                vec![],
                format!("timed out after {limit_ms} ms"),
            )
        }
        Outcome::TimedOut { .. } => Verdict::Skip(SkipReason::Incomparable("timed out".into())),
        Outcome::NotRun(why) => Verdict::Skip(SkipReason::TargetCannotRun(why.clone())),
        run => {
            if !static_rules.is_empty() {
                return Verdict::Skip(SkipReason::IllFormedProgram(static_rules));
            }
            compare_run(program, layout, expected, run, bound)
        }
    }
}

fn compare_run(
    program: &Program,
    layout: &Layout,
    expected: &Expected,
    outcome: &Outcome,
    bound: WaitBound,
) -> Verdict {
    use DiscrepancyKind as K;
    // Cloned only for a discrepancy (an agreeing comparison allocates nothing here).
    let rules = || expected.run.rules.clone();
    match &expected.run.verdict {
        RunVerdict::Undefined(r) => return Verdict::Skip(SkipReason::Unspecified(r.clone())),
        RunVerdict::NotJudged(why) => {
            return Verdict::Skip(SkipReason::Incomparable(format!(
                "the oracle does not judge this program: {why}"
            )));
        }
        RunVerdict::Completes => match outcome {
            Outcome::Hung { blocked, .. } => {
                let forms = hang_forms(outcome);
                let at = blocked.first().map_or(String::new(), |b| {
                    format!(
                        " (cta {} warp {} lane {} checkpoint {:#x}{})",
                        b.cta,
                        b.warp,
                        b.lane,
                        b.checkpoint,
                        b.blocked_on
                            .as_deref()
                            .map(|s| format!(", blocked on {s}"))
                            .unwrap_or_default()
                    )
                });
                return disc(
                    K::HangWhereCompletionRequired,
                    rules(),
                    forms,
                    format!("hung{at}; the spec requires completion"),
                );
            }
            Outcome::Trapped { kind, .. } => {
                return disc(
                    K::TrapOnDefined,
                    rules(),
                    vec![],
                    format!("trapped ({kind}) on a defined program"),
                );
            }
            Outcome::Faulted { code, detail } => {
                return disc(
                    K::TrapOnDefined,
                    rules(),
                    vec![],
                    format!("faulted ({code}: {detail}) on a defined program"),
                );
            }
            _ => {}
        },
        RunVerdict::MayBlock { .. } => match outcome {
            Outcome::Hung { .. } => return Verdict::Agree,
            Outcome::Trapped { kind, .. } => {
                return disc(
                    K::TrapOnDefined,
                    rules(),
                    vec![],
                    format!("trapped ({kind}) on a defined program"),
                );
            }
            Outcome::Faulted { code, detail } => {
                return disc(
                    K::TrapOnDefined,
                    rules(),
                    vec![],
                    format!("faulted ({code}: {detail})"),
                );
            }
            _ => {}
        },
        RunVerdict::MustDeadlock { where_ } => {
            return match outcome {
                Outcome::Hung { .. } => Verdict::Agree,
                Outcome::Completed { .. } | Outcome::Leaked { .. } => {
                    let at = where_.first().map_or(String::new(), |b| {
                        format!(" at cta {} warp {}: {}", b.cta, b.warp, b.reason)
                    });
                    disc(
                        K::CompletionWhereDeadlockRequired,
                        rules(),
                        vec![],
                        format!("completed, but the spec requires a deadlock{at}"),
                    )
                }
                Outcome::Trapped { kind, .. } => disc(
                    K::TrapOnDefined,
                    rules(),
                    vec![],
                    format!("trapped ({kind}) where a deadlock is required"),
                ),
                Outcome::Faulted { code, detail } => disc(
                    K::TrapOnDefined,
                    rules(),
                    vec![],
                    format!("faulted ({code}: {detail})"),
                ),
                _ => Verdict::Skip(SkipReason::Incomparable(outcome.name().into())),
            };
        }
    }
    let words = match outcome {
        Outcome::Completed { words } => words,
        Outcome::Leaked { words, columns } => {
            if expected.leak.status == LeakStatus::NoLeak {
                return disc(
                    K::LeakOnDefined,
                    expected.leak.rules.clone(),
                    vec!["tcgen05.alloc/dealloc".into()],
                    format!(
                        "{columns} column(s) still allocated at exit; the program frees everything on every schedule"
                    ),
                );
            }
            words
        }
        other => return Verdict::Skip(SkipReason::Incomparable(other.name().into())),
    };
    if words.len() != layout.total_words() {
        return disc(
            K::ValueOutsideAllowed,
            vec![],
            vec![],
            format!(
                "observation buffer has {} words, the layout {}",
                words.len(),
                layout.total_words()
            ),
        );
    }
    let view = View { layout, words };
    for key in &expected.assumes_completed {
        if let Some(site) = site_for(layout, &key.site_key())
            && view_record(&view, key, &site).is_some_and(|r| r.first() == Some(&MBAR_GAVE_UP))
        {
            // `assumes_completed`: the phase completes on every schedule that reaches the
            // wait; `Completes`: every schedule reaches every wait without blocking; not in
            // `may_give_up`: the next phase cannot complete first (parity aliasing). A fair
            // loop then never gives up (reference §4.3, COMMIT-ARRIVE: every tracked arrive
            // happens).
            if bound == WaitBound::Fair
                && expected.run.verdict == RunVerdict::Completes
                && !expected.may_give_up.contains(key)
            {
                return Verdict::Discrepancy(Discrepancy {
                    kind: K::WaitGaveUpWhereArriveRequired,
                    rules: vec![RuleId::CommitArrive, RuleId::CommitTrack],
                    forms: vec!["mbarrier.try_wait".into()],
                    key: Some(*key),
                    detail: format!(
                        "cta {} warp {} lane {} observation {}: the mbarrier wait gave up, but every \
                         arrive of its phase happens on every schedule and the target's wait is fair",
                        key.cta, key.warp, key.lane, key.site
                    ),
                });
            }
            return Verdict::Skip(SkipReason::WaitGaveUp);
        }
    }
    compare_obs(program, layout, &view, expected)
}

fn site_for(layout: &Layout, key: &ObsSite) -> Option<Site> {
    match key.site {
        SiteRef::Warp(i) => layout
            .warp_sites
            .get(usize::from(key.warp))?
            .get(i as usize)
            .copied(),
        SiteRef::Func { func, index } => layout
            .func_sites
            .get(usize::from(func))?
            .get(index as usize)
            .copied(),
    }
}

fn view_record<'a>(view: &View<'a>, key: &ObsKey, site: &Site) -> Option<&'a [u32]> {
    if key.cta >= view.layout.ctas
        || usize::from(key.warp) >= view.layout.warp_base.len()
        || key.lane >= 32
    {
        return None;
    }
    let base = view.layout.warp_block(key.cta, usize::from(key.warp)) + site.offset as usize;
    if view
        .words
        .get(base + usize::from(key.lane))
        .copied()
        .unwrap_or(0)
        == 0
    {
        return None;
    }
    let d = base + 32 + usize::from(key.lane) * site.words as usize;
    view.words.get(d..d + site.words as usize)
}

/// The first record of `view` outside what `expected` allows: its item, lane and why.
fn first_outside<'e>(
    layout: &Layout,
    view: &View<'_>,
    expected: &'e Expected,
) -> Option<(&'e ObsItem, Site, u8, String)> {
    // Address checks need every record of every allocation first.
    let mut allocs = Allocs::default();
    for item in &expected.obs {
        let SiteExpect::Same(ObsExpect::Check(c)) = &item.expect else {
            continue;
        };
        let a = allocs.entry(c.alloc);
        a.ncols = Some(c.ncols);
        let Some(site) = site_for(layout, &item.key) else {
            continue;
        };
        let Some((valid, data, n)) = site_words(view, &item.key, &site) else {
            continue;
        };
        // Each recorded lane's first data word (its address), in lane order.
        let mut m = item.lanes;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            if valid[l] == 0 || n == 0 {
                continue;
            }
            let v = data[l * n];
            match &mut a.seen {
                None => {
                    a.seen = Some(AddrSeen {
                        first: (item.key.lane(l as u8), v),
                        other: None,
                    });
                }
                Some(seen) => {
                    if seen.other.is_none() && seen.first.1 != v {
                        seen.other = Some((item.key.lane(l as u8), v));
                    }
                }
            }
        }
    }
    for item in &expected.obs {
        let Some(site) = site_for(layout, &item.key) else {
            continue;
        };
        if let Some((lane, why)) = check_site(view, &site, item, &allocs) {
            return Some((item, site, lane, why));
        }
    }
    None
}

fn compare_obs(
    program: &Program,
    layout: &Layout,
    view: &View<'_>,
    expected: &Expected,
) -> Verdict {
    let Some((item, site, lane, why)) = first_outside(layout, view, expected) else {
        return Verdict::Agree;
    };
    let key = item.key.lane(lane);
    let observer = site_stmt(program, &key);
    let rec = site_words(view, &item.key, &site).and_then(|(valid, data, n)| {
        let l = usize::from(lane);
        (valid[l] != 0).then(|| &data[l * n..(l + 1) * n])
    });
    let mut rules = item.rules.clone();
    let mut forms = site_forms(program, &key);
    let mut detail = format!(
        "cta {} warp {} lane {} observation {}: {why}",
        key.cta, key.warp, key.lane, key.site
    );
    // The explanations the oracle backs (another warp's quarter, an edited program) before
    // the `.num` pattern, which an accumulator whose first column happens to agree can
    // imitate.
    let found = diagnose_quarter(program, expected, &key, rec)
        .or_else(|| diagnose_edits(program, view, expected, &key, rec))
        .or_else(|| diagnose(observer, item.lane(lane), rec));
    if let Some(d) = found {
        rules.retain(|r| *r != d.rule);
        rules.insert(0, d.rule);
        forms.push(d.form);
        forms.sort();
        forms.dedup();
        detail.push_str("; ");
        detail.push_str(&d.why);
    }
    if let Some(Stmt::Tc(op)) = observer {
        detail.push_str(OBSERVED_BY);
        detail.push_str(&op.form().opcode());
    }
    Verdict::Discrepancy(Discrepancy {
        kind: DiscrepancyKind::ValueOutsideAllowed,
        rules,
        forms,
        key: Some(key),
        detail,
    })
}

/// The clause with which a value discrepancy's detail names the instruction whose record
/// differs (after the diagnosis, which names the instruction whose behaviour differed).
const OBSERVED_BY: &str = "; observed by ";

/// The observing instruction a discrepancy's detail names: the detail before that clause,
/// and the instruction's form (up to a following ` [run ...]` note of [`crate`]'s callers
/// that ran a case several times); `None` where the detail names none.
pub fn observer(detail: &str) -> Option<(&str, &str)> {
    let i = detail.rfind(OBSERVED_BY)?;
    let rest = &detail[i + OBSERVED_BY.len()..];
    let form = rest.split(" [").next().unwrap_or(rest);
    Some((&detail[..i], form))
}

/// What the address checks know of each allocation (by the oracle's allocation id): a
/// program has a few, so a list searched in order beats a map.
#[derive(Debug, Default)]
struct Allocs(Vec<(u32, AllocSeen)>);

/// One allocation's size (its last `Check` record's) and the addresses recorded for it.
#[derive(Debug, Default)]
struct AllocSeen {
    ncols: Option<u32>,
    seen: Option<AddrSeen>,
}

impl Allocs {
    fn entry(&mut self, alloc: u32) -> &mut AllocSeen {
        let i = match self.0.iter().position(|(a, _)| *a == alloc) {
            Some(i) => i,
            None => {
                self.0.push((alloc, AllocSeen::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }

    fn get(&self, alloc: u32) -> Option<&AllocSeen> {
        self.0.iter().find(|(a, _)| *a == alloc).map(|(_, s)| s)
    }

    /// The addresses recorded for `alloc`, if any.
    fn seen(&self, alloc: u32) -> Option<&AddrSeen> {
        self.get(alloc)?.seen.as_ref()
    }

    /// The size of `alloc`, if a record names it.
    fn ncols(&self, alloc: u32) -> Option<u32> {
        self.get(alloc)?.ncols
    }
}

/// The addresses recorded for one allocation: the first record, and the first that differs
/// from it (so "a record that differs from v" is found in O(1), not by a scan per lane).
#[derive(Debug, Clone, Copy)]
struct AddrSeen {
    first: (ObsKey, u32),
    other: Option<(ObsKey, u32)>,
}

impl AddrSeen {
    /// The first record whose value is not `v`.
    fn differing(&self, v: u32) -> Option<(ObsKey, u32)> {
        if self.first.1 != v {
            Some(self.first)
        } else {
            self.other
        }
    }
}

/// The first lane of `item` whose record is outside what it allows, and why.
fn check_site(
    view: &View<'_>,
    site: &Site,
    item: &ObsItem,
    allocs: &Allocs,
) -> Option<(u8, String)> {
    if let SiteExpect::Same(ObsExpect::Unspecified(_)) = &item.expect {
        return None;
    }
    let (valid, data, n) = site_words(view, &item.key, site)?;
    // Fast path: every expected lane recorded and predicted exactly, one slice per lane.
    if let SiteExpect::Exact { words, data: want } = &item.expect
        && *words as usize == n
        && want.len() == 32 * n
    {
        // All 32 lanes expected and recorded, and the whole block as predicted: one
        // comparison (else the loop below finds the first lane that differs).
        if item.lanes == u32::MAX && !valid.contains(&0) && data == want.as_slice() {
            return None;
        }
        let mut m = item.lanes;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let got = &data[l * n..(l + 1) * n];
            let exp = &want[l * n..(l + 1) * n];
            if valid[l] == 0 {
                return Some((
                    l as u8,
                    "expected a record, the lane recorded nothing".into(),
                ));
            }
            if got != exp {
                return Some((
                    l as u8,
                    format!("expected {}, observed {}", hex(exp), hex(got)),
                ));
            }
        }
        return None;
    }
    // The lanes of the mask in lane order (`ObsItem::iter`), with the expectation resolved
    // once for a site whose lanes share it. `check_lane` depends only on the expectation and
    // the record, so a lane of such a site that recorded what the lane before it did (every
    // lane's address record, say) passes as that one did.
    let same = match &item.expect {
        SiteExpect::Same(e) => Some(LaneExpect::Is(e)),
        _ => None,
    };
    let mut passed: Option<Option<&[u32]>> = None;
    let mut m = item.lanes;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let rec = (valid[l] != 0).then(|| &data[l * n..(l + 1) * n]);
        let e = match same {
            Some(_) if passed.is_some_and(|p| same_record(p, rec)) => continue,
            Some(e) => e,
            None => match item.lane(l as u8) {
                Some(e) => e,
                None => continue,
            },
        };
        if let Some(why) = check_lane(e, rec, allocs) {
            return Some((l as u8, why));
        }
        passed = Some(rec);
    }
    None
}

/// A site's record block in the observation buffer: the 32 valid words, the 32 lanes' data
/// words, and the data words per lane; `None` if the site's warp block is outside the
/// layout or the buffer.
fn site_words<'a>(
    view: &View<'a>,
    key: &ObsSite,
    site: &Site,
) -> Option<(&'a [u32], &'a [u32], usize)> {
    if key.cta >= view.layout.ctas || usize::from(key.warp) >= view.layout.warp_base.len() {
        return None;
    }
    let base = view.layout.warp_block(key.cta, usize::from(key.warp)) + site.offset as usize;
    let n = site.words as usize;
    Some((
        view.words.get(base..base + 32)?,
        view.words.get(base + 32..base + 32 + 32 * n)?,
        n,
    ))
}

/// Whether two lanes recorded the same (`None`: nothing), word by word: records are a few
/// words, and this comparison runs once per lane (no `memcmp` call).
fn same_record(a: Option<&[u32]>, b: Option<&[u32]>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y),
        _ => false,
    }
}

fn hex(v: &[u32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x:#010x}")).collect();
    format!("[{}]", parts.join(", "))
}

/// Why `rec` is outside what `e` allows, or `None` if it is allowed.
fn check_lane(e: LaneExpect<'_>, rec: Option<&[u32]>, allocs: &Allocs) -> Option<String> {
    let e = match e {
        LaneExpect::Exact(v) => {
            return match rec {
                None => Some("expected a record, the lane recorded nothing".into()),
                Some(r) => (v != r).then(|| format!("expected {}, observed {}", hex(v), hex(r))),
            };
        }
        LaneExpect::Is(e) => e,
    };
    match (e, rec) {
        (ObsExpect::Unspecified(_), _) => None,
        (ObsExpect::Absent, None) => None,
        (ObsExpect::Absent, Some(r)) => Some(format!("expected no record, observed {}", hex(r))),
        (_, None) => Some("expected a record, the lane recorded nothing".into()),
        (ObsExpect::Exact(v), Some(r)) => {
            (v.as_slice() != r).then(|| format!("expected {}, observed {}", hex(v), hex(r)))
        }
        (ObsExpect::OneOf(vs), Some(r)) => (!vs.iter().any(|v| v.as_slice() == r))
            .then(|| format!("expected one of {} vectors, observed {}", vs.len(), hex(r))),
        (ObsExpect::PerWord(ws), Some(r)) => {
            for (i, (w, o)) in ws.iter().zip(r.iter()).enumerate() {
                if w.allows(*o) {
                    continue;
                }
                let want = match w {
                    WordExpect::Exact(v) => format!("{v:#010x}"),
                    WordExpect::OneOf(vs) => format!("one of {}", hex(vs)),
                    WordExpect::Masked { value, mask } => {
                        format!("{value:#010x} in the bits of {mask:#010x}")
                    }
                    WordExpect::Unspecified => continue,
                };
                return Some(format!("word {i}: expected {want}, observed {o:#010x}"));
            }
            None
        }
        (ObsExpect::Check(c), Some(r)) => {
            let v = r[0];
            if c.lane_zero && v >> 16 != 0 {
                return Some(format!(
                    "address {v:#010x} has a non-zero lane field ({})",
                    c.basis
                ));
            }
            let col = v & 0xFFFF;
            if col + c.ncols > c.capacity {
                return Some(format!(
                    "address {v:#010x} + {} columns exceeds {} ({})",
                    c.ncols, c.capacity, c.basis
                ));
            }
            if let Some((k, other)) = allocs.seen(c.alloc).and_then(|all| all.differing(v)) {
                return Some(format!(
                    "address {v:#010x}, but cta {} warp {} lane {} saw {other:#010x} for the same allocation ({})",
                    k.cta, k.warp, k.lane, c.basis
                ));
            }
            for d in &c.disjoint_from {
                let Some(all) = allocs.seen(*d) else { continue };
                let (_, o) = all.first;
                let ocol = o & 0xFFFF;
                let on = allocs.ncols(*d).unwrap_or(32);
                if col < ocol + on && ocol < col + c.ncols {
                    return Some(format!(
                        "allocation at column {col} overlaps live allocation {d} at column {ocol} ({})",
                        c.basis
                    ));
                }
            }
            None
        }
    }
}

fn opcode_families(p: &Program, keep: impl Fn(&Op) -> bool) -> Vec<String> {
    let mut v: Vec<String> = p
        .ops()
        .into_iter()
        .filter(|o| keep(o))
        .map(|o| o.form().opcode())
        .collect();
    v.sort();
    v.dedup();
    v
}

fn violation_forms(p: &Program, expected: &Expected, rules: &[RuleId]) -> Vec<String> {
    let mut v = Vec::new();
    for viol in expected
        .violations
        .iter()
        .filter(|x| rules.contains(&x.rule))
    {
        if let Some(loc) = &viol.location
            && let Some(Stmt::Tc(op)) = stmt_at(p, loc)
        {
            v.push(op.form().opcode());
        }
    }
    if v.is_empty() {
        v = opcode_families(p, |_| false);
    }
    v.sort();
    v.dedup();
    v
}

fn stmt_at<'p>(p: &'p Program, loc: &tcgen05_oracle::Location) -> Option<&'p Stmt> {
    let mut list: &[Stmt] = match loc.code {
        tcgen05_oracle::Code::Warp(w) => p.warps.get(usize::from(w))?,
        tcgen05_oracle::Code::Func(f) => &p.funcs.get(usize::from(f))?.body,
    };
    let mut cur: Option<&'p Stmt> = None;
    for &i in &loc.path {
        let s = match cur {
            None => list.get(usize::from(i))?,
            Some(Stmt::Loop { body, .. }) => body.get(usize::from(i))?,
            Some(Stmt::If { then, els, .. }) => {
                let i = usize::from(i);
                if i < then.len() {
                    &then[i]
                } else {
                    els.get(i - then.len())?
                }
            }
            Some(_) => return None,
        };
        cur = Some(s);
        list = &[];
    }
    cur
}

/// The statement that owns a site: the k-th site in pre-order of the code.
fn site_stmt<'p>(p: &'p Program, key: &ObsKey) -> Option<&'p Stmt> {
    let (body, idx): (&[Stmt], u32) = match key.site {
        SiteRef::Warp(i) => (p.warps.get(usize::from(key.warp))?, i),
        SiteRef::Func { func, index } => (&p.funcs.get(usize::from(func))?.body, index),
    };
    fn go<'a>(b: &'a [Stmt], n: &mut u32, want: u32) -> Option<&'a Stmt> {
        for s in b {
            if site_of(s).is_some() {
                if *n == want {
                    return Some(s);
                }
                *n += 1;
            }
            let found = match s {
                Stmt::If { then, els, .. } => go(then, n, want).or_else(|| go(els, n, want)),
                Stmt::Loop { body, .. } => go(body, n, want),
                _ => None,
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }
    go(body, &mut 0, idx)
}

fn site_forms(p: &Program, key: &ObsKey) -> Vec<String> {
    match site_stmt(p, key) {
        Some(Stmt::Tc(op)) => vec![op.form().opcode()],
        Some(Stmt::ObserveAddr { .. }) => {
            opcode_families(p, |o| matches!(o, Op::Alloc { .. } | Op::Dealloc { .. }))
        }
        Some(Stmt::MbarWait { .. }) => vec!["mbarrier.try_wait".into()],
        _ => vec![],
    }
}

fn hang_forms(o: &Outcome) -> Vec<String> {
    let Outcome::Hung { blocked, .. } = o else {
        return vec![];
    };
    let mut v: Vec<String> = blocked
        .iter()
        .filter_map(|b| b.blocked_on.as_deref())
        .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod table;

#[cfg(test)]
mod tests;
