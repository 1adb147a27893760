//! The SASS check: the compiled code of a tcgen05 instruction keeps the
//! qualifiers it was written with; a mismatch is a discrepancy.
//!
//! The SASS each form must produce was found by compiling the forms one at a time with
//! ptxas 12.8, 13.0 and 13.5 for sm_100a and reading the code with nvdisasm 13.5 (all three
//! versions agree):
//!
//! | PTX | SASS opcode |
//! |---|---|
//! | `alloc.cta_group::1` / `::2` | `UTCATOMSWS.FIND_AND_SET.ALIGN` / `UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN` |
//! | `dealloc` (both groups; `::2` adds a peer handshake around it) | `UTCATOMSWS.AND` |
//! | `relinquish_alloc_permit` (both groups) | `UVIRTCOUNT.DEALLOC.SMPOOL` |
//! | `ld .32x32b .xN` (N > 1) / `.16x64b` / `.16x128b` / `.16x256b` / `.16x32bx2` | `LDTM.xN`, `LDTM.16dp64bit`, `.16dp128bit`, `.16dp256bit`, `.16dp32bit_t0_t15` + `.16dp32bit_t16_t31`; `.pack::16b` adds `.PACK16BIT` |
//! | `st` (same shapes) | `STTM...`; `.unpack::16b` adds `.EXPAND16BIT` |
//! | `mma .kind::f16`, `tf32` / `f8f6f4`, `mxf8f6f4` / `i8` / `mxf4`, `mxf4nvf4` | `UTCHMMA` / `UTCQMMA` / `UTCIMMA` / `UTCOMMA`; `::2` adds `.2CTA`, `.ws` adds `.WS` |
//! | `cp` | `UTCCP` (`.2CTA` for `::2`) |
//! | `shift` | `UTCSHIFT.DOWN` (`UTCSHIFT.2CTA.DOWN` for `::2`) |
//! | `commit` | `UTCBAR` (`.2CTA` for `::2`, `.MULTICAST` with `.multicast::cluster`) |

use super::guardrail::{Cubin, compile_cubin};
use super::install::{PtxasInstall, cuobjdump, disassembler};
use super::run::Scratch;
use std::collections::BTreeSet;
use std::process::Command;
use tcgen05_ir::{CtaGroup, Form, LdStShape, MmaKind, Num, RedOp, Ty};

/// What the SASS of one tcgen05 form must look like: the opcode's first component, the
/// dot-separated modifiers it must have, and those it must not have.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Expect {
    /// First component, e.g. `UTCHMMA`.
    pub base: &'static str,
    /// Modifiers that must be present, e.g. `2CTA`.
    pub must: Vec<String>,
    /// Modifiers that must be absent.
    pub must_not: Vec<String>,
}

impl Expect {
    fn new(base: &'static str) -> Self {
        Expect {
            base,
            must: vec![],
            must_not: vec![],
        }
    }

    fn flag(mut self, on: bool, tok: &str) -> Self {
        if on {
            self.must.push(tok.into())
        } else {
            self.must_not.push(tok.into())
        }
        self
    }

    fn need(mut self, tok: &str) -> Self {
        self.must.push(tok.into());
        self
    }

    /// Whether a SASS opcode (`UTCHMMA.2CTA`) satisfies this expectation.
    pub fn matches(&self, opcode: &str) -> bool {
        let mut parts = opcode.split('.');
        if parts.next() != Some(self.base) {
            return false;
        }
        let mods: BTreeSet<&str> = parts.collect();
        self.must.iter().all(|m| mods.contains(m.as_str()))
            && self.must_not.iter().all(|m| !mods.contains(m.as_str()))
    }
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.base)?;
        for m in &self.must {
            write!(f, ".{m}")?;
        }
        for m in &self.must_not {
            write!(f, " (not .{m})")?;
        }
        Ok(())
    }
}

/// SASS opcodes whose every occurrence must be explained by a PTX instruction of the case.
const CHECKED_BASES: &[&str] = &[
    "UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCOMMA", "UTCCP", "UTCSHIFT", "UTCBAR", "LDTM", "STTM",
];

