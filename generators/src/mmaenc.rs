//! Encodings the builder needs for valid MMAs: instruction descriptors (reference §2.8 layout
//! (a)), shared-memory descriptors (§2.8), and the (M, N, K) table (§2.7, MMA-SHAPE-VALID).

use tcgen05_ir::{FillElem, MmaKind, SmemDesc};

/// D types of the idesc (bits 4-5).
pub const D_F16: u32 = 0;
/// D type F32.
pub const D_F32: u32 = 1;
/// D type S32.
pub const D_S32: u32 = 2;

/// The fields of an idesc of layout (a) (kinds tf32, f16, f8f6f4, i8) that the builder sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Idesc {
    /// D type (bits 4-5).
    pub d_type: u32,
    /// A type (bits 7-9).
    pub a_type: u32,
    /// B type (bits 10-12).
    pub b_type: u32,
    /// M (encoded as M >> 4 at bits 24-28).
    pub m: u32,
    /// N (encoded as N >> 3 at bits 17-22).
    pub n: u32,
}

impl Idesc {
    /// The 32-bit descriptor: dense, no saturate, no negate, no transpose, reserved bits 0
    /// (IDESC-RESERVED, IDESC-ENC, IDESC-SAT).
    pub fn encode(&self) -> u32 {
        (self.d_type & 3) << 4
            | (self.a_type & 7) << 7
            | (self.b_type & 7) << 10
            | ((self.n >> 3) & 0x3F) << 17
            | ((self.m >> 4) & 0x1F) << 24
    }
}

/// The negate bits of an idesc of layout (a) (§9.7.16.4.2 instruction descriptor table,
/// reference §2.8: bit 13 negates A, bit 14 negates B): both 0 for `.kind::i8`, which cannot
/// negate (MMA-TRANSPOSE-KIND, §9.7.16.10.1).
pub fn negate_bits(kind: MmaKind, neg_a: bool, neg_b: bool) -> u32 {
    if kind == MmaKind::I8 {
        return 0;
    }
    u32::from(neg_a) << 13 | u32::from(neg_b) << 14
}

/// The idesc of a dense `.kind::mxf8f6f4` MMA (reference §2.8 layout (b)): A/B types at bits
/// 7-9 / 10-12 (8-bit E4M3 = 0, E5M2 = 1, so K-major is legal either way), N >> 3 at 17-22,
/// scale type UE8M0 = 1 at bit 23, M >> 7 at bits 27-28, scale-factor IDs 0, reserved bits 0.
pub fn idesc_mxf8f6f4(m: u32, n: u32, a_type: u32, b_type: u32) -> u32 {
    (a_type & 7) << 7
        | (b_type & 7) << 10
        | ((n >> 3) & 0x3F) << 17
        | 1 << 23
        | ((m >> 7) & 3) << 27
}

/// The idesc of a `.kind::mxf4` / `.kind::mxf4nvf4` MMA (reference §2.8 layout (c)): A type
/// E2M1 = 1 at bits 7-9, B type E2M1 = 1 at bits 10-11 (bit 12 reserved), N >> 3 at 17-22,
/// scale type at bit 23 (`ue8m0`: UE8M0 = 1, else UE4M3 = 0, mxf4nvf4 only), M >> 7 at 27-28,
/// scale-factor IDs 0 (legal with every scale-vector size), bit 2 for `.sp`, bit 31 the K
/// selector (1: dense K = 96, MMA-K-EXPLICIT), transpose bits 0 (MMA-TRANSPOSE-KIND).
pub fn idesc_mxf4(m: u32, n: u32, ue8m0: bool, sparse: bool, k96: bool) -> u32 {
    u32::from(sparse) << 2
        | 1 << 7
        | 1 << 10
        | ((n >> 3) & 0x3F) << 17
        | u32::from(ue8m0) << 23
        | ((m >> 7) & 3) << 27
        | u32::from(k96) << 31
}

