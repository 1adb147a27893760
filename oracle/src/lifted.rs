//! The oracle on real PTX: a kernel that the general lifter ([`tcgen05_ir::ptx::model`]) can
//! express in the program model is judged exactly by [`crate::expect`]; its static
//! violations, undefined behaviour, certain deadlock and possible leak become findings of the
//! same shape as `check`'s path analysis ([`crate::kernel::Finding`]), so `check` reports them
//! for every liftable kernel. A kernel that cannot be lifted keeps the
//! path analysis alone, with the lifter's reason.

use crate::kernel::Finding;
use crate::{
    BlockSite, Code, Expected, LeakStatus, Location, ObsExpect, Options, RunVerdict, SiteExpect,
    SiteRef,
};
use tcgen05_ir::observe::{Layout, MBAR_GAVE_UP, SiteKind, site_of};
use tcgen05_ir::ptx::model::{Lifted, Shape, Unliftable, lift_kernel};
use tcgen05_ir::ptx::parse::{Function, Module};
use tcgen05_ir::{RuleId, Stmt};

/// The oracle's expectation for a kernel lifted from real PTX.
///
/// The lifter models each `mbarrier.try_wait` spin loop as the model's bounded wait
/// ([`Stmt::MbarWait`]), which a run leaves when its bound runs out (recording
/// [`MBAR_GAVE_UP`]). The PTX loop has no bound: where the oracle says a wait's phase never
/// completes on any schedule, the kernel spins there for ever, so every schedule hangs and the
/// verdict is a certain deadlock at that wait (the wait's own rules: the arrivals that never
/// come, COMMIT-ARRIVE / COMMIT-TRACK, PTX ISA §9.7.16.12.1, or an mbarrier arrive the program
/// lacks). Only where every wait of the kernel spins ([`Lifted::waits_spin`]): a bounded
/// loop in the PTX (as the tool's printer writes) gives up as the model's does.
pub fn expect_lifted(lifted: &Lifted, opts: &Options) -> Expected {
    let program = &lifted.program;
    let mut e = crate::expect_with(program, opts);
    if !lifted.waits_spin
        || !matches!(
            e.run.verdict,
            RunVerdict::Completes | RunVerdict::MayBlock { .. }
        )
    {
        return e;
    }
    let layout = Layout::of(program);
    let mut stuck = Vec::new();
    let mut rules = Vec::new();
    for item in &e.obs {
        let never = matches!(&item.expect, SiteExpect::Same(ObsExpect::Exact(w)) if w[..] == [MBAR_GAVE_UP]);
        if !never {
            continue;
        }
        // The code holding the site: the warp's own, or a function (whose record lives in
        // the calling warp's block).
        let (code, stmts, sites, index) = match item.key.site {
            SiteRef::Warp(i) => (
                Code::Warp(item.key.warp),
                program.warps.get(usize::from(item.key.warp)),
                layout.warp_sites.get(usize::from(item.key.warp)),
                i,
            ),
            SiteRef::Func { func, index } => (
                Code::Func(func),
                program.funcs.get(usize::from(func)).map(|f| &f.body),
                layout.func_sites.get(usize::from(func)),
                index,
            ),
        };
        let kind = sites.and_then(|v| v.get(index as usize)).map(|x| x.kind);
        if kind == Some(SiteKind::Mbar) {
            stuck.push(block_site(
                item.key.cta,
                item.key.warp,
                code,
                stmts.map(|c| &c[..]),
                index,
            ));
            rules.extend(item.rules.iter().copied());
        }
    }
    if !stuck.is_empty() {
        rules.sort();
        rules.dedup();
        e.run.verdict = RunVerdict::MustDeadlock { where_: stuck };
        e.run.rules = rules;
    }
    e
}

/// The block site of the `index`-th observation site of `code` (numbered in the layout's
/// pre-order, [`Layout`]).
fn block_site(cta: u32, warp: u8, code: Code, stmts: Option<&[Stmt]>, index: u32) -> BlockSite {
    let mut path = Vec::new();
    let mut n = 0;
    if let Some(stmts) = stmts {
        site_path(stmts, index, &mut n, &mut path);
    }
    BlockSite {
        cta,
        warp,
        location: Location { code, path },
        reason: "an mbarrier try_wait loop whose phase never completes: the PTX loop has no bound, so it spins for ever".to_string(),
    }
}

