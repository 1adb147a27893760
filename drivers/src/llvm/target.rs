//! `LlvmTarget`: one LLVM install, at one `opt` level, through LLVM IR or MLIR, as a
//! compile-only [`Target`].
//!
//! | name | what |
//! | --- | --- |
//! | `llvm@<major>` | lower to LLVM IR, `opt -O3`, `llc`, ptxas, translation validation |
//! | `llvm@<major>:O0` | the same with `opt -O0` |
//! | `mlir@<major>`, `mlir@<major>:O0` | the same through MLIR (`mlir-translate`) first |
//! | `llvm`, `mlir` | every install (expanded by [`expand`]); as one target, the newest |
//!
//! Outcomes ([`outcome_of`]): a form without intrinsic is `not-run`; a crash or "Cannot
//! select" is `crashed`; a verifier failure or diagnostic is `rejected`; ptxas rejecting the
//! produced PTX is `rejected` (its message says so); a translation-validation failure is
//! `crashed` with a detail starting `miscompiled:` (a wrong compilation is never an accepted
//! case), and so is a lifted PTX whose simulated outcome the oracle does not allow
//! (`disallowed:`); PTX the validator cannot follow is `accepted` with an informational diagnostic.

use super::install::{LlvmInstall, discover, none_reason};
use super::pipeline::{self, Frontend, Level, LlvmVerdict, Options};
use crate::outcome::{Diagnostic, Outcome, Severity};
use crate::target::{Availability, Target, TargetInfo, TargetKind, Unavailable};
use tcgen05_ir::Case;

/// An LLVM install as a compile-only target.
#[derive(Debug, Clone)]
pub struct LlvmTarget {
    /// The name it was built from.
    pub name: String,
    /// The install.
    pub install: LlvmInstall,
    /// Pipeline options.
    pub options: Options,
}

impl LlvmTarget {
    /// The full run of one case (verdict, module, commands, times).
    pub fn check(&self, case: &Case) -> pipeline::Run {
        pipeline::check_seeded(
            &self.install,
            &case.program,
            case.provenance.seed.unwrap_or(0),
            &self.options,
        )
    }
}

fn error(message: String) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        line: None,
        opcode: None,
        message,
    }
}

/// The shared [`Outcome`] of a verdict (see the module documentation).
pub fn outcome_of(v: &LlvmVerdict) -> Outcome {
    use super::run::FailureKind as K;
    match v {
        LlvmVerdict::NotLowered(missing) => Outcome::NotRun(format!(
            "no LLVM intrinsic for {}",
            missing
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        )),
        LlvmVerdict::ToolFailed {
            stage,
            kind: K::Crash | K::CannotSelect,
            detail,
        } => Outcome::Crashed {
            detail: format!("{}: {detail}", stage.as_str()),
        },
        LlvmVerdict::ToolFailed {
            stage,
            kind,
            detail,
        } => Outcome::Rejected(vec![error(format!(
            "{} ({}): {detail}",
            stage.as_str(),
            kind.as_str()
        ))]),
        LlvmVerdict::ToolTimedOut { limit_ms, .. } => Outcome::TimedOut {
            limit_ms: *limit_ms,
        },
        LlvmVerdict::PtxasRejected { message } => Outcome::Rejected(vec![error(format!(
            "ptxas rejected the PTX LLVM produced: {message}"
        ))]),
        LlvmVerdict::Miscompiled(m) => Outcome::Crashed {
            detail: format!(
                "miscompiled: {}",
                m.first().map_or(String::new(), ToString::to_string)
            ),
        },
        LlvmVerdict::Disallowed(why) => Outcome::Crashed {
            detail: format!("disallowed: {why}"),
        },
        LlvmVerdict::NotValidated(why) => Outcome::AcceptedWithWarnings(vec![Diagnostic {
            severity: Severity::Info,
            line: None,
            opcode: None,
            message: format!("not validated: {why}"),
        }]),
        LlvmVerdict::Validated { .. } => Outcome::Accepted,
    }
}

impl Target for LlvmTarget {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn version(&self) -> String {
        self.install.version.to_string()
    }

    fn kind(&self) -> TargetKind {
        TargetKind::CompileOnly
    }

