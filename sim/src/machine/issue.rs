//! Issuing the tcgen05 instructions (reference §2-§3): alloc, dealloc and relinquish with
//! the column allocator and the `::2` pairs, and the asynchronous ld, st, mma, cp, shift and
//! commit with their ordering predecessors (reference §4.2, the pipelined pairs).

use super::*;

impl<'p> Machine<'p> {
    pub(super) fn exec_tc(&mut self, w: usize, op: &Op) -> Step {
        let mask = self.warps[w].mask;
        // (A snapshot exists only under the `fence-noop` fault: test that first, a branch
        // that is always predicted.)
        if self.warps[w].snapshot.is_some() && !matches!(op, Op::Wait { .. } | Op::Fence { .. }) {
            self.warps[w].snapshot = None;
        }
        match op {
            Op::Alloc {
                form,
                slot,
                dst_global,
                ncols,
            } => {
                let n = ncols_of(ncols);
                let c = self.warps[w].cta;
                if form.cta_group == CtaGroup::Two {
                    if self.fault(Fault::AllocPairNotCollective) {
                        return self.alloc_one(w, c, n, *slot, *dst_global, true);
                    }
                    return self.pair(w, PairKind::Alloc, n, 0, *slot);
                }
                self.alloc_one(w, c, n, *slot, *dst_global, false)
            }
            Op::Dealloc { form, taddr, ncols } => {
                let a = self.taddr(w, taddr);
                let n = ncols_of(ncols);
                let c = self.warps[w].cta;
                if form.cta_group == CtaGroup::Two && self.wording.pair_dealloc_waits {
                    return self.pair(w, PairKind::Dealloc, n, a & 0xFFFF, 0);
                }
                self.free(c, a & 0xFFFF, n);
                self.advance(w)
            }
            Op::Relinquish { form } => {
                let c = self.warps[w].cta;
                if form.cta_group == CtaGroup::Two
                    && self.wording.pair_relinquish_waits
                    && !self.fault(Fault::RelinquishClusterWide)
                {
                    return self.pair(w, PairKind::Relinquish, 0, 0, 0);
                }
                if self.fault(Fault::RelinquishClusterWide) {
                    let cl = self.ctas[c].cluster;
                    for cta in self.ctas.iter_mut().filter(|x| x.cluster == cl) {
                        cta.permit = false;
                    }
                } else {
                    self.ctas[c].permit = false;
                    if form.cta_group == CtaGroup::Two
                        && let Some(p) = self.peer(c)
                    {
                        self.ctas[p].permit = false;
                    }
                }
                self.advance(w)
            }
            Op::St {
                form,
                taddr,
                split,
                nregs,
                seed,
            } => {
                let a = self.taddr(w, taddr);
                let lane0 = self.window(w, a >> 16, false);
                let kind = AKind::St {
                    lanes: mask,
                    lane0,
                    col0: a & 0xFFFF,
                    split: split.unwrap_or(0),
                    form: *form,
                    nregs: u32::from(*nregs),
                    seed: *seed,
                };
                let preds = self.warps[w].after_preds.clone();
                let id = self.new_op(w, 0, None, kind, preds);
                self.warps[w].pending_st.push(id);
                self.advance(w)
            }
            Op::Wait { form } => {
                // wait::ld is Ins::WaitLd; this is wait::st (WAIT-SCOPE, WAIT-KIND).
                if form.op == WaitOp::St && !self.fault(Fault::WaitStEarly) {
                    let mut pend = std::mem::take(&mut self.force_buf);
                    pend.extend_from_slice(&self.warps[w].pending_st);
                    self.force_all(pend);
                }
                self.advance(w)
            }
            Op::Fence { kind } => {
                if !self.fault(Fault::FenceNoop) {
                    let wr = &self.warps[w];
                    match kind {
                        FenceKind::BeforeThreadSync => {
                            let mut v: Vec<u32> = wr.pending_ld.clone();
                            v.extend(&wr.pending_st);
                            v.extend(&wr.pending_mma);
                            let v = self.live_ids(&v);
                            self.warps[w].fenced = v;
                        }
                        FenceKind::AfterThreadSync => {
                            let v = self.live_ids(&wr.acquired);
                            let wr = &mut self.warps[w];
                            wr.after_preds = v.clone();
                            wr.acquired = v;
                        }
                    }
                }
                self.advance(w)
            }
            Op::Commit {
                form,
                mbar,
                addr,
                cta_mask,
            } => {
                let c = self.warps[w].cta;
                let mut targets = Vec::new();
                if *addr == MbarAddr::Shared {
                    match (form.multicast, cta_mask) {
                        (true, Some(m)) => {
                            for r in 0..16u32 {
                                if m >> r & 1 == 1
                                    && let Some(t) = self.cta_of_rank(c, r)
                                {
                                    targets.push((t, *mbar));
                                }
                            }
                        }
                        _ => targets.push((c, *mbar)),
                    }
                }
                for lane in lanes(mask) {
                    let tracked: Vec<u32> = self.warps[w]
                        .pending_mma
                        .iter()
                        .copied()
                        .filter(|&id| {
                            let o = &self.ops[id as usize];
                            !o.done && o.lane == lane && o.cta_group == Some(form.cta_group)
                        })
                        .take(if self.fault(Fault::CommitTracksFirstOnly) {
                            1
                        } else {
                            usize::MAX
                        })
                        .collect();
                    if !self.fault(Fault::FenceNoop) {
                        // COMMIT-IMPLICIT-FENCE.
                        self.warps[w].fenced = tracked.clone();
                    }
                    if tracked.is_empty() || self.fault(Fault::CommitArriveEarly) {
                        for &(t, b) in &targets {
                            self.arrive(t, b);
                        }
                    } else {
                        self.trackers.push(Tracker {
                            ops: tracked,
                            targets: targets.clone(),
                        });
                    }
                }
                self.advance(w)
            }
            Op::Mma(m) => {
                let reorder = self.fault(Fault::MmaPipelineReordered);
                let same_kind = self.wording.mma_pipeline_same_kind;
                for lane in lanes(mask) {
                    let plan = match mma::plan(
                        self.p,
                        m,
                        self.taddr(w, &m.d),
                        match &m.a {
                            MmaA::Tmem(t) => Some(self.taddr(w, t)),
                            MmaA::Desc(_) => None,
                        },
                        self.faults,
                    ) {
                        Ok(p) => p,
                        Err(why) => {
                            self.abort = Some(Outcome::NotRun(why.to_string()));
                            return self.advance(w);
                        }
                    };
                    // Block scaling: the scale factors' TMEM addresses.
                    let mut plan = plan;
                    if let (Some(sa), Some(sb)) = (&m.scale_a, &m.scale_b)
                        && let Err(why) = plan.scale_addrs(self.taddr(w, sa), self.taddr(w, sb))
                    {
                        self.abort = Some(Outcome::NotRun(why.to_string()));
                        return self.advance(w);
                    }
                    // Sparse A: the metadata's TMEM address.
                    if let Some(t) = &m.sp_meta
                        && let Err(why) = plan.meta_addr(self.taddr(w, t))
                    {
                        self.abort = Some(Outcome::NotRun(why.to_string()));
                        return self.advance(w);
                    }
                    let mut preds = self.pipeline_preds(
                        w,
                        lane,
                        |k| match k {
                            // MCM-PIPE-MMA-MMA (reference §4.2 pair 1).
                            AKind::Mma(prev) => prev.same_pipeline(&plan, same_kind) && !reorder,
                            // MCM-PIPE-CP-MMA and MCM-PIPE-SHIFT-MMA (pairs 2 and 3).
                            AKind::Cp { .. } | AKind::Shift { .. } => true,
                            _ => false,
                        },
                        m.form.cta_group,
                    );
                    preds.extend(self.warps[w].after_preds.iter().copied());
                    let id = self.new_op(
                        w,
                        lane,
                        Some(m.form.cta_group),
                        AKind::Mma(Box::new(plan)),
                        preds,
                    );
                    self.warps[w].pending_mma.push(id);
                }
                self.advance(w)
            }
            Op::Shift { form, taddr } => {
                for lane in lanes(mask) {
                    let a = self.taddr(w, taddr);
                    let mut preds = self.pipeline_preds(
                        w,
                        lane,
                        |k| matches!(k, AKind::Mma(_)),
                        form.cta_group,
                    );
                    preds.extend(self.warps[w].after_preds.iter().copied());
                    let kind = AKind::Shift {
                        lane0: a >> 16,
                        col0: a & 0xFFFF,
                        both: form.cta_group == CtaGroup::Two,
                    };
                    let id = self.new_op(w, lane, Some(form.cta_group), kind, preds);
                    self.warps[w].pending_mma.push(id);
                }
                self.advance(w)
            }
            Op::Cp { form, taddr, src } => {
                if src.swizzle != 0 || usize::from(src.region) >= self.p.smem.regions.len() {
                    self.abort = Some(Outcome::NotRun(
                        "the simulator does not implement swizzled or out-of-range cp descriptors"
                            .into(),
                    ));
                    return self.advance(w);
                }
                let (rows, row_bytes) = match form.shape {
                    CpShape::S128x256b => (128, 32),
                    CpShape::S4x256b => (4, 32),
                    CpShape::S128x128b => (128, 16),
                    CpShape::S64x128b => (64, 16),
                    CpShape::S32x128b => (32, 16),
                    // Not a shape (CP-SHAPE): copied as its name says.
                    CpShape::S64x256b => (64, 32),
                };
                for lane in lanes(mask) {
                    let a = self.taddr(w, taddr);
                    let l0 = a >> 16;
                    let mut preds = if form.shape == CpShape::S4x256b {
                        self.pipeline_preds(
                            w,
                            lane,
                            |k| matches!(k, AKind::Shift { .. }),
                            form.cta_group,
                        )
                    } else {
                        Vec::new()
                    };
                    preds.extend(self.warps[w].after_preds.iter().copied());
                    let kind = AKind::Cp {
                        desc: *src,
                        col0: a & 0xFFFF,
                        rows,
                        row_bytes,
                        multicast: form.multicast,
                        lane0: l0,
                        both: form.cta_group == CtaGroup::Two,
                        // CP-DECOMP-FMT: a source format without `.b8x16` is not a form.
                        decomp: form.dst_fmt.and(form.src_fmt),
                    };
                    let id = self.new_op(w, lane, Some(form.cta_group), kind, preds);
                    self.warps[w].pending_mma.push(id);
                }
                self.advance(w)
            }
            Op::Ld { .. } => self.advance(w),
        }
    }

