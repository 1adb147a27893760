//! `cuda-emu`: a lowering of tcgen05 programs to ordinary sm_90 PTX, so every line of the
//! hardware path (compile, load, cluster launch, readback, watchdog, respawn) runs on Hopper
//! (issue 7, part 4).
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
//! | column allocator, units of 32 columns (§2.3) | a 16-bit mask in `emu_state`, first fit at a multiple of the request's size, claimed with `atom.shared.cas`; a full allocator spins with `nanosleep` for at most [`SPIN_LIMIT`] rounds (ALLOC-BLOCKS), then records [`Code::HangAlloc`] |
//! | allocation permit, last size (§2.3) | words of `emu_state` |
//! | `::2` alloc/dealloc/relinquish (§2.5) | the k-th `::2` operation of each CTA of a pair meets its partner through a mailbox in the peer's shared memory (`mapa` + `st.release.cluster.shared::cluster`); the even CTA claims the same columns in both masks; a partner that never comes is [`Code::HangPair`] after [`SPIN_LIMIT`] rounds (ALLOC-PAIR-BLOCK) |
//! | ld / st (§3.2, §3.3) | `ld.shared` / `st.shared` of the cells, performed at issue (a completion order the spec allows); `.pack::16b` / `.unpack::16b` use the low halves of two adjacent columns |
//! | wait::ld / wait::st | `bar.warp.sync` (the accesses already completed) |
//! | fence::* | `fence.acq_rel.cluster` |
//! | shift (§3.6) | rows `lane+0..30` move down one lane in 8 columns (OQ-16: our choice), in both CTAs for `::2` |
//! | mbarrier wait (`MbarWait`: a loop of at most `max_tries` tries) | each try is one non-blocking `mbarrier.test_wait.parity.acquire` (the program's scope) and, if it fails, a `nanosleep` of [`TRY_SLEEP_NS`] (bounded by the PTX ISA at twice that), so 2^20 tries take 0.13 s on an H100. A `try_wait` instead suspends its thread for a system-dependent time per failing try: 3.95 us on an H100 (driver 580), and a `suspendTimeHint` does not shorten it (ptxas adds a `NANOSLEEP.SYNCS` of the hint after the same `SYNCS.PHASECHK.TRANS64.TRYWAIT`), so 2^20 tries took 4.1 s of GPU time, which time slices between the campaign's contexts stretched past a 10 s watchdog (docs/blackwell.md). The IR counts tries, not time, and the ISA lets a `try_wait` return false after any time limit, so a try that does not suspend keeps the program's meaning |
//! | commit (§3.9) | the tracked operations completed at issue, so one `mbarrier.arrive.release.cluster` (count 1) on the named mbarrier, or on each CTA of `ctaMask` |
//! | mma (§3.7) | completes at issue, by each issuing thread. For dense `cta_group::1`, M = 128, kinds f16 (f32 D) / tf32 / i8, A and B in shared memory K-major without swizzle: D = A·B (+ D·2^-scale) computed in f32 (s32 for i8) over the canonical layout (core matrices of 8 rows × 16 bytes, LBO along K, SBO along M/N) into data-path layout D (row m → lane m), skipping disabled output lanes. A program with an MMA reading A from TMEM is `NotRun`; every other form leaves D unchanged (the oracle leaves those values unspecified: OQ-19/OQ-22) |
//! | cp (§3.5) | not emulated: a program with a cp is `NotRun` with that reason |
//!
//! The 16-lane ld/st shapes map threads to cells as follows (the spec gives this only in
//! figures, OQ-10; the maps of `oracle::run::ldst`, read off CUTLASS's `SM100_TMEM_LOAD_16dp*`
//! layouts): `.16x64b` thread t → lane t/4 + 8(t%2), column 2r + (t/2)%2; `.16x128b` register j of a
//! repetition → lane t/4 + 8j, column 4r + t%4; `.16x256b` register j → lane t/4 + 8(j/2),
//! column 8r + 2(t%4) + j%2; `.16x32bx2` threads 0-15 use `taddr`, 16-31 `taddr + split`, lane
//! t%16, column r.
//!
//! # Violations the emulation can see
//!
//! Each becomes a `trap` after the first trapping thread recorded a [`Code`] (with its CTA,
//! warp, lane and a detail word) in a status block in host-mapped memory, which survives the
//! dead context. [`Code::class`] says how the `cuda-emu` target reports each code: a trap (with
//! the rule it breaks), a hang (bounded spin exhausted), a leak (ALLOC-FREE-BEFORE-EXIT) or
//! "not run" (emulation capacity).

use std::fmt::Write as _;
use tcgen05_ir::observe::{self, Layout, Site};
use tcgen05_ir::{
    CtaGroup, LdStShape, MbarAddr, NColsForm, Op, Pack, Program, RedOp, Stmt, TBase, TmemRef, Ty,
    WaitOp, values,
};

/// Rounds of a bounded spin (each a `nanosleep` of [`SPIN_NS`] ns): about 0.5 s, below the
/// default watchdog (2 s), so a blocked alloc is reported with its reason rather than only by
/// the watchdog.
pub const SPIN_LIMIT: u32 = 1 << 19;
/// Nanoseconds per spin round.
pub const SPIN_NS: u32 = 1000;
/// Nanoseconds each failed try of an emulated bounded mbarrier wait sleeps (`nanosleep`, which
/// the PTX ISA bounds by twice the request) before the next `mbarrier.test_wait`. On an H100
/// (driver 580) a try then takes 128 ns, so a wait of 2^20 tries on a phase that never
/// completes gives up after 0.13 s of GPU time (at most about 0.26 s by the `nanosleep` bound),
/// far inside the default 2 s watchdog even when a few contexts share the GPU by time slices,
/// and still far longer than any emulated operation a legitimate wait waits for.
pub const TRY_SLEEP_NS: u32 = 100;
/// Words of the status block (second kernel parameter).
pub const STATUS_WORDS: u32 = 8;
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
    /// Beyond what the emulation holds: `Outcome::NotRun`.
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
    /// A TMEM access to columns that are not allocated.
    Unallocated = 10, Trap, "OQ-9 (access to unallocated columns)";
    /// A TMEM address beyond 128 lanes or 512 columns.
    OutOfRange = 11, Trap, "OQ-9 (lane >= 128 or column >= 512)";
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
    /// An alloc found no free columns for [`SPIN_LIMIT`] rounds.
    HangAlloc = 32, Hang, "ALLOC-BLOCKS";
    /// A `::2` collective's partner did not come for [`SPIN_LIMIT`] rounds.
    HangPair = 33, Hang, "ALLOC-PAIR-BLOCK / DEALLOC-PAIR-BLOCK";
    /// The peer CTA of a `::2` pair did not finish for [`SPIN_LIMIT`] rounds after this CTA.
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
    /// Words.
    pub const WORDS: u32 = 24;
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

/// Checks what the emulation supports, statically.
fn check_supported(p: &Program) -> Result<(), Unsupported> {
    let mut err = None;
    let l = &p.launch;
    if l.warps_per_cta == 0 || l.warps_per_cta > 16 || p.warps.len() != usize::from(l.warps_per_cta)
    {
        err = Some(format!(
            "launch of {} warps with {} warp bodies",
            l.warps_per_cta,
            p.warps.len()
        ));
    }
    if !(1..=8).contains(&l.cluster_size) || l.clusters == 0 {
        err = Some(format!(
            "cluster size {} x {} clusters",
            l.cluster_size, l.clusters
        ));
    }
    p.walk(&mut |s| {
        if err.is_some() {
            return;
        }
        match s {
            // The cells a cp writes are not emulated (its layouts, multicasts and
            // decompressions are not lowered), while the oracle computes them (reference §3.5):
            // running such a program would report the emulation's gap as a discrepancy.
            Stmt::Tc(Op::Cp { .. }) => {
                err = Some("tcgen05.cp is not emulated (the cells it writes)".into());
            }
            // Likewise an MMA reading A from TMEM (the emulation computes only MMAs with A and
            // B in shared memory, `mma_computed`).
            Stmt::Tc(Op::Mma(m)) if mma_desc(m).is_none() => {
                err = Some("tcgen05.mma with A in TMEM is not emulated".into());
            }
            Stmt::Tc(Op::Mma(m)) => {
                let regions = [mma_desc(m).map(|d| d.region), Some(m.b.region)];
                if let Some(r) = regions
                    .into_iter()
                    .flatten()
                    .find(|r| usize::from(*r) >= p.smem.regions.len())
                {
                    err = Some(format!(
                        "mma descriptor of region {r} of {}",
                        p.smem.regions.len()
                    ));
                }
            }
            Stmt::Tc(Op::Ld { form, nregs, .. }) => {
                let ok = tcgen05_ir::vec_len(form.shape, form.num) == Some(*nregs)
                    && form.sync
                    && form.aligned
                    && form.pack != Some(Pack::Unpack16b)
                    && (!form.red || (form.pack.is_none() && form.red_op.is_some()));
                if !ok {
                    err = Some(format!(
                        "ill-formed `{}` with {nregs} registers (a static violation; not emulated)",
                        form_opcode(s)
                    ));
                }
            }
            Stmt::Tc(Op::St { form, nregs, .. }) => {
                let ok = tcgen05_ir::vec_len(form.shape, form.num) == Some(*nregs)
                    && form.sync
                    && form.aligned
                    && form.pack != Some(Pack::Pack16b);
                if !ok {
                    err = Some(format!(
                        "ill-formed `{}` with {nregs} registers (a static violation; not emulated)",
                        form_opcode(s)
                    ));
                }
            }
            Stmt::Call(f) if usize::from(*f) >= p.funcs.len() => {
                err = Some(format!("call of missing function f{f}"))
            }
            Stmt::Tc(Op::Alloc { slot, .. }) | Stmt::ObserveAddr { slot }
                if *slot >= p.smem.slots =>
            {
                err = Some(format!("slot {slot} of {}", p.smem.slots));
            }
            Stmt::Tc(Op::Commit { mbar, .. })
            | Stmt::MbarInit { bar: mbar, .. }
            | Stmt::MbarArrive { bar: mbar, .. }
            | Stmt::MbarWait { bar: mbar, .. }
                if *mbar >= p.smem.mbarriers =>
            {
                err = Some(format!("mbarrier {mbar} of {}", p.smem.mbarriers));
            }
            Stmt::Fill { region, .. } if usize::from(*region) >= p.smem.regions.len() => {
                err = Some(format!("region {region} of {}", p.smem.regions.len()));
            }
            _ => {}
        }
        if let Stmt::Tc(op) = s {
            for t in taddrs(op) {
                if let TBase::Slot(n) = t.base
                    && n >= p.smem.slots
                    && err.is_none()
                {
                    err = Some(format!("address from slot {n} of {}", p.smem.slots));
                }
            }
        }
    });
    // Recursion between functions would not terminate in PTX either, but the printer would
    // still print it; refuse cycles so a generated case cannot make the GPU spin forever.
    if err.is_none() && calls_recursive(p) {
        err = Some("recursive function calls".into());
    }
    err.map_or(Ok(()), |e| Err(Unsupported(e)))
}

