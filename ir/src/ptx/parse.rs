//! The PTX module parser, for modules this crate prints and for real compiler output (Triton,
//! Gluon, nvcc with inline asm, CCCL `cuda::ptx` wrappers; PTX ISA 8.6 to 9.5).
//!
//! It reads the module-level directives (`.version`, `.target`, `.address_size`), global
//! declarations, and every `.entry` / `.func` with its parameters, performance directives and
//! body. A body is a flat list of [`Stmt`]s: labels, declarations and instructions (with guard
//! predicate, opcode, operands, line and column); nested `{ }` scopes are flattened. Every
//! instruction is kept; those whose opcode starts with `tcgen05.` also carry their decoded
//! [`Form`]. An instruction this parser does not model is an opaque statement, never an error;
//! a `tcgen05.*` instruction that is not well formed (unknown, repeated or missing qualifier,
//! operands that do not fit the syntax line) is kept with the reason in [`Instr::ill_formed`].
//! Text that is not PTX is an error naming `file:line:column` and what was expected.
//! Debug sections (`.section ... { ... }`) and `.loc` / `.file` lines are skipped.

use crate::form::{Form, FormError};
use crate::program::PtxVersion;

mod lex;
mod operand;

use lex::{Lexer, Tok, describe};
use operand::parse_operand;

/// A parse error at a place in the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{col}: {msg}")]
pub struct ParseError {
    /// The file name given to [`parse_module`].
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// What was expected and what was found.
    pub msg: String,
}

/// A position in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

/// An operand as written.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Operand<'a> {
    /// `%r1`, `%laneid`.
    Reg(&'a str),
    /// An integer literal.
    Imm(i64),
    /// A float literal as written (`0f3F800000`, `1.5`).
    Float(&'a str),
    /// A symbol or label name.
    Sym(&'a str),
    /// `[base]` or `[base+offset]`: `base` is a register, symbol or empty (absolute).
    Addr {
        /// Base register or symbol ("" for an absolute address).
        base: &'a str,
        /// Constant offset.
        offset: i64,
    },
    /// `[base, {coords}]`: a tensor-map address with coordinates (`cp.async.bulk.tensor`).
    Tensor {
        /// The tensor map operand.
        base: &'a str,
        /// The coordinates and any further operands inside the brackets.
        rest: Vec<Operand<'a>>,
    },
    /// `{a, b, ...}`.
    Vec(Vec<Operand<'a>>),
    /// `a|b` (e.g. `elect.sync _|%p`).
    Pair(Box<Operand<'a>>, Box<Operand<'a>>),
    /// `(a, b, ...)` (call arguments).
    Paren(Vec<Operand<'a>>),
    /// `_`.
    Sink,
    /// `!x` (a negated predicate operand).
    Not(Box<Operand<'a>>),
}

/// A guard predicate `@%p` / `@!%p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Guard<'a> {
    /// True for `@!`.
    pub negated: bool,
    /// The predicate register.
    pub pred: &'a str,
}

/// One instruction.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Instr<'a> {
    /// Guard predicate.
    pub guard: Option<Guard<'a>>,
    /// The full opcode as written, e.g. `tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32`.
    pub opcode: &'a str,
    /// Operands.
    pub operands: Vec<Operand<'a>>,
    /// The decoded form, for `tcgen05.*` instructions this crate models.
    #[serde(skip)]
    pub form: Option<Form>,
    /// Why a `tcgen05.*` instruction is not well formed (then `form` is `None`, or the operands
    /// do not fit it). Ill-formed instructions are kept: in readable PTX they are findings of
    /// `check`, not unreadable input.
    #[serde(skip)]
    pub ill_formed: Option<IllFormed>,
    /// Where the opcode starts.
    pub pos: Pos,
}

/// Why a `tcgen05.*` instruction is not well formed (reference §3 syntax lines).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IllFormed {
    /// The opcode is not a tcgen05 form: an unknown instruction, an unknown, repeated or
    /// missing qualifier.
    #[error(transparent)]
    Form(FormError),
    /// The operands do not have the shape of the form's syntax line.
    #[error("expected operands {expected}, found {found} operand(s)")]
    Operands {
        /// The operand list of the syntax line, e.g. `` `[dst], nCols` ``.
        expected: &'static str,
        /// How many operands the instruction has.
        found: usize,
    },
}

/// A statement of a function body.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Stmt<'a> {
    /// `name:`.
    Label(&'a str, Pos),
    /// A declaration (`.reg`, `.local`, `.shared`, `.param`, ...) as its words.
    Decl(Vec<&'a str>, Pos),
    /// An instruction.
    Instr(Instr<'a>),
}

/// A function parameter.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Param<'a> {
    /// Its declaration words, e.g. `[".param", ".u64", "obs"]`.
    pub words: Vec<&'a str>,
}

/// An `.entry` or `.func`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Function<'a> {
    /// Name.
    pub name: &'a str,
    /// `.entry` (a kernel) rather than `.func`.
    pub is_entry: bool,
    /// Return parameters (`.func (.param .b32 r) f(...)`).
    pub returns: Vec<Param<'a>>,
    /// Parameters.
    pub params: Vec<Param<'a>>,
    /// Performance directives between the signature and the body, e.g. `.reqntid 128, 1, 1`.
    pub directives: Vec<Vec<&'a str>>,
    /// Body statements, scopes flattened; `None` for a declaration without body.
    pub body: Option<Vec<Stmt<'a>>>,
    /// Where its `.entry` / `.func` keyword is.
    pub pos: Pos,
}

/// A module-level variable declaration (`.shared`, `.global`, `.const`, ...), as its words.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Global<'a> {
    /// Its words, e.g. `[".shared", ".align", "16", ".b32", "tc_slot", "[", "1", "]"]`.
    pub words: Vec<&'a str>,
    /// Where it starts.
    pub pos: Pos,
}

/// A parsed module.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Module<'a> {
    /// `.version`.
    pub version: Option<PtxVersion>,
    /// `.target` names.
    pub target: Vec<&'a str>,
    /// `.address_size`.
    pub address_size: Option<u32>,
    /// Module-level variables.
    pub globals: Vec<Global<'a>>,
    /// Functions and kernels, in order.
    pub functions: Vec<Function<'a>>,
}

