//! proptest strategies wrapping the builder, with shrinking.
//!
//! The strategies draw a byte string and run the builder on it through
//! [`crate::choice::BytesChoices`]. proptest shrinks the bytes (shorter, smaller values), and
//! exhausted or zero bytes make the builder choose its smallest option, so a failing program
//! shrinks toward fewer warps, allocations, flows and knobs.

use crate::cases::{Mode, Stream};
use crate::config::Config;
use crate::fixup::fixup;
use crate::{builder, choice::BytesChoices, mutate};
use arbitrary::{Arbitrary, Unstructured};
use proptest::prelude::*;
use tcgen05_ir::{Case, Program};

/// Most bytes a strategy draws (enough for the largest default program's choices).
pub const MAX_BYTES: usize = 1024;

/// Valid programs of `cfg`.
pub fn valid_program(cfg: Config) -> impl Strategy<Value = Program> {
    proptest::collection::vec(any::<u8>(), 0..MAX_BYTES).prop_map(move |bytes| {
        let mut u = Unstructured::new(&bytes);
        builder::build(&cfg, &mut BytesChoices::new(&mut u))
    })
}

/// Valid programs of a swarm configuration drawn from the same bytes.
pub fn swarm_program() -> impl Strategy<Value = Program> {
    proptest::collection::vec(any::<u8>(), 0..MAX_BYTES).prop_map(|bytes| {
        let mut u = Unstructured::new(&bytes);
        let cfg = Config::arbitrary(&mut u).unwrap_or_default();
        builder::build(&cfg, &mut BytesChoices::new(&mut u))
    })
}

/// Near-miss cases: a mutator index and a seed (shrinking toward the first mutator and seed 0).
pub fn near_miss_case() -> impl Strategy<Value = Case> {
    (0..mutate::MUTATORS.len(), any::<u64>()).prop_map(|(i, seed)| {
        let m: &'static mutate::Mutator = &mutate::MUTATORS[i];
        Stream::new(Config::default(), seed, Mode::NearMiss(Some(m)))
            .case(0)
            .case
    })
}

/// Programs decoded from arbitrary bytes by the IR's `Arbitrary` (almost always invalid), then
/// repaired by [`fixup`].
pub fn fixed_up_program() -> impl Strategy<Value = Program> {
    proptest::collection::vec(any::<u8>(), 0..MAX_BYTES).prop_map(|bytes| {
        let mut u = Unstructured::new(&bytes);
        let raw = Program::arbitrary(&mut u)
            .unwrap_or_else(|_| crate::valid_program(&Config::default(), 0));
        fixup(&raw)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::{Op, Stmt};

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn valid_programs_allocate_and_free_the_same_columns(p in valid_program(Config::default())) {
            // ALLOC-FREE-BEFORE-EXIT: every alloc has a dealloc of the same slot and size.
            let ops = p.ops();
            let mut allocs: Vec<(u8, u32)> = ops.iter().filter_map(|o| match o {
                Op::Alloc { slot, ncols, .. } => Some((*slot, ncols.value)),
                _ => None,
            }).collect();
            let mut frees: Vec<(u8, u32)> = ops.iter().filter_map(|o| match o {
                Op::Dealloc { taddr, ncols, .. } => match taddr.base {
                    tcgen05_ir::TBase::Slot(s) => Some((s, ncols.value)),
                    tcgen05_ir::TBase::Abs => None,
                },
                _ => None,
            }).collect();
            allocs.sort_unstable();
            frees.sort_unstable();
            prop_assert_eq!(allocs, frees);
        }

        #[test]
        fn fixed_up_programs_keep_barrier_counts_equal(p in fixed_up_program()) {
            // Every warp passes the same number of CTA barriers (no barrier deadlock).
            let count = |w: &Vec<Stmt>| w.iter().filter(|s| matches!(s, Stmt::BarCta | Stmt::ClusterWait)).count();
            let first = count(&p.warps[0]);
            prop_assert!(p.warps.iter().all(|w| count(w) == first));
        }
    }

    #[test]
    fn empty_bytes_give_the_smallest_program() {
        let mut u = Unstructured::new(&[]);
        let p = builder::build(&Config::default(), &mut BytesChoices::new(&mut u));
        // All choices 0: one warp, one CTA, one allocation, one flow at most.
        assert_eq!(p.warps.len(), 1);
        assert_eq!(p.launch.cluster_size, 1);
        assert_eq!(p.smem.slots, 1);
    }
}
