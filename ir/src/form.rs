//! Instruction *forms*: a tcgen05 opcode with all its qualifiers, and nothing of its operands.
//!
//! A form is what `tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32` says. The program
//! model ([`crate::Op`]) pairs a form with the harness's operand model; the parser of real
//! compiler output ([`crate::ptx`]) pairs it with the operands as written.
//!
//! The grammar is written once, in the table of `grammar!` below: one row per family, citing
//! the PTX ISA section of its syntax lines, one entry per qualifier slot in the syntax-line
//! order of the reference (§3). Each row yields the form struct, its printer (the slots in row
//! order), its parser and the "expected ..." text of its errors. Parsing accepts the qualifiers
//! in any order, because the spec does not forbid reordering (OQ-34), and reports an unknown or
//! repeated qualifier, or a missing mandatory one, as a [`FormError`] that says what was
//! expected. Two families have syntax the slot kinds cannot say and implement `Syntax` by
//! hand: `tcgen05.fence` (its kind is part of the mnemonic and it takes no qualifier) and
//! `tcgen05.shift` (the form records whether `.down` comes before `.cta_group`).

use crate::qual::*;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One qualifier slot's words: parsed from, and printed as, PTX (with the leading dot).
trait Word: Sized {
    /// The value a qualifier spells, if it is one of this slot's.
    fn parse_word(q: &str) -> Option<Self>;
    /// Appends the spelling.
    fn write_word(&self, out: &mut String);
}

/// [`Word`] for the keyword tables of [`crate::qual`].
macro_rules! keyword_words {
    ($($t:ty),* $(,)?) => {
        $(impl Word for $t {
            fn parse_word(q: &str) -> Option<Self> {
                <$t>::from_ptx(q)
            }
            fn write_word(&self, out: &mut String) {
                out.push_str(self.as_str());
            }
        })*
    };
}

keyword_words!(
    CtaGroup,
    StateSpace,
    Ty,
    LdStShape,
    Num,
    Pack,
    RedOp,
    CpShape,
    CpMulticast,
    CpDstFmt,
    CpSrcFmt,
    MmaKind,
    ScaleVec,
);

/// A collector qualifier `.collector::buf::op` (§3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Collector {
    /// `a` or `b0..b3`.
    pub buf: CollectorBuf,
    /// fill / use / lastuse / discard.
    pub op: CollectorOp,
}

impl Word for Collector {
    fn parse_word(q: &str) -> Option<Self> {
        let (buf, op) = q.strip_prefix(".collector::")?.split_once("::")?;
        Some(Collector {
            buf: CollectorBuf::from_ptx(buf)?,
            op: CollectorOp::from_ptx(op)?,
        })
    }
    fn write_word(&self, out: &mut String) {
        let _ = write!(out, ".collector::{}::{}", self.buf, self.op);
    }
}

/// The syntax of one family: its mnemonic, printer and parser.
trait Syntax: Sized {
    /// The mnemonic after `tcgen05.` (up to the first `::` for `wait::ld`, `fence::*`).
    const MNEMONIC: &'static str;
    /// Appends the mnemonic and the qualifiers, in syntax-line order.
    fn write(&self, out: &mut String);
    /// `None` when `head` (the opcode between `tcgen05.` and the first `.`) is not this
    /// family's; otherwise the form that `quals` (each with its leading dot) spell, or why not.
    fn parse(head: &str, quals: &[&str]) -> Option<Result<Self, FormError>>;
}

/// The Rust type of a slot.
macro_rules! slot_ty {
    (flag ($lit:literal)) => { bool };
    (head ($t:ty)) => { $t };
    (opt ($t:ty $(, $exp:literal)?)) => { Option<$t> };
    (req ($t:ty, $exp:literal, $missing:literal)) => { $t };
}

/// A slot before any qualifier is read; the head slot reads `$head` (returns `None`, "not this
/// family", when the head does not spell one of its words).
macro_rules! slot_init {
    (flag $a:tt, $head:ident, $mnem:expr) => {
        false
    };
    (head ($t:ty), $head:ident, $mnem:expr) => {
        Some(
            $head
                .strip_prefix($mnem)
                .filter(|r| r.starts_with("::"))
                .and_then(|_| <$t>::from_ptx(&format!(".{}", $head)))?,
        )
    };
    (opt $a:tt, $head:ident, $mnem:expr) => {
        None
    };
    (req $a:tt, $head:ident, $mnem:expr) => {
        None
    };
}

