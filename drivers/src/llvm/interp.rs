//! A per-thread interpreter of PTX, for translation validation ([`super::validate`]).
//!
//! It runs one thread of a kernel (its CTA rank, cluster, warp and lane fixed) through the
//! kernel's code and records what the thread does, as [`Event`]s: every tcgen05 instruction
//! with its form and the values of its operands, every synchronization statement (barriers,
//! mbarrier operations, fences) with its operand values, and every store to shared or global
//! memory with its address and value. It interprets the printer's PTX and the PTX that LLVM
//! produces alike, so the two traces of one thread can be compared.
//!
//! What the thread cannot know is modelled the same way on both sides:
//! - a shared or global load from an address the thread has not stored to gives a value
//!   computed from the address ([`unknown_word`]), e.g. the TMEM address an alloc wrote;
//! - every symbol has a fixed address computed from its name ([`symbol_address`]);
//!   `cvta.shared` adds a fixed window base;
//! - each register a `tcgen05.ld` delivers holds a tag naming the ld (from its form, operand
//!   values and repetition) and the register ([`ld_tag`]), so a later store says which ld
//!   value it stores;
//! - `mbarrier.try_wait` succeeds at once; `elect.sync` elects lane 0.
//!
//! An instruction it does not know is an [`InterpError`], never a guess.

use std::collections::HashMap;
use tcgen05_ir::form::Form;
use tcgen05_ir::ptx::parse::{Function, Instr, Module, Operand, Stmt};
use tcgen05_ir::qual::{CollectorBuf, CollectorOp};

/// The thread to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Thread {
    /// `%cluster_ctarank`.
    pub cta_rank: u32,
    /// `%clusterid.x`.
    pub cluster: u32,
    /// CTAs per cluster (`%cluster_nctarank`).
    pub cluster_size: u32,
    /// Warp rank in the CTA.
    pub warp: u32,
    /// `%laneid`.
    pub lane: u32,
}

/// Where a store went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// `.shared` (or a generic address in the shared window).
    Shared,
    /// `.global` or generic.
    Global,
}

/// One thing a thread did.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Event {
    /// A tcgen05 instruction: its normalized form and its operand values (destinations of
    /// `tcgen05.ld` left out).
    Tc {
        /// The form (qualifier order and written defaults normalized, [`normalize`]).
        form: Form,
        /// Operand values in order.
        args: Vec<u64>,
        /// 1-based line in its module.
        line: u32,
    },
    /// A barrier, mbarrier operation or fence: its normalized opcode ([`sync_name`]) and
    /// operand values.
    Sync {
        /// The normalized opcode.
        op: String,
        /// Operand values (addresses, counts; sink operands left out).
        args: Vec<u64>,
        /// 1-based line.
        line: u32,
    },
    /// A store of this thread.
    Store {
        /// Shared or global.
        space: Space,
        /// The address.
        addr: u64,
        /// The value.
        value: u64,
        /// 1-based line.
        line: u32,
    },
}

impl Event {
    /// The line the event comes from.
    pub fn line(&self) -> u32 {
        match self {
            Event::Tc { line, .. } | Event::Sync { line, .. } | Event::Store { line, .. } => *line,
        }
    }
}

/// Why a thread could not be interpreted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterpError {
    /// 1-based line, when one is to blame.
    pub line: Option<u32>,
    /// What went wrong.
    pub msg: String,
}

impl std::fmt::Display for InterpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.msg),
            None => f.write_str(&self.msg),
        }
    }
}

fn err<T>(line: Option<u32>, msg: impl Into<String>) -> Result<T, InterpError> {
    Err(InterpError {
        line,
        msg: msg.into(),
    })
}

/// The base of the generic shared window (`cvta.shared` adds it).
pub const SHARED_WINDOW: u64 = 0x5000_0000_0000;

/// The kernel parameter's value (the observation buffer's address).
pub const PARAM_BASE: u64 = 0x7000_0000_0000;

/// The fixed address of a symbol: 4 KiB aligned, from an FNV-1a hash of its name.
pub fn symbol_address(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    ((h % 0xFFF) + 1) << 12
}

/// The value of a word nobody in this thread stored: a function of the address.
pub fn unknown_word(addr: u64) -> u64 {
    let mut h = addr.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 29;
    (h & 0xFFF) << 20
}

/// The tag held by register `reg` of the ld with tag id `k`. The id is computed from the ld's
/// form and operand values and how often the thread issued that same ld before, so it is the
/// same in two compilations whatever order independent lds are issued in.
pub fn ld_tag(k: u32, reg: u32) -> u64 {
    0xA000_0000 | (u64::from(k & 0xFFFF) << 8) | u64::from(reg & 0xFF)
}