/// Parses a PTX module. `file` names the input in error messages.
pub fn parse_module<'a>(src: &'a str, file: &'a str) -> Result<Module<'a>, ParseError> {
    let mut lx = Lexer::new(src, file);
    let mut m = Module {
        version: None,
        target: vec![],
        address_size: None,
        globals: vec![],
        functions: vec![],
    };
    let mut linkage: Vec<&str> = Vec::new();
    loop {
        let (t, pos) = lx.next()?;
        match t {
            Tok::Eof => break,
            Tok::Word(".version") => {
                let (t, p) = lx.next()?;
                let v = match t {
                    Tok::Word(w) => w
                        .split_once('.')
                        .and_then(|(a, b)| Some(PtxVersion::new(a.parse().ok()?, b.parse().ok()?))),
                    _ => None,
                };
                m.version = Some(v.ok_or_else(|| {
                    lx.err(
                        p,
                        format!(
                            "expected a version like 8.6 after .version, found {}",
                            describe(t)
                        ),
                    )
                })?);
            }
            Tok::Word(".target") => loop {
                let (t, p) = lx.next()?;
                match t {
                    Tok::Word(w) => m.target.push(w),
                    other => {
                        return Err(lx.err(
                            p,
                            format!("expected a target name, found {}", describe(other)),
                        ));
                    }
                }
                if lx.peek()?.0 == Tok::Punct(b',') {
                    lx.next()?;
                } else {
                    break;
                }
            },
            Tok::Word(".address_size") => {
                let (t, p) = lx.next()?;
                m.address_size = match t {
                    Tok::Word(w) => w.parse().ok(),
                    _ => None,
                };
                if m.address_size.is_none() {
                    return Err(lx.err(
                        p,
                        format!(
                            "expected 32 or 64 after .address_size, found {}",
                            describe(t)
                        ),
                    ));
                }
            }
            Tok::Word(".loc" | ".file" | "@@DWARF") => lx.skip_line(),
            Tok::Word(".section") => skip_section(&mut lx, pos)?,
            Tok::Word(w @ (".visible" | ".weak" | ".extern" | ".common")) => linkage.push(w),
            Tok::Word(kind @ (".entry" | ".func")) => {
                let f = parse_function(&mut lx, kind == ".entry", pos)?;
                m.functions.push(f);
                linkage.clear();
            }
            Tok::Word(w) if w.starts_with('.') => {
                let mut words = std::mem::take(&mut linkage);
                words.push(w);
                collect_until_semicolon(&mut lx, &mut words, pos)?;
                m.globals.push(Global { words, pos });
            }
            Tok::Punct(b';') => {}
            other => {
                return Err(lx.err(pos, format!("expected a directive (.version, .target, .entry, .func, a declaration), found {}", describe(other))));
            }
        }
    }
    Ok(m)
}

