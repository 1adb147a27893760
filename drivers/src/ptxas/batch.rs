//! Batching: many cases compiled as one module, one entry each.
//!
//! Each case prints as a complete module (`tcgen05_ir::ptx::emit`). To merge modules with the
//! same `.version` and `.target`, every module-scope symbol of case `k` gets the prefix `c<k>_`:
//! the printer's module-scope names are `tc_kernel`, `tc_slot`, `tc_mbar`, `tc_data<n>`,
//! `tc_scratch` and `f<n>`. Labels, registers and parameters are function-scoped in PTX and
//! stay as they are. Diagnostics of the merged file name its lines; a line map turns each into
//! (case, line of that case's own module).
//!
//! A batch that ptxas rejects is split until each case has its own verdict: cases with errors
//! mapped to them are rejected, the rest are compiled again as a smaller batch; errors that map
//! to no case (or a crash or timeout) bisect the batch. A fatal error about the header
//! (`.version`, `.target`) holds for every case of the batch.

use super::install::PtxasInstall;
use super::run::{
    CompileOptions, Diagnostic, RawRun, Scratch, Severity, module_target, module_version, run_ptxas,
};
use super::verdict::{CaseDiagnostic, CompileVerdict, classify_single, locate};
use std::collections::BTreeMap;

/// Module-scope symbol names the printer uses (`tcgen05_ir::ptx::emit`).
fn is_module_symbol(tok: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(tok, "tc_kernel" | "tc_slot" | "tc_mbar" | "tc_scratch")
        || tok.strip_prefix("tc_data").is_some_and(digits)
        || tok.strip_prefix('f').is_some_and(digits)
}

/// Prefixes every module-scope symbol of one line with `prefix`. A token counts only when it
/// is not preceded by `.`, `%`, `:` (qualifiers such as `.f16`, `::f16`, registers `%f1`) and
/// not part of a longer identifier.
pub fn rename_line(line: &str, prefix: &str, out: &mut String) {
    let b = line.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut i = 0;
    while i < b.len() {
        if ident(b[i]) {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            let tok = &line[start..i];
            let prev = if start == 0 { b' ' } else { b[start - 1] };
            if !matches!(prev, b'.' | b'%' | b':') && is_module_symbol(tok) {
                out.push_str(prefix);
            }
            out.push_str(tok);
        } else {
            let start = i;
            while i < b.len() && !ident(b[i]) {
                i += 1;
            }
            out.push_str(&line[start..i]);
        }
    }
}

fn is_header_line(l: &str) -> bool {
    let t = l.trim_start();
    t.starts_with(".version") || t.starts_with(".target") || t.starts_with(".address_size")
}

/// A merged module and its line map.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The module text.
    pub text: String,
    /// For each line (index = line − 1): the case index in the batch and the line in that
    /// case's own module, or `None` for the shared header.
    pub lines: Vec<Option<(u32, u32)>>,
}

impl Merged {
    /// (case, line in the case's module) of a line of the merged module.
    pub fn map(&self, line: u32) -> Option<(u32, u32)> {
        self.lines
            .get((line as usize).checked_sub(1)?)
            .copied()
            .flatten()
    }
}

/// Why modules cannot be merged ([`merge`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// No module was given.
    #[error("nothing to merge")]
    Empty,
    /// Module `k` has another `.version` or `.target` than module 0.
    #[error("module {0} has a different .version/.target from module 0")]
    HeaderDiffers(usize),
}

/// Merges modules that share `.version` and `.target` into one; case `k` gets the prefix
/// `c<k>_`. `Err` names the first module whose header differs from the first one's.
pub fn merge(modules: &[&str]) -> Result<Merged, MergeError> {
    let first = modules.first().ok_or(MergeError::Empty)?;
    let key = (module_version(first), module_target(first));
    let mut text = String::with_capacity(modules.iter().map(|m| m.len() + 64).sum());
    let mut lines = Vec::new();
    for l in first.lines().filter(|l| is_header_line(l)) {
        text.push_str(l);
        text.push('\n');
        lines.push(None);
    }
    for (k, m) in modules.iter().enumerate() {
        if (module_version(m), module_target(m)) != key {
            return Err(MergeError::HeaderDiffers(k));
        }
        let prefix = format!("c{k}_");
        for (i, l) in m.lines().enumerate() {
            if is_header_line(l) {
                continue;
            }
            rename_line(l, &prefix, &mut text);
            text.push('\n');
            lines.push(Some((k as u32, i as u32 + 1)));
        }
    }
    Ok(Merged { text, lines })
}

/// The case `k` of a function-level diagnostic that names a renamed symbol (`Function
/// 'c3_tc_kernel' uses ...`), which has no line.
fn case_named_in(message: &str) -> Option<u32> {
    message.split('\'').skip(1).step_by(2).find_map(|name| {
        let rest = name.strip_prefix('c')?;
        let (k, sym) = rest.split_once('_')?;
        (is_module_symbol(sym) && k.bytes().all(|b| b.is_ascii_digit()))
            .then(|| k.parse().ok())
            .flatten()
    })
}

