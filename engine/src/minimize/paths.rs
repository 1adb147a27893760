//! The kernel checker's verdict on a candidate: the rules `tcgen05-fuzz check` reports on the
//! candidate's PTX by its path analysis ([`tcgen05_oracle::kernel`], docs/check.md), under the
//! options `check` uses by default. The minimizer keeps a candidate only if these are among
//! the original's, so that `check` on a finding's `minimized.ptx` reports nothing the original
//! did not break (a missing `tcgen05.fence::before_thread_sync` before a barrier, MCM-XTHREAD
//! §9.7.16.6.3-4; a `::2` operation before the first cluster barrier, GEN-PEER-ACTIVE
//! §9.7.16.7.1), also where the oracle's run judges the program the same with or without it.

use std::collections::BTreeSet;
use tcgen05_ir::{Program, RuleId};
use tcgen05_oracle::kernel::{Options, check_source};

/// The rules the path analysis of `check` reports on `p`'s PTX, over every kernel and
/// function of it; the empty set where the printed PTX does not parse (the harness prints
/// only what its parser reads, so that is a bug of the printer, which other tests catch).
pub(super) fn check_rules(p: &Program) -> BTreeSet<RuleId> {
    let src = tcgen05_ir::ptx::emit(p);
    check_source(&src, "candidate.ptx", &Options::default())
        .map(|reports| {
            reports
                .iter()
                .flat_map(|k| k.findings.iter().map(|f| f.rule))
                .collect()
        })
        .unwrap_or_default()
}

/// The rules of [`check_rules`] on `p` and on `p` with its cluster shape declared: the
/// original's allowance, since the minimizer declares the shape ([`super::steps`]'s
/// `declare_cluster`) and `check` then walks both CTAs of each pair.
pub(super) fn allowed_by_check(p: &Program) -> BTreeSet<RuleId> {
    let mut v = check_rules(p);
    if p.launch.cluster_size > 1 && !p.launch.declare_cluster {
        let mut q = p.clone();
        q.launch.declare_cluster = true;
        v.extend(check_rules(&q));
    }
    v
}