fn ld_id(form: &Form, args: &[u64], seen: &mut HashMap<u32, u32>) -> u32 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    form.hash(&mut h);
    args.hash(&mut h);
    let base = (h.finish() & 0xFFFF) as u32;
    let n = seen.entry(base).or_insert(0);
    *n += 1;
    (base + *n - 1) & 0xFFFF
}

/// Whether a stored value is an ld tag, and which ld it comes from.
pub fn tag_ld(v: u64) -> Option<u32> {
    (v & 0xF000_0000 == 0xA000_0000 && v >> 32 == 0).then_some(((v >> 8) & 0xFFFF) as u32)
}

/// A form with the written defaults and qualifier order normalized: an mma without a
/// collector qualifier has `::a::discard` (ws: `::b0::discard`; MMA-COLLECTOR-DEFAULT,
/// reference §3.7), and the position of `.down` on a shift is not kept.
pub fn normalize(f: Form) -> Form {
    match f {
        Form::Mma(mut m) => {
            if m.collector.is_none() {
                m.collector = Some(tcgen05_ir::form::Collector {
                    buf: if m.ws {
                        CollectorBuf::B0
                    } else {
                        CollectorBuf::A
                    },
                    op: CollectorOp::Discard,
                });
            }
            Form::Mma(m)
        }
        Form::Shift(mut s) => {
            s.down_first = false;
            Form::Shift(s)
        }
        other => other,
    }
}

/// The normalized name of a synchronization opcode, or `None` when the opcode is not one:
/// `bar.sync` and `barrier.sync.aligned` are `barrier.sync.aligned`, `barrier.sync` stays;
/// `barrier.cluster.arrive` is `.release` and `barrier.cluster.wait` is `.acquire` by
/// default; `mbarrier.*` names `.shared` and `.shared::cta` alike.
pub fn sync_name(op: &str) -> Option<String> {
    let s = match op {
        "bar.sync" | "barrier.sync.aligned" => "barrier.sync.aligned".to_string(),
        "barrier.cluster.arrive" => "barrier.cluster.arrive.release".to_string(),
        "barrier.cluster.arrive.aligned" => "barrier.cluster.arrive.release.aligned".to_string(),
        "barrier.cluster.wait" => "barrier.cluster.wait.acquire".to_string(),
        "barrier.cluster.wait.aligned" => "barrier.cluster.wait.acquire.aligned".to_string(),
        o if o.starts_with("barrier.") || o.starts_with("fence.") || o.starts_with("membar") => {
            o.to_string()
        }
        o if o.starts_with("mbarrier.") => o
            .replace(".shared::cta.", ".shared.")
            .replace(".u64", ".b64"),
        _ => return None,
    };
    Some(s)
}

#[derive(Debug)]
struct Func<'m, 'a> {
    f: &'m Function<'a>,
    body: &'m [Stmt<'a>],
    labels: HashMap<&'a str, usize>,
    tables: HashMap<&'a str, Vec<&'a str>>,
    params: Vec<&'a str>,
}

fn param_name<'a>(words: &[&'a str]) -> Option<&'a str> {
    words
        .iter()
        .rev()
        .find(|w| {
            !w.starts_with('.')
                && !matches!(**w, "[" | "]")
                && !w.chars().all(|c| c.is_ascii_digit())
        })
        .copied()
}

/// A module prepared for running threads.
#[derive(Debug)]
pub struct Program<'m, 'a> {
    funcs: HashMap<&'a str, Func<'m, 'a>>,
    entry: &'a str,
}

impl<'m, 'a> Program<'m, 'a> {
    /// Prepares `m`; `entry` names the kernel.
    pub fn new(m: &'m Module<'a>, entry: &str) -> Result<Self, InterpError> {
        let mut funcs = HashMap::new();
        let mut entry_name = None;
        for f in &m.functions {
            let Some(body) = f.body.as_deref() else {
                continue;
            };
            let mut labels = HashMap::new();
            let mut tables = HashMap::new();
            for (i, s) in body.iter().enumerate() {
                if let Stmt::Label(l, _) = s {
                    labels.insert(*l, i);
                    if let Some(Stmt::Decl(words, _)) = body.get(i + 1)
                        && words.first() == Some(&".branchtargets")
                    {
                        tables.insert(
                            *l,
                            words[1..].iter().copied().filter(|w| *w != ",").collect(),
                        );
                    }
                }
            }
            let params = f
                .params
                .iter()
                .filter_map(|p| param_name(&p.words))
                .collect();
            if f.name == entry {
                entry_name = Some(f.name);
            }
            funcs.insert(
                f.name,
                Func {
                    f,
                    body,
                    labels,
                    tables,
                    params,
                },
            );
        }
        let Some(entry) = entry_name else {
            return err(None, format!("no kernel `{entry}` with a body"));
        };
        Ok(Program { funcs, entry })
    }