fn skip_section(lx: &mut Lexer<'_>, pos: Pos) -> Result<(), ParseError> {
    loop {
        match lx.next()? {
            (Tok::Punct(b'{'), _) => break,
            (Tok::Eof, _) => return Err(lx.err(pos, "expected `{` after .section")),
            _ => {}
        }
    }
    let mut depth = 1;
    while depth > 0 {
        match lx.next()? {
            (Tok::Punct(b'{'), _) => depth += 1,
            (Tok::Punct(b'}'), _) => depth -= 1,
            (Tok::Eof, _) => return Err(lx.err(pos, "unterminated .section: expected `}`")),
            _ => {}
        }
    }
    Ok(())
}

/// Collects the words of a declaration up to and including its `;` (brace initializers kept
/// as words).
fn collect_until_semicolon<'a>(
    lx: &mut Lexer<'a>,
    words: &mut Vec<&'a str>,
    start: Pos,
) -> Result<(), ParseError> {
    loop {
        let (t, _) = lx.next()?;
        match t {
            Tok::Punct(b';') => return Ok(()),
            Tok::Word(w) | Tok::Str(w) => words.push(w),
            Tok::Punct(c) => words.push(punct_str(c)),
            Tok::Eof => {
                return Err(lx.err(
                    start,
                    "expected `;` to end the declaration, found end of file",
                ));
            }
        }
    }
}

fn punct_str(c: u8) -> &'static str {
    const P: &[&str] = &[
        "[", "]", "<", ">", "{", "}", "(", ")", ",", "=", "+", "-", "*", "|", "!", ":", "@", "?",
    ];
    let i = b"[]<>{}(),=+-*|!:@?".iter().position(|&x| x == c);
    i.map_or("?", |i| P[i])
}

fn parse_params<'a>(lx: &mut Lexer<'a>) -> Result<Vec<Param<'a>>, ParseError> {
    let open = lx.expect_punct(b'(', "to open the parameter list")?;
    let mut params = Vec::new();
    let mut words = Vec::new();
    loop {
        let (t, p) = lx.next()?;
        match t {
            Tok::Punct(b')') => {
                if !words.is_empty() {
                    params.push(Param { words });
                }
                return Ok(params);
            }
            Tok::Punct(b',') => params.push(Param {
                words: std::mem::take(&mut words),
            }),
            Tok::Word(w) => words.push(w),
            Tok::Punct(c @ (b'[' | b']')) => words.push(punct_str(c)),
            Tok::Eof => return Err(lx.err(open, "unterminated parameter list: expected `)`")),
            other => {
                return Err(lx.err(
                    p,
                    format!("unexpected {} in a parameter list", describe(other)),
                ));
            }
        }
    }
}

