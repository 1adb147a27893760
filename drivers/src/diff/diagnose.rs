//! The diagnosis of a value discrepancy: which instruction's behaviour a record outside what
//! its site allows comes from, and the rule of that behaviour (reference §6).

use super::{Allocs, check_lane, first_outside, site_stmt};
use tcgen05_ir::observe::View;
use tcgen05_ir::{FenceKind, Mma, Op, Program, RuleId, Stmt, WaitOp};
use tcgen05_oracle::catalogue;
use tcgen05_oracle::{
    Expected, LaneExpect, ObsExpect, ObsItem, ObsKey, ObsSite, RunVerdict, SiteExpect, WordExpect,
};

/// The instruction whose behaviour differed, when a record outside what its site allows says
/// more than "the observation differs": the rule of that behaviour (filed first in the
/// discrepancy's rules, so the signature is that rule's) and the instruction's form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Diagnosis {
    pub(super) rule: RuleId,
    pub(super) form: String,
    pub(super) why: String,
}

/// Diagnoses a record outside what its lane allows as an ld's `.num` map (see [`Diagnosis`]);
/// `None` leaves it to [`diagnose_edits`], and where that finds nothing either, the
/// observation's own rules are kept (for an ld record, LD-ASYNC first).
///
/// - An ld of `.xN`, N > 1, whose first repetition's registers are each predicted (exact or
///   one of a few values) and as predicted, while every predicted register of the later
///   repetitions differs: the repetitions after the first were not delivered, the behaviour of
///   `.num` (LDST-NUM, §9.7.16.8.3; the register layout of reference §2.6: the registers of
///   repetition `r` follow those of `r - 1`). A record wrong in only some later registers, or
///   wrong in one of the first repetition's, is not that. Where the later registers look
///   undelivered (all hold one value, which the first repetition's do not all hold), a later
///   register predicted to be that value holds it by coincidence, and a first repetition the
///   expectation leaves open (OQ-9) is allowed; with one register per repetition, or a first
///   repetition left open, they must look so. For an `ld.red` the record's
///   registers are followed by `redval` (the min or max across the loaded columns,
///   §9.7.16.8.3), which is computed from them and not looked at.
pub(super) fn diagnose(
    observer: Option<&Stmt>,
    e: Option<LaneExpect<'_>>,
    rec: Option<&[u32]>,
) -> Option<Diagnosis> {
    let Some(Stmt::Tc(op @ Op::Ld { form, nregs, .. })) = observer else {
        return None;
    };
    let (rec, e) = (rec?, e?);
    let reps = form.num.count() as usize;
    let n = usize::from(*nregs);
    if reps < 2 || n % reps != 0 || rec.len() < n || !form.red && rec.len() != n {
        return None;
    }
    let per = n / reps;
    // Per register: predicted (exactly or among a few values), and whether `rec` has it.
    let words: Vec<Option<bool>> = (0..n).map(|i| word_verdict(e, rec, i)).collect();
    let first_right = words[..per].iter().all(|w| *w == Some(true));
    let first_open = !first_right && !words[..per].contains(&Some(false));
    // The later registers look undelivered: all hold one value, which the first repetition
    // does not hold throughout (it was delivered).
    let undelivered =
        rec[per..n].windows(2).all(|w| w[0] == w[1]) && rec[..per].iter().any(|w| *w != rec[per]);
    let later = &words[per..];
    // Every predicted later register differs, but where they all hold the undelivered value,
    // one predicted to be that value (a 0 among the results) holds it by coincidence.
    let later_wrong = later.contains(&Some(false)) && (undelivered || !later.contains(&Some(true)));
    if !(first_right || first_open) || !later_wrong {
        return None;
    }
    // With one register per repetition, one right word is weak evidence (small-integer values
    // often coincide, as another lane quarter's record may with this one's first word), and a
    // first repetition the expectation leaves open is none: the later registers must then
    // look undelivered.
    if (per == 1 || first_open) && !undelivered {
        return None;
    }
    // A first repetition left open gives no evidence of its own: "one value throughout" must
    // then be seen in at least two later registers (with one, any wrong word would do).
    if first_open && n - per < 2 {
        return None;
    }
    Some(Diagnosis {
        rule: RuleId::LdstNum,
        form: op.form().opcode(),
        why: format!(
            "the first of {reps} repetitions ({per} register(s)) is as allowed, a later one is \
             not: the ld's .num repetitions differ (LDST-NUM, §9.7.16.8.3)"
        ),
    })
}

