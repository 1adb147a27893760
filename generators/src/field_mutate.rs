//! Qualifier and operand mutations for the ptxas campaign: each changes one field of one
//! tcgen05 instruction (or of the launch) to a value the IR can print, legal or not. The
//! oracle, not this module, says whether the result is ill-formed; the campaign compares that
//! with ptxas. They reach the static rows of the catalogue (reference §6: nCols, shapes,
//! `.num`, vector lengths, pack/unpack, `.red`, state spaces, types, `.sync.aligned`,
//! `.cta_group` uniformity, multicast, decompression formats, MMA kinds, block scaling,
//! `.ws`, `.ashift`, collectors, disable-output-lane, scale-input-d, target and `.version`).

use tcgen05_ir::form::*;
use tcgen05_ir::rng::SplitMix64;
use tcgen05_ir::*;

/// The mutations' source: the workspace's SplitMix64 ([`SplitMix64`]; seeded runs repeat
/// exactly), with the draws the mutators use.
#[derive(Debug, Clone)]
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(SplitMix64::new(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// True with probability `pct`%.
    pub fn pct(&mut self, pct: u64) -> bool {
        self.next_u64() % 100 < pct
    }

    /// One element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

/// nCols values: the legal ones and the edges of ALLOC-NCOLS-POW2 / -RANGE.
const NCOLS: &[u32] = &[0, 16, 32, 48, 64, 96, 128, 192, 256, 512, 544, 1024];

fn mut_ncols(r: &mut Rng, n: &mut NCols) {
    if r.pct(80) {
        n.value = r.pick(NCOLS);
    } else {
        n.form = r.pick(&[NColsForm::Imm, NColsForm::Reg]);
    }
}

fn flip(b: &mut bool) {
    *b = !*b;
}

fn mut_cg(r: &mut Rng, cg: &mut CtaGroup) {
    *cg = r.pick(CtaGroup::ALL);
}

/// Adds a `.16x32bx2` immediate split where there is none, or removes the one there is.
fn toggle_split(r: &mut Rng, split: &mut Option<u32>) {
    *split = if split.is_some() {
        None
    } else {
        Some(r.pick(&[1, 2, 8, 16, 32]))
    }
}

/// Drops (or restores) `.sync` or `.aligned` (GEN-SYNC-QUAL).
fn flip_sync_or_aligned(r: &mut Rng, sync: &mut bool, aligned: &mut bool) {
    if r.pct(50) { flip(sync) } else { flip(aligned) }
}

/// Keeps the register count of an ld/st consistent with its (new) shape most of the time, so
/// that the mutation tests the qualifier, not only LDST-VEC-LEN; otherwise grows it by
/// `grow`. A `.16x32bx2` without its split mostly gets one.
fn fit_regs(
    r: &mut Rng,
    shape: LdStShape,
    num: Num,
    split: &mut Option<u32>,
    nregs: &mut u16,
    grow: impl FnOnce(&mut Rng) -> u16,
) {
    if r.pct(80) {
        if let Some(n) = vec_len(shape, num) {
            *nregs = n;
        }
    } else {
        *nregs = (*nregs).saturating_add(grow(r)).min(128);
    }
    if shape == LdStShape::S16x32bx2 && split.is_none() && r.pct(80) {
        *split = Some(16);
    }
}

fn mut_ld(r: &mut Rng, f: &mut LdForm, split: &mut Option<u32>, nregs: &mut u16) {
    match r.below(9) {
        0 => f.shape = r.pick(LdStShape::ALL),
        1 => f.num = r.pick(Num::ALL),
        2 => f.pack = r.pick(&[None, Some(Pack::Pack16b), Some(Pack::Unpack16b)]),
        3 => {
            flip(&mut f.red);
            f.red_op = f.red.then(|| r.pick(RedOp::ALL));
            f.ty = if f.red {
                r.pick(&[Ty::F32, Ty::U32, Ty::S32])
            } else {
                Ty::B32
            };
        }
        4 => f.red_op = r.pick(&[None, Some(RedOp::Min), Some(RedOp::Max)]),
        5 => {
            if r.pct(50) {
                flip(&mut f.abs)
            } else {
                flip(&mut f.nan)
            }
        }
        6 => f.ty = r.pick(Ty::ALL),
        7 => toggle_split(r, split),
        _ => flip_sync_or_aligned(r, &mut f.sync, &mut f.aligned),
    }
    fit_regs(r, f.shape, f.num, split, nregs, |r| r.pick(&[1u16, 2]));
}

fn mut_st(r: &mut Rng, f: &mut StForm, split: &mut Option<u32>, nregs: &mut u16) {
    match r.below(6) {
        0 => f.shape = r.pick(LdStShape::ALL),
        1 => f.num = r.pick(Num::ALL),
        2 => f.pack = r.pick(&[None, Some(Pack::Pack16b), Some(Pack::Unpack16b)]),
        3 => f.ty = r.pick(Ty::ALL),
        4 => toggle_split(r, split),
        _ => flip_sync_or_aligned(r, &mut f.sync, &mut f.aligned),
    }
    fit_regs(r, f.shape, f.num, split, nregs, |_| 1);
}

fn tmem0() -> TmemRef {
    TmemRef::slot(0, 0, 0)
}

fn mut_mma(r: &mut Rng, m: &mut Mma) {
    let f = &mut m.form;
    match r.below(12) {
        0 => mut_cg(r, &mut f.cta_group),
        1 => f.kind = r.pick(MmaKind::ALL),
        2 => {
            flip(&mut f.ws);
            if f.ws {
                m.disable_output_lane = None;
            }
        }
        3 => {
            flip(&mut f.sp);
            m.sp_meta = f.sp.then(tmem0);
        }
        4 => {
            flip(&mut f.block_scale);
            m.scale_a = f.block_scale.then(tmem0);
            m.scale_b = f.block_scale.then(tmem0);
            if f.block_scale {
                f.kind = r.pick(&[MmaKind::Mxf8f6f4, MmaKind::Mxf4, MmaKind::Mxf4nvf4]);
                m.disable_output_lane = None;
                m.scale_input_d = None;
            }
        }
        5 => {
            f.scale_vec = r.pick(&[
                None,
                Some(ScaleVec::X1),
                Some(ScaleVec::X2),
                Some(ScaleVec::X4),
                Some(ScaleVec::Block16),
                Some(ScaleVec::Block32),
            ])
        }
        6 => {
            flip(&mut f.ashift);
            if f.ashift && r.pct(70) {
                m.a = MmaA::Tmem(tmem0());
            }
        }
        7 => {
            f.collector = if r.pct(20) {
                None
            } else {
                Some(Collector {
                    buf: r.pick(CollectorBuf::ALL),
                    op: r.pick(CollectorOp::ALL),
                })
            }
        }
        8 => {
            m.disable_output_lane = r
                .pick(&[None, Some(4usize), Some(8), Some(3)])
                .map(|n| vec![0; n])
        }
        9 => m.scale_input_d = r.pick(&[None, Some(0u8), Some(3), Some(15), Some(16), Some(31)]),
        10 => {
            m.zero_col_mask = if m.zero_col_mask.is_some() {
                None
            } else {
                Some(0)
            }
        }
        _ => {
            m.a = match m.a {
                MmaA::Desc(_) => MmaA::Tmem(tmem0()),
                MmaA::Tmem(_) => MmaA::Desc(m.b),
            }
        }
    }
}

fn mut_op(r: &mut Rng, op: &mut Op) {
    match op {
        Op::Alloc { form: f, ncols, .. } => match r.below(7) {
            0 | 1 => mut_ncols(r, ncols),
            2 => mut_cg(r, &mut f.cta_group),
            3 => {
                f.space = r.pick(&[
                    None,
                    Some(StateSpace::SharedCta),
                    Some(StateSpace::SharedCluster),
                    Some(StateSpace::Shared),
                    Some(StateSpace::Global),
                ])
            }
            4 => f.ty = r.pick(Ty::ALL),
            5 => flip(&mut f.exclusive),
            _ => {
                if r.pct(50) {
                    flip(&mut f.sync)
                } else {
                    flip(&mut f.aligned)
                }
            }
        },
        Op::Dealloc { form: f, ncols, .. } => match r.below(6) {
            0 | 1 => mut_ncols(r, ncols),
            2 => mut_cg(r, &mut f.cta_group),
            3 => f.ty = r.pick(Ty::ALL),
            4 => flip(&mut f.exclusive),
            _ => {
                if r.pct(50) {
                    flip(&mut f.sync)
                } else {
                    flip(&mut f.aligned)
                }
            }
        },
        Op::Relinquish { form: f } => match r.below(3) {
            0 => mut_cg(r, &mut f.cta_group),
            1 => flip(&mut f.sync),
            _ => flip(&mut f.aligned),
        },
        Op::Ld {
            form, split, nregs, ..
        } => mut_ld(r, form, split, nregs),
        Op::St {
            form, split, nregs, ..
        } => mut_st(r, form, split, nregs),
        Op::Wait { form } => match r.below(3) {
            0 => {
                form.cta_group = if form.cta_group.is_some() {
                    None
                } else {
                    Some(r.pick(CtaGroup::ALL))
                }
            }
            1 => flip(&mut form.sync),
            _ => flip(&mut form.aligned),
        },
        Op::Fence { kind } => *kind = r.pick(FenceKind::ALL),
        Op::Commit { form, cta_mask, .. } => match r.below(5) {
            0 => mut_cg(r, &mut form.cta_group),
            1 => flip(&mut form.arrive_one),
            2 => {
                flip(&mut form.multicast);
                if r.pct(80) {
                    *cta_mask = form.multicast.then_some(3);
                }
            }
            3 => *cta_mask = if cta_mask.is_some() { None } else { Some(1) },
            _ => form.ty = r.pick(Ty::ALL),
        },
        Op::Cp { form, .. } => match r.below(5) {
            0 => mut_cg(r, &mut form.cta_group),
            1 => form.shape = r.pick(CpShape::ALL),
            2 => {
                form.multicast = r.pick(&[
                    None,
                    Some(CpMulticast::Warpx2_02_13),
                    Some(CpMulticast::Warpx2_01_23),
                    Some(CpMulticast::Warpx4),
                ])
            }
            3 => {
                form.dst_fmt = if form.dst_fmt.is_some() {
                    None
                } else {
                    Some(CpDstFmt::B8x16)
                }
            }
            _ => form.src_fmt = r.pick(&[None, Some(CpSrcFmt::B6x16P32), Some(CpSrcFmt::B4x16P64)]),
        },
        Op::Shift { form, .. } => {
            if r.pct(50) {
                mut_cg(r, &mut form.cta_group)
            } else {
                flip(&mut form.down_first)
            }
        }
        Op::Mma(m) => mut_mma(r, m),
    }
}

/// The number of tcgen05 ops of `p` (the range of [`mutate_op`]'s index).
pub fn op_count(p: &Program) -> usize {
    p.ops().len()
}

/// Applies `f` to the `k`-th tcgen05 op of `p` in [`Program::ops`] order (the statement paths
/// of [`crate::walk`] visit ops in that order); nothing when `p` has fewer ops.
pub fn with_op(p: &mut Program, k: usize, f: &mut dyn FnMut(&mut Op)) {
    if let Some(path) = crate::walk::find_ops(p, &|_| true).get(k) {
        f(crate::walk::op_mut(p, path));
    }
}

/// Mutates the `k`-th op of `p`.
pub fn mutate_op(r: &mut Rng, p: &mut Program, k: usize) {
    with_op(p, k, &mut |op| mut_op(r, op));
}

/// Applies one random mutation to `p`: usually to one tcgen05 op, sometimes to the launch
/// (target, `.version`: GEN-TARGET, GEN-PTXVER).
pub fn mutate(r: &mut Rng, p: &mut Program) {
    let n = op_count(p);
    if n == 0 || r.pct(8) {
        if r.pct(50) {
            p.launch.target = r.pick(Target::ALL);
        } else {
            let v = r.pick(&[(8u8, 5u8), (8, 6), (8, 7), (8, 8), (9, 0), (9, 4)]);
            p.launch.ptx_version = PtxVersion::new(v.0, v.1);
        }
        return;
    }
    let k = r.below(n);
    mutate_op(r, p, k);
}

/// The ptxas campaign's case source: a generated valid program ([`crate::valid_program`]) or
/// an ISA-example sample, with 0 to 2 mutations ([`mutate`]).
pub fn mutated_case(rng: &mut Rng) -> Case {
    let seed = rng.next_u64();
    let mut program = if rng.pct(85) {
        crate::valid_program(&crate::Config::default(), seed)
    } else {
        samples::single_warp_roundtrip()
    };
    let n = rng.pick(&[0usize, 1, 1, 1, 2]);
    for _ in 0..n {
        mutate(rng, &mut program);
    }
    Case {
        program,
        intent: Intent::Unknown,
        provenance: Provenance {
            seed: Some(seed),
            origin: format!("ptxas campaign ({n} mutation(s) of a generated program)"),
            family: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_deterministic_and_change_something() {
        let base = samples::single_warp_roundtrip();
        let mut changed = 0;
        for seed in 0..200 {
            let (mut a, mut b) = (base.clone(), base.clone());
            mutate(&mut Rng::new(seed), &mut a);
            mutate(&mut Rng::new(seed), &mut b);
            assert_eq!(a, b);
            changed += usize::from(a != base);
        }
        // A few mutations pick the value already there; most change the program.
        assert!(changed > 150, "{changed}");
    }

    #[test]
    fn with_op_reaches_every_op_in_order() {
        let mut p = samples::single_warp_roundtrip();
        let n = op_count(&p);
        let mut fams = Vec::new();
        for k in 0..n {
            with_op(&mut p, k, &mut |op| fams.push(op.form().family()));
        }
        let want: Vec<Family> = p.ops().iter().map(|o| o.form().family()).collect();
        assert_eq!(fams, want);
    }
}
