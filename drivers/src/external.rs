//! The `external:<command>` target and its protocol: issue 5.
