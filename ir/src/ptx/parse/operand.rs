//! Operands of PTX instructions: registers, immediates and integer constant expressions,
//! addresses, tensor-map brackets, vectors, predicate pairs; and their printing.

use super::lex::{Lexer, Tok, describe, is_float_word, parse_int};
use super::{Operand, ParseError, Pos};

pub(super) fn parse_operand<'a>(
    lx: &mut Lexer<'a>,
    opcode: &str,
) -> Result<Operand<'a>, ParseError> {
    // An integer constant expression (`(16*2)`, `32+32`) is an immediate; anything else is
    // read again as an ordinary operand.
    let starts_expr = match lx.peek()?.0 {
        Tok::Punct(b'(' | b'-' | b'~' | b'!' | b'+') => true,
        Tok::Word(w) => w.as_bytes()[0].is_ascii_digit(),
        _ => false,
    };
    if starts_expr {
        let save = lx.clone();
        if let Some(v) = const_expr(lx, 0)
            && matches!(
                lx.peek().map(|t| t.0),
                Ok(Tok::Punct(b',' | b';' | b'}' | b')'))
            )
        {
            return Ok(Operand::Imm(v));
        }
        *lx = save;
    }
    let first = parse_primary(lx, opcode)?;
    if lx.peek()?.0 == Tok::Punct(b'|') {
        lx.next()?;
        let second = parse_primary(lx, opcode)?;
        return Ok(Operand::Pair(Box::new(first), Box::new(second)));
    }
    Ok(first)
}

/// A binary operator of PTX integer constant expressions (PTX ISA §4.6, C precedence) at the
/// lexer's position, with its precedence and token count; `|` is not taken (it pairs operands,
/// `_|%p`), nor are comparisons and logical operators.
pub(super) fn const_binop(lx: &mut Lexer<'_>) -> Option<(u8, u8, usize)> {
    let (t, _) = lx.peek().ok()?;
    let Tok::Punct(c) = t else { return None };
    match c {
        b'*' | b'/' | b'%' => Some((10, c, 1)),
        b'+' | b'-' => Some((9, c, 1)),
        b'<' | b'>' => {
            let mut ahead = lx.clone();
            ahead.next().ok()?;
            (ahead.next().ok()?.0 == Tok::Punct(c)).then_some((8, c, 2))
        }
        b'&' => Some((5, c, 1)),
        b'^' => Some((4, c, 1)),
        _ => None,
    }
}

/// Evaluates an integer constant expression whose operators bind tighter than `min`
/// (precedence climbing); `None` when the text is not one (the caller rereads it).
pub(super) fn const_expr(lx: &mut Lexer<'_>, min: u8) -> Option<i64> {
    let mut v = const_unary(lx)?;
    while let Some((prec, op, n)) = const_binop(lx) {
        if prec <= min {
            break;
        }
        for _ in 0..n {
            lx.next().ok()?;
        }
        let r = const_expr(lx, prec)?;
        v = match op {
            b'*' => v.wrapping_mul(r),
            b'/' => v.checked_div(r)?,
            b'%' => v.checked_rem(r)?,
            b'+' => v.wrapping_add(r),
            b'-' => v.wrapping_sub(r),
            b'<' => v.wrapping_shl(u32::try_from(r).ok()?),
            b'>' => v.wrapping_shr(u32::try_from(r).ok()?),
            b'&' => v & r,
            _ => v ^ r,
        };
    }
    Some(v)
}

pub(super) fn const_unary(lx: &mut Lexer<'_>) -> Option<i64> {
    match lx.next().ok()?.0 {
        Tok::Word(w) => parse_int(w),
        Tok::Punct(b'-') => const_unary(lx).map(i64::wrapping_neg),
        Tok::Punct(b'+') => const_unary(lx),
        Tok::Punct(b'~') => const_unary(lx).map(|v| !v),
        Tok::Punct(b'!') => const_unary(lx).map(|v| i64::from(v == 0)),
        Tok::Punct(b'(') => {
            // Inside parentheses `|` is bitwise or.
            let mut v = const_expr(lx, 0)?;
            while lx.peek().ok()?.0 == Tok::Punct(b'|') {
                lx.next().ok()?;
                v |= const_expr(lx, 0)?;
            }
            (lx.next().ok()?.0 == Tok::Punct(b')')).then_some(v)
        }
        _ => None,
    }
}

