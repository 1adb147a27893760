//! The `sim` target: an operational simulator of tcgen05: issue 5.
