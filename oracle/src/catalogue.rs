//! The rules catalogue (reference §6) as data.
