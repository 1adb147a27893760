//! The operands of an exact sparse MMA (`run::mma_sparse`): its metadata read from TMEM at
//! `[sp-meta-tmem]` (§9.7.16.10.8.4), its packed A from shared memory or TMEM, and B.

use super::*;
use crate::run::mma_sparse::{self, SparseA};

impl<'a> Ctx<'_, 'a> {
    /// The values of a sparse MMA of a layout-(a) kind (`mma_sparse`), or the reason they are
    /// not computed (`Acc::open`). The metadata cells must each hold one value known at the
    /// issue with no write racing with the read (`known_cells`), in both CTAs for
    /// `cta_group::2` (each CTA's rows use its own copy, like its own A). `a_cells`: the
    /// issuing CTA's A cells in TMEM, read as for a dense MMA (`mma_values`), when known.
    pub(super) fn sparse_values(&mut self, ai: usize, a_cells: Option<&[u32]>, sc: &mut Scratch) {
        let res = self.sparse_prepare(ai, a_cells, sc);
        self.finish_prepared(ai, res, sc);
    }

    /// [`mma_sparse::prepare_sparse`] of MMA `ai` for the issuing CTA, and with
    /// `cta_group::2` for the peer allocation too.
    #[allow(clippy::type_complexity)] // the issuing CTA's operands and the peer's, once
    fn sparse_prepare(
        &self,
        ai: usize,
        a_cells: Option<&[u32]>,
        sc: &mut Scratch,
    ) -> Result<(mma::Prepared, Option<(u32, mma::Prepared)>), &'static str> {
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else {
            return Err("not an MMA");
        };
        let form = mma_sparse::sparse_form(m)?;
        if !self.opts.figure_layouts {
            return Err("OQ-29: figure layouts are off: unspecified");
        }
        if acc.issuer.count_ones() != 1 {
            return Err("OQ-19: an MMA issued by several threads at once: unspecified");
        }
        let regions: Vec<Region> = acc.regions.into_iter().copied().collect();
        let parts = if form.pair { 2 } else { 1 };
        let cta = |inst: u32| self.a.insts[inst as usize].cta;
        let whole = |r: &Region| r.l0 == 0 && r.l1 == 128 && r.c1 - r.c0 == form.n;
        if regions.len() != parts
            || !regions.iter().all(whole)
            || regions.iter().any(|r| self.poisoned[cta(r.inst) as usize])
        {
            return Err(
                "OQ-9: a sparse MMA's D (from lane 0) or the CTA's TMEM is not whole in its allocation: unspecified",
            );
        }
        let (meta, p_meta) = self.meta_cells(ai, form.sel, form.pair, sc)?;
        let unknown_smem = "OQ-19: a sparse MMA reads shared memory whose data is not known at its issue: unspecified";
        let unknown_a = "OQ-19: a sparse MMA reads A cells in TMEM whose values are not known (from lane 0, 8 columns; unwritten or racing): unspecified";
        let a_rect = acc.a_read.map(|r| (r.inst, (r.l0, r.l1, r.c0, r.c1)));
        // A from TMEM: the issuing CTA's cells as given, the peer's (`x`) read here.
        let a_of = |c: u32, x: Option<u32>, sc: &mut Scratch| -> Result<SparseA, &'static str> {
            match (&m.a, a_rect, x) {
                (MmaA::Desc(ad), _, _) => Ok(SparseA::Smem(
                    self.region_data_in(acc, ad.region, c).ok_or(unknown_smem)?,
                )),
                (MmaA::Tmem(_), Some((_, rc)), Some(x)) => Ok(SparseA::Tmem(
                    self.tmem_a_cells(ai, x, rc, sc).ok_or(unknown_a)?,
                )),
                (MmaA::Tmem(_), Some(_), None) => {
                    Ok(SparseA::Tmem(a_cells.ok_or(unknown_a)?.to_vec()))
                }
                (MmaA::Tmem(_), None, _) => Err(unknown_a),
            }
        };
        let own_cta = cta(regions[0].inst);
        if !form.pair {
            let b = self.region_data(acc, m.b.region).ok_or(unknown_smem)?;
            let a = a_of(own_cta, None, sc)?;
            let p = mma_sparse::prepare_sparse(m, &form, &a, &[b], &meta)?;
            return Ok((p, None));
        }
        // The pair: the peer's allocation, its metadata and A cells at the same columns.
        let peer = regions[1].inst;
        let peer_cta = cta(peer);
        if own_cta / 2 != peer_cta / 2 || own_cta == peer_cta {
            return Err("OQ-29: a cta_group::2 MMA outside a CTA pair: unspecified");
        }
        let peer_of = |x: u32| self.a.insts[x as usize].peer;
        let p_meta = p_meta.ok_or("OQ-19: a sparse MMA reads metadata whose values are not known (unwritten, racing or not computed): unspecified")?;
        let (even, odd) = if own_cta % 2 == 0 {
            (own_cta, peer_cta)
        } else {
            (peer_cta, own_cta)
        };
        let b_of = |c: u32| self.region_data_in(acc, m.b.region, c).ok_or(unknown_smem);
        let b = [b_of(even)?, b_of(odd)?];
        let a_own = a_of(own_cta, None, sc)?;
        let peer_a = match a_rect {
            Some((own, _)) => Some(peer_of(own).ok_or(unknown_a)?),
            None => None,
        };
        let a_peer = a_of(peer_cta, peer_a, sc)?;
        let own = mma_sparse::prepare_sparse(m, &form, &a_own, &b, &meta)?;
        let theirs = mma_sparse::prepare_sparse(m, &form, &a_peer, &b, &p_meta)?;
        Ok((own, Some((peer, theirs))))
    }

    /// The metadata cells sparse MMA `ai` reads (selector `sel`, [`mma_sparse::meta_cols`]):
    /// 128 lanes × the columns read, lane-major, in the issuing CTA's allocation and, with
    /// `pair`, in the peer allocation; each cell known at the issue with no write racing
    /// (`known_cells`). The address must be lane 0 of an even column (`mma_sparse`: what
    /// CUTLASS issues). Also the metadata of sparse block-scaled MMAs (`scaled_prep`).
    pub(super) fn meta_cells(
        &self,
        ai: usize,
        sel: u32,
        pair: bool,
        sc: &mut Scratch,
    ) -> Result<(Vec<u32>, Option<Vec<u32>>), &'static str> {
        let acc = &self.accs[ai];
        let Op::Mma(m) = acc.op else {
            return Err("not an MMA");
        };
        let unknown_meta = "OQ-19: a sparse MMA reads metadata whose values are not known (unwritten, racing or not computed): unspecified";
        let (inst, lane, col) = m
            .sp_meta
            .as_ref()
            .and_then(|t| self.resolve(t, acc.g, acc.i))
            .ok_or(unknown_meta)?;
        if lane != 0 || col % 2 != 0 {
            return Err(
                "OQ-29: sparse metadata addressed from a lane other than 0 or an odd column (the layouts CUTLASS witnesses start at lane 0 of an even column): unspecified",
            );
        }
        let (off, w) =
            mma_sparse::meta_cols(m.form.kind, sel).ok_or("OQ-29: selector not placed")?;
        let rect = (0, 128, col + off, col + off + w);
        if rect.3 > self.a.insts[inst as usize].ncols {
            return Err("OQ-9: sparse metadata past its allocation: unspecified");
        }
        let own = self.known_cells(ai, inst, rect, sc).ok_or(unknown_meta)?;
        let peer = if pair {
            let x = self.a.insts[inst as usize].peer.ok_or(unknown_meta)?;
            Some(self.known_cells(ai, x, rect, sc).ok_or(unknown_meta)?)
        } else {
            None
        };
        Ok((own, peer))
    }
}
