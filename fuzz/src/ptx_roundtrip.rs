//! `ptx_roundtrip`: an arbitrary program prints as PTX that lifts back to the same program,
//! and prints the same bytes twice.

use arbitrary::Unstructured;
use tcgen05_ir::Program;
use tcgen05_ir::arb::{Bounds, program};
use tcgen05_ir::ptx::{emit, lift};

/// The program the bytes describe.
pub fn program_of(u: &mut Unstructured<'_>) -> arbitrary::Result<Program> {
    program(
        u,
        Bounds {
            warps: 6,
            funcs: 3,
            stmts: 12,
            depth: 3,
        },
    )
}

/// One iteration.
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let p = program_of(u)?;
    let text = emit(&p);
    let back =
        lift(&text).unwrap_or_else(|e| panic!("the printer's output does not lift: {e}\n{text}"));
    assert_eq!(back, p, "lift(emit(p)) != p\n{text}");
    assert_eq!(emit(&back), text, "printing is not deterministic");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn smoke() {
        crate::test_n_times(300, 4096, 1, super::run);
    }
}
