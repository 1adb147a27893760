//! `tcgen05-fuzz generate`: writes generated cases as binary case files plus their PTX.
//!
//! Each case `i` of a run with seed `S` is `<out>/s<S as 16 hex digits>-<i>.case` and `.ptx`,
//! written atomically (a temporary file in the same folder, then a rename), so a reader never
//! sees half a file and an interrupted run leaves only whole cases.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_generators::{Config, litmus, mutate};

/// Arguments of `generate`.
#[derive(Debug, clap::Args)]
#[command(
    override_usage = "tcgen05-fuzz generate --out <OUT> [OPTIONS]\n       tcgen05-fuzz generate --list"
)]
pub struct Args {
    /// Number of cases.
    #[arg(long, default_value_t = 100)]
    pub count: u64,
    /// Run seed: case `i` is a function of (seed, i) alone.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Generate near-miss cases (every mutator in turn, or only `--mutator`).
    #[arg(long)]
    pub near_miss: bool,
    /// With `--near-miss`: only this mutator (its name, or the rule it breaks, e.g.
    /// `ALLOC-NCOLS-POW2`).
    #[arg(long, requires = "near_miss")]
    pub mutator: Option<String>,
    /// Generate the members of this litmus family, in turn (see `--list-families`).
    #[arg(long, conflicts_with = "near_miss")]
    pub family: Option<String>,
    /// A mix of valid cases, near-misses and litmus members.
    #[arg(long, conflicts_with_all = ["near_miss", "family"])]
    pub mixed: bool,
    /// Only target sm_100a (by default the builder uses every tcgen05 target, sm_100a half the
    /// time).
    #[arg(long)]
    pub sm100a: bool,
    /// Print the litmus families and the mutators, then exit.
    #[arg(long)]
    pub list: bool,
    /// Write each `.ptx` as a litmus file (docs/litmus.md): the PTX with a `//@` header giving
    /// its launch and observed registers, for `tcgen05-fuzz litmus`.
    #[arg(long)]
    pub litmus: bool,
    /// Output folder (created if missing).
    #[arg(long, required_unless_present = "list")]
    pub out: Option<PathBuf>,
}

/// Runs the subcommand.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.list {
        let mut text = String::from("litmus families:\n");
        for f in litmus::FAMILIES {
            text += &format!(
                "  {:<28} {} ({} members)\n",
                f.name,
                f.about,
                (f.members)().len()
            );
        }
        text += "mutators:\n";
        for m in mutate::MUTATORS {
            text += &format!("  {:<32} breaks {}\n", m.name, m.rule);
        }
        out!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    let mode = if args.near_miss {
        match &args.mutator {
            Some(name) => Mode::NearMiss(Some(mutate::by_name(name).ok_or_else(|| {
                super::bad_input(format!(
                    "unknown mutator `{name}` (see `tcgen05-fuzz generate --list`)"
                ))
            })?)),
            None => Mode::NearMiss(None),
        }
    } else if let Some(name) = &args.family {
        Mode::Family(litmus::family(name).ok_or_else(|| {
            super::bad_input(format!(
                "unknown litmus family `{name}` (see `tcgen05-fuzz generate --list`)"
            ))
        })?)
    } else if args.mixed {
        Mode::Mixed
    } else {
        Mode::Valid
    };
    let out = args
        .out
        .as_deref()
        .ok_or_else(|| super::bad_input("--out is required"))?;
    std::fs::create_dir_all(out).map_err(|e| {
        super::bad_input(format!(
            "cannot create output folder {}: {e}",
            out.display()
        ))
    })?;
    let cfg = if args.sm100a {
        Config::sm100a()
    } else {
        Config::default()
    };
    let stream = Stream::new(cfg, args.seed, mode);
    let mut ptx = String::with_capacity(16 * 1024);
    for i in 0..args.count {
        let g = stream.case(i);
        tcgen05_ir::ptx::emit_into(&g.case.program, &mut ptx);
        if args.litmus {
            ptx = super::litmus::format::header_for(&g.name, &g.case.program, &ptx) + &ptx;
        }
        write_atomic(
            &out.join(format!("{}.case", g.name)),
            &tcgen05_ir::codec::encode(&g.case),
        )?;
        write_atomic(&out.join(format!("{}.ptx", g.name)), ptx.as_bytes())?;
    }
    eprintln!(
        "wrote {} cases ({} files) to {}",
        args.count,
        2 * args.count,
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename (atomic
/// for readers; no fsync, so a power loss may lose recent cases but never leaves half of one).
fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(anyhow::anyhow!("cannot write {}: {e}", path.display()));
    }
    Ok(())
}