/// How many ptxas processes a [`compile_batched`] call ran, and on how many cases each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Processes run.
    pub processes: usize,
    /// Cases compiled per process, summed (> cases when batches were split).
    pub case_compiles: usize,
    /// Batches that had to be split.
    pub splits: usize,
}

/// Compiles one module on its own.
pub fn compile_one(
    install: &PtxasInstall,
    module: &str,
    opts: &CompileOptions,
) -> std::io::Result<CompileVerdict> {
    let scratch = Scratch::new()?;
    compile_one_in(&scratch, install, module, opts)
}

fn arch_of<'a>(module: &'a str, opts: &'a CompileOptions) -> &'a str {
    opts.arch
        .as_deref()
        .or_else(|| module_target(module))
        .unwrap_or("sm_100a")
}

fn compile_one_in(
    scratch: &Scratch,
    install: &PtxasInstall,
    module: &str,
    opts: &CompileOptions,
) -> std::io::Result<CompileVerdict> {
    let path = scratch.write("ptx", module)?;
    let raw = run_ptxas(&install.path, &path, arch_of(module, opts), opts)?;
    let _ = std::fs::remove_file(&path);
    Ok(classify_single(&raw, module))
}

/// Compiles `modules` with batches of at most `batch_size` cases (1: one process per case),
/// grouping by `.version`/`.target`. Returns one verdict per module, in order.
pub fn compile_batched(
    install: &PtxasInstall,
    modules: &[String],
    batch_size: usize,
    opts: &CompileOptions,
) -> std::io::Result<(Vec<CompileVerdict>, BatchStats)> {
    let scratch = Scratch::new()?;
    let mut stats = BatchStats::default();
    let mut out: Vec<Option<CompileVerdict>> = vec![None; modules.len()];
    let mut groups: BTreeMap<(Option<&str>, Option<&str>), Vec<usize>> = BTreeMap::new();
    for (i, m) in modules.iter().enumerate() {
        groups
            .entry((module_version(m), module_target(m)))
            .or_default()
            .push(i);
    }
    for idx in groups.into_values() {
        for chunk in idx.chunks(batch_size.max(1)) {
            resolve(
                &scratch, install, modules, chunk, opts, &mut out, &mut stats,
            )?;
        }
    }
    Ok((
        out.into_iter()
            .map(|v| v.expect("every case resolved"))
            .collect(),
        stats,
    ))
}

