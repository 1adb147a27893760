//! The program model: one kernel, its launch shape, each warp's statements, the functions they
//! call, and the shared-memory scaffolding around tcgen05 (reference §2-§4).
//!
//! A [`Program`] says what every warp of every CTA does. All CTAs run the same warp code; code
//! that must differ between the CTAs of a pair or cluster branches on [`Cond::CtaRank`] or
//! [`Cond::CtaOdd`]. Barriers are statements, so "phases separated by CTA-wide or cluster-wide
//! barriers" are the statement runs between them, and a program can also get barriers wrong
//! (which near-miss programs need). Single-thread operations (mma, cp, shift, commit) are issued
//! by whichever threads reach them: put them under [`Cond::ElectOne`] or [`Cond::LaneEq`] for
//! one elected thread (MMA-SINGLE-THREAD), or leave them warp-wide to probe OQ-14.

use crate::form::*;
use crate::qual::*;
use crate::rule::RuleId;
use serde::{Deserialize, Serialize};

/// A PTX ISA version, e.g. 8.6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct PtxVersion {
    /// Major number (8 or 9 for tcgen05).
    pub major: u8,
    /// Minor number.
    pub minor: u8,
}

impl PtxVersion {
    /// `major.minor`.
    pub const fn new(major: u8, minor: u8) -> Self {
        PtxVersion { major, minor }
    }
}

impl std::fmt::Display for PtxVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The launch: target, PTX version and grid shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Launch {
    /// `.target` of the module.
    pub target: Target,
    /// `.version` of the module.
    pub ptx_version: PtxVersion,
    /// CTAs per cluster: 1, 2 or 4 (CTA pairs exist from 2; reference §2.5).
    pub cluster_size: u8,
    /// Number of clusters in the grid (grid = `clusters * cluster_size` CTAs along x).
    pub clusters: u16,
    /// Warps per CTA, 1 to 16 (block = `32 * warps_per_cta` threads along x).
    pub warps_per_cta: u8,
    /// Whether the entry declares its cluster shape (`.reqnctapercluster`, `.explicitcluster`),
    /// which makes GEN-PEER-EXISTS statically visible.
    pub declare_cluster: bool,
}

impl Launch {
    /// Total CTAs in the grid.
    pub fn ctas(&self) -> u32 {
        u32::from(self.clusters) * u32::from(self.cluster_size)
    }

    /// Threads in each CTA (`.reqntid`: 32 a warp).
    pub fn threads_per_cta(&self) -> u32 {
        32 * u32::from(self.warps_per_cta)
    }
}

/// Where a TMEM address comes from (reference §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum TBase {
    /// The address that an alloc stored in shared-memory slot `n`, read back with `ld.shared`
    /// by the executing thread at the point of use.
    Slot(u8),
    /// No allocation: the offset fields below are the whole address (e.g. a dealloc of an
    /// address nobody allocated, DEALLOC-TADDR-PREV).
    Abs,
}

/// A TMEM address operand: `base + (lane << 16) + col` (reference §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct TmemRef {
    /// The base address.
    pub base: TBase,
    /// Lane offset added to the base (bits 31..16).
    pub lane: u16,
    /// Column offset added to the base (bits 15..0).
    pub col: u16,
    /// If set, odd lanes of the warp add one more column, so threads disagree on the address
    /// (LDST-TADDR-UNIFORM, undefined behaviour).
    pub divergent: bool,
}

impl TmemRef {
    /// `slot` + (lane, col), uniform across the warp.
    pub const fn slot(slot: u8, lane: u16, col: u16) -> Self {
        TmemRef {
            base: TBase::Slot(slot),
            lane,
            col,
            divergent: false,
        }
    }

    /// The constant part `(lane << 16) | col` that is added to the base.
    pub fn offset(&self) -> u32 {
        (u32::from(self.lane) << 16) | u32::from(self.col)
    }
}

/// How an `nCols` operand is supplied (reference §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum NColsForm {
    /// An immediate.
    Imm,
    /// A register holding the same value in every thread.
    Reg,
    /// A register holding `value` in even lanes and `2 * value` in odd lanes
    /// (ALLOC-NCOLS-UNIFORM, undefined behaviour).
    RegDivergent,
}

