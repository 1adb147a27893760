//! `tcgen05.cp` decompression in the simulator (`.b8x16` with `.b4x16_p64` / `.b6x16_p32`,
//! §9.7.16.9.1, reference §3.5).
//!
//! Each 16-byte unit of a source row (16 packed elements of 4 or 6 bits, then 8 or 4 bytes
//! of padding) becomes the 16 bytes of the four TMEM columns that unit would fill without
//! decompression (the cp keeps its shape's columns). Element i is read from the unit's bit
//! stream at bit `width * i` (bit b of the stream is bit `b % 8` of byte `b / 8`, bytes in
//! address order), and written to byte i of the four columns (byte `i % 4` of column
//! `i / 4`). The 8-bit containers (§9.7.16.10.4.3; §5.2.3 for the 6-bit types): a 6-bit
//! element in bits 0-5 with the two high bits zero; a 4-bit element in bits 2-5 with bits
//! 0-1 and 6-7 zero (the container figure: an E2M1 there reads as the E2M3 of the same
//! value). The padding bits are ignored.

use tcgen05_ir::CpSrcFmt;

/// Decompresses one 16-byte unit in place: `unit` holds the four source words (address
/// order) and receives the four destination columns.
pub(super) fn expand_unit(fmt: CpSrcFmt, unit: &mut [u32]) {
    let (width, low_pad) = match fmt {
        CpSrcFmt::B4x16P64 => (4usize, 2u32),
        CpSrcFmt::B6x16P32 => (6, 0),
    };
    let mut src = [0u8; 16];
    for (k, w) in unit.iter().take(4).enumerate() {
        src[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
    }
    let bit = |b: usize| u32::from(src[b / 8] >> (b % 8) & 1);
    let mut dst = [0u8; 16];
    for (i, d) in dst.iter_mut().enumerate() {
        let mut elem = 0u32;
        for k in 0..width {
            elem |= bit(width * i + k) << k;
        }
        *d = (elem << low_pad) as u8;
    }
    for (k, w) in unit.iter_mut().take(4).enumerate() {
        *w = u32::from_le_bytes([dst[4 * k], dst[4 * k + 1], dst[4 * k + 2], dst[4 * k + 3]]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ISA's unit pictures written out by hand: sixteen 4-bit elements 0x0..0xF in
    /// nibble order then padding, and sixteen 6-bit elements 1..16 then padding.
    #[test]
    fn units_expand_element_by_element() {
        // Bytes 0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE, then 8 padding bytes 0xAA.
        let mut u = [0x7654_3210, 0xFEDC_BA98, 0xAAAA_AAAA, 0xAAAA_AAAA];
        expand_unit(CpSrcFmt::B4x16P64, &mut u);
        // Element e -> byte e << 2.
        assert_eq!(u, [0x0C08_0400, 0x1C18_1410, 0x2C28_2420, 0x3C38_3430]);
        // 6-bit elements 1..=16: the 96-bit stream 0b010000_001111_..._000010_000001.
        let mut stream: u128 = 0;
        for i in 0..16u128 {
            stream |= (i + 1) << (6 * i);
        }
        let w = |k: u32| (stream >> (32 * k)) as u32;
        let mut u = [w(0), w(1), w(2), 0x5555_5555];
        expand_unit(CpSrcFmt::B6x16P32, &mut u);
        assert_eq!(u, [0x0403_0201, 0x0807_0605, 0x0C0B_0A09, 0x100F_0E0D]);
    }
}