/// Diagnoses an ld record as the warp's lane quarter computed wrong (LDST-LANE-QUARTER,
/// §9.7.16.8.1: warp `w` of a warpgroup accesses lanes `32·(w mod 4)` to `32·(w mod 4) + 31`):
/// an ld equal to this one but for its address's lane field (each warp addresses its own
/// quarter) among the sites of the warp of the next quarter is expected to record exactly this in this lane, word for word (every word
/// predicted), while this warp's own expectation does not allow it.
pub(super) fn diagnose_quarter(
    p: &Program,
    expected: &Expected,
    key: &ObsKey,
    rec: Option<&[u32]>,
) -> Option<Diagnosis> {
    let rec = rec?;
    let stmt @ Stmt::Tc(op @ Op::Ld { .. }) = site_stmt(p, key)? else {
        return None;
    };
    let next = if key.warp % 4 == 3 {
        key.warp - 3
    } else {
        key.warp + 1
    };
    if next >= p.launch.warps_per_cta {
        return None;
    }
    // The same ld (equal statements) among the next warp's sites, predicting the record.
    let predicts = |lane: LaneExpect<'_>| {
        let whole = matches!(lane, LaneExpect::Is(ObsExpect::OneOf(_)));
        !matches!(lane, LaneExpect::Is(ObsExpect::Unspecified(_)))
            && check_lane(lane, Some(rec), &Allocs::default()).is_none()
            && (whole || (0..rec.len()).all(|i| word_verdict(lane, rec, i) == Some(true)))
    };
    let found = expected.obs.iter().any(|item| {
        let other = item.key.lane(key.lane);
        other.cta == key.cta
            && other.warp == next
            && site_stmt(p, &other).is_some_and(|s| same_ld(s, stmt))
            && item.lane(key.lane).is_some_and(predicts)
    });
    if !found {
        return None;
    }
    let rule = RuleId::LdstLaneQuarter;
    Some(Diagnosis {
        rule,
        form: op.form().opcode(),
        why: format!(
            "the record is what the same ld in warp {next} (the next lane quarter) is expected \
             to record ({}: {} §{})",
            rule.as_str(),
            catalogue::row(rule).rule,
            catalogue::section(rule)
        ),
    })
}

/// Whether `a` and `b` are the same ld but for the lane field of the address (each warp
/// addresses its own lane quarter).
fn same_ld(a: &Stmt, b: &Stmt) -> bool {
    match (a, b) {
        (Stmt::Tc(Op::Ld { taddr: ta, .. }), Stmt::Tc(Op::Ld { taddr: tb, .. })) => {
            let mut a = a.clone();
            if let Stmt::Tc(Op::Ld { taddr, .. }) = &mut a {
                taddr.lane = tb.lane;
            }
            ta.base == tb.base && a == *b
        }
        _ => false,
    }
}

/// One way the program itself can have a behaviour a wrong record may come from: the program
/// so edited, the form of the instruction whose behaviour it is, and the edit in words.
struct Edit {
    program: Program,
    form: String,
    what: String,
}

/// A behaviour of reference §6 a wrong record can come from: the rule it breaks and the edits
/// of a program that give it (one per instruction, or pair of instructions, it applies to, and
/// one where every instruction it applies to behaves so).
struct Behaviour {
    rule: RuleId,
    /// Whether it orders a read against a write (a commit, wait, barrier or fence), rather
    /// than deciding an MMA's value or the order of two MMAs' writes: only such a behaviour accounts for a read of
    /// cells no write is ordered before ([`reads_unwritten`]). An MMA whose D comes to depend
    /// on never-written cells (accumulating onto them) leaves D open whatever it computed, so
    /// it would account for every record of D, also the one a read that ran before the MMA
    /// gives.
    orders: bool,
    edits: fn(&Program) -> Vec<Edit>,
}

