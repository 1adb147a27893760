//! `compare(expected, outcome) -> Verdict`: issue 5.
