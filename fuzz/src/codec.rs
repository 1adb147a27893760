//! `codec`: arbitrary bytes decode to a case or to an error, never a panic; a decoded case
//! encodes back to the same bytes.

use arbitrary::Unstructured;
use tcgen05_ir::codec::{MAGIC, decode, encode};

/// One iteration on raw bytes.
pub fn run_bytes(bytes: &[u8]) {
    if let Ok(case) = decode(bytes) {
        assert_eq!(encode(&case), bytes, "decode then encode changed the bytes");
    }
}

/// One iteration: half the inputs start with a valid header so the payload decoder is reached.
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let with_header: bool = u.arbitrary()?;
    let n = u.len();
    let rest = u.bytes(n)?;
    if with_header {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&tcgen05_ir::codec::FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&(rest.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(rest).to_le_bytes());
        bytes.extend_from_slice(rest);
        run_bytes(&bytes);
    } else {
        run_bytes(rest);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn smoke() {
        crate::test_n_times(2000, 256, 3, super::run);
    }
}
