//! Target and PTX-version gating of tcgen05 features (reference §1, GEN-TARGET, GEN-PTXVER,
//! LD-RED-TARGET, SHIFT-TARGET, MMA-I8-TARGET), as the generator's own table.

use tcgen05_ir::{MmaKind, PtxVersion, Target};

/// The newest PTX version the generator emits: 9.0, the newest that ptxas 13.0 accepts
/// (corpus/realworld/PTXAS-PROBES.md §1), so every generated case can be assembled by every
/// installed ptxas >= 13.0.
pub const MAX_VERSION: PtxVersion = PtxVersion::new(9, 0);

/// PTX versions the generator chooses from, oldest first.
pub const VERSIONS: &[PtxVersion] = &[
    PtxVersion::new(8, 6),
    PtxVersion::new(8, 7),
    PtxVersion::new(8, 8),
    PtxVersion::new(9, 0),
];

/// The oldest `.version` that knows the target name (GEN-PTXVER): sm_100a 8.6; the `f`
/// targets and sm_103a 8.8 (OQ-30); sm_110a/f 9.0 (the rename, seeds 000/002).
pub fn min_version(t: Target) -> PtxVersion {
    match t {
        Target::Sm100a => PtxVersion::new(8, 6),
        Target::Sm100f | Target::Sm103a | Target::Sm103f => PtxVersion::new(8, 8),
        Target::Sm110a | Target::Sm110f => PtxVersion::new(9, 0),
        // Not tcgen05 targets: only near-misses name them.
        Target::Sm90a | Target::Sm100 | Target::Sm120a => PtxVersion::new(8, 6),
    }
}

/// Whether the target is arch-specific (`a`).
pub fn is_arch_specific(t: Target) -> bool {
    matches!(t, Target::Sm100a | Target::Sm103a | Target::Sm110a)
}

/// `tcgen05.ld.red` (LD-RED-TARGET, §3.2): sm_101a/sm_110a, sm_110f, sm_103f (so sm_103a);
/// neither sm_100a nor sm_100f. Needs PTX 8.8.
pub fn has_ld_red(t: Target) -> bool {
    matches!(
        t,
        Target::Sm103a | Target::Sm103f | Target::Sm110a | Target::Sm110f
    )
}

/// `tcgen05.shift` (SHIFT-TARGET, §3.6): arch-specific targets only.
pub fn has_shift(t: Target) -> bool {
    is_arch_specific(t)
}

/// `.kind::i8` (MMA-I8-TARGET): sm_100a and sm_101a/sm_110a only.
pub fn has_i8(t: Target) -> bool {
    matches!(t, Target::Sm100a | Target::Sm110a)
}

/// `scale-input-d` (§1 table): sm_100a, and the sm_100f family (sm_100f, sm_103a/f) from 8.8.
pub fn has_scale_input_d(t: Target) -> bool {
    matches!(
        t,
        Target::Sm100a | Target::Sm100f | Target::Sm103a | Target::Sm103f
    )
}

/// The scale-vector qualifiers a block-scaled MMA of `kind` may carry on target `t` at PTX
/// version `v` (reference §3.7 table, MMA-BS-VEC, MMA-BS-VEC-TARGET, MMA-BS-NVF4-EXPLICIT,
/// GEN-PTXVER); `None` in the list means no qualifier (mxf4 only: `.block32` by
/// MMA-BS-MXF4-DEFAULT). Empty where the kind cannot be generated on the target:
/// - mxf8f6f4: `.scale_vec::1X` on sm_100a, `.block32` on sm_100f / sm_110f;
/// - mxf4: `.scale_vec::2X` on sm_100a; `.block32` or nothing on sm_100f / sm_110f; nothing on
///   sm_103a (the only target of K = 96, MMA-K96-TARGET);
/// - mxf4nvf4 (PTX 8.7+, and it must state a size): `2X` or `4X` on sm_100a, `.block32` or
///   `.block16` on sm_100f / sm_110f.
pub fn scale_vecs(
    kind: MmaKind,
    t: Target,
    v: PtxVersion,
) -> &'static [Option<tcgen05_ir::ScaleVec>] {
    use tcgen05_ir::ScaleVec::*;
    let family = matches!(t, Target::Sm100f | Target::Sm110f);
    match kind {
        MmaKind::Mxf8f6f4 if t == Target::Sm100a => &[Some(X1)],
        MmaKind::Mxf8f6f4 if family => &[Some(Block32)],
        MmaKind::Mxf4 if t == Target::Sm100a => &[Some(X2)],
        MmaKind::Mxf4 if family => &[Some(Block32), None],
        MmaKind::Mxf4 if t == Target::Sm103a => &[None],
        MmaKind::Mxf4nvf4 if v < PtxVersion::new(8, 7) => &[],
        MmaKind::Mxf4nvf4 if t == Target::Sm100a => &[Some(X2), Some(X4)],
        MmaKind::Mxf4nvf4 if family => &[Some(Block32), Some(Block16)],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gating_matches_reference_section_1() {
        // §1 table rows, one assertion per stated fact.
        assert!(!has_ld_red(Target::Sm100a) && !has_ld_red(Target::Sm100f));
        assert!(has_ld_red(Target::Sm103a) && has_ld_red(Target::Sm110f));
        assert!(
            has_shift(Target::Sm100a) && !has_shift(Target::Sm100f) && !has_shift(Target::Sm103f)
        );
        assert!(has_i8(Target::Sm110a) && !has_i8(Target::Sm103a) && !has_i8(Target::Sm100f));
        assert_eq!(min_version(Target::Sm110a), PtxVersion::new(9, 0));
        assert_eq!(min_version(Target::Sm100f), PtxVersion::new(8, 8));
        assert!(VERSIONS.iter().all(|v| *v <= MAX_VERSION));
        // §3.7 / §1: mxf4nvf4 needs 8.7 and an explicit size; .scale_vec::NX only on sm_100a.
        let v88 = PtxVersion::new(8, 8);
        assert!(scale_vecs(MmaKind::Mxf4nvf4, Target::Sm100a, PtxVersion::new(8, 6)).is_empty());
        assert!(!scale_vecs(MmaKind::Mxf4nvf4, Target::Sm100f, v88).contains(&None));
        for k in [MmaKind::Mxf8f6f4, MmaKind::Mxf4, MmaKind::Mxf4nvf4] {
            for t in [
                Target::Sm100f,
                Target::Sm103a,
                Target::Sm110a,
                Target::Sm110f,
            ] {
                assert!(
                    scale_vecs(k, t, v88).iter().flatten().all(|s| matches!(
                        s,
                        tcgen05_ir::ScaleVec::Block16 | tcgen05_ir::ScaleVec::Block32
                    )),
                    "{k:?} {t:?}"
                );
            }
        }
    }
}
