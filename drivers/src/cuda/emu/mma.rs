//! The emulated `tcgen05.mma` (reference §3.7): D computed at issue for the forms of
//! [`mma_computed`].

use super::Emu;
use super::check::mma_desc;
use super::ops::{EmuOps, Val};
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

/// Whether every row the emulation would read of `m`'s operands in shared memory lies in
/// its data region (`regions`: the program's region sizes) and starts 16-byte aligned (the
/// rows are read as 16-byte chunks with `ld.v4`; a descriptor's start address is a multiple
/// of 16 by its encoding, SDESC-ALIGN16, and SBO and LBO are): the oracle states D only for
/// operands inside their regions (`read_rows`), and a load outside the CTA's shared memory,
/// or a misaligned one, would fault the launch. The last byte read is offset + 7·16 +
/// (rows/8 - 1)·SBO + (K·bytes/16 - 1)·LBO + 15.
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
            d.offset % 16 == 0 && last < u64::from(bytes)
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
    /// [`not_emulated`]). A `cta_group::1` MMA reads and writes only its own CTA's shared
    /// memory, with CTA addresses (`ld.shared`); a pair reads and writes through the cluster
    /// window (`mapa`, `ld.shared::cluster`).
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
        self.check_cells(dl, Val::Imm(128), dc, Val::Imm(n));
        // An A in TMEM: 128 lanes from its address, 8 columns (256 bits of A per row).
        let a_tmem = match &m.a {
            tcgen05_ir::MmaA::Tmem(t) => {
                let r = self.taddr(t);
                let (al, ac) = self.split_taddr(r);
                self.check_cells(al, Val::Imm(128), ac, Val::Imm(8));
                Some((al, ac))
            }
            tcgen05_ir::MmaA::Desc(_) => None,
        };
        // The shared-memory address of `sym` + `off`: the CTA's own (`rank` None), or its
        // cluster-window address in CTA `rank`.
        let base = |b: &mut Self, sym: String, off: u32, rank: Option<u32>| {
            let x = b.r();
            b.line(&format!("mov.u32 %r{x}, {sym};"));
            if off != 0 {
                b.line(&format!("add.u32 %r{x}, %r{x}, {off};"));
            }
            let Some(rank) = rank else {
                return x;
            };
            let y = b.r();
            b.line(&format!("mapa.shared::cluster.u32 %r{y}, %r{x}, %r{rank};"));
            y
        };
        let operand = |b: &mut Self, tm: u32, rank: Option<u32>| match mma_desc(m) {
            Some(ad) => Operand::Smem(base(b, format!("tc_data{}", ad.region), ad.offset, rank)),
            None => {
                let (al, ac) = a_tmem.expect("an MMA's A is in shared memory or in TMEM");
                Operand::Tmem(tm, al, ac)
            }
        };
        let bsym = format!("tc_data{}", m.b.region);
        if !shape.pair {
            let tm = base(self, "emu_tmem".into(), 0, None);
            let b = base(self, bsym, m.b.offset, None);
            let a = operand(self, tm, None);
            let x = Bases {
                space: "shared",
                tm,
                a,
                b: [b, b],
                dl,
                dc,
            };
            self.mma_rows(m, shape, &x);
            return;
        }
        // A pair: B's rows 0..N/2 from the even CTA, N/2..N from the odd; each CTA's 128
        // rows of D from its own A into its own TMEM: the issuing CTA's, then its peer's
        // (a loop over the two, so the rows are printed once).
        let (own, even, odd, i, rank) = (self.r(), self.r(), self.r(), self.r(), self.r());
        let p = self.pr();
        let l = self.next_label();
        self.line(&format!("mov.u32 %r{own}, %ctarank;"));
        self.line(&format!("and.b32 %r{even}, %r{own}, -2;"));
        self.line(&format!("or.b32 %r{odd}, %r{even}, 1;"));
        let b = [
            base(self, bsym.clone(), m.b.offset, Some(even)),
            base(self, bsym, m.b.offset, Some(odd)),
        ];
        self.line(&format!("mov.u32 %r{i}, 0;"));
        self.loop_head(&format!("$M{l}_cta"));
        self.line(&format!("xor.b32 %r{rank}, %r{own}, %r{i};"));
        let tm = base(self, "emu_tmem".into(), 0, Some(rank));
        let a = operand(self, tm, Some(rank));
        let x = Bases {
            space: "shared::cluster",
            tm,
            a,
            b,
            dl,
            dc,
        };
        self.mma_rows(m, shape, &x);
        self.line(&format!("add.u32 %r{i}, %r{i}, 1;"));
        self.line(&format!("setp.lt.u32 %p{p}, %r{i}, 2;"));
        self.line(&format!("@%p{p} bra $M{l}_cta;"));
    }
}

