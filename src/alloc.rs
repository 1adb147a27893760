//! The global allocator of the binary: mimalloc, called through its plain entry points where
//! they give the alignment asked for.
//!
//! The `mimalloc` crate's allocator calls mimalloc's *aligned* entry points for every
//! allocation. For a block above mimalloc's small size (1 KiB) whose size class is not a power
//! of two, those take an over-allocating slow path even for the alignment of a `u32`
//! (`mi_theap_malloc_zero_aligned_at_overalloc`: ~230 instructions a call, measured with
//! callgrind on `bench`; ~2% of the pipeline's instructions, mostly the simulator's and the
//! oracle's per-case buffers). mimalloc's plain `mi_malloc` already aligns every block of 16
//! bytes or more to 16 (`MI_MAX_ALIGN_SIZE`) and smaller blocks to their size class; so, as the
//! standard library's `System` allocator does with `malloc`, an alignment of at most 16 that
//! is at most the size goes to the plain entry points, any other to the aligned ones.
#![expect(
    unsafe_code,
    reason = "a global allocator implements the unsafe GlobalAlloc trait over mimalloc's C API"
)]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as ffi;

/// The alignment every mimalloc block of at least this size has (`MI_MAX_ALIGN_SIZE`).
const MIN_ALIGN: usize = 16;

/// mimalloc, with the plain entry points for ordinary alignments.
#[derive(Debug)]
pub struct Mimalloc;

/// Whether `mi_malloc(layout.size())` is aligned enough for `layout`.
#[inline]
fn plain(align: usize, size: usize) -> bool {
    align <= MIN_ALIGN && align <= size
}

// SAFETY: every pointer comes from mimalloc and goes back to it; the plain entry points are
// used only where they give at least the alignment the layout asks for (`plain`), and
// `mi_free`/`mi_realloc` accept blocks from either family.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: FFI calls with a size and a power-of-two alignment from `layout`.
        unsafe {
            if plain(layout.align(), layout.size()) {
                ffi::mi_malloc(layout.size()) as *mut u8
            } else {
                ffi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if plain(layout.align(), layout.size()) {
                ffi::mi_zalloc(layout.size()) as *mut u8
            } else {
                ffi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator (the caller's contract).
        unsafe { ffi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was allocated by this allocator with `layout` (the caller's contract).
        unsafe {
            if plain(layout.align(), new_size) {
                ffi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                ffi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every layout gets a block aligned as it asks, that holds its bytes, zeroed where asked,
    /// and keeps them across a reallocation (alignments 1 to 4096, sizes around mimalloc's
    /// size classes and its small/large boundaries).
    #[test]
    fn blocks_are_aligned_as_asked_and_keep_their_bytes() {
        let a = Mimalloc;
        for align in [1usize, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [
                1usize, 3, 8, 15, 16, 24, 100, 1024, 1025, 1280, 5000, 70_000,
            ] {
                let l = Layout::from_size_align(size, align).expect("a layout");
                for zeroed in [false, true] {
                    // SAFETY: a non-zero-size layout; the block is written within `size`
                    // and freed once, by this allocator.
                    unsafe {
                        let p = if zeroed {
                            a.alloc_zeroed(l)
                        } else {
                            a.alloc(l)
                        };
                        assert!(!p.is_null(), "{size} bytes aligned {align}");
                        assert_eq!(p as usize % align, 0, "{size} bytes aligned {align}");
                        if zeroed {
                            let s = std::slice::from_raw_parts(p, size);
                            assert!(s.iter().all(|&b| b == 0), "{size} bytes zeroed");
                        }
                        for i in 0..size {
                            *p.add(i) = i as u8;
                        }
                        let grown = size * 3 + 7;
                        let q = a.realloc(p, l, grown);
                        assert!(!q.is_null());
                        assert_eq!(q as usize % align, 0, "realloc to {grown} aligned {align}");
                        for i in 0..size {
                            assert_eq!(*q.add(i), i as u8, "byte {i} kept by realloc");
                        }
                        a.dealloc(q, Layout::from_size_align(grown, align).expect("a layout"));
                    }
                }
            }
        }
    }
}