    /// Runs `t` to its end (at most `limit` instructions) and returns what it did.
    pub fn run(&self, t: Thread, limit: usize) -> Result<Trace, InterpError> {
        let mut st = State {
            t,
            events: Vec::new(),
            mem: HashMap::new(),
            seen: HashMap::new(),
            ld_at: HashMap::new(),
        };
        let entry = &self.funcs[self.entry];
        let mut params = HashMap::new();
        if let Some(p) = entry.params.first() {
            params.insert(*p, PARAM_BASE);
        }
        let mut stack: Vec<Frame> = vec![Frame {
            func: self.entry,
            pc: 0,
            regs: HashMap::new(),
            params,
            out_params: HashMap::new(),
        }];
        let mut steps = 0usize;
        while let Some(fr) = stack.last_mut() {
            let func = &self.funcs[fr.func];
            let Some(s) = func.body.get(fr.pc) else {
                stack.pop();
                continue;
            };
            fr.pc += 1;
            let Stmt::Instr(i) = s else { continue };
            steps += 1;
            if steps > limit {
                return err(
                    None,
                    format!("more than {limit} instructions (a loop too long to follow)"),
                );
            }
            if let Some(g) = &i.guard {
                let v = get(fr, g.pred, i)? != 0;
                if v == g.negated {
                    continue;
                }
            }
            match st.step(fr, func, i)? {
                Flow::Next => {}
                Flow::Jump(pc) => stack.last_mut().expect("frame").pc = pc,
                Flow::Return => {
                    stack.pop();
                }
                Flow::Exit => break,
                Flow::Call(name, args) => {
                    let Some(callee) = self.funcs.get(name) else {
                        return err(
                            Some(i.pos.line),
                            format!("call of `{name}`, which has no body"),
                        );
                    };
                    let params = callee.params.iter().copied().zip(args).collect();
                    stack.push(Frame {
                        func: callee.f.name,
                        pc: 0,
                        regs: HashMap::new(),
                        params,
                        out_params: HashMap::new(),
                    });
                }
            }
        }
        Ok(Trace {
            events: st.events,
            ld_at: st.ld_at,
        })
    }
}

/// What one thread did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Its events, in order.
    pub events: Vec<Event>,
    /// For each ld tag id ([`ld_tag`]), the index of its ld in `events`.
    pub ld_at: HashMap<u32, usize>,
}

struct Frame<'a> {
    func: &'a str,
    pc: usize,
    regs: HashMap<&'a str, u64>,
    params: HashMap<&'a str, u64>,
    out_params: HashMap<&'a str, u64>,
}

enum Flow<'a> {
    Next,
    Jump(usize),
    Return,
    Exit,
    Call(&'a str, Vec<u64>),
}

struct State {
    t: Thread,
    events: Vec<Event>,
    mem: HashMap<u64, u64>,
    seen: HashMap<u32, u32>,
    ld_at: HashMap<u32, usize>,
}

fn get(fr: &Frame<'_>, r: &str, i: &Instr<'_>) -> Result<u64, InterpError> {
    match fr.regs.get(r) {
        Some(v) => Ok(*v),
        None => err(Some(i.pos.line), format!("`{r}` read before it is written")),
    }
}

/// Bits of a PTX type suffix.
fn bits_of(ty: &str) -> Option<u32> {
    Some(match ty {
        "pred" => 1,
        "b8" | "u8" | "s8" => 8,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 16,
        "b32" | "u32" | "s32" | "f32" => 32,
        "b64" | "u64" | "s64" | "f64" => 64,
        _ => return None,
    })
}