/// Where an MMA's A is: the address of its first byte in shared memory, or the emulated
/// TMEM holding it and the lane and column registers of its TMEM address (in the CTA whose
/// D is computed).
#[derive(Debug, Clone, Copy)]
enum Operand {
    Smem(u32),
    Tmem(u32, u32, u32),
}

/// The registers one CTA's part of an emulated MMA reads.
struct Bases {
    /// The state space of every access: `shared` (CTA addresses, `cta_group::1`) or
    /// `shared::cluster` (cluster-window addresses, a pair).
    space: &'static str,
    /// The CTA's emulated TMEM.
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
    fn row_words(
        &mut self,
        space: &str,
        base: u32,
        desc: &tcgen05_ir::SmemDesc,
        row: u32,
    ) -> [u32; 8];
    fn decode(&mut self, kind: tcgen05_ir::MmaKind, alt: bool, w: &[u32; 8]) -> Vec<u32>;
}

impl MmaRows for Body<'_, Emu<'_>> {
    /// The 128 rows of D one CTA holds. Per row, A's row is read (8 words) and decoded once;
    /// per column, B's row is read (8 words), decoded, and D(row, col) = Σ A(row, k) ·
    /// B(col, k) accumulated with one f32 fma per k in order k = 0..K-1 (s32 `dp4a` for i8,
    /// whose sum does not depend on the order), then the old D added (enable-input-d) and the
    /// cell written (an f16 D converted into the low half). The loops over rows and columns
    /// stay loops; the K multiply-adds of one cell are unrolled.
    fn mma_rows(&mut self, m: &tcgen05_ir::Mma, shape: Shape, x: &Bases) {
        use tcgen05_ir::MmaKind;
        let Shape {
            n,
            kk,
            eb: _,
            pair,
            d16,
        } = shape;
        let sp = x.space;
        let kind = m.form.kind;
        let idesc = m.idesc;
        let (sa, sb) = (idesc >> 7 & 7 == 1, idesc >> 10 & 7 == 1);
        let (na, nb) = (idesc >> 13 & 1 == 1, idesc >> 14 & 1 == 1);
        let int = kind == MmaKind::I8;
        let l = self.next_label();
        let (row, col, acc, addr, t, dp, bb, brow) = (
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
        );
        let q = self.pr();
        let h = self.h();
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
        // A's row: 8 words, element k at byte k·(element bytes), little-endian.
        let aw = match (mma_desc(m), x.a) {
            (Some(desc), Operand::Smem(base)) => self.row_words(sp, base, desc, row),
            (_, Operand::Tmem(tm, al, ac)) => {
                // Word j of row r: cell (al + r, ac + j), word (ac + j) * 128 + al + r.
                let w: [u32; 8] = std::array::from_fn(|_| self.r());
                self.line(&format!("mad.lo.u32 %r{addr}, %r{ac}, 128, %r{al};"));
                self.line(&format!("add.u32 %r{addr}, %r{addr}, %r{arow};"));
                self.line(&format!("mad.lo.u32 %r{addr}, %r{addr}, 4, %r{tm};"));
                for (j, r) in w.iter().enumerate() {
                    self.line(&format!("ld.{sp}.u32 %r{r}, [%r{addr}+{}];", 512 * j));
                }
                w
            }
            (None, Operand::Smem(_)) => unreachable!("an A in TMEM has its TMEM address"),
        };
        // A decoded once per row; a negated operand (idesc bits 13, 14) negates A's values
        // (−a·b = a·−b, and −a·−b = a·b, exactly).
        let av = if int {
            aw.to_vec()
        } else {
            let v = self.decode(kind, sa, &aw);
            if na != nb {
                for r in &v {
                    self.line(&format!("neg.f32 %r{r}, %r{r};"));
                }
            }
            v
        };
        // D's cell (lane dl + row, column dc + col): word (dc + col) * 128 + dl + row.
        self.line(&format!("add.u32 %r{dp}, %r{}, %r{row};", x.dl));
        self.line(&format!("mad.lo.u32 %r{dp}, %r{}, 128, %r{dp};", x.dc));
        self.line(&format!("mad.lo.u32 %r{dp}, %r{dp}, 4, %r{};", x.tm));
        self.line(&format!("mov.u32 %r{col}, 0;"));
        self.loop_head(&format!("$M{l}_col"));
        // B row `col`: of the even CTA, or for a pair's columns N/2.. row col - N/2 of the
        // odd CTA's.
        let (bbase, bcol) = if pair {
            let pz = self.pr();
            self.line(&format!("mov.u32 %r{bb}, %r{};", x.b[0]));
            self.line(&format!("mov.u32 %r{brow}, %r{col};"));
            self.line(&format!("setp.ge.u32 %p{pz}, %r{col}, {};", n / 2));
            self.line(&format!("@%p{pz} mov.u32 %r{bb}, %r{};", x.b[1]));
            self.line(&format!("@%p{pz} sub.u32 %r{brow}, %r{col}, {};", n / 2));
            (bb, brow)
        } else {
            (x.b[0], col)
        };
        let bw = self.row_words(sp, bbase, &m.b, bcol);
        if int {
            // dp4a: the four byte products of a word summed into the s32 accumulator
            // (integer sums wrap alike in any order); A's type first.
            let ty = |s: bool| if s { "s32" } else { "u32" };
            for (j, (a, b)) in av.iter().zip(bw.iter()).enumerate() {
                let c = if j == 0 {
                    "0".to_string()
                } else {
                    format!("%r{acc}")
                };
                self.line(&format!(
                    "dp4a.{}.{} %r{acc}, %r{a}, %r{b}, {c};",
                    ty(sa),
                    ty(sb)
                ));
            }
            if na != nb {
                self.line(&format!("neg.s32 %r{acc}, %r{acc};"));
            }
        } else {
            let bv = self.decode(kind, sb, &bw);
            for (k, (a, b)) in av.iter().zip(bv.iter()).enumerate() {
                let c = if k == 0 {
                    "0f00000000".to_string()
                } else {
                    format!("%r{acc}")
                };
                self.line(&format!("fma.rn.f32 %r{acc}, %r{a}, %r{b}, {c};"));
            }
            debug_assert_eq!(av.len(), kk as usize);
            // e4m3 operands were decoded as 2^-8 times their value ([`MmaRows::decode`]):
            // every product and partial sum is a power of two times the exact one, with no
            // overflow or subnormal (|values| between 2^-34 and 2^23), so the rounding is the
            // same; scale back once.
            let e4m3 = u32::from(kind == MmaKind::F8f6f4 && !sa)
                + u32::from(kind == MmaKind::F8f6f4 && !sb);
            if e4m3 > 0 {
                self.line(&format!(
                    "mul.rn.f32 %r{acc}, %r{acc}, 0f{:08X};",
                    (127 + 8 * e4m3) << 23
                ));
            }
        }
        if m.enable_input_d {
            self.line(&format!("ld.{sp}.u32 %r{t}, [%r{dp}];"));
            if int {
                self.line(&format!("add.s32 %r{acc}, %r{acc}, %r{t};"));
            } else {
                if d16 {
                    self.line(&format!("cvt.u16.u32 %h{h}, %r{t};"));
                    self.line(&format!("cvt.f32.f16 %r{t}, %h{h};"));
                }
                let s = m.scale_input_d.unwrap_or(0);
                // 2^-s as an f32 bit pattern (s <= 15, MMA-SCALE-D).
                let scale = (127u32.saturating_sub(u32::from(s.min(15)))) << 23;
                self.line(&format!("mul.rn.f32 %r{t}, %r{t}, 0f{scale:08X};"));
                self.line(&format!("add.rn.f32 %r{acc}, %r{acc}, %r{t};"));
            }
        }
        if d16 {
            // MMA-D-UNPACKED: the f16 in the low half (the high half is not stated; 0 here).
            self.line(&format!("cvt.rn.f16.f32 %h{h}, %r{acc};"));
            self.line(&format!("cvt.u32.u16 %r{acc}, %h{h};"));
        }
        self.line(&format!("st.{sp}.u32 [%r{dp}], %r{acc};"));
        self.line(&format!("add.u32 %r{dp}, %r{dp}, 512;"));
        self.line(&format!("add.u32 %r{col}, %r{col}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{col}, {n};"));
        self.line(&format!("@%p{q} bra $M{l}_col;"));
        self.label(&format!("$M{l}_next_row"));
        self.line(&format!("add.u32 %r{row}, %r{row}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{row}, 128;"));
        self.line(&format!("@%p{q} bra $M{l}_row;"));
    }

