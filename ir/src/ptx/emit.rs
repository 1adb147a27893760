//! The PTX printer: every [`Program`] prints as one complete, self-contained PTX module.
//!
//! The module has `.version`, `.target`, `.address_size 64`, the shared-memory scaffolding
//! (alloc slots `tc_slot`, mbarriers `tc_mbar`, data regions `tc_data<n>`), one `.func f<n>`
//! per function and one `.visible .entry tc_kernel(.param .u64 obs)`. The same program always
//! prints the same bytes.
//!
//! Every statement prints as a fixed idiom that [`super::lift`] reads back: operands are
//! computed into fresh registers right before their use (`ld.shared.u32` of a slot plus an
//! `add.u32` for a TMEM address, `mov` for immediates held in registers), structured control
//! flow uses labels named after the construct (`$I<n>_else`, `$L<n>_top`, ...), and the
//! observation records follow the layout of [`crate::observe`].

use crate::form::Form;
use crate::observe::{self, Layout, Site};
use crate::program::*;
use crate::qual::*;
use crate::values;
use std::fmt::Write as _;

/// Writes one tab-indented line into the body's code without an intermediate `String`.
macro_rules! ln {
    ($b:expr, $($arg:tt)*) => {{
        $b.code.push('\t');
        let _ = write!($b.code, $($arg)*);
        $b.code.push('\n');
    }};
}

/// Writes one label line into the body's code.
macro_rules! lb {
    ($b:expr, $($arg:tt)*) => {{
        let _ = write!($b.code, $($arg)*);
        $b.code.push_str(":\n");
    }};
}

/// Words of `tc_scratch`: 4 * 256 slots or 8 * 256 mbarriers fit.
const SCRATCH_WORDS: u32 = 512;

/// Prints `p` as a PTX module.
pub fn emit(p: &Program) -> String {
    let mut out = String::with_capacity(4096);
    emit_into(p, &mut out);
    out
}

/// Prints `p` as a PTX module into `out` (cleared first).
pub fn emit_into(p: &Program, out: &mut String) {
    emit_with(p, &Native::default(), out);
}

/// Prints `p` as a PTX module into `out` (cleared first), with `low` lowering each tcgen05
/// instruction and supplying the module parts around the program's own ([`Lowering`]). The
/// body structure (warp dispatch, observation records, `If`/`Loop`/`MbarWait`/barriers,
/// register numbering) is this printer's whatever the lowering.
pub fn emit_with<L: Lowering>(p: &Program, low: &L, out: &mut String) {
    out.clear();
    let layout = Layout::of(p);
    let l = &p.launch;
    low.head(p, out);
    if p.smem.slots > 0 {
        let _ = writeln!(out, ".shared .align 16 .b32 tc_slot[{}];", p.smem.slots);
    }
    if p.smem.mbarriers > 0 {
        let _ = writeln!(out, ".shared .align 16 .b64 tc_mbar[{}];", p.smem.mbarriers);
    }
    for r in 0..p.smem.regions.len() as u8 {
        let _ = writeln!(
            out,
            ".shared .align 1024 .b8 tc_data{r}[{}];",
            p.smem.region_bytes(r)
        );
    }
    low.decls(p, out);
    // Scratch global memory for the undefined-behaviour forms that point a generic address
    // outside shared memory (ALLOC-DST-SHARED, COMMIT-MBAR-WINDOW); 2 KiB covers every u8 slot
    // or mbarrier offset.
    let _ = writeln!(out, ".global .align 16 .b32 tc_scratch[{SCRATCH_WORDS}];\n");
    low.helpers(p, &layout, out);
    let (param, arg) = match low.extra_param() {
        Some(x) => (format!(", .param .u64 {x}"), format!(", %{x}")),
        None => (String::new(), String::new()),
    };
    for i in 0..p.funcs.len() {
        let _ = writeln!(out, ".func f{i}(.param .u64 obsw{param});");
    }
    if !p.funcs.is_empty() {
        out.push('\n');
    }
    for (i, f) in p.funcs.iter().enumerate() {
        let _ = writeln!(out, ".func f{i}(.param .u64 obsw{param})\n{{");
        let mut b = Body::new(p, &layout, low.clone());
        b.call_arg = &arg;
        b.preamble_func();
        b.block(&f.body, &layout.func_sites[i], &mut 0);
        b.line("ret;");
        b.finish(out);
        out.push_str("}\n\n");
    }
    let _ = writeln!(
        out,
        ".visible .entry tc_kernel(.param .u64 obs{})",
        low.extra_param()
            .map(|x| format!(", .param .u64 {x}"))
            .unwrap_or_default()
    );
    let _ = writeln!(out, ".reqntid {}, 1, 1", l.threads_per_cta());
    if l.declare_cluster {
        let _ = writeln!(out, ".reqnctapercluster {}, 1, 1", l.cluster_size);
        out.push_str(".explicitcluster\n");
    }
    out.push_str("{\n");
    let mut b = Body::new(p, &layout, low.clone());
    b.call_arg = &arg;
    b.preamble_entry();
    L::entry_preamble(&mut b);
    for w in 0..p.warps.len() {
        ln!(b, "setp.eq.u32 %p0, %warp, {w};");
        ln!(b, "@%p0 bra $W{w};");
    }
    b.line("bra.uni $END;");
    let store = low.checkpoint_store();
    for (w, code) in p.warps.iter().enumerate() {
        lb!(b, "$W{w}");
        ln!(
            b,
            "add.u64 %obsw, %obscta, {};",
            u64::from(layout.warp_base[w]) * 4
        );
        b.line("mul.wide.u32 %rd0, %lane, 4;");
        b.line("add.u64 %obsl, %obsw, %rd0;");
        ln!(b, "{store} [%obsl], {};", observe::CHECKPOINT_START);
        b.block(code, &layout.warp_sites[w], &mut 0);
        ln!(b, "{store} [%obsl], {};", observe::CHECKPOINT_DONE);
        b.line("bra.uni $END;");
    }
    b.label("$END");
    L::before_exit(&mut b);
    b.line("ret;");
    b.finish(out);
    out.push_str("}\n");
}

