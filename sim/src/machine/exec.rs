//! Executing one instruction of a warp: control flow, the CTA and cluster barriers,
//! mbarriers, observation records, and the issue of a tcgen05.ld (reference §4: its registers
//! are written when the ld performs).

use super::*;

impl<'p> Machine<'p> {
    pub(super) fn exec(&mut self, w: usize, ins: &Ins<'p>) -> Step {
        let mask = self.warps[w].mask;
        match ins {
            Ins::If { cond, else_at } => {
                let t = mask & self.eval(w, cond);
                let wr = &mut self.warps[w];
                wr.stack.push(Frame::If {
                    saved: mask,
                    els: mask & !t,
                });
                wr.mask = t;
                if t == 0 {
                    wr.pc = *else_at;
                } else {
                    wr.pc += 1;
                }
                Step::Progress
            }
            Ins::Else { end_at } => {
                let wr = &mut self.warps[w];
                if let Some(Frame::If { els, .. }) = wr.stack.last() {
                    wr.mask = els & !wr.exited;
                }
                if wr.mask == 0 {
                    wr.pc = *end_at;
                } else {
                    wr.pc += 1;
                }
                Step::Progress
            }
            Ins::EndIf => {
                let wr = &mut self.warps[w];
                if let Some(Frame::If { saved, .. }) = wr.stack.pop() {
                    wr.mask = saved & !wr.exited;
                }
                self.advance(w)
            }
            Ins::Loop { count, end_at } => {
                let wr = &mut self.warps[w];
                if *count == 0 || wr.mask == 0 {
                    wr.pc = *end_at;
                } else {
                    wr.stack.push(Frame::Loop { left: *count });
                    wr.pc += 1;
                }
                Step::Progress
            }
            Ins::LoopEnd { top } => {
                let wr = &mut self.warps[w];
                let mut again = false;
                if let Some(Frame::Loop { left }) = wr.stack.last_mut() {
                    *left -= 1;
                    again = *left > 0 && wr.mask != 0;
                }
                if again {
                    wr.pc = *top;
                } else {
                    wr.stack.pop();
                    wr.pc += 1;
                }
                Step::Progress
            }
            Ins::Call(f) => {
                let body = self.code.warps + usize::from(*f);
                let wr = &mut self.warps[w];
                if body < self.code.bodies.len() && wr.mask != 0 {
                    wr.stack.push(Frame::Call {
                        body: wr.body,
                        ret: wr.pc + 1,
                    });
                    wr.body = body;
                    wr.pc = 0;
                } else {
                    wr.pc += 1;
                }
                Step::Progress
            }
            Ins::End => {
                let wr = &mut self.warps[w];
                if let Some(Frame::Call { body, ret }) = wr.stack.pop() {
                    wr.body = body;
                    wr.pc = ret;
                    return Step::Progress;
                }
                let live = !wr.exited;
                let base = self.warp_block(w);
                put_lanes(&mut self.words, base, live, observe::CHECKPOINT_DONE);
                self.hot[w].done = true;
                self.cluster_changed(w);
                self.check_bar(self.warps[w].cta);
                Step::Progress
            }
            Ins::Nop => self.advance(w),
            Ins::Checkpoint(id) => {
                if mask == 0 {
                    return self.advance(w);
                }
                let base = self.warp_block(w);
                put_lanes(&mut self.words, base, mask, u32::from(*id));
                self.advance(w)
            }
            Ins::Exit => {
                if mask == 0 {
                    return self.advance(w);
                }
                let base = self.warp_block(w);
                put_lanes(&mut self.words, base, mask, observe::CHECKPOINT_EXIT);
                let wr = &mut self.warps[w];
                wr.exited |= mask;
                wr.mask = 0;
                if wr.exited == u32::MAX {
                    self.hot[w].done = true;
                    let c = wr.cta;
                    self.cluster_changed(w);
                    self.check_bar(c);
                    return Step::Progress;
                }
                self.advance(w)
            }
            Ins::BarCta => {
                if mask == 0 {
                    return self.advance(w);
                }
                if self.fault(Fault::BarCtaNoWait) {
                    return self.advance(w);
                }
                let c = self.warps[w].cta;
                if !self.warps[w].bar_arrived {
                    self.hoist_point(w);
                    self.warps[w].bar_arrived = true;
                    let f = std::mem::take(&mut self.warps[w].fenced);
                    let cta = &mut self.ctas[c];
                    cta.bar_count += 1;
                    cta.bar_released.extend(f);
                    let generation = cta.bar_gen;
                    self.check_bar(c);
                    if self.ctas[c].bar_gen == generation {
                        return Step::Blocked(Block::Bar { generation });
                    }
                } else if let Some(Block::Bar { generation }) = self.hot[w].block
                    && self.ctas[c].bar_gen == generation
                {
                    return Step::Blocked(Block::Bar { generation });
                }
                self.warps[w].bar_arrived = false;
                let rel = self.live_ids(&self.ctas[c].bar_released);
                self.ctas[c].bar_released = rel.clone();
                self.warps[w].acquired.extend(rel);
                self.advance(w)
            }
            Ins::ClusterArrive => {
                if mask == 0 {
                    return self.advance(w);
                }
                let f = std::mem::take(&mut self.warps[w].fenced);
                let cl = self.ctas[self.warps[w].cta].cluster as usize;
                self.cluster_released[cl].extend(f);
                self.warps[w].cluster_arrivals += 1;
                self.cluster_changed(w);
                self.advance(w)
            }
            Ins::ClusterWait => {
                if mask == 0 {
                    return self.advance(w);
                }
                self.hoist_point(w);
                let cl = self.ctas[self.warps[w].cta].cluster;
                let target = self.warps[w].cluster_arrivals;
                if !self.fault(Fault::ClusterBarrierNoWait) && !self.cluster_arrived(cl, target) {
                    return Step::Blocked(Block::Cluster { target });
                }
                let rel = self.live_ids(&self.cluster_released[cl as usize]);
                self.warps[w].acquired.extend(rel);
                self.advance(w)
            }
            Ins::MbarInit { bar, count } => {
                if mask == 0 {
                    return self.advance(w);
                }
                let c = self.warps[w].cta;
                if let Some(m) = self.ctas[c].mbars.get_mut(usize::from(*bar)) {
                    self.wake += 1;
                    *m = Mbar {
                        init: true,
                        count: *count,
                        pending: *count,
                        phase: 0,
                        released: Vec::new(),
                    };
                }
                self.advance(w)
            }
            Ins::MbarArrive { bar, cta } => {
                if mask == 0 {
                    return self.advance(w);
                }
                let own = self.warps[w].cta;
                let target = match cta {
                    None => Some(own),
                    Some(r) => self.cta_of_rank(own, u32::from(*r)),
                };
                let f = std::mem::take(&mut self.warps[w].fenced);
                if let Some(t) = target {
                    if let Some(m) = self.ctas[t].mbars.get_mut(usize::from(*bar)) {
                        m.released.extend(f);
                    }
                    for _ in lanes(mask) {
                        self.arrive(t, *bar);
                    }
                }
                self.advance(w)
            }
            Ins::MbarWait {
                bar, parity, site, ..
            } => {
                if mask == 0 {
                    return self.advance(w);
                }
                let c = self.warps[w].cta;
                self.hoist_point(w);
                if !self.mbar_passes(c, *bar, *parity) {
                    return Step::Blocked(Block::Mbar {
                        bar: *bar,
                        parity: *parity,
                    });
                }
                if let Some(m) = self.ctas[c].mbars.get(usize::from(*bar)) {
                    let rel = self.live_ids(&m.released);
                    self.warps[w].acquired.extend(rel);
                }
                self.record(w, *site, mask, observe::MBAR_COMPLETED);
                self.advance(w)
            }
            Ins::Fill { region, seed, elem } => {
                if mask == 0 {
                    return self.advance(w);
                }
                let c = self.warps[w].cta;
                if let Some(r) = self.ctas[c].regions.get_mut(usize::from(*region)) {
                    std::rc::Rc::make_mut(r).fill(mask, *elem, *seed);
                }
                self.advance(w)
            }
            Ins::ObserveAddr { slot, site } => {
                if mask == 0 {
                    return self.advance(w);
                }
                let c = self.warps[w].cta;
                let v = self.ctas[c]
                    .slots
                    .get(usize::from(*slot))
                    .copied()
                    .unwrap_or(0);
                self.record(w, *site, mask, v);
                self.advance(w)
            }
            Ins::Ld { op, ld } => {
                if mask == 0 {
                    return self.advance(w);
                }
                self.issue_ld(w, op, *ld);
                self.advance(w)
            }
            Ins::WaitLd { records } => {
                if mask == 0 {
                    return self.advance(w);
                }
                if !self.fault(Fault::WaitLdEarly) {
                    let mut pend = std::mem::take(&mut self.force_buf);
                    pend.extend_from_slice(&self.warps[w].pending_ld);
                    self.force_all(pend);
                }
                for &ld in records {
                    self.record_ld(w, ld, mask);
                }
                self.advance(w)
            }
            Ins::Record(records) => {
                if mask == 0 {
                    return self.advance(w);
                }
                for &ld in records {
                    // A register read waits for the load that writes it (MCM-LD-REGDEP).
                    let mut pend = std::mem::take(&mut self.force_buf);
                    pend.extend(
                        self.warps[w]
                        .pending_ld
                        .iter()
                        .copied()
                        .filter(|&id| matches!(self.ops[id as usize].kind, AKind::Ld { ld: l, .. } if l == ld)));
                    self.force_all(pend);
                    self.record_ld(w, ld, mask);
                }
                self.advance(w)
            }
            Ins::Tc(op) => {
                if mask == 0 {
                    return self.advance(w);
                }
                self.exec_tc(w, op)
            }
        }
    }

