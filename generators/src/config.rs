//! The swarm [`Config`]: which parts of the tcgen05 language a run of the builder may use
//! (after wasm-smith's `Config`). `Default` is a sane mix; `Arbitrary` draws a
//! *swarm* configuration (random subsets of every list, random rates), so that a campaign also
//! explores programs that use few features intensely; [`Config::sanitize`] only removes.

use arbitrary::{Arbitrary, Unstructured};
use tcgen05_ir::{CtaGroup, LdStShape, MmaKind, Num, Target};

/// The tcgen05-capable targets (reference §1); the others exist only for GEN-TARGET near-misses.
pub const TCGEN05_TARGETS: &[Target] = &[
    Target::Sm100a,
    Target::Sm100f,
    Target::Sm103a,
    Target::Sm103f,
    Target::Sm110a,
    Target::Sm110f,
];

/// The legal nCols values (reference §2.3: powers of two in [32, 512]).
pub const LEGAL_NCOLS: &[u32] = &[32, 64, 128, 256, 512];

/// The MMA kinds the builder can generate valid programs for: the kinds of idesc layout (a),
/// and the block-scaled kinds mxf8f6f4 (layout (b)), mxf4 and mxf4nvf4 (layout (c)), with
/// scale factors copied into TMEM by cp.32x128b.warpx4 (reference §2.8, §3.7).
pub const BUILDER_MMA_KINDS: &[MmaKind] = &[
    MmaKind::F16,
    MmaKind::Tf32,
    MmaKind::F8f6f4,
    MmaKind::I8,
    MmaKind::Mxf8f6f4,
    MmaKind::Mxf4,
    MmaKind::Mxf4nvf4,
];

