//! `fixup`: repairs any program (deserialized, byte-mutated, hand-edited) into a valid one.
//!
//! The repair keeps what can be kept legally and rebuilds the rest with the builder's protocol
//! (see [`crate::builder`]):
//! - the launch, made legal: a tcgen05 target (else sm_100a), a `.version` between the target's
//!   minimum and 9.0 (GEN-TARGET, GEN-PTXVER), a cluster size of 1, 2 or 4, 1 to 16 warps;
//! - the `.cta_group` of the input's first alloc where a CTA pair exists (else `::1`);
//! - each warp's ld and st instructions, in order (flattened out of loops, branches and calls),
//!   with their forms made legal (`.sync.aligned`, `.b32`, pack only on ld, unpack only on st,
//!   `.red` only where the target has it, a vector length from the table, a split offset only
//!   on `.16x32bx2`) and their addresses moved into the warp's lane quarter and its own column
//!   window (LDST-LANE-QUARTER); every st is followed by `wait::st`, every ld by `wait::ld`;
//! - schedule knobs (`Spin`), checkpoints and slot observations;
//! - then one allocation of 512 columns per CTA, the synchronization and the teardown of the
//!   builder's protocol.
//!
//! MMAs, copies, shifts, commits and mbarriers are dropped: their legality depends on operands
//! (descriptors, shared-memory data, completion chains) that a repair cannot reconstruct
//! meaningfully.

use crate::stmts::*;
use crate::target;
use tcgen05_ir::form::*;
use tcgen05_ir::*;

/// Most ld/st items kept per warp (keeps repaired programs small).
pub const MAX_ITEMS: usize = 48;

/// The valid program closest to `p` that the repair can make (see the module docs).
pub fn fixup(p: &Program) -> Program {
    let tgt = if crate::config::TCGEN05_TARGETS.contains(&p.launch.target) {
        p.launch.target
    } else {
        Target::Sm100a
    };
    let min = target::min_version(tgt);
    let version = if p.launch.ptx_version < min {
        min
    } else if p.launch.ptx_version > target::MAX_VERSION {
        target::MAX_VERSION
    } else {
        // Keep a listed version; an unlisted one between them becomes the target's minimum.
        *target::VERSIONS
            .iter()
            .find(|v| **v == p.launch.ptx_version)
            .unwrap_or(&min)
    };
    let cluster_size = if matches!(p.launch.cluster_size, 1 | 2 | 4) {
        p.launch.cluster_size
    } else {
        1
    };
    let clusters = p.launch.clusters.clamp(1, 4);
    let nwarps = p.warps.len().clamp(1, 16);
    let first_alloc_cg = p.ops().into_iter().find_map(|op| match op {
        Op::Alloc { form, .. } => Some(form.cta_group),
        _ => None,
    });
    let cg = if cluster_size >= 2 && first_alloc_cg == Some(CtaGroup::Two) {
        CtaGroup::Two
    } else {
        CtaGroup::One
    };
    let groups = nwarps.div_ceil(4) as u32;
    let width = 512 / groups.next_power_of_two();
    let ld_red_ok = target::has_ld_red(tgt) && version >= PtxVersion::new(8, 8);

    let sync = |c: &mut Vec<Stmt>| {
        if cg == CtaGroup::Two {
            c.push(Stmt::ClusterArrive { relaxed: false });
            c.push(Stmt::ClusterWait);
        } else {
            c.push(Stmt::BarCta);
        }
    };
    let mut warps = Vec::with_capacity(nwarps);
    for w in 0..nwarps {
        let mut items = Vec::new();
        if let Some(code) = p.warps.get(w) {
            collect(p, code, 0, &mut items);
        }
        let q = (w % 4) as u16;
        let col0 = width * (w / 4) as u32;
        let mut work = Vec::with_capacity(items.len() * 2);
        for s in items.into_iter().take(MAX_ITEMS) {
            match s {
                Stmt::Tc(op) => work.extend(legal_ldst(&op, q, col0, width, ld_red_ok)),
                Stmt::Spin(n) => work.push(Stmt::Spin(n.min(1 << 16))),
                Stmt::Checkpoint(id) => work.push(Stmt::Checkpoint(id.max(1))),
                Stmt::ObserveAddr { .. } => work.push(Stmt::ObserveAddr { slot: 0 }),
                _ => {}
            }
        }
        let mut c = Vec::with_capacity(work.len() + 12);
        if cg == CtaGroup::Two {
            sync(&mut c);
        }
        if w == 0 {
            c.push(alloc(cg, 0, 512));
            c.push(fence_before());
        }
        sync(&mut c);
        c.push(fence_after());
        c.extend(work);
        c.push(fence_before());
        sync(&mut c);
        if w == 0 {
            c.push(fence_after());
            c.push(dealloc(cg, 0, 512));
            c.push(relinquish(cg));
        }
        warps.push(c);
    }
    Program {
        launch: Launch {
            target: tgt,
            ptx_version: version,
            cluster_size,
            clusters,
            warps_per_cta: nwarps as u8,
            declare_cluster: p.launch.declare_cluster && cluster_size > 1,
        },
        smem: Smem {
            slots: 1,
            mbarriers: 0,
            regions: Vec::new(),
        },
        warps,
        funcs: Vec::new(),
    }
}

