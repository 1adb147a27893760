//! `cuda-emu`: a lowering of tcgen05 programs to ordinary sm_90 PTX, so every line of the
//! hardware path (compile, load, cluster launch, readback, watchdog, respawn) runs on Hopper.
//!
//! # What is emulated, and how
//!
//! The printer follows the structure of [`tcgen05_ir::ptx::emit`] (same observation layout,
//! same statement idioms), and replaces every tcgen05 instruction by ordinary PTX over an
//! emulated per-CTA state in shared memory:
//!
//! | spec object | emulation |
//! | --- | --- |
//! | TMEM, 128 lanes × 512 columns of 32 bits (reference §2.1) | dynamic shared memory `emu_tmem`, cell (lane, col) at word `col * 128 + lane`, for the first [`Lowered::tmem_cols`] columns (as many as fit next to the program's own shared memory; 448 on an H100 with a small program); an access beyond them ends the case as `NotRun` (code [`Code::Capacity`]) |
//! | column allocator, units of 32 columns (§2.3) | a 16-bit mask in `emu_state`, first fit at a multiple of the request's size, claimed with `atom.shared.cas`; a full allocator spins with `nanosleep` for the case's [`spin_rounds`] (ALLOC-BLOCKS), then records [`Code::HangAlloc`] |
//! | allocation permit, last size (§2.3) | words of `emu_state` |
//! | `::2` alloc/dealloc/relinquish (§2.5) | the k-th `::2` operation of each CTA of a pair meets its partner through a mailbox in the peer's shared memory (`mapa` + `st.release.cluster.shared::cluster`); the even CTA claims the same columns in both masks; a partner that never comes is [`Code::HangPair`] after the case's [`spin_rounds`] (ALLOC-PAIR-BLOCK) |
//! | ld / st (§3.2, §3.3) | `ld.shared` / `st.shared` of the cells, performed at issue (a completion order the spec allows); `.pack::16b` / `.unpack::16b` use the low halves of two adjacent columns |
//! | wait::ld / wait::st | `bar.warp.sync` (the accesses already completed) |
//! | fence::* | `fence.acq_rel.cluster` |
//! | shift (§3.6) | rows `lane+0..30` move down one lane in 8 columns (OQ-16: our choice), in both CTAs for `::2` |
//! | mbarrier wait (`MbarWait`: a loop of at most `max_tries` tries) | each try is one non-blocking `mbarrier.test_wait.parity.acquire` (the program's scope) and, if it fails, a `nanosleep` of [`TRY_SLEEP_NS`] (bounded by the PTX ISA at twice that), so 2^20 tries take 0.13 s on an H100. A `try_wait` instead suspends its thread for a system-dependent time per failing try: 3.95 us on an H100 (driver 580), and a `suspendTimeHint` does not shorten it (ptxas adds a `NANOSLEEP.SYNCS` of the hint after the same `SYNCS.PHASECHK.TRANS64.TRYWAIT`), so 2^20 tries took 4.1 s of GPU time, which time slices between the campaign's contexts stretched past a 10 s watchdog (docs/blackwell.md). The IR counts tries, not time, and the ISA lets a `try_wait` return false after any time limit, so a try that does not suspend keeps the program's meaning |
//! | commit (§3.9) | the tracked operations completed at issue, so one `mbarrier.arrive.release.cluster` (count 1) on the named mbarrier, or on each CTA of `ctaMask` |
//! | mma (§3.7) | completes at issue, by each issuing thread ([`mma`]). The oracle's exact dense forms: kinds f16 (f16 or bf16 A/B, f32 or f16 D), tf32, i8 and f8f6f4 with e4m3 / e5m2 A/B; `cta_group::1` M = 128 (also `.ws`) in data-path layout D (row m → lane m), `cta_group::2` M = 256 in layout A (each CTA of the pair its 128 rows, B's halves from the even and odd CTAs); B (and an A in shared memory) K-major without swizzle: D = A·B (+ D·2^-scale) computed in f32 (s32 for i8) over the canonical layout (core matrices of 8 rows × 16 bytes, LBO along K, SBO along M/N), skipping disabled output lanes. K × element bytes is 32 for every computed kind, so a row of A or B is two 16-byte chunks: per row of D the thread reads A's row once (two `ld.v4`) and decodes it into registers, per column B's row, then does the K multiply-adds of the cell unrolled, one f32 `fma` per k in order (`dp4a` for i8); a loop over rows and one over columns (`cta_group::1` with CTA addresses, a pair through the cluster window). `cargo test -p tcgen05-drivers --test cuda_emu_mma -- --ignored` times one multiply-add on the GPU (`emu-mma-time.log`). An A in TMEM is read from 128 lanes × 8 columns (row m in lane m, elements packed little-endian; `.ashift` moves A's rows down by one). Every other form (sparse, block-scaled, swizzled operands, ...) runs and leaves D unchanged: [`not_emulated`] names it, and the judge leaves the observed words MMA results decide out of the compare (`diff::not_emulated`), counting them by that reason |
//! | cp (§3.5) | completes at issue, by each issuing thread ([`cp`]): the source rows through the K-major no-swizzle descriptor into the lanes of the shape and multicast (`.warpx4`, `.warpx2::02_13`, `.warpx2::01_23`), one word per column, decompressing `.b8x16` from `.b6x16_p32` / `.b4x16_p64`, the oracle's layouts; a `::2` cp also writes the peer CTA's copy from the peer's shared memory (CP-PAIR); other descriptors check their footprint and leave the cells unchanged (OQ-29) |
//!
//! The 16-lane ld/st shapes map threads to cells as follows (the spec gives this only in
//! figures, OQ-10; the maps of `oracle::run::ldst`, read off CUTLASS's `SM100_TMEM_LOAD_16dp*`
//! layouts): `.16x64b` thread t → lane t/4 + 8(t%2), column 2r + (t/2)%2; `.16x128b` register j of a
//! repetition → lane t/4 + 8j, column 4r + t%4; `.16x256b` register j → lane t/4 + 8(j/2),
//! column 8r + 2(t%4) + j%2; `.16x32bx2` threads 0-15 use `taddr`, 16-31 `taddr + split`, lane
//! t%16, column r.
//!
//! # Routines
//!
//! The parts of the lowering that are the same for every case (an alloc's claim and fill,
//! the checks of an ld or st, the `::2` collectives, a `::1` dealloc) are `.func`s of one
//! module of their own, [`routines_module`]; a lowered module declares them `.extern` and
//! calls them, and the worker links them to it (`protocol::Link::EmuRoutines`). They read
//! what a case's lowering knows (the status block, the CTA's number, the emulated columns)
//! from the CTA's `emu_state`, which the kernel's preamble fills.
//!
//! # Violations the emulation can see
//!
//! The first thread that sees one records a [`Code`] (with its CTA, warp, lane and a detail
//! word) in a status block in host-mapped memory and exits; so does every other thread that
//! sees one, and every thread in a bounded spin stops at its next check of the status word
//! ([`ABORT_EVERY`]). Every thread ends through `emu_finish`, as at the program's end, so
//! in a program with pairs a CTA stays until its peer's last thread ended (the peer may still
//! write to its shared memory). The kernel ends without a `trap`, so the CUDA context (and the
//! worker process that owns it) survives for the next case; a kernel that still hangs, or faults,
//! is reported with the recorded code all the same. [`Code::class`] says how the `cuda-emu`
//! target reports each code: a trap (with the rule it breaks: what the hardware would do),
//! a hang (bounded spin exhausted), a leak (ALLOC-FREE-BEFORE-EXIT) or "not run" (emulation
//! capacity).
//!
//! # Perturbed runs
//!
//! A compiled case can run many times in one worker (`--runs`); before each run the worker
//! writes a perturbation to status word [`PERTURB_WORD`], and each warp then starts after a
//! pseudo-random delay of up to [`MAX_START_DELAY_NS`] ns, so the runs see other interleavings.
//! The same hash decides, per warp, whether the warp's `tcgen05.st`s complete at issue or are
//! deferred to the warp's next `wait::st` (ST-ASYNC, reference §3.3 and §5: a st is complete
//! only after a later wait::st by the same thread; until then any other access to its cells is
//! a race, MCM-ST-BEFORE-USE, so a reader may see the old value). Deferred stores land in
//! program order at the wait; a st in a loop after a wait::st of that loop, which the wait
//! could not land, never defers; a program with functions never defers (the wait may be in a
//! function). ld, mma, cp and shift still complete at issue.
//!
//! # Many runs per launch
//!
//! One launch may hold several independent copies of the case (the worker's `batch`): copy
//! `k` is clusters `k * clusters ..` of the grid, its CTAs number themselves within the copy
//! (`%clusterid.x` modulo the program's clusters), and it writes observation block `k` (at
//! `k * Layout::total_words()` words) and status block `k` (at `k * STATUS_WORDS` words),
//! which holds its own perturbation. Emulated TMEM, the allocator and the mbarriers live in
//! each CTA's shared memory, so the copies share nothing. Every thread ends through
//! `emu_finish` (normally, at a violation, or when it stops for another thread's violation),
//! where the CTA's last thread to end adds the CTA's threads to its copy's status word
//! [`DONE_WORD`] (one bus transaction a CTA: the status block is host-mapped), so after a
//! launch that hangs the worker knows which copies (runs) finished and which is the first
//! that did not.

use std::fmt::Write as _;
use tcgen05_ir::observe::{Layout, Site};
use tcgen05_ir::{Op, Program};

