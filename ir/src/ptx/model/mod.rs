//! The general lifter: real PTX kernels (any compiler, or written by hand) into the
//! [`Program`] model, so the oracle judges them exactly.
//!
//! [`lift_kernel`] runs the PTX of every warp of every CTA of the launch on its own (see
//! [`exec`]): `%tid`, `%laneid`, `%ctaid`, `%cluster_ctarank` are numbers there, so the
//! arithmetic CUTLASS and Triton do on them (`>> 5`, `/ 32`, `and`, `setp`, `selp`, `shfl.sync`
//! broadcasts) is evaluated, branches that agree in every lane are followed (loops with constant
//! trip counts unroll), and branches on which lanes disagree become [`Stmt::If`]s on lane
//! conditions or `elect.sync`. Each warp's code is then dispatched on the CTA with
//! [`Cond::CtaRank`] / [`Cond::Cluster`] where CTAs differ.
//!
//! What it maps (reference §2-§4): barriers (`bar.sync` of the whole CTA, `barrier.cluster`),
//! mbarrier `init` / `arrive` (local or `mapa` remote) / `try_wait.parity` loops, every tcgen05
//! instruction with operands from immediates, arithmetic on constants, `ld.shared` of an alloc
//! slot and descriptors built from a shared variable's address. Shared variables get their
//! role from their use: an alloc destination is a slot, an mbarrier operand an mbarrier, a
//! descriptor's start address a data region. What it cannot map is an [`Unliftable`] naming
//! the instruction, its line and column, and why; such kernels keep `check`'s path analysis.
//!
//! The values a `tcgen05.st` writes are the model's (a seed, [`crate::values::st_value`]);
//! [`Lifted::sts`] keeps the values the PTX registers held where they are known, so that a
//! report can translate an observed value back.

mod exec;
mod ops;
pub mod value;

use crate::program::*;
use crate::ptx::parse::{Function, Instr, Module, ParseError, parse_module};
use crate::qual::Target;
use exec::{Code, Env, Warp};
use std::collections::HashMap;

/// The launch of a lifted kernel: warps per CTA, CTAs per cluster, clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Warps per CTA (1 to 16).
    pub warps_per_cta: u8,
    /// CTAs per cluster (1, 2 or 4).
    pub cluster_size: u8,
    /// Clusters in the grid.
    pub clusters: u16,
}

/// Why a kernel cannot be lifted: the instruction, where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}:{col}: `{instr}`: {why}")]
pub struct Unliftable {
    /// 1-based line (0: the kernel as a whole).
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// The opcode (or the directive) concerned.
    pub instr: String,
    /// Why the program model cannot express it.
    pub why: String,
}

fn whole(instr: &str, why: impl Into<String>) -> Unliftable {
    Unliftable {
        line: 0,
        col: 0,
        instr: instr.to_string(),
        why: why.into(),
    }
}

/// Why a source text cannot be lifted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiftFailure {
    /// The text is not PTX.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// It is PTX the program model cannot express.
    #[error(transparent)]
    Unliftable(#[from] Unliftable),
}

/// One lifted `tcgen05.ld`: its line and the PTX registers it writes, in record word order
/// (the vector, then `redval` for `.red`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdInfo {
    /// Line of the instruction.
    pub line: u32,
    /// Register names (empty where an element is not a register).
    pub regs: Vec<String>,
}

/// One lifted `tcgen05.st`: the seed the model uses for its values and, per register, the
/// value each lane held in the PTX where the lifter knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StInfo {
    /// The model's seed ([`crate::values::st_value`]).
    pub seed: u32,
    /// Line of the instruction.
    pub line: u32,
    /// Per register, the 32 lanes' values, or `None` where unknown (e.g. loaded from memory).
    pub values: Vec<Option<[u32; 32]>>,
}

/// An observation site of the lifted program: a `tcgen05.ld` of one warp of one CTA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdSite {
    /// Global CTA index.
    pub cta: u32,
    /// Warp rank.
    pub warp: u8,
    /// Index in the warp's sites ([`crate::observe::Layout::warp_sites`]).
    pub site: u32,
    /// The instruction.
    pub info: LdInfo,
}

