//! Mutators of static rules (reference §6, kind static): the oracle's check flags them.

use super::*;

/// GEN-TARGET: a target without tcgen05 (reference §1).
pub(super) fn m_gen_target(p: &mut Program, c: &mut dyn Choices) -> bool {
    p.launch.target = if c.percent(50) {
        Target::Sm90a
    } else {
        Target::Sm100
    };
    true
}

/// GEN-PTXVER: a `.version` below 8.6 on sm_100a.
pub(super) fn m_gen_ptxver(p: &mut Program, c: &mut dyn Choices) -> bool {
    p.launch.ptx_version = [
        PtxVersion::new(8, 5),
        PtxVersion::new(8, 4),
        PtxVersion::new(8, 0),
    ][c.below(3) as usize];
    true
}

/// GEN-CTAGROUP-UNIFORM: the relinquish says `::2` in a `::1` kernel (both CTAs of the pair
/// execute it at the same point, so no pairing rule breaks); half the time it sits in a called
/// function, so the mix spans two functions (OQ-18).
pub(super) fn m_ctagroup_mixed(p: &mut Program, c: &mut dyn Choices) -> bool {
    let Some(path) = pick_op(p, c, &|op| matches!(op, Op::Relinquish { .. })) else {
        return false;
    };
    let two = relinquish(CtaGroup::Two);
    if c.percent(50) && p.funcs.len() < 200 {
        p.funcs.push(Func { body: vec![two] });
        let f = (p.funcs.len() - 1) as u8;
        *walk::get_mut(p, &path) = Stmt::Call(f);
    } else {
        *walk::get_mut(p, &path) = two;
    }
    true
}

/// GEN-SYNC-QUAL: `.sync` or `.aligned` missing on one alloc/dealloc/relinquish/ld/st/wait.
pub(super) fn m_sync_qual(p: &mut Program, c: &mut dyn Choices) -> bool {
    let drop_sync = c.percent(50);
    with_op(
        p,
        c,
        &|op| {
            matches!(
                op,
                Op::Alloc { .. }
                    | Op::Dealloc { .. }
                    | Op::Relinquish { .. }
                    | Op::Ld { .. }
                    | Op::St { .. }
                    | Op::Wait { .. }
            )
        },
        &mut |op, _| {
            let (s, a) = match op {
                Op::Alloc { form, .. } => (&mut form.sync, &mut form.aligned),
                Op::Dealloc { form, .. } => (&mut form.sync, &mut form.aligned),
                Op::Relinquish { form } => (&mut form.sync, &mut form.aligned),
                Op::Ld { form, .. } => (&mut form.sync, &mut form.aligned),
                Op::St { form, .. } => (&mut form.sync, &mut form.aligned),
                Op::Wait { form } => (&mut form.sync, &mut form.aligned),
                _ => unreachable!("filtered"),
            };
            if drop_sync { *s = false } else { *a = false }
        },
    )
}

/// Sets the nCols of the (single) allocation and its dealloc.
pub(super) fn set_ncols(p: &mut Program, value: u32) -> bool {
    let allocs = walk::find_ops(p, &|op| matches!(op, Op::Alloc { .. }));
    if allocs.len() != 1 {
        return false;
    }
    for path in walk::find_ops(p, &|op| matches!(op, Op::Alloc { .. } | Op::Dealloc { .. })) {
        match walk::op_mut(p, &path) {
            Op::Alloc { ncols, .. } | Op::Dealloc { ncols, .. } => ncols.value = value,
            _ => unreachable!(),
        }
    }
    true
}

/// ALLOC-NCOLS-POW2: nCols a multiple of 32 in range but not a power of two (e.g. 96, 160,
/// 288; the "nCols 48" breaks the unit too, so this stays on the 32-column grid).
pub(super) fn m_ncols_pow2(p: &mut Program, c: &mut dyn Choices) -> bool {
    let Some(n) = first_alloc_ncols(p) else {
        return false;
    };
    let v = n + 32 * (1 + c.below(2) * 2);
    v <= 512 && set_ncols(p, v)
}

pub(super) fn first_alloc_ncols(p: &Program) -> Option<u32> {
    p.ops().into_iter().find_map(|op| match op {
        Op::Alloc { ncols, .. } => Some(ncols.value),
        _ => None,
    })
}

