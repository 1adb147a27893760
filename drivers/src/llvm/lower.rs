//! Lowering a [`Program`] to an LLVM IR module for the NVPTX back end.
//!
//! The module mirrors the PTX printer (`tcgen05_ir::ptx::emit`) statement by statement, so that
//! the PTX LLVM produces can be compared with the printer's ([`super::validate`]):
//!
//! - every tcgen05 instruction becomes its `llvm.nvvm.tcgen05.*` intrinsic ([`unsupported`]
//!   says which forms have none, and why);
//! - the shared-memory scaffolding is `internal addrspace(3)` globals of the printer's names
//!   (`tc_slot`, `tc_mbar`, `tc_data<n>`) and `tc_scratch` in `addrspace(1)`;
//! - thread ids, barriers and fences use the NVVM intrinsics (`llvm.nvvm.read.ptx.sreg.*`,
//!   `llvm.nvvm.barrier.cta.sync.all`, `llvm.nvvm.barrier.cluster.*`, `llvm.nvvm.elect.sync`,
//!   `llvm.nvvm.mbarrier.init.shared`, `llvm.nvvm.fence.mbarrier_init.release.cluster`,
//!   `llvm.nvvm.nanosleep`, `llvm.nvvm.exit`);
//! - what LLVM has no intrinsic for with the printer's exact semantics is inline asm with a
//!   `memory` clobber: `mbarrier.arrive.release.{cta,cluster}` (with `mapa` for a peer CTA),
//!   `mbarrier.try_wait.parity.acquire.{cta,cluster}` and `fence.proxy.async.shared::cta`;
//! - the observation records are plain `addrspace(1)` stores in the layout of
//!   `tcgen05_ir::observe`, written where the printer writes them (an ld's record after the
//!   next `wait::ld` of its block, or at the end of the block).
//!
//! Intrinsic calls carry no `declare`: LLVM's IR parser declares intrinsics from their
//! definitions, so the signature is always the installed LLVM's own.

use tcgen05_ir::form::CpForm;
use tcgen05_ir::observe::{self, Layout, Site};
use tcgen05_ir::program::*;
use tcgen05_ir::qual::*;
use tcgen05_ir::values;

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
/// when [`lower`] expresses it. The reasons cite the qualifier or operand that no intrinsic
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
fn cp_shape(form: &CpForm) -> Result<String, &'static str> {
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
fn mma_name(m: &Mma) -> Result<String, &'static str> {
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

/// Every form of `p` that has no intrinsic, with the reason (empty when [`lower`] can lower
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

/// The `-mcpu` of a program's `.target` (`sm_100a`); the family targets (`sm_100f`) are
/// passed as they are.
pub fn mcpu(p: &Program) -> String {
    p.launch.target.as_str().to_string()
}

/// The `-mattr` of a program's `.version`: `+ptx88` for 8.8.
pub fn mattr(p: &Program) -> String {
    format!(
        "+ptx{}{}",
        p.launch.ptx_version.major, p.launch.ptx_version.minor
    )
}

