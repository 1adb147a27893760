//! The `Target` trait and `build(name)`: issue 5.
