//! The observation buffer: one documented layout that every target fills, so comparing a run
//! with the oracle is one function (docs/architecture.md, "Observations").
//!
//! # Layout
//!
//! The buffer is an array of little-endian `u32` words, passed to the kernel as its only
//! parameter and zero-filled before the launch. It holds one *CTA block* per CTA of the grid,
//! in global CTA order (`cta = %clusterid.x * cluster_size + %cluster_ctarank`), each
//! [`Layout::cta_words`] long. A CTA block holds one *warp block* per warp rank, at offset
//! [`Layout::warp_base`]`[w]`. A warp block is:
//!
//! | words | what |
//! | --- | --- |
//! | 32 | checkpoint per lane: the last [`CHECKPOINT_START`], user id, [`CHECKPOINT_EXIT`] or [`CHECKPOINT_DONE`] the lane wrote; 0 = never ran |
//! | per site of the functions, then per site of this warp's own code | the site's record |
//!
//! Sites of functions sit at the same offset in every warp block (any warp may call them);
//! a function finds its warp block through its `.param .u64` argument.
//!
//! A *site* is a statement that records something: a [`crate::Op::Ld`], a
//! [`crate::Stmt::ObserveAddr`] or a [`crate::Stmt::MbarWait`]. Its record is 32 `valid` words
//! (one per lane; a lane writes 1 when it records) followed by `32 * words` data words, lane
//! major (lane `t`, word `i` at `t * words + i`):
//! - ld: `words = nregs` (+1 for `.red`: the `redval` register last). The registers are
//!   recorded right after the first `tcgen05.wait::ld` that follows the ld in the same
//!   statement list, or at the end of that list if none follows (then the store's register
//!   dependency orders it, MCM-LD-REGDEP);
//! - ObserveAddr: `words = 1`, the value `ld.shared` read from the slot;
//! - MbarWait: `words = 1`: [`MBAR_COMPLETED`] or [`MBAR_GAVE_UP`].
//!
//! A site inside a loop is overwritten by each iteration: the record holds the last one.

use crate::program::{Op, Program, Stmt};

/// Checkpoint word: the lane started.
pub const CHECKPOINT_START: u32 = 0xFFFF_0000;
/// Checkpoint word: the lane exited through [`crate::Stmt::Exit`].
pub const CHECKPOINT_EXIT: u32 = 0xFFFF_FFFE;
/// Checkpoint word: the lane finished its code.
pub const CHECKPOINT_DONE: u32 = 0xFFFF_FFFF;
/// MbarWait record: the phase completed.
pub const MBAR_COMPLETED: u32 = 1;
/// MbarWait record: the bounded loop gave up.
pub const MBAR_GAVE_UP: u32 = 2;

/// What a site records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteKind {
    /// A tcgen05.ld (`words` = registers, +1 for redval).
    Ld,
    /// An alloc slot read.
    Addr,
    /// An mbarrier wait result.
    Mbar,
}

/// Where one site's record lives inside a warp block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    /// What it records.
    pub kind: SiteKind,
    /// Offset of the record (its `valid` words) inside the warp block.
    pub offset: u32,
    /// Data words per lane.
    pub words: u32,
}

impl Site {
    /// Words the record occupies.
    pub fn len(&self) -> u32 {
        32 + 32 * self.words
    }

    /// Always false: a record has at least its valid words.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Index, in the warp block, of lane `lane`'s valid word: the record's first 32 words
    /// are the lanes' valid words.
    pub fn valid_word(&self, lane: u32) -> u32 {
        self.offset + lane
    }

    /// Index, in the warp block, of lane `lane`'s data word `i`: after the valid words, each
    /// lane's [`Site::words`] data words in lane order.
    pub fn data_word(&self, lane: u32, i: u32) -> u32 {
        self.offset + 32 + lane * self.words + i
    }
}