/// Lowers `p` to an LLVM IR module, or lists the forms that have no intrinsic.
pub fn lower(p: &Program) -> Result<String, Vec<NotLowered>> {
    let missing = not_lowered(p);
    if !missing.is_empty() {
        return Err(missing);
    }
    let layout = Layout::of(p);
    let mut out = String::with_capacity(8192);
    out.push_str("; Generated by tcgen05-fuzz from a tcgen05_ir::Program\n");
    out.push_str("target triple = \"nvptx64-nvidia-cuda\"\n\n");
    if p.smem.slots > 0 {
        out.push_str(&format!(
            "@tc_slot = internal addrspace(3) global [{} x i32] undef, align 16\n",
            p.smem.slots
        ));
    }
    if p.smem.mbarriers > 0 {
        out.push_str(&format!(
            "@tc_mbar = internal addrspace(3) global [{} x i64] undef, align 16\n",
            p.smem.mbarriers
        ));
    }
    for (i, bytes) in p.smem.regions.iter().enumerate() {
        out.push_str(&format!(
            "@tc_data{i} = internal addrspace(3) global [{} x i8] undef, align 1024\n",
            bytes.max(&16)
        ));
    }
    out.push_str(
        "@tc_scratch = internal addrspace(1) global [512 x i32] zeroinitializer, align 16\n\n",
    );
    for (i, f) in p.funcs.iter().enumerate() {
        let mut b = Fb::new(p, &layout);
        b.code.push_str(&format!(
            "define internal void @f{i}(ptr addrspace(1) %obsw) {{\nentry:\n"
        ));
        b.special_regs();
        b.obsw = "%obsw".into();
        b.obsl = b.gep_lane(4, "%obsw");
        b.block(&f.body, &layout.func_sites[i], &mut 0);
        b.ins("ret void");
        out.push_str(&b.code);
        out.push_str("}\n\n");
    }
    let l = &p.launch;
    let mut attrs = format!("\"nvvm.reqntid\"=\"{}\"", 32 * u32::from(l.warps_per_cta));
    if l.declare_cluster {
        attrs.push_str(&format!(" \"nvvm.cluster_dim\"=\"{}\"", l.cluster_size));
    }
    let mut b = Fb::new(p, &layout);
    b.code
        .push_str("define ptx_kernel void @tc_kernel(ptr addrspace(1) %obs) #0 {\nentry:\n");
    b.special_regs();
    let r0 = b.val();
    b.ins(&format!(
        "{r0} = mul i32 %clid, {}",
        u32::from(l.cluster_size)
    ));
    let r1 = b.val();
    b.ins(&format!("{r1} = add i32 {r0}, %ctarank"));
    let r2 = b.val();
    b.ins(&format!("{r2} = zext i32 {r1} to i64"));
    let r3 = b.val();
    b.ins(&format!(
        "{r3} = mul i64 {r2}, {}",
        u64::from(layout.cta_words) * 4
    ));
    b.ins(&format!(
        "%obscta = getelementptr i8, ptr addrspace(1) %obs, i64 {r3}"
    ));
    let mut sw = String::from("switch i32 %warp, label %end [");
    for w in 0..p.warps.len() {
        sw.push_str(&format!(" i32 {w}, label %W{w}"));
    }
    sw.push_str(" ]");
    b.ins(&sw);
    for (w, code) in p.warps.iter().enumerate() {
        b.label(&format!("W{w}"));
        let o = b.val();
        b.ins(&format!(
            "{o} = getelementptr i8, ptr addrspace(1) %obscta, i64 {}",
            u64::from(layout.warp_base[w]) * 4
        ));
        b.obsw = o.clone();
        b.obsl = b.gep_lane(4, &o);
        let obsl = b.obsl.clone();
        b.store(observe::CHECKPOINT_START, &obsl, 0);
        b.block(code, &layout.warp_sites[w], &mut 0);
        let obsl = b.obsl.clone();
        b.store(observe::CHECKPOINT_DONE, &obsl, 0);
        b.ins("br label %end");
    }
    b.label("end");
    b.ins("ret void");
    out.push_str(&b.code);
    out.push_str("}\n\n");
    out.push_str(&format!("attributes #0 = {{ {attrs} }}\n"));
    Ok(out)
}

/// An ld whose registers are still to be recorded: the vector value and its length.
struct Pending {
    vec: String,
    n: u16,
    site: Site,
}

/// The builder of one function's body.
struct Fb<'a> {
    p: &'a Program,
    code: String,
    v: u32,
    obsw: String,
    obsl: String,
}

impl<'a> Fb<'a> {
    fn new(p: &'a Program, _layout: &'a Layout) -> Self {
        Fb {
            p,
            code: String::with_capacity(4096),
            v: 0,
            obsw: String::new(),
            obsl: String::new(),
        }
    }

    fn val(&mut self) -> String {
        self.v += 1;
        format!("%v{}", self.v)
    }

    fn fresh_label(&mut self, prefix: &str) -> String {
        self.v += 1;
        format!("{prefix}{}", self.v)
    }

    fn ins(&mut self, s: &str) {
        self.code.push_str("  ");
        self.code.push_str(s);
        self.code.push('\n');
    }

    fn label(&mut self, name: &str) {
        self.code.push_str(name);
        self.code.push_str(":\n");
    }

    fn special_regs(&mut self) {
        self.ins("%lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()");
        self.ins("%tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()");
        self.ins("%warp = lshr i32 %tid, 5");
        self.ins("%ctarank = call i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()");
        self.ins("%ctaodd = and i32 %ctarank, 1");
        self.ins("%clid = call i32 @llvm.nvvm.read.ptx.sreg.clusterid.x()");
    }

    /// `base + lane * scale` (bytes) as a new pointer.
    fn gep_lane(&mut self, scale: u32, base: &str) -> String {
        let a = self.val();
        self.ins(&format!("{a} = zext i32 %lane to i64"));
        let m = self.val();
        self.ins(&format!("{m} = mul i64 {a}, {scale}"));
        let g = self.val();
        self.ins(&format!(
            "{g} = getelementptr i8, ptr addrspace(1) {base}, i64 {m}"
        ));
        g
    }

