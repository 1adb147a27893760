//! Reachable undefined behaviour and run-time rules without a stated consequence, per event
//! (reference §3, §6 rows of kind dynamic-UB and dynamic). Any of them makes the run
//! `Undefined(rules)`: the spec allows every outcome, so the oracle compares nothing.

use super::Findings;
use super::unroll::{EvKind, Unrolled};
use tcgen05_ir::*;

/// Rows of the instruction descriptor layout (a) that the oracle checks (reference §2.8).
fn idesc_rules(m: &Mma, out: &mut Vec<(RuleId, String)>) {
    let k = m.form.kind;
    let d = m.idesc;
    let layout_a = matches!(
        k,
        MmaKind::F16 | MmaKind::Tf32 | MmaKind::F8f6f4 | MmaKind::I8
    );
    if !layout_a {
        return;
    }
    // IDESC-RESERVED: bits 6, 23 and 29; bits 30-31 are the .ws B-reuse shift.
    if d & (1 << 6 | 1 << 23 | 1 << 29) != 0 || (!m.form.ws && d >> 30 != 0) {
        out.push((
            RuleId::IdescReserved,
            format!("instruction descriptor {d:#010x} sets reserved bits"),
        ));
    }
    // IDESC-SAT: the saturate bit is for i8 only.
    if k != MmaKind::I8 && d & (1 << 3) != 0 {
        out.push((
            RuleId::IdescSat,
            "the saturate bit is set for a kind other than i8".into(),
        ));
    }
    // MMA-TRANSPOSE-KIND: i8 cannot negate.
    if k == MmaKind::I8 && d & (0b11 << 13) != 0 {
        out.push((
            RuleId::MmaTransposeKind,
            "kind::i8 cannot negate A or B".into(),
        ));
    }
    // MMA-SP-SELECTOR: 0 for i8 and f8f6f4.
    if matches!(k, MmaKind::I8 | MmaKind::F8f6f4) && d & 0b11 != 0 {
        out.push((
            RuleId::MmaSpSelector,
            "the sparsity selector must be 0 for i8 and f8f6f4".into(),
        ));
    }
    // IDESC-ENC: D, A and B types.
    let dt = d >> 4 & 3;
    let (at, bt) = (d >> 7 & 7, d >> 10 & 7);
    let enc_ok = match k {
        MmaKind::F16 => {
            matches!(dt, 0 | 1) && at <= 1 && bt <= 1 && (dt == 1 || (at == 0 && bt == 0))
        }
        MmaKind::Tf32 => dt == 1 && at == 2 && bt == 2,
        MmaKind::F8f6f4 => {
            matches!(dt, 0 | 1) && [0, 1, 3, 4, 5].contains(&at) && [0, 1, 3, 4, 5].contains(&bt)
        }
        MmaKind::I8 => dt == 2 && at <= 1 && bt <= 1,
        _ => true,
    };
    if !enc_ok {
        out.push((
            RuleId::IdescEnc,
            format!(
                "the D/A/B type fields of {d:#010x} are not valid for {}",
                k.as_str()
            ),
        ));
    }
    // MMA-SHAPE-VALID (reference §2.7) for the dense and sparse layout-(a) kinds.
    let mm = (d >> 24 & 0x1F) << 4;
    let n = (d >> 17 & 0x3F) << 3;
    let two = m.form.cta_group == CtaGroup::Two;
    let ok = if m.form.ws {
        let ns: &[u32] = if m.form.sp {
            &[64, 128]
        } else {
            &[64, 128, 256]
        };
        matches!(mm, 32 | 64 | 128) && ns.contains(&n)
    } else if two {
        let step = if k == MmaKind::I8 { 32 } else { 16 };
        matches!(mm, 128 | 256) && (step..=256).contains(&n) && n.is_multiple_of(step)
    } else {
        let n_ok = if k == MmaKind::I8 {
            matches!(n, 8 | 16 | 24 | 32) || ((48..=256).contains(&n) && n.is_multiple_of(16))
        } else {
            (8..=256).contains(&n) && n.is_multiple_of(8)
        };
        matches!(mm, 64 | 128) && n_ok
    };
    if !ok {
        out.push((
            RuleId::MmaShapeValid,
            format!(
                "M={mm}, N={n} is not a valid shape for {}{}",
                k.as_str(),
                if two { " ::2" } else { "" }
            ),
        ));
    }
}

