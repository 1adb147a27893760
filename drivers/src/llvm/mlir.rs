//! The MLIR front end: the module `mlir-translate --import-llvm` makes of the lowered LLVM IR,
//! with the tcgen05 intrinsic calls that have an `nvvm` dialect op raised to that op.
//!
//! The importer keeps every tcgen05 intrinsic as `llvm.call_intrinsic "llvm.nvvm.tcgen05..."`.
//! [`raise`] rewrites them into the `nvvm.tcgen05.*` ops of MLIR 22's NVVM dialect (the syntax
//! `mlir-translate-22` accepts), so that `mlir-translate --mlir-to-llvmir` exercises the
//! dialect's own verifiers and translation: alloc, dealloc, relinquish, wait, fence, commit,
//! shift, ld, st, cp, and mma in its plain, `.sp`, `.ws` and `.ws.sp` forms (A in TMEM or shared
//! memory, scale-input-d, disable-output-lane, `.ashift`, the collector, the zero-column mask).
//! [`not_raised`] says why a call stays a call (the block-scale mma: see its text).

use std::collections::HashMap;

/// Why the calls of an intrinsic stay `llvm.call_intrinsic` (`None`: it is raised).
pub fn not_raised(intrinsic: &str) -> Option<&'static str> {
    let rest = intrinsic.strip_prefix("llvm.nvvm.tcgen05.")?;
    rest.contains("block_scale").then_some(
        "nvvm.tcgen05.mma.block_scale exists in MLIR 22, but its kind attribute is none of \
         #nvvm.tcgen05_mma_kind, #nvvm.tcgen05_mma_block_scale_kind, #nvvm.mma_block_scale_kind \
         (mlir-translate-22 rejects each); the calls stay intrinsic calls",
    )
}

/// The `#nvvm.cta_group` attribute for `.cg1`/`.cg2` (or a constant 1/2).
fn group_attr(n: &str) -> Option<String> {
    match n {
        "1" => Some("#nvvm.cta_group<cta_1>".into()),
        "2" => Some("#nvvm.cta_group<cta_2>".into()),
        _ => None,
    }
}

/// The operands of one imported call, with the constants the importer materialized.
struct Call<'a> {
    args: Vec<&'a str>,
    types: Vec<&'a str>,
    consts: &'a HashMap<String, String>,
}

impl Call<'_> {
    /// The constant value of operand `i` (`true`, `false`, or an integer), if it is one.
    fn konst(&self, i: usize) -> Option<&str> {
        self.consts.get(*self.args.get(i)?).map(String::as_str)
    }

    fn flag(&self, i: usize) -> Option<bool> {
        match self.konst(i)? {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        }
    }
}

/// `ld`/`st`: `<shape>.x<N>` into the `#nvvm.tcgen05_ldst_shape` attribute.
fn ldst_shape(rest: &str) -> Option<(&str, bool)> {
    let (shape, num) = rest.rsplit_once('.')?;
    num.strip_prefix('x')?.parse::<u32>().ok()?;
    let known = matches!(
        shape,
        "16x64b" | "16x128b" | "16x256b" | "32x32b" | "16x32bx2"
    );
    known.then_some((shape, shape == "16x32bx2"))
}

fn mma_kind(k: &str) -> Option<&'static str> {
    Some(match k {
        "0" => "f16",
        "1" => "tf32",
        "2" => "f8f6f4",
        "3" => "i8",
        _ => return None,
    })
}

fn collector_op(u: &str) -> Option<&'static str> {
    Some(match u {
        "0" => "discard",
        "1" => "lastuse",
        "2" => "fill",
        "3" => "use",
        _ => return None,
    })
}

