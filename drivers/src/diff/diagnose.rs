//! The diagnosis of a value discrepancy: which instruction's behaviour a record outside what
//! its site allows comes from, and the rule of that behaviour (reference §6).

use super::{Allocs, check_lane};
use tcgen05_ir::{Op, Program, RuleId, Stmt};
use tcgen05_oracle::catalogue;
use tcgen05_oracle::{LaneExpect, ObsExpect, ObsKey, RunVerdict, WordExpect};

/// The instruction whose behaviour differed, when a record outside what its site allows says
/// more than "the observation differs": the rule of that behaviour (filed first in the
/// discrepancy's rules, so the signature is that rule's) and the instruction's form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Diagnosis {
    pub(super) rule: RuleId,
    pub(super) form: String,
    pub(super) why: String,
}

/// Diagnoses a record outside what its lane allows (see [`Diagnosis`]); `None` keeps the
/// observation's own rules (for an ld record, LD-ASYNC first: the ld's result is the one that
/// differs).
///
/// - An ld of `.xN`, N > 1, whose first repetition's registers are each predicted (exact or
///   one of a few values) and as predicted, while every predicted register of the later
///   repetitions differs: the repetitions after the first were not delivered, the behaviour of
///   `.num` (LDST-NUM, §9.7.16.8.3; the register layout of reference §2.6: the registers of
///   repetition `r` follow those of `r - 1`). A record wrong in only some later registers, or
///   right in none of the first repetition's, is not that.
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
    if form.red || reps < 2 || n % reps != 0 || rec.len() != n {
        return None;
    }
    let per = n / reps;
    // Per register: predicted (exactly or among a few values), and whether `rec` has it.
    let words: Vec<Option<bool>> = (0..n).map(|i| word_verdict(e, rec, i)).collect();
    let first_right = words[..per].iter().all(|w| *w == Some(true));
    let later = &words[per..];
    let later_wrong = later.contains(&Some(false)) && !later.contains(&Some(true));
    if !(first_right && later_wrong) {
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

/// An edit of one MMA; whether it changed anything.
type MmaEdit = fn(&mut tcgen05_ir::Mma) -> bool;

/// The behaviours of an MMA a wrong record can come from, each as the rule it breaks and an
/// edit of the MMA that has that behaviour in the program's own terms: enable-input-d read
/// inverted (MMA-ENABLE-D), scale-input-d ignored (MMA-SCALE-D-SEM), disable-output-lane read
/// inverted (MMA-DOL-SEM) (reference §6; PTX ISA §9.7.16.10.9).
const MMA_BEHAVIOURS: [(RuleId, MmaEdit); 3] = [
    (RuleId::MmaEnableD, |m| {
        m.enable_input_d = !m.enable_input_d;
        true
    }),
    (RuleId::MmaScaleDSem, |m| {
        m.scale_input_d.take().is_some_and(|s| s != 0)
    }),
    (RuleId::MmaDolSem, |m| match &mut m.disable_output_lane {
        Some(v) => {
            v.iter_mut().for_each(|w| *w = !*w);
            true
        }
        None => false,
    }),
];

/// Applies `edit` to the `k`-th MMA of `p` (pre-order over warps, then functions); its form
/// if it changed anything.
fn edit_mma(p: &mut Program, k: usize, edit: MmaEdit) -> Option<String> {
    fn go(b: &mut [Stmt], n: &mut usize, k: usize, edit: MmaEdit) -> Option<Option<String>> {
        for s in b {
            match s {
                Stmt::Tc(Op::Mma(m)) => {
                    if *n == k {
                        return Some(edit(m).then(|| Op::Mma(m.clone()).form().opcode()));
                    }
                    *n += 1;
                }
                Stmt::If { then, els, .. } => {
                    if let Some(r) = go(then, n, k, edit).or_else(|| go(els, n, k, edit)) {
                        return Some(r);
                    }
                }
                Stmt::Loop { body, .. } => {
                    if let Some(r) = go(body, n, k, edit) {
                        return Some(r);
                    }
                }
                _ => {}
            }
        }
        None
    }
    let mut n = 0;
    for w in &mut p.warps {
        if let Some(r) = go(w, &mut n, k, edit) {
            return r;
        }
    }
    for f in &mut p.funcs {
        if let Some(r) = go(&mut f.body, &mut n, k, edit) {
            return r;
        }
    }
    None
}

/// Diagnoses a wrong record as an MMA's behaviour: the first MMA and behaviour of
/// [`MMA_BEHAVIOURS`] such that the program with that MMA so edited has a defined run
/// (`Completes` or `MayBlock`) whose expectation of this lane is specified and allows the
/// record. The oracle's expectation of the edited program is the independent account of what
/// that wrong behaviour produces; a record it explains is filed under the MMA's rule.
pub(super) fn diagnose_mma(p: &Program, key: &ObsKey, rec: Option<&[u32]>) -> Option<Diagnosis> {
    let rec = rec?;
    let mmas = p.ops().iter().filter(|o| matches!(o, Op::Mma(_))).count();
    for k in 0..mmas {
        for (rule, edit) in MMA_BEHAVIOURS {
            let mut q = p.clone();
            let Some(form) = edit_mma(&mut q, k, edit) else {
                continue;
            };
            let e = tcgen05_oracle::expect(&q);
            if !matches!(
                e.run.verdict,
                RunVerdict::Completes | RunVerdict::MayBlock { .. }
            ) || !e.violations.is_empty()
            {
                continue;
            }
            let Some((_, lane)) = e.lookup(key) else {
                continue;
            };
            if matches!(lane, LaneExpect::Is(ObsExpect::Unspecified(_)))
                || check_lane(lane, Some(rec), &Allocs::default()).is_some()
            {
                continue;
            }
            return Some(Diagnosis {
                rule,
                why: format!(
                    "the record is what {form} gives with the behaviour of {} broken ({}, §{})",
                    rule.as_str(),
                    catalogue::row(rule).rule,
                    catalogue::section(rule)
                ),
                form,
            });
        }
    }
    None
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
            WordExpect::Exact(v) => Some(*v == got),
            WordExpect::OneOf(vs) => Some(vs.contains(&got)),
            WordExpect::Unspecified => None,
        },
        _ => None,
    }
}
