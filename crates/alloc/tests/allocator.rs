//! The binaries' allocator (`egsolve_alloc`), set here as in `src/main.rs`: a block of a
//! solve's size, freed and taken again, faults no page back in; after
//! `release_free_memory` (what the service does when no job runs) its pages are the
//! kernel's again. Page faults are read from `/proc/self/stat` (Linux). This binary holds
//! one test, so no other thread allocates meanwhile.

egsolve_alloc::global_allocator!();

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
    let layout = std::alloc::Layout::from_size_align(bytes, 4096).expect("a layout");
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
