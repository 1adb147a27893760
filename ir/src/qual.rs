//! Qualifier keywords of the tcgen05 family: one table per qualifier, from which the enum, its
//! PTX spelling (printer) and its parse (parser) all come (one op table, many views).
//!
//! Each table cites the syntax line of the reference (`docs/reference.md` §3) it
//! transcribes. The tables are deliberately *permissive*: they also hold spellings that some rule
//! forbids in some position (e.g. `.pack::16b` on a store), because near-miss programs must be
//! able to say them; the oracle's static check decides legality, never the IR.

use serde::{Deserialize, Serialize};

macro_rules! keywords {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[doc = concat!("`", $text, "`")]
                $variant,
            )*
        }

        impl $name {
            /// Every value, in table order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The PTX spelling, with its leading dot where it has one.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            /// Parses the PTX spelling (with its leading dot).
            pub fn from_ptx(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)* _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

keywords! {
    /// `.cta_group` (reference §2.5, §3.1): how many CTAs of a pair an operation spans.
    CtaGroup { One => ".cta_group::1", Two => ".cta_group::2", }
}

impl CtaGroup {
    /// 1 or 2.
    pub fn n(self) -> u8 {
        match self {
            CtaGroup::One => 1,
            CtaGroup::Two => 2,
        }
    }
}

keywords! {
    /// State spaces an address operand may be qualified with. Only `.shared::cta` (or none) is
    /// legal on alloc's `dst` (ALLOC-DST-STATESPACE, §3.1); the others exist for near-misses.
    StateSpace {
        SharedCta => ".shared::cta",
        SharedCluster => ".shared::cluster",
        Shared => ".shared",
        Global => ".global",
    }
}

keywords! {
    /// Operand types written on tcgen05 opcodes (§3).
    Ty {
        B32 => ".b32",
        B64 => ".b64",
        U32 => ".u32",
        S32 => ".s32",
        F32 => ".f32",
        B16 => ".b16",
        U64 => ".u64",
    }
}

keywords! {
    /// ld/st shapes (§2.6, §3.2): `.16x64b .16x128b .16x256b .32x32b .16x32bx2`.
    LdStShape {
        S32x32b => ".32x32b",
        S16x64b => ".16x64b",
        S16x128b => ".16x128b",
        S16x256b => ".16x256b",
        S16x32bx2 => ".16x32bx2",
        /// Not a shape (LDST-SHAPE near-misses only): 32 lanes x 64 bits does not exist.
        S32x64b => ".32x64b",
    }
}

impl LdStShape {
    /// The five shapes the spec lists (LDST-SHAPE, §2.6); [`LdStShape::ALL`] also holds the
    /// near-miss spelling.
    pub const LEGAL: &'static [LdStShape] = &[
        LdStShape::S32x32b,
        LdStShape::S16x64b,
        LdStShape::S16x128b,
        LdStShape::S16x256b,
        LdStShape::S16x32bx2,
    ];

    /// Whether the spec lists this shape (LDST-SHAPE).
    pub fn is_legal(self) -> bool {
        self != LdStShape::S32x64b
    }
}

keywords! {
    /// ld/st repetition count `.num` (§2.6).
    Num {
        X1 => ".x1", X2 => ".x2", X4 => ".x4", X8 => ".x8",
        X16 => ".x16", X32 => ".x32", X64 => ".x64", X128 => ".x128",
        /// Not a count (LDST-NUM near-misses only): `.num` stops at `.x128`.
        X256 => ".x256",
    }
}

impl Num {
    /// The counts the spec lists, `.x1` to `.x128` (LDST-NUM, §2.6); [`Num::ALL`] also holds
    /// the near-miss spelling `.x256`.
    pub const LEGAL: &'static [Num] = &[
        Num::X1,
        Num::X2,
        Num::X4,
        Num::X8,
        Num::X16,
        Num::X32,
        Num::X64,
        Num::X128,
    ];

    /// Whether the spec lists this count (LDST-NUM).
    pub fn is_legal(self) -> bool {
        self != Num::X256
    }

    /// The repetition count N of `.xN`.
    pub fn count(self) -> u32 {
        1 << (self as u32)
    }
}

