//! Performing asynchronous operations: a forced operation performs its predecessors first;
//! an ld fills its registers (or reduces them, `.red`), an st writes TMEM, an mma computes its
//! plan, a cp copies shared memory into TMEM lanes (with the `.warpx2`/`.warpx4` multicasts),
//! a shift moves rows; commits arrive when everything they track has performed.

use super::*;

impl<'p> Machine<'p> {
    /// [`Machine::force`] of `ids`, a list taken from [`Machine::force_buf`], which gets it
    /// back empty.
    pub(super) fn force_all(&mut self, mut ids: Vec<u32>) {
        self.force(&ids);
        ids.clear();
        self.force_buf = ids;
    }

    pub(super) fn force(&mut self, ids: &[u32]) {
        if self.policy == Policy::Adversarial {
            for &id in ids.iter().rev() {
                self.perform_with_preds(id);
            }
        } else {
            for &id in ids {
                self.perform_with_preds(id);
            }
        }
    }

    pub(super) fn perform_with_preds(&mut self, id: u32) {
        if self.ops[id as usize].done {
            return;
        }
        // An op's predecessors never change once it is issued.
        let mut k = 0;
        while let Some(&p) = self.ops[id as usize].preds.get(k) {
            self.perform_with_preds(p);
            k += 1;
        }
        self.perform(id);
    }

    pub(super) fn perform(&mut self, id: u32) {
        if self.ops[id as usize].done {
            return;
        }
        self.ops[id as usize].done = true;
        self.pending.retain(|&x| x != id);
        let w = self.ops[id as usize].warp;
        let c = self.warps[w].cta;
        {
            let wr = &mut self.warps[w];
            wr.pending_ld.retain(|&x| x != id);
            wr.pending_st.retain(|&x| x != id);
            wr.pending_mma.retain(|&x| x != id);
        }
        let kind = std::mem::replace(
            &mut self.ops[id as usize].kind,
            AKind::Shift {
                lane0: 0,
                col0: 0,
                both: false,
            },
        );
        match &kind {
            AKind::Ld { .. } => self.perform_ld(w, c, &kind),
            AKind::St { .. } => self.perform_st(c, &kind),
            AKind::Mma(plan) => self.perform_mma(c, plan),
            AKind::Cp { .. } => self.perform_cp(c, &kind),
            AKind::Shift { .. } => self.perform_shift(c, &kind),
        }
        self.ops[id as usize].kind = kind;
        self.check_trackers();
    }

