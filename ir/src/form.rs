//! Instruction *forms*: a tcgen05 opcode with all its qualifiers, and nothing of its operands.
//!
//! A form is what `tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32` says. The program
//! model ([`crate::Op`]) pairs a form with the harness's operand model; the parser of real
//! compiler output ([`crate::ptx`]) pairs it with the operands as written. Printing emits the
//! syntax-line order of the reference (§3); parsing accepts the qualifiers in any order, because
//! the spec does not forbid reordering (OQ-34), and reports an unknown or repeated qualifier as
//! an error that says what was expected.

use crate::qual::*;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// `tcgen05.alloc` (§3.1): `tcgen05.alloc.cta_group{.exclusive}.sync.aligned{.shared::cta}.b32`.
/// `.exclusive` is the PTX 9.4 form that newer compilers emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct AllocForm {
    /// `.cta_group::1` or `::2`.
    pub cta_group: CtaGroup,
    /// `.exclusive` (PTX 9.4).
    pub exclusive: bool,
    /// `.sync` present (GEN-SYNC-QUAL).
    pub sync: bool,
    /// `.aligned` present (GEN-SYNC-QUAL).
    pub aligned: bool,
    /// State space of `dst`: none (generic) or `.shared::cta` (ALLOC-DST-STATESPACE).
    pub space: Option<StateSpace>,
    /// Operand type, `.b32` (ALLOC-DST-STATESPACE).
    pub ty: Ty,
}

/// `tcgen05.dealloc.cta_group{.exclusive}.sync.aligned.b32` (§3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct DeallocForm {
    /// `.cta_group::1` or `::2`.
    pub cta_group: CtaGroup,
    /// `.exclusive` (PTX 9.4).
    pub exclusive: bool,
    /// `.sync` present.
    pub sync: bool,
    /// `.aligned` present.
    pub aligned: bool,
    /// `.b32`.
    pub ty: Ty,
}

/// `tcgen05.relinquish_alloc_permit.cta_group.sync.aligned` (§3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct RelinquishForm {
    /// `.cta_group::1` or `::2`.
    pub cta_group: CtaGroup,
    /// `.sync` present.
    pub sync: bool,
    /// `.aligned` present.
    pub aligned: bool,
}

/// `tcgen05.ld` and `tcgen05.ld.red` (§3.2):
/// `tcgen05.ld{.red}.sync.aligned.shape.num{.pack::16b}{.redOp}{.abs}{.NaN}.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct LdForm {
    /// `.red` (PTX 8.8; LD-RED-*).
    pub red: bool,
    /// `.sync` present.
    pub sync: bool,
    /// `.aligned` present.
    pub aligned: bool,
    /// Shape (LDST-SHAPE).
    pub shape: LdStShape,
    /// Repetitions (LDST-NUM).
    pub num: Num,
    /// `.pack::16b` (or, ill-formed, `.unpack::16b`: LD-PACK-ONLY).
    pub pack: Option<Pack>,
    /// `.min` / `.max` for `.red`.
    pub red_op: Option<RedOp>,
    /// `.abs` (`.red` with `.f32` only).
    pub abs: bool,
    /// `.NaN` (`.red` with `.f32` only).
    pub nan: bool,
    /// `.b32`, or for `.red` `.f32` / `.u32` / `.s32` (LDST-TYPE, LD-RED-TYPE).
    pub ty: Ty,
}

/// `tcgen05.st.sync.aligned.shape.num{.unpack::16b}.b32` (§3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct StForm {
    /// `.sync` present.
    pub sync: bool,
    /// `.aligned` present.
    pub aligned: bool,
    /// Shape.
    pub shape: LdStShape,
    /// Repetitions.
    pub num: Num,
    /// `.unpack::16b` (or, ill-formed, `.pack::16b`: ST-UNPACK-ONLY).
    pub pack: Option<Pack>,
    /// `.b32`.
    pub ty: Ty,
}

/// `tcgen05.wait::ld.sync.aligned` / `tcgen05.wait::st.sync.aligned` (§3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct WaitForm {
    /// Which operations it waits for.
    pub op: WaitOp,
    /// A `.cta_group` written on a wait (ill-formed: WAIT-OPS).
    pub cta_group: Option<CtaGroup>,
    /// `.sync` present.
    pub sync: bool,
    /// `.aligned` present.
    pub aligned: bool,
}

