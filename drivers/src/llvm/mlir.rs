//! The MLIR front end: the module `mlir-translate --import-llvm` makes of the lowered LLVM IR,
//! with the tcgen05 intrinsic calls that have an `nvvm` dialect op raised to that op.
//!
//! The importer keeps every tcgen05 intrinsic as `llvm.call_intrinsic "llvm.nvvm.tcgen05..."`.
//! [`raise`] rewrites the calls of alloc, dealloc, relinquish, wait, fence, commit and shift
//! into `nvvm.tcgen05.*` ops (the syntax of MLIR 22's NVVM dialect), so that
//! `mlir-translate --mlir-to-llvmir` exercises the dialect's own translation of them; ld, st,
//! cp and mma stay intrinsic calls.

/// The `nvvm` op text for one imported intrinsic call, or `None` when it has no op here.
/// `args` and `types` are the call's operand list and operand types as printed.
fn op_for(name: &str, args: &[&str], types: &[&str]) -> Option<String> {
    let rest = name.strip_prefix("llvm.nvvm.tcgen05.")?;
    let (base, group) = match rest.rsplit_once('.') {
        Some((b, "cg1")) => (b, ""),
        Some((b, "cg2")) => (b, " {group = #nvvm.cta_group<cta_2>}"),
        _ => (rest, ""),
    };
    let ty = types.join(", ");
    Some(match (base, args) {
        ("alloc" | "alloc.shared", [dst, n]) => {
            format!("nvvm.tcgen05.alloc {dst}, {n}{group} : {ty}")
        }
        ("dealloc", [t, n]) => format!("nvvm.tcgen05.dealloc {t}, {n}{group} : {ty}"),
        ("relinq.alloc.permit", []) => format!("nvvm.tcgen05.relinquish_alloc_permit{group}"),
        ("wait.ld", []) => "nvvm.tcgen05.wait #nvvm.tcgen05_wait<load>".into(),
        ("wait.st", []) => "nvvm.tcgen05.wait #nvvm.tcgen05_wait<store>".into(),
        ("fence.before.thread.sync", []) => "nvvm.tcgen05.fence #nvvm.tcgen05_fence<before>".into(),
        ("fence.after.thread.sync", []) => "nvvm.tcgen05.fence #nvvm.tcgen05_fence<after>".into(),
        ("commit" | "commit.shared", [p]) => format!("nvvm.tcgen05.commit {p}{group} : {ty}"),
        ("commit.mc" | "commit.mc.shared", [p, m]) => {
            format!("nvvm.tcgen05.commit {p}, multicast_mask = {m}{group} : {ty}")
        }
        ("shift.down", [t]) => format!("nvvm.tcgen05.shift {t}{group} : {ty}"),
        _ => return None,
    })
}

fn split_list(s: &str) -> Vec<&str> {
    let s = s.trim();
    if s.is_empty() {
        return vec![];
    }
    s.split(", ").map(str::trim).collect()
}

/// Rewrites the imported module's tcgen05 intrinsic calls that have an `nvvm` op; returns the
/// new text and how many calls were raised. A line it does not recognize stays as it is.
pub fn raise(mlir: &str) -> (String, usize) {
    let mut out = String::with_capacity(mlir.len());
    let mut n = 0;
    for line in mlir.lines() {
        let t = line.trim_start();
        let indent = &line[..line.len() - t.len()];
        let raised = (|| {
            let rest = t.strip_prefix("llvm.call_intrinsic \"")?;
            let (name, rest) = rest.split_once("\"(")?;
            let (args, rest) = rest.split_once(") : (")?;
            let (types, ret) = rest.split_once(") -> ")?;
            if ret.trim() != "()" {
                return None;
            }
            op_for(name, &split_list(args), &split_list(types))
        })();
        match raised {
            Some(op) => {
                out.push_str(indent);
                out.push_str(&op);
                n += 1;
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imported_calls_become_nvvm_ops() {
        // Lines as `mlir-translate --import-llvm` (MLIR 22) prints them.
        let src = "    llvm.call_intrinsic \"llvm.nvvm.tcgen05.alloc.shared.cg1\"(%0, %1) : (!llvm.ptr<3>, i32) -> ()\n    llvm.call_intrinsic \"llvm.nvvm.tcgen05.commit.mc.shared.cg2\"(%2, %3) : (!llvm.ptr<3>, i16) -> ()\n    llvm.call_intrinsic \"llvm.nvvm.tcgen05.wait.ld\"() : () -> ()\n    %18 = llvm.call_intrinsic \"llvm.nvvm.tcgen05.ld.32x32b.x2\"(%17, %2) : (!llvm.ptr<6>, i1) -> vector<2xi32>\n";
        let (out, n) = raise(src);
        assert_eq!(n, 3, "{out}");
        assert!(
            out.contains("    nvvm.tcgen05.alloc %0, %1 : !llvm.ptr<3>, i32\n"),
            "{out}"
        );
        assert!(out.contains(
            "nvvm.tcgen05.commit %2, multicast_mask = %3 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16"
        ), "{out}");
        assert!(
            out.contains("nvvm.tcgen05.wait #nvvm.tcgen05_wait<load>"),
            "{out}"
        );
        // ld has no op here: it stays a call.
        assert!(
            out.contains("llvm.call_intrinsic \"llvm.nvvm.tcgen05.ld.32x32b.x2\""),
            "{out}"
        );
    }
}