    /// Performs an ld of warp `w` in CTA `c`: its registers get the cells' values.
    #[inline(never)]
    pub(super) fn perform_ld(&mut self, w: usize, c: usize, kind: &AKind) {
        let AKind::Ld {
            ld,
            lanes: lm,
            lane0,
            col0,
            split,
            form,
            nregs,
            snap,
        } = *kind
        else {
            return;
        };
        // A load hoisted above a wait (fence-noop fault) reads TMEM as it was then.
        let mut stash = if snap {
            self.warps[w].snapshot.take()
        } else {
            None
        };
        if let Some(t) = stash.as_mut() {
            std::mem::swap(&mut self.ctas[c].tmem, &mut **t);
        }
        let info = self.code.lds[ld as usize];
        let per = tmem::regs_per_rep(form.shape);
        let limit = if self.fault(Fault::LdNumTruncated) {
            per.min(nregs)
        } else {
            nregs
        };
        let pack = form.pack.is_some();
        let mut out = std::mem::take(&mut self.warps[w].regs[ld as usize]);
        let tm = &self.ctas[c].tmem;
        let mut outside = false;
        let run = lane_access(form.shape);
        // .16x32bx2 with a split small enough that no column arithmetic wraps: a run per
        // thread too.
        let bx2 = form.shape == LdStShape::S16x32bx2 && split <= 0xFFFF;
        // The lanes that lazy layers own in the columns `[lo, hi]` of the last run read
        // (`Tmem::owned_lanes`, one look per distinct run of columns): the other lanes read
        // their stored cells directly (`Tmem::get_run_in`).
        let mut owned_at = (u32::MAX, 0u32, 0u128);
        let mut owned = |lo: u32, n: u32| -> u128 {
            let hi = lo.saturating_add(n.max(1) - 1);
            if (owned_at.0, owned_at.1) != (lo, hi) {
                owned_at = (lo, hi, tm.owned_lanes(lo, hi));
            }
            owned_at.2
        };
        // The cells of a packed run (reused: its contents are overwritten before use).
        let mut cells = std::mem::take(&mut self.ld_cells);
        cells.resize(4 * 128, 0);
        // The lane of a lane offset in the warp's window (wrapping in the quarter).
        let lane_of = |lo: u32| lane0 - lane0 % 32 + (lane0 % 32 + lo) % 32;
        for t in lanes(lm) {
            let base = (t * info.words) as usize;
            let width = if pack { 2 * limit } else { limit };
            if (run || bx2) && width as usize <= cells.len() {
                // .16x32bx2: thread t's registers are the consecutive columns from its
                // half's offset (cell_of); the 32-lane shapes from column 0, in lane t.
                let (lo, off) = tmem::first_cell(form.shape, t, 0, split, pack);
                let lane = lane_of(lo);
                let c0 = col0 + off;
                let regs = out.get_mut(base..).unwrap_or_default();
                let n = (limit as usize).min(regs.len());
                if width > 0 && (lane >= tmem::LANES || c0 + width > tmem::COLS) {
                    outside = true;
                }
                if pack {
                    let cells = &mut cells[..2 * n];
                    let o = owned(c0, 2 * n as u32);
                    tm.get_run_in(o, lane, c0, cells);
                    for (slot, ab) in regs[..n].iter_mut().zip(cells.chunks_exact(2)) {
                        *slot = (ab[0] & 0xFFFF) | (ab[1] << 16);
                    }
                } else {
                    let o = owned(c0, n as u32);
                    tm.get_run_in(o, lane, c0, &mut regs[..n]);
                }
            } else {
                // Register by register: the 16-lane shapes spread a thread's registers over
                // two lanes (cell_of).
                let mut cell = |lane: u32, col: u32| {
                    tm.get(lane, col).unwrap_or_else(|| {
                        outside = true;
                        0
                    })
                };
                let regs = out.get_mut(base..).unwrap_or_default();
                for i in 0..limit {
                    let (lo, co) = tmem::first_cell(form.shape, t, i, split, pack);
                    let lane = lane_of(lo);
                    let v = if pack {
                        let a = cell(lane, col0.wrapping_add(co));
                        let b = cell(lane, col0.wrapping_add(co).wrapping_add(1));
                        (a & 0xFFFF) | (b << 16)
                    } else {
                        cell(lane, col0.wrapping_add(co))
                    };
                    if let Some(slot) = regs.get_mut(i as usize) {
                        *slot = v;
                    }
                }
            }
            if form.red {
                let n = nregs as usize;
                let r = out.get(base..base + n).map(|vals| reduce(&form, vals));
                if let (Some(r), Some(slot)) = (r, out.get_mut(base + n)) {
                    *slot = r;
                }
            }
        }
        self.ld_cells = cells;
        if outside {
            self.trap_range();
        }
        if let Some(mut t) = stash {
            std::mem::swap(&mut self.ctas[c].tmem, &mut *t);
            self.warps[w].snapshot = Some(t);
        }
        self.warps[w].regs[ld as usize] = out;
    }

    /// Performs an st into CTA `c`'s TMEM.
    #[inline(never)]
    pub(super) fn perform_st(&mut self, c: usize, kind: &AKind) {
        let AKind::St {
            lanes: lm,
            lane0,
            col0,
            split,
            form,
            nregs,
            seed,
        } = *kind
        else {
            return;
        };
        let unpack = form.pack.is_some();
        let mut ok = true;
        let window = lane0 - lane0 % 32;
        let run = lane_access(form.shape);
        // .16x32bx2 (split small enough that no column arithmetic wraps): thread t writes
        // the consecutive columns from its half's offset in lane t % 16 (cell_of).
        let bx2 = form.shape == LdStShape::S16x32bx2 && split <= 0xFFFF;
        let [mut vals, mut adds] = std::mem::take(&mut self.scratch);
        vals.clear();
        adds.clear();
        let tm = &mut self.ctas[c].tmem;
        // Every run of the op covers at most `[col0, col0 + 2 * nregs * 2)`; writes to cells no
        // layer owns leave the layers as they are: one look for the op.
        let owned = tm.owned_lanes(col0, col0.saturating_add(4 * nregs));
        for t in lanes(lm) {
            if run || bx2 {
                // st_value(seed, t, i) = t * mul + add_i (values.rs): the addends once per
                // operation.
                if adds.is_empty() {
                    adds.extend((0..nregs).map(|i| st_coeffs(seed, i).1));
                }
                let base = t.wrapping_mul(st_coeffs(seed, 0).0);
                vals.clear();
                if unpack {
                    for &add in &adds {
                        let v = base.wrapping_add(add);
                        vals.extend([v & 0xFFFF, v >> 16]);
                    }
                } else {
                    vals.extend(adds.iter().map(|&add| base.wrapping_add(add)));
                }
                if bx2 {
                    // Its columns may lie beyond `owned`'s: `set_run` looks itself.
                    let (lo, off) = tmem::first_cell(form.shape, t, 0, split, unpack);
                    let c0 = col0 + off;
                    ok &= tm.set_run(window + (lane0 % 32 + lo) % 32, c0, &vals);
                } else {
                    ok &= tm.set_run_in(owned, window + (lane0 % 32 + t) % 32, col0, &vals);
                }
                continue;
            }
            for i in 0..nregs {
                let (lo, co) = tmem::first_cell(form.shape, t, i, split, unpack);
                let lane = window + (lane0 % 32 + lo) % 32;
                let v = st_value(seed, t, i);
                if unpack {
                    ok &= tm.set(lane, col0.wrapping_add(co), v & 0xFFFF);
                    ok &= tm.set(lane, col0.wrapping_add(co).wrapping_add(1), v >> 16);
                } else {
                    ok &= tm.set(lane, col0.wrapping_add(co), v);
                }
            }
        }
        self.scratch = [vals, adds];
        if !ok {
            self.trap_range();
        }
    }