    /// Stores the i32 value (a constant or a value name) at `base + off` bytes.
    fn store(&mut self, value: impl std::fmt::Display, base: &str, off: u32) {
        let ptr = if off == 0 {
            base.to_string()
        } else {
            let g = self.val();
            self.ins(&format!(
                "{g} = getelementptr i8, ptr addrspace(1) {base}, i64 {off}"
            ));
            g
        };
        self.ins(&format!(
            "store i32 {value}, ptr addrspace(1) {ptr}, align 4"
        ));
    }

    /// The record of `site`: the valid word, then the data words.
    fn record(&mut self, site: Site, vals: &[String]) {
        let obsl = self.obsl.clone();
        self.store(1, &obsl, site.offset * 4);
        let obsw = self.obsw.clone();
        let a = self.gep_lane(site.words * 4, &obsw);
        for (i, v) in vals.iter().enumerate() {
            self.store(v, &a, (site.offset + 32 + i as u32) * 4);
        }
    }

    fn record_ld(&mut self, p: &Pending) {
        let vals: Vec<String> = if p.n == 1 {
            vec![p.vec.clone()]
        } else {
            (0..p.n)
                .map(|i| {
                    let e = self.val();
                    self.ins(&format!(
                        "{e} = extractelement <{} x i32> {}, i32 {i}",
                        p.n, p.vec
                    ));
                    e
                })
                .collect()
        };
        self.record(p.site, &vals);
    }

    fn cond(&mut self, c: &Cond) -> String {
        let v = self.val();
        match c {
            Cond::LaneLt(n) => self.ins(&format!("{v} = icmp ult i32 %lane, {n}")),
            Cond::LaneEq(n) => self.ins(&format!("{v} = icmp eq i32 %lane, {n}")),
            Cond::ElectOne => {
                let e = self.val();
                self.ins(&format!(
                    "{e} = call {{ i32, i1 }} @llvm.nvvm.elect.sync(i32 -1)"
                ));
                self.ins(&format!("{v} = extractvalue {{ i32, i1 }} {e}, 1"));
            }
            Cond::CtaRank(n) => self.ins(&format!("{v} = icmp eq i32 %ctarank, {n}")),
            Cond::CtaOdd => self.ins(&format!("{v} = icmp ne i32 %ctaodd, 0")),
            Cond::Cluster(n) => self.ins(&format!("{v} = icmp eq i32 %clid, {n}")),
            Cond::WarpRank(n) => self.ins(&format!("{v} = icmp eq i32 %warp, {n}")),
        }
        v
    }

    /// A bounded counting loop around `body`: `for c in 0..count`.
    fn counted(&mut self, count: &str, body: impl FnOnce(&mut Self, &str)) {
        let pre = self.fresh_label("pre");
        let top = self.fresh_label("top");
        let bod = self.fresh_label("body");
        let end = self.fresh_label("end");
        let c = self.val();
        let next = self.val();
        self.ins(&format!("br label %{pre}"));
        self.label(&pre);
        self.ins(&format!("br label %{top}"));
        self.label(&top);
        let latch = self.fresh_label("latch");
        self.ins(&format!(
            "{c} = phi i32 [ 0, %{pre} ], [ {next}, %{latch} ]"
        ));
        let done = self.val();
        self.ins(&format!("{done} = icmp uge i32 {c}, {count}"));
        self.ins(&format!("br i1 {done}, label %{end}, label %{bod}"));
        self.label(&bod);
        body(self, &c);
        self.ins(&format!("br label %{latch}"));
        self.label(&latch);
        self.ins(&format!("{next} = add i32 {c}, 1"));
        self.ins(&format!("br label %{top}"));
        self.label(&end);
    }

    fn shared_addr(&mut self, sym: &str, off: u32) -> String {
        let a = self.val();
        self.ins(&format!("{a} = ptrtoint ptr addrspace(3) @{sym} to i32"));
        if off == 0 {
            return a;
        }
        let b = self.val();
        self.ins(&format!("{b} = add i32 {a}, {off}"));
        b
    }

    fn shared_ptr(&mut self, sym: &str, off: u32) -> String {
        let g = self.val();
        self.ins(&format!(
            "{g} = getelementptr i8, ptr addrspace(3) @{sym}, i32 {off}"
        ));
        g
    }

    fn generic_ptr(&mut self, sym: &str, space: u8, off: u32) -> String {
        let c = self.val();
        self.ins(&format!(
            "{c} = addrspacecast ptr addrspace({space}) @{sym} to ptr"
        ));
        let g = self.val();
        self.ins(&format!("{g} = getelementptr i8, ptr {c}, i64 {off}"));
        g
    }

