//! Target and PTX-version gating per instruction form (reference §1; rows GEN-TARGET,
//! GEN-PTXVER, SHIFT-TARGET, LD-RED-TARGET, MMA-I8-TARGET, MMA-SP-MXF4-TARGET,
//! MMA-BS-VEC-TARGET).

use tcgen05_ir::form::Form;
use tcgen05_ir::*;

/// Whether `t` is one of the tcgen05 targets of reference §1.
pub fn is_tcgen05_target(t: Target) -> bool {
    matches!(
        t,
        Target::Sm100a
            | Target::Sm100f
            | Target::Sm103a
            | Target::Sm103f
            | Target::Sm110a
            | Target::Sm110f
    )
}

/// Whether `t` is a family-specific (`f`) target.
pub fn is_family(t: Target) -> bool {
    matches!(t, Target::Sm100f | Target::Sm103f | Target::Sm110f)
}

/// The least PTX version that knows the target name with tcgen05 (reference §1): 8.6 for
/// sm_100a, 8.8 for the `f` targets and sm_103a (OQ-30), 9.0 for sm_110a/f.
pub fn target_min_version(t: Target) -> PtxVersion {
    match t {
        Target::Sm100a => PtxVersion::new(8, 6),
        Target::Sm100f | Target::Sm103a | Target::Sm103f => PtxVersion::new(8, 8),
        Target::Sm110a | Target::Sm110f => PtxVersion::new(9, 0),
        _ => PtxVersion::new(8, 6),
    }
}

fn ver(v: PtxVersion) -> String {
    v.to_string()
}

/// Whether `form` has no gating row of its own (only GEN-TARGET and GEN-PTXVER apply).
#[inline]
pub fn ungated(form: &Form) -> bool {
    match form {
        Form::Alloc(f) => !f.exclusive,
        Form::Dealloc(f) => !f.exclusive,
        Form::Ld(f) => !f.red,
        Form::Shift(_) | Form::Mma(_) => false,
        _ => true,
    }
}

/// Whether `t` is a tcgen05 target and `v` knows tcgen05 and `t`: then an instruction of an
/// [`ungated`] form passes every gating check.
#[inline]
pub fn target_and_version_ok(t: Target, v: PtxVersion) -> bool {
    is_tcgen05_target(t) && v >= PtxVersion::new(8, 6) && v >= target_min_version(t)
}

/// The gating violations of one instruction: `(rule, message)`.
#[inline]
pub fn gate(form: &Form, t: Target, v: PtxVersion) -> Vec<(RuleId, String)> {
    // Fast path (speed), inlined into the checker: a form with no gating row of its
    // own, on a tcgen05 target, at a version that knows tcgen05 and the target, passes every
    // check of `gate_rows`.
    if ungated(form) && target_and_version_ok(t, v) {
        return Vec::new();
    }
    gate_rows(form, t, v)
}

/// [`gate`] past its fast path: every gating row of reference §1 and §6 that `form` meets.
#[inline(never)]
fn gate_rows(form: &Form, t: Target, v: PtxVersion) -> Vec<(RuleId, String)> {
    let mut out = Vec::new();
    let name = form.family().as_str();
    if !is_tcgen05_target(t) {
        out.push((
            RuleId::GenTarget,
            format!(
                "tcgen05.{name} is not available on {t}; it needs sm_100a/f, sm_103a/f or sm_110a/f"
            ),
        ));
        return out;
    }
    let need = |out: &mut Vec<(RuleId, String)>, min: PtxVersion, what: &str| {
        if v < min {
            out.push((
                RuleId::GenPtxver,
                format!(
                    "{what} needs .version {} or later, not {}",
                    ver(min),
                    ver(v)
                ),
            ));
        }
    };
    need(&mut out, PtxVersion::new(8, 6), "tcgen05");
    let tmin = target_min_version(t);
    if tmin > PtxVersion::new(8, 6) {
        need(&mut out, tmin, &format!("target {t}"));
    }
    match form {
        Form::Alloc(f) if f.exclusive => need(
            &mut out,
            PtxVersion::new(9, 4),
            ".exclusive (a PTX 9.4 form outside the reference)",
        ),
        Form::Dealloc(f) if f.exclusive => need(
            &mut out,
            PtxVersion::new(9, 4),
            ".exclusive (a PTX 9.4 form outside the reference)",
        ),
        Form::Ld(f) if f.red => {
            need(&mut out, PtxVersion::new(8, 8), "tcgen05.ld.red");
            // LD-RED-TARGET (§9.7.16.8.3): sm_103a/f and sm_110a/f, not sm_100a/f.
            if matches!(t, Target::Sm100a | Target::Sm100f) {
                out.push((
                    RuleId::LdRedTarget,
                    format!("tcgen05.ld.red is not available on {t}"),
                ));
            }
        }
        Form::Shift(_) if is_family(t) => {
            // SHIFT-TARGET (§9.7.16.9.3): arch-specific targets only.
            out.push((
                RuleId::ShiftTarget,
                format!("tcgen05.shift needs an arch-specific target, not {t}"),
            ));
        }
        Form::Mma(f) => {
            if f.kind == MmaKind::Mxf4nvf4 {
                need(&mut out, PtxVersion::new(8, 7), ".kind::mxf4nvf4");
            }
            // MMA-I8-TARGET: sm_100a, sm_101a/sm_110a.
            if f.kind == MmaKind::I8 && !matches!(t, Target::Sm100a | Target::Sm110a) {
                out.push((
                    RuleId::MmaI8Target,
                    format!(".kind::i8 needs sm_100a or sm_110a, not {t}"),
                ));
            }
            // MMA-SP-MXF4-TARGET: sm_100a, sm_110a, sm_103a.
            if f.sp
                && matches!(f.kind, MmaKind::Mxf4 | MmaKind::Mxf4nvf4)
                && !matches!(t, Target::Sm100a | Target::Sm110a | Target::Sm103a)
            {
                out.push((
                    RuleId::MmaSpMxf4Target,
                    format!(
                        "mma.sp with {} needs sm_100a, sm_103a or sm_110a, not {t}",
                        f.kind.as_str()
                    ),
                ));
            }
            match f.scale_vec {
                Some(ScaleVec::Block16 | ScaleVec::Block32) => {
                    need(&mut out, PtxVersion::new(8, 8), ".block16/.block32");
                }
                Some(sv @ (ScaleVec::X1 | ScaleVec::X2 | ScaleVec::X4)) if t != Target::Sm100a => {
                    // MMA-BS-VEC-TARGET: `.scale_vec::NX` needs sm_100a.
                    out.push((
                        RuleId::MmaBsVecTarget,
                        format!("{} needs sm_100a, not {t}", sv.as_str()),
                    ));
                }
                _ => {}
            }
        }
        _ => {}
    }
    out
}
