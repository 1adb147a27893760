//! The valid-by-construction builder.
//!
//! A program is a sequence of *phases* separated by synchronization points that every warp of
//! every CTA executes (so barrier counts always match):
//!
//! 1. **setup**: the allocating warp allocates (non-increasing sizes, total <= 512 columns,
//!    ALLOC-NONINCREASING, ALLOC-BLOCKS never triggered), the MMA issuer initializes its
//!    mbarrier and fills its shared-memory operands (then `fence.proxy.async`, MCM-PROXY);
//!    `tcgen05.fence::before_thread_sync` ends the phase for the allocator (OQ-26: CUTLASS style).
//! 2. sync: `barrier.sync` (`cta_group::1`) or a cluster barrier (`cta_group::2`, both CTAs of
//!    the pair).
//! 3. **work**: `fence::after_thread_sync`, then st → wait::st → ld → wait::ld flows inside the
//!    warp's lane quarter (LDST-LANE-QUARTER: warp-rank mod 4) on columns no other warp of that
//!    quarter touches; stores of the MMA's A operand; `fence::before_thread_sync`.
//! 4. (with an MMA) sync, then **mma**: one elected thread issues [cp →] mma [→ mma] [→ shift]
//!    (pipelined pairs, §4.2) and commits to an mbarrier; consumer warps wait on it, fence
//!    `after_thread_sync` and load D from their quarter (canonical pattern 4, §4.4).
//!    With `cta_group::2` (§2.5, §3.7, §3.9) both CTAs of the pair allocate `::2` with the
//!    same sizes, initialize their mbarrier (`fence.mbarrier_init`, then the cluster barrier)
//!    and fill their own shared-memory operands; only the even CTA issues the MMA, cp and
//!    shift (`%cluster_ctarank` tested per pair), and its commit multicasts the arrive to both
//!    CTAs' mbarriers (`.multicast::cluster`, ctaMask of the pair), so each CTA's consumers
//!    wait on their own. Block-scaled kinds (mxf8f6f4, mxf4, mxf4nvf4) get their scale factors
//!    by cp.32x128b.warpx4 or by the four quarter warps' st with one seed (both duplicate them
//!    into every 32-lane partition, MMA-BS-DUP); `.sp` MMAs (`Config::sparse_pct`) get their
//!    metadata by cp.128x128b from a `FillElem::SpMeta` region (every nibble valid for every
//!    kind), or from the quarter warps' st with `Config::sparse_meta_st`.
//! 5. sync (DEALLOC-PAIR-SYNC for `::2`), then **teardown**: the allocating warp fences,
//!    deallocates every allocation with its own (address, nCols) and relinquishes last.
//!
//! All decisions come from a [`Choices`], so a program is a pure function of its seed or bytes.

use crate::choice::{Choices, SeedChoices};
use crate::config::Config;
use crate::mmaenc;
use crate::stmts::*;
use crate::target;
use tcgen05_ir::form::*;
use tcgen05_ir::*;

mod cross;
mod mma_plan;
mod two_lds;

use mma_plan::issue_stmt;

/// Statement-count hint for one warp (avoids regrowth in the common case).
const WARP_CAPACITY: usize = 24;

/// Percent of the accumulating second MMAs that run in a loop of 48 to 63 iterations (in
/// programs with the wider MMA forms, `Config::mma_forms_pct`).
const MMA_LOOP_PCT: u8 = 12;

/// One allocation of the plan.
#[derive(Debug, Clone, Copy)]
struct Alloc {
    slot: u8,
    ncols: u32,
    used: u32,
}

/// A column range of one allocation.
#[derive(Debug, Clone, Copy)]
struct Cols {
    slot: u8,
    col: u32,
    width: u32,
}

