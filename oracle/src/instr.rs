//! The per-instruction rules: every catalogue row of kind *static* that one tcgen05
//! instruction decides on its own (its form, its operands' kinds and immediates, the target and
//! PTX version), and the target rows of reference §1 ([`crate::gating`]). One implementation,
//! used by the oracle's static check ([`crate::check()`], per [`Op`]) and by `check` of real PTX
//! ([`crate::kernel`], per parsed instruction).
//!
//! Of the rules that need more than one instruction, GEN-CTAGROUP-UNIFORM is here too
//! ([`CtaGroupUniform`]); the rules that need a path (the protocol rules) are not.

use crate::gating;
use tcgen05_ir::form::*;
use tcgen05_ir::*;

/// What the per-instruction rules read of an instruction's operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Operands {
    /// alloc/dealloc `nCols` when it is an immediate (ALLOC-NCOLS-*); `None` for a register.
    pub ncols_imm: Option<u32>,
    /// ld/st `immHalfSplitoff`, when written (LDST-SPLITOFF).
    pub split: Option<u32>,
    /// Registers of the ld/st vector (LDST-VEC-LEN).
    pub nregs: u16,
    /// commit's `ctaMask` operand is written (COMMIT-MCAST-MASK).
    pub cta_mask: bool,
    /// The mma operands.
    pub mma: MmaOperands,
}

/// What the per-instruction rules read of a `tcgen05.mma`'s operands (reference §3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MmaOperands {
    /// A is `[a-tmem]` rather than `a-desc`.
    pub a_tmem: bool,
    /// `[sp-meta-tmem]` is written.
    pub sp_meta: bool,
    /// `[scale-A-tmem]` is written.
    pub scale_a: bool,
    /// `[scale-B-tmem]` is written.
    pub scale_b: bool,
    /// Elements of the `disable-output-lane` vector, when written.
    pub disable_output_lane: Option<usize>,
    /// The `scale-input-d` immediate, when written.
    pub scale_input_d: Option<u32>,
    /// `zero-column-mask-desc` is written.
    pub zero_col_mask: bool,
}

impl Operands {
    /// The operands of a program-model instruction.
    pub fn of(op: &Op) -> Operands {
        let ncols = |n: &NCols| (n.form == NColsForm::Imm).then_some(n.value);
        match op {
            Op::Alloc { ncols: n, .. } | Op::Dealloc { ncols: n, .. } => Operands {
                ncols_imm: ncols(n),
                ..Operands::default()
            },
            Op::Ld { split, nregs, .. } | Op::St { split, nregs, .. } => Operands {
                split: *split,
                nregs: *nregs,
                ..Operands::default()
            },
            Op::Commit { cta_mask, .. } => Operands {
                cta_mask: cta_mask.is_some(),
                ..Operands::default()
            },
            Op::Mma(m) => Operands {
                mma: MmaOperands {
                    a_tmem: matches!(m.a, MmaA::Tmem(_)),
                    sp_meta: m.sp_meta.is_some(),
                    scale_a: m.scale_a.is_some(),
                    scale_b: m.scale_b.is_some(),
                    disable_output_lane: m.disable_output_lane.as_ref().map(Vec::len),
                    scale_input_d: m.scale_input_d.map(u32::from),
                    zero_col_mask: m.zero_col_mask.is_some(),
                },
                ..Operands::default()
            },
            _ => Operands::default(),
        }
    }
}

/// Where an instruction runs: the module's target and version, and the declared cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ctx {
    /// The `.target`.
    pub target: Target,
    /// The `.version`.
    pub version: PtxVersion,
    /// The declared CTAs per cluster (`.reqnctapercluster`), if declared (GEN-PEER-EXISTS).
    pub cluster: Option<u32>,
    /// [`gating::target_and_version_ok`] of `target` and `version` (computed once).
    pub gate_ok: bool,
}

impl Ctx {
    /// The context of a module of `target` and `version`.
    pub fn new(target: Target, version: PtxVersion, cluster: Option<u32>) -> Ctx {
        Ctx {
            target,
            version,
            cluster,
            gate_ok: gating::target_and_version_ok(target, version),
        }
    }
}