/// The most rounds of a bounded spin (each a `nanosleep` of [`SPIN_NS`] ns): about 0.5 s,
/// below the default watchdog (10 s, `cuda::DEFAULT_TIMEOUT`), so a blocked alloc is reported
/// with its reason rather than only by the watchdog. A case spins [`spin_rounds`] rounds.
pub const SPIN_LIMIT: u32 = 1 << 19;
/// Nanoseconds per spin round.
pub const SPIN_NS: u32 = 1000;
/// The wait every spin of a case allows for, nanoseconds, besides its bounded waits and
/// emulated MMAs ([`spin_rounds`]): what else a thread can wait for (another warp's start
/// delay, at most [`MAX_START_DELAY_NS`], and its emulated ld, st, cp and shift, each
/// microseconds) is thousands of times shorter.
pub const SPIN_FLOOR_NS: u64 = 25_000_000;
/// Nanoseconds a failing try of an emulated bounded wait may take, for [`spin_rounds`]: twice
/// the 128 ns a try took on an H100 ([`TRY_SLEEP_NS`]).
pub const TRY_NS_BOUND: u64 = 256;

/// The rounds of `p`'s bounded spins (an alloc that finds no columns, a `::2` collective's
/// partner, the peer CTA's end): long enough for anything another thread of the case can do
/// before it frees the columns, meets the partner or ends, so a spin that gives up is a
/// block (§2.3, §2.5: ALLOC-BLOCKS, ALLOC-PAIR-BLOCK, DEALLOC-PAIR-BLOCK): [`SPIN_FLOOR_NS`],
/// plus every bounded wait's tries at [`TRY_NS_BOUND`] each ([`super::bounded_wait_tries`]:
/// one thread may wait for another that first gives up its waits), plus the emulated MMAs at
/// the watchdog's [`super::EMU_MAC_BUDGET_NS`] a multiply-add; as rounds of half a
/// [`SPIN_NS`] each (`nanosleep` may sleep less than asked), at most [`SPIN_LIMIT`]. A spin
/// that gives up costs its launch that long, and a campaign's launches share the GPU: with
/// [`SPIN_LIMIT`] for every case, 1.7% of the cases (their launches over a second) took 83%
/// of the GPU time of a campaign (docs/blackwell.md §6, "What bounds it").
pub fn spin_rounds(p: &Program) -> u32 {
    let ns = SPIN_FLOOR_NS
        .saturating_add(super::bounded_wait_tries(p).saturating_mul(TRY_NS_BOUND))
        .saturating_add(super::emulated_macs(p).saturating_mul(super::EMU_MAC_BUDGET_NS));
    let rounds = ns.saturating_mul(2) / u64::from(SPIN_NS);
    rounds.min(u64::from(SPIN_LIMIT)) as u32
}
/// Nanoseconds each failed try of an emulated bounded mbarrier wait sleeps (`nanosleep`, which
/// the PTX ISA bounds by twice the request) before the next `mbarrier.test_wait`. On an H100
/// (driver 580) a try then takes 128 ns, so a wait of 2^20 tries on a phase that never
/// completes gives up after 0.13 s of GPU time (at most about 0.26 s by the `nanosleep` bound),
/// far inside the default 10 s watchdog even when a few contexts share the GPU by time slices,
/// and still far longer than any emulated operation a legitimate wait waits for.
pub const TRY_SLEEP_NS: u32 = 100;
/// Words of the status block (second kernel parameter): words 0-4 are the recorded
/// violation (code, CTA, warp, lane, detail), word [`PERTURB_WORD`] the run's perturbation,
/// word [`DONE_WORD`] the threads that ended.
pub const STATUS_WORDS: u32 = 8;
/// The status word that counts a copy's ended threads, a CTA's at once when its last thread
/// ends (module docs, "Many runs per launch"): the copy finished when it equals the copy's
/// threads.
pub const DONE_WORD: u32 = 6;
/// The status word the worker sets before each run to perturb its schedule: 0 runs the
/// program as printed; another value delays the start of each warp by a pseudo-random
/// 0 to [`MAX_START_DELAY_NS`] ns derived from the value, the CTA and the warp
/// ([`start_delay`]), so repeated runs of one compiled case see other interleavings.
pub const PERTURB_WORD: u32 = 5;
/// The longest start delay of a warp under a perturbation, nanoseconds (`nanosleep`, which the
/// PTX ISA bounds by twice the request).
pub const MAX_START_DELAY_NS: u32 = 4095;
/// A bounded spin checks the status word (host-mapped memory, a read over the bus) once
/// every this many rounds, and exits when another thread recorded a violation.
pub const ABORT_EVERY: u32 = 256;
/// Largest dynamic shared memory a block may use on sm_90 (227 KiB), the default capacity.
pub const SM90_MAX_DYN_SMEM: u32 = 232_448;

macro_rules! codes {
    ($($(#[$m:meta])* $name:ident = $v:literal, $class:ident, $rule:literal;)*) => {
        /// A violation (or limit) the emulation detected; written to status word 0.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($(#[$m])* $name = $v,)*
        }

        impl Code {
            /// Every code.
            pub const ALL: &'static [Code] = &[$(Code::$name,)*];

            /// The code from its number.
            pub fn from_u32(v: u32) -> Option<Code> {
                match v { $($v => Some(Code::$name),)* _ => None }
            }

            /// How the target reports it.
            pub fn class(self) -> CodeClass {
                match self { $(Code::$name => CodeClass::$class,)* }
            }

            /// The rule of the catalogue (reference §6) or open question it enforces.
            pub fn rule(self) -> &'static str {
                match self { $(Code::$name => $rule,)* }
            }
        }
    };
}

/// How a [`Code`] is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeClass {
    /// A trap with the rule's name (`Outcome::Trapped`).
    Trap,
    /// A blocked operation: `Outcome::Hung` at the lanes' checkpoints.
    Hang,
    /// TMEM allocated at exit: `Outcome::Leaked`.
    Leak,
    /// Beyond what the emulation holds (its columns, or an access whose result the spec
    /// leaves unstated): `Outcome::NotRun`.
    NotRun,
}

codes! {
    /// An `.aligned` tcgen05 instruction executed by part of a warp (diverged or exited lanes).
    NotConverged = 1, Trap, "GEN-ALIGNED-CONVERGENT / GEN-NO-EXITED-THREAD";
    /// Threads of a warp passed different `taddr` to ld/st.
    TaddrDivergent = 2, Trap, "LDST-TADDR-UNIFORM";
    /// Threads of a warp passed different nCols.
    NcolsDivergent = 3, Trap, "ALLOC-NCOLS-UNIFORM";
    /// nCols not a power of two in [32, 512].
    NcolsInvalid = 4, Trap, "ALLOC-NCOLS-POW2 / ALLOC-NCOLS-RANGE";
    /// alloc after relinquish_alloc_permit.
    AllocAfterRelinquish = 5, Trap, "ALLOC-AFTER-RELINQUISH";
    /// alloc of more columns than an earlier one.
    AllocIncreasing = 6, Trap, "ALLOC-NONINCREASING";
    /// alloc's generic dst outside shared memory.
    DstNotShared = 7, Trap, "ALLOC-DST-SHARED";
    /// dealloc of columns that are not allocated, or a malformed address.
    DeallocNotAllocated = 8, Trap, "DEALLOC-TADDR-PREV (OQ-3)";
    /// ld/st outside the warp's lane quarter.
    LaneQuarter = 9, Trap, "LDST-LANE-QUARTER (OQ-11)";
    /// A TMEM access to columns that are not allocated. The result is unstated (OQ-9) and
    /// the oracle lets the run complete with the cells' values unspecified, so the
    /// emulation, which stops there, has no outcome to compare: not run.
    Unallocated = 10, NotRun, "OQ-9 (access to unallocated columns)";
    /// A TMEM address beyond 128 lanes or 512 columns (OQ-9, as [`Code::Unallocated`]).
    OutOfRange = 11, NotRun, "OQ-9 (lane >= 128 or column >= 512)";
    /// A `::2` operation in a cluster without the peer CTA.
    PeerMissing = 12, Trap, "GEN-PEER-EXISTS";
    /// The two warps of a `::2` collective issued different operations or sizes.
    PairMismatch = 13, Trap, "ALLOC-ISSUER (::2 collective mismatch)";
    /// shift with a lane field not a multiple of 32.
    ShiftLaneAlign = 14, Trap, "SHIFT-LANE-ALIGN";
    /// commit's mbarrier outside the shared::cluster window.
    CommitWindow = 15, Trap, "COMMIT-MBAR-WINDOW";
    /// commit multicast to a CTA rank outside the cluster.
    CommitRank = 16, Trap, "COMMIT-MCAST-MASK";
    /// An alloc found no free columns for the case's [`spin_rounds`].
    HangAlloc = 32, Hang, "ALLOC-BLOCKS";
    /// A `::2` collective's partner did not come for the case's [`spin_rounds`].
    HangPair = 33, Hang, "ALLOC-PAIR-BLOCK / DEALLOC-PAIR-BLOCK";
    /// The peer CTA of a `::2` pair did not finish for the case's [`spin_rounds`] after this
    /// CTA.
    HangPeerExit = 34, Hang, "GEN-PEER-ACTIVE";
    /// The CTA finished with TMEM allocated.
    Leak = 48, Leak, "ALLOC-FREE-BEFORE-EXIT";
    /// An access beyond the emulated columns.
    Capacity = 64, NotRun, "emulation capacity";
}

/// Lowering settings.
#[derive(Debug, Clone, Copy)]
pub struct EmuConfig {
    /// Dynamic shared memory a block may use (the device's opt-in limit).
    pub max_dyn_smem: u32,
}

impl Default for EmuConfig {
    fn default() -> Self {
        EmuConfig {
            max_dyn_smem: SM90_MAX_DYN_SMEM,
        }
    }
}

/// A lowered program, ready for the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lowered {
    /// The sm_90 PTX module; entry `tc_kernel(.param .u64 obs, .param .u64 status)`.
    pub ptx: String,
    /// Dynamic shared memory per CTA (the emulated TMEM).
    pub dyn_smem: u32,
    /// Emulated TMEM columns.
    pub tmem_cols: u32,
}

/// Why a program is not emulated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cuda-emu: {}", self.0)
    }
}

