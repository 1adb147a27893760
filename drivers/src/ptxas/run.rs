//! Running one ptxas process and reading its verdict.
//!
//! ptxas prints one diagnostic a line:
//! `ptxas <file>, line N; error   : <message>`, `ptxas <file>, line N; warning : <message>`,
//! `ptxas fatal   : <message>` (no line), and ends a rejected module with
//! `ptxas fatal   : Ptx assembly aborted due to errors`. The exit status is 0 when it accepts.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// `warning`.
    Warning,
    /// `error`.
    Error,
    /// `fatal`: ptxas stopped.
    Fatal,
}

/// One line of ptxas output, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Severity.
    pub severity: Severity,
    /// The line of the input file it names, if any.
    pub line: Option<u32>,
    /// The message after `error   : `.
    pub message: String,
}

impl Diagnostic {
    /// Parses one output line; `None` for lines that are not diagnostics (e.g. `info`).
    ///
    /// A diagnostic about one of ptxas's own inputs (`ptxas <macro util>, line 7; error : ...`,
    /// from the code ptxas adds to a module) names no line of the module: its line is `None`
    /// and its message starts with the pseudo-file and line, `<macro util> line 7: ...`.
    pub fn parse(line: &str) -> Option<Diagnostic> {
        let rest = line.trim_end().strip_prefix("ptxas")?;
        let (line_no, internal, rest) = match rest.find(", line ") {
            Some(i) if rest.starts_with(' ') && rest[i..].contains(';') => {
                let file = rest[..i].trim();
                let after = &rest[i + ", line ".len()..];
                let semi = after.find(';')?;
                let n: Option<u32> = after[..semi].trim().parse().ok();
                if file.starts_with('<') && file.ends_with('>') {
                    let at = format!("{file} line {}: ", n.unwrap_or(0));
                    (None, Some(at), &after[semi + 1..])
                } else {
                    (n, None, &after[semi + 1..])
                }
            }
            _ => (None, None, rest),
        };
        let rest = rest.trim_start();
        let (sev, msg) = rest.split_once(':')?;
        let severity = match sev.trim() {
            "error" => Severity::Error,
            "warning" => Severity::Warning,
            "fatal" => Severity::Fatal,
            _ => return None,
        };
        Some(Diagnostic {
            severity,
            line: line_no,
            message: internal.unwrap_or_default() + msg.trim(),
        })
    }

    /// The summary line ptxas adds to every rejected module; it says nothing of its own.
    pub fn is_abort_summary(&self) -> bool {
        self.line.is_none()
            && self
                .message
                .starts_with("Ptx assembly aborted due to errors")
    }

    /// A fatal error about the module header or the command line, which holds for every
    /// entry of a module with that header: unsupported `.version`, unknown `-arch`, a
    /// `.version` too old for the `.target`.
    pub fn is_header_level(&self) -> bool {
        let m = &self.message;
        m.starts_with("Unsupported .version")
            || m.contains("is not defined for option 'gpu-name'")
            || (m.starts_with("PTX .version") && m.contains("does not support .target"))
    }

    /// Whether the message says the tool predates the module: it does not know its `.version`
    /// or its `.target` (`Unsupported .version 8.8; current version is '8.7'`, `Value
    /// 'sm_100f' is not defined for option 'gpu-name'`). A newer ptxas may accept the module.
    pub fn is_unknown_to_tool(&self) -> bool {
        let m = &self.message;
        m.starts_with("Unsupported .version") || m.contains("is not defined for option 'gpu-name'")
    }

    /// Whether the message says ptxas itself failed (an internal error), not the input.
    pub fn is_internal_error(&self) -> bool {
        let m = self.message.to_ascii_lowercase();
        m.contains("internal error")
            || m.contains("internal compiler error")
            || m.contains("assertion")
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Fatal => "fatal",
        };
        match self.line {
            Some(l) => write!(f, "line {l}; {sev} : {}", self.message),
            None => write!(f, "{sev} : {}", self.message),
        }
    }
}

