//! The emulated `tcgen05.mma` (reference §3.7): D computed at issue for the forms of
//! [`mma_computed`].

use super::Emu;
use super::check::mma_desc;
use super::ops::EmuOps;
use tcgen05_ir::CtaGroup;
use tcgen05_ir::ptx::Body;

/// What the emulation computes of an MMA ([`mma_computed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// N: columns of D.
    pub n: u32,
    /// K: elements per row of A and B.
    pub kk: u32,
    /// Bytes per element.
    pub eb: u32,
    /// `cta_group::2` with M = 256: each CTA of the pair holds 128 rows of D.
    pub pair: bool,
    /// f16 D (D type code 0 of kind::f16 / kind::f8f6f4): the low half of each cell.
    pub d16: bool,
}

/// The MMAs whose D values the emulation computes: the oracle's exact forms
/// (`oracle::run::mma::exact_shape`, `pair_shape`, `exact_types`), dense, with these
/// layouts (the ISA's figures, OQ-22, OQ-29):
///
/// - kinds f16 (f16 or bf16 A/B, f32 or f16 D), tf32, i8 and f8f6f4 with e4m3 / e5m2 A/B
///   (f32 or f16 D); an f16 D fills the low half of its cell (MMA-D-UNPACKED);
/// - B, and an A in shared memory, K-major without swizzle (core matrices of 8 rows × 16
///   bytes; the leading-dimension offset steps along K, the stride offset along M/N);
/// - `cta_group::1`, M = 128 (also `.ws`, whose M = 128 uses the same layout, without a
///   zero-column mask), D in data-path layout D (row m in lane m, column n in column n);
/// - `cta_group::2`, M = 256 without disable-output-lane: data-path layout A, each CTA of
///   the pair holds rows 128 h.. of D in its lanes, from its own A; B's rows 0..N/2 come
///   from the even CTA's shared memory and N/2..N from the odd CTA's, through the same
///   descriptor (§9.7.16.10, "B ... in Shared Memory of the current CTA and optionally in
///   peer CTA");
/// - an A in TMEM has row m in lane m, its K elements packed from the first of 8 columns on,
///   little-endian in each cell (§9.7.16.10 "[a-tmem]"), and with `.ashift` D row m uses A
///   row m - 1 (row 0 is unspecified);
/// - collector `::discard` and `::fill` read A as usual; `::use` / `::lastuse` of buffer A
///   read A through the descriptor again (the oracle states their D only where the buffer
///   holds this MMA's own A: the same descriptor and data as the fill).
pub(super) fn mma_computed(m: &tcgen05_ir::Mma) -> Option<Shape> {
    use tcgen05_ir::{CollectorBuf, CollectorOp, MmaKind};
    let f = &m.form;
    if f.sp || f.block_scale {
        return None;
    }
    let coll_ok = f.collector.is_none_or(|c| {
        matches!(c.op, CollectorOp::Discard | CollectorOp::Fill) || c.buf == CollectorBuf::A
    });
    if !coll_ok || (f.ws && m.zero_col_mask.is_some_and(|z| z != 0)) {
        return None;
    }
    // `.ashift` moves A's rows, which only an A in TMEM has (§9.7.16.10.9.1).
    if f.ashift && mma_desc(m).is_some() {
        return None;
    }
    let plain = |d: &tcgen05_ir::SmemDesc| {
        d.swizzle == 0 && !d.lbo_abs && d.base_offset == 0 && d.fixed == 1 && d.reserved == 0
    };
    if !mma_desc(m).is_none_or(plain) || !plain(&m.b) {
        return None;
    }
    let d = m.idesc;
    let mm = (d >> 24 & 0x1F) << 4;
    let n = (d >> 17 & 0x3F) << 3;
    let pair = match f.cta_group {
        CtaGroup::One if mm == 128 => false,
        CtaGroup::Two if mm == 256 && m.disable_output_lane.is_none() => true,
        _ => return None,
    };
    if n == 0 || d & 0b111 != 0 || d & (0b11 << 15) != 0 || d >> 30 != 0 {
        return None;
    }
    let (dt, at, bt) = (d >> 4 & 3, d >> 7 & 7, d >> 10 & 7);
    let (kk, eb) = match f.kind {
        MmaKind::F16 if dt <= 1 && at == bt && at <= 1 => (16, 2),
        MmaKind::Tf32 if dt == 1 && at == 2 && bt == 2 => (8, 4),
        MmaKind::I8 if dt == 2 && at <= 1 && bt <= 1 => (32, 1),
        MmaKind::F8f6f4 if dt <= 1 && at <= 1 && bt <= 1 => (32, 1),
        _ => return None,
    };
    let d16 = matches!(f.kind, MmaKind::F16 | MmaKind::F8f6f4) && dt == 0;
    Some(Shape {
        n,
        kk,
        eb,
        pair,
        d16,
    })
}