/// Words of `emu_state`.
mod st {
    /// Allocated-unit mask.
    pub const MASK: u32 = 0;
    /// Permit relinquished.
    pub const RELQ: u32 = 1;
    /// Last alloc size.
    pub const LAST: u32 = 2;
    /// Threads finished.
    pub const FIN: u32 = 3;
    /// `::2` operations issued by this CTA.
    pub const PAIRS: u32 = 4;
    /// The peer CTA finished.
    pub const PEER_DONE: u32 = 5;
    /// Mailbox: 4 slots of (op << 16 | ncols, seq).
    pub const MAIL: u32 = 8;
    /// Alloc results for the odd CTA: 4 slots of address + 1.
    pub const RES: u32 = 16;
    /// The preamble clears the words before this one (every word that starts at 0) and
    /// stores the ones from here on.
    pub const CLEARED: u32 = 24;
    /// The address of the copy's status block (a `.u64`, two words), which the preamble
    /// stores for the routines (`routines`).
    pub const EMUST: u32 = 24;
    /// The CTA's number within its copy (the violation record's CTA), stored by the preamble.
    pub const CTA: u32 = 26;
    /// The emulated columns (`Lowered::tmem_cols`), stored by the preamble.
    pub const COLS: u32 = 27;
    /// The rounds of the case's bounded spins (`spin_rounds`), stored by the preamble.
    pub const SPIN: u32 = 28;
    /// Words.
    pub const WORDS: u32 = 29;
}

/// The static shared memory of a program (slots, mbarriers, regions, emu state), bytes, with
/// the alignment the printer declares.
fn static_smem(p: &Program) -> u64 {
    let mut b = 0u64;
    let align = |b: u64, a: u64| b.div_ceil(a) * a;
    b += 4 * u64::from(p.smem.slots);
    b = align(b, 16) + 8 * u64::from(p.smem.mbarriers);
    for r in &p.smem.regions {
        b = align(b, 1024) + u64::from(*r.max(&16));
    }
    b = align(b, 16) + 4 * u64::from(st::WORDS);
    align(b, 1024)
}

mod check;
mod cp;
mod defer;
mod mma;
pub use mma::{mma_macs, not_emulated};
mod ops;
mod routines;
pub use routines::module as routines_module;
mod traps;

use check::{check_supported, known_converged, op_warps, uses_pairs};
use ops::EmuOps;
use tcgen05_ir::ptx::{Body, Lowering, Pending, emit_with};
use traps::EmuTraps;

/// Lowers `p` for sm_90, or says why it is not emulated.
pub fn lower(p: &Program, cfg: &EmuConfig) -> Result<Lowered, Unsupported> {
    check_supported(p)?;
    let fixed = static_smem(p);
    let room = u64::from(cfg.max_dyn_smem).saturating_sub(fixed);
    // 512 bytes per column (128 lanes of 4 bytes), in whole allocation units of 32 columns.
    let cols = ((room / 512) / 32 * 32).min(512) as u32;
    if cols < 32 {
        return Err(Unsupported(format!(
            "the program's shared memory ({fixed} bytes) leaves no room for emulated TMEM (limit {} bytes)",
            cfg.max_dyn_smem
        )));
    }
    let defer = p.funcs.is_empty();
    let plan = if defer { defer::plan(p) } else { Vec::new() };
    let ctx = Ctx {
        cols,
        pairs: uses_pairs(p) && p.launch.cluster_size >= 2,
        defer,
        undeferrable: defer::undeferrable(&plan),
        plan,
        converged: known_converged(p),
        warps: op_warps(p),
        spin: spin_rounds(p),
    };
    let mut out = String::with_capacity(16 * 1024);
    emit_with(p, &Emu::new(&ctx, false), &mut out);
    // Copies of the case in one launch: each body numbers its cluster within its copy.
    let out = out.replace(
        CLID_LINE,
        &format!(
            "{CLID_LINE}\n\trem.u32 %clid, %clid, {};",
            p.launch.clusters.max(1)
        ),
    );
    Ok(Lowered {
        ptx: out,
        dyn_smem: cols * 512,
        tmem_cols: cols,
    })
}

/// The printer's line that reads the cluster id (`Body::special_regs`); the lowering follows
/// it with the cluster's number within its copy (module docs, "Many runs per launch").
const CLID_LINE: &str = "mov.u32 %clid, %clusterid.x;";

impl Ctx {
    /// The context of the routines' bodies (`routines`), which serve every case: what they
    /// need of a program they read at run time.
    fn for_routines() -> Ctx {
        Ctx {
            cols: 0,
            pairs: false,
            defer: false,
            plan: Vec::new(),
            undeferrable: 0,
            converged: Vec::new(),
            warps: Vec::new(),
            spin: SPIN_LIMIT,
        }
    }
}

/// What every body of one lowered program shares.
#[derive(Debug)]
struct Ctx {
    /// Emulated TMEM columns.
    cols: u32,
    /// The program has `::2` collectives and a cluster of at least two CTAs.
    pairs: bool,
    /// A perturbed run may defer the sts of a warp to its next wait::st (no functions).
    defer: bool,
    /// Per tcgen05 instruction of the kernel, in printing order, the deferred sts that may
    /// be pending ([`defer::plan`]; empty without `defer`).
    plan: Vec<defer::Step>,
    /// The bits of the sts that always store at issue ([`defer::undeferrable`]).
    undeferrable: u32,
    /// Per tcgen05 instruction of the kernel, in printing order, whether its convergence
    /// check cannot fail ([`check::known_converged`]).
    converged: Vec<bool>,
    /// Per tcgen05 instruction of the kernel, in printing order, the warp whose body it is
    /// in ([`check::op_warps`]).
    warps: Vec<usize>,
    /// Rounds of the bounded spins ([`spin_rounds`]).
    spin: u32,
}

/// A st whose stores a perturbed run may defer to the next wait::st: bit `bit` of `%emstq`
/// says an executed instance is pending; its address is in `base` and its words in the
/// registers of `stores` (`(offset, register)`; a packed value's halves are two words, in
/// the low halves of adjacent columns), which the st's last execution wrote (the values
/// depend only on the lane and the st, so every execution writes the same).
#[derive(Debug, Clone)]
struct DeferredSt {
    bit: u32,
    base: u32,
    stores: Vec<(u32, u32)>,
}

/// The emulation as a lowering of the PTX printer ([`tcgen05_ir::ptx::Lowering`]): per body,
/// the shared context, the codes the body branches to the trap tail's entries with (in the
/// order of their first use), whether it branches to the tail itself, the open group of
/// checks (`traps::EmuTraps::checks_begin`), its deferrable sts and its next instruction.
#[derive(Debug, Clone)]
struct Emu<'a> {
    c: &'a Ctx,
    traps: Vec<Code>,
    tail: bool,
    group: Option<Vec<traps::Check>>,
    deferred: Vec<DeferredSt>,
    /// The index of the next tcgen05 instruction printed in this body (into [`Ctx::plan`]).
    at: usize,
    /// The plan's step for the instruction being printed (`None`: print every landing).
    step: Option<defer::Step>,
    /// The body is the kernel's (the plans index its instructions).
    kernel: bool,
    /// The convergence check of the instruction being printed cannot fail.
    converged: bool,
    /// The warp that executes the instruction being printed, where the lowering knows it
    /// (the kernel's body of that warp).
    warp: Option<usize>,
    /// The body is a routine's (`routines`): the same for every case, it reads what the
    /// lowering of a case knows from the CTA's state.
    routine: bool,
    /// The body is `emu_finish`'s, whose ends count the thread themselves.
    finishing: bool,
}