/// An `nCols` operand of alloc or dealloc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct NCols {
    /// The number of columns.
    pub value: u32,
    /// How it is supplied.
    pub form: NColsForm,
}

impl NCols {
    /// An immediate column count.
    pub const fn imm(value: u32) -> Self {
        NCols {
            value,
            form: NColsForm::Imm,
        }
    }
}

/// A shared-memory matrix descriptor (reference §2.8), with the start address given as a data
/// region plus byte offset. The printer composes the 64-bit value at run time from the region's
/// shared address; regions are 1024-byte aligned, so `offset % 1024` is the address modulo the
/// swizzle-pattern boundary (SDESC-BASEOFF).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SmemDesc {
    /// Index into [`Smem::regions`].
    pub region: u8,
    /// Byte offset of the start address inside the region (SDESC-ALIGN16).
    pub offset: u32,
    /// Leading-dimension byte offset >> 4 (or absolute address >> 4 when `lbo_abs`): the 14-bit
    /// field of bits 16-29.
    pub lbo_enc: u16,
    /// Stride-dimension byte offset >> 4: the 14-bit field of bits 32-45.
    pub sbo_enc: u16,
    /// Bits 46-48, fixed at 0b001 (SDESC-FIXED).
    pub fixed: u8,
    /// Matrix base offset, bits 49-51 (SDESC-BASEOFF).
    pub base_offset: u8,
    /// Bit 52: leading dimension as an absolute address (SDESC-LBO-ABS).
    pub lbo_abs: bool,
    /// Swizzle code, bits 61-63 (SDESC-SWIZZLE).
    pub swizzle: u8,
    /// Raw bits OR-ed into the reserved fields 14-15, 30-31 and 53-60 (SDESC-RESERVED);
    /// only bits of [`SmemDesc::RESERVED_MASK`] count.
    pub reserved: u64,
}

impl SmemDesc {
    /// The 64-bit descriptor for a start address `addr` (a shared-window address). The layout
    /// is reference §2.8; `encode(x) = (x & 0x3FFFF) >> 4`.
    pub fn encode(&self, addr: u32) -> u64 {
        Self::encode_start(addr.wrapping_add(self.offset)) | self.encode_fields()
    }

    /// Reserved bits of the descriptor: 14-15, 30-31 and 53-60.
    pub const RESERVED_MASK: u64 = 0b11 << 14 | 0b11 << 30 | 0xFF << 53;

    /// The start-address field for a shared-window address: `(addr & 0x3FFFF) >> 4`.
    pub fn encode_start(addr: u32) -> u64 {
        u64::from((addr & 0x3FFFF) >> 4)
    }

    /// Every field but the start address.
    pub fn encode_fields(&self) -> u64 {
        u64::from(self.lbo_enc & 0x3FFF) << 16
            | u64::from(self.sbo_enc & 0x3FFF) << 32
            | u64::from(self.fixed & 7) << 46
            | u64::from(self.base_offset & 7) << 49
            | u64::from(self.lbo_abs) << 52
            | u64::from(self.swizzle & 7) << 61
            | (self.reserved & Self::RESERVED_MASK)
    }

    /// The inverse of [`SmemDesc::encode_fields`] (start fields are taken from `region`, `offset`).
    pub fn from_fields(region: u8, offset: u32, bits: u64) -> SmemDesc {
        SmemDesc {
            region,
            offset,
            lbo_enc: (bits >> 16 & 0x3FFF) as u16,
            sbo_enc: (bits >> 32 & 0x3FFF) as u16,
            fixed: (bits >> 46 & 7) as u8,
            base_offset: (bits >> 49 & 7) as u8,
            lbo_abs: bits >> 52 & 1 == 1,
            swizzle: (bits >> 61 & 7) as u8,
            reserved: bits & Self::RESERVED_MASK,
        }
    }
}

