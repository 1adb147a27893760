//! GEN-PEER-ACTIVE (§9.7.16.5 "Issue Granularity", §9.7.16.7.1): the one judgement of whether
//! a `.cta_group::2` operation has made sure of its peer CTA, applied by the oracle's run to a
//! program's events (`run::alloc`) and by `check` to a kernel's paths (`kernel::protocol`), so
//! that the two never disagree on a program both can see.
//!
//! §9.7.16.7.1 (alloc, dealloc, relinquish_alloc_permit): "When .cta_group::2 is specified, the
//! issuing warp must make sure that peer CTA is launched and is still active"; §9.7.16.5
//! (mma, cp, shift, commit): "When the current CTA issues the operation, the peer CTA should be
//! active and should not have exited". The CTAs of a cluster are launched together, but
//! nothing tells a warp that its peer CTA has started, except a synchronization with it: the
//! documented idiom is a cluster barrier (`barrier.cluster.arrive` + `barrier.cluster.wait`)
//! before the first `::2` operation. So the rule is kept where the issuing warp passed a
//! `barrier.cluster.wait` before the operation (on its path, in program order), and broken
//! otherwise; its consequence is unstated (reference §6: "likely hang").

use tcgen05_ir::Form;

/// What a `::2` operation needs of its peer CTA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PeerNeed {
    /// alloc, dealloc, relinquish: the issuing warp must make sure the peer CTA has been
    /// launched and its warps take part (§9.7.16.7.1).
    Launched,
    /// mma, cp, shift, commit: the peer CTA should be active and not exited (§9.7.16.5).
    Active,
}

/// What `form` needs of the peer CTA: `None` for every form that is not a `.cta_group::2`
/// pair operation (`wait`'s `.cta_group` is an instruction-level qualifier, WAIT-OPS).
pub(crate) fn peer_need(form: &Form) -> Option<PeerNeed> {
    if matches!(form, Form::Wait(_)) || form.cta_group().is_none_or(|g| g.n() != 2) {
        return None;
    }
    Some(match form {
        Form::Alloc(_) | Form::Dealloc(_) | Form::Relinquish(_) => PeerNeed::Launched,
        _ => PeerNeed::Active,
    })
}

impl PeerNeed {
    /// Why `opcode`, issued with no cluster barrier before it, breaks GEN-PEER-ACTIVE.
    pub(crate) fn explain(self, opcode: &str) -> String {
        let (verb, what) = match self {
            PeerNeed::Launched => (
                "must make sure",
                "has been launched and that its warps will take part",
            ),
            PeerNeed::Active => ("should make sure", "is active and has not exited"),
        };
        format!(
            "`{opcode}` with no cluster barrier (barrier.cluster.arrive + wait) before it on this path: the issuing CTA {verb} that the peer CTA {what}, and nothing does (consequence unstated, likely a hang)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(opcode: &str) -> Option<PeerNeed> {
        peer_need(&Form::parse(opcode).unwrap())
    }

    #[test]
    fn only_pair_operations_need_the_peer() {
        assert_eq!(
            need("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32"),
            Some(PeerNeed::Launched)
        );
        assert_eq!(
            need("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned"),
            Some(PeerNeed::Launched)
        );
        assert_eq!(
            need("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64"),
            Some(PeerNeed::Active)
        );
        assert_eq!(
            need("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"),
            None
        );
        assert_eq!(need("tcgen05.ld.sync.aligned.32x32b.x1.b32"), None);
        assert_eq!(need("tcgen05.wait::ld.sync.aligned"), None);
    }
}