/// The layout of one program's observation buffer. Sites are numbered in a fixed pre-order:
/// the functions' statements first (function 0, 1, ...), then each warp's own statements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Sites of each function, in pre-order.
    pub func_sites: Vec<Vec<Site>>,
    /// Sites of each warp's own code, in pre-order.
    pub warp_sites: Vec<Vec<Site>>,
    /// Offset of each warp block in a CTA block.
    pub warp_base: Vec<u32>,
    /// Words of one CTA block.
    pub cta_words: u32,
    /// CTAs in the grid.
    pub ctas: u32,
}

/// Data words a statement records, if it is a site.
pub fn site_of(s: &Stmt) -> Option<(SiteKind, u32)> {
    match s {
        Stmt::Tc(Op::Ld { form, nregs, .. }) => {
            Some((SiteKind::Ld, u32::from(*nregs) + u32::from(form.red)))
        }
        Stmt::ObserveAddr { .. } => Some((SiteKind::Addr, 1)),
        Stmt::MbarWait { .. } => Some((SiteKind::Mbar, 1)),
        _ => None,
    }
}

/// The site of `s` while walking a block whose enclosing code has `sites` (in pre-order, as
/// [`Layout`] lists them) and whose next site is `sites[*next]`: `Some` and `next` moved on
/// if `s` records, else `None`. Every printer walks the program with it.
pub fn next_site(s: &Stmt, sites: &[Site], next: &mut usize) -> Option<Site> {
    site_of(s)?;
    *next += 1;
    Some(sites[*next - 1])
}

fn collect(block: &[Stmt], next: &mut u32, out: &mut Vec<Site>) {
    for s in block {
        if let Some((kind, words)) = site_of(s) {
            let site = Site {
                kind,
                offset: *next,
                words,
            };
            *next += site.len();
            out.push(site);
        }
        match s {
            Stmt::If { then, els, .. } => {
                collect(then, next, out);
                collect(els, next, out);
            }
            Stmt::Loop { body, .. } => collect(body, next, out),
            _ => {}
        }
    }
}

impl Layout {
    /// The layout of `p`'s buffer.
    pub fn of(p: &Program) -> Layout {
        let mut next = 32;
        let mut func_sites = Vec::with_capacity(p.funcs.len());
        for f in &p.funcs {
            let mut v = Vec::new();
            collect(&f.body, &mut next, &mut v);
            func_sites.push(v);
        }
        let shared_end = next;
        let mut warp_base = Vec::with_capacity(p.warps.len());
        let mut warp_sites = Vec::with_capacity(p.warps.len());
        let mut base = 0;
        for w in &p.warps {
            let mut local = shared_end;
            let mut v = Vec::new();
            collect(w, &mut local, &mut v);
            warp_base.push(base);
            warp_sites.push(v);
            base += local;
        }
        Layout {
            func_sites,
            warp_sites,
            warp_base,
            cta_words: base,
            ctas: p.launch.ctas(),
        }
    }

    /// Words of the whole buffer.
    pub fn total_words(&self) -> usize {
        self.cta_words as usize * self.ctas as usize
    }

    /// Word index of the start of warp `w`'s block in CTA `cta`.
    pub fn warp_block(&self, cta: u32, w: usize) -> usize {
        (cta * self.cta_words + self.warp_base[w]) as usize
    }
}

/// A decoded observation buffer, read-only view.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// The layout.
    pub layout: &'a Layout,
    /// The words.
    pub words: &'a [u32],
}

impl View<'_> {
    /// Lane `lane`'s checkpoint word in warp `w` of CTA `cta`.
    pub fn checkpoint(&self, cta: u32, w: usize, lane: u32) -> u32 {
        self.words[self.layout.warp_block(cta, w) + lane as usize]
    }

    /// The record of `site` in warp `w` of CTA `cta` for `lane`: `None` if the lane did not
    /// record it, else its data words.
    pub fn record(&self, cta: u32, w: usize, site: &Site, lane: u32) -> Option<&[u32]> {
        let block = self.layout.warp_block(cta, w);
        if self.words[block + site.valid_word(lane) as usize] == 0 {
            return None;
        }
        let d = block + site.data_word(lane, 0) as usize;
        Some(&self.words[d..d + site.words as usize])
    }
}
