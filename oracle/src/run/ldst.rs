//! Which TMEM cell each register of each thread of a `tcgen05.ld` / `tcgen05.st` moves
//! (§9.7.16.2.3 "Matrix fragments for tcgen05.ld/st", reference §2.6), and the `.red`
//! reduction of `tcgen05.ld` (§9.7.16.8.3).
//!
//! # Derivation of the thread/register ↔ lane/column maps
//!
//! The reference states the `.32x32b` map in text (thread `t` ↔ lane `t`, register `r` ↔
//! column `r`); the ISA gives the 16-lane shapes only as figures (OQ-10). The maps below are
//! read off those figures and checked against an independent source, CUTLASS's copy traits
//! of the same instructions (`cute/atom/copy_traits_sm100.hpp`, `SM100_TMEM_LOAD_16dp*`):
//! each trait's `ValID` numbers the bits of the accessed tile as `bit + row_bits × lane`
//! (`row_bits` = the shape's bits per lane × `.num`), and its `DstLayout` maps (thread,
//! value bit) to that number. Decoding the `DstLayout` of each shape, with register
//! `r` = value bit / 32, gives (lane and column offsets from `taddr`, columns of 32 bits):
//!
//! | shape | per `.x1` | lane of (t, r) | column of (t, r) |
//! |---|---|---|---|
//! | `.32x32b` | 32 × 1 | `t` | `r` |
//! | `.16x64b` | 16 × 2, 1 reg | `t / 4 + 8 (t mod 2)` | `2 r + (t / 2) mod 2` |
//! | `.16x128b` | 16 × 4, 2 regs | `t / 4 + 8 (r mod 2)` | `4 (r / 2) + t mod 4` |
//! | `.16x256b` | 16 × 8, 4 regs | `t / 4 + 8 ((r mod 4) / 2)` | `8 (r / 4) + 2 (t mod 4) + r mod 2` |
//! | `.16x32bx2` | 2 × (16 × 1) | `t mod 16` | `r`, in the half at `taddr + immHalfSplitoff` for `t ≥ 16` |
//!
//! For example `SM100_TMEM_LOAD_16dp256b1x`: `DstLayout` = `((4,8),(64,2)) : ((64,256),(1,2048))`
//! over a tile of 16 lanes × 256 bits: thread `t = a + 4b`, value bit `v = v0 + 64 v1` sits at
//! bit `64a + 256b + v0 + 2048 v1`, i.e. lane `b + 8 v1` (2048 / 256 = 8), bit `64a + v0` of
//! the row: column `2a + v0 / 32`; register `r = v / 32 = v0 / 32 + 2 v1`. The `.xN` traits
//! repeat the base shape along the columns (`16dp256b2x`: the third value mode has stride 256
//! bits, one base width). The same decoding of `16dp128b`, `16dp64b` and `16dp32b` gives the
//! other rows.
//!
//! `.pack::16b` / `.unpack::16b` (§9.7.16.8.2): the `_16b` traits keep the `DstLayout` and
//! change only `ValID` to `((16, n), lanes) : ((1, 32), lane)`: the tile's logical bit `i` is
//! bit `i mod 16` of column `i / 16`, the low half of each 32-bit column. So the 16-bit half
//! `j` (0 = bits 0-15) of a register whose unpacked column is `c` is the low half of column
//! `2c + j`: the footprint doubles, adjacent columns pair up, the lower column in the lower
//! half. The other half of a cell an `.unpack::16b` store writes is not shown (OQ-10): its
//! 32-bit value is unspecified.

use tcgen05_ir::form::LdForm;
use tcgen05_ir::*;

/// Where one register of one thread lives: `half` 1 is the `.16x32bx2` access at
/// `taddr + immHalfSplitoff`; `lane` and `col` are offsets from that access's base lane and
/// column, in 32-bit columns without pack/unpack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// Which access of a `.16x32bx2` (0 otherwise).
    pub half: usize,
    /// Lane offset.
    pub lane: u32,
    /// Column offset (unpacked).
    pub col: u32,
}

/// Lanes and unpacked columns of one repetition of `shape` (reference §2.6).
pub fn base_size(shape: LdStShape) -> (u32, u32) {
    match shape {
        LdStShape::S32x32b => (32, 1),
        LdStShape::S16x64b => (16, 2),
        LdStShape::S16x128b => (16, 4),
        LdStShape::S16x256b => (16, 8),
        LdStShape::S16x32bx2 => (16, 1),
        // LDST-SHAPE: statically ill-formed, never run; sized as its name says.
        LdStShape::S32x64b => (32, 2),
    }
}