/// Where the MMA's A operand comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ASrc {
    /// Shared memory (`a-desc`).
    Smem,
    /// TMEM filled by `tcgen05.cp` from the same thread (cp → mma is pipelined, §4.2).
    Cp,
    /// TMEM filled by the quarter warps' `tcgen05.st` before the sync (cross-thread, §4.4).
    St,
    /// TMEM written by an earlier MMA of the same thread (its D is this MMA's A), which the
    /// thread waits for (commit to mbarrier 1, wait, `fence::after_thread_sync`) before it
    /// issues this one: only MMA completion orders a later read of its D (MMA-ASYNC,
    /// §9.7.16.6; an A read is no pipelined pair of §4.2).
    Mma,
}

/// The MMA part of a plan.
#[derive(Debug, Clone)]
struct MmaPlan {
    issuer: usize,
    consumers: Vec<bool>,
    /// The elected thread's statements before its commit (cp, mma, shift).
    issue: Vec<Stmt>,
    /// Whether the commit addresses its mbarrier through `.shared::cluster`.
    shared_cluster: bool,
    a_src: ASrc,
    a_cols: Option<Cols>,
    /// A in TMEM duplicated over the lane halves (a `cta_group::2` M = 128 MMA, data-path
    /// layout B: row m in lanes m and m + 64, CUTLASS's `TmemAllocMode::Duplicated`): by st,
    /// quarters 2 and 3 store with the seeds of quarters 0 and 1.
    a_dup: bool,
    /// TMEM the quarter warps (ranks 0-3) fill by `tcgen05.st` before the sync, as
    /// (columns, seed): scale factors written with one seed by all four quarters (so every
    /// 32-lane partition holds the same values, MMA-BS-DUP) and sparse metadata.
    st_fills: Vec<(Cols, u32)>,
    d: Cols,
    /// The columns of D (from `d`'s first) the MMA writes in every lane: N, or N / 2 (N / 4)
    /// in the folded data-path layouts B and E (G) (§9.7.16.10.5: dense `cta_group::2`
    /// M = 128, `.ws` M = 64 (M = 32): the N columns in blocks over the lanes), where the
    /// consumers' lds read.
    n: u32,
    /// Regions the issuer fills: (region, element kind).
    fills: Vec<(u8, FillElem)>,
    /// Columns an extra cp writes, which every consumer loads from its lane quarter.
    scratch: Option<Cols>,
    /// Scratch cells outside the extra cp's footprint that the quarter warps store before the
    /// sync: (columns, seed, mask of the quarters that store; each quarter its own seed).
    scratch_fill: Option<(Cols, u32, u8)>,
    /// A warp other than the issuer and the first statements of the issue list, which it
    /// issues before the MMA phase's barrier.
    pre: Option<(usize, Vec<Stmt>)>,
}

/// Builds one valid program from `cfg` and the choices `c`; the first choices decide whether
/// its MMA plan may take the wider forms (`Config::mma_forms_pct`) and seed their choices.
pub fn build(cfg: &Config, c: &mut impl Choices) -> Program {
    let forms = c.percent(cfg.mma_forms_pct).then(|| u64::from(c.word()));
    build_with(cfg, c, forms)
}

/// Builds the valid program of `seed` (`SeedChoices`), the wider MMA forms decided and chosen
/// by [`forms_for`], without drawing from the seed's own choices.
pub fn build_seeded(cfg: &Config, seed: u64) -> Program {
    build_with(cfg, &mut SeedChoices::new(seed), forms_for(cfg, seed))
}

/// Whether the program of `seed` takes the wider MMA forms (`Config::mma_forms_pct` percent
/// of the seeds), and if so the seed of their own choice sequence.
pub fn forms_for(cfg: &Config, seed: u64) -> Option<u64> {
    let s = seed ^ 0x464F_524D_5321;
    SeedChoices::new(s)
        .percent(cfg.mma_forms_pct)
        .then_some(s.wrapping_add(1))
}