/// ALLOC-NCOLS-POW2 with the value 48 (also off the 32-column unit).
pub(super) fn m_ncols_48(p: &mut Program, _: &mut dyn Choices) -> bool {
    set_ncols(p, 48)
}

/// ALLOC-NCOLS-RANGE: a power of two outside [32, 512] (16, 8 or 1024) on a program that
/// touches no TMEM column.
pub(super) fn m_ncols_range(p: &mut Program, c: &mut dyn Choices) -> bool {
    set_ncols(p, [16, 8, 1024][c.below(3) as usize])
}

/// ALLOC-DST-STATESPACE: `dst` qualified with a state space other than `.shared::cta`, or a
/// type other than `.b32`.
pub(super) fn m_dst_statespace(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Alloc { .. }), &mut |op, c| {
        if let Op::Alloc { form, .. } = op {
            match c.below(3) {
                0 => form.space = Some(StateSpace::SharedCluster),
                1 => form.space = Some(StateSpace::Global),
                _ => form.ty = Ty::B64,
            }
        }
    })
}

/// LDST-VEC-LEN: one register more or fewer than the table of §2.6.
pub(super) fn m_vec_len(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| matches!(op, Op::Ld { .. } | Op::St { .. }),
        &mut |op, c| {
            if let Op::Ld { nregs, .. } | Op::St { nregs, .. } = op {
                *nregs = if *nregs > 1 && c.percent(50) {
                    *nregs - 1
                } else {
                    *nregs + 1
                };
            }
        },
    )
}

/// LDST-SHAPE (§2.6, §3.2-3.3): a plain ld or st spelled with the shape `.32x64b`, which the
/// spec does not list; `.num` and the register count stay as they were (the vector-length
/// table has no row for an unlisted shape, so only the shape rule speaks).
pub(super) fn m_ldst_shape(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| is_plain_ld(op) || is_st(op),
        &mut |op, _| match op {
            Op::Ld { form, split, .. } => {
                form.shape = LdStShape::S32x64b;
                form.pack = None;
                *split = None;
            }
            Op::St { form, split, .. } => {
                form.shape = LdStShape::S32x64b;
                form.pack = None;
                *split = None;
            }
            _ => unreachable!("filtered"),
        },
    )
}

/// LDST-NUM (§2.6): a plain ld or st with the repetition count `.x256` (`.num` stops at
/// `.x128`); shape and register count unchanged.
pub(super) fn m_ldst_num(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| is_plain_ld(op) || is_st(op),
        &mut |op, _| match op {
            Op::Ld { form, .. } => form.num = Num::X256,
            Op::St { form, .. } => form.num = Num::X256,
            _ => unreachable!("filtered"),
        },
    )
}

/// CP-SHAPE (§3.5): a cp spelled with the shape `.64x256b`, which the spec does not list
/// (no multicast, which no rule pairs with it; decompression formats unchanged).
pub(super) fn m_cp_shape(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Cp { .. }), &mut |op, _| {
        if let Op::Cp { form, .. } = op {
            form.shape = CpShape::S64x256b;
            form.multicast = None;
        }
    })
}

/// LDST-NUM-NA: `.16x128b.x128`, `.16x256b.x64` or `.16x256b.x128`.
pub(super) fn m_num_na(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| is_plain_ld(op) || is_st(op), &mut |op, c| {
        let (shape, num) = [
            (LdStShape::S16x128b, Num::X128),
            (LdStShape::S16x256b, Num::X64),
            (LdStShape::S16x256b, Num::X128),
        ][c.below(3) as usize];
        let regs = (cols_per_rep(shape) / 2).max(1) as u16 * num.count() as u16;
        match op {
            Op::Ld {
                form, split, nregs, ..
            } => {
                form.shape = shape;
                form.num = num;
                *split = None;
                *nregs = regs;
            }
            Op::St {
                form, split, nregs, ..
            } => {
                form.shape = shape;
                form.num = num;
                *split = None;
                *nregs = regs;
            }
            _ => unreachable!(),
        }
    })
}

