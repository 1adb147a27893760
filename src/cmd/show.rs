//! `tcgen05-fuzz show FILE`: a binary case prints as its PTX; a PTX file prints as a summary
//! of its kernels and functions and their tcgen05 instructions.

use super::{Format, bad_input};
use anyhow::Context as _;
use std::path::PathBuf;
use std::process::ExitCode;
use tcgen05_ir::codec;
use tcgen05_ir::ptx::{self, parse::Function};

/// Arguments of `show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A binary case file (`.case`), a PTX file, or a finding folder (its minimized case).
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Runs `show`.
#[expect(
    clippy::needless_pass_by_value,
    reason = "every subcommand's `run` takes its `Args` by value (cmd/mod.rs)"
)]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // A finding folder shows its minimized case, as `reproduce` and `minimize` take it.
    let file = if args.file.is_dir() {
        let min = args.file.join("minimized.case");
        if !min.is_file() {
            return Err(bad_input(format!(
                "{}: a folder, but not a finding folder (no minimized.case in it)",
                args.file.display()
            )));
        }
        min
    } else {
        args.file.clone()
    };
    let name = file.display().to_string();
    let bytes = std::fs::read(&file).map_err(|e| bad_input(format!("{name}: cannot read: {e}")))?;
    if codec::looks_like_case(&bytes) {
        let case = codec::decode(&bytes).map_err(|e| bad_input(format!("{name}: {e}")))?;
        let text = ptx::emit(&case.program);
        match args.format {
            Format::Text => out!("{text}"),
            Format::Json => {
                // The case's enum tags in kebab-case, as every JSON a user reads.
                let case = tcgen05_drivers::report::spelling::user_json(&case)?;
                let v = serde_json::json!({ "file": name, "case": case, "ptx": text });
                outln!("{}", serde_json::to_string_pretty(&v)?);
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let src = String::from_utf8(bytes).map_err(|_| {
        bad_input(format!(
            "{name}: neither a tcgen05-fuzz case file nor UTF-8 PTX text"
        ))
    })?;
    let module = ptx::parse_module(&src, &name).map_err(|e| bad_input(e.to_string()))?;
    match args.format {
        Format::Text => print_text(&name, &module),
        Format::Json => {
            let kernels: Vec<_> = module
                .functions
                .iter()
                .filter(|f| f.body.is_some())
                .map(function_json)
                .collect();
            let v = serde_json::json!({
                "file": name,
                "version": module.version.map(|v| v.to_string()),
                "target": module.target,
                "functions": kernels,
            });
            outln!(
                "{}",
                serde_json::to_string_pretty(&v).context("serializing the summary")?
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn function_json(f: &Function<'_>) -> serde_json::Value {
    let instrs: Vec<_> = f
        .instrs()
        .filter(|i| i.opcode.starts_with("tcgen05."))
        .map(|i| {
            serde_json::json!({
                "opcode": i.opcode,
                "family": i.form.map(|f| f.family().as_str()),
                "ill_formed": i.ill_formed.as_ref().map(ToString::to_string),
                "operands": i.operands.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "guard": i.guard.map(|g| format!("@{}{}", if g.negated { "!" } else { "" }, g.pred)),
                "line": i.pos.line,
                "column": i.pos.col,
            })
        })
        .collect();
    serde_json::json!({
        "name": f.name,
        "kind": if f.is_entry { "entry" } else { "func" },
        "line": f.pos.line,
        "tcgen05": instrs,
    })
}

fn print_text(name: &str, m: &ptx::Module<'_>) {
    let version = m
        .version
        .map_or_else(|| "no .version".to_string(), |v| format!("PTX {v}"));
    let target = if m.target.is_empty() {
        "no .target".to_string()
    } else {
        format!("for {}", m.target.join(", "))
    };
    outln!("{name}: {version} {target}");
    if !m.functions.iter().any(|f| f.body.is_some()) {
        outln!("no kernels or device functions with a body");
    }
    for f in m.functions.iter().filter(|f| f.body.is_some()) {
        let tc: Vec<_> = f
            .instrs()
            .filter(|i| i.opcode.starts_with("tcgen05."))
            .collect();
        outln!(
            "\n{} {} (line {}): {} instructions, {} tcgen05",
            if f.is_entry { "kernel" } else { "function" },
            f.name,
            f.pos.line,
            f.instrs().count(),
            tc.len()
        );
        for i in tc {
            let guard = i
                .guard
                .map(|g| format!("@{}{} ", if g.negated { "!" } else { "" }, g.pred))
                .unwrap_or_default();
            let ops: Vec<String> = i.operands.iter().map(ToString::to_string).collect();
            let line = format!(
                "  {:>6}  {guard}{} {}",
                i.pos.line,
                i.opcode,
                ops.join(", ")
            );
            outln!("{}", line.trim_end());
            if let Some(e) = &i.ill_formed {
                outln!("          ill-formed: {e} (`tcgen05-fuzz check` reports it)");
            }
        }
    }
}