/// How a printed module lowers tcgen05 instructions, and what it adds around the program's
/// own parts. [`Native`] prints each instruction as itself (the module of [`emit`]); another
/// implementation may replace them by other PTX (an emulation over shared memory, say) while
/// the printer keeps the body structure, the statement idioms and the observation records.
///
/// Module-level hooks take `&self`; body-level hooks take the [`Body`] being printed, which
/// owns a clone of the lowering as per-body state ([`Body::low`]).
pub trait Lowering: Clone {
    /// Prints the module's head: comments, `.version`, `.target`, `.address_size`.
    fn head(&self, p: &Program, out: &mut String) {
        let l = &p.launch;
        let _ = writeln!(
            out,
            "//\n// Generated by tcgen05-fuzz (tcgen05-ir {})",
            env!("CARGO_PKG_VERSION")
        );
        // The launch configuration is not expressible in PTX; a runner needs it, so it is
        // recorded here (and read back by the lifter): grid = clusters * cluster_size CTAs
        // along x.
        let _ = writeln!(
            out,
            "// launch: clusters={} cluster_size={} warps_per_cta={}\n//",
            l.clusters, l.cluster_size, l.warps_per_cta
        );
        let _ = writeln!(out, ".version {}", l.ptx_version);
        let _ = writeln!(out, ".target {}", l.target);
        out.push_str(".address_size 64\n\n");
    }

    /// Prints declarations of the lowering's own after the program's shared memory.
    fn decls(&self, _p: &Program, _out: &mut String) {}

    /// Prints helper functions (declared and defined) before the program's functions.
    fn helpers(&self, _p: &Program, _layout: &Layout, _out: &mut String) {}

    /// A 64-bit parameter of the kernel that every function takes too (declared in every
    /// signature, loaded in every function's preamble, passed in every call); its register
    /// (`%` and the name) is declared by [`Lowering::extra_regs`].
    fn extra_param(&self) -> Option<&'static str> {
        None
    }

    /// Lines at the end of the kernel's preamble, before the warp dispatch.
    fn entry_preamble(_b: &mut Body<'_, Self>) {}

    /// Lines before a thread ends (the kernel's `ret` and every `exit`).
    fn before_exit(_b: &mut Body<'_, Self>) {}

    /// The instruction that writes a checkpoint word.
    fn checkpoint_store(&self) -> &'static str {
        "st.global.u32"
    }

    /// The mbarrier test instruction of one try of an `MbarWait` (`try_wait` or `test_wait`).
    fn mbar_try(&self) -> &'static str {
        "try_wait"
    }

    /// Lines after a failed try of an `MbarWait` when another try follows (predicate `q`).
    fn mbar_backoff(_b: &mut Body<'_, Self>, _q: u32) {}

    /// The `_` or a register that receives an `mbarrier.arrive`'s state.
    fn arrive_state(_b: &mut Body<'_, Self>) -> String {
        "_".into()
    }

    /// Lines at the end of a body's code (a shared tail the lowering branches to).
    fn tail(_b: &mut Body<'_, Self>) {}

    /// Register declarations of the lowering's own, each line ending in a newline.
    fn extra_regs(&self) -> &'static str {
        ""
    }

    /// Prints one tcgen05 instruction. An `Ld` at `site` leaves its registers in `pending`;
    /// the block records them at its end or at the next `wait::ld` ([`Body::flush`]).
    fn op(b: &mut Body<'_, Self>, op: &Op, site: Option<Site>, pending: &mut Vec<Pending>);
}

/// The lowering of [`emit`]: each tcgen05 instruction printed as itself.
#[derive(Debug, Clone, Default)]
pub struct Native {
    /// The opcode text of the instruction being printed (reused: printing speed).
    opbuf: String,
}

impl Lowering for Native {
    fn op(b: &mut Body<'_, Self>, op: &Op, site: Option<Site>, pending: &mut Vec<Pending>) {
        let mut opcode = std::mem::take(&mut b.low.opbuf);
        opcode.clear();
        op.form().write_opcode(&mut opcode);
        b.op_with(op, &opcode, site, pending);
        b.low.opbuf = opcode;
    }
}

/// Registers and labels of one function body while it is printed.
///
/// Registers are numbered per body from 1 (`%p0`, `%r0` and `%rd0` are the dispatch and
/// scratch registers) and declared by [`Body::finish`]; every helper that needs one takes a
/// fresh one.
#[derive(Debug)]
pub struct Body<'a, L> {
    /// The program being printed.
    pub p: &'a Program,
    layout: &'a Layout,
    code: String,
    r: u32,
    rd: u32,
    pr: u32,
    h: u32,
    labels: u32,
    call_arg: &'a str,
    /// The lowering's per-body state.
    pub low: L,
}

