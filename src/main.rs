//! `tcgen05-fuzz`: fuzzing and differential testing of tcgen05 implementations.
//!
//! Exit codes (also in the README): 0 success / clean; 1 findings or discrepancies were
//! reported; 2 the input could not be read or the command line is wrong; 3 an internal error
//! of the harness; 130 a campaign stopped by Ctrl-C, SIGTERM or SIGHUP (its checkpoint and
//! reports are written; rerun it to continue).

#[macro_use]
mod out;

mod alloc;
mod cmd;
mod interrupt;
mod invocation;
mod progress;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc: the oracle and the simulator allocate small vectors per case; the system
/// allocator's share of `expect` was ~17% under perf, mimalloc's is a fraction of it.
/// Through its plain entry points where they align enough (`alloc.rs`).
#[global_allocator]
static GLOBAL: alloc::Mimalloc = alloc::Mimalloc;

/// Fuzzing and differential testing of NVIDIA tcgen05 (Blackwell tensor-core) implementations.
#[derive(Debug, Parser)]
#[command(name = "tcgen05-fuzz", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print a binary case as PTX, or summarize the tcgen05 instructions of a PTX file.
    Show(cmd::show::Args),
    /// List the rules catalogue (reference §6) the oracle implements.
    Rules(cmd::rules::Args),
    /// Generate cases (binary case files plus their PTX).
    Generate(cmd::generate::Args),
    /// List the targets available on this machine, and why the others are not.
    Targets(cmd::targets::Args),
    /// Check the TMEM protocol of real kernels in PTX files.
    Check(cmd::check::Args),
    /// Judge litmus tests (PTX with a `//@` header): verdict, allowed values, conditions.
    Litmus(cmd::litmus::Args),
    /// Rerun a finding or a case on targets and print expected against observed.
    Reproduce(cmd::reproduce::Args),
    /// Minimize a case against one target while its discrepancy signature stays the same.
    Minimize(cmd::minimize::Args),
    /// Run a differential campaign.
    Campaign(cmd::campaign::Args),
    /// Merge and verify corpora.
    #[command(subcommand)]
    Corpus(cmd::corpus::Command),
    /// Print the throughput of every stage of the pipeline.
    Bench(cmd::bench::Args),
    /// Serve the built-in simulator over the external-simulator protocol on stdin/stdout.
    SimServer(cmd::sim_server::Args),
}

fn main() -> ExitCode {
    // The CUDA targets run cases in a worker process; this binary doubles as that worker when
    // the supervisor starts it with the worker variable set (it never returns then).
    tcgen05_drivers::cuda::worker::serve_if_requested();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Show(a) => cmd::show::run(a),
        Command::Rules(a) => cmd::rules::run(a),
        Command::Generate(a) => cmd::generate::run(a),
        Command::Targets(a) => cmd::targets::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Litmus(a) => cmd::litmus::run(a),
        Command::Reproduce(a) => cmd::reproduce::run(a),
        Command::Minimize(a) => cmd::minimize::run(a),
        Command::Campaign(a) => {
            // Ctrl-C stops a campaign cleanly (src/interrupt.rs). Without the handler it still
            // resumes from its last checkpoint, so a failure to install it is only a warning.
            if let Err(e) = interrupt::install() {
                eprintln!("tcgen05-fuzz: warning: {e:#}; Ctrl-C will end the campaign at once");
            }
            cmd::campaign::run(a)
        }
        Command::Corpus(c) => cmd::corpus::run(c),
        Command::Bench(a) => cmd::bench::run(a),
        Command::SimServer(a) => cmd::sim_server::run(a),
    };
    match result {
        Ok(_) if out::failed() => ExitCode::from(cmd::EXIT_INTERNAL),
        Ok(code) => code,
        // The reader of stdout went away (`| head`): nothing more to say.
        Err(e) if out::is_closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tcgen05-fuzz: error: {e:#}");
            cmd::exit_code_for(&e)
        }
    }
}
