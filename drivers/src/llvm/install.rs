//! Finding LLVM installs (`llc`, `opt`, and for the `mlir@<version>` targets `mlir-translate`)
//! and their versions.
//!
//! Two sources, in this order:
//! 1. `$TCGEN05_LLVM`: install folders or their `bin/` folders separated by `:` (a folder is
//!    an install when it holds `llc`, or `bin/llc`);
//! 2. the Debian layout that `scripts/setup-llvm` installs: `/usr/lib/llvm-<major>/bin/`
//!    (`$TCGEN05_LLVM_PREFIX` replaces `/usr/lib` for tests).
//!
//! Every `llc` is asked for its version (`llc --version` prints `LLVM version 22.1.8`, or
//! `Debian LLVM version 22.1.8`) and whether the NVPTX back end is registered (the line
//! `nvptx64 - NVIDIA PTX 64-bit` of "Registered Targets"). Two folders that report the same
//! full version are the same install, and the first one found is kept.

use crate::ptxas::ToolVersion;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One usable LLVM install: an `llvm@<major>` target, and an `mlir@<major>` target when it has
/// `mlir-translate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlvmInstall {
    /// The folder holding the tools.
    pub bin: PathBuf,
    /// The version `llc --version` reports.
    pub version: ToolVersion,
    /// `mlir-translate` next to `llc`, if present.
    pub mlir_translate: Option<PathBuf>,
}

impl LlvmInstall {
    /// `llc` of this install.
    pub fn llc(&self) -> PathBuf {
        self.bin.join("llc")
    }

    /// `opt` of this install.
    pub fn opt(&self) -> PathBuf {
        self.bin.join("opt")
    }

    /// The version label of the target names: the major version (`22`).
    pub fn label(&self) -> String {
        self.version.major.to_string()
    }
}

/// The oldest LLVM major version with the `llvm.nvvm.tcgen05.*` intrinsics; older installs
/// (an `llvm-14` beside `llvm-22`) are listed as unavailable.
pub const MIN_MAJOR: u16 = 20;

/// A folder that was named or found but cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The folder.
    pub bin: PathBuf,
    /// Why it cannot be used.
    pub reason: String,
}

/// Reads the version out of `llc --version` output (`LLVM version 22.1.8`, possibly with a
/// vendor word before it and a suffix such as `git` after it).
pub fn version_from_output(out: &str) -> Option<ToolVersion> {
    let line = out.lines().find(|l| l.contains("LLVM version "))?;
    let v = line.split("LLVM version ").nth(1)?.trim();
    let digits: String = v
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    ToolVersion::parse(digits.trim_end_matches('.'))
}

/// Whether `llc --version` output lists the NVPTX back end.
pub fn has_nvptx(out: &str) -> bool {
    out.lines().any(|l| l.trim_start().starts_with("nvptx64"))
}

/// Why a folder of tools cannot be used ([`probe`]).
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The folder has no `llc`.
    #[error("no llc in {}", .0.display())]
    NoLlc(PathBuf),
    /// The folder has `llc` but no `opt`.
    #[error("{} has llc but no opt (install the whole llvm package)", .0.display())]
    NoOpt(PathBuf),
    /// `llc --version` could not be run.
    #[error("cannot run `{} --version`: {source}", llc.display())]
    NotRunnable {
        /// The `llc` binary.
        llc: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `llc --version` printed no version.
    #[error("`{} --version` did not print `LLVM version X.Y.Z`", .0.display())]
    NoVersion(PathBuf),
    /// The LLVM predates the tcgen05 intrinsics.
    #[error(
        "{} is LLVM {version}, older than the tcgen05 intrinsics (LLVM {MIN_MAJOR}; tested: 22)",
        llc.display()
    )]
    TooOld {
        /// The `llc` binary.
        llc: PathBuf,
        /// Its version.
        version: ToolVersion,
    },
    /// The LLVM was built without the NVPTX back end.
    #[error("{} (LLVM {version}) was built without the NVPTX back end", llc.display())]
    NoNvptx {
        /// The `llc` binary.
        llc: PathBuf,
        /// Its version.
        version: ToolVersion,
    },
}

/// Checks one folder of tools: `Ok` with the install, or why it cannot be used.
pub fn probe(bin: &Path) -> Result<LlvmInstall, ProbeError> {
    let llc = bin.join("llc");
    if !llc.is_file() {
        return Err(ProbeError::NoLlc(bin.to_path_buf()));
    }
    let opt = bin.join("opt");
    if !opt.is_file() {
        return Err(ProbeError::NoOpt(bin.to_path_buf()));
    }
    let out = match Command::new(&llc).arg("--version").output() {
        Ok(out) => out,
        Err(source) => return Err(ProbeError::NotRunnable { llc, source }),
    };
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let Some(version) = version_from_output(&text) else {
        return Err(ProbeError::NoVersion(llc));
    };
    if version.major < MIN_MAJOR {
        return Err(ProbeError::TooOld { llc, version });
    }
    if !has_nvptx(&text) {
        return Err(ProbeError::NoNvptx { llc, version });
    }
    let mt = bin.join("mlir-translate");
    Ok(LlvmInstall {
        bin: bin.to_path_buf(),
        version,
        mlir_translate: mt.is_file().then_some(mt),
    })
}