impl<'a> Emu<'a> {
    /// The state of a new body of a lowered program (`routine`: of a routine).
    fn new(c: &'a Ctx, routine: bool) -> Emu<'a> {
        Emu {
            c,
            traps: Vec::new(),
            tail: false,
            group: None,
            deferred: Vec::new(),
            at: 0,
            step: None,
            kernel: false,
            converged: false,
            warp: None,
            routine,
            finishing: false,
        }
    }

    /// The state of a routine's body.
    fn routine(c: &'a Ctx) -> Emu<'a> {
        Emu::new(c, true)
    }
}

impl Lowering for Emu<'_> {
    fn head(&self, p: &Program, out: &mut String) {
        let _ = writeln!(
            out,
            "//\n// tcgen05-fuzz cuda-emu lowering (tcgen05-drivers {}) of a program for {}\n// emulated TMEM: 128 lanes x {} columns\n//",
            env!("CARGO_PKG_VERSION"),
            p.launch.target,
            self.c.cols
        );
        out.push_str(".version 8.0\n.target sm_90\n.address_size 64\n\n");
    }

    fn decls(&self, _p: &Program, out: &mut String) {
        let _ = writeln!(out, ".shared .align 16 .b32 emu_state[{}];", st::WORDS);
        out.push_str(".extern .shared .align 16 .b32 emu_tmem[];\n");
        routines::declarations(out);
    }

    /// `emu_finish(emust, how)`, the finishing protocol, which every thread goes through when
    /// it ends: `how` 0 at the program's end, 1 after a recorded violation (its own, or one it
    /// saw in the status word). The last thread of the CTA to end, for programs with `::2`
    /// collectives, tells the peer CTA and waits (bounded, [`spin_rounds`]) until the
    /// peer's last thread did the same: the CTA's shared memory must outlive the peer's
    /// accesses to it (a mailbox post, a mask claim, a remote arrive), or the peer's access
    /// is an illegal one that poisons the context; while it waits it arrives at the cluster
    /// barrier each round, releasing a barrier the peer waits at as the CTA's exit would.
    /// Then, at the program's end, it checks for leaked columns, and counts the CTA's threads
    /// in the copy's [`DONE_WORD`]; the other threads return uncounted.
    fn helpers(&self, p: &Program, layout: &Layout, out: &mut String) {
        // `.visible`: the routines (`routines`) end threads through it too.
        let sig = ".visible .func emu_finish(.param .u64 emust, .param .b32 how)";
        let _ = writeln!(out, "{sig};\n\n{sig}\n{{");
        let mut b = Body::new(
            p,
            layout,
            Emu {
                finishing: true,
                ..self.clone()
            },
        );
        b.special_regs();
        b.line("ld.param.u64 %emust, [emust];");
        let (how, r) = (b.r(), b.r());
        let (p0, ph) = (b.pr(), b.pr());
        b.line(&format!("ld.param.u32 %r{how}, [how];"));
        b.line(&format!("setp.ne.u32 %p{ph}, %r{how}, 0;"));
        b.line(&format!(
            "atom.shared.add.u32 %r{r}, [emu_state+{}], 1;",
            4 * st::FIN
        ));
        b.line(&format!(
            "setp.ne.u32 %p{p0}, %r{r}, {};",
            p.launch.threads_per_cta() - 1
        ));
        // A thread that is not the CTA's last leaves uncounted: the last counts the CTA's
        // threads in one add (the status block is host-mapped, where each atomic is a bus
        // transaction: a launch's 64 copies took 5x longer with an add a thread).
        b.line(&format!("@%p{p0} ret;"));
        // With ::2 pairs, the peer CTA first (a CTA that reached its exit with columns
        // allocated is a leak only if the kernel completes: while the peer is blocked, e.g. in
        // a ::2 dealloc this CTA never joins, the run is a hang, as on hardware, where error
        // 721 surfaces only when the kernel ends), then the leak check. The wait does not stop
        // for a recorded violation: the peer's threads stop at their next look at the status
        // word and end through here, and its last one tells this CTA.
        if self.c.pairs {
            let pe = b.r();
            let peer = b.r();
            b.line(&format!("xor.b32 %r{peer}, %ctarank, 1;"));
            b.line(&format!("mov.u32 %r{pe}, emu_state;"));
            b.line(&format!(
                "mapa.shared::cluster.u32 %r{pe}, %r{pe}, %r{peer};"
            ));
            b.line(&format!(
                "st.release.cluster.shared::cluster.u32 [%r{pe}+{}], 1;",
                4 * st::PEER_DONE
            ));
            let (f, c) = (b.r(), b.r());
            let pf = b.pr();
            b.line(&format!("mov.u32 %r{c}, 0;"));
            b.label("$FIN_PEER");
            b.line(&format!(
                "ld.acquire.cluster.shared::cta.u32 %r{f}, [emu_state+{}];",
                4 * st::PEER_DONE
            ));
            b.line(&format!("setp.ne.u32 %p{pf}, %r{f}, 0;"));
            b.line(&format!("@%p{pf} bra $FIN_PEER_DONE;"));
            b.line(&format!("add.u32 %r{c}, %r{c}, 1;"));
            b.line(&format!("setp.lt.u32 %p{pf}, %r{c}, {};", self.c.spin));
            b.line(&format!("@%p{pf} nanosleep.u32 {SPIN_NS};"));
            // While it waits, this thread stands in for its CTA's ended threads at the
            // peer's cluster barriers: on hardware the CTA's exit would release a barrier
            // the peer waits at (PTX ISA, `exit`), and here the CTA stays, so its shared
            // memory outlives the peer's accesses after that barrier (a `::2` dealloc the
            // peer makes after a barrier this CTA never reaches).
            b.line(&format!("@%p{pf} barrier.cluster.arrive.release;"));
            b.line(&format!("@%p{pf} barrier.cluster.wait.acquire;"));
            b.line(&format!("@%p{pf} bra $FIN_PEER;"));
            // Given up: at the program's end the peer never finished (a hang); after a
            // violation, that violation is the run's.
            b.line(&format!("@%p{ph} bra $FIN_RET;"));
            b.trap(Code::HangPeerExit, "0");
            b.label("$FIN_PEER_DONE");
        }
        b.line(&format!("@%p{ph} bra $FIN_RET;"));
        let m = b.r();
        let p1 = b.pr();
        b.line(&format!(
            "ld.volatile.shared.u32 %r{m}, [emu_state+{}];",
            4 * st::MASK
        ));
        b.line(&format!("setp.ne.u32 %p{p1}, %r{m}, 0;"));
        b.trap_if(p1, Code::Leak, &format!("%r{m}"));
        b.label("$FIN_RET");
        b.line(&format!(
            "red.global.add.u32 [%emust+{}], {};",
            4 * DONE_WORD,
            p.launch.threads_per_cta()
        ));
        b.line("ret;");
        b.finish(out);
        out.push_str("}\n\n");
    }

    /// The status block (host-mapped memory that survives a dead context).
    fn extra_param(&self) -> Option<&'static str> {
        Some("emust")
    }

    /// Sets `%emtm` and `%emsa` to the addresses of emu_tmem and emu_state (the kernel's
    /// instructions use them), loads the status block's address and initialises the emulated
    /// state before any thread of the cluster uses it.
    fn entry_preamble(b: &mut Body<'_, Self>) {
        b.low.kernel = true;
        b.line("mov.u32 %emtm, emu_tmem;");
        b.line("mov.u32 %emsa, emu_state;");
        b.line("ld.param.u64 %emust, [emust];");
        b.line("cvta.to.global.u64 %emust, %emust;");
        // This copy's observation and status blocks (module docs, "Many runs per launch").
        let (copy, off) = (b.r(), b.rd());
        b.line(&format!("mov.u32 %r{copy}, %clusterid.x;"));
        b.line(&format!(
            "div.u32 %r{copy}, %r{copy}, {};",
            b.p.launch.clusters.max(1)
        ));
        let total = Layout::of(b.p).total_words() as u64;
        b.line(&format!("mul.wide.u32 %rd{off}, %r{copy}, {};", 4 * total));
        b.line(&format!("add.u64 %obscta, %obscta, %rd{off};"));
        b.line(&format!(
            "mul.wide.u32 %rd{off}, %r{copy}, {};",
            4 * STATUS_WORDS
        ));
        b.line(&format!("add.u64 %emust, %emust, %rd{off};"));
        let threads = b.p.launch.threads_per_cta();
        let t = b.r();
        let pt = b.pr();
        b.line(&format!("mov.u32 %r{t}, %tid.x;"));
        b.line(&format!("setp.lt.u32 %p{pt}, %r{t}, {};", st::CLEARED));
        b.line(&format!("shl.b32 %r{t}, %r{t}, 2;"));
        let a = b.r();
        b.line(&format!("add.u32 %r{a}, %emsa, %r{t};"));
        b.line(&format!("@%p{pt} st.shared.u32 [%r{a}], 0;"));
        // Fewer threads than words: thread 0 clears the rest.
        for w in threads..st::CLEARED {
            b.line(&format!("st.shared.u32 [emu_state+{}], 0;", 4 * w));
        }
        // What the routines read of the copy and the case (every thread stores the same).
        b.line(&format!(
            "st.shared.u64 [emu_state+{}], %emust;",
            4 * st::EMUST
        ));
        let cta = b.r();
        b.line(&format!(
            "mad.lo.u32 %r{cta}, %clid, {}, %ctarank;",
            b.p.launch.cluster_size
        ));
        b.line(&format!(
            "st.shared.u32 [emu_state+{}], %r{cta};",
            4 * st::CTA
        ));
        b.line(&format!(
            "st.shared.u32 [emu_state+{}], {};",
            4 * st::COLS,
            b.low.c.cols
        ));
        b.line(&format!(
            "st.shared.u32 [emu_state+{}], {};",
            4 * st::SPIN,
            b.low.c.spin
        ));
        b.line("barrier.sync 0;");
        if b.p.launch.cluster_size > 1 {
            b.line("barrier.cluster.arrive.release;");
            b.line("barrier.cluster.wait.acquire;");
        }
        start_delay(b);
    }

    fn before_exit(b: &mut Body<'_, Self>) {
        b.line("call emu_finish, (%emust, 0);");
    }

    /// Volatile: the host reads the checkpoints of a hung kernel.
    fn checkpoint_store(&self) -> &'static str {
        "st.volatile.global.u32"
    }

    /// Each try is one non-blocking `test_wait` and, when it fails, a bounded `nanosleep`
    /// (module docs: a `try_wait` suspends for a system-dependent time per try, about 4 us on
    /// Hopper whatever the suspendTimeHint).
    fn mbar_try(&self) -> &'static str {
        "test_wait"
    }

    fn mbar_backoff(b: &mut Body<'_, Self>, q: u32) {
        b.line(&format!("@%p{q} nanosleep.u32 {TRY_SLEEP_NS};"));
    }

    fn arrive_state(b: &mut Body<'_, Self>) -> String {
        format!("%rd{}", b.rd())
    }

    /// The shared violation tail: the first thread to get there records the code, its place
    /// and the detail word in the host-mapped status block; every thread that gets there
    /// exits. No `trap`: a trap poisons the CUDA context, which costs the worker (a new
    /// process, 5-9 s on the lent H200 while 16 campaign jobs shared it), whereas an exit
    /// leaves the context usable. The other threads stop at their next bounded spin, which
    /// checks the status word ([`ABORT_EVERY`]); the target reports the recorded code,
    /// whatever the rest of the kernel did.
    ///
    /// A check branches to `$TRAP<code>` with the detail word in `%tdet`; the entry of each
    /// code used in the body sets `%tcode` and goes on to `$TRAP` (the last one falls through).
    /// A group of checks sets both and branches to `$TRAP`.
    fn tail(b: &mut Body<'_, Self>) {
        let codes = std::mem::take(&mut b.low.traps);
        for (i, c) in codes.iter().enumerate() {
            b.label(&format!("$TRAP{}", *c as u32));
            b.line(&format!("mov.u32 %tcode, {};", *c as u32));
            if i + 1 < codes.len() {
                b.line("bra $TRAP;");
            }
        }
        if codes.is_empty() && !b.low.tail {
            return;
        }
        b.label("$TRAP");
        b.line("atom.global.cas.b32 %tprev, [%emust], 0, %tcode;");
        b.line("setp.eq.u32 %tfirst, %tprev, 0;");
        if b.low.routine {
            b.line(&format!(
                "ld.shared.u32 %tprev, [emu_state+{}];",
                4 * st::CTA
            ));
        } else {
            b.line(&format!(
                "mad.lo.u32 %tprev, %clid, {}, %ctarank;",
                b.p.launch.cluster_size
            ));
        }
        b.line("@%tfirst st.volatile.global.u32 [%emust+4], %tprev;");
        b.line("@%tfirst st.volatile.global.u32 [%emust+8], %warp;");
        b.line("@%tfirst st.volatile.global.u32 [%emust+12], %lane;");
        b.line("@%tfirst st.volatile.global.u32 [%emust+16], %tdet;");
        b.line("membar.sys;");
        b.end_thread("");
    }

    fn extra_regs(&self) -> &'static str {
        "\t.reg .b64 %emust;\n\t.reg .b32 %tcode, %tdet, %tprev, %emstq, %emseed, %emtm, %emsa;\n\t.reg .pred %tfirst, %emdefer;\n"
    }

    fn op(b: &mut Body<'_, Self>, op: &Op, site: Option<Site>, pending: &mut Vec<Pending>) {
        b.lower_op(op, site, pending);
    }
}