    fn block(&mut self, stmts: &[Stmt], sites: &[Site], next: &mut usize) {
        let mut pending: Vec<Pending> = Vec::new();
        for s in stmts {
            let site = observe::site_of(s).map(|_| {
                *next += 1;
                sites[*next - 1]
            });
            match s {
                Stmt::Tc(op) => self.op(op, site, &mut pending),
                Stmt::If { cond, then, els } => {
                    let c = self.cond(cond);
                    let (t, e, j) = (
                        self.fresh_label("then"),
                        self.fresh_label("else"),
                        self.fresh_label("join"),
                    );
                    self.ins(&format!("br i1 {c}, label %{t}, label %{e}"));
                    self.label(&t);
                    self.block(then, sites, next);
                    self.ins(&format!("br label %{j}"));
                    self.label(&e);
                    self.block(els, sites, next);
                    self.ins(&format!("br label %{j}"));
                    self.label(&j);
                }
                Stmt::Loop { count, body } => {
                    self.counted(&count.to_string(), |b, _| b.block(body, sites, next));
                }
                Stmt::Call(f) => {
                    let w = self.obsw.clone();
                    self.ins(&format!("call void @f{f}(ptr addrspace(1) {w})"));
                }
                Stmt::Exit => {
                    let obsl = self.obsl.clone();
                    self.store(observe::CHECKPOINT_EXIT, &obsl, 0);
                    self.ins("call void @llvm.nvvm.exit()");
                    self.ins("unreachable");
                    let dead = self.fresh_label("dead");
                    self.label(&dead);
                }
                Stmt::BarCta => self.ins("call void @llvm.nvvm.barrier.cta.sync.all(i32 0)"),
                Stmt::ClusterArrive { relaxed } => self.ins(if *relaxed {
                    "call void @llvm.nvvm.barrier.cluster.arrive.relaxed()"
                } else {
                    "call void @llvm.nvvm.barrier.cluster.arrive()"
                }),
                Stmt::ClusterWait => self.ins("call void @llvm.nvvm.barrier.cluster.wait()"),
                Stmt::MbarInit { bar, count } => {
                    let m = self.shared_ptr("tc_mbar", 8 * u32::from(*bar));
                    self.ins(&format!(
                        "call void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3) {m}, i32 {count})"
                    ));
                }
                Stmt::FenceMbarInit => {
                    self.ins("call void @llvm.nvvm.fence.mbarrier_init.release.cluster()")
                }
                Stmt::MbarArrive { bar, cta: None } => {
                    let a = self.shared_addr("tc_mbar", 8 * u32::from(*bar));
                    self.ins(&format!(
                        "call void asm sideeffect \"mbarrier.arrive.release.cta.shared::cta.b64 _, [$0];\", \"r,~{{memory}}\"(i32 {a})"
                    ));
                }
                Stmt::MbarArrive {
                    bar,
                    cta: Some(rank),
                } => {
                    let a = self.shared_addr("tc_mbar", 8 * u32::from(*bar));
                    self.ins(&format!(
                        "call void asm sideeffect \"{{\\0A\\09.reg .b32 tcm;\\0A\\09mapa.shared::cluster.u32 tcm, $0, {rank};\\0A\\09mbarrier.arrive.release.cluster.shared::cluster.b64 _, [tcm];\\0A\\09}}\", \"r,~{{memory}}\"(i32 {a})"
                    ));
                }
                Stmt::MbarWait {
                    bar,
                    parity,
                    scope,
                    max_tries,
                } => self.mbar_wait(*bar, *parity, *scope, *max_tries, site),
                Stmt::FenceProxyAsync => self.ins(
                    "call void asm sideeffect \"fence.proxy.async.shared::cta;\", \"~{memory}\"()",
                ),
                Stmt::Fill { region, seed, elem } => self.fill(*region, *seed, *elem),
                Stmt::ObserveAddr { slot } => {
                    let g = self.shared_ptr("tc_slot", 4 * u32::from(*slot));
                    let v = self.val();
                    self.ins(&format!("{v} = load i32, ptr addrspace(3) {g}, align 4"));
                    self.record(site.expect("ObserveAddr is a site"), &[v]);
                }
                Stmt::Checkpoint(id) => {
                    let obsl = self.obsl.clone();
                    self.store(id, &obsl, 0);
                }
                Stmt::Spin(iters) => self.counted(&iters.to_string(), |b, _| {
                    b.ins("call void @llvm.nvvm.nanosleep(i32 20)");
                }),
            }
        }
        for p in pending.drain(..) {
            self.record_ld(&p);
        }
    }

