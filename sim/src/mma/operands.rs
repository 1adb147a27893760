//! The operands of an MMA in shared memory (reference §3.7, canonical K-major layout
//! without swizzle; the layout is given in the crate documentation of [`super`]): rows decoded
//! on first use, checked against their data region, and single elements loaded and decoded.

use super::*;

/// The rows of an operand (A: M x K, B: N x K), negated where the instruction descriptor
/// says, decoded on first use from the shared-memory words as they were when the MMA performed
/// (the region is shared copy-on-write with the CTA).
#[derive(Debug)]
pub(super) struct Rows {
    pub(super) k: usize,
    /// From row `.0` on, the rows come from region `.1` (row `r` at local row `r - .0`).
    pub(super) src: Vec<(u32, Rc<Region>)>,
    /// An A operand in TMEM: 8 stored cells per row, for the rows not decoded at perform
    /// ([`Rows::decoded`]).
    pub(super) raw: Vec<u32>,
    pub(super) desc: SmemDesc,
    pub(super) ty: Elem,
    pub(super) neg: bool,
    /// The decoded rows, in the order they were first used.
    pub(super) data: RefCell<Vec<f32>>,
    /// Where row `r` starts in `data`; [`NOT_YET`] before its first use.
    pub(super) at: Vec<Cell<u32>>,
    /// A B operand's rows in groups of 4 consecutive rows (`r..r + 4`, any first row `r`),
    /// transposed for [`dots4`]: built on first use ([`Rows::group`]).
    pub(super) groups: RefCell<Groups>,
}

/// The transposed row groups of a B operand: the group from row `r` holds element `k` of
/// row `r + j` at `data[at[r] + 4 * k + j]`. Groups may overlap (an ld's runs start at any
/// column, and the 32 lanes of an ld read the same columns: a group from an unaligned row
/// is built once and serves every lane).
#[derive(Debug, Default)]
pub(super) struct Groups {
    /// Where the group from row `r` starts in `data` ([`NOT_YET`] before its first use; empty
    /// until the first group is built).
    pub(super) at: Vec<u32>,
    pub(super) data: Vec<f32>,
}

/// A row not decoded yet.
pub(super) const NOT_YET: u32 = u32::MAX;

impl Rows {
    /// Rows of an A operand in TMEM: the rows whose `at` is set are decoded in `data`; the
    /// others (`at` [`NOT_YET`]) are decoded on first use from their 8 stored cells in `raw`
    /// (row r at `raw[8 * r..]`), as elements of type `ty`, negated if `neg`.
    pub(super) fn decoded(
        data: Vec<f32>,
        at: Vec<Cell<u32>>,
        raw: Vec<u32>,
        ty: Elem,
        neg: bool,
        k: u32,
    ) -> Rows {
        Rows {
            k: k as usize,
            src: Vec::new(),
            raw,
            desc: SmemDesc {
                region: 0,
                offset: 0,
                lbo_enc: 0,
                sbo_enc: 0,
                fixed: 0,
                base_offset: 0,
                lbo_abs: false,
                swizzle: 0,
                reserved: 0,
            },
            ty,
            neg,
            data: RefCell::new(data),
            at,
            groups: RefCell::default(),
        }
    }

    /// An operand in shared memory, its rows from the CTAs of `parts` (first row, the CTA's
    /// regions); `Err` (the first element outside its data region) when any element is
    /// outside it.
    pub(super) fn smem(
        parts: &[(u32, &[Rc<Region>])],
        desc: &SmemDesc,
        ty: Elem,
        neg: bool,
        rows: u32,
        k: u32,
    ) -> Result<Rows, MmaError> {
        let mut src = Vec::with_capacity(parts.len());
        for (i, (first, regions)) in parts.iter().enumerate() {
            let end = parts.get(i + 1).map_or(rows, |p| p.0);
            let region = regions
                .get(usize::from(desc.region))
                .ok_or(MmaError::NoRegion)?;
            Self::check(regions, desc, ty, end - first, k)?;
            src.push((*first, Rc::clone(region)));
        }
        Ok(Rows {
            k: k as usize,
            src,
            raw: Vec::new(),
            desc: *desc,
            ty,
            neg,
            data: RefCell::new(Vec::new()),
            at: vec![Cell::new(NOT_YET); rows as usize],
            groups: RefCell::default(),
        })
    }