/// The cell that register `r` of thread `t` moves (module documentation, the table).
pub fn cell(shape: LdStShape, t: u32, r: u32) -> Cell {
    let one = |lane, col| Cell { half: 0, lane, col };
    match shape {
        LdStShape::S32x32b => one(t, r),
        LdStShape::S16x64b => one(t / 4 + 8 * (t % 2), 2 * r + (t / 2) % 2),
        LdStShape::S16x128b => one(t / 4 + 8 * (r % 2), 4 * (r / 2) + t % 4),
        LdStShape::S16x256b => one(t / 4 + 8 * ((r % 4) / 2), 8 * (r / 4) + 2 * (t % 4) + r % 2),
        LdStShape::S16x32bx2 => Cell {
            half: (t / 16) as usize,
            lane: t % 16,
            col: r,
        },
        // LDST-SHAPE: never run.
        LdStShape::S32x64b => one(t, r),
    }
}

/// The (thread, register) that moves `c` ([`cell`] inverted), for a cell inside the access.
pub fn owner(shape: LdStShape, c: Cell) -> (u32, u32) {
    let (l, k) = (c.lane, c.col);
    match shape {
        LdStShape::S32x32b | LdStShape::S32x64b => (l, k),
        // lane = t/4 + 8(t mod 2), col = 2r + (t/2) mod 2.
        LdStShape::S16x64b => (4 * (l % 8) + 2 * (k % 2) + l / 8, k / 2),
        // lane = t/4 + 8(r mod 2), col = 4(r/2) + t mod 4.
        LdStShape::S16x128b => (4 * (l % 8) + k % 4, 2 * (k / 4) + l / 8),
        // lane = t/4 + 8((r mod 4)/2), col = 8(r/4) + 2(t mod 4) + r mod 2.
        LdStShape::S16x256b => (4 * (l % 8) + (k % 8) / 2, 4 * (k / 8) + 2 * (l / 8) + k % 2),
        LdStShape::S16x32bx2 => (c.lane + 16 * c.half as u32, k),
    }
}

/// The `redval` of an `ld.red` whose thread loaded `vals` (§9.7.16.8.3, reference §3.2): the
/// minimum or maximum over every register of the thread (all `.num` repetitions: the values
/// "across columns within each lane" that the instruction loads), as `.u32`, `.s32` or `.f32`;
/// `.abs` reduces absolute values; `.NaN` gives the canonical NaN `0x7FFF_FFFF` if any input is
/// NaN. `None` where the spec leaves the result open (OQ-13): an f32 NaN input without
/// `.NaN`, or a reduction that picks between `+0` and `-0`.
pub fn reduce(form: &LdForm, vals: &[u32]) -> Option<u32> {
    let max = form.red_op == Some(RedOp::Max);
    match form.ty {
        Ty::U32 => {
            let it = vals.iter().copied();
            if max { it.max() } else { it.min() }
        }
        Ty::S32 => {
            let it = vals.iter().map(|&v| v as i32);
            (if max { it.max() } else { it.min() }).map(|v| v as u32)
        }
        Ty::F32 => {
            let abs = |v: u32| if form.abs { v & 0x7FFF_FFFF } else { v };
            let xs: Vec<u32> = vals.iter().map(|&v| abs(v)).collect();
            let is_nan = |v: u32| f32::from_bits(v).is_nan();
            if xs.iter().any(|&v| is_nan(v)) {
                return form.nan.then_some(CANONICAL_NAN);
            }
            let key = |v: u32| f32::from_bits(v);
            let best = xs.iter().copied().reduce(|a, b| {
                let better = if max {
                    key(b) > key(a)
                } else {
                    key(b) < key(a)
                };
                if better { b } else { a }
            })?;
            // A zero result with both signed zeros among the inputs: which one is not stated.
            let zero = |v: u32| v & 0x7FFF_FFFF == 0;
            if zero(best) && xs.iter().any(|&v| zero(v) && v != best) {
                return None;
            }
            Some(best)
        }
        _ => None,
    }
}