    fn mbar_wait(
        &mut self,
        bar: u8,
        parity: bool,
        scope: Scope,
        max_tries: u32,
        site: Option<Site>,
    ) {
        let a = self.shared_addr("tc_mbar", 8 * u32::from(bar));
        let (pre, top, again, done, rec) = (
            self.fresh_label("mwpre"),
            self.fresh_label("mwtop"),
            self.fresh_label("mwagain"),
            self.fresh_label("mwdone"),
            self.fresh_label("mwrec"),
        );
        let (c, next) = (self.val(), self.val());
        self.ins(&format!("br label %{pre}"));
        self.label(&pre);
        self.ins(&format!("br label %{top}"));
        self.label(&top);
        self.ins(&format!(
            "{c} = phi i32 [ 0, %{pre} ], [ {next}, %{again} ]"
        ));
        let ok = self.val();
        self.ins(&format!(
            "{ok} = call i32 asm sideeffect \"{{\\0A\\09.reg .pred tcq;\\0A\\09mbarrier.try_wait.parity.acquire{}.shared::cta.b64 tcq, [$1], {};\\0A\\09selp.u32 $0, 1, 0, tcq;\\0A\\09}}\", \"=r,r,~{{memory}}\"(i32 {a})",
            scope.as_str(),
            u8::from(parity)
        ));
        let okb = self.val();
        self.ins(&format!("{okb} = icmp ne i32 {ok}, 0"));
        self.ins(&format!("br i1 {okb}, label %{done}, label %{again}"));
        self.label(&again);
        self.ins(&format!("{next} = add i32 {c}, 1"));
        let more = self.val();
        self.ins(&format!("{more} = icmp ult i32 {next}, {max_tries}"));
        self.ins(&format!("br i1 {more}, label %{top}, label %{rec}"));
        self.label(&done);
        self.ins(&format!("br label %{rec}"));
        self.label(&rec);
        let v = self.val();
        self.ins(&format!(
            "{v} = phi i32 [ {}, %{again} ], [ {}, %{done} ]",
            observe::MBAR_GAVE_UP,
            observe::MBAR_COMPLETED
        ));
        self.record(site.expect("MbarWait is a site"), &[v]);
    }

    fn fill(&mut self, region: u8, seed: u32, elem: FillElem) {
        let words = self
            .p
            .smem
            .regions
            .get(region as usize)
            .copied()
            .unwrap_or(16)
            .max(16)
            / 4;
        // for (i = lane; i < words; i += 32): word i of the region (values::fill_word).
        let (pre, top, bod, end) = (
            self.fresh_label("fpre"),
            self.fresh_label("ftop"),
            self.fresh_label("fbody"),
            self.fresh_label("fend"),
        );
        let (i, next) = (self.val(), self.val());
        self.ins(&format!("br label %{pre}"));
        self.label(&pre);
        self.ins(&format!("br label %{top}"));
        self.label(&top);
        self.ins(&format!(
            "{i} = phi i32 [ %lane, %{pre} ], [ {next}, %{bod} ]"
        ));
        let d = self.val();
        self.ins(&format!("{d} = icmp uge i32 {i}, {words}"));
        self.ins(&format!("br i1 {d}, label %{end}, label %{bod}"));
        self.label(&bod);
        let h0 = self.val();
        self.ins(&format!("{h0} = mul i32 {i}, 2654435769"));
        let h = self.val();
        self.ins(&format!("{h} = add i32 {h0}, {seed}"));
        let small = |b: &mut Self, s: u32, mask: u32, bias: u32| {
            let t = b.val();
            b.ins(&format!("{t} = lshr i32 {h}, {s}"));
            let u = b.val();
            b.ins(&format!("{u} = and i32 {t}, {mask}"));
            let w = b.val();
            b.ins(&format!("{w} = sub i32 {u}, {bias}"));
            w
        };
        let v = match elem {
            FillElem::Word => h.clone(),
            FillElem::F16Small => {
                let mut halves = Vec::new();
                for s in [8, 20] {
                    let x = small(self, s, 7, 4);
                    let f = self.val();
                    self.ins(&format!("{f} = sitofp i32 {x} to half"));
                    let bits = self.val();
                    self.ins(&format!("{bits} = bitcast half {f} to i16"));
                    let z = self.val();
                    self.ins(&format!("{z} = zext i16 {bits} to i32"));
                    halves.push(z);
                }
                let hi = self.val();
                self.ins(&format!("{hi} = shl i32 {}, 16", halves[1]));
                let v = self.val();
                self.ins(&format!("{v} = or i32 {}, {hi}", halves[0]));
                v
            }
            FillElem::Tf32Small => {
                let x = small(self, 8, 7, 4);
                let f = self.val();
                self.ins(&format!("{f} = sitofp i32 {x} to float"));
                let v = self.val();
                self.ins(&format!("{v} = bitcast float {f} to i32"));
                v
            }
            FillElem::I8Small => {
                let mut acc = "0".to_string();
                for (k, s) in [4u32, 10, 16, 22].into_iter().enumerate() {
                    let t = self.val();
                    self.ins(&format!("{t} = lshr i32 {h}, {s}"));
                    let u = self.val();
                    self.ins(&format!("{u} = and i32 {t}, 15"));
                    let w = self.val();
                    self.ins(&format!("{w} = add i32 {u}, 248"));
                    let x = self.val();
                    self.ins(&format!("{x} = and i32 {w}, 255"));
                    let y = self.val();
                    self.ins(&format!("{y} = shl i32 {x}, {}", 8 * k));
                    let o = self.val();
                    self.ins(&format!("{o} = or i32 {acc}, {y}"));
                    acc = o;
                }
                acc
            }
            FillElem::SpMeta => {
                let t = self.val();
                self.ins(&format!("{t} = lshr i32 {h}, 1"));
                let u = self.val();
                self.ins(&format!("{u} = and i32 {t}, 286331153"));
                let w = self.val();
                self.ins(&format!("{w} = mul i32 {u}, 10"));
                let v = self.val();
                self.ins(&format!("{v} = or i32 {w}, 1145324612"));
                v
            }
        };
        let off = self.val();
        self.ins(&format!("{off} = mul i32 {i}, 4"));
        let g = self.val();
        self.ins(&format!(
            "{g} = getelementptr i8, ptr addrspace(3) @tc_data{region}, i32 {off}"
        ));
        self.ins(&format!("store i32 {v}, ptr addrspace(3) {g}, align 4"));
        self.ins(&format!("{next} = add i32 {i}, 32"));
        self.ins(&format!("br label %{top}"));
        self.label(&end);
    }

