//! `parse_ptx`: arbitrary text gives a module or an error, never a panic; errors name a line
//! and column inside the text.

use arbitrary::Unstructured;
use tcgen05_ir::ptx::parse_module;

/// One iteration on raw text.
pub fn run_text(text: &str) {
    match parse_module(text, "fuzz.ptx") {
        Ok(m) => {
            for f in &m.functions {
                for i in f.instrs() {
                    let _ = i.operands.iter().map(ToString::to_string).count();
                }
            }
        }
        Err(e) => {
            let lines = text.split('\n').count() as u32;
            assert!(
                e.line >= 1 && e.line <= lines.max(1),
                "error line {} outside 1..={lines}: {e}",
                e.line
            );
        }
    }
}

/// One iteration: the input is parsed twice, as text itself (lossily decoded: real PTX seeds,
/// `corpus/seeds/parse_ptx/`, are read as they are), and as a recipe mixing PTX-looking
/// fragments with text, so that the fuzzer also reaches deep into the grammar from bytes.
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    run_text(&String::from_utf8_lossy(
        u.peek_bytes(u.len()).unwrap_or_default(),
    ));
    const FRAGMENTS: &[&str] = &[
        ".version 8.6\n",
        ".target sm_100a\n",
        ".address_size 64\n",
        ".visible .entry k(.param .u64 p)\n",
        "{\n",
        "}\n",
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [s], 32;\n",
        "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r3];\n",
        "@!%p1 bra $L1;\n",
        "$L1:\n",
        ".reg .b32 %r<5>;\n",
        "[%rd1+-8]",
        "{%r1, %r2}",
        "_|%p",
        "// c\n",
        "/* c */",
        "\"s\"",
        ";",
        ",",
        "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r3, %p1;\n",
        ".section .debug { .b8 1 }\n",
        "0f3F800000",
        "-1",
    ];
    let mut text = String::new();
    while !u.is_empty() {
        if u.ratio(1, 3)? {
            text.push_str(u.choose(FRAGMENTS)?);
        } else {
            let s: &str = u.arbitrary()?;
            text.push_str(s);
        }
    }
    run_text(&text);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn smoke() {
        crate::test_n_times(2000, 512, 2, super::run);
    }
}