/// Where the A operand of an MMA comes from (reference §3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum MmaA {
    /// `a-desc`: shared memory.
    Desc(SmemDesc),
    /// `[a-tmem]`: tensor memory.
    Tmem(TmemRef),
}

/// How a commit names its mbarrier (reference §3.9, COMMIT-MBAR-WINDOW).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum MbarAddr {
    /// The mbarrier's address in the executing CTA's shared window (32-bit with
    /// `.shared::cluster`, generic 64-bit otherwise).
    Shared,
    /// A generic address in global memory: outside the shared::cluster window (undefined
    /// behaviour, COMMIT-MBAR-WINDOW).
    GlobalUb,
}

/// A tcgen05 instruction: its form (the opcode with all qualifiers) and its operands.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Op {
    /// `tcgen05.alloc [dst], nCols` storing the address into slot `slot` (§3.1).
    Alloc {
        /// Opcode qualifiers.
        form: AllocForm,
        /// Shared-memory slot that receives the address.
        slot: u8,
        /// With a generic `dst`, point it at global memory instead (ALLOC-DST-SHARED, UB).
        dst_global: bool,
        /// Columns.
        ncols: NCols,
    },
    /// `tcgen05.dealloc taddr, nCols` (§3.1).
    Dealloc {
        /// Opcode qualifiers.
        form: DeallocForm,
        /// The address freed.
        taddr: TmemRef,
        /// Columns.
        ncols: NCols,
    },
    /// `tcgen05.relinquish_alloc_permit` (§3.1).
    Relinquish {
        /// Opcode qualifiers.
        form: RelinquishForm,
    },
    /// `tcgen05.ld r, [taddr]{, split}` and `ld.red r, redval, [taddr]{, split}` (§3.2).
    /// The delivered registers are recorded in the observation buffer (see [`crate::observe`]).
    Ld {
        /// Opcode qualifiers.
        form: LdForm,
        /// Base address of the collective access.
        taddr: TmemRef,
        /// `immHalfSplitoff`, for `.16x32bx2` (LDST-SPLITOFF).
        split: Option<u32>,
        /// Registers in the destination vector (LDST-VEC-LEN; normally [`vec_len`]).
        nregs: u16,
    },
    /// `tcgen05.st [taddr]{, split}, r` (§3.3). Register `i` of lane `t` holds
    /// [`crate::values::st_value`]`(seed, t, i)`.
    St {
        /// Opcode qualifiers.
        form: StForm,
        /// Base address of the collective access.
        taddr: TmemRef,
        /// `immHalfSplitoff`, for `.16x32bx2`.
        split: Option<u32>,
        /// Registers in the source vector.
        nregs: u16,
        /// Seed of the stored values.
        seed: u32,
    },
    /// `tcgen05.wait::ld` / `wait::st` (§3.4).
    Wait {
        /// Opcode qualifiers.
        form: WaitForm,
    },
    /// `tcgen05.fence::before_thread_sync` / `::after_thread_sync` (§3.8).
    Fence {
        /// Which fence.
        kind: FenceKind,
    },
    /// `tcgen05.commit [mbar]{, ctaMask}` (§3.9).
    Commit {
        /// Opcode qualifiers.
        form: CommitForm,
        /// mbarrier index in [`Smem::mbarriers`].
        mbar: u8,
        /// How the mbarrier is addressed.
        addr: MbarAddr,
        /// `ctaMask` (with `.multicast::cluster`, COMMIT-MCAST-MASK).
        cta_mask: Option<u16>,
    },
    /// `tcgen05.cp [taddr], s-desc` (§3.5).
    Cp {
        /// Opcode qualifiers.
        form: CpForm,
        /// Destination.
        taddr: TmemRef,
        /// Source descriptor.
        src: SmemDesc,
    },
    /// `tcgen05.shift [taddr]` (§3.6).
    Shift {
        /// Opcode qualifiers.
        form: ShiftForm,
        /// The matrix shifted.
        taddr: TmemRef,
    },
    /// The `tcgen05.mma` family (§3.7).
    Mma(Box<Mma>),
}