/// The perturbation of a run ([`PERTURB_WORD`]): each warp sleeps `hash(seed, CTA, warp) &
/// MAX_START_DELAY_NS` ns after the emulated state is initialised and before its program
/// starts, and defers its sts to its next wait::st (`%emdefer`) when bit 13 of the hash is
/// set. The CTA is its number within the copy, so a run behaves the same in any slot of a
/// launch. A seed of 0 sleeps nowhere and defers nothing.
fn start_delay<L: Lowering>(b: &mut Body<'_, L>) {
    let (s, d, p) = (b.r(), b.r(), b.pr());
    b.line(&format!(
        "ld.volatile.global.u32 %r{s}, [%emust+{}];",
        4 * PERTURB_WORD
    ));
    b.line(&format!("setp.ne.u32 %p{p}, %r{s}, 0;"));
    b.line(&format!("mov.u32 %emseed, %r{s};"));
    // d = (cta * 32 + warp) * 0x85EBCA77 + seed * 0x9E3779B1, then a murmur-style mix.
    b.line(&format!(
        "mad.lo.u32 %r{d}, %clid, {}, %ctarank;",
        b.p.launch.cluster_size
    ));
    b.line(&format!("mad.lo.u32 %r{d}, %r{d}, 32, %warp;"));
    b.line(&format!("mul.lo.u32 %r{d}, %r{d}, -2048144777;"));
    b.line(&format!("mad.lo.u32 %r{d}, %r{s}, -1640531535, %r{d};"));
    b.line(&format!("shr.u32 %r{s}, %r{d}, 15;"));
    b.line(&format!("xor.b32 %r{d}, %r{d}, %r{s};"));
    b.line(&format!("mul.lo.u32 %r{d}, %r{d}, 739982445;"));
    b.line(&format!("shr.u32 %r{s}, %r{d}, 12;"));
    b.line(&format!("xor.b32 %r{d}, %r{d}, %r{s};"));
    b.line(&format!("and.b32 %r{s}, %r{d}, {DEFER_BIT};"));
    b.line(&format!("setp.ne.and.u32 %emdefer, %r{s}, 0, %p{p};"));
    b.line("mov.u32 %emstq, 0;");
    b.line(&format!("and.b32 %r{d}, %r{d}, {MAX_START_DELAY_NS};"));
    b.line(&format!("@%p{p} nanosleep.u32 %r{d};"));
}

/// The bit of a warp's perturbation hash that defers its sts ([`start_delay`]).
const DEFER_BIT: u32 = 1 << 13;

#[cfg(test)]
mod tests {
    use super::mma::mma_computed;
    use super::*;
    use tcgen05_ir::{CtaGroup, Scope, Stmt, TmemRef, samples};

    #[test]
    fn codes_round_trip_and_have_rules() {
        for c in Code::ALL {
            assert_eq!(Code::from_u32(*c as u32), Some(*c));
            assert!(!c.rule().is_empty());
        }
        assert_eq!(Code::from_u32(0), None);
        assert_eq!(Code::Leak.class(), CodeClass::Leak);
        assert_eq!(Code::HangAlloc.class(), CodeClass::Hang);
        // OQ-9: the oracle completes such a run with unspecified cells; the emulation stops.
        assert_eq!(Code::Unallocated.class(), CodeClass::NotRun);
        assert_eq!(Code::OutOfRange.class(), CodeClass::NotRun);
    }

    /// A violation records its code and exits: no `trap` (which would poison the context and
    /// cost the worker) anywhere in a lowered module that has violation checks, and every
    /// bounded spin checks the status word and exits once a violation is recorded.
    #[test]
    fn violations_exit_instead_of_trapping() {
        let mut p = samples::single_warp_roundtrip();
        p.warps[0].push(samples::alloc(CtaGroup::One, 0, 32));
        let l = lower(&p, &EmuConfig::default()).unwrap();
        // The module's tail and each routine's.
        let m = routines_module();
        for text in [l.ptx.as_str(), m] {
            assert!(text.contains("$TRAP:"), "{text}");
            assert!(!text.contains("trap;"), "{text}");
            for (i, _) in text.match_indices("$TRAP:") {
                let tail = &text[i..];
                let cas = tail.find("atom.global.cas.b32").unwrap();
                let exit = tail.find("exit;").unwrap();
                assert!(cas < exit, "{tail}");
            }
        }
        // The alloc's bounded spin on a full allocator (ALLOC-BLOCKS, a routine's) reads the
        // status word every ABORT_EVERY rounds and exits if it is set.
        assert!(l.ptx.contains("call emu_alloc1"), "{}", l.ptx);
        let spin = &m[m.find("_full:").unwrap()..];
        let spin = &spin[..spin.find("_try:").unwrap()];
        assert!(spin.contains(&format!(", {};", ABORT_EVERY - 1)), "{spin}");
        assert!(
            spin.contains("ld.volatile.global.u32") && spin.contains("exit;"),
            "{spin}"
        );
    }

    /// An alloc (either group) and a `::2` dealloc or relinquish are done by lane 0 for its
    /// warp; the other lanes stop after the warp barrier when a violation was recorded (a
    /// lane 0 that gave up ALLOC-BLOCKS' spin left through the violation tail), so a blocked
    /// collective shows the whole warp at the checkpoint before it. A `::1` dealloc, with no
    /// spin, needs no check.
    /// A cluster of two one-warp CTAs, each allocating, deallocating and relinquishing with
    /// `cg`.
    fn alloc_dealloc_relinquish_in_a_pair(cg: CtaGroup) -> Program {
        let mut p = samples::single_warp_roundtrip();
        p.launch.cluster_size = 2;
        p.launch.declare_cluster = true;
        p.warps[0] = vec![
            samples::alloc(cg, 0, 32),
            samples::dealloc(cg, 0, 32),
            samples::relinquish(cg),
        ];
        p
    }

    #[test]
    fn the_warp_stops_after_a_collective_whose_lane_0_left() {
        let check = "bar.warp.sync -1;\n\tld.volatile.global.u32";
        for cg in [CtaGroup::One, CtaGroup::Two] {
            let p = alloc_dealloc_relinquish_in_a_pair(cg);
            let l = lower(&p, &EmuConfig::default()).unwrap();
            // The joins are the routines': `::1` alloc's, and each `::2` collective's.
            assert_eq!(l.ptx.matches(check).count(), 0, "{cg:?}:\n{}", l.ptx);
            let (routine, calls) = match cg {
                CtaGroup::One => ("emu_alloc1", 1),
                CtaGroup::Two => ("emu_pair", 3),
            };
            let called = format!("call {routine}, ");
            assert_eq!(l.ptx.matches(&called).count(), calls, "{}", l.ptx);
            let m = routines_module();
            let text = &m[m.find(&format!(".func {routine}(")).unwrap()..];
            let text = &text[..text.find("\n}\n").unwrap()];
            assert_eq!(text.matches(check).count(), 1, "{cg:?}:\n{text}");
            let at = text.find(check).unwrap();
            let after: Vec<&str> = text[at..].lines().skip(1).take(4).collect();
            assert!(after[0].ends_with("[%emust];"), "{after:?}");
            assert!(after[1].contains("setp.ne.u32"), "{after:?}");
            assert!(
                after[2].ends_with("call emu_finish, (%emust, 1);"),
                "{after:?}"
            );
            assert!(after[3].trim_end().ends_with("exit;"), "{after:?}");
        }
    }

    /// A decompressing cp (§9.7.16.9.1) is lowered with its decompression (byte loads of
    /// the unit and the element fields moved into their bytes, `cp::decompressed_word`); the
    /// same cp without decompression copies whole words.
    #[test]
    fn decompressing_cps_are_lowered() {
        use tcgen05_ir::form::CpForm;
        use tcgen05_ir::{CpDstFmt, CpShape, CpSrcFmt, Op, SmemDesc, Stmt, TmemRef};
        let cp = |dst_fmt, src_fmt| {
            let mut p = samples::single_warp_roundtrip();
            p.warps[0].insert(
                1,
                Stmt::Tc(Op::Cp {
                    form: CpForm {
                        cta_group: CtaGroup::One,
                        shape: CpShape::S128x256b,
                        multicast: None,
                        dst_fmt,
                        src_fmt,
                    },
                    taddr: TmemRef::slot(0, 0, 0),
                    // K-major, no swizzle: LBO 128 and SBO 256 bytes (>> 4), fixed 0b001.
                    src: SmemDesc::from_fields(0, 0, 8 << 16 | 16 << 32 | 1 << 46),
                }),
            );
            p.smem.regions = vec![4096];
            lower(&p, &EmuConfig::default())
        };
        let d4 = cp(Some(CpDstFmt::B8x16), Some(CpSrcFmt::B4x16P64)).unwrap();
        // 4-bit elements: 2 bytes of the unit per word, each 4-bit field into bits 2-5 of
        // its byte.
        assert!(
            d4.ptx.contains("bfe.u32") && d4.ptx.contains(", 2, 4;"),
            "{}",
            d4.ptx
        );
        let d6 = cp(Some(CpDstFmt::B8x16), Some(CpSrcFmt::B6x16P32)).unwrap();
        assert!(d6.ptx.contains(", 18, 6;"), "{}", d6.ptx);
        let plain = cp(None, None).unwrap();
        assert!(!plain.ptx.contains("bfe.u32") && plain.ptx.contains("ld.shared::cluster.u32"));
    }