pub(super) fn parse_primary<'a>(
    lx: &mut Lexer<'a>,
    opcode: &str,
) -> Result<Operand<'a>, ParseError> {
    let (t, p) = lx.next()?;
    match t {
        Tok::Word("_") => Ok(Operand::Sink),
        Tok::Word(w) if w.starts_with('%') => Ok(Operand::Reg(w)),
        Tok::Word(w) if w.as_bytes()[0].is_ascii_digit() => {
            if let Some(v) = parse_int(w) {
                Ok(Operand::Imm(v))
            } else if is_float_word(w) {
                Ok(Operand::Float(w))
            } else {
                Err(lx.err(
                    p,
                    format!("malformed number `{w}` in an operand of `{opcode}`"),
                ))
            }
        }
        Tok::Word(w) => Ok(Operand::Sym(w)),
        Tok::Punct(b'-') => match lx.next()? {
            (Tok::Word(w), wp) => {
                if let Some(v) = parse_int(w) {
                    Ok(Operand::Imm(v.wrapping_neg()))
                } else if is_float_word(w) {
                    Ok(Operand::Float(w))
                } else {
                    Err(lx.err(wp, format!("expected a number after `-`, found `{w}`")))
                }
            }
            (o, op) => Err(lx.err(
                op,
                format!("expected a number after `-`, found {}", describe(o)),
            )),
        },
        Tok::Punct(b'!') => Ok(Operand::Not(Box::new(parse_primary(lx, opcode)?))),
        Tok::Punct(b'[') => parse_addr(lx, p, opcode),
        Tok::Punct(b'{') => {
            let mut v = Vec::new();
            if lx.peek()?.0 == Tok::Punct(b'}') {
                lx.next()?;
                return Ok(Operand::Vec(v));
            }
            loop {
                v.push(parse_operand(lx, opcode)?);
                match lx.next()? {
                    (Tok::Punct(b','), _) => {}
                    (Tok::Punct(b'}'), _) => return Ok(Operand::Vec(v)),
                    (o, op) => {
                        return Err(lx.err(
                            op,
                            format!(
                                "expected `,` or `}}` in a vector operand of `{opcode}`, found {}",
                                describe(o)
                            ),
                        ));
                    }
                }
            }
        }
        Tok::Punct(b'(') => {
            let mut v = Vec::new();
            if lx.peek()?.0 == Tok::Punct(b')') {
                lx.next()?;
                return Ok(Operand::Paren(v));
            }
            loop {
                v.push(parse_operand(lx, opcode)?);
                match lx.next()? {
                    (Tok::Punct(b','), _) => {}
                    (Tok::Punct(b')'), _) => return Ok(Operand::Paren(v)),
                    (o, op) => {
                        return Err(lx.err(
                            op,
                            format!("expected `,` or `)` in `{opcode}`, found {}", describe(o)),
                        ));
                    }
                }
            }
        }
        other => Err(lx.err(
            p,
            format!(
                "expected an operand of `{opcode}`, found {}",
                describe(other)
            ),
        )),
    }
}

pub(super) fn parse_addr<'a>(
    lx: &mut Lexer<'a>,
    open: Pos,
    opcode: &str,
) -> Result<Operand<'a>, ParseError> {
    let mut base = "";
    let mut offset: i64 = 0;
    let mut sign: i64 = 1;
    let mut first = true;
    loop {
        let (t, p) = lx.next()?;
        match t {
            Tok::Punct(b']') if !first => return Ok(Operand::Addr { base, offset }),
            Tok::Punct(b',') if !first && offset == 0 => {
                let mut rest = vec![parse_operand(lx, opcode)?];
                loop {
                    match lx.next()? {
                        (Tok::Punct(b','), _) => rest.push(parse_operand(lx, opcode)?),
                        (Tok::Punct(b']'), _) => return Ok(Operand::Tensor { base, rest }),
                        (o, op) => {
                            return Err(lx.err(
                                op,
                                format!(
                                    "expected `,` or `]` in an address of `{opcode}`, found {}",
                                    describe(o)
                                ),
                            ));
                        }
                    }
                }
            }
            Tok::Punct(b'+') if !first => sign = 1,
            Tok::Punct(b'-') => sign = -sign,
            Tok::Word(w) => {
                if let Some(v) = parse_int(w) {
                    offset = offset.wrapping_add(sign.wrapping_mul(v));
                } else if base.is_empty() {
                    base = w;
                } else {
                    return Err(lx.err(
                        p,
                        format!(
                            "expected `+offset` or `]` in an address of `{opcode}`, found `{w}`"
                        ),
                    ));
                }
                sign = 1;
                first = false;
            }
            Tok::Eof => {
                return Err(lx.err(
                    open,
                    format!("unterminated address in `{opcode}`: expected `]`"),
                ));
            }
            other => return Err(lx.err(
                p,
                format!(
                    "expected a register, symbol or offset in an address of `{opcode}`, found {}",
                    describe(other)
                ),
            )),
        }
    }
}

impl std::fmt::Display for Operand<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn list(f: &mut std::fmt::Formatter<'_>, v: &[Operand<'_>]) -> std::fmt::Result {
            for (i, o) in v.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{o}")?;
            }
            Ok(())
        }
        match self {
            Operand::Reg(r) | Operand::Float(r) | Operand::Sym(r) => f.write_str(r),
            Operand::Imm(v) => write!(f, "{v}"),
            Operand::Addr { base, offset: 0 } => write!(f, "[{base}]"),
            Operand::Addr { base: "", offset } => write!(f, "[{offset}]"),
            Operand::Addr { base, offset } if *offset < 0 => write!(f, "[{base}{offset}]"),
            Operand::Addr { base, offset } => write!(f, "[{base}+{offset}]"),
            Operand::Tensor { base, rest } => {
                write!(f, "[{base}, ")?;
                list(f, rest)?;
                f.write_str("]")
            }
            Operand::Vec(v) => {
                f.write_str("{")?;
                list(f, v)?;
                f.write_str("}")
            }
            Operand::Pair(a, b) => write!(f, "{a}|{b}"),
            Operand::Paren(v) => {
                f.write_str("(")?;
                list(f, v)?;
                f.write_str(")")
            }
            Operand::Sink => f.write_str("_"),
            Operand::Not(o) => write!(f, "!{o}"),
        }
    }
}