/// The behaviours [`diagnose_edits`] tries, in order: an MMA's result (an operand read
/// wrong), then the orderings that decide which write an ld sees, the thread's own first (the
/// MMA pipeline, commit, wait), then those across threads (the barrier that orders them, then
/// the fences around it, which order nothing without it).
///
/// - MMA-ENABLE-D: enable-input-d read inverted, or every MMA accumulating (PTX ISA
///   §9.7.16.10.9);
/// - MMA-SCALE-D-SEM: scale-input-d ignored (§9.7.16.10.9.1);
/// - MMA-DOL-SEM: disable-output-lane read inverted (§9.7.16.10.9);
/// - MCM-PIPE-MMA-MMA: two MMAs of one thread on one accumulator completing in the other
///   order (§9.7.16.6.2);
/// - COMMIT-TRACK: a commit signalling before every operation it tracks has completed (as if
///   issued before the first, or a later, of them; §9.7.16.12.1);
/// - WAIT-SCOPE: a `tcgen05.wait` returning before the thread's loads or stores complete
///   (§9.7.16.8.5);
/// - MCM-XTHREAD: a `barrier.sync` or cluster barrier not waiting for the other threads
///   (§9.7.16.6.3-4);
/// - FENCE-BEFORE / FENCE-AFTER: a `tcgen05.fence` ordering nothing (§9.7.16.11.1).
const BEHAVIOURS: [Behaviour; 9] = [
    Behaviour {
        rule: RuleId::MmaEnableD,
        orders: false,
        edits: |p| {
            let mut v = mma_edits(p, |m| {
                m.enable_input_d = !m.enable_input_d;
                Some(format!("enable-input-d read as {}", m.enable_input_d))
            });
            v.extend(every_mma(
                p,
                "accumulating whatever enable-input-d says",
                |m| !std::mem::replace(&mut m.enable_input_d, true),
            ));
            v
        },
    },
    Behaviour {
        rule: RuleId::MmaScaleDSem,
        orders: false,
        edits: |p| {
            let mut v = mma_edits(p, |m| {
                let s = m.scale_input_d.take().filter(|s| *s != 0)?;
                Some(format!("scale-input-d {s} ignored"))
            });
            v.extend(every_mma(p, "ignoring scale-input-d", |m| {
                m.scale_input_d.take().is_some_and(|s| s != 0)
            }));
            v
        },
    },
    Behaviour {
        rule: RuleId::MmaDolSem,
        orders: false,
        edits: |p| {
            let mut v = mma_edits(p, |m| {
                invert_dol(m).then(|| "disable-output-lane read inverted".into())
            });
            v.extend(every_mma(
                p,
                "reading disable-output-lane inverted",
                invert_dol,
            ));
            v
        },
    },
    Behaviour {
        rule: RuleId::McmPipeMmaMma,
        orders: false,
        edits: mma_swaps,
    },
    Behaviour {
        rule: RuleId::CommitTrack,
        orders: true,
        edits: commit_moves,
    },
    Behaviour {
        rule: RuleId::WaitScope,
        orders: true,
        edits: |p| {
            let mut v = Vec::new();
            for kind in [WaitOp::Ld, WaitOp::St] {
                v.extend(removals(p, &|s| is_wait(s, kind), "returning at once"));
            }
            v.extend(late_stores(p));
            v
        },
    },
    Behaviour {
        rule: RuleId::McmXthread,
        orders: true,
        edits: barrier_removals,
    },
    Behaviour {
        rule: RuleId::FenceBefore,
        orders: true,
        edits: |p| {
            removals(
                p,
                &|s| {
                    matches!(
                        s,
                        Stmt::Tc(Op::Fence {
                            kind: FenceKind::BeforeThreadSync
                        })
                    )
                },
                "ordering nothing",
            )
        },
    },
    Behaviour {
        rule: RuleId::FenceAfter,
        orders: true,
        edits: |p| {
            removals(
                p,
                &|s| {
                    matches!(
                        s,
                        Stmt::Tc(Op::Fence {
                            kind: FenceKind::AfterThreadSync
                        })
                    )
                },
                "ordering nothing",
            )
        },
    },
];

/// Inverts the disable-output-lane mask of `m`; whether it has one.
fn invert_dol(m: &mut Mma) -> bool {
    match &mut m.disable_output_lane {
        Some(v) => {
            v.iter_mut().for_each(|w| *w = !*w);
            true
        }
        None => false,
    }
}

/// How well an edited program accounts for a run, best first: its expectation allows every
/// record and predicts every wrong word of the discrepant record ([`explains`]), then it only
/// predicts them; among equals, the one that leaves less unspecified (a more specific
/// account).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Fit {
    /// How the edit accounts for the differing words: 0, it predicts them; 1, it leaves them
    /// open as reads of cells no write is ordered before ([`reads_unwritten`]) and a word of
    /// the read is as the original predicts (the ld delivered its registers); 2, so, but no
    /// word of the read is as predicted.
    unwritten: u8,
    /// 0: allows every record; 1: only explains the discrepant one.
    tier: u8,
    unspecified: u32,
}