/// A lifted kernel.
#[derive(Debug, Clone)]
pub struct Lifted {
    /// The program.
    pub program: Program,
    /// Every lifted `tcgen05.ld`, per CTA and warp, in execution order.
    pub lds: Vec<LdSite>,
    /// Every lifted `tcgen05.st` (CTA, warp, info).
    pub sts: Vec<(u32, u8, StInfo)>,
    /// Lines that write a data region with generic stores the model does not track: values
    /// that mma or cp read from there are not the program's.
    pub untracked_data: Vec<u32>,
    /// Every `mbarrier.try_wait`/`test_wait` of the kernel is an unbounded spin loop (it
    /// branches back to itself until the phase completes): the model's bounded wait
    /// ([`crate::Stmt::MbarWait`]) stands for a loop that, in the PTX, never gives up.
    pub waits_spin: bool,
}

/// Roles of shared variables (by name and byte offset): alloc slots, mbarriers, data regions.
#[derive(Debug, Default)]
pub struct Roles<'a> {
    slots: HashMap<(&'a str, i64), u8>,
    mbars: HashMap<(&'a str, i64), u8>,
    regions: HashMap<&'a str, u8>,
    region_sizes: Vec<u32>,
    sizes: HashMap<&'a str, u32>,
    aligns: HashMap<&'a str, u32>,
    shared_writes: Vec<(&'a str, u32)>,
    /// Lifted `mbarrier.try_wait`/`test_wait`s that are not an unbounded spin loop.
    pub(super) bounded_waits: u32,
}

impl<'a> Roles<'a> {
    fn slot(&mut self, s: &'a str, o: i64, ins: &Instr<'_>) -> Result<u8, Unliftable> {
        if self.mbars.contains_key(&(s, o)) {
            return Err(exec::fail(
                ins,
                format!("{s}+{o} is used both as an mbarrier and as an alloc slot"),
            ));
        }
        let n = self.slots.len();
        let k = *self.slots.entry((s, o)).or_insert(n as u8);
        if n >= 32 {
            return Err(exec::fail(ins, "more than 32 alloc slots"));
        }
        Ok(k)
    }

    fn mbar(&mut self, s: &'a str, o: i64, ins: &Instr<'_>) -> Result<u8, Unliftable> {
        if self.slots.contains_key(&(s, o)) {
            return Err(exec::fail(
                ins,
                format!("{s}+{o} is used both as an alloc slot and as an mbarrier"),
            ));
        }
        let n = self.mbars.len();
        if n >= 64 {
            return Err(exec::fail(ins, "more than 64 mbarriers"));
        }
        Ok(*self.mbars.entry((s, o)).or_insert(n as u8))
    }

    /// The declared `.align` of shared variable `s` (16 where not declared: the least a
    /// descriptor's start address has, SDESC-ALIGN16).
    pub(crate) fn align(&self, s: &str) -> u32 {
        self.aligns.get(s).copied().unwrap_or(16).max(16)
    }

    fn region(&mut self, s: &'a str) -> u8 {
        let n = self.regions.len() as u8;
        let size = self.sizes.get(s).copied().unwrap_or(0);
        *self.regions.entry(s).or_insert_with(|| {
            // An undeclared or unsized (`.extern`) variable: the largest static shared size.
            self.region_sizes.push(if size == 0 {
                48 * 1024
            } else {
                size.next_multiple_of(16)
            });
            n
        })
    }
}

/// Bytes of a `.shared` declaration's words (`.shared .align 8 .b64 name[4]`), with its name.
fn shared_size<'a>(words: &[&'a str]) -> Option<(&'a str, u32)> {
    if !words.contains(&".shared") {
        return None;
    }
    let ty = words.iter().rev().find(|w| {
        w.starts_with(".b") || w.starts_with(".u") || w.starts_with(".s") && **w != ".shared"
    })?;
    let elem = value::width(ty) / 8;
    let name_at = words
        .iter()
        .position(|w| !w.starts_with('.') && w.parse::<u64>().is_err())?;
    let mut n = 1u32;
    let mut i = name_at + 1;
    while i + 2 < words.len() + 1 && words.get(i) == Some(&"[") {
        match words.get(i + 1).and_then(|w| w.parse::<u32>().ok()) {
            Some(k) => n = n.saturating_mul(k),
            None => n = 0,
        }
        i += 3;
    }
    Some((words[name_at], n.saturating_mul(elem)))
}