fn ldst_shape(e: Expect, shape: LdStShape, num: Num) -> Vec<Expect> {
    const SHAPES: [&str; 5] = [
        "16dp64bit",
        "16dp128bit",
        "16dp256bit",
        "16dp32bit_t0_t15",
        "16dp32bit_t16_t31",
    ];
    let tok = match shape {
        LdStShape::S32x32b | LdStShape::S32x64b => None,
        LdStShape::S16x64b => Some(0),
        LdStShape::S16x128b => Some(1),
        LdStShape::S16x256b => Some(2),
        LdStShape::S16x32bx2 => Some(3),
    };
    let mut e = e;
    for (i, s) in SHAPES.iter().enumerate() {
        if Some(i) != tok && !(tok == Some(3) && i == 4) {
            e.must_not.push((*s).into());
        }
    }
    let n = num.count();
    for k in [2u32, 4, 8, 16, 32, 64, 128] {
        if k != n {
            e.must_not.push(format!("x{k}"));
        }
    }
    if n > 1 {
        e.must.push(format!("x{n}"));
    }
    match tok {
        None => vec![e],
        Some(3) => {
            let mut second = e.clone();
            second.must_not.retain(|m| m != "16dp32bit_t0_t15");
            second.must_not.push("16dp32bit_t0_t15".into());
            second.must_not.retain(|m| m != "16dp32bit_t16_t31");
            second.must.push("16dp32bit_t16_t31".into());
            e.must.push("16dp32bit_t0_t15".into());
            vec![e, second]
        }
        Some(i) => {
            e.must.push(SHAPES[i].into());
            vec![e]
        }
    }
}

/// The SASS a form must compile to; empty for forms without a checked mapping (wait, fence,
/// ld.red).
pub fn expected(form: &Form) -> Vec<Expect> {
    let two = |g: CtaGroup| g == CtaGroup::Two;
    match form {
        Form::Alloc(f) => vec![
            Expect::new("UTCATOMSWS")
                .need("FIND_AND_SET")
                .flag(two(f.cta_group), "2CTA"),
        ],
        Form::Dealloc(_) => vec![Expect::new("UTCATOMSWS").need("AND")],
        Form::Relinquish(_) => vec![Expect::new("UVIRTCOUNT").need("DEALLOC")],
        Form::Ld(f) if !f.red => ldst_shape(
            Expect::new("LDTM")
                .flag(f.pack.is_some(), "PACK16BIT")
                .flag(false, "STAT"),
            f.shape,
            f.num,
        ),
        Form::Ld(f) => {
            // ld.red (sm_103a/f, sm_110a/f): `LDTM.STAT[.shape][.xN].<MIN|MAX>[ABS][.F32|.S32][.NAN]`,
            // seen with ptxas 13.0 and 13.5 (`.u32` has no type modifier).
            let op = match (f.red_op, f.abs) {
                (Some(RedOp::Min), false) => "MIN",
                (Some(RedOp::Min), true) => "MINABS",
                (Some(RedOp::Max), false) => "MAX",
                (Some(RedOp::Max), true) => "MAXABS",
                (None, _) => return vec![],
            };
            let mut e = Expect::new("LDTM")
                .need("STAT")
                .need(op)
                .flag(f.ty == Ty::F32, "F32")
                .flag(f.ty == Ty::S32, "S32")
                .flag(f.nan, "NAN");
            for other in ["MIN", "MINABS", "MAX", "MAXABS"] {
                if other != op {
                    e.must_not.push(other.into());
                }
            }
            ldst_shape(e, f.shape, f.num)
        }
        Form::St(f) => ldst_shape(
            Expect::new("STTM").flag(f.pack.is_some(), "EXPAND16BIT"),
            f.shape,
            f.num,
        ),
        Form::Mma(f) => {
            let base = match f.kind {
                MmaKind::F16 | MmaKind::Tf32 => "UTCHMMA",
                MmaKind::F8f6f4 | MmaKind::Mxf8f6f4 => "UTCQMMA",
                MmaKind::I8 => "UTCIMMA",
                MmaKind::Mxf4 | MmaKind::Mxf4nvf4 => "UTCOMMA",
            };
            vec![
                Expect::new(base)
                    .flag(two(f.cta_group), "2CTA")
                    .flag(f.ws, "WS"),
            ]
        }
        Form::Cp(f) => vec![Expect::new("UTCCP").flag(two(f.cta_group), "2CTA")],
        Form::Shift(f) => vec![
            Expect::new("UTCSHIFT")
                .need("DOWN")
                .flag(two(f.cta_group), "2CTA"),
        ],
        Form::Commit(f) => vec![
            Expect::new("UTCBAR")
                .flag(two(f.cta_group), "2CTA")
                .flag(f.multicast, "MULTICAST"),
        ],
        Form::Wait(_) | Form::Fence(_) => vec![],
    }
}