/// Operands of a `tcgen05.mma` (reference §3.7).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Mma {
    /// Opcode qualifiers.
    pub form: MmaForm,
    /// `[d-tmem]`.
    pub d: TmemRef,
    /// `a-desc` or `[a-tmem]`.
    pub a: MmaA,
    /// `b-desc`.
    pub b: SmemDesc,
    /// `[sp-meta-tmem]` for `.sp` forms.
    pub sp_meta: Option<TmemRef>,
    /// The 32-bit instruction descriptor (reference §2.8).
    pub idesc: u32,
    /// `[scale-A-tmem]` for `.block_scale` forms.
    pub scale_a: Option<TmemRef>,
    /// `[scale-B-tmem]` for `.block_scale` forms.
    pub scale_b: Option<TmemRef>,
    /// `disable-output-lane` vector (4 elements for ::1, 8 for ::2; MMA-DOL-SIZE).
    pub disable_output_lane: Option<Vec<u32>>,
    /// `enable-input-d` predicate value.
    pub enable_input_d: bool,
    /// `scale-input-d` immediate (MMA-SCALE-D-*).
    pub scale_input_d: Option<u8>,
    /// `zero-column-mask-desc` (`.ws` forms; MMA-ZCM-*).
    pub zero_col_mask: Option<u64>,
}

impl Op {
    /// The instruction's form.
    pub fn form(&self) -> Form {
        match self {
            Op::Alloc { form, .. } => Form::Alloc(*form),
            Op::Dealloc { form, .. } => Form::Dealloc(*form),
            Op::Relinquish { form } => Form::Relinquish(*form),
            Op::Ld { form, .. } => Form::Ld(*form),
            Op::St { form, .. } => Form::St(*form),
            Op::Wait { form } => Form::Wait(*form),
            Op::Fence { kind } => Form::Fence(*kind),
            Op::Commit { form, .. } => Form::Commit(*form),
            Op::Cp { form, .. } => Form::Cp(*form),
            Op::Shift { form, .. } => Form::Shift(*form),
            Op::Mma(m) => Form::Mma(m.form),
        }
    }

    /// The TMEM addresses the instruction names (an alloc names none: it receives one): the
    /// `taddr` of dealloc, ld, st, cp and shift; an mma's D, A from TMEM, sparsity metadata and
    /// block scales.
    pub fn tmem_refs(&self) -> Vec<TmemRef> {
        match self {
            Op::Dealloc { taddr, .. }
            | Op::Ld { taddr, .. }
            | Op::St { taddr, .. }
            | Op::Cp { taddr, .. }
            | Op::Shift { taddr, .. } => vec![*taddr],
            Op::Mma(m) => {
                let mut v = vec![m.d];
                if let MmaA::Tmem(t) = m.a {
                    v.push(t);
                }
                v.extend(m.sp_meta.iter().chain(&m.scale_a).chain(&m.scale_b));
                v
            }
            Op::Alloc { .. }
            | Op::Relinquish { .. }
            | Op::Wait { .. }
            | Op::Fence { .. }
            | Op::Commit { .. } => vec![],
        }
    }
}

/// The register-vector length of ld/st (reference §2.6, table "Register-vector length"), or
/// `None` where the table says invalid (LDST-NUM-NA). The same for pack/unpack.
pub fn vec_len(shape: LdStShape, num: Num) -> Option<u16> {
    let per = match shape {
        LdStShape::S32x32b | LdStShape::S16x64b | LdStShape::S16x32bx2 => 1u16,
        LdStShape::S16x128b => 2,
        LdStShape::S16x256b => 4,
        // Not a shape (LDST-SHAPE); two 32-bit registers per lane per repetition, as its name
        // would say, so a near-miss still prints a plausible register vector.
        LdStShape::S32x64b => 2,
    };
    let n = per * num.count() as u16;
    (n <= 128).then_some(n)
}

