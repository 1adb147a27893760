//! `expect`: the run semantics (reference §2-§5, docs/architecture.md, "The oracle's run model").
//!
//! 1. [`unroll`]: every warp of every CTA as an event list;
//! 2. [`sync`]: vector clocks (happens-before) in one pass, no interleavings;
//! 3. undefined behaviour and rules without a stated consequence ([`ub`]): any reachable one
//!    makes the run `Undefined(rules)`;
//! 4. [`alloc`]: allocation instances, the address slots, the permit, the non-increasing rule,
//!    capacity and blocking, `::2` pairing, leaks;
//! 5. [`tmem`]: the TMEM accesses, their ordering (hb and the pipelines) and the values every
//!    `tcgen05.ld` may deliver ([`mma`] for the exact MMA results).

pub mod alloc;
pub mod d16;
pub mod dp_layout;
pub mod ldst;
pub mod mma;
pub mod mma_open;
pub mod mma_rules;
pub mod mma_scaled;
pub mod mma_sparse;
pub mod symmetric;
pub mod sync;
pub mod tmem;
pub mod ub;
pub mod unroll;

use crate::types::*;
use std::collections::BTreeSet;
use tcgen05_ir::*;

/// Helper to collect rules and notes while judging.
#[derive(Debug, Default)]
pub struct Findings {
    /// Reachable undefined behaviour or unstated-consequence rules.
    pub undefined: BTreeSet<RuleId>,
    /// Notes.
    pub notes: Vec<String>,
    /// May-block sites.
    pub may_block: Vec<BlockSite>,
    /// Must-deadlock sites.
    pub must_deadlock: Vec<BlockSite>,
    /// Rules that decided the run verdict.
    pub run_rules: BTreeSet<RuleId>,
    /// Set when a stage ran past its work bound: the program is not judged.
    pub not_judged: Option<String>,
    /// The steps the TMEM value analysis counted against [`tmem::WORK_BUDGET`] (set when it
    /// ran to its end).
    pub tmem_work: u64,
}

impl Findings {
    /// Adds a note once (a note already there costs no allocation).
    pub fn note<S: AsRef<str> + Into<String>>(&mut self, s: S) {
        if !self.notes.iter().any(|n| n == s.as_ref()) {
            self.notes.push(s.into());
        }
    }
}

/// The whole of `expect` (see the crate documentation).
pub fn expect(p: &Program, opts: &Options) -> Expected {
    let violations = crate::check(p);
    if !violations.is_empty() {
        let mut f = Findings::default();
        let rules: BTreeSet<RuleId> = violations.iter().map(|v| v.rule).collect();
        f.note(
            "the program is statically ill-formed: a target may reject it, and a run is not judged",
        );
        return finish(
            opts,
            violations,
            RunVerdict::Undefined(rules.into_iter().collect()),
            f,
            Vec::new(),
            LeakExpect {
                status: LeakStatus::NoLeak,
                rules: vec![RuleId::AllocFreeBeforeExit],
            },
            Vec::new(),
        );
    }
    if let Some(e) = symmetric::expect(p, opts) {
        return e;
    }
    judge(
        p,
        opts,
        violations,
        &unroll::unroll(p),
        &mut Judged::default(),
    )
}

/// What [`judge`] tells [`symmetric::expect`] besides the expectation.
#[derive(Debug, Default)]
struct Judged {
    /// Allocations executed (what [`AddrCheck::alloc`] numbers).
    insts: u32,
    /// See [`Findings::tmem_work`].
    tmem_work: u64,
    /// Some mbarrier wait gives up (its phase never completes).
    gave_up: bool,
}

