//! Which `llvm.nvvm.tcgen05.*` intrinsic expresses a tcgen05 form, or why none does (LLVM 22,
//! `IntrinsicsNVVM.td`): the table [`super::lower`] lowers with and the `not-lowered` verdicts
//! come from.

use tcgen05_ir::form::CpForm;
use tcgen05_ir::program::*;
use tcgen05_ir::qual::*;

/// A tcgen05 form of a program that has no LLVM intrinsic, and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct NotLowered {
    /// The full opcode of the form.
    pub opcode: String,
    /// Why no intrinsic expresses it.
    pub reason: String,
}

impl std::fmt::Display for NotLowered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.opcode, self.reason)
    }
}

/// Why `op` has no intrinsic in LLVM 22's NVPTX back end (`IntrinsicsNVVM.td`), or `None`
/// when [`super::lower::lower`] expresses it. The reasons cite the qualifier or operand that no intrinsic
/// spells; every intrinsic prints `.sync.aligned` and the canonical `.b32`/`.b64` types.
pub fn unsupported(op: &Op) -> Option<String> {
    let sync = |s: bool, a: bool| (!(s && a)).then_some("every intrinsic prints `.sync.aligned`");
    let r: Option<&str> = match op {
        Op::Alloc {
            form,
            dst_global,
            ncols: _,
            ..
        } => {
            if form.exclusive {
                Some("no intrinsic prints `.exclusive` (PTX 9.4)")
            } else if form.ty != Ty::B32 {
                Some("the intrinsic prints `.b32`")
            } else if matches!(form.space, Some(s) if s != StateSpace::SharedCta) {
                Some("the intrinsics take a generic or `.shared::cta` destination only")
            } else if *dst_global && form.space.is_some() {
                Some("a global destination needs the generic form")
            } else {
                sync(form.sync, form.aligned)
            }
        }
        Op::Dealloc { form, .. } => {
            if form.exclusive {
                Some("no intrinsic prints `.exclusive` (PTX 9.4)")
            } else if form.ty != Ty::B32 {
                Some("the intrinsic prints `.b32`")
            } else {
                sync(form.sync, form.aligned)
            }
        }
        Op::Relinquish { form } => sync(form.sync, form.aligned),
        Op::Ld {
            form, split, nregs, ..
        } => {
            if form.red {
                Some("no intrinsic for `tcgen05.ld.red` (PTX 8.8)")
            } else if !form.shape.is_legal() || !form.num.is_legal() {
                Some("no intrinsic for this shape and count")
            } else if vec_len(form.shape, form.num) != Some(*nregs) {
                Some("the intrinsic's vector length is fixed by shape and count")
            } else if form.pack == Some(Pack::Unpack16b) {
                Some("the ld intrinsic spells only `.pack::16b`")
            } else if form.red_op.is_some() || form.abs || form.nan || form.ty != Ty::B32 {
                Some("the ld intrinsic has no reduction qualifiers and prints `.b32`")
            } else if split.is_some() != (form.shape == LdStShape::S16x32bx2) {
                Some("the immHalfSplitoff operand belongs to `.16x32bx2` only")
            } else {
                sync(form.sync, form.aligned)
            }
        }
        Op::St {
            form, split, nregs, ..
        } => {
            if !form.shape.is_legal() || !form.num.is_legal() {
                Some("no intrinsic for this shape and count")
            } else if vec_len(form.shape, form.num) != Some(*nregs) {
                Some("the intrinsic's vector length is fixed by shape and count")
            } else if form.pack == Some(Pack::Pack16b) {
                Some("the st intrinsic spells only `.unpack::16b`")
            } else if form.ty != Ty::B32 {
                Some("the st intrinsic prints `.b32`")
            } else if split.is_some() != (form.shape == LdStShape::S16x32bx2) {
                Some("the immHalfSplitoff operand belongs to `.16x32bx2` only")
            } else {
                sync(form.sync, form.aligned)
            }
        }
        Op::Wait { form } => {
            if form.cta_group.is_some() {
                Some("the wait intrinsics take no `.cta_group`")
            } else {
                sync(form.sync, form.aligned)
            }
        }
        Op::Fence { .. } | Op::Shift { .. } => None,
        Op::Commit {
            form,
            addr,
            cta_mask,
            ..
        } => {
            if !form.arrive_one || form.ty != Ty::B64 {
                Some("the commit intrinsics print `.mbarrier::arrive::one` and `.b64`")
            } else if form.multicast != cta_mask.is_some() {
                Some("the multicast intrinsics take the mask, the others none")
            } else if *addr == MbarAddr::GlobalUb && form.shared_cluster {
                Some("a global mbarrier needs the generic form")
            } else {
                None
            }
        }
        Op::Cp { form, .. } => cp_shape(form).err(),
        Op::Mma(m) => mma_name(m).err(),
    };
    r.map(str::to_string)
}