fn form_opcode(s: &Stmt) -> String {
    match s {
        Stmt::Tc(op) => op.form().opcode(),
        _ => String::new(),
    }
}

fn taddrs(op: &Op) -> Vec<TmemRef> {
    match op {
        Op::Dealloc { taddr, .. }
        | Op::Ld { taddr, .. }
        | Op::St { taddr, .. }
        | Op::Shift { taddr, .. }
        | Op::Cp { taddr, .. } => vec![*taddr],
        Op::Mma(m) => {
            let mut v = vec![m.d];
            if let tcgen05_ir::MmaA::Tmem(t) = m.a {
                v.push(t);
            }
            v.extend(
                m.sp_meta
                    .iter()
                    .chain(&m.scale_a)
                    .chain(&m.scale_b)
                    .copied(),
            );
            v
        }
        _ => vec![],
    }
}

fn mma_desc(m: &tcgen05_ir::Mma) -> Option<&tcgen05_ir::SmemDesc> {
    match &m.a {
        tcgen05_ir::MmaA::Desc(d) => Some(d),
        tcgen05_ir::MmaA::Tmem(_) => None,
    }
}

/// The MMAs whose D values the emulation computes: dense, `cta_group::1`, M = 128, kinds f16
/// (f32 D), tf32 and i8, no transpose or B-reuse shift, no collector reuse, A and B in shared
/// memory K-major without swizzle (core matrices of 8 rows × 16 bytes; the leading-dimension
/// offset steps along K, the stride offset along M/N), D in data-path layout D (row m in lane
/// m, column n in column n). These layouts are the ISA's figures (OQ-22, OQ-29). Returns
/// (N, K, element bytes).
fn mma_computed(m: &tcgen05_ir::Mma) -> Option<(u32, u32, u32)> {
    use tcgen05_ir::{CollectorOp, MmaKind};
    let f = &m.form;
    if f.ws || f.sp || f.block_scale || f.ashift || f.cta_group != CtaGroup::One {
        return None;
    }
    if f.collector.is_some_and(|c| c.op != CollectorOp::Discard) {
        return None;
    }
    let a = mma_desc(m)?;
    let plain = |d: &tcgen05_ir::SmemDesc| {
        d.swizzle == 0 && !d.lbo_abs && d.base_offset == 0 && d.fixed == 1 && d.reserved == 0
    };
    if !plain(a) || !plain(&m.b) {
        return None;
    }
    let d = m.idesc;
    let mm = (d >> 24 & 0x1F) << 4;
    let n = (d >> 17 & 0x3F) << 3;
    if mm != 128 || n == 0 || d & 0b111 != 0 || d & (0b11 << 15) != 0 || d >> 30 != 0 {
        return None;
    }
    let (dt, at, bt) = (d >> 4 & 3, d >> 7 & 7, d >> 10 & 7);
    match f.kind {
        MmaKind::F16 if dt == 1 && at == 0 && bt == 0 => Some((n, 16, 2)),
        MmaKind::Tf32 if dt == 1 && at == 2 && bt == 2 => Some((n, 8, 4)),
        MmaKind::I8 if dt == 2 && at <= 1 && bt <= 1 => Some((n, 32, 1)),
        _ => None,
    }
}

fn calls_recursive(p: &Program) -> bool {
    fn callees(b: &[Stmt], out: &mut Vec<usize>) {
        for s in b {
            match s {
                Stmt::Call(f) => out.push(usize::from(*f)),
                Stmt::If { then, els, .. } => {
                    callees(then, out);
                    callees(els, out);
                }
                Stmt::Loop { body, .. } => callees(body, out),
                _ => {}
            }
        }
    }
    let n = p.funcs.len();
    let edges: Vec<Vec<usize>> = p
        .funcs
        .iter()
        .map(|f| {
            let mut v = Vec::new();
            callees(&f.body, &mut v);
            v
        })
        .collect();
    // Depth-first search for a cycle.
    fn visit(i: usize, edges: &[Vec<usize>], state: &mut [u8]) -> bool {
        state[i] = 1;
        for &j in &edges[i] {
            if j < state.len() && (state[j] == 1 || (state[j] == 0 && visit(j, edges, state))) {
                return true;
            }
        }
        state[i] = 2;
        false
    }
    let mut state = vec![0u8; n];
    (0..n).any(|i| state[i] == 0 && visit(i, &edges, &mut state))
}

fn uses_pairs(p: &Program) -> bool {
    let mut any = false;
    p.walk(&mut |s| {
        if let Stmt::Tc(op) = s
            && matches!(
                op,
                Op::Alloc { .. } | Op::Dealloc { .. } | Op::Relinquish { .. } | Op::Shift { .. }
            )
            && op.form().cta_group() == Some(CtaGroup::Two)
        {
            any = true;
        }
    });
    any
}

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
    let layout = Layout::of(p);
    let mut out = String::with_capacity(16 * 1024);
    let pairs = uses_pairs(p) && p.launch.cluster_size >= 2;
    print_module(p, &layout, cols, pairs, &mut out);
    Ok(Lowered {
        ptx: out,
        dyn_smem: cols * 512,
        tmem_cols: cols,
    })
}

fn print_module(p: &Program, layout: &Layout, cols: u32, pairs: bool, out: &mut String) {
    let l = &p.launch;
    let _ = writeln!(
        out,
        "//\n// tcgen05-fuzz cuda-emu lowering (tcgen05-drivers {}) of a program for {}\n// emulated TMEM: 128 lanes x {cols} columns\n//",
        env!("CARGO_PKG_VERSION"),
        l.target
    );
    out.push_str(".version 8.0\n.target sm_90\n.address_size 64\n\n");
    if p.smem.slots > 0 {
        let _ = writeln!(out, ".shared .align 16 .b32 tc_slot[{}];", p.smem.slots);
    }
    if p.smem.mbarriers > 0 {
        let _ = writeln!(out, ".shared .align 16 .b64 tc_mbar[{}];", p.smem.mbarriers);
    }
    for (i, bytes) in p.smem.regions.iter().enumerate() {
        let _ = writeln!(
            out,
            ".shared .align 1024 .b8 tc_data{i}[{}];",
            bytes.max(&16)
        );
    }
    let _ = writeln!(out, ".shared .align 16 .b32 emu_state[{}];", st::WORDS);
    out.push_str(".extern .shared .align 16 .b32 emu_tmem[];\n");
    out.push_str(".global .align 16 .b32 tc_scratch[4];\n\n");
    let ctx = Ctx { p, cols, pairs };
    out.push_str(".func emu_finish(.param .u64 emust);\n");
    for i in 0..p.funcs.len() {
        let _ = writeln!(out, ".func f{i}(.param .u64 obsw, .param .u64 emust);");
    }
    out.push('\n');
    // The finishing protocol: the last thread of the CTA, for programs with ::2 collectives,
    // waits until the peer CTA finished too (its shared memory must outlive the peer's
    // accesses), then checks for leaked columns.
    {
        out.push_str(".func emu_finish(.param .u64 emust)\n{\n");
        let mut b = Body::new(&ctx);
        b.special_regs();
        b.line("ld.param.u64 %emust, [emust];");
        let r = b.r();
        let p0 = b.pr();
        b.line(&format!(
            "atom.shared.add.u32 %r{r}, [emu_state+{}], 1;",
            4 * st::FIN
        ));
        b.line(&format!(
            "setp.ne.u32 %p{p0}, %r{r}, {};",
            32 * u32::from(l.warps_per_cta) - 1
        ));
        b.line(&format!("@%p{p0} bra $FIN_RET;"));
        // With ::2 pairs, the peer CTA first (a CTA that reached its exit with columns
        // allocated is a leak only if the kernel completes: while the peer is blocked, e.g. in
        // a ::2 dealloc this CTA never joins, the run is a hang, as on hardware, where error
        // 721 surfaces only when the kernel ends), then the leak check.
        if ctx.pairs {
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
            let f = b.r();
            let pf = b.pr();
            b.spin_until(
                &format!(
                    "ld.acquire.cluster.shared::cta.u32 %r{f}, [emu_state+{}];",
                    4 * st::PEER_DONE
                ),
                &format!("setp.ne.u32 %p{pf}, %r{f}, 0;"),
                pf,
                Code::HangPeerExit,
                "0",
            );
        }
        let m = b.r();
        let p1 = b.pr();
        b.line(&format!(
            "ld.volatile.shared.u32 %r{m}, [emu_state+{}];",
            4 * st::MASK
        ));
        b.line(&format!("setp.ne.u32 %p{p1}, %r{m}, 0;"));
        b.trap_if(p1, Code::Leak, &format!("%r{m}"));
        b.label("$FIN_RET");
        b.line("ret;");
        b.finish(out);
        out.push_str("}\n\n");
    }
    for (i, f) in p.funcs.iter().enumerate() {
        let _ = writeln!(out, ".func f{i}(.param .u64 obsw, .param .u64 emust)\n{{");
        let mut b = Body::new(&ctx);
        b.special_regs();
        b.line("ld.param.u64 %obsw, [obsw];");
        b.line("ld.param.u64 %emust, [emust];");
        b.line("mul.wide.u32 %rd0, %lane, 4;");
        b.line("add.u64 %obsl, %obsw, %rd0;");
        b.block(&f.body, &layout.func_sites[i], &mut 0);
        b.line("ret;");
        b.finish(out);
        out.push_str("}\n\n");
    }
    out.push_str(".visible .entry tc_kernel(.param .u64 obs, .param .u64 status)\n");
    let _ = writeln!(out, ".reqntid {}, 1, 1", 32 * u32::from(l.warps_per_cta));
    if l.declare_cluster {
        let _ = writeln!(out, ".reqnctapercluster {}, 1, 1", l.cluster_size);
        out.push_str(".explicitcluster\n");
    }
    out.push_str("{\n");
    let mut b = Body::new(&ctx);
    b.special_regs();
    b.line("ld.param.u64 %obs, [obs];");
    b.line("cvta.to.global.u64 %obs, %obs;");
    b.line("ld.param.u64 %emust, [status];");
    b.line("cvta.to.global.u64 %emust, %emust;");
    let (cs, cw) = (l.cluster_size, layout.cta_words);
    b.line(&format!("mad.lo.u32 %r0, %clid, {cs}, %ctarank;"));
    b.line(&format!("mul.wide.u32 %rd0, %r0, {};", u64::from(cw) * 4));
    b.line("add.u64 %obscta, %obs, %rd0;");
    // Initialise the emulated state before any thread of the cluster uses it.
    {
        let t = b.r();
        let pt = b.pr();
        b.line(&format!("mov.u32 %r{t}, %tid.x;"));
        b.line(&format!("setp.lt.u32 %p{pt}, %r{t}, {};", st::WORDS));
        b.line(&format!("shl.b32 %r{t}, %r{t}, 2;"));
        let a = b.r();
        b.line(&format!("mov.u32 %r{a}, emu_state;"));
        b.line(&format!("add.u32 %r{a}, %r{a}, %r{t};"));
        b.line(&format!("@%p{pt} st.shared.u32 [%r{a}], 0;"));
        if 32 * u32::from(l.warps_per_cta) < st::WORDS {
            // Fewer threads than words: thread 0 clears the rest.
            for w in 32 * u32::from(l.warps_per_cta)..st::WORDS {
                b.line(&format!("st.shared.u32 [emu_state+{}], 0;", 4 * w));
            }
        }
        b.line("barrier.sync 0;");
        if l.cluster_size > 1 {
            b.line("barrier.cluster.arrive.release;");
            b.line("barrier.cluster.wait.acquire;");
        }
    }
    for w in 0..p.warps.len() {
        b.line(&format!("setp.eq.u32 %p0, %warp, {w};"));
        b.line(&format!("@%p0 bra $W{w};"));
    }
    b.line("bra.uni $END;");
    for (w, code) in p.warps.iter().enumerate() {
        b.label(&format!("$W{w}"));
        b.line(&format!(
            "add.u64 %obsw, %obscta, {};",
            u64::from(layout.warp_base[w]) * 4
        ));
        b.line("mul.wide.u32 %rd0, %lane, 4;");
        b.line("add.u64 %obsl, %obsw, %rd0;");
        b.line(&format!(
            "st.volatile.global.u32 [%obsl], {};",
            observe::CHECKPOINT_START
        ));
        b.block(code, &layout.warp_sites[w], &mut 0);
        b.line(&format!(
            "st.volatile.global.u32 [%obsl], {};",
            observe::CHECKPOINT_DONE
        ));
        b.line("bra.uni $END;");
    }
    b.label("$END");
    b.line("call emu_finish, (%emust);");
    b.line("ret;");
    b.finish(out);
    out.push_str("}\n");
}

