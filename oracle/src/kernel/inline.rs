//! Following calls: a kernel's body in which every `call` of a function of the module that has
//! a body with tcgen05 instructions (directly or through its own calls) is replaced by that body,
//! so that the path walk sees the callee's tcgen05 instructions where the kernel executes them.
//!
//! The callee's registers and labels are renamed per call site (`%r1` becomes `%r1$c2`), its
//! `ret` becomes a branch to the end of the inlined body, its parameters hold unknown values.
//! Calls nested deeper than [`MAX_DEPTH`] and recursive calls are kept as calls (the walk notes
//! them). The new names live in an arena of strings built by a first pass of the same expansion
//! ([`Inlined::new`]), so that the statements can borrow them.

use std::collections::HashSet;
use tcgen05_ir::ptx::parse::{Function, Guard, Instr, Module, Operand, Stmt};

/// Nesting depth up to which calls are followed.
pub(crate) const MAX_DEPTH: usize = 4;

/// Whether `f` or a function it calls (in `m`, up to [`MAX_DEPTH`]) has a tcgen05 instruction.
pub(crate) fn reaches_tcgen05(m: &Module<'_>, f: &Function<'_>, depth: usize) -> bool {
    f.instrs().any(|i| i.opcode.starts_with("tcgen05."))
        || (depth < MAX_DEPTH
            && f.instrs().filter_map(callee).any(|c| {
                m.function(c)
                    .is_some_and(|g| g.body.is_some() && reaches_tcgen05(m, g, depth + 1))
            }))
}

/// The function a `call` instruction names, if it is one.
fn callee<'a>(i: &Instr<'a>) -> Option<&'a str> {
    if i.opcode != "call" && !i.opcode.starts_with("call.") {
        return None;
    }
    i.operands.iter().find_map(|o| match o {
        Operand::Sym(s) => Some(*s),
        _ => None,
    })
}

/// The registers a body declares with `.reg` (`%r<8>` declares `%r0`..`%r7`): as prefixes
/// (`%r`) and single names (`%p1`).
fn declared(body: &[Stmt<'_>]) -> (Vec<String>, HashSet<String>) {
    let (mut prefixes, mut names) = (Vec::new(), HashSet::new());
    for s in body {
        let Stmt::Decl(words, _) = s else { continue };
        if words.first() != Some(&".reg") {
            continue;
        }
        for w in words.iter().filter(|w| w.starts_with('%')) {
            for name in w.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                match name.split_once('<') {
                    Some((p, _)) => prefixes.push(p.to_string()),
                    None => {
                        names.insert(name.to_string());
                    }
                }
            }
        }
    }
    (prefixes, names)
}

/// A kernel body with its calls inlined, and an arena holding the names it borrows.
pub(crate) struct Inlined {
    arena: Vec<String>,
}

/// One expansion pass: the first collects the new names, the second borrows them.
struct Pass<'m, 'a, 's, 'n> {
    m: &'m Module<'a>,
    next_site: usize,
    namer: &'n mut dyn FnMut(String) -> &'s str,
}

impl Inlined {
    /// Runs the first pass (collecting the new names) for `f`.
    pub(crate) fn new(m: &Module<'_>, f: &Function<'_>) -> Inlined {
        let mut arena = Vec::new();
        {
            let mut push = |s: String| -> &str {
                arena.push(s);
                ""
            };
            let mut p = Pass {
                m,
                next_site: 0,
                namer: &mut push,
            };
            let mut out = Vec::new();
            let mut from_callee = Vec::new();
            p.body(f, 0, &mut Vec::new(), &mut out, &mut from_callee, None);
        }
        Inlined { arena }
    }

    /// The second pass: `f`'s body with its calls inlined, and for each of its instructions
    /// whether it comes from a callee.
    pub(crate) fn function<'s, 'a: 's>(
        &'s self,
        m: &Module<'a>,
        f: &Function<'a>,
    ) -> (Function<'s>, Vec<bool>) {
        let mut names = self.arena.iter();
        let mut take = |_: String| -> &'s str { names.next().map_or("", String::as_str) };
        let mut p = Pass {
            m,
            next_site: 0,
            namer: &mut take,
        };
        let mut out = Vec::new();
        let mut from_callee = Vec::new();
        p.body(f, 0, &mut Vec::new(), &mut out, &mut from_callee, None);
        let g = Function {
            name: f.name,
            is_entry: f.is_entry,
            returns: f.returns.clone(),
            params: f.params.clone(),
            directives: f.directives.clone(),
            body: Some(out),
            pos: f.pos,
        };
        (g, from_callee)
    }
}

/// Renaming of one inlined call site.
struct Site {
    suffix: String,
    prefixes: Vec<String>,
    names: HashSet<String>,
    labels: HashSet<String>,
    ret_label: String,
}

impl Site {
    fn is_reg(&self, r: &str) -> bool {
        self.names.contains(r)
            || self.prefixes.iter().any(|p| {
                r.strip_prefix(p.as_str())
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()))
            })
    }
}