/// Whether N is legal for a dense non-ws `cta_group::2` MMA of this kind (§2.7 table):
/// 16..256 step 16; i8: 32..256 step 32.
pub fn n_ok_cta2(kind: MmaKind, n: u32) -> bool {
    let step = if kind == MmaKind::I8 { 32 } else { 16 };
    (step..=256).contains(&n) && n.is_multiple_of(step)
}

/// Bytes of one row of A (or B) along K: `K * element bits / 8`; 32 for every dense
/// non-block-scaled kind with 8/16/32-bit elements.
pub fn row_bytes(kind: MmaKind) -> u32 {
    match kind {
        MmaKind::F16 => 16 * 2,
        MmaKind::Tf32 => 8 * 4,
        // 8-bit elements (the builder's mxf8f6f4 uses e4m3/e5m2), K = 32; 4-bit e2m1
        // elements of mxf4/mxf4nvf4, K = 64: also 32 bytes.
        _ => 32,
    }
}

/// TMEM columns that A takes when it comes from TMEM: one 32-bit cell per 4 bytes of a row.
pub fn a_tmem_cols(kind: MmaKind) -> u32 {
    row_bytes(kind) / 4
}

/// Whether N is legal for a dense non-ws `cta_group::1` MMA of this kind (§2.7 table):
/// 8..256 step 8; i8: 8, 16, 24, 32, then 48..256 step 16.
pub fn n_ok_cta1(kind: MmaKind, n: u32) -> bool {
    match kind {
        MmaKind::I8 => {
            matches!(n, 8 | 16 | 24 | 32) || (48..=256).contains(&n) && n.is_multiple_of(16)
        }
        _ => (8..=256).contains(&n) && n.is_multiple_of(8),
    }
}

/// The default idesc fields of a kind with M and N: f16 with f16 or bf16 A/B and F32 D (or
/// F16 D with f16 A/B), tf32 with F32 D, f8f6f4 with e4m3/e5m2 and F32 D, i8 with s8/u8 and
/// S32 D (§2.8 layout (a)). `variant` picks among the legal type combinations.
pub fn idesc_for(kind: MmaKind, m: u32, n: u32, variant: u32) -> Idesc {
    let (d_type, a_type, b_type) = match kind {
        // f16: A/B F16=0 or BF16=1; D F16 only with F16 A/B.
        MmaKind::F16 => match variant % 3 {
            0 => (D_F32, 0, 0),
            1 => (D_F32, 1, 1),
            _ => (D_F16, 0, 0),
        },
        // tf32: TF32=2, D F32.
        MmaKind::Tf32 => (D_F32, 2, 2),
        // f8f6f4 with 8-bit types only (E4M3=0, E5M2=1), so transposes stay legal and no
        // sub-byte packing question arises.
        MmaKind::F8f6f4 => (D_F32, variant & 1, (variant >> 1) & 1),
        // i8: U8=0, S8=1, D S32.
        MmaKind::I8 => (D_S32, variant & 1, (variant >> 1) & 1),
        _ => (D_F32, 0, 0),
    };
    Idesc {
        d_type,
        a_type,
        b_type,
        m,
        n,
    }
}

/// The element kind [`tcgen05_ir::Stmt::Fill`] should write for a kind's operands (small
/// integers keep f16/tf32/i8 products exact).
pub fn fill_elem(kind: MmaKind) -> FillElem {
    match kind {
        MmaKind::F16 => FillElem::F16Small,
        MmaKind::Tf32 => FillElem::Tf32Small,
        MmaKind::I8 => FillElem::I8Small,
        _ => FillElem::Word,
    }
}

