//! Standard output that survives a reader closing it early.
//!
//! `println!` panics ("failed printing to stdout: Broken pipe", exit 101) when the reader of a
//! pipe is gone, as in `tcgen05-fuzz targets | head -1`. Every command prints through
//! [`outln!`] and [`out!`] instead: once stdout is closed, further output is dropped and the
//! command finishes its work and exits with its usual code, printing nothing about the pipe.
//! Any other write error (a full disk behind a redirection) is reported once on stderr and
//! turns the exit code into [`crate::cmd::EXIT_INTERNAL`] (see [`failed`]).

use std::io::{ErrorKind, Write as _};
use std::sync::atomic::{AtomicU8, Ordering};

/// 0: stdout is open; 1: its reader closed it; 2: another write error happened.
static STATE: AtomicU8 = AtomicU8::new(0);

/// Writes `args` to stdout unless it is closed (the body of [`out!`] and [`outln!`]).
pub fn write(args: std::fmt::Arguments<'_>) {
    if STATE.load(Ordering::Relaxed) != 0 {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        note_error(&e);
    }
}

/// Records a write error on stdout: a closed pipe silently, anything else once on stderr.
pub fn note_error(e: &std::io::Error) {
    if e.kind() == ErrorKind::BrokenPipe {
        let _ = STATE.compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed);
    } else if STATE.swap(2, Ordering::Relaxed) != 2 {
        eprintln!("tcgen05-fuzz: error: writing to stdout: {e}");
    }
}

/// Whether an error chain comes from writing to a closed pipe (a command that wrote with `?`
/// and stopped there): main then exits quietly.
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == ErrorKind::BrokenPipe)
    })
}

/// Whether a write to stdout failed for a reason other than a closed pipe.
pub fn failed() -> bool {
    STATE.load(Ordering::Relaxed) == 2
}

/// `print!` that ignores a closed stdout (module docs).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*))
    };
}

/// `println!` that ignores a closed stdout (module docs).
macro_rules! outln {
    () => {
        $crate::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}