    fn run(&mut self, case: &Case) -> Outcome {
        outcome_of(&self.check(case).verdict)
    }
}

/// A parsed target name: front end, version wanted (`None`: newest), level.
type Parsed = (Frontend, Option<u16>, Level);

/// Why a name of this module's form (`llvm...`, `mlir...`) names no target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The part after `:` is not an optimization level.
    #[error("`{level}` is not an opt level: write {base}:O0 or {base}:O3")]
    Level {
        /// What the name has after `:`.
        level: String,
        /// The name before `:`.
        base: String,
    },
    /// The part after `@` is not a major version.
    #[error("`{0}` is not an LLVM major version: write llvm@22")]
    Version(String),
}

/// Parses a target name of this module (`None`: not one; `Some(Err)`: malformed, and why).
fn parse_name(name: &str) -> Option<Result<Parsed, NameError>> {
    let (front, rest) = if let Some(r) = name.strip_prefix("llvm") {
        (Frontend::Llvm, r)
    } else if let Some(r) = name.strip_prefix("mlir") {
        (Frontend::Mlir, r)
    } else {
        return None;
    };
    if !(rest.is_empty() || rest.starts_with('@') || rest.starts_with(':')) {
        return None;
    }
    let (ver, level) = match rest.split_once(':') {
        Some((v, l)) => (v, Some(l)),
        None => (rest, None),
    };
    let level = match level {
        None | Some("O3") => Level::O3,
        Some("O0") => Level::O0,
        Some(other) => {
            return Some(Err(NameError::Level {
                level: other.to_string(),
                base: name.split(':').next().unwrap_or(name).to_string(),
            }));
        }
    };
    let ver = match ver.strip_prefix('@') {
        None if ver.is_empty() => None,
        Some(v) => match v.parse::<u16>() {
            Ok(n) => Some(n),
            Err(_) => {
                return Some(Err(NameError::Version(v.to_string())));
            }
        },
        None => return None,
    };
    Some(Ok((front, ver, level)))
}