/// The canonical f32 NaN that `.NaN` produces (PTX ISA §9.7.3 "canonical NaN": `0x7FFFFFFF`).
pub const CANONICAL_NAN: u32 = 0x7FFF_FFFF;

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPES: [LdStShape; 5] = [
        LdStShape::S32x32b,
        LdStShape::S16x64b,
        LdStShape::S16x128b,
        LdStShape::S16x256b,
        LdStShape::S16x32bx2,
    ];

    /// Registers per thread of one repetition (reference §2.6, the register-vector table).
    fn regs(shape: LdStShape) -> u32 {
        match shape {
            LdStShape::S16x128b => 2,
            LdStShape::S16x256b => 4,
            _ => 1,
        }
    }

    #[test]
    fn every_cell_of_every_shape_is_moved_by_exactly_one_register() {
        for shape in SHAPES {
            for reps in [1, 2, 4] {
                let (lanes, cols) = base_size(shape);
                let halves = if shape == LdStShape::S16x32bx2 { 2 } else { 1 };
                let mut seen = vec![0u32; (halves * lanes * cols * reps) as usize];
                for t in 0..32 {
                    for r in 0..regs(shape) * reps {
                        let c = cell(shape, t, r);
                        assert!(c.lane < lanes && c.col < cols * reps, "{shape:?} {t} {r}");
                        let i = (c.half as u32 * lanes + c.lane) * cols * reps + c.col;
                        seen[i as usize] += 1;
                        assert_eq!(owner(shape, c), (t, r), "{shape:?} {c:?}");
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{shape:?} x{reps}");
            }
        }
    }

    /// The figures' first rows, written out by hand from the decoded CUTLASS layouts
    /// (module documentation): which thread's register sits in each column of lanes 0 and 8.
    #[test]
    fn the_16_lane_maps_match_the_figures() {
        let row = |shape, lane: u32, cols: u32| -> Vec<(u32, u32)> {
            (0..cols)
                .map(|col| owner(shape, Cell { half: 0, lane, col }))
                .collect()
        };
        // .16x64b: lane 0 holds T0 then T2; lane 8 holds T1 then T3; lane 1 T4, T6.
        assert_eq!(row(LdStShape::S16x64b, 0, 2), [(0, 0), (2, 0)]);
        assert_eq!(row(LdStShape::S16x64b, 8, 2), [(1, 0), (3, 0)]);
        assert_eq!(row(LdStShape::S16x64b, 1, 2), [(4, 0), (6, 0)]);
        // .16x128b: lane 0 holds T0..T3 register 0; lane 8 the same threads' register 1.
        assert_eq!(
            row(LdStShape::S16x128b, 0, 4),
            [(0, 0), (1, 0), (2, 0), (3, 0)]
        );
        assert_eq!(
            row(LdStShape::S16x128b, 8, 4),
            [(0, 1), (1, 1), (2, 1), (3, 1)]
        );
        // .16x256b: lane 0 holds T0 r0 r1, T1 r0 r1, ..., lane 8 the same with r2 r3 (the
        // layout of an mma.m16n8 accumulator fragment).
        assert_eq!(
            row(LdStShape::S16x256b, 0, 8),
            [
                (0, 0),
                (0, 1),
                (1, 0),
                (1, 1),
                (2, 0),
                (2, 1),
                (3, 0),
                (3, 1)
            ]
        );
        assert_eq!(
            row(LdStShape::S16x256b, 8, 8),
            [
                (0, 2),
                (0, 3),
                (1, 2),
                (1, 3),
                (2, 2),
                (2, 3),
                (3, 2),
                (3, 3)
            ]
        );
        assert_eq!(row(LdStShape::S16x256b, 7, 1), [(28, 0)]);
        // .x2 repeats along the columns: column 8 of lane 0 is T0's register 4.
        assert_eq!(
            owner(
                LdStShape::S16x256b,
                Cell {
                    half: 0,
                    lane: 0,
                    col: 8
                }
            ),
            (0, 4)
        );
        // .16x32bx2: thread 17 is lane 1 of the second access.
        assert_eq!(
            cell(LdStShape::S16x32bx2, 17, 3),
            Cell {
                half: 1,
                lane: 1,
                col: 3
            }
        );
    }

    fn red(ty: Ty, op: RedOp, abs: bool, nan: bool) -> LdForm {
        LdForm {
            red: true,
            sync: true,
            aligned: true,
            shape: LdStShape::S32x32b,
            num: Num::X4,
            pack: None,
            red_op: Some(op),
            abs,
            nan,
            ty,
        }
    }

    #[test]
    fn reductions_follow_the_type_abs_and_nan_qualifiers() {
        let v = [5u32, 0xFFFF_FFFE, 7, 3];
        assert_eq!(reduce(&red(Ty::U32, RedOp::Min, false, false), &v), Some(3));
        assert_eq!(
            reduce(&red(Ty::U32, RedOp::Max, false, false), &v),
            Some(0xFFFF_FFFE)
        );
        // As s32, 0xFFFF_FFFE is -2.
        assert_eq!(
            reduce(&red(Ty::S32, RedOp::Min, false, false), &v),
            Some(0xFFFF_FFFE)
        );
        assert_eq!(reduce(&red(Ty::S32, RedOp::Max, false, false), &v), Some(7));
        let f = |x: f32| x.to_bits();
        let v = [f(1.5), f(-4.0), f(2.0), f(3.0)];
        assert_eq!(
            reduce(&red(Ty::F32, RedOp::Min, false, false), &v),
            Some(f(-4.0))
        );
        assert_eq!(
            reduce(&red(Ty::F32, RedOp::Max, false, false), &v),
            Some(f(3.0))
        );
        // .abs: |-4| is the largest.
        assert_eq!(
            reduce(&red(Ty::F32, RedOp::Max, true, false), &v),
            Some(f(4.0))
        );
        let n = [f(1.0), 0x7FC0_0001, f(2.0), f(0.5)];
        // .NaN: the canonical NaN; without it, open (OQ-13).
        assert_eq!(
            reduce(&red(Ty::F32, RedOp::Min, false, true), &n),
            Some(CANONICAL_NAN)
        );
        assert_eq!(reduce(&red(Ty::F32, RedOp::Min, false, false), &n), None);
        // +0 against -0: open.
        let z = [f(0.0), f(-0.0), f(1.0), f(2.0)];
        assert_eq!(reduce(&red(Ty::F32, RedOp::Min, false, false), &z), None);
    }
}
