//! Near-miss mutators (issue 4, item 3): each takes a valid program and breaks exactly one row
//! of the rules catalogue (reference §6), leaving every other rule intact.
//!
//! A [`Mutator`] has a config patch (so the builder makes programs that contain what the
//! mutation needs, and leaves out features whose rules the mutation would also break, e.g.
//! shift on a GEN-TARGET mutation), and an `apply` that edits the program or says it cannot.
//! [`near_miss`] retries a few seeds until `apply` succeeds.

use crate::builder;
use crate::choice::{Choices, SeedChoices};
use crate::config::Config;
use crate::stmts::*;
use crate::walk::{self, CodeRef, Path};
use tcgen05_ir::form::*;
use tcgen05_ir::*;

/// The edition a mutator's rule belongs to, where the spec wordings differ (reference §0,
/// OQ-28): a near-miss is judged in the edition that states the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditionHint {
    /// The rule reads the same in every edition.
    Any,
    /// The seed documents' wording (PTX ISA 9.0/9.1).
    Seeds,
    /// The newer wording (PTX ISA 9.2/9.3).
    Ptx93,
}

/// One near-miss mutator.
#[derive(Debug, Clone, Copy)]
pub struct Mutator {
    /// A short unique name (`--near-miss` selects by rule or by name).
    pub name: &'static str,
    /// The rule it breaks.
    pub rule: RuleId,
    /// The edition that states the rule.
    pub edition: EditionHint,
    /// Makes the builder produce a suitable base program.
    pub patch: fn(&mut Config),
    /// Breaks the rule in `p`; `false` if `p` has nothing to break (try another seed).
    pub apply: fn(&mut Program, &mut dyn Choices) -> bool,
}

/// How many base programs [`near_miss`] tries before giving up.
pub const ATTEMPTS: u64 = 64;

/// A near-miss program for mutator `m` from `seed`: the first base program (seeds `seed`,
/// `seed + 1`, ...) that `m.apply` can break. `None` if none of [`ATTEMPTS`] could be.
pub fn near_miss(m: &Mutator, seed: u64) -> Option<Program> {
    // No `.ashift` in base programs: mutators that change an MMA's kind, `.ws`, group or A
    // operand would also break MMA-ASHIFT-* (a near miss breaks one rule).
    let mut cfg = Config {
        ashift_pct: 0,
        ..Config::default()
    };
    (m.patch)(&mut cfg);
    for k in 0..ATTEMPTS {
        let mut c = SeedChoices::new(seed.wrapping_add(k));
        let mut p = builder::build(&cfg, &mut c);
        if (m.apply)(&mut p, &mut c) {
            return Some(p);
        }
    }
    None
}

/// The mutator named `name`, or the first that breaks the rule `name` names.
pub fn by_name(name: &str) -> Option<&'static Mutator> {
    MUTATORS.iter().find(|m| m.name == name).or_else(|| {
        MUTATORS
            .iter()
            .find(|m| m.rule.as_str().eq_ignore_ascii_case(name))
    })
}

// ---------------------------------------------------------------------------------------------
// Config patches.

/// `cta_group::1`, one CTA per cluster.
fn one_cta(c: &mut Config) {
    c.cta_groups = vec![CtaGroup::One];
    c.cluster_sizes = vec![1];
}

/// No target-gated features (shift, ld.red, i8, scale-input-d needs sm_100a family), so the
/// target can change without breaking SHIFT-TARGET, LD-RED-TARGET, MMA-I8-TARGET.
fn ungated(c: &mut Config) {
    c.targets = vec![Target::Sm100a];
    c.shift = false;
    c.ld_red = false;
    c.mma_kinds.retain(|k| *k != MmaKind::I8);
}

fn p_none(_: &mut Config) {}

/// `cta_group::1` (a `::2` dealloc adds DEALLOC-PAIR-SYNC to any unfinished access).
fn p_cta1(c: &mut Config) {
    c.cta_groups = vec![CtaGroup::One];
}

fn p_ungated(c: &mut Config) {
    ungated(c);
    // No MMA either: scale-input-d is also target-gated (§1).
    c.mma = false;
}

fn p_ldst(c: &mut Config) {
    one_cta(c);
    c.st_ld = true;
    c.mma = false;
}

/// ld/st flows on `.32x32b` only, unpacked: the shape whose thread-to-cell mapping the text
/// states (reference §2.6), so the base program's values are predictable.
fn p_ldst32(c: &mut Config) {
    p_ldst(c);
    c.ld_st_shapes = vec![LdStShape::S32x32b];
    c.pack_pct = 0;
    c.ld_red = false;
}

fn p_ld_red(c: &mut Config) {
    p_ldst(c);
    c.targets = vec![Target::Sm103a];
    c.ld_red = true;
}

fn p_mma(c: &mut Config) {
    one_cta(c);
    c.mma = true;
    c.ws_pct = 0;
    // Block-scaled forms have their own operand rules (no ashift, no disable-output-lane,
    // target-gated scale vectors): only the p_mma_bs mutators use them.
    c.mma_kinds
        .retain(|k| !matches!(k, MmaKind::Mxf8f6f4 | MmaKind::Mxf4 | MmaKind::Mxf4nvf4));
}

/// A block-scaled mxf8f6f4 MMA on sm_100a (`.scale_vec::1X`) with nothing else target-gated.
fn p_mma_bs(c: &mut Config) {
    one_cta(c);
    c.mma = true;
    c.mma_kinds = vec![MmaKind::Mxf8f6f4];
    c.targets = vec![Target::Sm100a];
    c.shift = false;
    c.ld_red = false;
}

/// A dense f16 MMA without shift (whose row movement is OQ-16), so D is predictable in the
/// base program.
fn p_mma_exact(c: &mut Config) {
    p_mma(c);
    c.mma_kinds = vec![MmaKind::F16];
    c.shift = false;
}

fn p_mma_ws(c: &mut Config) {
    p_mma(c);
    c.ws_pct = 100;
}

fn p_mma_f16(c: &mut Config) {
    p_mma(c);
    c.mma_kinds = vec![MmaKind::F16, MmaKind::Tf32];
}

fn p_mma_scale_kind(c: &mut Config) {
    p_mma(c);
    c.mma_kinds = vec![MmaKind::F8f6f4, MmaKind::I8];
}

fn p_mma_i8(c: &mut Config) {
    p_mma(c);
    c.mma_kinds = vec![MmaKind::I8];
    c.shift = false;
}

fn p_cp(c: &mut Config) {
    p_mma(c);
    c.cp = true;
}

fn p_shift(c: &mut Config) {
    p_mma(c);
    c.shift = true;
    c.ld_red = false;
    c.mma_kinds.retain(|k| *k != MmaKind::I8);
}

fn p_pair(c: &mut Config) {
    c.cta_groups = vec![CtaGroup::Two];
    c.cluster_sizes = vec![2];
}

/// A `cta_group::2` MMA (issued by the even CTA of the pair) of a kind without block scaling
/// and without `.ws` (reference §2.5, §3.7).
fn p_pair_mma(c: &mut Config) {
    p_pair(c);
    c.mma = true;
    c.ws_pct = 0;
    c.mma_kinds = vec![MmaKind::F16, MmaKind::Tf32, MmaKind::F8f6f4];
}

/// A dense `cta_group::2` mxf4/mxf4nvf4 MMA on a target other than sm_103a (so K = 64).
fn p_pair_mxf4(c: &mut Config) {
    p_pair(c);
    c.mma = true;
    c.mma_kinds = vec![MmaKind::Mxf4, MmaKind::Mxf4nvf4];
    c.targets = vec![Target::Sm100a, Target::Sm100f, Target::Sm110f];
}

