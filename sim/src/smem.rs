//! A data region of a CTA's shared memory, as the simulator keeps it: its words are all 0 at
//! launch and only generic-proxy fills (`Stmt::Fill`) write them, so a region is its fills
//! in order, and a word is computed when it is read (an MMA operand row, a cp source) from
//! the last fill whose lanes cover it. Reads give exactly the words an eager fill would
//! have stored.

use tcgen05_ir::FillElem;
use tcgen05_ir::values::fill_word;

/// One fill: lane `l` of the mask writes words `l, l + 32, l + 64, ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fill {
    mask: u32,
    elem: FillElem,
    seed: u32,
}

/// The words of one data region.
#[derive(Debug, Clone, Default)]
pub struct Region {
    len: usize,
    /// Words below every fill (empty: all 0).
    base: Vec<u32>,
    /// Fills, oldest first; a fill by every lane hides the older ones, which are dropped.
    fills: Vec<Fill>,
    /// Per lane `l` (the words `i` with `i % 32 == l`), 1 + the index in `fills` of the last
    /// fill that covers it; 0: none (the word is in `base`).
    owner: [u32; 32],
    /// Whether every entry of `owner` is the same.
    uniform: bool,
}

impl Region {
    /// `len` words, all 0.
    pub fn zeroed(len: usize) -> Region {
        Region {
            len,
            base: Vec::new(),
            fills: Vec::new(),
            owner: [0; 32],
            uniform: true,
        }
    }

    /// A region holding these words.
    pub fn from_words(words: Vec<u32>) -> Region {
        Region {
            len: words.len(),
            base: words,
            fills: Vec::new(),
            owner: [0; 32],
            uniform: true,
        }
    }

    /// Its size in words.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no words.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Word `i`; `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u32> {
        if i >= self.len {
            return None;
        }
        match self.owner[i % 32] {
            0 => Some(self.base.get(i).copied().unwrap_or(0)),
            f => {
                let f = self.fills[f as usize - 1];
                Some(fill_word(f.elem, f.seed, i as u32))
            }
        }
    }

    /// Words `i0, i0 + 1, ...` into `out` (`out.len()` of them), each as [`Region::get`] gives
    /// it, 0 past the end: the cp and operand readers' bulk read.
    #[inline]
    pub fn read_into(&self, i0: usize, out: &mut [u32]) {
        if i0.checked_add(out.len()).is_none_or(|e| e > self.len) {
            for (j, x) in out.iter_mut().enumerate() {
                *x = i0.checked_add(j).and_then(|i| self.get(i)).unwrap_or(0);
            }
            return;
        }
        // Every lane's words from the same fill (or from `base`): its element kind decided
        // once for the run.
        if self.uniform {
            match self.owner[0]
                .checked_sub(1)
                .and_then(|f| self.fills.get(f as usize))
            {
                Some(f) => fill_run(f.elem, f.seed, i0 as u32, out),
                None => {
                    for (k, x) in out.iter_mut().enumerate() {
                        *x = self.base.get(i0 + k).copied().unwrap_or(0);
                    }
                }
            }
            return;
        }
        for (j, x) in out.iter_mut().enumerate() {
            let i = i0 + j;
            *x = match self.owner[i % 32] {
                0 => self.base.get(i).copied().unwrap_or(0),
                f => {
                    let f = self.fills[f as usize - 1];
                    fill_word(f.elem, f.seed, i as u32)
                }
            };
        }
    }

    /// The fill of the lanes of `mask` (each lane `l` writes every word `i` with
    /// `i % 32 == l`) with `fill_word(elem, seed, i)`.
    pub fn fill(&mut self, mask: u32, elem: FillElem, seed: u32) {
        if mask == 0 {
            return;
        }
        if mask == u32::MAX {
            self.fills.clear();
            self.base = Vec::new();
        }
        self.fills.push(Fill { mask, elem, seed });
        let n = self.fills.len() as u32;
        for (l, o) in self.owner.iter_mut().enumerate() {
            if mask >> l & 1 == 1 {
                *o = n;
            }
        }
        self.uniform = self.owner.iter().all(|&o| o == n);
    }
}

/// `fill_word(elem, seed, i0 + k)` into `out[k]`, the element kind decided once.
#[inline]
fn fill_run(elem: FillElem, seed: u32, i0: u32, out: &mut [u32]) {
    macro_rules! each {
        ($e:expr) => {
            for (k, x) in out.iter_mut().enumerate() {
                *x = fill_word($e, seed, i0.wrapping_add(k as u32));
            }
        };
    }
    match elem {
        FillElem::Word => each!(FillElem::Word),
        FillElem::F16Small => each!(FillElem::F16Small),
        FillElem::Tf32Small => each!(FillElem::Tf32Small),
        FillElem::I8Small => each!(FillElem::I8Small),
        FillElem::SpMeta => each!(FillElem::SpMeta),
        FillElem::ScaleSmall => each!(FillElem::ScaleSmall),
        FillElem::Bf16Small => each!(FillElem::Bf16Small),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_those_of_the_last_fill_of_their_lane() {
        let mut r = Region::zeroed(100);
        assert_eq!(r.get(5), Some(0));
        assert_eq!(r.get(100), None);
        r.fill(u32::MAX, FillElem::Word, 7);
        let mut all = [0u32; 5];
        r.read_into(30, &mut all);
        assert_eq!(
            all,
            [30, 31, 32, 33, 34].map(|i| fill_word(FillElem::Word, 7, i))
        );
        r.fill(1 << 3, FillElem::I8Small, 9);
        // Word 35 is lane 3's (35 % 32): the second fill; word 36 the first.
        assert_eq!(r.get(35), Some(fill_word(FillElem::I8Small, 9, 35)));
        assert_eq!(r.get(36), Some(fill_word(FillElem::Word, 7, 36)));
        // A bulk read gives the same words, 0 past the end.
        let mut out = [9u32; 6];
        r.read_into(34, &mut out);
        assert_eq!(out, [34, 35, 36, 37, 38, 39].map(|i| r.get(i).unwrap_or(0)));
        r.read_into(97, &mut out);
        assert_eq!(out[3..], [0, 0, 0]);
        assert_eq!(out[0], fill_word(FillElem::Word, 7, 97));
        let w = Region::from_words(vec![1, 2, 3]);
        assert_eq!((w.get(2), w.get(3), w.len()), (Some(3), None, 3));
    }
}
