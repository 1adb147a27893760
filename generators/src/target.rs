//! Target and PTX-version gating of tcgen05 features (reference §1, GEN-TARGET, GEN-PTXVER,
//! LD-RED-TARGET, SHIFT-TARGET, MMA-I8-TARGET), as the generator's own table.

use tcgen05_ir::{PtxVersion, Target};

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

/// The scale-vector qualifier a `.kind::mxf8f6f4` block-scaled MMA may use on this target
/// (MMA-BS-VEC-TARGET, §1): `.scale_vec::1X` needs sm_100a; `.block32` (the same size for
/// mxf8f6f4, §3.7) needs sm_100f or sm_110f (and PTX 8.8, which those targets need anyway).
/// `None` where neither is stated to be available.
pub fn mx_scale_vec(t: Target) -> Option<tcgen05_ir::ScaleVec> {
    match t {
        Target::Sm100a => Some(tcgen05_ir::ScaleVec::X1),
        Target::Sm100f | Target::Sm110f => Some(tcgen05_ir::ScaleVec::Block32),
        _ => None,
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
    }
}