/// `tcgen05.commit.cta_group.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64`
/// (§3.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct CommitForm {
    /// `.cta_group::1` or `::2`.
    pub cta_group: CtaGroup,
    /// `.mbarrier::arrive::one` present (COMMIT-COMPLETION).
    pub arrive_one: bool,
    /// `.shared::cluster`: `mbar` is a shared::cluster address rather than generic.
    pub shared_cluster: bool,
    /// `.multicast::cluster` (COMMIT-MCAST-MASK).
    pub multicast: bool,
    /// `.b64` (COMMIT-COMPLETION).
    pub ty: Ty,
}

/// `tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt}` (§3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct CpForm {
    /// `.cta_group::1` or `::2`.
    pub cta_group: CtaGroup,
    /// Shape (CP-SHAPE).
    pub shape: CpShape,
    /// Multicast (CP-MCAST-REQ, CP-MCAST-OTHER).
    pub multicast: Option<CpMulticast>,
    /// Decompression destination format (CP-DECOMP-FMT).
    pub dst_fmt: Option<CpDstFmt>,
    /// Decompression source format (CP-DECOMP-FMT).
    pub src_fmt: Option<CpSrcFmt>,
}

/// `tcgen05.shift.cta_group.down` (§3.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ShiftForm {
    /// `.cta_group::1` or `::2`.
    pub cta_group: CtaGroup,
    /// `.down` written before `.cta_group` (the ISA examples' order, OQ-16) instead of after.
    pub down_first: bool,
}

/// A collector qualifier `.collector::buf::op` (§3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Collector {
    /// `a` or `b0..b3`.
    pub buf: CollectorBuf,
    /// fill / use / lastuse / discard.
    pub op: CollectorOp,
}

/// The `tcgen05.mma` family (§3.7):
/// `tcgen05.mma{.sp}{.ws}.cta_group.kind{.block_scale{.scale_vec}}{.ashift}{.collector::buf::op}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct MmaForm {
    /// `.ws` (weight-stationary).
    pub ws: bool,
    /// `.sp` (sparse A).
    pub sp: bool,
    /// `.cta_group::1` or `::2`.
    pub cta_group: CtaGroup,
    /// `.kind::*`.
    pub kind: MmaKind,
    /// `.block_scale` (MMA-BS-KINDS).
    pub block_scale: bool,
    /// Scale-vector size (MMA-BS-VEC).
    pub scale_vec: Option<ScaleVec>,
    /// `.ashift` (MMA-ASHIFT-*).
    pub ashift: bool,
    /// Collector usage.
    pub collector: Option<Collector>,
}

/// One tcgen05 opcode with all its qualifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Form {
    /// `tcgen05.alloc`
    Alloc(AllocForm),
    /// `tcgen05.dealloc`
    Dealloc(DeallocForm),
    /// `tcgen05.relinquish_alloc_permit`
    Relinquish(RelinquishForm),
    /// `tcgen05.ld`, `tcgen05.ld.red`
    Ld(LdForm),
    /// `tcgen05.st`
    St(StForm),
    /// `tcgen05.wait::*`
    Wait(WaitForm),
    /// `tcgen05.fence::*`
    Fence(FenceKind),
    /// `tcgen05.commit`
    Commit(CommitForm),
    /// `tcgen05.cp`
    Cp(CpForm),
    /// `tcgen05.shift`
    Shift(ShiftForm),
    /// `tcgen05.mma` family
    Mma(MmaForm),
}

/// The instruction families, for coverage tables and counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Family {
    /// alloc
    Alloc,
    /// dealloc
    Dealloc,
    /// relinquish_alloc_permit
    Relinquish,
    /// ld (and ld.red)
    Ld,
    /// st
    St,
    /// wait::ld / wait::st
    Wait,
    /// fence::*
    Fence,
    /// commit
    Commit,
    /// cp
    Cp,
    /// shift
    Shift,
    /// mma family
    Mma,
}

impl Family {
    /// Every family.
    pub const ALL: &'static [Family] = &[
        Family::Alloc,
        Family::Dealloc,
        Family::Relinquish,
        Family::Ld,
        Family::St,
        Family::Wait,
        Family::Fence,
        Family::Commit,
        Family::Cp,
        Family::Shift,
        Family::Mma,
    ];

    /// The mnemonic after `tcgen05.`.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Alloc => "alloc",
            Family::Dealloc => "dealloc",
            Family::Relinquish => "relinquish_alloc_permit",
            Family::Ld => "ld",
            Family::St => "st",
            Family::Wait => "wait",
            Family::Fence => "fence",
            Family::Commit => "commit",
            Family::Cp => "cp",
            Family::Shift => "shift",
            Family::Mma => "mma",
        }
    }
}