fn parse_function<'a>(
    lx: &mut Lexer<'a>,
    is_entry: bool,
    pos: Pos,
) -> Result<Function<'a>, ParseError> {
    let mut returns = Vec::new();
    if lx.peek()?.0 == Tok::Punct(b'(') {
        returns = parse_params(lx)?;
    }
    let (t, p) = lx.next()?;
    let Tok::Word(name) = t else {
        return Err(lx.err(
            p,
            format!("expected a function name, found {}", describe(t)),
        ));
    };
    let mut params = Vec::new();
    if lx.peek()?.0 == Tok::Punct(b'(') {
        params = parse_params(lx)?;
    }
    let mut directives = Vec::new();
    loop {
        let (t, p) = lx.peek()?;
        match t {
            Tok::Punct(b';') => {
                lx.next()?;
                return Ok(Function {
                    name,
                    is_entry,
                    returns,
                    params,
                    directives,
                    body: None,
                    pos,
                });
            }
            Tok::Punct(b'{') => {
                lx.next()?;
                break;
            }
            Tok::Word(".noreturn") => {
                lx.next()?;
                directives.push(vec![".noreturn"]);
            }
            Tok::Word(w) if w.starts_with('.') => {
                lx.next()?;
                let mut d = vec![w];
                while let (Tok::Word(v), _) = lx.peek()? {
                    if v.starts_with('.') {
                        break;
                    }
                    lx.next()?;
                    d.push(v);
                    if lx.peek()?.0 == Tok::Punct(b',') {
                        lx.next()?;
                    }
                }
                directives.push(d);
            }
            other => {
                return Err(lx.err(
                    p,
                    format!(
                        "expected `{{` or `;` after the signature of {name}, found {}",
                        describe(other)
                    ),
                ));
            }
        }
    }
    let mut body = Vec::new();
    let mut depth = 1;
    while depth > 0 {
        let (t, p) = lx.next()?;
        match t {
            Tok::Punct(b'{') => depth += 1,
            Tok::Punct(b'}') => depth -= 1,
            Tok::Punct(b';') => {}
            Tok::Eof => {
                return Err(lx.err(pos, format!("unterminated body of {name}: expected `}}`")));
            }
            Tok::Word(".loc" | ".file") => lx.skip_line(),
            Tok::Word(".pragma") => {
                let mut w = vec![".pragma"];
                collect_until_semicolon(lx, &mut w, p)?;
            }
            Tok::Word(w) if w.starts_with('.') => {
                let mut words = vec![w];
                collect_until_semicolon(lx, &mut words, p)?;
                body.push(Stmt::Decl(words, p));
            }
            Tok::Word(w) if lx.peek()?.0 == Tok::Punct(b':') => {
                lx.next()?;
                body.push(Stmt::Label(w, p));
            }
            Tok::Punct(b'@') => {
                let (t, gp) = lx.next()?;
                let (negated, pred) = match t {
                    Tok::Punct(b'!') => match lx.next()? {
                        (Tok::Word(w), _) => (true, w),
                        (o, op) => {
                            return Err(lx.err(
                                op,
                                format!("expected a predicate after `@!`, found {}", describe(o)),
                            ));
                        }
                    },
                    Tok::Word(w) => (false, w),
                    o => {
                        return Err(lx.err(
                            gp,
                            format!("expected a predicate after `@`, found {}", describe(o)),
                        ));
                    }
                };
                let (t, op) = lx.next()?;
                let Tok::Word(opcode) = t else {
                    return Err(lx.err(
                        op,
                        format!("expected an opcode after the guard, found {}", describe(t)),
                    ));
                };
                body.push(Stmt::Instr(parse_instr(
                    lx,
                    Some(Guard { negated, pred }),
                    opcode,
                    op,
                )?));
            }
            Tok::Word(opcode) => body.push(Stmt::Instr(parse_instr(lx, None, opcode, p)?)),
            other => {
                return Err(lx.err(
                    p,
                    format!(
                        "expected an instruction, label or declaration, found {}",
                        describe(other)
                    ),
                ));
            }
        }
    }
    Ok(Function {
        name,
        is_entry,
        returns,
        params,
        directives,
        body: Some(body),
        pos,
    })
}

fn parse_instr<'a>(
    lx: &mut Lexer<'a>,
    guard: Option<Guard<'a>>,
    opcode: &'a str,
    pos: Pos,
) -> Result<Instr<'a>, ParseError> {
    let mut operands = Vec::new();
    if lx.peek()?.0 != Tok::Punct(b';') {
        loop {
            operands.push(parse_operand(lx, opcode)?);
            let (t, p) = lx.next()?;
            match t {
                Tok::Punct(b',') => {}
                Tok::Punct(b';') => break,
                other => {
                    return Err(lx.err(
                        p,
                        format!(
                            "expected `,` or `;` after an operand of `{opcode}`, found {}",
                            describe(other)
                        ),
                    ));
                }
            }
        }
    } else {
        lx.next()?;
    }
    let (mut form, mut ill_formed) = (None, None);
    if opcode.starts_with("tcgen05.") {
        match Form::parse(opcode) {
            Ok(f) => match check_operand_shape(&f, &operands) {
                Ok(()) => form = Some(f),
                Err(e) => ill_formed = Some(e),
            },
            Err(e) => ill_formed = Some(IllFormed::Form(e)),
        }
    }
    Ok(Instr {
        guard,
        opcode,
        operands,
        form,
        ill_formed,
        pos,
    })
}