/// Whether a slot is the head slot.
macro_rules! slot_is_head {
    (head $a:tt) => {
        true
    };
    ($kind:ident $a:tt) => {
        false
    };
}

/// Takes qualifier `$q` into the slot if it is one of the slot's words: `Ok(true)`; a second
/// word of the same slot is [`FormError::Repeated`].
macro_rules! slot_take {
    (flag ($lit:literal), $slot:ident, $f:expr, $q:ident) => {
        if $q == $lit {
            flag(&mut $slot, $f, $q)?;
            true
        } else {
            false
        }
    };
    (head $a:tt, $slot:ident, $f:expr, $q:ident) => {
        false
    };
    ($kind:ident ($t:ty $(, $rest:literal)*), $slot:ident, $f:expr, $q:ident) => {
        match <$t as Word>::parse_word($q) {
            Some(v) => {
                set(&mut $slot, v, $f, $q)?;
                true
            }
            None => false,
        }
    };
}

/// The field value once every qualifier is read: a missing mandatory slot is
/// [`FormError::Missing`].
macro_rules! slot_done {
    (flag $a:tt, $slot:ident, $f:expr) => {
        $slot
    };
    (head $a:tt, $slot:ident, $f:expr) => {
        $slot.expect("set by slot_init")
    };
    (opt $a:tt, $slot:ident, $f:expr) => {
        $slot
    };
    (req ($t:ty, $exp:literal, $missing:literal), $slot:ident, $f:expr) => {
        $slot.ok_or(FormError::Missing {
            family: $f,
            what: $missing,
        })?
    };
}

/// Prints a slot's value.
macro_rules! slot_write {
    (flag ($lit:literal), $v:expr, $mnem:expr, $out:ident) => {
        if $v {
            $out.push_str($lit);
        }
    };
    (head ($t:ty), $v:expr, $mnem:expr, $out:ident) => {
        $out.push_str(&$v.as_str()[1 + $mnem.len()..])
    };
    (opt $a:tt, $v:expr, $mnem:expr, $out:ident) => {
        if let Some(v) = &$v {
            v.write_word($out);
        }
    };
    (req $a:tt, $v:expr, $mnem:expr, $out:ident) => {
        $v.write_word($out)
    };
}

/// A slot's part of the "expected one of" text, with a leading space (empty for a slot the
/// text does not list: the head, and a slot that exists only for near-misses).
macro_rules! slot_exp {
    (flag ($lit:literal)) => {
        concat!(" ", $lit)
    };
    (head $a:tt) => {
        ""
    };
    (opt ($t:ty)) => {
        ""
    };
    (opt ($t:ty, $exp:literal)) => {
        concat!(" ", $exp)
    };
    (req ($t:ty, $exp:literal, $missing:literal)) => {
        concat!(" ", $exp)
    };
}

