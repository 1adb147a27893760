//! How the user runs this program, so that printed commands (a finding's reproducer) work as
//! printed from the folder the user is in: `tcgen05-fuzz` where that name on `PATH` is this
//! executable (`cargo install --path .`), the `cargo run` command that built it where it runs
//! from a checkout's `target/` folder, else the executable's path.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use tcgen05_drivers::store::shell_word;

/// The program's name once installed.
pub const NAME: &str = "tcgen05-fuzz";

/// How to run this program from the current folder (module docs).
pub fn current() -> String {
    let Ok(exe) = std::env::current_exe() else {
        return NAME.to_string();
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    invocation_for(&exe, &cwd, std::env::var_os("PATH").as_deref())
}

/// [`current`] for an executable `exe`, run from `cwd`, with this `PATH`.
pub fn invocation_for(exe: &Path, cwd: &Path, path_var: Option<&OsStr>) -> String {
    let exe = canonical(exe);
    if let Some(paths) = path_var {
        let on_path = std::env::split_paths(paths)
            .map(|d| d.join(NAME))
            .find(|p| p.is_file());
        if on_path.is_some_and(|p| canonical(&p) == exe) {
            return NAME.to_string();
        }
    }
    if let Some((checkout, profile)) = cargo_build_of(&exe) {
        let profile_flag = match profile.as_str() {
            "debug" => String::new(),
            "release" => " --release".to_string(),
            other => format!(" --profile {other}"),
        };
        let cwd = canonical(cwd);
        let manifest = if cwd.starts_with(&checkout) {
            String::new()
        } else {
            format!(
                " --manifest-path {}",
                shell_word(&checkout.join("Cargo.toml").display().to_string())
            )
        };
        return format!("cargo run{manifest}{profile_flag} --");
    }
    shell_word(&exe.display().to_string())
}

/// The checkout and profile folder name of an executable cargo built in place:
/// `<checkout>/target/<profile>/tcgen05-fuzz`, where `<checkout>` holds a `Cargo.toml`.
fn cargo_build_of(exe: &Path) -> Option<(PathBuf, String)> {
    let profile_dir = exe.parent()?;
    let target = profile_dir.parent()?;
    let checkout = target.parent()?;
    if target.file_name() != Some(OsStr::new("target")) || !checkout.join("Cargo.toml").is_file() {
        return None;
    }
    let profile = profile_dir.file_name()?.to_string_lossy().into_owned();
    Some((checkout.to_path_buf(), profile))
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake checkout: `<tmp>/Cargo.toml` and `<tmp>/target/<profile>/tcgen05-fuzz`.
    fn checkout(profile: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Cargo.toml"), "[package]\n").unwrap();
        let bin = d.path().join("target").join(profile);
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join(NAME);
        std::fs::write(&exe, b"").unwrap();
        (d, exe)
    }

    #[test]
    fn a_cargo_build_is_rerun_with_the_same_cargo_command() {
        let (d, exe) = checkout("release");
        assert_eq!(
            invocation_for(&exe, d.path(), None),
            "cargo run --release --"
        );
        let sub = d.path().join("out");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(invocation_for(&exe, &sub, None), "cargo run --release --");
        let (d, exe) = checkout("debug");
        assert_eq!(invocation_for(&exe, d.path(), None), "cargo run --");
        let (d, exe) = checkout("campaign");
        assert_eq!(
            invocation_for(&exe, d.path(), None),
            "cargo run --profile campaign --"
        );
    }

    #[test]
    fn outside_the_checkout_cargo_is_given_the_manifest() {
        let (d, exe) = checkout("release");
        let elsewhere = tempfile::tempdir().unwrap();
        let manifest = canonical(d.path()).join("Cargo.toml");
        assert_eq!(
            invocation_for(&exe, elsewhere.path(), None),
            format!(
                "cargo run --manifest-path {} --release --",
                shell_word(&manifest.display().to_string())
            )
        );
    }

    #[test]
    fn an_installed_program_is_run_by_name() {
        let (d, exe) = checkout("release");
        let path = std::env::join_paths([exe.parent().unwrap()]).unwrap();
        assert_eq!(invocation_for(&exe, d.path(), Some(&path)), NAME);
        // Another tcgen05-fuzz on PATH is not this one.
        let (_other, other_exe) = checkout("release");
        let path = std::env::join_paths([other_exe.parent().unwrap()]).unwrap();
        assert_eq!(
            invocation_for(&exe, d.path(), Some(&path)),
            "cargo run --release --"
        );
    }

    #[test]
    fn any_other_executable_is_run_by_its_path() {
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join(NAME);
        std::fs::write(&exe, b"").unwrap();
        assert_eq!(
            invocation_for(&exe, d.path(), None),
            shell_word(&canonical(&exe).display().to_string())
        );
    }
}
