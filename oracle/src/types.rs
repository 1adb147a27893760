//! The oracle's public vocabulary: editions, options, violations and the expected outcome of a
//! run (docs/architecture.md, "The oracle's run model"). The differential engine (`drivers/src/diff.rs`)
//! consumes these types; every item carries the [`RuleId`]s that decided it.

use serde::{Deserialize, Serialize};
use tcgen05_ir::RuleId;

/// Which wording of the spec the oracle follows (reference §0, §7 OQ-28); in JSON as on the
/// command line (`seeds`, `ptx93`; the variant names `Seeds`, `Ptx93` are read too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Edition {
    /// The wording of the five seed documents (PTX ISA 9.0/9.1): a `::2` alloc, dealloc or
    /// relinquish requires its peer to be active (a missing peer is a violated precondition,
    /// so unspecified); a `::2` dealloc may block until the peer warp's dealloc
    /// (§9.7.16.7.1, DEALLOC-PAIR-BLOCK), the alloc and relinquish do not wait; mma→mma
    /// pipelining needs the same accumulator and shape but not the same kind.
    #[default]
    #[serde(alias = "Seeds")]
    Seeds,
    /// The newer wording (PTX ISA 9.2/9.3): `::2` collectives may block until the peer warp
    /// arrives (ALLOC-PAIR-BLOCK, DEALLOC-PAIR-BLOCK, DEALLOC-BARRIER-ORDER); mma→mma
    /// pipelining also needs the same kind (MCM-PIPE-MMA-MMA, OQ-27).
    #[serde(alias = "Ptx93")]
    Ptx93,
}

impl Edition {
    /// Every edition.
    pub const ALL: &'static [Edition] = &[Edition::Seeds, Edition::Ptx93];

    /// `seeds` or `ptx93`.
    pub fn as_str(self) -> &'static str {
        match self {
            Edition::Seeds => "seeds",
            Edition::Ptx93 => "ptx93",
        }
    }
}

impl std::fmt::Display for Edition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An edition name that is neither `seeds` nor `ptx93`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown edition `{0}` (expected `seeds` or `ptx93`)")]
pub struct UnknownEdition(pub String);

impl std::str::FromStr for Edition {
    type Err = UnknownEdition;
    fn from_str(s: &str) -> Result<Self, UnknownEdition> {
        match s {
            "seeds" => Ok(Edition::Seeds),
            "ptx93" => Ok(Edition::Ptx93),
            _ => Err(UnknownEdition(s.to_string())),
        }
    }
}

/// Whether co-resident CTAs share one SM's tensor memory (OQ-7: the spec does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum CoResidency {
    /// Each CTA has its own 512 columns (the reading "512 columns per CTA", reference §2.1).
    #[default]
    PerCta,
    /// Any CTAs of the grid may sit on one SM and share its 512 columns: an alloc that could
    /// find its columns taken by another CTA may block (never must: the other CTA may finish).
    SharedSm,
}

/// How the oracle reads the open questions it has to take a side on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Options {
    /// The edition (reference §7 OQ-28).
    pub edition: Edition,
    /// TMEM capacity sharing between co-resident CTAs (OQ-7). Default: per CTA.
    pub co_residency: CoResidency,
    /// OQ-35: may several warps of one CTA each allocate, and may one warp deallocate what
    /// another allocated? `true` (default) follows the reading the reference gives first
    /// ("each alloc is executed by one whole warp"); `false` makes such programs unspecified
    /// (ALLOC-ISSUER).
    pub multi_warp_alloc: bool,
    /// Compute exact MMA values from the ISA's figure-only layouts (the canonical K-major,
    /// no-swizzle shared-memory layout and data-path layout D for M=128, `cta_group::1`).
    /// The reference leaves these to figures (OQ-22, OQ-29); `false` makes every MMA result
    /// unspecified in value (its region and ordering are still modelled).
    pub figure_layouts: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            edition: Edition::Seeds,
            co_residency: CoResidency::PerCta,
            multi_warp_alloc: true,
            figure_layouts: true,
        }
    }
}