/// Builds one valid program from `cfg` and the choices `c`, with the wider MMA forms when
/// `forms` gives the seed of their choices (N above 64, negated A / B, A from an earlier
/// MMA's D, D off column 0, a st inside D, a loop of accumulating MMAs). Those choices come
/// from a sequence of their own, so a program with the forms is the program without them
/// with its MMA plan varied: every other choice, drawn from `c`, is the same.
pub fn build_with(cfg: &Config, c: &mut impl Choices, forms: Option<u64>) -> Program {
    Builder {
        cfg,
        c,
        forms: forms.is_some(),
        v: SeedChoices::new(forms.unwrap_or(0)),
        regions: Vec::new(),
        funcs: Vec::new(),
        next_ck: 1,
    }
    .run()
}

struct Builder<'a, C: Choices> {
    cfg: &'a Config,
    c: &'a mut C,
    /// The wider MMA forms ([`build_with`]).
    forms: bool,
    /// The choices of the wider forms (drawn only with `forms`).
    v: SeedChoices,
    regions: Vec<u32>,
    funcs: Vec<Func>,
    next_ck: u16,
}

impl<C: Choices> Builder<'_, C> {
    fn checkpoint(&mut self, out: &mut Vec<Stmt>) {
        if self.cfg.checkpoints {
            out.push(Stmt::Checkpoint(self.next_ck));
            self.next_ck = self.next_ck.wrapping_add(1).max(1);
        }
    }

    fn maybe_spin(&mut self, out: &mut Vec<Stmt>) {
        if self.c.percent(self.cfg.spin_pct) {
            out.push(Stmt::Spin(self.c.range(1, self.cfg.max_spin.max(1))));
        }
    }

    /// A wider MMA form taken `pct` percent of the time, in programs with the forms only
    /// (drawn from their own choices, [`build_with`]).
    fn form(&mut self, pct: u8) -> bool {
        self.forms && self.v.percent(pct)
    }

    fn region(&mut self, bytes: u32) -> u8 {
        self.regions.push(bytes);
        (self.regions.len() - 1) as u8
    }

    fn run(mut self) -> Program {
        let cfg = self.cfg;
        // Target and version (reference §1, GEN-TARGET, GEN-PTXVER).
        // sm_100a half the time when allowed (the main hardware target), else any allowed.
        let tgt = if cfg.targets.contains(&Target::Sm100a) && self.c.percent(50) {
            Target::Sm100a
        } else {
            self.c.pick(&cfg.targets).copied().unwrap_or(Target::Sm100a)
        };
        let min = target::min_version(tgt);
        let versions: Vec<PtxVersion> = target::VERSIONS
            .iter()
            .copied()
            .filter(|v| *v >= min)
            .collect();
        let version = self
            .c
            .pick(&versions)
            .copied()
            .unwrap_or(target::MAX_VERSION);

        // cta_group and cluster shape (GEN-CTAGROUP-UNIFORM: one value per program; a pair
        // needs a cluster of at least two CTAs, GEN-PEER-EXISTS).
        let pairs_possible = cfg.cluster_sizes.iter().any(|s| *s >= 2);
        let groups: Vec<CtaGroup> = cfg
            .cta_groups
            .iter()
            .copied()
            .filter(|g| *g == CtaGroup::One || pairs_possible)
            .collect();
        let cg = self.c.pick(&groups).copied().unwrap_or(CtaGroup::One);
        let sizes: Vec<u8> = cfg
            .cluster_sizes
            .iter()
            .copied()
            .filter(|s| cg == CtaGroup::One || *s >= 2)
            .collect();
        let cluster_size = self
            .c
            .pick(&sizes)
            .copied()
            .unwrap_or(if cg == CtaGroup::Two { 2 } else { 1 });
        let clusters = self.c.range(1, u32::from(cfg.max_clusters.max(1))) as u16;
        let declare_cluster = cluster_size > 1 && self.c.percent(50);
        let nwarps = self.c.range(
            u32::from(cfg.min_warps.max(1)),
            u32::from(cfg.max_warps.max(1)),
        ) as usize;

        // Allocation plan: non-increasing sizes whose total fits the 512 columns of a CTA, so no
        // alloc ever waits for another (ALLOC-NONINCREASING, ALLOC-BLOCKS).
        let mut allocs: Vec<Alloc> = Vec::with_capacity(4);
        if !cfg.ncols.is_empty() {
            let k = self.c.range(1, u32::from(cfg.max_allocs.max(1)));
            let mut sizes: Vec<u32> = (0..k)
                .map(|_| *self.c.pick(&cfg.ncols).expect("non-empty"))
                .collect();
            sizes.sort_unstable_by(|a, b| b.cmp(a));
            let mut total = 0;
            for s in sizes {
                if total + s <= 512 {
                    total += s;
                    allocs.push(Alloc {
                        slot: allocs.len() as u8,
                        ncols: s,
                        used: 0,
                    });
                }
            }
        }
        let aw = self.c.below(nwarps as u32) as usize;

        // MMA plan (`cta_group::1`, or `::2` issued by the even CTA of each pair).
        let mma = if cfg.mma && !allocs.is_empty() {
            self.plan_mma(tgt, version, (cg, cluster_size), nwarps, &mut allocs)
        } else {
            None
        };

        // Flow windows: warps w and w + 4k share a lane quarter, so window k is theirs alone.
        let windows: Vec<Option<Cols>> = (0..nwarps.div_ceil(4))
            .map(|_| {
                // A wide window (Config::wide_pct) lets flows use every .num up to .x128.
                let width = if self.c.percent(cfg.wide_pct) {
                    128
                } else {
                    [32, 16, 8][self.c.below(3) as usize]
                };
                take(&mut allocs, width)
                    .or_else(|| take(&mut allocs, 8))
                    .or_else(|| take(&mut allocs, 4))
            })
            .collect();
        let ld_red_ok = cfg.ld_red && target::has_ld_red(tgt) && version >= PtxVersion::new(8, 8);

        let sync = |out: &mut Vec<Stmt>| {
            if cg == CtaGroup::Two {
                out.push(Stmt::ClusterArrive { relaxed: false });
                out.push(Stmt::ClusterWait);
            } else {
                out.push(Stmt::BarCta);
            }
        };

        let mut warps: Vec<Vec<Stmt>> = Vec::with_capacity(nwarps);
        // The A seeds of quarters 0 and 1 (`MmaPlan::a_dup`).
        let mut a_seeds = [0u32; 2];
        for w in 0..nwarps {
            let mut code = Vec::with_capacity(WARP_CAPACITY);
            // The peer CTA is launched with ours (a cluster is co-scheduled); the opening
            // cluster barrier also makes sure it is running before the pair allocation.
            if cg == CtaGroup::Two {
                sync(&mut code);
            }
            // --- setup
            self.checkpoint(&mut code);
            if w == aw {
                self.maybe_spin(&mut code);
                for a in &allocs {
                    code.push(alloc(cg, a.slot, a.ncols));
                }
                if !allocs.is_empty() {
                    code.push(fence_before());
                }
            }
            if let Some(m) = &mma
                && w == m.issuer
            {
                // Any one lane of the (full) warp inits; which one follows the warp, so
                // generated programs select lanes other than 0 (`%laneid == n`).
                code.push(mbar_init_by(0, init_lane(w)));
                if m.a_src == ASrc::Mma {
                    code.push(mbar_init_by(1, init_lane(w)));
                }
                for (r, e) in &m.fills {
                    code.push(Stmt::Fill {
                        region: *r,
                        seed: self.c.word(),
                        elem: *e,
                    });
                }
                code.push(Stmt::FenceProxyAsync);
            }
            if let Some(MmaPlan {
                pre: Some((p, _)), ..
            }) = &mma
                && w == *p
            {
                code.push(mbar_init_by(1, init_lane(w + 1)));
            }
            sync(&mut code);
            // --- work
            self.checkpoint(&mut code);
            if !allocs.is_empty() {
                code.push(fence_after());
                if self.c.percent(cfg.observe_addr_pct) {
                    for a in &allocs {
                        code.push(Stmt::ObserveAddr { slot: a.slot });
                    }
                }
            }
            let q = (w % 4) as u16;
            if let Some(m) = &mma
                && m.a_src == ASrc::St
                && w < 4
            {
                let a = m.a_cols.expect("A columns planned");
                let num = num_for(a.width);
                let taddr = TmemRef::slot(a.slot, 32 * q, a.col as u16);
                let mut seed = self.c.word();
                if m.a_dup {
                    // Lane 64 + t stores what lane t stores (`st_value` depends on the
                    // thread, not the lane): A duplicated over the lane halves.
                    if q < 2 {
                        a_seeds[usize::from(q)] = seed;
                    } else {
                        seed = a_seeds[usize::from(q) - 2];
                    }
                }
                code.push(st(
                    st_form(LdStShape::S32x32b, num, false),
                    taddr,
                    None,
                    seed,
                ));
                code.push(wait(WaitOp::St));
            }
            if let Some(m) = &mma
                && w < 4
                && !m.st_fills.is_empty()
            {
                for (cols, seed) in &m.st_fills {
                    let taddr = TmemRef::slot(cols.slot, 32 * q, cols.col as u16);
                    code.push(st(
                        st_form(LdStShape::S32x32b, num_for(cols.width), false),
                        taddr,
                        None,
                        *seed,
                    ));
                }
                code.push(wait(WaitOp::St));
            }
            if let Some(MmaPlan {
                scratch_fill: Some((cols, seed, quarters)),
                ..
            }) = &mma
                && w < 4
                && quarters >> q & 1 == 1
            {
                let taddr = TmemRef::slot(cols.slot, 32 * q, cols.col as u16);
                let seed = seed ^ (u32::from(q) + 1).wrapping_mul(values::FILL_MUL);
                code.push(st(
                    st_form(LdStShape::S32x32b, num_for(cols.width), false),
                    taddr,
                    None,
                    seed,
                ));
                code.push(wait(WaitOp::St));
            }
            if let Some(win) = windows[w / 4]
                && cfg.st_ld
            {
                let flows = self.flows(win, q, ld_red_ok);
                self.place_flows(flows, &mut code);
            }
            if let Some(MmaPlan {
                pre: Some((p, ops)),
                ..
            }) = &mma
                && w == *p
            {
                let mut then = ops.clone();
                then.push(commit(CtaGroup::One, 1, self.c.percent(50)));
                code.push(Stmt::If {
                    cond: Cond::ElectOne,
                    then,
                    els: vec![],
                });
            }
            self.maybe_spin(&mut code);
            if !allocs.is_empty() {
                code.push(fence_before());
            }
            // --- mma
            if let Some(m) = &mma {
                sync(&mut code);
                self.checkpoint(&mut code);
                code.push(fence_after());
                if w == m.issuer {
                    code.push(issue_stmt(m, cg, cluster_size));
                }
                if m.consumers[w] {
                    self.maybe_spin(&mut code);
                    code.push(mbar_wait(0, Scope::Cta));
                    code.push(fence_after());
                    let mut num = num_for(m.n.min(1 << self.cfg.max_num as u32));
                    let mut off = self.c.below(m.n - num.count() + 1);
                    let mut taddr = TmemRef::slot(m.d.slot, 32 * q, (m.d.col + off) as u16);
                    // Now and then the warp first overwrites a column or two inside that
                    // range with a st (waited, MCM-ST-BEFORE-USE), so the ld reads D, the
                    // st's words, then D again: a model that tracks which cells the MMA
                    // still owns column by column shows. Only the quarter's one warp
                    // (at most 4 warps) touches these lanes (LDST-LANE-QUARTER).
                    let mut count = num.count();
                    if nwarps <= 4 && count >= 4 && self.form(15) {
                        // Half the time the ld reads 64 or 128 columns of a wide D from its
                        // first, so the D cells after the st's form a run that starts deep
                        // inside the ld.
                        // Only for a `::1` dense D (sparse and `::2` block-scaled results
                        // stay open, OQ-29: a wider ld of them only reads unspecified words).
                        let open = m.issue.iter().any(|s| {
                            matches!(s, Stmt::Tc(Op::Mma(x))
                                if x.form.sp || x.form.cta_group == CtaGroup::Two)
                        });
                        if m.n >= 64 && !open && self.v.percent(50) {
                            num = num_for(m.n.min(128));
                            off = 0;
                            count = num.count();
                            taddr = TmemRef::slot(m.d.slot, 32 * q, m.d.col as u16);
                        }
                        let width = if count >= 8 { 2 } else { 1 };
                        let at = m.d.col + off + 1 + self.v.below(count - 1 - width);
                        code.push(st(
                            st_form(LdStShape::S32x32b, num_for(width), false),
                            TmemRef::slot(m.d.slot, 32 * q, at as u16),
                            None,
                            self.v.word(),
                        ));
                        code.push(wait(WaitOp::St));
                    }
                    code.push(ld(ld_form(LdStShape::S32x32b, num, false), taddr, None));
                    code.push(wait(WaitOp::Ld));
                    // The extra cp's cells (every written cell of the quarter is loaded).
                    if let Some(sc) = m.scratch {
                        let t = TmemRef::slot(sc.slot, 32 * q, sc.col as u16);
                        let num = num_for(sc.width);
                        code.push(ld(ld_form(LdStShape::S32x32b, num, false), t, None));
                        code.push(wait(WaitOp::Ld));
                    }
                }
                if let Some((p, _)) = &m.pre
                    && w == *p
                {
                    code.push(mbar_wait(1, Scope::Cta));
                }
                code.push(fence_before());
            }
            // --- teardown (DEALLOC-PAIR-SYNC for ::2: the cluster barrier orders both CTAs'
            // TMEM accesses before the pair dealloc).
            sync(&mut code);
            if w == aw && !allocs.is_empty() {
                self.checkpoint(&mut code);
                code.push(fence_after());
                self.maybe_spin(&mut code);
                // Any order frees everything; reverse allocation order is the common one.
                let reverse = self.c.percent(50);
                for i in 0..allocs.len() {
                    let a = if reverse {
                        allocs[allocs.len() - 1 - i]
                    } else {
                        allocs[i]
                    };
                    code.push(dealloc(cg, a.slot, a.ncols));
                }
                // Relinquish last (reference §8), or not at all (it is optional).
                if self.c.percent(80) {
                    code.push(relinquish(cg));
                }
            }
            // DEALLOC-EXIT-AFTER: a warp may exit right after its dealloc.
            if self.c.percent(cfg.exit_pct) {
                code.push(Stmt::Exit);
            }
            warps.push(code);
        }

        let mbarriers = match &mma {
            Some(m) if m.pre.is_some() || m.a_src == ASrc::Mma => 2,
            Some(_) => 1,
            None => 0,
        };
        Program {
            launch: Launch {
                target: tgt,
                ptx_version: version,
                cluster_size,
                clusters,
                warps_per_cta: nwarps as u8,
                declare_cluster,
            },
            smem: Smem {
                slots: allocs.len() as u8,
                mbarriers,
                regions: self.regions,
            },
            warps,
            funcs: self.funcs,
        }
    }

    /// Puts a warp's flows into its code: inline, in a bounded loop, or in a called function.
    fn place_flows(&mut self, flows: Vec<Stmt>, code: &mut Vec<Stmt>) {
        if flows.is_empty() {
            return;
        }
        let flows = if self.c.percent(self.cfg.loop_pct) {
            vec![Stmt::Loop {
                count: self.c.range(2, 3) as u8,
                body: flows,
            }]
        } else {
            flows
        };
        if self.funcs.len() < 8 && self.c.percent(self.cfg.call_pct) {
            self.funcs.push(Func { body: flows });
            code.push(Stmt::Call((self.funcs.len() - 1) as u8));
        } else {
            code.extend(flows);
        }
    }

    /// st → ld flows in window `win` of lane quarter `q`.
    fn flows(&mut self, win: Cols, q: u16, ld_red_ok: bool) -> Vec<Stmt> {
        let cfg = self.cfg;
        let n = self.c.range(1, u32::from(cfg.max_flows_per_warp.max(1)));
        let mut out = Vec::with_capacity(5 * n as usize);
        for i in 0..n {
            let red = ld_red_ok && self.c.percent(25);
            let shapes: Vec<LdStShape> = cfg
                .ld_st_shapes
                .iter()
                .copied()
                .filter(|s| !red || matches!(s, LdStShape::S32x32b | LdStShape::S16x32bx2))
                .collect();
            let Some(&shape) = self.c.pick(&shapes) else {
                continue;
            };
            let pack = !red && self.c.percent(cfg.pack_pct);
            let mult = if pack { 2 } else { 1 };
            let split_mul = 1 + self.c.below(2);
            // Columns the access covers (reference §2.6; pack/unpack doubles them, OQ-10 kept
            // out of the way by reserving the doubled footprint).
            let fp = |num: Num| -> u32 {
                let cols = cols_per_rep(shape) * num.count() * mult;
                if shape == LdStShape::S16x32bx2 {
                    cols * split_mul + cols
                } else {
                    cols
                }
            };
            let nums: Vec<Num> = Num::LEGAL
                .iter()
                .copied()
                .filter(|n| {
                    (*n <= cfg.max_num || win.width >= 128)
                        && (!red || *n >= Num::X2)
                        && vec_len(shape, *n).is_some()
                        && fp(*n) <= win.width
                })
                .collect();
            let Some(&num) = self.c.pick(&nums) else {
                continue;
            };
            let lane = 32 * q
                + if is_16_lane(shape) {
                    16 * self.c.below(2) as u16
                } else {
                    0
                };
            let col = win.col + self.c.below(win.width - fp(num) + 1);
            let taddr = TmemRef::slot(win.slot, lane, col as u16);
            let split = (shape == LdStShape::S16x32bx2).then(|| num.count() * mult * split_mul);
            let lf = if red {
                let ty = [Ty::U32, Ty::S32, Ty::F32][self.c.below(3) as usize];
                let f32 = ty == Ty::F32;
                LdForm {
                    red: true,
                    red_op: Some(if self.c.percent(50) {
                        RedOp::Max
                    } else {
                        RedOp::Min
                    }),
                    abs: f32 && self.c.percent(50),
                    nan: f32 && self.c.percent(50),
                    ty,
                    ..ld_form(shape, num, false)
                }
            } else {
                ld_form(shape, num, pack)
            };
            let seed = if lf.red && lf.ty == Ty::F32 {
                let regs = vec_len(shape, num).map_or(0, u32::from);
                self.red_seed(regs, lf.nan)
            } else {
                self.c.word()
            };
            let at = out.len();
            out.push(st(st_form(shape, num, pack), taddr, split, seed));
            out.push(wait(WaitOp::St));
            self.maybe_spin(&mut out);
            let ld = ld(lf, taddr, split);
            // The last flow may record its registers before `wait::ld` (§4.4 last row,
            // MCM-LD-REGDEP): the ld alone in a one-iteration loop, whose registers are
            // recorded at the end of the loop body; the wait::ld after the loop keeps the next
            // st (of a surrounding loop) and the dealloc after the ld (MCM-LD-WAR).
            if i + 1 == n && self.c.percent(cfg.regdep_pct) {
                out.push(Stmt::Loop {
                    count: 1,
                    body: vec![ld],
                });
            } else {
                out.push(ld);
            }
            out.push(wait(WaitOp::Ld));
            // Or the flow checked against `.32x32b` (builder/cross.rs), or with its ld split
            // in two before one wait (builder/two_lds.rs), drawn after the flow's own choices
            // so that the later ones stay those of the program without them.
            if !lf.red {
                let other = match self.cross_flow(shape, num, pack, taddr, split, seed, q) {
                    Some(cross) => Some(cross),
                    None => self.two_lds(shape, num, pack, taddr, seed),
                };
                if let Some(flow) = other {
                    out.truncate(at);
                    out.extend(flow);
                }
            }
        }
        out
    }

    /// The seed of the st an f32 `ld.red` flow reads back (§9.7.16.8.3): one whose values
    /// (`values::st_value`, every lane and each of the `regs` registers) hold no f32 zero,
    /// whose sign `.min` / `.max` leaves open against the other zero, and no NaN unless the
    /// form has `.NaN` (without it, which input a NaN gives is open): OQ-13 leaves the result
    /// open there, so an f32 reduction of such inputs observes nothing. The first of a few
    /// draws that qualifies; the last draw otherwise (then the result is open, still valid).
    fn red_seed(&mut self, regs: u32, nan: bool) -> u32 {
        let mut seed = self.c.word();
        for _ in 0..16 {
            let clean = (0..32).all(|t| {
                (0..regs).all(|r| {
                    let mag = values::st_value(seed, t, r) & 0x7FFF_FFFF;
                    mag != 0 && (nan || mag <= 0x7F80_0000)
                })
            });
            if clean {
                break;
            }
            seed = self.c.word();
        }
        seed
    }
}