/// LDST-SPLITOFF: an immHalfSplitoff on a shape other than `.16x32bx2`, or none on it.
pub(super) fn m_splitoff(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| matches!(op, Op::Ld { .. } | Op::St { .. }),
        &mut |op, _| {
            let (shape, split) = match op {
                Op::Ld { form, split, .. } => (form.shape, split),
                Op::St { form, split, .. } => (form.shape, split),
                _ => unreachable!(),
            };
            *split = if shape == LdStShape::S16x32bx2 {
                None
            } else {
                Some(16)
            };
        },
    )
}

/// LDST-TYPE: a non-reduction ld or st with a type other than `.b32`.
pub(super) fn m_ldst_type(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| is_plain_ld(op) || is_st(op), &mut |op, c| {
        let ty = [Ty::U32, Ty::B64, Ty::F32][c.below(3) as usize];
        match op {
            Op::Ld { form, .. } => form.ty = ty,
            Op::St { form, .. } => form.ty = ty,
            _ => unreachable!(),
        }
    })
}

/// ST-UNPACK-ONLY (`.unpack::16b` is allowed only on st): `.unpack::16b` on an ld.
pub(super) fn m_ld_unpack(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_plain_ld, &mut |op, _| {
        if let Op::Ld { form, .. } = op {
            form.pack = Some(Pack::Unpack16b);
        }
    })
}

/// LD-PACK-ONLY (`.pack::16b` is allowed only on ld): `.pack::16b` on an st.
pub(super) fn m_st_pack(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_st, &mut |op, _| {
        if let Op::St { form, .. } = op {
            form.pack = Some(Pack::Pack16b);
        }
    })
}

/// LD-RED-SHAPE: `.red` with a shape other than `.32x32b` / `.16x32bx2`.
pub(super) fn m_red_shape(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_red_ld, &mut |op, c| {
        if let Op::Ld {
            form, split, nregs, ..
        } = op
        {
            form.shape =
                [LdStShape::S16x64b, LdStShape::S16x128b, LdStShape::S16x256b][c.below(3) as usize];
            form.num = Num::X2;
            *split = None;
            *nregs = vec_len(form.shape, form.num).expect("valid");
        }
    })
}

/// LD-RED-NUM: `.red` with `.x1`.
pub(super) fn m_red_num(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_red_ld, &mut |op, _| {
        if let Op::Ld { form, nregs, .. } = op {
            form.num = Num::X1;
            *nregs = 1;
        }
    })
}

/// LD-RED-TYPE: `.red` with `.b32`, or `.abs` on an integer type, or `.pack::16b`.
pub(super) fn m_red_type(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_red_ld, &mut |op, c| {
        if let Op::Ld { form, .. } = op {
            match c.below(3) {
                0 => {
                    form.ty = Ty::B32;
                    form.abs = false;
                    form.nan = false;
                }
                1 => {
                    form.ty = Ty::U32;
                    form.abs = true;
                }
                _ => form.pack = Some(Pack::Pack16b),
            }
        }
    })
}

/// LD-RED-TARGET: a program with ld.red moved to sm_100a.
pub(super) fn m_red_target(p: &mut Program, c: &mut dyn Choices) -> bool {
    if walk::find_ops(p, &is_red_ld).is_empty() {
        return false;
    }
    p.launch.target = if c.percent(50) {
        Target::Sm100a
    } else {
        Target::Sm100f
    };
    if p.launch.target == Target::Sm100f {
        // sm_100f has no shift either (SHIFT-TARGET): only when the program has none.
        if !walk::find_ops(p, &|op| matches!(op, Op::Shift { .. })).is_empty() {
            p.launch.target = Target::Sm100a;
        }
    }
    true
}

/// WAIT-OPS: a `.cta_group` on a wait.
pub(super) fn m_wait_ctagroup(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Wait { .. }), &mut |op, _| {
        if let Op::Wait { form } = op {
            form.cta_group = Some(CtaGroup::One);
        }
    })
}

/// CP-MCAST-REQ: `.64x128b` or `.32x128b` without its multicast.
pub(super) fn m_cp_mcast_req(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Cp { .. }), &mut |op, c| {
        if let Op::Cp { form, .. } = op {
            form.shape = if c.percent(50) {
                CpShape::S64x128b
            } else {
                CpShape::S32x128b
            };
            form.multicast = None;
        }
    })
}