impl Options {
    /// Default options with the given edition.
    pub fn edition(edition: Edition) -> Self {
        Options {
            edition,
            ..Options::default()
        }
    }
}

/// Which code a statement belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Code {
    /// The code of the warp with this rank (`Program::warps[rank]`).
    Warp(u8),
    /// The body of `Program::funcs[index]`.
    Func(u8),
}

/// Where a statement is: its code and its statement path.
///
/// `path[0]` is the index in the top-level statement list; each further element indexes the
/// children of the statement named by the previous one: for a `Loop` its body, for an `If` the
/// `then` statements numbered from 0 followed by the `els` statements numbered from
/// `then.len()`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Location {
    /// The code.
    pub code: Code,
    /// The statement path.
    pub path: Vec<u16>,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code {
            Code::Warp(w) => write!(f, "warp {w}")?,
            Code::Func(i) => write!(f, "f{i}")?,
        }
        for (i, p) in self.path.iter().enumerate() {
            write!(f, "{}{p}", if i == 0 { " @" } else { "." })?;
        }
        Ok(())
    }
}

/// A static violation: one broken rule at one instruction (or at the launch, `location: None`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Violation {
    /// The rule broken.
    pub rule: RuleId,
    /// Its spec section, as the catalogue gives it.
    pub section: String,
    /// The instruction; `None` for the launch (target, PTX version, cluster shape).
    pub location: Option<Location>,
    /// One plain sentence.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.location {
            Some(l) => write!(
                f,
                "{} [§{}] at {l}: {}",
                self.rule, self.section, self.message
            ),
            None => write!(f, "{} [§{}]: {}", self.rule, self.section, self.message),
        }
    }
}

/// A place in the run where a warp may block or must deadlock.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BlockSite {
    /// Global CTA index (`%clusterid.x * cluster_size + %cluster_ctarank`).
    pub cta: u32,
    /// Warp rank in the CTA.
    pub warp: u8,
    /// The statement the warp is stuck at.
    pub location: Location,
    /// Why.
    pub reason: String,
}

/// The expected run outcome (docs/architecture.md, "The oracle's run model").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RunVerdict {
    /// The run completes under every schedule the spec allows.
    Completes,
    /// Some schedules complete and some hang (e.g. DEALLOC-BARRIER-ORDER): both are right.
    MayBlock {
        /// Where the hang may happen.
        where_: Vec<BlockSite>,
    },
    /// Every schedule hangs: a target that completes disagrees.
    MustDeadlock {
        /// Where the hang happens.
        where_: Vec<BlockSite>,
    },
    /// Undefined behaviour, or a rule without a stated consequence, is reachable: every
    /// outcome is allowed, and every observation is unspecified. An empty list means the
    /// cause is outside the tcgen05 chapter (see [`Expected::notes`]).
    Undefined(Vec<RuleId>),
    /// The oracle does not judge this program (its unrolled size is past the work bound, or
    /// it is malformed outside the tcgen05 model): no outcome agrees or disagrees with it, so
    /// a comparison must skip, with this reason.
    NotJudged(String),
}

/// The run verdict with the rules that decided it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunExpect {
    /// The verdict.
    pub verdict: RunVerdict,
    /// The rules that decided it (for `Completes`: the blocking rules that were checked).
    pub rules: Vec<RuleId>,
}

/// Which site of the observation layout ([`tcgen05_ir::observe::Layout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SiteRef {
    /// Index into `Layout::warp_sites[warp]` (a site of the warp's own code).
    Warp(u32),
    /// Index into `Layout::func_sites[func]`; the record lives in the calling warp's block, so
    /// the key's `warp` says which warp's block.
    Func {
        /// Function index.
        func: u8,
        /// Site index in that function.
        index: u32,
    },
}

impl std::fmt::Display for SiteRef {
    /// `#3` for the warp's own fourth site, `f1 #0` for the first site of function 1.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SiteRef::Warp(i) => write!(f, "#{i}"),
            SiteRef::Func { func, index } => write!(f, "f{func} #{index}"),
        }
    }
}

