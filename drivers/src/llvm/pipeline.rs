//! One case through LLVM: lower, (for `mlir@`: through MLIR), `opt`, `llc`, ptxas on the
//! produced PTX, and translation validation; the [`LlvmVerdict`] and everything a reproducer
//! needs ([`Run`]).

use super::behaviour::{self, Behaviour, Lifter};
use super::install::LlvmInstall;
use super::lower::{self, NotLowered};
use super::run::{self, FailureKind, ToolRun};
use super::validate::{self, Mismatch};
use crate::ptxas::{CompileOptions, CompileVerdict, PtxasInstall};
use std::time::{Duration, Instant};
use tcgen05_ir::Program;

/// The optimization level of `opt` (`llc` runs at its own default, `-O2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Level {
    /// `opt -O0`: the front end's output as it is.
    O0,
    /// `opt -O3`: what a release build of a kernel goes through.
    O3,
}

impl Level {
    /// `O0` or `O3`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::O0 => "O0",
            Level::O3 => "O3",
        }
    }
}

/// Which front end the module goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Frontend {
    /// The LLVM IR module as [`lower::lower`] writes it.
    Llvm,
    /// The same module imported into MLIR (`mlir-translate --import-llvm`), the tcgen05 calls
    /// that have an `nvvm` op raised to it ([`super::mlir::raise`]), and translated back
    /// (`mlir-translate --mlir-to-llvmir`).
    Mlir,
}

/// A pipeline stage, for verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Stage {
    /// `mlir-translate --import-llvm`.
    MlirImport,
    /// `mlir-translate --mlir-to-llvmir`.
    MlirTranslate,
    /// `opt`.
    Opt,
    /// `llc`.
    Llc,
}

impl Stage {
    /// The tool's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::MlirImport => "mlir-translate --import-llvm",
            Stage::MlirTranslate => "mlir-translate --mlir-to-llvmir",
            Stage::Opt => "opt",
            Stage::Llc => "llc",
        }
    }
}

/// What LLVM did with one case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum LlvmVerdict {
    /// A form of the program has no intrinsic: not run.
    NotLowered(Vec<NotLowered>),
    /// A tool failed: a crash, "Cannot select", a verifier failure or a diagnostic.
    ToolFailed {
        /// Which tool.
        stage: Stage,
        /// What kind of failure.
        kind: FailureKind,
        /// The last lines of its output.
        detail: String,
    },
    /// A tool ran past its limit.
    ToolTimedOut {
        /// Which tool.
        stage: Stage,
        /// The limit, in milliseconds.
        limit_ms: u64,
    },
    /// ptxas rejected (or crashed on) the PTX LLVM produced.
    PtxasRejected {
        /// ptxas's first message.
        message: String,
    },
    /// The produced PTX does not do what the program says (translation validation).
    Miscompiled(Vec<Mismatch>),
    /// Compiled and assembled; translation validation could not follow the PTX (why).
    NotValidated(String),
    /// Validated, and the lifted PTX's outcome on the simulator is one the oracle does not
    /// allow for the source program ([`behaviour`]; the summary).
    Disallowed(String),
    /// Compiled, assembled, and validated on this many threads.
    Validated {
        /// Threads compared.
        threads: usize,
    },
}

impl LlvmVerdict {
    /// Short kebab-case name, for tables.
    pub fn name(&self) -> String {
        match self {
            LlvmVerdict::NotLowered(_) => "not-lowered".into(),
            LlvmVerdict::ToolFailed { stage, kind, .. } => {
                format!("{}-{}", stage_short(*stage), kind.as_str())
            }
            LlvmVerdict::ToolTimedOut { stage, .. } => format!("{}-timeout", stage_short(*stage)),
            LlvmVerdict::PtxasRejected { .. } => "ptxas-rejected".into(),
            LlvmVerdict::Miscompiled(_) => "miscompiled".into(),
            LlvmVerdict::NotValidated(_) => "not-validated".into(),
            LlvmVerdict::Disallowed(_) => "disallowed".into(),
            LlvmVerdict::Validated { .. } => "validated".into(),
        }
    }
}

fn stage_short(s: Stage) -> &'static str {
    match s {
        Stage::MlirImport => "mlir-import",
        Stage::MlirTranslate => "mlir-translate",
        Stage::Opt => "opt",
        Stage::Llc => "llc",
    }
}

