//! Field access for the 32-bit MMA instruction descriptor (reference §2.8, PTX ISA §9.7.16.4.2).
//!
//! The descriptor has three layouts, chosen by the kind:
//! - (a) `tf32`, `f16`, `f8f6f4`, `i8`;
//! - (b) `mxf8f6f4`;
//! - (c) `mxf4`, `mxf4nvf4`.
//!
//! [`Idesc`] only names bit fields; it says nothing about which values are valid (that is the
//! oracle's business, rules IDESC-* and MMA-* of reference §6).

use crate::qual::MmaKind;

/// The layout of the instruction descriptor (reference §2.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdescLayout {
    /// (a): kinds tf32, f16, f8f6f4, i8.
    A,
    /// (b): kind mxf8f6f4.
    B,
    /// (c): kinds mxf4, mxf4nvf4.
    C,
}

impl IdescLayout {
    /// The layout a kind uses.
    pub fn of(kind: MmaKind) -> IdescLayout {
        match kind {
            MmaKind::F16 | MmaKind::Tf32 | MmaKind::F8f6f4 | MmaKind::I8 => IdescLayout::A,
            MmaKind::Mxf8f6f4 => IdescLayout::B,
            MmaKind::Mxf4 | MmaKind::Mxf4nvf4 => IdescLayout::C,
        }
    }
}

/// An instruction descriptor read through the layout of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Idesc {
    /// The raw 32 bits.
    pub bits: u32,
    /// The layout the bits are read with.
    pub layout: IdescLayout,
}

impl Idesc {
    /// `bits` read with the layout of `kind`.
    pub fn new(kind: MmaKind, bits: u32) -> Idesc {
        Idesc {
            bits,
            layout: IdescLayout::of(kind),
        }
    }

    fn field(&self, lo: u32, width: u32) -> u32 {
        self.bits >> lo & ((1 << width) - 1)
    }

    /// Bits 0-1: the sparsity selector (layout (a); reserved in (b) and (c)).
    pub fn sparsity_selector(&self) -> u32 {
        self.field(0, 2)
    }

    /// Bit 2: sparse.
    pub fn sparse(&self) -> bool {
        self.field(2, 1) == 1
    }

    /// Bit 3: saturate (layout (a); reserved in (b) and (c)).
    pub fn saturate(&self) -> bool {
        self.field(3, 1) == 1
    }

    /// Bits 4-5: the D type (layout (a): F16 = 0, F32 = 1, S32 = 2).
    pub fn d_type(&self) -> u32 {
        self.field(4, 2)
    }

    /// Bits 4-5: the B scale-factor ID (layouts (b) and (c)).
    pub fn b_sf_id(&self) -> u32 {
        self.field(4, 2)
    }

    /// Bits 7-9: the A type.
    pub fn a_type(&self) -> u32 {
        self.field(7, 3)
    }

    /// The B type: bits 10-12 in layouts (a) and (b), bits 10-11 in layout (c).
    pub fn b_type(&self) -> u32 {
        match self.layout {
            IdescLayout::C => self.field(10, 2),
            _ => self.field(10, 3),
        }
    }

    /// Bit 13: negate A.
    pub fn negate_a(&self) -> bool {
        self.field(13, 1) == 1
    }

    /// Bit 14: negate B.
    pub fn negate_b(&self) -> bool {
        self.field(14, 1) == 1
    }

    /// Bit 15: transpose A (1 = M-major).
    pub fn transpose_a(&self) -> bool {
        self.field(15, 1) == 1
    }

    /// Bit 16: transpose B (1 = N-major).
    pub fn transpose_b(&self) -> bool {
        self.field(16, 1) == 1
    }

    /// N, from bits 17-22 (`N >> 3`).
    pub fn n(&self) -> u32 {
        self.field(17, 6) << 3
    }

    /// Bit 23: the scale type (layouts (b) and (c): UE8M0 = 1, UE4M3 = 0).
    pub fn scale_type(&self) -> u32 {
        self.field(23, 1)
    }

    /// M: bits 24-28 (`M >> 4`) in layout (a), bits 27-28 (`M >> 7`) in (b) and (c).
    pub fn m(&self) -> u32 {
        match self.layout {
            IdescLayout::A => self.field(24, 5) << 4,
            _ => self.field(27, 2) << 7,
        }
    }

    /// Bits 29-30: the A scale-factor ID (layouts (b) and (c)).
    pub fn a_sf_id(&self) -> u32 {
        self.field(29, 2)
    }

    /// Bits 30-31: the maximum B-reuse shift of `.ws` forms (layout (a)).
    pub fn ws_b_reuse(&self) -> u32 {
        self.field(30, 2)
    }

    /// Bit 31: the K selector of layout (c) (1 = dense K = 96).
    pub fn k96(&self) -> bool {
        self.layout == IdescLayout::C && self.field(31, 1) == 1
    }

    /// The reserved bits of the layout that must be 0 (reference §2.8): (a) bits 6, 23, 29
    /// (bits 30-31 belong to `.ws` forms and are left to the caller); (b) bits 3, 6, 24-26
    /// and 31; (c) as (b) plus bit 12, with bit 31 the K selector. Bits 0-1 of (b) and (c) are
    /// not listed: the reference says a sparsity selector there is treated as 0.
    pub fn reserved_mask(&self) -> u32 {
        match self.layout {
            IdescLayout::A => 1 << 6 | 1 << 23 | 1 << 29,
            IdescLayout::B => 1 << 3 | 1 << 6 | 0b111 << 24 | 1 << 31,
            IdescLayout::C => 1 << 3 | 1 << 6 | 1 << 12 | 0b111 << 24,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_land_on_the_documented_bits() {
        // Layout (c): K selector bit 31, M >> 7 at bits 27-28, SF IDs at 4-5 and 29-30.
        let c = Idesc::new(
            MmaKind::Mxf4,
            1 << 31 | 2 << 27 | 2 << 29 | 2 << 4 | 32 << 17,
        );
        assert!(c.k96());
        assert_eq!((c.m(), c.n(), c.a_sf_id(), c.b_sf_id()), (256, 256, 2, 2));
        // Layout (a): M >> 4 at bits 24-28; bit 31 is not a K selector.
        let a = Idesc::new(MmaKind::F16, 1 << 31 | 8 << 24 | 1 << 16 | 0b101 << 10);
        assert!(!a.k96());
        assert_eq!((a.m(), a.b_type(), a.transpose_b()), (128, 5, true));
        // Layout (c) B type has two bits: bit 12 is reserved.
        let c2 = Idesc::new(MmaKind::Mxf4nvf4, 0b111 << 10);
        assert_eq!(c2.b_type(), 3);
        assert_ne!(c2.reserved_mask() & 1 << 12, 0);
    }
}
