//! Rule identifiers: one per row of the rules catalogue, `docs/reference.md` §6.
//!
//! The IR holds only the names, so that a [`crate::Case`] can say which rule a near-miss
//! program breaks without the generators depending on the oracle. What each rule means (its
//! kind, spec section and provenance) is the oracle's catalogue (`tcgen05-oracle::catalogue`).

use serde::{Deserialize, Serialize};

macro_rules! rule_ids {
    ($($variant:ident => $name:literal,)*) => {
        /// A row of the rules catalogue (reference §6), named as the catalogue names it (also
        /// in JSON: `"LD-ASYNC"`; binary case files store the variant's index).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub enum RuleId {
            $(
                #[doc = concat!("`", $name, "`")]
                #[serde(rename = $name)]
                $variant,
            )*
        }

        impl RuleId {
            /// Every rule, in catalogue order.
            pub const ALL: &'static [RuleId] = &[$(RuleId::$variant,)*];

            /// The catalogue's name, e.g. `ALLOC-AFTER-RELINQUISH`.
            pub fn as_str(self) -> &'static str {
                match self { $(RuleId::$variant => $name,)* }
            }
        }

        impl std::str::FromStr for RuleId {
            type Err = UnknownRule;
            fn from_str(s: &str) -> Result<Self, UnknownRule> {
                match s {
                    $($name => Ok(RuleId::$variant),)*
                    _ => Err(UnknownRule(s.to_string())),
                }
            }
        }
    };
}