    /// The 8 words (32 bytes: K elements) of row `row` of an operand in shared memory at
    /// `base`, K-major without swizzle: chunk c (16 bytes) at base + (row % 8) * 16 +
    /// (row / 8) * SBO + c * LBO, read with two `ld.v4` (16-byte aligned: the descriptor
    /// start, SBO and LBO are multiples of 16, `operands_fit`).
    fn row_words(
        &mut self,
        space: &str,
        base: u32,
        desc: &tcgen05_ir::SmemDesc,
        row: u32,
    ) -> [u32; 8] {
        let (a, t) = (self.r(), self.r());
        let w: [u32; 8] = std::array::from_fn(|_| self.r());
        let sbo = 16 * u32::from(desc.sbo_enc & 0x3FFF);
        let lbo = 16 * u32::from(desc.lbo_enc & 0x3FFF);
        self.line(&format!("and.b32 %r{a}, %r{row}, 7;"));
        self.line(&format!("mad.lo.u32 %r{a}, %r{a}, 16, %r{base};"));
        self.line(&format!("shr.u32 %r{t}, %r{row}, 3;"));
        self.line(&format!("mad.lo.u32 %r{a}, %r{t}, {sbo}, %r{a};"));
        for (c, v) in w.chunks(4).enumerate() {
            let off = match c as u32 * lbo {
                0 => String::new(),
                o => format!("+{o}"),
            };
            self.line(&format!(
                "ld.{space}.v4.u32 {{%r{}, %r{}, %r{}, %r{}}}, [%r{a}{off}];",
                v[0], v[1], v[2], v[3]
            ));
        }
        w
    }

