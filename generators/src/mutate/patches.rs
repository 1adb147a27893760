//! Config patches: what each mutator asks of its base program (the builder's `Config`).

use super::*;

/// `cta_group::1`, one CTA per cluster.
pub(super) fn one_cta(c: &mut Config) {
    c.cta_groups = vec![CtaGroup::One];
    c.cluster_sizes = vec![1];
}

/// No target-gated features (shift, ld.red, i8, scale-input-d needs sm_100a family), so the
/// target can change without breaking SHIFT-TARGET, LD-RED-TARGET, MMA-I8-TARGET.
pub(super) fn ungated(c: &mut Config) {
    c.targets = vec![Target::Sm100a];
    c.shift = false;
    c.ld_red = false;
    c.mma_kinds.retain(|k| *k != MmaKind::I8);
}

pub(super) fn p_none(_: &mut Config) {}

/// `cta_group::1` (a `::2` dealloc adds DEALLOC-PAIR-SYNC to any unfinished access).
pub(super) fn p_cta1(c: &mut Config) {
    c.cta_groups = vec![CtaGroup::One];
}

pub(super) fn p_ungated(c: &mut Config) {
    ungated(c);
    // No MMA either: scale-input-d is also target-gated (§1).
    c.mma = false;
}

pub(super) fn p_ldst(c: &mut Config) {
    one_cta(c);
    c.st_ld = true;
    c.mma = false;
}

/// ld/st flows on `.32x32b` only, unpacked: the shape whose thread-to-cell mapping the text
/// states (reference §2.6), so the base program's values are predictable.
pub(super) fn p_ldst32(c: &mut Config) {
    p_ldst(c);
    c.ld_st_shapes = vec![LdStShape::S32x32b];
    c.pack_pct = 0;
    c.ld_red = false;
}

pub(super) fn p_ld_red(c: &mut Config) {
    p_ldst(c);
    c.targets = vec![Target::Sm103a];
    c.ld_red = true;
}

pub(super) fn p_mma(c: &mut Config) {
    one_cta(c);
    c.mma = true;
    c.ws_pct = 0;
    // Block-scaled forms have their own operand rules (no ashift, no disable-output-lane,
    // target-gated scale vectors): only the p_mma_bs mutators use them.
    c.mma_kinds
        .retain(|k| !matches!(k, MmaKind::Mxf8f6f4 | MmaKind::Mxf4 | MmaKind::Mxf4nvf4));
}

/// A block-scaled mxf8f6f4 MMA on sm_100a (`.scale_vec::1X`) with nothing else target-gated.
pub(super) fn p_mma_bs(c: &mut Config) {
    one_cta(c);
    c.mma = true;
    c.mma_kinds = vec![MmaKind::Mxf8f6f4];
    c.targets = vec![Target::Sm100a];
    c.shift = false;
    c.ld_red = false;
}

/// A dense f16 MMA without shift (whose row movement is OQ-16), so D is predictable in the
/// base program.
pub(super) fn p_mma_exact(c: &mut Config) {
    p_mma(c);
    c.mma_kinds = vec![MmaKind::F16];
    c.shift = false;
}

pub(super) fn p_mma_ws(c: &mut Config) {
    p_mma(c);
    c.ws_pct = 100;
}

pub(super) fn p_mma_f16(c: &mut Config) {
    p_mma(c);
    c.mma_kinds = vec![MmaKind::F16, MmaKind::Tf32];
}

pub(super) fn p_mma_scale_kind(c: &mut Config) {
    p_mma(c);
    c.mma_kinds = vec![MmaKind::F8f6f4, MmaKind::I8];
}

pub(super) fn p_mma_i8(c: &mut Config) {
    p_mma(c);
    c.mma_kinds = vec![MmaKind::I8];
    c.shift = false;
}

/// [`p_mma_i8`] with the four quarter warps, which the builder needs to store A in TMEM.
pub(super) fn p_mma_i8_st(c: &mut Config) {
    p_mma_i8(c);
    c.min_warps = 4;
    c.max_warps = c.max_warps.max(4);
}

pub(super) fn p_cp(c: &mut Config) {
    p_mma(c);
    c.cp = true;
}

pub(super) fn p_shift(c: &mut Config) {
    p_mma(c);
    c.shift = true;
    c.ld_red = false;
    c.mma_kinds.retain(|k| *k != MmaKind::I8);
}

pub(super) fn p_pair(c: &mut Config) {
    c.cta_groups = vec![CtaGroup::Two];
    c.cluster_sizes = vec![2];
}

/// A `cta_group::2` MMA (issued by the even CTA of the pair) of a kind without block scaling
/// and without `.ws` (reference §2.5, §3.7).
pub(super) fn p_pair_mma(c: &mut Config) {
    p_pair(c);
    c.mma = true;
    c.ws_pct = 0;
    c.mma_kinds = vec![MmaKind::F16, MmaKind::Tf32, MmaKind::F8f6f4];
}

/// A dense `cta_group::2` mxf4/mxf4nvf4 MMA on a target other than sm_103a (so K = 64).
pub(super) fn p_pair_mxf4(c: &mut Config) {
    p_pair(c);
    c.mma = true;
    c.mma_kinds = vec![MmaKind::Mxf4, MmaKind::Mxf4nvf4];
    c.targets = vec![Target::Sm100a, Target::Sm100f, Target::Sm110f];
}

/// A block-scaled mxf4nvf4 MMA (`cta_group::1`).
pub(super) fn p_mma_nvf4(c: &mut Config) {
    one_cta(c);
    c.mma = true;
    c.mma_kinds = vec![MmaKind::Mxf4nvf4];
}

/// A sparse (`.sp`) MMA of `kinds` in a CTA of at least four warps (the quarter warps write
/// its metadata, `sparse_meta_st`), with no cp and no shift (the oracle judges metadata
/// written by st only).
pub(super) fn sparse(c: &mut Config, kinds: &[MmaKind]) {
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
pub(super) fn p_sp_mxf4_103a(c: &mut Config) {
    sparse(c, &[MmaKind::Mxf4]);
    c.targets = vec![Target::Sm103a];
}

/// Sparse tf32.
pub(super) fn p_sp_tf32(c: &mut Config) {
    sparse(c, &[MmaKind::Tf32]);
}

/// Sparse mxf4 / mxf4nvf4 on sm_100a, scale factors written by st (no cp).
pub(super) fn p_sp_mxf4(c: &mut Config) {
    sparse(c, &[MmaKind::Mxf4, MmaKind::Mxf4nvf4]);
    c.targets = vec![Target::Sm100a];
}

pub(super) fn p_cluster_cta1(c: &mut Config) {
    c.cta_groups = vec![CtaGroup::One];
    c.cluster_sizes = vec![2];
}

pub(super) fn p_one_alloc(c: &mut Config) {
    one_cta(c);
    c.max_allocs = 1;
    c.ncols = vec![64, 128, 256];
}

pub(super) fn p_alloc_only(c: &mut Config) {
    one_cta(c);
    c.max_allocs = 1;
    c.ncols = vec![32];
    c.st_ld = false;
    c.mma = false;
}

pub(super) fn p_full_alloc(c: &mut Config) {
    one_cta(c);
    c.max_allocs = 1;
    c.ncols = vec![512];
}

pub(super) fn p_two_allocs(c: &mut Config) {
    one_cta(c);
    c.max_allocs = 3;
    c.ncols = vec![32, 64, 128];
}
