//! Arbitrary programs from bytes (feature `arbitrary`), for the round-trip property and the
//! `ptx_roundtrip` fuzz target.
//!
//! These programs are *syntactically* arbitrary: every statement, condition, operand form and
//! qualifier combination the model can hold, legal or not, within size bounds that keep a
//! case small. They are not meant to be well-formed; the generators crate makes those.
//! Values stay inside the ranges the printed text can hold (e.g. the 14-bit descriptor
//! fields), which is what "the model can hold" means for those fields.

use crate::form::*;
use crate::program::*;
use crate::qual::*;
use arbitrary::{Arbitrary, Result, Unstructured};

/// Size bounds of [`program`].
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Most warps.
    pub warps: u8,
    /// Most functions.
    pub funcs: u8,
    /// Most statements per list.
    pub stmts: usize,
    /// Deepest nesting of If/Loop.
    pub depth: u8,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            warps: 4,
            funcs: 2,
            stmts: 8,
            depth: 2,
        }
    }
}

/// An arbitrary program within `b`.
pub fn program(u: &mut Unstructured<'_>, b: Bounds) -> Result<Program> {
    let nwarps = u.int_in_range(0..=b.warps)?;
    let nfuncs = u.int_in_range(0..=b.funcs)?;
    let launch = Launch {
        target: Target::arbitrary(u)?,
        ptx_version: PtxVersion::new(u.int_in_range(7..=9)?, u.int_in_range(0..=9)?),
        cluster_size: *u.choose(&[1, 2, 4])?,
        clusters: u.int_in_range(1..=4)?,
        warps_per_cta: u.int_in_range(1..=16)?,
        declare_cluster: u.arbitrary()?,
    };
    let nregions = u.int_in_range(0..=3)?;
    let smem = Smem {
        slots: u.int_in_range(0..=4)?,
        mbarriers: u.int_in_range(0..=4)?,
        regions: (0..nregions)
            .map(|_| Ok(16 * u32::from(u.int_in_range(1u16..=1024)?)))
            .collect::<Result<_>>()?,
    };
    let warps = (0..nwarps)
        .map(|_| block(u, b, b.depth))
        .collect::<Result<_>>()?;
    let funcs = (0..nfuncs)
        .map(|_| {
            Ok(Func {
                body: block(u, b, b.depth)?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Program {
        launch,
        smem,
        warps,
        funcs,
    })
}

fn block(u: &mut Unstructured<'_>, b: Bounds, depth: u8) -> Result<Vec<Stmt>> {
    let n = u.int_in_range(0..=b.stmts)?;
    (0..n).map(|_| stmt(u, b, depth)).collect()
}

fn stmt(u: &mut Unstructured<'_>, b: Bounds, depth: u8) -> Result<Stmt> {
    let top = if depth == 0 { 17 } else { 19 };
    Ok(match u.int_in_range(0..=top)? {
        0..=5 => Stmt::Tc(op(u)?),
        6 => Stmt::Call(u.int_in_range(0..=b.funcs.saturating_sub(1))?),
        7 => Stmt::Exit,
        8 => Stmt::BarCta,
        9 => Stmt::ClusterArrive {
            relaxed: u.arbitrary()?,
        },
        10 => Stmt::ClusterWait,
        11 => Stmt::MbarInit {
            bar: u.int_in_range(0..=3)?,
            count: u.int_in_range(1..=64)?,
        },
        12 => Stmt::FenceMbarInit,
        13 => Stmt::MbarArrive {
            bar: u.int_in_range(0..=3)?,
            cta: if u.arbitrary()? {
                Some(u.int_in_range(0..=3)?)
            } else {
                None
            },
        },
        14 => Stmt::MbarWait {
            bar: u.int_in_range(0..=3)?,
            parity: u.arbitrary()?,
            scope: Scope::arbitrary(u)?,
            max_tries: u.int_in_range(1..=100_000)?,
        },
        15 => match u.int_in_range(0..=2)? {
            0 => Stmt::FenceProxyAsync,
            1 => Stmt::Fill {
                region: u.int_in_range(0..=2)?,
                seed: u.arbitrary()?,
                elem: FillElem::arbitrary(u)?,
            },
            _ => Stmt::ObserveAddr {
                slot: u.int_in_range(0..=3)?,
            },
        },
        16 => Stmt::Checkpoint(u.arbitrary()?),
        17 => Stmt::Spin(u.int_in_range(0..=1000)?),
        18 => Stmt::If {
            cond: Cond::arbitrary(u)?,
            then: block(u, b, depth - 1)?,
            els: block(u, b, depth - 1)?,
        },
        _ => Stmt::Loop {
            count: u.arbitrary()?,
            body: block(u, b, depth - 1)?,
        },
    })
}

fn tmem(u: &mut Unstructured<'_>) -> Result<TmemRef> {
    Ok(TmemRef {
        base: if u.ratio(1, 8)? {
            TBase::Abs
        } else {
            TBase::Slot(u.int_in_range(0..=3)?)
        },
        lane: *u.choose(&[0, 16, 32, 64, 96, 128, 200])?,
        col: u.int_in_range(0..=600)?,
        divergent: u.ratio(1, 10)?,
    })
}

fn ncols(u: &mut Unstructured<'_>) -> Result<NCols> {
    Ok(NCols {
        value: *u.choose(&[0, 16, 32, 48, 64, 96, 128, 256, 512, 1024])?,
        form: NColsForm::arbitrary(u)?,
    })
}

fn desc(u: &mut Unstructured<'_>) -> Result<SmemDesc> {
    Ok(SmemDesc {
        region: u.int_in_range(0..=2)?,
        offset: u.int_in_range(0..=4096)?,
        lbo_enc: u.int_in_range(0..=0x3FFF)?,
        sbo_enc: u.int_in_range(0..=0x3FFF)?,
        fixed: u.int_in_range(0..=7)?,
        base_offset: u.int_in_range(0..=7)?,
        lbo_abs: u.arbitrary()?,
        swizzle: u.int_in_range(0..=7)?,
        reserved: u.arbitrary::<u64>()? & SmemDesc::RESERVED_MASK,
    })
}

fn op(u: &mut Unstructured<'_>) -> Result<Op> {
    Ok(match u.int_in_range(0..=10)? {
        0 => Op::Alloc {
            form: AllocForm::arbitrary(u)?,
            slot: u.int_in_range(0..=3)?,
            dst_global: u.ratio(1, 10)?,
            ncols: ncols(u)?,
        },
        1 => Op::Dealloc {
            form: DeallocForm::arbitrary(u)?,
            taddr: tmem(u)?,
            ncols: ncols(u)?,
        },
        2 => Op::Relinquish {
            form: RelinquishForm::arbitrary(u)?,
        },
        3 => {
            let form = LdForm::arbitrary(u)?;
            let split = if u.arbitrary()? {
                Some(u.int_in_range(0..=64)?)
            } else {
                None
            };
            Op::Ld {
                form,
                taddr: tmem(u)?,
                split,
                nregs: u.int_in_range(0..=130)?,
            }
        }
        4 => {
            let form = StForm::arbitrary(u)?;
            let split = if u.arbitrary()? {
                Some(u.int_in_range(0..=64)?)
            } else {
                None
            };
            Op::St {
                form,
                taddr: tmem(u)?,
                split,
                nregs: u.int_in_range(0..=130)?,
                seed: u.arbitrary()?,
            }
        }
        5 => Op::Wait {
            form: WaitForm::arbitrary(u)?,
        },
        6 => Op::Fence {
            kind: FenceKind::arbitrary(u)?,
        },
        7 => Op::Commit {
            form: CommitForm::arbitrary(u)?,
            mbar: u.int_in_range(0..=3)?,
            addr: MbarAddr::arbitrary(u)?,
            cta_mask: if u.arbitrary()? {
                Some(u.arbitrary()?)
            } else {
                None
            },
        },
        8 => Op::Cp {
            form: CpForm::arbitrary(u)?,
            taddr: tmem(u)?,
            src: desc(u)?,
        },
        9 => Op::Shift {
            form: ShiftForm::arbitrary(u)?,
            taddr: tmem(u)?,
        },
        _ => {
            let form = MmaForm::arbitrary(u)?;
            let scales = u.arbitrary::<bool>()?;
            Op::Mma(Box::new(Mma {
                form,
                d: tmem(u)?,
                a: if u.arbitrary()? {
                    MmaA::Tmem(tmem(u)?)
                } else {
                    MmaA::Desc(desc(u)?)
                },
                b: desc(u)?,
                sp_meta: if u.arbitrary()? { Some(tmem(u)?) } else { None },
                idesc: u.arbitrary()?,
                scale_a: if scales { Some(tmem(u)?) } else { None },
                scale_b: if scales { Some(tmem(u)?) } else { None },
                disable_output_lane: if u.arbitrary()? {
                    let n = *u.choose(&[0usize, 4, 8])?;
                    Some((0..n).map(|_| u.arbitrary()).collect::<Result<_>>()?)
                } else {
                    None
                },
                enable_input_d: u.arbitrary()?,
                scale_input_d: if u.arbitrary()? {
                    Some(u.int_in_range(0..=20)?)
                } else {
                    None
                },
                zero_col_mask: if u.arbitrary()? {
                    Some(u.arbitrary()?)
                } else {
                    None
                },
            }))
        }
    })
}