rule_ids! {
    GenTarget => "GEN-TARGET",
    GenPtxver => "GEN-PTXVER",
    GenCtagroupUniform => "GEN-CTAGROUP-UNIFORM",
    GenSyncQual => "GEN-SYNC-QUAL",
    GenAlignedConvergent => "GEN-ALIGNED-CONVERGENT",
    WaitAlignedConvergent => "WAIT-ALIGNED-CONVERGENT",
    GenNoExitedThread => "GEN-NO-EXITED-THREAD",
    GenPeerActive => "GEN-PEER-ACTIVE",
    GenPeerExists => "GEN-PEER-EXISTS",
    AllocNcolsPow2 => "ALLOC-NCOLS-POW2",
    AllocNcolsRange => "ALLOC-NCOLS-RANGE",
    AllocNcolsUniform => "ALLOC-NCOLS-UNIFORM",
    AllocNonincreasing => "ALLOC-NONINCREASING",
    AllocAfterRelinquish => "ALLOC-AFTER-RELINQUISH",
    AllocDstShared => "ALLOC-DST-SHARED",
    AllocDstStatespace => "ALLOC-DST-STATESPACE",
    AllocBlocks => "ALLOC-BLOCKS",
    AllocIssuer => "ALLOC-ISSUER",
    AllocPairBlock => "ALLOC-PAIR-BLOCK",
    AllocAddrStore => "ALLOC-ADDR-STORE",
    AllocStoreWeak => "ALLOC-STORE-WEAK",
    AllocSameAddrOrder => "ALLOC-SAME-ADDR-ORDER",
    AllocFreeBeforeExit => "ALLOC-FREE-BEFORE-EXIT",
    DeallocTaddrPrev => "DEALLOC-TADDR-PREV",
    DeallocPairSync => "DEALLOC-PAIR-SYNC",
    DeallocPairBlock => "DEALLOC-PAIR-BLOCK",
    DeallocBarrierOrder => "DEALLOC-BARRIER-ORDER",
    DeallocExitAfter => "DEALLOC-EXIT-AFTER",
    RelqCtaWide => "RELQ-CTA-WIDE",
    LdstTaddrUniform => "LDST-TADDR-UNIFORM",
    LdstLaneQuarter => "LDST-LANE-QUARTER",
    LdstShape => "LDST-SHAPE",
    LdstNum => "LDST-NUM",
    LdstVecLen => "LDST-VEC-LEN",
    LdstNumNa => "LDST-NUM-NA",
    LdstSplitoff => "LDST-SPLITOFF",
    LdstType => "LDST-TYPE",
    LdPackOnly => "LD-PACK-ONLY",
    StUnpackOnly => "ST-UNPACK-ONLY",
    LdAsync => "LD-ASYNC",
    StAsync => "ST-ASYNC",
    LdRedShape => "LD-RED-SHAPE",
    LdRedNum => "LD-RED-NUM",
    LdRedType => "LD-RED-TYPE",
    LdRedTarget => "LD-RED-TARGET",
    WaitScope => "WAIT-SCOPE",
    WaitKind => "WAIT-KIND",
    WaitOps => "WAIT-OPS",
    CpShape => "CP-SHAPE",
    CpMcastReq => "CP-MCAST-REQ",
    CpMcastOther => "CP-MCAST-OTHER",
    CpDecompFmt => "CP-DECOMP-FMT",
    CpSdesc => "CP-SDESC",
    CpPair => "CP-PAIR",
    ShiftLaneAlign => "SHIFT-LANE-ALIGN",
    ShiftTarget => "SHIFT-TARGET",
    ShiftSem => "SHIFT-SEM",
    MmaSingleThread => "MMA-SINGLE-THREAD",
    MmaAsync => "MMA-ASYNC",
    MmaEnableD => "MMA-ENABLE-D",
    MmaScaleDRange => "MMA-SCALE-D-RANGE",
    MmaScaleDKind => "MMA-SCALE-D-KIND",
    MmaScaleDSem => "MMA-SCALE-D-SEM",
    MmaDolSize => "MMA-DOL-SIZE",
    MmaDolSem => "MMA-DOL-SEM",
    MmaShapeValid => "MMA-SHAPE-VALID",
    MmaKExplicit => "MMA-K-EXPLICIT",
    MmaK96Target => "MMA-K96-TARGET",
    MmaWsCta1 => "MMA-WS-CTA1",
    MmaWsKinds => "MMA-WS-KINDS",
    MmaZcmWsOnly => "MMA-ZCM-WS-ONLY",
    MmaZcmShift => "MMA-ZCM-SHIFT",
    MmaBsKinds => "MMA-BS-KINDS",
    MmaBsVec => "MMA-BS-VEC",
    MmaBsNvf4Explicit => "MMA-BS-NVF4-EXPLICIT",
    MmaBsMxf4Default => "MMA-BS-MXF4-DEFAULT",
    MmaBsVecTarget => "MMA-BS-VEC-TARGET",
    MmaBsSfid => "MMA-BS-SFID",
    MmaBsDup => "MMA-BS-DUP",
    MmaI8Target => "MMA-I8-TARGET",
    MmaSpMxf4Target => "MMA-SP-MXF4-TARGET",
    MmaAshiftM => "MMA-ASHIFT-M",
    MmaAshiftCollector => "MMA-ASHIFT-COLLECTOR",
    MmaAshiftAtmem => "MMA-ASHIFT-ATMEM",
    MmaCollectorValid => "MMA-COLLECTOR-VALID",
    MmaCollectorBuf => "MMA-COLLECTOR-BUF",
    MmaCollectorDefault => "MMA-COLLECTOR-DEFAULT",
    MmaSrcStable => "MMA-SRC-STABLE",
    MmaTransposeKind => "MMA-TRANSPOSE-KIND",
    MmaTransposeSwz => "MMA-TRANSPOSE-SWZ",
    MmaT8bN => "MMA-T8B-N",
    MmaTransposeSubbyte => "MMA-TRANSPOSE-SUBBYTE",
    MmaHalfdpAlign => "MMA-HALFDP-ALIGN",
    MmaSpMetaTf32 => "MMA-SP-META-TF32",
    MmaSpMetaMxf4 => "MMA-SP-META-MXF4",
    MmaSpMeta24 => "MMA-SP-META-24",
    MmaSpSelector => "MMA-SP-SELECTOR",
    MmaDUnpacked => "MMA-D-UNPACKED",
    MmaPair => "MMA-PAIR",
    IdescReserved => "IDESC-RESERVED",
    IdescEnc => "IDESC-ENC",
    IdescSat => "IDESC-SAT",
    SdescAlign16 => "SDESC-ALIGN16",
    SdescFixed => "SDESC-FIXED",
    SdescSwizzle => "SDESC-SWIZZLE",
    SdescBaseoff => "SDESC-BASEOFF",
    SdescLboAbs => "SDESC-LBO-ABS",
    SdescReserved => "SDESC-RESERVED",
    CommitTrack => "COMMIT-TRACK",
    CommitArrive => "COMMIT-ARRIVE",
    CommitMbarWindow => "COMMIT-MBAR-WINDOW",
    CommitMcastMask => "COMMIT-MCAST-MASK",
    CommitCompletion => "COMMIT-COMPLETION",
    CommitImplicitFence => "COMMIT-IMPLICIT-FENCE",
    CommitNotLdst => "COMMIT-NOT-LDST",
    FenceBefore => "FENCE-BEFORE",
    FenceAfter => "FENCE-AFTER",
    McmAsyncUnordered => "MCM-ASYNC-UNORDERED",
    McmPipeMmaMma => "MCM-PIPE-MMA-MMA",
    McmPipeCpMma => "MCM-PIPE-CP-MMA",
    McmPipeShiftMma => "MCM-PIPE-SHIFT-MMA",
    McmPipeShiftCp => "MCM-PIPE-SHIFT-CP",
    McmPipeMmaShift => "MCM-PIPE-MMA-SHIFT",
    McmPipeCtagroup => "MCM-PIPE-CTAGROUP",
    McmXthread => "MCM-XTHREAD",
    McmXthreadNonpipe => "MCM-XTHREAD-NONPIPE",
    McmLdRegdep => "MCM-LD-REGDEP",
    McmLdWar => "MCM-LD-WAR",
    McmStBeforeUse => "MCM-ST-BEFORE-USE",
    McmProxy => "MCM-PROXY",
    McmSyncCategory => "MCM-SYNC-CATEGORY",
    GenCtagroupValid => "GEN-CTAGROUP-VALID",
    GenSyntax => "GEN-SYNTAX",
    MmaScaleDTarget => "MMA-SCALE-D-TARGET",
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rule name that is not in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule `{0}` (see `tcgen05-fuzz rules` for the catalogue)")]
pub struct UnknownRule(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_the_catalogue_count() {
        // The catalogue in the reference §6 has one row per id, plus the rows the oracle's
        // catalogue adds (`GEN-CTAGROUP-VALID`, `GEN-SYNTAX`, `MMA-SCALE-D-TARGET`); every
        // name parses back.
        for r in RuleId::ALL {
            assert_eq!(r.as_str().parse::<RuleId>().unwrap(), *r);
        }
        assert_eq!(RuleId::ALL.len(), 134);
    }
}