/// Diagnoses a wrong record as the behaviour of one instruction: among the edits of
/// [`BEHAVIOURS`] whose edited program is well-formed and has a defined run (`Completes` or
/// `MayBlock`), the one whose expectation best accounts for the run ([`Fit`]; the first in
/// order among equals). The oracle's expectation of the edited program is the independent
/// account of what that wrong behaviour produces; a record it accounts for is filed under that
/// behaviour's rule. An address record (an observation check, not a value) is diagnosed by
/// [`diagnose_address`] instead.
pub(super) fn diagnose_edits(
    p: &Program,
    view: &View<'_>,
    expected: &Expected,
    key: &ObsKey,
    rec: Option<&[u32]>,
) -> Option<Diagnosis> {
    let rec = rec?;
    let orig_item = expected.site(&key.site_key())?;
    let orig = orig_item.lane(key.lane);
    if let Some(LaneExpect::Is(ObsExpect::Check(c))) = orig {
        return diagnose_address(p, key, c.alloc);
    }
    let mut best: Option<(Fit, RuleId, Edit)> = None;
    for b in &BEHAVIOURS {
        for edit in (b.edits)(p) {
            let e = tcgen05_oracle::expect(&edit.program);
            if !matches!(
                e.run.verdict,
                RunVerdict::Completes | RunVerdict::MayBlock { .. }
            ) || !e.violations.is_empty()
            {
                continue;
            }
            let Some((item, lane)) = e.lookup(key) else {
                continue;
            };
            let unwritten = if explains(orig, lane, rec) {
                0
            } else {
                // With no word of the read as predicted, registers a `wait::ld` let be read
                // before the ld delivered them give the same record (WAIT-SCOPE): only that
                // rule's own edits may account for it then.
                match b
                    .orders
                    .then(|| reads_unwritten(view, expected, orig_item, &e, item, key))
                    .flatten()
                {
                    Some(true) => 1,
                    Some(false) if b.rule == RuleId::WaitScope => 2,
                    _ => continue,
                }
            };
            let tier = u8::from(first_outside(view.layout, view, &e).is_some());
            // A record open words account for is evidence only where the edit accounts for
            // the whole run (another behaviour reading unwritten cells, a lane quarter
            // computed wrong, differs in records the edit leaves as they were).
            if unwritten != 0 && tier != 0 {
                continue;
            }
            let fit = Fit {
                unwritten,
                tier,
                unspecified: unspecified_words(&e),
            };
            if best.as_ref().is_none_or(|(f, _, _)| fit < *f) {
                let done = fit.unwritten == 0 && fit.tier == 0 && fit.unspecified == 0;
                best = Some((fit, b.rule, edit));
                if done {
                    break;
                }
            }
        }
        if best
            .as_ref()
            .is_some_and(|(f, _, _)| f.unwritten == 0 && f.tier == 0 && f.unspecified == 0)
        {
            break;
        }
    }
    let (fit, rule, edit) = best?;
    Some(Diagnosis {
        rule,
        why: format!(
            "{} is what the program gives with {} {}{} ({}: {} §{})",
            if fit.tier == 0 {
                "every record"
            } else {
                "the record"
            },
            edit.form,
            edit.what,
            match fit.unwritten {
                0 => "",
                1 => {
                    ": the words that differ are those it reads from TMEM cells no write is \
                     ordered before there (left open, OQ-9), every other word is as it \
                     predicts; writes that stored those words wrong (an st or mma whose \
                     result is wrong there) give the same record where nothing reads the \
                     cells again"
                }
                _ => {
                    ": the words that differ are those it reads from TMEM cells no write is \
                     ordered before there (left open, OQ-9), every other word is as it \
                     predicts; no word of the read is as first predicted, so a wait::ld \
                     returning before the ld's registers are delivered gives the same record, \
                     and so do writes that stored those words wrong where nothing reads the \
                     cells again"
                }
            },
            rule.as_str(),
            catalogue::row(rule).rule,
            catalogue::section(rule)
        ),
        form: edit.form,
    })
}

/// Diagnoses an address record outside what its lane allows (the observation check of the
/// address an alloc stored, ALLOC-ADDR-STORE, §9.7.16.7.1; `alloc`: the allocation it
/// checks) as a barrier that let a reading thread through before the allocating warp stored
/// the address. The check compares the records of one allocation, so the wrong read may be
/// another record of it: the first barrier of [`barrier_removals`] without which the oracle
/// leaves one of those reads open (it races with the store, ALLOC-STORE-WEAK, or sees no
/// store, ALLOC-ADDR-STORE) names the behaviour, MCM-XTHREAD (§9.7.16.6.3-4). A record no
/// such edit opens stays under ALLOC-ADDR-STORE.
fn diagnose_address(p: &Program, key: &ObsKey, alloc: u32) -> Option<Diagnosis> {
    let orig = tcgen05_oracle::expect(p);
    let reads: Vec<ObsSite> = orig
        .obs
        .iter()
        .filter(|item| {
            item.key.cta == key.cta
                && matches!(&item.expect,
                    SiteExpect::Same(ObsExpect::Check(c)) if c.alloc == alloc)
        })
        .map(|item| item.key)
        .collect();
    let edit = barrier_removals(p).into_iter().find(|edit| {
        let e = tcgen05_oracle::expect(&edit.program);
        e.violations.is_empty()
            && reads.iter().any(|k| {
                e.site(k).is_some_and(|item| {
                    matches!(item.expect, SiteExpect::Same(ObsExpect::Unspecified(_)))
                })
            })
    })?;
    let rule = RuleId::McmXthread;
    Some(Diagnosis {
        rule,
        why: format!(
            "the address slot is read before the alloc's store of it reaches the reading \
             thread when {} is {} ({}: {} §{})",
            edit.form,
            edit.what,
            rule.as_str(),
            catalogue::row(rule).rule,
            catalogue::section(rule)
        ),
        form: edit.form,
    })
}

/// The start of the oracle's note that an ld reads TMEM cells no write is ordered before
/// (OQ-9). An MMA accumulating onto such cells is noted otherwise (MMA-ENABLE-D, its D not
/// known) and is no such account: its words are open whatever the MMA computed, so every
/// record of a read of D would fit it.
const UNWRITTEN_NOTE: &str = "OQ-9: an ld reads TMEM cells that no write is ordered before";

