//! Finding ptxas binaries and their versions.
//!
//! Three sources, in this order (docs/architecture.md, "Targets"):
//! 1. the install folder made by `scripts/setup-ptxas`: `<root>/.tools/cuda/<ver>/bin/ptxas`,
//!    where `<root>` is `$TCGEN05_ROOT`, or else the first ancestor of the current directory or
//!    of the running executable's directory that holds `.tools/cuda`;
//! 2. `$TCGEN05_PTXAS`: binaries separated by `:`;
//! 3. `ptxas` on `$PATH`.
//!
//! Every binary is asked for its version (`ptxas --version` prints
//! `Cuda compilation tools, release 12.8, V12.8.93`); two paths that report the same full
//! version are the same target, and the first one found is kept.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::SystemTime;

/// A ptxas release, e.g. 12.8.93.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolVersion {
    /// Major (12, 13).
    pub major: u16,
    /// Minor.
    pub minor: u16,
    /// Patch (the `V12.8.93` build number); 0 when ptxas did not say.
    pub patch: u16,
}

impl ToolVersion {
    /// `major.minor`, the label of the target (`ptxas@12.8`).
    pub fn label(&self) -> String {
        format!("{}.{}", self.major, self.minor)
    }

    /// Parses `12.8`, `12.8.93` or `V12.8.93`.
    pub fn parse(s: &str) -> Option<ToolVersion> {
        let s = s.trim().trim_start_matches(['V', 'v']);
        let mut it = s.split('.');
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        let patch = match it.next() {
            Some(p) => p.parse().ok()?,
            None => 0,
        };
        if it.next().is_some() {
            return None;
        }
        Some(ToolVersion {
            major,
            minor,
            patch,
        })
    }

    /// Reads the version out of `ptxas --version` output
    /// (`Cuda compilation tools, release 12.8, V12.8.93`).
    pub fn from_version_output(out: &str) -> Option<ToolVersion> {
        let line = out.lines().find(|l| l.contains("Cuda compilation tools"))?;
        if let Some(v) = line.split(", ").find_map(|f| f.strip_prefix('V')) {
            return ToolVersion::parse(v);
        }
        let rel = line.split("release ").nth(1)?;
        ToolVersion::parse(rel.split(',').next()?)
    }
}

impl fmt::Display for ToolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Where a ptxas binary was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `<root>/.tools/cuda/<ver>/bin/ptxas`, installed by `scripts/setup-ptxas`.
    SetupScript,
    /// Named by `$TCGEN05_PTXAS`.
    Env,
    /// `ptxas` on `$PATH`.
    Path,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::SetupScript => "scripts/setup-ptxas",
            Source::Env => "$TCGEN05_PTXAS",
            Source::Path => "$PATH",
        })
    }
}

/// One installed ptxas: a `ptxas@<major.minor>` target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxasInstall {
    /// The binary.
    pub path: PathBuf,
    /// Its version, from `ptxas --version`.
    pub version: ToolVersion,
    /// Where it was found.
    pub source: Source,
    /// The wheel version from the install folder's `VERSION` file, if any (e.g. `12.8.93`).
    pub wheel: Option<String>,
}

impl PtxasInstall {
    /// The target name, `ptxas@12.8`.
    pub fn name(&self) -> String {
        format!("ptxas@{}", self.version.label())
    }

    /// nvdisasm next to this ptxas, or in any other install folder (13.x wheels ship it).
    pub fn disassembler(&self) -> Option<PathBuf> {
        disassembler()
    }
}

/// The workspace root: `$TCGEN05_ROOT`, else the first ancestor of the current directory, then
/// of the executable's directory, that holds `.tools/cuda`.
pub fn workspace_root() -> Option<PathBuf> {
    if let Some(r) = std::env::var_os("TCGEN05_ROOT").filter(|r| !r.is_empty()) {
        return Some(PathBuf::from(r));
    }
    let starts = [
        std::env::current_dir().ok(),
        std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf)),
    ];
    starts.into_iter().flatten().find_map(|s| {
        s.ancestors()
            .find(|a| a.join(".tools/cuda").is_dir())
            .map(Path::to_path_buf)
    })
}

/// The install folder `<root>/.tools/cuda`, if there is one.
pub fn tools_dir() -> Option<PathBuf> {
    workspace_root()
        .map(|r| r.join(".tools/cuda"))
        .filter(|d| d.is_dir())
}

/// Why a ptxas binary gives no version ([`probe_version`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// The binary cannot be run.
    #[error("cannot run `{} --version`: {error}", path.display())]
    CannotRun {
        /// The binary.
        path: PathBuf,
        /// Why (the operating system's words).
        error: String,
    },
    /// Its `--version` output has no version line.
    #[error(
        "`{} --version` did not print `Cuda compilation tools, release X.Y, VX.Y.Z`",
        path.display()
    )]
    NoVersion {
        /// The binary.
        path: PathBuf,
    },
}

