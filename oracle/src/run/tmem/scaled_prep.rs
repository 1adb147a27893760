//! The operands of an exact block-scaled MMA (`run::mma_scaled`): its scale factors read from
//! TMEM at `[scale-A-tmem]` / `[scale-B-tmem]` (§9.7.16.10.7), with the writes that race with
//! the read, and its A and B from shared memory.

use super::*;
use crate::run::mma_scaled;

/// The prepared operands of a block-scaled MMA: the issuing CTA's, and with `cta_group::2`
/// the peer allocation and the peer CTA's.
type ScaledPrep = (mma::Prepared, Option<(u32, mma::Prepared)>);

impl<'a> Ctx<'_, 'a> {
    /// The cells of scale_A and scale_B that MMA `m` (issued at event `i` of warp `g`) reads:
    /// all 128 lanes (the factors are duplicated into the four 32-lane partitions,
    /// MMA-BS-DUP) of the columns of [`mma_scaled::ScaledForm::sf_cols`] (4 and N / 32 when
    /// the form is not computed: the cells its words may depend on).
    pub(super) fn sf_regions(&self, m: &Mma, g: usize, i: usize) -> [Option<Region>; 2] {
        if !m.form.block_scale {
            return [None; 2];
        }
        let n = ((m.idesc >> 17 & 0x3F) << 3).max(8);
        let (ca, cb) = mma_scaled::scaled_form(m).map_or((4, n.div_ceil(32)), |f| f.sf_cols());
        let mut out = [None; 2];
        for (k, (t, cols)) in [(&m.scale_a, ca), (&m.scale_b, cb)].into_iter().enumerate() {
            if let Some(t) = t
                && let Some((inst, l, c)) = self.resolve(t, g, i)
            {
                let mut one = Regions::default();
                self.region(&mut one, inst, (l, 128), (c, c + cols), (true, false), true);
                out[k] = one.first().copied();
            }
        }
        out
    }

    /// The values of a block-scaled MMA (`mma_scaled`), or the reason they are not computed
    /// (`Acc::open`). The races of its scale-factor reads join those of its A read
    /// (`Acc::in_races`): an ld of what it wrote cites them.
    pub(super) fn scaled_values(&mut self, ai: usize, sc: &mut Scratch) {
        let mut cells: [Option<Vec<u32>>; 2] = [None, None];
        for (k, cell) in cells.iter_mut().enumerate() {
            let Some(r) = self.accs[ai].sf_read[k] else {
                continue;
            };
            let rect = (r.l0, r.l1, r.c0, r.c1);
            self.plan(ai, r.inst, rect, sc);
            if let Some(v) = self.single_known(r.inst, rect, sc, false) {
                *cell = Some(v);
                continue;
            }
            let mut buf = Vec::new();
            let races = self.cells_or_races(r.inst, rect, sc, Some(&mut buf), false);
            self.accs[ai].in_races.0 |= races.0;
            if !sc.unknown && !races.any() {
                *cell = buf
                    .iter()
                    .map(|w| match w {
                        WordExpect::Exact(v) => Some(*v),
                        _ => None,
                    })
                    .collect();
            }
        }
        // A in TMEM (`[a-tmem]`, lanes 0..128 × 8 columns): its cells, when each is known and
        // nothing races (the races of the read are in `in_races` already, `mma_values`).
        let a_cells = match self.accs[ai].a_read {
            Some(r) => {
                let rect = (r.l0, r.l1, r.c0, r.c1);
                self.tmem_a_cells(ai, r.inst, rect, sc)
            }
            None => None,
        };
        let res = self.scaled_prepare(ai, cells, a_cells, sc);
        self.finish_prepared(ai, res, sc);
    }

    /// Records a prepared MMA of accumulator `ai` (a block-scaled or sparse one): `::1` goes
    /// through `finish_mma_values`; a `::2` pair keeps each CTA's operands and, with
    /// enable-input-d, each CTA's own old D (MMA-ENABLE-D); `Err` leaves the results open
    /// with its reason.
    pub(super) fn finish_prepared(
        &mut self,
        ai: usize,
        res: Result<ScaledPrep, &'static str>,
        sc: &mut Scratch,
    ) {
        match res {
            Ok((p, None)) => self.finish_mma_values(ai, std::rc::Rc::new(p), sc),
            Ok((p, Some((peer, pp)))) => {
                let acc = &self.accs[ai];
                let Op::Mma(m) = acc.op else { return };
                let own = acc.regions.first().copied();
                let peer_region = acc.regions.iter().copied().find(|r| r.inst == peer);
                let (Some(own), Some(peer_region)) = (own, peer_region) else {
                    return;
                };
                // MMA-ENABLE-D: each CTA's D cells are its own old values.
                let (old, peer_old) = if m.enable_input_d {
                    (
                        Some(self.old_d(ai, own, sc)),
                        Some(self.old_d(ai, peer_region, sc)),
                    )
                } else {
                    (None, None)
                };
                self.accs[ai].mma = Some(Box::new(MmaVals {
                    p: std::rc::Rc::new(p),
                    peer: Some((peer, std::rc::Rc::new(pp))),
                    old,
                    peer_old,
                    dol: [0; 4],
                    ashift: false,
                    fold: dp_layout::Fold { rows: 128 },
                }));
                self.accs[ai].known = true;
            }
            Err(why) => self.accs[ai].open = Some(why),
        }
    }

    /// The cells of allocation `inst` over `rect`, lane-major, when each has one value known
    /// at MMA `ai`'s issue and nothing races with the read; `None` otherwise (also A in TMEM,
    /// `tmem_a_cells`).
    pub(super) fn known_cells(
        &self,
        ai: usize,
        inst: u32,
        rect: (u32, u32, u32, u32),
        sc: &mut Scratch,
    ) -> Option<Vec<u32>> {
        self.plan(ai, inst, rect, sc);
        if let Some(v) = self.single_known(inst, rect, sc, false) {
            return Some(v);
        }
        let mut buf = Vec::new();
        let races = self.cells_or_races(inst, rect, sc, Some(&mut buf), false);
        if sc.unknown || races != Races::default() {
            return None;
        }
        buf.iter()
            .map(|w| match w {
                WordExpect::Exact(v) => Some(*v),
                _ => None,
            })
            .collect()
    }

    /// [`mma_scaled::prepare_scaled`] of MMA `ai` with the scale-factor cells read
    /// (`cells`: scale_A, scale_B, lane-major, where each was known) and A's cells in TMEM
    /// (`a_cells`): the issuing CTA's rows, and with `cta_group::2` the peer allocation and
    /// its rows too.
    ///
    /// With `cta_group::2` each CTA holds its own copy of both factor matrices (each CTA's
    /// cp copies from its own shared memory). Which copy the rows of each CTA read is shown
    /// only in figures (OQ-29), so the result is computed only where the two CTAs hold the
    /// same factors: then every reading gives it.
    fn scaled_prepare(
        &self,
        ai: usize,
        cells: [Option<Vec<u32>>; 2],
        a_cells: Option<Vec<u32>>,
        sc: &mut Scratch,
    ) -> Result<ScaledPrep, &'static str> {
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else {
            return Err("not an MMA");
        };
        let form = mma_scaled::scaled_form(m)?;
        if !self.opts.figure_layouts {
            return Err("OQ-29: figure layouts are off: unspecified");
        }
        if acc.issuer.count_ones() != 1 {
            return Err("OQ-19: an MMA issued by several threads at once: unspecified");
        }
        let whole = |r: Option<Region>, cols: u32| {
            r.is_some_and(|r| r.l0 == 0 && r.l1 == 128 && r.c1 - r.c0 == cols)
        };
        let (ca, cb) = form.sf_cols();
        let regions: Vec<Region> = acc.regions.into_iter().copied().collect();
        let parts = if form.pair { 2 } else { 1 };
        let cta = |inst: u32| self.a.insts[inst as usize].cta;
        if regions.len() != parts
            || regions.iter().any(|r| !whole(Some(*r), form.n))
            || regions.iter().any(|r| self.poisoned[cta(r.inst) as usize])
        {
            return Err(
                "OQ-9: a block-scaled MMA's D or the CTA's TMEM is not whole in its allocation: unspecified",
            );
        }
        let (sfa_r, sfb_r) = (acc.sf_read[0], acc.sf_read[1]);
        if !whole(sfa_r, ca) || !whole(sfb_r, cb) {
            return Err(
                "OQ-29: scale factors addressed from a lane other than 0 or past their allocation (the figures place them from lane 0): unspecified",
            );
        }
        let unknown_sf = "OQ-19: an MMA reads scale factors whose values are not known (unwritten, racing or not computed): unspecified";
        let [Some(sfa), Some(sfb)] = cells else {
            return Err(unknown_sf);
        };
        let unknown_smem = "OQ-19: a block-scaled MMA reads shared memory whose data is not known at its issue: unspecified";
        let unknown_a = "OQ-19: a block-scaled MMA reads A cells in TMEM whose values are not known (from lane 0, 8 columns; unwritten or racing): unspecified";
        let own_cta = cta(regions[0].inst);
        let a_of = |c: u32, cells: Option<Vec<u32>>| -> Result<mma_scaled::ScaledA, &'static str> {
            match &m.a {
                MmaA::Desc(ad) => Ok(mma_scaled::ScaledA::Smem(
                    self.region_data_in(acc, ad.region, c).ok_or(unknown_smem)?,
                )),
                MmaA::Tmem(_) => Ok(mma_scaled::ScaledA::Tmem(cells.ok_or(unknown_a)?)),
            }
        };
        // Sparse A (`mma_sparse`): the metadata of each CTA (the mx kinds take selector 0).
        let (meta, p_meta) = if form.sp {
            let (own, peer) = self.meta_cells(ai, 0, form.pair, sc)?;
            (Some(own), peer)
        } else {
            (None, None)
        };
        if !form.pair {
            let scales = mma_scaled::Scales::read(&form, &sfa, &sfb)?;
            let b = self.region_data(acc, m.b.region).ok_or(unknown_smem)?;
            let a = a_of(own_cta, a_cells)?;
            let p = mma_scaled::prepare_scaled(m, &form, a, &[b], scales, meta.as_deref())?;
            return Ok((p, None));
        }
        // The pair: the peer's allocation, its factor and A cells at the same columns.
        let peer = regions[1].inst;
        let peer_cta = cta(peer);
        if own_cta / 2 != peer_cta / 2 || own_cta == peer_cta {
            return Err("OQ-29: a cta_group::2 MMA outside a CTA pair: unspecified");
        }
        let rect = |r: Option<Region>| r.map(|r| (r.l0, r.l1, r.c0, r.c1));
        let peer_of = |r: Option<Region>| r.and_then(|r| self.a.insts[r.inst as usize].peer);
        let read_peer = |r: Option<Region>, sc: &mut Scratch| match (peer_of(r), rect(r)) {
            (Some(x), Some(rc)) => self.known_cells(ai, x, rc, sc),
            _ => None,
        };
        let p_sfa = read_peer(sfa_r, sc).ok_or(unknown_sf)?;
        let p_sfb = read_peer(sfb_r, sc).ok_or(unknown_sf)?;
        if p_sfa != sfa || p_sfb != sfb {
            return Err(
                "OQ-29: the CTAs of a cta_group::2 block-scaled MMA hold different scale factors (which copy each row reads is shown only in figures): unspecified",
            );
        }
        let p_a_cells = match acc.a_read {
            Some(r) => read_peer(Some(r), sc),
            None => None,
        };
        let (even, odd) = if own_cta % 2 == 0 {
            (own_cta, peer_cta)
        } else {
            (peer_cta, own_cta)
        };
        let b_of = |c: u32| self.region_data_in(acc, m.b.region, c).ok_or(unknown_smem);
        let b = [b_of(even)?, b_of(odd)?];
        let own = mma_scaled::prepare_scaled(
            m,
            &form,
            a_of(own_cta, a_cells)?,
            &b,
            mma_scaled::Scales::read(&form, &sfa, &sfb)?,
            meta.as_deref(),
        )?;
        let theirs = mma_scaled::prepare_scaled(
            m,
            &form,
            a_of(peer_cta, p_a_cells)?,
            &b,
            mma_scaled::Scales::read(&form, &p_sfa, &p_sfb)?,
            p_meta.as_deref(),
        )?;
        Ok((own, Some((peer, theirs))))
    }
}