/// CP-MCAST-OTHER: a multicast on a shape that has none.
pub(super) fn m_cp_mcast_other(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Cp { .. }), &mut |op, c| {
        if let Op::Cp { form, .. } = op {
            form.shape =
                [CpShape::S128x256b, CpShape::S4x256b, CpShape::S128x128b][c.below(3) as usize];
            form.multicast = Some(CpMulticast::Warpx4);
        }
    })
}

/// CP-DECOMP-FMT: one decompression format without the other.
pub(super) fn m_cp_decomp(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Cp { .. }), &mut |op, c| {
        if let Op::Cp { form, .. } = op {
            if c.percent(50) {
                form.dst_fmt = Some(CpDstFmt::B8x16);
                form.src_fmt = None;
            } else {
                form.dst_fmt = None;
                form.src_fmt = Some(CpSrcFmt::B4x16P64);
            }
        }
    })
}

/// SHIFT-TARGET: a program with shift on a family (`f`) target.
pub(super) fn m_shift_target(p: &mut Program, c: &mut dyn Choices) -> bool {
    if walk::find_ops(p, &|op| matches!(op, Op::Shift { .. })).is_empty() {
        return false;
    }
    p.launch.target = if c.percent(50) {
        Target::Sm100f
    } else {
        Target::Sm103f
    };
    if p.launch.ptx_version < PtxVersion::new(8, 8) {
        p.launch.ptx_version = PtxVersion::new(8, 8);
    }
    true
}

/// MMA-SCALE-D-RANGE: scale-input-d above 15 (on a target that has scale-input-d, so that
/// MMA-SCALE-D-TARGET is not broken too).
pub(super) fn m_scale_d_range(p: &mut Program, c: &mut dyn Choices) -> bool {
    if !crate::target::has_scale_input_d(p.launch.target) {
        return false;
    }
    with_op(p, c, &|op| is_mma(op, false), &mut |op, c| {
        if let Op::Mma(m) = op {
            m.scale_input_d = Some(16 + c.below(16) as u8);
        }
    })
}

/// MMA-SCALE-D-KIND: scale-input-d on kind f8f6f4 or i8 (on a target that has scale-input-d).
pub(super) fn m_scale_d_kind(p: &mut Program, c: &mut dyn Choices) -> bool {
    if !crate::target::has_scale_input_d(p.launch.target) {
        return false;
    }
    with_op(p, c, &|op| is_mma(op, false), &mut |op, c| {
        if let Op::Mma(m) = op {
            m.scale_input_d = Some(c.below(16) as u8);
        }
    })
}

/// MMA-DOL-SIZE: an 8-element disable-output-lane on `cta_group::1`.
pub(super) fn m_dol_size(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| is_mma(op, false), &mut |op, c| {
        if let Op::Mma(m) = op {
            let n = if c.percent(50) { 8 } else { 2 };
            m.disable_output_lane = Some(vec![0; n]);
        }
    })
}

/// MMA-ZCM-WS-ONLY: a zero-column mask on a non-ws MMA.
pub(super) fn m_zcm_ws_only(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| is_mma(op, false), &mut |op, _| {
        if let Op::Mma(m) = op {
            m.zero_col_mask = Some(0);
        }
    })
}

/// MMA-BS-KINDS: `.block_scale` on a kind without block scaling.
pub(super) fn m_bs_kinds(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| is_mma(op, false), &mut |op, _| {
        if let Op::Mma(m) = op {
            m.form.block_scale = true;
            // What `.block_scale` forms cannot carry goes, so that only MMA-BS-KINDS breaks:
            // `.ashift` (MMA-ASHIFT-ATMEM), disable-output-lane and scale-input-d.
            m.form.ashift = false;
            m.disable_output_lane = None;
            m.scale_input_d = None;
            m.scale_a = Some(m.d);
            m.scale_b = Some(m.d);
        }
    })
}

pub(super) fn is_bs_mma(op: &Op) -> bool {
    matches!(op, Op::Mma(m) if m.form.block_scale)
}

/// MMA-BS-VEC: a scale-vector size the kind does not allow (mxf8f6f4 takes only 1X/block32).
pub(super) fn m_bs_vec(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_bs_mma, &mut |op, c| {
        if let Op::Mma(m) = op {
            m.form.scale_vec = Some(match m.form.scale_vec {
                Some(ScaleVec::Block32) => ScaleVec::Block16,
                _ => {
                    if c.percent(50) {
                        ScaleVec::X2
                    } else {
                        ScaleVec::X4
                    }
                }
            });
        }
    })
}