/// What one ptxas process did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawRun {
    /// It exited with a status.
    Exited {
        /// The exit status.
        code: i32,
        /// Diagnostics from stdout and stderr, in order.
        diagnostics: Vec<Diagnostic>,
        /// Everything it printed, for reports.
        log: String,
    },
    /// It was killed by a signal (a crash).
    Signalled {
        /// The signal number, where the platform says.
        signal: Option<i32>,
        /// Everything it printed.
        log: String,
    },
    /// It ran past the time limit and was killed.
    TimedOut {
        /// The limit.
        after: Duration,
    },
}

/// Options of one compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileOptions {
    /// `-arch=<arch>`; the module's `.target` when `None`.
    pub arch: Option<String>,
    /// Add `-g-tmem-access-check` (the TMEM guardrails: see [`super::guardrail`]).
    pub guardrail: bool,
    /// Where the cubin goes; `/dev/null` (discarded) when `None`.
    pub output: Option<PathBuf>,
    /// Kill ptxas after this long.
    pub timeout: Duration,
    /// `-O<n>`; ptxas's own default (`-O3`) when `None`.
    pub opt_level: Option<u8>,
    /// Extra arguments, passed as they are.
    pub extra: Vec<String>,
}

impl Default for CompileOptions {
    /// ptxas's defaults: the code is what a user of that ptxas gets (for cubins and the SASS
    /// check). Verdict-only compiles use [`CompileOptions::verdict`].
    fn default() -> Self {
        CompileOptions {
            arch: None,
            guardrail: false,
            output: None,
            timeout: DEFAULT_TIMEOUT,
            opt_level: None,
            extra: vec![],
        }
    }
}

impl CompileOptions {
    /// The options of a compile whose only product is the verdict (accepted, rejected with
    /// which diagnostics): `-O0` ([`VERDICT_OPT_LEVEL`]), output discarded.
    pub fn verdict() -> Self {
        CompileOptions {
            opt_level: Some(VERDICT_OPT_LEVEL),
            ..CompileOptions::default()
        }
    }
}

/// The optimization level of verdict-only compiles: 0. ptxas checks a module in its front end
/// and in code generation, and both run at every level; the optimizer only makes code
/// generation slower (a generated case: about 20 ms of CPU per entry at `-O0` against 30 to
/// 40 ms at the default `-O3`). `tests/ptxas_compile.rs` checks that `-O0` gives every case of
/// the probe set (`corpus/realworld/PTXAS-PROBES.txt`) and of a campaign sample the same
/// verdict and diagnostics as the default level, on every installed version.
pub const VERDICT_OPT_LEVEL: u8 = 0;

/// The default limit of one ptxas process: one case compiles in about 40 ms, so 30 s only
/// catches a hang, while a batch of 256 cases (about 3 s) stays well inside it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The `.target` named in a module's text, if any.
pub fn module_target(ptx: &str) -> Option<&str> {
    header_value(ptx, ".target")
}

/// The `.version` named in a module's text, if any.
pub fn module_version(ptx: &str) -> Option<&str> {
    header_value(ptx, ".version")
}

fn header_value<'a>(ptx: &'a str, directive: &str) -> Option<&'a str> {
    ptx.lines().find_map(|l| {
        let l = l.trim();
        l.strip_prefix(directive)
            .filter(|r| r.starts_with([' ', '\t']))
            .map(|r| {
                r.split([',', ' ', '\t'])
                    .find(|s| !s.is_empty())
                    .unwrap_or("")
            })
    })
}

