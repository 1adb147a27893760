//! Reduction steps that simplify operands rather than remove statements:
//!
//! - every `.cta_group::2` instruction made `::1` at once (a `::2` pair needs both CTAs and
//!   their synchronization, reference §2.5), the commit's `.multicast::cluster` dropped with
//!   it, and then the cluster shrunk to one CTA, with and without its cluster barriers;
//! - one shared-memory operand (an mma's A or B descriptor, a cp's source) made to name the
//!   region of another, or to be that other descriptor, and an mma's A taken from shared
//!   memory instead of TMEM: the fills and copies that only fed the replaced operand can go;
//! - a block-scaled `.kind::mxf8f6f4` mma made the unscaled `.kind::f8f6f4` one, and a
//!   block-scaled mma's scale factors of A and B read from one TMEM address: the copies and
//!   fills that fed only scale factors can go;
//! - every nCols toward 32 (all occurrences of one value at once, so alloc and dealloc stay
//!   matched), ld/st shapes toward `.32x32b.x1`.

use super::groups::without_cluster_barriers;
use super::tree::rewrite_all;
use tcgen05_ir::idesc::{Idesc, IdescLayout};
use tcgen05_ir::{
    CtaGroup, LdStShape, Mma, MmaA, MmaKind, NCols, Num, Op, Program, SmemDesc, TBase,
};

/// Every `::2` instruction as `::1`, its commit without multicast (MMA-DOL-SIZE: a `::1`
/// disable-output-lane vector has 4 elements, not 8); then also in a one-CTA cluster.
pub(super) fn single_cta_group(p: &Program) -> Vec<Program> {
    let mut q = p.clone();
    tcgen05_oracle::probes::set_cta_group(&mut q, CtaGroup::One);
    let unicast = |op: &Op| -> Option<Op> {
        let mut op = op.clone();
        match &mut op {
            Op::Commit { form, cta_mask, .. } if form.multicast => {
                form.multicast = false;
                *cta_mask = None;
            }
            Op::Mma(m) => {
                let mut changed = false;
                if let Some(d) = &mut m.disable_output_lane
                    && d.len() > 4
                {
                    d.truncate(4);
                    changed = true;
                }
                // M = 256 exists only for `cta_group::2` (each CTA computes 128 rows,
                // PTX ISA §9.7.16.10.1): the one CTA's MMA keeps its 128.
                let idesc = Idesc::new(m.form.kind, m.idesc);
                if idesc.m() == 256 {
                    m.idesc = match idesc.layout {
                        IdescLayout::A => m.idesc & !(0x1F << 24) | (128 >> 4) << 24,
                        _ => m.idesc & !(0x3 << 27) | (128 >> 7) << 27,
                    };
                    changed = true;
                }
                if !changed {
                    return None;
                }
            }
            _ => return None,
        }
        Some(op)
    };
    let q = rewrite_all(&q, &unicast).unwrap_or(q);
    if q == *p {
        return Vec::new();
    }
    let mut v = Vec::new();
    if q.launch.cluster_size > 1 {
        let mut r = q.clone();
        r.launch.cluster_size = 1;
        // In one CTA the cluster barriers that synchronized the pair have nothing left to
        // order: they go in the same step, so that a rule filed on the pair's synchronization
        // is not lost in between.
        v.extend(without_cluster_barriers(&r));
        v.push(r);
    }
    v.push(q);
    v
}

/// The shared-memory descriptors of the program's instructions, in [`rewrite_all`] order:
/// (instruction index among mma and cp, operand: 0 = A or cp source, 1 = B).
fn descs(p: &Program) -> Vec<((usize, u8), SmemDesc)> {
    let mut v = Vec::new();
    for (k, op) in p
        .ops()
        .into_iter()
        .filter(|o| matches!(o, Op::Mma(_) | Op::Cp { .. }))
        .enumerate()
    {
        match op {
            Op::Mma(m) => {
                if let MmaA::Desc(d) = &m.a {
                    v.push(((k, 0), *d));
                }
                v.push(((k, 1), m.b));
            }
            Op::Cp { src, .. } => v.push(((k, 0), *src)),
            _ => {}
        }
    }
    v
}