impl<'a, 's> Pass<'_, 'a, 's, '_>
where
    'a: 's,
{
    fn rename(&mut self, site: Option<&Site>, name: &'a str, is_label: bool) -> &'s str {
        match site {
            Some(s) if (is_label && s.labels.contains(name)) || (!is_label && s.is_reg(name)) => {
                (self.namer)(format!("{name}{}", s.suffix))
            }
            _ => name,
        }
    }

    fn operand(&mut self, site: Option<&Site>, o: &Operand<'a>) -> Operand<'s> {
        match o {
            Operand::Reg(r) => Operand::Reg(self.rename(site, r, false)),
            Operand::Imm(v) => Operand::Imm(*v),
            Operand::Float(x) => Operand::Float(x),
            Operand::Sym(x) => Operand::Sym(self.rename(site, x, true)),
            Operand::Addr { base, offset } => Operand::Addr {
                base: self.rename(site, base, false),
                offset: *offset,
            },
            Operand::Tensor { base, rest } => Operand::Tensor {
                base: self.rename(site, base, false),
                rest: rest.iter().map(|x| self.operand(site, x)).collect(),
            },
            Operand::Vec(v) => Operand::Vec(v.iter().map(|x| self.operand(site, x)).collect()),
            Operand::Pair(a, b) => Operand::Pair(
                Box::new(self.operand(site, a)),
                Box::new(self.operand(site, b)),
            ),
            Operand::Paren(v) => Operand::Paren(v.iter().map(|x| self.operand(site, x)).collect()),
            Operand::Sink => Operand::Sink,
            Operand::Not(x) => Operand::Not(Box::new(self.operand(site, x))),
        }
    }

    fn guard(&mut self, site: Option<&Site>, g: Option<Guard<'a>>) -> Option<Guard<'s>> {
        g.map(|g| Guard {
            negated: g.negated,
            pred: self.rename(site, g.pred, false),
        })
    }

    /// Appends `f`'s body (renamed for `site` when inlined) to `out`, inlining its calls.
    fn body(
        &mut self,
        f: &Function<'a>,
        depth: usize,
        stack: &mut Vec<&'a str>,
        out: &mut Vec<Stmt<'s>>,
        from_callee: &mut Vec<bool>,
        site: Option<&Site>,
    ) {
        let Some(body) = &f.body else { return };
        stack.push(f.name);
        for s in body {
            match s {
                Stmt::Label(l, p) => out.push(Stmt::Label(self.rename(site, l, true), *p)),
                // Declarations are not needed by the walk; the callee's would clash.
                Stmt::Decl(..) if site.is_some() => {}
                Stmt::Decl(w, p) => out.push(Stmt::Decl(w.clone(), *p)),
                Stmt::Instr(i) => {
                    let m = self.m;
                    let target = callee(i)
                        .and_then(|c| m.functions.iter().find(|g| g.name == c))
                        .filter(|g| {
                            g.body.is_some()
                                && depth < MAX_DEPTH
                                && !stack.contains(&g.name)
                                && reaches_tcgen05(self.m, g, depth + 1)
                        });
                    if let Some(g) = target {
                        self.inline(g, depth, stack, out, from_callee, site, i);
                        continue;
                    }
                    let ins = match site {
                        Some(st) if i.opcode == "ret" || i.opcode.starts_with("ret.") => {
                            let label = (self.namer)(st.ret_label.clone());
                            Instr {
                                guard: self.guard(site, i.guard),
                                opcode: "bra",
                                operands: vec![Operand::Sym(label)],
                                form: None,
                                ill_formed: None,
                                pos: i.pos,
                            }
                        }
                        _ => Instr {
                            guard: self.guard(site, i.guard),
                            opcode: i.opcode,
                            operands: i.operands.iter().map(|o| self.operand(site, o)).collect(),
                            form: i.form,
                            ill_formed: i.ill_formed.clone(),
                            pos: i.pos,
                        },
                    };
                    out.push(Stmt::Instr(ins));
                    from_callee.push(site.is_some());
                }
            }
        }
        stack.pop();
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "the expansion's state, passed down one call level"
    )]
    fn inline(
        &mut self,
        g: &Function<'a>,
        depth: usize,
        stack: &mut Vec<&'a str>,
        out: &mut Vec<Stmt<'s>>,
        from_callee: &mut Vec<bool>,
        outer: Option<&Site>,
        call: &Instr<'a>,
    ) {
        self.next_site += 1;
        let body = g.body.as_deref().unwrap_or(&[]);
        let (prefixes, names) = declared(body);
        let suffix = format!("$c{}", self.next_site);
        let site = Site {
            ret_label: format!("$ret{suffix}"),
            labels: body
                .iter()
                .filter_map(|s| match s {
                    Stmt::Label(l, _) => Some(l.to_string()),
                    _ => None,
                })
                .collect(),
            suffix,
            prefixes,
            names,
        };
        // A guarded call: skip the inlined body where the guard is false.
        let skip = call.guard.map(|gd| {
            let label = (self.namer)(format!("$skip{}", site.suffix));
            let pred = self.rename(outer, gd.pred, false);
            out.push(Stmt::Instr(Instr {
                guard: Some(Guard {
                    negated: !gd.negated,
                    pred,
                }),
                opcode: "bra",
                operands: vec![Operand::Sym(label)],
                form: None,
                ill_formed: None,
                pos: call.pos,
            }));
            from_callee.push(outer.is_some());
            label
        });
        self.body(g, depth + 1, stack, out, from_callee, Some(&site));
        let ret = (self.namer)(site.ret_label.clone());
        out.push(Stmt::Label(ret, call.pos));
        if let Some(label) = skip {
            out.push(Stmt::Label(label, call.pos));
        }
    }
}
