//! The binary case format: `magic | format version | payload length | CRC-32 | payload`.
//!
//! | bytes | field |
//! | --- | --- |
//! | 8 | magic `TC05CASE` |
//! | 2 | format version, little endian ([`FORMAT_VERSION`]) |
//! | 4 | payload length in bytes, little endian |
//! | 4 | CRC-32 (IEEE) of the payload, little endian |
//! | n | payload: the [`Case`] in bincode 2.0.1's standard configuration, through serde |
//!
//! This module is the only place that names bincode. bincode is unmaintained
//! (RUSTSEC-2025-0141) and frozen at 2.0.1, pinned with `=2.0.1` in the workspace: for a file
//! format that must decode the same way for years that is a feature, not a risk. A change of
//! the program model that changes the encoding must bump [`FORMAT_VERSION`].

use crate::program::Case;

/// The magic at the start of every case file.
pub const MAGIC: [u8; 8] = *b"TC05CASE";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u16 = 1;
const HEADER: usize = 8 + 2 + 4 + 4;

/// The largest payload decoded, and the most bytes the decoder may allocate for one case:
/// 16 MiB. A real case encodes to a few KiB (programs hold no data arrays), so this only
/// stops a corrupt length prefix from asking for an absurd allocation (found by the `codec`
/// fuzz target: a 2-byte length claim of ~7e16 bytes).
pub const MAX_PAYLOAD: usize = 16 << 20;

fn config() -> bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Varint,
    bincode::config::Limit<MAX_PAYLOAD>,
> {
    bincode::config::standard().with_limit::<MAX_PAYLOAD>()
}

/// Why bytes are not a case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// Fewer bytes than the header or the payload length says.
    #[error("truncated case file: {have} bytes, {need} needed")]
    Truncated {
        /// Bytes present.
        have: usize,
        /// Bytes the header says there should be.
        need: usize,
    },
    /// The first 8 bytes are not the magic.
    #[error("not a tcgen05-fuzz case file (magic is {found:02x?}, expected \"TC05CASE\")")]
    WrongMagic {
        /// The bytes found.
        found: Vec<u8>,
    },
    /// Written by a newer tcgen05-fuzz.
    #[error(
        "case file format version {found} is newer than this build's {supported}; upgrade tcgen05-fuzz"
    )]
    NewerVersion {
        /// Version in the file.
        found: u16,
        /// Version this build reads.
        supported: u16,
    },
    /// An older format this build no longer reads.
    #[error(
        "case file format version {found} is older than this build's {supported} and cannot be read"
    )]
    OlderVersion {
        /// Version in the file.
        found: u16,
        /// Version this build reads.
        supported: u16,
    },
    /// The checksum does not match, or the payload does not decode.
    #[error("corrupt case file: {0}")]
    Corrupt(String),
}

/// Encodes a case into the file format.
pub fn encode(case: &Case) -> Vec<u8> {
    let payload = bincode::serde::encode_to_vec(case, config())
        .expect("every Case is serializable: it holds no maps with non-string keys or floats");
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// Whether `bytes` start like a case file (used to tell case files from PTX text).
pub fn looks_like_case(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Decodes a case file.
pub fn decode(bytes: &[u8]) -> Result<Case, CodecError> {
    let magic_len = bytes.len().min(8);
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(CodecError::WrongMagic {
            found: bytes[..magic_len].to_vec(),
        });
    }
    if bytes.len() < HEADER {
        return Err(CodecError::Truncated {
            have: bytes.len(),
            need: HEADER,
        });
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    if version > FORMAT_VERSION {
        return Err(CodecError::NewerVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    if version < FORMAT_VERSION {
        return Err(CodecError::OlderVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let len = u32::from_le_bytes(bytes[10..14].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(bytes[14..18].try_into().expect("4 bytes"));
    if len > MAX_PAYLOAD {
        return Err(CodecError::Corrupt(format!(
            "payload length {len} exceeds the {MAX_PAYLOAD}-byte limit of a case file"
        )));
    }
    let need = HEADER + len;
    if bytes.len() < need {
        return Err(CodecError::Truncated {
            have: bytes.len(),
            need,
        });
    }
    if bytes.len() > need {
        return Err(CodecError::Corrupt(format!(
            "{} bytes after the end of the payload",
            bytes.len() - need
        )));
    }
    let payload = &bytes[HEADER..need];
    let actual = crc32fast::hash(payload);
    if actual != crc {
        return Err(CodecError::Corrupt(format!(
            "checksum mismatch (header says {crc:08x}, payload hashes to {actual:08x})"
        )));
    }
    let (case, used) = bincode::serde::decode_from_slice(payload, config())
        .map_err(|e| CodecError::Corrupt(format!("payload does not decode: {e}")))?;
    if used != payload.len() {
        return Err(CodecError::Corrupt(format!(
            "{} unused payload bytes",
            payload.len() - used
        )));
    }
    // bincode's varints also decode from wider-than-needed forms. Only the canonical bytes are
    // a case file, so one case has exactly one file form (found by the `codec` fuzz target).
    let canonical = bincode::serde::encode_to_vec(&case, config())
        .map_err(|e| CodecError::Corrupt(format!("payload does not re-encode: {e}")))?;
    if canonical != payload {
        return Err(CodecError::Corrupt(
            "payload is not in canonical form (e.g. an over-long integer)".to_string(),
        ));
    }
    Ok(case)
}