    /// Earlier pending async ops of the same thread and cta_group that `is_pred` says are
    /// pipeline-ordered before the new one (reference §4.2).
    pub(super) fn pipeline_preds(
        &self,
        w: usize,
        lane: u32,
        is_pred: impl Fn(&AKind) -> bool,
        cg: CtaGroup,
    ) -> Vec<u32> {
        self.warps[w]
            .pending_mma
            .iter()
            .copied()
            .filter(|&id| {
                let o = &self.ops[id as usize];
                !o.done && o.lane == lane && o.cta_group == Some(cg) && is_pred(&o.kind)
            })
            .collect()
    }

    pub(super) fn alloc_one(
        &mut self,
        w: usize,
        c: usize,
        n: u32,
        slot: u8,
        dst_global: bool,
        both: bool,
    ) -> Step {
        if !self.ctas[c].permit {
            self.abort = Some(Outcome::Trapped {
                kind: TrapKind::AllocWithoutPermit,
                words: self.words.clone(),
            });
            return self.advance(w);
        }
        let peer = if both { self.peer(c) } else { None };
        let used = self.ctas[c].used | peer.map_or(0, |p| self.ctas[p].used);
        let Some(col) = find_free(used, n) else {
            return Step::Blocked(Block::Alloc { ncols: n });
        };
        self.mark(c, col, n);
        if let Some(p) = peer {
            self.mark(p, col, n);
        }
        if !dst_global && let Some(s) = self.ctas[c].slots.get_mut(usize::from(slot)) {
            *s = col;
        }
        self.advance(w)
    }