/// The `.align` of a `.shared` declaration's words, with its name.
fn shared_align<'a>(words: &[&'a str]) -> Option<(&'a str, u32)> {
    let (name, _) = shared_size(words)?;
    let at = words.iter().position(|w| *w == ".align")?;
    Some((name, words.get(at + 1)?.parse().ok()?))
}

/// The launch a kernel declares: `.reqntid`/`.maxntid` and `.reqnctapercluster`.
pub fn declared_shape(f: &Function<'_>) -> Result<Shape, Unliftable> {
    let prod = |d: &[&str]| -> Option<u32> {
        d[1..]
            .iter()
            .filter(|w| **w != ",")
            .map(|w| w.trim_end_matches(',').parse::<u32>().ok())
            .product()
    };
    let threads = f
        .directives
        .iter()
        .find(|d| d[0] == ".reqntid")
        .or_else(|| f.directives.iter().find(|d| d[0] == ".maxntid"))
        .and_then(|d| prod(d))
        .ok_or_else(|| {
            whole(
                f.name,
                "no .reqntid or .maxntid: the launch shape is unknown (give it in a litmus header)",
            )
        })?;
    let cluster = match f.directives.iter().find(|d| d[0] == ".reqnctapercluster") {
        Some(d) => {
            prod(d).ok_or_else(|| whole(".reqnctapercluster", "unreadable cluster shape"))?
        }
        None if f.directives.iter().any(|d| d[0] == ".explicitcluster") => {
            return Err(whole(
                ".explicitcluster",
                "a cluster whose size the kernel does not declare",
            ));
        }
        None => 1,
    };
    if threads % 32 != 0 || threads == 0 || threads > 512 {
        return Err(whole(
            ".reqntid",
            format!("{threads} threads: the model needs 1 to 16 whole warps"),
        ));
    }
    if ![1, 2, 4].contains(&cluster) {
        return Err(whole(
            ".reqnctapercluster",
            format!("{cluster} CTAs per cluster: the model has 1, 2 or 4"),
        ));
    }
    Ok(Shape {
        warps_per_cta: (threads / 32) as u8,
        cluster_size: cluster as u8,
        clusters: 1,
    })
}

/// Whether `i` only makes sense in a cluster of several CTAs: a `::2` tcgen05 operation (its
/// peer CTA, reference §2.5), `mapa`, or a multicast.
fn uses_cluster(i: &Instr<'_>) -> bool {
    let op = i.opcode;
    op.contains("cta_group::2") || op.starts_with("mapa") || op.contains("multicast::cluster")
}

