//! The lexer of the PTX module parser: words, strings, punctuation, with positions, and
//! the integer and float spellings of PTX.

use super::{ParseError, Pos};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok<'a> {
    Word(&'a str),
    Str(&'a str),
    Punct(u8),
    Eof,
}

#[derive(Clone)]
pub(super) struct Lexer<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    line: u32,
    line_start: usize,
    file: &'a str,
    peeked: Option<(Tok<'a>, Pos)>,
}

pub(super) fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b'%')
}

impl<'a> Lexer<'a> {
    pub(super) fn new(src: &'a str, file: &'a str) -> Self {
        Lexer {
            src,
            b: src.as_bytes(),
            i: 0,
            line: 1,
            line_start: 0,
            file,
            peeked: None,
        }
    }

    pub(super) fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: (self.i - self.line_start + 1) as u32,
        }
    }

    pub(super) fn err(&self, pos: Pos, msg: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            line: pos.line,
            col: pos.col,
            msg: msg.into(),
        }
    }

    pub(super) fn skip_space(&mut self) -> Result<(), ParseError> {
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                    self.line_start = self.i;
                }
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'/' if self.b.get(self.i + 1) == Some(&b'/') => {
                    while self.i < self.b.len() && self.b[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                b'/' if self.b.get(self.i + 1) == Some(&b'*') => {
                    let start = self.pos();
                    self.i += 2;
                    loop {
                        if self.i + 1 >= self.b.len() {
                            return Err(self.err(start, "unterminated /* comment"));
                        }
                        if self.b[self.i] == b'*' && self.b[self.i + 1] == b'/' {
                            self.i += 2;
                            break;
                        }
                        if self.b[self.i] == b'\n' {
                            self.line += 1;
                            self.line_start = self.i + 1;
                        }
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
        Ok(())
    }

    pub(super) fn next(&mut self) -> Result<(Tok<'a>, Pos), ParseError> {
        if let Some(t) = self.peeked.take() {
            return Ok(t);
        }
        self.skip_space()?;
        let pos = self.pos();
        if self.i >= self.b.len() {
            return Ok((Tok::Eof, pos));
        }
        let c = self.b[self.i];
        if is_word_byte(c) {
            let start = self.i;
            while self.i < self.b.len() {
                let c = self.b[self.i];
                if is_word_byte(c) {
                    self.i += 1;
                } else if c == b':' && self.b.get(self.i + 1) == Some(&b':') {
                    self.i += 2;
                } else {
                    break;
                }
            }
            return Ok((Tok::Word(&self.src[start..self.i]), pos));
        }
        if c == b'"' {
            let start = self.i + 1;
            self.i += 1;
            while self.i < self.b.len() && self.b[self.i] != b'"' {
                if self.b[self.i] == b'\n' {
                    return Err(self.err(pos, "unterminated string"));
                }
                self.i += 1;
            }
            if self.i >= self.b.len() {
                return Err(self.err(pos, "unterminated string"));
            }
            self.i += 1;
            return Ok((Tok::Str(&self.src[start..self.i - 1]), pos));
        }
        if c.is_ascii() {
            self.i += 1;
            return Ok((Tok::Punct(c), pos));
        }
        Err(self.err(
            pos,
            format!(
                "unexpected character {:?}",
                self.src[self.i..].chars().next().unwrap_or('?')
            ),
        ))
    }

    pub(super) fn peek(&mut self) -> Result<(Tok<'a>, Pos), ParseError> {
        if self.peeked.is_none() {
            let t = self.next()?;
            self.peeked = Some(t);
        }
        Ok(self.peeked.expect("just set"))
    }

    /// Skips to the end of the current line (for `.loc`, `.file`).
    pub(super) fn skip_line(&mut self) {
        self.peeked = None;
        while self.i < self.b.len() && self.b[self.i] != b'\n' {
            self.i += 1;
        }
    }

    pub(super) fn expect_punct(&mut self, p: u8, what: &str) -> Result<Pos, ParseError> {
        let (t, pos) = self.next()?;
        match t {
            Tok::Punct(c) if c == p => Ok(pos),
            other => Err(self.err(
                pos,
                format!("expected `{}` {what}, found {}", p as char, describe(other)),
            )),
        }
    }
}

pub(super) fn describe(t: Tok<'_>) -> String {
    match t {
        Tok::Word(w) => format!("`{w}`"),
        Tok::Str(s) => format!("string \"{s}\""),
        Tok::Punct(c) => format!("`{}`", c as char),
        Tok::Eof => "end of file".to_string(),
    }
}

pub(super) fn parse_int(w: &str) -> Option<i64> {
    let (neg, w) = match w.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, w),
    };
    let w = w.strip_suffix('U').unwrap_or(w);
    let v = if let Some(h) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()? as i64
    } else if let Some(b) = w.strip_prefix("0b") {
        u64::from_str_radix(b, 2).ok()? as i64
    } else if w.len() > 1 && w.starts_with('0') && w.bytes().all(|c| c.is_ascii_digit()) {
        u64::from_str_radix(&w[1..], 8).ok()? as i64
    } else {
        w.parse::<u64>().ok()? as i64
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

pub(super) fn is_float_word(w: &str) -> bool {
    let b = w.as_bytes();
    (b.len() > 2
        && b[0] == b'0'
        && matches!(b[1], b'f' | b'F' | b'd' | b'D')
        && b[2..].iter().all(u8::is_ascii_hexdigit))
        || (w.contains('.') && w.bytes().next().is_some_and(|c| c.is_ascii_digit()))
}
