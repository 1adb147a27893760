//! The `sim` target: an operational simulator of tcgen05 (docs/architecture.md, "Targets").
//!
//! It steps through **one concrete execution** of a program under a scheduler, and shares no
//! semantic code with the oracle (docs/architecture.md rule 1): it uses only the IR, the
//! observation layout (`tcgen05_ir::observe`) and the written data
//! (`tcgen05_ir::values::{st_value, st_coeffs, fill_word}`).
//!
//! # State
//!
//! Per CTA: a column allocator (16 units of 32 columns, first fit aligned to the allocation
//! size), the allocation permit, 128 x 512 TMEM cells, the alloc slots and data regions of
//! shared memory, the mbarriers, the CTA barrier, and the queue of pending `::2` collectives.
//! Per warp: program counter, call/branch/loop stack, active and exited lanes, ld registers,
//! the pending ld, st and mma/cp/shift operations, and the fence state. Asynchronous
//! operations (ld, st, mma, shift) are issued in program order and *performed* later, by the
//! scheduler, subject to their ordering constraints.
//!
//! # Ordering the simulator enforces
//!
//! - `wait::ld` / `wait::st` perform every earlier ld / st of the warp (WAIT-SCOPE); an ld's
//!   registers, read where the printer records them, wait for that ld (MCM-LD-REGDEP);
//! - `commit` arrives on its mbarrier when every earlier mma/shift of the thread with the same
//!   cta_group has performed (COMMIT-TRACK, COMMIT-ARRIVE), and acts as
//!   `fence::before_thread_sync` (COMMIT-IMPLICIT-FENCE);
//! - the pipeline pairs of reference §4.2 between ops of one thread (MCM-PIPE-*);
//! - across threads, `fence::before_thread_sync` → arrive/barrier → wait/barrier →
//!   `fence::after_thread_sync` makes the producer's pending async ops predecessors of the
//!   consumer's later async ops (MCM-XTHREAD).
//!
//! # Schedulers
//!
//! `sim` / `sim:random[@seed]`: every step picks uniformly among the warps that can move and
//! the asynchronous operations that may perform (seed: the `@seed`, else the case's
//! provenance seed, else 0). `sim:rr`: round robin over warps, asynchronous operations perform
//! as soon as they may. `sim:adversarial`: asynchronous operations perform only when forced
//! (a wait, a register read) or when no warp can move, newest first. `sim:exhaustive`: every
//! schedule of the random scheduler's choice points, depth first, up to
//! [`EXHAUSTIVE_RUNS`] runs; it reports the first outcome that differs from the first
//! schedule's (a schedule-dependent result), else the first. Every scheduler is deterministic.
//!
//! # Blocking and deadlock
//!
//! alloc blocks while its columns are not free (ALLOC-BLOCKS); a `::2` alloc/dealloc blocks
//! until the peer CTA's k-th collective arrives (ALLOC-PAIR-BLOCK: the k-th collective of the
//! even CTA pairs with the k-th of the odd CTA; a collective with no peer CTA blocks forever),
//! except a `::2` dealloc under the seeds wording ([`Wording`]), which frees the executing
//! CTA's columns and goes on;
//! `barrier.sync` waits for every warp of the CTA that has not finished; `barrier.cluster.wait`
//! waits until every unfinished warp of the cluster has arrived as often as the waiter; a
//! bounded `mbarrier.try_wait` loop succeeds when the phase completes and gives up only when
//! nothing else in the grid can move. When every live warp is blocked and no asynchronous
//! operation can perform, the outcome is [`Outcome::Hung`] with each blocked lane's last
//! checkpoint and what it is blocked on.
//!
//! # Concrete behaviours where the spec is silent or says undefined
//!
//! | situation | rule / question | the simulator |
//! | --- | --- | --- |
//! | alloc after relinquish | ALLOC-AFTER-RELINQUISH, OQ-5 | traps ([`TrapKind::AllocWithoutPermit`]) |
//! | nCols not a power of two in [32, 512] | ALLOC-NCOLS-POW2/RANGE | rounded up to a power of two, clamped to [32, 512] |
//! | divergent nCols | ALLOC-NCOLS-UNIFORM (UB) | the immediate value |
//! | growing allocation sizes | ALLOC-NONINCREASING, OQ-5 | allowed |
//! | address returned by alloc | OQ-1, OQ-2 | lane 0, the first column of a contiguous, size-aligned range |
//! | generic `dst` outside shared memory | ALLOC-DST-SHARED (UB) | the store is lost; the slot keeps its old value |
//! | dealloc of a wrong address or size | DEALLOC-TADDR-PREV, OQ-3 | frees the 32-column units that `[col, col + nCols)` covers |
//! | `::2` relinquish | OQ-6 | removes the permit of both CTAs, without waiting (ptx93 wording: waits for the peer's, like a `::2` dealloc) |
//! | TMEM never written, or freed and reallocated | OQ-9 | reads `0xDEAD0000 ^ (lane * 512 + col)`; contents persist across dealloc |
//! | lane or column outside 128 x 512 | OQ-9 | traps ([`TrapKind::TmemOutOfRange`]) |
//! | ld/st lane field outside the warp's quarter | LDST-LANE-QUARTER, OQ-11 | wraps into the quarter (`lane % 32`) |
//! | divergent taddr | LDST-TADDR-UNIFORM (UB) | the lowest active lane's address |
//! | 16-lane shapes, pack/unpack | OQ-10 | the ISA figures' maps ([`tmem::cell_of`]: threads 4g..4g+3 share lanes g and g + 8; t%16 for .16x32bx2); pack/unpack use two cells per register, low halves (the upper half of an unpacked cell is 0) |
//! | `ld.red` | OQ-13 | min/max over all the lane's registers; `.NaN` with a NaN input gives the canonical NaN `0x7FFFFFFF`; without `.NaN` a NaN compares false |
//! | mma/cp/shift/commit by many threads | OQ-14 | each thread issues its own operation |
//! | commit with nothing to track | OQ-15 | arrives at once |
//! | `::2` commit without multicast | OQ-15 | arrives on the executing CTA's mbarrier |
//! | shift | OQ-16 | 32 lanes from taddr, 8 columns; row i moves to i+1 for i < 31, row 0 keeps its value |
//! | arrive on an uninitialized mbarrier | — | ignored; a wait on it never succeeds |
//! | `barrier.sync` with exited threads | — | fully exited or finished warps are not waited for |
//! | mma numerics and layouts | OQ-19, OQ-22, OQ-29 | see [`mma`] |
//! | cp source layout | OQ-29 | K-major, no swizzle: row r, byte b at `start + (r % 8) * 16 + (r / 8) * SBO + b % 16 + (b / 16) * LBO` (core matrices of 8 rows x 16 bytes, as for MMA operands) |
//! | cp source bytes beyond the data region | — | read as 0 |
//! | cp decompression (`.b8x16` with `.b6x16_p32` / `.b4x16_p64`) | §9.7.16.9.1 (figures) | each 16-byte source unit expands into the 16 bytes of the same four columns: element i (bits `w·i..w·i + w`) into byte i, 6-bit elements in bits 0-5, 4-bit ones in bits 2-5, padding bits 0 ([`machine`]'s `decomp`) |
//! | UE4M3 scale factor byte with bit 7 set | §5.2.3 (7 bits, the byte's MSB zero) | bit 7 ignored ([`mma`]'s `scaled::ue4m3`) |
//! | `cta_group::2` mma | OQ-22, OQ-31 | D rows split across the pair: M = 256 puts rows 0-127 in the even CTA's lanes 0-127 and rows 128-255 in the odd CTA's; M = 128 puts 64 rows in lanes 0-63 of each. Each CTA's A rows come from its own shared memory (or TMEM) at the same descriptor; B rows 0..N/2 from the even CTA's, N/2..N from the odd CTA's. disable-output-lane bit `128 * h + m` is lane m of the pair's CTA h. Without a peer CTA only the executing CTA's half is written |
//! | `.ashift` | — | D row m uses A row m - 1 (row 0 uses A row 0), in each CTA |
//! | `.sp`, `.block_scale` mma | OQ-22, OQ-23, OQ-32 | not computed: lanes 0..min(M, 128) of columns `[d, d + N)` (in both CTAs for `::2`, disable-output-lane applied) get `0x5BA5_0000 ^ (lane * 512 + column)` ([`mma::OPAQUE`]) |
//! | other mma forms outside [`mma`], swizzled cp | — | [`Outcome::NotRun`] (the target cannot run this form) |
//!
//! Nothing a program does makes the simulator panic: every case gives an [`Outcome`].
#![deny(missing_docs)]