/// A condition of an [`Stmt::If`]. Lane conditions make the code lane-divergent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Cond {
    /// `%laneid < n` (lane-divergent for 0 < n < 32).
    LaneLt(u8),
    /// `%laneid == n` (one lane).
    LaneEq(u8),
    /// `elect.sync`: exactly one active lane (lane-divergent).
    ElectOne,
    /// `%cluster_ctarank == n` (uniform in a CTA).
    CtaRank(u8),
    /// `%cluster_ctarank` is odd: the odd CTA of a pair (reference §2.5).
    CtaOdd,
    /// `%clusterid.x == n` (uniform in a cluster).
    Cluster(u16),
    /// The warp's rank in its CTA is `n` (uniform in a warp; for functions shared by warps).
    WarpRank(u8),
}

/// What the data written by [`Stmt::Fill`] holds (see [`crate::values::fill_word`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum FillElem {
    /// Arbitrary 32-bit words.
    Word,
    /// f16 pairs holding small integers in [-4, 4] (exact in an f32 accumulation).
    F16Small,
    /// tf32 (f32 bit patterns) holding small integers in [-4, 4].
    Tf32Small,
    /// 8-bit integers in [-8, 7].
    I8Small,
    /// Sparse-A metadata (reference §3.7 "Sparse A"): every nibble is 0b0100 or 0b1110, the
    /// two values valid for every sparse kind (tf32 lists only these two; the 2:4 and 4:8
    /// kinds list seven, these two among them; MMA-SP-META-TF32, -MXF4, -24).
    SpMeta,
    /// Block-scale factors (reference §3.7 `.block_scale`, MMA-BS-*): four bytes, each
    /// `126 + k` with k in [0, 3], as UE8M0 the powers of two 2^-1 .. 2^2 (`2^(byte - 127)`,
    /// §9.7.16.10.7): products of small integers scaled by them stay exact in an f32
    /// accumulator.
    ScaleSmall,
    /// bf16 pairs holding small integers in [-4, 3] (bf16 is the high half of an f32,
    /// §9.7.16.10.1 formats: each half is the high half of a `Tf32Small` word).
    Bf16Small,
}

/// One statement of a warp's code.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Stmt {
    /// A tcgen05 instruction.
    Tc(Op),
    /// Structured conditional.
    If {
        /// Condition.
        cond: Cond,
        /// Executed where the condition holds.
        then: Vec<Stmt>,
        /// Executed where it does not.
        els: Vec<Stmt>,
    },
    /// A bounded loop: `body` runs `count` times.
    Loop {
        /// Iterations.
        count: u8,
        /// Body.
        body: Vec<Stmt>,
    },
    /// Call of `funcs[n]`.
    Call(u8),
    /// The executing threads exit (put it under a lane condition for a partial exit).
    Exit,
    /// `barrier.sync 0`: every thread of the CTA.
    BarCta,
    /// `barrier.cluster.arrive.release` (with `.relaxed` if `relaxed`).
    ClusterArrive {
        /// Use `.relaxed` instead of `.release`.
        relaxed: bool,
    },
    /// `barrier.cluster.wait.acquire`.
    ClusterWait,
    /// `mbarrier.init.shared::cta.b64 [bar], count` (by the executing threads).
    MbarInit {
        /// mbarrier index.
        bar: u8,
        /// Expected arrival count.
        count: u32,
    },
    /// `fence.mbarrier_init.release.cluster`.
    FenceMbarInit,
    /// `mbarrier.arrive` on `bar` of this CTA, or of the cluster CTA of rank `cta`.
    MbarArrive {
        /// mbarrier index.
        bar: u8,
        /// Cluster rank of the CTA whose mbarrier is signalled (None: own CTA).
        cta: Option<u8>,
    },
    /// A bounded `mbarrier.try_wait.parity` loop; records whether the phase completed.
    MbarWait {
        /// mbarrier index.
        bar: u8,
        /// The phase parity waited for.
        parity: bool,
        /// Acquire scope.
        scope: Scope,
        /// Give up after this many tries (the outcome records that it gave up).
        max_tries: u32,
    },
    /// `fence.proxy.async.shared::cta`.
    FenceProxyAsync,
    /// Generic-proxy writes of a whole data region by the executing threads
    /// (word `i` = [`crate::values::fill_word`]`(elem, seed, i)`).
    Fill {
        /// Region index.
        region: u8,
        /// Value seed.
        seed: u32,
        /// Element kind.
        elem: FillElem,
    },
    /// Each executing thread reads alloc slot `slot` with `ld.shared` and records it.
    ObserveAddr {
        /// Slot index.
        slot: u8,
    },
    /// Records that the executing threads reached checkpoint `id` (to locate a hang).
    Checkpoint(u16),
    /// Schedule knob: spin `iters` iterations (each a short `nanosleep`) before going on.
    Spin(u32),
}