/// A SASS discrepancy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SassMismatch {
    /// The PTX form compiled to the right opcode family but never with the required
    /// modifiers (e.g. a `cta_group::2` MMA without `.2CTA`).
    WrongForm {
        /// The PTX opcode.
        ptx: String,
        /// What was required.
        expected: String,
        /// The opcodes of that family that were found.
        found: Vec<String>,
    },
    /// No SASS of the family at all (the instruction was dropped).
    Missing {
        /// The PTX opcode.
        ptx: String,
        /// What was required.
        expected: String,
    },
    /// A checked SASS opcode that no PTX instruction of the case asks for.
    Unexpected {
        /// The SASS opcode.
        sass: String,
    },
}

impl std::fmt::Display for SassMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SassMismatch::WrongForm {
                ptx,
                expected,
                found,
            } => {
                write!(
                    f,
                    "`{ptx}` should compile to {expected}, found {}",
                    found.join(", ")
                )
            }
            SassMismatch::Missing { ptx, expected } => {
                write!(f, "`{ptx}` should compile to {expected}, found none")
            }
            SassMismatch::Unexpected { sass } => {
                write!(f, "SASS `{sass}` matches no PTX instruction of the case")
            }
        }
    }
}

/// The opcodes (first word, after any predicate) of a disassembly.
pub fn opcodes(disassembly: &str) -> Vec<String> {
    disassembly
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let rest = t.strip_prefix("/*")?;
            let (addr, rest) = rest.split_once("*/")?;
            if !addr.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let mut words = rest.split_whitespace();
            let mut w = words.next()?;
            if w.starts_with('@') {
                w = words.next()?;
            }
            w.starts_with(|c: char| c.is_ascii_uppercase())
                .then(|| w.trim_end_matches(';').to_string())
        })
        .collect()
}

