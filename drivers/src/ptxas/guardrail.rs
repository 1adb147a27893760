//! The guardrail compile mode: `ptxas -g-tmem-access-check` inserts run-time
//! checks of tcgen05 TMEM use that trap on violation. The hardware target compiles with it to
//! turn silent protocol errors into traps it can classify.
//!
//! Measured on the installed wheels (12.8.93, 12.9.86, 13.0.88, 13.5.37, sm_100a): every one
//! accepts `-g-tmem-access-check`; 13.0 and 13.5 also know `-gno-tmem-access-check`, 12.x do
//! not (`fatal : Unknown option`). Without the flag every version still checks dealloc
//! (`col_being_dealloced_not_returned_by_alloc`, `unallocated_columns_being_dealloced`; 12.x and
//! 13.0 also `phase_invalid_during_alloc`). The trap routines are named
//! `__cuda_sm10x_tcgen05_guardrail_trap_<kind>`; [`TRAP_KINDS`] lists the kinds seen.

use super::batch::compile_one;
use super::install::{PtxasInstall, installed};
use super::run::{CompileOptions, Scratch, module_target};
use super::verdict::CompileVerdict;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// Trap kinds (suffixes of `__cuda_sm10x_tcgen05_guardrail_trap_<kind>`) found in cubins built
/// with `-g-tmem-access-check` by the installed versions, with what each checks (from its name).
pub const TRAP_KINDS: &[(&str, &str)] = &[
    (
        "access_out_of_physical_bounds",
        "ld/st/mma/cp address outside the 128x512 TMEM",
    ),
    (
        "allocation_granularity_invalid",
        "nCols not a valid allocation size",
    ),
    (
        "col_being_dealloced_not_returned_by_alloc",
        "dealloc of an address alloc did not return",
    ),
    (
        "current_warp_owner_invalid",
        "warp accesses lanes outside its quarter",
    ),
    (
        "invalid_datapath_alignment",
        "lane alignment of a 16-lane or half-datapath access",
    ),
    (
        "phase_invalid_during_alloc",
        "alloc in an invalid phase (e.g. after relinquish)",
    ),
    (
        "sparse_mismatch_between_idesc_mod",
        "idesc sparse bit disagrees with .sp (12.9+)",
    ),
    (
        "unallocated_columns_access",
        "access to columns that are not allocated",
    ),
    (
        "unallocated_columns_being_dealloced",
        "dealloc of columns that are not allocated",
    ),
];

/// The flag.
pub const FLAG: &str = "-g-tmem-access-check";

/// A tiny sm_100a module with one alloc, for probing flags.
const PROBE: &str = ".version 8.6\n.target sm_100a\n.address_size 64\n.shared .align 16 .b32 s[1];\n\
.visible .entry k()\n{\n\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [s], 32;\n\
\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n\tret;\n}\n";

/// Whether `install` accepts `-g-tmem-access-check` (probed once per binary).
pub fn supported(install: &PtxasInstall) -> bool {
    static CACHE: Mutex<Option<HashMap<PathBuf, bool>>> = Mutex::new(None);
    if let Some(v) = CACHE
        .lock()
        .ok()
        .and_then(|c| c.as_ref().and_then(|m| m.get(&install.path).copied()))
    {
        return v;
    }
    let opts = CompileOptions {
        guardrail: true,
        ..CompileOptions::default()
    };
    let ok = matches!(compile_one(install, PROBE, &opts), Ok(v) if v.accepted());
    if let Ok(mut c) = CACHE.lock() {
        c.get_or_insert_with(HashMap::new)
            .insert(install.path.clone(), ok);
    }
    ok
}

/// A compiled cubin, or why there is none.
#[derive(Debug, Clone)]
pub enum Cubin {
    /// The cubin bytes, and the ptxas that built it.
    Built {
        /// ELF bytes.
        bytes: Vec<u8>,
        /// Which ptxas.
        ptxas: String,
        /// Whether the guardrails are compiled in.
        guardrail: bool,
    },
    /// ptxas did not accept the module.
    NotBuilt(CompileVerdict),
}

/// The newest install that knows `arch` (e.g. `sm_100a`; sm_110a needs 13.0+, sm_103a 12.9+).
pub fn newest_for(arch: &str) -> Option<PtxasInstall> {
    let probe = PROBE
        .replace("sm_100a", arch)
        .replace(".version 8.6", ".version 8.8");
    installed().into_iter().rev().find(
        |i| matches!(compile_one(i, &probe, &CompileOptions::default()), Ok(v) if v.accepted()),
    )
}

/// Compiles `ptx` to a cubin for the hardware target, with the TMEM guardrails when
/// `guardrail` is set and the ptxas supports them (check [`Cubin::Built::guardrail`]).
/// `arch` defaults to the module's `.target`.
pub fn compile_cubin(
    install: &PtxasInstall,
    ptx: &str,
    arch: Option<&str>,
    guardrail: bool,
) -> std::io::Result<Cubin> {
    let scratch = Scratch::new()?;
    let out = scratch.path("out.cubin");
    let guardrail = guardrail && supported(install);
    let opts = CompileOptions {
        arch: arch
            .map(str::to_string)
            .or_else(|| module_target(ptx).map(str::to_string)),
        guardrail,
        output: Some(out.clone()),
        ..CompileOptions::default()
    };
    let v = compile_one(install, ptx, &opts)?;
    if !v.accepted() {
        return Ok(Cubin::NotBuilt(v));
    }
    Ok(Cubin::Built {
        bytes: std::fs::read(&out)?,
        ptxas: install.name(),
        guardrail,
    })
}