/// SDESC-* rows for one shared-memory descriptor (reference §2.8).
fn sdesc_rules(d: &SmemDesc, target: Target, out: &mut Vec<(RuleId, String)>) {
    if !d.offset.is_multiple_of(16) {
        out.push((
            RuleId::SdescAlign16,
            format!(
                "descriptor start offset {} is not 16-byte aligned",
                d.offset
            ),
        ));
    }
    if d.fixed != 1 {
        out.push((
            RuleId::SdescFixed,
            format!("descriptor bits 46-48 are {:#b}, not 0b001", d.fixed),
        ));
    }
    if d.reserved & SmemDesc::RESERVED_MASK != 0 {
        out.push((
            RuleId::SdescReserved,
            "descriptor reserved bits are set".into(),
        ));
    }
    if matches!(d.swizzle, 3 | 5 | 7) {
        out.push((
            RuleId::SdescSwizzle,
            format!("swizzle code {} is invalid", d.swizzle),
        ));
    }
    let boundary = match d.swizzle {
        1 | 2 => Some(1024),
        4 => Some(512),
        6 => Some(256),
        _ => None,
    };
    if let Some(b) = boundary {
        let want = if d.offset.is_multiple_of(b) {
            0
        } else {
            (d.offset >> 7 & 7) as u8
        };
        if d.base_offset != want {
            out.push((
                RuleId::SdescBaseoff,
                format!("base offset {} should be {want}", d.base_offset),
            ));
        }
    }
    if d.lbo_abs && (target != Target::Sm103a || d.swizzle != 1 || d.base_offset != 0) {
        out.push((
            RuleId::SdescLboAbs,
            "absolute-LBO mode needs sm_103a, 128B swizzle with 16B atomicity and base offset 0"
                .into(),
        ));
    }
}

/// What [`scan`] saw of the program's MMAs, for the passes after it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scanned {
    /// Whether the TMEM data rules (`mma_rules::data`: MMA-SP-META-*, MMA-BS-DUP) may judge
    /// the program: some MMA has sparse metadata or block scaling, and there is no `::2` MMA,
    /// no cp and no shift (what `mma_rules::data` asks before it judges).
    pub data_rules: bool,
}