    /// `Err` naming the first element outside its region, if any.
    pub(super) fn check(
        regions: &[Rc<Region>],
        desc: &SmemDesc,
        ty: Elem,
        rows: u32,
        k: u32,
    ) -> Result<(), MmaError> {
        let region = &regions[usize::from(desc.region)];
        // The largest address is the sum of the largest row and element terms (every term
        // grows with its index inside a core matrix and from one core matrix to the next).
        let last = |n: u32, f: &dyn Fn(u32) -> u32| {
            let mut m = f(n.saturating_sub(1));
            if n > 8 {
                m = m.max(f(8 * ((n - 1) / 8) - 1));
            }
            m
        };
        let (bytes, lbo, sbo) = (
            ty.bytes(),
            u32::from(desc.lbo_enc) << 4,
            u32::from(desc.sbo_enc) << 4,
        );
        let t = 16 / bytes;
        let max_row = last(rows, &|r| (r % 8) * 16 + (r / 8) * sbo);
        let max_k = (0..k)
            .map(|k| (k % t) * bytes + (k / t) * lbo)
            .max()
            .unwrap_or(0);
        if rows == 0 || ((desc.offset + max_row + max_k) / 4) as usize >= region.len() {
            // Name the first element outside, in row-major order.
            for r in 0..rows {
                for kk in 0..k {
                    load(regions, desc, ty, r, kk)?;
                }
            }
        }
        Ok(())
    }

    /// Where row `r` starts in `data`, decoding it on first use.
    #[inline]
    pub(super) fn row(&self, r: usize) -> usize {
        match self.at[r].get() {
            NOT_YET => self.decode_row(r),
            at => at as usize,
        }
    }

    /// Where the group of rows `r..r + 4` (transposed: [`Groups`]) starts in the groups'
    /// data, building it (and decoding its rows) on first use. The caller makes sure that
    /// `r + 4` is at most the number of rows.
    #[inline]
    pub(super) fn group(&self, r: usize) -> usize {
        if let Some(&at) = self.groups.borrow().at.get(r)
            && at != NOT_YET
        {
            return at as usize;
        }
        self.build_group(r)
    }

    /// Builds the group from row `r` at the end of the groups' data; where it starts.
    #[inline(never)]
    pub(super) fn build_group(&self, r: usize) -> usize {
        let starts: [usize; 4] = std::array::from_fn(|j| self.row(r + j));
        let rows = self.data.borrow();
        let mut groups = self.groups.borrow_mut();
        let Groups { at, data } = &mut *groups;
        if at.is_empty() {
            at.resize(self.at.len(), NOT_YET);
            data.reserve(self.at.len() * self.k);
        }
        let start = data.len();
        data.resize(start + 4 * self.k, 0.0);
        let dst = &mut data[start..];
        for (j, &s) in starts.iter().enumerate() {
            for (k, &x) in rows[s..s + self.k].iter().enumerate() {
                dst[4 * k + j] = x;
            }
        }
        at[r] = start as u32;
        start
    }

    /// Decodes row `r` at the end of `data`; where it starts.
    #[inline(never)]
    pub(super) fn decode_row(&self, r: usize) -> usize {
        let mut data = self.data.borrow_mut();
        let start = data.len();
        if data.capacity() == 0 {
            data.reserve(self.k * 16);
        }
        data.resize(start + self.k, 0.0);
        self.at[r].set(start as u32);
        if let Some(cells) = self.raw.get(8 * r..8 * r + 8) {
            // 8 cells: two 16-byte core-matrix rows of 16 / bytes elements each.
            let row = &mut data[start..start + self.k];
            let t = (16 / self.ty.bytes()) as usize;
            let (lo, hi) = cells.split_at(4);
            let halves = [lo, hi].map(|h| <[u32; 4]>::try_from(h).unwrap_or_default());
            for (words, chunk) in halves.iter().zip(row.chunks_mut(t)) {
                decode_chunk(self.ty, words, chunk);
            }
            if self.neg {
                for x in row.iter_mut() {
                    *x = -*x;
                }
            }
            return start;
        }
        let Some((first, region)) = self.src.iter().rev().find(|p| p.0 as usize <= r) else {
            return start;
        };
        let (d, ty, neg) = (&self.desc, self.ty, self.neg);
        let local = r - *first as usize;
        let row = &mut data[start..start + self.k];
        let bytes = ty.bytes();
        let t = 16 / bytes;
        let lbo = u32::from(d.lbo_enc) << 4;
        let sbo = u32::from(d.sbo_enc) << 4;
        let r32 = local as u32;
        let row_addr = d.offset + (r32 % 8) * 16 + (r32 / 8) * sbo;
        if row_addr.is_multiple_of(4) {
            // Word-aligned: each 16-byte core-matrix row is 4 whole words, `t` elements.
            for (c, chunk) in row.chunks_mut(t as usize).enumerate() {
                let w0 = (row_addr + c as u32 * lbo) / 4;
                let mut words = [0u32; 4];
                region.read_into(w0 as usize, &mut words);
                decode_chunk(ty, &words, chunk);
            }
            if neg {
                for x in row.iter_mut() {
                    *x = -*x;
                }
            }
            return start;
        }
        // Elements narrower than a word share it: fetch each word once.
        let mut last: Option<(u32, u32)> = None;
        for (k, x) in row.iter_mut().enumerate() {
            let k = k as u32;
            let addr = row_addr + (k % t) * bytes + (k / t) * lbo;
            let word = match last {
                Some((i, w)) if i == addr / 4 => w,
                _ => {
                    let w = region.get((addr / 4) as usize).unwrap_or(0);
                    last = Some((addr / 4, w));
                    w
                }
            };
            let v = decode(ty, word >> (8 * (addr % 4)), word);
            *x = if neg { -v } else { v };
        }
        start
    }
}