    /// A TMEM address as a `ptr addrspace(6)`.
    fn taddr(&mut self, t: &TmemRef) -> String {
        let base = match t.base {
            TBase::Slot(s) => {
                let g = self.shared_ptr("tc_slot", 4 * u32::from(s));
                let a = self.val();
                self.ins(&format!("{a} = load i32, ptr addrspace(3) {g}, align 4"));
                let b = self.val();
                self.ins(&format!("{b} = add i32 {a}, {}", t.offset()));
                b
            }
            TBase::Abs => {
                let b = self.val();
                self.ins(&format!("{b} = add i32 0, {}", t.offset()));
                b
            }
        };
        let base = if t.divergent {
            let d = self.val();
            self.ins(&format!("{d} = and i32 %lane, 1"));
            let s = self.val();
            self.ins(&format!("{s} = add i32 {base}, {d}"));
            s
        } else {
            base
        };
        let p = self.val();
        self.ins(&format!("{p} = inttoptr i32 {base} to ptr addrspace(6)"));
        p
    }

    fn ncols(&mut self, n: &NCols) -> String {
        match n.form {
            NColsForm::Imm | NColsForm::Reg => n.value.to_string(),
            NColsForm::RegDivergent => {
                let d = self.val();
                self.ins(&format!("{d} = and i32 %lane, 1"));
                let s = self.val();
                self.ins(&format!("{s} = shl i32 {}, {d}", n.value));
                s
            }
        }
    }

    /// A shared-memory descriptor as an i64 value (reference §2.8).
    fn desc(&mut self, d: &SmemDesc) -> String {
        let a = self.shared_addr(&format!("tc_data{}", d.region), d.offset);
        let m = self.val();
        self.ins(&format!("{m} = and i32 {a}, 262143"));
        let s = self.val();
        self.ins(&format!("{s} = lshr i32 {m}, 4"));
        let z = self.val();
        self.ins(&format!("{z} = zext i32 {s} to i64"));
        let o = self.val();
        self.ins(&format!("{o} = or i64 {z}, {}", d.encode_fields()));
        o
    }

