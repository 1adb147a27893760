//! The operands of an exact MMA read once per MMA (`run::mma::Prepared`), from shared memory
//! or from TMEM (§9.7.16.10, "[a-tmem]"), with the writes an A in TMEM races with.

use super::*;

impl<'a> Ctx<'_, 'a> {
    /// Prepares the values an exact MMA writes (computed per cell when read).
    pub(super) fn mma_values(&mut self, ai: usize, sc: &mut Scratch) {
        // A read from TMEM (§3.7 "[a-tmem]"): the writes it races with (an st not waited and
        // published, MCM-XTHREAD-NONPIPE; the issuer's own st without wait::st,
        // MCM-ST-BEFORE-USE; ...), cited by every ld of what this MMA wrote.
        // Its cells, when every one is known (A's rows: [`mma::tmem_a_row`]).
        let mut a_cells: Option<Vec<u32>> = None;
        if let Some(r) = self.accs[ai].a_read {
            let rect = (r.l0, r.l1, r.c0, r.c1);
            self.plan(ai, r.inst, rect, sc);
            // A's values are read only for an MMA whose result may be exact (the checks
            // below, before the operands): the others need only the races.
            let acc = &self.accs[ai];
            let may_be_exact = match acc.op {
                Op::Mma(m) => {
                    self.opts.figure_layouts
                        && acc.issuer.count_ones() == 1
                        && (mma::exact_shape(m).is_some()
                            || mma::pair_shape(m).is_some()
                            || crate::run::mma_sparse::sparse_form(m).is_ok())
                        && acc.regions.first().is_some_and(|d| d.l0 == 0)
                        && !self.poisoned[self.cta(acc.g) as usize]
                }
                _ => false,
            };
            let exact_a = may_be_exact && r.l0 == 0 && r.l1 == 128 && r.c1 == r.c0 + 8;
            let direct = if exact_a {
                self.single_known(r.inst, rect, sc, false)
            } else {
                None
            };
            let mut buf = Vec::new();
            let races = if direct.is_some() || !exact_a {
                self.cells_or_races(r.inst, rect, sc, None, false)
            } else {
                self.cells_or_races(r.inst, rect, sc, Some(&mut buf), false)
            };
            self.accs[ai].in_races = races;
            if direct.is_some() {
                a_cells = direct;
            } else if exact_a && !sc.unknown {
                a_cells = buf
                    .iter()
                    .map(|w| match w {
                        WordExpect::Exact(v) => Some(*v),
                        _ => None,
                    })
                    .collect();
            }
        }
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else { return };
        if m.form.block_scale {
            self.scaled_values(ai, sc);
            return;
        }
        if m.form.sp {
            self.sparse_values(ai, a_cells.as_deref(), sc);
            return;
        }
        if m.form
            .collector
            .is_some_and(|c| matches!(c.op, CollectorOp::Use | CollectorOp::Lastuse))
            && !self.collector_holds_a(ai)
        {
            return;
        }
        if self.opts.figure_layouts && acc.issuer.count_ones() == 1 && mma::pair_shape(m).is_some()
        {
            self.pair_values(ai, a_cells, sc);
            return;
        }
        if !self.opts.figure_layouts
            || acc.issuer.count_ones() != 1
            || mma::exact_shape(m).is_none()
        {
            return;
        }
        let Some(r) = acc.regions.first().copied() else {
            return;
        };
        if r.l0 != 0 || self.poisoned[self.cta(acc.g) as usize] {
            return;
        }
        // The region is D's footprint in its data-path layout (`dp_layout`: N / blocks
        // columns).
        let n = r.c1 - r.c0;
        let (_, nn) = mma::exact_shape(m).expect("checked");
        let fold = dp_layout::d_fold(m).unwrap_or(dp_layout::Fold::NONE);
        if n != fold.cols(nn) || (fold != dp_layout::Fold::NONE && r.l1 != 128) {
            return;
        }
        let Some(b) = self.region_data(acc, m.b.region) else {
            return;
        };
        let a = match &m.a {
            MmaA::Desc(ad) => self.region_data(acc, ad.region),
            MmaA::Tmem(_) => None,
        };
        let p = match (&m.a, a, a_cells) {
            (MmaA::Desc(_), Some(a), _) => self.prepared_for(m, a, b),
            (MmaA::Tmem(_), _, Some(cells)) => {
                // A from TMEM: row m in lane m (`a_read`), 8 cells per row.
                let d = m.idesc;
                let (alt, neg) = (d >> 7 & 7 == 1, d >> 13 & 1 == 1);
                let mut arow = Vec::with_capacity(128 * 32);
                let ok = cells
                    .chunks_exact(8)
                    .all(|row| mma::tmem_a_row(m.form.kind, alt, neg, row, &mut arow).is_some());
                if m.form.ashift {
                    // `.ashift` (§9.7.16.10.9.1, reference §3.7): A's rows move down by one, so
                    // D row m uses A row m - 1; what row 0 uses is not stated
                    // (`MmaVals::ashift`: D row 0 is unspecified).
                    let kk = arow.len() / 128;
                    arow.copy_within(..127 * kk, kk);
                }
                ok.then(|| mma::prepare_tmem_a(m, arow, &b).map(std::rc::Rc::new))
                    .flatten()
            }
            _ => None,
        };
        let Some(p) = p else {
            return;
        };
        self.finish_mma_values(ai, p, sc);
    }

    /// The values of an exact `cta_group::2` MMA ([`mma::pair_shape`]): D in both CTAs of the
    /// pair, each CTA's rows from its own A and the B halves of the even and odd CTAs
    /// ([`mma::prepare_pair`]); every region of both CTAs filled and fenced before the issue.
    /// With A in TMEM (M = 256), `a_cells` are the issuing CTA's A cells (lanes 0..128 × 8
    /// columns, when each is known) and the peer's are read here the same way
    /// ([`Ctx::tmem_a_cells`]).
    fn pair_values(&mut self, ai: usize, a_cells: Option<Vec<u32>>, sc: &mut Scratch) {
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else { return };
        let Some((rows, n)) = mma::pair_shape(m) else {
            return;
        };
        // Layout A (M = 256) or B (M = 128, `dp_layout`): N or N / 2 columns of each CTA.
        let fold = dp_layout::Fold { rows };
        let regions: Vec<Region> = acc.regions.into_iter().copied().collect();
        let [own, peer] = regions[..] else {
            return;
        };
        let cta = |inst: u32| self.a.insts[inst as usize].cta;
        let (c_own, c_peer) = (cta(own.inst), cta(peer.inst));
        let fits = |r: &Region| r.l0 == 0 && r.l1 == 128 && r.c1 - r.c0 == fold.cols(n);
        if own.inst == peer.inst
            || c_own / 2 != c_peer / 2
            || !fits(&own)
            || !fits(&peer)
            || self.poisoned[c_own as usize]
            || self.poisoned[c_peer as usize]
        {
            return;
        }
        let data = |c: u32, region: u8| self.region_data_in(acc, region, c);
        let (even, odd) = if c_own % 2 == 0 {
            (c_own, c_peer)
        } else {
            (c_peer, c_own)
        };
        let (Some(b0), Some(b1)) = (data(even, m.b.region), data(odd, m.b.region)) else {
            return;
        };
        let (p_own, p_peer) = match &m.a {
            MmaA::Desc(ad) => {
                let prep = |c: u32| {
                    let a = data(c, ad.region)?;
                    mma::prepare_pair(m, &a, [&b0, &b1]).map(std::rc::Rc::new)
                };
                (prep(c_own), prep(c_peer))
            }
            MmaA::Tmem(_) => {
                // CTA h's A rows from its own TMEM: the peer's cells at the same lanes and
                // columns of its half of the pair allocation.
                let Some(r) = acc.a_read else { return };
                let Some(peer_a) = self.a.insts[r.inst as usize].peer else {
                    return;
                };
                let rect = (r.l0, r.l1, r.c0, r.c1);
                let peer_cells = self.tmem_a_cells(ai, peer_a, rect, sc);
                let acc = &self.accs[ai];
                let Op::Mma(m) = acc.op else { return };
                let prep = |cells: Option<Vec<u32>>| {
                    let mut cells = cells?;
                    if rows == 64 {
                        // Layout B (M = 128): A's 64 rows duplicated over the lane halves
                        // (`mma::pair_shape`), or not exact.
                        let (lo, hi) = cells.split_at(64 * 8);
                        if lo != hi {
                            return None;
                        }
                        cells.truncate(64 * 8);
                    }
                    let d = m.idesc;
                    let (alt, neg) = (d >> 7 & 7 == 1, d >> 13 & 1 == 1);
                    let mut arow = Vec::with_capacity(128 * 32);
                    for row in cells.chunks_exact(8) {
                        mma::tmem_a_row(m.form.kind, alt, neg, row, &mut arow)?;
                    }
                    if m.form.ashift {
                        // `.ashift` in each CTA's rows (`mma::pair_shape`): D row m uses A
                        // row m - 1; D row 0 is unspecified (`MmaVals::ashift`).
                        let kk = arow.len() / 128;
                        arow.copy_within(..127 * kk, kk);
                    }
                    mma::prepare_pair_rows(m, arow, [&b0, &b1]).map(std::rc::Rc::new)
                };
                (prep(a_cells), prep(peer_cells))
            }
        };
        let (Some(p_own), Some(p_peer)) = (p_own, p_peer) else {
            return;
        };
        // MMA-ENABLE-D: each CTA's D cells are its own old values.
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else { return };
        let (old, peer_old) = if m.enable_input_d {
            (
                Some(self.old_d(ai, own, sc)),
                Some(self.old_d(ai, peer, sc)),
            )
        } else {
            (None, None)
        };
        self.accs[ai].mma = Some(Box::new(MmaVals {
            p: p_own,
            peer: Some((peer.inst, p_peer)),
            old,
            peer_old,
            dol: [0; 4],
            ashift: m.form.ashift,
            fold,
        }));
        self.accs[ai].known = true;
    }

    /// Whether the `collector::a` buffer that MMA `ai` (`::use` / `::lastuse`) reads holds its
    /// own A operand, so that its values are those of A read from memory (§9.7.16.10.9.1:
    /// `::fill` reads A from memory into the buffer, `::use` keeps it, `::lastuse` and
    /// `::discard` drop it). Walking back through the MMAs of the issuing warp (one issuing
    /// lane, MMA-SINGLE-THREAD): only `::use` MMAs of the same A descriptor down to a `::fill`
    /// of it, with A's shared-memory data the same at that fill as now; no `.ws` MMA in
    /// between (another family of buffers), and no other warp of the CTA or its pair filling
    /// the buffer. A in TMEM is not followed (its cells may change in between).
    pub(super) fn collector_holds_a(&self, ai: usize) -> bool {
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else { return false };
        let MmaA::Desc(ad) = &m.a else { return false };
        if m.form.ws {
            // `.ws` buffers hold B (`collector::b0..b3`): not followed.
            return false;
        }
        let Some(now) = self.region_data(acc, ad.region) else {
            return false;
        };
        let cta = self.cta(acc.g);
        let fills_a = |x: &Acc<'_>| matches!(x.op, Op::Mma(o) if o.form.collector.is_some_and(|c| c.op == CollectorOp::Fill));
        let foreign = self
            .accs
            .iter()
            .any(|x| x.g != acc.g && self.cta(x.g) / 2 == cta / 2 && fills_a(x));
        if foreign || acc.issuer.count_ones() != 1 {
            return false;
        }
        for x in self.accs.iter().rev() {
            if x.g != acc.g || x.i >= acc.i || x.kind != Kind::Mma {
                continue;
            }
            let Op::Mma(o) = x.op else { return false };
            let op = o.form.collector.map(|c| c.op);
            if o.form.ws || x.issuer != acc.issuer || o.a != m.a {
                return false;
            }
            match op {
                Some(CollectorOp::Use) => {}
                Some(CollectorOp::Fill) => return self.region_data(x, ad.region) == Some(now),
                _ => return false,
            }
        }
        false
    }

    /// The cells of A in TMEM that MMA `ai` reads from allocation `inst` over `rect` (lanes
    /// 0..128 × 8 columns), lane-major, when each has one value known at the MMA's issue and
    /// nothing races with the read; `None` otherwise (the values are then not exact; a race
    /// on the issuing CTA's cells is cited through `a_read`, the peer's is not).
    pub(super) fn tmem_a_cells(
        &self,
        ai: usize,
        inst: u32,
        rect: (u32, u32, u32, u32),
        sc: &mut Scratch,
    ) -> Option<Vec<u32>> {
        if rect.0 != 0 || rect.1 != 128 || rect.3 != rect.2 + 8 {
            return None;
        }
        self.known_cells(ai, inst, rect, sc)
    }

    /// [`mma::prepare`] of an MMA with A in shared memory, reused for an MMA issued again with
    /// the same operands and data (a loop, a chain accumulating into one D).
    pub(super) fn prepared_for(
        &mut self,
        m: &'a Mma,
        a: RegionData,
        b: RegionData,
    ) -> Option<std::rc::Rc<mma::Prepared>> {
        // `prepare` depends on these operands and the two regions' data only: an MMA issued
        // again with the same ones (a loop, a chain accumulating into one D) reuses it.
        let same = |(m2, a2, b2): &(&Mma, RegionData, RegionData)| {
            *a2 == a
                && *b2 == b
                && m2.form == m.form
                && m2.a == m.a
                && m2.b == m.b
                && m2.idesc == m.idesc
                && m2.enable_input_d == m.enable_input_d
                && m2.scale_input_d == m.scale_input_d
        };
        match self.prepared.iter().find(|(k, _)| same(k)) {
            Some((_, p)) => p.clone(),
            None => {
                let p = mma::prepare(m, &a, &b).map(std::rc::Rc::new);
                self.prepared.push(((m, a, b), p.clone()));
                p
            }
        }
    }

    /// The old D cells MMA `ai` reads (enable-input-d) in its D region `r` (lanes 0..128):
    /// planned now, read on demand (`OldD`); the work is counted as if every cell were read
    /// now.
    pub(super) fn old_d(&self, ai: usize, r: Region, sc: &mut Scratch) -> OldD {
        let rect = (0, 128, r.c0, r.c1);
        self.plan(ai, r.inst, rect, sc);
        let k = sc.writers.len() as u64;
        self.work
            .set(self.work.get() + u64::from(128 * (r.c1 - r.c0)) * (k + 1) + k * k);
        let single = match (&sc.before[..], sc.race.is_empty()) {
            (&[b], true) => {
                let wi = sc.writers[b];
                self.accs[wi]
                    .regions
                    .iter()
                    .any(|x| {
                        x.write
                            && x.inst == r.inst
                            && x.l0 == 0
                            && x.l1 >= 128
                            && x.c0 <= r.c0
                            && x.c1 >= r.c1
                    })
                    .then_some(wi)
            }
            _ => None,
        };
        OldD {
            inst: r.inst,
            c0: r.c0,
            n: r.c1 - r.c0,
            single,
            writers: sc.writers.clone(),
            before: sc.before.clone(),
            race: sc.race.clone(),
            ord: sc.ord.clone(),
            memo: std::cell::RefCell::new(Vec::new()),
            low16: low16(&self.accs[ai]),
        }
    }

    /// Records the values an exact MMA writes (`p`; with enable-input-d, the old D cells it
    /// reads, planned now and read on demand).
    pub(super) fn finish_mma_values(
        &mut self,
        ai: usize,
        p: std::rc::Rc<mma::Prepared>,
        sc: &mut Scratch,
    ) {
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else { return };
        let Some(r) = acc.regions.first().copied() else {
            return;
        };
        // MMA-DOL-SEM: a lane whose disable-output-lane bit is set keeps its old value, read
        // like enable-input-d's old D (`Ctx::mma_value`).
        let old =
            (m.enable_input_d || m.disable_output_lane.is_some()).then(|| self.old_d(ai, r, sc));
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else { return };
        // MMA-DOL-SEM: a lane whose disable-output-lane bit is set is not written.
        let mut dol = [0u32; 4];
        if let Some(d) = &m.disable_output_lane {
            for (x, y) in dol.iter_mut().zip(d) {
                *x = *y;
            }
        }
        let ashift = m.form.ashift;
        let fold = dp_layout::d_fold(m).unwrap_or(dp_layout::Fold::NONE);
        self.accs[ai].mma = Some(Box::new(MmaVals {
            p,
            peer: None,
            old,
            peer_old: None,
            dol,
            ashift,
            fold,
        }));
        self.accs[ai].known = true;
    }
}