/// Every per-instruction violation of an instruction of `form` with `ops` under `ctx`, as
/// `(rule, message)`, appended to `out`.
pub fn check_instr(form: &Form, ops: &Operands, ctx: &Ctx, out: &mut Vec<(RuleId, String)>) {
    let mut r = Rules { out };
    // GEN-TARGET, GEN-PTXVER and the per-feature target rows (reference §1).
    if !(ctx.gate_ok && gating::ungated(form)) {
        r.out.extend(gating::gate(form, ctx.target, ctx.version));
    }
    // MMA-SCALE-D-TARGET (ptxas 13.5; catalogue row outside the reference).
    if let Form::Mma(_) = form
        && ops.mma.scale_input_d.is_some()
        && matches!(ctx.target, Target::Sm110a | Target::Sm110f)
    {
        let msg = format!(
            "scale-input-d is not available on {} (ptxas 13.5: argument scale-inp-d-imm not supported)",
            ctx.target
        );
        r.flag(RuleId::MmaScaleDTarget, msg);
    }
    // GEN-PEER-EXISTS: static when the cluster shape is declared (§9.7.16.5.1).
    if form.cta_group() == Some(CtaGroup::Two)
        && !matches!(form, Form::Wait(_))
        && ctx.cluster.is_some_and(|n| n < 2)
    {
        r.flag(
            RuleId::GenPeerExists,
            "a .cta_group::2 operation needs a peer CTA, but the declared cluster has one CTA"
                .to_string(),
        );
    }
    r.sync_qual(form);
    match form {
        Form::Alloc(f) => {
            if !matches!(f.space, None | Some(StateSpace::SharedCta)) {
                let msg = format!(
                    "alloc's dst may be generic or .shared::cta, not {}",
                    f.space.map_or("", |s| s.as_str())
                );
                r.flag(RuleId::AllocDstStatespace, msg);
            }
            if f.ty != Ty::B32 {
                let msg = format!("alloc's type must be .b32, not {}", f.ty.as_str());
                r.flag(RuleId::AllocDstStatespace, msg);
            }
            r.ncols("alloc", ops.ncols_imm);
        }
        Form::Dealloc(f) => {
            if f.ty != Ty::B32 {
                let msg = format!(
                    "dealloc's type must be .b32 (syntax line), not {}",
                    f.ty.as_str()
                );
                r.flag(RuleId::AllocDstStatespace, msg);
            }
            r.ncols("dealloc", ops.ncols_imm);
        }
        Form::Relinquish(_) | Form::Fence(_) | Form::Shift(_) => {}
        Form::Ld(f) => r.ld(f, ops.split, ops.nregs),
        Form::St(f) => {
            r.ldst_common(f.shape, f.num, ops.split, ops.nregs);
            if f.ty != Ty::B32 {
                let msg = format!("tcgen05.st uses .b32, not {}", f.ty.as_str());
                r.flag(RuleId::LdstType, msg);
            }
            if f.pack == Some(Pack::Pack16b) {
                r.flag(
                    RuleId::LdPackOnly,
                    ".pack::16b is allowed only on tcgen05.ld".to_string(),
                );
            }
        }
        Form::Wait(f) => {
            if let Some(cg) = f.cta_group {
                let msg = format!("tcgen05.wait takes no .cta_group (found {})", cg.as_str());
                r.flag(RuleId::WaitOps, msg);
            }
        }
        Form::Commit(f) => {
            if !f.arrive_one {
                r.flag(
                    RuleId::CommitCompletion,
                    "commit needs .mbarrier::arrive::one, its only completion mechanism"
                        .to_string(),
                );
            }
            if f.ty != Ty::B64 {
                let msg = format!("commit's type must be .b64, not {}", f.ty.as_str());
                r.flag(RuleId::CommitCompletion, msg);
            }
            match (f.multicast, ops.cta_mask) {
                (true, false) => r.flag(
                    RuleId::CommitMcastMask,
                    ".multicast::cluster requires the 16-bit ctaMask operand".to_string(),
                ),
                (false, true) => r.flag(
                    RuleId::CommitMcastMask,
                    "a ctaMask operand is written without .multicast::cluster".to_string(),
                ),
                _ => {}
            }
        }
        Form::Cp(f) => r.cp(f),
        Form::Mma(f) => r.mma(f, &ops.mma),
    }
}