/// Why the emulation does not compute D of `m` ([`mma_computed`] is `None`), in a few
/// words naming the form ("sparse MMA D", ...); `None` when it does.
pub(super) fn not_computed_reason(m: &tcgen05_ir::Mma) -> Option<&'static str> {
    use tcgen05_ir::{CollectorOp, MmaKind};
    if mma_computed(m).is_some() {
        return None;
    }
    let f = &m.form;
    let d = m.idesc;
    let descs_plain = [mma_desc(m), Some(&m.b)].into_iter().flatten().all(|d| {
        d.swizzle == 0 && !d.lbo_abs && d.base_offset == 0 && d.fixed == 1 && d.reserved == 0
    });
    Some(if f.sp {
        "sparse MMA D"
    } else if f.block_scale {
        "block-scaled MMA D"
    } else if !descs_plain {
        "swizzled or unusual descriptor MMA D"
    } else if f.collector.is_some_and(|c| c.op != CollectorOp::Discard) {
        "collector-reuse MMA D"
    } else if f.cta_group == CtaGroup::Two {
        "cta_group::2 MMA D (M = 128, or disable-output-lane)"
    } else if (d >> 24 & 0x1F) << 4 != 128 {
        "M != 128 MMA D"
    } else if f.kind == MmaKind::F8f6f4 {
        "f8f6f4 MMA D (6- or 4-bit operands)"
    } else {
        "other dense MMA D (types, transpose, sparsity bits, shift, zero-column mask)"
    })
}

/// Whether every element the emulation would read of `m`'s operands in shared memory lies in
/// its data region (`regions`: the program's region sizes) at an address aligned to its size:
/// the oracle states D only for operands inside their regions (`read_rows`), and a load
/// outside the CTA's shared memory, or a misaligned one, would fault the launch. The last
/// byte read is offset + 7·16 + (rows/8 - 1)·SBO + (K·bytes/16 - 1)·LBO + 15.
fn operands_fit(m: &tcgen05_ir::Mma, shape: Shape, regions: &[u32]) -> bool {
    let b_rows = if shape.pair { shape.n / 2 } else { shape.n };
    let chunks = u64::from(shape.kk * shape.eb / 16);
    [mma_desc(m).map(|d| (d, 128)), Some((&m.b, b_rows))]
        .into_iter()
        .flatten()
        .all(|(d, rows)| {
            let Some(&bytes) = regions.get(usize::from(d.region)) else {
                return false;
            };
            let sbo = 16 * u64::from(d.sbo_enc & 0x3FFF);
            let lbo = 16 * u64::from(d.lbo_enc & 0x3FFF);
            let last = u64::from(d.offset)
                + 7 * 16
                + u64::from(rows / 8).saturating_sub(1) * sbo
                + chunks.saturating_sub(1) * lbo
                + 15;
            d.offset % shape.eb == 0 && last < u64::from(bytes)
        })
}

/// Multiply-adds the emulation computes for one issue of `m` (the issuing thread's loops,
/// [`EmuMma::mma_emu`]): 128 rows × N columns × K per CTA holding D (2 for `cta_group::2`);
/// 0 for an MMA whose D is not computed.
pub fn mma_macs(m: &tcgen05_ir::Mma, regions: &[u32]) -> u64 {
    match mma_computed(m) {
        Some(shape) if operands_fit(m, shape, regions) => {
            let ctas = if shape.pair { 2 } else { 1 };
            ctas * 128 * u64::from(shape.n) * u64::from(shape.kk)
        }
        _ => 0,
    }
}

/// Why some MMA results of `p` are not computed by the emulation (each reason of
/// [`not_computed_reason`] once, sorted, joined by "; "); `None` when every MMA's D is.
pub fn not_emulated(p: &tcgen05_ir::Program) -> Option<String> {
    let mut why: Vec<&str> = Vec::new();
    p.walk(&mut |s| {
        if let tcgen05_ir::Stmt::Tc(tcgen05_ir::Op::Mma(m)) = s {
            match mma_computed(m) {
                Some(shape) if !operands_fit(m, shape, &p.smem.regions) => {
                    why.push("MMA operand misaligned or outside its region");
                }
                _ => why.extend(not_computed_reason(m)),
            }
        }
    });
    why.sort_unstable();
    why.dedup();
    (!why.is_empty()).then(|| why.join("; "))
}