/// What the builder may generate. Every list is a set of allowed choices; an empty list turns
/// the feature off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Targets to choose from. Default: every tcgen05 target, `sm_100a` half the time (the
    /// builder prefers it when allowed). Only tcgen05-capable targets survive
    /// [`Config::sanitize`]. Interacts with `ld_red`, `shift`, `mma_kinds` (reference §1 gates
    /// them by target); the builder drops features the chosen target lacks.
    pub targets: Vec<Target>,
    /// Cluster sizes (CTAs per cluster). Default: 1 and 2. `cta_group::2` needs a size >= 2.
    pub cluster_sizes: Vec<u8>,
    /// Most clusters in the grid. Default: 1 (more clusters make co-residency questions, OQ-7).
    pub max_clusters: u16,
    /// Fewest warps per CTA. Default: 1.
    pub min_warps: u8,
    /// Most warps per CTA. Default: 4 (one warpgroup; 8 makes two warps share a lane quarter).
    pub max_warps: u8,
    /// `.cta_group` values. Default: both. `::2` programs use the 2-CTA allocation protocol.
    pub cta_groups: Vec<CtaGroup>,
    /// nCols values allocations choose from. Default: all of [`LEGAL_NCOLS`].
    pub ncols: Vec<u32>,
    /// Most allocations per CTA (non-increasing sizes, total <= 512). Default: 3.
    pub max_allocs: u8,
    /// ld/st shapes. Default: all five.
    pub ld_st_shapes: Vec<LdStShape>,
    /// Largest ld/st `.num`. Default: `.x8` (keeps programs small; `.x128` is legal).
    pub max_num: Num,
    /// Percent of ld/st flows that use `.pack::16b` / `.unpack::16b`. Default: 10.
    pub pack_pct: u8,
    /// Percent of flow windows that are 128 columns wide; flows there may use every `.num` up
    /// to `.x128` whatever `max_num` says (LDST-NUM, reference §2.6). Default: 4.
    pub wide_pct: u8,
    /// Percent of MMAs with A in TMEM (M = 128/256, not ws or block-scaled, no collector
    /// fill/use) issued with `.ashift` (MMA-ASHIFT-*, reference §3.7). Default: 25.
    pub ashift_pct: u8,
    /// Percent of programs whose MMA plan may take the wider MMA forms (N above 64, negated
    /// A / B, A from an earlier MMA's D, D off column 0, a st inside D, a loop of accumulating
    /// MMAs: `builder::build_with`). Their choices come from a sequence of their own, so a
    /// program with them is the program without them, its MMA plan varied, and a stream's
    /// other programs (where a planted fault is first found and minimized) are those of a
    /// builder without the forms. Default: 35.
    pub mma_forms_pct: u8,
    /// Percent of `cta_group::1` MMA plans whose first async ops another warp issues before
    /// the barrier (pipelined pairs across threads, reference §4.4 row 3). Default: 25.
    pub cross_pct: u8,
    /// Percent of warps whose last flow records its ld registers before `wait::ld` (a true
    /// register dependency, reference §4.4 last row, MCM-LD-REGDEP). Default: 15.
    pub regdep_pct: u8,
    /// st → ld data flows inside each warp's lane quarter. Default: on.
    pub st_ld: bool,
    /// `tcgen05.ld.red` flows (only on targets that have it). Default: on.
    pub ld_red: bool,
    /// st → mma → ld, cp → mma → ld and smem → mma → ld flows. Default: on. With
    /// `cta_group::2` the even CTA of each pair issues the MMA for both (reference §2.5).
    pub mma: bool,
    /// `tcgen05.cp` (A operand, and extra copies). Default: on. Needs `mma` (completion goes
    /// through commit).
    pub cp: bool,
    /// `tcgen05.shift` after an MMA (arch-specific targets only). Default: on.
    pub shift: bool,
    /// MMA kinds. Default: [`BUILDER_MMA_KINDS`].
    pub mma_kinds: Vec<MmaKind>,
    /// Percent of MMAs issued as `.ws`. Default: 15.
    pub ws_pct: u8,
    /// Percent of non-ws MMAs issued as `.sp` (sparse A). Default: 20. The metadata is
    /// copied into TMEM by `tcgen05.cp` from shared memory filled with
    /// `FillElem::SpMeta` (every nibble valid for every kind, MMA-SP-META-*), so it needs
    /// `cp`; with `sparse_meta_st` it is written by `tcgen05.st` instead.
    pub sparse_pct: u8,
    /// Sparse metadata written by the four quarter warps' `tcgen05.st` instead of cp (needs
    /// 4 warps and `st_ld`). Default: off. The IR's st values are `lane * mul + seed`, so only
    /// the first nibble of each partition's first metadata row is chosen valid: programs are
    /// valid only as far as the oracle judges (that one cell, OQ-29). The MMA-SP-META
    /// mutators turn it on (the oracle judges st-written metadata only).
    pub sparse_meta_st: bool,
    /// Most st/ld flows per warp. Default: 2.
    pub max_flows_per_warp: u8,
    /// Percent chance of a schedule knob (`Stmt::Spin`) at each eligible point. Default: 10.
    pub spin_pct: u8,
    /// Most iterations of one schedule knob. Default: 64.
    pub max_spin: u32,
    /// Percent of flow groups wrapped in a bounded loop. Default: 10.
    pub loop_pct: u8,
    /// Percent of warps whose flows move into a called function. Default: 10.
    pub call_pct: u8,
    /// Percent of warps that record the alloc slots they read. Default: 50.
    pub observe_addr_pct: u8,
    /// Percent of warps that end with an explicit `exit` (DEALLOC-EXIT-AFTER). Default: 10.
    pub exit_pct: u8,
    /// Put checkpoints at each phase (to locate hangs). Default: on.
    pub checkpoints: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            targets: TCGEN05_TARGETS.to_vec(),
            cluster_sizes: vec![1, 2],
            max_clusters: 1,
            min_warps: 1,
            max_warps: 4,
            cta_groups: vec![CtaGroup::One, CtaGroup::Two],
            ncols: LEGAL_NCOLS.to_vec(),
            max_allocs: 3,
            ld_st_shapes: LdStShape::LEGAL.to_vec(),
            max_num: Num::X8,
            pack_pct: 10,
            wide_pct: 4,
            ashift_pct: 25,
            mma_forms_pct: 35,
            cross_pct: 25,
            regdep_pct: 15,
            st_ld: true,
            ld_red: true,
            mma: true,
            cp: true,
            shift: true,
            mma_kinds: BUILDER_MMA_KINDS.to_vec(),
            ws_pct: 15,
            sparse_pct: 20,
            sparse_meta_st: false,
            max_flows_per_warp: 2,
            spin_pct: 10,
            max_spin: 64,
            loop_pct: 10,
            call_pct: 10,
            observe_addr_pct: 50,
            exit_pct: 10,
            checkpoints: true,
        }
    }
}

impl Config {
    /// The default configuration restricted to `sm_100a` (the first Blackwell datacenter part;
    /// no ld.red there, reference §1).
    pub fn sm100a() -> Self {
        Config {
            targets: vec![Target::Sm100a],
            ..Config::default()
        }
    }

    /// Removes what the builder cannot use: unknown or non-tcgen05 targets, cluster sizes
    /// other than 1, 2, 4, illegal nCols, MMA kinds the builder does not support, `::2`
    /// without a cluster size of 2 or more; clamps counts to what the IR allows. Never adds.
    pub fn sanitize(&mut self) {
        self.targets.retain(|t| TCGEN05_TARGETS.contains(t));
        dedup(&mut self.targets);
        self.cluster_sizes.retain(|c| matches!(c, 1 | 2 | 4));
        dedup(&mut self.cluster_sizes);
        self.max_clusters = self.max_clusters.min(4);
        self.max_warps = self.max_warps.min(16);
        self.min_warps = self.min_warps.min(self.max_warps);
        if !self.cluster_sizes.iter().any(|c| *c >= 2) {
            self.cta_groups.retain(|g| *g == CtaGroup::One);
        }
        dedup(&mut self.cta_groups);
        self.ncols.retain(|n| LEGAL_NCOLS.contains(n));
        dedup(&mut self.ncols);
        self.max_allocs = self.max_allocs.min(8);
        dedup(&mut self.ld_st_shapes);
        self.mma_kinds.retain(|k| BUILDER_MMA_KINDS.contains(k));
        dedup(&mut self.mma_kinds);
        self.pack_pct = self.pack_pct.min(100);
        self.ws_pct = self.ws_pct.min(100);
        self.sparse_pct = self.sparse_pct.min(100);
        self.max_flows_per_warp = self.max_flows_per_warp.min(8);
        self.max_spin = self.max_spin.min(1 << 16);
        self.spin_pct = self.spin_pct.min(100);
        self.loop_pct = self.loop_pct.min(100);
        self.call_pct = self.call_pct.min(100);
        self.observe_addr_pct = self.observe_addr_pct.min(100);
        self.exit_pct = self.exit_pct.min(100);
    }
}

