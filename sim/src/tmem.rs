//! Tensor memory of one CTA (reference §2.1-§2.2) and the ld/st footprints (§2.6).
//!
//! Concrete behaviours where the spec is silent (each is documented in the crate documentation, `lib.rs`):
//! - a cell never written reads as [`poison`] of its (lane, column) (OQ-9);
//! - contents persist across dealloc and re-allocation (OQ-9);
//! - the 16-lane shapes map threads to lanes as [`cell_of`] says (the ISA gives this only in
//!   figures, OQ-10); `.pack::16b` / `.unpack::16b` double the column footprint, the low half
//!   of each cell holding the 16-bit value.

use tcgen05_ir::{LdStShape, Num, Pack};

/// Lanes of a CTA's TMEM (reference §2.1).
pub const LANES: u32 = 128;
/// Columns of a CTA's TMEM (reference §2.1).
pub const COLS: u32 = 512;
/// Cells are stored in blocks of 32 lanes x 32 columns (one warp's lane quarter of one
/// 32-column allocation unit), created on first write.
const BLOCK: u32 = 32;
const BLOCK_WORDS: usize = (BLOCK * BLOCK) as usize;
const BLOCKS: usize = ((LANES / BLOCK) * (COLS / BLOCK)) as usize;
/// Freed blocks kept per thread for the next machine (saves the allocator and page faults).
const POOL_MAX: usize = 512;

type Cells = Box<[u32; BLOCK_WORDS]>;