fn mask(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

fn f32_to_f16_bits(x: f32) -> u64 {
    // Exact for the small integers the printer converts (|x| < 2048).
    if x == 0.0 {
        return if x.is_sign_negative() { 0x8000 } else { 0 };
    }
    let bits = x.to_bits();
    let sign = (bits >> 16) & 0x8000;
    let exp = ((bits >> 23) & 0xFF) as i32 - 127 + 15;
    let man = (bits >> 13) & 0x3FF;
    u64::from(sign | ((exp.clamp(0, 31) as u32) << 10) | man)
}

impl State {
    fn special(&self, name: &str) -> Option<u64> {
        let t = &self.t;
        Some(u64::from(match name {
            "%laneid" => t.lane,
            "%tid.x" => t.warp * 32 + t.lane,
            "%tid.y" | "%tid.z" | "%ctaid.y" | "%ctaid.z" | "%clusterid.y" | "%clusterid.z" => 0,
            "%ntid.y" | "%ntid.z" | "%nctaid.y" | "%nctaid.z" => 1,
            "%warpid" => t.warp,
            "%cluster_ctarank" | "%cluster_ctaid.x" => t.cta_rank,
            "%clusterid.x" => t.cluster,
            "%cluster_nctarank" | "%cluster_nctaid.x" => t.cluster_size,
            "%ctaid.x" => t.cluster * t.cluster_size + t.cta_rank,
            _ => return None,
        }))
    }

    fn value(&self, fr: &Frame<'_>, o: &Operand<'_>, i: &Instr<'_>) -> Result<u64, InterpError> {
        match o {
            Operand::Reg(r) => match self.special(r) {
                Some(v) => Ok(v),
                None => get(fr, r, i),
            },
            Operand::Imm(v) => Ok(*v as u64),
            // Registers declared in inline asm may have names without `%`.
            Operand::Sym(s) => Ok(fr.regs.get(s).copied().unwrap_or_else(|| symbol_address(s))),
            Operand::Float(f) => {
                let h = f.get(2..).unwrap_or("");
                u64::from_str_radix(h, 16)
                    .or_else(|_| err(Some(i.pos.line), format!("float operand `{f}`")))
            }
            Operand::Addr { base, offset } => {
                let b = if base.is_empty() {
                    0
                } else if base.starts_with('%') {
                    get(fr, base, i)?
                } else {
                    fr.regs
                        .get(base)
                        .copied()
                        .unwrap_or_else(|| symbol_address(base))
                };
                Ok(b.wrapping_add(*offset as u64))
            }
            Operand::Not(inner) => Ok(u64::from(self.value(fr, inner, i)? == 0)),
            other => err(
                Some(i.pos.line),
                format!("operand `{other}` where a value is needed"),
            ),
        }
    }

    fn set<'a>(
        fr: &mut Frame<'a>,
        o: &Operand<'a>,
        v: u64,
        i: &Instr<'_>,
    ) -> Result<(), InterpError> {
        match o {
            Operand::Reg(r) | Operand::Sym(r) => {
                fr.regs.insert(r, v);
                Ok(())
            }
            Operand::Sink => Ok(()),
            other => err(Some(i.pos.line), format!("`{other}` is not a destination")),
        }
    }

    fn load(&self, addr: u64) -> u64 {
        self.mem
            .get(&addr)
            .copied()
            .unwrap_or_else(|| unknown_word(addr))
    }

    fn step<'a>(
        &mut self,
        fr: &mut Frame<'a>,
        func: &Func<'_, 'a>,
        i: &Instr<'a>,
    ) -> Result<Flow<'a>, InterpError> {
        let line = Some(i.pos.line);
        let parts: Vec<&str> = i.opcode.split('.').collect();
        let base = parts[0];
        let ty = parts.iter().rev().find_map(|p| bits_of(p).map(|b| (*p, b)));
        let bits = ty.map_or(64, |t| t.1);
        let signed = ty.is_some_and(|t| t.0.starts_with('s'));
        let ops = &i.operands;
        let arg = |k: usize| -> Result<&Operand<'a>, InterpError> {
            ops.get(k).map_or_else(
                || err(line, format!("`{}` lacks operand {}", i.opcode, k + 1)),
                Ok,
            )
        };
        if i.opcode.starts_with("tcgen05.") {
            return self.tcgen05(fr, i);
        }
        if let Some(name) = sync_name(i.opcode) {
            let mut args = Vec::new();
            let mut first = true;
            for o in ops {
                match o {
                    Operand::Sink => {}
                    // The predicate of try_wait: the wait succeeds at once.
                    Operand::Reg(r) | Operand::Sym(r)
                        if first && i.opcode.starts_with("mbarrier.try_wait") =>
                    {
                        fr.regs.insert(r, 1);
                    }
                    // The state result of arrive is not used by the printer or the lowering.
                    Operand::Reg(r) | Operand::Sym(r)
                        if first && i.opcode.starts_with("mbarrier.arrive") =>
                    {
                        fr.regs.insert(r, 0);
                    }
                    o => args.push(self.value(fr, o, i)?),
                }
                first = false;
            }
            self.events.push(Event::Sync {
                op: name,
                args,
                line: i.pos.line,
            });
            return Ok(Flow::Next);
        }
        let v = |k: usize, s: &Self, fr: &Frame<'a>| -> Result<u64, InterpError> {
            s.value(fr, arg(k)?, i)
        };
        let out = match base {
            "mov" => match (arg(0)?, arg(1)?) {
                (Operand::Vec(dst), src) => {
                    let x = self.value(fr, src, i)?;
                    let w = 64 / dst.len().max(1) as u32;
                    let w = if bits < 64 {
                        bits / dst.len().max(1) as u32
                    } else {
                        w
                    };
                    for (k, d) in dst.iter().enumerate() {
                        Self::set(fr, d, mask(x >> (w * k as u32), w), i)?;
                    }
                    return Ok(Flow::Next);
                }
                (_, Operand::Vec(src)) => {
                    let w = bits / src.len().max(1) as u32;
                    let mut x = 0u64;
                    for (k, s) in src.iter().enumerate() {
                        x |= mask(self.value(fr, s, i)?, w) << (w * k as u32);
                    }
                    x
                }
                (_, src) => self.value(fr, src, i)?,
            },
            "add" | "sub" | "mul" | "and" | "or" | "xor" | "shl" | "shr" | "min" | "max"
            | "div" | "rem" => {
                let (a, b) = (v(1, self, fr)?, v(2, self, fr)?);
                let wide = parts.contains(&"wide");
                let hi = parts.contains(&"hi");
                let (sa, sb) = (sext(a, bits), sext(b, bits));
                let r = match base {
                    "add" => a.wrapping_add(b),
                    "sub" => a.wrapping_sub(b),
                    "mul" if wide && signed => (sa.wrapping_mul(sb)) as u64,
                    "mul" if wide => mask(a, bits).wrapping_mul(mask(b, bits)),
                    "mul" if hi => {
                        if signed {
                            ((i128::from(sa) * i128::from(sb)) >> bits) as u64
                        } else {
                            ((u128::from(mask(a, bits)) * u128::from(mask(b, bits))) >> bits) as u64
                        }
                    }
                    "mul" => a.wrapping_mul(b),
                    "and" => a & b,
                    "or" => a | b,
                    "xor" => a ^ b,
                    "shl" => {
                        if b >= u64::from(bits) {
                            0
                        } else {
                            a << b
                        }
                    }
                    "shr" if signed => (sa >> b.min(63)) as u64,
                    "shr" => {
                        if b >= u64::from(bits) {
                            0
                        } else {
                            mask(a, bits) >> b
                        }
                    }
                    "min" if signed => sa.min(sb) as u64,
                    "max" if signed => sa.max(sb) as u64,
                    "min" => mask(a, bits).min(mask(b, bits)),
                    "max" => mask(a, bits).max(mask(b, bits)),
                    "div" | "rem" if mask(b, bits) == 0 => return err(line, "division by zero"),
                    "div" if signed => sa.wrapping_div(sb) as u64,
                    "rem" if signed => sa.wrapping_rem(sb) as u64,
                    "div" => mask(a, bits) / mask(b, bits),
                    _ => mask(a, bits) % mask(b, bits),
                };
                let r = if wide { mask(r, bits * 2) } else { r };
                Self::set(fr, arg(0)?, if wide { r } else { mask(r, bits) }, i)?;
                return Ok(Flow::Next);
            }
            "mad" => {
                let (a, b, c) = (v(1, self, fr)?, v(2, self, fr)?, v(3, self, fr)?);
                if parts.contains(&"wide") {
                    let p = if signed {
                        sext(a, bits).wrapping_mul(sext(b, bits)) as u64
                    } else {
                        mask(a, bits).wrapping_mul(mask(b, bits))
                    };
                    Self::set(fr, arg(0)?, mask(p.wrapping_add(c), bits * 2), i)?;
                    return Ok(Flow::Next);
                }
                a.wrapping_mul(b).wrapping_add(c)
            }
            "bfe" => {
                let (a, pos, len) = (
                    v(1, self, fr)?,
                    v(2, self, fr)? & 0xFF,
                    v(3, self, fr)? & 0xFF,
                );
                let pos = pos.min(u64::from(bits));
                let len = len.min(u64::from(bits) - pos) as u32;
                let x = mask(mask(a, bits) >> pos, len);
                if signed && len > 0 {
                    sext(x, len) as u64
                } else {
                    x
                }
            }
            "bfi" => {
                let (f, b) = (v(1, self, fr)?, v(2, self, fr)?);
                let (pos, len) = (v(3, self, fr)? & 0xFF, v(4, self, fr)? & 0xFF);
                let pos = pos.min(u64::from(bits)) as u32;
                let len = (len as u32).min(bits - pos);
                let m = mask(u64::MAX, len) << pos;
                (b & !m) | ((f << pos) & m)
            }
            "prmt" => {
                let (a, b, c) = (v(1, self, fr)?, v(2, self, fr)?, v(3, self, fr)?);
                if parts.len() > 2 && bits_of(parts[1]).is_none() {
                    return err(line, format!("byte permute mode `{}`", i.opcode));
                }
                let bytes = (mask(b, 32) << 32) | mask(a, 32);
                let mut r = 0u64;
                for k in 0..4 {
                    let sel = (c >> (4 * k)) & 0xF;
                    let byte = (bytes >> (8 * (sel & 7))) & 0xFF;
                    let byte = if sel & 8 != 0 {
                        if byte & 0x80 != 0 { 0xFF } else { 0 }
                    } else {
                        byte
                    };
                    r |= byte << (8 * k);
                }
                r
            }
            "popc" => u64::from(mask(v(1, self, fr)?, bits).count_ones()),
            "clz" => u64::from(mask(v(1, self, fr)?, bits).leading_zeros() - (64 - bits)),
            "brev" => mask(v(1, self, fr)?, bits).reverse_bits() >> (64 - bits),
            "cnot" => u64::from(mask(v(1, self, fr)?, bits) == 0),
            "not" => !v(1, self, fr)?,
            "neg" => v(1, self, fr)?.wrapping_neg(),
            "abs" => sext(v(1, self, fr)?, bits).unsigned_abs(),
            "selp" => {
                if v(3, self, fr)? != 0 {
                    v(1, self, fr)?
                } else {
                    v(2, self, fr)?
                }
            }
            "setp" => {
                let cmp = parts.get(1).copied().unwrap_or("");
                let (a, b) = (v(1, self, fr)?, v(2, self, fr)?);
                let (ua, ub) = (mask(a, bits), mask(b, bits));
                let (sa, sb) = (sext(a, bits), sext(b, bits));
                let r = match cmp {
                    "eq" => ua == ub,
                    "ne" => ua != ub,
                    "lt" if signed => sa < sb,
                    "le" if signed => sa <= sb,
                    "gt" if signed => sa > sb,
                    "ge" if signed => sa >= sb,
                    "lt" | "lo" => ua < ub,
                    "le" | "ls" => ua <= ub,
                    "gt" | "hi" => ua > ub,
                    "ge" | "hs" => ua >= ub,
                    _ => return err(line, format!("comparison `{}`", i.opcode)),
                };
                match arg(0)? {
                    Operand::Pair(p, q) => {
                        Self::set(fr, p, u64::from(r), i)?;
                        Self::set(fr, q, u64::from(!r), i)?;
                    }
                    d => Self::set(fr, d, u64::from(r), i)?,
                }
                return Ok(Flow::Next);
            }
            "cvt" => {
                let tys: Vec<(&str, u32)> = parts
                    .iter()
                    .filter_map(|p| bits_of(p).map(|b| (*p, b)))
                    .collect();
                let [(dt, db), (st_, sb)] = tys[..] else {
                    return err(line, format!("conversion `{}`", i.opcode));
                };
                let x = v(1, self, fr)?;
                let val = if st_.starts_with('s') {
                    sext(x, sb)
                } else {
                    mask(x, sb) as i64
                };
                match (dt, st_) {
                    ("f32", s) if !s.starts_with('f') => u64::from((val as f32).to_bits()),
                    ("f16", s) if !s.starts_with('f') => f32_to_f16_bits(val as f32),
                    (d, s) if !d.starts_with('f') && !s.starts_with('f') => mask(val as u64, db),
                    _ => return err(line, format!("conversion `{}`", i.opcode)),
                }
            }
            "cvta" => {
                let x = v(1, self, fr)?;
                let to = parts.get(1) == Some(&"to");
                match (to, parts.contains(&"shared")) {
                    (false, true) => x.wrapping_add(SHARED_WINDOW),
                    (true, true) => x.wrapping_sub(SHARED_WINDOW),
                    _ => x,
                }
            }
            "mapa" => v(1, self, fr)? | (v(2, self, fr)? << 24),
            "elect" => {
                let p = u64::from(self.t.lane == 0);
                match arg(0)? {
                    Operand::Pair(d, q) => {
                        Self::set(fr, d, 0, i)?;
                        Self::set(fr, q, p, i)?;
                    }
                    d => Self::set(fr, d, p, i)?,
                }
                return Ok(Flow::Next);
            }
            "ld" => {
                let space = parts.get(1).copied().unwrap_or("");
                let Operand::Addr { base: b, offset } = arg(1)? else {
                    return err(line, format!("`{}` without an address", i.opcode));
                };
                let dsts: Vec<&Operand<'a>> = match arg(0)? {
                    Operand::Vec(d) => d.iter().collect(),
                    d => vec![d],
                };
                let step = u64::from(bits / 8).max(1);
                for (k, d) in dsts.into_iter().enumerate() {
                    let off = (*offset as u64).wrapping_add(step * k as u64);
                    let x = if space == "param" && !b.starts_with('%') {
                        let key = *b;
                        match fr.params.get(key).or_else(|| fr.out_params.get(key)) {
                            Some(p) if off == 0 => *p,
                            _ => return err(line, format!("read of parameter `{key}+{off}`")),
                        }
                    } else {
                        let a = self.value(
                            fr,
                            &Operand::Addr {
                                base: b,
                                offset: off as i64,
                            },
                            i,
                        )?;
                        mask(self.load(a), bits)
                    };
                    Self::set(fr, d, x, i)?;
                }
                return Ok(Flow::Next);
            }
            "st" => {
                let space = parts.get(1).copied().unwrap_or("");
                let Operand::Addr { base: b, offset } = arg(0)? else {
                    return err(line, format!("`{}` without an address", i.opcode));
                };
                let srcs: Vec<&Operand<'a>> = match arg(1)? {
                    Operand::Vec(s) => s.iter().collect(),
                    s => vec![s],
                };
                let step = u64::from(bits / 8).max(1);
                for (k, s) in srcs.into_iter().enumerate() {
                    let x = mask(self.value(fr, s, i)?, bits);
                    let off = (*offset as u64).wrapping_add(step * k as u64);
                    if space == "param" {
                        if off != 0 {
                            return err(line, "a parameter written at an offset");
                        }
                        fr.out_params.insert(b, x);
                        continue;
                    }
                    let a = self.value(
                        fr,
                        &Operand::Addr {
                            base: b,
                            offset: off as i64,
                        },
                        i,
                    )?;
                    let in_window = (SHARED_WINDOW..PARAM_BASE).contains(&a);
                    let sp = if space == "shared" || in_window {
                        Space::Shared
                    } else {
                        Space::Global
                    };
                    let a = if in_window { a - SHARED_WINDOW } else { a };
                    self.mem.insert(a, x);
                    self.events.push(Event::Store {
                        space: sp,
                        addr: a,
                        value: x,
                        line: i.pos.line,
                    });
                }
                return Ok(Flow::Next);
            }
            "bra" => {
                let Operand::Sym(l) = arg(0)? else {
                    return err(line, "branch without a label");
                };
                return self.jump(func, l, line);
            }
            "brx" => {
                let k = v(0, self, fr)? as usize;
                let Operand::Sym(t) = arg(1)? else {
                    return err(line, "brx.idx without a table");
                };
                let Some(l) = func.tables.get(t).and_then(|tab| tab.get(k)) else {
                    return err(line, format!("brx.idx index {k} outside table `{t}`"));
                };
                return self.jump(func, l, line);
            }
            "ret" => return Ok(Flow::Return),
            "exit" | "trap" => return Ok(Flow::Exit),
            "call" => {
                let mut callee = None;
                let mut args = Vec::new();
                let mut seen_callee = false;
                for o in ops {
                    match o {
                        Operand::Sym(s) if !seen_callee => {
                            callee = Some(*s);
                            seen_callee = true;
                        }
                        Operand::Paren(list) if seen_callee => {
                            for a in list {
                                args.push(match a {
                                    Operand::Sym(p) | Operand::Reg(p)
                                        if fr.out_params.contains_key(p) =>
                                    {
                                        fr.out_params[p]
                                    }
                                    other => self.value(fr, other, i)?,
                                });
                            }
                        }
                        _ => {}
                    }
                }
                let Some(c) = callee else {
                    return err(line, "call without a callee");
                };
                return Ok(Flow::Call(c, args));
            }
            "nanosleep" | "prefetch" | "prefetchu" => return Ok(Flow::Next),
            _ => {
                return err(
                    line,
                    format!("instruction `{}` is not interpreted", i.opcode),
                );
            }
        };
        let out = mask(out, bits);
        Self::set(fr, arg(0)?, out, i)?;
        Ok(Flow::Next)
    }

    fn jump<'a>(
        &self,
        func: &Func<'_, 'a>,
        l: &str,
        line: Option<u32>,
    ) -> Result<Flow<'a>, InterpError> {
        match func.labels.get(l) {
            Some(pc) => Ok(Flow::Jump(*pc)),
            None => err(line, format!("branch to unknown label `{l}`")),
        }
    }

    fn tcgen05<'a>(&mut self, fr: &mut Frame<'a>, i: &Instr<'a>) -> Result<Flow<'a>, InterpError> {
        let Some(form) = i.form else {
            return err(
                Some(i.pos.line),
                format!("`{}` is not a tcgen05 form the model knows", i.opcode),
            );
        };
        let mut args = Vec::new();
        let is_ld = matches!(form, Form::Ld(_));
        for (k, o) in i.operands.iter().enumerate() {
            match o {
                // The destinations of an ld get their tags below.
                _ if is_ld && k == 0 => {}
                Operand::Vec(xs) => {
                    for x in xs {
                        args.push(self.value(fr, x, i)?);
                    }
                }
                o => args.push(self.value(fr, o, i)?),
            }
        }
        let form = normalize(form);
        if is_ld {
            let id = ld_id(&form, &args, &mut self.seen);
            self.ld_at.insert(id, self.events.len());
            match &i.operands[0] {
                Operand::Vec(regs) => {
                    for (j, r) in regs.iter().enumerate() {
                        Self::set(fr, r, ld_tag(id, j as u32), i)?;
                    }
                }
                r => Self::set(fr, r, ld_tag(id, 0), i)?,
            }
        }
        self.events.push(Event::Tc {
            form,
            args,
            line: i.pos.line,
        });
        Ok(Flow::Next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::ptx::parse_module;

    fn thread(warp: u32, lane: u32) -> Thread {
        Thread {
            cta_rank: 0,
            cluster: 0,
            cluster_size: 1,
            warp,
            lane,
        }
    }

    #[test]
    fn a_printed_program_runs_and_records_its_tcgen05_instructions() {
        let src = "\
.version 8.6
.target sm_100a
.address_size 64
.shared .align 16 .b32 tc_slot[1];
.visible .entry tc_kernel(.param .u64 obs)
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<9>;
\t.reg .b64 %rd<3>;
\tld.param.u64 %rd1, [obs];
\tmov.u32 %r1, %laneid;
\tsetp.lt.u32 %p1, %r1, 4;
\t@!%p1 bra $SKIP;
\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tc_slot], 32;
$SKIP:
\tld.shared.u32 %r2, [tc_slot];
\tadd.u32 %r2, %r2, 65536;
\ttcgen05.ld.sync.aligned.32x32b.x2.b32 {%r3, %r4}, [%r2];
\ttcgen05.wait::ld.sync.aligned;
\tst.global.u32 [%rd1+8], %r4;
\tret;
}
";
        let m = parse_module(src, "t.ptx").unwrap();
        let p = Program::new(&m, "tc_kernel").unwrap();
        let t0 = p.run(thread(0, 0), 1000).unwrap();
        let lane0 = &t0.events;
        let lane9 = p.run(thread(0, 9), 1000).unwrap().events;
        // Lane 0 allocates (4 events: alloc, ld, wait, store); lane 9 does not.
        assert_eq!(lane0.len(), 4, "{lane0:?}");
        assert_eq!(lane9.len(), 3, "{lane9:?}");
        let slot = symbol_address("tc_slot");
        assert!(matches!(&lane0[0], Event::Tc { args, .. } if args == &vec![slot, 32]));
        // The ld's address is the unknown word of the slot plus the lane offset.
        let taddr = unknown_word(slot) + 65536;
        assert!(matches!(&lane0[1], Event::Tc { args, .. } if args == &vec![taddr]));
        // The store holds register 1 of the ld, which is event 1.
        let Event::Store {
            space,
            addr,
            value,
            line,
        } = lane0[3]
        else {
            panic!("{lane0:?}")
        };
        assert_eq!((space, addr, line), (Space::Global, PARAM_BASE + 8, 20));
        let id = tag_ld(value).expect("an ld tag");
        assert_eq!(value, ld_tag(id, 1));
        assert_eq!(t0.ld_at[&id], 1);
    }

    #[test]
    fn unknown_instructions_are_errors_that_name_the_line() {
        let src = ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n\tfrobnicate.u32 %r1, 2;\n\tret;\n}\n";
        let m = parse_module(src, "t.ptx").unwrap();
        let e = Program::new(&m, "k")
            .unwrap()
            .run(thread(0, 0), 100)
            .unwrap_err();
        assert_eq!(e.line, Some(6));
        assert!(e.msg.contains("frobnicate"), "{e}");
        assert!(Program::new(&m, "nope").is_err());
    }

    #[test]
    fn a_loop_past_the_limit_stops() {
        let src = ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n$T:\n\tbra $T;\n}\n";
        let m = parse_module(src, "t.ptx").unwrap();
        let e = Program::new(&m, "k")
            .unwrap()
            .run(thread(0, 0), 50)
            .unwrap_err();
        assert!(e.msg.contains("more than 50"), "{e}");
    }
}