struct Ctx<'a> {
    p: &'a Program,
    cols: u32,
    pairs: bool,
}

/// Registers and labels of one function body while it is printed.
struct Body<'a> {
    c: &'a Ctx<'a>,
    code: String,
    r: u32,
    rd: u32,
    pr: u32,
    h: u32,
    labels: u32,
    traps: bool,
}

struct Pending {
    regs: Vec<u32>,
    site: Site,
}

impl<'a> Body<'a> {
    fn new(c: &'a Ctx<'a>) -> Self {
        Body {
            c,
            code: String::with_capacity(4096),
            r: 1,
            rd: 1,
            pr: 1,
            h: 1,
            labels: 0,
            traps: false,
        }
    }

    fn line(&mut self, s: &str) {
        self.code.push('\t');
        self.code.push_str(s);
        self.code.push('\n');
    }

    fn label(&mut self, s: &str) {
        self.code.push_str(s);
        self.code.push_str(":\n");
    }

    fn r(&mut self) -> u32 {
        self.r += 1;
        self.r - 1
    }

    fn rd(&mut self) -> u32 {
        self.rd += 1;
        self.rd - 1
    }

    fn pr(&mut self) -> u32 {
        self.pr += 1;
        self.pr - 1
    }

    fn h(&mut self) -> u32 {
        self.h += 1;
        self.h - 1
    }

    fn next_label(&mut self) -> u32 {
        self.labels += 1;
        self.labels
    }

    fn finish(mut self, out: &mut String) {
        if self.traps {
            // The shared trap tail: the first thread to trap records the code, its place and
            // the detail word in the host-mapped status block, then everyone traps.
            self.label("$TRAP");
            self.line("atom.global.cas.b32 %tprev, [%emust], 0, %tcode;");
            self.line("setp.eq.u32 %tfirst, %tprev, 0;");
            self.line(&format!(
                "mad.lo.u32 %tprev, %clid, {}, %ctarank;",
                self.c.p.launch.cluster_size
            ));
            self.line("@%tfirst st.volatile.global.u32 [%emust+4], %tprev;");
            self.line("@%tfirst st.volatile.global.u32 [%emust+8], %warp;");
            self.line("@%tfirst st.volatile.global.u32 [%emust+12], %lane;");
            self.line("@%tfirst st.volatile.global.u32 [%emust+16], %tdet;");
            self.line("membar.sys;");
            self.line("trap;");
        }
        out.push_str("\t.reg .pred %p<");
        let _ = write!(
            out,
            "{}>;\n\t.reg .b32 %r<{}>;\n\t.reg .b64 %rd<{}>;\n\t.reg .b16 %h<{}>;\n",
            self.pr, self.r, self.rd, self.h
        );
        out.push_str("\t.reg .b32 %lane, %warp, %ctarank, %ctaodd, %clid;\n");
        out.push_str("\t.reg .b64 %obs, %obscta, %obsw, %obsl, %emust;\n");
        out.push_str("\t.reg .b32 %tcode, %tdet, %tprev;\n\t.reg .pred %tfirst;\n");
        out.push_str(&self.code);
    }

    fn special_regs(&mut self) {
        self.line("mov.u32 %lane, %laneid;");
        self.line("mov.u32 %warp, %tid.x;");
        self.line("shr.u32 %warp, %warp, 5;");
        self.line("mov.u32 %ctarank, %cluster_ctarank;");
        self.line("and.b32 %ctaodd, %ctarank, 1;");
        self.line("mov.u32 %clid, %clusterid.x;");
    }

    /// Traps with `code` where predicate `p` holds; `detail` is a register or an immediate.
    fn trap_if(&mut self, p: u32, code: Code, detail: &str) {
        self.traps = true;
        self.line(&format!("@%p{p} mov.u32 %tcode, {};", code as u32));
        self.line(&format!("@%p{p} mov.u32 %tdet, {detail};"));
        self.line(&format!("@%p{p} bra $TRAP;"));
    }

    /// Traps with `code` unconditionally.
    fn trap(&mut self, code: Code, detail: &str) {
        self.traps = true;
        self.line(&format!("mov.u32 %tcode, {};", code as u32));
        self.line(&format!("mov.u32 %tdet, {detail};"));
        self.line("bra $TRAP;");
    }

    /// A bounded spin: runs `load` then `test` (which sets predicate `p` when done) until `p`,
    /// sleeping between rounds; after [`SPIN_LIMIT`] rounds, traps with `code`.
    fn spin_until(&mut self, load: &str, test: &str, p: u32, code: Code, detail: &str) {
        let n = self.next_label();
        let c = self.r();
        let q = self.pr();
        self.line(&format!("mov.u32 %r{c}, 0;"));
        self.label(&format!("$SP{n}_top"));
        self.line(load);
        self.line(test);
        self.line(&format!("@%p{p} bra $SP{n}_done;"));
        self.line(&format!("add.u32 %r{c}, %r{c}, 1;"));
        self.line(&format!("setp.ge.u32 %p{q}, %r{c}, {SPIN_LIMIT};"));
        self.trap_if(q, code, detail);
        self.line(&format!("nanosleep.u32 {SPIN_NS};"));
        self.line(&format!("bra $SP{n}_top;"));
        self.label(&format!("$SP{n}_done"));
    }

    /// The `.sync.aligned` preconditions: every lane of the warp executes this instruction.
    fn converged(&mut self) {
        let m = self.r();
        let p = self.pr();
        // `.sync`: every lane of the warp must come to a warp-synchronous vote (independent
        // thread scheduling need not have reconverged the warp after divergent code, so
        // `activemask` alone would see a partial warp); a lane that exited or never comes
        // leaves the vote incomplete (or blocks it, which the watchdog reports).
        self.line(&format!("vote.sync.ballot.b32 %r{m}, 1, -1;"));
        self.line(&format!("setp.ne.b32 %p{p}, %r{m}, -1;"));
        self.trap_if(p, Code::NotConverged, &format!("%r{m}"));
    }

    /// Traps with `code` unless register `r` holds the same value in every lane (call after
    /// [`Body::converged`]).
    fn uniform(&mut self, r: u32, code: Code) {
        let m = self.r();
        let (p, q) = (self.pr(), self.pr());
        self.line(&format!("match.all.sync.b32 %r{m}|%p{p}, %r{r}, -1;"));
        self.line(&format!("not.pred %p{q}, %p{p};"));
        self.trap_if(q, code, &format!("%r{r}"));
    }

