//! Running one LLVM tool (`opt`, `llc`, `mlir-translate`) on a module given on standard input,
//! with a time limit; the crash, "Cannot select" and verifier-failure kinds of its failures.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The default limit of one tool process: a generated module compiles in well under a second,
/// so 30 s only catches a hang.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How one tool process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolRun {
    /// It exited 0; its standard output.
    Ok(String),
    /// It exited with a non-zero code.
    Failed {
        /// The exit code.
        code: i32,
        /// Standard error (and output), as printed.
        log: String,
    },
    /// It was killed by a signal.
    Signalled {
        /// The signal, where the platform says.
        signal: Option<i32>,
        /// Standard error, as printed.
        log: String,
    },
    /// It ran past the limit and was killed.
    TimedOut(Duration),
}

/// What a failed run of an LLVM tool means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FailureKind {
    /// `LLVM ERROR: Cannot select` (an intrinsic the back end has no pattern for).
    CannotSelect,
    /// The IR verifier rejected the module (`Intrinsic has incorrect ...`, `immarg`, ...).
    Verifier,
    /// A parse error or a diagnostic naming the input (`error:` with a location).
    Diagnosed,
    /// Any other `LLVM ERROR`, an assertion, a stack dump or a signal.
    Crash,
}

impl FailureKind {
    /// Short kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::CannotSelect => "cannot-select",
            FailureKind::Verifier => "verifier",
            FailureKind::Diagnosed => "diagnosed",
            FailureKind::Crash => "crash",
        }
    }
}

/// Classifies a failed run's log. A signal, exit status 134 (abort), a stack dump, an
/// assertion or the request to file a bug is a crash ("Cannot select" one of its own);
/// `LLVM ERROR:` with an ordinary exit status is a fatal diagnostic (e.g. a PTX version too old
/// for the target), so it counts as diagnosed.
pub fn classify(code: Option<i32>, log: &str) -> FailureKind {
    let crashed = code.is_none()
        || code == Some(134)
        || log.contains("Stack dump")
        || log.contains("Assertion")
        || log.contains("PLEASE submit a bug report");
    if log.contains("Cannot select") {
        FailureKind::CannotSelect
    } else if log.contains("Broken module") || log.contains("verification") {
        FailureKind::Verifier
    } else if crashed {
        FailureKind::Crash
    } else {
        FailureKind::Diagnosed
    }
}

/// The line of a log that says what went wrong: the first `LLVM ERROR:` or `error:` line, else
/// the last non-empty lines (a stack dump's tail says nothing).
pub fn headline(log: &str) -> String {
    log.lines()
        .find(|l| l.contains("LLVM ERROR:") || l.contains("error:"))
        .map(|l| l.trim().to_string())
        .unwrap_or_else(|| tail(log, 3))
}

/// The last `n` lines of a log, joined with ` | ` (for one-line summaries).
pub fn tail(log: &str, n: usize) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// Runs `tool args...` with `input` on standard input, at most `timeout`.
pub fn run_tool(
    tool: &Path,
    args: &[String],
    input: &str,
    timeout: Duration,
) -> std::io::Result<ToolRun> {
    let mut cmd = Command::new(tool);
    // Its own process group: a terminal's Ctrl-C reaches the campaign, not the tool mid-case.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_string();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let drain = |mut pipe: Box<dyn Read + Send>, tx: std::sync::mpsc::Sender<()>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = pipe.read_to_end(&mut s);
            let _ = tx.send(());
            s
        })
    };
    let t_out = drain(Box::new(out), tx.clone());
    let t_err = drain(Box::new(err), tx);
    let deadline = Instant::now() + timeout;
    let mut closed = 0;
    while closed < 2 {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(()) => closed += 1,
            Err(_) => break,
        }
    }
    let status = if closed == 2 {
        Some(child.wait()?)
    } else {
        let _ = child.kill();
        let _ = child.wait();
        None
    };
    let _ = feeder.join();
    let stdout = String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap_or_default()).into_owned();
    let Some(status) = status else {
        return Ok(ToolRun::TimedOut(timeout));
    };
    Ok(match status.code() {
        Some(0) => ToolRun::Ok(stdout),
        Some(code) => ToolRun::Failed {
            code,
            log: stderr + &stdout,
        },
        None => ToolRun::Signalled {
            signal: signal_of(&status),
            log: stderr,
        },
    })
}

#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt as _;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_: &std::process::ExitStatus) -> Option<i32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_classified_from_the_log() {
        // The shapes of llc's messages (LLVM 22).
        let cs = "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.tcgen05.mma\nPLEASE submit a bug report\nStack dump:\n";
        assert_eq!(classify(Some(134), cs), FailureKind::CannotSelect);
        let v = "immarg operand has non-immediate parameter\nLLVM ERROR: Broken module found, compilation aborted!\n";
        assert_eq!(classify(Some(1), v), FailureKind::Verifier);
        let fatal = "LLVM ERROR: PTX version 8.4 does not support target 'sm_100a'.\n";
        assert_eq!(classify(Some(1), fatal), FailureKind::Diagnosed);
        assert_eq!(headline(&format!("x\n{fatal}")), fatal.trim());
        assert!(headline(cs).starts_with("LLVM ERROR: Cannot select"));
        let d = "llc: error: llc: a.ll:21:13: error: unknown intrinsic 'llvm.nvvm.x'\n";
        assert_eq!(classify(Some(1), d), FailureKind::Diagnosed);
        assert_eq!(classify(None, ""), FailureKind::Crash);
        assert_eq!(tail("a\n\nb\nc\n", 2), "b | c");
    }

    #[cfg(unix)]
    #[test]
    fn a_hung_tool_is_killed_at_the_limit() {
        let r = run_tool(
            Path::new("/bin/sleep"),
            &["10".into()],
            "",
            Duration::from_millis(200),
        )
        .unwrap();
        assert!(matches!(r, ToolRun::TimedOut(_)), "{r:?}");
    }

    #[cfg(unix)]
    #[test]
    fn input_goes_in_and_output_comes_back() {
        let r = run_tool(Path::new("/bin/cat"), &[], "hello", DEFAULT_TIMEOUT).unwrap();
        assert_eq!(r, ToolRun::Ok("hello".into()));
        let f = run_tool(
            Path::new("/bin/sh"),
            &["-c".into(), "echo no >&2; exit 3".into()],
            "",
            DEFAULT_TIMEOUT,
        )
        .unwrap();
        assert_eq!(
            f,
            ToolRun::Failed {
                code: 3,
                log: "no\n".into()
            }
        );
    }
}