/// Disassembles a cubin with nvdisasm (or `cuobjdump -sass`) from the install folders.
pub fn disassemble(cubin: &[u8]) -> std::io::Result<Vec<String>> {
    let scratch = Scratch::new()?;
    let path = scratch.path("x.cubin");
    std::fs::write(&path, cubin)?;
    let out = if let Some(nv) = disassembler() {
        Command::new(nv).arg(&path).output()?
    } else if let Some(co) = cuobjdump() {
        Command::new(co).arg("-sass").arg(&path).output()?
    } else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "neither nvdisasm nor cuobjdump is installed",
        ));
    };
    if !out.status.success() {
        return Err(std::io::Error::other(
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    Ok(opcodes(&String::from_utf8_lossy(&out.stdout)))
}

/// Whether a disassembler is available.
pub fn available() -> bool {
    disassembler().is_some() || cuobjdump().is_some()
}

/// Compares the tcgen05 forms of a module with its SASS opcodes.
pub fn check_opcodes(forms: &[Form], sass: &[String]) -> Vec<SassMismatch> {
    let mut out = Vec::new();
    let mut all: Vec<Expect> = Vec::new();
    let mut seen = BTreeSet::new();
    for f in forms {
        let exps = expected(f);
        all.extend(exps.iter().cloned());
        if !seen.insert(f.opcode()) {
            continue;
        }
        for e in exps {
            if sass.iter().any(|s| e.matches(s)) {
                continue;
            }
            let found: Vec<String> = sass
                .iter()
                .filter(|s| s.split('.').next() == Some(e.base))
                .cloned()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            out.push(if found.is_empty() {
                SassMismatch::Missing {
                    ptx: f.opcode(),
                    expected: e.to_string(),
                }
            } else {
                SassMismatch::WrongForm {
                    ptx: f.opcode(),
                    expected: e.to_string(),
                    found,
                }
            });
        }
    }
    let mut reported = BTreeSet::new();
    for s in sass {
        let base = s.split('.').next().unwrap_or("");
        let checked =
            CHECKED_BASES.contains(&base) || (base == "UTCATOMSWS" && s.contains("FIND_AND_SET"));
        if checked && !all.iter().any(|e| e.matches(s)) && reported.insert(s.clone()) {
            out.push(SassMismatch::Unexpected { sass: s.clone() });
        }
    }
    out
}

/// Forms of the tcgen05 instructions in a module's text.
pub fn forms_in(ptx: &str) -> Vec<Form> {
    ptx.lines()
        .map(super::verdict::opcode_of)
        .filter(|o| o.starts_with("tcgen05."))
        .filter_map(|o| Form::parse(o).ok())
        .collect()
}

/// The result of checking one module.
#[derive(Debug, Clone)]
pub enum SassCheck {
    /// Checked: the mismatches (empty when the SASS keeps every qualifier).
    Checked(Vec<SassMismatch>),
    /// ptxas did not build a cubin (see the compile verdict).
    NotBuilt,
}

/// Compiles `ptx` with `install` and checks its SASS.
pub fn check_module(install: &PtxasInstall, ptx: &str) -> std::io::Result<SassCheck> {
    match compile_cubin(install, ptx, None, false)? {
        Cubin::NotBuilt(_) => Ok(SassCheck::NotBuilt),
        Cubin::Built { bytes, .. } => {
            let sass = disassemble(&bytes)?;
            Ok(SassCheck::Checked(check_opcodes(&forms_in(ptx), &sass)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(s: &str) -> Form {
        Form::parse(s).unwrap()
    }

    #[test]
    fn two_cta_mma_needs_the_2cta_opcode() {
        let f = [form("tcgen05.mma.cta_group::2.kind::f16")];
        assert!(check_opcodes(&f, &["UTCHMMA.2CTA".into()]).is_empty());
        let bad = check_opcodes(&f, &["UTCHMMA".into()]);
        assert!(matches!(bad[0], SassMismatch::WrongForm { .. }), "{bad:?}");
        // And the plain one is unexplained by a case that has only a ::2 MMA.
        assert!(
            bad.iter()
                .any(|m| matches!(m, SassMismatch::Unexpected { .. }))
        );
        let one = [form("tcgen05.mma.cta_group::1.kind::i8")];
        assert!(!check_opcodes(&one, &["UTCIMMA.2CTA".into()]).is_empty());
        assert!(matches!(
            check_opcodes(&one, &[])[0],
            SassMismatch::Missing { .. }
        ));
    }

    #[test]
    fn ld_st_shapes_counts_and_packing_are_checked() {
        let ld = [form("tcgen05.ld.sync.aligned.16x64b.x2.pack::16b.b32")];
        assert!(check_opcodes(&ld, &["LDTM.16dp64bit.x2.PACK16BIT".into()]).is_empty());
        assert!(!check_opcodes(&ld, &["LDTM.16dp64bit.x4.PACK16BIT".into()]).is_empty());
        assert!(!check_opcodes(&ld, &["LDTM.16dp64bit.x2".into()]).is_empty());
        let x1 = [form("tcgen05.ld.sync.aligned.32x32b.x1.b32")];
        assert!(check_opcodes(&x1, &["LDTM".into()]).is_empty());
        let split = [form("tcgen05.st.sync.aligned.16x32bx2.x1.b32")];
        assert!(
            check_opcodes(
                &split,
                &[
                    "STTM.16dp32bit_t0_t15".into(),
                    "STTM.16dp32bit_t16_t31".into()
                ]
            )
            .is_empty()
        );
    }

    #[test]
    fn ld_red_compiles_to_the_stat_form() {
        // Opcodes as ptxas 13.5 printed them for sm_103a/sm_110a in the campaign.
        let f = [form("tcgen05.ld.red.sync.aligned.16x32bx2.x2.min.abs.f32")];
        let ok = [
            "LDTM.STAT.16dp32bit_t0_t15.x2.MINABS.F32".to_string(),
            "LDTM.STAT.16dp32bit_t16_t31.x2.MINABS.F32".to_string(),
        ];
        assert!(
            check_opcodes(&f, &ok).is_empty(),
            "{:?}",
            check_opcodes(&f, &ok)
        );
        let u = [form("tcgen05.ld.red.sync.aligned.32x32b.x2.min.u32")];
        assert!(check_opcodes(&u, &["LDTM.STAT.x2.MIN".into()]).is_empty());
        assert!(!check_opcodes(&u, &["LDTM.STAT.x2.MAX".into()]).is_empty());
        // A plain ld must not compile to the reducing form.
        let plain = [form("tcgen05.ld.sync.aligned.32x32b.x2.b32")];
        assert!(!check_opcodes(&plain, &["LDTM.STAT.x2.MIN".into()]).is_empty());
    }

    #[test]
    fn disassembly_lines_give_opcodes() {
        let text = "        /*0090*/                   UTCOMMA.4X gdesc[URZ], tmem[UR4] ;  /* 0x8004 */\n\
                    \t/*00a0*/ \t@!P0 BRA `(.L_x_1) ;\n        /*0018*/ \t.word\t0x00000002\n";
        assert_eq!(
            opcodes(text),
            vec!["UTCOMMA.4X".to_string(), "BRA".to_string()]
        );
    }
}