/// `p` with operand `at` of its mma and cp instructions ([`descs`]) set to `to`.
fn with_operand(p: &Program, at: (usize, u8), to: MmaA) -> Option<Program> {
    let counter = std::cell::Cell::new(0usize);
    let f = |op: &Op| -> Option<Op> {
        if !matches!(op, Op::Mma(_) | Op::Cp { .. }) {
            return None;
        }
        let k = counter.get();
        counter.set(k + 1);
        if k != at.0 {
            return None;
        }
        let mut op = op.clone();
        match (&mut op, at.1, &to) {
            (Op::Mma(m), 0, _) => m.a = to,
            (Op::Mma(m), 1, MmaA::Desc(d)) => m.b = *d,
            (Op::Cp { src, .. }, 0, MmaA::Desc(d)) => *src = *d,
            _ => return None,
        }
        Some(op)
    };
    rewrite_all(p, &f)
}

/// How far a descriptor moved into another operand's region is shifted from its own offset:
/// not at all, then by 16 and 256 bytes (SDESC-ALIGN16), so that the two operands read
/// different words of one fill where the discrepancy needs different data.
const SHIFTS: [u32; 3] = [0, 16, 256];

/// How far a program's shared-memory operands are from sharing, as a pair that every
/// candidate of [`share_operands`] makes smaller (compared in order): the mmas with A from
/// TMEM, then the negated sum over regions of the square of the number of descriptor
/// operands naming it. An operand moves only to a region with at least as many users as its
/// own, which raises the sum of squares (by `2 (to - from) + 2`), so the pass cannot go round
/// in circles (an operand moved to another region and back, or shifted further and further),
/// while operands still gather in any region, above or below their own.
fn sharing(p: &Program) -> (usize, i64) {
    let tmem_a = p
        .ops()
        .iter()
        .filter(|o| matches!(o, Op::Mma(m) if matches!(m.a, MmaA::Tmem(_))))
        .count();
    let mut users = std::collections::BTreeMap::<u8, i64>::new();
    for (_, d) in descs(p) {
        *users.entry(d.region).or_default() += 1;
    }
    (tmem_a, -users.values().map(|c| c * c).sum::<i64>())
}

/// One descriptor operand made to name another operand's region (its own layout kept, at
/// its own offset or [`SHIFTS`] past it), or made that other descriptor; an mma's A from TMEM
/// replaced by a descriptor of the program. Only candidates that share more ([`sharing`]).
pub(super) fn share_operands(p: &Program) -> Vec<Program> {
    let before = sharing(p);
    sharing_candidates(p)
        .into_iter()
        .filter(|q| sharing(q) < before)
        .collect()
}

fn sharing_candidates(p: &Program) -> Vec<Program> {
    let all = descs(p);
    let mut v = Vec::new();
    for (at, d) in &all {
        for (other, e) in &all {
            if other == at || e.region == d.region {
                continue;
            }
            for shift in SHIFTS {
                let renamed = SmemDesc {
                    region: e.region,
                    offset: d.offset + shift,
                    ..*d
                };
                v.extend(with_operand(p, *at, MmaA::Desc(renamed)));
            }
            v.extend(with_operand(p, *at, MmaA::Desc(*e)));
        }
    }
    let mmas = p
        .ops()
        .into_iter()
        .filter(|o| matches!(o, Op::Mma(_) | Op::Cp { .. }))
        .enumerate()
        .filter(|(_, o)| matches!(o, Op::Mma(m) if matches!(m.a, MmaA::Tmem(_))))
        .map(|(k, _)| k)
        .collect::<Vec<_>>();
    for k in mmas {
        for (_, e) in &all {
            v.extend(with_operand(p, (k, 0), MmaA::Desc(*e)));
        }
    }
    v
}