    pub(super) fn cta_of_rank(&self, own: usize, rank: u32) -> Option<usize> {
        let cs = u32::from(self.p.launch.cluster_size.max(1));
        if rank >= cs {
            return None;
        }
        let c = self.ctas[own].cluster * cs + rank;
        ((c as usize) < self.ctas.len()).then_some(c as usize)
    }

    pub(super) fn peer(&self, own: usize) -> Option<usize> {
        self.cta_of_rank(own, self.ctas[own].rank ^ 1)
    }

    pub(super) fn live_ids(&self, v: &[u32]) -> Vec<u32> {
        v.iter()
            .copied()
            .filter(|&id| !self.ops[id as usize].done)
            .collect()
    }

    pub(super) fn check_bar(&mut self, c: usize) {
        let live = self.ctas[c]
            .warps
            .clone()
            .filter(|&w| !self.hot[w].done)
            .count() as u32;
        let cta = &mut self.ctas[c];
        if cta.bar_count > 0 && cta.bar_count >= live {
            cta.bar_gen += 1;
            self.wake += 1;
            cta.bar_count = 0;
        }
    }

    pub(super) fn arrive(&mut self, c: usize, bar: u8) {
        if let Some(m) = self.ctas[c].mbars.get_mut(usize::from(bar)) {
            if !m.init {
                return;
            }
            m.pending = m.pending.saturating_sub(1);
            if m.pending == 0 {
                m.phase += 1;
                self.wake += 1;
                m.pending = m.count;
            }
        }
    }