/// An ld whose registers are still to be recorded.
#[derive(Debug)]
pub struct Pending {
    /// The registers, in the order of the site's data words.
    pub regs: Vec<u32>,
    /// The observation site.
    pub site: Site,
}

impl<'a, L: Lowering> Body<'a, L> {
    /// An empty body of program `p` (observation layout `layout`) with lowering state `low`.
    pub fn new(p: &'a Program, layout: &'a Layout, low: L) -> Self {
        // %p0 and %rd0 are the dispatch/scratch registers; numbering of fresh ones starts at 1.
        Body {
            p,
            layout,
            code: String::with_capacity(2048),
            r: 1,
            rd: 1,
            pr: 1,
            h: 1,
            labels: 0,
            call_arg: "",
            low,
        }
    }

    /// Writes one tab-indented instruction line.
    pub fn line(&mut self, s: &str) {
        self.code.push('\t');
        self.code.push_str(s);
        self.code.push('\n');
    }

    /// Writes one label line (`s:`).
    pub fn label(&mut self, s: &str) {
        self.code.push_str(s);
        self.code.push_str(":\n");
    }

    /// A fresh `%r` (32-bit) register.
    pub fn r(&mut self) -> u32 {
        self.r += 1;
        self.r - 1
    }

    /// A fresh `%rd` (64-bit) register.
    pub fn rd(&mut self) -> u32 {
        self.rd += 1;
        self.rd - 1
    }

    /// A fresh `%p` (predicate) register.
    pub fn pr(&mut self) -> u32 {
        self.pr += 1;
        self.pr - 1
    }

    /// A fresh `%h` (16-bit) register.
    pub fn h(&mut self) -> u32 {
        self.h += 1;
        self.h - 1
    }

    /// A fresh label number of this body.
    pub fn next_label(&mut self) -> u32 {
        self.labels += 1;
        self.labels
    }

    /// Appends the lowering's tail, then the register declarations and the code, to `out`.
    pub fn finish(mut self, out: &mut String) {
        L::tail(&mut self);
        out.push_str("\t.reg .pred %p<");
        let _ = write!(
            out,
            "{}>;\n\t.reg .b32 %r<{}>;\n\t.reg .b64 %rd<{}>;\n\t.reg .b16 %h<{}>;\n",
            self.pr, self.r, self.rd, self.h
        );
        out.push_str("\t.reg .b32 %lane, %warp, %ctarank, %ctaodd, %clid;\n");
        out.push_str("\t.reg .b64 %obs, %obscta, %obsw, %obsl;\n");
        out.push_str(self.low.extra_regs());
        out.push_str(&self.code);
    }

    /// Computes `%lane`, `%warp`, `%ctarank`, `%ctaodd` and `%clid`.
    pub fn special_regs(&mut self) {
        self.line("mov.u32 %lane, %laneid;");
        self.line("mov.u32 %warp, %tid.x;");
        self.line("shr.u32 %warp, %warp, 5;");
        self.line("mov.u32 %ctarank, %cluster_ctarank;");
        self.line("and.b32 %ctaodd, %ctarank, 1;");
        self.line("mov.u32 %clid, %clusterid.x;");
    }

