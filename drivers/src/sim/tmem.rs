//! Tensor memory of one CTA (reference §2.1-§2.2) and the ld/st footprints (§2.6).
//!
//! Concrete behaviours where the spec is silent (each is documented in `sim/mod.rs`):
//! - a cell never written reads as [`poison`] of its (lane, column) (OQ-9);
//! - contents persist across dealloc and re-allocation (OQ-9);
//! - the 16-lane shapes map threads to lanes as below (the ISA gives this only in figures,
//!   OQ-10); `.pack::16b` / `.unpack::16b` double the column footprint, the low half of each
//!   cell holding the 16-bit value.

use tcgen05_ir::{LdStShape, Num, Pack};

/// Lanes of a CTA's TMEM (reference §2.1).
pub const LANES: u32 = 128;
/// Columns of a CTA's TMEM (reference §2.1).
pub const COLS: u32 = 512;
const UNIT: u32 = 32;
const UNIT_WORDS: usize = (LANES * UNIT) as usize;

/// The value of a cell never written: `0xDEAD_0000 ^ (lane * 512 + column)`.
pub fn poison(lane: u32, col: u32) -> u32 {
    0xDEAD_0000 ^ (lane * COLS + col)
}

/// 128 x 512 cells, stored per 32-column unit and created on first write.
#[derive(Debug, Default, Clone)]
pub struct Tmem {
    units: Vec<Option<Box<[u32]>>>,
}

impl Tmem {
    /// An empty TMEM.
    pub fn new() -> Self {
        Tmem {
            units: vec![None; (COLS / UNIT) as usize],
        }
    }

    /// Reads a cell; `None` when outside the array.
    pub fn get(&self, lane: u32, col: u32) -> Option<u32> {
        if lane >= LANES || col >= COLS {
            return None;
        }
        Some(match &self.units[(col / UNIT) as usize] {
            Some(u) => u[(lane * UNIT + col % UNIT) as usize],
            None => poison(lane, col),
        })
    }

    /// Writes a cell; `false` when outside the array.
    pub fn set(&mut self, lane: u32, col: u32, v: u32) -> bool {
        if lane >= LANES || col >= COLS {
            return false;
        }
        let unit = (col / UNIT) as usize;
        let u = self.units[unit].get_or_insert_with(|| {
            let mut b = vec![0u32; UNIT_WORDS].into_boxed_slice();
            for l in 0..LANES {
                for c in 0..UNIT {
                    b[(l * UNIT + c) as usize] = poison(l, unit as u32 * UNIT + c);
                }
            }
            b
        });
        u[(lane * UNIT + col % UNIT) as usize] = v;
        true
    }
}

/// Registers per repetition of a shape (reference §2.6).
pub fn regs_per_rep(shape: LdStShape) -> u32 {
    match shape {
        LdStShape::S32x32b | LdStShape::S16x64b | LdStShape::S16x32bx2 => 1,
        // Not a shape (LDST-SHAPE): the documented behaviour is "as its name says".
        LdStShape::S16x128b | LdStShape::S32x64b => 2,
        LdStShape::S16x256b => 4,
    }
}

/// The cell (lane offset inside the warp's 32-lane window, column offset from the base
/// column) that thread `t`'s register `reg` covers, without pack/unpack. `split` is the
/// `.16x32bx2` second-half column offset.
pub fn cell_of(shape: LdStShape, t: u32, reg: u32, split: u32) -> (u32, u32) {
    let per = regs_per_rep(shape);
    let (rep, j) = (reg / per, reg % per);
    match shape {
        LdStShape::S32x32b => (t, rep),
        LdStShape::S32x64b => (t, rep * 2 + j),
        LdStShape::S16x64b => (t / 2, rep * 2 + t % 2),
        LdStShape::S16x128b => (t / 2, rep * 4 + (t % 2) * 2 + j),
        LdStShape::S16x256b => (t / 2, rep * 8 + (t % 2) * 4 + j),
        LdStShape::S16x32bx2 => (t % 16, rep + if t >= 16 { split } else { 0 }),
    }
}

/// Whether `num` repetitions of `shape` may be used at all (the .num table, §2.6).
pub fn valid_num(shape: LdStShape, num: Num) -> bool {
    tcgen05_ir::vec_len(shape, num).is_some()
}

/// Whether a pack qualifier doubles the footprint: `.pack::16b` on ld, `.unpack::16b` on st.
pub fn packed(pack: Option<Pack>) -> bool {
    pack.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritten_cells_read_as_poison_and_writes_stick() {
        let mut t = Tmem::new();
        assert_eq!(t.get(3, 40), Some(poison(3, 40)));
        assert!(t.set(3, 40, 7));
        assert_eq!(t.get(3, 40), Some(7));
        assert_eq!(t.get(3, 41), Some(poison(3, 41)));
        assert_eq!(t.get(128, 0), None);
        assert!(!t.set(0, 512, 1));
    }

    #[test]
    fn the_32x32b_shape_maps_thread_to_lane_and_register_to_column() {
        // Reference §2.6: for .32x32b, thread t holds lane (base+t), register i column (base+i).
        assert_eq!(cell_of(LdStShape::S32x32b, 5, 3, 0), (5, 3));
        // .16x32bx2: upper half-warp reads at the split offset.
        assert_eq!(cell_of(LdStShape::S16x32bx2, 17, 0, 8), (1, 8));
    }
}