/// `nvvm.tcgen05.mma[.sp]` / `.mma.ws[.sp]` for an mma intrinsic (name after `mma`).
fn mma_op(rest: &str, c: &Call<'_>) -> Option<String> {
    let (ws, rest) = match rest.strip_prefix(".ws") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let (sp, rest) = match rest.strip_prefix(".sp") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let rest = rest
        .strip_prefix(".tensor")
        .or_else(|| rest.strip_prefix(".shared"))?;
    let mut parts: Vec<&str> = rest.split('.').filter(|s| !s.is_empty()).collect();
    let ashift = parts.last() == Some(&"ashift");
    if ashift {
        parts.pop();
    }
    let (mut scale, mut dol, mut zcm, mut group) = (false, false, false, None);
    for p in parts {
        match p {
            "scale_d" => scale = true,
            "disable_output_lane" => dol = true,
            "zero_col_mask" => zcm = true,
            "cg1" => group = Some("1"),
            "cg2" => group = Some("2"),
            _ => return None,
        }
    }
    // Operands: d, a, b, idesc, enable-input-d, then the optional ones in this order:
    // sparsity metadata and zero-column mask as operands, scale-input-d and
    // disable-output-lane as `scale = `/`mask = ` operands.
    let mut ops: Vec<&str> = c.args.get(..5)?.to_vec();
    let mut tys: Vec<&str> = c.types.get(..5)?.to_vec();
    let mut tail = String::new();
    let mut i = 5;
    for (present, prefix) in [(sp, ""), (zcm, ""), (scale, "scale"), (dol, "mask")] {
        if !present {
            continue;
        }
        let (a, t) = (*c.args.get(i)?, *c.types.get(i)?);
        i += 1;
        tys.push(t);
        if prefix.is_empty() {
            ops.push(a);
        } else {
            tail.push_str(&format!(" {prefix} = {a}"));
        }
    }
    let kind = mma_kind(c.konst(i)?)?;
    let mut attrs = vec![format!("kind = #nvvm.tcgen05_mma_kind<{kind}>")];
    if ws {
        let buf = match c.konst(i + 1)? {
            "0" => "b0",
            "1" => "b1",
            "2" => "b2",
            "3" => "b3",
            _ => return None,
        };
        let usage = collector_op(c.konst(i + 2)?)?;
        if c.args.len() != i + 3 || ashift || scale || dol || group.is_some() {
            return None;
        }
        attrs.push(format!(
            "collectorBBuffer = #nvvm.tcgen05_mma_collectorb<{buf}>"
        ));
        attrs.push(format!(
            "collectorOp = #nvvm.tcgen05_mma_collectorop<{usage}>"
        ));
    } else {
        if zcm {
            return None;
        }
        let (g, usage) = match group {
            // The disable-output-lane intrinsics name the group; no group operand.
            Some(g) if dol => (g, c.konst(i + 1)?),
            None if !dol => (c.konst(i + 1)?, c.konst(i + 2)?),
            _ => return None,
        };
        let n = if dol { i + 2 } else { i + 3 };
        if c.args.len() != n {
            return None;
        }
        attrs.push(format!("ctaGroup = {}", group_attr(g)?));
        attrs.push(format!(
            "collectorOp = #nvvm.tcgen05_mma_collectorop<{}>",
            collector_op(usage)?
        ));
        if ashift {
            attrs.push("aShift".into());
        }
    }
    let name = match (ws, sp) {
        (false, false) => "mma",
        (false, true) => "mma.sp",
        (true, false) => "mma.ws",
        (true, true) => "mma.ws.sp",
    };
    Some(format!(
        "nvvm.tcgen05.{name} {}{tail} {{{}}} : ({})",
        ops.join(", "),
        attrs.join(", "),
        tys.join(", ")
    ))
}