/// The element kind for the A and B regions of an MMA of `kind` with instruction descriptor
/// `idesc`: [`fill_elem`], except where the types read another fill's small integers
/// (§9.7.16.10.1 formats; OQ-19 leaves rounding open, so only values with exact products and
/// sums give exact results, reference §3.7): bf16 A/B (type code 1, idesc bits 7-9) read
/// `Bf16Small` (two bf16 small integers per word, so even and odd elements both count); kind::f8f6f4
/// with e4m3/e5m2 A and B read `F16Small` (e5m2 is the high byte of an f16: the small integer,
/// then a zero; e4m3 reads those bytes as 0, ±1.5, ±2, ±2.5, ±3), and so does kind::mxf8f6f4
/// (the same element types, scaled by powers of two: MMA-BS-*, §9.7.16.10.7).
pub fn operand_fill(kind: MmaKind, idesc: u32) -> FillElem {
    let (a, b) = (idesc >> 7 & 7, idesc >> 10 & 7);
    match kind {
        MmaKind::F16 if a == 1 => FillElem::Bf16Small,
        MmaKind::F8f6f4 | MmaKind::Mxf8f6f4 if a <= 1 && b <= 1 => FillElem::F16Small,
        _ => fill_elem(kind),
    }
}

/// A K-major, no-swizzle descriptor for a matrix of `rows` rows of 32 bytes at the start of
/// `region` (§2.8): core matrices of 8 rows x 16 bytes stored contiguously (128 B); the two
/// core matrices of a row group are adjacent (LBO = 128 B) and row groups follow each other
/// (SBO = 256 B). Start 16-byte aligned (SDESC-ALIGN16), bits 46-48 = 0b001 (SDESC-FIXED),
/// base offset 0 since regions are 1024-byte aligned (SDESC-BASEOFF), swizzle 0
/// (SDESC-SWIZZLE), reserved bits 0 (SDESC-RESERVED).
pub fn kmajor_desc(region: u8) -> SmemDesc {
    SmemDesc {
        region,
        offset: 0,
        lbo_enc: 128 >> 4,
        sbo_enc: 256 >> 4,
        fixed: 0b001,
        base_offset: 0,
        lbo_abs: false,
        swizzle: 0,
        reserved: 0,
    }
}