/// The lane of warp `w` that inits an mbarrier in the setup: never 0 for the first warps and
/// different from warp to warp (1, 8, 15, 22, 29, 4, ...), so a simulator that selects the
/// wrong lane for `%laneid == n` leaves the mbarrier uninitialized and its wait gives up.
fn init_lane(w: usize) -> u8 {
    ((1 + 7 * w) % 32) as u8
}

/// Takes `width` free columns from the first allocation that has them.
fn take(allocs: &mut [Alloc], width: u32) -> Option<Cols> {
    let a = allocs.iter_mut().find(|a| a.ncols - a.used >= width)?;
    let col = a.used;
    a.used += width;
    Some(Cols {
        slot: a.slot,
        col,
        width,
    })
}

/// The largest `.num` of a `.32x32b` access that fits `cols` columns.
fn num_for(cols: u32) -> Num {
    *Num::LEGAL
        .iter()
        .rev()
        .find(|n| n.count() <= cols.max(1))
        .expect(".x1 fits")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::SeedChoices;

    /// The f32 `ld.red` flows of valid programs reduce st values with no signed zero, and no
    /// NaN unless the form has `.NaN` (OQ-13 leaves those results open, §9.7.16.8.3): the
    /// values recomputed from each flow's st (`values::st_value`), nearly always.
    #[test]
    fn f32_reductions_read_no_zero_and_no_nan_without_nan() {
        let (mut flows, mut clean) = (0u32, 0u32);
        for seed in 0..600 {
            let p = build(&Config::default(), &mut SeedChoices::new(seed));
            let mut last_st: Option<(TmemRef, u32, u16)> = None;
            p.walk(&mut |s| match s {
                Stmt::Tc(Op::St {
                    taddr, seed, nregs, ..
                }) => last_st = Some((*taddr, *seed, *nregs)),
                Stmt::Tc(Op::Ld { form, taddr, .. }) if form.red && form.ty == Ty::F32 => {
                    let Some((_, seed, regs)) = last_st.filter(|x| x.0 == *taddr) else {
                        return;
                    };
                    flows += 1;
                    let ok = (0..32).all(|lane| {
                        (0..u32::from(regs)).all(|r| {
                            let v = f32::from_bits(values::st_value(seed, lane, r));
                            v != 0.0 && (form.nan || !v.is_nan())
                        })
                    });
                    clean += u32::from(ok);
                }
                _ => {}
            });
        }
        assert!(flows >= 20, "only {flows} f32 ld.red flows");
        assert!(
            f64::from(clean) >= 0.95 * f64::from(flows),
            "{clean} of {flows} f32 ld.red flows read clean inputs"
        );
    }
}
