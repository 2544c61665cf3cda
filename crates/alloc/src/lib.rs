//! The allocator of egsolve's binaries: jemalloc ([`tikv_jemallocator`]) behind
//! [`Allocator`] (which clears small zeroed blocks itself), set by
//! [`crate::global_allocator!`] in each binary's `main.rs` (the libraries leave the
//! choice to whatever links it, its test binaries included).
//!
//! Why: a solve allocates per-vertex and per-edge vectors of tens of megabytes, evaluation
//! after evaluation and job after job. glibc serves such blocks by `mmap` and unmaps them
//! when they are freed (or trims its heap), so every new vector faults its pages in again
//! one by one, the kernel clearing each: on a 2.5-million-vertex game a pass that writes
//! one word per vertex took about twice as long into fresh memory as into memory already
//! mapped (a scratch test on the 2-core build machine: 7.8 ms against 4.2; glibc's own
//! tunables cannot keep blocks over 32 MiB). jemalloc keeps freed blocks and hands them out
//! again, but by default it still hands their pages back to the kernel within its decay
//! epochs, which a solve outlasts, and it spreads threads over many arenas, so a block freed
//! in one is not reused by a solve allocating from another. [`CONF`] turns both off: one
//! arena, and freed pages kept until [`release_free_memory`]. Measured on the H100 host's 16
//! cores, warm process, medians of 12 runs against glibc (session 22's device logs, in git history under notes/gpu): random
//! p50 `auto` 0.810 s → 0.751 (96,000 → 7,500 page faults a run), `gpu` 0.131 → 0.126
//! (24,000 → 240); Hesselink `auto` 0.0216 → 0.0194, where jemalloc with its many arenas
//! faulted 8,000 pages a run and ran no faster than glibc.
//!
//! So freed memory stays with the process while it works, and goes back to the kernel when
//! the service has had no job running for a while ([`release_free_memory`], called by the
//! service's `idle_release`); a command-line solve ends with the process. Operators override [`CONF`] with the
//! `_RJEM_MALLOC_CONF` environment variable (the crate's prefixed `MALLOC_CONF`), e.g.
//! `dirty_decay_ms:10000` for jemalloc's own decay.

use std::alloc::{GlobalAlloc, Layout};

pub use tikv_jemallocator::Jemalloc;

/// Zeroed blocks up to this size are cleared by writing zeros ([`Allocator`]).
pub const CLEARED_BY_WRITING_UP_TO: usize = 1 << 20;

/// jemalloc, except for zeroed blocks of up to [`CLEARED_BY_WRITING_UP_TO`] bytes: those
/// are allocated plainly and cleared by writing. jemalloc clears a reused block of 16 KiB
/// or more by handing its pages back (`madvise(MADV_DONTNEED)`) so the kernel supplies
/// zeroed ones: each such call interrupts every other core running the process to flush
/// its TLB, and the block's pages fault in again one by one. A parity solve allocates many
/// such per-vertex arrays of tens to hundreds of KiB (`strace` on `counter-rr 20000`: 32
/// such calls, 24–332 KiB, half of them while the portfolio's two searches race); writing zeros
/// into a block already mapped costs microseconds. Larger blocks keep jemalloc's way: a
/// fresh one is zero already and is never touched until used.
pub struct Allocator;

// SAFETY: every call forwards to jemalloc with the caller's layout; `alloc_zeroed` clears
// exactly the block `alloc` returned.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { Jemalloc.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > CLEARED_BY_WRITING_UP_TO {
            // SAFETY: the caller's contract, forwarded.
            return unsafe { Jemalloc.alloc_zeroed(layout) };
        }
        // SAFETY: the caller's contract; a non-null block has `layout.size()` bytes.
        unsafe {
            let block = Jemalloc.alloc(layout);
            if !block.is_null() {
                block.write_bytes(0, layout.size());
            }
            block
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { Jemalloc.dealloc(block, layout) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { Jemalloc.realloc(block, layout, new_size) }
    }
}

/// jemalloc's options for egsolve (a C string, read once at start-up through the
/// `_rjem_malloc_conf` symbol): freed pages are not handed back by time
/// (`dirty_decay_ms:-1`), only by [`release_free_memory`]; one arena for every thread
/// (`narenas:1`: small blocks still come from each thread's cache, and a solve's large ones
/// are few).
pub const CONF: &[u8; 28] = b"dirty_decay_ms:-1,narenas:1\0";

/// Hands every page of freed blocks back to the kernel (jemalloc's `arena.<all>.purge`);
/// a no-op where jemalloc is not the allocator (its arenas are then empty).
pub fn release_free_memory() {
    // MALLCTL_ARENAS_ALL: every arena.
    const PURGE_ALL: &[u8] = b"arena.4096.purge\0";
    // SAFETY: a NUL-terminated name of a void control, which reads and writes nothing.
    let code = unsafe {
        tikv_jemalloc_sys::mallctl(
            PURGE_ALL.as_ptr().cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    if code != 0 {
        tracing::debug!(code, "jemalloc did not purge its arenas");
    }
}

/// Makes [`Allocator`] (jemalloc) the binary's global allocator, with [`CONF`] as its
/// options. Invoke once, at the top level of a binary crate's `main.rs`.
#[macro_export]
macro_rules! global_allocator {
    () => {
        #[global_allocator]
        static GLOBAL_ALLOCATOR: $crate::Allocator = $crate::Allocator;

        /// jemalloc reads its options from this symbol at start-up.
        #[unsafe(export_name = "_rjem_malloc_conf")]
        static JEMALLOC_CONF: &[u8; $crate::CONF.len()] = $crate::CONF;
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options are one C string: a single terminating NUL, nothing after it.
    #[test]
    fn the_options_are_a_c_string() {
        let text = std::ffi::CStr::from_bytes_with_nul(CONF).expect("one terminating NUL");
        let text = text.to_str().expect("ASCII");
        assert!(
            text.split(',')
                .all(|option| option.split_once(':').is_some())
        );
    }
}
