//! The emulated `tcgen05.mma` (reference §3.7): D computed at issue for the forms of
//! [`mma_computed`].

use super::Emu;
use super::check::mma_desc;
use super::ops::EmuOps;
use tcgen05_ir::CtaGroup;
use tcgen05_ir::ptx::Body;

/// The MMAs whose D values the emulation computes (the oracle's `mma::exact_shape`): dense,
/// `cta_group::1`, M = 128, kinds f16 (f32 D), tf32 and i8, no transpose or B-reuse shift, no
/// collector reuse, B and an A in shared memory K-major without swizzle (core matrices of 8 rows × 16 bytes; the leading-dimension
/// offset steps along K, the stride offset along M/N), D in data-path layout D (row m in lane
/// m, column n in column n); an A in TMEM has row m in lane m, its K elements packed from the
/// first of 8 columns on, little-endian in each cell (§9.7.16.10 "[a-tmem]"), and with
/// `.ashift` D row m uses A row m - 1 (row 0 is unspecified). These layouts are the ISA's
/// figures (OQ-22, OQ-29). Returns
/// (N, K, element bytes).
pub(super) fn mma_computed(m: &tcgen05_ir::Mma) -> Option<(u32, u32, u32)> {
    use tcgen05_ir::{CollectorOp, MmaKind};
    let f = &m.form;
    if f.ws || f.sp || f.block_scale || f.cta_group != CtaGroup::One {
        return None;
    }
    // `.ashift` moves A's rows, which only an A in TMEM has (§9.7.16.10.9.1).
    if f.ashift && mma_desc(m).is_some() {
        return None;
    }
    if f.collector.is_some_and(|c| c.op != CollectorOp::Discard) {
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
    if mm != 128 || n == 0 || d & 0b111 != 0 || d & (0b11 << 15) != 0 || d >> 30 != 0 {
        return None;
    }
    let (dt, at, bt) = (d >> 4 & 3, d >> 7 & 7, d >> 10 & 7);
    match f.kind {
        MmaKind::F16 if dt == 1 && at == 0 && bt == 0 => Some((n, 16, 2)),
        MmaKind::Tf32 if dt == 1 && at == 2 && bt == 2 => Some((n, 8, 4)),
        MmaKind::I8 if dt == 2 && at <= 1 && bt <= 1 => Some((n, 32, 1)),
        _ => None,
    }
}

/// The emulated MMA on a body being printed.
pub(super) trait EmuMma {
    /// Prints the emulation of MMA `m`.
    fn mma_emu(&mut self, m: &tcgen05_ir::Mma);
}

impl EmuMma for Body<'_, Emu<'_>> {
    /// Emulated tcgen05.mma, by each thread that issues it, completing at issue. The subset of
    /// [`mma_computed`] writes D = A·B (+ D·2^-scale) into TMEM, skipping lanes whose
    /// disable-output-lane bit is set; other forms leave D as it was (their values are
    /// unspecified where the layouts are figures only).
    fn mma_emu(&mut self, m: &tcgen05_ir::Mma) {
        let Some((n, kk, eb)) = mma_computed(m) else {
            return;
        };
        let a = mma_desc(m).copied();
        let b = m.b;
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
        let kind = m.form.kind;
        let idesc = m.idesc;
        let (sa, sb) = (idesc >> 7 & 7 == 1, idesc >> 10 & 7 == 1);
        let (na, nb) = (idesc >> 13 & 1 == 1, idesc >> 14 & 1 == 1);
        let int = kind == tcgen05_ir::MmaKind::I8;
        let (abase, bbase) = (self.r(), self.r());
        if let Some(a) = &a {
            self.line(&format!("mov.u32 %r{abase}, tc_data{};", a.region));
            self.line(&format!("add.u32 %r{abase}, %r{abase}, {};", a.offset));
        }
        self.line(&format!("mov.u32 %r{bbase}, tc_data{};", b.region));
        self.line(&format!("add.u32 %r{bbase}, %r{bbase}, {};", b.offset));
        let tm = self.r();
        self.line(&format!("mov.u32 %r{tm}, emu_tmem;"));
        let l = self.next_label();
        let (row, col, k, acc, x, y, addr, t) = (
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
            self.r(),
        );
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
        // The element at `addr` into `out` (f32, or s32 for i8).
        let load = |b: &mut Self, out: u32, signed: bool, neg: bool| {
            match kind {
                tcgen05_ir::MmaKind::F16 => {
                    b.line(&format!("ld.shared.b16 %h{h}, [%r{addr}];"));
                    b.line(&format!("cvt.f32.f16 %r{out}, %h{h};"));
                }
                tcgen05_ir::MmaKind::Tf32 => {
                    b.line(&format!("ld.shared.b32 %r{out}, [%r{addr}];"));
                    b.line(&format!("and.b32 %r{out}, %r{out}, -8192;"));
                }
                _ => {
                    let ty = if signed { "s8" } else { "u8" };
                    b.line(&format!("ld.shared.{ty} %r{out}, [%r{addr}];"));
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
        self.label(&format!("$M{l}_row"));
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
        self.label(&format!("$M{l}_col"));
        self.line(&format!("mov.u32 %r{acc}, 0;"));
        self.line(&format!("mov.u32 %r{k}, 0;"));
        self.label(&format!("$M{l}_k"));
        match (&a, a_tmem) {
            (Some(desc), _) => smem_addr(self, abase, desc, row),
            (None, Some((al, ac))) => tmem_addr(self, al, ac, arow),
            (None, None) => unreachable!("an MMA's A is in shared memory or in TMEM"),
        }
        load(self, x, sa, na);
        smem_addr(self, bbase, &b, col);
        load(self, y, sb, nb);
        if int {
            self.line(&format!("mad.lo.s32 %r{acc}, %r{x}, %r{y}, %r{acc};"));
        } else {
            self.line(&format!("fma.rn.f32 %r{acc}, %r{x}, %r{y}, %r{acc};"));
        }
        self.line(&format!("add.u32 %r{k}, %r{k}, 1;"));
        self.line(&format!("setp.lt.u32 %p{p}, %r{k}, {kk};"));
        self.line(&format!("@%p{p} bra $M{l}_k;"));
        // The D cell (lane dl + row, column dc + col).
        self.line(&format!("add.u32 %r{t}, %r{dc}, %r{col};"));
        self.line(&format!("add.u32 %r{addr}, %r{dl}, %r{row};"));
        self.line(&format!("mad.lo.u32 %r{addr}, %r{t}, 128, %r{addr};"));
        self.line(&format!("mad.lo.u32 %r{addr}, %r{addr}, 4, %r{tm};"));
        if m.enable_input_d {
            self.line(&format!("ld.shared.u32 %r{x}, [%r{addr}];"));
            if int {
                self.line(&format!("add.s32 %r{acc}, %r{acc}, %r{x};"));
            } else {
                let s = m.scale_input_d.unwrap_or(0);
                // 2^-s as an f32 bit pattern (s <= 15, MMA-SCALE-D).
                let scale = (127u32.saturating_sub(u32::from(s.min(15)))) << 23;
                self.line(&format!("mul.rn.f32 %r{x}, %r{x}, 0f{scale:08X};"));
                self.line(&format!("add.rn.f32 %r{acc}, %r{acc}, %r{x};"));
            }
        }
        self.line(&format!("st.shared.u32 [%r{addr}], %r{acc};"));
        self.line(&format!("add.u32 %r{col}, %r{col}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{col}, {n};"));
        self.line(&format!("@%p{q} bra $M{l}_col;"));
        self.label(&format!("$M{l}_next_row"));
        self.line(&format!("add.u32 %r{row}, %r{row}, 1;"));
        self.line(&format!("setp.lt.u32 %p{q}, %r{row}, 128;"));
        self.line(&format!("@%p{q} bra $M{l}_row;"));
    }
}