/// How to run the pipeline.
#[derive(Debug, Clone)]
pub struct Options {
    /// `opt`'s level.
    pub level: Level,
    /// The front end.
    pub frontend: Frontend,
    /// The limit of each tool process.
    pub timeout: Duration,
    /// The ptxas that assembles the produced PTX (none: that step is skipped).
    pub ptxas: Option<PtxasInstall>,
    /// Mismatches kept per case.
    pub max_mismatches: usize,
    /// Reads the produced PTX back into a program for the simulator and the oracle
    /// ([`behaviour::check`]); `None`: that step is skipped.
    pub lifter: Option<Lifter>,
}

impl Options {
    /// `level` and `frontend`, the default limit, the newest installed ptxas.
    pub fn new(level: Level, frontend: Frontend) -> Self {
        Options {
            level,
            frontend,
            timeout: run::DEFAULT_TIMEOUT,
            ptxas: crate::ptxas::installed().into_iter().next_back(),
            max_mismatches: 8,
            lifter: Some(behaviour::lift_produced),
        }
    }
}

/// One case's run: the verdict and what a reproducer needs.
#[derive(Debug, Clone)]
pub struct Run {
    /// The verdict.
    pub verdict: LlvmVerdict,
    /// The module given to the first tool (`.ll`, empty when not lowered).
    pub ll: String,
    /// The MLIR module, for the MLIR front end.
    pub mlir: Option<String>,
    /// The PTX `llc` produced, when it did.
    pub ptx: Option<String>,
    /// The command lines run, in order (input on standard input).
    pub commands: Vec<String>,
    /// Time spent in `opt`, `llc` and `mlir-translate` processes.
    pub tool_time: Duration,
    /// Time spent in ptxas.
    pub ptxas_time: Duration,
    /// The harness's own time: lowering, printing, parsing, validation.
    pub harness_time: Duration,
    /// The produced PTX (or, where it cannot be lifted, the source program) on the simulator
    /// against the oracle, for validated cases.
    pub behaviour: Option<Behaviour>,
    /// Time spent lifting, simulating and in the oracle for [`Run::behaviour`].
    pub behaviour_time: Duration,
}

fn command_line(tool: &std::path::Path, args: &[String]) -> String {
    let mut s = tool.display().to_string();
    for a in args {
        s.push(' ');
        s.push_str(a);
    }
    s
}

/// The arguments of `opt` at `level`.
pub fn opt_args(level: Level) -> Vec<String> {
    vec![
        format!("-{}", level.as_str()),
        "-S".into(),
        "-o".into(),
        "-".into(),
        "-".into(),
    ]
}

/// The arguments of `llc` for `p`: `-march=nvptx64 -mcpu=<target> -mattr=+ptx<version>`.
pub fn llc_args(p: &Program) -> Vec<String> {
    vec![
        "-march=nvptx64".into(),
        format!("-mcpu={}", lower::mcpu(p)),
        format!("-mattr={}", lower::mattr(p)),
        "-o".into(),
        "-".into(),
        "-".into(),
    ]
}

/// Runs `p` through `install` with `opts` (the simulator's scheduler seeded with 0).
pub fn check(install: &LlvmInstall, p: &Program, opts: &Options) -> Run {
    check_seeded(install, p, 0, opts)
}