/// Scans every event for reachable undefined behaviour and unstated-consequence rules.
pub fn scan(p: &Program, u: &Unrolled<'_>, f: &mut Findings) -> Scanned {
    let w = p.warps.len().max(1);
    let cs = p.launch.cluster_size;
    let mut seen: Vec<(RuleId, String)> = Vec::new();
    // The findings of one event (reused: cleared by `record`).
    let mut out: Vec<(RuleId, String)> = Vec::new();
    // Whether some MMA names its collector buffer with `::use` or `::lastuse`, the only ones
    // MMA-COLLECTOR-VALID can flag (a copied warp's MMAs are its original's).
    let mut collector_use = false;
    // For `Scanned::data_rules`.
    let (mut data_rule, mut pair_mma, mut cp_shift) = (false, false, false);
    for (g, evs) in u.warps.iter().enumerate() {
        if u.copied.get(g) == Some(&true) {
            // A copy of the first CTA's warp of the same rank: its events (statement, masks)
            // are that warp's, and what is found below depends on nothing else, so they add
            // no rule and no note (`record` notes a rule once).
            continue;
        }
        for e in evs {
            if !e.kind.is_tc() && !matches!(e.kind, EvKind::ObserveAddr | EvKind::Fill) {
                // Nothing below applies.
                continue;
            }
            let Stmt::Tc(op) = e.stmt else {
                if matches!(e.stmt, Stmt::ObserveAddr { slot } if *slot >= p.smem.slots) {
                    out.push((
                        RuleId::AllocAddrStore,
                        "a slot outside the declared slots is read".into(),
                    ));
                }
                if let Stmt::Fill { region, .. } = e.stmt
                    && usize::from(*region) >= p.smem.regions.len()
                {
                    out.push((
                        RuleId::McmProxy,
                        "a fill writes a data region that is not declared".into(),
                    ));
                }
                record(f, &mut seen, &mut out);
                continue;
            };
            let form = op.form();
            let aligned = matches!(
                form,
                Form::Alloc(_) | Form::Dealloc(_) | Form::Relinquish(_) | Form::Ld(_) | Form::St(_)
            );
            if aligned {
                // GEN-ALIGNED-CONVERGENT, GEN-NO-EXITED-THREAD (§9.7.16.7.1, .8.3, .8.4): UB.
                if e.mask != e.live {
                    out.push((
                        RuleId::GenAlignedConvergent,
                        format!(
                            "tcgen05.{} is executed by part of the warp",
                            form.family().as_str()
                        ),
                    ));
                }
                if e.live != u32::MAX {
                    out.push((
                        RuleId::GenNoExitedThread,
                        format!(
                            "tcgen05.{} runs after some threads of the warp exited",
                            form.family().as_str()
                        ),
                    ));
                }
            }
            // WAIT-ALIGNED-CONVERGENT (§9.7.16.8.5: "all threads in the warp must execute the
            // same tcgen05.wait_operation instruction"): a thread that exited does not, so a
            // wait after some lanes exited breaks it too (consequence unstated: `Undefined`).
            if matches!(form, Form::Wait(_)) && (e.mask != e.live || e.live != u32::MAX) {
                out.push((
                    RuleId::WaitAlignedConvergent,
                    if e.mask != e.live {
                        "tcgen05.wait is executed by part of the warp".into()
                    } else {
                        "tcgen05.wait runs after some threads of the warp exited".into()
                    },
                ));
            }
            if form.cta_group() == Some(CtaGroup::Two) && !matches!(form, Form::Wait(_)) && cs < 2 {
                out.push((
                    RuleId::GenPeerExists,
                    "a ::2 operation runs in a cluster of one CTA: there is no peer".into(),
                ));
            }
            let taddr_uniform = |t: &TmemRef, out: &mut Vec<(RuleId, String)>| {
                if t.divergent {
                    out.push((
                        RuleId::LdstTaddrUniform,
                        "threads of the warp pass different TMEM addresses".into(),
                    ));
                }
            };
            cp_shift |= matches!(op, Op::Cp { .. } | Op::Shift { .. });
            match op {
                Op::Alloc {
                    form,
                    ncols,
                    dst_global,
                    slot,
                } => {
                    ncols_rules(ncols, &mut out);
                    if form.space.is_none() && *dst_global {
                        out.push((
                            RuleId::AllocDstShared,
                            "alloc's generic dst points outside shared memory".into(),
                        ));
                    }
                    if *slot >= p.smem.slots {
                        out.push((
                            RuleId::AllocDstShared,
                            "alloc's dst slot is outside the declared slots".into(),
                        ));
                    }
                }
                Op::Dealloc { ncols, taddr, .. } => {
                    ncols_rules(ncols, &mut out);
                    if taddr.divergent {
                        out.push((
                            RuleId::DeallocTaddrPrev,
                            "threads pass different dealloc addresses".into(),
                        ));
                    }
                }
                Op::Ld { taddr, .. } | Op::St { taddr, .. } => taddr_uniform(taddr, &mut out),
                Op::Commit {
                    addr: MbarAddr::GlobalUb,
                    ..
                } => {
                    out.push((
                        RuleId::CommitMbarWindow,
                        "commit's mbarrier address is outside the .shared::cluster window".into(),
                    ));
                }
                Op::Shift { taddr, .. } if taddr.lane % 32 != 0 => {
                    out.push((
                        RuleId::ShiftLaneAlign,
                        format!("shift's lane field {} is not a multiple of 32", taddr.lane),
                    ));
                }
                Op::Cp { src, .. } => {
                    sdesc_rules(src, p.launch.target, &mut out);
                    if usize::from(src.region) >= p.smem.regions.len() {
                        out.push((
                            RuleId::CpSdesc,
                            "cp's descriptor names an undeclared region".into(),
                        ));
                    }
                }
                Op::Mma(m) => {
                    data_rule |= m.sp_meta.is_some() || m.form.block_scale;
                    pair_mma |= m.form.cta_group == CtaGroup::Two;
                    collector_use |= m
                        .form
                        .collector
                        .is_some_and(|c| matches!(c.op, CollectorOp::Use | CollectorOp::Lastuse));
                    idesc_rules(m, &mut out);
                    // Layouts (b)/(c), K selector, transpose, zero-column mask (mma_rules.rs).
                    super::mma_rules::event(m, p.launch.target, &mut out);
                    sdesc_rules(&m.b, p.launch.target, &mut out);
                    if let MmaA::Desc(a) = &m.a {
                        sdesc_rules(a, p.launch.target, &mut out);
                    }
                    if m.form.ashift {
                        let mm = (m.idesc >> 24 & 0x1F) << 4;
                        if !matches!(mm, 128 | 256) {
                            out.push((RuleId::MmaAshiftM, ".ashift needs M = 128 or 256".into()));
                        }
                    }
                }
                _ => {}
            }
            let _ = (g, w);
            record(f, &mut seen, &mut out);
        }
    }
    // MMA-COLLECTOR-VALID: the collector sequence of each warp (mma_rules.rs), when some
    // MMA could break it.
    if collector_use {
        super::mma_rules::collector(p, u, f);
    }
    Scanned {
        data_rules: data_rule && !pair_mma && !cp_shift,
    }
}

fn ncols_rules(n: &NCols, out: &mut Vec<(RuleId, String)>) {
    match n.form {
        NColsForm::RegDivergent => out.push((
            RuleId::AllocNcolsUniform,
            "threads of the warp pass different nCols".into(),
        )),
        NColsForm::Reg => {
            if !n.value.is_power_of_two() {
                out.push((
                    RuleId::AllocNcolsPow2,
                    format!("nCols {} (in a register) is not a power of two", n.value),
                ));
            }
            if !(32..=512).contains(&n.value) {
                out.push((
                    RuleId::AllocNcolsRange,
                    format!("nCols {} (in a register) is outside [32, 512]", n.value),
                ));
            }
        }
        NColsForm::Imm => {}
    }
}

/// Records the findings of one event (`out`, left empty).
#[inline(always)]
fn record(f: &mut Findings, seen: &mut Vec<(RuleId, String)>, out: &mut Vec<(RuleId, String)>) {
    if out.is_empty() {
        return;
    }
    for (r, m) in out.drain(..) {
        f.undefined.insert(r);
        if !seen.iter().any(|(r2, _)| *r2 == r) {
            f.note(format!("{r}: {m}"));
            seen.push((r, m));
        }
    }
}