    pub(super) fn mark(&mut self, c: usize, col: u32, n: u32) {
        self.wake += 1;
        self.ctas[c].used |= unit_mask(col, n);
    }

    pub(super) fn free(&mut self, c: usize, col: u32, n: u32) {
        self.wake += 1;
        if self.fault(Fault::DeallocWrongColumns) {
            self.ctas[c].used &= !unit_mask(col + n, n);
        } else {
            self.ctas[c].used &= !unit_mask(col, n);
        }
    }

    pub(super) fn pair(
        &mut self,
        w: usize,
        kind: PairKind,
        ncols: u32,
        col: u32,
        slot: u8,
    ) -> Step {
        let c = self.warps[w].cta;
        if self.warps[w].pair_req.is_none() {
            self.open_pairs += 1;
            self.ctas[c].pairs.push(PairReq {
                warp: w,
                kind,
                ncols,
                col,
                slot,
                done: false,
            });
            self.warps[w].pair_req = Some(self.ctas[c].pairs.len() - 1);
            self.match_pairs();
        }
        let i = self.warps[w].pair_req.expect("set above");
        if self.ctas[c].pairs[i].done {
            self.warps[w].pair_req = None;
            if let Some(Outcome::Trapped { .. }) = self.abort {
                return Step::Progress;
            }
            return self.advance(w);
        }
        Step::Blocked(Block::Pair)
    }

