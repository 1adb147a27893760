//! Sets `cfg(tcgen05_no_ptxas)` when no ptxas can be found at build time, and
//! `cfg(tcgen05_no_disassembler)` when no nvdisasm or cuobjdump is in the install folder, so that
//! the tests that need them show as ignored instead of passing without checking anything
//! (docs/ptxas.md). A ptxas installed after the build is seen once `.tools/cuda` changes (or after
//! `touch drivers/build.rs`).
//! Owned by the ptxas target (docs/ptxas.md, "Tests without ptxas"); the fuzz targets' package
//! uses it as its build script too (`build = "../drivers/build.rs"`), for its `ptxas` smoke
//! test (docs/testing.md). Likewise `cfg(tcgen05_no_llvm)` when no `llc` is found where
//! `tcgen05_drivers::llvm::install` looks (`$TCGEN05_LLVM`, `/usr/lib/llvm-*/bin`; docs/llvm.md).
//!
//! ptxas is looked for where `tcgen05_drivers::ptxas::installed` looks: `$TCGEN05_PTXAS`, the
//! install folder of `scripts/setup-ptxas` (`<root>/.tools/cuda/*/bin/ptxas`, `<root>` being
//! `$TCGEN05_ROOT` or the workspace), and `$PATH`. With `CI` set the cfg is never set: CI
//! installs ptxas, and a missing one must fail the tests there, not hide them.

use std::path::{Path, PathBuf};

/// The install folders: under `$TCGEN05_ROOT`, and the first `.tools/cuda` above the package
/// and above the build's output folder. The last one matters where several checkouts share one
/// target folder: cargo may share this script's output between them, and the tests find ptxas
/// above their executable too (`ptxas::install::workspace_root`), so every checkout must get
/// the same answer.
fn tools_dirs() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(r) = std::env::var_os("TCGEN05_ROOT").filter(|r| !r.is_empty()) {
        v.push(PathBuf::from(r).join(".tools/cuda"));
    }
    for var in ["CARGO_MANIFEST_DIR", "OUT_DIR"] {
        if let Some(m) = std::env::var_os(var) {
            let m = PathBuf::from(m);
            if let Some(root) = m.ancestors().find(|a| a.join(".tools/cuda").is_dir()) {
                v.push(root.join(".tools/cuda"));
            }
        }
    }
    v
}

fn found_in(dir: &Path, tool: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.filter_map(Result::ok)
            .any(|e| e.path().join("bin").join(tool).is_file())
    })
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tcgen05_no_ptxas)");
    println!("cargo::rustc-check-cfg=cfg(tcgen05_no_disassembler)");
    println!("cargo::rustc-check-cfg=cfg(tcgen05_no_llvm)");
    for var in ["TCGEN05_PTXAS", "TCGEN05_ROOT", "PATH", "CI"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let dirs = tools_dirs();
    for d in &dirs {
        // A directory's modification time changes when a version folder is added.
        if d.is_dir() {
            println!("cargo::rerun-if-changed={}", d.display());
        }
    }
    let from_env = std::env::var_os("TCGEN05_PTXAS").is_some_and(|list| {
        std::env::split_paths(&list).any(|p| !p.as_os_str().is_empty() && p.is_file())
    });
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("ptxas").is_file()));
    let found = from_env || on_path || dirs.iter().any(|d| found_in(d, "ptxas"));
    let ci = std::env::var_os("CI").is_some();
    if !found && !ci {
        println!("cargo::rustc-cfg=tcgen05_no_ptxas");
    }
    // `ptxas::sass::available`: nvdisasm or cuobjdump from the install folder.
    let dis = dirs
        .iter()
        .any(|d| found_in(d, "nvdisasm") || found_in(d, "cuobjdump"));
    if !dis && !ci {
        println!("cargo::rustc-cfg=tcgen05_no_disassembler");
    }
    if !llvm_found() && !ci {
        println!("cargo::rustc-cfg=tcgen05_no_llvm");
    }
}

/// Whether an `llc` is in `$TCGEN05_LLVM` (folders or their `bin/`) or `/usr/lib/llvm-*/bin`.
fn llvm_found() -> bool {
    println!("cargo::rerun-if-env-changed=TCGEN05_LLVM");
    if Path::new("/usr/lib").is_dir() {
        // Its modification time changes when an llvm-<major> folder is added.
        println!("cargo::rerun-if-changed=/usr/lib");
    }
    let named = std::env::var_os("TCGEN05_LLVM").is_some_and(|list| {
        std::env::split_paths(&list).any(|p| p.join("llc").is_file() || p.join("bin/llc").is_file())
    });
    named
        || std::fs::read_dir("/usr/lib").is_ok_and(|rd| {
            rd.filter_map(Result::ok).any(|e| {
                e.file_name().to_string_lossy().starts_with("llvm-")
                    && e.path().join("bin/llc").is_file()
            })
        })
}
