//! The case file format: round trip, and a distinct, clear error for each way a file can be
//! bad (truncated, corrupted, wrong magic, newer or older format version).

use tcgen05_ir::codec::{CodecError, FORMAT_VERSION, MAGIC, decode, encode};
use tcgen05_ir::{Case, Intent, Provenance, RuleId, samples};

fn case() -> Case {
    Case {
        program: samples::single_warp_roundtrip(),
        intent: Intent::NearMiss {
            breaks: RuleId::AllocNcolsPow2,
        },
        provenance: Provenance {
            seed: Some(42),
            origin: "test".into(),
            family: None,
        },
    }
}

#[test]
fn round_trip() {
    let c = case();
    let bytes = encode(&c);
    assert_eq!(&bytes[..8], &MAGIC);
    assert_eq!(decode(&bytes).unwrap(), c);
}

#[test]
fn every_truncation_is_reported_as_truncated() {
    let bytes = encode(&case());
    for len in 8..bytes.len() {
        match decode(&bytes[..len]) {
            Err(CodecError::Truncated { have, need }) => {
                assert_eq!(have, len);
                assert!(need > len);
            }
            other => panic!("length {len}: {other:?}"),
        }
    }
}

#[test]
fn a_flipped_payload_bit_is_reported_as_corrupt() {
    let bytes = encode(&case());
    for i in 18..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x10;
        let e = decode(&b).unwrap_err();
        assert!(matches!(e, CodecError::Corrupt(_)), "byte {i}: {e:?}");
        assert!(e.to_string().contains("checksum"), "{e}");
    }
}

#[test]
fn trailing_bytes_are_corrupt() {
    let mut bytes = encode(&case());
    bytes.push(0);
    assert!(matches!(decode(&bytes), Err(CodecError::Corrupt(_))));
}

#[test]
fn wrong_magic_names_what_it_found() {
    let e = decode(b".version 8.6\n.target sm_100a").unwrap_err();
    assert!(matches!(e, CodecError::WrongMagic { .. }), "{e:?}");
    assert!(e.to_string().contains("not a tcgen05-fuzz case file"));
    assert!(matches!(
        decode(b""),
        Err(CodecError::Truncated { .. }) | Err(CodecError::WrongMagic { .. })
    ));
}

#[test]
fn newer_and_older_versions_are_told_apart() {
    let mut bytes = encode(&case());
    bytes[8..10].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let e = decode(&bytes).unwrap_err();
    assert_eq!(
        e,
        CodecError::NewerVersion {
            found: FORMAT_VERSION + 1,
            supported: FORMAT_VERSION
        }
    );
    assert!(e.to_string().contains("upgrade"));
    bytes[8..10].copy_from_slice(&0u16.to_le_bytes());
    assert!(matches!(
        decode(&bytes),
        Err(CodecError::OlderVersion { found: 0, .. })
    ));
}

#[test]
fn a_consistent_header_over_garbage_is_corrupt_not_a_panic() {
    // A payload with a valid checksum that is not a Case.
    let payload = vec![0xFFu8; 37];
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&crc32fast_hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    let e = decode(&bytes).unwrap_err();
    assert!(
        matches!(e, CodecError::Corrupt(ref m) if m.contains("does not decode")),
        "{e:?}"
    );
}

/// CRC-32 (IEEE), bitwise: independent of the codec's implementation.
fn crc32fast_hash(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Found by the `codec` fuzz target: bytes whose length prefix claims ~7e16 bytes made the
/// decoder try to allocate them. Now a clean error.
#[test]
fn a_huge_length_claim_is_corrupt_not_an_allocation() {
    let crash = include_bytes!("data/codec-huge-length-claim.bin");
    // The fuzz target wraps its input in a valid header half of the time; try both.
    assert!(decode(crash).is_err());
    let rest = &crash[1..];
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(rest.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&crc32fast_hash(rest).to_le_bytes());
    bytes.extend_from_slice(rest);
    assert!(matches!(decode(&bytes), Err(CodecError::Corrupt(_))));
}

#[test]
fn an_oversized_payload_length_is_rejected_up_front() {
    let mut bytes = encode(&case());
    bytes[10..14].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(decode(&bytes), Err(CodecError::Corrupt(ref m)) if m.contains("limit")));
}

/// Found by the `codec` fuzz target: an integer written in a wider varint form than needed
/// decoded to the same case as the canonical bytes. Only the canonical form is a case file.
#[test]
fn a_non_canonical_payload_is_corrupt() {
    let input = include_bytes!("data/codec-noncanonical-varint.bin");
    // The fuzz target's first byte chose "wrap in a valid header"; the rest is the payload.
    let rest = &input[1..];
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(rest.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&crc32fast_hash(rest).to_le_bytes());
    bytes.extend_from_slice(rest);
    let e = decode(&bytes).unwrap_err();
    assert!(
        matches!(e, CodecError::Corrupt(ref m) if m.contains("canonical")),
        "{e:?}"
    );
}
