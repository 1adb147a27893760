//! Prints the single-warp sample program as PTX.
fn main() {
    print!(
        "{}",
        tcgen05_ir::ptx::emit(&tcgen05_ir::samples::single_warp_roundtrip())
    );
}