/// Runs `ptxas` on the file `input`.
pub fn run_ptxas(
    ptxas: &Path,
    input: &Path,
    arch: &str,
    opts: &CompileOptions,
) -> std::io::Result<RawRun> {
    let mut cmd = Command::new(ptxas);
    // Its own process group: a terminal's Ctrl-C reaches the campaign, which stops cleanly,
    // not the compiler mid-case (that would read as a crash verdict).
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.arg(format!("-arch={arch}"));
    if opts.guardrail {
        cmd.arg("-g-tmem-access-check");
    }
    if let Some(o) = opts.opt_level {
        cmd.arg(format!("-O{o}"));
    }
    cmd.args(&opts.extra);
    cmd.arg("-o");
    match &opts.output {
        Some(p) => cmd.arg(p),
        None => cmd.arg("/dev/null"),
    };
    cmd.arg(input)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    // Drain both pipes on threads so a chatty ptxas never blocks on a full pipe. Each thread
    // reports when its pipe closes, which happens when ptxas exits: waiting on that channel
    // (with the time limit) needs no polling.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let drain = |mut pipe: Box<dyn Read + Send>, tx: std::sync::mpsc::Sender<()>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = pipe.read_to_end(&mut s);
            let _ = tx.send(());
            s
        })
    };
    let t_out = drain(Box::new(out), done_tx.clone());
    let t_err = drain(Box::new(err), done_tx);
    let deadline = Instant::now() + opts.timeout;
    let mut closed = 0;
    while closed < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        match done_rx.recv_timeout(left) {
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
    let mut log = String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned();
    log.push_str(&String::from_utf8_lossy(&t_err.join().unwrap_or_default()));
    let Some(status) = status else {
        return Ok(RawRun::TimedOut {
            after: opts.timeout,
        });
    };
    match status.code() {
        Some(code) => {
            let diagnostics = log.lines().filter_map(Diagnostic::parse).collect();
            Ok(RawRun::Exited {
                code,
                diagnostics,
                log,
            })
        }
        None => Ok(RawRun::Signalled {
            signal: signal_of(&status),
            log,
        }),
    }
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

/// A scratch folder removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    dir: PathBuf,
    n: std::cell::Cell<u64>,
}

impl Scratch {
    /// A fresh folder under the system temp folder.
    pub fn new() -> std::io::Result<Scratch> {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let k = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tcgen05-ptxas-{}-{k}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch {
            dir,
            n: std::cell::Cell::new(0),
        })
    }

    /// Writes `text` to a new file in the folder and returns its path.
    pub fn write(&self, ext: &str, text: &str) -> std::io::Result<PathBuf> {
        let n = self.n.get();
        self.n.set(n + 1);
        let p = self.dir.join(format!("m{n}.{ext}"));
        std::fs::write(&p, text)?;
        Ok(p)
    }

    /// A path in the folder for an output file.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_parse_as_ptxas_prints_them() {
        // Lines copied from the format documented in corpus/realworld/PTXAS-PROBES.md.
        let d = Diagnostic::parse(
            "ptxas /tmp/x y.ptx, line 11; error   : Argument 1 of 'tcgen05.alloc' instruction: value must be power of 2",
        )
        .unwrap();
        assert_eq!(d.severity, Severity::Error);
        assert_eq!(d.line, Some(11));
        assert_eq!(
            d.message,
            "Argument 1 of 'tcgen05.alloc' instruction: value must be power of 2"
        );
        let w = Diagnostic::parse("ptxas a.ptx, line 3; warning : something odd").unwrap();
        assert_eq!((w.severity, w.line), (Severity::Warning, Some(3)));
        let f =
            Diagnostic::parse("ptxas fatal   : Unsupported .version 8.8; current version is '8.7'")
                .unwrap();
        assert_eq!((f.severity, f.line), (Severity::Fatal, None));
        assert!(f.is_header_level());
        let a = Diagnostic::parse("ptxas fatal   : Ptx assembly aborted due to errors").unwrap();
        assert!(a.is_abort_summary());
        assert!(Diagnostic::parse("ptxas info    : 0 bytes gmem").is_none());
        // Seen with 12.8 after a parse error: a line of ptxas's own macro code, not the input's.
        let m = Diagnostic::parse(
            "ptxas <macro util>, line 7; error   : Illegal modifier '.sync' for instruction 'brkpt'",
        )
        .unwrap();
        assert_eq!((m.severity, m.line), (Severity::Error, None));
        assert_eq!(
            m.message,
            "<macro util> line 7: Illegal modifier '.sync' for instruction 'brkpt'"
        );
        assert!(Diagnostic::parse("random text").is_none());
    }

    #[test]
    fn header_directives_are_read() {
        let m = "//\n.version 8.6\n.target sm_100a\n.address_size 64\n";
        assert_eq!(module_version(m), Some("8.6"));
        assert_eq!(module_target(m), Some("sm_100a"));
        assert_eq!(module_target(".targetx sm_1\n"), None);
    }
}