fn resolve(
    scratch: &Scratch,
    install: &PtxasInstall,
    modules: &[String],
    idx: &[usize],
    opts: &CompileOptions,
    out: &mut [Option<CompileVerdict>],
    stats: &mut BatchStats,
) -> std::io::Result<()> {
    if idx.is_empty() {
        return Ok(());
    }
    stats.processes += 1;
    stats.case_compiles += idx.len();
    if idx.len() == 1 {
        out[idx[0]] = Some(compile_one_in(scratch, install, &modules[idx[0]], opts)?);
        return Ok(());
    }
    let texts: Vec<&str> = idx.iter().map(|&i| modules[i].as_str()).collect();
    let merged = merge(&texts).map_err(std::io::Error::other)?;
    let path = scratch.write("ptx", &merged.text)?;
    let raw = run_ptxas(&install.path, &path, arch_of(texts[0], opts), opts)?;
    let _ = std::fs::remove_file(&path);
    let bisect =
        |out: &mut [Option<CompileVerdict>], stats: &mut BatchStats| -> std::io::Result<()> {
            stats.splits += 1;
            let (a, b) = idx.split_at(idx.len() / 2);
            resolve(scratch, install, modules, a, opts, out, stats)?;
            resolve(scratch, install, modules, b, opts, out, stats)
        };
    let RawRun::Exited {
        code, diagnostics, ..
    } = &raw
    else {
        return bisect(out, stats);
    };
    let diags: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| !d.is_abort_summary())
        .collect();
    if diags.iter().any(|d| d.is_internal_error()) {
        return bisect(out, stats);
    }
    // A header-level fatal holds for every case of the batch (they share the header). Its line,
    // if it names one, is the merged header's; each case gets the line of the same directive
    // in its own module, as a compile of that module alone reports it.
    let header_diag = |h: &Diagnostic, i: usize| {
        let directive = h
            .line
            .and_then(|l| merged.text.lines().nth((l as usize).checked_sub(1)?))
            .map(str::trim);
        let line = directive.and_then(|dir| {
            modules[i]
                .lines()
                .position(|l| l.trim() == dir)
                .map(|k| k as u32 + 1)
        });
        CaseDiagnostic {
            diag: Diagnostic { line, ..h.clone() },
            instruction: line.and_then(|l| locate(&modules[i], l)),
        }
    };
    let mut header = false;
    // A fatal error of one case (a parse error) may stop ptxas before it checks later cases.
    let mut stopped = false;
    let mut per_case: BTreeMap<usize, Vec<CaseDiagnostic>> = BTreeMap::new();
    for d in &diags {
        if d.is_header_level() {
            header = true;
            for &i in idx {
                per_case.entry(i).or_default().push(header_diag(d, i));
            }
            continue;
        }
        stopped |= d.severity == Severity::Fatal;
        let by_line = d
            .line
            .and_then(|l| merged.map(l))
            .map(|(k, line)| (k, Some(line)));
        match by_line.or_else(|| {
            case_named_in(&d.message)
                .filter(|&k| (k as usize) < idx.len())
                .map(|k| (k, None))
        }) {
            Some((k, line)) => {
                let case = idx[k as usize];
                let message = d.message.replace(&format!("'c{k}_"), "'");
                per_case.entry(case).or_default().push(CaseDiagnostic {
                    diag: Diagnostic {
                        line,
                        message,
                        ..(*d).clone()
                    },
                    instruction: line.and_then(|l| locate(&modules[case], l)),
                });
            }
            // Not attributable to one case: only smaller batches can say whose it is.
            None => return bisect(out, stats),
        }
    }
    if header {
        // Every case is rejected. A case with diagnostics of its own has them all; one with
        // the header's alone has no others, unless ptxas stopped early.
        let mut rest = Vec::new();
        for &i in idx {
            let d = per_case.remove(&i).unwrap_or_default();
            if stopped && d.iter().all(|x| x.diag.is_header_level()) {
                rest.push(i);
            } else {
                out[i] = Some(CompileVerdict::Rejected(d));
            }
        }
        if !rest.is_empty() {
            stats.splits += 1;
            resolve(scratch, install, modules, &rest, opts, out, stats)?;
        }
        return Ok(());
    }
    if *code == 0 {
        for &i in idx {
            out[i] = Some(match per_case.remove(&i) {
                Some(w) => CompileVerdict::AcceptedWithWarnings(w),
                None => CompileVerdict::Accepted,
            });
        }
        return Ok(());
    }
    let mut rest = Vec::new();
    for &i in idx {
        match per_case.remove(&i) {
            Some(d) if d.iter().any(|d| d.diag.severity >= Severity::Error) => {
                out[i] = Some(CompileVerdict::Rejected(d))
            }
            // Warnings only, or nothing: ptxas may have stopped before this case was
            // checked in full, so it needs a batch of its own kind.
            _ => rest.push(i),
        }
    }
    if rest.len() == idx.len() {
        return bisect(out, stats);
    }
    stats.splits += 1;
    resolve(scratch, install, modules, &rest, opts, out, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renaming_touches_module_symbols_only() {
        let mut s = String::new();
        rename_line(
            "\tmov.u32 %r1, tc_data0; call f1, (%obsw); cvt.rn.f16.s32 %h1, %r2; tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1; mov.b32 %f1, 0f3F800000; ld.shared.u32 %r9, [tc_slot+4]; $W0: .func f0(.param .u64 obsw)",
            "c3_",
            &mut s,
        );
        assert_eq!(
            s,
            "\tmov.u32 %r1, c3_tc_data0; call c3_f1, (%obsw); cvt.rn.f16.s32 %h1, %r2; tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1; mov.b32 %f1, 0f3F800000; ld.shared.u32 %r9, [c3_tc_slot+4]; $W0: .func c3_f0(.param .u64 obsw)"
        );
        let mut t = String::new();
        rename_line(".visible .entry tc_kernel(.param .u64 obs)", "c0_", &mut t);
        assert_eq!(t, ".visible .entry c0_tc_kernel(.param .u64 obs)");
    }

    #[test]
    fn function_level_messages_name_their_case() {
        let m = "Function 'c12_tc_kernel' uses single CTA(.cta_group::1) and CTA pair granularity(.cta_group::2)";
        assert_eq!(case_named_in(m), Some(12));
        assert_eq!(case_named_in("Function 'tc_kernel' uses too much"), None);
        assert_eq!(case_named_in("'c1_other' is odd"), None);
    }

    #[test]
    fn merged_lines_map_back_to_each_case() {
        let a = "//\n.version 8.6\n.target sm_100a\n.address_size 64\nA1\nA2\n";
        let b = "//\n.version 8.6\n.target sm_100a\n.address_size 64\nB1\n";
        let m = merge(&[a, b]).unwrap();
        let lines: Vec<&str> = m.text.lines().collect();
        assert_eq!(
            &lines[..3],
            &[".version 8.6", ".target sm_100a", ".address_size 64"]
        );
        // Line 5 of the merged text is "A1", line 5 of case 0; "B1" is line 5 of case 1.
        let find = |s: &str| lines.iter().position(|l| *l == s).unwrap() as u32 + 1;
        assert_eq!(m.map(find("A1")), Some((0, 5)));
        assert_eq!(m.map(find("A2")), Some((0, 6)));
        assert_eq!(m.map(find("B1")), Some((1, 5)));
        assert_eq!(m.map(1), None);
        assert_eq!(m.map(0), None);
        let c = "//\n.version 8.7\n.target sm_100a\n";
        assert_eq!(merge(&[a, c]).err(), Some(MergeError::HeaderDiffers(1)));
        assert_eq!(merge(&[]).err(), Some(MergeError::Empty));
    }
}
