//! The values writes put in cells: cp (every shape and multicast, §9.7.16.9.2), shift
//! (§9.7.16.9.3), st (§9.7.16.8.4), exact MMAs (`run::mma`), and the single-writer fast
//! paths of a read.

use super::*;

impl<'a> Ctx<'_, 'a> {
    /// The value the cp `w` wrote at (lane, col) of allocation `inst` (§9.7.16.9.2, reference
    /// §3.5): source row `row` lands in the lanes `cp_lanes` gives, its 32-bit words in
    /// consecutive columns; the row's 16-byte chunks are read through the descriptor in the
    /// K-major no-swizzle layout of the MMA operands (`mma::chunk_base`: core matrices of 8
    /// rows × 16 bytes, LBO between chunks of a row, SBO between groups of 8 rows, §9.7.16.4).
    /// A `::2` cp's peer copies its own shared memory into its own allocation (CP-PAIR,
    /// `CpVals::peer`).
    pub(super) fn cp_value(&self, w: &Acc<'_>, inst: u32, lane: u32, col: u32) -> Option<u32> {
        let cv = w.cp.as_ref()?;
        let Op::Cp { src, .. } = w.op else {
            return None;
        };
        let first = w.regions.first()?;
        let (own, data) = match cv.peer {
            _ if first.inst == inst => (first, cv.data),
            Some((pi, pd)) if pi == inst => (w.regions.iter().find(|r| r.inst == pi)?, pd),
            _ => return None,
        };
        if col < own.c0 {
            return None;
        }
        let row = cp_row(cv, lane)?;
        let j = col - own.c0;
        if j >= cv.row_bytes / 4 {
            return None;
        }
        let word = |at: u64| {
            // A word across two source words, or beyond the data region: not modelled.
            (at.is_multiple_of(4) && at + 4 <= u64::from(data.bytes))
                .then(|| values::fill_word(data.elem, data.seed, (at / 4) as u32))
        };
        let base = mma::chunk_base(src, row, u64::from(j / 4));
        match cv.decomp {
            None => word(base + u64::from(4 * (j % 4))),
            // Decompression: the whole 16-byte source unit of the chunk (`decomp`).
            Some(fmt) => {
                let mut unit = 0u128;
                for k in 0..4 {
                    unit |= u128::from(word(base + 4 * k)?) << (32 * k);
                }
                Some(decomp::decompress_word(fmt, unit, j % 4))
            }
        }
    }

    /// Records what a cp's values need, if they are known: a source region filled once and
    /// fenced into the async proxy before it (MCM-PROXY, as for MMA operands), a descriptor
    /// the K-major no-swizzle layout reads, the multicast its shape requires (CP-MULTICAST),
    /// and both decompression formats or neither (CP-DECOMP-FMT; `.b8x16` with `.b6x16_p32`
    /// / `.b4x16_p64` expands each 16-byte source unit into the same columns, [`decomp`]).
    pub(super) fn cp_values(&mut self, ai: usize) {
        let acc = &self.accs[ai];
        let Op::Cp { form, taddr, src } = acc.op else {
            return;
        };
        let decomp = match (form.dst_fmt, form.src_fmt) {
            (None, None) => None,
            (Some(CpDstFmt::B8x16), Some(fmt)) => Some(fmt),
            _ => return,
        };
        if src.swizzle != 0
            || src.lbo_abs
            || src.base_offset != 0
            || src.fixed != 1
            || src.reserved != 0
            || self.poisoned[self.cta(acc.g) as usize]
        {
            return;
        }
        let (rows, row_bytes) = match (form.shape, form.multicast) {
            (CpShape::S128x256b, None) => (128, 32),
            (CpShape::S4x256b, None) => (4, 32),
            (CpShape::S128x128b, None) => (128, 16),
            (CpShape::S64x128b, Some(CpMulticast::Warpx2_02_13 | CpMulticast::Warpx2_01_23)) => {
                (64, 16)
            }
            (CpShape::S32x128b, Some(CpMulticast::Warpx4)) => (32, 16),
            _ => return,
        };
        let Some((_, lane, _)) = self.resolve(taddr, acc.g, acc.i) else {
            return;
        };
        let Some(data) = self.region_data(acc, src.region) else {
            return;
        };
        // `::2`: the peer's allocation (the second region) and its CTA's source data.
        let peer = acc.regions.into_iter().nth(1).and_then(|r| {
            let cta = self.a.insts[r.inst as usize].cta;
            (form.cta_group == CtaGroup::Two && !self.poisoned[cta as usize])
                .then(|| self.region_data_in(acc, src.region, cta))
                .flatten()
                .map(|d| (r.inst, d))
        });
        self.accs[ai].cp = Some(CpVals {
            data,
            multicast: form.multicast,
            lane,
            rows,
            row_bytes,
            peer,
            decomp,
        });
        self.accs[ai].known = true;
    }

    /// Reads the rows a shift moves (§9.7.16.9.3, reference §3.6: the `.31x256b` matrix at
    /// `taddr`, 32-byte rows, each row but the last moved down by one lane): rows 0..31 of
    /// lanes `[l, l + 31)`, 8 columns, as an ld would read them at this point of the
    /// processing order. The races of that read are the shift's (cited by the lds of what it
    /// wrote, like an MMA's A read). A `cta_group::2` shift moves the same matrix in both CTAs
    /// of the pair (reference §3.6, "`::2` shifts in both CTAs"; like CP-PAIR, each CTA's
    /// rows stay in that CTA): the peer's rows, read the same way from its paired allocation
    /// (the second region), follow the issuing CTA's in `shifted`.
    pub(super) fn shift_values(&mut self, ai: usize, sc: &mut Scratch) {
        let regions = self.accs[ai].regions;
        if regions.first().is_none() {
            return;
        }
        let mut old: Vec<Option<u32>> = Vec::with_capacity(2 * 31 * 8);
        for (h, r) in regions.iter().copied().enumerate() {
            let cta = self.a.insts[r.inst as usize].cta as usize;
            if r.l1 != r.l0 + 32 || r.c1 != r.c0 + 8 || (h > 0 && self.poisoned[cta]) {
                // Clamped at the allocation's edge: not the documented shape.
                if h == 0 {
                    return;
                }
                old.resize(2 * 31 * 8, None);
                continue;
            }
            let rect = (r.l0, r.l0 + 31, r.c0, r.c1);
            self.plan(ai, r.inst, rect, sc);
            let mut buf = Vec::new();
            let races = self.cells(r.inst, rect, sc, &mut buf);
            for &wi in &sc.writers {
                self.accs[ai].in_races.0 |= self.accs[wi].in_races.0;
            }
            self.accs[ai].in_races.0 |= races.0;
            if sc.unknown || buf.len() != 31 * 8 {
                if h == 0 {
                    return;
                }
                old.resize(2 * 31 * 8, None);
                continue;
            }
            old.extend(buf.iter().map(|w| match w {
                WordExpect::Exact(v) => Some(*v),
                _ => None,
            }));
        }
        self.accs[ai].shifted = Some(old.into_boxed_slice());
        self.accs[ai].known = true;
    }

    /// The low 16 bits of the cell (lane, col) of allocation `inst` as `w` wrote it (what a
    /// `.pack::16b` ld reads of it, §9.7.16.8.2): the 16-bit half an `.unpack::16b` st put
    /// there, else the low half of [`Ctx::value_at`].
    pub(super) fn half_at(&self, w: &Acc<'_>, inst: u32, lane: u32, col: u32) -> Option<u32> {
        match w.op {
            Op::St { seed, form, .. } if w.known && form.pack.is_some() => {
                let (t, reg) = self.st_owner(w, inst, lane, col)?;
                let r = w.regions.iter().find(|r| r.inst == inst)?;
                let half = (col - r.c0) % 2;
                Some(values::st_value(*seed, t, reg) >> (16 * half) & 0xFFFF)
            }
            _ => self.value_at(w, inst, lane, col).map(|v| v & 0xFFFF),
        }
    }

    /// [`Ctx::value_at`], or [`Ctx::half_at`] when `half`.
    pub(super) fn cell_value(
        &self,
        w: &Acc<'_>,
        inst: u32,
        lane: u32,
        col: u32,
        half: bool,
    ) -> Option<u32> {
        if half {
            self.half_at(w, inst, lane, col)
        } else {
            self.value_at(w, inst, lane, col)
        }
    }

    /// The (thread, register) of the st `w` that wrote (lane, col) of allocation `inst`
    /// (`ldst::owner`; the region that covers the cell is the `.16x32bx2` half).
    pub(super) fn st_owner(
        &self,
        w: &Acc<'_>,
        inst: u32,
        lane: u32,
        col: u32,
    ) -> Option<(u32, u32)> {
        let Op::St { form, .. } = w.op else {
            return None;
        };
        let (half, r) = w
            .regions
            .iter()
            .enumerate()
            .find(|(_, r)| r.inst == inst && r.covers(lane, col))?;
        let co = col - r.c0;
        let ucol = if form.pack.is_some() { co / 2 } else { co };
        Some(ldst::owner(
            form.shape,
            ldst::Cell {
                half,
                lane: lane - r.l0,
                col: ucol,
            },
        ))
    }

    /// The value an exact MMA `w` wrote at (row, col) of its D in allocation `inst`: `None`
    /// if unknown.
    pub(super) fn mma_value(&self, w: &Acc<'_>, inst: u32, row: u32, col: u32) -> Option<u32> {
        let m = w.mma.as_ref()?;
        if m.ashift && row == 0 {
            return None;
        }
        let old = m.old_for(inst).and_then(|o| self.old_cell(w, o, row, col));
        if m.dol
            .get((row / 32) as usize)
            .is_some_and(|x| x >> (row % 32) & 1 == 1)
        {
            // Not written: the lane keeps its old value (read at the MMA, `Ctx::finish_mma_values`).
            return old;
        }
        // The old value is the cell's (physical); the product is D's (row, column) that the
        // data-path layout puts there (`dp_layout`).
        let (r, c) = m.logical(row, col);
        m.prepared(inst).cell(r, c, old)
    }

    /// The old value of D cell (row, col) the MMA `x` read (enable-input-d): the cell's
    /// only candidate when it has one value, as [`Ctx::cells`] gives it at `x`'s position.
    pub(super) fn old_cell(&self, x: &Acc<'_>, o: &OldD, row: u32, col: u32) -> Option<u32> {
        if row >= 128 || col >= o.n {
            return None;
        }
        if let Some(&v) = o
            .memo
            .borrow()
            .get(row as usize)
            .and_then(|r| r.get(col as usize))
            && v != OldD::UNREAD
        {
            return (v != OldD::UNKNOWN).then_some(v as u32);
        }
        let (l, c, inst) = (row, o.c0 + col, o.inst);
        // A 16-bit D writer states only the low halves: known to a reader that reads only
        // them (`OldD::low16`).
        let value = |w: &Acc<'_>| {
            if low16(w) && !o.low16 {
                None
            } else {
                self.value_as_of(w, inst, l, c, x.pos)
            }
        };
        if let Some(wi) = o.single {
            let v = value(&self.accs[wi]);
            o.memo_row(row)[col as usize] = v.map_or(OldD::UNKNOWN, u64::from);
            return v;
        }
        let covers = |wi: usize| {
            self.accs[wi]
                .regions
                .iter()
                .any(|r| r.write && r.inst == inst && r.covers(l, c))
        };
        let k = o.writers.len();
        let mut val: Option<Option<u32>> = None;
        let mut add = |v: Option<u32>| match val {
            None => val = Some(v),
            Some(Some(p)) if v == Some(p) => {}
            _ => val = Some(None),
        };
        let mut covered = false;
        for &a in &o.before {
            if !covers(o.writers[a]) {
                continue;
            }
            covered = true;
            let maximal = !o
                .before
                .iter()
                .any(|&b| b != a && o.ord[a * k + b] && covers(o.writers[b]));
            if maximal {
                add(value(&self.accs[o.writers[a]]));
            }
        }
        if !covered {
            // Never written in this allocation (OQ-9): unspecified.
            add(None);
        }
        for &wi in &o.race {
            if covers(wi) {
                add(value(&self.accs[wi]));
            }
        }
        let v = val.flatten();
        o.memo_row(row)[col as usize] = v.map_or(OldD::UNKNOWN, u64::from);
        v
    }

    /// If the read planned in `sc` has one write ordered before it, covering the whole
    /// rectangle, with known st values, and nothing racing: its values, lane-major.
    pub(super) fn single_st(
        &self,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &Scratch,
        adds: &mut Vec<u32>,
    ) -> Option<Vec<u32>> {
        if !sc.race.is_empty() || sc.before.len() != 1 {
            return None;
        }
        let w = &self.accs[sc.writers[sc.before[0]]];
        let Op::St { seed, .. } = w.op else {
            return None;
        };
        let wr = w.regions.iter().find(|x| x.inst == inst)?;
        if !(w.known
            && st_plain(w.op)
            && wr.write
            && wr.l0 <= l0
            && wr.l1 >= l1
            && wr.c0 <= c0
            && wr.c1 >= c1)
        {
            return None;
        }
        // `st_value(seed, lane, reg)` is `lane * mul + add(reg)` (wrapping; the coefficients
        // the printer emits, `values::st_coeffs`): one coefficient pair per column, then one
        // multiply-add per word, written in place.
        let (mul, _) = values::st_coeffs(*seed, 0);
        adds.clear();
        adds.extend((c0..c1).map(|c| values::st_coeffs(*seed, c - wr.c0).1));
        let n = (c1 - c0) as usize;
        let mut v = vec![0u32; (l1 - l0) as usize * n];
        let adds = &adds[..n];
        let lanes = (l0 - wr.l0)..(l1 - wr.l0);
        match n {
            1 => fill_rows::<1>(&mut v, adds, lanes, mul),
            2 => fill_rows::<2>(&mut v, adds, lanes, mul),
            4 => fill_rows::<4>(&mut v, adds, lanes, mul),
            _ => fill_rows_any(&mut v, adds, lanes, mul),
        }
        debug_assert!((l0..l1).all(|l| {
            (c0..c1).all(|c| {
                v[(l - l0) as usize * n + (c - c0) as usize]
                    == values::st_value(*seed, l - wr.l0, c - wr.c0)
            })
        }));
        Some(v)
    }

    /// If the read planned in `sc` has one write ordered before it, an exact MMA covering the
    /// whole rectangle (32 lanes), nothing racing, and the MMA's value is known at every cell
    /// of the lanes in `mask`: the words of an ld record, lane-major (0 for lanes outside
    /// `mask`), as [`Ctx::cells`] and [`ld_expect`] give them.
    /// If the read planned in `sc` has one write ordered before it, covering the whole
    /// rectangle, nothing racing, and every value known (a st of any shape, a cp, a shift: no
    /// MMA, see [`Ctx::single_mma`]): the values, lane-major (the low halves when `half`).
    /// What [`Ctx::cells`] gives then, without a candidate list per cell.
    pub(super) fn single_known(
        &self,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &Scratch,
        half: bool,
    ) -> Option<Vec<u32>> {
        if !sc.race.is_empty() || sc.before.len() != 1 {
            return None;
        }
        let w = &self.accs[sc.writers[sc.before[0]]];
        if matches!(w.op, Op::Mma(_)) || !self.may_know(w) {
            return None;
        }
        let full = w.regions.iter().any(|x| {
            x.write && x.inst == inst && x.l0 <= l0 && x.l1 >= l1 && x.c0 <= c0 && x.c1 >= c1
        });
        if !full {
            return None;
        }
        let width = c1 - c0;
        if let Op::St { seed, form, .. } = w.op {
            // Cell by cell, inline: the (thread, register) that wrote it (`ldst::owner`) and
            // its `st_value`.
            let unpack = form.pack.is_some();
            if unpack && !half {
                // The upper halves are not shown (OQ-10).
                return None;
            }
            let (mul, _) = values::st_coeffs(*seed, 0);
            let regions = [w.regions.r[0], w.regions.r[1]];
            let mut v = Vec::with_capacity(((l1 - l0) * width) as usize);
            for l in l0..l1 {
                for c in c0..c1 {
                    let (h, r) = regions.iter().enumerate().find_map(|(h, r)| {
                        r.filter(|r| r.inst == inst && r.covers(l, c))
                            .map(|r| (h, r))
                    })?;
                    let co = c - r.c0;
                    let cell = ldst::Cell {
                        half: h,
                        lane: l - r.l0,
                        col: if unpack { co / 2 } else { co },
                    };
                    let (t, reg) = ldst::owner(form.shape, cell);
                    let val = t.wrapping_mul(mul).wrapping_add(values::st_add(*seed, reg));
                    v.push(if unpack {
                        val >> (16 * (co % 2)) & 0xFFFF
                    } else if half {
                        val & 0xFFFF
                    } else {
                        val
                    });
                }
            }
            return Some(v);
        }
        let mut v = Vec::with_capacity(((l1 - l0) * width) as usize);
        for l in l0..l1 {
            for c in c0..c1 {
                v.push(self.cell_value(w, inst, l, c, half)?);
            }
        }
        Some(v)
    }

    pub(super) fn single_mma(
        &self,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &Scratch,
        mask: u32,
    ) -> Option<Vec<u32>> {
        if !sc.race.is_empty() || sc.before.len() != 1 || l1 - l0 != 32 {
            return None;
        }
        let w = &self.accs[sc.writers[sc.before[0]]];
        // A 16-bit D is not exact as whole words (MMA-D-UNPACKED): the general path.
        if !matches!(w.op, Op::Mma(_)) || w.mma.is_none() || low16(w) {
            return None;
        }
        let full = w.regions.iter().any(|x| {
            x.write && x.inst == inst && x.l0 <= l0 && x.l1 >= l1 && x.c0 <= c0 && x.c1 >= c1
        });
        let r = w.regions.iter().find(|r| r.inst == inst)?;
        if !full {
            return None;
        }
        let n = (c1 - c0) as usize;
        let mut v = vec![0u32; 32 * n];
        for (t, row) in v.chunks_exact_mut(n.max(1)).enumerate() {
            if mask >> t & 1 == 0 {
                continue;
            }
            let l = l0 + t as u32;
            self.mma_row(w, inst, l - r.l0, c0 - r.c0..c1 - r.c0, &mut row[..n])?;
        }
        Some(v)
    }

    /// [`Ctx::mma_value`] of the cells (`row`, c) of the exact MMA `w`'s D for `c` in `cols`,
    /// into `out`; `None` as soon as one of them is `None` (callers then drop the row). A row
    /// at a time: the row of A and the columns of B fetched once, and the old D row (MMA-ENABLE-D)
    /// read once ([`Ctx::old_row`]).
    pub(super) fn mma_row(
        &self,
        w: &Acc<'_>,
        inst: u32,
        row: u32,
        cols: std::ops::Range<u32>,
        out: &mut [u32],
    ) -> Option<()> {
        let m = w.mma.as_ref()?;
        if m.ashift && row == 0 {
            return None;
        }
        // MMA-DOL-SEM: a lane whose bit is set keeps its old value (known only when
        // enable-input-d read it).
        let kept = m
            .dol
            .get((row / 32) as usize)
            .is_some_and(|x| x >> (row % 32) & 1 == 1);
        // D's row and columns in this lane (`dp_layout`: a lane holds consecutive columns of
        // one row of D).
        let (r, c0) = m.logical(row, cols.start);
        let logical = c0..c0 + cols.len() as u32;
        let Some(o) = m.old_for(inst) else {
            return if kept {
                None
            } else {
                m.prepared(inst).row_cells(r, logical, out)
            };
        };
        const MAX: usize = 128;
        if cols.len() > MAX {
            for (x, c) in out.iter_mut().zip(cols) {
                *x = self.mma_value(w, inst, row, c)?;
            }
            return Some(());
        }
        if kept {
            return self.old_row(w, o, row, cols, out);
        }
        let mut old = [0u32; MAX];
        let old = &mut old[..cols.len()];
        self.old_row(w, o, row, cols, old)?;
        m.prepared(inst).row_cells_old(r, logical, Some(old), out)
    }

    /// [`Ctx::old_cell`] of the cells (`row`, c) for `c` in `cols`, into `out`; `None` as
    /// soon as one of them is `None`. With one write before the MMA covering its old D
    /// (`OldD::single`), that write's row is read at once (an MMA's through
    /// [`Ctx::mma_row`]) and kept in the memo; otherwise cell by cell.
    pub(super) fn old_row(
        &self,
        x: &Acc<'_>,
        o: &OldD,
        row: u32,
        cols: std::ops::Range<u32>,
        out: &mut [u32],
    ) -> Option<()> {
        let by_cell = |out: &mut [u32], cols: std::ops::Range<u32>| {
            for (v, c) in out.iter_mut().zip(cols) {
                *v = self.old_cell(x, o, row, c)?;
            }
            Some(())
        };
        let (Some(wi), true) = (o.single, row < 128 && cols.end <= o.n) else {
            return by_cell(out, cols);
        };
        let span = cols.start as usize..cols.end as usize;
        if let Some(known) = o
            .memo
            .borrow()
            .get(row as usize)
            .and_then(|r| r.get(span.clone()))
            && known.iter().all(|&v| v < OldD::UNKNOWN)
        {
            for (v, &k) in out.iter_mut().zip(known) {
                *v = k as u32;
            }
            return Some(());
        }
        // What `value_as_of` gives each cell (lane `row`, column `o.c0 + c`) of write `wi`.
        let w = &self.accs[wi];
        let r = w.regions.iter().find(|r| r.inst == o.inst)?;
        match w.op {
            Op::St { .. } if !st_plain(w.op) => return by_cell(out, cols),
            Op::St { seed, .. } if w.known => {
                for (v, c) in out.iter_mut().zip(cols) {
                    *v = values::st_value(*seed, row - r.l0, o.c0 + c - r.c0);
                }
            }
            Op::Mma(_) if low16(w) && !o.low16 => return None,
            Op::Mma(_) if w.pos < x.pos => {
                let (s, e) = (o.c0 + cols.start - r.c0, o.c0 + cols.end - r.c0);
                self.mma_row(w, o.inst, row - r.l0, s..e, out)?;
            }
            _ => return None,
        }
        for (m, &v) in o.memo_row(row)[span].iter_mut().zip(out.iter()) {
            *m = u64::from(v);
        }
        Some(())
    }
}