impl LeakStatus {
    /// `no leak` or `may leak`.
    pub fn as_str(self) -> &'static str {
        match self {
            LeakStatus::NoLeak => "no leak",
            LeakStatus::MayLeak => "may leak",
        }
    }
}

/// The key of one lane's record of one site in one warp of one CTA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObsKey {
    /// Global CTA index.
    pub cta: u32,
    /// Warp rank in the CTA (whose warp block holds the record).
    pub warp: u8,
    /// The site.
    pub site: SiteRef,
    /// The lane.
    pub lane: u8,
}

/// What one 32-bit word of a record may hold.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WordExpect {
    /// Exactly this value.
    Exact(u32),
    /// One of these values (a race between writes with known values).
    OneOf(Vec<u32>),
    /// The bits set in `mask` are those of `value`; the others may hold anything: a 16-bit
    /// MMA D element occupies the low half of its 32-bit cell and the high half is not
    /// stated (MMA-D-UNPACKED, §9.7.16.10.4.1).
    Masked {
        /// The stated bits (0 outside `mask`).
        value: u32,
        /// Which bits are stated.
        mask: u32,
    },
    /// Anything.
    Unspecified,
}

impl WordExpect {
    /// Whether `word` is allowed.
    pub fn allows(&self, word: u32) -> bool {
        match self {
            WordExpect::Exact(v) => *v == word,
            WordExpect::OneOf(vs) => vs.contains(&word),
            WordExpect::Masked { value, mask } => word & mask == *value,
            WordExpect::Unspecified => true,
        }
    }
}

/// The observation checks on an address that alloc stored (OQ-1: the address is opaque, so
/// these are *observation checks*, not spec facts).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AddrCheck {
    /// The allocation (numbered per run): every record with the same `alloc` must hold the
    /// same value.
    pub alloc: u32,
    /// Columns allocated.
    pub ncols: u32,
    /// Lane field (bits 31..16) must be 0.
    pub lane_zero: bool,
    /// `column + ncols` must not exceed this capacity (512).
    pub capacity: u32,
    /// Allocations (same numbering) live at the same time in the same TMEM: their column
    /// ranges must not overlap this one's.
    pub disjoint_from: Vec<u32>,
    /// Always `"observation check (OQ-1), not a spec fact"`.
    pub basis: String,
}

/// What one lane's record of one site may hold.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ObsExpect {
    /// Exactly these data words.
    Exact(Vec<u32>),
    /// One of these data-word vectors.
    OneOf(Vec<Vec<u32>>),
    /// Word by word (an ld whose cells are partly known, partly racing, partly unspecified).
    PerWord(Vec<WordExpect>),
    /// An alloc address: the observation checks.
    Check(AddrCheck),
    /// The lane does not record this site (its valid word stays 0).
    Absent,
    /// Anything (the rules say why).
    Unspecified(Vec<RuleId>),
}

/// One site of one warp of one CTA: the key of a site record ([`ObsItem`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObsSite {
    /// Global CTA index.
    pub cta: u32,
    /// Warp rank in the CTA (whose warp block holds the record).
    pub warp: u8,
    /// The site.
    pub site: SiteRef,
}

impl ObsSite {
    /// The key of `lane`'s record of this site.
    pub fn lane(self, lane: u8) -> ObsKey {
        ObsKey {
            cta: self.cta,
            warp: self.warp,
            site: self.site,
            lane,
        }
    }
}

impl ObsKey {
    /// The site this lane's record belongs to.
    pub fn site_key(&self) -> ObsSite {
        ObsSite {
            cta: self.cta,
            warp: self.warp,
            site: self.site,
        }
    }
}

/// What the lanes of one site record may hold.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SiteExpect {
    /// Every lane of [`ObsItem::lanes`] may hold what this says.
    Same(ObsExpect),
    /// Every lane of [`ObsItem::lanes`] holds exactly its `words` data words:
    /// `data[lane * words..(lane + 1) * words]` (lane-major over all 32 lanes; the words of
    /// lanes outside the mask are 0 and mean nothing).
    Exact {
        /// Data words per lane.
        words: u32,
        /// `32 * words` values.
        data: Vec<u32>,
    },
    /// One expectation per lane, indexed by lane (32 entries; only those of
    /// [`ObsItem::lanes`] mean anything).
    Each(Vec<ObsExpect>),
}