/// The emulated MMA on a body being printed.
pub(super) trait EmuMma {
    /// Prints the emulation of MMA `m`.
    fn mma_emu(&mut self, m: &tcgen05_ir::Mma);
}

impl EmuMma for Body<'_, Emu<'_>> {
    /// Emulated tcgen05.mma, by each thread that issues it, completing at issue. The forms of
    /// [`mma_computed`] write D = A·B (+ D·2^-scale) into TMEM (of both CTAs of a pair),
    /// skipping lanes whose disable-output-lane bit is set; other forms leave D as it was
    /// (the judge leaves the words their results decide out of the compare,
    /// [`not_emulated`]).
    fn mma_emu(&mut self, m: &tcgen05_ir::Mma) {
        let Some(shape) = mma_computed(m) else {
            return;
        };
        if (shape.pair && self.p.launch.cluster_size < 2)
            || !operands_fit(m, shape, &self.p.smem.regions)
        {
            return;
        }
        let n = shape.n;
        let d = self.taddr(&m.d);
        let (dl, dc) = self.split_taddr(d);
        self.check_cells(dl, 128, dc, n);
        // An A in TMEM: 128 lanes from its address, 8 columns (256 bits of A per row).
        let a_tmem = match &m.a {
            tcgen05_ir::MmaA::Tmem(t) => {
                let r = self.taddr(t);
                let (al, ac) = self.split_taddr(r);
                self.check_cells(al, 128, ac, 8);
                Some((al, ac))
            }
            tcgen05_ir::MmaA::Desc(_) => None,
        };
        // Cluster-window bases: B of the even and odd CTAs (the issuing CTA's for `::1`), and
        // per CTA holding D, its TMEM and its A.
        let (own, even, odd) = (self.r(), self.r(), self.r());
        self.line(&format!("mov.u32 %r{own}, %ctarank;"));
        if shape.pair {
            self.line(&format!("and.b32 %r{even}, %r{own}, -2;"));
            self.line(&format!("or.b32 %r{odd}, %r{even}, 1;"));
        }
        let local = |b: &mut Self, sym: String, off: u32, rank: u32| {
            let (x, y) = (b.r(), b.r());
            b.line(&format!("mov.u32 %r{x}, {sym};"));
            b.line(&format!("add.u32 %r{x}, %r{x}, {off};"));
            b.line(&format!("mapa.shared::cluster.u32 %r{y}, %r{x}, %r{rank};"));
            y
        };
        let b = m.b;
        let b_even = local(
            self,
            format!("tc_data{}", b.region),
            b.offset,
            if shape.pair { even } else { own },
        );
        let b_odd = if shape.pair {
            local(self, format!("tc_data{}", b.region), b.offset, odd)
        } else {
            b_even
        };
        let mut ctas = vec![own];
        if shape.pair {
            let peer = self.r();
            self.line(&format!("xor.b32 %r{peer}, %r{own}, 1;"));
            ctas.push(peer);
        }
        for rank in ctas {
            let tm = local(self, "emu_tmem".into(), 0, rank);
            let a = match mma_desc(m) {
                Some(ad) => Operand::Smem(local(
                    self,
                    format!("tc_data{}", ad.region),
                    ad.offset,
                    rank,
                )),
                None => {
                    let (al, ac) = a_tmem.expect("an MMA's A is in shared memory or in TMEM");
                    Operand::Tmem(al, ac)
                }
            };
            let bases = Bases {
                tm,
                a,
                b: [b_even, b_odd],
                dl,
                dc,
            };
            self.mma_rows(m, shape, &bases);
        }
    }
}

/// Where an MMA's A is: a cluster-window base in shared memory, or the lane and column
/// registers of its TMEM address (in the emulated TMEM of the CTA whose D is computed).
#[derive(Debug, Clone, Copy)]
enum Operand {
    Smem(u32),
    Tmem(u32, u32),
}

/// The registers one CTA's part of an emulated MMA reads.
struct Bases {
    /// The CTA's emulated TMEM (cluster window).
    tm: u32,
    a: Operand,
    /// B of the even and odd CTAs (both the issuing CTA's for `cta_group::1`).
    b: [u32; 2],
    /// D's lane and column.
    dl: u32,
    dc: u32,
}