fn dedup<T: PartialEq + Copy>(v: &mut Vec<T>) {
    let mut out: Vec<T> = Vec::with_capacity(v.len());
    for x in v.iter() {
        if !out.contains(x) {
            out.push(*x);
        }
    }
    *v = out;
}

fn subset<T: Copy>(u: &mut Unstructured<'_>, all: &[T]) -> arbitrary::Result<Vec<T>> {
    let mut out = Vec::with_capacity(all.len());
    for x in all {
        if u.ratio(2, 3)? {
            out.push(*x);
        }
    }
    if out.is_empty() && !all.is_empty() {
        out.push(all[u.choose_index(all.len())?]);
    }
    Ok(out)
}

impl<'a> Arbitrary<'a> for Config {
    /// A swarm configuration: random non-empty subsets of every list and random rates, then
    /// [`Config::sanitize`]d.
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let max_warps = u.int_in_range(1..=8)?;
        let mut c = Config {
            targets: subset(u, TCGEN05_TARGETS)?,
            cluster_sizes: subset(u, &[1u8, 2, 4])?,
            max_clusters: u.int_in_range(1..=2)?,
            min_warps: u.int_in_range(1..=max_warps)?,
            max_warps,
            cta_groups: subset(u, CtaGroup::ALL)?,
            ncols: subset(u, LEGAL_NCOLS)?,
            max_allocs: u.int_in_range(1..=4)?,
            ld_st_shapes: subset(u, LdStShape::LEGAL)?,
            max_num: *u.choose(Num::LEGAL)?,
            pack_pct: u.int_in_range(0..=50)?,
            wide_pct: u.int_in_range(0..=20)?,
            ashift_pct: u.int_in_range(0..=50)?,
            mma_forms_pct: u.int_in_range(0..=100)?,
            cross_pct: u.int_in_range(0..=50)?,
            regdep_pct: u.int_in_range(0..=50)?,
            st_ld: u.arbitrary()?,
            ld_red: u.arbitrary()?,
            mma: u.arbitrary()?,
            cp: u.arbitrary()?,
            shift: u.arbitrary()?,
            mma_kinds: subset(u, BUILDER_MMA_KINDS)?,
            ws_pct: u.int_in_range(0..=50)?,
            sparse_pct: u.int_in_range(0..=50)?,
            sparse_meta_st: false,
            max_flows_per_warp: u.int_in_range(1..=4)?,
            spin_pct: u.int_in_range(0..=50)?,
            max_spin: u.int_in_range(1..=256)?,
            loop_pct: u.int_in_range(0..=50)?,
            call_pct: u.int_in_range(0..=50)?,
            observe_addr_pct: u.int_in_range(0..=100)?,
            exit_pct: u.int_in_range(0..=50)?,
            checkpoints: u.arbitrary()?,
        };
        c.sanitize();
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_only_removes() {
        let mut c = Config {
            targets: vec![Target::Sm90a, Target::Sm100a, Target::Sm100a],
            cluster_sizes: vec![1, 3],
            ncols: vec![48, 64, 1024],
            mma_kinds: vec![MmaKind::Mxf4, MmaKind::F16, MmaKind::Mxf4],
            ..Config::default()
        };
        c.sanitize();
        assert_eq!(c.targets, vec![Target::Sm100a]);
        assert_eq!(c.cluster_sizes, vec![1]);
        // No cluster of two CTAs is left, so no CTA pair: cta_group::2 goes (reference §2.5).
        assert_eq!(c.cta_groups, vec![CtaGroup::One]);
        assert_eq!(c.ncols, vec![64]);
        assert_eq!(c.mma_kinds, vec![MmaKind::Mxf4, MmaKind::F16]);
        let d = Config::default();
        let mut d2 = d.clone();
        d2.sanitize();
        assert_eq!(d, d2, "the default is already sane");
    }

    #[test]
    fn arbitrary_configs_are_sane() {
        let bytes: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let mut u = Unstructured::new(&bytes);
        for _ in 0..20 {
            let c = Config::arbitrary(&mut u).unwrap();
            let mut s = c.clone();
            s.sanitize();
            assert_eq!(c, s);
            assert!(c.min_warps <= c.max_warps);
        }
    }
}
