//! Ctrl-C (SIGINT), SIGTERM and SIGHUP while a campaign runs.
//!
//! The first signal asks the campaign to stop: its workers take no new case, abandon the cases
//! in flight (not counted, so a restart runs them again), and the campaign writes its
//! checkpoint and every report, says where they are, and exits with [`EXIT_INTERRUPTED`]. A
//! second signal exits at once with the same code: everything already recorded stays, because
//! the checkpoint, the reports and the findings are only ever replaced whole (written to a
//! temporary file or folder, then renamed), so an exit between two writes leaves the previous
//! version in place.
//!
//! Only `campaign` installs the handler ([`install`]); every other command keeps the default
//! behaviour of these signals (the process ends at once), which loses nothing of theirs.

use std::io::{IsTerminal as _, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Exit code of a campaign stopped by a signal: 128 + SIGINT (2), the shell's convention for a
/// program that ended because of Ctrl-C, whichever of the three signals it was.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Signals received so far.
static RECEIVED: AtomicU32 = AtomicU32::new(0);

/// Set by the first signal: the stop flag handed to the campaign engine.
static STOP: AtomicBool = AtomicBool::new(false);

/// Whether a stop was asked for (a signal arrived).
#[cfg(test)]
fn requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The stop flag the first signal sets (`tcgen05_engine::campaign::run` watches it).
pub fn flag() -> &'static AtomicBool {
    &STOP
}

/// Installs the handler of SIGINT, SIGTERM and SIGHUP (once per process).
pub fn install() -> anyhow::Result<()> {
    ctrlc::set_handler(|| {
        if RECEIVED.fetch_add(1, Ordering::SeqCst) == 0 {
            STOP.store(true, Ordering::SeqCst);
            // The campaign shows the stop itself (progress display, final lines).
            return;
        }
        let mut e = std::io::stderr().lock();
        if std::io::stderr().is_terminal() {
            // Line wrapping back on, should the second signal land inside a redraw of the
            // live display (src/progress.rs turns it off while drawing).
            let _ = e.write_all(b"\x1b[?7h");
        }
        let _ = writeln!(
            e,
            "\ntcgen05-fuzz: interrupted twice: exiting now; the last checkpoint, reports and \
             findings are intact; rerun the same command to continue"
        );
        let _ = e.flush();
        std::process::exit(i32::from(EXIT_INTERRUPTED));
    })
    .map_err(|e| anyhow::anyhow!("installing the Ctrl-C handler: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_requested_before_a_signal() {
        // No test of this binary sends a signal to itself (tests/campaign_interrupt.rs sends
        // them to a spawned campaign), so the flag must read clear.
        assert!(!requested());
        assert_eq!(EXIT_INTERRUPTED, 128 + 2);
    }
}