/// `expect` of a statically well-formed program (`violations` as `check` found them), from
/// its unrolled events `u`.
fn judge(
    p: &Program,
    opts: &Options,
    violations: Vec<Violation>,
    u: &unroll::Unrolled<'_>,
    judged: &mut Judged,
) -> Expected {
    let mut f = Findings::default();
    let mut obs = Vec::new();
    let mut leak = LeakExpect {
        status: LeakStatus::NoLeak,
        rules: vec![RuleId::AllocFreeBeforeExit],
    };
    let mut assumes = Vec::new();
    let mut assume_sites: Vec<(ObsSite, u32)> = Vec::new();
    // The subset where a fair target may give up (`Expected::may_give_up`).
    let mut overrun_sites: Vec<(ObsSite, u32)> = Vec::new();
    let events: usize = u.warps.iter().map(Vec::len).sum();
    let clock_words = events.saturating_mul(2 * u.warps.len());
    let broken = u.broken.clone().or_else(|| {
        (clock_words > unroll::CLOCK_WORD_BUDGET).then(|| {
            format!(
                "{events} events × {} clock words, more than {} (work bound)",
                2 * u.warps.len(),
                unroll::CLOCK_WORD_BUDGET
            )
        })
    });
    if let Some(why) = broken {
        return not_judged(opts, violations, f, why);
    }
    let clocks = sync::clocks(u, p, None);
    for n in &clocks.notes {
        f.note(n.clone());
    }
    if let Some(m) = &clocks.malformed {
        f.note(format!("outside the tcgen05 chapter: {m}"));
        return finish(
            opts,
            violations,
            RunVerdict::Undefined(Vec::new()),
            f,
            obs,
            leak,
            assumes,
        );
    }
    let scanned = ub::scan(p, u, &mut f);
    let mut a = alloc::analyse(p, u, &clocks, opts, &mut f);
    // TMEM data rules of sparse and block-scaled MMAs (mma_rules.rs), where they may judge.
    if scanned.data_rules {
        mma_rules::data(u, &clocks, &a, &mut f);
    }
    for (g, i) in &clocks.stuck {
        f.must_deadlock.push(block_site(
            u,
            clocks.w,
            *g,
            *i,
            "waits forever at a barrier that some warp never reaches".into(),
        ));
    }
    if !f.undefined.is_empty() {
        let rules: Vec<RuleId> = f.undefined.iter().copied().collect();
        return finish(
            opts,
            violations,
            RunVerdict::Undefined(rules),
            f,
            obs,
            leak,
            assumes,
        );
    }
    if let Some(why) = f.not_judged.take() {
        // What the seeds leave unstated (alloc.rs: the `::2` pairing, a second relinquish),
        // where no stated undefined behaviour decides first.
        return not_judged(opts, violations, f, why);
    }
    // The analysis's leak expectation (taken: nothing reads it after this).
    std::mem::swap(&mut leak, &mut a.leak);
    // With room for the address and mbarrier wait records appended below (one allocation).
    let extra = a.addr_obs.len() + clocks.waits.len();
    let values = tmem::values_reserving(p, u, &clocks, &a, opts, &mut f, extra);
    judged.insts = a.insts.len() as u32;
    judged.tmem_work = f.tmem_work;
    if let Some(why) = f.not_judged.take() {
        return not_judged(opts, violations, f, why);
    }
    if !f.undefined.is_empty() {
        let rules: Vec<RuleId> = f.undefined.iter().copied().collect();
        return finish(
            opts,
            violations,
            RunVerdict::Undefined(rules),
            f,
            obs,
            leak,
            assumes,
        );
    }
    // The ld records (no copy: `obs` is still empty here), then the address and mbarrier
    // wait records, with room reserved once.
    debug_assert!(obs.is_empty());
    obs = values;
    obs.reserve(a.addr_obs.len() + clocks.waits.len());
    obs.append(&mut a.addr_obs);
    // mbarrier wait records.
    for (g, i, r) in &clocks.waits {
        let e = &u.warps[*g][*i];
        let Some(site) = e.site else { continue };
        let key = ObsSite {
            cta: (*g / clocks.w) as u32,
            warp: (*g % clocks.w) as u8,
            site,
        };
        let expect = match r {
            sync::WaitResult::MayComplete | sync::WaitResult::MayOverrun => {
                assume_sites.push((key, e.mask));
                if *r == sync::WaitResult::MayOverrun {
                    overrun_sites.push((key, e.mask));
                }
                ObsExpect::OneOf(vec![
                    vec![observe::MBAR_COMPLETED],
                    vec![observe::MBAR_GAVE_UP],
                ])
            }
            sync::WaitResult::GivesUp => {
                judged.gave_up = true;
                ObsExpect::Exact(vec![observe::MBAR_GAVE_UP])
            }
        };
        obs.push(ObsItem {
            key,
            lanes: e.mask,
            expect: SiteExpect::Same(expect),
            rules: vec![RuleId::CommitArrive, RuleId::CommitTrack],
        });
    }
    // The last record of a site wins, lane by lane (a site in a loop or a function called
    // twice).
    if !obs.is_sorted_by(|x, y| x.key < y.key) {
        // Stable: records of one site stay in execution order.
        obs.sort_by_key(|x| x.key);
        if obs.windows(2).any(|w| w[0].key == w[1].key) {
            obs = merge_sites(obs);
        }
    }
    let verdict = if !f.must_deadlock.is_empty() {
        RunVerdict::MustDeadlock {
            where_: f.must_deadlock.clone(),
        }
    } else if !f.may_block.is_empty() {
        RunVerdict::MayBlock {
            where_: f.may_block.clone(),
        }
    } else {
        RunVerdict::Completes
    };
    // A wait that must give up ends after its loop bound, and a wait whose phase needs an
    // arrive that follows it may time out in the same time: with one in the program, every
    // wait may give up, on a fair target too.
    if clocks
        .waits
        .iter()
        .any(|w| w.2 == sync::WaitResult::GivesUp)
    {
        overrun_sites.clone_from(&assume_sites);
    }
    // The lanes of the waits that may complete, in key order.
    assumes.append(&mut lane_keys(assume_sites));
    let mut e = finish(opts, violations, verdict, f, obs, leak, assumes);
    e.may_give_up = lane_keys(overrun_sites);
    e
}