/// Whether the expectation `e` of an edited program (`item`: its expectation of the
/// discrepant record's site) accounts for the site's records as reads of cells no write is
/// ordered before (OQ-9 leaves them open, so no value predicts them): `e` notes such reads
/// ([`UNWRITTEN_NOTE`]) and no other open question the original expectation `orig` does not
/// note, nothing of the site races there (its only rule is LD-ASYNC), and in
/// every recorded lane of the site the words `e` leaves open are exactly the words that differ
/// from the original expectation `orig_item` (each one it predicts, none as predicted), while
/// every other word is as `e` allows, each one the original says is wrong as `e` predicts it.
/// The discrepant record (`key`) has such a word, and no differing word holds a value the
/// original predicts for some word of the read: values the program wrote, in the wrong cells,
/// are a write's map slipping (an st's register layout), not cells no write reached. A wrong value in a few words (an MMA's
/// result off in one element) is not accounted for so: the words of the same read that hold
/// what the original predicts show that the read saw the writes. `Some(delivered)` where it
/// accounts so: whether a word of the discrepant record is as the original predicts.
fn reads_unwritten(
    view: &View<'_>,
    orig: &Expected,
    orig_item: &ObsItem,
    e: &Expected,
    item: &ObsItem,
    key: &ObsKey,
) -> Option<bool> {
    // The edit opens words for no other reason (the notes are of the whole program: a note
    // of another open question the edit adds may be this read's).
    let added = || e.notes.iter().filter(|n| !orig.notes.contains(n));
    if !item.rules.iter().all(|r| *r == RuleId::LdAsync)
        || !e.notes.iter().any(|n| n.starts_with(UNWRITTEN_NOTE))
        || !added().all(|n| n.starts_with(UNWRITTEN_NOTE))
    {
        return None;
    }
    let site = super::site_for(view.layout, &item.key)?;
    let (valid, data, n) = super::site_words(view, &item.key, &site)?;
    // What the program writes for this read: a differing word that holds one of these values
    // is a write landing in the wrong cell (an st's register map slipping), not a cell no
    // write reached.
    let written = predicted_values(orig_item);
    let mut found = false;
    let mut right = false;
    for (l, lane) in item.iter() {
        let li = usize::from(l);
        if valid[li] == 0 {
            continue;
        }
        let rec = &data[li * n..(li + 1) * n];
        let orig = orig_item.lane(l)?;
        if check_lane(lane, Some(rec), &Allocs::default()).is_some() {
            return None;
        }
        for i in 0..n {
            let was = word_verdict(orig, rec, i);
            if super::not_emulated::word_unspecified(&lane, i) {
                match was {
                    Some(true) => return None,
                    Some(false) if written.contains(&rec[i]) => return None,
                    Some(false) => found |= l == key.lane,
                    None => {}
                }
            } else if was == Some(false)
                && !matches!(lane, LaneExpect::Is(ObsExpect::OneOf(_)))
                && word_verdict(lane, rec, i) != Some(true)
            {
                return None;
            } else if was == Some(true) && l == key.lane {
                right = true;
            }
        }
    }
    found.then_some(right)
}

/// Every value `item` predicts for a word of some lane (exactly or as one of a few).
fn predicted_values(item: &ObsItem) -> std::collections::HashSet<u32> {
    let mut v = std::collections::HashSet::new();
    for (_, lane) in item.iter() {
        if let Some(w) = lane.exact() {
            v.extend(w.iter());
        } else if let LaneExpect::Is(ObsExpect::PerWord(ws)) = lane {
            for w in ws {
                match w {
                    WordExpect::Exact(x) => {
                        v.insert(*x);
                    }
                    WordExpect::OneOf(xs) => v.extend(xs.iter()),
                    _ => {}
                }
            }
        }
    }
    v
}

/// The data words `e` leaves unspecified (a lane unspecified as a whole counts 32).
fn unspecified_words(e: &Expected) -> u32 {
    let mut n = 0;
    for item in &e.obs {
        for (_, lane) in item.iter() {
            n += match lane {
                LaneExpect::Is(ObsExpect::Unspecified(_)) => 32,
                LaneExpect::Is(ObsExpect::PerWord(ws)) => ws
                    .iter()
                    .filter(|w| matches!(w, WordExpect::Unspecified))
                    .count() as u32,
                _ => 0,
            };
        }
    }
    n
}

/// Whether expectation `e` (of an edited program) explains `rec`: it allows the record, is
/// not unspecified, and predicts every word of it that the original expectation `orig` says
/// is wrong (a word an edit leaves unspecified explains nothing).
fn explains(orig: Option<LaneExpect<'_>>, e: LaneExpect<'_>, rec: &[u32]) -> bool {
    if matches!(e, LaneExpect::Is(ObsExpect::Unspecified(_)))
        || check_lane(e, Some(rec), &Allocs::default()).is_some()
    {
        return false;
    }
    // Allowed as one of whole vectors: every word is predicted.
    let whole = matches!(e, LaneExpect::Is(ObsExpect::OneOf(_)));
    (0..rec.len()).all(|i| {
        whole
            || orig.and_then(|o| word_verdict(o, rec, i)) != Some(false)
            || word_verdict(e, rec, i) == Some(true)
    })
}