/// [`kmajor_desc`] for rows of `row_bytes` bytes (a multiple of 16): chunks of 16 bytes
/// along K 128 bytes apart (LBO), 8-row groups `8 × row_bytes` apart (SBO), so that no two
/// elements share a byte. The B of a sparse MMA has K twice the dense K (§9.7.16.10.8: A is
/// M × K stored as M × K/2, B is K × N), so 64-byte rows.
pub fn kmajor_desc_rows(region: u8, row_bytes: u32) -> SmemDesc {
    SmemDesc {
        sbo_enc: ((8 * row_bytes) >> 4) as u16,
        ..kmajor_desc(region)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operand_fill_follows_the_idesc_types() {
        let f16 = |v| idesc_for(MmaKind::F16, 128, 64, v).encode();
        // Variants 0 and 3: f16 A/B; 1: bf16 A/B (type code 1 at bits 7-9).
        assert_eq!(operand_fill(MmaKind::F16, f16(0)), FillElem::F16Small);
        assert_eq!(operand_fill(MmaKind::F16, f16(1)), FillElem::Bf16Small);
        for v in 0..4 {
            let d = idesc_for(MmaKind::F8f6f4, 128, 64, v).encode();
            assert_eq!(operand_fill(MmaKind::F8f6f4, d), FillElem::F16Small);
        }
        // e2m1 A (type code 5) keeps the generic fill.
        assert_eq!(operand_fill(MmaKind::F8f6f4, 5 << 7), FillElem::Word);
        // Block-scaled mxf8f6f4 with e4m3 / e5m2 A and B (layout (b) type fields as in (a)):
        // the same small integers; the packed e2m1 of the mxf4 kinds keep arbitrary words.
        for (a, b) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let d = idesc_mxf8f6f4(128, 64, a, b);
            assert_eq!(operand_fill(MmaKind::Mxf8f6f4, d), FillElem::F16Small);
        }
        assert_eq!(
            operand_fill(MmaKind::Mxf8f6f4, idesc_mxf8f6f4(128, 64, 5, 0)),
            FillElem::Word
        );
        let d = idesc_mxf4(128, 64, true, false, false);
        assert_eq!(operand_fill(MmaKind::Mxf4, d), FillElem::Word);
        assert_eq!(operand_fill(MmaKind::I8, 1 << 7), FillElem::I8Small);
    }

    #[test]
    fn idesc_fields_land_on_the_documented_bits() {
        // §2.8 layout (a): D type bits 4-5, A 7-9, B 10-12, N>>3 at 17-22, M>>4 at 24-28.
        let i = Idesc {
            d_type: D_F32,
            a_type: 1,
            b_type: 1,
            m: 128,
            n: 64,
        };
        let v = i.encode();
        assert_eq!(v >> 4 & 3, 1);
        assert_eq!(v >> 7 & 7, 1);
        assert_eq!(v >> 10 & 7, 1);
        assert_eq!(v >> 17 & 0x3F, 8);
        assert_eq!(v >> 24 & 0x1F, 8);
        // Reserved bits 6, 23, 29 and the sparse/saturate bits stay 0.
        assert_eq!(v & (1 << 6 | 1 << 23 | 1 << 29 | 0b1111), 0);
    }

    #[test]
    fn negate_bits_are_13_and_14_and_never_for_i8() {
        // §2.8 layout (a): bit 13 negate A, bit 14 negate B; i8 cannot negate
        // (MMA-TRANSPOSE-KIND).
        assert_eq!(negate_bits(MmaKind::F16, true, false), 1 << 13);
        assert_eq!(negate_bits(MmaKind::Tf32, false, true), 1 << 14);
        assert_eq!(negate_bits(MmaKind::F8f6f4, true, true), 0b11 << 13);
        assert_eq!(negate_bits(MmaKind::I8, true, true), 0);
    }

    #[test]
    fn mxf4_idesc_follows_layout_c() {
        // §2.8 layout (c): A E2M1 = 1 at 7-9, B at 10-11, N >> 3 at 17-22, scale type bit 23,
        // M >> 7 at 27-28, K selector bit 31, sparse bit 2; bits 3, 6, 12, 24-26 reserved.
        let v = idesc_mxf4(256, 64, true, false, true);
        assert_eq!(v >> 7 & 7, 1);
        assert_eq!(v >> 10 & 3, 1);
        assert_eq!(v >> 17 & 0x3F, 8);
        assert_eq!(v >> 23 & 1, 1);
        assert_eq!(v >> 27 & 3, 2);
        assert_eq!(v >> 31, 1);
        assert_eq!(
            v & (1 << 3 | 1 << 6 | 1 << 12 | 0b111 << 24 | 0b11 << 29 | 0b11 << 4),
            0
        );
        let s = idesc_mxf4(128, 8, false, true, false);
        assert_eq!((s >> 2 & 1, s >> 23 & 1, s >> 31), (1, 0, 0));
    }

    #[test]
    fn n_table_follows_the_reference() {
        assert!(n_ok_cta2(MmaKind::F16, 16) && !n_ok_cta2(MmaKind::F16, 8));
        assert!(n_ok_cta2(MmaKind::I8, 64) && !n_ok_cta2(MmaKind::I8, 48));
        assert!(n_ok_cta1(MmaKind::F16, 8) && n_ok_cta1(MmaKind::F16, 256));
        assert!(!n_ok_cta1(MmaKind::F16, 12) && !n_ok_cta1(MmaKind::F16, 264));
        assert!(
            n_ok_cta1(MmaKind::I8, 24) && !n_ok_cta1(MmaKind::I8, 40) && n_ok_cta1(MmaKind::I8, 48)
        );
    }

    #[test]
    fn descriptor_is_aligned_and_fixed() {
        let d = kmajor_desc(0);
        let bits = d.encode(0x400);
        assert_eq!(bits >> 46 & 7, 1);
        assert_eq!(bits & SmemDesc::RESERVED_MASK, 0);
        assert_eq!((bits >> 61) & 7, 0);
        assert_eq!(bits >> 16 & 0x3FFF, 8);
        assert_eq!(bits >> 32 & 0x3FFF, 16);
    }
}
