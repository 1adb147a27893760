//! `tcgen05-generators`: well-formed and near-miss tcgen05 programs (issue 4).
#![deny(missing_docs)]
