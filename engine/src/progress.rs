//! What a running campaign shows of itself: a [`Snapshot`] handed to the caller's
//! [`Progress`] (the CLI draws it on stderr; the examples and the benchmarks show nothing).

use std::time::Duration;
use tcgen05_drivers::report::TargetCounts;

/// What the display shows.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Time spent, this run and earlier runs of the campaign.
    pub elapsed: Duration,
    /// Time spent by this run.
    pub this_run: Duration,
    /// Cases done, all runs.
    pub cases: u64,
    /// Cases done by this run.
    pub cases_this_run: u64,
    /// The shard's case limit.
    pub case_limit: Option<u64>,
    /// The time limit.
    pub time_limit: Option<Duration>,
    /// Counts per target.
    pub targets: Vec<TargetCounts>,
    /// Findings stored.
    pub findings: usize,
    /// The newest finding of this run.
    pub last_finding: Option<String>,
    /// The caller asked the campaign to stop; it is finishing up.
    pub stopping: bool,
}

impl Snapshot {
    /// A snapshot of a resumed campaign on `sim`, for the tests and examples of progress
    /// displays: 300 of 500 cases done in 30 s (100 of them in this run's 10 s), a 60 s time
    /// limit, 2 findings.
    pub fn sample() -> Snapshot {
        Snapshot {
            elapsed: Duration::from_secs(30),
            this_run: Duration::from_secs(10),
            cases: 300,
            cases_this_run: 100,
            case_limit: Some(500),
            time_limit: Some(Duration::from_secs(60)),
            targets: vec![TargetCounts::new("sim", "1")],
            findings: 2,
            last_finding: None,
            stopping: false,
        }
    }

    /// Cases per second of this run.
    pub fn rate(&self) -> f64 {
        let s = self.this_run.as_secs_f64();
        if s > 0.0 {
            self.cases_this_run as f64 / s
        } else {
            0.0
        }
    }

    /// Time left: by the time limit, or estimated from the rate and the case limit (the
    /// earlier of the two).
    pub fn remaining(&self) -> Option<Duration> {
        let by_time = self.time_limit.map(|t| t.saturating_sub(self.elapsed));
        let by_cases = self.case_limit.and_then(|n| {
            let r = self.rate();
            (r > 0.0).then(|| Duration::from_secs_f64(n.saturating_sub(self.cases) as f64 / r))
        });
        match (by_time, by_cases) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Where a campaign shows its progress. The engine calls it from a thread of its own, every
/// [`Progress::tick`], and once at the end.
pub trait Progress: Send {
    /// How long to wait between updates (the checkpoint is written on the same tick).
    fn tick(&self) -> Duration {
        Duration::from_millis(250)
    }

    /// Whether [`Progress::update`] would show anything now (`stopping`: the caller asked the
    /// campaign to stop). A snapshot costs a directory listing: it is not taken for nothing.
    fn wants_update(&self, stopping: bool) -> bool;

    /// Shows a snapshot.
    fn update(&mut self, s: &Snapshot);

    /// The last update, when the run ends.
    fn finish(&mut self, s: &Snapshot);
}

/// Shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn wants_update(&self, _stopping: bool) -> bool {
        false
    }
    fn update(&mut self, _s: &Snapshot) {}
    fn finish(&mut self, _s: &Snapshot) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap() -> Snapshot {
        Snapshot::sample()
    }

    #[test]
    fn remaining_is_the_earlier_of_time_and_cases() {
        // 200 cases left at 10 cases/s: 20 s; 30 s left by the clock.
        let s = snap();
        assert_eq!(s.rate(), 10.0);
        assert_eq!(s.remaining(), Some(Duration::from_secs(20)));
        let t = Snapshot {
            case_limit: None,
            ..snap()
        };
        assert_eq!(t.remaining(), Some(Duration::from_secs(30)));
    }
}
