//! PTX text: the printer ([`emit`]), the parser of PTX modules ([`parse`], for printed modules
//! and real compiler output alike), and the lifter of printed modules back to programs
//! ([`lift`]).

pub mod cfg;
pub mod emit;
pub mod lift;
pub mod model;
pub mod parse;

pub use emit::{Body, Lowering, Native, Pending, emit, emit_into, emit_with};
pub use lift::{LiftError, lift};
pub use parse::{Module, ParseError, parse_module};