/// One candidate per mma of `p` (in program order) that `f` rewrites: that mma replaced by
/// `f`'s result, every other statement as it was.
fn each_mma(p: &Program, f: impl Fn(&Mma) -> Option<Mma>) -> Vec<Program> {
    let mmas = p.ops().iter().filter(|o| matches!(o, Op::Mma(_))).count();
    let mut v = Vec::new();
    for k in 0..mmas {
        let counter = std::cell::Cell::new(0usize);
        let g = |op: &Op| -> Option<Op> {
            let Op::Mma(m) = op else { return None };
            let i = counter.get();
            counter.set(i + 1);
            if i == k {
                f(m).map(|m| Op::Mma(Box::new(m)))
            } else {
                None
            }
        };
        v.extend(rewrite_all(p, &g));
    }
    v
}

/// A block-scaled mma's scale factors of B read from the TMEM of its scale factors of A, or
/// those of A from the TMEM of B's (PTX ISA §9.7.16.10.7: each is a TMEM address of its
/// own; nothing keeps them apart): the copy that fed the other columns can then go. Each
/// candidate has one pair of distinct scale addresses fewer, so the step ends.
pub(super) fn share_scales(p: &Program) -> Vec<Program> {
    let mut v = each_mma(p, |m| match (m.scale_a, m.scale_b) {
        (Some(a), Some(b)) if a != b => Some(Mma {
            scale_b: Some(a),
            ..m.clone()
        }),
        _ => None,
    });
    v.extend(each_mma(p, |m| match (m.scale_a, m.scale_b) {
        (Some(a), Some(b)) if a != b => Some(Mma {
            scale_a: Some(b),
            ..m.clone()
        }),
        _ => None,
    }));
    v
}

/// A sparse mma (`.sp`) made the dense one of the same kind, shape and operands, without its
/// metadata (PTX ISA §9.7.16.4.2: the idesc's sparsity flag, bit 2, and selector, bits 0-1,
/// cleared; §9.7.16.10.8: the stored A of a sparse mma holds the dense K's elements per row,
/// so the dense mma reads the same A): the copies and fills that fed only the metadata can
/// then go, and a block-scaled one can then be unscaled ([`unscale_mmas`]). Each candidate has
/// one sparse mma fewer, so the step ends.
pub(super) fn densify_mmas(p: &Program) -> Vec<Program> {
    each_mma(p, |m| {
        m.form.sp.then(|| {
            let mut m = m.clone();
            m.form.sp = false;
            m.sp_meta = None;
            m.idesc &= !0b111;
            m
        })
    })
}

/// A dense block-scaled `.kind::mxf8f6f4` mma made the unscaled `.kind::f8f6f4` of the same
/// shape, element types, transposes and negations, with an F32 D (PTX ISA §9.7.16.4.2: the
/// idesc moves from layout (b) to layout (a); both kinds read 8-bit E4M3/E5M2 elements with
/// K = 32, §9.7.16.10.1), without scale factors: the copies and fills that fed only the scale
/// factors can then go. Each candidate has one block-scaled mma fewer, so the step ends.
pub(super) fn unscale_mmas(p: &Program) -> Vec<Program> {
    each_mma(p, |m| {
        if m.form.kind != MmaKind::Mxf8f6f4 || m.form.sp {
            return None;
        }
        let from = Idesc::new(m.form.kind, m.idesc);
        let mut m = m.clone();
        m.form.kind = MmaKind::F8f6f4;
        m.form.block_scale = false;
        m.form.scale_vec = None;
        m.scale_a = None;
        m.scale_b = None;
        // Layout (a): D type F32 (1) at bits 4-5, A/B types at 7-12 and the negate and
        // transpose bits 13-16 as in layout (b), N >> 3 at 17-22, M >> 4 at 24-28.
        m.idesc = 1 << 4 | m.idesc & (0x3FF << 7) | (from.n() >> 3) << 17 | (from.m() >> 4) << 24;
        Some(m)
    })
}