/// GEN-CTAGROUP-UNIFORM (§9.7.16.7.1, .9.2, .9.3, .10.9, .12.1; static): every instruction of a
/// kernel with a `.cta_group` uses the same one. Fed the kernel's instructions in order, it
/// remembers the first `.cta_group` and where it was (`L`).
#[derive(Debug, Clone)]
pub struct CtaGroupUniform<L> {
    first: Option<(CtaGroup, L)>,
}

impl<L> Default for CtaGroupUniform<L> {
    fn default() -> Self {
        CtaGroupUniform { first: None }
    }
}

impl<L: std::fmt::Display> CtaGroupUniform<L> {
    /// Sees an instruction of `form` at `at()`: the violation's message when its `.cta_group`
    /// differs from the first one seen. `wait`'s `.cta_group` is WAIT-OPS, not a group.
    pub fn see(&mut self, form: &Form, at: impl FnOnce() -> L) -> Option<String> {
        let cg = form
            .cta_group()
            .filter(|_| !matches!(form, Form::Wait(_)))?;
        match &self.first {
            None => {
                self.first = Some((cg, at()));
                None
            }
            Some((first, at0)) if *first != cg => Some(format!(
                "this instruction uses {} but {at0} uses {}; a kernel must use one .cta_group",
                cg.as_str(),
                first.as_str()
            )),
            Some(_) => None,
        }
    }
}

/// Collects `(rule, message)` pairs.
struct Rules<'o> {
    out: &'o mut Vec<(RuleId, String)>,
}