pub mod code;
pub mod faults;
pub mod machine;
pub mod mma;
pub mod sched;
pub mod smem;
pub mod tmem;

use faults::{Fault, Faults};
use machine::{Machine, Policy};
use sched::{Exhaustive, Rng};
use tcgen05_ir::Program;
use tcgen05_ir::outcome::{Outcome, TrapKind};

/// Upper bound on the runs of the exhaustive scheduler.
pub const EXHAUSTIVE_RUNS: u32 = 256;

/// Which scheduler a simulator uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sched {
    /// Seeded random; `None` takes the case's seed.
    Random(Option<u64>),
    /// Round robin, asynchronous operations as early as possible.
    RoundRobin,
    /// Asynchronous operations as late as the spec allows.
    Adversarial,
    /// Bounded exploration of every schedule.
    Exhaustive,
}

/// Behaviours where the two wordings of the spec differ (the oracle's editions, oracle/README.md
/// "Editions"). Each is an implementation choice of the simulator: a campaign builds its `sim`
/// targets with the wording of its edition (`tcgen05_drivers::target::resolve_in`); a target name may
/// also choose one with `~seeds` or `~ptx93`. Default: [`Wording::SEEDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wording {
    /// A `cta_group::2` dealloc blocks until the peer CTA's warp reaches its dealloc, then
    /// frees the columns of both CTAs. When false, it frees the executing CTA's columns at
    /// once and goes on. Both are allowed in both editions: the seed text and the 9.3 text
    /// say a `::2` dealloc *may* block (DEALLOC-PAIR-BLOCK, §9.7.16.7.1); the simulator's
    /// seeds wording takes the branch that does not wait.
    pub pair_dealloc_waits: bool,
    /// A `cta_group::2` relinquish_alloc_permit blocks until the peer CTA's warp reaches its
    /// relinquish, then removes both CTAs' permits (the 9.2/9.3 text: `::2` collectives may
    /// block until the peer arrives). When false (the seed documents' text), it removes
    /// both permits at once and goes on (OQ-6).
    pub pair_relinquish_waits: bool,
    /// Two MMAs of one thread on the same accumulator are pipeline-ordered only when they
    /// also have the same kind (MCM-PIPE-MMA-MMA, OQ-27: the 9.2+ text). When false (the
    /// seed documents' text), the same accumulator and shape order them.
    pub mma_pipeline_same_kind: bool,
}