    /// Each warp reads the run's perturbation after the emulated state is set up (after the
    /// CTA barrier, so the delay is not absorbed by it) and before its program, and sleeps
    /// only when it is non-zero.
    #[test]
    fn warps_start_after_the_runs_perturbation() {
        let p = samples::single_warp_roundtrip();
        let l = lower(&p, &EmuConfig::default()).unwrap();
        let read = format!("[%emust+{}];", 4 * PERTURB_WORD);
        let at = l.ptx.find(&read).unwrap_or_else(|| panic!("{}", l.ptx));
        let barrier = l.ptx.find("barrier.sync 0;").unwrap();
        let dispatch = l.ptx.find("bra $W0;").unwrap();
        assert!(barrier < at && at < dispatch, "{}", l.ptx);
        let delay = &l.ptx[at..dispatch];
        assert!(
            delay.contains(&format!(", {MAX_START_DELAY_NS};")),
            "{delay}"
        );
        let sleep = delay
            .lines()
            .find(|x| x.contains("nanosleep.u32"))
            .unwrap_or_else(|| panic!("{delay}"));
        assert!(sleep.trim_start().starts_with("@%p"), "{sleep}");
    }

    /// Many runs per launch: every body numbers its cluster within its copy, and the kernel
    /// moves its observation and status blocks to its copy's (the copy is the cluster id over
    /// the program's clusters).
    #[test]
    fn copies_use_their_own_blocks_and_number_their_ctas_within_the_copy() {
        let mut p = samples::single_warp_roundtrip();
        p.launch.clusters = 3;
        let l = lower(&p, &EmuConfig::default()).unwrap();
        let reads = l.ptx.matches(CLID_LINE).count();
        assert!(reads >= 2, "{}", l.ptx);
        let reduced = format!("{CLID_LINE}\n\trem.u32 %clid, %clid, 3;");
        assert_eq!(l.ptx.matches(&reduced).count(), reads, "{}", l.ptx);
        let total = 4 * Layout::of(&p).total_words();
        for want in [
            "div.u32 %r".to_string(),
            format!(", {total};"),
            format!(", {};", 4 * STATUS_WORDS),
            "add.u64 %obscta, %obscta, %rd".to_string(),
            "add.u64 %emust, %emust, %rd".to_string(),
        ] {
            assert!(l.ptx.contains(&want), "{want} missing:\n{}", l.ptx);
        }
        // Every way a thread ends counts it in its copy's DONE_WORD first: `emu_finish`
        // does, at the program's end (how 0) or after a violation (how 1), in the module and
        // in the routines; in `emu_finish` every thread but the CTA's last (of the CTA's
        // threads, counted in FIN) returns uncounted, and the last counts them all.
        let threads = p.launch.threads_per_cta();
        let done = format!("red.global.add.u32 [%emust+{}], {threads};", 4 * DONE_WORD);
        let not_last = format!(", {};", threads - 1);
        let mut not_last_seen = false;
        for text in [l.ptx.as_str(), routines_module()] {
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            let fin = lines
                .iter()
                .position(|x| x.starts_with(".visible .func emu_finish("))
                .unwrap_or(lines.len());
            for (i, w) in lines.windows(2).enumerate() {
                let (before, x) = (w[0], w[1]);
                let in_finish = i > fin && lines[fin..i].iter().all(|x| *x != "}");
                if in_finish && x.starts_with('@') && x.ends_with(" ret;") {
                    not_last_seen = true;
                    assert!(
                        before.starts_with("setp.ne.u32") && before.ends_with(&not_last),
                        "{before}: {x}"
                    );
                    continue;
                }
                if !(x.ends_with("exit;") || x == "ret;") || x.starts_with("call") {
                    continue;
                }
                let guard = x.split_whitespace().next().filter(|g| g.starts_with('@'));
                let want = match (in_finish, x == "ret;") {
                    (true, _) => done.clone(),
                    (false, true) => continue,
                    (false, false) => "call emu_finish, (%emust, 1);".to_string(),
                };
                assert!(before.ends_with(&want), "{before}: {x}");
                if let Some(g) = guard {
                    assert!(before.starts_with(g), "{before}: {x}");
                }
            }
        }
        assert!(not_last_seen, "{}", l.ptx);
    }

    /// A perturbed warp's st stores only when `%emdefer` is off, keeps its address and values
    /// otherwise, and its next wait::st lands them before the wait completes; a program with
    /// functions never defers.
    #[test]
    fn sts_may_land_at_the_next_wait_st() {
        let p = samples::single_warp_roundtrip();
        let l = lower(&p, &EmuConfig::default()).unwrap();
        let now = l
            .ptx
            .find("@!%emdefer st.shared.u32")
            .unwrap_or_else(|| panic!("{}", l.ptx));
        let kept = l.ptx.find("@%emdefer or.b32 %emstq, %emstq, 1;").unwrap();
        assert!(now < kept, "{}", l.ptx);
        // The wait::st: the kept stores land (predicated on the pending bit), the bits clear,
        // then the ld reads.
        let cleared = kept + l.ptx[kept..].find("mov.u32 %emstq, 0;").unwrap();
        let at_wait = &l.ptx[kept..cleared];
        assert!(at_wait.contains("and.b32 %r"), "{at_wait}");
        assert!(at_wait.contains("st.shared.u32 [%r"), "{at_wait}");
        assert!(l.ptx[cleared..].contains("ld.shared.u32 %r"), "{}", l.ptx);
        let mut f = samples::single_warp_roundtrip();
        f.funcs.push(tcgen05_ir::Func { body: vec![] });
        let l = lower(&f, &EmuConfig::default()).unwrap();
        assert!(!l.ptx.contains("%emdefer st.shared"), "{}", l.ptx);
    }

    /// A st in a loop after a wait::st of the loop stores at issue, whatever the run's
    /// perturbation: the wait lands only the sts printed before it, so deferring it would lose
    /// its stores or carry them past the wait (WAIT-SCOPE).
    #[test]
    fn a_st_after_a_wait_in_its_loop_stores_at_issue() {
        let p = samples::single_warp_roundtrip();
        let at = p.warps[0]
            .iter()
            .position(|s| matches!(s, Stmt::Tc(Op::St { .. })))
            .unwrap();
        let st = p.warps[0][at].clone();
        for earlier in [false, true] {
            let mut looped = p.clone();
            looped.warps[0].remove(at);
            let mut at_loop = at;
            if earlier {
                looped.warps[0].insert(at, st.clone());
                at_loop += 1;
            }
            looped.warps[0].insert(
                at_loop,
                Stmt::Loop {
                    count: 2,
                    body: vec![samples::wait(tcgen05_ir::WaitOp::St), st.clone()],
                },
            );
            let l = lower(&looped, &EmuConfig::default()).unwrap();
            let bit = u32::from(earlier);
            assert!(
                !l.ptx
                    .contains(&format!("@%emdefer or.b32 %emstq, %emstq, {};", 1 << bit)),
                "earlier st {earlier}: {}",
                l.ptx
            );
            // The earlier st still defers.
            assert_eq!(
                l.ptx.contains("@%emdefer or.b32 %emstq, %emstq, 1;"),
                earlier,
                "{}",
                l.ptx
            );
        }
    }

    /// A st in a loop lands its earlier instance, still pending, before it stores again, and
    /// keeps its address for that; a st outside loops prints no such landing, and a wait::st
    /// with no deferred st before it in the warp lands nothing (`defer::plan`).
    #[test]
    fn only_sts_in_loops_land_their_own_earlier_instance() {
        let p = samples::single_warp_roundtrip();
        let at = p.warps[0]
            .iter()
            .position(|s| matches!(s, Stmt::Tc(Op::St { .. })))
            .unwrap();
        let own = |ptx: &str| ptx.contains("@%emdefer mov.u32 %r");
        let l = lower(&p, &EmuConfig::default()).unwrap();
        assert!(!own(&l.ptx), "{}", l.ptx);
        let mut looped = p.clone();
        let st = looped.warps[0].remove(at);
        looped.warps[0].insert(
            at,
            Stmt::Loop {
                count: 2,
                body: vec![st],
            },
        );
        let l = lower(&looped, &EmuConfig::default()).unwrap();
        assert!(own(&l.ptx), "{}", l.ptx);
        let landing = l.ptx.find("%emstq, 1;\n\tsetp.ne.u32 %p").unwrap();
        let now = l.ptx.find("@!%emdefer st.shared.u32").unwrap();
        assert!(landing < now, "{}", l.ptx);
        // A second warp that only waits lands none of the first warp's sts.
        let mut two = p;
        two.launch.warps_per_cta = 2;
        two.warps.push(vec![samples::wait(tcgen05_ir::WaitOp::St)]);
        let l = lower(&two, &EmuConfig::default()).unwrap();
        let w1 = &l.ptx[l.ptx.find("$W1:").unwrap()..];
        let w1 = &w1[..w1.find("$END:").unwrap()];
        assert!(!w1.contains("%emstq"), "{w1}");
    }

    /// An ld, st or wait right after another leaves its convergence vote out (it cannot
    /// fail, `check::known_converged`); every other aligned instruction keeps it.
    #[test]
    fn votes_that_cannot_fail_are_left_out() {
        let p = samples::single_warp_roundtrip();
        let aligned = p
            .ops()
            .into_iter()
            .filter(|op| {
                matches!(
                    op,
                    Op::Ld { .. }
                        | Op::St { .. }
                        | Op::Wait { .. }
                        | Op::Alloc { .. }
                        | Op::Dealloc { .. }
                        | Op::Relinquish { .. }
                )
            })
            .count();
        let known = known_converged(&p).into_iter().filter(|k| *k).count();
        assert!(known > 0);
        let l = lower(&p, &EmuConfig::default()).unwrap();
        // An ld or st asks its routine for the vote with bit 0 of its flags (`emu_cells`).
        let routine_votes = l
            .ptx
            .lines()
            .filter(|x| x.contains("emu_cells") && x.trim_end().ends_with(", 3);"))
            .count();
        assert_eq!(
            l.ptx.matches("vote.sync.ballot").count() + routine_votes,
            aligned - known,
            "{}",
            l.ptx
        );
    }