/// Applies `f` to the `n`-th statement list of `p` (pre-order: each warp's code, then each
/// function's body; a list before the bodies of its `If` and `Loop` statements); false when
/// `p` has fewer lists.
fn with_list(p: &mut Program, n: usize, f: &mut dyn FnMut(&mut Vec<Stmt>)) -> bool {
    fn go(b: &mut Vec<Stmt>, k: &mut usize, n: usize, f: &mut dyn FnMut(&mut Vec<Stmt>)) -> bool {
        if *k == n {
            f(b);
            return true;
        }
        *k += 1;
        for s in b.iter_mut() {
            let hit = match s {
                Stmt::If { then, els, .. } => go(then, k, n, f) || go(els, k, n, f),
                Stmt::Loop { body, .. } => go(body, k, n, f),
                _ => false,
            };
            if hit {
                return true;
            }
        }
        false
    }
    let mut k = 0;
    let bodies = p
        .warps
        .iter_mut()
        .chain(p.funcs.iter_mut().map(|f| &mut f.body));
    for b in bodies {
        if go(b, &mut k, n, f) {
            return true;
        }
    }
    false
}

/// A list variant: the new statements, the form of the instruction edited, the edit in words.
type Variant = (Vec<Stmt>, String, String);

/// The programs `variants` makes of `p` by changing one statement list (each variant of each
/// list), then the one program where every list is changed by `every` (`None`: that list
/// stays; the program is left out where no list changed).
fn list_edits(
    p: &Program,
    variants: &dyn Fn(&[Stmt]) -> Vec<Variant>,
    every: &dyn Fn(&[Stmt]) -> Option<Variant>,
) -> Vec<Edit> {
    let mut out = Vec::new();
    let mut all = p.clone();
    let mut first: Option<(String, String)> = None;
    let mut n = 0;
    loop {
        let mut list = Vec::new();
        if !with_list(&mut all, n, &mut |l| list = l.clone()) {
            break;
        }
        for (new, form, what) in variants(&list) {
            let mut program = p.clone();
            with_list(&mut program, n, &mut |l| *l = new.clone());
            out.push(Edit {
                program,
                form,
                what,
            });
        }
        if let Some((new, form, what)) = every(&list) {
            with_list(&mut all, n, &mut |l| *l = new.clone());
            first.get_or_insert((form, what));
        }
        n += 1;
    }
    if let Some((form, what)) = first {
        out.push(Edit {
            program: all,
            form,
            what: format!("{what}, as every such instruction does"),
        });
    }
    out
}

/// Each MMA of `p` edited by `f` (`None`: the edit does not apply to it).
fn mma_edits(p: &Program, f: fn(&mut Mma) -> Option<String>) -> Vec<Edit> {
    list_edits(
        p,
        &|list| {
            let mut v = Vec::new();
            for (i, s) in list.iter().enumerate() {
                let Stmt::Tc(op @ Op::Mma(m)) = s else {
                    continue;
                };
                let mut m = m.clone();
                if let Some(what) = f(&mut m) {
                    let mut new = list.to_vec();
                    new[i] = Stmt::Tc(Op::Mma(m));
                    v.push((new, op.form().opcode(), what));
                }
            }
            v
        },
        &|_| None,
    )
}

/// The program with every MMA edited by `f` (whether it changed that MMA), as one edit; none
/// where `f` changed nothing.
fn every_mma(p: &Program, what: &str, f: fn(&mut Mma) -> bool) -> Vec<Edit> {
    list_edits(p, &|_| Vec::new(), &|list| {
        let mut new = list.to_vec();
        let mut form = None;
        for s in &mut new {
            if let Stmt::Tc(Op::Mma(m)) = s
                && f(m)
            {
                form.get_or_insert_with(|| Op::Mma(m.clone()).form().opcode());
            }
        }
        form.map(|form| (new, form, what.to_string()))
    })
}

/// Each MMA swapped with the next MMA of its statement list on the same accumulator.
fn mma_swaps(p: &Program) -> Vec<Edit> {
    list_edits(
        p,
        &|list| {
            let mut v = Vec::new();
            for (i, s) in list.iter().enumerate() {
                let Stmt::Tc(op @ Op::Mma(m)) = s else {
                    continue;
                };
                let next = list
                    .iter()
                    .enumerate()
                    .skip(i + 1)
                    .find_map(|(j, t)| match t {
                        Stmt::Tc(Op::Mma(n)) if n.d == m.d => Some(j),
                        _ => None,
                    });
                if let Some(j) = next {
                    let mut new = list.to_vec();
                    new.swap(i, j);
                    v.push((
                        new,
                        op.form().opcode(),
                        "completing after the next mma on its accumulator".to_string(),
                    ));
                }
            }
            v
        },
        &|_| None,
    )
}

