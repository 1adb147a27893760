//! Reduction steps that simplify operands rather than remove statements:
//!
//! - every `.cta_group::2` instruction made `::1` at once (a `::2` pair needs both CTAs and
//!   their synchronization, reference §2.5), the commit's `.multicast::cluster` dropped with
//!   it, and then the cluster shrunk to one CTA, with and without its cluster barriers;
//! - one shared-memory operand (an mma's A or B descriptor, a cp's source) made to name the
//!   region of another, or to be that other descriptor, and an mma's A taken from shared
//!   memory instead of TMEM: the fills and copies that only fed the replaced operand can go;
//! - every nCols toward 32 (all occurrences of one value at once, so alloc and dealloc stay
//!   matched), ld/st shapes toward `.32x32b.x1`.

use super::groups::without_cluster_barriers;
use super::tree::rewrite_all;
use tcgen05_ir::idesc::{Idesc, IdescLayout};
use tcgen05_ir::{CtaGroup, LdStShape, MmaA, NCols, Num, Op, Program, SmemDesc};

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

/// One descriptor operand made to name another operand's region (its own layout kept, at
/// its own offset or [`SHIFTS`] past it), or made that other descriptor; an mma's A from TMEM replaced by a descriptor of the program.
pub(super) fn share_operands(p: &Program) -> Vec<Program> {
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
    let mut v = Vec::new();
    for from in values {
        for to in [32, from / 2] {
            if to >= from || to < 32 {
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
    use tcgen05_ir::samples::single_warp_roundtrip;
    use tcgen05_ir::{MmaKind, Stmt, TmemRef};
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

    fn mmas(p: &Program) -> Vec<tcgen05_ir::Mma> {
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
}