    /// The allocated-units mask of `check_cells` (units col/32 ..= (col+ncols-1)/32) as the
    /// lowering prints it, `bmsk.clamp` of u0 = col/32 and n = (col+ncols+31)/32 - u0, with
    /// `bmsk` as the PTX ISA defines it ("bmsk"), for every cell range the range check lets
    /// through.
    #[test]
    fn the_allocated_units_mask_covers_the_columns_units() {
        // PTX ISA, bmsk.clamp.b32 d, a, b.
        let bmsk = |a: u32, b: u32| {
            let a1 = a & 31;
            let mut mask0 = !0u32 << a1;
            let b1 = b & 31;
            let sum = a1 + b1;
            let mut mask1 = if sum < 32 { !0u32 << sum } else { 0 };
            if a >= 32 {
                mask0 = 0;
            }
            if sum >= 32 || a >= 32 || b >= 32 {
                mask1 = 0;
            } else if b1 == 0 {
                mask1 = !0;
            }
            mask0 & !mask1
        };
        for col in 0..512u32 {
            for ncols in 1..=512 - col {
                let units = (col / 32..=(col + ncols - 1) / 32).fold(0u32, |m, u| m | 1 << u);
                let u0 = col >> 5;
                let n = ((col + ncols + 31) >> 5) - u0;
                assert_eq!(bmsk(u0, n), units, "col {col} ncols {ncols}");
            }
        }
    }

    /// Under a perturbation a `::1` alloc fills its new columns with a run-dependent pattern
    /// (contents unspecified, reference §5) before the warp goes on; without functions only.
    #[test]
    fn new_columns_get_a_pattern_of_the_run() {
        let p = samples::single_warp_roundtrip();
        let l = lower(&p, &EmuConfig::default()).unwrap();
        // The kernel passes its perturbation to the alloc's routine, before the st.
        let alloc = l
            .ptx
            .find("call emu_alloc1, (%emsa, 32, ")
            .unwrap_or_else(|| panic!("{}", l.ptx));
        let call = l.ptx[alloc..].lines().next().unwrap();
        assert!(call.ends_with(", %emseed);"), "{call}");
        let st = l.ptx.find("%emdefer st.shared.u32").unwrap();
        assert!(alloc < st, "{}", l.ptx);
        // The routine fills the new columns with the pattern, where the seed is not 0.
        let m = routines_module();
        let body = &m[m.find(".func emu_alloc1").unwrap()..];
        let fill = body.find("$F_top:").unwrap_or_else(|| panic!("{body}"));
        let seed = body[..fill]
            .lines()
            .rev()
            .find_map(|x| x.trim().strip_prefix("setp.eq.u32 %p"))
            .unwrap_or_else(|| panic!("{body}"));
        let reg = seed.split(", ").nth(1).unwrap();
        assert!(seed.ends_with(", 0;"), "{seed}");
        let xor = body[fill..]
            .lines()
            .find(|x| x.contains("xor.b32"))
            .unwrap();
        assert!(xor.ends_with(&format!(", {reg};")), "{xor}");
        // A program with functions never perturbs its sts, nor fills.
        let mut f = samples::single_warp_roundtrip();
        f.funcs.push(tcgen05_ir::Func { body: vec![] });
        let l = lower(&f, &EmuConfig::default()).unwrap();
        let call = l.ptx[l.ptx.find("call emu_alloc1").unwrap()..]
            .lines()
            .next()
            .unwrap();
        assert!(call.ends_with(", 0);"), "{call}");
    }

    #[test]
    fn mmas_whose_d_is_not_computed_are_run_and_named() {
        let mut named = 0;
        for seed in 0..400 {
            let p = tcgen05_generators::valid_program(&tcgen05_generators::Config::default(), seed);
            let odd = p.ops().into_iter().any(|op| {
                matches!(op, Op::Mma(m)
                    if mma_computed(m).is_none() && (m.form.block_scale || m.form.sp))
            });
            assert_eq!(
                odd,
                not_emulated(&p)
                    .is_some_and(|w| w.contains("sparse") || w.contains("block-scaled")),
                "seed {seed}"
            );
            if odd {
                assert!(lower(&p, &EmuConfig::default()).is_ok(), "seed {seed}");
                named += 1;
            }
        }
        assert!(named > 0, "no block-scaled or sparse MMA in 400 programs");
    }

    /// nCols the lowering knows (an immediate or a uniform register) is checked while
    /// lowering (ALLOC-NCOLS-POW2 / -RANGE, reference §6): a valid one prints no check, an
    /// invalid one an unconditional branch with the value as detail word; a divergent register
    /// keeps both run-time checks (ALLOC-NCOLS-UNIFORM first).
    #[test]
    fn known_ncols_are_checked_while_lowering() {
        use tcgen05_ir::{NCols, NColsForm};
        let with = |ncols: NCols| {
            let mut p = samples::single_warp_roundtrip();
            let mut a = samples::alloc(CtaGroup::One, 0, 32);
            if let Stmt::Tc(Op::Alloc { ncols: n, .. }) = &mut a {
                *n = ncols;
            }
            p.warps[0] = vec![a];
            lower(&p, &EmuConfig::default()).unwrap().ptx
        };
        let invalid = format!("bra $TRAP{};", Code::NcolsInvalid as u32);
        let divergent = format!("bra $TRAP{};", Code::NcolsDivergent as u32);
        for form in [NColsForm::Imm, NColsForm::Reg] {
            for v in [32, 64, 128, 256, 512] {
                let ptx = with(NCols { value: v, form });
                assert!(
                    !ptx.contains(&invalid) && !ptx.contains(&divergent),
                    "{ptx}"
                );
            }
            for v in [0, 16, 48, 96, 1024] {
                let ptx = with(NCols { value: v, form });
                let at = ptx.find(&invalid).unwrap_or_else(|| panic!("{v}: {ptx}"));
                let site: Vec<&str> = ptx[..at].trim_end().lines().rev().take(2).collect();
                assert_eq!(site[0].trim(), format!("mov.u32 %tdet, {v};"), "{site:?}");
                assert!(!site[1].contains("setp"), "{site:?}");
                assert!(!ptx.contains(&divergent), "{ptx}");
            }
        }
        let ptx = with(NCols {
            value: 64,
            form: NColsForm::RegDivergent,
        });
        let (d, i) = (ptx.find(&divergent), ptx.find(&invalid));
        assert!(d.is_some() && i.is_some() && d < i, "{ptx}");
    }

    /// The checks of an ld share one branch to the violation tail: each sets the code and
    /// detail where it fails, from the last check to the first, so the first failing check
    /// of the instruction's order (GEN-ALIGNED-CONVERGENT, LDST-TADDR-UNIFORM,
    /// LDST-LANE-QUARTER, then the cells: range, allocation, capacity) is what a thread
    /// records. The uniformity match is skipped where the vote failed.
    #[test]
    fn an_ld_sts_checks_branch_once_first_failing_check_last() {
        let p = samples::single_warp_roundtrip();
        let l = lower(&p, &EmuConfig::default()).unwrap();
        assert!(l.ptx.contains("call (%r"), "{}", l.ptx);
        // The checks are `emu_cells`'s.
        let m = routines_module();
        let cells = &m[m.find(".func (.param .b32 ret) emu_cells").unwrap()..];
        let first = format!("selp.u32 %tcode, {}, 0, ", Code::Capacity as u32);
        let at = cells.find(&first).unwrap_or_else(|| panic!("{cells}"));
        let group: Vec<&str> = cells[at..]
            .lines()
            .map(str::trim)
            .take_while(|x| !x.starts_with("setp.ne.u32"))
            .collect();
        let codes: Vec<u32> = group
            .iter()
            .filter_map(|x| {
                let x = x.split_once("%tcode, ")?.1;
                x.split([';', ',']).next()?.parse().ok()
            })
            .collect();
        let want = [
            Code::Capacity,
            Code::Unallocated,
            Code::OutOfRange,
            Code::LaneQuarter,
            Code::TaddrDivergent,
            Code::NotConverged,
        ]
        .map(|c| c as u32);
        assert_eq!(codes, want, "{group:?}");
        // Each code comes with its detail word, under the same guard.
        for w in group.windows(2).filter(|w| w[0].contains("mov.u32 %tcode")) {
            let guard = w[0].split_whitespace().next().unwrap();
            assert!(
                w[1].starts_with(&format!("{guard} mov.u32 %tdet, ")),
                "{w:?}"
            );
        }
        // The match is left out where the vote failed.
        let vote = cells[..at].rfind("vote.sync.ballot.b32 %r").unwrap();
        let m = cells[vote..at]
            .lines()
            .find(|x| x.contains("match.all.sync"))
            .unwrap_or_else(|| panic!("{}", &cells[vote..at]));
        assert!(m.trim_start().starts_with("@!%p"), "{m}");
        // One branch to the tail, then the routine returns the cell.
        let end = at + cells[at..].find("bra $TRAP;").unwrap();
        assert!(
            !cells[at..end].contains("bra $TRAP") && cells[end..].contains("st.param.b32 [ret]"),
            "{cells}"
        );
    }

    #[test]
    fn the_roundtrip_sample_lowers_to_plain_sm90_ptx() {
        let p = samples::single_warp_roundtrip();
        let l = lower(&p, &EmuConfig::default()).unwrap();
        assert!(l.ptx.contains(".target sm_90\n"));
        // No tcgen05 instruction survives the lowering.
        assert!(!l.ptx.contains("tcgen05."), "{}", l.ptx);
        // 227 KiB minus the small static part: 448 columns of 512 bytes (reference §2.1 has 512).
        assert_eq!(l.tmem_cols, 448);
        assert_eq!(l.dyn_smem, 448 * 512);
        assert!(routines_module().contains("atom.shared.cas.b32"));
        assert!(!routines_module().contains("tcgen05."));
    }