/// The operand shapes of each tcgen05 family (reference §3 syntax lines): enough to reject a
/// missing bracket or a wrong operand count with a message that says what was expected.
fn check_operand_shape(f: &Form, ops: &[Operand<'_>]) -> Result<(), IllFormed> {
    let is_addr = |o: &Operand<'_>| matches!(o, Operand::Addr { .. });
    let is_vec = |o: &Operand<'_>| matches!(o, Operand::Vec(_));
    let is_val = |o: &Operand<'_>| matches!(o, Operand::Reg(_) | Operand::Imm(_) | Operand::Sym(_));
    let n = ops.len();
    let want = |ok: bool, expected: &'static str| {
        if ok {
            Ok(())
        } else {
            Err(IllFormed::Operands { expected, found: n })
        }
    };
    match f {
        Form::Alloc(_) => want(
            n == 2 && is_addr(&ops[0]) && is_val(&ops[1]),
            "`[dst], nCols`",
        ),
        Form::Dealloc(_) => want(
            n == 2 && is_val(&ops[0]) && is_val(&ops[1]),
            "`taddr, nCols`",
        ),
        Form::Relinquish(_) | Form::Wait(_) | Form::Fence(_) => want(n == 0, "none"),
        Form::Ld(l) => {
            let base = if l.red { 3 } else { 2 };
            let ok = (n == base || n == base + 1) && is_vec(&ops[0]) && is_addr(&ops[base - 1]);
            want(
                ok,
                if l.red {
                    "`{r...}, redval, [taddr]{, immHalfSplitoff}`"
                } else {
                    "`{r...}, [taddr]{, immHalfSplitoff}`"
                },
            )
        }
        Form::St(_) => want(
            (n == 2 || n == 3) && is_addr(&ops[0]) && is_vec(&ops[n - 1]),
            "`[taddr]{, immHalfSplitoff}, {r...}`",
        ),
        Form::Commit(_) => want(
            (n == 1 || n == 2) && is_addr(&ops[0]),
            "`[mbar]{, ctaMask}`",
        ),
        Form::Cp(_) => want(
            n == 2 && is_addr(&ops[0]) && is_val(&ops[1]),
            "`[taddr], s-desc`",
        ),
        Form::Shift(_) => want(n == 1 && is_addr(&ops[0]), "`[taddr]`"),
        Form::Mma(_) => want(
            n >= 5 && is_addr(&ops[0]),
            "`[d-tmem], a-desc|[a-tmem], b-desc, idesc, ..., enable-input-d`",
        ),
    }
}

impl Module<'_> {
    /// The function named `name`.
    pub fn function(&self, name: &str) -> Option<&Function<'_>> {
        self.functions.iter().find(|f| f.name == name)
    }
}