/// Why a ptxas target name selects no install ([`select`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// No ptxas is installed at all.
    #[error(
        "no ptxas found: run scripts/setup-ptxas, or name binaries in TCGEN05_PTXAS=/path/a:/path/b, \
         or put ptxas on PATH (set TCGEN05_ROOT if the workspace is elsewhere)"
    )]
    NoPtxas,
    /// What follows `ptxas@` is not a version.
    #[error("`{0}` is not a version: write ptxas@<major.minor>, e.g. ptxas@12.9")]
    NotAVersion(String),
    /// No install has the version asked for.
    #[error("no ptxas {want} is installed (installed: {})", installed.join(", "))]
    NotInstalled {
        /// The version asked for.
        want: String,
        /// The target names of the installs there are.
        installed: Vec<String>,
    },
}

/// Runs `ptxas --version` and parses it. The answer is remembered per path and modification
/// time, so listing the installs again (`expand`, `build`, `candidates`) runs no process.
pub fn probe_version(path: &Path) -> Result<ToolVersion, ProbeError> {
    type Seen = HashMap<PathBuf, (Option<SystemTime>, Result<ToolVersion, ProbeError>)>;
    static SEEN: Mutex<Option<Seen>> = Mutex::new(None);
    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    if let Ok(seen) = SEEN.lock()
        && let Some((t, r)) = seen.as_ref().and_then(|m| m.get(path))
        && mtime.is_some()
        && *t == mtime
    {
        return r.clone();
    }
    let r = probe_version_now(path);
    if let Ok(mut seen) = SEEN.lock() {
        seen.get_or_insert_with(HashMap::new)
            .insert(path.to_path_buf(), (mtime, r.clone()));
    }
    r
}

fn probe_version_now(path: &Path) -> Result<ToolVersion, ProbeError> {
    let out = Command::new(path)
        .arg("--version")
        .output()
        .map_err(|e| ProbeError::CannotRun {
            path: path.to_path_buf(),
            error: e.to_string(),
        })?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    ToolVersion::from_version_output(&text).ok_or_else(|| ProbeError::NoVersion {
        path: path.to_path_buf(),
    })
}

fn candidates() -> Vec<(PathBuf, Source, Option<String>)> {
    let mut out = Vec::new();
    if let Some(dir) = tools_dir() {
        let mut vers: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        vers.sort();
        for v in vers {
            let bin = v.join("bin/ptxas");
            if bin.is_file() {
                let wheel = std::fs::read_to_string(v.join("VERSION"))
                    .ok()
                    .map(|s| s.trim().to_string());
                out.push((bin, Source::SetupScript, wheel));
            }
        }
    }
    if let Some(list) = std::env::var_os("TCGEN05_PTXAS") {
        for p in std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()) {
            out.push((p, Source::Env, None));
        }
    }
    if let Some(path) = std::env::var_os("PATH")
        && let Some(p) = std::env::split_paths(&path)
            .map(|d| d.join("ptxas"))
            .find(|p| p.is_file())
    {
        out.push((p, Source::Path, None));
    }
    out
}

/// Every ptxas found, oldest version first, one per full version. Binaries that cannot be run
/// or do not report a version are left out (see [`problems`] for why).
pub fn installed() -> Vec<PtxasInstall> {
    let mut out: Vec<PtxasInstall> = Vec::new();
    for (path, source, wheel) in candidates() {
        if let Ok(version) = probe_version(&path)
            && !out.iter().any(|i| i.version == version)
        {
            out.push(PtxasInstall {
                path,
                version,
                source,
                wheel,
            });
        }
    }
    out.sort_by_key(|i| i.version);
    out
}

/// The target name of each install, in order: `ptxas@<major.minor>`, or the full
/// `ptxas@<major.minor.patch>` where two installs share a `major.minor` (e.g. a 12.8.61 named
/// by `$TCGEN05_PTXAS` beside the installed 12.8.93), so that every install has a name of its
/// own.
pub fn target_names(installs: &[PtxasInstall]) -> Vec<String> {
    installs
        .iter()
        .map(|i| {
            let shared = installs
                .iter()
                .filter(|j| j.version.label() == i.version.label())
                .count()
                > 1;
            if shared {
                format!("ptxas@{}", i.version)
            } else {
                i.name()
            }
        })
        .collect()
}

/// Binaries that were named or found but could not be used, with the reason.
pub fn problems() -> Vec<(PathBuf, ProbeError)> {
    candidates()
        .into_iter()
        .filter_map(|(path, _, _)| probe_version(&path).err().map(|r| (path, r)))
        .collect()
}

