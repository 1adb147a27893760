//! `tcgen05-fuzz minimize <case> --target T`: minimizes a case by hand while its discrepancy
//! signature on one target stays the same, printing each new smallest size.

use super::bad_input;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tcgen05_drivers::target;
use tcgen05_engine::minimize;
use tcgen05_oracle::{Edition, Options};

/// Arguments of `minimize`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A case file, a printed PTX file, or a finding folder.
    pub input: PathBuf,
    /// The target the discrepancy shows on.
    #[arg(long)]
    pub target: String,
    /// Where to write the minimized case (`.case`; the PTX goes beside it as `.ptx`).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Time budget in seconds.
    #[arg(long, default_value_t = 60.0)]
    pub seconds: f64,
    /// Oracle edition: `seeds` or `ptx93`.
    #[arg(long, default_value_t = Edition::Seeds)]
    pub edition: Edition,
}

/// Runs `minimize`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (case, _) = super::reproduce::load_case(&args.input, false)?;
    // Built in the edition the case is judged in (the simulator's wording follows it).
    let mut t =
        target::resolve_in(&args.target, args.edition).map_err(|e| bad_input(e.to_string()))?;
    let opts = Options::edition(args.edition);
    let start = std::time::Instant::now();
    outln!(
        "start: {} statements, {} tcgen05 instructions",
        case.program.size(),
        case.program.ops().len()
    );
    let m = match minimize::minimize(
        &case,
        t.as_mut(),
        &opts,
        Duration::from_secs_f64(args.seconds.max(0.0)),
        &mut |c| {
            outln!(
                "{:8.3} s: {} statements, {} tcgen05 instructions",
                start.elapsed().as_secs_f64(),
                c.program.size(),
                c.program.ops().len()
            );
        },
    ) {
        Ok(m) => m,
        // Not bad input: the case is fine, it only shows nothing to minimize (exit 0, as
        // `reproduce` exits when it finds nothing).
        Err(minimize::MinimizeError::NotInteresting(why)) => {
            outln!("nothing to minimize: {why}; nothing written");
            return Ok(ExitCode::SUCCESS);
        }
    };
    outln!(
        "signature: {}\n{} -> {} statements in {} tries, {:.3} s{}",
        m.signature,
        m.sizes.0,
        m.sizes.1,
        m.tries,
        start.elapsed().as_secs_f64(),
        if m.timed_out {
            " (time budget spent)"
        } else {
            ""
        }
    );
    let out = args.out.unwrap_or_else(|| {
        let mut p = args.input.clone();
        if p.is_dir() {
            p.push("hand-minimized.case");
        } else {
            p.set_extension("min.case");
        }
        p
    });
    std::fs::write(&out, tcgen05_ir::codec::encode(&m.case))?;
    std::fs::write(
        out.with_extension("ptx"),
        tcgen05_ir::ptx::emit(&m.case.program),
    )?;
    outln!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}