impl Wording {
    /// The seed documents' text (PTX ISA 9.0/9.1): the oracle's `seeds` edition.
    pub const SEEDS: Wording = Wording {
        pair_dealloc_waits: false,
        pair_relinquish_waits: false,
        mma_pipeline_same_kind: false,
    };
    /// The PTX ISA 9.2/9.3 text: the oracle's `ptx93` edition.
    pub const PTX93: Wording = Wording {
        pair_dealloc_waits: true,
        pair_relinquish_waits: true,
        mma_pipeline_same_kind: true,
    };

    /// The wording called `name` (`seeds` or `ptx93`, the oracle's edition names).
    pub fn named(name: &str) -> Option<Wording> {
        match name {
            "seeds" => Some(Wording::SEEDS),
            "ptx93" => Some(Wording::PTX93),
            _ => None,
        }
    }
}

impl Default for Wording {
    fn default() -> Self {
        Wording::SEEDS
    }
}

/// A simulator configuration: scheduler, wording and injected faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimConfig {
    /// The scheduler.
    pub sched: Sched,
    /// Injected faults (empty for the real simulator).
    pub faults: Faults,
    /// Behaviours where the spec's wordings differ.
    pub wording: Wording,
}

impl SimConfig {
    /// A configuration with this scheduler, no faults and the default wording.
    pub fn new(sched: Sched) -> SimConfig {
        SimConfig {
            sched,
            faults: Faults::NONE,
            wording: Wording::default(),
        }
    }
}

/// Why a simulator name (`sim[:sched[@seed]][~wording][+fault...]`) is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The part after `~` is not a wording.
    #[error("unknown simulator wording `{0}` (expected seeds or ptx93)")]
    Wording(String),
    /// The part after `:` is not a scheduler.
    #[error(
        "unknown simulator scheduler `{0}` (expected random, random@<seed>, rr, adversarial, exhaustive)"
    )]
    Scheduler(String),
    /// A `+` part is not a fault.
    #[error(
        "unknown simulator fault `{0}` (the faults are: {known}; `tcgen05-fuzz targets` describes them)",
        known = Fault::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
    )]
    Fault(String),
}

impl SimConfig {
    /// Parses a target name `sim[:sched[@seed]][~wording][+fault...]`; `None` if it is not a
    /// sim name, `Some(Err)` if it is one but malformed.
    pub fn parse(name: &str) -> Option<Result<SimConfig, NameError>> {
        Some(Self::parse_wording(name)?.map(|(c, _)| c))
    }

    /// Like [`SimConfig::parse`], and whether the name chose its wording.
    pub fn parse_wording(name: &str) -> Option<Result<(SimConfig, bool), NameError>> {
        let rest = name.strip_prefix("sim")?;
        if !(rest.is_empty()
            || rest.starts_with(':')
            || rest.starts_with('+')
            || rest.starts_with('~'))
        {
            return None;
        }
        let mut parts = rest.split('+');
        let head = parts.next().unwrap_or("");
        let (head, wording) = match head.split_once('~') {
            Some((h, w)) => match Wording::named(w) {
                Some(w) => (h, Some(w)),
                None => return Some(Err(NameError::Wording(w.to_string()))),
            },
            None => (head, None),
        };
        let sched = match head.strip_prefix(':').unwrap_or(head) {
            "" | "random" => Sched::Random(None),
            "rr" => Sched::RoundRobin,
            "adversarial" => Sched::Adversarial,
            "exhaustive" => Sched::Exhaustive,
            s => match s.strip_prefix("random@").map(str::parse::<u64>) {
                Some(Ok(seed)) => Sched::Random(Some(seed)),
                _ => return Some(Err(NameError::Scheduler(s.to_string()))),
            },
        };
        let mut faults = Faults::NONE;
        for f in parts {
            match Fault::from_name(f) {
                Some(f) => faults = faults.with(f),
                None => return Some(Err(NameError::Fault(f.to_string()))),
            }
        }
        Some(Ok((
            SimConfig {
                sched,
                faults,
                wording: wording.unwrap_or_default(),
            },
            wording.is_some(),
        )))
    }
}

