//! The `external:<command>` target and its protocol (`docs/external-protocol.md`): any
//! simulator that reads cases on stdin and writes outcomes on stdout, one JSON object per line.
//! [`serve`] is the server side, which `tcgen05-fuzz sim-server` runs with the built-in
//! simulator, so the protocol is tested end to end.

use crate::outcome::Outcome;
use crate::target::{Availability, Target, TargetInfo, TargetKind, Unavailable};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;
use tcgen05_ir::Case;
use tcgen05_ir::observe::Layout;

/// The protocol version this build speaks.
pub const PROTOCOL: u32 = 1;
/// The greeting both sides send.
pub const HELLO: &str = "tcgen05-external";
/// Default time limit for one reply.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The handshake, both ways.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// Always [`HELLO`].
    pub hello: String,
    /// [`PROTOCOL`].
    pub protocol: u32,
    /// The simulator's name (reply only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The simulator's version (reply only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The launch shape of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    /// Clusters along x.
    pub clusters: u32,
    /// CTAs per cluster along x.
    pub cluster_size: u32,
    /// Warps per CTA (threads = 32 x warps).
    pub warps_per_cta: u32,
}

/// One case to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Echoed in the reply.
    pub id: u64,
    /// The PTX module.
    pub ptx: String,
    /// The launch.
    pub grid: Grid,
    /// Observation buffer size in 32-bit words.
    pub words: u64,
    /// The case in the harness's JSON form.
    pub case: Case,
}

impl Request {
    /// The request for `case`.
    pub fn of(id: u64, case: &Case) -> Request {
        let l = &case.program.launch;
        Request {
            id,
            ptx: tcgen05_ir::ptx::emit(&case.program),
            grid: Grid {
                clusters: u32::from(l.clusters),
                cluster_size: u32::from(l.cluster_size),
                warps_per_cta: u32::from(l.warps_per_cta),
            },
            words: Layout::of(&case.program).total_words() as u64,
            case: case.clone(),
        }
    }
}

/// One reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The request's id (`None` when the request could not be parsed).
    pub id: Option<u64>,
    /// The outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Why there is no outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Serves the protocol on `input`/`output` with `run` as the simulator: answers the
/// handshake, then one reply per request line, until `input` ends.
pub fn serve(
    input: impl BufRead,
    mut output: impl Write,
    name: &str,
    version: &str,
    run: &mut dyn FnMut(&Case) -> Outcome,
) -> std::io::Result<()> {
    let mut lines = input.lines();
    let Some(first) = lines.next() else {
        return Ok(());
    };
    let first = first?;
    let hello: Option<Hello> = serde_json::from_str(&first).ok();
    if hello.as_ref().is_none_or(|h| h.hello != HELLO) {
        writeln!(
            output,
            "{}",
            serde_json::json!({"id": null, "error": format!("expected a handshake, got {first:?}")})
        )?;
        output.flush()?;
        return Ok(());
    }
    let reply = Hello {
        hello: HELLO.into(),
        protocol: PROTOCOL,
        name: Some(name.into()),
        version: Some(version.into()),
    };
    writeln!(
        output,
        "{}",
        serde_json::to_string(&reply).map_err(std::io::Error::other)?
    )?;
    output.flush()?;
    for line in lines {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Request>(&line) {
            Ok(req) => Reply {
                id: Some(req.id),
                outcome: Some(run(&req.case)),
                error: None,
            },
            Err(e) => {
                let id = serde_json::from_str::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v["id"].as_u64());
                Reply {
                    id,
                    outcome: None,
                    error: Some(format!("bad request: {e}")),
                }
            }
        };
        writeln!(
            output,
            "{}",
            serde_json::to_string(&reply).map_err(std::io::Error::other)?
        )?;
        output.flush()?;
    }
    Ok(())
}

struct Proc {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<String>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A simulator behind the protocol, run as a child process.
pub struct ExternalTarget {
    command: String,
    version: String,
    proc: Option<Proc>,
    next_id: u64,
    timeout: Duration,
}

impl std::fmt::Debug for ExternalTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ExternalTarget({:?}, {})", self.command, self.version)
    }
}

impl ExternalTarget {
    /// Starts `command` (through `sh -c`) and does the handshake.
    pub fn start(command: &str, timeout: Duration) -> Result<ExternalTarget, Unavailable> {
        let mut t = ExternalTarget {
            command: command.to_string(),
            version: String::new(),
            proc: None,
            next_id: 0,
            timeout,
        };
        t.spawn()?;
        Ok(t)
    }

