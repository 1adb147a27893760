//! How long a minimization may run: a time, scaled to the target's cost per candidate, under a
//! cap, and a stop flag.
//!
//! A fixed time buys very different numbers of candidates on different targets: the simulator
//! judges 200 or more candidates a second, `cuda-emu` about 3 (each candidate is a JIT compile,
//! ~260 ms, plus its runs, ~50 ms under a 16-job campaign's time slicing, docs/blackwell.md
//! §6). A [`Budget::scaled`] budget therefore counts candidates: the minimization runs at
//! least [`Budget::time`], and past it until it has judged on the target as many candidates
//! as the simulator judges in that time ([`Budget::candidates`], at
//! [`SIM_JUDGED_PER_SECOND`]), but never past [`Budget::cap`]. On the simulator the count is
//! usually reached within the time, so little changes there; on a slow target the count, or
//! the cap, ends it. This is the same as measuring the target's cost per judged candidate and giving
//! the minimization `time × (cost / simulator's cost)`, with the cost measured on every
//! candidate instead of the first (candidates shrink, and a compile's cost does not).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Candidates the simulator judges (runs and compares; candidates dropped without running not
/// counted) per second of minimization, rounded down: 72 minimizations of injected faults
/// (the 18 faults of `tcgen05_sim::faults`, the first valid case of seeds 1-4 that shows each
/// on `sim+<fault>` or `sim:adversarial+<fault>`) judged 7,339 candidates in 35.1 s of wall
/// time (oracle and rule check included; a 2-core machine shared with other builds, load 3),
/// 209 a second, every one to a fixed point: median 86 judged candidates, 90th percentile
/// 184, most 319. Remeasure:
///
/// ```text
/// cargo build --profile test -p tcgen05-engine --example minimize_profile
/// for f in <every fault>; do for s in 1 2 3 4; do
///   target/debug/examples/minimize_profile $f --seconds 30 --seed $s | sed -n 2p; done; done
/// ```
///
/// (candidates less those dropped without running, over the time).
pub const SIM_JUDGED_PER_SECOND: f64 = 200.0;

/// The default [`Budget::cap`] of a campaign's minimizations (`--minimize-cap`): 5 minutes. At
/// `cuda-emu`'s cost in a 16-job campaign (about 0.31 s a candidate, docs/blackwell.md §6)
/// that is about 1,000 judged candidates, more than any of the simulator's minimizations
/// above needed to reach a fixed point (319), and it keeps one minimization to half of a
/// 10-minute campaign, in which the other workers go on running cases.
pub const DEFAULT_CAP: Duration = Duration::from_secs(300);

/// How long a minimization may run ([module documentation](self)).
#[derive(Debug, Clone, Copy)]
pub struct Budget<'a> {
    /// The time it runs at least (unless stopped or at a fixed point earlier).
    pub time: Duration,
    /// The time it never runs past; equal to `time` for a fixed budget.
    pub cap: Duration,
    /// Once set, the minimization ends before its next candidate (a campaign's Ctrl-C).
    pub stop: Option<&'a AtomicBool>,
}

impl Budget<'static> {
    /// A fixed budget: `time`, whatever the target.
    pub fn fixed(time: Duration) -> Self {
        Budget {
            time,
            cap: time,
            stop: None,
        }
    }

    /// A budget scaled to the target's cost: at least `time`, then until as many candidates
    /// are judged as the simulator judges in `time`, at most `cap` (at least `time`).
    pub fn scaled(time: Duration, cap: Duration) -> Self {
        Budget {
            time,
            cap: cap.max(time),
            stop: None,
        }
    }
}

impl<'a> Budget<'a> {
    /// The same budget, ended early once `stop` is set.
    pub fn with_stop(self, stop: &'a AtomicBool) -> Budget<'a> {
        Budget {
            stop: Some(stop),
            ..self
        }
    }

    /// The same budget with its cap lowered to `limit` where that is lower, but never below
    /// its time (a campaign's time left under `--time`).
    pub fn within(self, limit: Duration) -> Budget<'a> {
        Budget {
            cap: self.cap.min(limit.max(self.time)),
            ..self
        }
    }

    /// The judged candidates a scaled budget allows past its time: as many as the simulator
    /// judges in it ([`SIM_JUDGED_PER_SECOND`]).
    pub fn candidates(&self) -> u64 {
        (self.time.as_secs_f64() * SIM_JUDGED_PER_SECOND) as u64
    }

    /// Whether a minimization that has run `elapsed` and judged `judged` candidates on the
    /// target must stop: stopped, past the cap, or past the time with the candidates judged.
    pub fn spent(&self, elapsed: Duration, judged: u64) -> bool {
        self.stopped() || elapsed > self.cap || (elapsed > self.time && judged >= self.candidates())
    }

    /// Whether the stop flag is set.
    pub fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::SeqCst))
    }
}

impl From<Duration> for Budget<'static> {
    fn from(time: Duration) -> Self {
        Budget::fixed(time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_fixed_budget_ends_at_its_time_whatever_was_judged() {
        let b = Budget::fixed(10 * S);
        assert!(!b.spent(9 * S, 0));
        assert!(b.spent(11 * S, 0));
        assert!(b.spent(11 * S, 1_000_000));
    }

    #[test]
    fn a_scaled_budget_counts_candidates_between_its_time_and_its_cap() {
        let b = Budget::scaled(10 * S, 300 * S);
        assert_eq!(b.candidates(), 2_000);
        // The simulator: its count is reached within the time, so the time ends it.
        assert!(!b.spent(9 * S, 3_000));
        assert!(b.spent(11 * S, 3_000));
        // A slow target: past the time, it goes on to the count, then stops.
        assert!(!b.spent(100 * S, 230));
        assert!(b.spent(100 * S, 2_000));
        // ... and never past the cap.
        assert!(b.spent(301 * S, 700));
        // A cap below the time is the time.
        assert_eq!(Budget::scaled(10 * S, S).cap, 10 * S);
    }

    #[test]
    fn within_lowers_the_cap_but_not_below_the_time() {
        let b = Budget::scaled(10 * S, 300 * S);
        assert_eq!(b.within(60 * S).cap, 60 * S);
        assert_eq!(b.within(S).cap, 10 * S);
        assert_eq!(b.within(1_000 * S).cap, 300 * S);
    }

    #[test]
    fn the_stop_flag_ends_it_at_once() {
        let stop = AtomicBool::new(false);
        let b = Budget::scaled(10 * S, 300 * S).with_stop(&stop);
        assert!(!b.spent(Duration::ZERO, 0));
        stop.store(true, Ordering::SeqCst);
        assert!(b.spent(Duration::ZERO, 0));
    }
}
