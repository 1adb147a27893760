//! The oracle on real PTX: a kernel that the general lifter ([`tcgen05_ir::ptx::model`]) can
//! express in the program model is judged exactly by [`crate::expect`]; its static
//! violations, undefined behaviour, certain deadlock and possible leak become findings of the
//! same shape as `check`'s path analysis ([`crate::kernel::Finding`]), so `check` reports them
//! for every liftable kernel (issue 19 point 2). A kernel that cannot be lifted keeps the
//! path analysis alone, with the lifter's reason.

use crate::kernel::Finding;
use crate::{Expected, LeakStatus, RunVerdict};
use tcgen05_ir::RuleId;
use tcgen05_ir::ptx::model::{Shape, Unliftable, lift_kernel};
use tcgen05_ir::ptx::parse::{Function, Module};

/// The oracle's answer for one lifted kernel.
#[derive(Debug, Clone)]
pub struct LiftedJudgement {
    /// What the oracle expects.
    pub expected: Expected,
    /// Its violations, undefined behaviour, deadlock and leak as findings (at the kernel's
    /// `.entry` line: the model's statements do not keep PTX lines).
    pub findings: Vec<Finding>,
    /// One line: the verdict.
    pub summary: String,
}

fn finding(f: &Function<'_>, rule: RuleId, message: &str) -> Finding {
    Finding {
        rule,
        section: crate::catalogue::section(rule),
        line: f.pos.line,
        col: f.pos.col,
        opcode: ".entry".to_string(),
        message: format!("oracle on the lifted kernel: {message}"),
        warps: vec![],
        path: vec![],
    }
}

/// Lifts `f` of `m` with the launch `shape` (its declared one when `None`) and judges it
/// (`Err`: why it cannot be lifted).
pub fn judge(
    m: &Module<'_>,
    f: &Function<'_>,
    shape: Option<Shape>,
) -> Result<LiftedJudgement, Unliftable> {
    let lifted = lift_kernel(m, f, shape)?;
    let e = crate::expect(&lifted.program);
    let mut findings = Vec::new();
    for v in &e.violations {
        findings.push(finding(f, v.rule, &v.to_string()));
    }
    let summary = match &e.run.verdict {
        RunVerdict::Undefined(rules) => {
            for r in rules {
                findings.push(finding(
                    f,
                    *r,
                    &format!("undefined behaviour ({})", r.as_str()),
                ));
            }
            "undefined behaviour".to_string()
        }
        RunVerdict::MustDeadlock { where_ } => {
            for r in &e.run.rules {
                let at = where_
                    .first()
                    .map(|b| format!(": cta {} warp {}: {}", b.cta, b.warp, b.reason))
                    .unwrap_or_default();
                findings.push(finding(f, *r, &format!("every schedule deadlocks{at}")));
            }
            "must deadlock".to_string()
        }
        RunVerdict::MayBlock { .. } => "may block".to_string(),
        RunVerdict::Completes => "completes".to_string(),
        RunVerdict::NotJudged(why) => format!("not judged ({why})"),
    };
    if e.leak.status == LeakStatus::MayLeak && e.violations.is_empty() {
        for r in &e.leak.rules {
            findings.push(finding(
                f,
                *r,
                "TMEM may still be allocated when the CTA exits",
            ));
        }
    }
    Ok(LiftedJudgement {
        expected: e,
        findings,
        summary,
    })
}

/// `check`'s report for every kernel and device function of `m` (the path analysis,
/// [`crate::kernel::check_module`]) completed by the oracle for each kernel that lifts: its
/// findings of rules the path analysis did not report are added, and a note says which judge
/// saw the kernel (the oracle's verdict, or why it cannot be lifted). `shape`: the launch, when
/// the caller knows it (else each kernel's declared one).
pub fn check_module(
    m: &Module<'_>,
    src: Option<&str>,
    opts: &crate::kernel::Options,
    shape: Option<Shape>,
) -> Vec<crate::kernel::KernelReport> {
    let mut reports = crate::kernel::check_module(m, src, opts);
    for k in reports.iter_mut().filter(|k| k.entry && k.tcgen05 > 0) {
        let Some(f) = m
            .functions
            .iter()
            .find(|f| f.is_entry && f.name == k.kernel && f.body.is_some())
        else {
            continue;
        };
        match judge(m, f, shape) {
            Ok(j) => {
                for x in j.findings {
                    if !k.findings.iter().any(|y| y.rule == x.rule) {
                        k.findings.push(x);
                    }
                }
                k.notes.push(format!(
                    "lifted into the program model and judged by the oracle: {}",
                    j.summary
                ));
            }
            Err(e) => k.notes.push(format!(
                "path analysis only: not liftable into the program model: {e}"
            )),
        }
    }
    reports
}