keywords! {
    /// `.pack::16b` (ld only) and `.unpack::16b` (st only), §2.6. Both appear on both so that
    /// LD-PACK-ONLY / ST-UNPACK-ONLY near-misses can be written.
    Pack { Pack16b => ".pack::16b", Unpack16b => ".unpack::16b", }
}

keywords! {
    /// `ld.red` reduction operator (§3.2).
    RedOp { Min => ".min", Max => ".max", }
}

keywords! {
    /// `tcgen05.wait` operation (§3.4).
    WaitOp { Ld => ".wait::ld", St => ".wait::st", }
}

keywords! {
    /// `tcgen05.fence` kind (§3.8).
    FenceKind {
        BeforeThreadSync => "::before_thread_sync",
        AfterThreadSync => "::after_thread_sync",
    }
}

keywords! {
    /// `tcgen05.cp` shapes (§3.5).
    CpShape {
        S128x256b => ".128x256b",
        S4x256b => ".4x256b",
        S128x128b => ".128x128b",
        S64x128b => ".64x128b",
        S32x128b => ".32x128b",
        /// Not a shape (CP-SHAPE near-misses only): the spec has no 64-lane 256-bit copy.
        S64x256b => ".64x256b",
    }
}

impl CpShape {
    /// The five shapes the spec lists (CP-SHAPE, §3.5); [`CpShape::ALL`] also holds the
    /// near-miss spelling.
    pub const LEGAL: &'static [CpShape] = &[
        CpShape::S128x256b,
        CpShape::S4x256b,
        CpShape::S128x128b,
        CpShape::S64x128b,
        CpShape::S32x128b,
    ];

    /// Whether the spec lists this shape (CP-SHAPE).
    pub fn is_legal(self) -> bool {
        self != CpShape::S64x256b
    }
}

keywords! {
    /// `tcgen05.cp` multicast (§3.5).
    CpMulticast {
        Warpx2_02_13 => ".warpx2::02_13",
        Warpx2_01_23 => ".warpx2::01_23",
        Warpx4 => ".warpx4",
    }
}

keywords! {
    /// `tcgen05.cp` decompression destination format (§3.5).
    CpDstFmt { B8x16 => ".b8x16", }
}

keywords! {
    /// `tcgen05.cp` decompression source format (§3.5).
    CpSrcFmt { B6x16P32 => ".b6x16_p32", B4x16P64 => ".b4x16_p64", }
}

keywords! {
    /// `tcgen05.mma` kinds (§3.7).
    MmaKind {
        F16 => ".kind::f16",
        Tf32 => ".kind::tf32",
        F8f6f4 => ".kind::f8f6f4",
        I8 => ".kind::i8",
        Mxf8f6f4 => ".kind::mxf8f6f4",
        Mxf4 => ".kind::mxf4",
        Mxf4nvf4 => ".kind::mxf4nvf4",
    }
}

keywords! {
    /// Block-scale vector size (§3.7).
    ScaleVec {
        X1 => ".scale_vec::1X",
        X2 => ".scale_vec::2X",
        X4 => ".scale_vec::4X",
        Block16 => ".block16",
        Block32 => ".block32",
    }
}

keywords! {
    /// Collector buffer (§3.7): `::a` for non-ws forms, `::b0..::b3` for `.ws` forms.
    CollectorBuf { A => "a", B0 => "b0", B1 => "b1", B2 => "b2", B3 => "b3", }
}

keywords! {
    /// Collector usage (§3.7).
    CollectorOp { Fill => "fill", Use => "use", Lastuse => "lastuse", Discard => "discard", }
}

keywords! {
    /// The target architectures a program may name. The tcgen05-capable ones are listed in
    /// reference §1; the others exist so that GEN-TARGET near-misses can be written.
    Target {
        Sm100a => "sm_100a",
        Sm100f => "sm_100f",
        Sm103a => "sm_103a",
        Sm103f => "sm_103f",
        Sm110a => "sm_110a",
        Sm110f => "sm_110f",
        Sm90a => "sm_90a",
        Sm100 => "sm_100",
        Sm120a => "sm_120a",
    }
}

keywords! {
    /// Scope of an mbarrier try_wait or arrive.
    Scope { Cta => ".cta", Cluster => ".cluster", }
}