/// Lifts the kernel `entry` of `m` with the launch `shape` (its declared one when `None`).
pub fn lift_kernel(
    m: &Module<'_>,
    entry: &Function<'_>,
    shape: Option<Shape>,
) -> Result<Lifted, Unliftable> {
    let shape = match shape {
        Some(s) => s,
        None => {
            let s = declared_shape(entry)?;
            if s.cluster_size == 1
                && let Some(i) = m
                    .functions
                    .iter()
                    .flat_map(|f| f.instrs())
                    .find(|i| uses_cluster(i))
            {
                return Err(exec::fail(
                    i,
                    "the kernel works with a cluster but declares no .reqnctapercluster: its cluster shape is unknown (give it in a litmus header)",
                ));
            }
            s
        }
    };
    if !(1..=16).contains(&shape.warps_per_cta)
        || ![1, 2, 4].contains(&shape.cluster_size)
        || shape.clusters == 0
    {
        return Err(whole(
            "launch",
            "the model needs 1-16 warps, 1, 2 or 4 CTAs per cluster, 1+ clusters",
        ));
    }
    let version = m.version.ok_or_else(|| whole(".version", "no .version"))?;
    let target = m
        .target
        .iter()
        .find_map(|t| Target::from_ptx(t))
        .ok_or_else(|| whole(".target", "no .target this crate knows (a tcgen05 target)"))?;
    let mut roles = Roles::default();
    for g in &m.globals {
        if let Some((n, s)) = shared_size(&g.words) {
            roles.sizes.insert(n, s);
        }
        if let Some((n, a)) = shared_align(&g.words) {
            roles.aligns.insert(n, a);
        }
    }
    for s in entry.body.iter().flatten() {
        if let crate::ptx::parse::Stmt::Decl(words, _) = s
            && let Some((n, sz)) = shared_size(words)
        {
            roles.sizes.insert(n, sz);
            if let Some((n, a)) = shared_align(words) {
                roles.aligns.insert(n, a);
            }
        }
    }
    let code = Code::of(entry);
    let ctas = u32::from(shape.clusters) * u32::from(shape.cluster_size);
    // codes[cta][warp]
    let mut codes: Vec<Vec<(Vec<Stmt>, Vec<LdInfo>)>> = Vec::new();
    let mut sts = Vec::new();
    for cta in 0..ctas {
        let mut per_warp = Vec::new();
        for warp in 0..shape.warps_per_cta {
            let mut w = Warp {
                module: m,
                roles: &mut roles,
                shape,
                cluster: (cta / u32::from(shape.cluster_size)) as u16,
                rank: (cta % u32::from(shape.cluster_size)) as u8,
                warp,
                steps: 0,
                depth: 0,
                lds: Vec::new(),
                sts: Vec::new(),
                callees: HashMap::new(),
            };
            let mut out = Vec::new();
            let mut env = Env::new();
            w.run(
                &code,
                &mut env,
                0,
                code.body.len(),
                u32::MAX,
                false,
                &mut out,
            )?;
            let lds = std::mem::take(&mut w.lds);
            for s in std::mem::take(&mut w.sts) {
                sts.push((cta, warp, s));
            }
            per_warp.push((out, lds));
        }
        codes.push(per_warp);
    }
    let mut warps = Vec::new();
    let mut lds = Vec::new();
    for warp in 0..usize::from(shape.warps_per_cta) {
        let (stmts, sites) = dispatch(&codes, warp, shape);
        for (cta, site, info) in sites {
            lds.push(LdSite {
                cta,
                warp: warp as u8,
                site,
                info,
            });
        }
        warps.push(stmts);
    }
    let untracked_data = roles
        .shared_writes
        .iter()
        .filter(|(s, _)| roles.regions.contains_key(s))
        .map(|(_, l)| *l)
        .collect();
    let program = Program {
        launch: Launch {
            target,
            ptx_version: version,
            cluster_size: shape.cluster_size,
            clusters: shape.clusters,
            warps_per_cta: shape.warps_per_cta,
            declare_cluster: entry
                .directives
                .iter()
                .any(|d| d[0] == ".reqnctapercluster"),
        },
        smem: Smem {
            slots: roles.slots.len() as u8,
            mbarriers: roles.mbars.len() as u8,
            regions: roles.region_sizes.clone(),
        },
        warps,
        funcs: vec![],
    };
    Ok(Lifted {
        program,
        lds,
        sts,
        untracked_data,
        waits_spin: roles.bounded_waits == 0,
    })
}

/// Number of observation sites (ld, ObserveAddr, MbarWait) in `b`, counted as the layout does.
fn sites_in(b: &[Stmt]) -> u32 {
    let mut n = 0;
    for s in b {
        if crate::observe::site_of(s).is_some() {
            n += 1;
        }
        match s {
            Stmt::If { then, els, .. } => n += sites_in(then) + sites_in(els),
            Stmt::Loop { body, .. } => n += sites_in(body),
            _ => {}
        }
    }
    n
}

/// Each ld of `b` in pre-order, with its site index (from `base`).
fn ld_sites(b: &[Stmt], base: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut next = base;
    fn go(b: &[Stmt], next: &mut u32, out: &mut Vec<u32>) {
        for s in b {
            if let Some((k, _)) = crate::observe::site_of(s) {
                if k == crate::observe::SiteKind::Ld {
                    out.push(*next);
                }
                *next += 1;
            }
            match s {
                Stmt::If { then, els, .. } => {
                    go(then, next, out);
                    go(els, next, out);
                }
                Stmt::Loop { body, .. } => go(body, next, out),
                _ => {}
            }
        }
    }
    go(b, &mut next, &mut out);
    out
}

type Sites = Vec<(u32, u32, LdInfo)>;