/// The grammar table. A row is a family: its doc (with its PTX ISA section and syntax lines),
/// `Struct = "mnemonic"`, then its slots in syntax-line order, each `field: kind(args)`:
///
/// - `flag(".q")`: a qualifier that is present or not (`bool`);
/// - `opt(T, "spelling")`: at most one word of the keyword table `T` (`Option<T>`); without a
///   spelling, the slot is left out of the "expected" text (it exists for near-misses);
/// - `req(T, "spelling", "what")`: exactly one word of `T`; "what" names it when missing;
/// - `head(T)`: the word of `T` that the mnemonic carries (`wait::ld`), printed in its place.
///
/// Each row yields the struct (fields in slot order, which is also the serialized order), its
/// [`Syntax`] impl (printer and parser) and its `EXPECTED` text.
macro_rules! grammar {
    ($(
        $(#[$m:meta])*
        $form:ident = $mnem:literal {
            $( $(#[$fm:meta])* $field:ident : $kind:ident $args:tt ),* $(,)?
        }
    )*) => {$(
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub struct $form {
            $( $(#[$fm])* pub $field: slot_ty!($kind $args), )*
        }

        impl $form {
            /// What the family accepts, for [`FormError::UnknownQualifier`].
            const EXPECTED: &'static str =
                concat!("" $(, slot_exp!($kind $args))*).trim_ascii_start();
        }

        impl Syntax for $form {
            const MNEMONIC: &'static str = $mnem;

            fn write(&self, out: &mut String) {
                out.push_str($mnem);
                $( slot_write!($kind $args, self.$field, $mnem, out); )*
            }

            fn parse(head: &str, quals: &[&str]) -> Option<Result<Self, FormError>> {
                const F: &str = $mnem;
                const HAS_HEAD: bool = false $(|| slot_is_head!($kind $args))*;
                if !HAS_HEAD && head != F {
                    return None;
                }
                $( #[allow(unused_mut, reason = "a head slot is set once, by slot_init")]
                   let mut $field = slot_init!($kind $args, head, F); )*
                Some((|| -> Result<Self, FormError> {
                    for &q in quals {
                        let taken = false $(|| slot_take!($kind $args, $field, F, q))*;
                        if !taken {
                            return Err(unknown(F, q, Self::EXPECTED));
                        }
                    }
                    Ok($form { $( $field: slot_done!($kind $args, $field, F), )* })
                })())
            }
        }
    )*};
}

grammar! {
    /// `tcgen05.alloc` (reference §3.1, PTX ISA §9.7.16.7.1):
    /// `tcgen05.alloc.cta_group{.exclusive}.sync.aligned{.shared::cta}.b32`.
    /// `.exclusive` is the PTX 9.4 form that newer compilers emit.
    AllocForm = "alloc" {
        /// `.cta_group::1` or `::2`.
        cta_group: req(CtaGroup, ".cta_group::{1,2}", ".cta_group::1 or ::2"),
        /// `.exclusive` (PTX 9.4).
        exclusive: flag(".exclusive"),
        /// `.sync` present (GEN-SYNC-QUAL).
        sync: flag(".sync"),
        /// `.aligned` present (GEN-SYNC-QUAL).
        aligned: flag(".aligned"),
        /// State space of `dst`: none (generic) or `.shared::cta` (ALLOC-DST-STATESPACE).
        space: opt(StateSpace, ".shared::cta"),
        /// Operand type, `.b32` (ALLOC-DST-STATESPACE).
        ty: req(Ty, ".b32", "a type (.b32)"),
    }

    /// `tcgen05.dealloc.cta_group{.exclusive}.sync.aligned.b32` (reference §3.1, PTX ISA
    /// §9.7.16.7.1).
    DeallocForm = "dealloc" {
        /// `.cta_group::1` or `::2`.
        cta_group: req(CtaGroup, ".cta_group::{1,2}", ".cta_group::1 or ::2"),
        /// `.exclusive` (PTX 9.4).
        exclusive: flag(".exclusive"),
        /// `.sync` present.
        sync: flag(".sync"),
        /// `.aligned` present.
        aligned: flag(".aligned"),
        /// `.b32`.
        ty: req(Ty, ".b32", "a type (.b32)"),
    }

    /// `tcgen05.relinquish_alloc_permit.cta_group.sync.aligned` (reference §3.1, PTX ISA
    /// §9.7.16.7.1).
    RelinquishForm = "relinquish_alloc_permit" {
        /// `.cta_group::1` or `::2`.
        cta_group: req(CtaGroup, ".cta_group::{1,2}", ".cta_group::1 or ::2"),
        /// `.sync` present.
        sync: flag(".sync"),
        /// `.aligned` present.
        aligned: flag(".aligned"),
    }

    /// `tcgen05.ld` and `tcgen05.ld.red` (reference §3.2, PTX ISA §9.7.16.8.3):
    /// `tcgen05.ld{.red}.sync.aligned.shape.num{.pack::16b}{.redOp}{.abs}{.NaN}.type`.
    LdForm = "ld" {
        /// `.red` (PTX 8.8; LD-RED-*).
        red: flag(".red"),
        /// `.sync` present.
        sync: flag(".sync"),
        /// `.aligned` present.
        aligned: flag(".aligned"),
        /// Shape (LDST-SHAPE).
        shape: req(
            LdStShape,
            ".32x32b .16x64b .16x128b .16x256b .16x32bx2",
            "a shape (.32x32b, .16x64b, ...)"
        ),
        /// Repetitions (LDST-NUM).
        num: req(Num, ".x1-.x128", "a repetition count (.x1 ... .x128)"),
        /// `.pack::16b` (or, ill-formed, `.unpack::16b`: LD-PACK-ONLY).
        pack: opt(Pack, ".pack::16b"),
        /// `.min` / `.max` for `.red`.
        red_op: opt(RedOp, ".min .max"),
        /// `.abs` (`.red` with `.f32` only).
        abs: flag(".abs"),
        /// `.NaN` (`.red` with `.f32` only).
        nan: flag(".NaN"),
        /// `.b32`, or for `.red` `.f32` / `.u32` / `.s32` (LDST-TYPE, LD-RED-TYPE).
        ty: req(Ty, ".b32 .f32 .u32 .s32", "a type (.b32)"),
    }

    /// `tcgen05.st.sync.aligned.shape.num{.unpack::16b}.b32` (reference §3.3, PTX ISA
    /// §9.7.16.8.4).
    StForm = "st" {
        /// `.sync` present.
        sync: flag(".sync"),
        /// `.aligned` present.
        aligned: flag(".aligned"),
        /// Shape.
        shape: req(
            LdStShape,
            ".32x32b .16x64b .16x128b .16x256b .16x32bx2",
            "a shape (.32x32b, .16x64b, ...)"
        ),
        /// Repetitions.
        num: req(Num, ".x1-.x128", "a repetition count (.x1 ... .x128)"),
        /// `.unpack::16b` (or, ill-formed, `.pack::16b`: ST-UNPACK-ONLY).
        pack: opt(Pack, ".unpack::16b"),
        /// `.b32`.
        ty: req(Ty, ".b32", "a type (.b32)"),
    }

    /// `tcgen05.wait::ld.sync.aligned` / `tcgen05.wait::st.sync.aligned` (reference §3.4, PTX
    /// ISA §9.7.16.8.5).
    WaitForm = "wait" {
        /// Which operations it waits for.
        op: head(WaitOp),
        /// A `.cta_group` written on a wait (ill-formed: WAIT-OPS).
        cta_group: opt(CtaGroup),
        /// `.sync` present.
        sync: flag(".sync"),
        /// `.aligned` present.
        aligned: flag(".aligned"),
    }

    /// `tcgen05.commit.cta_group.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64`
    /// (reference §3.9, PTX ISA §9.7.16.12.1).
    CommitForm = "commit" {
        /// `.cta_group::1` or `::2`.
        cta_group: req(CtaGroup, ".cta_group::{1,2}", ".cta_group::1 or ::2"),
        /// `.mbarrier::arrive::one` present (COMMIT-COMPLETION).
        arrive_one: flag(".mbarrier::arrive::one"),
        /// `.shared::cluster`: `mbar` is a shared::cluster address rather than generic.
        shared_cluster: flag(".shared::cluster"),
        /// `.multicast::cluster` (COMMIT-MCAST-MASK).
        multicast: flag(".multicast::cluster"),
        /// `.b64` (COMMIT-COMPLETION).
        ty: req(Ty, ".b64", "a type (.b64)"),
    }

    /// `tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt}` (reference §3.5, PTX ISA
    /// §9.7.16.9.2).
    CpForm = "cp" {
        /// `.cta_group::1` or `::2`.
        cta_group: req(CtaGroup, ".cta_group::{1,2}", ".cta_group::1 or ::2"),
        /// Shape (CP-SHAPE).
        shape: req(
            CpShape,
            ".128x256b .4x256b .128x128b .64x128b .32x128b",
            "a shape (.128x256b, ...)"
        ),
        /// Multicast (CP-MCAST-REQ, CP-MCAST-OTHER).
        multicast: opt(CpMulticast, ".warpx2::02_13 .warpx2::01_23 .warpx4"),
        /// Decompression destination format (CP-DECOMP-FMT).
        dst_fmt: opt(CpDstFmt, ".b8x16"),
        /// Decompression source format (CP-DECOMP-FMT).
        src_fmt: opt(CpSrcFmt, ".b6x16_p32 .b4x16_p64"),
    }

    /// The `tcgen05.mma` family (reference §3.7, PTX ISA §9.7.16.10.9; `.sp` §9.7.16.10.9.2,
    /// `.ws` §9.7.16.10.9.3):
    /// `tcgen05.mma{.sp}{.ws}.cta_group.kind{.block_scale{.scale_vec}}{.ashift}{.collector::buf::op}`.
    MmaForm = "mma" {
        /// `.ws` (weight-stationary).
        ws: flag(".ws"),
        /// `.sp` (sparse A).
        sp: flag(".sp"),
        /// `.cta_group::1` or `::2`.
        cta_group: req(CtaGroup, ".cta_group::{1,2}", ".cta_group::1 or ::2"),
        /// `.kind::*`.
        kind: req(
            MmaKind,
            ".kind::{f16,tf32,f8f6f4,i8,mxf8f6f4,mxf4,mxf4nvf4}",
            "a .kind::* qualifier"
        ),
        /// `.block_scale` (MMA-BS-KINDS).
        block_scale: flag(".block_scale"),
        /// Scale-vector size (MMA-BS-VEC).
        scale_vec: opt(ScaleVec, ".scale_vec::{1X,2X,4X} .block16 .block32"),
        /// `.ashift` (MMA-ASHIFT-*).
        ashift: flag(".ashift"),
        /// Collector usage.
        collector: opt(Collector, ".collector::{a,b0,b1,b2,b3}::{fill,use,lastuse,discard}"),
    }
}

/// `tcgen05.shift.cta_group.down` (reference §3.6, PTX ISA §9.7.16.9.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ShiftForm {
    /// `.cta_group::1` or `::2`.
    pub cta_group: CtaGroup,
    /// `.down` written before `.cta_group` (the ISA examples' order, OQ-16) instead of after.
    pub down_first: bool,
}

/// By hand: the form records the order of its two qualifiers, which no slot kind of
/// [`grammar!`] does.
impl Syntax for ShiftForm {
    const MNEMONIC: &'static str = "shift";

    fn write(&self, out: &mut String) {
        out.push_str("shift");
        if self.down_first {
            out.push_str(".down");
            out.push_str(self.cta_group.as_str());
        } else {
            out.push_str(self.cta_group.as_str());
            out.push_str(".down");
        }
    }

    fn parse(head: &str, quals: &[&str]) -> Option<Result<Self, FormError>> {
        (head == Self::MNEMONIC).then(|| parse_shift(quals))
    }
}

fn parse_shift(quals: &[&str]) -> Result<ShiftForm, FormError> {
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
    Ok(ShiftForm {
        cta_group: cg,
        down_first: down_at < cg_at,
    })
}

/// `tcgen05.fence::before_thread_sync` / `::after_thread_sync` (reference §3.8, PTX ISA
/// §9.7.16.11.1). By hand: the kind is part of the mnemonic, and the form is the bare
/// [`FenceKind`].
impl Syntax for FenceKind {
    const MNEMONIC: &'static str = "fence";

    fn write(&self, out: &mut String) {
        out.push_str("fence");
        out.push_str(self.as_str());
    }

    fn parse(head: &str, quals: &[&str]) -> Option<Result<Self, FormError>> {
        let kind = FenceKind::from_ptx(head.strip_prefix(Self::MNEMONIC)?)?;
        Some(match quals.first() {
            Some(q) => Err(FormError::UnknownQualifier {
                family: "fence",
                qual: q.to_string(),
                expected: "nothing after ::before_thread_sync / ::after_thread_sync",
            }),
            None => Ok(kind),
        })
    }
}

/// The families: [`Form`]'s and [`Family`]'s variant, the row's type and the two variants'
/// docs, in one list from which both enums, [`Family::ALL`] and the dispatch of printing,
/// parsing and [`Family::as_str`] come.
macro_rules! families {
    ($($v:ident($t:ty): $form_doc:literal, $family_doc:literal;)*) => {
        /// One tcgen05 opcode with all its qualifiers.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub enum Form {
            $(#[doc = $form_doc] $v($t),)*
        }

        /// The instruction families, for coverage tables and counts.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Family {
            $(#[doc = $family_doc] $v,)*
        }

        impl Family {
            /// Every family.
            pub const ALL: &'static [Family] = &[$(Family::$v,)*];

            /// The mnemonic after `tcgen05.`.
            pub fn as_str(self) -> &'static str {
                match self { $(Family::$v => <$t as Syntax>::MNEMONIC,)* }
            }
        }

        impl Form {
            /// The family this form belongs to.
            pub fn family(&self) -> Family {
                match self { $(Form::$v(_) => Family::$v,)* }
            }

            /// Writes the full opcode in the syntax-line order of the reference, e.g.
            /// `tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32`.
            pub fn write_opcode(&self, out: &mut String) {
                out.push_str("tcgen05.");
                match self { $(Form::$v(f) => f.write(out),)* }
            }

            /// Parses a full opcode such as `tcgen05.ld.sync.aligned.32x32b.x4.b32`, with the
            /// qualifiers in any order (OQ-34).
            pub fn parse(opcode: &str) -> Result<Form, FormError> {
                let rest = opcode
                    .strip_prefix("tcgen05.")
                    .ok_or_else(|| FormError::UnknownInstruction(opcode.to_string()))?;
                let mut parts = rest.split('.');
                let head = parts.next().unwrap_or("");
                let quals: Vec<String> = parts.map(|p| format!(".{p}")).collect();
                let quals: Vec<&str> = quals.iter().map(String::as_str).collect();
                $(if let Some(r) = <$t as Syntax>::parse(head, &quals) {
                    return r.map(Form::$v);
                })*
                Err(FormError::UnknownInstruction(opcode.to_string()))
            }
        }
    };
}

families! {
    Alloc(AllocForm): "`tcgen05.alloc`", "alloc";
    Dealloc(DeallocForm): "`tcgen05.dealloc`", "dealloc";
    Relinquish(RelinquishForm): "`tcgen05.relinquish_alloc_permit`", "relinquish_alloc_permit";
    Ld(LdForm): "`tcgen05.ld`, `tcgen05.ld.red`", "ld (and ld.red)";
    St(StForm): "`tcgen05.st`", "st";
    Wait(WaitForm): "`tcgen05.wait::*`", "wait::ld / wait::st";
    Fence(FenceKind): "`tcgen05.fence::*`", "fence::*";
    Commit(CommitForm): "`tcgen05.commit`", "commit";
    Cp(CpForm): "`tcgen05.cp`", "cp";
    Shift(ShiftForm): "`tcgen05.shift`", "shift";
    Mma(MmaForm): "`tcgen05.mma` family", "mma family";
}

impl Form {
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

fn unknown(family: &'static str, q: &str, expected: &'static str) -> FormError {
    FormError::UnknownQualifier {
        family,
        qual: q.to_string(),
        expected,
    }
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
    fn expected_texts_list_each_slot_of_the_syntax_line() {
        // Written from the syntax lines of reference §3 (PTX ISA §9.7.16.7-12), in their order.
        let cases = [
            (
                "tcgen05.alloc.x",
                ".cta_group::{1,2} .exclusive .sync .aligned .shared::cta .b32",
            ),
            (
                "tcgen05.dealloc.x",
                ".cta_group::{1,2} .exclusive .sync .aligned .b32",
            ),
            (
                "tcgen05.relinquish_alloc_permit.x",
                ".cta_group::{1,2} .sync .aligned",
            ),
            (
                "tcgen05.ld.x",
                ".red .sync .aligned .32x32b .16x64b .16x128b .16x256b .16x32bx2 .x1-.x128 \
                 .pack::16b .min .max .abs .NaN .b32 .f32 .u32 .s32",
            ),
            (
                "tcgen05.st.x",
                ".sync .aligned .32x32b .16x64b .16x128b .16x256b .16x32bx2 .x1-.x128 \
                 .unpack::16b .b32",
            ),
            ("tcgen05.wait::st.x", ".sync .aligned"),
            (
                "tcgen05.commit.x",
                ".cta_group::{1,2} .mbarrier::arrive::one .shared::cluster .multicast::cluster .b64",
            ),
            ("tcgen05.shift.x", ".cta_group::{1,2} .down"),
            (
                "tcgen05.fence::before_thread_sync.x",
                "nothing after ::before_thread_sync / ::after_thread_sync",
            ),
        ];
        for (op, want) in cases {
            match Form::parse(op) {
                Err(FormError::UnknownQualifier { expected, qual, .. }) => {
                    assert_eq!(expected, want, "{op}");
                    assert_eq!(qual, ".x", "{op}");
                }
                other => panic!("{op}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_mnemonic_with_a_foreign_suffix_is_not_a_tcgen05_form() {
        for op in [
            "tcgen05.wait::cp.sync.aligned",
            "tcgen05.wait.sync.aligned",
            "tcgen05.fence::sync",
            "tcgen05.alloc::x.cta_group::1.sync.aligned.b32",
            "tcgen05.mmaa.cta_group::1.kind::f16",
        ] {
            assert_eq!(
                Form::parse(op),
                Err(FormError::UnknownInstruction(op.to_string())),
                "{op}"
            );
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