fn sync_aligned(out: &mut String, sync: bool, aligned: bool) {
    if sync {
        out.push_str(".sync");
    }
    if aligned {
        out.push_str(".aligned");
    }
}

impl Form {
    /// The family this form belongs to.
    pub fn family(&self) -> Family {
        match self {
            Form::Alloc(_) => Family::Alloc,
            Form::Dealloc(_) => Family::Dealloc,
            Form::Relinquish(_) => Family::Relinquish,
            Form::Ld(_) => Family::Ld,
            Form::St(_) => Family::St,
            Form::Wait(_) => Family::Wait,
            Form::Fence(_) => Family::Fence,
            Form::Commit(_) => Family::Commit,
            Form::Cp(_) => Family::Cp,
            Form::Shift(_) => Family::Shift,
            Form::Mma(_) => Family::Mma,
        }
    }

    /// The `.cta_group` this form carries, if any.
    pub fn cta_group(&self) -> Option<CtaGroup> {
        match self {
            Form::Alloc(f) => Some(f.cta_group),
            Form::Dealloc(f) => Some(f.cta_group),
            Form::Relinquish(f) => Some(f.cta_group),
            Form::Commit(f) => Some(f.cta_group),
            Form::Cp(f) => Some(f.cta_group),
            Form::Shift(f) => Some(f.cta_group),
            Form::Mma(f) => Some(f.cta_group),
            Form::Wait(f) => f.cta_group,
            Form::Ld(_) | Form::St(_) | Form::Fence(_) => None,
        }
    }

    /// Writes the full opcode in the syntax-line order of the reference, e.g.
    /// `tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32`.
    pub fn write_opcode(&self, out: &mut String) {
        out.push_str("tcgen05.");
        match self {
            Form::Alloc(f) => {
                out.push_str("alloc");
                out.push_str(f.cta_group.as_str());
                if f.exclusive {
                    out.push_str(".exclusive");
                }
                sync_aligned(out, f.sync, f.aligned);
                if let Some(s) = f.space {
                    out.push_str(s.as_str());
                }
                out.push_str(f.ty.as_str());
            }
            Form::Dealloc(f) => {
                out.push_str("dealloc");
                out.push_str(f.cta_group.as_str());
                if f.exclusive {
                    out.push_str(".exclusive");
                }
                sync_aligned(out, f.sync, f.aligned);
                out.push_str(f.ty.as_str());
            }
            Form::Relinquish(f) => {
                out.push_str("relinquish_alloc_permit");
                out.push_str(f.cta_group.as_str());
                sync_aligned(out, f.sync, f.aligned);
            }
            Form::Ld(f) => {
                out.push_str("ld");
                if f.red {
                    out.push_str(".red");
                }
                sync_aligned(out, f.sync, f.aligned);
                out.push_str(f.shape.as_str());
                out.push_str(f.num.as_str());
                if let Some(p) = f.pack {
                    out.push_str(p.as_str());
                }
                if let Some(op) = f.red_op {
                    out.push_str(op.as_str());
                }
                if f.abs {
                    out.push_str(".abs");
                }
                if f.nan {
                    out.push_str(".NaN");
                }
                out.push_str(f.ty.as_str());
            }
            Form::St(f) => {
                out.push_str("st");
                sync_aligned(out, f.sync, f.aligned);
                out.push_str(f.shape.as_str());
                out.push_str(f.num.as_str());
                if let Some(p) = f.pack {
                    out.push_str(p.as_str());
                }
                out.push_str(f.ty.as_str());
            }
            Form::Wait(f) => {
                out.push_str("wait");
                out.push_str(&f.op.as_str()[".wait".len()..]);
                if let Some(g) = f.cta_group {
                    out.push_str(g.as_str());
                }
                sync_aligned(out, f.sync, f.aligned);
            }
            Form::Fence(k) => {
                out.push_str("fence");
                out.push_str(k.as_str());
            }
            Form::Commit(f) => {
                out.push_str("commit");
                out.push_str(f.cta_group.as_str());
                if f.arrive_one {
                    out.push_str(".mbarrier::arrive::one");
                }
                if f.shared_cluster {
                    out.push_str(".shared::cluster");
                }
                if f.multicast {
                    out.push_str(".multicast::cluster");
                }
                out.push_str(f.ty.as_str());
            }
            Form::Cp(f) => {
                out.push_str("cp");
                out.push_str(f.cta_group.as_str());
                out.push_str(f.shape.as_str());
                if let Some(m) = f.multicast {
                    out.push_str(m.as_str());
                }
                if let Some(d) = f.dst_fmt {
                    out.push_str(d.as_str());
                }
                if let Some(s) = f.src_fmt {
                    out.push_str(s.as_str());
                }
            }
            Form::Shift(f) => {
                out.push_str("shift");
                if f.down_first {
                    out.push_str(".down");
                    out.push_str(f.cta_group.as_str());
                } else {
                    out.push_str(f.cta_group.as_str());
                    out.push_str(".down");
                }
            }
            Form::Mma(f) => {
                out.push_str("mma");
                if f.ws {
                    out.push_str(".ws");
                }
                if f.sp {
                    out.push_str(".sp");
                }
                out.push_str(f.cta_group.as_str());
                out.push_str(f.kind.as_str());
                if f.block_scale {
                    out.push_str(".block_scale");
                }
                if let Some(v) = f.scale_vec {
                    out.push_str(v.as_str());
                }
                if f.ashift {
                    out.push_str(".ashift");
                }
                if let Some(c) = f.collector {
                    let _ = write!(out, ".collector::{}::{}", c.buf, c.op);
                }
            }
        }
    }

