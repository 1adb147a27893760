//! The decompressing `tcgen05.cp` forms (`.b8x16` with `.b6x16_p32` / `.b4x16_p64`,
//! §9.7.16.9.1, reference §3.5): which TMEM byte receives which source bits.
//!
//! # Derivation
//!
//! - **Units** (§9.7.16.9.1.1-2): "a contiguous set of 16 elements of 4-bits each followed
//!   by 8 bytes of padding" (`.b4x16_p64`), or "of 6-bits each followed by 4 bytes of
//!   padding" (`.b6x16_p32`), becomes "16 elements of 8-bits each". Both source units are
//!   16 bytes (64 + 64 bits, 96 + 32 bits), and so is the destination unit (16 × 8 bits):
//!   every 16-byte chunk of a source row gives the 16 bytes of the same four TMEM columns
//!   that chunk gives without decompression. The shape names the TMEM side ("size
//!   indicates the amount of data ... across the columns in the Tensor Memory",
//!   §9.7.16.2.3), so a decompressing cp covers exactly the columns of its shape, not twice
//!   as many (the footprint the generator, the oracle and the emulation share).
//! - **Source order**: element i of a unit is bits `[w·i, w·(i + 1))` of the unit read as a
//!   little-endian number (w = 4 or 6): packed sub-byte elements lowest first, as the packed
//!   e2m1 pairs of the mxf4 kinds and the `.b4x16` / `.b6x16_p32` tensor-copy types
//!   (§5.5.1.1.1, which append the same 64 / 32 padding bits after the 16 elements). The
//!   padding bits are not read ("the padded region ... is un-initialized", §5.5.1.1.1).
//! - **Destination order**: element i is byte i of the unit; "the 8-bit containers must be
//!   contiguously packed in a 32-bit Tensor Memory word" (§9.7.16.10.4.3), so element
//!   `4c + b` is byte b (bits `8b..8b + 8`) of the unit's column c.
//! - **Containers** (§9.7.16.10.4.3, the decompression figures of §9.7.16.9.1): a 6-bit
//!   element (E3M2 or E2M3, the same bits either way) sits in bits 0-5 with bits 6-7 zero
//!   ("each .b8 element has 6-bit floating point value and 2 MSB bits padded with zeros",
//!   §5.2.3; `.b6p2x16`: "6-bits of data at the LSB and 2-bits of padding at the MSB",
//!   §5.5.1.1.1). A 4-bit (E2M1) element sits in bits 2-5, bits 0-1 and 6-7 zero (the
//!   4-bit container figure): sign, both exponent bits and the mantissa bit of E2M1 land
//!   on the sign, exponent and first mantissa bit of E2M3 (same exponent bias, 1), so the
//!   container read as E2M3 has the element's value.

use tcgen05_ir::CpSrcFmt;

/// The destination word `col` (0..4) of one decompressed 16-byte unit whose source bytes
/// are `unit` (module documentation).
pub(crate) fn decompress_word(fmt: CpSrcFmt, unit: u128, col: u32) -> u32 {
    let (width, shift) = match fmt {
        CpSrcFmt::B4x16P64 => (4, 2),
        CpSrcFmt::B6x16P32 => (6, 0),
    };
    let mask = (1u128 << width) - 1;
    (0..4).fold(0, |word, b| {
        let i = 4 * col + b;
        let elem = (unit >> (width * i)) & mask;
        word | (elem as u32) << shift << (8 * b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 16 source bytes as one little-endian number.
    fn unit(bytes: [u8; 16]) -> u128 {
        u128::from_le_bytes(bytes)
    }

    #[test]
    fn four_bit_elements_land_in_bits_2_to_5_of_consecutive_bytes() {
        // Elements 0..16 = 0x0, 0x1, ..., 0xF: source bytes 0x10, 0x32, ... (element 2k in
        // the low nibble of byte k), padding 0xEE that must not show.
        let mut b = [0xEE; 16];
        for (k, x) in b.iter_mut().take(8).enumerate() {
            *x = (2 * k as u8) | (2 * k as u8 + 1) << 4;
        }
        let u = unit(b);
        // Element e becomes the byte e << 2: 0x00, 0x04, 0x08, 0x0C, then 0x10 ...
        assert_eq!(decompress_word(CpSrcFmt::B4x16P64, u, 0), 0x0C08_0400);
        assert_eq!(decompress_word(CpSrcFmt::B4x16P64, u, 1), 0x1C18_1410);
        assert_eq!(decompress_word(CpSrcFmt::B4x16P64, u, 3), 0x3C38_3430);
        // E2M1 1.5 (0b0011) read back as E2M3 (sign bit 5, exponent bits 3-4, mantissa
        // bits 0-2, bias 1): 0b00_0011_00 = exponent 1, mantissa 0b100 = 1 + 4/8 = 1.5.
        let one_and_half = u128::from(0x3u8);
        let byte = decompress_word(CpSrcFmt::B4x16P64, one_and_half, 0) & 0xFF;
        assert_eq!((byte >> 3 & 3, byte & 7), (1, 0b100));
    }

    #[test]
    fn six_bit_elements_land_in_bits_0_to_5_with_the_padding_dropped() {
        // Elements 0..16 = 63, 1, 2, ..., 15 packed 6 bits apart, then 4 bytes of 0xFF
        // padding (bits 96..128).
        let mut u: u128 = 0xFFFF_FFFF << 96;
        for i in 0..16u32 {
            let e = if i == 0 { 63 } else { i };
            u |= u128::from(e) << (6 * i);
        }
        assert_eq!(decompress_word(CpSrcFmt::B6x16P32, u, 0), 0x0302_013F);
        assert_eq!(decompress_word(CpSrcFmt::B6x16P32, u, 2), 0x0B0A_0908);
        assert_eq!(decompress_word(CpSrcFmt::B6x16P32, u, 3), 0x0F0E_0D0C);
        // Every destination byte keeps bits 6-7 clear even with all-ones elements.
        let ones = (1u128 << 96) - 1;
        for c in 0..4 {
            assert_eq!(decompress_word(CpSrcFmt::B6x16P32, ones, c), 0x3F3F_3F3F);
            assert_eq!(
                decompress_word(CpSrcFmt::B4x16P64, u128::MAX, c),
                0x3C3C_3C3C
            );
        }
    }
}