/// MMA-BS-VEC-TARGET: `.scale_vec::1X` (needs sm_100a) on sm_100f.
pub(super) fn m_bs_vec_target(p: &mut Program, _: &mut dyn Choices) -> bool {
    let ok = walk::find_ops(
        p,
        &|op| matches!(op, Op::Mma(m) if m.form.scale_vec == Some(ScaleVec::X1)),
    );
    if ok.is_empty() || p.launch.target != Target::Sm100a {
        return false;
    }
    p.launch.target = Target::Sm100f;
    if p.launch.ptx_version < PtxVersion::new(8, 8) {
        p.launch.ptx_version = PtxVersion::new(8, 8);
    }
    true
}

/// MMA-WS-KINDS: a `.ws` form of the block-scaled kind mxf8f6f4.
pub(super) fn m_ws_kinds(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_bs_mma, &mut |op, _| {
        if let Op::Mma(m) = op {
            m.form.ws = true;
        }
    })
}

/// MMA-I8-TARGET: kind::i8 on sm_103a (arch-specific, but not listed for i8).
pub(super) fn m_i8_target(p: &mut Program, _: &mut dyn Choices) -> bool {
    if walk::find_ops(
        p,
        &|op| matches!(op, Op::Mma(m) if m.form.kind == MmaKind::I8),
    )
    .is_empty()
    {
        return false;
    }
    p.launch.target = Target::Sm103a;
    if p.launch.ptx_version < PtxVersion::new(8, 8) {
        p.launch.ptx_version = PtxVersion::new(8, 8);
    }
    true
}

/// MMA-ASHIFT-ATMEM: `.ashift` with A from shared memory.
pub(super) fn m_ashift_atmem(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| matches!(op, Op::Mma(m) if !m.form.ws && matches!(m.a, MmaA::Desc(_))),
        &mut |op, _| {
            if let Op::Mma(m) = op {
                m.form.ashift = true;
                m.form.collector = None;
            }
        },
    )
}

/// MMA-ASHIFT-COLLECTOR: `.ashift` (A in TMEM, M = 128) with `.collector::a::fill`.
pub(super) fn m_ashift_collector(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| matches!(op, Op::Mma(m) if !m.form.ws && matches!(m.a, MmaA::Tmem(_))),
        &mut |op, _| {
            if let Op::Mma(m) = op {
                m.form.ashift = true;
                m.form.collector = Some(Collector {
                    buf: CollectorBuf::A,
                    op: CollectorOp::Fill,
                });
            }
        },
    )
}

/// MMA-COLLECTOR-BUF: a `::b*` buffer on a non-ws MMA, or `::a` on a ws MMA.
pub(super) fn m_collector_buf(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Mma(_)), &mut |op, _| {
        if let Op::Mma(m) = op {
            let buf = if m.form.ws {
                CollectorBuf::A
            } else {
                CollectorBuf::B0
            };
            m.form.collector = Some(Collector {
                buf,
                op: CollectorOp::Discard,
            });
        }
    })
}

/// COMMIT-MCAST-MASK: `.multicast::cluster` without ctaMask, or a ctaMask without it.
pub(super) fn m_commit_mask(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Commit { .. }), &mut |op, c| {
        if let Op::Commit { form, cta_mask, .. } = op {
            if c.percent(50) {
                form.multicast = true;
                *cta_mask = None;
            } else {
                form.multicast = false;
                *cta_mask = Some(1);
            }
        }
    })
}

/// COMMIT-COMPLETION: no `.mbarrier::arrive::one`, or a type other than `.b64`.
pub(super) fn m_commit_completion(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Commit { .. }), &mut |op, c| {
        if let Op::Commit { form, .. } = op {
            if c.percent(50) {
                form.arrive_one = false
            } else {
                form.ty = Ty::B32
            }
        }
    })
}

/// SDESC-LBO-ABS: absolute leading-dimension mode on a target other than sm_103a.
pub(super) fn m_lbo_abs(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Mma(_)), &mut |op, _| {
        if let Op::Mma(m) = op {
            m.b.lbo_abs = true;
        }
    })
}