/// The statements of `code` that the repair keeps, flattened (loop bodies once, both branches,
/// calls followed up to depth 4).
fn collect(p: &Program, code: &[Stmt], depth: u32, out: &mut Vec<Stmt>) {
    for s in code {
        if out.len() >= 4 * MAX_ITEMS {
            return;
        }
        match s {
            Stmt::Tc(op @ (Op::Ld { .. } | Op::St { .. })) => out.push(Stmt::Tc(op.clone())),
            Stmt::Spin(_) | Stmt::Checkpoint(_) | Stmt::ObserveAddr { .. } => out.push(s.clone()),
            Stmt::Loop { body, .. } => collect(p, body, depth, out),
            Stmt::If { then, els, .. } => {
                collect(p, then, depth, out);
                collect(p, els, depth, out);
            }
            Stmt::Call(f) if depth < 4 => {
                if let Some(f) = p.funcs.get(*f as usize) {
                    collect(p, &f.body, depth + 1, out);
                }
            }
            _ => {}
        }
    }
}

/// A legal version of an ld or st (plus its wait), in quarter `q`, columns
/// `col0 .. col0 + width`.
fn legal_ldst(op: &Op, q: u16, col0: u32, width: u32, ld_red_ok: bool) -> Vec<Stmt> {
    let (shape, num, pack, taddr, is_ld, red, red_op, ty, seed) = match op {
        Op::Ld { form, taddr, .. } => (
            form.shape,
            form.num,
            form.pack == Some(Pack::Pack16b),
            *taddr,
            true,
            form.red,
            form.red_op,
            form.ty,
            0,
        ),
        Op::St {
            form, taddr, seed, ..
        } => (
            form.shape,
            form.num,
            form.pack == Some(Pack::Unpack16b),
            *taddr,
            false,
            false,
            None,
            Ty::B32,
            *seed,
        ),
        _ => return Vec::new(),
    };
    // LDST-SHAPE: a spelling the spec does not list becomes `.32x32b` (LDST-NUM needs nothing:
    // the `.num` search below only draws listed counts).
    let shape = if shape.is_legal() {
        shape
    } else {
        LdStShape::S32x32b
    };
    let red = red && ld_red_ok && matches!(shape, LdStShape::S32x32b | LdStShape::S16x32bx2);
    let pack = pack && !red;
    let mult = if pack { 2 } else { 1 };
    let fp = |n: Num| {
        let c = cols_per_rep(shape) * n.count() * mult;
        if shape == LdStShape::S16x32bx2 {
            2 * c
        } else {
            c
        }
    };
    let Some(num) = Num::LEGAL.iter().rev().copied().find(|n| {
        *n <= num.max(if red { Num::X2 } else { Num::X1 })
            && (!red || *n >= Num::X2)
            && vec_len(shape, *n).is_some()
            && fp(*n) <= width
    }) else {
        return Vec::new();
    };
    let lane = 32 * q
        + if is_16_lane(shape) && taddr.lane % 32 >= 16 {
            16
        } else {
            0
        };
    let col = col0 + u32::from(taddr.col) % (width - fp(num) + 1);
    let t = TmemRef::slot(0, lane, col as u16);
    let split = (shape == LdStShape::S16x32bx2).then(|| num.count() * mult);
    if !is_ld {
        return vec![
            st(st_form(shape, num, pack), t, split, seed),
            wait(WaitOp::St),
        ];
    }
    let form = if red {
        let ty = if matches!(ty, Ty::U32 | Ty::S32 | Ty::F32) {
            ty
        } else {
            Ty::U32
        };
        LdForm {
            red: true,
            red_op: Some(red_op.unwrap_or(RedOp::Max)),
            ty,
            ..ld_form(shape, num, false)
        }
    } else {
        ld_form(shape, num, pack)
    };
    vec![ld(form, t, split), wait(WaitOp::Ld)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, valid_program};

    /// Structural properties of a repaired program, from the protocol (reference §3, §8): one
    /// alloc and one dealloc of the same size per CTA, every st/ld followed by its wait, every
    /// access inside the warp's quarter.
    fn assert_protocol(p: &Program) {
        let ops = p.ops();
        let allocs = ops.iter().filter(|o| matches!(o, Op::Alloc { .. })).count();
        let deallocs = ops
            .iter()
            .filter(|o| matches!(o, Op::Dealloc { .. }))
            .count();
        assert_eq!((allocs, deallocs), (1, 1));
        for (w, code) in p.warps.iter().enumerate() {
            for (i, s) in code.iter().enumerate() {
                if let Stmt::Tc(op @ (Op::Ld { taddr, .. } | Op::St { taddr, .. })) = s {
                    let want = if matches!(op, Op::Ld { .. }) {
                        WaitOp::Ld
                    } else {
                        WaitOp::St
                    };
                    assert!(matches!(&code[i + 1], Stmt::Tc(Op::Wait { form }) if form.op == want));
                    assert_eq!(taddr.lane / 32, (w % 4) as u16, "lane quarter");
                    assert!(!taddr.divergent);
                }
            }
        }
        assert!(crate::config::TCGEN05_TARGETS.contains(&p.launch.target));
        assert!(p.launch.ptx_version >= target::min_version(p.launch.target));
    }

    #[test]
    fn repairs_broken_programs_into_the_protocol() {
        let mut p = valid_program(&Config::default(), 3);
        p.launch.target = Target::Sm90a;
        p.launch.ptx_version = PtxVersion::new(7, 0);
        p.launch.cluster_size = 3;
        for w in &mut p.warps {
            w.reverse();
            w.push(Stmt::Tc(Op::Ld {
                form: LdForm {
                    sync: false,
                    pack: Some(Pack::Unpack16b),
                    ..ld_form(LdStShape::S16x256b, Num::X128, false)
                },
                taddr: TmemRef {
                    base: TBase::Abs,
                    lane: 127,
                    col: 511,
                    divergent: true,
                },
                split: Some(3),
                nregs: 7,
            }));
        }
        let f = fixup(&p);
        assert_protocol(&f);
        assert_eq!(f.launch.cluster_size, 1);
    }

    #[test]
    fn repairs_what_the_builder_makes() {
        for seed in 0..200 {
            assert_protocol(&fixup(&valid_program(&Config::default(), seed)));
        }
    }
}