/// A block-scaled mxf4nvf4 MMA (`cta_group::1`).
fn p_mma_nvf4(c: &mut Config) {
    one_cta(c);
    c.mma = true;
    c.mma_kinds = vec![MmaKind::Mxf4nvf4];
}

/// A sparse (`.sp`) MMA of `kinds` in a CTA of at least four warps (the quarter warps write
/// its metadata, `sparse_meta_st`), with no cp and no shift (the oracle judges metadata
/// written by st only).
fn sparse(c: &mut Config, kinds: &[MmaKind]) {
    one_cta(c);
    c.mma = true;
    c.ws_pct = 0;
    c.sparse_pct = 100;
    c.sparse_meta_st = true;
    c.min_warps = 4;
    c.max_warps = c.max_warps.max(4);
    c.mma_kinds = kinds.to_vec();
    c.cp = false;
    c.shift = false;
    c.st_ld = true;
}

/// Sparse mxf4 on sm_103a (an arch-specific target that has it, with no scale-vector
/// qualifier, the one mxf4 form sm_103a takes).
fn p_sp_mxf4_103a(c: &mut Config) {
    sparse(c, &[MmaKind::Mxf4]);
    c.targets = vec![Target::Sm103a];
}

/// Sparse tf32.
fn p_sp_tf32(c: &mut Config) {
    sparse(c, &[MmaKind::Tf32]);
}

/// Sparse mxf4 / mxf4nvf4 on sm_100a, scale factors written by st (no cp).
fn p_sp_mxf4(c: &mut Config) {
    sparse(c, &[MmaKind::Mxf4, MmaKind::Mxf4nvf4]);
    c.targets = vec![Target::Sm100a];
}

fn p_cluster_cta1(c: &mut Config) {
    c.cta_groups = vec![CtaGroup::One];
    c.cluster_sizes = vec![2];
}

fn p_one_alloc(c: &mut Config) {
    one_cta(c);
    c.max_allocs = 1;
    c.ncols = vec![64, 128, 256];
}

fn p_alloc_only(c: &mut Config) {
    one_cta(c);
    c.max_allocs = 1;
    c.ncols = vec![32];
    c.st_ld = false;
    c.mma = false;
}

fn p_full_alloc(c: &mut Config) {
    one_cta(c);
    c.max_allocs = 1;
    c.ncols = vec![512];
}

fn p_two_allocs(c: &mut Config) {
    one_cta(c);
    c.max_allocs = 3;
    c.ncols = vec![32, 64, 128];
}

// ---------------------------------------------------------------------------------------------
// Helpers.

fn pick_path(c: &mut dyn Choices, paths: &[Path]) -> Option<Path> {
    if paths.is_empty() {
        None
    } else {
        Some(paths[c.below(paths.len() as u32) as usize].clone())
    }
}

fn pick_op(p: &Program, c: &mut dyn Choices, pred: &dyn Fn(&Op) -> bool) -> Option<Path> {
    pick_path(c, &walk::find_ops(p, pred))
}

fn is_red_ld(op: &Op) -> bool {
    matches!(op, Op::Ld { form, .. } if form.red)
}

fn is_plain_ld(op: &Op) -> bool {
    matches!(op, Op::Ld { form, .. } if !form.red)
}

fn is_alloc(op: &Op) -> bool {
    matches!(op, Op::Alloc { .. })
}

fn is_st(op: &Op) -> bool {
    matches!(op, Op::St { .. })
}

fn is_mma(op: &Op, ws: bool) -> bool {
    matches!(op, Op::Mma(m) if m.form.ws == ws)
}

fn is_wait(op: &Op, w: WaitOp) -> bool {
    matches!(op, Op::Wait { form } if form.op == w)
}

fn with_op(
    p: &mut Program,
    c: &mut dyn Choices,
    pred: &dyn Fn(&Op) -> bool,
    f: &mut dyn FnMut(&mut Op, &mut dyn Choices),
) -> bool {
    match pick_op(p, c, pred) {
        Some(path) => {
            f(walk::op_mut(p, &path), c);
            true
        }
        None => false,
    }
}

/// The top-level index of the first (alloc-containing) warp's statement matching `pred`.
fn alloc_warp(p: &Program) -> Option<usize> {
    p.warps
        .iter()
        .position(|w| w.iter().any(|s| matches!(s, Stmt::Tc(Op::Alloc { .. }))))
}

// ---------------------------------------------------------------------------------------------
// Static rules.

/// GEN-TARGET: a target without tcgen05 (reference §1).
fn m_gen_target(p: &mut Program, c: &mut dyn Choices) -> bool {
    p.launch.target = if c.percent(50) {
        Target::Sm90a
    } else {
        Target::Sm100
    };
    true
}