/// The `nvvm` op text for one imported call, or `None` when it has no op here. `ret` is the
/// result type (`()` for none).
fn op_for(name: &str, c: &Call<'_>, ret: &str) -> Option<String> {
    let rest = name.strip_prefix("llvm.nvvm.tcgen05.")?;
    if not_raised(name).is_some() {
        return None;
    }
    let args = &c.args[..];
    let void = ret == "()";
    if let Some(r) = rest.strip_prefix("ld.") {
        let (shape, split) = ldst_shape(r)?;
        let n = if split { 3 } else { 2 };
        if args.len() != n || void {
            return None;
        }
        let pack = if c.flag(n - 1)? { "pack, " } else { "" };
        let addr = args[..n - 1].join(", ");
        return Some(format!(
            "nvvm.tcgen05.ld {addr} {{{pack}shape = #nvvm.tcgen05_ldst_shape<shape_{shape}>}} : {ret}"
        ));
    }
    if let Some(r) = rest.strip_prefix("st.") {
        let (shape, split) = ldst_shape(r)?;
        let n = if split { 4 } else { 3 };
        if args.len() != n || !void {
            return None;
        }
        let unpack = if c.flag(n - 1)? { "unpack, " } else { "" };
        let (t, v) = (args[0], args[n - 2]);
        let off = if split {
            format!(", {}", args[1])
        } else {
            String::new()
        };
        return Some(format!(
            "nvvm.tcgen05.st {t}, {v}{off} {{{unpack}shape = #nvvm.tcgen05_ldst_shape<shape_{shape}>}} : {}",
            c.types[n - 2]
        ));
    }
    if !void {
        return None;
    }
    if let Some(r) = rest.strip_prefix("mma") {
        return mma_op(r, c);
    }
    let (base, g) = match rest.rsplit_once('.') {
        Some((b, "cg1")) => (b, Some("1")),
        Some((b, "cg2")) => (b, Some("2")),
        _ => (rest, None),
    };
    // `.cta_group::1` is the ops' default: only `::2` is spelled.
    let group = g
        .filter(|g| *g == "2")
        .and_then(group_attr)
        .map(|a| format!(" {{group = {a}}}"))
        .unwrap_or_default();
    let ty = c.types.join(", ");
    if let Some(r) = base.strip_prefix("cp.") {
        let [t, d] = args else { return None };
        let (shape_mc, fmt) = match r.split_once('.') {
            Some((s, f @ ("b4x16_p64" | "b6x16_p32"))) => (s, Some(f)),
            None => (r, None),
            _ => return None,
        };
        let (shape, mc) = match shape_mc.split_once('_') {
            Some((s, m)) => (s, Some(m)),
            None => (shape_mc, None),
        };
        if !matches!(
            (shape, mc),
            ("128x256b" | "4x256b" | "128x128b", None)
                | ("64x128b", Some("warpx2_02_13" | "warpx2_01_23"))
                | ("32x128b", Some("warpx4"))
        ) {
            return None;
        }
        let mut attrs = vec![format!("shape = #nvvm.tcgen05_cp_shape<shape_{shape}>")];
        attrs.push(format!("group = {}", group_attr(g?)?));
        if let Some(m) = mc {
            attrs.push(format!("multicast = #nvvm.tcgen05_cp_multicast<{m}>"));
        }
        if let Some(f) = fmt {
            attrs.push(format!("srcFormat = #nvvm.tcgen05_cp_src_fmt<{f}>"));
        }
        return Some(format!("nvvm.tcgen05.cp {t}, {d} {{{}}}", attrs.join(", ")));
    }
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

/// `%N = llvm.mlir.constant(V : T) : T` or `(true)`/`(false)`: the name and `V`.
fn constant(line: &str) -> Option<(&str, &str)> {
    let (name, rest) = line.trim().split_once(" = llvm.mlir.constant(")?;
    let (v, _) = rest.rsplit_once(") : ")?;
    let v = v.split(" : ").next()?.trim();
    Some((name, v))
}

/// Rewrites the imported module's tcgen05 intrinsic calls that have an `nvvm` op; returns the
/// new text and how many calls were raised. A line it does not recognize stays as it is.
pub fn raise(mlir: &str) -> (String, usize) {
    // The importer materializes each immediate once, at the top of the function that uses it;
    // names are unique per function, and a constant's name is never reused for another value.
    let mut consts: HashMap<String, String> = HashMap::new();
    let mut out = String::with_capacity(mlir.len());
    let mut n = 0;
    for line in mlir.lines() {
        let t = line.trim_start();
        if t.starts_with("llvm.func ") {
            consts.clear();
        }
        if let Some((name, v)) = constant(t) {
            consts.insert(name.to_string(), v.to_string());
        }
        let indent = &line[..line.len() - t.len()];
        let raised = (|| {
            let (result, call) = match t.split_once(" = llvm.call_intrinsic \"") {
                Some((r, c)) if r.starts_with('%') && !r.contains(' ') => (Some(r), c),
                _ => (None, t.strip_prefix("llvm.call_intrinsic \"")?),
            };
            let (name, rest) = call.split_once("\"(")?;
            let (args, rest) = rest.split_once(") : (")?;
            let (types, ret) = rest.split_once(") -> ")?;
            let c = Call {
                args: split_list(args),
                types: split_list(types),
                consts: &consts,
            };
            if c.args.len() != c.types.len() {
                return None;
            }
            let op = op_for(name, &c, ret.trim())?;
            Some(match result {
                Some(r) => format!("{r} = {op}"),
                None => op,
            })
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
        let src = "  llvm.func @k(%arg0: !llvm.ptr<6>, %arg1: i64) {
    %0 = llvm.mlir.constant(false) : i1
    %9 = llvm.mlir.constant(0 : i32) : i32
    %10 = llvm.mlir.constant(1 : i32) : i32
    %11 = llvm.mlir.constant(true) : i1
    llvm.call_intrinsic \"llvm.nvvm.tcgen05.alloc.shared.cg1\"(%0, %1) : (!llvm.ptr<3>, i32) -> ()
    llvm.call_intrinsic \"llvm.nvvm.tcgen05.commit.mc.shared.cg2\"(%2, %3) : (!llvm.ptr<3>, i16) -> ()
    llvm.call_intrinsic \"llvm.nvvm.tcgen05.wait.ld\"() : () -> ()
    %18 = llvm.call_intrinsic \"llvm.nvvm.tcgen05.ld.32x32b.x2\"(%17, %0) : (!llvm.ptr<6>, i1) -> vector<2xi32>
    llvm.call_intrinsic \"llvm.nvvm.tcgen05.st.16x32bx2.x2\"(%17, %arg1, %18, %11) : (!llvm.ptr<6>, i64, vector<2xi32>, i1) -> ()
    llvm.call_intrinsic \"llvm.nvvm.tcgen05.cp.64x128b_warpx2_02_13.b6x16_p32.cg2\"(%17, %arg1) : (!llvm.ptr<6>, i64) -> ()
    llvm.call_intrinsic \"llvm.nvvm.tcgen05.mma.tensor.ashift\"(%17, %17, %arg1, %9, %11, %9, %10, %10) : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, i32, i32, i32) -> ()
    llvm.call_intrinsic \"llvm.nvvm.tcgen05.mma.sp.shared.scale_d.disable_output_lane.cg1\"(%17, %arg1, %arg1, %9, %11, %17, %arg1, %20, %9, %10) : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, i64, vector<4xi32>, i32, i32) -> ()
    llvm.call_intrinsic \"llvm.nvvm.tcgen05.mma.ws.shared.zero_col_mask\"(%17, %arg1, %arg1, %9, %11, %arg1, %9, %10, %9) : (!llvm.ptr<6>, i64, i64, i32, i1, i64, i32, i32, i32) -> ()
    llvm.call_intrinsic \"llvm.nvvm.tcgen05.mma.shared.mxf8f6f4.block_scale\"(%17, %arg1, %arg1, %9, %11, %17, %17, %10, %9) : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, !llvm.ptr<6>, i32, i32) -> ()
";
        let (out, n) = raise(src);
        assert_eq!(n, 9, "{out}");
        for want in [
            "    nvvm.tcgen05.alloc %0, %1 : !llvm.ptr<3>, i32\n",
            "nvvm.tcgen05.commit %2, multicast_mask = %3 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16",
            "nvvm.tcgen05.wait #nvvm.tcgen05_wait<load>",
            "%18 = nvvm.tcgen05.ld %17 {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<2xi32>",
            "nvvm.tcgen05.st %17, %18, %arg1 {unpack, shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<2xi32>",
            "nvvm.tcgen05.cp %17, %arg1 {shape = #nvvm.tcgen05_cp_shape<shape_64x128b>, group = #nvvm.cta_group<cta_2>, multicast = #nvvm.tcgen05_cp_multicast<warpx2_02_13>, srcFormat = #nvvm.tcgen05_cp_src_fmt<b6x16_p32>}",
            "nvvm.tcgen05.mma %17, %17, %arg1, %9, %11 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>, aShift} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)",
            "nvvm.tcgen05.mma.sp %17, %arg1, %arg1, %9, %11, %17 scale = %arg1 mask = %20 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>} : (!llvm.ptr<6>, i64, i64, i32, i1, !llvm.ptr<6>, i64, vector<4xi32>)",
            "nvvm.tcgen05.mma.ws %17, %arg1, %arg1, %9, %11, %arg1 {kind = #nvvm.tcgen05_mma_kind<f16>, collectorBBuffer = #nvvm.tcgen05_mma_collectorb<b1>, collectorOp = #nvvm.tcgen05_mma_collectorop<discard>} : (!llvm.ptr<6>, i64, i64, i32, i1, i64)",
        ] {
            assert!(out.contains(want), "missing {want}\n{out}");
        }
        // The block-scale mma has no op here: it stays a call, and says why.
        assert!(
            out.contains(
                "llvm.call_intrinsic \"llvm.nvvm.tcgen05.mma.shared.mxf8f6f4.block_scale\""
            ),
            "{out}"
        );
        assert!(not_raised("llvm.nvvm.tcgen05.mma.shared.mxf8f6f4.block_scale").is_some());
        assert!(not_raised("llvm.nvvm.tcgen05.ld.32x32b.x2").is_none());
    }

    #[test]
    fn a_call_whose_immediate_is_not_a_known_constant_stays_a_call() {
        // `%5` is not a constant of this function: the pack flag is unknown.
        let src = "  llvm.func @k() {\n    %18 = llvm.call_intrinsic \"llvm.nvvm.tcgen05.ld.32x32b.x2\"(%17, %5) : (!llvm.ptr<6>, i1) -> vector<2xi32>\n";
        let (out, n) = raise(src);
        assert_eq!(n, 0, "{out}");
    }
}