/// The install and pipeline options a target name stands for: `llvm@<major>[:O0|:O3]` or
/// `mlir@<major>[:O0|:O3]` (`llvm`, `mlir`: the newest install). `None` when the name is not
/// this module's; `Some(Err)` saying why when it cannot be used here.
pub fn configure(name: &str) -> Option<Result<(LlvmInstall, Options), Unavailable>> {
    let (front, ver, level) = match parse_name(name)? {
        Ok(x) => x,
        Err(e) => return Some(Err(Unavailable(e.to_string()))),
    };
    let (all, problems) = discover();
    let pick = match ver {
        Some(v) => all.iter().find(|i| i.version.major == v),
        None => all.last(),
    };
    let Some(install) = pick else {
        return Some(Err(Unavailable(if all.is_empty() {
            none_reason(&problems)
        } else {
            format!(
                "no LLVM {} is installed (installed: {})",
                ver.unwrap_or(0),
                all.iter()
                    .map(|i| format!("llvm@{}", i.label()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })));
    };
    if front == Frontend::Mlir && install.mlir_translate.is_none() {
        return Some(Err(Unavailable(format!(
            "LLVM {} in {} has no mlir-translate: install mlir-{}-tools",
            install.version,
            install.bin.display(),
            install.version.major
        ))));
    }
    Some(Ok((install.clone(), Options::new(level, front))))
}

/// Builds the target [`configure`] describes. `None` when the name is not this module's.
pub fn build(name: &str) -> Option<Result<Box<dyn Target>, Unavailable>> {
    Some(configure(name)?.map(|(install, options)| {
        Box::new(LlvmTarget {
            name: name.to_string(),
            install,
            options,
        }) as Box<dyn Target>
    }))
}

/// `llvm` into one `llvm@<major>` per install, `mlir` into one `mlir@<major>` per install with
/// `mlir-translate`; other names of this module into themselves; `None` for other names.
/// With nothing installed, the name stays, so that building it says why.
pub fn expand(name: &str) -> Option<Vec<String>> {
    if parse_name(name)?.is_err() || (name != "llvm" && name != "mlir") {
        return Some(vec![name.to_string()]);
    }
    let all = discover().0;
    let names: Vec<String> = all
        .iter()
        .filter(|i| name == "llvm" || i.mlir_translate.is_some())
        .map(|i| format!("{name}@{}", i.label()))
        .collect();
    Some(if names.is_empty() {
        vec![name.to_string()]
    } else {
        names
    })
}

/// One line per install and front end for `tcgen05-fuzz targets`; unavailable lines saying why
/// when there is none.
pub fn candidates() -> Vec<TargetInfo> {
    let (all, problems) = discover();
    if all.is_empty() {
        let reason = none_reason(&problems);
        return ["llvm@<version>", "mlir@<version>"]
            .into_iter()
            .map(|n| TargetInfo {
                name: n.into(),
                kind: TargetKind::CompileOnly,
                version: None,
                availability: Availability::Unavailable(reason.clone()),
                description: "LLVM NVPTX back end (mlir: through MLIR), compile only".into(),
            })
            .collect();
    }
    let mut out = Vec::new();
    // Folders that were found or named but cannot be used (too old, no NVPTX, no opt).
    for p in &problems {
        out.push(TargetInfo {
            name: "llvm@<version>".into(),
            kind: TargetKind::CompileOnly,
            version: None,
            availability: Availability::Unavailable(p.reason.clone()),
            description: format!("LLVM in {}", p.bin.display()),
        });
    }
    for i in &all {
        out.push(TargetInfo {
            name: format!("llvm@{}", i.label()),
            kind: TargetKind::CompileOnly,
            version: Some(i.version.to_string()),
            availability: Availability::Available,
            description: format!(
                "LLVM {} NVPTX (opt -O3, llc; `:O0` for opt -O0), {}",
                i.version,
                i.bin.display()
            ),
        });
        out.push(TargetInfo {
            name: format!("mlir@{}", i.label()),
            kind: TargetKind::CompileOnly,
            version: Some(i.version.to_string()),
            availability: match &i.mlir_translate {
                Some(_) => Availability::Available,
                None => Availability::Unavailable(format!(
                    "no mlir-translate in {}: install mlir-{}-tools",
                    i.bin.display(),
                    i.version.major
                )),
            },
            description: format!("MLIR {} (mlir-translate, then opt and llc)", i.version),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_into_front_end_version_and_level() {
        assert_eq!(
            parse_name("llvm@22"),
            Some(Ok((Frontend::Llvm, Some(22), Level::O3)))
        );
        assert_eq!(
            parse_name("mlir@22:O0"),
            Some(Ok((Frontend::Mlir, Some(22), Level::O0)))
        );
        assert_eq!(
            parse_name("llvm"),
            Some(Ok((Frontend::Llvm, None, Level::O3)))
        );
        assert_eq!(
            parse_name("llvm@x"),
            Some(Err(NameError::Version("x".into())))
        );
        let Some(Err(e)) = parse_name("llvm@22:O2") else {
            panic!("O2 is no level of the target names")
        };
        assert_eq!(
            e.to_string(),
            "`O2` is not an opt level: write llvm@22:O0 or llvm@22:O3"
        );
        assert_eq!(parse_name("ptxas@12.8"), None);
        assert_eq!(parse_name("llvmfoo"), None);
    }

    #[test]
    fn verdicts_map_to_outcomes() {
        use super::super::run::FailureKind;
        let crash = LlvmVerdict::ToolFailed {
            stage: pipeline::Stage::Llc,
            kind: FailureKind::CannotSelect,
            detail: "LLVM ERROR: Cannot select".into(),
        };
        assert_eq!(outcome_of(&crash).name(), "crashed");
        let verifier = LlvmVerdict::ToolFailed {
            stage: pipeline::Stage::Opt,
            kind: FailureKind::Verifier,
            detail: "immarg".into(),
        };
        assert_eq!(outcome_of(&verifier).name(), "rejected");
        assert_eq!(
            outcome_of(&LlvmVerdict::NotLowered(vec![])).name(),
            "not-run"
        );
        assert_eq!(
            outcome_of(&LlvmVerdict::Validated { threads: 3 }),
            Outcome::Accepted
        );
        let bad = outcome_of(&LlvmVerdict::Miscompiled(vec![]));
        assert!(bad.summary().contains("miscompiled"), "{}", bad.summary());
    }
}
