//! The binaries' allocator (`egsolve_alloc`), set here as in `src/main.rs`: a block of a
//! solve's size, freed and taken again, faults no page back in; after
//! `release_free_memory` (what the service does when no job runs) its pages are the
//! kernel's again; a zeroed block up to `CLEARED_BY_WRITING_UP_TO` taken from a freed one
//! is cleared where it lies. Page faults are read from `/proc/self/stat` (Linux). The
//! tests take turns ([`ONE_AT_A_TIME`]), so no other test allocates while one counts.

use std::alloc::Layout;
use std::sync::Mutex;

egsolve_alloc::global_allocator!();

/// Held by each test while it counts faults.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The process's minor page faults so far.
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux /proc");
    let after_name = stat.rsplit_once(')').expect("a command name").1;
    after_name
        .split_whitespace()
        .nth(7)
        .expect("field 10")
        .parse()
        .expect("a count")
}

/// Page faults taken while a fresh block of `bytes` is allocated and written (one byte per
/// page, so every page is touched), then freed.
fn faults_filling(bytes: usize) -> u64 {
    let layout = Layout::from_size_align(bytes, 4096).expect("a layout");
    let before = minor_faults();
    // SAFETY: a nonzero size; each written byte lies inside the block, freed with its layout.
    unsafe {
        let block = std::alloc::alloc(layout);
        assert!(!block.is_null(), "allocated");
        for page in (0..bytes).step_by(4096) {
            block.add(page).write_volatile(1);
        }
        std::alloc::dealloc(block, layout);
    }
    minor_faults() - before
}

#[test]
fn freed_blocks_are_taken_again_without_faults_until_released() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    const BYTES: usize = 64 << 20;
    let pages = (BYTES / 4096) as u64;
    let first = faults_filling(BYTES);
    let again = faults_filling(BYTES);
    egsolve_alloc::release_free_memory();
    let released = faults_filling(BYTES);
    eprintln!("faults for {pages} pages: first {first}, again {again}, after release {released}");
    // Huge pages, where the kernel hands them out, fault 512 pages at a time: the first
    // and the released rounds still fault, just less.
    assert!(first > 0, "a fresh block is faulted in");
    assert!(
        again < pages / 100,
        "the freed block is taken again as it is: {again} faults"
    );
    assert!(
        released > again && released > pages / 600,
        "released pages are faulted in again: {released} faults against {again}"
    );
}

/// A block of `bytes` written all over with ones, then freed; then a zeroed block of the
/// same size taken: whether every byte of it is zero, and the faults taken while it is
/// allocated and read.
fn zeroed_after_dirty(bytes: usize) -> (bool, u64) {
    let layout = Layout::from_size_align(bytes, 4096).expect("a layout");
    // SAFETY: nonzero sizes; every access lies inside a live block, freed with its layout.
    unsafe {
        let dirty = std::alloc::alloc(layout);
        assert!(!dirty.is_null(), "allocated");
        dirty.write_bytes(1, bytes);
        // Opaque to the optimiser: a block written and freed unread is otherwise removed,
        // allocation and all (CI's build, one codegen unit, did so: the zeroed block then came
        // from fresh pages, 256–264 faults, on every first try).
        std::alloc::dealloc(std::hint::black_box(dirty), layout);
        let before = minor_faults();
        let zeroed = std::alloc::alloc_zeroed(layout);
        assert!(!zeroed.is_null(), "allocated");
        let all_zero = std::slice::from_raw_parts(zeroed, bytes)
            .iter()
            .all(|&b| b == 0);
        let faults = minor_faults() - before;
        std::alloc::dealloc(zeroed, layout);
        (all_zero, faults)
    }
}

#[test]
fn zeroed_blocks_up_to_the_threshold_are_cleared_where_they_lie() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let bytes = egsolve_alloc::CLEARED_BY_WRITING_UP_TO;
    let pages = (bytes / 4096) as u64;
    // The fewest faults of a few tries: the other test's thread may allocate beside a try
    // while it starts (before it waits for its turn). jemalloc's own way faults every page
    // back in on every try ([256–261, 256, 256, 256] on the build VM).
    let mut faults = Vec::new();
    for _ in 0..4 {
        let (all_zero, taken) = zeroed_after_dirty(bytes);
        assert!(all_zero, "a zeroed block reads as zeros");
        faults.push(taken);
    }
    let fewest = *faults.iter().min().expect("tried");
    assert!(
        fewest < pages / 4,
        "the freed block is cleared where it lies: {faults:?} faults for {pages} pages"
    );
    // Past the threshold, jemalloc's way: zeros still.
    let (all_zero, _) = zeroed_after_dirty(bytes + 4096);
    assert!(all_zero, "a large zeroed block reads as zeros");
    for bytes in [1, 100, 4096, 16 << 10, 300 << 10] {
        assert!(
            zeroed_after_dirty(bytes).0,
            "{bytes} zeroed bytes read as zeros"
        );
    }
}