    pub(super) fn eval(&self, w: usize, c: &Cond) -> u32 {
        let wr = &self.warps[w];
        let cta = &self.ctas[wr.cta];
        let all = |b: bool| if b { u32::MAX } else { 0 };
        match c {
            Cond::LaneLt(n) => {
                if *n >= 32 {
                    u32::MAX
                } else {
                    (1u32 << n) - 1
                }
            }
            Cond::LaneEq(n) => {
                if *n < 32 {
                    1 << n
                } else {
                    0
                }
            }
            Cond::ElectOne => wr.mask & wr.mask.wrapping_neg(),
            Cond::CtaRank(n) => all(cta.rank == u32::from(*n)),
            Cond::CtaOdd => all(cta.rank & 1 == 1),
            Cond::Cluster(n) => all(cta.cluster == u32::from(*n)),
            Cond::WarpRank(n) => all(wr.rank == u32::from(*n)),
        }
    }

    /// Records a one-word observation (the same word for every lane of `mask`).
    pub(super) fn record(&mut self, w: usize, site: Site, mask: u32, v: u32) {
        let base = self.warp_block(w) + site.offset as usize;
        put_lanes(&mut self.words, base, mask, 1);
        for lane in lanes(mask) {
            if site.words > 0 {
                self.words[base + 32 + (lane * site.words) as usize] = v;
            }
        }
    }