/// The elements of one 16-byte core-matrix row (`words`), decoded into `out` (16 / bytes
/// elements, little-endian inside each word).
#[inline]
pub(super) fn decode_chunk(ty: Elem, words: &[u32; 4], out: &mut [f32]) {
    // Whole chunks (the aligned rows of `decode_row`) a word at a time; a shorter `out` (a
    // row's last chunk) element by element.
    match ty {
        Elem::F16 | Elem::Bf16 => {
            if let Ok(out) = <&mut [f32; 8]>::try_from(&mut *out) {
                if ty == Elem::F16 && f16_plain8(words, out) {
                    return;
                }
                for (pair, &w) in out.chunks_exact_mut(2).zip(words) {
                    if ty == Elem::F16 {
                        pair[0] = f16_to_f32(w as u16);
                        pair[1] = f16_to_f32((w >> 16) as u16);
                    } else {
                        pair[0] = f32::from_bits(w << 16);
                        pair[1] = f32::from_bits(w & 0xFFFF_0000);
                    }
                }
                return;
            }
            for (i, x) in out.iter_mut().enumerate() {
                let w = words[i / 2];
                *x = decode(ty, w >> (16 * (i % 2)), w);
            }
        }
        Elem::Tf32 => {
            for (x, &w) in out.iter_mut().zip(words) {
                *x = decode(ty, w, w);
            }
        }
        Elem::E4m3 | Elem::E5m2 => {
            let table = &fp8_table()[usize::from(ty == Elem::E5m2)];
            if let Ok(out) = <&mut [f32; 16]>::try_from(&mut *out) {
                for (quad, &w) in out.chunks_exact_mut(4).zip(words) {
                    for (j, x) in quad.iter_mut().enumerate() {
                        *x = table[(w >> (8 * j) & 0xFF) as usize];
                    }
                }
                return;
            }
            for (i, x) in out.iter_mut().enumerate() {
                *x = table[(words[i / 4] >> (8 * (i % 4)) & 0xFF) as usize];
            }
        }
        Elem::S8 | Elem::U8 => {
            if let Ok(out) = <&mut [f32; 16]>::try_from(&mut *out) {
                for (quad, &w) in out.chunks_exact_mut(4).zip(words) {
                    for (j, x) in quad.iter_mut().enumerate() {
                        let b = (w >> (8 * j)) as u8;
                        *x = if ty == Elem::S8 {
                            f32::from(b as i8)
                        } else {
                            f32::from(b)
                        };
                    }
                }
                return;
            }
            for (i, x) in out.iter_mut().enumerate() {
                let w = words[i / 4];
                *x = decode(ty, w >> (8 * (i % 4)), w);
            }
        }
    }
}

pub(super) fn load(
    regions: &[Rc<Region>],
    d: &SmemDesc,
    ty: Elem,
    r: u32,
    k: u32,
) -> Result<f32, MmaError> {
    let bytes = ty.bytes();
    let t = 16 / bytes;
    let lbo = u32::from(d.lbo_enc) << 4;
    let sbo = u32::from(d.sbo_enc) << 4;
    let addr = d.offset + (r % 8) * 16 + (r / 8) * sbo + (k % t) * bytes + (k / t) * lbo;
    let region = &regions[usize::from(d.region)];
    let word = region
        .get((addr / 4) as usize)
        .ok_or(MmaError::OutsideRegion(addr))?;
    Ok(decode(ty, word >> (8 * (addr % 4)), word))
}

/// The value of an element whose bits start at the low end of `v` (`word`: the whole cell,
/// for 32-bit elements).
#[inline]
pub(super) fn decode(ty: Elem, v: u32, word: u32) -> f32 {
    match ty {
        Elem::F16 => f16_to_f32(v as u16),
        Elem::Bf16 => f32::from_bits((v & 0xFFFF) << 16),
        Elem::Tf32 => f32::from_bits(word & !0x1FFF),
        Elem::S8 => f32::from(v as u8 as i8),
        Elem::U8 => f32::from(v as u8),
        Elem::E4m3 => fp8_table()[0][(v & 0xFF) as usize],
        Elem::E5m2 => fp8_table()[1][(v & 0xFF) as usize],
    }
}