/// Resolves a target name against `installs`: `ptxas` means every install, `ptxas@12.9` the one
/// whose `major.minor` (or full version, `ptxas@12.9.86`) matches. `None` if the name is not a
/// ptxas name at all.
pub fn select(
    name: &str,
    installs: &[PtxasInstall],
) -> Option<Result<Vec<PtxasInstall>, SelectError>> {
    if name == "ptxas" {
        return Some(if installs.is_empty() {
            Err(SelectError::NoPtxas)
        } else {
            Ok(installs.to_vec())
        });
    }
    let want = name.strip_prefix("ptxas@")?;
    let Some(v) = ToolVersion::parse(want) else {
        return Some(Err(SelectError::NotAVersion(want.to_string())));
    };
    let full = want.split('.').count() == 3;
    let hit: Vec<PtxasInstall> = installs
        .iter()
        .filter(|i| {
            i.version.major == v.major
                && i.version.minor == v.minor
                && (!full || i.version.patch == v.patch)
        })
        .cloned()
        .collect();
    Some(match hit.into_iter().next() {
        Some(i) => Ok(vec![i]),
        None => {
            let installed: Vec<String> = installs.iter().map(|i| i.name()).collect();
            Err(if installed.is_empty() {
                SelectError::NoPtxas
            } else {
                SelectError::NotInstalled {
                    want: want.to_string(),
                    installed,
                }
            })
        }
    })
}

/// nvdisasm from the newest install folder that has one.
pub fn disassembler() -> Option<PathBuf> {
    tool_in_installs("nvdisasm")
}

/// cuobjdump from the newest install folder that has one.
pub fn cuobjdump() -> Option<PathBuf> {
    tool_in_installs("cuobjdump")
}

fn tool_in_installs(tool: &str) -> Option<PathBuf> {
    let dir = tools_dir()?;
    let mut vers: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    vers.sort_by_key(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .and_then(ToolVersion::parse)
    });
    vers.into_iter()
        .rev()
        .map(|v| v.join("bin").join(tool))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_output_of_every_known_release_parses() {
        // The line format of `ptxas --version` for CUDA 12.x and 13.x.
        let out = "ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 12.8, V12.8.93\n";
        assert_eq!(
            ToolVersion::from_version_output(out),
            Some(ToolVersion {
                major: 12,
                minor: 8,
                patch: 93
            })
        );
        assert_eq!(
            ToolVersion::from_version_output("Cuda compilation tools, release 13.0"),
            ToolVersion::parse("13.0")
        );
        assert_eq!(ToolVersion::from_version_output("nothing here"), None);
    }

    #[test]
    fn versions_order_numerically_not_textually() {
        let a = ToolVersion::parse("12.9").unwrap();
        let b = ToolVersion::parse("12.10").unwrap();
        let c = ToolVersion::parse("13.0").unwrap();
        assert!(a < b && b < c);
        assert_eq!(ToolVersion::parse("12.x"), None);
        assert_eq!(ToolVersion::parse("1.2.3.4"), None);
    }

    fn fake(v: &str) -> PtxasInstall {
        PtxasInstall {
            path: PathBuf::from(format!("/x/{v}/ptxas")),
            version: ToolVersion::parse(v).unwrap(),
            source: Source::Env,
            wheel: None,
        }
    }

    #[test]
    fn names_select_one_version_or_all() {
        let all = vec![fake("12.8.93"), fake("12.9.86"), fake("13.0.88")];
        assert_eq!(select("ptxas", &all).unwrap().unwrap().len(), 3);
        let one = select("ptxas@12.9", &all).unwrap().unwrap();
        assert_eq!(one[0].version.patch, 86);
        assert!(select("ptxas@12.9.1", &all).unwrap().is_err());
        let e = select("ptxas@11.0", &all).unwrap().unwrap_err();
        assert_eq!(
            e.to_string(),
            "no ptxas 11.0 is installed (installed: ptxas@12.8, ptxas@12.9, ptxas@13.0)"
        );
        assert_eq!(
            select("ptxas@twelve", &all).unwrap().unwrap_err(),
            SelectError::NotAVersion("twelve".into())
        );
        assert!(select("sim", &all).is_none());
        assert_eq!(
            select("ptxas", &[]).unwrap().unwrap_err(),
            SelectError::NoPtxas
        );
        assert!(SelectError::NoPtxas.to_string().starts_with(
            "no ptxas found: run scripts/setup-ptxas, or name binaries in TCGEN05_PTXAS=/path/a:/path/b, or put ptxas on PATH"
        ));
    }

    #[test]
    fn two_builds_of_one_release_get_full_names() {
        let all = vec![fake("12.8.61"), fake("12.8.93"), fake("13.0.88")];
        assert_eq!(
            target_names(&all),
            vec!["ptxas@12.8.61", "ptxas@12.8.93", "ptxas@13.0"]
        );
        // Each full name selects its own build.
        let b = select("ptxas@12.8.93", &all).unwrap().unwrap();
        assert_eq!(b[0].version.patch, 93);
    }
}