/// Finds the `index`-th site of `stmts` in pre-order (children of an `If` numbered `then`
/// first, then `els`, as [`Location::path`] counts them); `n` counts the sites passed. On
/// success `path` holds the statement path, outermost first.
fn site_path(stmts: &[Stmt], index: u32, n: &mut u32, path: &mut Vec<u16>) -> bool {
    for (k, s) in stmts.iter().enumerate() {
        path.push(k as u16);
        if site_of(s).is_some() {
            if *n == index {
                return true;
            }
            *n += 1;
        }
        let found = match s {
            Stmt::If { then, els, .. } => site_path_chain(then, els, index, n, path),
            Stmt::Loop { body, .. } => site_path(body, index, n, path),
            _ => false,
        };
        if found {
            return true;
        }
        path.pop();
    }
    false
}

/// [`site_path`] over `then` followed by `els`, numbered as one list.
fn site_path_chain(
    then: &[Stmt],
    els: &[Stmt],
    index: u32,
    n: &mut u32,
    path: &mut Vec<u16>,
) -> bool {
    if site_path(then, index, n, path) {
        return true;
    }
    let base = path.len();
    if site_path(els, index, n, path) {
        path[base] += then.len() as u16;
        return true;
    }
    false
}

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
    let e = expect_lifted(&lifted, &Options::default());
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
                let mut x = finding(f, *r, &format!("every schedule deadlocks{at}"));
                // The blocked warps, in the path analysis' spelling (`w<rank>`, or
                // `cta<n>.w<rank>` in a launch of several CTAs).
                x.warps = where_
                    .iter()
                    .map(|b| {
                        if where_.iter().all(|o| o.cta == b.cta) {
                            format!("w{}", b.warp)
                        } else {
                            format!("cta{}.w{}", b.cta, b.warp)
                        }
                    })
                    .collect();
                x.warps.dedup();
                findings.push(x);
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

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::ptx::parse_module;

    /// A one-warp kernel that initializes an mbarrier for one arrival, never arrives, and
    /// waits for phase 0 with `wait` (the loop around `mbarrier.try_wait.parity`).
    fn kernel(wait: &str) -> String {
        format!(
            ".version 8.6\n.target sm_100a\n.address_size 64\n.shared .align 4 .b32 slot;\n\
             .shared .align 8 .b64 bar0;\n.visible .entry k()\n.reqntid 32, 1, 1\n{{\n\
             \t.reg .b32 %r<20>;\n\t.reg .pred %p<4>;\n\telect.sync _|%p1, -1;\n\t@!%p1 bra $I;\n\
             \tmbarrier.init.shared::cta.b64 [bar0], 1;\n$I:\n\tfence.mbarrier_init.release.cluster;\n\
             {wait}\tmov.u32 %r1, slot;\n\
             \ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;\n\
             \tld.shared.b32 %r2, [slot];\n\
             \ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n\
             \ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;\n\tret;\n}}\n"
        )
    }

    fn verdict(src: &str) -> RunVerdict {
        let m = parse_module(src, "k.ptx").unwrap();
        let f = m.functions.iter().find(|f| f.is_entry).unwrap();
        judge(&m, f, None).unwrap().expected.run.verdict
    }

    /// PTX ISA §9.7.13.15: a phase completes when its pending arrival count reaches zero; with
    /// no arrive it never does, so a loop that retries `try_wait` until it succeeds never ends.
    #[test]
    fn a_spin_loop_on_a_phase_that_never_completes_deadlocks() {
        let spin = "$W:\n\tmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar0], 0;\n\
                    \t@!%p2 bra $W;\n";
        assert!(matches!(
            verdict(&kernel(spin)),
            RunVerdict::MustDeadlock { .. }
        ));
        // CUTLASS's spelling of the same loop.
        let cutlass = "$W:\n\tmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar0], 0;\n\
                       \t@%p2 bra $D;\n\tbra.uni $W;\n$D:\n";
        assert!(matches!(
            verdict(&kernel(cutlass)),
            RunVerdict::MustDeadlock { .. }
        ));
    }

    /// A wait the PTX bounds (it gives up after a number of tries and goes on) ends.
    #[test]
    fn a_bounded_wait_on_a_phase_that_never_completes_ends() {
        let bounded = "\tmov.u32 %r5, 0;\n$W:\n\
                       \tmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p2, [bar0], 0;\n\
                       \t@%p2 bra $D;\n\tadd.u32 %r5, %r5, 1;\n\tsetp.lt.u32 %p3, %r5, 1048576;\n\
                       \t@%p3 bra $W;\n$D:\n";
        assert!(matches!(verdict(&kernel(bounded)), RunVerdict::Completes));
    }
}
