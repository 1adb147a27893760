//! `tcgen05-oracle`: the tcgen05 spec as an executable model (issue 3).
#![deny(missing_docs)]
