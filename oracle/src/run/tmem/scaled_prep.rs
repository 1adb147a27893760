//! The operands of an exact block-scaled MMA (`run::mma_scaled`): its scale factors read from
//! TMEM at `[scale-A-tmem]` / `[scale-B-tmem]` (§9.7.16.10.7), with the writes that race with
//! the read, and its A and B from shared memory.

use super::*;
use crate::run::mma_scaled;

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
        for k in 0..2 {
            let Some(r) = self.accs[ai].sf_read[k] else {
                continue;
            };
            let rect = (r.l0, r.l1, r.c0, r.c1);
            self.plan(ai, r.inst, rect, sc);
            if let Some(v) = self.single_known(r.inst, rect, sc, false) {
                cells[k] = Some(v);
                continue;
            }
            let mut buf = Vec::new();
            let races = self.cells_or_races(r.inst, rect, sc, Some(&mut buf), false);
            self.accs[ai].in_races.0 |= races.0;
            if !sc.unknown && !races.any() {
                cells[k] = buf
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
        let why = self.scaled_prepare(ai, cells, a_cells);
        match why {
            Ok(p) => self.finish_mma_values(ai, std::rc::Rc::new(p), sc),
            Err(why) => self.accs[ai].open = Some(why),
        }
    }

    /// [`mma_scaled::prepare_scaled`] of MMA `ai` with the scale-factor cells read
    /// (`cells`: scale_A, scale_B, lane-major, where each was known).
    fn scaled_prepare(
        &self,
        ai: usize,
        cells: [Option<Vec<u32>>; 2],
        a_cells: Option<Vec<u32>>,
    ) -> Result<mma::Prepared, &'static str> {
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
        let d = acc.regions.first().copied();
        let whole = |r: Option<Region>, cols: u32| {
            r.is_some_and(|r| r.l0 == 0 && r.l1 == 128 && r.c1 - r.c0 == cols)
        };
        let (ca, cb) = form.sf_cols();
        if !whole(d, form.n) || self.poisoned[self.cta(acc.g) as usize] {
            return Err(
                "OQ-9: a block-scaled MMA's D or the CTA's TMEM is not whole in its allocation: unspecified",
            );
        }
        if !whole(acc.sf_read[0], ca) || !whole(acc.sf_read[1], cb) {
            return Err(
                "OQ-29: scale factors addressed from a lane other than 0 or past their allocation (the figures place them from lane 0): unspecified",
            );
        }
        let [Some(sfa), Some(sfb)] = cells else {
            return Err(
                "OQ-19: an MMA reads scale factors whose values are not known (unwritten, racing or not computed): unspecified",
            );
        };
        let scales = mma_scaled::Scales::read(&form, &sfa, &sfb)?;
        let unknown_smem = "OQ-19: a block-scaled MMA reads shared memory whose data is not known at its issue: unspecified";
        let a = match &m.a {
            MmaA::Desc(ad) => {
                mma_scaled::ScaledA::Smem(self.region_data(acc, ad.region).ok_or(unknown_smem)?)
            }
            MmaA::Tmem(_) => mma_scaled::ScaledA::Tmem(a_cells.ok_or(
                "OQ-19: a block-scaled MMA reads A cells in TMEM whose values are not known (from lane 0, 8 columns; unwritten or racing): unspecified",
            )?),
        };
        let b = self.region_data(acc, m.b.region).ok_or(unknown_smem)?;
        mma_scaled::prepare_scaled(m, &form, a, &b, scales)
    }
}