/// GEN-PTXVER: a `.version` below 8.6 on sm_100a.
fn m_gen_ptxver(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_ctagroup_mixed(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_sync_qual(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn set_ncols(p: &mut Program, value: u32) -> bool {
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
/// 288; the issue's "nCols 48" breaks the unit too, so this stays on the 32-column grid).
fn m_ncols_pow2(p: &mut Program, c: &mut dyn Choices) -> bool {
    let Some(n) = first_alloc_ncols(p) else {
        return false;
    };
    let v = n + 32 * (1 + c.below(2) * 2);
    v <= 512 && set_ncols(p, v)
}

fn first_alloc_ncols(p: &Program) -> Option<u32> {
    p.ops().into_iter().find_map(|op| match op {
        Op::Alloc { ncols, .. } => Some(ncols.value),
        _ => None,
    })
}

/// ALLOC-NCOLS-POW2 with the issue's value 48 (also off the 32-column unit).
fn m_ncols_48(p: &mut Program, _: &mut dyn Choices) -> bool {
    set_ncols(p, 48)
}

/// ALLOC-NCOLS-RANGE: a power of two outside [32, 512] (16, 8 or 1024) on a program that
/// touches no TMEM column.
fn m_ncols_range(p: &mut Program, c: &mut dyn Choices) -> bool {
    set_ncols(p, [16, 8, 1024][c.below(3) as usize])
}

/// ALLOC-DST-STATESPACE: `dst` qualified with a state space other than `.shared::cta`, or a
/// type other than `.b32`.
fn m_dst_statespace(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_vec_len(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_ldst_shape(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_ldst_num(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_cp_shape(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Cp { .. }), &mut |op, _| {
        if let Op::Cp { form, .. } = op {
            form.shape = CpShape::S64x256b;
            form.multicast = None;
        }
    })
}

/// LDST-NUM-NA: `.16x128b.x128`, `.16x256b.x64` or `.16x256b.x128`.
fn m_num_na(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_splitoff(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_ldst_type(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_ld_unpack(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_plain_ld, &mut |op, _| {
        if let Op::Ld { form, .. } = op {
            form.pack = Some(Pack::Unpack16b);
        }
    })
}

/// LD-PACK-ONLY (`.pack::16b` is allowed only on ld): `.pack::16b` on an st.
fn m_st_pack(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_st, &mut |op, _| {
        if let Op::St { form, .. } = op {
            form.pack = Some(Pack::Pack16b);
        }
    })
}

/// LD-RED-SHAPE: `.red` with a shape other than `.32x32b` / `.16x32bx2`.
fn m_red_shape(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_red_num(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_red_ld, &mut |op, _| {
        if let Op::Ld { form, nregs, .. } = op {
            form.num = Num::X1;
            *nregs = 1;
        }
    })
}

/// LD-RED-TYPE: `.red` with `.b32`, or `.abs` on an integer type, or `.pack::16b`.
fn m_red_type(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_red_target(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_wait_ctagroup(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Wait { .. }), &mut |op, _| {
        if let Op::Wait { form } = op {
            form.cta_group = Some(CtaGroup::One);
        }
    })
}

/// CP-MCAST-REQ: `.64x128b` or `.32x128b` without its multicast.
fn m_cp_mcast_req(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_cp_mcast_other(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Cp { .. }), &mut |op, c| {
        if let Op::Cp { form, .. } = op {
            form.shape =
                [CpShape::S128x256b, CpShape::S4x256b, CpShape::S128x128b][c.below(3) as usize];
            form.multicast = Some(CpMulticast::Warpx4);
        }
    })
}

/// CP-DECOMP-FMT: one decompression format without the other.
fn m_cp_decomp(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_shift_target(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_scale_d_range(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_scale_d_kind(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_dol_size(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| is_mma(op, false), &mut |op, c| {
        if let Op::Mma(m) = op {
            let n = if c.percent(50) { 8 } else { 2 };
            m.disable_output_lane = Some(vec![0; n]);
        }
    })
}

/// MMA-ZCM-WS-ONLY: a zero-column mask on a non-ws MMA.
fn m_zcm_ws_only(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| is_mma(op, false), &mut |op, _| {
        if let Op::Mma(m) = op {
            m.zero_col_mask = Some(0);
        }
    })
}

/// MMA-BS-KINDS: `.block_scale` on a kind without block scaling.
fn m_bs_kinds(p: &mut Program, c: &mut dyn Choices) -> bool {
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

fn is_bs_mma(op: &Op) -> bool {
    matches!(op, Op::Mma(m) if m.form.block_scale)
}

/// MMA-BS-VEC: a scale-vector size the kind does not allow (mxf8f6f4 takes only 1X/block32).
fn m_bs_vec(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_bs_vec_target(p: &mut Program, _: &mut dyn Choices) -> bool {
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
fn m_ws_kinds(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &is_bs_mma, &mut |op, _| {
        if let Op::Mma(m) = op {
            m.form.ws = true;
        }
    })
}

/// MMA-I8-TARGET: kind::i8 on sm_103a (arch-specific, but not listed for i8).
fn m_i8_target(p: &mut Program, _: &mut dyn Choices) -> bool {
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
fn m_ashift_atmem(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_ashift_collector(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_collector_buf(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_commit_mask(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_commit_completion(p: &mut Program, c: &mut dyn Choices) -> bool {
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
fn m_lbo_abs(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Mma(_)), &mut |op, _| {
        if let Op::Mma(m) = op {
            m.b.lbo_abs = true;
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Dynamic-UB rules.

/// GEN-ALIGNED-CONVERGENT: an st (or the alloc) under a lane-divergent branch.
fn m_aligned_convergent(p: &mut Program, c: &mut dyn Choices) -> bool {
    let alloc = c.percent(30);
    let pred: &dyn Fn(&Op) -> bool = if alloc { &is_alloc } else { &is_st };
    let Some(path) = pick_op(p, c, pred) else {
        return false;
    };
    let s = walk::get_mut(p, &path);
    let inner = std::mem::replace(s, Stmt::Spin(0));
    *s = Stmt::If {
        cond: Cond::LaneLt(16),
        then: vec![inner],
        els: vec![],
    };
    true
}

/// GEN-NO-EXITED-THREAD: one lane of the allocating warp exits before the dealloc (after the
/// last barrier, so no barrier waits for it).
fn m_exited_thread(p: &mut Program, c: &mut dyn Choices) -> bool {
    let Some(path) = pick_op(p, c, &|op| matches!(op, Op::Dealloc { .. })) else {
        return false;
    };
    if path.idx.len() != 1 {
        return false;
    }
    let (list, i) = walk::parent_mut(p, &path);
    list.insert(
        i,
        Stmt::If {
            cond: Cond::LaneEq(31),
            then: vec![Stmt::Exit],
            els: vec![],
        },
    );
    true
}

/// ALLOC-NCOLS-UNIFORM: nCols in a register that differs between lanes.
fn m_ncols_uniform(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Alloc { .. }), &mut |op, _| {
        if let Op::Alloc { ncols, .. } = op {
            ncols.form = NColsForm::RegDivergent;
        }
    })
}

/// ALLOC-DST-SHARED: a generic `dst` that points at global memory.
fn m_dst_shared(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Alloc { .. }), &mut |op, _| {
        if let Op::Alloc {
            form, dst_global, ..
        } = op
        {
            form.space = None;
            *dst_global = true;
        }
    })
}

/// LDST-TADDR-UNIFORM: threads of the warp pass different taddr.
fn m_taddr_uniform(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| matches!(op, Op::Ld { .. } | Op::St { .. }),
        &mut |op, _| {
            if let Op::Ld { taddr, .. } | Op::St { taddr, .. } = op {
                taddr.divergent = true;
            }
        },
    )
}

/// COMMIT-MBAR-WINDOW: the commit's mbarrier address lies in global memory.
fn m_mbar_window(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(p, c, &|op| matches!(op, Op::Commit { .. }), &mut |op, _| {
        if let Op::Commit { form, addr, .. } = op {
            form.shared_cluster = false;
            *addr = MbarAddr::GlobalUb;
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Blocking rules.

/// ALLOC-BLOCKS: a second allocation that does not fit while the first (all 512 columns) is
/// live and nobody can free it: the allocating warp itself holds it.
fn m_alloc_blocks(p: &mut Program, c: &mut dyn Choices) -> bool {
    let Some(path) = pick_op(
        p,
        c,
        &|op| matches!(op, Op::Alloc { ncols, .. } if ncols.value == 512),
    ) else {
        return false;
    };
    if path.idx.len() != 1 {
        return false;
    }
    let (cg, slot) = match walk::get(p, &path) {
        Stmt::Tc(Op::Alloc { form, .. }) => (form.cta_group, p.smem.slots),
        _ => return false,
    };
    p.smem.slots += 1;
    let n = [32, 64, 128, 256, 512][c.below(5) as usize];
    let (list, i) = walk::parent_mut(p, &path);
    list.insert(i + 1, alloc(cg, slot, n));
    true
}

/// DEALLOC-BARRIER-ORDER: the pair's dealloc after an extra cluster barrier in the even CTA
/// and before it in the odd CTA (reference §2.5, the ISA's own example of a possible hang).
/// The existing barrier before the teardown still orders every TMEM access before either
/// dealloc (DEALLOC-PAIR-SYNC holds).
fn m_dealloc_barrier_order(p: &mut Program, _: &mut dyn Choices) -> bool {
    let Some(aw) = alloc_warp(p) else {
        return false;
    };
    let code = &p.warps[aw];
    let deallocs: Vec<usize> = (0..code.len())
        .filter(|&i| matches!(code[i], Stmt::Tc(Op::Dealloc { .. })))
        .collect();
    if deallocs.is_empty() {
        return false;
    }
    let first = deallocs[0];
    let last = *deallocs.last().expect("non-empty");
    let moved: Vec<Stmt> = p.warps[aw].drain(first..=last).collect();
    let barrier = [Stmt::ClusterArrive { relaxed: false }, Stmt::ClusterWait];
    let mut then = moved.clone();
    then.extend(barrier.iter().cloned());
    let mut els: Vec<Stmt> = barrier.to_vec();
    els.extend(moved);
    p.warps[aw].insert(
        first,
        Stmt::If {
            cond: Cond::CtaOdd,
            then,
            els,
        },
    );
    // Every other warp takes part in the extra cluster barrier too (before any exit).
    for (w, code) in p.warps.iter_mut().enumerate() {
        if w == aw {
            continue;
        }
        let at = code
            .iter()
            .position(|s| matches!(s, Stmt::Exit))
            .unwrap_or(code.len());
        code.insert(at, Stmt::ClusterWait);
        code.insert(at, Stmt::ClusterArrive { relaxed: false });
    }
    true
}

/// GEN-PEER-ACTIVE (seeds wording: the peer must take part): the odd CTA never executes the
/// pair's relinquish.
fn m_peer_relinquish(p: &mut Program, c: &mut dyn Choices) -> bool {
    let Some(path) = pick_op(
        p,
        c,
        &|op| matches!(op, Op::Relinquish { form } if form.cta_group == CtaGroup::Two),
    ) else {
        return false;
    };
    let s = walk::get_mut(p, &path);
    let inner = std::mem::replace(s, Stmt::Spin(0));
    *s = Stmt::If {
        cond: Cond::CtaOdd,
        then: vec![],
        els: vec![inner],
    };
    true
}

/// GEN-PEER-EXISTS: a `::2` program launched with clusters of one CTA, declared.
fn m_peer_exists(p: &mut Program, _: &mut dyn Choices) -> bool {
    if p.launch.cluster_size < 2 {
        return false;
    }
    p.launch.cluster_size = 1;
    p.launch.declare_cluster = true;
    true
}

/// MMA-WS-CTA1 (§3.7: `.ws` forms accept only `.cta_group::1`): the pair's `::2` MMA spelled
/// `.ws`. The operands `.ws` forms lack go (disable-output-lane, MMA-DOL-SIZE; scale-input-d,
/// MMA-SCALE-D-KIND; the `::a` collector, MMA-COLLECTOR-BUF), so only the cta_group speaks.
fn m_ws_cta2(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| matches!(op, Op::Mma(m) if m.form.cta_group == CtaGroup::Two && !m.form.block_scale),
        &mut |op, _| {
            if let Op::Mma(m) = op {
                m.form.ws = true;
                m.form.collector = None;
                m.disable_output_lane = None;
                m.scale_input_d = None;
            }
        },
    )
}

/// MMA-BS-NVF4-EXPLICIT (§3.7: mxf4nvf4 must state its scale-vector size): the qualifier
/// dropped, with UE8M0 scale factors (idesc bit 23), which every size of mxf4nvf4 accepts, so
/// the descriptor stays valid whatever size is meant (MMA-BS-VEC).
fn m_nvf4_implicit(p: &mut Program, c: &mut dyn Choices) -> bool {
    with_op(
        p,
        c,
        &|op| matches!(op, Op::Mma(m) if m.form.kind == MmaKind::Mxf4nvf4),
        &mut |op, _| {
            if let Op::Mma(m) = op {
                m.form.scale_vec = None;
                m.idesc |= 1 << 23;
            }
        },
    )
}

/// MMA-K96-TARGET (§2.7, §2.8 layout (c) bit 31: K = 96 needs sm_103a): a dense `::2`
/// M = 256 mxf4/mxf4nvf4 MMA (the one shape where K = 96 exists, MMA-K-EXPLICIT) asks for
/// K = 96 on sm_100a, sm_100f or sm_110f.
fn m_k96_target(p: &mut Program, c: &mut dyn Choices) -> bool {
    if p.launch.target == Target::Sm103a {
        return false;
    }
    with_op(
        p,
        c,
        &|op| {
            matches!(op, Op::Mma(m) if m.form.cta_group == CtaGroup::Two
                && !m.form.sp
                && matches!(m.form.kind, MmaKind::Mxf4 | MmaKind::Mxf4nvf4)
                && idesc::Idesc::new(m.form.kind, m.idesc).m() == 256)
        },
        &mut |op, _| {
            if let Op::Mma(m) = op {
                m.idesc |= 1 << 31;
            }
        },
    )
}

/// DEALLOC-PAIR-BLOCK (§2.5, §3.1, ptx93 wording: a `::2` dealloc may block until the peer
/// warp's dealloc): the odd CTA skips the pair's last dealloc, so the even CTA's dealloc has
/// no partner. The optional relinquish goes from both CTAs first (reference §3.1), so no later
/// collective of the odd CTA pairs with the lonely dealloc (ALLOC-ISSUER).
fn m_dealloc_pair_block(p: &mut Program, _: &mut dyn Choices) -> bool {
    let Some(aw) = alloc_warp(p) else {
        return false;
    };
    let code = &mut p.warps[aw];
    code.retain(|s| !matches!(s, Stmt::Tc(Op::Relinquish { .. })));
    let Some(last) = code.iter().rposition(
        |s| matches!(s, Stmt::Tc(Op::Dealloc { form, .. }) if form.cta_group == CtaGroup::Two),
    ) else {
        return false;
    };
    let d = std::mem::replace(&mut code[last], Stmt::Spin(0));
    code[last] = Stmt::If {
        cond: Cond::CtaOdd,
        then: vec![],
        els: vec![d],
    };
    true
}

/// WAIT-SCOPE (§3.4: wait::ld waits for the loads *issued by the executing thread* before
/// it): the `wait::ld` that completes a warp's last load moves to another warp, just before
/// that warp's last synchronization; the loading warp relies on another thread's wait.
fn m_wait_scope(p: &mut Program, c: &mut dyn Choices) -> bool {
    let n = p.warps.len();
    if n < 2 {
        return false;
    }
    let loads = |code: &[Stmt]| {
        code.iter()
            .any(|s| matches!(s, Stmt::Tc(op) if is_plain_ld(op)))
    };
    // A warp whose loads are all top level, each followed by its wait::ld (an ld nested in a
    // loop, such as a register-dependency flow's, has a wait::ld after its loop that would
    // still complete the top-level loads).
    let nested = |code: &[Stmt]| {
        code.iter().any(|s| {
            matches!(s, Stmt::Loop { .. } | Stmt::If { .. } | Stmt::Call(_))
                && walk::contains(
                    p,
                    std::slice::from_ref(s),
                    &|t| matches!(t, Stmt::Tc(op) if is_plain_ld(op)),
                )
        })
    };
    let cands: Vec<usize> =
        (0..n)
            .filter(|&w| {
                let code = &p.warps[w];
                loads(code) && !nested(code) && (0..code.len()).all(|i| {
                    !matches!(&code[i], Stmt::Tc(op) if is_plain_ld(op))
                        || matches!(code.get(i + 1), Some(Stmt::Tc(op)) if is_wait(op, WaitOp::Ld))
                })
            })
            .collect();
    let Some(&w) = cands.get(c.below(cands.len().max(1) as u32) as usize) else {
        return false;
    };
    let others: Vec<usize> = (0..n).filter(|&o| o != w).collect();
    let other = others[c.below(others.len() as u32) as usize];
    // The last load of warp w loses its wait::ld.
    let code = &mut p.warps[w];
    let Some(i) = code
        .iter()
        .rposition(|s| matches!(s, Stmt::Tc(op) if is_plain_ld(op)))
    else {
        return false;
    };
    let wt = code.remove(i + 1);
    // The other warp waits instead, before its last barrier.
    let oc = &mut p.warps[other];
    let Some(at) = oc
        .iter()
        .rposition(|s| matches!(s, Stmt::BarCta | Stmt::ClusterArrive { .. }))
    else {
        return false;
    };
    oc.insert(at, wt);
    true
}

/// MMA-SP-MXF4-TARGET (§1: mma.sp with mxf4/mxf4nvf4 needs sm_100a, sm_110a or sm_103a):
/// the sm_103a program moved to sm_103f (same PTX version; no shift, i8 or scale-vector
/// qualifier in the base, so no other target rule applies).
fn m_sp_mxf4_target(p: &mut Program, _: &mut dyn Choices) -> bool {
    let has = !walk::find_ops(p, &|op| {
        matches!(op, Op::Mma(m) if m.form.sp && matches!(m.form.kind, MmaKind::Mxf4 | MmaKind::Mxf4nvf4))
    })
    .is_empty();
    if !has || p.launch.target != Target::Sm103a {
        return false;
    }
    p.launch.target = Target::Sm103f;
    true
}

/// Sets the seed of the st that writes the first metadata cell (lane 0 of the
/// `[sp-meta-tmem]` column) of a sparse MMA of one of `kinds` to 0: that cell then holds 0,
/// and no nibble of 0 is a listed metadata value (§3.7 "Sparse A").
fn zero_metadata(p: &mut Program, kinds: &[MmaKind]) -> bool {
    let metas: Vec<TmemRef> = p
        .ops()
        .into_iter()
        .filter_map(|op| match op {
            Op::Mma(m) if m.form.sp && kinds.contains(&m.form.kind) => m.sp_meta,
            _ => None,
        })
        .collect();
    let Some(t) = metas.first().copied() else {
        return false;
    };
    let paths = walk::find_ops(
        p,
        &|op| matches!(op, Op::St { taddr, .. } if taddr.base == t.base && taddr.col == t.col && taddr.lane == t.lane),
    );
    if paths.is_empty() {
        return false;
    }
    for path in paths {
        if let Op::St { seed, .. } = walk::op_mut(p, &path) {
            *seed = 0;
        }
    }
    true
}

/// MMA-SP-META-TF32 (UB, §3.7: tf32 metadata nibbles other than 0b1110 / 0b0100): the first
/// metadata cell of a sparse tf32 MMA holds 0.
fn m_sp_meta_tf32(p: &mut Program, _: &mut dyn Choices) -> bool {
    zero_metadata(p, &[MmaKind::Tf32])
}

/// MMA-SP-META-MXF4 (UB, §3.7: mxf4/mxf4nvf4 metadata outside the seven listed values): the
/// first metadata cell of a sparse mxf4/mxf4nvf4 MMA holds 0.
fn m_sp_meta_mxf4(p: &mut Program, _: &mut dyn Choices) -> bool {
    zero_metadata(p, &[MmaKind::Mxf4, MmaKind::Mxf4nvf4])
}

// ---------------------------------------------------------------------------------------------
// Dynamic rules the issue names.

/// ALLOC-AFTER-RELINQUISH in a loop: the teardown ends with a loop of two iterations that
/// allocates (the last size again), frees and relinquishes: the second alloc follows the
/// first relinquish.
fn m_alloc_after_relinquish(p: &mut Program, _: &mut dyn Choices) -> bool {
    let Some(aw) = alloc_warp(p) else {
        return false;
    };
    let code = &p.warps[aw];
    let Some(last) = code
        .iter()
        .rposition(|s| matches!(s, Stmt::Tc(Op::Dealloc { .. })))
    else {
        return false;
    };
    let (cg, slot, n) = match &code[last] {
        Stmt::Tc(Op::Dealloc {
            form,
            taddr: TmemRef {
                base: TBase::Slot(s),
                ..
            },
            ncols,
        }) => (form.cta_group, *s, ncols.value),
        _ => return false,
    };
    // The smallest allocation keeps ALLOC-NONINCREASING.
    let min = walk::find_ops(p, &|op| matches!(op, Op::Alloc { .. }))
        .iter()
        .filter_map(|x| match walk::get(p, x) {
            Stmt::Tc(Op::Alloc { ncols, .. }) => Some(ncols.value),
            _ => None,
        })
        .min()
        .unwrap_or(n);
    let code = &mut p.warps[aw];
    code.retain(|s| !matches!(s, Stmt::Tc(Op::Relinquish { .. })));
    let at = code
        .iter()
        .position(|s| matches!(s, Stmt::Exit))
        .unwrap_or(code.len());
    code.insert(
        at,
        Stmt::Loop {
            count: 2,
            body: vec![alloc(cg, slot, min), dealloc(cg, slot, min), relinquish(cg)],
        },
    );
    true
}

/// ALLOC-FREE-BEFORE-EXIT on one exit path: the last dealloc runs only in cluster rank 0.
fn m_leak_one_path(p: &mut Program, c: &mut dyn Choices) -> bool {
    let Some(path) = pick_op(p, c, &|op| matches!(op, Op::Dealloc { .. })) else {
        return false;
    };
    let s = walk::get_mut(p, &path);
    let inner = std::mem::replace(s, Stmt::Spin(0));
    *s = Stmt::If {
        cond: Cond::CtaRank(0),
        then: vec![inner],
        els: vec![],
    };
    true
}

/// ALLOC-NONINCREASING: two allocations of different sizes swapped, so the smaller comes first.
fn m_nonincreasing(p: &mut Program, _: &mut dyn Choices) -> bool {
    let Some(aw) = alloc_warp(p) else {
        return false;
    };
    let code = &mut p.warps[aw];
    let idx: Vec<usize> = (0..code.len())
        .filter(|&i| matches!(code[i], Stmt::Tc(Op::Alloc { .. })))
        .collect();
    let size = |s: &Stmt| match s {
        Stmt::Tc(Op::Alloc { ncols, .. }) => ncols.value,
        _ => 0,
    };
    for a in 0..idx.len() {
        for b in a + 1..idx.len() {
            if size(&code[idx[a]]) > size(&code[idx[b]]) {
                code.swap(idx[a], idx[b]);
                return true;
            }
        }
    }
    false
}

/// MCM-LD-WAR: the last `wait::ld` of a warp removed, so its last ld may still be reading when
/// the allocation is freed (docs/architecture.md, "The oracle's run model": a dealloc not ordered after the read).
fn m_ld_war(p: &mut Program, c: &mut dyn Choices) -> bool {
    let start = c.below(p.warps.len() as u32) as usize;
    for k in 0..p.warps.len() {
        let w = (start + k) % p.warps.len();
        let code = &p.warps[w];
        let Some(i) = code
            .iter()
            .rposition(|s| matches!(s, Stmt::Tc(op) if is_wait(op, WaitOp::Ld)))
        else {
            continue;
        };
        let later_wait = walk::contains(
            p,
            &code[i + 1..],
            &|s| matches!(s, Stmt::Tc(op) if is_wait(op, WaitOp::Ld)),
        );
        let prev_ld = i > 0 && matches!(code[i - 1], Stmt::Tc(Op::Ld { .. }));
        if !later_wait && prev_ld {
            p.warps[w].remove(i);
            return true;
        }
    }
    false
}

/// MCM-ST-BEFORE-USE: an ld of cells an st of the same warp wrote, with the `wait::st` moved
/// after the ld (the write is not complete when it is read).
///
/// The race must be visible in the values the ld records (docs/architecture.md, "The oracle's run model": a race makes the
/// raced words unspecified only where the alternatives differ), so:
/// - the st is not inside a loop: the record holds the last iteration, whose "before" value is
///   the previous iteration's store of the same data;
/// - the st's seed differs from every other st's (byte-driven bases can repeat a seed when
///   the bytes run out, and an overwrite with the same data is no visible race).
fn m_st_before_use(p: &mut Program, c: &mut dyn Choices) -> bool {
    let paths: Vec<Path> = walk::find(p, &|s| matches!(s, Stmt::Tc(op) if is_st(op)))
        .into_iter()
        .filter(|x| !in_loop(p, x))
        .collect();
    let Some(path) = pick_path(c, &paths) else {
        return false;
    };
    let seeds: Vec<u32> = p
        .ops()
        .into_iter()
        .filter_map(|op| match op {
            Op::St { seed, .. } => Some(*seed),
            _ => None,
        })
        .collect();
    let (list, i) = walk::parent_mut(p, &path);
    // Flows are `st; wait::st; [spin]; ld; wait::ld`.
    if !matches!(list.get(i + 1), Some(Stmt::Tc(op)) if is_wait(op, WaitOp::St)) {
        return false;
    }
    let Some(j) = (i + 2..list.len().min(i + 5))
        .find(|&j| matches!(&list[j], Stmt::Tc(op) if is_wait(op, WaitOp::Ld)))
    else {
        return false;
    };
    if let Stmt::Tc(Op::St { seed, .. }) = &mut list[i] {
        // `seeds` holds this st's own seed once; a second copy is another st's.
        let mut s = *seed;
        while seeds.iter().filter(|x| **x == s).count() > usize::from(s == *seed) {
            s = s.wrapping_add(0x9E37_79B9);
        }
        *seed = s;
    }
    let w = list.remove(i + 1);
    list.insert(j, w);
    true
}

/// Whether a statement path goes through a loop body.
fn in_loop(p: &Program, path: &Path) -> bool {
    (1..path.idx.len()).any(|k| {
        let outer = Path {
            code: path.code,
            idx: path.idx[..k].to_vec(),
        };
        matches!(walk::get(p, &outer), Stmt::Loop { .. })
    })
}

/// MCM-XTHREAD: the consumer's `fence::after_thread_sync` between the mbarrier wait and the
/// ld of D removed, in a warp other than the MMA's issuer (the §4.3 consumer side of a
/// producer in another warp; the issuing warp's own consumer is §4.4's "non-pipelined, same
/// thread" example, which needs the fence as well but which the oracle does not see at the
/// time of writing: see generators/README.md).
fn m_xthread(p: &mut Program, c: &mut dyn Choices) -> bool {
    let issues = |code: &[Stmt]| {
        code.iter().any(|s| {
            matches!(s, Stmt::If { cond: Cond::ElectOne, then, .. }
                if then.iter().any(|t| matches!(t, Stmt::Tc(Op::Mma(_)))))
        })
    };
    let paths: Vec<Path> = walk::find(p, &|s| matches!(s, Stmt::MbarWait { .. }))
        .into_iter()
        .filter(|x| matches!(x.code, CodeRef::Warp(w) if !issues(&p.warps[w])))
        .collect();
    let Some(path) = pick_path(c, &paths) else {
        return false;
    };
    let (list, i) = walk::parent_mut(p, &path);
    if matches!(
        list.get(i + 1),
        Some(Stmt::Tc(Op::Fence {
            kind: FenceKind::AfterThreadSync
        }))
    ) {
        list.remove(i + 1);
        true
    } else {
        false
    }
}

/// Whether a statement path is in warp code (not a function).
fn in_warp(path: &Path) -> bool {
    matches!(path.code, CodeRef::Warp(_))
}

/// MCM-XTHREAD-NONPIPE: a warp other than the MMA's issuer stores its quarter of the MMA's A
/// operand and synchronizes without `wait::st` (the st is not complete when the MMA reads it). The st moves to the end
/// of its phase, just before the `fence::before_thread_sync` that precedes the next
/// synchronization, so no later `wait::st` of the warp's flows (or of its scale-factor and
/// metadata stores) completes it before the sync; its wait moves to just before the last
/// barrier, so the store still completes before the teardown's dealloc (a store in flight at
/// the dealloc would be OQ-4 as well).
fn m_xthread_nonpipe(p: &mut Program, _: &mut dyn Choices) -> bool {
    // A stores are the sts whose address is the MMA's a-tmem.
    let a_tmem: Vec<TmemRef> = p
        .ops()
        .into_iter()
        .filter_map(|op| match op {
            Op::Mma(m) => match m.a {
                MmaA::Tmem(t) => Some(t),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let Some(a) = a_tmem.first().copied() else {
        return false;
    };
    let paths = walk::find(
        p,
        &|s| matches!(s, Stmt::Tc(Op::St { taddr, .. }) if taddr.base == a.base && taddr.col == a.col),
    );
    let is_sync = |s: &Stmt| matches!(s, Stmt::BarCta | Stmt::ClusterArrive { .. });
    for path in paths.iter().filter(|x| in_warp(x) && x.idx.len() == 1) {
        let CodeRef::Warp(w) = path.code else {
            continue;
        };
        // Another thread than the MMA's issuer (in the issuing warp the unwaited st and the
        // MMA are one thread's: MCM-ST-BEFORE-USE, not a cross-thread publication).
        if walk::contains(p, &p.warps[w], &|s| matches!(s, Stmt::Tc(Op::Mma(_)))) {
            continue;
        }
        let i = path.idx[0];
        let code = &mut p.warps[w];
        if !matches!(code.get(i + 1), Some(Stmt::Tc(op)) if is_wait(op, WaitOp::St)) {
            continue;
        }
        // The sync that publishes the store, and the last one (teardown).
        let (Some(next_sync), Some(last_sync)) = (
            (i..code.len()).find(|&k| is_sync(&code[k])),
            code.iter().rposition(is_sync),
        ) else {
            continue;
        };
        // The phase must end `fence::before_thread_sync; sync` (§4.3 producer side), and the
        // teardown sync must come later (the wait goes before it).
        let fence_before = |s: &Stmt| {
            matches!(
                s,
                Stmt::Tc(Op::Fence {
                    kind: FenceKind::BeforeThreadSync
                })
            )
        };
        if next_sync < 1 || !fence_before(&code[next_sync - 1]) || last_sync <= next_sync {
            continue;
        }
        let w_st = code.remove(i + 1);
        let st = code.remove(i);
        // Indices after i moved down by two.
        code.insert(next_sync - 3, st);
        let last_sync = last_sync - 1;
        // Before the fence that precedes the last barrier.
        let at = if fence_before(&code[last_sync - 1]) {
            last_sync - 1
        } else {
            last_sync
        };
        code.insert(at, w_st);
        return true;
    }
    false
}

/// Every mutator, one or more per rule.
pub const MUTATORS: &[Mutator] = &[
    Mutator {
        name: "bs-scale-vec",
        rule: RuleId::MmaBsVec,
        edition: EditionHint::Any,
        patch: p_mma_bs,
        apply: m_bs_vec,
    },
    Mutator {
        name: "bs-scale-vec-target",
        rule: RuleId::MmaBsVecTarget,
        edition: EditionHint::Any,
        patch: p_mma_bs,
        apply: m_bs_vec_target,
    },
    Mutator {
        name: "ws-block-scaled",
        rule: RuleId::MmaWsKinds,
        edition: EditionHint::Any,
        patch: p_mma_bs,
        apply: m_ws_kinds,
    },
    Mutator {
        name: "target-without-tcgen05",
        rule: RuleId::GenTarget,
        edition: EditionHint::Any,
        patch: p_ungated,
        apply: m_gen_target,
    },
    Mutator {
        name: "ptx-version-too-old",
        rule: RuleId::GenPtxver,
        edition: EditionHint::Any,
        patch: p_ungated,
        apply: m_gen_ptxver,
    },
    Mutator {
        name: "cta-group-mixed",
        rule: RuleId::GenCtagroupUniform,
        edition: EditionHint::Any,
        patch: p_cluster_cta1,
        apply: m_ctagroup_mixed,
    },
    Mutator {
        name: "missing-sync-aligned",
        rule: RuleId::GenSyncQual,
        edition: EditionHint::Any,
        patch: p_none,
        apply: m_sync_qual,
    },
    Mutator {
        name: "ncols-not-pow2",
        rule: RuleId::AllocNcolsPow2,
        edition: EditionHint::Any,
        patch: p_one_alloc,
        apply: m_ncols_pow2,
    },
    Mutator {
        name: "ncols-48",
        rule: RuleId::AllocNcolsPow2,
        edition: EditionHint::Any,
        patch: p_alloc_only,
        apply: m_ncols_48,
    },
    Mutator {
        name: "ncols-out-of-range",
        rule: RuleId::AllocNcolsRange,
        edition: EditionHint::Any,
        patch: p_alloc_only,
        apply: m_ncols_range,
    },
    Mutator {
        name: "alloc-dst-statespace",
        rule: RuleId::AllocDstStatespace,
        edition: EditionHint::Any,
        patch: p_none,
        apply: m_dst_statespace,
    },
    Mutator {
        name: "ldst-vec-len",
        rule: RuleId::LdstVecLen,
        edition: EditionHint::Any,
        patch: p_ldst,
        apply: m_vec_len,
    },
    Mutator {
        name: "ldst-shape-32x64b",
        rule: RuleId::LdstShape,
        edition: EditionHint::Any,
        patch: p_ldst,
        apply: m_ldst_shape,
    },
    Mutator {
        name: "ldst-num-x256",
        rule: RuleId::LdstNum,
        edition: EditionHint::Any,
        patch: p_ldst,
        apply: m_ldst_num,
    },
    Mutator {
        name: "cp-shape-64x256b",
        rule: RuleId::CpShape,
        edition: EditionHint::Any,
        patch: p_cp,
        apply: m_cp_shape,
    },
    Mutator {
        name: "ldst-num-na",
        rule: RuleId::LdstNumNa,
        edition: EditionHint::Any,
        patch: p_ldst,
        apply: m_num_na,
    },
    Mutator {
        name: "ldst-splitoff",
        rule: RuleId::LdstSplitoff,
        edition: EditionHint::Any,
        patch: p_ldst,
        apply: m_splitoff,
    },
    Mutator {
        name: "ldst-type",
        rule: RuleId::LdstType,
        edition: EditionHint::Any,
        patch: p_ldst,
        apply: m_ldst_type,
    },
    Mutator {
        name: "ld-unpack",
        rule: RuleId::StUnpackOnly,
        edition: EditionHint::Any,
        patch: p_ldst,
        apply: m_ld_unpack,
    },
    Mutator {
        name: "st-pack",
        rule: RuleId::LdPackOnly,
        edition: EditionHint::Any,
        patch: p_ldst,
        apply: m_st_pack,
    },
    Mutator {
        name: "ld-red-shape",
        rule: RuleId::LdRedShape,
        edition: EditionHint::Any,
        patch: p_ld_red,
        apply: m_red_shape,
    },
    Mutator {
        name: "ld-red-num",
        rule: RuleId::LdRedNum,
        edition: EditionHint::Any,
        patch: p_ld_red,
        apply: m_red_num,
    },
    Mutator {
        name: "ld-red-type",
        rule: RuleId::LdRedType,
        edition: EditionHint::Any,
        patch: p_ld_red,
        apply: m_red_type,
    },
    Mutator {
        name: "ld-red-target",
        rule: RuleId::LdRedTarget,
        edition: EditionHint::Any,
        patch: p_ld_red,
        apply: m_red_target,
    },
    Mutator {
        name: "wait-cta-group",
        rule: RuleId::WaitOps,
        edition: EditionHint::Any,
        patch: p_none,
        apply: m_wait_ctagroup,
    },
    Mutator {
        name: "cp-multicast-missing",
        rule: RuleId::CpMcastReq,
        edition: EditionHint::Any,
        patch: p_cp,
        apply: m_cp_mcast_req,
    },
    Mutator {
        name: "cp-multicast-other",
        rule: RuleId::CpMcastOther,
        edition: EditionHint::Any,
        patch: p_cp,
        apply: m_cp_mcast_other,
    },
    Mutator {
        name: "cp-decomp-half",
        rule: RuleId::CpDecompFmt,
        edition: EditionHint::Any,
        patch: p_cp,
        apply: m_cp_decomp,
    },
    Mutator {
        name: "shift-family-target",
        rule: RuleId::ShiftTarget,
        edition: EditionHint::Any,
        patch: p_shift,
        apply: m_shift_target,
    },
    Mutator {
        name: "scale-d-range",
        rule: RuleId::MmaScaleDRange,
        edition: EditionHint::Any,
        patch: p_mma_f16,
        apply: m_scale_d_range,
    },
    Mutator {
        name: "scale-d-kind",
        rule: RuleId::MmaScaleDKind,
        edition: EditionHint::Any,
        patch: p_mma_scale_kind,
        apply: m_scale_d_kind,
    },
    Mutator {
        name: "dol-size",
        rule: RuleId::MmaDolSize,
        edition: EditionHint::Any,
        patch: p_mma,
        apply: m_dol_size,
    },
    Mutator {
        name: "zcm-non-ws",
        rule: RuleId::MmaZcmWsOnly,
        edition: EditionHint::Any,
        patch: p_mma,
        apply: m_zcm_ws_only,
    },
    Mutator {
        name: "block-scale-kind",
        rule: RuleId::MmaBsKinds,
        edition: EditionHint::Any,
        patch: p_mma,
        apply: m_bs_kinds,
    },
    Mutator {
        name: "i8-target",
        rule: RuleId::MmaI8Target,
        edition: EditionHint::Any,
        patch: p_mma_i8,
        apply: m_i8_target,
    },
    Mutator {
        name: "ashift-a-desc",
        rule: RuleId::MmaAshiftAtmem,
        edition: EditionHint::Any,
        patch: p_mma,
        apply: m_ashift_atmem,
    },
    Mutator {
        name: "ashift-collector",
        rule: RuleId::MmaAshiftCollector,
        edition: EditionHint::Any,
        patch: p_mma,
        apply: m_ashift_collector,
    },
    Mutator {
        name: "collector-buffer",
        rule: RuleId::MmaCollectorBuf,
        edition: EditionHint::Any,
        patch: p_mma_ws,
        apply: m_collector_buf,
    },
    Mutator {
        name: "commit-mask",
        rule: RuleId::CommitMcastMask,
        edition: EditionHint::Any,
        patch: p_mma,
        apply: m_commit_mask,
    },
    Mutator {
        name: "commit-completion",
        rule: RuleId::CommitCompletion,
        edition: EditionHint::Any,
        patch: p_mma,
        apply: m_commit_completion,
    },
    Mutator {
        name: "lbo-absolute",
        rule: RuleId::SdescLboAbs,
        edition: EditionHint::Any,
        patch: p_mma,
        apply: m_lbo_abs,
    },
    Mutator {
        name: "divergent-aligned",
        rule: RuleId::GenAlignedConvergent,
        edition: EditionHint::Any,
        patch: p_ldst,
        apply: m_aligned_convergent,
    },
    Mutator {
        name: "exited-lane",
        rule: RuleId::GenNoExitedThread,
        edition: EditionHint::Any,
        patch: p_none,
        apply: m_exited_thread,
    },
    Mutator {
        name: "ncols-divergent",
        rule: RuleId::AllocNcolsUniform,
        edition: EditionHint::Any,
        patch: p_none,
        apply: m_ncols_uniform,
    },
    Mutator {
        name: "alloc-dst-global",
        rule: RuleId::AllocDstShared,
        edition: EditionHint::Any,
        patch: p_none,
        apply: m_dst_shared,
    },
    Mutator {
        name: "taddr-divergent",
        rule: RuleId::LdstTaddrUniform,
        edition: EditionHint::Any,
        patch: p_ldst,
        apply: m_taddr_uniform,
    },
    Mutator {
        name: "mbar-global",
        rule: RuleId::CommitMbarWindow,
        edition: EditionHint::Any,
        patch: p_mma,
        apply: m_mbar_window,
    },
    Mutator {
        name: "alloc-beyond-capacity",
        rule: RuleId::AllocBlocks,
        edition: EditionHint::Any,
        patch: p_full_alloc,
        apply: m_alloc_blocks,
    },
    Mutator {
        name: "dealloc-barrier-order",
        rule: RuleId::DeallocBarrierOrder,
        edition: EditionHint::Ptx93,
        patch: p_pair,
        apply: m_dealloc_barrier_order,
    },
    Mutator {
        name: "peer-skips-relinquish",
        rule: RuleId::GenPeerActive,
        edition: EditionHint::Seeds,
        patch: p_pair,
        apply: m_peer_relinquish,
    },
    Mutator {
        name: "peer-skips-relinquish-blocks",
        rule: RuleId::AllocPairBlock,
        edition: EditionHint::Ptx93,
        patch: p_pair,
        apply: m_peer_relinquish,
    },
    Mutator {
        name: "no-peer-cta",
        rule: RuleId::GenPeerExists,
        edition: EditionHint::Any,
        patch: p_pair,
        apply: m_peer_exists,
    },
    Mutator {
        name: "ws-cta-group-2",
        rule: RuleId::MmaWsCta1,
        edition: EditionHint::Any,
        patch: p_pair_mma,
        apply: m_ws_cta2,
    },
    Mutator {
        name: "nvf4-no-scale-vec",
        rule: RuleId::MmaBsNvf4Explicit,
        edition: EditionHint::Any,
        patch: p_mma_nvf4,
        apply: m_nvf4_implicit,
    },
    Mutator {
        name: "k96-off-sm103a",
        rule: RuleId::MmaK96Target,
        edition: EditionHint::Any,
        patch: p_pair_mxf4,
        apply: m_k96_target,
    },
    Mutator {
        name: "peer-skips-dealloc",
        rule: RuleId::DeallocPairBlock,
        edition: EditionHint::Ptx93,
        patch: p_pair,
        apply: m_dealloc_pair_block,
    },
    Mutator {
        name: "wait-ld-in-another-warp",
        rule: RuleId::WaitScope,
        edition: EditionHint::Any,
        patch: p_ldst32,
        apply: m_wait_scope,
    },
    Mutator {
        name: "sparse-mxf4-sm103f",
        rule: RuleId::MmaSpMxf4Target,
        edition: EditionHint::Any,
        patch: p_sp_mxf4_103a,
        apply: m_sp_mxf4_target,
    },
    Mutator {
        name: "sparse-tf32-zero-metadata",
        rule: RuleId::MmaSpMetaTf32,
        edition: EditionHint::Any,
        patch: p_sp_tf32,
        apply: m_sp_meta_tf32,
    },
    Mutator {
        name: "sparse-mxf4-zero-metadata",
        rule: RuleId::MmaSpMetaMxf4,
        edition: EditionHint::Any,
        patch: p_sp_mxf4,
        apply: m_sp_meta_mxf4,
    },
    Mutator {
        name: "alloc-after-relinquish-loop",
        rule: RuleId::AllocAfterRelinquish,
        edition: EditionHint::Any,
        // `::1`: a `::2` alloc and dealloc in the loop with no cluster barrier between them
        // would also break DEALLOC-PAIR-SYNC.
        patch: p_cta1,
        apply: m_alloc_after_relinquish,
    },
    Mutator {
        name: "leak-on-one-path",
        rule: RuleId::AllocFreeBeforeExit,
        edition: EditionHint::Any,
        patch: p_cluster_cta1,
        apply: m_leak_one_path,
    },
    Mutator {
        name: "alloc-size-grows",
        rule: RuleId::AllocNonincreasing,
        edition: EditionHint::Any,
        patch: p_two_allocs,
        apply: m_nonincreasing,
    },
    Mutator {
        name: "no-wait-ld-before-dealloc",
        rule: RuleId::McmLdWar,
        edition: EditionHint::Any,
        patch: p_cta1,
        apply: m_ld_war,
    },
    Mutator {
        name: "ld-before-wait-st",
        rule: RuleId::McmStBeforeUse,
        edition: EditionHint::Any,
        patch: p_ldst32,
        apply: m_st_before_use,
    },
    Mutator {
        name: "no-fence-after-sync",
        rule: RuleId::McmXthread,
        edition: EditionHint::Any,
        patch: p_mma_exact,
        apply: m_xthread,
    },
    Mutator {
        name: "publish-without-wait-st",
        rule: RuleId::McmXthreadNonpipe,
        edition: EditionHint::Any,
        patch: p_mma_exact,
        apply: m_xthread_nonpipe,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mutator_applies_and_changes_the_program() {
        for m in MUTATORS {
            let p = near_miss(m, 1).unwrap_or_else(|| panic!("{} never applies", m.name));
            let mut cfg = Config::default();
            (m.patch)(&mut cfg);
            // Some base program was changed: the result is not any of the attempted bases.
            let same =
                (0..ATTEMPTS).any(|k| builder::build(&cfg, &mut SeedChoices::new(1 + k)) == p);
            assert!(!same, "{} left the program unchanged", m.name);
        }
    }

    /// MCM-XTHREAD-NONPIPE (reference §4.3-4.4: a non-pipelined producer must wait::st before
    /// its fence and sync): in every mutant, some warp other than the MMA's issuer stores A and
    /// reaches the next synchronization with no `wait::st` after that store.
    #[test]
    fn publish_without_wait_st_leaves_the_a_store_unwaited_at_the_sync() {
        let m = by_name("publish-without-wait-st").expect("exists");
        for seed in 0..200u64 {
            let Some(p) = near_miss(m, seed * 31) else {
                continue;
            };
            let a = p
                .ops()
                .into_iter()
                .find_map(|op| match op {
                    Op::Mma(x) => match x.a {
                        MmaA::Tmem(t) => Some(t),
                        _ => None,
                    },
                    _ => None,
                })
                .expect("an MMA with A in TMEM");
            let unwaited = p.warps.iter().any(|code| {
                let issues = walk::contains(&p, code, &|s| matches!(s, Stmt::Tc(Op::Mma(_))));
                let Some(i) = code.iter().position(|s| {
                    matches!(s, Stmt::Tc(Op::St { taddr, .. }) if taddr.base == a.base && taddr.col == a.col)
                }) else {
                    return false;
                };
                let sync = code[i..]
                    .iter()
                    .position(|s| matches!(s, Stmt::BarCta | Stmt::ClusterArrive { .. }))
                    .map(|k| i + k);
                !issues
                    && sync.is_some_and(|j| {
                        !walk::contains(&p, &code[i + 1..j], &|s| {
                            matches!(s, Stmt::Tc(op) if is_wait(op, WaitOp::St))
                        })
                    })
            });
            assert!(
                unwaited,
                "seed {}: no unwaited A store at a sync",
                seed * 31
            );
        }
    }

    #[test]
    fn names_are_unique() {
        for (i, a) in MUTATORS.iter().enumerate() {
            assert!(
                MUTATORS[i + 1..].iter().all(|b| b.name != a.name),
                "{}",
                a.name
            );
            assert_eq!(by_name(a.name).map(|m| m.name), Some(a.name));
        }
    }
}