/// Warp `warp`'s code: one list when every CTA runs the same, else nested `If`s on the CTA.
fn dispatch(
    codes: &[Vec<(Vec<Stmt>, Vec<LdInfo>)>],
    warp: usize,
    shape: Shape,
) -> (Vec<Stmt>, Sites) {
    let first = &codes[0][warp];
    if codes.iter().all(|c| c[warp] == *first) {
        let sites = ld_sites(&first.0, 0);
        let mut out = Vec::new();
        for cta in 0..codes.len() as u32 {
            for (s, info) in sites.iter().zip(&first.1) {
                out.push((cta, *s, info.clone()));
            }
        }
        return (first.0.clone(), out);
    }
    // Pre-order: CTA 0's code is the outermost `then`, each later CTA's code sits in the
    // previous `else`.
    let cs = u32::from(shape.cluster_size);
    let cond = |cta: u32| {
        if shape.clusters == 1 {
            Cond::CtaRank((cta % cs) as u8)
        } else if cs == 1 {
            Cond::Cluster(cta as u16)
        } else {
            // Nested below: the cluster, then the rank.
            Cond::Cluster((cta / cs) as u16)
        }
    };
    let n = codes.len();
    let mut base = 0;
    let mut sites = Vec::new();
    for (cta, c) in codes.iter().enumerate() {
        let (stmts, infos) = &c[warp];
        for (s, info) in ld_sites(stmts, base).into_iter().zip(infos) {
            sites.push((cta as u32, s, info.clone()));
        }
        base += sites_in(stmts);
    }
    let mut tail: Vec<Stmt> = codes[n - 1][warp].0.clone();
    for cta in (0..n - 1).rev() {
        let body = codes[cta][warp].0.clone();
        let c = cond(cta as u32);
        let then = if shape.clusters > 1 && cs > 1 {
            vec![Stmt::If {
                cond: Cond::CtaRank((cta as u32 % cs) as u8),
                then: body,
                els: vec![],
            }]
        } else {
            body
        };
        tail = vec![Stmt::If {
            cond: c,
            then,
            els: tail,
        }];
    }
    (tail, sites)
}

