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
}

impl Region {
    /// `len` words, all 0.
    pub fn zeroed(len: usize) -> Region {
        Region {
            len,
            base: Vec::new(),
            fills: Vec::new(),
            owner: [0; 32],
        }
    }

    /// A region holding these words.
    pub fn from_words(words: Vec<u32>) -> Region {
        Region {
            len: words.len(),
            base: words,
            fills: Vec::new(),
            owner: [0; 32],
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
        r.fill(1 << 3, FillElem::I8Small, 9);
        // Word 35 is lane 3's (35 % 32): the second fill; word 36 the first.
        assert_eq!(r.get(35), Some(fill_word(FillElem::I8Small, 9, 35)));
        assert_eq!(r.get(36), Some(fill_word(FillElem::Word, 7, 36)));
        let w = Region::from_words(vec![1, 2, 3]);
        assert_eq!((w.get(2), w.get(3), w.len()), (Some(3), None, 3));
    }
}