impl Rules<'_> {
    fn flag(&mut self, rule: RuleId, msg: impl Into<String>) {
        self.out.push((rule, msg.into()));
    }

    /// GEN-SYNC-QUAL: `.sync.aligned` on alloc, dealloc, relinquish, ld, st and wait.
    fn sync_qual(&mut self, form: &Form) {
        let (sync, aligned) = match form {
            Form::Alloc(f) => (f.sync, f.aligned),
            Form::Dealloc(f) => (f.sync, f.aligned),
            Form::Relinquish(f) => (f.sync, f.aligned),
            Form::Ld(f) => (f.sync, f.aligned),
            Form::St(f) => (f.sync, f.aligned),
            Form::Wait(f) => (f.sync, f.aligned),
            _ => return,
        };
        if !(sync && aligned) {
            let missing = match (sync, aligned) {
                (false, false) => ".sync and .aligned",
                (false, true) => ".sync",
                _ => ".aligned",
            };
            let msg = format!("tcgen05.{} requires {missing}", form.family().as_str());
            self.flag(RuleId::GenSyncQual, msg);
        }
    }

    /// ALLOC-NCOLS-POW2 / ALLOC-NCOLS-RANGE for immediates (§9.7.16.7.1).
    fn ncols(&mut self, what: &str, n: Option<u32>) {
        let Some(value) = n else {
            return;
        };
        if !value.is_power_of_two() {
            let msg = format!("{what} nCols {} is not a power of two", value);
            self.flag(RuleId::AllocNcolsPow2, msg);
        }
        if !(32..=512).contains(&value) {
            let msg = format!("{what} nCols {} is outside [32, 512]", value);
            self.flag(RuleId::AllocNcolsRange, msg);
        }
    }

    /// LDST-SHAPE, LDST-NUM, LDST-VEC-LEN, LDST-NUM-NA, LDST-SPLITOFF (§9.7.16.8.3/4). A shape
    /// or `.num` the spec does not list is reported alone: the vector-length table has no row
    /// for it.
    fn ldst_common(&mut self, shape: LdStShape, num: Num, split: Option<u32>, nregs: u16) {
        if !shape.is_legal() {
            let msg = format!(
                "{} is not a tcgen05.ld/st shape (.16x64b, .16x128b, .16x256b, .32x32b, .16x32bx2)",
                shape.as_str()
            );
            self.flag(RuleId::LdstShape, msg);
        }
        if !num.is_legal() {
            let msg = format!("{} is not a .num (.x1 to .x128)", num.as_str());
            self.flag(RuleId::LdstNum, msg);
        }
        if !shape.is_legal() || !num.is_legal() {
            return;
        }
        match vec_len(shape, num) {
            None => {
                let msg = format!(
                    "{}{} is not a valid combination",
                    shape.as_str(),
                    num.as_str()
                );
                self.flag(RuleId::LdstNumNa, msg);
            }
            Some(n) if n != nregs => {
                let msg = format!(
                    "{}{} moves {n} registers per thread, but the vector has {nregs}",
                    shape.as_str(),
                    num.as_str()
                );
                self.flag(RuleId::LdstVecLen, msg);
            }
            Some(_) => {}
        }
        match (shape == LdStShape::S16x32bx2, split.is_some()) {
            (true, false) => self.flag(
                RuleId::LdstSplitoff,
                ".16x32bx2 needs the immHalfSplitoff operand",
            ),
            (false, true) => {
                let msg = format!(
                    "immHalfSplitoff is only for .16x32bx2, not {}",
                    shape.as_str()
                );
                self.flag(RuleId::LdstSplitoff, msg);
            }
            _ => {}
        }
    }

    fn ld(&mut self, f: &LdForm, split: Option<u32>, nregs: u16) {
        self.ldst_common(f.shape, f.num, split, nregs);
        if f.pack == Some(Pack::Unpack16b) {
            self.flag(
                RuleId::StUnpackOnly,
                ".unpack::16b is allowed only on tcgen05.st",
            );
        }
        if !f.red {
            if f.ty != Ty::B32 {
                let msg = format!("tcgen05.ld without .red uses .b32, not {}", f.ty.as_str());
                self.flag(RuleId::LdstType, msg);
            }
            if f.red_op.is_some() || f.abs || f.nan {
                self.flag(
                    RuleId::LdRedType,
                    ".min/.max/.abs/.NaN exist only on tcgen05.ld.red",
                );
            }
            return;
        }
        // §9.7.16.8.3: the .red forms.
        if !matches!(f.shape, LdStShape::S32x32b | LdStShape::S16x32bx2) {
            let msg = format!(
                "ld.red takes .32x32b or .16x32bx2, not {}",
                f.shape.as_str()
            );
            self.flag(RuleId::LdRedShape, msg);
        }
        if f.num == Num::X1 {
            self.flag(RuleId::LdRedNum, "ld.red needs .num of .x2 or more");
        }
        if f.red_op.is_none() {
            self.flag(
                RuleId::LdRedType,
                "ld.red needs a reduction operator (.min or .max)",
            );
        }
        match f.ty {
            Ty::F32 => {}
            Ty::U32 | Ty::S32 => {
                if f.abs || f.nan {
                    self.flag(
                        RuleId::LdRedType,
                        ".abs and .NaN are only for ld.red with .f32",
                    );
                }
            }
            t => {
                let msg = format!("ld.red's type is .f32, .u32 or .s32, not {}", t.as_str());
                self.flag(RuleId::LdRedType, msg);
            }
        }
        if f.pack.is_some() {
            self.flag(
                RuleId::LdRedType,
                ".pack::16b is not part of the ld.red syntax",
            );
        }
    }

    /// CP-SHAPE, CP-MCAST-REQ, CP-MCAST-OTHER, CP-DECOMP-FMT (§9.7.16.9.2).
    fn cp(&mut self, f: &CpForm) {
        use CpMulticast::*;
        if !f.shape.is_legal() {
            let msg = format!(
                "{} is not a tcgen05.cp shape (.128x256b, .4x256b, .128x128b, .64x128b, .32x128b)",
                f.shape.as_str()
            );
            self.flag(RuleId::CpShape, msg);
            return;
        }
        match (f.shape, f.multicast) {
            (CpShape::S64x128b, Some(Warpx2_02_13 | Warpx2_01_23))
            | (CpShape::S32x128b, Some(Warpx4)) => {}
            (CpShape::S64x128b, _) => self.flag(
                RuleId::CpMcastReq,
                ".64x128b requires .warpx2::02_13 or .warpx2::01_23",
            ),
            (CpShape::S32x128b, _) => self.flag(RuleId::CpMcastReq, ".32x128b requires .warpx4"),
            (s, Some(m)) => {
                let msg = format!(
                    "multicast {} on shape {} is not sanctioned (inferred from the syntax footnotes)",
                    m.as_str(),
                    s.as_str()
                );
                self.flag(RuleId::CpMcastOther, msg);
            }
            (_, None) => {}
        }
        if f.dst_fmt.is_some() != f.src_fmt.is_some() {
            self.flag(
                RuleId::CpDecompFmt,
                "decompression needs both formats: .b8x16 with .b6x16_p32 or .b4x16_p64",
            );
        }
    }

    fn mma(&mut self, f: &MmaForm, m: &MmaOperands) {
        let block_kind = matches!(
            f.kind,
            MmaKind::Mxf8f6f4 | MmaKind::Mxf4 | MmaKind::Mxf4nvf4
        );
        // MMA-WS-CTA1, MMA-WS-KINDS (§9.7.16.10.9.3/4).
        if f.ws && f.cta_group == CtaGroup::Two {
            self.flag(RuleId::MmaWsCta1, ".ws forms accept only .cta_group::1");
        }
        if f.ws && block_kind {
            let msg = format!(
                ".ws forms accept f16, tf32, f8f6f4 and i8, not {}",
                f.kind.as_str()
            );
            self.flag(RuleId::MmaWsKinds, msg);
        }
        // MMA-BS-KINDS: .block_scale with exactly the mx kinds, and its scale operands.
        if f.block_scale != block_kind {
            let msg = if block_kind {
                format!("{} requires .block_scale", f.kind.as_str())
            } else {
                format!(".block_scale is not allowed with {}", f.kind.as_str())
            };
            self.flag(RuleId::MmaBsKinds, msg);
        }
        if f.block_scale != (m.scale_a && m.scale_b) || m.scale_a != m.scale_b {
            self.flag(
                RuleId::MmaBsKinds,
                "[scale-A-tmem] and [scale-B-tmem] are operands of exactly the .block_scale forms",
            );
        }
        // MMA-BS-VEC, MMA-BS-NVF4-EXPLICIT (§9.7.16.10.7.1, .10.9.1).
        if let Some(v) = f.scale_vec {
            let ok = match f.kind {
                MmaKind::Mxf8f6f4 => matches!(v, ScaleVec::X1 | ScaleVec::Block32),
                MmaKind::Mxf4 => matches!(v, ScaleVec::X2 | ScaleVec::Block32),
                MmaKind::Mxf4nvf4 => !matches!(v, ScaleVec::X1),
                _ => false,
            };
            if !ok || !f.block_scale {
                let msg = format!(
                    "scale vector {} is not valid for {}",
                    v.as_str(),
                    f.kind.as_str()
                );
                self.flag(RuleId::MmaBsVec, msg);
            }
        } else if f.kind == MmaKind::Mxf4nvf4 && f.block_scale {
            self.flag(
                RuleId::MmaBsNvf4Explicit,
                ".kind::mxf4nvf4 must state its scale-vector size",
            );
        }
        // MMA-ASHIFT-COLLECTOR, MMA-ASHIFT-ATMEM (§9.7.16.10.9.1).
        if f.ashift {
            if let Some(c) = f.collector
                && matches!(c.op, CollectorOp::Use | CollectorOp::Fill)
            {
                self.flag(
                    RuleId::MmaAshiftCollector,
                    ".ashift is illegal with .collector::a::use or ::fill",
                );
            }
            if !m.a_tmem || f.block_scale || f.ws {
                self.flag(
                    RuleId::MmaAshiftAtmem,

                    ".ashift exists only with A in TMEM, without .block_scale and outside .ws forms",
                );
            }
        }
        // MMA-COLLECTOR-BUF.
        if let Some(c) = f.collector {
            let ok = if f.ws {
                c.buf != CollectorBuf::A
            } else {
                c.buf == CollectorBuf::A
            };
            if !ok {
                let msg = format!(
                    "collector buffer ::{} is not allowed in {} forms",
                    c.buf.as_str(),
                    if f.ws { ".ws" } else { "non-.ws" }
                );
                self.flag(RuleId::MmaCollectorBuf, msg);
            }
        }
        // MMA-SCALE-D-RANGE, MMA-SCALE-D-KIND (§9.7.16.10.9.1/2).
        if let Some(s) = m.scale_input_d {
            if s > 15 {
                let msg = format!("scale-input-d {s} is outside [0, 15]");
                self.flag(RuleId::MmaScaleDRange, msg);
            }
            if !matches!(f.kind, MmaKind::F16 | MmaKind::Tf32) || f.ws || f.block_scale {
                let msg = format!(
                    "scale-input-d exists only in the non-.ws kind::f16 and kind::tf32 forms, not {}{}",
                    if f.ws { ".ws " } else { "" },
                    f.kind.as_str()
                );
                self.flag(RuleId::MmaScaleDKind, msg);
            }
        }
        // MMA-DOL-SIZE.
        if let Some(d) = m.disable_output_lane {
            let want = if f.cta_group == CtaGroup::One { 4 } else { 8 };
            if f.ws || f.block_scale {
                self.flag(
                    RuleId::MmaDolSize,
                    "disable-output-lane is not an operand of .ws or .block_scale forms",
                );
            } else if d != want {
                let msg = format!(
                    "disable-output-lane has {d} elements; {} needs {want}",
                    f.cta_group.as_str()
                );
                self.flag(RuleId::MmaDolSize, msg);
            }
        }
        // MMA-ZCM-WS-ONLY.
        if m.zero_col_mask && !f.ws {
            self.flag(
                RuleId::MmaZcmWsOnly,
                "zero-column-mask-desc exists only in .ws forms",
            );
        }
        // The [sp-meta-tmem] operand belongs to exactly the .sp forms (syntax lines); no row
        // names it, so it is reported under MMA-SHAPE-VALID (see oracle/README.md).
        if f.sp != m.sp_meta {
            self.flag(
                RuleId::MmaShapeValid,
                "[sp-meta-tmem] is an operand of exactly the .sp forms (syntax line)",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(opcode: &str, ops: &Operands, t: Target) -> Vec<RuleId> {
        let form = Form::parse(opcode).unwrap();
        let mut out = Vec::new();
        check_instr(
            &form,
            ops,
            &Ctx::new(t, PtxVersion::new(9, 0), None),
            &mut out,
        );
        out.into_iter().map(|(r, _)| r).collect()
    }

    #[test]
    fn scale_input_d_is_not_available_on_sm_110() {
        // Catalogue row MMA-SCALE-D-TARGET (ptxas 13.5); reference §1 lists sm_100a/f only.
        let mut ops = Operands::default();
        ops.mma.scale_input_d = Some(3);
        let op = "tcgen05.mma.cta_group::1.kind::f16";
        assert_eq!(rules(op, &ops, Target::Sm100a), []);
        assert_eq!(rules(op, &ops, Target::Sm103a), []);
        assert_eq!(rules(op, &ops, Target::Sm110a), [RuleId::MmaScaleDTarget]);
        assert_eq!(rules(op, &ops, Target::Sm110f), [RuleId::MmaScaleDTarget]);
        assert_eq!(rules(op, &Operands::default(), Target::Sm110a), []);
    }

    #[test]
    fn operand_facts_decide_the_operand_rules() {
        // §9.7.16.8.3: .32x32b.x4 moves 4 registers; §9.7.16.7.1: nCols a power of 2 in [32, 512].
        let ld = "tcgen05.ld.sync.aligned.32x32b.x4.b32";
        let ops = Operands {
            nregs: 4,
            ..Operands::default()
        };
        assert_eq!(rules(ld, &ops, Target::Sm100a), []);
        let ops = Operands {
            nregs: 2,
            ..Operands::default()
        };
        assert_eq!(rules(ld, &ops, Target::Sm100a), [RuleId::LdstVecLen]);
        let alloc = "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32";
        let ops = Operands {
            ncols_imm: Some(48),
            ..Operands::default()
        };
        assert_eq!(rules(alloc, &ops, Target::Sm100a), [RuleId::AllocNcolsPow2]);
    }

    #[test]
    fn a_kernel_uses_one_cta_group() {
        let mut u = CtaGroupUniform::<u32>::default();
        let one = Form::parse("tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64").unwrap();
        let two = Form::parse("tcgen05.shift.cta_group::2.down").unwrap();
        let wait = Form::parse("tcgen05.wait::ld.cta_group::2.sync.aligned").unwrap();
        assert_eq!(u.see(&one, || 1), None);
        assert_eq!(u.see(&wait, || 2), None, "wait's .cta_group is WAIT-OPS");
        assert!(u.see(&two, || 3).is_some_and(|m| m.contains("1 uses")));
    }
}