/// Parses `src` and lifts its kernel (the only `.entry`, or the one named `entry`).
pub fn lift_source(
    src: &str,
    file: &str,
    entry: Option<&str>,
    shape: Option<Shape>,
) -> Result<Lifted, LiftFailure> {
    let m = parse_module(src, file)?;
    let mut entries = m
        .functions
        .iter()
        .filter(|f| f.is_entry && f.body.is_some());
    let f = match entry {
        Some(n) => m
            .functions
            .iter()
            .find(|f| f.is_entry && f.name == n)
            .ok_or_else(|| whole(n, "no such .entry"))?,
        None => {
            let f = entries
                .next()
                .ok_or_else(|| whole(".entry", "no .entry with a body"))?;
            if entries.next().is_some() {
                return Err(whole(".entry", "several kernels: name one").into());
            }
            f
        }
    };
    Ok(lift_kernel(&m, f, shape)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_printed_program_lifts_with_its_instructions() {
        let p = crate::samples::single_warp_roundtrip();
        let text = crate::ptx::emit(&p);
        let shape = Shape {
            warps_per_cta: p.launch.warps_per_cta,
            cluster_size: p.launch.cluster_size,
            clusters: p.launch.clusters,
        };
        let l = lift_source(&text, "x.ptx", None, Some(shape))
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let forms = |q: &Program| q.ops().iter().map(|o| o.form()).collect::<Vec<_>>();
        assert_eq!(forms(&l.program), forms(&p), "{text}");
    }

    const HEAD: &str =
        ".version 8.6\n.target sm_100a\n.address_size 64\n.shared .align 4 .b32 slot;\n";

    #[test]
    fn lane_and_cta_branches_become_conditions_of_the_model() {
        // Lanes 0-3 take the `then` side of an if/else (as nvcc lays it out); the code after
        // the CTA-rank branch differs between the two CTAs of the pair.
        let src = format!(
            "{HEAD}.visible .entry k() .reqntid 32, 1, 1 .reqnctapercluster 2, 1, 1 {{\n\
             .reg .b32 %r<8>; .reg .pred %p<4>;\n\
             mov.u32 %r1, %laneid;\n\
             setp.ge.u32 %p1, %r1, 4;\n\
             @%p1 bra ELSE;\n\
             tcgen05.fence::before_thread_sync;\n\
             bra JOIN;\n\
             ELSE:\n\
             tcgen05.fence::after_thread_sync;\n\
             JOIN:\n\
             mov.u32 %r2, %cluster_ctarank;\n\
             setp.ne.u32 %p2, %r2, 0;\n\
             @%p2 bra END;\n\
             barrier.sync 0;\n\
             END:\n\
             ret;\n}}\n"
        );
        let l = lift_source(&src, "t.ptx", None, None).unwrap_or_else(|e| panic!("{e}"));
        let fence = |k| Stmt::Tc(Op::Fence { kind: k });
        let lane_if = Stmt::If {
            cond: Cond::LaneLt(4),
            then: vec![fence(crate::qual::FenceKind::BeforeThreadSync)],
            els: vec![fence(crate::qual::FenceKind::AfterThreadSync)],
        };
        assert_eq!(
            l.program.warps[0],
            vec![Stmt::If {
                cond: Cond::CtaRank(0),
                then: vec![lane_if.clone(), Stmt::BarCta],
                els: vec![lane_if],
            }]
        );
        assert_eq!(l.program.launch.cluster_size, 2);
    }

    /// LLVM's descriptor idiom: the shared symbol's 64-bit address moved into a register,
    /// offset, truncated, and its start field taken with `bfe.u32 4, 14`; `bfe` on numbers
    /// extracts the field (here `0xABCD` bits 4-11: `0xBC`, the value a st stores).
    #[test]
    fn a_descriptor_start_field_taken_with_bfe_lifts() {
        let src = format!(
            "{HEAD}.shared .align 1024 .b8 data[4096];\n\
             .visible .entry k() .reqntid 32, 1, 1 {{\n\
             .reg .b32 %r<8>; .reg .b64 %rd<8>;\n\
             mov.u32 %r1, 32;\n\
             tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], %r1;\n\
             ld.shared.b32 %r2, [slot];\n\
             mov.b64 %rd1, data;\n\
             add.s64 %rd1, %rd1, 128;\n\
             cvt.u32.u64 %r3, %rd1;\n\
             bfe.u32 %r4, %r3, 4, 14;\n\
             cvt.u64.u32 %rd2, %r4;\n\
             or.b64 %rd3, %rd2, 70437464178688;\n\
             tcgen05.cp.cta_group::1.128x256b [%r2], %rd3;\n\
             bfe.u32 %r5, 43981, 4, 8;\n\
             tcgen05.st.sync.aligned.32x32b.x1.b32 [%r2], {{%r5}};\n\
             ret;\n}}\n"
        );
        let l = lift_source(&src, "t.ptx", None, None).unwrap_or_else(|e| panic!("{e}"));
        let cp = l.program.ops().into_iter().find_map(|o| match o {
            Op::Cp { src, .. } => Some(*src),
            _ => None,
        });
        let cp = cp.expect("the cp lifts");
        assert_eq!((cp.region, cp.offset), (0, 128));
        // 70437464178688 = 0x4010_0008_0000: LBO field (bits 16-29) 8, SBO field (bits
        // 32-45) 0x10, fixed bits 46-48 0b001 (§9.7.16.4.1).
        assert_eq!((cp.sbo_enc, cp.fixed, cp.lbo_enc), (0x10, 1, 8));
        assert_eq!(l.sts.len(), 1);
        assert_eq!(l.sts[0].2.values, vec![Some([0xBC; 32])]);
    }

    /// A kernel whose descriptor start field is `(addr >> 4) & mask` of `data` declared with
    /// `.align {align}`, and whose mbarrier wait loop goes through a `%`-less predicate
    /// register of an inline-asm scope (LLVM's `-O3` idioms).
    fn masked_start_kernel(align: u32, mask: u32) -> String {
        format!(
            "{HEAD}.shared .align {align} .b8 data[4096];\n\
             .shared .align 8 .b64 bar;\n\
             .visible .entry k() .reqntid 32, 1, 1 {{\n\
             .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .pred %p<4>;\n\
             mov.u32 %r1, 32;\n\
             tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], %r1;\n\
             ld.shared.b32 %r2, [slot];\n\
             mov.u32 %r6, 1;\n\
             mbarrier.init.shared.b64 [bar], %r6;\n\
             mbarrier.arrive.shared.b64 %rd5, [bar];\n\
             WAIT:\n\
             {{\n\
             .reg .pred q;\n\
             mbarrier.try_wait.parity.shared::cta.b64 q, [bar], 0;\n\
             selp.u32 %r7, 1, 0, q;\n\
             }}\n\
             setp.eq.b32 %p1, %r7, 0;\n\
             @%p1 bra WAIT;\n\
             mov.b64 %rd1, data;\n\
             cvt.u32.u64 %r3, %rd1;\n\
             shr.u32 %r4, %r3, 4;\n\
             and.b32 %r5, %r4, {mask};\n\
             cvt.u64.u32 %rd2, %r5;\n\
             or.b64 %rd3, %rd2, 70437464178688;\n\
             tcgen05.cp.cta_group::1.128x256b [%r2], %rd3;\n\
             ret;\n}}\n"
        )
    }

    #[test]
    fn a_start_field_masked_within_the_alignment_and_a_scoped_predicate_lift() {
        let l = lift_source(&masked_start_kernel(1024, 0x3FC0), "t.ptx", None, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let waits = l.program.warps[0]
            .iter()
            .filter(|s| matches!(s, Stmt::MbarWait { .. }))
            .count();
        assert_eq!(waits, 1, "{:?}", l.program.warps[0]);
        let cp = l.program.ops().into_iter().find_map(|o| match o {
            Op::Cp { src, .. } => Some(*src),
            _ => None,
        });
        assert_eq!(cp.map(|c| (c.region, c.offset)), Some((0, 0)));
        // 0x3FC0 clears address bits 4-9: zero in a 1024-aligned variable, not in a 16-aligned
        // one, whose start field the mask may change.
        let e = lift_source(&masked_start_kernel(16, 0x3FC0), "t.ptx", None, None)
            .expect_err("the mask may clear bits of a 16-aligned address");
        assert!(e.to_string().contains("descriptor"), "{e}");
    }

    /// A jump table on the warp number (LLVM's lowering of a `switch`): each warp follows its
    /// entry of the `.branchtargets` table.
    #[test]
    fn brx_idx_on_the_warp_number_follows_its_table() {
        let src = format!(
            "{HEAD}.visible .entry k() .reqntid 64, 1, 1 {{\n\
             .reg .b32 %r<8>;\n\
             mov.u32 %r1, %tid.x;\n\
             shr.u32 %r2, %r1, 5;\n\
             $L_brx_0: .branchtargets\n\
             W0,\n\
             W1;\n\
             brx.idx %r2, $L_brx_0;\n\
             W0:\n\
             tcgen05.fence::before_thread_sync;\n\
             bra END;\n\
             W1:\n\
             tcgen05.fence::after_thread_sync;\n\
             END:\n\
             ret;\n}}\n"
        );
        let l = lift_source(&src, "t.ptx", None, None).unwrap_or_else(|e| panic!("{e}"));
        let fence = |k| vec![Stmt::Tc(Op::Fence { kind: k })];
        assert_eq!(
            l.program.warps,
            vec![
                fence(crate::qual::FenceKind::BeforeThreadSync),
                fence(crate::qual::FenceKind::AfterThreadSync)
            ]
        );
        // An index the lanes disagree on is not followed.
        let lanes = src.replace("shr.u32 %r2, %r1, 5;", "and.b32 %r2, %r1, 1;");
        let e = lift_source(&lanes, "t.ptx", None, None).expect_err("lanes disagree");
        assert!(e.to_string().contains("brx.idx"), "{e}");
    }

    #[test]
    fn a_branch_on_a_kernel_parameter_is_not_lifted_and_says_where() {
        let src = format!(
            "{HEAD}.visible .entry k(.param .u32 n) .reqntid 32, 1, 1 {{\n\
             .reg .b32 %r<8>; .reg .pred %p<4>;\n\
             ld.param.u32 %r1, [n];\n\
             setp.ne.u32 %p1, %r1, 0;\n\
             @%p1 bra END;\n\
             END:\n\
             ret;\n}}\n"
        );
        let e = lift_source(&src, "t.ptx", None, None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 9:6: `bra`"), "{e}");
        assert!(
            e.contains("kernel parameter") && e.contains("line 8"),
            "{e}"
        );
    }

    #[test]
    #[ignore = "survey: prints why each real-corpus kernel lifts or not"]
    fn survey_realworld() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/realworld");
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "ptx") {
                continue;
            }
            let src = std::fs::read_to_string(&p).unwrap();
            let m = parse_module(&src, "x").unwrap();
            for f in m.functions.iter().filter(|f| f.is_entry) {
                let r = lift_kernel(&m, f, None);
                println!(
                    "{} {}: {}",
                    p.file_name().unwrap().to_string_lossy(),
                    f.name,
                    match r {
                        Ok(l) => format!("lifted, {} stmts", l.program.size()),
                        Err(e) => e.to_string(),
                    }
                );
            }
        }
    }
}