    /// The full opcode as a string.
    pub fn opcode(&self) -> String {
        let mut s = String::with_capacity(64);
        self.write_opcode(&mut s);
        s
    }
}

/// Why an opcode is not a well-spelled tcgen05 form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    /// Not `tcgen05.<family>`: the caller should keep the instruction as opaque.
    #[error("`{0}` is not a tcgen05 instruction this parser models")]
    UnknownInstruction(String),
    /// A qualifier that this family does not have.
    #[error("unknown qualifier `{qual}` on tcgen05.{family}; expected one of: {expected}")]
    UnknownQualifier {
        /// The family mnemonic.
        family: &'static str,
        /// The qualifier as written.
        qual: String,
        /// What the family accepts.
        expected: &'static str,
    },
    /// A qualifier group given twice.
    #[error(
        "qualifier `{qual}` conflicts with an earlier qualifier of the same group on tcgen05.{family}"
    )]
    Repeated {
        /// The family mnemonic.
        family: &'static str,
        /// The qualifier as written.
        qual: String,
    },
    /// A mandatory qualifier is missing.
    #[error("tcgen05.{family} needs {what}")]
    Missing {
        /// The family mnemonic.
        family: &'static str,
        /// What is missing.
        what: &'static str,
    },
}

fn set<T>(slot: &mut Option<T>, v: T, family: &'static str, q: &str) -> Result<(), FormError> {
    if slot.is_some() {
        return Err(FormError::Repeated {
            family,
            qual: q.to_string(),
        });
    }
    *slot = Some(v);
    Ok(())
}

fn flag(slot: &mut bool, family: &'static str, q: &str) -> Result<(), FormError> {
    if *slot {
        return Err(FormError::Repeated {
            family,
            qual: q.to_string(),
        });
    }
    *slot = true;
    Ok(())
}

impl Form {
    /// Parses a full opcode such as `tcgen05.ld.sync.aligned.32x32b.x4.b32`, with the qualifiers
    /// in any order (OQ-34).
    pub fn parse(opcode: &str) -> Result<Form, FormError> {
        let rest = opcode
            .strip_prefix("tcgen05.")
            .ok_or_else(|| FormError::UnknownInstruction(opcode.to_string()))?;
        let mut parts = rest.split('.');
        let head = parts.next().unwrap_or("");
        let quals: Vec<String> = parts.map(|p| format!(".{p}")).collect();
        let quals: Vec<&str> = quals.iter().map(String::as_str).collect();
        match head {
            "alloc" => parse_alloc(&quals),
            "dealloc" => parse_dealloc(&quals),
            "relinquish_alloc_permit" => parse_relinquish(&quals),
            "ld" => parse_ld(&quals),
            "st" => parse_st(&quals),
            "wait::ld" | "wait::st" => parse_wait(head, &quals),
            "fence::before_thread_sync" | "fence::after_thread_sync" => {
                if let Some(q) = quals.first() {
                    return Err(FormError::UnknownQualifier {
                        family: "fence",
                        qual: q.to_string(),
                        expected: "nothing after ::before_thread_sync / ::after_thread_sync",
                    });
                }
                Ok(Form::Fence(
                    FenceKind::from_ptx(&head["fence".len()..]).expect("matched above"),
                ))
            }
            "commit" => parse_commit(&quals),
            "cp" => parse_cp(&quals),
            "shift" => parse_shift(&quals),
            "mma" => parse_mma(&quals),
            _ => Err(FormError::UnknownInstruction(opcode.to_string())),
        }
    }
}