/// A callable function (`.func`), named `f<index>` in PTX.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Func {
    /// Body.
    pub body: Vec<Stmt>,
}

/// Shared-memory scaffolding of each CTA.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Smem {
    /// Number of 32-bit slots that allocs store addresses into.
    pub slots: u8,
    /// Number of 64-bit mbarriers.
    pub mbarriers: u8,
    /// Data regions for cp / mma sources, sizes in bytes (each 1024-byte aligned).
    pub regions: Vec<u32>,
}

impl Smem {
    /// The bytes a printed module declares for data region `r`: its size, at least 16 (an
    /// absent region counts as 16). Every printer declares and fills this many.
    pub fn region_bytes(&self, r: u8) -> u32 {
        self.regions
            .get(usize::from(r))
            .copied()
            .unwrap_or(16)
            .max(16)
    }
}

/// One kernel (reference §2-§4). See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Program {
    /// Target, version, grid.
    pub launch: Launch,
    /// Shared memory.
    pub smem: Smem,
    /// The code of each warp, by warp rank in the CTA; `warps.len() == launch.warps_per_cta`.
    pub warps: Vec<Vec<Stmt>>,
    /// Functions the warps call.
    pub funcs: Vec<Func>,
}

/// What a case is meant to be.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Intent {
    /// Keeps every rule of its edition.
    Valid,
    /// Breaks exactly this rule.
    NearMiss {
        /// The rule broken.
        breaks: RuleId,
    },
    /// Made by hand, by a fuzzer or by the parser: no claim.
    Unknown,
}

/// Where a case came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Provenance {
    /// Generator seed, if any.
    pub seed: Option<u64>,
    /// Generator name and version, or a free-form origin ("parsed from x.ptx").
    pub origin: String,
    /// Litmus family name, if the case belongs to one.
    pub family: Option<String>,
}

/// A program plus its intent and provenance: the unit stored in corpora and findings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Case {
    /// The program.
    pub program: Program,
    /// What it is meant to be.
    pub intent: Intent,
    /// Where it came from.
    pub provenance: Provenance,
}

impl Program {
    /// Calls `f` on every statement, depth first, in the warps' code then the functions'.
    pub fn walk(&self, f: &mut impl FnMut(&Stmt)) {
        fn go(b: &[Stmt], f: &mut impl FnMut(&Stmt)) {
            for s in b {
                f(s);
                match s {
                    Stmt::If { then, els, .. } => {
                        go(then, f);
                        go(els, f);
                    }
                    Stmt::Loop { body, .. } => go(body, f),
                    _ => {}
                }
            }
        }
        for w in &self.warps {
            go(w, f);
        }
        for func in &self.funcs {
            go(&func.body, f);
        }
    }

    /// Every tcgen05 op, in [`Program::walk`] order.
    pub fn ops(&self) -> Vec<&Op> {
        let mut out = Vec::new();
        fn go<'a>(b: &'a [Stmt], out: &mut Vec<&'a Op>) {
            for s in b {
                match s {
                    Stmt::Tc(op) => out.push(op),
                    Stmt::If { then, els, .. } => {
                        go(then, out);
                        go(els, out);
                    }
                    Stmt::Loop { body, .. } => go(body, out),
                    _ => {}
                }
            }
        }
        for w in &self.warps {
            go(w, &mut out);
        }
        for func in &self.funcs {
            go(&func.body, &mut out);
        }
        out
    }

    /// Number of statements, counting nested ones (the size measure of the minimizer).
    pub fn size(&self) -> usize {
        let mut n = 0;
        self.walk(&mut |_| n += 1);
        n
    }
}