    /// Completes `::2` collectives whose two warps have both arrived: the k-th pending
    /// collective of the even CTA pairs with the k-th of the odd CTA.
    pub(super) fn match_pairs(&mut self) {
        if self.open_pairs == 0 {
            return;
        }
        for e in 0..self.ctas.len() {
            if self.ctas[e].rank & 1 == 1 {
                continue;
            }
            let Some(o) = self.peer(e) else { continue };
            loop {
                let a = self.ctas[e].pairs.iter().position(|r| !r.done);
                let b = self.ctas[o].pairs.iter().position(|r| !r.done);
                let (Some(a), Some(b)) = (a, b) else { break };
                let (ra, rb) = (self.ctas[e].pairs[a].clone(), self.ctas[o].pairs[b].clone());
                if ra.kind != rb.kind {
                    break;
                }
                match ra.kind {
                    PairKind::Alloc => {
                        if !self.ctas[e].permit || !self.ctas[o].permit {
                            self.abort = Some(Outcome::Trapped {
                                kind: TrapKind::AllocWithoutPermit,
                                words: self.words.clone(),
                            });
                        }
                        let used = self.ctas[e].used | self.ctas[o].used;
                        let n = ra.ncols.max(rb.ncols);
                        let Some(col) = find_free(used, n) else {
                            break;
                        };
                        self.mark(e, col, n);
                        self.mark(o, col, n);
                        if let Some(s) = self.ctas[e].slots.get_mut(usize::from(ra.slot)) {
                            *s = col;
                        }
                        if let Some(s) = self.ctas[o].slots.get_mut(usize::from(rb.slot)) {
                            *s = col;
                        }
                    }
                    PairKind::Dealloc => {
                        self.free(e, ra.col, ra.ncols);
                        self.free(o, rb.col, rb.ncols);
                    }
                    PairKind::Relinquish => {
                        self.ctas[e].permit = false;
                        self.ctas[o].permit = false;
                    }
                }
                self.ctas[e].pairs[a].done = true;
                self.ctas[o].pairs[b].done = true;
                self.wake += 1;
                self.open_pairs -= 2;
                let _ = (ra.warp, rb.warp);
            }
        }
    }
}

/// The column count an nCols operand means to the simulator: the value, rounded up to a power
/// of two and clamped to [32, 512] (ALLOC-NCOLS-POW2/RANGE are unstated; this is the concrete
/// choice). A divergent register (ALLOC-NCOLS-UNIFORM, UB) means lane 0's value.
pub(super) fn ncols_of(n: &NCols) -> u32 {
    n.value.clamp(32, 512).next_power_of_two()
}

/// The 32-column units `[col, col + n)` covers, as a bit mask of the 16 units.
pub(super) fn unit_mask(col: u32, n: u32) -> u16 {
    let first = col / 32;
    let last = (col + n).div_ceil(32).min(16);
    let mut m = 0u16;
    for u in first..last {
        m |= 1 << u;
    }
    m
}

/// First fit, aligned to the allocation size: the lowest column `c` with `c % n == 0` whose
/// units are all free.
pub(super) fn find_free(used: u16, n: u32) -> Option<u32> {
    let units = n / 32;
    let mut u = 0;
    while u + units <= 16 {
        let m = unit_mask(u * 32, n);
        if used & m == 0 {
            return Some(u * 32);
        }
        u += units;
    }
    None
}