/// Runs `p` once under `config`; `seed` feeds the random scheduler when the configuration
/// names none.
pub fn simulate(p: &Program, config: SimConfig, seed: u64) -> Outcome {
    if let Some(why) = unsupported(p) {
        return Outcome::NotRun(why);
    }
    match config.sched {
        Sched::Random(s) => {
            Machine::new(p, config, Policy::Choose).run(&mut Rng::new(s.unwrap_or(seed)))
        }
        Sched::RoundRobin => Machine::new(p, config, Policy::RoundRobin).run(&mut Rng::new(0)),
        Sched::Adversarial => Machine::new(p, config, Policy::Adversarial).run(&mut Rng::new(0)),
        Sched::Exhaustive => {
            let all = explore_with(p, config, EXHAUSTIVE_RUNS);
            let first = all
                .first()
                .cloned()
                .unwrap_or(Outcome::NotRun("no schedule ran".into()));
            all.into_iter().find(|o| *o != first).unwrap_or(first)
        }
    }
}

/// Every distinct outcome of up to `max_runs` schedules, in depth-first order (default
/// wording).
pub fn explore(p: &Program, faults: Faults, max_runs: u32) -> Vec<Outcome> {
    explore_with(
        p,
        SimConfig {
            faults,
            ..SimConfig::new(Sched::Exhaustive)
        },
        max_runs,
    )
}

/// Every distinct outcome of up to `max_runs` schedules of `config`'s simulator, in
/// depth-first order.
pub fn explore_with(p: &Program, config: SimConfig, max_runs: u32) -> Vec<Outcome> {
    if let Some(why) = unsupported(p) {
        return vec![Outcome::NotRun(why)];
    }
    let mut e = Exhaustive::new();
    let mut out: Vec<Outcome> = Vec::new();
    for _ in 0..max_runs {
        e.rewind();
        let o = Machine::new(p, config, Policy::Choose).run(&mut e);
        if !out.contains(&o) {
            out.push(o);
        }
        if !e.next_run() {
            break;
        }
    }
    out
}

/// Launch shapes the simulator refuses (they are not programs a GPU could run either).
fn unsupported(p: &Program) -> Option<String> {
    let l = &p.launch;
    if l.warps_per_cta == 0 || p.warps.is_empty() {
        return Some("a CTA with no warps".into());
    }
    if usize::from(l.warps_per_cta) != p.warps.len() {
        return Some(format!(
            "warps_per_cta is {} but the program has code for {} warps",
            l.warps_per_cta,
            p.warps.len()
        ));
    }
    if l.ctas() == 0 || l.cluster_size == 0 {
        return Some("an empty grid".into());
    }
    if l.ctas() > 64 || l.warps_per_cta > 32 {
        return Some("a grid larger than the simulator runs (64 CTAs of 32 warps)".into());
    }
    None
}

/// Trap kinds the simulator reports, for documentation and tests.
pub const TRAPS: &[TrapKind] = &[TrapKind::AllocWithoutPermit, TrapKind::TmemOutOfRange];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_names_say_which_part_is_wrong() {
        assert_eq!(
            SimConfig::parse("sim:fast"),
            Some(Err(NameError::Scheduler("fast".into())))
        );
        assert_eq!(
            SimConfig::parse("sim~ptx80"),
            Some(Err(NameError::Wording("ptx80".into())))
        );
        let e = SimConfig::parse("sim:rr+no-such-fault").and_then(Result::err);
        assert_eq!(e, Some(NameError::Fault("no-such-fault".into())));
        let msg = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("`no-such-fault`"), "{msg}");
        assert!(msg.contains(Fault::ALL[0].name()), "{msg}");
        assert_eq!(SimConfig::parse("ptxas@13.5"), None);
        assert_eq!(
            SimConfig::parse("sim:random@7+wait-ld-early"),
            Some(Ok(SimConfig {
                sched: Sched::Random(Some(7)),
                faults: Faults::NONE.with(Fault::WaitLdEarly),
                wording: Wording::SEEDS,
            }))
        );
    }
}
