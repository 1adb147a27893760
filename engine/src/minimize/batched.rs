//! The minimizer's passes under a predicate of the caller's that judges many candidates at
//! once: for compile-only targets, where one process judges a chunk of candidates for about
//! the cost of two single compiles (the ptxas campaign, [`crate::campaign::ptxas`], whose
//! predicate is "every version still gives the same differential signature").
//!
//! The candidates are those of [`super::minimize`]'s passes (each repeated while it makes
//! progress, here from its first candidate each time, all of them until none does); what
//! differs is the predicate: the
//! caller's, over a slice of candidates, of which the first that holds is kept. Candidates
//! already judged are skipped (by hash). Deterministic.

use super::{PASSES, hash};
use std::collections::HashSet;
use tcgen05_ir::Program;

/// Statistics of one batched minimization.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchedStats {
    /// Candidates judged.
    pub tries: usize,
    /// Candidates kept.
    pub kept: usize,
}

/// Minimizes `p` while `keep` holds, judging up to `chunk` candidates per call of `keep`
/// (which returns one answer per candidate); at most `max_tries` candidates are judged.
/// `keep` should hold for `p`; if no candidate keeps it, `p` is returned unchanged.
pub fn minimize_batched(
    p: &Program,
    max_tries: usize,
    chunk: usize,
    keep: &mut dyn FnMut(&[Program]) -> Vec<bool>,
) -> (Program, BatchedStats) {
    let mut stats = BatchedStats::default();
    let mut best = p.clone();
    let mut seen: HashSet<u64> = HashSet::new();
    seen.insert(hash(&best));
    'outer: loop {
        let mut progressed = false;
        for (_, pass) in PASSES {
            loop {
                let mut fresh_hashes = HashSet::new();
                let fresh: Vec<Program> = pass(&best)
                    .into_iter()
                    .filter(|c| {
                        let h = hash(c);
                        !seen.contains(&h) && fresh_hashes.insert(h)
                    })
                    .collect();
                let mut took = false;
                for group in fresh.chunks(chunk.max(1)) {
                    let room = max_tries.saturating_sub(stats.tries);
                    if room == 0 {
                        break 'outer;
                    }
                    let group = &group[..group.len().min(room)];
                    seen.extend(group.iter().map(hash));
                    stats.tries += group.len();
                    if let Some(k) = keep(group).iter().position(|&b| b) {
                        stats.kept += 1;
                        best = group[k].clone();
                        took = true;
                        progressed = true;
                        break;
                    }
                }
                if !took {
                    break;
                }
            }
        }
        if !progressed {
            break;
        }
    }
    (best, stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::{Op, Stmt, samples};

    fn has_dealloc(p: &Program) -> bool {
        p.ops().iter().any(|o| matches!(o, Op::Dealloc { .. }))
    }

    #[test]
    fn reduces_to_the_statement_the_predicate_needs() {
        let p = samples::single_warp_roundtrip();
        assert!(p.size() > 1 && has_dealloc(&p));
        for chunk in [1, 8] {
            let (r, stats) = minimize_batched(&p, 1000, chunk, &mut |qs| {
                qs.iter().map(has_dealloc).collect()
            });
            // Every statement but one dealloc can go.
            assert_eq!(r.size(), 1, "chunk {chunk}: {r:?}");
            assert!(has_dealloc(&r));
            assert!(stats.kept >= 1 && stats.tries >= stats.kept);
        }
    }

    #[test]
    fn a_predicate_that_only_the_input_keeps_leaves_it_unchanged() {
        let p = samples::single_warp_roundtrip();
        let (same, stats) =
            minimize_batched(&p, 1000, 4, &mut |qs| qs.iter().map(|q| q == &p).collect());
        assert_eq!(same, p);
        assert_eq!(stats.kept, 0);
    }

    #[test]
    fn the_try_limit_holds() {
        let p = samples::single_warp_roundtrip();
        let (_, stats) = minimize_batched(&p, 5, 16, &mut |qs| vec![false; qs.len()]);
        assert_eq!(stats.tries, 5);
    }

    #[test]
    fn if_bodies_are_unwrapped() {
        let mut p = samples::single_warp_roundtrip();
        let inner = p.warps[0].clone();
        p.warps[0] = vec![Stmt::If {
            cond: tcgen05_ir::Cond::ElectOne,
            then: vec![],
            els: inner,
        }];
        let (r, _) = minimize_batched(&p, 1000, 1, &mut |qs| {
            qs.iter()
                .map(|q| {
                    q.ops().len() >= 2
                        && q.warps
                            .iter()
                            .flatten()
                            .all(|s| !matches!(s, Stmt::If { .. }))
                })
                .collect()
        });
        assert!(
            r.warps
                .iter()
                .flatten()
                .all(|s| !matches!(s, Stmt::If { .. }))
        );
        assert!(r.ops().len() >= 2);
    }
}
