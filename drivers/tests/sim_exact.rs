//! The simulator against the oracle on the forms whose values the oracle computes exactly
//!: every ld/st shape and `.num`, `.pack::16b` / `.unpack::16b`, `ld.red`, every cp
//! shape and multicast, shift, and MMA with A in TMEM (with `.ashift`). The two are
//! independent implementations of the ISA's layouts; each program is generated from a seed
//! (shapes, offsets, data), run under several schedulers, and must agree, with the oracle's
//! expectation exact on most of the observed words (so that the agreement means something).

use tcgen05_drivers::diff::{self, Verdict};
use tcgen05_drivers::report::WordCounts;
use tcgen05_drivers::sim::{Sched, SimConfig, simulate};
use tcgen05_ir::form::{LdForm, ShiftForm};
use tcgen05_ir::observe::Layout;
use tcgen05_ir::samples::{self, fence, ld_form, wait};
use tcgen05_ir::*;
use tcgen05_oracle::probes::{self, commit};

const CG: CtaGroup = CtaGroup::One;

/// A small deterministic generator (xorshift): the programs' choices.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.next() as usize % v.len()]
    }
}

/// One warp on `target`: alloc 256 columns in slot 0, an mbarrier, `body`, dealloc,
/// relinquish. PTX 8.8 (`ld.red`).
fn program(body: Vec<Stmt>, target: Target) -> Program {
    let mut code = vec![Stmt::MbarInit { bar: 0, count: 1 }];
    code.extend(body);
    let launch = Launch {
        target,
        ptx_version: PtxVersion::new(8, 8),
        ..samples::launch(1)
    };
    let smem = Smem {
        slots: 1,
        mbarriers: 1,
        regions: vec![16384, 8192],
    };
    samples::one_warp(launch, smem, 256, code)
}

const SHAPES: [LdStShape; 5] = [
    LdStShape::S32x32b,
    LdStShape::S16x64b,
    LdStShape::S16x128b,
    LdStShape::S16x256b,
    LdStShape::S16x32bx2,
];

/// A `.16x32bx2` access's upper half-warp starts 64 columns on.
const SPLIT: u32 = 64;

fn st(shape: LdStShape, num: Num, unpack: bool, lane: u16, col: u16, seed: u32) -> Stmt {
    let form = samples::st_form(shape, num, unpack);
    samples::st_at(form, TmemRef::slot(0, lane, col), SPLIT, seed)
}

fn ld(form: LdForm, lane: u16, col: u16) -> Stmt {
    samples::ld_at(form, TmemRef::slot(0, lane, col), SPLIT)
}

/// st of one shape, then lds of every shape over the same columns (some packed).
fn ldst_case(g: &mut Gen) -> Program {
    let shape = g.pick(&SHAPES);
    let num = g.pick(&[Num::X1, Num::X2, Num::X4]);
    let unpack = g.next().is_multiple_of(4);
    // The 16-lane shapes may start at lane 16 of the quarter; .32x32b only at 0.
    let lane = if shape == LdStShape::S32x32b {
        0
    } else {
        g.pick(&[0u16, 16])
    };
    let col = g.pick(&[0u16, 8, 40]);
    let mut body = vec![
        st(shape, num, unpack, lane, col, g.next()),
        wait(WaitOp::St),
    ];
    for s in SHAPES
        .into_iter()
        .filter(|s| lane == 0 || *s != LdStShape::S32x32b)
    {
        let mut f = ld_form(s, Num::X2);
        f.pack = g.next().is_multiple_of(3).then_some(Pack::Pack16b);
        body.push(ld(f, lane, col));
    }
    body.push(wait(WaitOp::Ld));
    program(body, Target::Sm100a)
}