fn parse_alloc(quals: &[&str]) -> Result<Form, FormError> {
    const F: &str = "alloc";
    const EXP: &str = ".cta_group::{1,2} .exclusive .sync .aligned .shared::cta .b32";
    let (mut cg, mut space, mut ty) = (None, None, None);
    let (mut excl, mut sync, mut aligned) = (false, false, false);
    for &q in quals {
        if let Some(g) = CtaGroup::from_ptx(q) {
            set(&mut cg, g, F, q)?;
        } else if let Some(s) = StateSpace::from_ptx(q) {
            set(&mut space, s, F, q)?;
        } else if let Some(t) = Ty::from_ptx(q) {
            set(&mut ty, t, F, q)?;
        } else {
            match q {
                ".exclusive" => flag(&mut excl, F, q)?,
                ".sync" => flag(&mut sync, F, q)?,
                ".aligned" => flag(&mut aligned, F, q)?,
                _ => return Err(unknown(F, q, EXP)),
            }
        }
    }
    Ok(Form::Alloc(AllocForm {
        cta_group: cg.ok_or(FormError::Missing {
            family: F,
            what: ".cta_group::1 or ::2",
        })?,
        exclusive: excl,
        sync,
        aligned,
        space,
        ty: ty.ok_or(FormError::Missing {
            family: F,
            what: "a type (.b32)",
        })?,
    }))
}

fn unknown(family: &'static str, q: &str, expected: &'static str) -> FormError {
    FormError::UnknownQualifier {
        family,
        qual: q.to_string(),
        expected,
    }
}

fn parse_dealloc(quals: &[&str]) -> Result<Form, FormError> {
    const F: &str = "dealloc";
    const EXP: &str = ".cta_group::{1,2} .exclusive .sync .aligned .b32";
    let (mut cg, mut ty) = (None, None);
    let (mut excl, mut sync, mut aligned) = (false, false, false);
    for &q in quals {
        if let Some(g) = CtaGroup::from_ptx(q) {
            set(&mut cg, g, F, q)?;
        } else if let Some(t) = Ty::from_ptx(q) {
            set(&mut ty, t, F, q)?;
        } else {
            match q {
                ".exclusive" => flag(&mut excl, F, q)?,
                ".sync" => flag(&mut sync, F, q)?,
                ".aligned" => flag(&mut aligned, F, q)?,
                _ => return Err(unknown(F, q, EXP)),
            }
        }
    }
    Ok(Form::Dealloc(DeallocForm {
        cta_group: cg.ok_or(FormError::Missing {
            family: F,
            what: ".cta_group::1 or ::2",
        })?,
        exclusive: excl,
        sync,
        aligned,
        ty: ty.ok_or(FormError::Missing {
            family: F,
            what: "a type (.b32)",
        })?,
    }))
}

fn parse_relinquish(quals: &[&str]) -> Result<Form, FormError> {
    const F: &str = "relinquish_alloc_permit";
    const EXP: &str = ".cta_group::{1,2} .sync .aligned";
    let mut cg = None;
    let (mut sync, mut aligned) = (false, false);
    for &q in quals {
        if let Some(g) = CtaGroup::from_ptx(q) {
            set(&mut cg, g, F, q)?;
        } else {
            match q {
                ".sync" => flag(&mut sync, F, q)?,
                ".aligned" => flag(&mut aligned, F, q)?,
                _ => return Err(unknown(F, q, EXP)),
            }
        }
    }
    Ok(Form::Relinquish(RelinquishForm {
        cta_group: cg.ok_or(FormError::Missing {
            family: F,
            what: ".cta_group::1 or ::2",
        })?,
        sync,
        aligned,
    }))
}

