//! The `cuda-emu` lowering must be PTX that the real assembler accepts for sm_90, for every
//! emulated instruction form. Needs a ptxas (the project's `.tools/cuda`, `TCGEN05_PTXAS` or
//! `PATH`: `tcgen05_drivers::ptxas::installed`); no GPU. Without one at build time the tests
//! are ignored (`cfg(tcgen05_no_ptxas)`, set by `drivers/build.rs`).

use tcgen05_drivers::cuda::emu::{self, EmuConfig};
use tcgen05_ir::form::*;
use tcgen05_ir::*;

#[path = "common/emu_mma.rs"]
mod emu_mma;

/// The newest installed ptxas (every one assembles sm_90).
fn ptxas() -> std::path::PathBuf {
    tcgen05_drivers::ptxas::installed()
        .pop()
        .expect(
            "no ptxas found, though the build found one: run scripts/setup-ptxas, or `touch \
             drivers/build.rs` so the tests that need ptxas are ignored",
        )
        .path
}

/// Runs `cmd`; its error output (with `ptx` numbered) where it fails.
fn run(cmd: &mut std::process::Command, ptx: &str) -> Result<(), String> {
    let out = cmd.output().expect("run the tool");
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{:?}: {}\n{}",
            cmd,
            String::from_utf8_lossy(&out.stderr),
            numbered(ptx)
        ))
    }
}

/// Assembles `ptx` for sm_90 as the worker compiles it: a relocatable object (`-c`), linked
/// with the routines it calls (`emu::routines_module`, assembled the same way) by the nvlink
/// next to the ptxas where there is one; returns the tools' error output on failure.
fn assemble(ptx: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let ptxas = ptxas();
    let mut objects = Vec::new();
    for (name, text) in [("m", ptx), ("routines", emu::routines_module())] {
        let f = dir.path().join(format!("{name}.ptx"));
        std::fs::write(&f, text).expect("write the module");
        let o = dir.path().join(format!("{name}.o"));
        run(
            std::process::Command::new(&ptxas)
                .args(["-c", "-arch=sm_90", "-o"])
                .arg(&o)
                .arg(&f),
            text,
        )?;
        objects.push(o);
    }
    let nvlink = ptxas.with_file_name("nvlink");
    if nvlink.is_file() {
        run(
            std::process::Command::new(nvlink)
                .args(["-arch=sm_90", "-o"])
                .arg(dir.path().join("m.cubin"))
                .args(&objects),
            ptx,
        )?;
    }
    Ok(())
}

fn numbered(s: &str) -> String {
    s.lines()
        .enumerate()
        .map(|(i, l)| format!("{:4} {l}\n", i + 1))
        .collect()
}

fn ld(shape: LdStShape, num: Num, pack: bool, col: u16) -> Stmt {
    Stmt::Tc(Op::Ld {
        form: LdForm {
            red: false,
            sync: true,
            aligned: true,
            shape,
            num,
            pack: pack.then_some(Pack::Pack16b),
            red_op: None,
            abs: false,
            nan: false,
            ty: Ty::B32,
        },
        taddr: TmemRef::slot(0, 0, col),
        split: (shape == LdStShape::S16x32bx2).then_some(8),
        nregs: vec_len(shape, num).unwrap(),
    })
}