/// st .32x32b, then ld.red of every type and qualifier.
fn red_case(g: &mut Gen) -> Program {
    // Columns 0..128: both halves of a .16x32bx2 (split 64) are written.
    let mut body = vec![
        st(LdStShape::S32x32b, Num::X128, false, 0, 0, g.next()),
        wait(WaitOp::St),
    ];
    for (ty, abs, nan) in [
        (Ty::U32, false, false),
        (Ty::S32, false, false),
        (Ty::F32, false, false),
        (Ty::F32, true, false),
        (Ty::F32, true, true),
        (Ty::F32, false, true),
    ] {
        let mut f = ld_form(g.pick(&[LdStShape::S32x32b, LdStShape::S16x32bx2]), Num::X4);
        f.red = true;
        f.red_op = Some(g.pick(&[RedOp::Min, RedOp::Max]));
        f.ty = ty;
        f.abs = abs;
        f.nan = nan;
        body.push(ld(f, 0, g.pick(&[0u16, 4])));
    }
    body.push(wait(WaitOp::Ld));
    program(body, Target::Sm103a)
}

/// One elected thread issues `ops` and a commit; the warp waits and reads 8 columns of its
/// lane quarter from column 0.
fn async_case(before: Vec<Stmt>, ops: Vec<Op>) -> Program {
    let mut body = before;
    body.extend([
        Stmt::Fill {
            region: 0,
            seed: 77,
            elem: FillElem::Word,
        },
        Stmt::Fill {
            region: 1,
            seed: 78,
            elem: FillElem::Word,
        },
        Stmt::FenceProxyAsync,
    ]);
    let mut then: Vec<Stmt> = ops.into_iter().map(Stmt::Tc).collect();
    then.push(commit());
    body.extend([
        Stmt::If {
            cond: Cond::ElectOne,
            then,
            els: vec![],
        },
        Stmt::MbarWait {
            bar: 0,
            parity: false,
            scope: Scope::Cta,
            max_tries: 1 << 20,
        },
        fence(FenceKind::AfterThreadSync),
        samples::ld(0, 0, 0, Num::X8),
        wait(WaitOp::Ld),
    ]);
    program(body, Target::Sm100a)
}

fn cp_case(g: &mut Gen) -> Program {
    async_case(vec![], vec![cp_op(g)])
}

/// A cp of every valid shape and multicast, from region 0 with a chosen LBO and SBO.
fn cp_op(g: &mut Gen) -> Op {
    let (shape, mc) = g.pick(&[
        (CpShape::S128x256b, None),
        (CpShape::S4x256b, None),
        (CpShape::S128x128b, None),
        (CpShape::S64x128b, Some(CpMulticast::Warpx2_02_13)),
        (CpShape::S64x128b, Some(CpMulticast::Warpx2_01_23)),
        (CpShape::S32x128b, Some(CpMulticast::Warpx4)),
    ]);
    let mut op = probes::cp(shape, mc);
    if let Op::Cp { src, .. } = &mut op {
        src.lbo_enc = g.pick(&[8, 16]);
        src.sbo_enc = g.pick(&[32, 64]);
    }
    op
}

fn shift_case(g: &mut Gen) -> Program {
    let shift = Op::Shift {
        form: ShiftForm {
            cta_group: CG,
            down_first: false,
        },
        taddr: TmemRef::slot(0, 0, 0),
    };
    async_case(
        vec![
            st(LdStShape::S32x32b, Num::X8, false, 0, 0, g.next()),
            wait(WaitOp::St),
        ],
        vec![shift],
    )
}

/// An i8 MMA with A in TMEM: a cp `.128x256b` puts A's 128 rows (32 bytes each) in columns
/// 64..72, a commit and mbarrier wait complete it, then the MMA (D at column 0, B in region 1);
/// warp 0 reads rows 0..32 of D.
fn mma_case(g: &mut Gen) -> Program {
    let mut m = probes::mma(MmaKind::I8, false);
    m.a = MmaA::Tmem(TmemRef::slot(0, 0, 64));
    m.form.ashift = g.next().is_multiple_of(2);
    m.b = probes::desc(1);
    let mut cp = probes::cp(CpShape::S128x256b, None);
    if let Op::Cp { taddr, .. } = &mut cp {
        *taddr = TmemRef::slot(0, 0, 64);
    }
    let elected = |op: Op| Stmt::If {
        cond: Cond::ElectOne,
        then: vec![Stmt::Tc(op), commit()],
        els: vec![],
    };
    let wait_phase = |parity: bool| Stmt::MbarWait {
        bar: 0,
        parity,
        scope: Scope::Cta,
        max_tries: 1 << 20,
    };
    program(
        vec![
            Stmt::Fill {
                region: 0,
                seed: g.next(),
                elem: FillElem::Word,
            },
            Stmt::Fill {
                region: 1,
                seed: g.next(),
                elem: FillElem::Word,
            },
            Stmt::FenceProxyAsync,
            elected(cp),
            wait_phase(false),
            fence(FenceKind::AfterThreadSync),
            elected(Op::Mma(Box::new(m))),
            wait_phase(true),
            fence(FenceKind::AfterThreadSync),
            samples::ld(0, 0, 0, Num::X8),
            wait(WaitOp::Ld),
        ],
        Target::Sm100a,
    )
}