fn parse_ld(quals: &[&str]) -> Result<Form, FormError> {
    const F: &str = "ld";
    const EXP: &str = ".red .sync .aligned .32x32b .16x64b .16x128b .16x256b .16x32bx2 .x1-.x128 \
                       .pack::16b .min .max .abs .NaN .b32 .f32 .u32 .s32";
    let (mut shape, mut num, mut pack, mut red_op, mut ty) = (None, None, None, None, None);
    let (mut red, mut sync, mut aligned, mut abs, mut nan) = (false, false, false, false, false);
    for &q in quals {
        if let Some(s) = LdStShape::from_ptx(q) {
            set(&mut shape, s, F, q)?;
        } else if let Some(n) = Num::from_ptx(q) {
            set(&mut num, n, F, q)?;
        } else if let Some(p) = Pack::from_ptx(q) {
            set(&mut pack, p, F, q)?;
        } else if let Some(r) = RedOp::from_ptx(q) {
            set(&mut red_op, r, F, q)?;
        } else if let Some(t) = Ty::from_ptx(q) {
            set(&mut ty, t, F, q)?;
        } else {
            match q {
                ".red" => flag(&mut red, F, q)?,
                ".sync" => flag(&mut sync, F, q)?,
                ".aligned" => flag(&mut aligned, F, q)?,
                ".abs" => flag(&mut abs, F, q)?,
                ".NaN" => flag(&mut nan, F, q)?,
                _ => return Err(unknown(F, q, EXP)),
            }
        }
    }
    Ok(Form::Ld(LdForm {
        red,
        sync,
        aligned,
        shape: shape.ok_or(FormError::Missing {
            family: F,
            what: "a shape (.32x32b, .16x64b, ...)",
        })?,
        num: num.ok_or(FormError::Missing {
            family: F,
            what: "a repetition count (.x1 ... .x128)",
        })?,
        pack,
        red_op,
        abs,
        nan,
        ty: ty.ok_or(FormError::Missing {
            family: F,
            what: "a type (.b32)",
        })?,
    }))
}

fn parse_st(quals: &[&str]) -> Result<Form, FormError> {
    const F: &str = "st";
    const EXP: &str =
        ".sync .aligned .32x32b .16x64b .16x128b .16x256b .16x32bx2 .x1-.x128 .unpack::16b .b32";
    let (mut shape, mut num, mut pack, mut ty) = (None, None, None, None);
    let (mut sync, mut aligned) = (false, false);
    for &q in quals {
        if let Some(s) = LdStShape::from_ptx(q) {
            set(&mut shape, s, F, q)?;
        } else if let Some(n) = Num::from_ptx(q) {
            set(&mut num, n, F, q)?;
        } else if let Some(p) = Pack::from_ptx(q) {
            set(&mut pack, p, F, q)?;
        } else if let Some(t) = Ty::from_ptx(q) {
            set(&mut ty, t, F, q)?;
        } else {
            match q {
                ".sync" => flag(&mut sync, F, q)?,
                ".aligned" => flag(&mut aligned, F, q)?,
                _ => return Err(unknown(F, q, EXP)),
            }
        }
    }
    Ok(Form::St(StForm {
        sync,
        aligned,
        shape: shape.ok_or(FormError::Missing {
            family: F,
            what: "a shape (.32x32b, .16x64b, ...)",
        })?,
        num: num.ok_or(FormError::Missing {
            family: F,
            what: "a repetition count (.x1 ... .x128)",
        })?,
        pack,
        ty: ty.ok_or(FormError::Missing {
            family: F,
            what: "a type (.b32)",
        })?,
    }))
}

fn parse_wait(head: &str, quals: &[&str]) -> Result<Form, FormError> {
    const F: &str = "wait";
    const EXP: &str = ".sync .aligned";
    let op = WaitOp::from_ptx(&format!(".{head}")).expect("matched by the caller");
    let mut cg = None;
    let (mut sync, mut aligned) = (false, false);
    for &q in quals {
        if let Some(g) = CtaGroup::from_ptx(q) {
            set(&mut cg, g, F, q)?;
        } else {
            match q {
                ".sync" => flag(&mut sync, F, q)?,
                ".aligned" => flag(&mut aligned, F, q)?,
                _ => return Err(unknown(F, q, EXP)),
            }
        }
    }
    Ok(Form::Wait(WaitForm {
        op,
        cta_group: cg,
        sync,
        aligned,
    }))
}

