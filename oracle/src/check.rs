//! The static check: every catalogue row of kind *static* that the program model can express,
//! applied to every instruction of the kernel (warp code, reached or not, and every function
//! the warps call, directly or not). Each violation cites its rule and spec section.
//!
//! Rows whose value lives in a register in the printed PTX (nCols in a register, `idesc`,
//! descriptors, TMEM addresses) are dynamic there (reference §6, "Where the value is in a
//! register, the same rule is dynamic") and are judged by [`crate::expect()`] instead.

use crate::catalogue;
use crate::gating;
use crate::types::{Code, Location, Violation};
use tcgen05_ir::form::*;
use tcgen05_ir::*;

/// A statement's location, borrowed while walking.
#[derive(Clone, Copy)]
struct Loc<'p> {
    code: Code,
    path: &'p [u16],
}

impl Loc<'_> {
    fn owned(self) -> Location {
        Location {
            code: self.code,
            path: self.path.to_vec(),
        }
    }
}

/// Collects violations with their locations.
struct Checker<'a> {
    p: &'a Program,
    out: Vec<Violation>,
    /// The `.cta_group` of the first instruction that has one (GEN-CTAGROUP-UNIFORM).
    first_cg: Option<(CtaGroup, Location)>,
    /// [`gating::target_and_version_ok`] for the program's target and version (computed
    /// once: an instruction of an ungated form then passes every gating row).
    gate_ok: bool,
}