/// One lane's expectation, borrowed from its site record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneExpect<'a> {
    /// Exactly these data words.
    Exact(&'a [u32]),
    /// Any other expectation (never [`ObsExpect::Exact`] for records built from
    /// [`SiteExpect::Exact`]; may be `Exact` inside [`SiteExpect::Same`]/[`SiteExpect::Each`]).
    Is(&'a ObsExpect),
}

impl LaneExpect<'_> {
    /// The exact data words, if the lane is predicted exactly.
    pub fn exact(&self) -> Option<&[u32]> {
        match *self {
            LaneExpect::Exact(v) => Some(v),
            LaneExpect::Is(ObsExpect::Exact(v)) => Some(v),
            LaneExpect::Is(_) => None,
        }
    }

    /// An owned [`ObsExpect`] (allocates; for tests and reports).
    pub fn to_owned(&self) -> ObsExpect {
        match *self {
            LaneExpect::Exact(v) => ObsExpect::Exact(v.to_vec()),
            LaneExpect::Is(e) => e.clone(),
        }
    }
}

/// The expected records of one site of one warp of one CTA: every lane of `lanes`, with the
/// rules that decided them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ObsItem {
    /// Which site.
    pub key: ObsSite,
    /// The lanes that have an expectation (bit `l`: lane `l`).
    pub lanes: u32,
    /// What they may hold.
    pub expect: SiteExpect,
    /// The rules that decided it.
    pub rules: Vec<RuleId>,
}

impl ObsItem {
    /// The expectation of `lane`, if it has one.
    pub fn lane(&self, lane: u8) -> Option<LaneExpect<'_>> {
        if lane >= 32 || self.lanes >> lane & 1 == 0 {
            return None;
        }
        let l = usize::from(lane);
        Some(match &self.expect {
            SiteExpect::Same(e) => LaneExpect::Is(e),
            SiteExpect::Exact { words, data } => {
                let n = *words as usize;
                LaneExpect::Exact(data.get(l * n..(l + 1) * n)?)
            }
            SiteExpect::Each(v) => LaneExpect::Is(v.get(l)?),
        })
    }

    /// Every lane with an expectation, in lane order.
    pub fn iter(&self) -> impl Iterator<Item = (u8, LaneExpect<'_>)> {
        (0..32u8).filter_map(|l| self.lane(l).map(|e| (l, e)))
    }

    /// Whether some lane's expectation is not exact (a race, or an unspecified value): the
    /// rules of such a record say why.
    pub fn has_inexact(&self) -> bool {
        self.iter().any(|(_, e)| {
            matches!(
                e,
                LaneExpect::Is(
                    ObsExpect::Unspecified(_) | ObsExpect::PerWord(_) | ObsExpect::OneOf(_)
                )
            )
        })
    }
}

/// One lane's expectation as an owned record (the per-lane view of [`Expected::obs`], for
/// tests and reports; [`Expected::per_lane`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LaneRecord {
    /// Which record.
    pub key: ObsKey,
    /// What it may hold.
    pub expect: ObsExpect,
    /// The rules that decided it.
    pub rules: Vec<RuleId>,
}

/// Whether TMEM may still be allocated at kernel exit (ALLOC-FREE-BEFORE-EXIT; the consequence
/// is unstated, so a leak is reported, never judged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeakStatus {
    /// Every allocation is freed on every schedule.
    NoLeak,
    /// Some allocation may be left allocated at exit.
    MayLeak,
}

/// The leak status with the rules that decided it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LeakExpect {
    /// The status.
    pub status: LeakStatus,
    /// The rules that decided it.
    pub rules: Vec<RuleId>,
}