    /// Performs an MMA of CTA `c` (and its peer for `cta_group::2`).
    #[inline(never)]
    pub(super) fn perform_mma(&mut self, c: usize, plan: &MmaPlan) {
        let res = match self.peer(c).filter(|_| plan.pair()) {
            // cta_group::2: D in both CTAs of the pair, the even CTA first.
            Some(p) => {
                let (e, o) = if self.ctas[c].rank & 1 == 0 {
                    (c, p)
                } else {
                    (p, c)
                };
                let (lo, hi) = self.ctas.split_at_mut(e.max(o));
                let (x, y) = (&mut lo[e.min(o)], &mut hi[0]);
                let (even, odd) = if e < o { (x, y) } else { (y, x) };
                plan.perform_halves([
                    Some((&even.regions, &mut even.tmem)),
                    Some((&odd.regions, &mut odd.tmem)),
                ])
            }
            None if plan.pair() && self.ctas[c].rank & 1 == 1 => {
                let cta = &mut self.ctas[c];
                plan.perform_halves([None, Some((&cta.regions, &mut cta.tmem))])
            }
            None => {
                let cta = &mut self.ctas[c];
                plan.perform(&cta.regions, &mut cta.tmem)
            }
        };
        if let Err(e) = res {
            self.abort = Some(Outcome::NotRun(e.to_string()));
        }
    }

    /// Performs a cp from CTA `c`'s shared memory (and its peer's for `cta_group::2`).
    #[inline(never)]
    pub(super) fn perform_cp(&mut self, c: usize, kind: &AKind) {
        let AKind::Cp {
            desc,
            col0,
            rows,
            row_bytes,
            multicast,
            lane0,
            both,
            decomp,
        } = *kind
        else {
            return;
        };
        let mut targets = [Some(c), None];
        if both && let Some(p) = self.peer(c) {
            targets[1] = Some(p);
        }
        let lbo = u32::from(desc.lbo_enc) << 4;
        let sbo = u32::from(desc.sbo_enc) << 4;
        let mut ok = true;
        let n = (row_bytes / 4) as usize;
        let mut vals = [0u32; 8];
        for t in targets.into_iter().flatten() {
            let cta = &mut self.ctas[t];
            let region = &cta.regions[usize::from(desc.region)];
            let tm = &mut cta.tmem;
            // Writes to cells no layer owns leave the layers as they are: one look for the op.
            let owned = tm.owned_lanes(col0, col0.saturating_add(n as u32 - 1));
            for r in 0..rows {
                // Row r, byte b at offset + (r % 8) * 16 + (r / 8) * SBO + b % 16 + (b / 16) *
                // LBO (the crate documentation, OQ-29): each 16-byte chunk is 4 consecutive words from
                // its first byte's word (the address arithmetic wraps as a u32).
                let row = desc
                    .offset
                    .wrapping_add((r % 8) * 16)
                    .wrapping_add((r / 8) * sbo);
                for (c, chunk) in vals[..n].chunks_exact_mut(4).enumerate() {
                    let at = row.wrapping_add(c as u32 * lbo);
                    // A source word beyond the data region reads as 0 (documented in
                    // the crate documentation).
                    if at <= u32::MAX - 12 {
                        region.read_into((at / 4) as usize, chunk);
                    } else {
                        for (j, v) in chunk.iter_mut().enumerate() {
                            let addr = at.wrapping_add(4 * j as u32);
                            *v = region.get((addr / 4) as usize).unwrap_or(0);
                        }
                    }
                    if let Some(fmt) = decomp {
                        decomp::expand_unit(fmt, chunk);
                    }
                }
                for l in cp_lanes(multicast, lane0, r) {
                    ok &= tm.set_run_in(owned, l, col0, &vals[..n]);
                }
            }
        }
        if !ok {
            self.trap_range();
        }
    }

