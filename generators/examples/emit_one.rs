//! Prints the PTX of the valid program of a seed: `cargo run -p tcgen05-generators --example emit_one -- SEED`.
fn main() {
    let seed: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let only_sm100a = std::env::args().nth(2).is_some();
    let cfg = if only_sm100a {
        tcgen05_generators::Config::sm100a()
    } else {
        tcgen05_generators::Config::default()
    };
    let p = tcgen05_generators::valid_program(&cfg, seed);
    print!("{}", tcgen05_ir::ptx::emit(&p));
}