    fn spawn(&mut self) -> Result<(), Unavailable> {
        let mut cmd = Command::new("sh");
        // Its own process group: a terminal's Ctrl-C reaches the campaign, which stops
        // cleanly, not the simulator mid-case (that would read as a crash verdict).
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Unavailable(format!("cannot start `{}`: {e}", self.command)))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| Unavailable("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| Unavailable("no stdout".into()))?;
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut p = Proc { child, stdin, rx };
        let hello = Hello {
            hello: HELLO.into(),
            protocol: PROTOCOL,
            name: None,
            version: None,
        };
        let line = serde_json::to_string(&hello).expect("serializable");
        if writeln!(p.stdin, "{line}")
            .and_then(|()| p.stdin.flush())
            .is_err()
        {
            return Err(Unavailable(format!(
                "`{}` closed its input before the handshake",
                self.command
            )));
        }
        let reply = p
            .rx
            .recv_timeout(self.timeout)
            .map_err(|_| Unavailable(format!("`{}` did not answer the handshake", self.command)))?;
        match serde_json::from_str::<Hello>(&reply) {
            Ok(h) if h.hello == HELLO && h.protocol == PROTOCOL => {
                self.version = format!(
                    "{} {}",
                    h.name.unwrap_or_else(|| "external".into()),
                    h.version.unwrap_or_default()
                )
                .trim()
                .to_string();
                self.proc = Some(p);
                Ok(())
            }
            _ => Err(Unavailable(format!(
                "`{}` answered the handshake with {reply:?}",
                self.command
            ))),
        }
    }
}

impl Target for ExternalTarget {
    fn name(&self) -> String {
        format!("external:{}", self.command)
    }

    fn version(&self) -> String {
        self.version.clone()
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Running
    }

    fn run(&mut self, case: &Case) -> Outcome {
        if self.proc.is_none()
            && let Err(e) = self.spawn()
        {
            return Outcome::Crashed {
                detail: format!("restart failed: {e}"),
            };
        }
        self.next_id += 1;
        let id = self.next_id;
        let line = match serde_json::to_string(&Request::of(id, case)) {
            Ok(l) => l,
            Err(e) => return Outcome::NotRun(format!("the case does not serialize: {e}")),
        };
        let p = self.proc.as_mut().expect("spawned above");
        if writeln!(p.stdin, "{line}")
            .and_then(|()| p.stdin.flush())
            .is_err()
        {
            self.proc = None;
            return Outcome::Crashed {
                detail: "the simulator closed its input".into(),
            };
        }
        loop {
            match p.rx.recv_timeout(self.timeout) {
                Ok(reply) => {
                    let Ok(r) = serde_json::from_str::<Reply>(&reply) else {
                        self.proc = None;
                        return Outcome::Crashed {
                            detail: format!("unparseable reply: {reply:.200}"),
                        };
                    };
                    if r.id.is_some_and(|x| x != id) {
                        continue;
                    }
                    return match (r.outcome, r.error) {
                        (Some(o), _) => o,
                        (None, Some(e)) => Outcome::Crashed { detail: e },
                        (None, None) => Outcome::Crashed {
                            detail: "a reply with neither outcome nor error".into(),
                        },
                    };
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.proc = None;
                    return Outcome::TimedOut {
                        limit_ms: self.timeout.as_millis() as u64,
                    };
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.proc = None;
                    return Outcome::Crashed {
                        detail: "the simulator exited".into(),
                    };
                }
            }
        }
    }
}

/// Builds `external:<command>` targets (the command must not be empty).
pub fn build(name: &str) -> Option<Result<Box<dyn Target>, Unavailable>> {
    let cmd = name.strip_prefix("external:")?;
    if cmd.trim().is_empty() {
        return Some(Err(Unavailable("`external:` needs a command".into())));
    }
    Some(ExternalTarget::start(cmd, DEFAULT_TIMEOUT).map(|t| Box::new(t) as Box<dyn Target>))
}

/// The external target's entry for `targets`.
pub fn candidates() -> Vec<TargetInfo> {
    vec![TargetInfo {
        name: "external:<command>".into(),
        kind: TargetKind::Running,
        version: None,
        availability: Availability::Unavailable("give the simulator's command after `external:`".into()),
        description: "a simulator speaking docs/external-protocol.md (test: external:tcgen05-fuzz sim-server)".into(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_answers_the_handshake_and_each_request() {
        let case = Case {
            program: tcgen05_ir::samples::single_warp_roundtrip(),
            intent: tcgen05_ir::Intent::Unknown,
            provenance: Default::default(),
        };
        let mut input = String::new();
        input.push_str(
            &serde_json::to_string(&Hello {
                hello: HELLO.into(),
                protocol: 1,
                name: None,
                version: None,
            })
            .unwrap(),
        );
        input.push('\n');
        input.push_str(&serde_json::to_string(&Request::of(5, &case)).unwrap());
        input.push_str("\nnot json\n");
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out, "test", "1", &mut |_| {
            Outcome::NotRun("x".into())
        })
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let h: Hello = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(h.name.as_deref(), Some("test"));
        let r: Reply = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(
            (r.id, r.outcome),
            (Some(5), Some(Outcome::NotRun("x".into())))
        );
        let r: Reply = serde_json::from_str(lines[2]).unwrap();
        assert!(r.error.is_some());
    }

    #[test]
    fn a_command_that_does_not_speak_the_protocol_is_unavailable() {
        let e = ExternalTarget::start("echo nonsense", Duration::from_secs(5)).unwrap_err();
        assert!(e.0.contains("handshake"), "{e}");
        assert!(matches!(build("external:"), Some(Err(_))));
        assert!(build("sim").is_none());
    }
}