    fn op(&mut self, op: &Op, site: Option<Site>, pending: &mut Vec<Pending>) {
        let cg = |g: CtaGroup| format!("cg{}", g.n());
        match op {
            Op::Alloc {
                form,
                slot,
                dst_global,
                ncols,
            } => {
                let n = self.ncols(ncols);
                let g = cg(form.cta_group);
                if *dst_global {
                    let p = self.generic_ptr("tc_scratch", 1, 4 * u32::from(*slot));
                    self.ins(&format!(
                        "call void @llvm.nvvm.tcgen05.alloc.{g}(ptr {p}, i32 {n})"
                    ));
                } else if form.space.is_some() {
                    let p = self.shared_ptr("tc_slot", 4 * u32::from(*slot));
                    self.ins(&format!(
                        "call void @llvm.nvvm.tcgen05.alloc.shared.{g}(ptr addrspace(3) {p}, i32 {n})"
                    ));
                } else {
                    let p = self.generic_ptr("tc_slot", 3, 4 * u32::from(*slot));
                    self.ins(&format!(
                        "call void @llvm.nvvm.tcgen05.alloc.{g}(ptr {p}, i32 {n})"
                    ));
                }
            }
            Op::Dealloc { form, taddr, ncols } => {
                let t = self.taddr(taddr);
                let n = self.ncols(ncols);
                self.ins(&format!(
                    "call void @llvm.nvvm.tcgen05.dealloc.{}(ptr addrspace(6) {t}, i32 {n})",
                    cg(form.cta_group)
                ));
            }
            Op::Relinquish { form } => self.ins(&format!(
                "call void @llvm.nvvm.tcgen05.relinq.alloc.permit.{}()",
                cg(form.cta_group)
            )),
            Op::Fence { kind } => self.ins(match kind {
                FenceKind::BeforeThreadSync => {
                    "call void @llvm.nvvm.tcgen05.fence.before.thread.sync()"
                }
                FenceKind::AfterThreadSync => {
                    "call void @llvm.nvvm.tcgen05.fence.after.thread.sync()"
                }
            }),
            Op::Wait { form } => {
                self.ins(match form.op {
                    WaitOp::Ld => "call void @llvm.nvvm.tcgen05.wait.ld()",
                    WaitOp::St => "call void @llvm.nvvm.tcgen05.wait.st()",
                });
                if form.op == WaitOp::Ld {
                    for p in pending.drain(..) {
                        self.record_ld(&p);
                    }
                }
            }
            Op::Ld {
                form,
                taddr,
                split,
                nregs,
            } => {
                let t = self.taddr(taddr);
                let ty = vec_ty(*nregs);
                let name = ldst_name("ld", form.shape, form.num);
                let pack = form.pack.is_some();
                let v = self.val();
                match split {
                    Some(s) => self.ins(&format!(
                        "{v} = call {ty} @{name}(ptr addrspace(6) {t}, i64 {s}, i1 {pack})"
                    )),
                    None => self.ins(&format!(
                        "{v} = call {ty} @{name}(ptr addrspace(6) {t}, i1 {pack})"
                    )),
                }
                pending.push(Pending {
                    vec: v,
                    n: *nregs,
                    site: site.expect("Ld is a site"),
                });
            }
            Op::St {
                form,
                taddr,
                split,
                nregs,
                seed,
            } => {
                let t = self.taddr(taddr);
                // Register i of lane t holds lane * m + a (values::st_coeffs), as in the printer.
                let mut vals = Vec::new();
                for i in 0..*nregs {
                    let (m, a) = values::st_coeffs(*seed, u32::from(i));
                    let x = self.val();
                    self.ins(&format!("{x} = mul i32 %lane, {m}"));
                    let y = self.val();
                    self.ins(&format!("{y} = add i32 {x}, {a}"));
                    vals.push(y);
                }
                let ty = vec_ty(*nregs);
                let vec = if *nregs == 1 {
                    vals[0].clone()
                } else {
                    let mut acc = "poison".to_string();
                    for (i, x) in vals.iter().enumerate() {
                        let n = self.val();
                        self.ins(&format!("{n} = insertelement {ty} {acc}, i32 {x}, i32 {i}"));
                        acc = n;
                    }
                    acc
                };
                let name = ldst_name("st", form.shape, form.num);
                let unpack = form.pack.is_some();
                match split {
                    Some(s) => self.ins(&format!(
                        "call void @{name}(ptr addrspace(6) {t}, i64 {s}, {ty} {vec}, i1 {unpack})"
                    )),
                    None => self.ins(&format!(
                        "call void @{name}(ptr addrspace(6) {t}, {ty} {vec}, i1 {unpack})"
                    )),
                }
            }
            Op::Commit {
                form,
                mbar,
                addr,
                cta_mask,
            } => {
                let g = cg(form.cta_group);
                let mc = if form.multicast { ".mc" } else { "" };
                let mask = cta_mask.map(|m| format!(", i16 {m}")).unwrap_or_default();
                let off = 8 * u32::from(*mbar);
                if form.shared_cluster {
                    let p = self.shared_ptr("tc_mbar", off);
                    self.ins(&format!(
                        "call void @llvm.nvvm.tcgen05.commit{mc}.shared.{g}(ptr addrspace(3) {p}{mask})"
                    ));
                } else {
                    let p = match addr {
                        MbarAddr::Shared => self.generic_ptr("tc_mbar", 3, off),
                        MbarAddr::GlobalUb => self.generic_ptr("tc_scratch", 1, off),
                    };
                    self.ins(&format!(
                        "call void @llvm.nvvm.tcgen05.commit{mc}.{g}(ptr {p}{mask})"
                    ));
                }
            }
            Op::Cp { form, taddr, src } => {
                let t = self.taddr(taddr);
                let d = self.desc(src);
                let shape = cp_shape(form).expect("checked by unsupported");
                self.ins(&format!(
                    "call void @llvm.nvvm.tcgen05.cp.{shape}.{}(ptr addrspace(6) {t}, i64 {d})",
                    cg(form.cta_group)
                ));
            }
            Op::Shift { form, taddr } => {
                let t = self.taddr(taddr);
                self.ins(&format!(
                    "call void @llvm.nvvm.tcgen05.shift.down.{}(ptr addrspace(6) {t})",
                    cg(form.cta_group)
                ));
            }
            Op::Mma(m) => self.mma(m),
        }
    }

