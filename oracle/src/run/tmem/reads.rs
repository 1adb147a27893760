//! What a read may deliver: the writes it must consider (`Ctx::plan`), the candidates of its
//! cells and their races (reference §4), and the records of ld of every shape, `.pack::16b`
//! and `.red` (§9.7.16.8.3).

use super::*;

impl<'a> Ctx<'_, 'a> {
    /// The writes a read must consider, into `sc`: `writers`, the `ord` matrix between them,
    /// those ordered `before` it (indexes into `writers`) and those that `race` with it
    /// (access indexes, with their `race_rule`).
    pub(super) fn plan(
        &self,
        ri: usize,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &mut Scratch,
    ) {
        let r = &self.accs[ri];
        let full = |x: &Region| {
            x.write && x.inst == inst && x.l0 <= l0 && x.l1 >= l1 && x.c0 <= c0 && x.c1 >= c1
        };
        if sc.seen.len() < self.accs.len() {
            sc.seen.resize(self.accs.len(), 0);
        }
        sc.epoch = sc.epoch.wrapping_add(1);
        if sc.epoch == 0 {
            sc.seen.fill(0);
            sc.epoch = 1;
        }
        let epoch = sc.epoch;
        sc.seen[ri] = epoch;
        // For an ld, "ordered after R" is monotone along each warp's program order (R's
        // completion is known to a later issue of a warp once it is known to an earlier one;
        // an ld is in no pipeline), so the writes after R are cut by a binary search.
        let monotone = r.kind == Kind::Ld;
        // Latest first within each warp's writes: skip writes ordered after R, and writes
        // ordered before a kept write that is before R and covers what they wrote of R's cells
        // (dominated: never the last). Once a st is dominated by a same-warp write covering all
        // of R, every older st of that warp is too (waits are monotone): stop there.
        sc.writers.clear();
        sc.kept_before.clear();
        let (mut row, mut row_st) = (
            std::mem::take(&mut sc.slot),
            std::mem::take(&mut sc.slot_st),
        );
        let mut cuts = std::mem::take(&mut sc.col_cuts);
        for lb in l0 / 32..l1.div_ceil(32) {
            let rowi = Self::row_of(inst, lb) as usize;
            // Columns between two edges of the row's writes have the same writes: once a
            // column left every write of its slot seen (no cut below), the next columns of the
            // span find nothing new and only count their work.
            cuts.clear();
            cuts.extend([c0, c1]);
            self.by_col.edges(rowi, (c0, c1), &mut cuts);
            cuts.sort_unstable();
            cuts.dedup();
            let mut span = 0;
            let mut col = c0;
            while col < c1 {
                while cuts[span + 1] <= col {
                    span += 1;
                }
                let span_end = cuts[span + 1];
                self.by_col
                    .slot(rowi, col, &self.accs, &mut row, &mut row_st);
                let work0 = self.work.get();
                let mut cut_any = false;
                let mut s0 = 0;
                while s0 < row.len() {
                    // One warp's writes to this slot, in program order.
                    let seg_g = self.accs[row[s0] as usize].g;
                    let mut s1 = s0 + 1;
                    while s1 < row.len() && self.accs[row[s1] as usize].g == seg_g {
                        s1 += 1;
                    }
                    let (seg, seg_st) = (&row[s0..s1], &row_st[s0..s1]);
                    s0 = s1;
                    let end = if monotone {
                        seg.partition_point(|&wi| !self.ordered(r, &self.accs[wi as usize]))
                    } else {
                        seg.len()
                    };
                    self.work.set(self.work.get() + end as u64 + 1);
                    for p in (0..end).rev() {
                        let wi = seg[p] as usize;
                        if sc.seen[wi] == epoch {
                            continue;
                        }
                        sc.seen[wi] = epoch;
                        let w = &self.accs[wi];
                        // The write's region that meets the read (a `.16x32bx2` st has two).
                        let meets = |wr: &&Region| {
                            wr.write
                                && wr.inst == inst
                                && wr.l0.max(l0) < wr.l1.min(l1)
                                && wr.c0.max(c0) < wr.c1.min(c1)
                        };
                        let Some(wr) = w.regions.iter().find(meets) else {
                            continue;
                        };
                        let (il0, il1, ic0, ic1) =
                            (wr.l0.max(l0), wr.l1.min(l1), wr.c0.max(c0), wr.c1.min(c1));
                        if !monotone && self.ordered(r, w) {
                            continue;
                        }
                        let mut dominated = false;
                        let mut cut = false;
                        for (&k, &b) in sc.writers.iter().zip(&sc.kept_before) {
                            let kk = &self.accs[k];
                            let covers = kk.regions.iter().any(|x| {
                                x.write
                                    && x.inst == inst
                                    && x.l0 <= il0
                                    && x.l1 >= il1
                                    && x.c0 <= ic0
                                    && x.c1 >= ic1
                            });
                            if b && covers && self.ordered(w, kk) {
                                dominated = true;
                                cut = kk.g == seg_g && seg_st[p] && kk.regions.iter().any(full);
                                break;
                            }
                        }
                        if cut {
                            cut_any = true;
                            break;
                        }
                        if dominated {
                            continue;
                        }
                        sc.kept_before.push(self.ordered(w, r));
                        sc.writers.push(wi);
                    }
                }
                if cut_any {
                    col += 1;
                } else {
                    // The rest of the span: the same steps, nothing new.
                    let rest = u64::from(span_end - col - 1);
                    let inc = self.work.get() - work0;
                    self.work.set(self.work.get() + inc * rest);
                    col = span_end;
                }
            }
        }
        sc.col_cuts = cuts;
        sc.slot = row;
        sc.slot_st = row_st;
        // Direct order with R, then closed transitively through the other writers (a write
        // ordered before a write that is ordered before R is before R, and so on).
        let writers = &sc.writers;
        let k = writers.len();
        let ord = &mut sc.ord;
        ord.clear();
        ord.resize(k * k, false);
        for a in 0..k {
            for b in 0..k {
                if a != b {
                    ord[a * k + b] = self.ordered(&self.accs[writers[a]], &self.accs[writers[b]]);
                }
            }
        }
        for m in 0..k {
            for a in 0..k {
                if ord[a * k + m] {
                    for b in 0..k {
                        if ord[m * k + b] {
                            ord[a * k + b] = true;
                        }
                    }
                }
            }
        }
        sc.is_before.clear();
        sc.is_before.extend(sc.kept_before.iter().copied());
        sc.is_after.clear();
        sc.is_after
            .extend(writers.iter().map(|&wi| self.ordered(r, &self.accs[wi])));
        for a in 0..k {
            for b in 0..k {
                if ord[a * k + b] && sc.is_before[b] {
                    sc.is_before[a] = true;
                }
                if ord[b * k + a] && sc.is_after[b] {
                    sc.is_after[a] = true;
                }
            }
        }
        sc.before.clear();
        sc.before.extend((0..k).filter(|&a| sc.is_before[a]));
        sc.race.clear();
        sc.race.extend(
            (0..k)
                .filter(|&a| !sc.is_before[a] && !sc.is_after[a])
                .map(|a| writers[a]),
        );
        sc.race_rule.clear();
        sc.race_rule
            .extend(sc.race.iter().map(|&wi| self.race_rule(&self.accs[wi], r)));
    }

    /// The candidate values of every cell of a read planned in `sc` ([`Ctx::plan`]),
    /// lane-major into `out`, and the rules its races break. When every cell is
    /// `Unspecified` for want of a known candidate, `out` is left empty and `sc.unknown` set.
    pub(super) fn cells(
        &self,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &mut Scratch,
        out: &mut Vec<WordExpect>,
    ) -> Races {
        self.cells_or_races(inst, (l0, l1, c0, c1), sc, Some(out), false)
    }

    /// [`Ctx::cells_or_races`] of the cells' low halves ([`Ctx::half_at`]) when `half`.
    pub(super) fn cells_half(
        &self,
        inst: u32,
        rect: (u32, u32, u32, u32),
        sc: &mut Scratch,
        out: &mut Vec<WordExpect>,
        half: bool,
    ) -> Races {
        self.cells_or_races(inst, rect, sc, Some(out), half)
    }

    /// [`Ctx::cells`]; with `out` `None`, only the races (no value is computed); with
    /// `half`, the candidates are the cells' low 16 bits ([`Ctx::half_at`]).
    pub(super) fn cells_or_races(
        &self,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        sc: &mut Scratch,
        mut out: Option<&mut Vec<WordExpect>>,
        half: bool,
    ) -> Races {
        if let Some(out) = out.as_deref_mut() {
            out.clear();
        }
        sc.unknown = false;
        let writers = &sc.writers;
        let k = writers.len();
        let ord = &sc.ord;
        let nb = sc.before.len();
        let before = &sc.before;
        let covers = |wi: usize, l: u32, c: u32| {
            self.accs[wi]
                .regions
                .iter()
                .any(|x| x.write && x.inst == inst && x.covers(l, c))
        };
        self.work.set(
            self.work.get() + u64::from((l1 - l0) * (c1 - c0)) * (k as u64 + 1) + (k * k) as u64,
        );
        let mut races = Races::default();
        // Fast path: one write ordered before the read, covering all of it, nothing racing:
        // every cell's only candidate is that write's value (what the loop below gives).
        if sc.race.is_empty()
            && let [b] = before[..]
        {
            let w = &self.accs[writers[b]];
            let full = w.regions.iter().any(|x| {
                x.write && x.inst == inst && x.l0 <= l0 && x.l1 >= l1 && x.c0 <= c0 && x.c1 >= c1
            });
            if full {
                if let Some(out) = out {
                    if self.may_know(w) {
                        out.reserve(((l1 - l0) * (c1 - c0)) as usize);
                        self.values_into(w, inst, (l0, l1, c0, c1), out, half);
                    } else {
                        // `values_into` would give `Unspecified` everywhere.
                        sc.unknown = true;
                    }
                }
                return races;
            }
        }
        // The read's rectangle cut into blocks along every edge of the regions of the writes
        // it considers: within a block, every cell is covered by the same writes, so the
        // maximal ones, the races and the rules are the same; only the values differ.
        let edges = |lo: u32, hi: u32, pick: fn(&Region) -> (u32, u32), v: &mut Vec<u32>| {
            v.clear();
            v.push(lo);
            v.push(hi);
            let ws = before
                .iter()
                .map(|&a| writers[a])
                .chain(sc.race.iter().copied());
            for wi in ws {
                for x in self.accs[wi].regions.iter() {
                    if x.write && x.inst == inst {
                        let (a, b) = pick(x);
                        v.extend([a.clamp(lo, hi), b.clamp(lo, hi)]);
                    }
                }
            }
            v.sort_unstable();
            v.dedup();
        };
        let (mut le, mut ce) = (
            std::mem::take(&mut sc.lane_edges),
            std::mem::take(&mut sc.col_edges),
        );
        edges(l0, l1, |x| (x.l0, x.l1), &mut le);
        edges(c0, c1, |x| (x.c0, x.c1), &mut ce);
        let width = (c1 - c0) as usize;
        // `out` is filled with `Unspecified` when the first block with known candidates is
        // met (a block without keeps it); none met: every cell is unspecified.
        let mut filled = false;
        for lw in le.windows(2) {
            let (la, lb) = (lw[0], lw[1]);
            for cw in ce.windows(2) {
                let (ca, cb) = (cw[0], cw[1]);
                // The candidates of the block's first cell stand for every cell of it.
                let (l, c) = (la, ca);
                sc.cov.clear();
                sc.cov
                    .extend((0..nb).filter(|&a| covers(writers[before[a]], l, c)));
                sc.block.clear();
                let mut maximal = 0;
                for &a in &sc.cov {
                    if !sc
                        .cov
                        .iter()
                        .any(|&b| b != a && ord[before[a] * k + before[b]])
                    {
                        maximal += 1;
                        sc.block.push(Some(writers[before[a]]));
                    }
                }
                // Two unordered writes both before R: they race with each other
                // (MCM-ASYNC-UNORDERED).
                if maximal > 1 {
                    races.add(RuleId::McmAsyncUnordered);
                }
                if sc.cov.is_empty() {
                    // Never written in this allocation (OQ-9): unspecified.
                    sc.block.push(None);
                    sc.never_written = true;
                }
                for (&wi, &rule) in sc.race.iter().zip(&sc.race_rule) {
                    if covers(wi, l, c) {
                        races.add(rule);
                        sc.block.push(Some(wi));
                    }
                }
                // A candidate whose value is never known makes every cell unspecified
                // (`word_expect`): the block keeps the `Unspecified` it was filled with.
                let Some(out) = out.as_deref_mut() else {
                    continue;
                };
                if sc
                    .block
                    .iter()
                    .any(|w| w.is_none_or(|wi| !self.may_know(&self.accs[wi])))
                {
                    continue;
                }
                if !filled {
                    out.resize((l1 - l0) as usize * width, WordExpect::Unspecified);
                    filled = true;
                }
                // A 16-bit D MMA among the candidates states only the low halves: with it
                // alone, the low half is known (MMA-D-UNPACKED); with other candidates, the
                // cells stay unspecified.
                let masked = !half && sc.block.iter().flatten().any(|&wi| low16(&self.accs[wi]));
                if masked {
                    let one = match sc.block[..] {
                        [Some(wi)] => Some(&self.accs[wi]),
                        _ => None,
                    };
                    for l in la..lb {
                        let row = (l - l0) as usize * width;
                        for c in ca..cb {
                            out[row + (c - c0) as usize] =
                                low_half(one.and_then(|w| self.value_at(w, inst, l, c)));
                        }
                    }
                    continue;
                }
                for l in la..lb {
                    let row = (l - l0) as usize * width;
                    for c in ca..cb {
                        sc.cands.clear();
                        for &wi in &sc.block {
                            let wi = wi.expect("checked above");
                            sc.cands
                                .push(self.cell_value(&self.accs[wi], inst, l, c, half));
                        }
                        out[row + (c - c0) as usize] = word_expect(&mut sc.cands);
                    }
                }
            }
        }
        sc.lane_edges = le;
        sc.col_edges = ce;
        if out.is_some() && !filled {
            sc.unknown = true;
        }
        races
    }

    /// Whether `value_at` may know a value `w` wrote (false: it never does).
    pub(super) fn may_know(&self, w: &Acc<'_>) -> bool {
        match w.op {
            Op::St { .. } => w.known,
            Op::Mma(_) => w.mma.is_some(),
            Op::Cp { .. } => w.cp.is_some(),
            Op::Shift { .. } => w.shifted.is_some(),
            _ => false,
        }
    }

    /// The values `w` wrote over the rectangle `(l0, l1, c0, c1)` of allocation `inst`,
    /// lane-major into `out` (`Unspecified` where unknown): `value_at` cell by cell.
    pub(super) fn values_into(
        &self,
        w: &Acc<'_>,
        inst: u32,
        (l0, l1, c0, c1): (u32, u32, u32, u32),
        out: &mut Vec<WordExpect>,
        half: bool,
    ) {
        let word = |v: Option<u32>| v.map_or(WordExpect::Unspecified, WordExpect::Exact);
        let r = w.regions.iter().find(|r| r.inst == inst);
        match (w.op, r) {
            (Op::St { .. }, Some(_)) if w.known && (half || !st_plain(w.op)) => {
                for l in l0..l1 {
                    for c in c0..c1 {
                        out.push(word(self.cell_value(w, inst, l, c, half)));
                    }
                }
            }
            (Op::Mma(_), Some(r)) if half && w.mma.is_some() => {
                for l in l0..l1 {
                    for c in c0..c1 {
                        out.push(word(
                            self.mma_value(w, inst, l - r.l0, c - r.c0)
                                .map(|v| v & 0xFFFF),
                        ));
                    }
                }
            }
            (Op::St { seed, .. }, Some(r)) if w.known => {
                for l in l0..l1 {
                    for c in c0..c1 {
                        out.push(WordExpect::Exact(values::st_value(
                            *seed,
                            l - r.l0,
                            c - r.c0,
                        )));
                    }
                }
            }
            (Op::Mma(_), Some(r)) if w.mma.is_some() => {
                // A 16-bit D states the low halves only (MMA-D-UNPACKED).
                let word = if low16(w) { low_half } else { word };
                for l in l0..l1 {
                    for c in c0..c1 {
                        out.push(word(self.mma_value(w, inst, l - r.l0, c - r.c0)));
                    }
                }
            }
            // cp and shift: cell by cell.
            (Op::Cp { .. } | Op::Shift { .. }, Some(_)) if self.may_know(w) => {
                for l in l0..l1 {
                    for c in c0..c1 {
                        out.push(word(self.cell_value(w, inst, l, c, half)));
                    }
                }
            }
            _ => out.resize(
                out.len() + ((l1 - l0) * (c1 - c0)) as usize,
                WordExpect::Unspecified,
            ),
        }
    }

    /// The most specific rule of reference §6 a write `w` racing with the read `r` breaks
    /// (neither is ordered before the other):
    /// - an earlier st of the reader's own warp with no `wait::st` between: MCM-ST-BEFORE-USE
    ///   (§9.7.16.6.4.2);
    /// - a later write of the reader's own warp with no `wait::ld` between: MCM-LD-WAR
    ///   (§9.7.16.6.4.5);
    /// - a write of another warp whose completion is known to the reader's thread, but not at
    ///   its issue (the consumer lacks `fence::after_thread_sync`), or whose issue is
    ///   synchronized with the reader without the fences: MCM-XTHREAD (§9.7.16.6.3-4);
    /// - a write of another warp synchronized through the fences before its completion
    ///   (no `wait::st` / commit + mbarrier before the producer's fence and sync):
    ///   MCM-XTHREAD-NONPIPE (§9.7.16.6.4.4);
    /// - otherwise MCM-ASYNC-UNORDERED (§9.7.16.6.1-2).
    pub(super) fn race_rule(&self, w: &Acc<'_>, r: &Acc<'_>) -> RuleId {
        if w.g == r.g {
            return match (w.kind, w.i < r.i, r.kind) {
                (Kind::St, true, _) => RuleId::McmStBeforeUse,
                (_, false, Kind::Ld) => RuleId::McmLdWar,
                _ => RuleId::McmAsyncUnordered,
            };
        }
        if self.done_before_event(w, r.g, r.i) {
            return RuleId::McmXthread;
        }
        // The completion witness (wait or commit) happens before R, without the fence pair.
        let witnessed = match w.kind {
            Kind::Ld | Kind::St => w.wait.is_some_and(|wi| self.c.hb(w.g, wi, r.g, r.i)),
            _ => false,
        };
        if witnessed {
            return RuleId::McmXthread;
        }
        if w.pfence
            .is_some_and(|fi| self.c.issue_knows(r.g, r.i, w.g, fi as u32))
        {
            return RuleId::McmXthreadNonpipe;
        }
        if self.c.hb(w.g, w.i, r.g, r.i) {
            return RuleId::McmXthread;
        }
        RuleId::McmAsyncUnordered
    }

    /// The data of a shared-memory region at the MMA issue (g, i), if one fill is ordered
    /// before it through a proxy fence (MCM-PROXY) and none races or follows before the MMA
    /// completes (MMA-SRC-STABLE).
    pub(super) fn region_data(&self, acc: &Acc<'_>, region: u8) -> Option<RegionData> {
        self.region_data_in(acc, region, self.cta(acc.g))
    }

    /// [`Ctx::region_data`] of CTA `cta`'s copy of the region (the peer's, for a `::2` MMA).
    pub(super) fn region_data_in(&self, acc: &Acc<'_>, region: u8, cta: u32) -> Option<RegionData> {
        let bytes = *self.p.smem.regions.get(usize::from(region))?;
        let (g, i) = (acc.g, acc.i);
        let mut best: Option<(usize, usize, u32, FillElem, u32)> = None;
        let mut proxies = Vec::new();
        for (h, evs) in self.u.warps.iter().enumerate() {
            if self.cta(h) != cta {
                continue;
            }
            self.work.set(self.work.get() + self.c.reached[h] as u64);
            for (j, e) in evs.iter().enumerate().take(self.c.reached[h]) {
                if !matches!(e.kind, EvKind::Fill | EvKind::FenceProxyAsync) {
                    continue;
                }
                match e.stmt {
                    Stmt::Fill {
                        region: r,
                        seed,
                        elem,
                    } if *r == region => {
                        if self.c.hb(h, j, g, i) {
                            if best.is_some_and(|(bg, bj, ..)| !self.c.hb(bg, bj, h, j)) {
                                if !best.is_some_and(|(bg, bj, ..)| self.c.hb(h, j, bg, bj)) {
                                    return None;
                                }
                            } else {
                                best = Some((h, j, *seed, *elem, e.mask));
                            }
                        } else if !self.done_before_event(acc, h, j) {
                            return None;
                        }
                    }
                    Stmt::FenceProxyAsync => proxies.push((h, j)),
                    _ => {}
                }
            }
        }
        let (fg, fj, seed, elem, mask) = best?;
        let fenced = proxies
            .iter()
            .any(|&(h, j)| self.c.hb(fg, fj, h, j) && self.c.hb(h, j, g, i));
        (mask == u32::MAX && fenced).then_some(RegionData { elem, seed, bytes })
    }

    /// Whether a `wait` for `op` of a warp other than `x`'s happens before event `(g, i)`
    /// without happening before `x`'s issue: the program seems to count on a wait that does
    /// not cover `x` (WAIT-SCOPE, reference §3.4: a wait covers the executing thread's own
    /// ld/st only). Used only to cite the rule beside the race `x` is already in.
    pub(super) fn waited_elsewhere(&self, x: &Acc<'_>, op: WaitOp, g: usize, i: usize) -> bool {
        self.u.warps.iter().enumerate().any(|(h, evs)| {
            h != x.g
                && evs.iter().enumerate().any(|(j, e)| {
                    e.kind
                        == match op {
                            WaitOp::Ld => EvKind::WaitLd,
                            WaitOp::St => EvKind::WaitSt,
                        }
                        && self.c.hb(h, j, g, i)
                        && !self.c.hb(h, j, x.g, x.i)
                })
        })
    }

    /// Notes the open questions that leave the cells of the read planned last in `sc`
    /// unspecified when nothing races: cells no write is ordered before (OQ-9), and writers
    /// whose values the oracle does not compute (an MMA: OQ-19 numerics, OQ-22 layouts; a cp
    /// from a swizzled or unknown source: OQ-29; the upper half of an unpacked st:
    /// OQ-10; a shift whose rows were not known). Where no writer is open as a whole, the
    /// known writers that may still leave a cell open name why ([`known_open_reason`]).
    /// Returns whether a reason was named; when none was, notes [`ORACLE_GAP`] (so an
    /// unspecified word is never left without a note).
    pub(super) fn note_open(&self, sc: &Scratch, f: &mut Findings) -> bool {
        let mut named = false;
        if sc.before.is_empty() || sc.never_written {
            f.note(OQ9_NEVER_WRITTEN);
            named = true;
        }
        let mut known = false;
        for &a in &sc.before {
            // `sc` may hold the plan of an earlier read where a fast path did not plan this
            // one: a note is only a diagnostic, so an index that does not fit is skipped.
            let Some(w) = sc.writers.get(a).and_then(|&wi| self.accs.get(wi)) else {
                continue;
            };
            let why = match w.op {
                Op::Mma(_) if w.mma.is_none() && w.open.is_some() => w.open.unwrap_or_default(),
                // A block-scaled MMA some of whose cells a factor leaves unspecified.
                Op::Mma(_) if let Some(why) = w.mma.as_ref().and_then(|m| m.p.scales()?.open) => {
                    why
                }
                Op::Mma(_) if w.mma.is_some() && low16(w) => {
                    "MMA-D-UNPACKED: an ld reads cells of a 16-bit D, whose high halves are not stated (the low halves are exact)"
                }
                Op::Mma(m) if w.mma.is_none() => super::super::mma_open::open_reason(m),
                Op::Cp { .. } if w.cp.is_none() => {
                    "OQ-29: an ld reads a cp's cells whose values the oracle does not compute (a swizzled or unknown source): unspecified"
                }
                Op::Shift { .. } => {
                    "OQ-16: an ld reads rows of a shift that are not stated (row 0) or were not known: unspecified"
                }
                Op::St { form, .. } if form.pack.is_some() => {
                    "OQ-10: an ld reads the upper half of a cell an .unpack::16b st wrote: unspecified"
                }
                _ => {
                    known = true;
                    continue;
                }
            };
            f.note(why);
            named = true;
        }
        if !named && known {
            for &a in &sc.before {
                if let Some(why) = sc
                    .writers
                    .get(a)
                    .and_then(|&wi| self.accs.get(wi))
                    .and_then(known_open_reason)
                {
                    f.note(why);
                    named = true;
                }
            }
        }
        if !named {
            f.note(ORACLE_GAP);
        }
        named
    }

    /// The record of an ld of any shape, with `.pack::16b` or `.red` (§9.7.16.8.3): the
    /// candidates of the cells of each of its regions ([`Ctx::cells`]; their low halves for
    /// pack), then each thread's registers from its cells ([`ldst::cell`]), two cells per
    /// register for pack ([`pack_words`]), and the `redval` word last for red
    /// ([`ldst::reduce`]). Also the races of its cells.
    pub(super) fn ld_shaped(
        &self,
        k: usize,
        form: &LdForm,
        n: u32,
        mask: u32,
        sc: &mut Scratch,
        f: &mut Findings,
    ) -> (SiteExpect, Races) {
        let x = &self.accs[k];
        let pack = form.pack.is_some();
        if let Some(r) = self.ld_shaped_known(k, form, n, mask, sc) {
            return r;
        }
        let mut races = Races::default();
        let mut cells: [Vec<WordExpect>; 2] = Default::default();
        for (h, r) in x.regions.iter().enumerate() {
            let rect = (r.l0, r.l1, r.c0, r.c1);
            self.plan(k, r.inst, rect, sc);
            sc.never_written = false;
            let mut own = self.cells_half(r.inst, rect, sc, &mut cells[h], pack);
            // An MMA that wrote (or may have written) these cells read a racing A.
            for &wi in &sc.writers {
                own.0 |= self.accs[wi].in_races.0;
            }
            races.0 |= own.0;
            if sc.unknown {
                cells[h].clear();
                let area = (r.l1 - r.l0) * (r.c1 - r.c0);
                cells[h].resize(area as usize, WordExpect::Unspecified);
            }
            // Open cells that no race explains: name the open question (each region's
            // writers while its plan is in `sc`).
            let open = || {
                cells[h]
                    .iter()
                    .any(|w| matches!(w, WordExpect::Unspecified | WordExpect::Masked { .. }))
            };
            if own.0 == 0 && open() {
                self.note_open(sc, f);
            }
        }
        let words = n + u32::from(form.red);
        let mut out = Vec::with_capacity((32 * words) as usize);
        let mut open = false;
        for t in 0..32 {
            let start = out.len();
            for reg in 0..n {
                let c = ldst::cell(form.shape, t, reg);
                let Some(r) = x.regions.r.get(c.half).copied().flatten() else {
                    out.push(WordExpect::Unspecified);
                    continue;
                };
                let width = r.c1 - r.c0;
                let at = |col: u32| {
                    cells[c.half]
                        .get((c.lane * width + col) as usize)
                        .cloned()
                        .unwrap_or(WordExpect::Unspecified)
                };
                out.push(if pack {
                    pack_words(&at(2 * c.col), &at(2 * c.col + 1))
                } else {
                    at(c.col)
                });
            }
            if form.red {
                let regs: Option<Vec<u32>> = out[start..]
                    .iter()
                    .map(|w| match w {
                        WordExpect::Exact(v) => Some(*v),
                        _ => None,
                    })
                    .collect();
                let red = regs.and_then(|v| {
                    let r = ldst::reduce(form, &v);
                    open |= r.is_none() && mask >> t & 1 == 1;
                    r
                });
                out.push(red.map_or(WordExpect::Unspecified, WordExpect::Exact));
            }
        }
        if open {
            f.note("OQ-13: an ld.red result is left open (an f32 NaN input without .NaN, or +0 against -0)");
        }
        let why: Vec<RuleId> = races.rules().collect();
        (ld_expect(&out, words as usize, mask, &why), races)
    }

    /// [`Ctx::ld_shaped`] where each region of the ld has one known write before it and
    /// nothing racing ([`Ctx::single_known`]), and the `.red` result is stated: the registers
    /// straight from the cells, no candidate lists. `None`: the general path decides.
    pub(super) fn ld_shaped_known(
        &self,
        k: usize,
        form: &LdForm,
        n: u32,
        mask: u32,
        sc: &mut Scratch,
    ) -> Option<(SiteExpect, Races)> {
        let x = &self.accs[k];
        let pack = form.pack.is_some();
        let mut races = Races::default();
        let mut cells: [Vec<u32>; 2] = Default::default();
        let mut widths = [0u32; 2];
        // The st whose registers this ld reads back one for one (same shape, registers,
        // regions and packing): thread t's register r is that st's (thread t, register r).
        let mut same_st: Option<u32> = None;
        let mut same = true;
        for (h, r) in x.regions.iter().enumerate() {
            let rect = (r.l0, r.l1, r.c0, r.c1);
            self.plan(k, r.inst, rect, sc);
            if same
                && sc.race.is_empty()
                && let [b] = sc.before[..]
                && let w = &self.accs[sc.writers[b]]
                && let Op::St {
                    form: sf,
                    nregs,
                    seed,
                    ..
                } = w.op
                && sf.shape == form.shape
                && u32::from(*nregs) == n
                && sf.pack.is_some() == pack
                && w.regions.len() == x.regions.len()
                && w.regions.iter().zip(x.regions.iter()).all(|(a, b)| {
                    (a.inst, a.l0, a.l1, a.c0, a.c1) == (b.inst, b.l0, b.l1, b.c0, b.c1)
                })
                && same_st.is_none_or(|s| s == *seed)
            {
                same_st = Some(*seed);
                let kk = sc.writers.len() as u64;
                let area = u64::from((r.l1 - r.l0) * (r.c1 - r.c0));
                self.work.set(self.work.get() + area * (kk + 1) + kk * kk);
                for &wi in &sc.writers {
                    races.0 |= self.accs[wi].in_races.0;
                }
                continue;
            }
            same = false;
            cells[h] = self.single_known(r.inst, rect, sc, pack)?;
            widths[h] = r.c1 - r.c0;
            let kk = sc.writers.len() as u64;
            let area = u64::from((r.l1 - r.l0) * (r.c1 - r.c0));
            self.work.set(self.work.get() + area * (kk + 1) + kk * kk);
            for &wi in &sc.writers {
                races.0 |= self.accs[wi].in_races.0;
            }
        }
        let words = n + u32::from(form.red);
        let mut data = vec![0u32; (32 * words) as usize];
        let read_back = same.then_some(same_st).flatten();
        if !same && same_st.is_some() {
            // A region read back one for one, another not: the cells of the first are
            // needed too.
            return None;
        }
        for (t, row) in data.chunks_exact_mut(words as usize).enumerate() {
            let t = t as u32;
            if mask >> t & 1 == 0 {
                // Lanes that do not record: 0 (`SiteExpect::Exact`).
                continue;
            }
            if let Some(seed) = read_back {
                for (reg, x) in row[..n as usize].iter_mut().enumerate() {
                    *x = values::st_value(seed, t, reg as u32);
                }
                if form.red {
                    row[n as usize] = ldst::reduce(form, &row[..n as usize])?;
                }
                continue;
            }
            for reg in 0..n {
                let c = ldst::cell(form.shape, t, reg);
                let (cs, w) = (cells.get(c.half)?, widths[c.half]);
                let at = |col: u32| cs.get((c.lane * w + col) as usize).copied();
                row[reg as usize] = if pack {
                    at(2 * c.col)? & 0xFFFF | (at(2 * c.col + 1)? & 0xFFFF) << 16
                } else {
                    at(c.col)?
                };
            }
            if form.red {
                row[n as usize] = ldst::reduce(form, &row[..n as usize])?;
            }
        }
        Some((SiteExpect::Exact { words, data }, races))
    }
}