    pub(super) fn record_ld(&mut self, w: usize, ld: u32, mask: u32) {
        let info = self.code.lds[ld as usize];
        let site = info.site;
        let base = self.warp_block(w) + site.offset as usize;
        let words = info.words as usize;
        let sw = site.words as usize;
        let regs: &[u32] = self.warps[w].regs.get(ld as usize).map_or(&[], |r| r);
        let n = words.min(sw);
        put_lanes(&mut self.words, base, mask, 1);
        for lane in lanes(mask) {
            let d = base + 32 + lane as usize * sw;
            let src = regs.get(lane as usize * words..).unwrap_or_default();
            let dst = &mut self.words[d..d + n];
            if src.len() >= n {
                copy_words(dst, &src[..n]);
            } else {
                for (i, x) in dst.iter_mut().enumerate() {
                    *x = src.get(i).copied().unwrap_or(0);
                }
            }
        }
    }

    /// The TMEM address a warp computes for `t` (the lowest active lane's, when lanes disagree:
    /// LDST-TADDR-UNIFORM, undefined behaviour).
    pub(super) fn taddr(&self, w: usize, t: &TmemRef) -> u32 {
        let wr = &self.warps[w];
        let base = match t.base {
            TBase::Slot(s) => self.ctas[wr.cta]
                .slots
                .get(usize::from(s))
                .copied()
                .unwrap_or(0),
            TBase::Abs => 0,
        };
        let mut a = base.wrapping_add(t.offset());
        if t.divergent && wr.mask.trailing_zeros() & 1 == 1 {
            a = a.wrapping_add(1);
        }
        a
    }

    /// First lane of the warp's 32-lane window for an ld/st at lane field `lane_field`
    /// (LDST-LANE-QUARTER: a lane field outside the quarter wraps into it).
    pub(super) fn window(&self, w: usize, lane_field: u32, is_ld: bool) -> u32 {
        let mut q = self.warps[w].rank % 4;
        if is_ld && self.fault(Fault::LaneQuarterOffByOne) {
            q = (q + 1) % 4;
        }
        32 * q + (lane_field % 32)
    }

    pub(super) fn new_op(
        &mut self,
        w: usize,
        lane: u32,
        cta_group: Option<CtaGroup>,
        kind: AKind,
        mut preds: Vec<u32>,
    ) -> u32 {
        let id = self.ops.len() as u32;
        preds.retain(|&p| !self.ops[p as usize].done);
        self.ops.push(AsyncOp {
            warp: w,
            lane,
            cta_group,
            kind,
            preds,
            met: 0,
            done: false,
        });
        self.pending.push(id);
        id
    }

    pub(super) fn issue_ld(&mut self, w: usize, op: &Op, ld: u32) {
        let Op::Ld {
            form,
            taddr,
            split,
            nregs,
        } = op
        else {
            return;
        };
        let a = self.taddr(w, taddr);
        let info = self.code.lds[ld as usize];
        let wr = &mut self.warps[w];
        if wr.regs.len() <= ld as usize {
            wr.regs.resize(ld as usize + 1, Vec::new());
        }
        if wr.regs[ld as usize].is_empty() {
            wr.regs[ld as usize] = regs_buffer(32 * info.words as usize);
        }
        let mask = wr.mask;
        let lane0 = self.window(w, a >> 16, true);
        let kind = AKind::Ld {
            ld,
            lanes: mask,
            lane0,
            col0: a & 0xFFFF,
            split: split.unwrap_or(0),
            form: *form,
            nregs: u32::from(*nregs),
            snap: self.warps[w].snapshot.is_some(),
        };
        let preds = self.warps[w].after_preds.clone();
        let id = self.new_op(w, 0, None, kind, preds);
        self.warps[w].pending_ld.push(id);
    }

    /// With the `fence-noop` fault, a wait the warp begins (not one it is already blocked in)
    /// is where its following loads are hoisted to: remember TMEM as it is now.
    pub(super) fn hoist_point(&mut self, w: usize) {
        if self.fault(Fault::FenceNoop) && self.hot[w].block.is_none() {
            let t = self.ctas[self.warps[w].cta].tmem.clone();
            self.warps[w].snapshot = Some(Box::new(t));
        }
    }
}