    /// A bounded mbarrier wait is a loop of exactly `max_tries` non-blocking tests with the
    /// program's acquire scope, and bounded sleeps between them: no `try_wait`, whose per-try
    /// suspension is system-dependent (module docs).
    #[test]
    fn bounded_mbarrier_waits_are_loops_of_non_blocking_tests() {
        for (scope, text) in [(Scope::Cta, ".cta"), (Scope::Cluster, ".cluster")] {
            let p = Program {
                launch: samples::launch(1),
                smem: tcgen05_ir::Smem {
                    slots: 0,
                    mbarriers: 2,
                    regions: vec![],
                },
                warps: vec![vec![
                    Stmt::MbarInit { bar: 1, count: 1 },
                    Stmt::MbarWait {
                        bar: 1,
                        parity: true,
                        scope,
                        max_tries: 12345,
                    },
                ]],
                funcs: vec![],
            };
            let l = lower(&p, &EmuConfig::default()).unwrap();
            assert!(!l.ptx.contains("try_wait"), "{}", l.ptx);
            let test = l
                .ptx
                .lines()
                .find(|x| x.contains("mbarrier.test_wait"))
                .unwrap_or_else(|| panic!("no test_wait:\n{}", l.ptx));
            let want = format!("mbarrier.test_wait.parity.acquire{text}.shared::cta.b64 %p");
            assert!(test.trim_start().starts_with(&want), "{test}");
            assert!(test.ends_with(", [tc_mbar+8], 1;"), "{test}");
            assert!(l.ptx.contains(", 12345;"), "{}", l.ptx);
            assert!(
                l.ptx.contains(&format!("nanosleep.u32 {TRY_SLEEP_NS};")),
                "{}",
                l.ptx
            );
        }
    }

    /// A CTA of a pair checks for leaked columns only after its peer finished: a peer blocked
    /// for good (a `::2` dealloc this CTA never joins) makes the run a hang, not a leak, as on
    /// hardware, where the leak error surfaces only when the kernel ends.
    #[test]
    fn pairs_check_for_leaks_after_the_peer_finished() {
        let cg = CtaGroup::Two;
        let mut p = samples::single_warp_roundtrip();
        p.launch.cluster_size = 2;
        p.launch.declare_cluster = true;
        p.warps[0] = vec![
            samples::alloc(cg, 0, 32),
            Stmt::If {
                cond: tcgen05_ir::Cond::CtaOdd,
                then: vec![],
                els: vec![samples::dealloc(cg, 0, 32)],
            },
            samples::relinquish(cg),
        ];
        let l = lower(&p, &EmuConfig::default()).unwrap();
        let fin = &l.ptx[l
            .ptx
            .find(".func emu_finish(.param .u64 emust, .param .b32 how)\n{")
            .unwrap()..];
        let fin = &fin[..fin.find("\n}\n").unwrap()];
        let at = |c: Code| {
            fin.find(&format!("bra $TRAP{};", c as u32))
                .unwrap_or_else(|| panic!("{c:?} not in emu_finish:\n{fin}"))
        };
        assert!(at(Code::HangPeerExit) < at(Code::Leak), "{fin}");
        // The wait for the peer does not stop for a recorded violation (the CTA's shared
        // memory must outlive the peer's accesses): no look at the status word in it.
        let wait = &fin[fin.find("$FIN_PEER:").unwrap()..fin.find("$FIN_PEER_DONE:").unwrap()];
        assert!(
            !wait.contains("[%emust]") && !wait.contains("exit;"),
            "{wait}"
        );
        // Each round of the wait arrives at and waits for the cluster barrier (as the CTA's
        // exit would release it), under the round's predicate, before going round again.
        let lines: Vec<&str> = wait.lines().map(str::trim).collect();
        let back = lines
            .iter()
            .position(|x| x.ends_with("bra $FIN_PEER;"))
            .unwrap_or_else(|| panic!("{wait}"));
        let guard = lines[back].split_whitespace().next().unwrap();
        assert!(guard.starts_with("@%p"), "{wait}");
        assert_eq!(
            lines[back - 2],
            format!("{guard} barrier.cluster.arrive.release;"),
            "{wait}"
        );
        assert_eq!(
            lines[back - 1],
            format!("{guard} barrier.cluster.wait.acquire;"),
            "{wait}"
        );
    }

    /// A case's bounded spins last as long as what it can wait for: the floor alone without
    /// bounded waits or MMAs, every bounded wait's tries on top, never past SPIN_LIMIT. The
    /// preamble stores the rounds for the routines, whose spins read them from the CTA's
    /// state, and `emu_finish`'s wait for the peer CTA uses them.
    #[test]
    fn spins_follow_what_the_case_can_wait_for() {
        // Rounds of half a SPIN_NS each (spin_rounds' docs).
        let rounds = |ns: u64| (2 * ns / u64::from(SPIN_NS)) as u32;
        let floor = rounds(SPIN_FLOOR_NS);
        assert!(floor < SPIN_LIMIT / 8, "{floor}");
        let p = samples::single_warp_roundtrip();
        assert_eq!(spin_rounds(&p), floor);
        let mut waits = p.clone();
        waits.smem.mbarriers = 1;
        waits.warps[0].insert(1, samples::mbar_wait(0, 1 << 16));
        waits.warps[0].insert(1, samples::mbar_wait(0, 1 << 14));
        let tries = (1 << 16) + (1 << 14);
        assert_eq!(
            spin_rounds(&waits),
            rounds(SPIN_FLOOR_NS + tries * TRY_NS_BOUND)
        );
        waits.warps[0].insert(1, samples::mbar_wait(0, 1 << 22));
        assert_eq!(spin_rounds(&waits), SPIN_LIMIT);

        let l = lower(&p, &EmuConfig::default()).unwrap();
        let store = format!("st.shared.u32 [emu_state+{}], {floor};", 4 * st::SPIN);
        assert!(l.ptx.contains(&store), "{}", l.ptx);
        let r = routines_module();
        let read = format!("[%emsa+{}];", 4 * st::SPIN);
        // The alloc's claim (emu_alloc1) and the ::2 meeting (emu_pair) spin.
        assert!(r.matches(&read).count() >= 2, "{r}");
        assert!(!r.contains(&format!(", {SPIN_LIMIT};")), "{r}");

        let pair = alloc_dealloc_relinquish_in_a_pair(CtaGroup::Two);
        let l = lower(&pair, &EmuConfig::default()).unwrap();
        let wait = &l.ptx[l.ptx.find("$FIN_PEER:").unwrap()..];
        let wait = &wait[..wait.find("$FIN_PEER_DONE:").unwrap()];
        assert!(
            wait.contains(&format!(", {};", spin_rounds(&pair))),
            "{wait}"
        );
        assert!(!l.ptx.contains(&format!(", {SPIN_LIMIT};")), "{}", l.ptx);
    }

    #[test]
    fn shift_lowers_and_oversized_programs_are_refused() {
        let mut p = samples::single_warp_roundtrip();
        p.warps[0].insert(
            2,
            Stmt::Tc(Op::Shift {
                form: tcgen05_ir::form::ShiftForm {
                    cta_group: CtaGroup::One,
                    down_first: false,
                },
                taddr: TmemRef::slot(0, 0, 0),
            }),
        );
        assert!(lower(&p, &EmuConfig::default()).is_ok());
        let mut big = samples::single_warp_roundtrip();
        big.smem.regions = vec![230_000];
        let e = lower(&big, &EmuConfig::default()).unwrap_err();
        assert!(e.0.contains("no room"), "{e}");
    }

    #[test]
    fn recursion_is_refused() {
        let mut p = samples::single_warp_roundtrip();
        p.funcs.push(tcgen05_ir::Func {
            body: vec![Stmt::Call(0)],
        });
        p.warps[0].push(Stmt::Call(0));
        assert!(
            lower(&p, &EmuConfig::default())
                .unwrap_err()
                .0
                .contains("recursive")
        );
    }

    /// An MMA whose B rows would run past its data region is not computed (no loop is
    /// printed, a load there could fault the launch) and is named, so its words are left out.
    #[test]
    fn mma_operands_outside_their_region_are_not_computed() {
        let mut checked = 0;
        for seed in 0..200 {
            let mut p =
                tcgen05_generators::valid_program(&tcgen05_generators::Config::default(), seed);
            let Some(b) = p.ops().into_iter().find_map(|op| match op {
                Op::Mma(m) if mma_computed(m).is_some() && p.funcs.is_empty() => Some(m.b.region),
                _ => None,
            }) else {
                continue;
            };
            assert!(
                !not_emulated(&p).is_some_and(|w| w.contains("outside its region")),
                "seed {seed}"
            );
            p.smem.regions[usize::from(b)] = 16;
            let why = not_emulated(&p).unwrap_or_default();
            assert!(why.contains("outside its region"), "seed {seed}: {why}");
            checked += 1;
        }
        assert!(checked > 0);
    }

    #[test]
    fn generated_mma_flows_are_computed() {
        // The default generator makes f16/tf32/i8 M=128 K-major flows: the emulation must
        // compute some of them (not only leave D unchanged).
        let mut computed = 0;
        for seed in 0..200 {
            let p = tcgen05_generators::valid_program(&tcgen05_generators::Config::default(), seed);
            for op in p.ops() {
                if let Op::Mma(m) = op
                    && mma_computed(m).is_some()
                    && let Ok(low) = lower(&p, &EmuConfig::default())
                {
                    computed += 1;
                    assert!(
                        low.ptx.contains("fma.rn.f32") || m.form.kind == tcgen05_ir::MmaKind::I8
                    );
                }
            }
        }
        assert!(computed > 0);
    }
}