/// The MMAs, copies and shifts a commit at `i` of `list` tracks there (those after the list's
/// previous commit), by index.
fn tracked(list: &[Stmt], i: usize) -> Vec<usize> {
    let prev = list[..i]
        .iter()
        .rposition(|s| matches!(s, Stmt::Tc(Op::Commit { .. })))
        .map_or(0, |c| c + 1);
    (prev..i)
        .filter(|&t| {
            matches!(
                list[t],
                Stmt::Tc(Op::Mma(_) | Op::Cp { .. } | Op::Shift { .. })
            )
        })
        .collect()
}

/// `list` with the commit at `i` moved up to index `t`.
fn moved(list: &[Stmt], i: usize, t: usize) -> Vec<Stmt> {
    let mut new = list.to_vec();
    let c = new.remove(i);
    new.insert(t, c);
    new
}

/// Each commit moved up before one of the operations it tracks ([`tracked`]): the commit then
/// signals before that operation and the later ones complete; then every commit moved before
/// its first tracked operation (signalling at once), and every commit moved before its second
/// (tracking only the first).
fn commit_moves(p: &Program) -> Vec<Edit> {
    let mut out = list_edits(
        p,
        &|list| {
            let mut v = Vec::new();
            for (i, s) in list.iter().enumerate() {
                let Stmt::Tc(op @ Op::Commit { .. }) = s else {
                    continue;
                };
                for t in tracked(list, i) {
                    let Stmt::Tc(before) = &list[t] else {
                        continue;
                    };
                    v.push((
                        moved(list, i, t),
                        op.form().opcode(),
                        format!(
                            "signalling before {} and what follows it complete",
                            before.form().opcode()
                        ),
                    ));
                }
            }
            v
        },
        &|_| None,
    );
    for (k, what) in [
        (0, "signalling before what it tracks completes"),
        (1, "tracking only the first operation"),
    ] {
        out.extend(list_edits(p, &|_| Vec::new(), &|list| {
            let mut new = list.to_vec();
            let mut form = None;
            let mut i = 0;
            while i < new.len() {
                if let Stmt::Tc(op @ Op::Commit { .. }) = &new[i]
                    && let Some(&t) = tracked(&new, i).get(k)
                {
                    form.get_or_insert_with(|| op.form().opcode());
                    new = moved(&new, i, t);
                }
                i += 1;
            }
            form.map(|form| (new, form, what.to_string()))
        }));
    }
    out
}

/// Whether `s` is a `tcgen05.wait` of kind `kind`.
fn is_wait(s: &Stmt, kind: WaitOp) -> bool {
    matches!(s, Stmt::Tc(Op::Wait { form }) if form.op == kind)
}

/// Each `tcgen05.wait::st` returning before the stores it waits for reach TMEM, so that the
/// next ld of the thread reads the cells as they were before them (WAIT-SCOPE,
/// §9.7.16.8.5): the sts of the list between the previous `wait::st` and this one moved to
/// after that ld and the `wait::ld` that follows it (after the wait, so the moved st does not
/// race with the ld's read, MCM-LD-WAR); then every `wait::st` so.
fn late_stores(p: &Program) -> Vec<Edit> {
    list_edits(
        p,
        &|list| {
            (0..list.len())
                .filter_map(|i| delay_stores(list, i))
                .collect()
        },
        &|list| {
            let mut new = list.to_vec();
            let mut first = None;
            for i in (0..list.len()).rev() {
                if let Some(v) = delay_stores(&new, i) {
                    new = v.0;
                    first = Some((v.1, v.2));
                }
            }
            first.map(|(form, what)| (new, form, what))
        },
    )
}

/// `list` with the sts the `wait::st` at `i` waits for (those after the previous
/// `wait::st`) moved after the next ld and its `wait::ld` (see [`late_stores`]); `None` where
/// `i` is no `wait::st`, or it waits for no st, or no ld follows it.
fn delay_stores(list: &[Stmt], i: usize) -> Option<Variant> {
    let Stmt::Tc(wait) = &list[i] else {
        return None;
    };
    if !is_wait(&list[i], WaitOp::St) {
        return None;
    }
    let from = list[..i]
        .iter()
        .rposition(|s| is_wait(s, WaitOp::St))
        .map_or(0, |w| w + 1);
    let stores: Vec<usize> = (from..i)
        .filter(|&t| matches!(list[t], Stmt::Tc(Op::St { .. })))
        .collect();
    let ld = (i + 1..list.len()).find(|&t| matches!(list[t], Stmt::Tc(Op::Ld { .. })))?;
    let Stmt::Tc(st) = &list[*stores.first()?] else {
        return None;
    };
    let at = (ld + 1..list.len())
        .take_while(|&t| !matches!(list[t], Stmt::Tc(Op::Ld { .. })))
        .find(|&t| is_wait(&list[t], WaitOp::Ld))
        .map_or(ld + 1, |t| t + 1);
    let mut new: Vec<Stmt> = Vec::with_capacity(list.len());
    for (t, s) in list.iter().enumerate() {
        if !stores.contains(&t) {
            new.push(s.clone());
        }
        if t + 1 == at {
            new.extend(stores.iter().map(|&k| list[k].clone()));
        }
    }
    Some((
        new,
        wait.form().opcode(),
        format!(
            "returning before {} reaches TMEM (the next ld reads the cells as they were \
             before it)",
            st.form().opcode()
        ),
    ))
}

