//! Parses PTX files and prints per-file counts of tcgen05 opcodes (a development aid).
fn main() {
    for path in std::env::args().skip(1) {
        let src = std::fs::read_to_string(&path).expect("readable");
        let t = std::time::Instant::now();
        match tcgen05_ir::ptx::parse_module(&src, &path) {
            Ok(m) => {
                let n: usize = m
                    .functions
                    .iter()
                    .map(|f| {
                        f.instrs()
                            .filter(|i| i.opcode.starts_with("tcgen05."))
                            .count()
                    })
                    .sum();
                println!(
                    "{path}: ok, {} functions, {n} tcgen05, {:?}",
                    m.functions.len(),
                    t.elapsed()
                );
            }
            Err(e) => println!("ERROR {e}"),
        }
    }
}