trait MmaRows {
    fn mma_rows(&mut self, m: &tcgen05_ir::Mma, shape: Shape, x: &Bases);
}

impl MmaRows for Body<'_, Emu<'_>> {
    /// The 128 rows of D one CTA holds: for each row, column and k, A(row, k) · B(col, k)
    /// accumulated in f32 (s32 for i8), then the old D added (enable-input-d) and the cell
    /// written (an f16 D converted into the low half).
    fn mma_rows(&mut self, m: &tcgen05_ir::Mma, shape: Shape, x: &Bases) {
        use tcgen05_ir::MmaKind;
        let Shape {
            n,
            kk,
            eb,
            pair,
            d16,
        } = shape;
        let a = mma_desc(m).copied();
        let bd = m.b;
        let tm = x.tm;
        let kind = m.form.kind;
        let idesc = m.idesc;
        let (sa, sb) = (idesc >> 7 & 7 == 1, idesc >> 10 & 7 == 1);
        let (na, nb) = (idesc >> 13 & 1 == 1, idesc >> 14 & 1 == 1);
        let int = kind == MmaKind::I8;
        let l = self.next_label();
        let (row, col, k, acc, xa, yb, addr, t) = (
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
        );
        let (bb, brow) = (self.r(), self.r());
        let (p, q) = (self.pr(), self.pr());
        let h = self.h();
        // The address of element (r, k) of an operand in shared memory: start + (r % 8) * 16
        // + (r / 8) * SBO + (kb / 16) * LBO + kb % 16 with kb = k * element bytes.
        let smem_addr = |b: &mut Self, base: u32, desc: &tcgen05_ir::SmemDesc, rr: u32| {
            b.line(&format!("and.b32 %r{addr}, %r{rr}, 7;"));
            b.line(&format!("shl.b32 %r{addr}, %r{addr}, 4;"));
            b.line(&format!("add.u32 %r{addr}, %r{addr}, %r{base};"));
            b.line(&format!("shr.u32 %r{t}, %r{rr}, 3;"));
            b.line(&format!(
                "mad.lo.u32 %r{addr}, %r{t}, {}, %r{addr};",
                16 * u32::from(desc.sbo_enc & 0x3FFF)
            ));
            b.line(&format!("mul.lo.u32 %r{t}, %r{k}, {eb};"));
            b.line(&format!("shr.u32 %r{t}, %r{t}, 4;"));
            b.line(&format!(
                "mad.lo.u32 %r{addr}, %r{t}, {}, %r{addr};",
                16 * u32::from(desc.lbo_enc & 0x3FFF)
            ));
            b.line(&format!("mul.lo.u32 %r{t}, %r{k}, {eb};"));
            b.line(&format!("and.b32 %r{t}, %r{t}, 15;"));
            b.line(&format!("add.u32 %r{addr}, %r{addr}, %r{t};"));
        };
        // The address of element (r, k) of an A in TMEM at lane `al`, column `ac`: byte
        // kb % 4 of cell (al + r, ac + kb / 4), word (ac + kb / 4) * 128 + al + r of emu_tmem.
        let tmem_addr = |b: &mut Self, al: u32, ac: u32, rr: u32| {
            b.line(&format!("mul.lo.u32 %r{t}, %r{k}, {eb};"));
            b.line(&format!("shr.u32 %r{addr}, %r{t}, 2;"));
            b.line(&format!("add.u32 %r{addr}, %r{addr}, %r{ac};"));
            b.line(&format!("mad.lo.u32 %r{addr}, %r{addr}, 128, %r{al};"));
            b.line(&format!("add.u32 %r{addr}, %r{addr}, %r{rr};"));
            b.line(&format!("mad.lo.u32 %r{addr}, %r{addr}, 4, %r{tm};"));
            b.line(&format!("and.b32 %r{t}, %r{t}, 3;"));
            b.line(&format!("add.u32 %r{addr}, %r{addr}, %r{t};"));
        };
        // The element at `addr` into `out` (f32, or s32 for i8); `alt`: type code 1 (bf16,
        // s8, e5m2). Element formats of §9.7.16.10.1 (the oracle's `elem_value`): bf16 is
        // the high half of an f32, e5m2 the high byte of an f16, e4m3 has 4 exponent bits
        // (bias 7) and 3 mantissa bits (exponent 0 subnormal).
        let load = |b: &mut Self, out: u32, alt: bool, neg: bool| {
            match kind {
                MmaKind::F16 if alt => {
                    b.line(&format!("ld.shared::cluster.u16 %r{out}, [%r{addr}];"));
                    b.line(&format!("shl.b32 %r{out}, %r{out}, 16;"));
                }
                MmaKind::F16 => {
                    b.line(&format!("ld.shared::cluster.b16 %h{h}, [%r{addr}];"));
                    b.line(&format!("cvt.f32.f16 %r{out}, %h{h};"));
                }
                MmaKind::Tf32 => {
                    b.line(&format!("ld.shared::cluster.b32 %r{out}, [%r{addr}];"));
                    b.line(&format!("and.b32 %r{out}, %r{out}, -8192;"));
                }
                MmaKind::F8f6f4 if alt => {
                    b.line(&format!("ld.shared::cluster.u8 %r{out}, [%r{addr}];"));
                    b.line(&format!("shl.b32 %r{out}, %r{out}, 8;"));
                    b.line(&format!("cvt.u16.u32 %h{h}, %r{out};"));
                    b.line(&format!("cvt.f32.f16 %r{out}, %h{h};"));
                }
                MmaKind::F8f6f4 => {
                    // e4m3 = (-1)^s · mant · 2^(ex - 10): mant = m (+ 8 if e > 0),
                    // ex = max(e, 1); the power of two built as f32 bits (ex + 117) << 23.
                    let (e, mt) = (b.r(), b.r());
                    let pz = b.pr();
                    b.line(&format!("ld.shared::cluster.u8 %r{out}, [%r{addr}];"));
                    b.line(&format!("bfe.u32 %r{e}, %r{out}, 3, 4;"));
                    b.line(&format!("and.b32 %r{mt}, %r{out}, 7;"));
                    b.line(&format!("setp.ne.u32 %p{pz}, %r{e}, 0;"));
                    b.line(&format!("@%p{pz} add.u32 %r{mt}, %r{mt}, 8;"));
                    b.line(&format!("max.u32 %r{e}, %r{e}, 1;"));
                    b.line(&format!("add.u32 %r{e}, %r{e}, 117;"));
                    b.line(&format!("shl.b32 %r{e}, %r{e}, 23;"));
                    b.line(&format!("cvt.rn.f32.u32 %r{mt}, %r{mt};"));
                    b.line(&format!("mul.rn.f32 %r{mt}, %r{mt}, %r{e};"));
                    b.line(&format!("setp.gt.u32 %p{pz}, %r{out}, 127;"));
                    b.line(&format!("@%p{pz} neg.f32 %r{mt}, %r{mt};"));
                    b.line(&format!("mov.b32 %r{out}, %r{mt};"));
                }
                _ => {
                    let ty = if alt { "s8" } else { "u8" };
                    b.line(&format!("ld.shared::cluster.{ty} %r{out}, [%r{addr}];"));
                }
            }
            if neg {
                b.line(&format!(
                    "neg.{} %r{out}, %r{out};",
                    if int { "s32" } else { "f32" }
                ));
            }
        };
        self.line(&format!("mov.u32 %r{row}, 0;"));
        self.loop_head(&format!("$M{l}_row"));
        // `.ashift`: D row m uses A row m - 1 (row 0, unspecified, uses row 0).
        let arow = if m.form.ashift {
            let r = self.r();
            self.line(&format!("max.u32 %r{r}, %r{row}, 1;"));
            self.line(&format!("sub.u32 %r{r}, %r{r}, 1;"));
            r
        } else {
            row
        };
        // MMA-DOL-SEM: a lane whose disable-output-lane bit is set is not written.
        if let Some(dol) = &m.disable_output_lane {
            let w = self.r();
            let pz = self.pr();
            let words: Vec<u32> = (0..4).map(|i| dol.get(i).copied().unwrap_or(0)).collect();
            self.line(&format!("shr.u32 %r{w}, %r{row}, 5;"));
            self.line(&format!("setp.eq.u32 %p{pz}, %r{w}, 0;"));
            self.line(&format!(
                "selp.b32 %r{t}, {}, {}, %p{pz};",
                words[0], words[1]
            ));
            self.line(&format!("setp.eq.u32 %p{pz}, %r{w}, 2;"));
            self.line(&format!("selp.b32 %r{t}, {}, %r{t}, %p{pz};", words[2]));
            self.line(&format!("setp.eq.u32 %p{pz}, %r{w}, 3;"));
            self.line(&format!("selp.b32 %r{t}, {}, %r{t}, %p{pz};", words[3]));
            self.line(&format!("and.b32 %r{w}, %r{row}, 31;"));
            self.line(&format!("shr.u32 %r{t}, %r{t}, %r{w};"));
            self.line(&format!("and.b32 %r{t}, %r{t}, 1;"));
            self.line(&format!("setp.ne.u32 %p{pz}, %r{t}, 0;"));
            self.line(&format!("@%p{pz} bra $M{l}_next_row;"));
        }
        self.line(&format!("mov.u32 %r{col}, 0;"));
        self.loop_head(&format!("$M{l}_col"));
        // B row `col`: of the even CTA, or for a pair's columns N/2.. row col - N/2 of the
        // odd CTA's.
        self.line(&format!("mov.u32 %r{bb}, %r{};", x.b[0]));
        self.line(&format!("mov.u32 %r{brow}, %r{col};"));
        if pair {
            let pz = self.pr();
            self.line(&format!("setp.ge.u32 %p{pz}, %r{col}, {};", n / 2));
            self.line(&format!("@%p{pz} mov.u32 %r{bb}, %r{};", x.b[1]));
            self.line(&format!("@%p{pz} sub.u32 %r{brow}, %r{col}, {};", n / 2));
        }
        self.line(&format!("mov.u32 %r{acc}, 0;"));
        self.line(&format!("mov.u32 %r{k}, 0;"));
        self.loop_head(&format!("$M{l}_k"));
        match (&a, x.a) {
            (Some(desc), Operand::Smem(base)) => smem_addr(self, base, desc, row),
            (_, Operand::Tmem(al, ac)) => tmem_addr(self, al, ac, arow),
            (None, Operand::Smem(_)) => unreachable!("an A in TMEM has its TMEM address"),
        }
        load(self, xa, sa, na);
        smem_addr(self, bb, &bd, brow);
        load(self, yb, sb, nb);
        if int {
            self.line(&format!("mad.lo.s32 %r{acc}, %r{xa}, %r{yb}, %r{acc};"));
        } else {
            self.line(&format!("fma.rn.f32 %r{acc}, %r{xa}, %r{yb}, %r{acc};"));
        }
        self.line(&format!("add.u32 %r{k}, %r{k}, 1;"));
        self.line(&format!("setp.lt.u32 %p{p}, %r{k}, {kk};"));
        self.line(&format!("@%p{p} bra $M{l}_k;"));
        // The D cell (lane dl + row, column dc + col).
        self.line(&format!("add.u32 %r{t}, %r{}, %r{col};", x.dc));
        self.line(&format!("add.u32 %r{addr}, %r{}, %r{row};", x.dl));
        self.line(&format!("mad.lo.u32 %r{addr}, %r{t}, 128, %r{addr};"));
        self.line(&format!("mad.lo.u32 %r{addr}, %r{addr}, 4, %r{tm};"));
        if m.enable_input_d {
            self.line(&format!("ld.shared::cluster.u32 %r{xa}, [%r{addr}];"));
            if int {
                self.line(&format!("add.s32 %r{acc}, %r{acc}, %r{xa};"));
            } else {
                if d16 {
                    self.line(&format!("cvt.u16.u32 %h{h}, %r{xa};"));
                    self.line(&format!("cvt.f32.f16 %r{xa}, %h{h};"));
                }
                let s = m.scale_input_d.unwrap_or(0);
                // 2^-s as an f32 bit pattern (s <= 15, MMA-SCALE-D).
                let scale = (127u32.saturating_sub(u32::from(s.min(15)))) << 23;
                self.line(&format!("mul.rn.f32 %r{xa}, %r{xa}, 0f{scale:08X};"));
                self.line(&format!("add.rn.f32 %r{acc}, %r{acc}, %r{xa};"));
            }
        }
        if d16 {
            // MMA-D-UNPACKED: the f16 in the low half (the high half is not stated; 0 here).
            self.line(&format!("cvt.rn.f16.f32 %h{h}, %r{acc};"));
            self.line(&format!("cvt.u32.u16 %r{acc}, %h{h};"));
        }
        self.line(&format!("st.shared::cluster.u32 [%r{addr}], %r{acc};"));
        self.line(&format!("add.u32 %r{col}, %r{col}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{col}, {n};"));
        self.line(&format!("@%p{q} bra $M{l}_col;"));
        self.label(&format!("$M{l}_next_row"));
        self.line(&format!("add.u32 %r{row}, %r{row}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{row}, 128;"));
        self.line(&format!("@%p{q} bra $M{l}_row;"));
    }
}