/// The note of an ld reading TMEM cells no write is ordered before.
pub(super) const OQ9_NEVER_WRITTEN: &str = "OQ-9: an ld reads TMEM cells that no write is ordered before (a fresh allocation): unspecified";

/// The note of an ld whose unspecified cells no rule or open question explains: an oracle
/// gap, never expected (the drivers' `tests/valid_words.rs` fails on it).
pub const ORACLE_GAP: &str = "ORACLE-GAP: an ld reads cells the oracle leaves unspecified without naming the rule or open question (run::tmem::reads::note_open): unspecified";

/// Why a writer whose values the oracle computes may still leave some of its cells open
/// (`None` where every cell it writes is known): an exact MMA's `.ashift` row 0, its
/// disabled lanes (MMA-DOL-SEM: they keep an old value), its old D (MMA-ENABLE-D) or a sum
/// that is not exact in f32 (OQ-19); a cp's words outside the filled source region.
fn known_open_reason(w: &Acc<'_>) -> Option<&'static str> {
    match w.op {
        Op::Mma(m) if w.mma.is_some() => Some(if m.form.ashift {
            "MMA .ashift (§9.7.16.10.9.1): D row 0 is computed from an A row the text does not state (as for shift's first row, OQ-16): unspecified"
        } else if m.disable_output_lane.is_some() {
            "MMA-DOL-SEM: a lane whose disable-output-lane bit is set keeps its old value, which is not known at the MMA (never written, OQ-9, or open itself): unspecified"
        } else if m.enable_input_d {
            "MMA-ENABLE-D: an MMA accumulates onto old D cells that are not known at its issue, or its sum is not exact in f32 (OQ-19): unspecified"
        } else {
            "OQ-19: an ld reads MMA cells whose sum is not exact in f32 (rounding, accumulation order and precision are open): unspecified"
        }),
        Op::Cp { .. } if w.cp.is_some() => Some(
            "CP-SHAPE (§9.7.16.9.2): a cp copies shared-memory words outside the region the program filled (their contents are not stated): unspecified",
        ),
        _ => None,
    }
}
