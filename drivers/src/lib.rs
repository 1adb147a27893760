//! `tcgen05-drivers`: targets, the differential engine, the minimizer and the findings store.
#![deny(missing_docs)]