    /// Performs a shift in CTA `c` (and its peer for `cta_group::2`).
    #[inline(never)]
    pub(super) fn perform_shift(&mut self, c: usize, kind: &AKind) {
        let AKind::Shift { lane0, col0, both } = *kind else {
            return;
        };
        let mut targets = [Some(c), None];
        if both && let Some(p) = self.peer(c) {
            targets[1] = Some(p);
        }
        let mut ok = true;
        for t in targets.into_iter().flatten() {
            let tm = &mut self.ctas[t].tmem;
            let mut row = [0u32; 8];
            for l in (lane0..lane0 + 31).rev() {
                ok &= tm.get_run(l, col0, &mut row);
                ok &= tm.set_run(l + 1, col0, &row);
            }
        }
        if !ok {
            self.trap_range();
        }
    }

    pub(super) fn check_trackers(&mut self) {
        let mut i = 0;
        while i < self.trackers.len() {
            if self.trackers[i]
                .ops
                .iter()
                .all(|&o| self.ops[o as usize].done)
            {
                let t = self.trackers.swap_remove(i);
                if self.fault(Fault::CommitLostArrive) {
                    continue;
                }
                for (c, b) in t.targets {
                    self.arrive(c, b);
                }
            } else {
                i += 1;
            }
        }
    }

    #[cold]
    pub(super) fn trap_range(&mut self) {
        if self.abort.is_none() {
            self.abort = Some(Outcome::Trapped {
                kind: TrapKind::TmemOutOfRange,
                words: self.words.clone(),
            });
        }
    }
}

/// The TMEM lanes that row `r` of a cp lands in (reference §2.7: multicast copies a row into
/// one lane of several warps' quarters).
pub(super) fn cp_lanes(
    multicast: Option<CpMulticast>,
    l0: u32,
    r: u32,
) -> impl Iterator<Item = u32> {
    let (lanes, n): ([u32; 4], usize) = match multicast {
        Some(CpMulticast::Warpx4) => ([r % 32, 32 + r % 32, 64 + r % 32, 96 + r % 32], 4),
        Some(CpMulticast::Warpx2_02_13) => {
            let q = r / 32 % 2;
            ([32 * q + r % 32, 32 * (q + 2) + r % 32, 0, 0], 2)
        }
        Some(CpMulticast::Warpx2_01_23) => {
            let q = 2 * (r / 32 % 2);
            ([32 * q + r % 32, 32 * (q + 1) + r % 32, 0, 0], 2)
        }
        None => ([l0 + r, 0, 0, 0], 1),
    };
    lanes.into_iter().take(n)
}

/// The lanes set in `mask`, lowest first.
/// How the threads of an ld or st of `shape` with `n` registers meet TMEM lanes:
/// Whether thread t of `shape` uses lane t with its registers in consecutive columns (one
/// run of cells): the 32-lane shapes.
pub(super) fn lane_access(shape: LdStShape) -> bool {
    matches!(shape, LdStShape::S32x32b | LdStShape::S32x64b)
}

/// `ld.red`: min or max over the lane's loaded values (OQ-13: which columns and the NaN rules
/// are unstated; this reduces every register, as u32, s32 or f32 by the type).
pub(super) fn reduce(form: &LdForm, vals: &[u32]) -> u32 {
    let max = form.red_op == Some(RedOp::Max);
    // `.abs` (PTX ISA 9.3, §9.7.16.8.3): the reduction is over the absolute values, so the
    // result is one of them.
    let abs = |v: u32| {
        if form.ty == Ty::F32 && form.abs {
            v & 0x7FFF_FFFF
        } else {
            v
        }
    };
    // `.NaN`: a NaN input makes the result the canonical NaN.
    if form.ty == Ty::F32 && form.nan && vals.iter().any(|&v| f32::from_bits(v).is_nan()) {
        return 0x7FFF_FFFF;
    }
    let pick = |a: u32, b: u32| -> u32 {
        let gt = match form.ty {
            Ty::S32 => (a as i32) > (b as i32),
            Ty::F32 => f32::from_bits(a) > f32::from_bits(b),
            _ => a > b,
        };
        if gt == max { a } else { b }
    };
    vals.iter().map(|&v| abs(v)).reduce(pick).unwrap_or(0)
}