/// The lanes of `sites` in key order: the sites sorted (stable), the masks of one site
/// joined, then the lanes ascending (a key is a site and a lane).
fn lane_keys(mut sites: Vec<(ObsSite, u32)>) -> Vec<ObsKey> {
    sites.sort_by_key(|(k, _)| *k);
    let mut keys = Vec::with_capacity(sites.iter().map(|(_, x)| x.count_ones() as usize).sum());
    for (i, &(key, _)) in sites.iter().enumerate() {
        if i > 0 && sites[i - 1].0 == key {
            continue;
        }
        let mut all = sites[i..]
            .iter()
            .take_while(|(k, _)| *k == key)
            .fold(0u32, |m, (_, x)| m | x);
        // The lanes ascending (lowest set bit first); a whole warp in one go.
        if all == u32::MAX {
            keys.extend((0..32u8).map(|l| key.lane(l)));
            continue;
        }
        while all != 0 {
            keys.push(key.lane(all.trailing_zeros() as u8));
            all &= all - 1;
        }
    }
    keys
}

/// The expectation of a program the oracle does not judge (three-valued: a comparison skips).
fn not_judged(
    opts: &Options,
    violations: Vec<Violation>,
    mut f: Findings,
    why: String,
) -> Expected {
    f.note(format!("not judged: {why}"));
    f.undefined.clear();
    f.must_deadlock.clear();
    f.may_block.clear();
    f.run_rules.clear();
    finish(
        opts,
        violations,
        RunVerdict::NotJudged(why),
        f,
        Vec::new(),
        LeakExpect {
            status: LeakStatus::MayLeak,
            rules: Vec::new(),
        },
        Vec::new(),
    )
}

fn finish(
    opts: &Options,
    violations: Vec<Violation>,
    verdict: RunVerdict,
    f: Findings,
    obs: Vec<ObsItem>,
    leak: LeakExpect,
    assumes: Vec<ObsKey>,
) -> Expected {
    // Built strictly ascending (see the end of `expect`: sites sorted and distinct, lanes
    // ascending, and a key orders as its site, then its lane); empty on every other path.
    debug_assert!(assumes.windows(2).all(|w| w[0] < w[1]));
    let mut rules: Vec<RuleId> = f.run_rules.into_iter().collect();
    if let RunVerdict::Undefined(r) = &verdict {
        rules.extend(r.iter().copied());
        rules.sort();
        rules.dedup();
    }
    Expected {
        edition: opts.edition,
        violations,
        run: RunExpect { verdict, rules },
        obs,
        leak,
        assumes_completed: assumes,
        may_give_up: Vec::new(),
        notes: f.notes,
    }
}

/// Merges consecutive records of one site (sorted by key, execution order within a key): a
/// later record's lanes replace an earlier one's; lanes only the earlier one has keep its
/// expectation (the merged record then carries both records' rules).
fn merge_sites(obs: Vec<ObsItem>) -> Vec<ObsItem> {
    let mut out: Vec<ObsItem> = Vec::with_capacity(obs.len());
    for item in obs {
        match out.last_mut() {
            Some(prev) if prev.key == item.key => {
                if item.lanes & prev.lanes == prev.lanes {
                    *prev = item;
                } else {
                    let mut each: Vec<ObsExpect> = vec![ObsExpect::Unspecified(Vec::new()); 32];
                    for (l, e) in prev.iter().chain(item.iter()) {
                        each[usize::from(l)] = e.to_owned();
                    }
                    prev.lanes |= item.lanes;
                    prev.expect = SiteExpect::Each(each);
                    for r in item.rules {
                        if !prev.rules.contains(&r) {
                            prev.rules.push(r);
                        }
                    }
                }
            }
            _ => out.push(item),
        }
    }
    out
}

/// The lanes of a mask, as u8.
pub fn lanes(mask: u32) -> impl Iterator<Item = u8> {
    (0..32u8).filter(move |l| mask >> l & 1 == 1)
}

/// A block site for event `i` of global warp `g`.
pub fn block_site(
    u: &unroll::Unrolled<'_>,
    w: usize,
    g: usize,
    i: usize,
    reason: String,
) -> BlockSite {
    let loc = u.warps[g]
        .get(i)
        .and_then(|e| u.location(e))
        .unwrap_or(Location {
            code: Code::Warp((g % w) as u8),
            path: vec![],
        });
    BlockSite {
        cta: (g / w) as u32,
        warp: (g % w) as u8,
        location: loc,
        reason,
    }
}