fn check(p: &Program, min_exact: f64) -> WordCounts {
    let e = tcgen05_oracle::expect(p);
    assert!(e.violations.is_empty(), "{:?}", e.violations);
    let layout = Layout::of(p);
    let w = WordCounts::of(p, &layout, &e)
        .unwrap_or_else(|| panic!("not valid and race-free: {:?} {:#?}", e.run, e.obs));
    let share = w.exact as f64 / w.total() as f64;
    assert!(
        share >= min_exact,
        "exact share {share}: {w:?}\n{:#?}",
        e.notes
    );
    for (k, sched) in [
        Sched::RoundRobin,
        Sched::Adversarial,
        Sched::Random(Some(3)),
    ]
    .into_iter()
    .enumerate()
    {
        let o = simulate(p, SimConfig::new(sched), k as u64);
        match diff::compare(p, &e, &o) {
            Verdict::Agree => {}
            v => panic!("{sched:?}: {v:?}"),
        }
    }
    w
}

#[test]
fn every_ld_st_shape_num_and_pack_agrees_with_the_oracle() {
    let mut g = Gen(0x5EED_0001);
    let mut all = WordCounts::default();
    for _ in 0..60 {
        // Cells outside the st's footprint are never written (OQ-9), and the upper half of
        // an unpacked cell is not shown (OQ-10): some programs read few exact words.
        all.add(&check(&ldst_case(&mut g), 0.0));
    }
    // Most of the words read are exact (the shapes agree with each other).
    assert!(all.exact * 3 > all.total(), "{all:?}");
}

#[test]
fn ld_red_agrees_with_the_oracle() {
    let mut g = Gen(0x5EED_0002);
    for _ in 0..30 {
        check(&red_case(&mut g), 0.9);
    }
}

#[test]
fn every_cp_shape_and_multicast_agrees_with_the_oracle() {
    let mut g = Gen(0x5EED_0003);
    for _ in 0..30 {
        // `.4x256b` writes 4 of the 32 lanes read, the 128b shapes 4 of the 8 columns.
        check(&cp_case(&mut g), 0.05);
    }
}

/// The decompressing forms (`.b8x16` with `.b4x16_p64` / `.b6x16_p32`, §9.7.16.9.1): the
/// oracle's and the simulator's independently written expansions agree on every shape.
#[test]
fn every_decompressing_cp_agrees_with_the_oracle() {
    let mut g = Gen(0x5EED_0007);
    for _ in 0..30 {
        let mut op = cp_op(&mut g);
        if let Op::Cp { form, .. } = &mut op {
            form.dst_fmt = Some(CpDstFmt::B8x16);
            form.src_fmt = Some(g.pick(&[CpSrcFmt::B4x16P64, CpSrcFmt::B6x16P32]));
        }
        let w = check(&async_case(vec![], vec![op]), 0.05);
        assert!(w.exact > 0, "{w:?}");
    }
}

#[test]
fn shift_agrees_with_the_oracle() {
    let mut g = Gen(0x5EED_0004);
    for _ in 0..10 {
        check(&shift_case(&mut g), 0.7);
    }
}

#[test]
fn an_mma_with_a_in_tmem_agrees_with_the_oracle() {
    let mut g = Gen(0x5EED_0005);
    for _ in 0..10 {
        check(&mma_case(&mut g), 0.7);
    }
}