/// The shape part of the cp intrinsic's name (`64x128b_warpx2_02_13`, ...) and its format
/// suffix.
pub(super) fn cp_shape(form: &CpForm) -> Result<String, &'static str> {
    use CpMulticast as M;
    use CpShape as S;
    let shape = match (form.shape, form.multicast) {
        (S::S128x256b, None) => "128x256b",
        (S::S4x256b, None) => "4x256b",
        (S::S128x128b, None) => "128x128b",
        (S::S64x128b, Some(M::Warpx2_02_13)) => "64x128b_warpx2_02_13",
        (S::S64x128b, Some(M::Warpx2_01_23)) => "64x128b_warpx2_01_23",
        (S::S32x128b, Some(M::Warpx4)) => "32x128b_warpx4",
        _ => return Err("no cp intrinsic for this shape and multicast"),
    };
    let fmt = match (form.dst_fmt, form.src_fmt) {
        (None, None) => "",
        (Some(CpDstFmt::B8x16), Some(CpSrcFmt::B6x16P32)) => ".b6x16_p32",
        (Some(CpDstFmt::B8x16), Some(CpSrcFmt::B4x16P64)) => ".b4x16_p64",
        _ => return Err("the cp intrinsics decompress only to `.b8x16` from a source format"),
    };
    Ok(format!("{shape}{fmt}"))
}

/// The name of the mma intrinsic of `m`, or why there is none.
pub(super) fn mma_name(m: &Mma) -> Result<String, &'static str> {
    let f = &m.form;
    let space = match m.a {
        MmaA::Tmem(_) => "tensor",
        MmaA::Desc(_) => "shared",
    };
    let sp = if f.sp { ".sp" } else { "" };
    if f.sp != m.sp_meta.is_some() {
        return Err("the sparse intrinsics take the metadata operand, the others none");
    }
    let mx = matches!(
        f.kind,
        MmaKind::Mxf8f6f4 | MmaKind::Mxf4 | MmaKind::Mxf4nvf4
    );
    if f.ws {
        if f.cta_group != CtaGroup::One {
            return Err("the ws intrinsics are `.cta_group::1` only");
        }
        if f.block_scale || mx || f.ashift || m.scale_input_d.is_some() {
            return Err("no ws intrinsic with block scaling, `.ashift` or scale-input-d");
        }
        if m.disable_output_lane.is_some() || m.scale_a.is_some() || m.scale_b.is_some() {
            return Err("no ws intrinsic with disable-output-lane or scale operands");
        }
        if matches!(f.collector, Some(c) if c.buf == CollectorBuf::A) {
            return Err("the ws intrinsics take a `b0`..`b3` collector");
        }
        let z = if m.zero_col_mask.is_some() {
            ".zero_col_mask"
        } else {
            ""
        };
        return Ok(format!("llvm.nvvm.tcgen05.mma.ws{sp}.{space}{z}"));
    }
    if m.zero_col_mask.is_some() {
        return Err("zero-column-mask belongs to the ws intrinsics");
    }
    if matches!(f.collector, Some(c) if c.buf != CollectorBuf::A) {
        return Err("the non-ws intrinsics take the `a` collector");
    }
    if f.block_scale || mx {
        if !(f.block_scale && mx) {
            return Err("block scaling goes with the mx kinds and only with them");
        }
        if m.scale_a.is_none() || m.scale_b.is_none() {
            return Err("the block-scale intrinsics take both scale operands");
        }
        if f.ashift || m.scale_input_d.is_some() || m.disable_output_lane.is_some() {
            return Err(
                "no block-scale intrinsic with `.ashift`, scale-input-d or disable-output-lane",
            );
        }
        let kind = match f.kind {
            MmaKind::Mxf8f6f4 => "mxf8f6f4",
            MmaKind::Mxf4 => "mxf4",
            _ => "mxf4nvf4",
        };
        let vec = match f.scale_vec {
            None => "",
            Some(ScaleVec::Block16) => ".block16",
            Some(ScaleVec::Block32) => ".block32",
            Some(_) => {
                return Err("no intrinsic prints `.scale_vec::NX` (only `.block16`/`.block32`)");
            }
        };
        let ok = matches!(
            (kind, vec),
            ("mxf8f6f4", "") | ("mxf4", "") | ("mxf4nvf4", ".block16") | (_, ".block32")
        );
        if !ok {
            return Err("no block-scale intrinsic for this kind and scale-vector size");
        }
        return Ok(format!(
            "llvm.nvvm.tcgen05.mma{sp}.{space}.{kind}.block_scale{vec}"
        ));
    }
    if m.scale_a.is_some() || m.scale_b.is_some() {
        return Err("scale operands belong to the block-scale intrinsics");
    }
    if f.ashift && space != "tensor" {
        return Err("`.ashift` intrinsics take A in tensor memory");
    }
    if m.scale_input_d.is_some() && !matches!(f.kind, MmaKind::F16 | MmaKind::Tf32) {
        return Err("the scale_d intrinsics take kind f16 or tf32 only");
    }
    let sd = if m.scale_input_d.is_some() {
        ".scale_d"
    } else {
        ""
    };
    let ash = if f.ashift { ".ashift" } else { "" };
    if let Some(dol) = &m.disable_output_lane {
        let want = if f.cta_group == CtaGroup::One { 4 } else { 8 };
        if dol.len() != want {
            return Err("the disable-output-lane vector has 4 elements for ::1, 8 for ::2");
        }
        return Ok(format!(
            "llvm.nvvm.tcgen05.mma{sp}.{space}{sd}.disable_output_lane.cg{}{ash}",
            f.cta_group.n()
        ));
    }
    Ok(format!("llvm.nvvm.tcgen05.mma{sp}.{space}{sd}{ash}"))
}

/// Every form of `p` that has no intrinsic, with the reason (empty when [`super::lower::lower`] can lower
/// the whole program).
pub fn not_lowered(p: &Program) -> Vec<NotLowered> {
    let mut out: Vec<NotLowered> = Vec::new();
    for op in p.ops() {
        if let Some(reason) = unsupported(op) {
            let n = NotLowered {
                opcode: op.form().opcode(),
                reason,
            };
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}