impl<'a> Function<'a> {
    /// The instructions of the body, in order.
    pub fn instrs(&self) -> impl Iterator<Item = &Instr<'a>> {
        self.body.iter().flatten().filter_map(|s| match s {
            Stmt::Instr(i) => Some(i),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_small_kernel_with_guards_vectors_and_addresses() {
        let src = r#"
.version 8.6
.target sm_100a
.address_size 64
.shared .align 16 .b32 slot[1];
.visible .entry k(.param .u64 p)
.reqntid 128, 1, 1
{
    .reg .b32 %r<4>;
    .reg .pred %p;
    elect.sync _|%p, -1;
$L__BB0_1:
    @!%p bra $L__BB0_1;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32;
    tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r3+-16];
    /* comment */ ret;
}
"#;
        let m = parse_module(src, "t.ptx").unwrap();
        assert_eq!(m.version, Some(PtxVersion::new(8, 6)));
        assert_eq!(m.target, vec!["sm_100a"]);
        let k = m.function("k").unwrap();
        assert!(k.is_entry);
        assert_eq!(k.directives, vec![vec![".reqntid", "128", "1", "1"]]);
        let ins: Vec<_> = k.instrs().collect();
        assert_eq!(ins.len(), 5);
        assert_eq!(
            ins[1].guard,
            Some(Guard {
                negated: true,
                pred: "%p"
            })
        );
        assert!(matches!(ins[2].form, Some(Form::Alloc(_))));
        assert_eq!(
            ins[3].operands[1],
            Operand::Addr {
                base: "%r3",
                offset: -16
            }
        );
        assert_eq!(ins[3].pos.line, 15);
    }

    #[test]
    fn ill_formed_tcgen05_is_kept_with_its_reason() {
        // §9.7.16.7.1 syntax line: alloc's dst is `[dst]`, an address.
        let src = ".version 8.6\n.target sm_100a\n.entry k()\n{\n  tcgen05.alloc.cta_group::1.sync.aligned.b32 %r1, 32;\n}\n";
        let m = parse_module(src, "bad.ptx").unwrap();
        let i = m.functions[0].instrs().next().unwrap();
        assert_eq!((i.pos.line, i.pos.col), (5, 3));
        assert!(i.form.is_none());
        let Some(e @ IllFormed::Operands { .. }) = &i.ill_formed else {
            panic!("{:?}", i.ill_formed)
        };
        let msg = e.to_string();
        assert!(msg.contains("[dst], nCols"), "{msg}");
        // §9.7.16.8.3: `.num` is mandatory.
        let src =
            ".version 8.6\n.entry k()\n{\n  tcgen05.ld.sync.aligned.32x32b.b32 {%r1}, [%r2];\n}\n";
        let m = parse_module(src, "bad.ptx").unwrap();
        let i = m.functions[0].instrs().next().unwrap();
        assert!(
            i.ill_formed
                .as_ref()
                .is_some_and(|e| e.to_string().contains("repetition count")),
            "{:?}",
            i.ill_formed
        );
    }

    #[test]
    fn constant_expressions_are_immediates() {
        // PTX ISA §4.6: integer constant expressions with C operators and precedence.
        let src = ".version 8.6\n.entry k()\n{\n  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [s], (16*2);\n  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 32+32*2;\n  add.s32 %r2, %r1, ((1<<4)|(2 - 3 + 0x10));\n  mov.b32 %r3, ~0;\n  @!%p1 bra $L;\n  elect.sync _|%p2, -1;\n  call f, (%r1, 2);\n}\n";
        let m = parse_module(src, "e").unwrap();
        let ins: Vec<_> = m.functions[0].instrs().collect();
        assert_eq!(ins[0].operands[1], Operand::Imm(32));
        assert!(ins[0].form.is_some() && ins[0].ill_formed.is_none());
        assert_eq!(ins[1].operands[1], Operand::Imm(96));
        // Inside parentheses `|` is bitwise or; outside it pairs operands (`_|%p2`).
        assert_eq!(ins[2].operands[2], Operand::Imm(31));
        assert_eq!(ins[3].operands[1], Operand::Imm(-1));
        assert_eq!(ins[4].guard.map(|g| g.negated), Some(true));
        assert!(matches!(ins[5].operands[0], Operand::Pair(..)));
        assert!(matches!(ins[6].operands[1], Operand::Paren(_)));
    }

    #[test]
    fn text_that_is_not_ptx_names_file_line_column() {
        let src = ".version 8.6\n.entry k()\n{\n  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r1, [%r2];\n}\n";
        let e = parse_module(src, "bad.ptx").unwrap_err();
        assert!(e.to_string().starts_with("bad.ptx:4:"), "{e}");
    }

    #[test]
    fn unknown_instructions_are_opaque_not_errors() {
        let src = ".version 9.5\n.entry k()\n{\n  frobnicate.sync.aligned %r1, [%r2];\n  tcgen05.frob.x;\n}\n";
        let m = parse_module(src, "x").unwrap();
        let ins: Vec<_> = m.functions[0].instrs().collect();
        assert_eq!(ins.len(), 2);
        assert!(ins.iter().all(|i| i.form.is_none()));
        // An unknown tcgen05 family is kept as ill-formed (a finding of `check`).
        assert!(ins[0].ill_formed.is_none());
        assert!(matches!(
            ins[1].ill_formed,
            Some(IllFormed::Form(FormError::UnknownInstruction(_)))
        ));
    }
}
