//! Small probe programs across the static rules: well-formed ones and near-misses that break
//! exactly one static row (reference §6). Each probe says, from the spec, which rule it breaks;
//! the tests check that [`crate::check()`] flags exactly that rule, and the ptxas comparison
//! (`drivers/tests/oracle_vs_ptxas.rs`) checks the assemblers against the same intents.

use tcgen05_ir::form::*;
use tcgen05_ir::samples::{self, elect, ld_form};
use tcgen05_ir::*;

mod build;
mod run_time;

use build::{CG, ld_op, mma_prog, st_op, wrap};
pub use build::{commit, cp, desc, idesc, mma, set_cta_group};
use run_time::run_time_mma;

/// One probe.
#[derive(Debug, Clone)]
pub struct Probe {
    /// A short unique name.
    pub name: String,
    /// The program.
    pub program: Program,
    /// The static rule it breaks (`None`: well-formed).
    pub breaks: Option<RuleId>,
}

/// Every probe, in a fixed order.
pub fn probes() -> Vec<Probe> {
    let mut out = Vec::new();
    let v86 = PtxVersion::new(8, 6);
    let v87 = PtxVersion::new(8, 7);
    let v88 = PtxVersion::new(8, 8);
    let v90 = PtxVersion::new(9, 0);
    let mut add = |name: String, program: Program, breaks: Option<RuleId>| {
        out.push(Probe {
            name,
            program,
            breaks,
        });
    };
    let roundtrip = |t: Target, v: PtxVersion| {
        wrap(
            t,
            v,
            vec![
                samples::st(0, 0, 0, Num::X2, 5),
                samples::wait(WaitOp::St),
                samples::ld(0, 0, 0, Num::X2),
                samples::wait(WaitOp::Ld),
            ],
        )
    };

    // Targets and versions (GEN-TARGET, GEN-PTXVER).
    let tv = [
        (Target::Sm100a, v86, None),
        (
            Target::Sm100a,
            PtxVersion::new(8, 5),
            Some(RuleId::GenPtxver),
        ),
        (Target::Sm100f, v88, None),
        (Target::Sm100f, v87, Some(RuleId::GenPtxver)),
        (Target::Sm103a, v88, None),
        (Target::Sm103a, v87, Some(RuleId::GenPtxver)),
        (Target::Sm103f, v88, None),
        (Target::Sm110a, v90, None),
        (Target::Sm110a, v88, Some(RuleId::GenPtxver)),
        (Target::Sm110f, v90, None),
        (Target::Sm90a, v86, Some(RuleId::GenTarget)),
        (Target::Sm100, v86, Some(RuleId::GenTarget)),
        (Target::Sm120a, v88, Some(RuleId::GenTarget)),
    ];
    for (t, v, r) in tv {
        add(format!("roundtrip-{t}-{v}"), roundtrip(t, v), r);
    }

    // alloc / dealloc forms.
    let with_alloc = |f: &dyn Fn(&mut Op)| {
        let mut p = roundtrip(Target::Sm100a, v86);
        if let Stmt::Tc(op) = &mut p.warps[0][0] {
            f(op);
        }
        p
    };
    for n in [32u32, 64, 256, 512] {
        let mut p = with_alloc(&|op| {
            if let Op::Alloc { ncols, .. } = op {
                ncols.value = n;
            }
        });
        if let Stmt::Tc(Op::Dealloc { ncols, .. }) = &mut p.warps[0][6] {
            ncols.value = n;
        }
        add(format!("alloc-ncols-{n}"), p, None);
    }
    for (n, r) in [
        (96u32, RuleId::AllocNcolsPow2),
        (1024, RuleId::AllocNcolsRange),
        (16, RuleId::AllocNcolsRange),
    ] {
        let p = with_alloc(&|op| {
            if let Op::Alloc { ncols, .. } = op {
                ncols.value = n;
            }
        });
        add(format!("alloc-ncols-{n}"), p, Some(r));
    }
    let mut p = roundtrip(Target::Sm100a, v86);
    if let Stmt::Tc(Op::Dealloc { ncols, .. }) = &mut p.warps[0][6] {
        ncols.value = 48;
    }
    add("dealloc-ncols-48".into(), p, Some(RuleId::AllocNcolsPow2));
    let p = with_alloc(&|op| {
        if let Op::Alloc { ncols, .. } = op {
            ncols.form = NColsForm::Reg;
        }
    });
    add("alloc-ncols-reg".into(), p, None);
    let p = with_alloc(&|op| {
        if let Op::Alloc { form, .. } = op {
            form.space = None;
        }
    });
    add("alloc-generic-dst".into(), p, None);
    for (name, space) in [
        ("cluster", StateSpace::SharedCluster),
        ("shared", StateSpace::Shared),
        ("global", StateSpace::Global),
    ] {
        let p = with_alloc(&|op| {
            if let Op::Alloc { form, .. } = op {
                form.space = Some(space);
            }
        });
        add(
            format!("alloc-space-{name}"),
            p,
            Some(RuleId::AllocDstStatespace),
        );
    }
    let p = with_alloc(&|op| {
        if let Op::Alloc { form, .. } = op {
            form.ty = Ty::B64;
        }
    });
    add("alloc-type-b64".into(), p, Some(RuleId::AllocDstStatespace));
    for (name, sync, aligned) in [("nosync", false, true), ("noaligned", true, false)] {
        let p = with_alloc(&|op| {
            if let Op::Alloc { form, .. } = op {
                form.sync = sync;
                form.aligned = aligned;
            }
        });
        add(format!("alloc-{name}"), p, Some(RuleId::GenSyncQual));
    }
    let mut p = roundtrip(Target::Sm100a, v86);
    if let Stmt::Tc(Op::Relinquish { form }) = &mut p.warps[0][7] {
        form.aligned = false;
    }
    add("relinquish-noaligned".into(), p, Some(RuleId::GenSyncQual));
    let p = with_alloc(&|op| {
        if let Op::Alloc { form, .. } = op {
            form.exclusive = true;
        }
    });
    add("alloc-exclusive-8.6".into(), p, Some(RuleId::GenPtxver));

    // cta_group uniformity (GEN-CTAGROUP-UNIFORM), including unreached code and functions.
    let mut p = roundtrip(Target::Sm100a, v86);
    p.warps[0].push(Stmt::If {
        cond: Cond::CtaRank(7),
        then: vec![samples::relinquish(CtaGroup::Two)],
        els: vec![],
    });
    add(
        "ctagroup-mixed-unreached".into(),
        p,
        Some(RuleId::GenCtagroupUniform),
    );
    let mut p = roundtrip(Target::Sm100a, v86);
    p.funcs.push(Func {
        body: vec![samples::relinquish(CtaGroup::Two)],
    });
    p.warps[0].push(Stmt::Call(0));
    add(
        "ctagroup-mixed-in-func".into(),
        p,
        Some(RuleId::GenCtagroupUniform),
    );
    let mut p = roundtrip(Target::Sm100a, v86);
    p.funcs.push(Func {
        body: vec![samples::relinquish(CtaGroup::One)],
    });
    p.warps[0].push(Stmt::Call(0));
    add("ctagroup-same-in-func".into(), p, None);
    // ::2 with a declared one-CTA cluster (GEN-PEER-EXISTS) and with a declared pair.
    let pair = |declare: bool, size: u8| {
        let cg = CtaGroup::Two;
        Program {
            launch: Launch {
                cluster_size: size,
                declare_cluster: declare,
                ..samples::launch(1)
            },
            smem: Smem {
                slots: 1,
                mbarriers: 0,
                regions: vec![],
            },
            warps: vec![vec![
                samples::alloc(cg, 0, 32),
                samples::dealloc(cg, 0, 32),
                samples::relinquish(cg),
            ]],
            funcs: vec![],
        }
    };
    add("pair-declared-2".into(), pair(true, 2), None);
    add(
        "pair-declared-1".into(),
        pair(true, 1),
        Some(RuleId::GenPeerExists),
    );

    // ld / st shapes, .num and vectors.
    let shapes = [
        LdStShape::S32x32b,
        LdStShape::S16x64b,
        LdStShape::S16x128b,
        LdStShape::S16x256b,
        LdStShape::S16x32bx2,
    ];
    for shape in shapes {
        for num in [Num::X1, Num::X4, Num::X64, Num::X128] {
            let split = (shape == LdStShape::S16x32bx2).then_some(16);
            let n = vec_len(shape, num);
            let nregs = n.unwrap_or(128);
            let breaks = n.is_none().then_some(RuleId::LdstNumNa);
            let p = wrap(
                Target::Sm100a,
                v86,
                vec![
                    ld_op(ld_form(shape, num), split, nregs),
                    samples::wait(WaitOp::Ld),
                ],
            );
            add(format!("ld{}{}", shape.as_str(), num.as_str()), p, breaks);
        }
    }
    let st_form = |shape, num| StForm {
        sync: true,
        aligned: true,
        shape,
        num,
        pack: None,
        ty: Ty::B32,
    };
    for shape in shapes {
        let split = (shape == LdStShape::S16x32bx2).then_some(16);
        let nregs = vec_len(shape, Num::X2).unwrap();
        let p = wrap(
            Target::Sm100a,
            v86,
            vec![
                st_op(st_form(shape, Num::X2), split, nregs),
                samples::wait(WaitOp::St),
            ],
        );
        add(format!("st{}.x2", shape.as_str()), p, None);
    }
    let ldp = |f: LdForm, split, nregs| {
        wrap(
            Target::Sm100a,
            v86,
            vec![ld_op(f, split, nregs), samples::wait(WaitOp::Ld)],
        )
    };
    let base = ld_form(LdStShape::S32x32b, Num::X4);
    add(
        "ld-veclen-3".into(),
        ldp(base, None, 3),
        Some(RuleId::LdstVecLen),
    );
    add(
        "ld-veclen-8".into(),
        ldp(base, None, 8),
        Some(RuleId::LdstVecLen),
    );
    add(
        "ld-split-on-32x32b".into(),
        ldp(base, Some(16), 4),
        Some(RuleId::LdstSplitoff),
    );
    add(
        "ld-16x32bx2-nosplit".into(),
        ldp(ld_form(LdStShape::S16x32bx2, Num::X4), None, 4),
        Some(RuleId::LdstSplitoff),
    );
    add(
        "ld-type-u32".into(),
        ldp(
            LdForm {
                ty: Ty::U32,
                ..base
            },
            None,
            4,
        ),
        Some(RuleId::LdstType),
    );
    add(
        "ld-pack".into(),
        ldp(
            LdForm {
                pack: Some(Pack::Pack16b),
                ..base
            },
            None,
            4,
        ),
        None,
    );
    add(
        "ld-unpack".into(),
        ldp(
            LdForm {
                pack: Some(Pack::Unpack16b),
                ..base
            },
            None,
            4,
        ),
        Some(RuleId::StUnpackOnly),
    );
    add(
        "ld-nosync".into(),
        ldp(
            LdForm {
                sync: false,
                ..base
            },
            None,
            4,
        ),
        Some(RuleId::GenSyncQual),
    );
    let stp = |f: StForm, split, nregs| {
        wrap(
            Target::Sm100a,
            v86,
            vec![st_op(f, split, nregs), samples::wait(WaitOp::St)],
        )
    };
    let sbase = st_form(LdStShape::S32x32b, Num::X4);
    add(
        "st-unpack".into(),
        stp(
            StForm {
                pack: Some(Pack::Unpack16b),
                ..sbase
            },
            None,
            4,
        ),
        None,
    );
    add(
        "st-pack".into(),
        stp(
            StForm {
                pack: Some(Pack::Pack16b),
                ..sbase
            },
            None,
            4,
        ),
        Some(RuleId::LdPackOnly),
    );
    add(
        "st-veclen-2".into(),
        stp(sbase, None, 2),
        Some(RuleId::LdstVecLen),
    );
    add(
        "st-type-b64".into(),
        stp(
            StForm {
                ty: Ty::B64,
                ..sbase
            },
            None,
            4,
        ),
        Some(RuleId::LdstType),
    );
    add(
        "st-16x128b.x128".into(),
        stp(st_form(LdStShape::S16x128b, Num::X128), None, 128),
        Some(RuleId::LdstNumNa),
    );
    // LDST-SHAPE and LDST-NUM: spellings the spec does not list (§2.6).
    add(
        "st-32x64b.x1".into(),
        stp(st_form(LdStShape::S32x64b, Num::X1), None, 2),
        Some(RuleId::LdstShape),
    );
    add(
        "st-32x32b.x256".into(),
        stp(st_form(LdStShape::S32x32b, Num::X256), None, 128),
        Some(RuleId::LdstNum),
    );
    add(
        "st-noaligned".into(),
        stp(
            StForm {
                aligned: false,
                ..sbase
            },
            None,
            4,
        ),
        Some(RuleId::GenSyncQual),
    );

    // ld.red (sm_103a, PTX 8.8).
    let red = LdForm {
        red: true,
        red_op: Some(RedOp::Max),
        ty: Ty::F32,
        num: Num::X2,
        ..ld_form(LdStShape::S32x32b, Num::X2)
    };
    let redp = |t: Target, f: LdForm, split| {
        let n = vec_len(f.shape, f.num).unwrap_or(2);
        wrap(t, v88, vec![ld_op(f, split, n), samples::wait(WaitOp::Ld)])
    };
    add("ldred-sm103a".into(), redp(Target::Sm103a, red, None), None);
    add("ldred-sm103f".into(), redp(Target::Sm103f, red, None), None);
    add(
        "ldred-sm100a".into(),
        redp(Target::Sm100a, red, None),
        Some(RuleId::LdRedTarget),
    );
    add(
        "ldred-sm100f".into(),
        redp(Target::Sm100f, red, None),
        Some(RuleId::LdRedTarget),
    );
    add(
        "ldred-x1".into(),
        redp(
            Target::Sm103a,
            LdForm {
                num: Num::X1,
                ..red
            },
            None,
        ),
        Some(RuleId::LdRedNum),
    );
    add(
        "ldred-16x64b".into(),
        redp(
            Target::Sm103a,
            LdForm {
                shape: LdStShape::S16x64b,
                ..red
            },
            None,
        ),
        Some(RuleId::LdRedShape),
    );
    add(
        "ldred-16x32bx2".into(),
        redp(
            Target::Sm103a,
            LdForm {
                shape: LdStShape::S16x32bx2,
                ty: Ty::S32,
                red_op: Some(RedOp::Min),
                ..red
            },
            Some(8),
        ),
        None,
    );
    add(
        "ldred-abs-nan-f32".into(),
        redp(
            Target::Sm103a,
            LdForm {
                abs: true,
                nan: true,
                ..red
            },
            None,
        ),
        None,
    );
    add(
        "ldred-u32".into(),
        redp(Target::Sm103a, LdForm { ty: Ty::U32, ..red }, None),
        None,
    );
    add(
        "ldred-abs-u32".into(),
        redp(
            Target::Sm103a,
            LdForm {
                ty: Ty::U32,
                abs: true,
                ..red
            },
            None,
        ),
        Some(RuleId::LdRedType),
    );
    add(
        "ldred-b32".into(),
        redp(Target::Sm103a, LdForm { ty: Ty::B32, ..red }, None),
        Some(RuleId::LdRedType),
    );
    add(
        "ldred-noop".into(),
        redp(
            Target::Sm103a,
            LdForm {
                red_op: None,
                ..red
            },
            None,
        ),
        Some(RuleId::LdRedType),
    );
    add(
        "ldred-pack".into(),
        redp(
            Target::Sm103a,
            LdForm {
                pack: Some(Pack::Pack16b),
                ..red
            },
            None,
        ),
        Some(RuleId::LdRedType),
    );
    add(
        "ldred-v8.7".into(),
        {
            let mut p = redp(Target::Sm103a, red, None);
            p.launch.ptx_version = v87;
            p
        },
        Some(RuleId::GenPtxver),
    );

    // wait forms.
    let mut p = roundtrip(Target::Sm100a, v86);
    if let Stmt::Tc(Op::Wait { form }) = &mut p.warps[0][3] {
        form.cta_group = Some(CtaGroup::One);
    }
    add("wait-ctagroup".into(), p, Some(RuleId::WaitOps));
    let mut p = roundtrip(Target::Sm100a, v86);
    if let Stmt::Tc(Op::Wait { form }) = &mut p.warps[0][5] {
        form.aligned = false;
    }
    add("wait-noaligned".into(), p, Some(RuleId::GenSyncQual));

    // cp shapes, multicast and decompression.
    use CpMulticast::*;
    let cps = [
        (CpShape::S128x256b, None, None),
        (CpShape::S4x256b, None, None),
        (CpShape::S128x128b, None, None),
        (CpShape::S64x128b, Some(Warpx2_02_13), None),
        (CpShape::S64x128b, Some(Warpx2_01_23), None),
        (CpShape::S32x128b, Some(Warpx4), None),
        (CpShape::S64x128b, None, Some(RuleId::CpMcastReq)),
        (CpShape::S64x128b, Some(Warpx4), Some(RuleId::CpMcastReq)),
        (CpShape::S32x128b, None, Some(RuleId::CpMcastReq)),
        (
            CpShape::S32x128b,
            Some(Warpx2_01_23),
            Some(RuleId::CpMcastReq),
        ),
        (CpShape::S128x256b, Some(Warpx4), Some(RuleId::CpMcastOther)),
        (
            CpShape::S128x128b,
            Some(Warpx2_02_13),
            Some(RuleId::CpMcastOther),
        ),
        // CP-SHAPE: a shape the spec does not list.
        (CpShape::S64x256b, None, Some(RuleId::CpShape)),
    ];
    let cp_prog = |op: Op| {
        wrap(
            Target::Sm100a,
            v86,
            vec![
                Stmt::Fill {
                    region: 0,
                    seed: 3,
                    elem: FillElem::Word,
                },
                Stmt::FenceProxyAsync,
                Stmt::MbarInit { bar: 0, count: 1 },
                elect(vec![Stmt::Tc(op), commit()]),
                Stmt::MbarWait {
                    bar: 0,
                    parity: false,
                    scope: Scope::Cta,
                    max_tries: 1 << 20,
                },
                samples::fence(FenceKind::AfterThreadSync),
            ],
        )
    };
    for (shape, mc, r) in cps {
        let name = format!("cp{}{}", shape.as_str(), mc.map_or("", |m| m.as_str()));
        add(name, cp_prog(cp(shape, mc)), r);
    }
    for (d, s, r) in [
        (Some(CpDstFmt::B8x16), Some(CpSrcFmt::B6x16P32), None),
        (Some(CpDstFmt::B8x16), Some(CpSrcFmt::B4x16P64), None),
        (Some(CpDstFmt::B8x16), None, Some(RuleId::CpDecompFmt)),
        (None, Some(CpSrcFmt::B4x16P64), Some(RuleId::CpDecompFmt)),
    ] {
        let mut op = cp(CpShape::S128x256b, None);
        if let Op::Cp { form, .. } = &mut op {
            form.dst_fmt = d;
            form.src_fmt = s;
        }
        let name = format!(
            "cp-decomp-{}{}",
            d.map_or("", |x| x.as_str()),
            s.map_or("", |x| x.as_str())
        );
        add(name, cp_prog(op), r);
    }

    // shift targets.
    for (t, v, r) in [
        (Target::Sm100a, v86, None),
        (Target::Sm103a, v88, None),
        (Target::Sm110a, v90, None),
        (Target::Sm100f, v88, Some(RuleId::ShiftTarget)),
        (Target::Sm103f, v88, Some(RuleId::ShiftTarget)),
        (Target::Sm110f, v90, Some(RuleId::ShiftTarget)),
    ] {
        for down_first in [false, true] {
            let op = Op::Shift {
                form: ShiftForm {
                    cta_group: CG,
                    down_first,
                },
                taddr: TmemRef::slot(0, 0, 0),
            };
            let p = wrap(
                t,
                v,
                vec![
                    Stmt::MbarInit { bar: 0, count: 1 },
                    elect(vec![Stmt::Tc(op), commit()]),
                    Stmt::MbarWait {
                        bar: 0,
                        parity: false,
                        scope: Scope::Cta,
                        max_tries: 1 << 20,
                    },
                ],
            );
            add(
                format!(
                    "shift-{t}-{}",
                    if down_first { "down-first" } else { "syntax" }
                ),
                p,
                r,
            );
        }
    }

    // commit forms.
    let commit_with = |f: &dyn Fn(&mut CommitForm, &mut Option<u16>)| {
        let mut c = commit();
        if let Stmt::Tc(Op::Commit { form, cta_mask, .. }) = &mut c {
            f(form, cta_mask);
        }
        let op = cp(CpShape::S128x256b, None);
        wrap(
            Target::Sm100a,
            v86,
            vec![
                Stmt::MbarInit { bar: 0, count: 1 },
                elect(vec![Stmt::Tc(op), c]),
                Stmt::MbarWait {
                    bar: 0,
                    parity: false,
                    scope: Scope::Cta,
                    max_tries: 1 << 20,
                },
            ],
        )
    };
    add(
        "commit-generic".into(),
        commit_with(&|f, _| f.shared_cluster = false),
        None,
    );
    add(
        "commit-multicast".into(),
        commit_with(&|f, m| {
            f.multicast = true;
            *m = Some(1);
        }),
        None,
    );
    add(
        "commit-multicast-nomask".into(),
        commit_with(&|f, _| f.multicast = true),
        Some(RuleId::CommitMcastMask),
    );
    add(
        "commit-mask-nomulticast".into(),
        commit_with(&|_, m| *m = Some(1)),
        Some(RuleId::CommitMcastMask),
    );
    add(
        "commit-no-arrive-one".into(),
        commit_with(&|f, _| f.arrive_one = false),
        Some(RuleId::CommitCompletion),
    );
    add(
        "commit-b32".into(),
        commit_with(&|f, _| f.ty = Ty::B32),
        Some(RuleId::CommitCompletion),
    );

    // mma kinds and targets.
    for (kind, t, v, r) in [
        (MmaKind::F16, Target::Sm100a, v86, None),
        (MmaKind::Tf32, Target::Sm100a, v86, None),
        (MmaKind::F8f6f4, Target::Sm100a, v86, None),
        (MmaKind::I8, Target::Sm100a, v86, None),
        (MmaKind::F16, Target::Sm100f, v88, None),
        (MmaKind::F16, Target::Sm103a, v88, None),
        (MmaKind::F16, Target::Sm110a, v90, None),
        (MmaKind::I8, Target::Sm110a, v90, None),
        (MmaKind::I8, Target::Sm100f, v88, Some(RuleId::MmaI8Target)),
        (MmaKind::I8, Target::Sm103a, v88, Some(RuleId::MmaI8Target)),
        (MmaKind::I8, Target::Sm110f, v90, Some(RuleId::MmaI8Target)),
    ] {
        add(
            format!("mma{}-{t}", kind.as_str()),
            mma_prog(t, v, mma(kind, false)),
            r,
        );
    }
    let mp = |f: &dyn Fn(&mut Mma)| {
        let mut m = mma(MmaKind::F16, true);
        f(&mut m);
        mma_prog(Target::Sm100a, v86, m)
    };
    add(
        "mma-scale-d-3".into(),
        mp(&|m| m.scale_input_d = Some(3)),
        None,
    );
    add(
        "mma-scale-d-16".into(),
        mp(&|m| m.scale_input_d = Some(16)),
        Some(RuleId::MmaScaleDRange),
    );
    add(
        "mma-scale-d-f8f6f4".into(),
        mp(&|m| {
            m.form.kind = MmaKind::F8f6f4;
            m.scale_input_d = Some(1);
        }),
        Some(RuleId::MmaScaleDKind),
    );
    add(
        "mma-dol-4".into(),
        mp(&|m| m.disable_output_lane = Some(vec![0; 4])),
        None,
    );
    add(
        "mma-dol-8-cta1".into(),
        mp(&|m| m.disable_output_lane = Some(vec![0; 8])),
        Some(RuleId::MmaDolSize),
    );
    add("mma-ws".into(), mp(&|m| m.form.ws = true), None);
    add(
        "mma-ws-zcm".into(),
        mp(&|m| {
            m.form.ws = true;
            m.zero_col_mask = Some(0);
        }),
        None,
    );
    add(
        "mma-zcm-nows".into(),
        mp(&|m| m.zero_col_mask = Some(0)),
        Some(RuleId::MmaZcmWsOnly),
    );
    add(
        "mma-ws-collector-b1".into(),
        mp(&|m| {
            m.form.ws = true;
            m.form.collector = Some(Collector {
                buf: CollectorBuf::B1,
                op: CollectorOp::Fill,
            });
        }),
        None,
    );
    add(
        "mma-ws-collector-a".into(),
        mp(&|m| {
            m.form.ws = true;
            m.form.collector = Some(Collector {
                buf: CollectorBuf::A,
                op: CollectorOp::Fill,
            });
        }),
        Some(RuleId::MmaCollectorBuf),
    );
    add(
        "mma-collector-b0".into(),
        mp(&|m| {
            m.form.collector = Some(Collector {
                buf: CollectorBuf::B0,
                op: CollectorOp::Discard,
            });
        }),
        Some(RuleId::MmaCollectorBuf),
    );
    add(
        "mma-collector-a-lastuse".into(),
        mp(&|m| {
            m.form.collector = Some(Collector {
                buf: CollectorBuf::A,
                op: CollectorOp::Lastuse,
            });
        }),
        None,
    );
    add(
        "mma-ashift-atmem".into(),
        mp(&|m| {
            m.form.ashift = true;
            m.a = MmaA::Tmem(TmemRef::slot(0, 0, 64));
        }),
        None,
    );
    add(
        "mma-ashift-desc".into(),
        mp(&|m| m.form.ashift = true),
        Some(RuleId::MmaAshiftAtmem),
    );
    add(
        "mma-ashift-fill".into(),
        mp(&|m| {
            m.form.ashift = true;
            m.a = MmaA::Tmem(TmemRef::slot(0, 0, 64));
            m.form.collector = Some(Collector {
                buf: CollectorBuf::A,
                op: CollectorOp::Fill,
            });
        }),
        Some(RuleId::MmaAshiftCollector),
    );
    add(
        "mma-f16-block-scale".into(),
        mp(&|m| {
            m.form.block_scale = true;
            m.scale_a = Some(TmemRef::slot(0, 0, 96));
            m.scale_b = Some(TmemRef::slot(0, 0, 100));
        }),
        Some(RuleId::MmaBsKinds),
    );
    add(
        "mma-sp".into(),
        mp(&|m| {
            m.form.sp = true;
            m.sp_meta = Some(TmemRef::slot(0, 0, 112));
        }),
        None,
    );
    let bs = |kind: MmaKind, sv: Option<ScaleVec>, t: Target, v: PtxVersion, ws: bool| {
        let mut m = mma(kind, false);
        m.form.block_scale = true;
        m.form.scale_vec = sv;
        m.form.ws = ws;
        m.scale_a = Some(TmemRef::slot(0, 0, 96));
        m.scale_b = Some(TmemRef::slot(0, 0, 100));
        mma_prog(t, v, m)
    };
    for (kind, sv, t, v, ws, r) in [
        (
            MmaKind::Mxf8f6f4,
            Some(ScaleVec::X1),
            Target::Sm100a,
            v86,
            false,
            None,
        ),
        (
            MmaKind::Mxf8f6f4,
            Some(ScaleVec::Block32),
            Target::Sm100a,
            v88,
            false,
            None,
        ),
        (
            MmaKind::Mxf8f6f4,
            Some(ScaleVec::X2),
            Target::Sm100a,
            v86,
            false,
            Some(RuleId::MmaBsVec),
        ),
        (MmaKind::Mxf4, None, Target::Sm100a, v86, false, None),
        (
            MmaKind::Mxf4,
            Some(ScaleVec::X2),
            Target::Sm100a,
            v86,
            false,
            None,
        ),
        (
            MmaKind::Mxf4,
            Some(ScaleVec::X4),
            Target::Sm100a,
            v86,
            false,
            Some(RuleId::MmaBsVec),
        ),
        (
            MmaKind::Mxf4nvf4,
            Some(ScaleVec::X4),
            Target::Sm100a,
            v87,
            false,
            None,
        ),
        (
            MmaKind::Mxf4nvf4,
            Some(ScaleVec::Block16),
            Target::Sm100a,
            v88,
            false,
            None,
        ),
        (
            MmaKind::Mxf4nvf4,
            None,
            Target::Sm100a,
            v87,
            false,
            Some(RuleId::MmaBsNvf4Explicit),
        ),
        (
            MmaKind::Mxf4nvf4,
            Some(ScaleVec::X4),
            Target::Sm100a,
            v86,
            false,
            Some(RuleId::GenPtxver),
        ),
        (
            MmaKind::Mxf4nvf4,
            Some(ScaleVec::Block16),
            Target::Sm100a,
            v87,
            false,
            Some(RuleId::GenPtxver),
        ),
        (
            MmaKind::Mxf8f6f4,
            Some(ScaleVec::X1),
            Target::Sm100f,
            v88,
            false,
            Some(RuleId::MmaBsVecTarget),
        ),
        (
            MmaKind::Mxf8f6f4,
            Some(ScaleVec::Block32),
            Target::Sm100f,
            v88,
            false,
            None,
        ),
        (
            MmaKind::Mxf8f6f4,
            Some(ScaleVec::X1),
            Target::Sm103a,
            v88,
            false,
            Some(RuleId::MmaBsVecTarget),
        ),
        (
            MmaKind::Mxf4,
            Some(ScaleVec::Block32),
            Target::Sm110f,
            v90,
            false,
            None,
        ),
        (
            MmaKind::Mxf8f6f4,
            Some(ScaleVec::Block32),
            Target::Sm100a,
            v88,
            true,
            Some(RuleId::MmaWsKinds),
        ),
    ] {
        let name = format!(
            "mma{}{}-{t}-{v}{}",
            kind.as_str(),
            sv.map_or("", |s| s.as_str()),
            if ws { "-ws" } else { "" }
        );
        add(name, bs(kind, sv, t, v, ws), r);
    }
    let mut m = mma(MmaKind::F16, false);
    m.form.ws = true;
    m.form.cta_group = CtaGroup::Two;
    let mut p = mma_prog(Target::Sm100a, v86, m);
    // A ::2 ws probe must not also break uniformity: make every op ::2 in a cluster of 2.
    set_cta_group(&mut p, CtaGroup::Two);
    p.launch.cluster_size = 2;
    add("mma-ws-cta2".into(), p, Some(RuleId::MmaWsCta1));
    let mut p = mma_prog(Target::Sm100a, v86, mma(MmaKind::F16, false));
    set_cta_group(&mut p, CtaGroup::Two);
    p.launch.cluster_size = 2;
    add("mma-cta2".into(), p, None);
    // Sparse mxf4 targets (MMA-SP-MXF4-TARGET).
    for (t, v, r) in [
        (Target::Sm100a, v86, None),
        (Target::Sm100f, v88, Some(RuleId::MmaSpMxf4Target)),
    ] {
        let mut m = mma(MmaKind::Mxf4, false);
        m.form.block_scale = true;
        m.form.sp = true;
        m.sp_meta = Some(TmemRef::slot(0, 0, 112));
        m.scale_a = Some(TmemRef::slot(0, 0, 96));
        m.scale_b = Some(TmemRef::slot(0, 0, 100));
        m.form.scale_vec = if t == Target::Sm100a {
            Some(ScaleVec::X2)
        } else {
            Some(ScaleVec::Block32)
        };
        add(format!("mma.sp.mxf4-{t}"), mma_prog(t, v, m), r);
    }
    for (name, p) in run_time_mma(v87, v88) {
        add(name, p, None);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_probe_is_flagged_with_exactly_its_rule() {
        let ps = probes();
        assert!(ps.len() >= 100, "{} probes", ps.len());
        let mut names = BTreeSet::new();
        let mut failures = Vec::new();
        for p in &ps {
            assert!(names.insert(p.name.clone()), "duplicate probe {}", p.name);
            let got: BTreeSet<RuleId> = crate::check(&p.program).iter().map(|v| v.rule).collect();
            let want: BTreeSet<RuleId> = p.breaks.into_iter().collect();
            if got != want {
                failures.push(format!("{}: want {want:?}, got {got:?}", p.name));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