thread_local! {
    static POOL: std::cell::RefCell<Vec<Cells>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The block holding (lane, col), and the cell's index inside it.
fn block_of(lane: u32, col: u32) -> (usize, usize) {
    (
        ((col / BLOCK) * (LANES / BLOCK) + lane / BLOCK) as usize,
        ((lane % BLOCK) * BLOCK + col % BLOCK) as usize,
    )
}

/// A block of never-written cells: each holds its [`poison`] value.
#[cold]
#[inline(never)]
fn poison_block(block: usize) -> Cells {
    let mut b = POOL
        .with(|p| p.borrow_mut().pop())
        .unwrap_or_else(|| Box::new([0u32; BLOCK_WORDS]));
    let lane0 = (block as u32 % (LANES / BLOCK)) * BLOCK;
    let col0 = (block as u32 / (LANES / BLOCK)) * BLOCK;
    for (l, row) in b.chunks_exact_mut(BLOCK as usize).enumerate() {
        let first = poison(lane0 + l as u32, col0);
        for (c, x) in row.iter_mut().enumerate() {
            *x = first ^ c as u32;
        }
    }
    b
}

/// The value of a cell never written: `0xDEAD_0000 ^ (lane * 512 + column)`.
pub fn poison(lane: u32, col: u32) -> u32 {
    0xDEAD_0000 ^ (lane * COLS + col)
}

/// Cells that an asynchronous operation wrote but that are computed only when read: an MMA's
/// D. `value` gives the cell at (lane, column offset from the layer's first column) from the
/// cell's value just before the operation (`old`, only asked for when `needs_old` holds).
pub trait Lazy: std::fmt::Debug {
    /// Whether [`Lazy::value`] uses the cell's previous value (an accumulating MMA).
    fn needs_old(&self) -> bool;
    /// The cell's value.
    fn value(&self, lane: u32, col: u32, old: u32) -> u32;
    /// The values of the cells `col, col + 1, ...` of `lane` (`out.len()` of them, the
    /// previous values in `olds`): [`Lazy::value`] of each.
    fn values(&self, lane: u32, col: u32, olds: &[u32], out: &mut [u32]) {
        for (k, (x, &old)) in out.iter_mut().zip(olds).enumerate() {
            *x = self.value(lane, col + k as u32, old);
        }
    }
}

/// A rectangle of lazy cells: per column from `col0`, the lanes the layer still owns (a later
/// write to a cell takes the cell out of every layer).
#[derive(Debug, Clone)]
struct Layer {
    col0: u32,
    lanes: Vec<u128>,
    /// Whether every column still has the lanes it was written with (no cell of the layer
    /// was taken out of it): then the layer owns (lane, col) for every column of the
    /// rectangle where it owns one.
    uniform: bool,
    /// `f.needs_old()`, kept (it never changes).
    needs_old: bool,
    f: std::rc::Rc<dyn Lazy>,
}

impl Layer {
    fn owns(&self, lane: u32, col: u32) -> bool {
        col.wrapping_sub(self.col0) < self.lanes.len() as u32
            && self.lanes[(col - self.col0) as usize] >> lane & 1 == 1
    }
}

/// Layers kept lazy at most; the oldest is computed into the cells beyond that.
const MAX_LAYERS: usize = 48;

/// 128 x 512 cells, stored in blocks of 32 lanes x 32 columns created on first write, under
/// a stack of lazy layers (MMA results, computed cell by cell when read). The lazy layers are
/// an implementation device: every read gives what an eager computation at perform time
/// would have written.
#[derive(Debug, Clone)]
pub struct Tmem {
    blocks: [Option<Cells>; BLOCKS],
    layers: Vec<Layer>,
    /// Per column, the lanes that some layer owns (up to the last column a layer covered, empty
    /// until the first layer): a cell outside it reads its stored value without looking at
    /// the layers.
    owned: Vec<u128>,
}

impl Default for Tmem {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Tmem {
    fn drop(&mut self) {
        let _ = POOL.try_with(|p| {
            let mut p = p.borrow_mut();
            for b in self.blocks.iter_mut().filter_map(Option::take) {
                if p.len() >= POOL_MAX {
                    break;
                }
                p.push(b);
            }
        });
    }
}

impl Tmem {
    /// An empty TMEM.
    pub fn new() -> Self {
        Tmem {
            blocks: [const { None }; BLOCKS],
            layers: Vec::new(),
            owned: Vec::new(),
        }
    }

    #[inline]
    fn base(&self, lane: u32, col: u32) -> u32 {
        let (b, i) = block_of(lane, col);
        match &self.blocks[b] {
            Some(u) => u[i],
            None => poison(lane, col),
        }
    }

    #[inline]
    fn set_base(&mut self, lane: u32, col: u32, v: u32) {
        let (b, i) = block_of(lane, col);
        match &mut self.blocks[b] {
            Some(cells) => cells[i] = v,
            None => {
                self.blocks[b] = Some(poison_block(b)).map(|mut c| {
                    c[i] = v;
                    c
                })
            }
        }
    }

    /// Whether no lazy layer owns a cell of `lane` in the columns `[lo, hi]`: then
    /// [`Tmem::stored`] reads those cells.
    #[inline]
    pub fn lane_clean(&self, lane: u32, lo: u32, hi: u32) -> bool {
        let end = (hi.min(COLS - 1) as usize + 1).min(self.owned.len());
        lo as usize >= end
            || self.owned[lo as usize..end]
                .iter()
                .all(|m| m >> lane & 1 == 0)
    }

    /// Whether some lazy layer owns the cell (inside the array).
    #[inline]
    fn lazy(&self, lane: u32, col: u32) -> bool {
        self.owned
            .get(col as usize)
            .is_some_and(|m| m >> lane & 1 == 1)
    }

    /// The stored value of a cell inside the array that no lazy layer owns
    /// ([`Tmem::lane_clean`]).
    #[inline]
    pub fn stored(&self, lane: u32, col: u32) -> u32 {
        self.base(lane, col)
    }

    /// The cell as seen below layer `top` (layers `0..top`).
    fn below(&self, top: usize, lane: u32, col: u32) -> u32 {
        for i in (0..top).rev() {
            let l = &self.layers[i];
            if l.owns(lane, col) {
                let old = if l.f.needs_old() {
                    self.below(i, lane, col)
                } else {
                    0
                };
                return l.f.value(lane, col - l.col0, old);
            }
        }
        self.base(lane, col)
    }

    /// Reads a cell; `None` when outside the array.
    pub fn get(&self, lane: u32, col: u32) -> Option<u32> {
        if lane >= LANES || col >= COLS {
            return None;
        }
        if !self.lazy(lane, col) {
            return Some(self.base(lane, col));
        }
        Some(self.below(self.layers.len(), lane, col))
    }

    /// Reads a cell and keeps its value (a lazy cell is computed once); `None` when outside
    /// the array.
    pub fn read(&mut self, lane: u32, col: u32) -> Option<u32> {
        if lane >= LANES || col >= COLS {
            return None;
        }
        if !self.lazy(lane, col) {
            return Some(self.base(lane, col));
        }
        let Some(top) = self.layers.iter().rposition(|l| l.owns(lane, col)) else {
            return Some(self.base(lane, col));
        };
        let v = self.below(top + 1, lane, col);
        // As `set`: no layer owns the cell any more, the cells hold its value.
        let bit = !(1u128 << lane);
        for l in &mut self.layers[..=top] {
            if let Some(m) = l.lanes.get_mut(col.wrapping_sub(l.col0) as usize) {
                *m &= bit;
                l.uniform = false;
            }
        }
        self.owned[col as usize] &= bit;
        self.set_base(lane, col, v);
        Some(v)
    }

    /// Writes a cell; `false` when outside the array.
    #[inline]
    pub fn set(&mut self, lane: u32, col: u32, v: u32) -> bool {
        if lane >= LANES || col >= COLS {
            return false;
        }
        if self.lazy(lane, col) {
            let bit = !(1u128 << lane);
            for l in &mut self.layers {
                if let Some(m) = l.lanes.get_mut(col.wrapping_sub(l.col0) as usize) {
                    *m &= bit;
                    l.uniform = false;
                }
            }
            self.owned[col as usize] &= bit;
        }
        self.set_base(lane, col, v);
        true
    }

    /// Writes `vals` into `lane` from column `col0` on, as [`Tmem::set`] cell by cell would;
    /// `false` when a cell is outside the array (that cell is not written).
    pub fn set_run(&mut self, lane: u32, col0: u32, vals: &[u32]) -> bool {
        let n = vals.len() as u32;
        if n == 0 {
            return true;
        }
        if lane >= LANES || col0.checked_add(n).is_none_or(|e| e > COLS) {
            let mut ok = true;
            for (k, &v) in vals.iter().enumerate() {
                ok &= self.set(lane, col0.wrapping_add(k as u32), v);
            }
            return ok;
        }
        if !self.lane_clean(lane, col0, col0 + n - 1) {
            // As `set` cell by cell: the cells leave every layer (a layer owns a cell only
            // where `owned` has it, so clearing the others changes nothing).
            let bit = !(1u128 << lane);
            for l in &mut self.layers {
                for c in col0..col0 + n {
                    if let Some(m) = l.lanes.get_mut(c.wrapping_sub(l.col0) as usize) {
                        *m &= bit;
                        l.uniform = false;
                    }
                }
            }
            let end = ((col0 + n) as usize).min(self.owned.len());
            for m in self.owned.get_mut(col0 as usize..end).unwrap_or_default() {
                *m &= bit;
            }
        }
        self.store_run(lane, col0, vals);
        true
    }

    /// The lanes that some lazy layer owns in a column of `[lo, hi]`: [`Tmem::set_run_in`]
    /// writes the other lanes without looking at the layers.
    pub fn owned_lanes(&self, lo: u32, hi: u32) -> u128 {
        let end = (hi.min(COLS - 1) as usize + 1).min(self.owned.len());
        if lo as usize >= end {
            return 0;
        }
        self.owned[lo as usize..end].iter().fold(0, |a, &m| a | m)
    }

    /// [`Tmem::set_run`], where `owned` is [`Tmem::owned_lanes`] of the run's columns (or a
    /// superset): a lane outside it, with the run inside the array, is written directly.
    #[inline]
    pub fn set_run_in(&mut self, owned: u128, lane: u32, col0: u32, vals: &[u32]) -> bool {
        if lane < LANES
            && owned >> lane & 1 == 0
            && col0
                .checked_add(vals.len() as u32)
                .is_some_and(|e| e <= COLS)
        {
            self.store_run(lane, col0, vals);
            return true;
        }
        self.set_run(lane, col0, vals)
    }

    /// Stores `vals` into `lane` from column `col0` on (inside the array, cells no lazy layer
    /// owns).
    #[inline]
    fn store_run(&mut self, lane: u32, col0: u32, vals: &[u32]) {
        let (b, i) = block_of(lane, col0);
        if (col0 % BLOCK) as usize + vals.len() <= BLOCK as usize
            && let Some(cells) = &mut self.blocks[b]
            && let Some(dst) = cells.get_mut(i..i + vals.len())
        {
            // The common case: the run inside one block already stored.
            super::machine::copy_words(dst, vals);
            return;
        }
        let (mut col, mut rest) = (col0, vals);
        while !rest.is_empty() {
            let take = ((BLOCK - col % BLOCK) as usize).min(rest.len());
            let (b, i) = block_of(lane, col);
            let cells = match &mut self.blocks[b] {
                Some(c) => c,
                slot => slot.insert(poison_block(b)),
            };
            super::machine::copy_words(&mut cells[i..i + take], &rest[..take]);
            col += take as u32;
            rest = &rest[take..];
        }
    }

    /// Reads `out.len()` cells of `lane` from column `col0` on, as [`Tmem::get`] cell by cell
    /// would; `false` when a cell is outside the array (it reads as 0).
    pub fn get_run(&self, lane: u32, col0: u32, out: &mut [u32]) -> bool {
        let n = out.len() as u32;
        if n == 0 {
            return true;
        }
        if lane >= LANES || col0.checked_add(n).is_none_or(|e| e > COLS) {
            let mut ok = true;
            for (k, x) in out.iter_mut().enumerate() {
                *x = self
                    .get(lane, col0.wrapping_add(k as u32))
                    .unwrap_or_else(|| {
                        ok = false;
                        0
                    });
            }
            return ok;
        }
        if !self.lane_clean(lane, col0, col0 + n - 1) {
            self.get_lazy_run(lane, col0, out);
            return true;
        }
        self.base_run(lane, col0, out);
        true
    }

    /// [`Tmem::get_run`], where `owned` is [`Tmem::owned_lanes`] of the run's columns (or a
    /// superset): a lane outside it, with the run inside the array, reads its stored cells
    /// without looking at the layers.
    #[inline]
    pub fn get_run_in(&self, owned: u128, lane: u32, col0: u32, out: &mut [u32]) -> bool {
        if lane < LANES
            && col0
                .checked_add(out.len() as u32)
                .is_some_and(|e| e <= COLS)
        {
            if owned >> lane & 1 == 0 {
                self.base_run(lane, col0, out);
            } else {
                // Some layer may own a cell of the run (`owned` may be a superset):
                // `run_below` reads the cells no layer owns from the store, as `get` would.
                self.get_lazy_run(lane, col0, out);
            }
            return true;
        }
        self.get_run(lane, col0, out)
    }

    /// [`Tmem::get_run`] inside the array where lazy layers own cells.
    fn get_lazy_run(&self, lane: u32, col0: u32, out: &mut [u32]) {
        self.run_below(self.layers.len(), lane, col0, out);
    }

    /// The cells `col0, col0 + 1, ...` of `lane` (inside the array) as seen below layer `top`
    /// (layers `0..top`), as [`Tmem::below`] cell by cell would: consecutive cells that the
    /// same layer owns on top are computed together ([`Lazy::values`]).
    fn run_below(&self, top: usize, lane: u32, col0: u32, out: &mut [u32]) {
        const CHUNK: usize = 64;
        let layers = &self.layers[..top];
        let n = out.len();
        let mut k = 0;
        while k < n {
            let col = col0 + k as u32;
            let Some(i) = layers.iter().rposition(|l| l.owns(lane, col)) else {
                out[k] = self.base(lane, col);
                k += 1;
                continue;
            };
            let l = &layers[i];
            let above = &layers[i + 1..];
            let mut end = k + 1;
            let lim = n.min(k + CHUNK);
            if above.is_empty() {
                // The top layer: the cells it owns from `col` on, its lane masks in a row.
                let at = (col - l.col0) as usize;
                let masks = l.lanes.get(at + 1..).unwrap_or_default();
                end += if l.uniform {
                    // It owns the cell, so the lane of every column.
                    masks.len().min(lim - end)
                } else {
                    masks
                        .iter()
                        .take(lim - end)
                        .take_while(|&&m| m >> lane & 1 == 1)
                        .count()
                };
            } else {
                while end < lim
                    && l.owns(lane, col0 + end as u32)
                    && !above.iter().any(|x| x.owns(lane, col0 + end as u32))
                {
                    end += 1;
                }
            }
            if l.needs_old {
                let mut olds = [0u32; CHUNK];
                let olds = &mut olds[..end - k];
                self.run_below(i, lane, col, olds);
                l.f.values(lane, col - l.col0, olds, &mut out[k..end]);
            } else {
                const ZEROS: [u32; CHUNK] = [0; CHUNK];
                l.f.values(lane, col - l.col0, &ZEROS[..end - k], &mut out[k..end]);
            }
            k = end;
        }
    }

    /// The stored values of the cells `col0, col0 + 1, ...` of `lane` (inside the array),
    /// which no lazy layer owns ([`Tmem::lane_clean`]).
    pub fn stored_run(&self, lane: u32, col0: u32, out: &mut [u32]) {
        self.base_run(lane, col0, out);
    }

    /// The stored cells `col0, col0 + 1, ...` of `lane` (inside the array).
    #[inline]
    fn base_run(&self, lane: u32, col0: u32, out: &mut [u32]) {
        let (b, i) = block_of(lane, col0);
        if (col0 % BLOCK) as usize + out.len() <= BLOCK as usize
            && let Some(cells) = &self.blocks[b]
            && let Some(src) = cells.get(i..i + out.len())
        {
            // The common case: the run inside one stored block.
            super::machine::copy_words(out, src);
            return;
        }
        self.base_run_blocks(lane, col0, out);
    }

    /// [`Tmem::base_run`] block by block.
    #[inline(never)]
    fn base_run_blocks(&self, lane: u32, col0: u32, out: &mut [u32]) {
        let (mut col, mut k) = (col0, 0);
        while k < out.len() {
            let take = ((BLOCK - col % BLOCK) as usize).min(out.len() - k);
            let (b, i) = block_of(lane, col);
            match &self.blocks[b] {
                Some(cells) => {
                    super::machine::copy_words(&mut out[k..k + take], &cells[i..i + take])
                }
                None => {
                    for (j, x) in out[k..k + take].iter_mut().enumerate() {
                        *x = poison(lane, col + j as u32);
                    }
                }
            }
            col += take as u32;
            k += take;
        }
    }

    /// Writes the lanes of `lanes` in the columns `[col0, col0 + cols)` lazily with `f`, as if
    /// every cell were written now with `f.value(lane, col - col0, previous value)`; `false`
    /// (and nothing written) when a column is outside the array.
    pub fn write_lazy(
        &mut self,
        col0: u32,
        cols: u32,
        lanes: u128,
        f: std::rc::Rc<dyn Lazy>,
    ) -> bool {
        if col0.checked_add(cols).is_none_or(|e| e > COLS) {
            return false;
        }
        if !f.needs_old() {
            // The new layer hides every older one in its rectangle.
            for l in &mut self.layers {
                for c in col0..col0 + cols {
                    if let Some(m) = l.lanes.get_mut(c.wrapping_sub(l.col0) as usize) {
                        *m &= !lanes;
                        l.uniform = false;
                    }
                }
            }
            self.layers.retain(|l| l.lanes.iter().any(|&m| m != 0));
        }
        if self.layers.len() >= MAX_LAYERS {
            self.flatten_oldest();
        }
        self.layers.push(Layer {
            col0,
            lanes: vec![lanes; cols as usize],
            uniform: true,
            needs_old: f.needs_old(),
            f,
        });
        if self.owned.len() < (col0 + cols) as usize {
            self.owned.resize((col0 + cols) as usize, 0);
        }
        for m in &mut self.owned[col0 as usize..(col0 + cols) as usize] {
            *m |= lanes;
        }
        true
    }

    /// Computes the oldest layer into the cells.
    fn flatten_oldest(&mut self) {
        let l = self.layers.remove(0);
        for (i, o) in self.owned[l.col0 as usize..][..l.lanes.len()]
            .iter_mut()
            .enumerate()
        {
            let col = l.col0 + i as u32;
            *o = self
                .layers
                .iter()
                .filter_map(|x| x.lanes.get(col.wrapping_sub(x.col0) as usize))
                .fold(0, |a, m| a | m);
        }
        for (i, &m) in l.lanes.iter().enumerate() {
            let col = l.col0 + i as u32;
            let mut bits = m;
            while bits != 0 {
                let lane = bits.trailing_zeros();
                bits &= bits - 1;
                let old = if l.f.needs_old() {
                    self.base(lane, col)
                } else {
                    0
                };
                self.set_base(lane, col, l.f.value(lane, i as u32, old));
            }
        }
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
///
/// The 16-lane maps are the ISA's figures "Matrix fragments for tcgen05.ld/st"
/// (§9.7.16.2.3), as CUTLASS's `SM100_TMEM_LOAD_16dp*` copy traits also give them: in
/// `.16x64b`, `.16x128b` and `.16x256b` the threads `4g .. 4g + 3` share lane `g` (and
/// `g + 8`), like an `mma.m16n8` accumulator fragment.
pub fn cell_of(shape: LdStShape, t: u32, reg: u32, split: u32) -> (u32, u32) {
    // Repetition `reg / regs_per_rep`, register `reg % regs_per_rep` inside it.
    match shape {
        LdStShape::S32x32b | LdStShape::S32x64b => (t, reg),
        // 16 lanes x 2 columns: thread t is lane t/4 + 8 (t % 2), column (t/2) % 2.
        LdStShape::S16x64b => (t / 4 + 8 * (t % 2), reg * 2 + (t / 2) % 2),
        // 16 lanes x 4 columns: register 0 in lanes 0-7, register 1 in lanes 8-15.
        LdStShape::S16x128b => (t / 4 + 8 * (reg % 2), (reg / 2) * 4 + t % 4),
        // 16 lanes x 8 columns: registers 0-1 in lanes 0-7, 2-3 in lanes 8-15, two columns each.
        LdStShape::S16x256b => (
            t / 4 + 8 * ((reg % 4) / 2),
            (reg / 4) * 8 + (t % 4) * 2 + reg % 2,
        ),
        LdStShape::S16x32bx2 => (t % 16, reg + if t >= 16 { split } else { 0 }),
    }
}

/// The lane offset and the column offset from the base column of the first cell that thread
/// `t`'s register `reg` moves, with `.pack::16b` / `.unpack::16b` (`pack`: two cells per
/// register, from twice the unpacked column). The `.16x32bx2` second access starts at
/// `split` columns from the base, whatever the packing (it is an address offset, §9.7.16.8.3).
pub fn first_cell(shape: LdStShape, t: u32, reg: u32, split: u32, pack: bool) -> (u32, u32) {
    let (lo, co) = cell_of(shape, t, reg, 0);
    let half = if shape == LdStShape::S16x32bx2 && t >= 16 {
        split
    } else {
        0
    };
    (lo, half.wrapping_add(if pack { 2 * co } else { co }))
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

    /// A layer that adds its lane and column to the old value (or writes them).
    #[derive(Debug)]
    struct Add(bool);

    impl Lazy for Add {
        fn needs_old(&self) -> bool {
            self.0
        }
        fn value(&self, lane: u32, col: u32, old: u32) -> u32 {
            if self.0 {
                old + 1000 * lane + col
            } else {
                1000 * lane + col
            }
        }
    }

    #[test]
    fn lazy_layers_read_as_eager_writes_would() {
        let mut t = Tmem::new();
        t.set(2, 10, 5);
        // Lanes 0..4 of columns 8..12, accumulating onto the cells.
        assert!(t.write_lazy(8, 4, 0b1111, std::rc::Rc::new(Add(true))));
        assert_eq!(t.get(2, 10), Some(5 + 2000 + 2));
        assert_eq!(t.get(1, 8), Some(poison(1, 8).wrapping_add(1000)));
        // Lane 4 is not in the layer.
        assert_eq!(t.get(4, 9), Some(poison(4, 9)));
        // A second accumulating layer chains; an overwrite of one cell hides both.
        assert!(t.write_lazy(10, 2, 0b100, std::rc::Rc::new(Add(true))));
        assert_eq!(t.get(2, 10), Some(5 + 2000 + 2 + 2000));
        assert_eq!(t.get(2, 11), Some(poison(2, 11).wrapping_add(2003 + 2001)));
        t.set(2, 11, 9);
        assert_eq!(t.get(2, 11), Some(9));
        assert_eq!(t.read(2, 10), Some(4007));
        assert_eq!(t.get(2, 10), Some(4007));
        // A non-accumulating layer replaces what is below it.
        assert!(t.write_lazy(8, 4, 0b100, std::rc::Rc::new(Add(false))));
        assert_eq!(t.get(2, 10), Some(2002));
        assert!(!t.write_lazy(510, 4, 1, std::rc::Rc::new(Add(false))));
        // Many layers: the oldest are computed into the cells, with the same values.
        let mut u = Tmem::new();
        u.set(0, 0, 0);
        for _ in 0..(2 * MAX_LAYERS) {
            assert!(u.write_lazy(0, 1, 1, std::rc::Rc::new(Add(true))));
        }
        assert_eq!(u.get(0, 0), Some(0));
        u.set(1, 0, 0);
        for _ in 0..(2 * MAX_LAYERS) {
            assert!(u.write_lazy(0, 1, 0b10, std::rc::Rc::new(Add(true))));
        }
        assert_eq!(u.get(1, 0), Some(2 * MAX_LAYERS as u32 * 1000));
    }

    #[test]
    fn run_reads_see_cells_written_over_a_layer() {
        // A layer of lanes 0 and 1 over columns 8..16; lane 0's column 11 is then written:
        // a run read of lane 0 gives the layer's values around the stored one, as cell
        // reads would (Tmem::get), and lane 1 still reads the whole layer.
        let mut t = Tmem::new();
        assert!(t.write_lazy(8, 8, 0b11, std::rc::Rc::new(Add(false))));
        let mut run = [0u32; 8];
        assert!(t.get_run(1, 8, &mut run));
        assert_eq!(run, std::array::from_fn(|c| 1000 + c as u32));
        assert!(t.set(0, 11, 77));
        assert!(t.get_run(0, 8, &mut run));
        assert_eq!(run, [0, 1, 2, 77, 4, 5, 6, 7]);
        // From the written cell on, and with an `owned` mask: the same cells.
        let mut tail = [0u32; 6];
        assert!(t.get_run_in(t.owned_lanes(10, 15), 0, 10, &mut tail));
        assert_eq!(tail, [2, 77, 4, 5, 6, 7]);
        assert!(t.get_run(1, 8, &mut run));
        assert_eq!(run, std::array::from_fn(|c| 1000 + c as u32));
        // A lane no layer owns reads its stored cells (poison) either way.
        assert!(t.get_run_in(t.owned_lanes(8, 15), 2, 8, &mut run));
        assert_eq!(run, std::array::from_fn(|c| poison(2, 8 + c as u32)));
    }

    #[test]
    fn the_32x32b_shape_maps_thread_to_lane_and_register_to_column() {
        // Reference §2.6: for .32x32b, thread t holds lane (base+t), register i column (base+i).
        assert_eq!(cell_of(LdStShape::S32x32b, 5, 3, 0), (5, 3));
        // .16x32bx2: upper half-warp reads at the split offset.
        assert_eq!(cell_of(LdStShape::S16x32bx2, 17, 0, 8), (1, 8));
    }

    #[test]
    fn the_16_lane_shapes_map_threads_as_the_isa_figures() {
        // The figures' first rows (§9.7.16.2.3), by hand: .16x64b lane 0 holds T0 then T2,
        // lane 8 holds T1 then T3.
        assert_eq!(cell_of(LdStShape::S16x64b, 0, 0, 0), (0, 0));
        assert_eq!(cell_of(LdStShape::S16x64b, 2, 0, 0), (0, 1));
        assert_eq!(cell_of(LdStShape::S16x64b, 1, 0, 0), (8, 0));
        assert_eq!(cell_of(LdStShape::S16x64b, 4, 0, 0), (1, 0));
        // .16x128b: lane 0 holds register 0 of T0..T3, lane 8 their register 1.
        assert_eq!(cell_of(LdStShape::S16x128b, 3, 0, 0), (0, 3));
        assert_eq!(cell_of(LdStShape::S16x128b, 3, 1, 0), (8, 3));
        // .16x256b: lane 0 holds T0 r0 r1, T1 r0 r1, ...; lane 8 the same threads' r2 r3.
        assert_eq!(cell_of(LdStShape::S16x256b, 1, 1, 0), (0, 3));
        assert_eq!(cell_of(LdStShape::S16x256b, 1, 3, 0), (8, 3));
        assert_eq!(cell_of(LdStShape::S16x256b, 31, 0, 0), (7, 6));
        // .x2: register 4 of T0 is column 8 of lane 0.
        assert_eq!(cell_of(LdStShape::S16x256b, 0, 4, 0), (0, 8));
    }
}