/// Runs `p` through `install` with `opts`; `seed` seeds the simulator's scheduler for the
/// behaviour check.
pub fn check_seeded(install: &LlvmInstall, p: &Program, seed: u64, opts: &Options) -> Run {
    let t0 = Instant::now();
    let mut r = Run {
        verdict: LlvmVerdict::NotLowered(vec![]),
        ll: String::new(),
        mlir: None,
        ptx: None,
        commands: vec![],
        tool_time: Duration::ZERO,
        ptxas_time: Duration::ZERO,
        harness_time: Duration::ZERO,
        behaviour: None,
        behaviour_time: Duration::ZERO,
    };
    let ll = match lower::lower(p) {
        Ok(ll) => ll,
        Err(missing) => {
            r.verdict = LlvmVerdict::NotLowered(missing);
            r.harness_time = t0.elapsed();
            return r;
        }
    };
    r.ll = ll.clone();
    let mut tool = Duration::ZERO;
    let mut step = |r: &mut Run,
                    stage: Stage,
                    bin: &std::path::Path,
                    args: Vec<String>,
                    input: &str|
     -> Result<String, LlvmVerdict> {
        r.commands.push(command_line(bin, &args));
        let t = Instant::now();
        let out = run::run_tool(bin, &args, input, opts.timeout);
        tool += t.elapsed();
        match out {
            Ok(ToolRun::Ok(s)) => Ok(s),
            Ok(ToolRun::Failed { code, log }) => Err(LlvmVerdict::ToolFailed {
                stage,
                kind: run::classify(Some(code), &log),
                detail: format!("exit {code}: {}", run::headline(&log)),
            }),
            Ok(ToolRun::Signalled { signal, log }) => Err(LlvmVerdict::ToolFailed {
                stage,
                kind: run::classify(None, &log),
                detail: format!("signal {}: {}", signal.unwrap_or(0), run::headline(&log)),
            }),
            Ok(ToolRun::TimedOut(after)) => Err(LlvmVerdict::ToolTimedOut {
                stage,
                limit_ms: after.as_millis() as u64,
            }),
            Err(e) => Err(LlvmVerdict::ToolFailed {
                stage,
                kind: FailureKind::Crash,
                detail: format!("could not run {}: {e}", bin.display()),
            }),
        }
    };
    let result = (|| -> Result<String, LlvmVerdict> {
        let mut module = ll.clone();
        if opts.frontend == Frontend::Mlir {
            let Some(mt) = install.mlir_translate.clone() else {
                return Err(LlvmVerdict::ToolFailed {
                    stage: Stage::MlirImport,
                    kind: FailureKind::Crash,
                    detail: format!(
                        "could not run mlir-translate: none in {}",
                        install.bin.display()
                    ),
                });
            };
            let mlir = step(
                &mut r,
                Stage::MlirImport,
                &mt,
                vec!["--import-llvm".into(), "-".into()],
                &module,
            )?;
            // The harness's own time (counted in `harness_time`).
            let (mlir, _) = super::mlir::raise(&mlir);
            r.mlir = Some(mlir.clone());
            module = step(
                &mut r,
                Stage::MlirTranslate,
                &mt,
                vec!["--mlir-to-llvmir".into(), "-".into()],
                &mlir,
            )?;
        }
        let optimized = step(
            &mut r,
            Stage::Opt,
            &install.opt(),
            opt_args(opts.level),
            &module,
        )?;
        step(&mut r, Stage::Llc, &install.llc(), llc_args(p), &optimized)
    })();
    r.tool_time = tool;
    let ptx = match result {
        Ok(ptx) => ptx,
        Err(v) => {
            r.verdict = v;
            r.harness_time = t0.elapsed().saturating_sub(r.tool_time);
            return r;
        }
    };
    r.ptx = Some(ptx.clone());
    if let Some(px) = &opts.ptxas {
        let t = Instant::now();
        let v = crate::ptxas::compile_one(px, &ptx, &CompileOptions::verdict());
        r.ptxas_time = t.elapsed();
        let rejected = match v {
            Ok(CompileVerdict::Accepted | CompileVerdict::AcceptedWithWarnings(_)) => None,
            Ok(CompileVerdict::Rejected(d)) => Some(
                d.first()
                    .map_or("rejected".to_string(), |d| d.diag.message.clone()),
            ),
            Ok(CompileVerdict::Crashed { message, .. }) => {
                Some(format!("ptxas crashed: {}", run::tail(&message, 3)))
            }
            Ok(CompileVerdict::TimedOut { after }) => {
                Some(format!("ptxas timed out after {} ms", after.as_millis()))
            }
            Err(e) => Some(format!("could not run ptxas: {e}")),
        };
        if let Some(message) = rejected {
            r.verdict = LlvmVerdict::PtxasRejected { message };
            r.harness_time = t0.elapsed().saturating_sub(r.tool_time + r.ptxas_time);
            return r;
        }
    }
    let source = tcgen05_ir::ptx::emit(p);
    r.verdict = match validate::validate(p, &source, &ptx, opts.max_mismatches) {
        Ok(v) if v.mismatches.is_empty() => LlvmVerdict::Validated { threads: v.threads },
        Ok(v) => LlvmVerdict::Miscompiled(v.mismatches),
        Err(e) => LlvmVerdict::NotValidated(e.to_string()),
    };
    if let (LlvmVerdict::Validated { .. }, Some(lifter)) = (&r.verdict, opts.lifter) {
        let t = Instant::now();
        let b = behaviour::check(p, &ptx, lifter, seed);
        r.behaviour_time = t.elapsed();
        if b.is_finding() {
            r.verdict = LlvmVerdict::Disallowed(b.summary());
        }
        r.behaviour = Some(b);
    }
    r.harness_time = t0
        .elapsed()
        .saturating_sub(r.tool_time + r.ptxas_time + r.behaviour_time);
    r
}