fn parse_commit(quals: &[&str]) -> Result<Form, FormError> {
    const F: &str = "commit";
    const EXP: &str =
        ".cta_group::{1,2} .mbarrier::arrive::one .shared::cluster .multicast::cluster .b64";
    let (mut cg, mut ty) = (None, None);
    let (mut one, mut sc, mut mc) = (false, false, false);
    for &q in quals {
        if let Some(g) = CtaGroup::from_ptx(q) {
            set(&mut cg, g, F, q)?;
        } else if let Some(t) = Ty::from_ptx(q) {
            set(&mut ty, t, F, q)?;
        } else {
            match q {
                ".mbarrier::arrive::one" => flag(&mut one, F, q)?,
                ".shared::cluster" => flag(&mut sc, F, q)?,
                ".multicast::cluster" => flag(&mut mc, F, q)?,
                _ => return Err(unknown(F, q, EXP)),
            }
        }
    }
    Ok(Form::Commit(CommitForm {
        cta_group: cg.ok_or(FormError::Missing {
            family: F,
            what: ".cta_group::1 or ::2",
        })?,
        arrive_one: one,
        shared_cluster: sc,
        multicast: mc,
        ty: ty.ok_or(FormError::Missing {
            family: F,
            what: "a type (.b64)",
        })?,
    }))
}

fn parse_cp(quals: &[&str]) -> Result<Form, FormError> {
    const F: &str = "cp";
    const EXP: &str = ".cta_group::{1,2} .128x256b .4x256b .128x128b .64x128b .32x128b \
                       .warpx2::02_13 .warpx2::01_23 .warpx4 .b8x16 .b6x16_p32 .b4x16_p64";
    let (mut cg, mut shape, mut mc, mut dst, mut src) = (None, None, None, None, None);
    for &q in quals {
        if let Some(g) = CtaGroup::from_ptx(q) {
            set(&mut cg, g, F, q)?;
        } else if let Some(s) = CpShape::from_ptx(q) {
            set(&mut shape, s, F, q)?;
        } else if let Some(m) = CpMulticast::from_ptx(q) {
            set(&mut mc, m, F, q)?;
        } else if let Some(d) = CpDstFmt::from_ptx(q) {
            set(&mut dst, d, F, q)?;
        } else if let Some(s) = CpSrcFmt::from_ptx(q) {
            set(&mut src, s, F, q)?;
        } else {
            return Err(unknown(F, q, EXP));
        }
    }
    Ok(Form::Cp(CpForm {
        cta_group: cg.ok_or(FormError::Missing {
            family: F,
            what: ".cta_group::1 or ::2",
        })?,
        shape: shape.ok_or(FormError::Missing {
            family: F,
            what: "a shape (.128x256b, ...)",
        })?,
        multicast: mc,
        dst_fmt: dst,
        src_fmt: src,
    }))
}

fn parse_shift(quals: &[&str]) -> Result<Form, FormError> {
    const F: &str = "shift";
    const EXP: &str = ".cta_group::{1,2} .down";
    let mut cg = None;
    let mut down_at = None;
    for (i, &q) in quals.iter().enumerate() {
        if let Some(g) = CtaGroup::from_ptx(q) {
            set(&mut cg, g, F, q)?;
        } else if q == ".down" {
            set(&mut down_at, i, F, q)?;
        } else {
            return Err(unknown(F, q, EXP));
        }
    }
    let down_at = down_at.ok_or(FormError::Missing {
        family: F,
        what: ".down",
    })?;
    let cg = cg.ok_or(FormError::Missing {
        family: F,
        what: ".cta_group::1 or ::2",
    })?;
    let cg_at = quals
        .iter()
        .position(|q| CtaGroup::from_ptx(q).is_some())
        .unwrap_or(0);
    Ok(Form::Shift(ShiftForm {
        cta_group: cg,
        down_first: down_at < cg_at,
    }))
}