    fn block(&mut self, stmts: &[Stmt], sites: &[Site], next: &mut usize) {
        let mut pending: Vec<Pending> = Vec::new();
        for s in stmts {
            let site = observe::site_of(s).map(|_| {
                *next += 1;
                sites[*next - 1]
            });
            match s {
                Stmt::Tc(op) => self.op(op, site, &mut pending),
                Stmt::If { cond, then, els } => {
                    let n = self.next_label();
                    let p = self.cond(cond);
                    self.line(&format!("@!%p{p} bra $I{n}_else;"));
                    self.block(then, sites, next);
                    self.line(&format!("bra $I{n}_end;"));
                    self.label(&format!("$I{n}_else"));
                    self.block(els, sites, next);
                    self.label(&format!("$I{n}_end"));
                }
                Stmt::Loop { count, body } => {
                    let n = self.next_label();
                    let c = self.r();
                    let p = self.pr();
                    self.line(&format!("mov.u32 %r{c}, 0;"));
                    self.label(&format!("$L{n}_top"));
                    self.line(&format!("setp.ge.u32 %p{p}, %r{c}, {count};"));
                    self.line(&format!("@%p{p} bra $L{n}_end;"));
                    self.block(body, sites, next);
                    self.line(&format!("add.u32 %r{c}, %r{c}, 1;"));
                    self.line(&format!("bra $L{n}_top;"));
                    self.label(&format!("$L{n}_end"));
                }
                Stmt::Call(f) => self.line(&format!("call f{f}, (%obsw, %emust);")),
                Stmt::Exit => {
                    self.line(&format!(
                        "st.volatile.global.u32 [%obsl], {};",
                        observe::CHECKPOINT_EXIT
                    ));
                    self.line("call emu_finish, (%emust);");
                    self.line("exit;");
                }
                Stmt::BarCta => self.line("barrier.sync 0;"),
                Stmt::ClusterArrive { relaxed } => self.line(if *relaxed {
                    "barrier.cluster.arrive.relaxed;"
                } else {
                    "barrier.cluster.arrive.release;"
                }),
                Stmt::ClusterWait => self.line("barrier.cluster.wait.acquire;"),
                Stmt::MbarInit { bar, count } => {
                    self.line(&format!(
                        "mbarrier.init.shared::cta.b64 [tc_mbar+{}], {count};",
                        8 * u32::from(*bar)
                    ));
                }
                Stmt::FenceMbarInit => self.line("fence.mbarrier_init.release.cluster;"),
                Stmt::MbarArrive { bar, cta: None } => {
                    let s = self.rd();
                    self.line(&format!(
                        "mbarrier.arrive.release.cta.shared::cta.b64 %rd{s}, [tc_mbar+{}];",
                        8 * u32::from(*bar)
                    ));
                }
                Stmt::MbarArrive {
                    bar,
                    cta: Some(rank),
                } => {
                    let a = self.r();
                    self.line(&format!("mov.u32 %r{a}, tc_mbar;"));
                    self.line(&format!("add.u32 %r{a}, %r{a}, {};", 8 * u32::from(*bar)));
                    let m = self.r();
                    self.line(&format!("mapa.shared::cluster.u32 %r{m}, %r{a}, {rank};"));
                    self.line(&format!(
                        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r{m}];"
                    ));
                }
                Stmt::MbarWait {
                    bar,
                    parity,
                    scope,
                    max_tries,
                } => {
                    let n = self.next_label();
                    let (c, v) = (self.r(), self.r());
                    let (p, q) = (self.pr(), self.pr());
                    self.line(&format!("mov.u32 %r{c}, 0;"));
                    self.label(&format!("$MW{n}_top"));
                    // Each try is one non-blocking `test_wait` and, when it fails, a bounded
                    // `nanosleep` (module docs: a `try_wait` suspends for a system-dependent
                    // time per try, about 4 us on Hopper whatever the suspendTimeHint).
                    self.line(&format!(
                        "mbarrier.test_wait.parity.acquire{}.shared::cta.b64 %p{p}, [tc_mbar+{}], {};",
                        scope.as_str(),
                        8 * u32::from(*bar),
                        u8::from(*parity)
                    ));
                    self.line(&format!("@%p{p} bra $MW{n}_done;"));
                    self.line(&format!("add.u32 %r{c}, %r{c}, 1;"));
                    self.line(&format!("setp.lt.u32 %p{q}, %r{c}, {max_tries};"));
                    self.line(&format!("@%p{q} nanosleep.u32 {TRY_SLEEP_NS};"));
                    self.line(&format!("@%p{q} bra $MW{n}_top;"));
                    self.line(&format!("mov.u32 %r{v}, {};", observe::MBAR_GAVE_UP));
                    self.line(&format!("bra $MW{n}_rec;"));
                    self.label(&format!("$MW{n}_done"));
                    self.line(&format!("mov.u32 %r{v}, {};", observe::MBAR_COMPLETED));
                    self.label(&format!("$MW{n}_rec"));
                    if let Some(site) = site {
                        self.record(site, &[v]);
                    }
                }
                Stmt::FenceProxyAsync => self.line("fence.proxy.async.shared::cta;"),
                Stmt::Fill { region, seed, elem } => self.fill(*region, *seed, *elem),
                Stmt::ObserveAddr { slot } => {
                    let v = self.r();
                    self.line(&format!(
                        "ld.shared.b32 %r{v}, [tc_slot+{}];",
                        4 * u32::from(*slot)
                    ));
                    if let Some(site) = site {
                        self.record(site, &[v]);
                    }
                }
                Stmt::Checkpoint(id) => {
                    self.line(&format!("st.volatile.global.u32 [%obsl], {id};"))
                }
                Stmt::Spin(iters) => {
                    let n = self.next_label();
                    let c = self.r();
                    let p = self.pr();
                    self.line(&format!("mov.u32 %r{c}, 0;"));
                    self.label(&format!("$S{n}_top"));
                    self.line(&format!("setp.ge.u32 %p{p}, %r{c}, {iters};"));
                    self.line(&format!("@%p{p} bra $S{n}_end;"));
                    self.line("nanosleep.u32 20;");
                    self.line(&format!("add.u32 %r{c}, %r{c}, 1;"));
                    self.line(&format!("bra $S{n}_top;"));
                    self.label(&format!("$S{n}_end"));
                }
            }
        }
        for p in pending.drain(..) {
            self.record(p.site, &p.regs);
        }
    }

    fn record(&mut self, site: Site, regs: &[u32]) {
        self.line(&format!("st.global.u32 [%obsl+{}], 1;", site.offset * 4));
        let a = self.rd();
        self.line(&format!("mul.wide.u32 %rd{a}, %lane, {};", site.words * 4));
        self.line(&format!("add.u64 %rd{a}, %rd{a}, %obsw;"));
        for (i, r) in regs.iter().enumerate() {
            self.line(&format!(
                "st.global.u32 [%rd{a}+{}], %r{r};",
                (site.offset + 32 + i as u32) * 4
            ));
        }
    }

    fn cond(&mut self, c: &tcgen05_ir::Cond) -> u32 {
        use tcgen05_ir::Cond;
        let p = self.pr();
        match c {
            Cond::LaneLt(n) => self.line(&format!("setp.lt.u32 %p{p}, %lane, {n};")),
            Cond::LaneEq(n) => self.line(&format!("setp.eq.u32 %p{p}, %lane, {n};")),
            Cond::ElectOne => self.line(&format!("elect.sync _|%p{p}, -1;")),
            Cond::CtaRank(n) => self.line(&format!("setp.eq.u32 %p{p}, %ctarank, {n};")),
            Cond::CtaOdd => self.line(&format!("setp.ne.u32 %p{p}, %ctaodd, 0;")),
            Cond::Cluster(n) => self.line(&format!("setp.eq.u32 %p{p}, %clid, {n};")),
            Cond::WarpRank(n) => self.line(&format!("setp.eq.u32 %p{p}, %warp, {n};")),
        }
        p
    }

    fn fill(&mut self, region: u8, seed: u32, elem: tcgen05_ir::FillElem) {
        use tcgen05_ir::FillElem;
        let words = self
            .c
            .p
            .smem
            .regions
            .get(region as usize)
            .copied()
            .unwrap_or(16)
            .max(16)
            / 4;
        let n = self.next_label();
        let (i, h, v, a) = (self.r(), self.r(), self.r(), self.r());
        let p = self.pr();
        self.line(&format!("mov.u32 %r{i}, %lane;"));
        self.label(&format!("$F{n}_top"));
        self.line(&format!("setp.ge.u32 %p{p}, %r{i}, {words};"));
        self.line(&format!("@%p{p} bra $F{n}_end;"));
        self.line(&format!("mad.lo.u32 %r{h}, %r{i}, 2654435769, {seed};"));
        match elem {
            FillElem::Word => self.line(&format!("mov.b32 %r{v}, %r{h};")),
            FillElem::F16Small => {
                let (t, u) = (self.r(), self.r());
                let (h0, h1) = (self.h(), self.h());
                for (s, hr) in [(8, h0), (20, h1)] {
                    self.line(&format!("shr.u32 %r{t}, %r{h}, {s};"));
                    self.line(&format!("and.b32 %r{t}, %r{t}, 7;"));
                    self.line(&format!("sub.s32 %r{u}, %r{t}, 4;"));
                    self.line(&format!("cvt.rn.f16.s32 %h{hr}, %r{u};"));
                }
                self.line(&format!("mov.b32 %r{v}, {{%h{h0}, %h{h1}}};"));
            }
            FillElem::Tf32Small => {
                let t = self.r();
                self.line(&format!("shr.u32 %r{t}, %r{h}, 8;"));
                self.line(&format!("and.b32 %r{t}, %r{t}, 7;"));
                self.line(&format!("sub.s32 %r{t}, %r{t}, 4;"));
                self.line(&format!("cvt.rn.f32.s32 %r{v}, %r{t};"));
            }
            FillElem::I8Small => {
                let t = self.r();
                self.line(&format!("mov.u32 %r{v}, 0;"));
                for (k, s) in [4, 10, 16, 22].into_iter().enumerate() {
                    self.line(&format!("shr.u32 %r{t}, %r{h}, {s};"));
                    self.line(&format!("and.b32 %r{t}, %r{t}, 15;"));
                    self.line(&format!("add.u32 %r{t}, %r{t}, 248;"));
                    self.line(&format!("and.b32 %r{t}, %r{t}, 255;"));
                    self.line(&format!("shl.b32 %r{t}, %r{t}, {};", 8 * k));
                    self.line(&format!("or.b32 %r{v}, %r{v}, %r{t};"));
                }
            }
            // values::fill_word: ((h >> 1) & 0x11111111) * 10 | 0x44444444.
            FillElem::SpMeta => {
                let t = self.r();
                self.line(&format!("shr.u32 %r{t}, %r{h}, 1;"));
                self.line(&format!("and.b32 %r{t}, %r{t}, 286331153;"));
                self.line(&format!("mul.lo.u32 %r{t}, %r{t}, 10;"));
                self.line(&format!("or.b32 %r{v}, %r{t}, 1145324612;"));
            }
        }
        self.line(&format!("mov.u32 %r{a}, tc_data{region};"));
        self.line(&format!("mad.lo.u32 %r{a}, %r{i}, 4, %r{a};"));
        self.line(&format!("st.shared.u32 [%r{a}], %r{v};"));
        self.line(&format!("add.u32 %r{i}, %r{i}, 32;"));
        self.line(&format!("bra $F{n}_top;"));
        self.label(&format!("$F{n}_end"));
    }

    /// Computes a TMEM address into a fresh register (as the real printer does).
    fn taddr(&mut self, t: &TmemRef) -> u32 {
        let r = self.r();
        match t.base {
            TBase::Slot(s) => {
                self.line(&format!(
                    "ld.shared.u32 %r{r}, [tc_slot+{}];",
                    4 * u32::from(s)
                ));
                self.line(&format!("add.u32 %r{r}, %r{r}, {};", t.offset()));
            }
            TBase::Abs => self.line(&format!("mov.u32 %r{r}, {};", t.offset())),
        }
        if t.divergent {
            let d = self.r();
            self.line(&format!("and.b32 %r{d}, %lane, 1;"));
            self.line(&format!("add.u32 %r{r}, %r{r}, %r{d};"));
        }
        r
    }

    /// An nCols operand in a register.
    fn ncols(&mut self, n: &tcgen05_ir::NCols) -> u32 {
        let r = self.r();
        self.line(&format!("mov.u32 %r{r}, {};", n.value));
        if n.form == NColsForm::RegDivergent {
            let d = self.r();
            self.line(&format!("and.b32 %r{d}, %lane, 1;"));
            self.line(&format!("shl.b32 %r{r}, %r{r}, %r{d};"));
        }
        r
    }

    /// Traps unless `n` (a register) is a power of two in [32, 512] (ALLOC-NCOLS-*).
    fn ncols_valid(&mut self, n: u32) {
        let t = self.r();
        let (p, q) = (self.pr(), self.pr());
        self.line(&format!("sub.u32 %r{t}, %r{n}, 1;"));
        self.line(&format!("and.b32 %r{t}, %r{t}, %r{n};"));
        self.line(&format!("setp.ne.u32 %p{p}, %r{t}, 0;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{n}, 32;"));
        self.line(&format!("or.pred %p{p}, %p{p}, %p{q};"));
        self.line(&format!("setp.gt.u32 %p{q}, %r{n}, 512;"));
        self.line(&format!("or.pred %p{p}, %p{p}, %p{q};"));
        self.trap_if(p, Code::NcolsInvalid, &format!("%r{n}"));
    }

    /// The unit mask of `n` columns at unit `pos`: `((1 << (n/32)) - 1) << pos`, into a fresh
    /// register.
    fn unit_bits(&mut self, n: u32, pos: u32) -> u32 {
        let b = self.r();
        let u = self.r();
        self.line(&format!("shr.u32 %r{u}, %r{n}, 5;"));
        self.line(&format!("mov.u32 %r{b}, 1;"));
        self.line(&format!("shl.b32 %r{b}, %r{b}, %r{u};"));
        self.line(&format!("sub.u32 %r{b}, %r{b}, 1;"));
        self.line(&format!("shl.b32 %r{b}, %r{b}, %r{pos};"));
        b
    }

    /// Checks that columns `[col, col + ncols)` (`col` a register) exist, are allocated, and
    /// are emulated; `lane` (register) and `lanes` give the lane range to check against 128.
    fn check_cells(&mut self, lane: u32, lanes: u32, col: u32, ncols: u32) {
        let (p, q) = (self.pr(), self.pr());
        let e = self.r();
        // Lanes: lane + lanes <= 128.
        self.line(&format!("add.u32 %r{e}, %r{lane}, {lanes};"));
        self.line(&format!("setp.gt.u32 %p{p}, %r{e}, 128;"));
        // Columns: col + ncols <= 512.
        self.line(&format!("add.u32 %r{e}, %r{col}, {ncols};"));
        self.line(&format!("setp.gt.u32 %p{q}, %r{e}, 512;"));
        self.line(&format!("or.pred %p{p}, %p{p}, %p{q};"));
        self.trap_if(p, Code::OutOfRange, &format!("%r{col}"));
        // Allocated: units col/32 ..= (col+ncols-1)/32 all set in the mask.
        let (u0, u1, m, bits) = (self.r(), self.r(), self.r(), self.r());
        self.line(&format!("shr.u32 %r{u0}, %r{col}, 5;"));
        self.line(&format!("add.u32 %r{u1}, %r{col}, {};", ncols - 1));
        self.line(&format!("shr.u32 %r{u1}, %r{u1}, 5;"));
        self.line(&format!("sub.u32 %r{u1}, %r{u1}, %r{u0};"));
        self.line(&format!("add.u32 %r{u1}, %r{u1}, 1;"));
        self.line(&format!("mov.u32 %r{bits}, 1;"));
        self.line(&format!("shl.b32 %r{bits}, %r{bits}, %r{u1};"));
        self.line(&format!("sub.u32 %r{bits}, %r{bits}, 1;"));
        self.line(&format!("shl.b32 %r{bits}, %r{bits}, %r{u0};"));
        self.line(&format!(
            "ld.volatile.shared.u32 %r{m}, [emu_state+{}];",
            4 * st::MASK
        ));
        self.line(&format!("and.b32 %r{m}, %r{m}, %r{bits};"));
        let z = self.pr();
        self.line(&format!("setp.ne.u32 %p{z}, %r{m}, %r{bits};"));
        self.trap_if(z, Code::Unallocated, &format!("%r{col}"));
        // Emulated: col + ncols <= cols.
        let c = self.pr();
        self.line(&format!("setp.gt.u32 %p{c}, %r{e}, {};", self.c.cols));
        self.trap_if(c, Code::Capacity, &format!("%r{e}"));
    }

    fn op(&mut self, op: &Op, site: Option<Site>, pending: &mut Vec<Pending>) {
        match op {
            Op::Alloc {
                form,
                slot,
                dst_global,
                ncols,
            } => {
                self.converged();
                let n = self.ncols(ncols);
                self.uniform(n, Code::NcolsDivergent);
                self.ncols_valid(n);
                if *dst_global && form.space.is_none() {
                    self.trap(Code::DstNotShared, "0");
                    return;
                }
                if form.cta_group == CtaGroup::Two {
                    self.pair_op(PairOp::Alloc, n, Some(*slot), None);
                } else {
                    let l = self.next_label();
                    let p = self.pr();
                    self.line(&format!("setp.ne.u32 %p{p}, %lane, 0;"));
                    self.line(&format!("@%p{p} bra $A{l}_skip;"));
                    self.alloc_checks(n);
                    let (addr, _) = self.claim_local(n);
                    self.line(&format!(
                        "st.shared.u32 [tc_slot+{}], %r{addr};",
                        4 * u32::from(*slot)
                    ));
                    self.label(&format!("$A{l}_skip"));
                }
                self.line("bar.warp.sync -1;");
            }
            Op::Dealloc { form, taddr, ncols } => {
                self.converged();
                let t = self.taddr(taddr);
                self.uniform(t, Code::DeallocNotAllocated);
                let n = self.ncols(ncols);
                self.uniform(n, Code::NcolsDivergent);
                self.ncols_valid(n);
                if form.cta_group == CtaGroup::Two {
                    self.pair_op(PairOp::Dealloc, n, None, Some(t));
                } else {
                    let l = self.next_label();
                    let p = self.pr();
                    self.line(&format!("setp.ne.u32 %p{p}, %lane, 0;"));
                    self.line(&format!("@%p{p} bra $D{l}_skip;"));
                    self.free_local(t, n);
                    self.label(&format!("$D{l}_skip"));
                }
                self.line("bar.warp.sync -1;");
            }
            Op::Relinquish { form } => {
                self.converged();
                if form.cta_group == CtaGroup::Two {
                    let z = self.r();
                    self.line(&format!("mov.u32 %r{z}, 0;"));
                    self.pair_op(PairOp::Relinquish, z, None, None);
                } else {
                    self.line(&format!(
                        "st.volatile.shared.u32 [emu_state+{}], 1;",
                        4 * st::RELQ
                    ));
                }
                self.line("bar.warp.sync -1;");
            }
            Op::Wait { form } => {
                self.converged();
                self.line("bar.warp.sync -1;");
                if form.op == WaitOp::Ld {
                    for p in pending.drain(..) {
                        self.record(p.site, &p.regs);
                    }
                }
            }
            Op::Fence { .. } => self.line("fence.acq_rel.cluster;"),
            Op::Ld {
                form,
                taddr,
                split,
                nregs,
            } => {
                let regs = self.ldst(
                    form.shape,
                    form.num.count(),
                    form.pack.is_some(),
                    taddr,
                    *split,
                    *nregs,
                    None,
                );
                let mut all = regs;
                if form.red {
                    let rv = self.r();
                    let first = all[0];
                    self.line(&format!("mov.b32 %r{rv}, %r{first};"));
                    let ty = match form.ty {
                        Ty::F32 => "f32",
                        Ty::S32 => "s32",
                        _ => "u32",
                    };
                    let opn = if form.red_op == Some(RedOp::Max) {
                        "max"
                    } else {
                        "min"
                    };
                    let nan = if form.nan && ty == "f32" { ".NaN" } else { "" };
                    let tmp = self.r();
                    for (i, r) in all.clone().iter().enumerate() {
                        let src = if form.abs && ty == "f32" {
                            self.line(&format!("abs.f32 %r{tmp}, %r{r};"));
                            tmp
                        } else {
                            *r
                        };
                        if i == 0 {
                            self.line(&format!("mov.b32 %r{rv}, %r{src};"));
                        } else {
                            self.line(&format!("{opn}{nan}.{ty} %r{rv}, %r{rv}, %r{src};"));
                        }
                    }
                    all.push(rv);
                }
                if let Some(site) = site {
                    pending.push(Pending { regs: all, site });
                }
            }
            Op::St {
                form,
                taddr,
                split,
                nregs,
                seed,
            } => {
                self.ldst(
                    form.shape,
                    form.num.count(),
                    form.pack.is_some(),
                    taddr,
                    *split,
                    *nregs,
                    Some(*seed),
                );
            }
            Op::Commit {
                form,
                mbar,
                addr,
                cta_mask,
            } => {
                if *addr == MbarAddr::GlobalUb {
                    self.trap(Code::CommitWindow, "0");
                    return;
                }
                let a = self.r();
                self.line(&format!("mov.u32 %r{a}, tc_mbar;"));
                self.line(&format!("add.u32 %r{a}, %r{a}, {};", 8 * u32::from(*mbar)));
                let ranks: Vec<u32> = match cta_mask {
                    Some(mask) if form.multicast => {
                        (0..16).filter(|i| mask >> i & 1 == 1).collect()
                    }
                    _ => vec![],
                };
                if ranks.is_empty() {
                    let s = self.rd();
                    self.line(&format!(
                        "mbarrier.arrive.release.cluster.shared::cta.b64 %rd{s}, [%r{a}];"
                    ));
                } else {
                    for rank in ranks {
                        if rank >= u32::from(self.c.p.launch.cluster_size) {
                            self.trap(Code::CommitRank, &rank.to_string());
                            return;
                        }
                        let m = self.r();
                        self.line(&format!("mapa.shared::cluster.u32 %r{m}, %r{a}, {rank};"));
                        self.line(&format!(
                            "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r{m}];"
                        ));
                    }
                }
            }
            Op::Shift { form, taddr } => self.shift(form.cta_group, taddr),
            // Refused by `check_supported` (a program with a cp is not run).
            Op::Cp { .. } => {}
            Op::Mma(m) => self.mma(m),
        }
    }

    /// alloc's per-CTA rules, by the allocating lane: the permit (ALLOC-AFTER-RELINQUISH) and
    /// non-increasing sizes (ALLOC-NONINCREASING).
    fn alloc_checks(&mut self, n: u32) {
        let (f, last) = (self.r(), self.r());
        let (p, q) = (self.pr(), self.pr());
        self.line(&format!(
            "ld.volatile.shared.u32 %r{f}, [emu_state+{}];",
            4 * st::RELQ
        ));
        self.line(&format!("setp.ne.u32 %p{p}, %r{f}, 0;"));
        self.trap_if(p, Code::AllocAfterRelinquish, &format!("%r{n}"));
        self.line(&format!(
            "ld.volatile.shared.u32 %r{last}, [emu_state+{}];",
            4 * st::LAST
        ));
        self.line(&format!("setp.ne.u32 %p{p}, %r{last}, 0;"));
        self.line(&format!("setp.gt.u32 %p{q}, %r{n}, %r{last};"));
        self.line(&format!("and.pred %p{p}, %p{p}, %p{q};"));
        self.trap_if(p, Code::AllocIncreasing, &format!("%r{n}"));
        self.line(&format!(
            "st.volatile.shared.u32 [emu_state+{}], %r{n};",
            4 * st::LAST
        ));
    }

    /// First-fit claim of `n` columns in this CTA's mask (or, with `peer`, in both masks of
    /// the pair); spins (bounded) while nothing fits. Returns (address register, bits register).
    fn claim(&mut self, n: u32, peer: Option<u32>) -> (u32, u32) {
        let l = self.next_label();
        let (old, pos, units, bits, got, c, addr, pm, both) = (
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
        );
        let (p, q) = (self.pr(), self.pr());
        self.line(&format!("shr.u32 %r{units}, %r{n}, 5;"));
        self.line(&format!("mov.u32 %r{c}, 0;"));
        self.label(&format!("$C{l}_top"));
        self.line(&format!(
            "ld.volatile.shared.u32 %r{old}, [emu_state+{}];",
            4 * st::MASK
        ));
        match peer {
            Some(pe) => {
                self.line(&format!(
                    "ld.relaxed.cluster.shared::cluster.u32 %r{pm}, [%r{pe}+{}];",
                    4 * st::MASK
                ));
                self.line(&format!("or.b32 %r{both}, %r{old}, %r{pm};"));
            }
            None => self.line(&format!("mov.b32 %r{both}, %r{old};")),
        }
        self.line(&format!("mov.u32 %r{pos}, 0;"));
        self.label(&format!("$C{l}_scan"));
        self.line(&format!("add.u32 %r{got}, %r{pos}, %r{units};"));
        self.line(&format!("setp.gt.u32 %p{p}, %r{got}, 16;"));
        self.line(&format!("@%p{p} bra $C{l}_full;"));
        let b = self.unit_bits(n, pos);
        self.line(&format!("mov.b32 %r{bits}, %r{b};"));
        self.line(&format!("and.b32 %r{got}, %r{both}, %r{bits};"));
        self.line(&format!("setp.eq.u32 %p{q}, %r{got}, 0;"));
        self.line(&format!("@%p{q} bra $C{l}_try;"));
        self.line(&format!("add.u32 %r{pos}, %r{pos}, %r{units};"));
        self.line(&format!("bra $C{l}_scan;"));
        self.label(&format!("$C{l}_full"));
        self.line(&format!("add.u32 %r{c}, %r{c}, 1;"));
        self.line(&format!("setp.ge.u32 %p{p}, %r{c}, {SPIN_LIMIT};"));
        self.trap_if(p, Code::HangAlloc, &format!("%r{both}"));
        self.line(&format!("nanosleep.u32 {SPIN_NS};"));
        self.line(&format!("bra $C{l}_top;"));
        self.label(&format!("$C{l}_try"));
        let new = self.r();
        self.line(&format!("or.b32 %r{new}, %r{old}, %r{bits};"));
        self.line(&format!(
            "atom.shared.cas.b32 %r{got}, [emu_state+{}], %r{old}, %r{new};",
            4 * st::MASK
        ));
        self.line(&format!("setp.ne.u32 %p{p}, %r{got}, %r{old};"));
        self.line(&format!("@%p{p} bra $C{l}_top;"));
        if let Some(pe) = peer {
            let pnew = self.r();
            self.line(&format!("or.b32 %r{pnew}, %r{pm}, %r{bits};"));
            self.line(&format!("atom.relaxed.cluster.shared::cluster.cas.b32 %r{got}, [%r{pe}+{}], %r{pm}, %r{pnew};", 4 * st::MASK));
            self.line(&format!("setp.ne.u32 %p{p}, %r{got}, %r{pm};"));
            // The peer's mask changed under us: give our claim back and start over.
            let inv = self.r();
            self.line(&format!("not.b32 %r{inv}, %r{bits};"));
            self.line(&format!(
                "@%p{p} atom.shared.and.b32 %r{got}, [emu_state+{}], %r{inv};",
                4 * st::MASK
            ));
            self.line(&format!("@%p{p} bra $C{l}_top;"));
        }
        self.line(&format!("shl.b32 %r{addr}, %r{pos}, 5;"));
        (addr, bits)
    }

    fn claim_local(&mut self, n: u32) -> (u32, u32) {
        self.claim(n, None)
    }

    /// Frees `n` columns at address `t` in this CTA's mask, checking that they are allocated.
    fn free_local(&mut self, t: u32, n: u32) {
        let (lane, col, pos, e) = (self.r(), self.r(), self.r(), self.r());
        let (p, q) = (self.pr(), self.pr());
        self.line(&format!("shr.u32 %r{lane}, %r{t}, 16;"));
        self.line(&format!("and.b32 %r{col}, %r{t}, 65535;"));
        self.line(&format!("setp.ne.u32 %p{p}, %r{lane}, 0;"));
        self.line(&format!("and.b32 %r{e}, %r{col}, 31;"));
        self.line(&format!("setp.ne.u32 %p{q}, %r{e}, 0;"));
        self.line(&format!("or.pred %p{p}, %p{p}, %p{q};"));
        self.line(&format!("add.u32 %r{e}, %r{col}, %r{n};"));
        self.line(&format!("setp.gt.u32 %p{q}, %r{e}, 512;"));
        self.line(&format!("or.pred %p{p}, %p{p}, %p{q};"));
        self.trap_if(p, Code::DeallocNotAllocated, &format!("%r{t}"));
        self.line(&format!("shr.u32 %r{pos}, %r{col}, 5;"));
        let bits = self.unit_bits(n, pos);
        let (m, inv) = (self.r(), self.r());
        self.line(&format!(
            "ld.volatile.shared.u32 %r{m}, [emu_state+{}];",
            4 * st::MASK
        ));
        self.line(&format!("and.b32 %r{m}, %r{m}, %r{bits};"));
        self.line(&format!("setp.ne.u32 %p{p}, %r{m}, %r{bits};"));
        self.trap_if(p, Code::DeallocNotAllocated, &format!("%r{t}"));
        self.line(&format!("not.b32 %r{inv}, %r{bits};"));
        self.line(&format!(
            "atom.shared.and.b32 %r{m}, [emu_state+{}], %r{inv};",
            4 * st::MASK
        ));
    }

    /// A `::2` collective by lane 0 of the warp: meet the peer CTA's k-th collective, then do
    /// this CTA's part.
    fn pair_op(&mut self, op: PairOp, n: u32, slot: Option<u8>, taddr: Option<u32>) {
        if self.c.p.launch.cluster_size < 2 {
            self.trap(Code::PeerMissing, "0");
            return;
        }
        let l = self.next_label();
        let p = self.pr();
        self.line(&format!("setp.ne.u32 %p{p}, %lane, 0;"));
        self.line(&format!("@%p{p} bra $P{l}_skip;"));
        if op == PairOp::Alloc {
            self.alloc_checks(n);
        }
        let (k, s, peer, pe, word, seq, off) = (
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
        );
        self.line(&format!(
            "atom.shared.add.u32 %r{k}, [emu_state+{}], 1;",
            4 * st::PAIRS
        ));
        self.line(&format!("and.b32 %r{s}, %r{k}, 3;"));
        self.line(&format!("xor.b32 %r{peer}, %ctarank, 1;"));
        self.line(&format!("mov.u32 %r{pe}, emu_state;"));
        self.line(&format!(
            "mapa.shared::cluster.u32 %r{pe}, %r{pe}, %r{peer};"
        ));
        // Post (op, ncols) then the sequence number k+1 to the peer's mailbox slot.
        self.line(&format!(
            "mad.lo.u32 %r{word}, {}, 65536, %r{n};",
            op as u32
        ));
        self.line(&format!("shl.b32 %r{off}, %r{s}, 3;"));
        let ma = self.r();
        self.line(&format!("add.u32 %r{ma}, %r{pe}, %r{off};"));
        self.line(&format!(
            "st.relaxed.cluster.shared::cluster.u32 [%r{ma}+{}], %r{word};",
            4 * st::MAIL
        ));
        self.line(&format!("add.u32 %r{seq}, %r{k}, 1;"));
        self.line(&format!(
            "st.release.cluster.shared::cluster.u32 [%r{ma}+{}], %r{seq};",
            4 * st::MAIL + 4
        ));
        // Wait for the peer's k-th collective in our own mailbox.
        let own = self.r();
        self.line(&format!("mov.u32 %r{own}, emu_state;"));
        self.line(&format!("add.u32 %r{own}, %r{own}, %r{off};"));
        let got = self.r();
        let pd = self.pr();
        self.spin_until(
            &format!(
                "ld.acquire.cluster.shared::cta.u32 %r{got}, [%r{own}+{}];",
                4 * st::MAIL + 4
            ),
            &format!("setp.eq.u32 %p{pd}, %r{got}, %r{seq};"),
            pd,
            Code::HangPair,
            &format!("%r{k}"),
        );
        let theirs = self.r();
        let pm = self.pr();
        self.line(&format!(
            "ld.shared.u32 %r{theirs}, [%r{own}+{}];",
            4 * st::MAIL
        ));
        self.line(&format!("setp.ne.u32 %p{pm}, %r{theirs}, %r{word};"));
        self.trap_if(pm, Code::PairMismatch, &format!("%r{theirs}"));
        match op {
            PairOp::Alloc => {
                let addr = self.r();
                let odd = self.pr();
                self.line(&format!("setp.ne.u32 %p{odd}, %ctaodd, 0;"));
                self.line(&format!("@%p{odd} bra $P{l}_odd;"));
                let (a, _) = self.claim(n, Some(pe));
                self.line(&format!("mov.b32 %r{addr}, %r{a};"));
                let rv = self.r();
                self.line(&format!("add.u32 %r{rv}, %r{addr}, 1;"));
                let ra = self.r();
                self.line(&format!("shl.b32 %r{ra}, %r{s}, 2;"));
                self.line(&format!("add.u32 %r{ra}, %r{ra}, %r{pe};"));
                self.line(&format!(
                    "st.release.cluster.shared::cluster.u32 [%r{ra}+{}], %r{rv};",
                    4 * st::RES
                ));
                self.line(&format!("bra $P{l}_store;"));
                self.label(&format!("$P{l}_odd"));
                let (oa, v) = (self.r(), self.r());
                let pv = self.pr();
                self.line(&format!("shl.b32 %r{oa}, %r{s}, 2;"));
                self.line(&format!("mov.u32 %r{v}, emu_state;"));
                self.line(&format!("add.u32 %r{oa}, %r{oa}, %r{v};"));
                self.spin_until(
                    &format!(
                        "ld.acquire.cluster.shared::cta.u32 %r{v}, [%r{oa}+{}];",
                        4 * st::RES
                    ),
                    &format!("setp.ne.u32 %p{pv}, %r{v}, 0;"),
                    pv,
                    Code::HangPair,
                    &format!("%r{k}"),
                );
                self.line(&format!("st.shared.u32 [%r{oa}+{}], 0;", 4 * st::RES));
                self.line(&format!("sub.u32 %r{addr}, %r{v}, 1;"));
                self.label(&format!("$P{l}_store"));
                let slot = slot.unwrap_or(0);
                self.line(&format!(
                    "st.shared.u32 [tc_slot+{}], %r{addr};",
                    4 * u32::from(slot)
                ));
            }
            PairOp::Dealloc => {
                if let Some(t) = taddr {
                    self.free_local(t, n);
                }
            }
            PairOp::Relinquish => {
                self.line(&format!(
                    "st.volatile.shared.u32 [emu_state+{}], 1;",
                    4 * st::RELQ
                ));
            }
        }
        self.label(&format!("$P{l}_skip"));
    }

    /// Emulated tcgen05.ld / st: checks, then one shared-memory access per register. Returns
    /// the registers (loaded, or stored with the values of [`values::st_value`]).
    #[expect(clippy::too_many_arguments, reason = "the operands of one ld/st")]
    fn ldst(
        &mut self,
        shape: LdStShape,
        reps: u32,
        pack: bool,
        taddr: &TmemRef,
        split: Option<u32>,
        nregs: u16,
        store_seed: Option<u32>,
    ) -> Vec<u32> {
        self.converged();
        let t = self.taddr(taddr);
        self.uniform(t, Code::TaddrDivergent);
        // Per shape: lanes of the footprint, registers per repetition, columns per repetition.
        let (lanes, rpr, cpr) = match shape {
            LdStShape::S32x32b => (32u32, 1u32, 1u32),
            LdStShape::S16x64b => (16, 1, 2),
            LdStShape::S16x128b => (16, 2, 4),
            LdStShape::S16x256b => (16, 4, 8),
            LdStShape::S16x32bx2 => (16, 1, 1),
            // Not a shape (LDST-SHAPE): lowered as its name says, 32 lanes x 64 bits.
            LdStShape::S32x64b => (32, 2, 2),
        };
        let widen = if pack { 2 } else { 1 };
        let ncols = cpr * reps * widen;
        let bases: Vec<u32> = match (shape, split) {
            (LdStShape::S16x32bx2, Some(s)) => {
                let t2 = self.r();
                self.line(&format!("add.u32 %r{t2}, %r{t}, {s};"));
                vec![t, t2]
            }
            _ => vec![t],
        };
        // Lane quarter (LDST-LANE-QUARTER): lanes [lane, lane + lanes) within 32*(warp%4) ..+32.
        let (q, lo) = (self.r(), self.r());
        self.line(&format!("and.b32 %r{q}, %warp, 3;"));
        self.line(&format!("shl.b32 %r{q}, %r{q}, 5;"));
        for &b in &bases {
            let (lane, col, hi) = (self.r(), self.r(), self.r());
            let (p, pp) = (self.pr(), self.pr());
            self.line(&format!("shr.u32 %r{lane}, %r{b}, 16;"));
            self.line(&format!("and.b32 %r{col}, %r{b}, 65535;"));
            self.line(&format!("sub.u32 %r{lo}, %r{lane}, %r{q};"));
            self.line(&format!("setp.lt.u32 %p{p}, %r{lane}, %r{q};"));
            self.line(&format!("add.u32 %r{hi}, %r{lo}, {lanes};"));
            self.line(&format!("setp.gt.u32 %p{pp}, %r{hi}, 32;"));
            self.line(&format!("or.pred %p{p}, %p{p}, %p{pp};"));
            self.trap_if(p, Code::LaneQuarter, &format!("%r{b}"));
            self.check_cells(lane, lanes, col, ncols);
        }
        // The thread's base cell: lane0 + A_t, col0 + widen * C_t.
        let (tl, tc, base) = (self.r(), self.r(), self.r());
        let (lane_part, col_part) = match shape {
            LdStShape::S32x32b | LdStShape::S32x64b => ("mov.u32 %rTL, %lane;", "mov.u32 %rTC, 0;"),
            // lane t/4 + 8 (t mod 2), column (t/2) mod 2 (the oracle's derivation from the
            // ISA figure and CUTLASS's `SM100_TMEM_LOAD_16dp64b1x` layout, `oracle::run::ldst`).
            LdStShape::S16x64b => (
                "and.b32 %rTC, %lane, 1; shl.b32 %rTC, %rTC, 3; shr.u32 %rTL, %lane, 2; add.u32 %rTL, %rTL, %rTC;",
                "shr.u32 %rTC, %lane, 1; and.b32 %rTC, %rTC, 1;",
            ),
            LdStShape::S16x128b | LdStShape::S16x256b => {
                ("shr.u32 %rTL, %lane, 2;", "and.b32 %rTC, %lane, 3;")
            }
            LdStShape::S16x32bx2 => ("and.b32 %rTL, %lane, 15;", "mov.u32 %rTC, 0;"),
        };
        let named = |p: &str| {
            p.replace("%rTL", &format!("%r{tl}"))
                .replace("%rTC", &format!("%r{tc}"))
        };
        self.line(&named(lane_part));
        self.line(&named(col_part));
        if shape == LdStShape::S16x256b {
            self.line(&format!("shl.b32 %r{tc}, %r{tc}, 1;"));
        }
        if pack {
            self.line(&format!("shl.b32 %r{tc}, %r{tc}, 1;"));
        }
        let src = if bases.len() == 2 {
            let s = self.r();
            let p = self.pr();
            self.line(&format!("setp.lt.u32 %p{p}, %lane, 16;"));
            self.line(&format!(
                "selp.b32 %r{s}, %r{}, %r{}, %p{p};",
                bases[0], bases[1]
            ));
            s
        } else {
            bases[0]
        };
        let (l0, c0) = (self.r(), self.r());
        self.line(&format!("shr.u32 %r{l0}, %r{src}, 16;"));
        self.line(&format!("and.b32 %r{c0}, %r{src}, 65535;"));
        self.line(&format!("add.u32 %r{tl}, %r{tl}, %r{l0};"));
        self.line(&format!("add.u32 %r{tc}, %r{tc}, %r{c0};"));
        self.line(&format!("mad.lo.u32 %r{base}, %r{tc}, 128, %r{tl};"));
        self.line(&format!("shl.b32 %r{base}, %r{base}, 2;"));
        let tm = self.r();
        self.line(&format!("mov.u32 %r{tm}, emu_tmem;"));
        self.line(&format!("add.u32 %r{base}, %r{base}, %r{tm};"));
        self.line("bar.warp.sync -1;");
        let regs: Vec<u32> = (0..nregs).map(|_| self.r()).collect();
        for (i, &r) in regs.iter().enumerate() {
            let i = i as u32;
            let (rep, j) = (i / rpr, i % rpr);
            // Register i's offset from the thread's base cell: (dlane, dcol) in 32-bit columns.
            let (dl, dc) = match shape {
                LdStShape::S32x32b | LdStShape::S16x32bx2 => (0, rep),
                LdStShape::S16x64b => (0, 2 * rep),
                LdStShape::S16x128b => (8 * j, 4 * rep),
                LdStShape::S16x256b => (8 * (j / 2), 8 * rep + j % 2),
                LdStShape::S32x64b => (0, 2 * rep + j),
            };
            let off = 4 * (dc * widen * 128 + dl);
            match store_seed {
                Some(seed) => {
                    let (m, a) = values::st_coeffs(seed, i);
                    self.line(&format!("mad.lo.u32 %r{r}, %lane, {m}, {a};"));
                    if pack {
                        let hi = self.r();
                        self.line(&format!("and.b32 %r{hi}, %r{r}, 65535;"));
                        self.line(&format!("st.shared.u32 [%r{base}+{off}], %r{hi};"));
                        self.line(&format!("shr.u32 %r{hi}, %r{r}, 16;"));
                        self.line(&format!("st.shared.u32 [%r{base}+{}], %r{hi};", off + 512));
                    } else {
                        self.line(&format!("st.shared.u32 [%r{base}+{off}], %r{r};"));
                    }
                }
                None => {
                    if pack {
                        let hi = self.r();
                        self.line(&format!("ld.shared.u32 %r{r}, [%r{base}+{off}];"));
                        self.line(&format!("ld.shared.u32 %r{hi}, [%r{base}+{}];", off + 512));
                        self.line(&format!("prmt.b32 %r{r}, %r{r}, %r{hi}, 0x5410;"));
                    } else {
                        self.line(&format!("ld.shared.u32 %r{r}, [%r{base}+{off}];"));
                    }
                }
            }
        }
        regs
    }

    /// Emulated tcgen05.mma, by each thread that issues it, completing at issue. The subset of
    /// [`mma_computed`] writes D = A·B (+ D·2^-scale) into TMEM, skipping lanes whose
    /// disable-output-lane bit is set; other forms leave D as it was (their values are
    /// unspecified where the layouts are figures only).
    fn mma(&mut self, m: &tcgen05_ir::Mma) {
        let Some((n, kk, eb)) = mma_computed(m) else {
            return;
        };
        let a = mma_desc(m)
            .copied()
            .expect("computed MMAs read A from shared memory");
        let b = m.b;
        let d = self.taddr(&m.d);
        let (dl, dc) = (self.r(), self.r());
        self.line(&format!("shr.u32 %r{dl}, %r{d}, 16;"));
        self.line(&format!("and.b32 %r{dc}, %r{d}, 65535;"));
        self.check_cells(dl, 128, dc, n);
        let kind = m.form.kind;
        let idesc = m.idesc;
        let (sa, sb) = (idesc >> 7 & 7 == 1, idesc >> 10 & 7 == 1);
        let (na, nb) = (idesc >> 13 & 1 == 1, idesc >> 14 & 1 == 1);
        let int = kind == tcgen05_ir::MmaKind::I8;
        let (abase, bbase) = (self.r(), self.r());
        self.line(&format!("mov.u32 %r{abase}, tc_data{};", a.region));
        self.line(&format!("add.u32 %r{abase}, %r{abase}, {};", a.offset));
        self.line(&format!("mov.u32 %r{bbase}, tc_data{};", b.region));
        self.line(&format!("add.u32 %r{bbase}, %r{bbase}, {};", b.offset));
        let tm = self.r();
        self.line(&format!("mov.u32 %r{tm}, emu_tmem;"));
        let l = self.next_label();
        let (row, col, k, acc, x, y, addr, t) = (
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
        );
        let (p, q) = (self.pr(), self.pr());
        let h = self.h();
        // The address of element (r, k) of an operand: start + (r % 8) * 16 + (r / 8) * SBO
        // + (kb / 16) * LBO + kb % 16 with kb = k * element bytes.
        let elem = |b: &mut Self,
                    base: u32,
                    desc: &tcgen05_ir::SmemDesc,
                    rr: u32,
                    out: u32,
                    signed: bool,
                    neg: bool| {
            b.line(&format!("and.b32 %r{addr}, %r{rr}, 7;"));
            b.line(&format!("shl.b32 %r{addr}, %r{addr}, 4;"));
            b.line(&format!("add.u32 %r{addr}, %r{addr}, %r{base};"));
            b.line(&format!("shr.u32 %r{t}, %r{rr}, 3;"));
            b.line(&format!(
                "mad.lo.u32 %r{addr}, %r{t}, {}, %r{addr};",
                16 * u32::from(desc.sbo_enc & 0x3FFF)
            ));
            b.line(&format!("mul.lo.u32 %r{t}, %r{k}, {eb};"));
            b.line(&format!("shr.u32 %r{t}, %r{t}, 4;"));
            b.line(&format!(
                "mad.lo.u32 %r{addr}, %r{t}, {}, %r{addr};",
                16 * u32::from(desc.lbo_enc & 0x3FFF)
            ));
            b.line(&format!("mul.lo.u32 %r{t}, %r{k}, {eb};"));
            b.line(&format!("and.b32 %r{t}, %r{t}, 15;"));
            b.line(&format!("add.u32 %r{addr}, %r{addr}, %r{t};"));
            match kind {
                tcgen05_ir::MmaKind::F16 => {
                    b.line(&format!("ld.shared.b16 %h{h}, [%r{addr}];"));
                    b.line(&format!("cvt.f32.f16 %r{out}, %h{h};"));
                }
                tcgen05_ir::MmaKind::Tf32 => {
                    b.line(&format!("ld.shared.b32 %r{out}, [%r{addr}];"));
                    b.line(&format!("and.b32 %r{out}, %r{out}, -8192;"));
                }
                _ => {
                    let ty = if signed { "s8" } else { "u8" };
                    b.line(&format!("ld.shared.{ty} %r{out}, [%r{addr}];"));
                }
            }
            if neg {
                b.line(&format!(
                    "neg.{} %r{out}, %r{out};",
                    if int { "s32" } else { "f32" }
                ));
            }
        };
        self.line(&format!("mov.u32 %r{row}, 0;"));
        self.label(&format!("$M{l}_row"));
        // MMA-DOL-SEM: a lane whose disable-output-lane bit is set is not written.
        if let Some(dol) = &m.disable_output_lane {
            let w = self.r();
            let pz = self.pr();
            let words: Vec<u32> = (0..4).map(|i| dol.get(i).copied().unwrap_or(0)).collect();
            self.line(&format!("shr.u32 %r{w}, %r{row}, 5;"));
            self.line(&format!("setp.eq.u32 %p{pz}, %r{w}, 0;"));
            self.line(&format!(
                "selp.b32 %r{t}, {}, {}, %p{pz};",
                words[0], words[1]
            ));
            self.line(&format!("setp.eq.u32 %p{pz}, %r{w}, 2;"));
            self.line(&format!("selp.b32 %r{t}, {}, %r{t}, %p{pz};", words[2]));
            self.line(&format!("setp.eq.u32 %p{pz}, %r{w}, 3;"));
            self.line(&format!("selp.b32 %r{t}, {}, %r{t}, %p{pz};", words[3]));
            self.line(&format!("and.b32 %r{w}, %r{row}, 31;"));
            self.line(&format!("shr.u32 %r{t}, %r{t}, %r{w};"));
            self.line(&format!("and.b32 %r{t}, %r{t}, 1;"));
            self.line(&format!("setp.ne.u32 %p{pz}, %r{t}, 0;"));
            self.line(&format!("@%p{pz} bra $M{l}_next_row;"));
        }
        self.line(&format!("mov.u32 %r{col}, 0;"));
        self.label(&format!("$M{l}_col"));
        self.line(&format!("mov.u32 %r{acc}, 0;"));
        self.line(&format!("mov.u32 %r{k}, 0;"));
        self.label(&format!("$M{l}_k"));
        elem(self, abase, &a, row, x, sa, na);
        elem(self, bbase, &b, col, y, sb, nb);
        if int {
            self.line(&format!("mad.lo.s32 %r{acc}, %r{x}, %r{y}, %r{acc};"));
        } else {
            self.line(&format!("fma.rn.f32 %r{acc}, %r{x}, %r{y}, %r{acc};"));
        }
        self.line(&format!("add.u32 %r{k}, %r{k}, 1;"));
        self.line(&format!("setp.lt.u32 %p{p}, %r{k}, {kk};"));
        self.line(&format!("@%p{p} bra $M{l}_k;"));
        // The D cell (lane dl + row, column dc + col).
        self.line(&format!("add.u32 %r{t}, %r{dc}, %r{col};"));
        self.line(&format!("add.u32 %r{addr}, %r{dl}, %r{row};"));
        self.line(&format!("mad.lo.u32 %r{addr}, %r{t}, 128, %r{addr};"));
        self.line(&format!("mad.lo.u32 %r{addr}, %r{addr}, 4, %r{tm};"));
        if m.enable_input_d {
            self.line(&format!("ld.shared.u32 %r{x}, [%r{addr}];"));
            if int {
                self.line(&format!("add.s32 %r{acc}, %r{acc}, %r{x};"));
            } else {
                let s = m.scale_input_d.unwrap_or(0);
                // 2^-s as an f32 bit pattern (s <= 15, MMA-SCALE-D).
                let scale = (127u32.saturating_sub(u32::from(s.min(15)))) << 23;
                self.line(&format!("mul.rn.f32 %r{x}, %r{x}, 0f{scale:08X};"));
                self.line(&format!("add.rn.f32 %r{acc}, %r{acc}, %r{x};"));
            }
        }
        self.line(&format!("st.shared.u32 [%r{addr}], %r{acc};"));
        self.line(&format!("add.u32 %r{col}, %r{col}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{col}, {n};"));
        self.line(&format!("@%p{q} bra $M{l}_col;"));
        self.label(&format!("$M{l}_next_row"));
        self.line(&format!("add.u32 %r{row}, %r{row}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{row}, 128;"));
        self.line(&format!("@%p{q} bra $M{l}_row;"));
    }

    /// Emulated tcgen05.shift: rows lane+0..30 move down by one lane in 8 columns (OQ-16).
    fn shift(&mut self, cg: CtaGroup, taddr: &TmemRef) {
        let t = self.taddr(taddr);
        let (lane, col, e) = (self.r(), self.r(), self.r());
        let p = self.pr();
        self.line(&format!("shr.u32 %r{lane}, %r{t}, 16;"));
        self.line(&format!("and.b32 %r{col}, %r{t}, 65535;"));
        self.line(&format!("and.b32 %r{e}, %r{lane}, 31;"));
        self.line(&format!("setp.ne.u32 %p{p}, %r{e}, 0;"));
        self.trap_if(p, Code::ShiftLaneAlign, &format!("%r{t}"));
        self.check_cells(lane, 32, col, 8);
        if cg == CtaGroup::Two && self.c.p.launch.cluster_size < 2 {
            self.trap(Code::PeerMissing, "0");
            return;
        }
        // Cluster-window address of row `lane`, column `col` in this CTA (and the peer).
        let (base, tm) = (self.r(), self.r());
        self.line(&format!("mad.lo.u32 %r{base}, %r{col}, 128, %r{lane};"));
        self.line(&format!("shl.b32 %r{base}, %r{base}, 2;"));
        self.line(&format!("mov.u32 %r{tm}, emu_tmem;"));
        self.line(&format!("add.u32 %r{base}, %r{base}, %r{tm};"));
        let mut ctas = vec![];
        let own = self.r();
        self.line(&format!(
            "mapa.shared::cluster.u32 %r{own}, %r{base}, %ctarank;"
        ));
        ctas.push(own);
        if cg == CtaGroup::Two {
            let (pr, pa) = (self.r(), self.r());
            self.line(&format!("xor.b32 %r{pr}, %ctarank, 1;"));
            self.line(&format!(
                "mapa.shared::cluster.u32 %r{pa}, %r{base}, %r{pr};"
            ));
            ctas.push(pa);
        }
        let v = self.r();
        for a in ctas {
            for row in (0..31u32).rev() {
                for c in 0..8u32 {
                    let from = 4 * (c * 128 + row);
                    self.line(&format!("ld.shared::cluster.u32 %r{v}, [%r{a}+{from}];"));
                    self.line(&format!(
                        "st.shared::cluster.u32 [%r{a}+{}], %r{v};",
                        from + 4
                    ));
                }
            }
        }
    }
}

/// The `::2` collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PairOp {
    Alloc = 1,
    Dealloc = 2,
    Relinquish = 3,
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::{Scope, samples};

    #[test]
    fn codes_round_trip_and_have_rules() {
        for c in Code::ALL {
            assert_eq!(Code::from_u32(*c as u32), Some(*c));
            assert!(!c.rule().is_empty());
        }
        assert_eq!(Code::from_u32(0), None);
        assert_eq!(Code::Leak.class(), CodeClass::Leak);
        assert_eq!(Code::HangAlloc.class(), CodeClass::Hang);
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
        assert!(l.ptx.contains("atom.shared.cas.b32"));
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
            .find(".func emu_finish(.param .u64 emust)\n{")
            .unwrap()..];
        let fin = &fin[..fin.find("\n}\n").unwrap()];
        let at = |c: Code| {
            fin.find(&format!("mov.u32 %tcode, {};", c as u32))
                .unwrap_or_else(|| panic!("{c:?} not in emu_finish:\n{fin}"))
        };
        assert!(at(Code::HangPeerExit) < at(Code::Leak), "{fin}");
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
                    // A program with a form the emulation does not model is refused whole.
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