/// Every alloc and dealloc of one nCols value made 32, or half that value (all occurrences at
/// once, so alloc and dealloc stay matched), where every address of the slots allocated with
/// it still starts inside the smaller allocation.
pub(super) fn simplify_ncols(p: &Program) -> Vec<Program> {
    let mut values: Vec<u32> = Vec::new();
    for op in p.ops() {
        if let Op::Alloc { ncols, .. } | Op::Dealloc { ncols, .. } = op
            && ncols.value > 32
            && !values.contains(&ncols.value)
        {
            values.push(ncols.value);
        }
    }
    values.sort_unstable();
    let ops = p.ops();
    // The highest column each slot's address is used at: a smaller allocation must still hold
    // it (OQ-9 leaves accesses outside the allocation unspecified; a reproducer keeps inside).
    let top = |slot: u8| {
        ops.iter()
            .flat_map(|o| o.tmem_refs())
            .filter(|t| t.base == TBase::Slot(slot))
            .map(|t| u32::from(t.col))
            .max()
            .unwrap_or(0)
    };
    let mut v = Vec::new();
    for from in values {
        let used = ops
            .iter()
            .filter_map(|o| match o {
                Op::Alloc { slot, ncols, .. } if ncols.value == from => Some(top(*slot)),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        for to in [32, from / 2] {
            if to >= from || to < 32 || used >= to {
                continue;
            }
            let f = move |op: &Op| -> Option<Op> {
                let mut op = op.clone();
                match &mut op {
                    Op::Alloc { ncols, .. } | Op::Dealloc { ncols, .. } if ncols.value == from => {
                        *ncols = NCols {
                            value: to,
                            form: ncols.form,
                        };
                        Some(op)
                    }
                    _ => None,
                }
            };
            v.extend(rewrite_all(p, &f));
        }
    }
    v
}

pub(super) fn simplify_shapes(p: &Program) -> Vec<Program> {
    let target =
        |shape: &mut LdStShape, num: &mut Num, nregs: &mut u16, split: &mut Option<u32>| -> bool {
            let before = (*shape, *num);
            if *num != Num::X1 {
                *num = Num::X1;
            } else if *shape != LdStShape::S32x32b {
                *shape = LdStShape::S32x32b;
                *split = None;
            }
            *nregs = tcgen05_ir::vec_len(*shape, *num).unwrap_or(1);
            before != (*shape, *num)
        };
    let mut v = Vec::new();
    let lds = p
        .ops()
        .into_iter()
        .filter(|o| matches!(o, Op::Ld { .. } | Op::St { .. }))
        .count();
    for k in 0..lds {
        let counter = std::cell::Cell::new(0usize);
        let f = |op: &Op| -> Option<Op> {
            let mut op = op.clone();
            let (shape, num, nregs, split) = match &mut op {
                Op::Ld {
                    form, nregs, split, ..
                } => (&mut form.shape, &mut form.num, nregs, split),
                Op::St {
                    form, nregs, split, ..
                } => (&mut form.shape, &mut form.num, nregs, split),
                _ => return None,
            };
            let i = counter.get();
            counter.set(i + 1);
            if i != k {
                return None;
            }
            target(shape, num, nregs, split).then_some(op)
        };
        v.extend(rewrite_all(p, &f));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use tcgen05_ir::samples::single_warp_roundtrip;
    use tcgen05_ir::{Stmt, TmemRef};
    use tcgen05_oracle::probes::{desc, mma, set_cta_group};

    /// The roundtrip sample with two mmas after its st: the first reads A and B from regions
    /// 0 and 1, the second A from TMEM and B from region 2.
    fn two_mmas() -> Program {
        let mut p = single_warp_roundtrip();
        p.smem.regions = vec![4096; 3];
        let first = mma(MmaKind::F16, false);
        let mut second = mma(MmaKind::F16, true);
        second.a = MmaA::Tmem(TmemRef::slot(0, 0, 16));
        second.b = desc(2);
        p.warps[0].insert(3, Stmt::Tc(Op::Mma(Box::new(first))));
        p.warps[0].insert(4, Stmt::Tc(Op::Mma(Box::new(second))));
        p
    }

    fn mmas(p: &Program) -> Vec<Mma> {
        p.ops()
            .into_iter()
            .filter_map(|o| match o {
                Op::Mma(m) => Some((**m).clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_operand_takes_another_operands_region_or_descriptor() {
        let p = two_mmas();
        let c = share_operands(&p);
        // The second mma's B (region 2) read from region 0 at its own offset, or as the
        // first mma's A descriptor itself.
        let renamed = SmemDesc {
            region: 0,
            ..desc(2)
        };
        assert!(c.iter().any(|q| mmas(q)[1].b == renamed));
        assert!(c.iter().any(|q| mmas(q)[1].b == desc(0)));
        // The second mma's A from a descriptor instead of TMEM.
        assert!(c.iter().any(|q| mmas(q)[1].a == MmaA::Desc(desc(1))));
        // Each candidate changes one operand of one instruction and nothing else.
        for q in &c {
            assert_eq!(q.size(), p.size());
            let changed = mmas(q)
                .iter()
                .zip(mmas(&p))
                .filter(|(x, y)| **x != *y)
                .count();
            assert_eq!(changed, 1);
        }
    }

    #[test]
    fn a_cta_pair_becomes_one_cta() {
        let mut p = two_mmas();
        set_cta_group(&mut p, CtaGroup::Two);
        p.launch.cluster_size = 2;
        let c = single_cta_group(&p);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].launch.cluster_size, 1);
        assert_eq!(c[1].launch.cluster_size, 2);
        let mut one = p.clone();
        set_cta_group(&mut one, CtaGroup::One);
        assert_eq!(c[1], one);
        // Nothing left to make `::1`: no candidate.
        assert!(single_cta_group(&one).is_empty());
    }

    /// Applying the sharing step again and again, always keeping its first candidate, comes
    /// to an end: no operand goes back to a region it left, no offset grows without bound.
    #[test]
    fn sharing_operands_comes_to_an_end() {
        let mut p = two_mmas();
        for _ in 0..20 {
            match share_operands(&p).into_iter().next() {
                Some(q) => p = q,
                None => {
                    // Every descriptor in one region, A no longer from TMEM.
                    let regions: HashSet<u8> = descs(&p).iter().map(|(_, d)| d.region).collect();
                    assert_eq!(regions.len(), 1, "{p:?}");
                    assert!(mmas(&p).iter().all(|m| matches!(m.a, MmaA::Desc(_))));
                    return;
                }
            }
        }
        panic!("the sharing step still offers candidates after 20 steps");
    }

    /// A block-scaled mxf8f6f4 mma (layout (b): A E5M2, B E4M3, N = 64, M = 128) becomes the
    /// f8f6f4 mma of layout (a) with the same types and shape, F32 D, no scale factors.
    #[test]
    fn a_block_scaled_mma_becomes_unscaled() {
        let mut p = two_mmas();
        let Some(Stmt::Tc(Op::Mma(m))) = p.warps[0].get_mut(3) else {
            panic!("the sample's first mma is its fourth statement")
        };
        m.form.kind = MmaKind::Mxf8f6f4;
        m.form.block_scale = true;
        m.form.scale_vec = Some(tcgen05_ir::ScaleVec::X1);
        m.scale_a = Some(TmemRef::slot(0, 0, 16));
        m.scale_b = Some(TmemRef::slot(0, 0, 20));
        // PTX ISA §9.7.16.4.2 layout (b): A type bits 7-9, N >> 3 at 17-22, UE8M0 bit 23,
        // M >> 7 at 27-28.
        m.idesc = 1 << 7 | (64 >> 3) << 17 | 1 << 23 | (128 >> 7) << 27;
        let c = unscale_mmas(&p);
        assert_eq!(c.len(), 1);
        let u = &mmas(&c[0])[0];
        assert_eq!(u.form.kind, MmaKind::F8f6f4);
        assert!(!u.form.block_scale && u.form.scale_vec.is_none());
        assert_eq!((u.scale_a, u.scale_b), (None, None));
        // Layout (a): D F32 at bits 4-5, A type bits 7-9, N >> 3 at 17-22, M >> 4 at 24-28.
        assert_eq!(
            u.idesc,
            1 << 4 | 1 << 7 | (64 >> 3) << 17 | (128 >> 4) << 24
        );
        // The second mma (f16) is not block-scaled: nothing else to unscale.
        assert!(unscale_mmas(&c[0]).is_empty());
    }

    /// A sparse mma becomes the dense one: no metadata, the idesc's bits 0-2 cleared, the rest
    /// (kind, shape, operands) kept; a dense mma gives no candidate.
    #[test]
    fn a_sparse_mma_becomes_dense() {
        let mut p = two_mmas();
        let Some(Stmt::Tc(Op::Mma(m))) = p.warps[0].get_mut(3) else {
            panic!("the sample's first mma is its fourth statement")
        };
        m.form.sp = true;
        m.sp_meta = Some(TmemRef::slot(0, 0, 24));
        let before = m.idesc;
        // §9.7.16.4.2: sparse flag bit 2, selector 1 in bits 0-1.
        m.idesc |= 0b101;
        let c = densify_mmas(&p);
        assert_eq!(c.len(), 1);
        let u = &mmas(&c[0])[0];
        assert!(!u.form.sp);
        assert_eq!(u.sp_meta, None);
        assert_eq!(u.idesc, before & !0b111);
        assert_eq!(u.form.kind, mmas(&p)[0].form.kind);
        assert!(densify_mmas(&c[0]).is_empty());
    }

    #[test]
    fn scale_factors_share_their_columns() {
        let mut p = two_mmas();
        let Some(Stmt::Tc(Op::Mma(m))) = p.warps[0].get_mut(4) else {
            panic!("the sample's second mma is its fifth statement")
        };
        let (a, b) = (TmemRef::slot(0, 0, 16), TmemRef::slot(0, 0, 20));
        m.scale_a = Some(a);
        m.scale_b = Some(b);
        let c = share_scales(&p);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (mmas(&c[0])[1].scale_a, mmas(&c[0])[1].scale_b),
            (Some(a), Some(a))
        );
        assert_eq!(
            (mmas(&c[1])[1].scale_a, mmas(&c[1])[1].scale_b),
            (Some(b), Some(b))
        );
        assert!(share_scales(&c[0]).is_empty());
    }

    /// nCols shrinks only as far as every address of the allocation still starts inside it.
    #[test]
    fn ncols_shrink_keeps_every_access_inside() {
        let mut p = single_warp_roundtrip();
        let set = |p: &mut Program, n: u32| {
            for s in &mut p.warps[0] {
                if let Stmt::Tc(Op::Alloc { ncols, .. } | Op::Dealloc { ncols, .. }) = s {
                    ncols.value = n;
                }
            }
        };
        set(&mut p, 256);
        let ncols = |q: &Program| {
            q.ops().iter().find_map(|o| match o {
                Op::Alloc { ncols, .. } => Some(ncols.value),
                _ => None,
            })
        };
        // The sample's accesses are at column 0: 32 and half of 256.
        let c = simplify_ncols(&p);
        assert_eq!(
            c.iter().map(ncols).collect::<Vec<_>>(),
            [Some(32), Some(128)]
        );
        // An ld at column 40: 32 would leave it outside, 128 keeps it inside.
        for s in &mut p.warps[0] {
            if let Stmt::Tc(Op::Ld { taddr, .. }) = s {
                taddr.col = 40;
            }
        }
        let c = simplify_ncols(&p);
        assert_eq!(c.iter().map(ncols).collect::<Vec<_>>(), [Some(128)]);
    }
}