/// The folders to probe, in order (see the module documentation).
pub fn candidate_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(list) = std::env::var_os("TCGEN05_LLVM") {
        for p in std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()) {
            if p.join("bin/llc").is_file() {
                out.push(p.join("bin"));
            } else {
                out.push(p);
            }
        }
    }
    let prefix = std::env::var_os("TCGEN05_LLVM_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib"));
    let mut debian: Vec<PathBuf> = std::fs::read_dir(&prefix)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("llvm-"))
                })
                .map(|p| p.join("bin"))
                .filter(|b| b.join("llc").is_file())
                .collect()
        })
        .unwrap_or_default();
    debian.sort();
    out.extend(debian);
    out
}

/// Every usable install, oldest first, one per full version, and the folders that could not be
/// used with the reason.
pub fn discover() -> (Vec<LlvmInstall>, Vec<Problem>) {
    let mut found: Vec<LlvmInstall> = Vec::new();
    let mut problems = Vec::new();
    for bin in candidate_dirs() {
        match probe(&bin) {
            Ok(i) => {
                if !found.iter().any(|f| f.version == i.version) {
                    found.push(i);
                }
            }
            Err(reason) => problems.push(Problem {
                bin,
                reason: reason.to_string(),
            }),
        }
    }
    found.sort_by_key(|i| i.version);
    (found, problems)
}

/// Every usable install (see [`discover`]).
pub fn installed() -> Vec<LlvmInstall> {
    discover().0
}

/// Why no LLVM target is available: the problems found, or how to install one.
pub fn none_reason(problems: &[Problem]) -> String {
    let mut s = String::from(
        "no LLVM with the NVPTX back end found: run scripts/setup-llvm (Debian packages llvm-22 \
         and mlir-22-tools), or name install folders in TCGEN05_LLVM=/path/a:/path/b",
    );
    for p in problems {
        s.push_str(&format!("; {}: {}", p.bin.display(), p.reason));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_from_every_known_banner() {
        // The banners of the Debian and upstream builds.
        let debian = "Debian LLVM version 22.1.8\n  Optimized build.\n";
        assert_eq!(version_from_output(debian), ToolVersion::parse("22.1.8"));
        let git = "LLVM (http://llvm.org/):\n  LLVM version 23.0.0git\n";
        assert_eq!(version_from_output(git), ToolVersion::parse("23.0.0"));
        assert_eq!(version_from_output("clang version 18"), None);
        assert!(has_nvptx(
            "  Registered Targets:\n    nvptx64     - NVIDIA PTX 64-bit\n"
        ));
        assert!(!has_nvptx(
            "  Registered Targets:\n    x86-64 - 64-bit X86\n"
        ));
    }

    #[test]
    fn a_folder_without_tools_is_a_problem_not_a_panic() {
        let d = tempfile::tempdir().unwrap();
        let e = probe(d.path()).unwrap_err().to_string();
        assert!(e.contains("no llc"), "{e}");
        std::fs::write(d.path().join("llc"), "").unwrap();
        let e = probe(d.path()).unwrap_err().to_string();
        assert!(e.contains("no opt"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_broken_llc_is_reported_with_its_path() {
        use std::os::unix::fs::PermissionsExt as _;
        let d = tempfile::tempdir().unwrap();
        for tool in ["llc", "opt"] {
            let p = d.path().join(tool);
            std::fs::write(&p, "#!/bin/sh\necho garbage\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let e = probe(d.path()).unwrap_err().to_string();
        assert!(e.contains("did not print"), "{e}");
        assert!(e.contains(&d.path().display().to_string()), "{e}");
        // A version before the tcgen05 intrinsics, and one without the NVPTX back end.
        let llc = d.path().join("llc");
        let banner = |v: &str, targets: &str| {
            format!(
                "#!/bin/sh\necho 'LLVM version {v}'\necho '  Registered Targets:'\necho '    {targets}'\n"
            )
        };
        std::fs::write(&llc, banner("14.0.6", "nvptx64 - NVIDIA PTX 64-bit")).unwrap();
        let e = probe(d.path()).unwrap_err().to_string();
        assert!(e.contains("older than the tcgen05 intrinsics"), "{e}");
        std::fs::write(&llc, banner("22.1.8", "x86-64 - 64-bit X86")).unwrap();
        let e = probe(d.path()).unwrap_err().to_string();
        assert!(e.contains("without the NVPTX back end"), "{e}");
        std::fs::write(&llc, banner("22.1.8", "nvptx64 - NVIDIA PTX 64-bit")).unwrap();
        let ok = probe(d.path()).unwrap();
        assert_eq!(ok.version.major, 22);
        assert!(ok.mlir_translate.is_none());
    }
}