/// Each tcgen05 statement `hit` selects removed, then every one of them (its form; `what`:
/// the behaviour in words).
fn removals(p: &Program, hit: &dyn Fn(&Stmt) -> bool, what: &str) -> Vec<Edit> {
    list_edits(
        p,
        &|list| {
            let mut v = Vec::new();
            for (i, s) in list.iter().enumerate() {
                let Stmt::Tc(op) = s else { continue };
                if hit(s) {
                    let mut new = list.to_vec();
                    new.remove(i);
                    v.push((new, op.form().opcode(), what.to_string()));
                }
            }
            v
        },
        &|list| {
            let form = list.iter().find_map(|s| match s {
                Stmt::Tc(op) if hit(s) => Some(op.form().opcode()),
                _ => None,
            })?;
            let new = list.iter().filter(|s| !hit(s)).cloned().collect();
            Some((new, form, what.to_string()))
        },
    )
}

/// The `j`-th `barrier.sync` of every warp's code and function body removed (each `j`), and
/// likewise the `j`-th cluster barrier (its arrive and its wait): the barrier lets every
/// thread through at once; then every barrier of the kind removed.
fn barrier_removals(p: &Program) -> Vec<Edit> {
    /// Removes the `j`-th statement `hit` selects in `b` (pre-order; every one for `None`);
    /// whether there was one.
    fn remove(b: &mut Vec<Stmt>, j: Option<usize>, k: &mut usize, hit: fn(&Stmt) -> bool) -> bool {
        let mut any = false;
        let mut i = 0;
        while i < b.len() {
            if hit(&b[i]) {
                if j.is_none_or(|j| *k == j) {
                    b.remove(i);
                    if j.is_some() {
                        return true;
                    }
                    any = true;
                    continue;
                }
                *k += 1;
            }
            let found = match &mut b[i] {
                Stmt::If { then, els, .. } => {
                    let t = remove(then, j, k, hit);
                    // Every one (`None`) is removed from both branches.
                    if t && j.is_some() {
                        true
                    } else {
                        remove(els, j, k, hit) || t
                    }
                }
                Stmt::Loop { body, .. } => remove(body, j, k, hit),
                _ => false,
            };
            if found && j.is_some() {
                return true;
            }
            any |= found;
            i += 1;
        }
        any
    }
    type Hits = &'static [fn(&Stmt) -> bool];
    let kinds: [(&str, Hits); 2] = [
        ("barrier.sync", &[|s| matches!(s, Stmt::BarCta)]),
        (
            "barrier.cluster.wait",
            &[
                |s| matches!(s, Stmt::ClusterArrive { .. }),
                |s| matches!(s, Stmt::ClusterWait),
            ],
        ),
    ];
    let mut out = Vec::new();
    for (form, hits) in kinds {
        let mut j = Some(0);
        loop {
            let mut q = p.clone();
            let mut any = false;
            let bodies = q
                .warps
                .iter_mut()
                .chain(q.funcs.iter_mut().map(|f| &mut f.body));
            for b in bodies {
                for hit in hits {
                    any |= remove(b, j, &mut 0, *hit);
                }
            }
            if !any {
                if j.is_none() {
                    break;
                }
                // Past the last `j`: every barrier at once, then the next kind.
                j = None;
                continue;
            }
            out.push(Edit {
                program: q,
                form: form.to_string(),
                what: match j {
                    Some(_) => "not waiting for the other threads".to_string(),
                    None => "not waiting for the other threads, as every one does".to_string(),
                },
            });
            match j {
                Some(k) => j = Some(k + 1),
                None => break,
            }
        }
    }
    out
}

/// Whether word `i` of `rec` is as `e` predicts it: `None` when `e` does not predict that
/// word on its own (unspecified, or several whole vectors allowed).
fn word_verdict(e: LaneExpect<'_>, rec: &[u32], i: usize) -> Option<bool> {
    let got = *rec.get(i)?;
    let e = match e {
        LaneExpect::Exact(v) => return v.get(i).map(|w| *w == got),
        LaneExpect::Is(e) => e,
    };
    match e {
        ObsExpect::Exact(v) => v.get(i).map(|w| *w == got),
        ObsExpect::OneOf(vs) if vs.len() == 1 => vs[0].get(i).map(|w| *w == got),
        ObsExpect::PerWord(ws) => match ws.get(i)? {
            WordExpect::Unspecified => None,
            w => Some(w.allows(got)),
        },
        _ => None,
    }
}