    fn mma(&mut self, m: &Mma) {
        let name = mma_name(m).expect("checked by unsupported");
        let f = &m.form;
        let d = self.taddr(&m.d);
        let mut args = vec![format!("ptr addrspace(6) {d}")];
        args.push(match &m.a {
            MmaA::Desc(desc) => format!("i64 {}", self.desc(desc)),
            MmaA::Tmem(t) => format!("ptr addrspace(6) {}", self.taddr(t)),
        });
        args.push(format!("i64 {}", self.desc(&m.b)));
        args.push(format!("i32 {}", m.idesc as i32));
        args.push(format!("i1 {}", m.enable_input_d));
        if let Some(sp) = &m.sp_meta {
            args.push(format!("ptr addrspace(6) {}", self.taddr(sp)));
        }
        if let (Some(a), Some(b)) = (&m.scale_a, &m.scale_b) {
            args.push(format!("ptr addrspace(6) {}", self.taddr(a)));
            args.push(format!("ptr addrspace(6) {}", self.taddr(b)));
        }
        if let Some(s) = m.scale_input_d {
            args.push(format!("i64 {s}"));
        }
        if let Some(z) = m.zero_col_mask {
            args.push(format!("i64 {}", z as i64));
        }
        if let Some(dol) = &m.disable_output_lane {
            let elems: Vec<String> = dol.iter().map(|v| format!("i32 {}", *v as i32)).collect();
            args.push(format!("<{} x i32> <{}>", dol.len(), elems.join(", ")));
        }
        // MMA-COLLECTOR-DEFAULT: no qualifier means `::a::discard` (ws: `::b0::discard`).
        let usage = f.collector.map_or(0, |c| match c.op {
            CollectorOp::Discard => 0,
            CollectorOp::Lastuse => 1,
            CollectorOp::Fill => 2,
            CollectorOp::Use => 3,
        });
        let kind = match f.kind {
            MmaKind::F16 => 0,
            MmaKind::Tf32 => 1,
            MmaKind::F8f6f4 => 2,
            _ => 3,
        };
        if f.ws {
            let buf = f.collector.map_or(0, |c| match c.buf {
                CollectorBuf::B1 => 1,
                CollectorBuf::B2 => 2,
                CollectorBuf::B3 => 3,
                _ => 0,
            });
            args.extend([
                format!("i32 {kind}"),
                format!("i32 {buf}"),
                format!("i32 {usage}"),
            ]);
        } else if f.block_scale {
            args.extend([format!("i32 {}", f.cta_group.n()), format!("i32 {usage}")]);
        } else if m.disable_output_lane.is_some() {
            args.extend([format!("i32 {kind}"), format!("i32 {usage}")]);
        } else {
            args.extend([
                format!("i32 {kind}"),
                format!("i32 {}", f.cta_group.n()),
                format!("i32 {usage}"),
            ]);
        }
        self.ins(&format!("call void @{name}({})", args.join(", ")));
    }
}

fn vec_ty(n: u16) -> String {
    if n == 1 {
        "i32".into()
    } else {
        format!("<{n} x i32>")
    }
}

fn ldst_name(which: &str, shape: LdStShape, num: Num) -> String {
    let s = shape.as_str().trim_start_matches('.');
    format!("llvm.nvvm.tcgen05.{which}.{s}.x{}", num.count())
}
