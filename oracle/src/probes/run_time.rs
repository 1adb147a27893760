//! Probes of the MMA rows judged at run time.

use super::build::{idesc, mma, mma_prog, set_cta_group};
use tcgen05_ir::form::*;
use tcgen05_ir::*;

/// Probes for the MMA rows judged at run time (`run/mma_rules.rs`): each is statically
/// well-formed and breaks one rule in the value of the idesc or zero-column-mask register (or
/// in the collector sequence), which the printed PTX computes at run time. A ptxas that
/// rejects one of them checks more than the program text shows.
pub(super) fn run_time_mma(v87: PtxVersion, v88: PtxVersion) -> Vec<(String, Program)> {
    // Layout (c) (reference §2.8): A, B = E2M1 (1), UE8M0 scale type, N >> 3, M >> 7.
    let idesc_c = |m: u32, n: u32| 1 << 7 | 1 << 10 | 1 << 23 | (n >> 3) << 17 | (m >> 7) << 27;
    let bs = |kind: MmaKind, sv: Option<ScaleVec>, idesc: u32| {
        let mut m = mma(kind, false);
        m.form.block_scale = true;
        m.form.scale_vec = sv;
        m.idesc = idesc;
        m.scale_a = Some(TmemRef::slot(0, 0, 96));
        m.scale_b = Some(TmemRef::slot(0, 0, 100));
        m
    };
    let pair = |t: Target, m: Mma| {
        let mut p = mma_prog(t, v88, m);
        set_cta_group(&mut p, CtaGroup::Two);
        p.launch.cluster_size = 2;
        p
    };
    let with = |kind: MmaKind, f: &dyn Fn(&mut Mma)| {
        let mut m = mma(kind, false);
        f(&mut m);
        m
    };
    let k96 = idesc_c(256, 128) | 1 << 31;
    let mut out = vec![
        (
            "run-k-explicit-cta1".to_string(),
            mma_prog(
                Target::Sm103a,
                v88,
                bs(MmaKind::Mxf4, None, idesc_c(128, 64) | 1 << 31),
            ),
        ),
        (
            "run-k96-sm_100a".to_string(),
            pair(Target::Sm100a, bs(MmaKind::Mxf4, None, k96)),
        ),
        (
            "run-k96-sm_103a-valid".to_string(),
            pair(Target::Sm103a, bs(MmaKind::Mxf4, None, k96)),
        ),
        (
            "run-mxf4-m256-cta1".to_string(),
            mma_prog(
                Target::Sm100a,
                v88,
                bs(MmaKind::Mxf4, None, idesc_c(256, 64)),
            ),
        ),
        (
            "run-mxf4-idesc-reserved".to_string(),
            mma_prog(
                Target::Sm100a,
                v88,
                bs(MmaKind::Mxf4, None, idesc_c(128, 64) | 1 << 25),
            ),
        ),
        (
            "run-mxf4-sfid-1".to_string(),
            mma_prog(
                Target::Sm100a,
                v88,
                bs(MmaKind::Mxf4, None, idesc_c(128, 64) | 1 << 29),
            ),
        ),
        (
            "run-mxf4nvf4-ue4m3-2x".to_string(),
            mma_prog(
                Target::Sm100a,
                v87,
                bs(
                    MmaKind::Mxf4nvf4,
                    Some(ScaleVec::X2),
                    idesc_c(128, 64) & !(1 << 23),
                ),
            ),
        ),
        (
            "run-mxf4-transpose".to_string(),
            mma_prog(
                Target::Sm100a,
                v88,
                bs(MmaKind::Mxf4, None, idesc_c(128, 64) | 1 << 16),
            ),
        ),
        (
            "run-tf32-transpose-noswizzle".to_string(),
            mma_prog(
                Target::Sm100a,
                v88,
                with(MmaKind::Tf32, &|m| m.idesc |= 1 << 16),
            ),
        ),
        (
            "run-f8-transpose-b-n24".to_string(),
            mma_prog(
                Target::Sm100a,
                v88,
                with(MmaKind::F8f6f4, &|m| {
                    m.idesc = idesc(MmaKind::F8f6f4, 128, 24) | 1 << 16
                }),
            ),
        ),
        (
            "run-e2m1-transpose-a".to_string(),
            mma_prog(
                Target::Sm100a,
                v88,
                with(MmaKind::F8f6f4, &|m| {
                    m.idesc = idesc(MmaKind::F8f6f4, 128, 64) & !(7 << 7) | 5 << 7 | 1 << 15
                }),
            ),
        ),
        (
            "run-ws-zcm-shift-17-m32".to_string(),
            mma_prog(
                Target::Sm100a,
                v88,
                with(MmaKind::F16, &|m| {
                    m.form.ws = true;
                    m.idesc = idesc(MmaKind::F16, 32, 64);
                    m.zero_col_mask = Some(17 << 56 | 1 << 39);
                }),
            ),
        ),
    ];
    out.push((
        "run-collector-use-unfilled".to_string(),
        mma_prog(
            Target::Sm100a,
            v88,
            with(MmaKind::F16, &|m| {
                m.form.collector = Some(Collector {
                    buf: CollectorBuf::A,
                    op: CollectorOp::Use,
                })
            }),
        ),
    ));
    out
}
