//! Large arrays that are written once, in parallel, right after they are allocated (the
//! readers' arena arrays, the transpose's): taken without clearing, and on Linux asking
//! for transparent huge pages.
//!
//! Fresh memory costs a page fault per page on first write, the kernel clearing the page:
//! a 10^7-edge arena is some 150 MB of new arrays, 37,000 faults of 4 KiB, which cost as
//! much as parsing the text (measured on the 2-core build machine: about a quarter of the
//! CPU time of a read went to faults). A 2 MiB page takes one fault for 512 small ones.
//! `MADV_HUGEPAGE` is advice: where the system has transparent huge pages in `madvise`
//! mode (or `always`) whole 2 MiB pages of the array are backed by huge pages; elsewhere
//! nothing changes. Clearing is left to the kernel (fresh pages come cleared) and
//! whoever writes first touches the page, so faults are taken by the threads that fill the
//! array, in parallel, not by the one that allocated it. [`written_zeros`] is for arrays
//! read before they are written.

/// Arrays of at least this many bytes ask for huge pages (smaller ones rarely span a
/// whole aligned 2 MiB page).
const HUGE_ADVICE: usize = 4 << 20;

/// A vector with room for exactly `len` values and none written yet (see the module docs).
pub(crate) fn for_writing<T>(len: usize) -> Vec<T> {
    let values: Vec<T> = Vec::with_capacity(len);
    advise_huge_pages(values.as_ptr() as usize, len.saturating_mul(size_of::<T>()));
    values
}

/// `len` default (zero) values, written one by one rather than taken as zeroed pages, for
/// arrays that are read before they are written. A zeroed allocation maps the kernel's
/// shared zero page wherever a page is read first; the first write there then copies the
/// page and flushes it from the TLB of every core the process runs on (an inter-processor
/// interrupt per page once it runs threads, costly in a virtual machine). Written first,
/// each page takes one plain fault.
pub(crate) fn written_zeros<T: Default>(len: usize) -> Vec<T> {
    let mut values = Vec::with_capacity(len);
    values.resize_with(len, T::default);
    values
}

/// Asks for huge pages on the whole 2 MiB pages of `bytes` bytes at address `start`.
#[cfg(target_os = "linux")]
fn advise_huge_pages(start: usize, bytes: usize) {
    const HUGE_PAGE: usize = 2 << 20;
    if bytes < HUGE_ADVICE {
        return;
    }
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: the range lies inside an allocation this process owns (a vector's
        // capacity), and MADV_HUGEPAGE only tells the kernel how to back its pages: it
        // changes no contents and no mapping, whether or not the kernel follows it (an
        // error, e.g. without transparent huge pages, leaves everything as it was).
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn large_and_small_vectors_have_their_room() {
        for len in [0usize, 1, 1000, 3 << 20] {
            let mut values = super::for_writing::<u32>(len);
            assert!(values.capacity() >= len && values.is_empty());
            values.extend((0..len as u32).rev());
            assert_eq!(
                values.first().copied(),
                len.checked_sub(1).map(|l| l as u32)
            );
        }
    }
}