    fn preamble_entry(&mut self) {
        self.special_regs();
        self.line("ld.param.u64 %obs, [obs];");
        self.line("cvta.to.global.u64 %obs, %obs;");
        let (cs, cw) = (self.p.launch.cluster_size, self.layout.cta_words);
        ln!(self, "mad.lo.u32 %r0, %clid, {cs}, %ctarank;");
        ln!(self, "mul.wide.u32 %rd0, %r0, {};", u64::from(cw) * 4);
        self.line("add.u64 %obscta, %obs, %rd0;");
    }

    fn preamble_func(&mut self) {
        self.special_regs();
        self.line("ld.param.u64 %obsw, [obsw];");
        if let Some(x) = self.low.extra_param() {
            ln!(self, "ld.param.u64 %{x}, [{x}];");
        }
        self.line("mul.wide.u32 %rd0, %lane, 4;");
        self.line("add.u64 %obsl, %obsw, %rd0;");
    }

    /// Prints a statement list. `sites` are the sites of the enclosing code in pre-order and
    /// `next` the index of the next one.
    pub fn block(&mut self, stmts: &[Stmt], sites: &[Site], next: &mut usize) {
        let mut pending: Vec<Pending> = Vec::new();
        for s in stmts {
            let site = observe::next_site(s, sites, next);
            match s {
                Stmt::Tc(op) => L::op(self, op, site, &mut pending),
                Stmt::If { cond, then, els } => {
                    let n = self.next_label();
                    let p = self.cond(cond);
                    ln!(self, "@!%p{p} bra $I{n}_else;");
                    self.block(then, sites, next);
                    ln!(self, "bra $I{n}_end;");
                    lb!(self, "$I{n}_else");
                    self.block(els, sites, next);
                    lb!(self, "$I{n}_end");
                }
                Stmt::Loop { count, body } => {
                    let n = self.next_label();
                    let c = self.r();
                    let p = self.pr();
                    ln!(self, "mov.u32 %r{c}, 0;");
                    lb!(self, "$L{n}_top");
                    ln!(self, "setp.ge.u32 %p{p}, %r{c}, {count};");
                    ln!(self, "@%p{p} bra $L{n}_end;");
                    self.block(body, sites, next);
                    ln!(self, "add.u32 %r{c}, %r{c}, 1;");
                    ln!(self, "bra $L{n}_top;");
                    lb!(self, "$L{n}_end");
                }
                Stmt::Call(f) => {
                    ln!(self, "call f{f}, (%obsw{});", self.call_arg);
                }
                Stmt::Exit => {
                    let store = self.low.checkpoint_store();
                    ln!(self, "{store} [%obsl], {};", observe::CHECKPOINT_EXIT);
                    L::before_exit(self);
                    self.line("exit;");
                }
                Stmt::BarCta => self.line("barrier.sync 0;"),
                Stmt::ClusterArrive { relaxed } => self.line(if *relaxed {
                    "barrier.cluster.arrive.relaxed;"
                } else {
                    "barrier.cluster.arrive.release;"
                }),
                Stmt::ClusterWait => self.line("barrier.cluster.wait.acquire;"),
                Stmt::MbarInit { bar, count } => {
                    ln!(
                        self,
                        "mbarrier.init.shared::cta.b64 [tc_mbar+{}], {count};",
                        8 * u32::from(*bar)
                    );
                }
                Stmt::FenceMbarInit => self.line("fence.mbarrier_init.release.cluster;"),
                Stmt::MbarArrive { bar, cta: None } => {
                    let state = L::arrive_state(self);
                    ln!(
                        self,
                        "mbarrier.arrive.release.cta.shared::cta.b64 {state}, [tc_mbar+{}];",
                        8 * u32::from(*bar)
                    );
                }
                Stmt::MbarArrive {
                    bar,
                    cta: Some(rank),
                } => {
                    let a = self.r();
                    ln!(self, "mov.u32 %r{a}, tc_mbar;");
                    ln!(self, "add.u32 %r{a}, %r{a}, {};", 8 * u32::from(*bar));
                    let m = self.r();
                    ln!(self, "mapa.shared::cluster.u32 %r{m}, %r{a}, {rank};");
                    ln!(
                        self,
                        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r{m}];"
                    );
                }
                Stmt::MbarWait {
                    bar,
                    parity,
                    scope,
                    max_tries,
                } => {
                    let n = self.next_label();
                    let (c, v) = (self.r(), self.r());
                    let (p, q) = (self.pr(), self.pr());
                    ln!(self, "mov.u32 %r{c}, 0;");
                    lb!(self, "$MW{n}_top");
                    ln!(
                        self,
                        "mbarrier.{}.parity.acquire{}.shared::cta.b64 %p{p}, [tc_mbar+{}], {};",
                        self.low.mbar_try(),
                        scope.as_str(),
                        8 * u32::from(*bar),
                        u8::from(*parity)
                    );
                    ln!(self, "@%p{p} bra $MW{n}_done;");
                    ln!(self, "add.u32 %r{c}, %r{c}, 1;");
                    ln!(self, "setp.lt.u32 %p{q}, %r{c}, {max_tries};");
                    L::mbar_backoff(self, q);
                    ln!(self, "@%p{q} bra $MW{n}_top;");
                    ln!(self, "mov.u32 %r{v}, {};", observe::MBAR_GAVE_UP);
                    ln!(self, "bra $MW{n}_rec;");
                    lb!(self, "$MW{n}_done");
                    ln!(self, "mov.u32 %r{v}, {};", observe::MBAR_COMPLETED);
                    lb!(self, "$MW{n}_rec");
                    self.record(site.expect("MbarWait is a site"), &[v]);
                }
                Stmt::FenceProxyAsync => self.line("fence.proxy.async.shared::cta;"),
                Stmt::Fill { region, seed, elem } => self.fill(*region, *seed, *elem),
                Stmt::ObserveAddr { slot } => {
                    let v = self.r();
                    ln!(
                        self,
                        "ld.shared.b32 %r{v}, [tc_slot+{}];",
                        4 * u32::from(*slot)
                    );
                    self.record(site.expect("ObserveAddr is a site"), &[v]);
                }
                Stmt::Checkpoint(id) => {
                    let store = self.low.checkpoint_store();
                    ln!(self, "{store} [%obsl], {id};");
                }
                Stmt::Spin(iters) => {
                    let n = self.next_label();
                    let c = self.r();
                    let p = self.pr();
                    ln!(self, "mov.u32 %r{c}, 0;");
                    lb!(self, "$S{n}_top");
                    ln!(self, "setp.ge.u32 %p{p}, %r{c}, {iters};");
                    ln!(self, "@%p{p} bra $S{n}_end;");
                    self.line("nanosleep.u32 20;");
                    ln!(self, "add.u32 %r{c}, %r{c}, 1;");
                    ln!(self, "bra $S{n}_top;");
                    lb!(self, "$S{n}_end");
                }
            }
        }
        self.flush(&mut pending);
    }

    /// Records the pending ld results (at a `wait::ld` or the end of a block).
    pub fn flush(&mut self, pending: &mut Vec<Pending>) {
        for p in pending.drain(..) {
            self.record(p.site, &p.regs);
        }
    }

    /// Writes the record of `site`: the lane's valid word, then its data words.
    pub fn record(&mut self, site: Site, regs: &[u32]) {
        // %obsl is lane 0's word plus the lane; the lane's data words are `words` apart.
        ln!(self, "st.global.u32 [%obsl+{}], 1;", site.valid_word(0) * 4);
        let a = self.rd();
        ln!(self, "mul.wide.u32 %rd{a}, %lane, {};", site.words * 4);
        ln!(self, "add.u64 %rd{a}, %rd{a}, %obsw;");
        for (i, r) in regs.iter().enumerate() {
            ln!(
                self,
                "st.global.u32 [%rd{a}+{}], %r{r};",
                site.data_word(0, i as u32) * 4
            );
        }
    }

    /// Computes condition `c` into a fresh predicate register.
    pub fn cond(&mut self, c: &Cond) -> u32 {
        let p = self.pr();
        match c {
            Cond::LaneLt(n) => ln!(self, "setp.lt.u32 %p{p}, %lane, {n};"),
            Cond::LaneEq(n) => ln!(self, "setp.eq.u32 %p{p}, %lane, {n};"),
            Cond::ElectOne => ln!(self, "elect.sync _|%p{p}, -1;"),
            Cond::CtaRank(n) => ln!(self, "setp.eq.u32 %p{p}, %ctarank, {n};"),
            Cond::CtaOdd => ln!(self, "setp.ne.u32 %p{p}, %ctaodd, 0;"),
            Cond::Cluster(n) => ln!(self, "setp.eq.u32 %p{p}, %clid, {n};"),
            Cond::WarpRank(n) => ln!(self, "setp.eq.u32 %p{p}, %warp, {n};"),
        }
        p
    }

    fn fill(&mut self, region: u8, seed: u32, elem: FillElem) {
        let words = self.p.smem.region_bytes(region) / 4;
        let n = self.next_label();
        let (i, h, v, a) = (self.r(), self.r(), self.r(), self.r());
        let p = self.pr();
        ln!(self, "mov.u32 %r{i}, %lane;");
        lb!(self, "$F{n}_top");
        ln!(self, "setp.ge.u32 %p{p}, %r{i}, {words};");
        ln!(self, "@%p{p} bra $F{n}_end;");
        ln!(
            self,
            "mad.lo.u32 %r{h}, %r{i}, {}, {seed};",
            values::FILL_MUL
        );
        match elem {
            FillElem::Word => ln!(self, "mov.b32 %r{v}, %r{h};"),
            FillElem::F16Small => {
                let (t, u) = (self.r(), self.r());
                let (h0, h1) = (self.h(), self.h());
                for (s, hr) in [(8, h0), (20, h1)] {
                    ln!(self, "shr.u32 %r{t}, %r{h}, {s};");
                    ln!(self, "and.b32 %r{t}, %r{t}, 7;");
                    ln!(self, "sub.s32 %r{u}, %r{t}, 4;");
                    ln!(self, "cvt.rn.f16.s32 %h{hr}, %r{u};");
                }
                ln!(self, "mov.b32 %r{v}, {{%h{h0}, %h{h1}}};");
            }
            FillElem::Tf32Small => {
                let t = self.r();
                ln!(self, "shr.u32 %r{t}, %r{h}, 8;");
                ln!(self, "and.b32 %r{t}, %r{t}, 7;");
                ln!(self, "sub.s32 %r{t}, %r{t}, 4;");
                ln!(self, "cvt.rn.f32.s32 %r{v}, %r{t};");
            }
            // values::fill_word: the high halves of two Tf32Small words (fields at bits 8
            // and 20), put side by side by prmt (bytes 2, 3 of the first, 2, 3 of the second).
            FillElem::Bf16Small => {
                let (t, lo, hi) = (self.r(), self.r(), self.r());
                for (s, f) in [(8, lo), (20, hi)] {
                    ln!(self, "shr.u32 %r{t}, %r{h}, {s};");
                    ln!(self, "and.b32 %r{t}, %r{t}, 7;");
                    ln!(self, "sub.s32 %r{t}, %r{t}, 4;");
                    ln!(self, "cvt.rn.f32.s32 %r{f}, %r{t};");
                }
                ln!(self, "prmt.b32 %r{v}, %r{lo}, %r{hi}, 0x7632;");
            }
            FillElem::I8Small => {
                let t = self.r();
                ln!(self, "mov.u32 %r{v}, 0;");
                for (k, s) in [4, 10, 16, 22].into_iter().enumerate() {
                    ln!(self, "shr.u32 %r{t}, %r{h}, {s};");
                    ln!(self, "and.b32 %r{t}, %r{t}, 15;");
                    ln!(self, "add.u32 %r{t}, %r{t}, 248;");
                    ln!(self, "and.b32 %r{t}, %r{t}, 255;");
                    ln!(self, "shl.b32 %r{t}, %r{t}, {};", 8 * k);
                    ln!(self, "or.b32 %r{v}, %r{v}, %r{t};");
                }
            }
            // values::fill_word: ((h >> 1) & 0x11111111) * 10 | 0x44444444.
            FillElem::SpMeta => {
                let t = self.r();
                ln!(self, "shr.u32 %r{t}, %r{h}, 1;");
                ln!(self, "and.b32 %r{t}, %r{t}, 286331153;");
                ln!(self, "mul.lo.u32 %r{t}, %r{t}, 10;");
                ln!(self, "or.b32 %r{v}, %r{t}, 1145324612;");
            }
            // values::fill_word: bytes ((h >> s) & 3) + 123, s = 3, 9, 15, 21.
            FillElem::ScaleSmall => {
                let t = self.r();
                ln!(self, "mov.u32 %r{v}, 0;");
                for (k, s) in [3, 9, 15, 21].into_iter().enumerate() {
                    ln!(self, "shr.u32 %r{t}, %r{h}, {s};");
                    ln!(self, "and.b32 %r{t}, %r{t}, 3;");
                    ln!(self, "add.u32 %r{t}, %r{t}, 123;");
                    ln!(self, "shl.b32 %r{t}, %r{t}, {};", 8 * k);
                    ln!(self, "or.b32 %r{v}, %r{v}, %r{t};");
                }
            }
        }
        ln!(self, "mov.u32 %r{a}, tc_data{region};");
        ln!(self, "mad.lo.u32 %r{a}, %r{i}, 4, %r{a};");
        ln!(self, "st.shared.u32 [%r{a}], %r{v};");
        ln!(self, "add.u32 %r{i}, %r{i}, 32;");
        ln!(self, "bra $F{n}_top;");
        lb!(self, "$F{n}_end");
    }

    /// Computes a TMEM address into a fresh register.
    pub fn taddr(&mut self, t: &TmemRef) -> u32 {
        let r = self.r();
        match t.base {
            TBase::Slot(s) => {
                ln!(self, "ld.shared.u32 %r{r}, [tc_slot+{}];", 4 * u32::from(s));
                ln!(self, "add.u32 %r{r}, %r{r}, {};", t.offset());
            }
            TBase::Abs => ln!(self, "mov.u32 %r{r}, {};", t.offset()),
        }
        if t.divergent {
            let d = self.r();
            ln!(self, "and.b32 %r{d}, %lane, 1;");
            ln!(self, "add.u32 %r{r}, %r{r}, %r{d};");
        }
        r
    }

    /// An nCols operand as text (an immediate or a register computed here).
    fn ncols_operand(&mut self, n: &NCols) -> String {
        match n.form {
            NColsForm::Imm => n.value.to_string(),
            NColsForm::Reg => {
                let r = self.r();
                ln!(self, "mov.u32 %r{r}, {};", n.value);
                format!("%r{r}")
            }
            NColsForm::RegDivergent => {
                let (r, d) = (self.r(), self.r());
                ln!(self, "mov.u32 %r{r}, {};", n.value);
                ln!(self, "and.b32 %r{d}, %lane, 1;");
                ln!(self, "shl.b32 %r{r}, %r{r}, %r{d};");
                format!("%r{r}")
            }
        }
    }

    /// Computes a shared-memory descriptor into a fresh 64-bit register.
    pub fn desc(&mut self, d: &SmemDesc) -> u32 {
        let a = self.r();
        let rd = self.rd();
        ln!(self, "mov.u32 %r{a}, tc_data{};", d.region);
        ln!(self, "add.u32 %r{a}, %r{a}, {};", d.offset);
        ln!(self, "and.b32 %r{a}, %r{a}, 262143;");
        ln!(self, "shr.u32 %r{a}, %r{a}, 4;");
        ln!(self, "cvt.u64.u32 %rd{rd}, %r{a};");
        ln!(self, "or.b64 %rd{rd}, %rd{rd}, {};", d.encode_fields());
        rd
    }

    /// Moves `v` into a fresh register.
    pub fn imm32(&mut self, v: u32) -> u32 {
        let r = self.r();
        ln!(self, "mov.u32 %r{r}, {v};");
        r
    }

    fn op_with(&mut self, op: &Op, opcode: &str, site: Option<Site>, pending: &mut Vec<Pending>) {
        match op {
            Op::Alloc {
                form,
                slot,
                dst_global,
                ncols,
            } => {
                let dst = if *dst_global {
                    let rd = self.rd();
                    ln!(self, "mov.u64 %rd{rd}, tc_scratch;");
                    ln!(self, "cvta.global.u64 %rd{rd}, %rd{rd};");
                    ln!(self, "add.u64 %rd{rd}, %rd{rd}, {};", 4 * u32::from(*slot));
                    format!("[%rd{rd}]")
                } else if form.space.is_some() {
                    format!("[tc_slot+{}]", 4 * u32::from(*slot))
                } else {
                    let rd = self.rd();
                    ln!(self, "mov.u64 %rd{rd}, tc_slot;");
                    ln!(self, "cvta.shared.u64 %rd{rd}, %rd{rd};");
                    ln!(self, "add.u64 %rd{rd}, %rd{rd}, {};", 4 * u32::from(*slot));
                    format!("[%rd{rd}]")
                };
                let n = self.ncols_operand(ncols);
                ln!(self, "{opcode} {dst}, {n};");
            }
            Op::Dealloc { taddr, ncols, .. } => {
                let t = self.taddr(taddr);
                let n = self.ncols_operand(ncols);
                ln!(self, "{opcode} %r{t}, {n};");
            }
            Op::Relinquish { .. } | Op::Fence { .. } => ln!(self, "{opcode};"),
            Op::Wait { form } => {
                ln!(self, "{opcode};");
                if form.op == WaitOp::Ld {
                    self.flush(pending);
                }
            }
            Op::Ld {
                form,
                taddr,
                split,
                nregs,
            } => {
                let t = self.taddr(taddr);
                let regs: Vec<u32> = (0..*nregs).map(|_| self.r()).collect();
                let mut text = format!("{opcode} {}", vector(&regs));
                let mut all = regs;
                if form.red {
                    let rv = self.r();
                    let _ = write!(text, ", %r{rv}");
                    all.push(rv);
                }
                let _ = write!(text, ", [%r{t}]");
                if let Some(s) = split {
                    let _ = write!(text, ", {s}");
                }
                text.push(';');
                self.line(&text);
                pending.push(Pending {
                    regs: all,
                    site: site.expect("Ld is a site"),
                });
            }
            Op::St {
                taddr,
                split,
                nregs,
                seed,
                ..
            } => {
                let t = self.taddr(taddr);
                // At least one value is computed, so that the seed is in the text even for an
                // (ill-formed) empty vector.
                let all: Vec<u32> = (0..(*nregs).max(1)).map(|_| self.r()).collect();
                for (i, r) in all.iter().enumerate() {
                    let (m, a) = values::st_coeffs(*seed, i as u32);
                    ln!(self, "mad.lo.u32 %r{r}, %lane, {m}, {a};");
                }
                let regs = &all[..usize::from(*nregs)];
                let mut text = format!("{opcode} [%r{t}]");
                if let Some(s) = split {
                    let _ = write!(text, ", {s}");
                }
                let _ = write!(text, ", {};", vector(regs));
                self.line(&text);
            }
            Op::Commit {
                form,
                mbar,
                addr,
                cta_mask,
            } => {
                let m = match addr {
                    MbarAddr::Shared if form.shared_cluster => {
                        let r = self.r();
                        ln!(self, "mov.u32 %r{r}, tc_mbar;");
                        ln!(self, "add.u32 %r{r}, %r{r}, {};", 8 * u32::from(*mbar));
                        format!("[%r{r}]")
                    }
                    MbarAddr::Shared => {
                        let rd = self.rd();
                        ln!(self, "mov.u64 %rd{rd}, tc_mbar;");
                        ln!(self, "cvta.shared.u64 %rd{rd}, %rd{rd};");
                        ln!(self, "add.u64 %rd{rd}, %rd{rd}, {};", 8 * u32::from(*mbar));
                        format!("[%rd{rd}]")
                    }
                    MbarAddr::GlobalUb => {
                        let rd = self.rd();
                        ln!(self, "mov.u64 %rd{rd}, tc_scratch;");
                        ln!(self, "cvta.global.u64 %rd{rd}, %rd{rd};");
                        ln!(self, "add.u64 %rd{rd}, %rd{rd}, {};", 8 * u32::from(*mbar));
                        format!("[%rd{rd}]")
                    }
                };
                match cta_mask {
                    Some(mask) => {
                        let h = self.h();
                        ln!(self, "mov.b16 %h{h}, {mask};");
                        ln!(self, "{opcode} {m}, %h{h};");
                    }
                    None => ln!(self, "{opcode} {m};"),
                }
            }
            Op::Cp { taddr, src, .. } => {
                let t = self.taddr(taddr);
                let d = self.desc(src);
                ln!(self, "{opcode} [%r{t}], %rd{d};");
            }
            Op::Shift { taddr, .. } => {
                let t = self.taddr(taddr);
                ln!(self, "{opcode} [%r{t}];");
            }
            Op::Mma(m) => self.mma_native(opcode, m),
        }
    }

    fn mma_native(&mut self, opcode: &str, m: &Mma) {
        let d = self.taddr(&m.d);
        let a = match &m.a {
            MmaA::Desc(desc) => format!("%rd{}", self.desc(desc)),
            MmaA::Tmem(t) => format!("[%r{}]", self.taddr(t)),
        };
        let b = self.desc(&m.b);
        let mut ops = vec![format!("[%r{d}]"), a, format!("%rd{b}")];
        if let Some(sp) = &m.sp_meta {
            let r = self.taddr(sp);
            ops.push(format!("[%r{r}]"));
        }
        let i = self.imm32(m.idesc);
        ops.push(format!("%r{i}"));
        if let Some(sa) = &m.scale_a {
            let r = self.taddr(sa);
            ops.push(format!("[%r{r}]"));
        }
        if let Some(sb) = &m.scale_b {
            let r = self.taddr(sb);
            ops.push(format!("[%r{r}]"));
        }
        if let Some(dol) = &m.disable_output_lane {
            let regs: Vec<u32> = dol.iter().map(|v| self.imm32(*v)).collect();
            ops.push(vector(&regs));
        }
        let e = self.imm32(u32::from(m.enable_input_d));
        let p = self.pr();
        ln!(self, "setp.ne.u32 %p{p}, %r{e}, 0;");
        ops.push(format!("%p{p}"));
        if let Some(s) = m.scale_input_d {
            ops.push(s.to_string());
        }
        if let Some(z) = m.zero_col_mask {
            let rd = self.rd();
            ln!(self, "mov.b64 %rd{rd}, {z};");
            ops.push(format!("%rd{rd}"));
        }
        ln!(self, "{opcode} {};", ops.join(", "));
    }
}

fn vector(regs: &[u32]) -> String {
    let mut s = String::with_capacity(regs.len() * 6 + 2);
    s.push('{');
    for (i, r) in regs.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "%r{r}");
    }
    s.push('}');
    s
}

/// The full opcode of a form, e.g. for summaries; see [`Form::opcode`].
pub fn opcode(f: &Form) -> String {
    f.opcode()
}