fn st(shape: LdStShape, num: Num, unpack: bool, col: u16) -> Stmt {
    Stmt::Tc(Op::St {
        form: StForm {
            sync: true,
            aligned: true,
            shape,
            num,
            pack: unpack.then_some(Pack::Unpack16b),
            ty: Ty::B32,
        },
        taddr: TmemRef::slot(0, 0, col),
        split: (shape == LdStShape::S16x32bx2).then_some(8),
        nregs: vec_len(shape, num).unwrap(),
        seed: 42,
    })
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn every_emulated_form_assembles_for_sm90() {
    // One program per ::1 feature group, and a 2-CTA cluster program for the ::2 forms.
    let cg = CtaGroup::One;
    let mut body = vec![samples::alloc(cg, 0, 64), Stmt::ObserveAddr { slot: 0 }];
    for shape in LdStShape::LEGAL {
        body.push(st(*shape, Num::X2, false, 0));
        body.push(samples::wait(WaitOp::St));
        body.push(ld(*shape, Num::X2, false, 0));
        body.push(samples::wait(WaitOp::Ld));
    }
    body.push(st(LdStShape::S32x32b, Num::X4, true, 8));
    body.push(ld(LdStShape::S32x32b, Num::X4, true, 8));
    body.push(Stmt::Tc(Op::Ld {
        form: LdForm {
            red: true,
            sync: true,
            aligned: true,
            shape: LdStShape::S32x32b,
            num: Num::X4,
            pack: None,
            red_op: Some(RedOp::Max),
            abs: true,
            nan: true,
            ty: Ty::F32,
        },
        taddr: TmemRef::slot(0, 0, 0),
        split: None,
        nregs: 4,
    }));
    body.push(samples::wait(WaitOp::Ld));
    body.push(samples::fence(FenceKind::BeforeThreadSync));
    body.push(Stmt::MbarInit { bar: 0, count: 1 });
    body.push(Stmt::If {
        cond: Cond::ElectOne,
        then: vec![
            Stmt::Tc(Op::Shift {
                form: ShiftForm {
                    cta_group: cg,
                    down_first: false,
                },
                taddr: TmemRef::slot(0, 0, 0),
            }),
            Stmt::Tc(Op::Commit {
                form: CommitForm {
                    cta_group: cg,
                    arrive_one: true,
                    shared_cluster: false,
                    multicast: false,
                    ty: Ty::B64,
                },
                mbar: 0,
                addr: MbarAddr::Shared,
                cta_mask: None,
            }),
        ],
        els: vec![],
    });
    body.push(Stmt::MbarWait {
        bar: 0,
        parity: false,
        scope: Scope::Cta,
        max_tries: 1000,
    });
    body.push(Stmt::Checkpoint(7));
    body.push(Stmt::Loop {
        count: 2,
        body: vec![Stmt::Spin(3), Stmt::Call(0)],
    });
    body.push(samples::dealloc(cg, 0, 64));
    body.push(samples::relinquish(cg));
    let p = Program {
        launch: samples::launch(1),
        smem: Smem {
            slots: 1,
            mbarriers: 1,
            regions: vec![1024],
        },
        warps: vec![body],
        funcs: vec![Func {
            body: vec![
                Stmt::Fill {
                    region: 0,
                    seed: 1,
                    elem: FillElem::F16Small,
                },
                Stmt::If {
                    cond: Cond::LaneEq(3),
                    then: vec![Stmt::Exit],
                    els: vec![],
                },
            ],
        }],
    };
    let low = emu::lower(&p, &EmuConfig::default()).unwrap();
    assemble(&low.ptx).unwrap();

    // ::2 collectives in a cluster of two, with a multicast commit.
    let cg = CtaGroup::Two;
    let mut launch = samples::launch(1);
    launch.cluster_size = 2;
    launch.declare_cluster = true;
    let body = vec![
        samples::alloc(cg, 0, 32),
        Stmt::Tc(Op::Shift {
            form: ShiftForm {
                cta_group: cg,
                down_first: false,
            },
            taddr: TmemRef::slot(0, 0, 0),
        }),
        Stmt::Tc(Op::Commit {
            form: CommitForm {
                cta_group: cg,
                arrive_one: true,
                shared_cluster: true,
                multicast: true,
                ty: Ty::B64,
            },
            mbar: 0,
            addr: MbarAddr::Shared,
            cta_mask: Some(0b11),
        }),
        Stmt::MbarArrive {
            bar: 0,
            cta: Some(1),
        },
        Stmt::ClusterArrive { relaxed: false },
        Stmt::ClusterWait,
        samples::dealloc(cg, 0, 32),
        samples::relinquish(cg),
    ];
    let p = Program {
        launch,
        smem: Smem {
            slots: 1,
            mbarriers: 1,
            regions: vec![],
        },
        warps: vec![body],
        funcs: vec![],
    };
    let low = emu::lower(&p, &EmuConfig::default()).unwrap();
    assemble(&low.ptx).unwrap();
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn the_assembler_check_can_fail() {
    // Guard against a vacuous pass: broken PTX must be reported.
    let p = samples::single_warp_roundtrip();
    let low = emu::lower(&p, &EmuConfig::default()).unwrap();
    let err = assemble(&low.ptx.replace("bar.warp.sync", "bar.warp.snyc"))
        .expect_err("ptxas must reject a misspelt instruction");
    // Rejected by ptxas for the misspelling, not for anything else.
    assert!(err.contains("snyc"), "{err}");
}

#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn generated_programs_lower_and_assemble() {
    // Every valid program the builder makes (default config: mma, cp, shift, ::2 pairs
    // included) must lower, or be refused as "not emulated" (a static violation), and the
    // lowering must assemble for sm_90.
    let (mut with_mma, mut with_cp, mut with_tmem_a, mut lowered) = (0, 0, 0, 0);
    let (mut pair_mma, mut pair_cp, mut decomp, mut f8) = (0, 0, 0, 0);
    for seed in 0..120u64 {
        let p = tcgen05_generators::valid_program(&tcgen05_generators::Config::default(), seed);
        let low = match emu::lower(&p, &EmuConfig::default()) {
            Ok(low) => low,
            Err(e) if e.0.contains("not emulated") => continue,
            Err(e) => panic!("seed {seed}: {e}"),
        };
        assemble(&low.ptx).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        lowered += 1;
        with_mma += usize::from(p.ops().iter().any(|o| matches!(o, Op::Mma(_))));
        with_cp += usize::from(p.ops().iter().any(|o| matches!(o, Op::Cp { .. })));
        with_tmem_a += usize::from(
            p.ops()
                .iter()
                .any(|o| matches!(o, Op::Mma(m) if matches!(m.a, MmaA::Tmem(_)))),
        );
        let ops = p.ops();
        let has = |f: &dyn Fn(&Op) -> bool| usize::from(ops.iter().any(|o| f(o)));
        pair_mma += has(&|o| matches!(o, Op::Mma(m) if m.form.cta_group == CtaGroup::Two));
        pair_cp += has(&|o| matches!(o, Op::Cp { form, .. } if form.cta_group == CtaGroup::Two));
        decomp += has(&|o| matches!(o, Op::Cp { form, .. } if form.src_fmt.is_some()));
        f8 += has(&|o| matches!(o, Op::Mma(m) if m.form.kind == MmaKind::F8f6f4));
    }
    eprintln!(
        "lowered: {pair_mma} with a ::2 MMA, {pair_cp} with a ::2 cp, {decomp} with a \
         decompressing cp, {f8} with an f8f6f4 MMA"
    );
    // Every MMA and cp form is lowered now (the MMA results the emulation does not compute
    // are left out of the compare, `cuda::emu::not_emulated`).
    assert!(pair_mma > 0 && pair_cp > 0 && f8 > 0);
    eprintln!(
        "{lowered} of 120 generated programs lowered, {with_cp} with a cp, {with_tmem_a} with an \
         MMA reading A from TMEM"
    );
    assert!(
        lowered >= 6,
        "only {lowered} of 120 generated programs lowered"
    );
    // The check covers the MMA and cp lowerings (the default config makes both often).
    assert!(with_mma > 0);
    assert!(with_cp > 0, "no generated program with a cp lowered");
    assert!(
        with_tmem_a > 0,
        "no generated program with an MMA reading A from TMEM lowered"
    );
}

/// Every MMA form whose D the emulation computes (each element type, f16 D, `cta_group::2`
/// M = 256, A in TMEM with and without `.ashift`, disable-output-lane, enable-input-d with a
/// scale: `emu_mma::FEATURES`) has a generated case whose D the oracle states, and its
/// lowering (the unrolled multiply-adds of that form) assembles for sm_90. The GPU test
/// `cuda_emu_mma` runs the same cases against the oracle.
#[test]
#[cfg_attr(
    tcgen05_no_ptxas,
    ignore = "no ptxas installed at build time (scripts/setup-ptxas)"
)]
fn every_computed_mma_form_lowers_and_assembles() {
    for f in emu_mma::FEATURES {
        let (seed, c, words) = emu_mma::find(f).unwrap_or_else(|| {
            panic!(
                "no valid case below seed {} with a computed {} MMA whose D the oracle states",
                emu_mma::SEEDS,
                f.name
            )
        });
        eprintln!("{}: seed {seed}, {words} MMA words stated", f.name);
        let low = emu::lower(&c.program, &EmuConfig::default())
            .unwrap_or_else(|e| panic!("{} (seed {seed}): {e}", f.name));
        assemble(&low.ptx).unwrap_or_else(|e| panic!("{} (seed {seed}): {e}", f.name));
    }
}