    /// The K elements of a row's 8 words as f32 values, in k order (element k at byte
    /// k·bytes, little-endian). Element formats of §9.7.16.10.1 (the oracle's `elem_value`;
    /// `alt`: type code 1): f16 converted; bf16 is the high half of an f32; tf32 an f32
    /// with the low 13 bits cleared; e5m2 the high byte of an f16; e4m3 (4 exponent bits,
    /// bias 7, 3 mantissa bits, exponent 0 subnormal, no infinity or NaN in this decode:
    /// S.1111.111 is 480) as the f16 with its bits shifted in (sign at bit 15, exponent and
    /// mantissa at bits 13-7), which is exactly 2^-8 times its value (the f16 bias is 15),
    /// subnormals included. Bytes go to the high byte of a half: the even bytes of a word
    /// by `shl 8`, the odd ones in place, each pair then unpacked as f16x2.
    fn decode(&mut self, kind: tcgen05_ir::MmaKind, alt: bool, w: &[u32; 8]) -> Vec<u32> {
        use tcgen05_ir::MmaKind;
        let mut out = Vec::with_capacity(32);
        let (h0, h1) = (self.h(), self.h());
        // The two halves of `r` as f32 values, low half first.
        let halves = |b: &mut Self, r: u32| {
            let (lo, hi) = (b.r(), b.r());
            b.line(&format!("mov.b32 {{%h{h0}, %h{h1}}}, %r{r};"));
            b.line(&format!("cvt.f32.f16 %r{lo}, %h{h0};"));
            b.line(&format!("cvt.f32.f16 %r{hi}, %h{h1};"));
            [lo, hi]
        };
        for &r in w {
            match kind {
                MmaKind::F16 if alt => {
                    let (lo, hi) = (self.r(), self.r());
                    self.line(&format!("shl.b32 %r{lo}, %r{r}, 16;"));
                    self.line(&format!("and.b32 %r{hi}, %r{r}, -65536;"));
                    out.extend([lo, hi]);
                }
                MmaKind::F16 => out.extend(halves(self, r)),
                MmaKind::Tf32 => {
                    let v = self.r();
                    self.line(&format!("and.b32 %r{v}, %r{r}, -8192;"));
                    out.push(v);
                }
                _ => {
                    // Bytes 0 and 2 (even), 1 and 3 (odd) in the high bytes of two halves.
                    let (ev, od) = (self.r(), self.r());
                    if alt {
                        self.line(&format!("shl.b32 %r{ev}, %r{r}, 8;"));
                        self.line(&format!("and.b32 %r{ev}, %r{ev}, -16711936;"));
                        self.line(&format!("and.b32 %r{od}, %r{r}, -16711936;"));
                    } else {
                        // e4m3 byte b of a half: (b & 0x80) << 8 | (b & 0x7F) << 7.
                        let s = self.r();
                        for (x, sh) in [(ev, 8), (od, 0)] {
                            if sh == 0 {
                                self.line(&format!("and.b32 %r{s}, %r{r}, -2147450880;"));
                                self.line(&format!("shr.u32 %r{x}, %r{r}, 1;"));
                            } else {
                                self.line(&format!("shl.b32 %r{s}, %r{r}, 8;"));
                                self.line(&format!("shl.b32 %r{x}, %r{r}, 7;"));
                                self.line(&format!("and.b32 %r{s}, %r{s}, -2147450880;"));
                            }
                            // (x & 0x3F803F80) | s
                            self.line(&format!("lop3.b32 %r{x}, %r{x}, 1065369472, %r{s}, 0xEA;"));
                        }
                    }
                    let [e0, e2] = halves(self, ev);
                    let [e1, e3] = halves(self, od);
                    out.extend([e0, e1, e2, e3]);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::emu::{EmuConfig, lower};
    use tcgen05_ir::{FenceKind, FillElem, MmaKind, Op, Program, Smem, Stmt, samples};
    use tcgen05_oracle::probes;

    /// One warp (one CTA, or a pair when `cg` is `::2`): fills regions 0 (A) and 1 (B), an
    /// elected thread issues `m` and commits, the warp waits.
    fn program(m: tcgen05_ir::Mma, cg: CtaGroup) -> Program {
        let fill = |region, seed| Stmt::Fill {
            region,
            seed,
            elem: FillElem::F16Small,
        };
        let mut p = samples::one_warp(
            samples::launch(1),
            Smem {
                slots: 1,
                mbarriers: 1,
                regions: vec![16384, 8192],
            },
            128,
            vec![
                fill(0, 1),
                fill(1, 2),
                Stmt::FenceProxyAsync,
                Stmt::MbarInit { bar: 0, count: 1 },
                samples::elect(vec![Stmt::Tc(Op::Mma(Box::new(m))), probes::commit()]),
                samples::mbar_wait(0, 1 << 20),
                samples::fence(FenceKind::AfterThreadSync),
            ],
        );
        if cg == CtaGroup::Two {
            probes::set_cta_group(&mut p, cg);
            p.launch.cluster_size = 2;
            p.launch.declare_cluster = true;
        }
        p
    }

    /// The lowered MMA: from its first `$M` label to its last branch back.
    fn mma_section(ptx: &str) -> &str {
        let at = ptx.find("\n$M").expect("an MMA loop");
        let end = ptx.rfind("bra $M").expect("an MMA loop");
        &ptx[at..end]
    }

    /// A `cta_group::1` f16 MMA (K = 16, 32 bytes a row): each row of A and of B is read as
    /// two 16-byte chunks from the CTA's own shared memory (no cluster window), the 16
    /// multiply-adds of a cell are printed once each, in one loop over rows and one over
    /// columns.
    #[test]
    fn cta_group_1_reads_rows_as_two_chunks_with_cta_addresses() {
        let p = program(probes::mma(MmaKind::F16, false), CtaGroup::One);
        let m = match p.ops().into_iter().find(|o| matches!(o, Op::Mma(_))) {
            Some(Op::Mma(m)) => m.clone(),
            _ => unreachable!(),
        };
        assert_eq!(mma_macs(&m, &p.smem.regions), 128 * 64 * 16);
        let l = lower(&p, &EmuConfig::default()).unwrap();
        let s = mma_section(&l.ptx);
        assert_eq!(s.matches("ld.shared.v4.u32").count(), 4, "{s}");
        assert_eq!(s.matches("fma.rn.f32").count(), 16, "{s}");
        assert_eq!(s.matches(".pragma \"nounroll\"").count(), 2, "{s}");
        assert!(!s.contains("shared::cluster"), "{s}");
        assert!(!l.ptx.contains("mapa"), "{}", l.ptx);
    }

    /// A `cta_group::2` M = 256 MMA reads through the cluster window (B's halves from the even
    /// and odd CTAs) and computes the two CTAs' rows in a loop over the two, printed once.
    #[test]
    fn a_pair_reads_through_the_cluster_window_in_a_loop_over_its_ctas() {
        let mut m = probes::mma(MmaKind::F16, false);
        m.idesc = probes::idesc(MmaKind::F16, 256, 64);
        let p = program(m, CtaGroup::Two);
        let l = lower(&p, &EmuConfig::default()).unwrap();
        let s = mma_section(&l.ptx);
        assert_eq!(s.matches("ld.shared::cluster.v4.u32").count(), 4, "{s}");
        assert_eq!(s.matches("fma.rn.f32").count(), 16, "{s}");
        assert_eq!(s.matches("_cta:").count(), 1, "{s}");
        assert!(!s.contains("ld.shared.v4"), "{s}");
    }

    /// An operand whose descriptor offset is not a multiple of 16 (its chunks could not be
    /// read with `ld.v4`) is not computed, and is named.
    #[test]
    fn operands_not_16_byte_aligned_are_not_computed() {
        let mut m = probes::mma(MmaKind::I8, false);
        m.b.offset = 8;
        let p = program(m.clone(), CtaGroup::One);
        assert_eq!(mma_macs(&m, &p.smem.regions), 0);
        let why = not_emulated(&p).unwrap_or_default();
        assert!(why.contains("misaligned"), "{why}");
        let l = lower(&p, &EmuConfig::default()).unwrap();
        assert!(!l.ptx.contains("dp4a"), "{}", l.ptx);
    }
}