/// What the spec allows for one program: `expect(&Program)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Expected {
    /// The edition it was computed for.
    pub edition: Edition,
    /// Static violations (`check`). A target may reject the program only if this is non-empty.
    pub violations: Vec<Violation>,
    /// The run verdict.
    pub run: RunExpect,
    /// Per observation site, sorted by key, each with the lanes it expects. A lane/site pair
    /// missing from the list has no expectation (treat as unspecified).
    pub obs: Vec<ObsItem>,
    /// Leak status at exit.
    pub leak: LeakExpect,
    /// `mbarrier` wait sites (every lane) that the value expectations assume completed
    /// (recorded `MBAR_COMPLETED`): they are bounded loops, so a target may give up; where it
    /// did, the expectations of later records do not apply (compare should skip).
    pub assumes_completed: Vec<ObsKey>,
    /// The subset of `assumes_completed` where even a target whose bounded waits are fair may
    /// give up: the phase may be overrun by the next phase's arrivals before the wait looks
    /// (mbarrier phase parity), or another wait of the program must give up (its loop bound
    /// then decides whether an arrive that follows it comes in time). On the others a fair
    /// target's give-up is a discrepancy.
    #[serde(default)]
    pub may_give_up: Vec<ObsKey>,
    /// Plain-language notes: open questions taken, budget limits, non-tcgen05 causes.
    pub notes: Vec<String>,
}

impl Expected {
    /// The rules the program breaks by these verdicts: its static violations, the rules that
    /// make its run undefined, possibly blocking or deadlocking, and those that let it leak
    /// TMEM (ALLOC-FREE-BEFORE-EXIT). The rules a run checked and found kept (`Completes`) are
    /// not among them.
    pub fn broken_rules(&self) -> std::collections::BTreeSet<RuleId> {
        let mut v: std::collections::BTreeSet<RuleId> =
            self.violations.iter().map(|x| x.rule).collect();
        match &self.run.verdict {
            RunVerdict::Completes | RunVerdict::NotJudged(_) => {}
            RunVerdict::Undefined(rules) => {
                v.extend(rules.iter().copied());
                v.extend(self.run.rules.iter().copied());
            }
            RunVerdict::MayBlock { .. } | RunVerdict::MustDeadlock { .. } => {
                v.extend(self.run.rules.iter().copied());
            }
        }
        if self.leak.status != LeakStatus::NoLeak {
            v.extend(self.leak.rules.iter().copied());
            v.insert(RuleId::AllocFreeBeforeExit);
        }
        v
    }

    /// An expectation that says only `verdict` (seeds edition, no violations, no observation
    /// records, no leak): for tests of the consumers (the diff engine) and for external tools.
    pub fn with_verdict(verdict: RunVerdict) -> Expected {
        Expected {
            edition: Edition::Seeds,
            violations: vec![],
            run: RunExpect {
                verdict,
                rules: vec![],
            },
            obs: vec![],
            leak: LeakExpect {
                status: LeakStatus::NoLeak,
                rules: vec![],
            },
            assumes_completed: vec![],
            may_give_up: vec![],
            notes: vec![],
        }
    }

    /// The record of one site, if any.
    pub fn site(&self, key: &ObsSite) -> Option<&ObsItem> {
        self.obs
            .binary_search_by(|o| o.key.cmp(key))
            .ok()
            .map(|i| &self.obs[i])
    }

    /// The expectation of one lane's record, if any, with its site record.
    pub fn lookup(&self, key: &ObsKey) -> Option<(&ObsItem, LaneExpect<'_>)> {
        let item = self.site(&key.site_key())?;
        item.lane(key.lane).map(|e| (item, e))
    }

    /// Every lane's expectation as an owned record, sorted by key (allocates: for tests and
    /// reports, not for the comparison loop).
    pub fn per_lane(&self) -> Vec<LaneRecord> {
        let mut v = Vec::new();
        for item in &self.obs {
            for (lane, e) in item.iter() {
                v.push(LaneRecord {
                    key: item.key.lane(lane),
                    expect: e.to_owned(),
                    rules: item.rules.clone(),
                });
            }
        }
        v
    }

    /// Whether the program is statically well-formed.
    pub fn is_well_formed(&self) -> bool {
        self.violations.is_empty()
    }
}