impl Checker<'_> {
    fn flag(&mut self, rule: RuleId, loc: Option<Loc<'_>>, message: impl Into<String>) {
        self.out.push(Violation {
            rule,
            section: catalogue::section(rule).to_string(),
            location: loc.map(Loc::owned),
            message: message.into(),
        });
    }

    fn block(&mut self, code: Code, path: &mut Vec<u16>, stmts: &[Stmt]) {
        self.children(code, path, stmts, 0);
    }

    fn children(&mut self, code: Code, path: &mut Vec<u16>, stmts: &[Stmt], first: usize) {
        if stmts.is_empty() {
            return;
        }
        // One path entry for the children, renumbered for each (a child's own children push
        // theirs after it and pop it before the next child).
        let depth = path.len();
        path.push(0);
        for (i, s) in stmts.iter().enumerate() {
            // Children are numbered from `first` (an If's else statements follow its then).
            path[depth] = (first + i) as u16;
            self.block_one(code, path, s);
        }
        path.pop();
    }

    fn block_one(&mut self, code: Code, path: &mut Vec<u16>, s: &Stmt) {
        match s {
            Stmt::Tc(op) => {
                self.op(op, Loc { code, path });
            }
            Stmt::If { then, els, .. } => {
                self.children(code, path, then, 0);
                self.children(code, path, els, then.len());
            }
            Stmt::Loop { body, .. } => self.children(code, path, body, 0),
            _ => {}
        }
    }

    fn op(&mut self, op: &Op, loc: Loc<'_>) {
        let form = op.form();
        let l = &self.p.launch;
        // GEN-TARGET, GEN-PTXVER and the per-feature target rows (reference §1): what
        // `gating::gate` gives, without its per-instruction target and version tests.
        if !(self.gate_ok && gating::ungated_form(op)) {
            for (rule, msg) in gating::gate(op, l.target, l.ptx_version) {
                self.flag(rule, Some(loc), msg);
            }
        }
        // GEN-CTAGROUP-UNIFORM (§9.7.16.7.1 ...): wait's .cta_group is WAIT-OPS, not a group.
        if let (Some(cg), false) = (form.cta_group(), matches!(form, Form::Wait(_))) {
            match &self.first_cg {
                None => self.first_cg = Some((cg, loc.owned())),
                Some((first, at)) if *first != cg => {
                    let msg = format!(
                        "this instruction uses {} but {at} uses {}; a kernel must use one .cta_group",
                        cg.as_str(),
                        first.as_str()
                    );
                    self.flag(RuleId::GenCtagroupUniform, Some(loc), msg);
                }
                Some(_) => {}
            }
        }
        // GEN-PEER-EXISTS: static when the cluster shape is declared (§9.7.16.5.1).
        if form.cta_group() == Some(CtaGroup::Two)
            && !matches!(form, Form::Wait(_))
            && l.declare_cluster
            && l.cluster_size < 2
        {
            self.flag(
                RuleId::GenPeerExists,
                Some(loc),
                "a .cta_group::2 operation needs a peer CTA, but the declared cluster has one CTA",
            );
        }
        self.sync_qual(&form, loc);
        match op {
            Op::Alloc { form, ncols, .. } => {
                if !matches!(form.space, None | Some(StateSpace::SharedCta)) {
                    let msg = format!(
                        "alloc's dst may be generic or .shared::cta, not {}",
                        form.space.map_or("", |s| s.as_str())
                    );
                    self.flag(RuleId::AllocDstStatespace, Some(loc), msg);
                }
                if form.ty != Ty::B32 {
                    let msg = format!("alloc's type must be .b32, not {}", form.ty.as_str());
                    self.flag(RuleId::AllocDstStatespace, Some(loc), msg);
                }
                self.ncols("alloc", ncols, loc);
            }
            Op::Dealloc { form, ncols, .. } => {
                if form.ty != Ty::B32 {
                    let msg = format!(
                        "dealloc's type must be .b32 (syntax line), not {}",
                        form.ty.as_str()
                    );
                    self.flag(RuleId::AllocDstStatespace, Some(loc), msg);
                }
                self.ncols("dealloc", ncols, loc);
            }
            Op::Relinquish { .. } | Op::Fence { .. } => {}
            Op::Ld {
                form, split, nregs, ..
            } => self.ld(form, *split, *nregs, loc),
            Op::St {
                form, split, nregs, ..
            } => {
                self.ldst_common(form.shape, form.num, *split, *nregs, loc);
                if form.ty != Ty::B32 {
                    let msg = format!("tcgen05.st uses .b32, not {}", form.ty.as_str());
                    self.flag(RuleId::LdstType, Some(loc), msg);
                }
                if form.pack == Some(Pack::Pack16b) {
                    self.flag(
                        RuleId::LdPackOnly,
                        Some(loc),
                        ".pack::16b is allowed only on tcgen05.ld",
                    );
                }
            }
            Op::Wait { form } => {
                if let Some(cg) = form.cta_group {
                    let msg = format!("tcgen05.wait takes no .cta_group (found {})", cg.as_str());
                    self.flag(RuleId::WaitOps, Some(loc), msg);
                }
            }
            Op::Commit { form, cta_mask, .. } => {
                if !form.arrive_one {
                    self.flag(
                        RuleId::CommitCompletion,
                        Some(loc),
                        "commit needs .mbarrier::arrive::one, its only completion mechanism",
                    );
                }
                if form.ty != Ty::B64 {
                    let msg = format!("commit's type must be .b64, not {}", form.ty.as_str());
                    self.flag(RuleId::CommitCompletion, Some(loc), msg);
                }
                match (form.multicast, cta_mask.is_some()) {
                    (true, false) => self.flag(
                        RuleId::CommitMcastMask,
                        Some(loc),
                        ".multicast::cluster requires the 16-bit ctaMask operand",
                    ),
                    (false, true) => self.flag(
                        RuleId::CommitMcastMask,
                        Some(loc),
                        "a ctaMask operand is written without .multicast::cluster",
                    ),
                    _ => {}
                }
            }
            Op::Cp { form, .. } => self.cp(form, loc),
            Op::Shift { .. } => {}
            Op::Mma(m) => self.mma(m, loc),
        }
    }

    /// GEN-SYNC-QUAL: `.sync.aligned` on alloc, dealloc, relinquish, ld, st and wait.
    fn sync_qual(&mut self, form: &Form, loc: Loc<'_>) {
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
            self.flag(RuleId::GenSyncQual, Some(loc), msg);
        }
    }

    /// ALLOC-NCOLS-POW2 / ALLOC-NCOLS-RANGE for immediates (§9.7.16.7.1).
    fn ncols(&mut self, what: &str, n: &NCols, loc: Loc<'_>) {
        if n.form != NColsForm::Imm {
            return;
        }
        if !n.value.is_power_of_two() {
            let msg = format!("{what} nCols {} is not a power of two", n.value);
            self.flag(RuleId::AllocNcolsPow2, Some(loc), msg);
        }
        if !(32..=512).contains(&n.value) {
            let msg = format!("{what} nCols {} is outside [32, 512]", n.value);
            self.flag(RuleId::AllocNcolsRange, Some(loc), msg);
        }
    }

    /// LDST-SHAPE, LDST-NUM, LDST-VEC-LEN, LDST-NUM-NA, LDST-SPLITOFF (§9.7.16.8.3/4). A shape
    /// or `.num` the spec does not list is reported alone: the vector-length table has no row
    /// for it.
    fn ldst_common(
        &mut self,
        shape: LdStShape,
        num: Num,
        split: Option<u32>,
        nregs: u16,
        loc: Loc<'_>,
    ) {
        if !shape.is_legal() {
            let msg = format!(
                "{} is not a tcgen05.ld/st shape (.16x64b, .16x128b, .16x256b, .32x32b, .16x32bx2)",
                shape.as_str()
            );
            self.flag(RuleId::LdstShape, Some(loc), msg);
        }
        if !num.is_legal() {
            let msg = format!("{} is not a .num (.x1 to .x128)", num.as_str());
            self.flag(RuleId::LdstNum, Some(loc), msg);
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
                self.flag(RuleId::LdstNumNa, Some(loc), msg);
            }
            Some(n) if n != nregs => {
                let msg = format!(
                    "{}{} moves {n} registers per thread, but the vector has {nregs}",
                    shape.as_str(),
                    num.as_str()
                );
                self.flag(RuleId::LdstVecLen, Some(loc), msg);
            }
            Some(_) => {}
        }
        match (shape == LdStShape::S16x32bx2, split.is_some()) {
            (true, false) => self.flag(
                RuleId::LdstSplitoff,
                Some(loc),
                ".16x32bx2 needs the immHalfSplitoff operand",
            ),
            (false, true) => {
                let msg = format!(
                    "immHalfSplitoff is only for .16x32bx2, not {}",
                    shape.as_str()
                );
                self.flag(RuleId::LdstSplitoff, Some(loc), msg);
            }
            _ => {}
        }
    }

    fn ld(&mut self, f: &LdForm, split: Option<u32>, nregs: u16, loc: Loc<'_>) {
        self.ldst_common(f.shape, f.num, split, nregs, loc);
        if f.pack == Some(Pack::Unpack16b) {
            self.flag(
                RuleId::StUnpackOnly,
                Some(loc),
                ".unpack::16b is allowed only on tcgen05.st",
            );
        }
        if !f.red {
            if f.ty != Ty::B32 {
                let msg = format!("tcgen05.ld without .red uses .b32, not {}", f.ty.as_str());
                self.flag(RuleId::LdstType, Some(loc), msg);
            }
            if f.red_op.is_some() || f.abs || f.nan {
                self.flag(
                    RuleId::LdRedType,
                    Some(loc),
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
            self.flag(RuleId::LdRedShape, Some(loc), msg);
        }
        if f.num == Num::X1 {
            self.flag(
                RuleId::LdRedNum,
                Some(loc),
                "ld.red needs .num of .x2 or more",
            );
        }
        if f.red_op.is_none() {
            self.flag(
                RuleId::LdRedType,
                Some(loc),
                "ld.red needs a reduction operator (.min or .max)",
            );
        }
        match f.ty {
            Ty::F32 => {}
            Ty::U32 | Ty::S32 => {
                if f.abs || f.nan {
                    self.flag(
                        RuleId::LdRedType,
                        Some(loc),
                        ".abs and .NaN are only for ld.red with .f32",
                    );
                }
            }
            t => {
                let msg = format!("ld.red's type is .f32, .u32 or .s32, not {}", t.as_str());
                self.flag(RuleId::LdRedType, Some(loc), msg);
            }
        }
        if f.pack.is_some() {
            self.flag(
                RuleId::LdRedType,
                Some(loc),
                ".pack::16b is not part of the ld.red syntax",
            );
        }
    }

    /// CP-SHAPE, CP-MCAST-REQ, CP-MCAST-OTHER, CP-DECOMP-FMT (§9.7.16.9.2).
    fn cp(&mut self, f: &CpForm, loc: Loc<'_>) {
        use CpMulticast::*;
        if !f.shape.is_legal() {
            let msg = format!(
                "{} is not a tcgen05.cp shape (.128x256b, .4x256b, .128x128b, .64x128b, .32x128b)",
                f.shape.as_str()
            );
            self.flag(RuleId::CpShape, Some(loc), msg);
            return;
        }
        match (f.shape, f.multicast) {
            (CpShape::S64x128b, Some(Warpx2_02_13 | Warpx2_01_23))
            | (CpShape::S32x128b, Some(Warpx4)) => {}
            (CpShape::S64x128b, _) => self.flag(
                RuleId::CpMcastReq,
                Some(loc),
                ".64x128b requires .warpx2::02_13 or .warpx2::01_23",
            ),
            (CpShape::S32x128b, _) => {
                self.flag(RuleId::CpMcastReq, Some(loc), ".32x128b requires .warpx4")
            }
            (s, Some(m)) => {
                let msg = format!(
                    "multicast {} on shape {} is not sanctioned (inferred from the syntax footnotes)",
                    m.as_str(),
                    s.as_str()
                );
                self.flag(RuleId::CpMcastOther, Some(loc), msg);
            }
            (_, None) => {}
        }
        if f.dst_fmt.is_some() != f.src_fmt.is_some() {
            self.flag(
                RuleId::CpDecompFmt,
                Some(loc),
                "decompression needs both formats: .b8x16 with .b6x16_p32 or .b4x16_p64",
            );
        }
    }

    fn mma(&mut self, m: &Mma, loc: Loc<'_>) {
        let f = &m.form;
        let block_kind = matches!(
            f.kind,
            MmaKind::Mxf8f6f4 | MmaKind::Mxf4 | MmaKind::Mxf4nvf4
        );
        // MMA-WS-CTA1, MMA-WS-KINDS (§9.7.16.10.9.3/4).
        if f.ws && f.cta_group == CtaGroup::Two {
            self.flag(
                RuleId::MmaWsCta1,
                Some(loc),
                ".ws forms accept only .cta_group::1",
            );
        }
        if f.ws && block_kind {
            let msg = format!(
                ".ws forms accept f16, tf32, f8f6f4 and i8, not {}",
                f.kind.as_str()
            );
            self.flag(RuleId::MmaWsKinds, Some(loc), msg);
        }
        // MMA-BS-KINDS: .block_scale with exactly the mx kinds, and its scale operands.
        if f.block_scale != block_kind {
            let msg = if block_kind {
                format!("{} requires .block_scale", f.kind.as_str())
            } else {
                format!(".block_scale is not allowed with {}", f.kind.as_str())
            };
            self.flag(RuleId::MmaBsKinds, Some(loc), msg);
        }
        if f.block_scale != (m.scale_a.is_some() && m.scale_b.is_some())
            || m.scale_a.is_some() != m.scale_b.is_some()
        {
            self.flag(
                RuleId::MmaBsKinds,
                Some(loc),
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
                self.flag(RuleId::MmaBsVec, Some(loc), msg);
            }
        } else if f.kind == MmaKind::Mxf4nvf4 && f.block_scale {
            self.flag(
                RuleId::MmaBsNvf4Explicit,
                Some(loc),
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
                    Some(loc),
                    ".ashift is illegal with .collector::a::use or ::fill",
                );
            }
            if matches!(m.a, MmaA::Desc(_)) || f.block_scale || f.ws {
                self.flag(
                    RuleId::MmaAshiftAtmem,
                    Some(loc),
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
                self.flag(RuleId::MmaCollectorBuf, Some(loc), msg);
            }
        }
        // MMA-SCALE-D-RANGE, MMA-SCALE-D-KIND (§9.7.16.10.9.1/2).
        if let Some(s) = m.scale_input_d {
            if s > 15 {
                let msg = format!("scale-input-d {s} is outside [0, 15]");
                self.flag(RuleId::MmaScaleDRange, Some(loc), msg);
            }
            if !matches!(f.kind, MmaKind::F16 | MmaKind::Tf32) || f.ws || f.block_scale {
                let msg = format!(
                    "scale-input-d exists only in the non-.ws kind::f16 and kind::tf32 forms, not {}{}",
                    if f.ws { ".ws " } else { "" },
                    f.kind.as_str()
                );
                self.flag(RuleId::MmaScaleDKind, Some(loc), msg);
            }
        }
        // MMA-DOL-SIZE.
        if let Some(d) = &m.disable_output_lane {
            let want = if f.cta_group == CtaGroup::One { 4 } else { 8 };
            if f.ws || f.block_scale {
                self.flag(
                    RuleId::MmaDolSize,
                    Some(loc),
                    "disable-output-lane is not an operand of .ws or .block_scale forms",
                );
            } else if d.len() != want {
                let msg = format!(
                    "disable-output-lane has {} elements; {} needs {want}",
                    d.len(),
                    f.cta_group.as_str()
                );
                self.flag(RuleId::MmaDolSize, Some(loc), msg);
            }
        }
        // MMA-ZCM-WS-ONLY.
        if m.zero_col_mask.is_some() && !f.ws {
            self.flag(
                RuleId::MmaZcmWsOnly,
                Some(loc),
                "zero-column-mask-desc exists only in .ws forms",
            );
        }
        // The [sp-meta-tmem] operand belongs to exactly the .sp forms (syntax lines); no row
        // names it, so it is reported under MMA-SHAPE-VALID (see oracle/README.md).
        if f.sp != m.sp_meta.is_some() {
            self.flag(
                RuleId::MmaShapeValid,
                Some(loc),
                "[sp-meta-tmem] is an operand of exactly the .sp forms (syntax line)",
            );
        }
    }
}

/// Every function index reachable through `Call`s from the warps' code.
pub(crate) fn called_funcs(p: &Program) -> Vec<bool> {
    fn go(b: &[Stmt], p: &Program, seen: &mut Vec<bool>) {
        for s in b {
            match s {
                Stmt::Call(f) => {
                    let f = usize::from(*f);
                    if f < p.funcs.len() && !seen[f] {
                        seen[f] = true;
                        go(&p.funcs[f].body, p, seen);
                    }
                }
                Stmt::If { then, els, .. } => {
                    go(then, p, seen);
                    go(els, p, seen);
                }
                Stmt::Loop { body, .. } => go(body, p, seen),
                _ => {}
            }
        }
    }
    let mut seen = vec![false; p.funcs.len()];
    if p.funcs.is_empty() {
        // Nothing to call (and no walk needed to find it out).
        return seen;
    }
    for w in &p.warps {
        go(w, p, &mut seen);
    }
    seen
}

/// Every static violation of `p`, in order: warps by rank, then called functions by index.
pub fn check(p: &Program) -> Vec<Violation> {
    let mut c = Checker {
        p,
        out: Vec::new(),
        first_cg: None,
        gate_ok: gating::target_and_version_ok(p.launch.target, p.launch.ptx_version),
    };
    let mut path = Vec::with_capacity(8);
    for (w, code) in p.warps.iter().enumerate() {
        c.block(Code::Warp(w as u8), &mut path, code);
    }
    for (i, called) in called_funcs(p).into_iter().enumerate() {
        if called {
            c.block(Code::Func(i as u8), &mut path, &p.funcs[i].body);
        }
    }
    c.out
}
