//! The CUDA worker process of the `cuda` and `cuda-emu` targets: owns the CUDA context and
//! runs cases sent by the campaign over stdin/stdout (see `tcgen05_drivers::cuda::protocol`).
//!
//! Usage: `tcgen05-cuda-worker [--device N]`. Not meant to be run by hand.

fn main() {
    let mut args = std::env::args().skip(1);
    let mut device = 0u32;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--device" => match args.next().and_then(|v| v.parse().ok()) {
                Some(d) => device = d,
                None => {
                    eprintln!("tcgen05-cuda-worker: --device needs a number");
                    std::process::exit(2);
                }
            },
            "--help" | "-h" => {
                eprintln!(
                    "usage: tcgen05-cuda-worker [--device N]  (speaks the framed protocol on stdin/stdout)"
                );
                return;
            }
            other => {
                eprintln!("tcgen05-cuda-worker: unknown argument `{other}`");
                std::process::exit(2);
            }
        }
    }
    std::process::exit(tcgen05_drivers::cuda::worker::serve_stdio(device));
}