fn parse_mma(quals: &[&str]) -> Result<Form, FormError> {
    const F: &str = "mma";
    const EXP: &str = ".ws .sp .cta_group::{1,2} .kind::{f16,tf32,f8f6f4,i8,mxf8f6f4,mxf4,mxf4nvf4} \
                       .block_scale .scale_vec::{1X,2X,4X} .block16 .block32 .ashift \
                       .collector::{a,b0,b1,b2,b3}::{fill,use,lastuse,discard}";
    let (mut cg, mut kind, mut sv, mut coll) = (None, None, None, None);
    let (mut ws, mut sp, mut bs, mut ashift) = (false, false, false, false);
    for &q in quals {
        if let Some(g) = CtaGroup::from_ptx(q) {
            set(&mut cg, g, F, q)?;
        } else if let Some(k) = MmaKind::from_ptx(q) {
            set(&mut kind, k, F, q)?;
        } else if let Some(v) = ScaleVec::from_ptx(q) {
            set(&mut sv, v, F, q)?;
        } else if let Some(c) = q.strip_prefix(".collector::") {
            let (buf, op) = c.split_once("::").ok_or_else(|| unknown(F, q, EXP))?;
            let buf = CollectorBuf::from_ptx(buf).ok_or_else(|| unknown(F, q, EXP))?;
            let op = CollectorOp::from_ptx(op).ok_or_else(|| unknown(F, q, EXP))?;
            set(&mut coll, Collector { buf, op }, F, q)?;
        } else {
            match q {
                ".ws" => flag(&mut ws, F, q)?,
                ".sp" => flag(&mut sp, F, q)?,
                ".block_scale" => flag(&mut bs, F, q)?,
                ".ashift" => flag(&mut ashift, F, q)?,
                _ => return Err(unknown(F, q, EXP)),
            }
        }
    }
    Ok(Form::Mma(MmaForm {
        ws,
        sp,
        cta_group: cg.ok_or(FormError::Missing {
            family: F,
            what: ".cta_group::1 or ::2",
        })?,
        kind: kind.ok_or(FormError::Missing {
            family: F,
            what: "a .kind::* qualifier",
        })?,
        block_scale: bs,
        scale_vec: sv,
        ashift,
        collector: coll,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_syntax_lines_parse_and_print_back() {
        // Opcodes spelled as in the reference §3 syntax lines and the seed examples.
        for op in [
            "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
            "tcgen05.alloc.cta_group::2.sync.aligned.b32",
            "tcgen05.alloc.cta_group::1.exclusive.sync.aligned.shared::cta.b32",
            "tcgen05.dealloc.cta_group::2.sync.aligned.b32",
            "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned",
            "tcgen05.ld.sync.aligned.16x32bx2.x128.pack::16b.b32",
            "tcgen05.ld.red.sync.aligned.32x32b.x8.max.abs.NaN.f32",
            "tcgen05.st.sync.aligned.16x256b.x2.unpack::16b.b32",
            "tcgen05.wait::ld.sync.aligned",
            "tcgen05.fence::after_thread_sync",
            "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
            "tcgen05.cp.cta_group::1.64x128b.warpx2::02_13.b8x16.b6x16_p32",
            "tcgen05.shift.cta_group::2.down",
            "tcgen05.shift.down.cta_group::1",
            "tcgen05.mma.ws.sp.cta_group::1.kind::i8.collector::b2::lastuse",
            "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.block16.collector::a::fill",
            "tcgen05.mma.cta_group::1.kind::f16.ashift.collector::a::discard",
        ] {
            let f = Form::parse(op).unwrap_or_else(|e| panic!("{op}: {e}"));
            assert_eq!(f.opcode(), op);
        }
    }

    #[test]
    fn reordered_qualifiers_are_the_same_form() {
        // OQ-34: the ISA's own example writes `.x8.u32.max`, against the syntax line's order.
        let a = Form::parse("tcgen05.ld.red.sync.aligned.32x32b.x8.u32.max").unwrap();
        let b = Form::parse("tcgen05.ld.red.sync.aligned.32x32b.x8.max.u32").unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn malformed_opcodes_say_what_was_expected() {
        let e = Form::parse("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32.bogus")
            .unwrap_err();
        assert!(matches!(e, FormError::UnknownQualifier { .. }), "{e}");
        assert!(e.to_string().contains(".bogus"));
        let e = Form::parse("tcgen05.ld.sync.aligned.x4.b32").unwrap_err();
        assert!(matches!(e, FormError::Missing { .. }), "{e}");
        let e = Form::parse("tcgen05.ld.sync.aligned.32x32b.16x64b.x1.b32").unwrap_err();
        assert!(matches!(e, FormError::Repeated { .. }), "{e}");
        assert!(matches!(
            Form::parse("tcgen05.frobnicate.x"),
            Err(FormError::UnknownInstruction(_))
        ));
    }
}
