//! The process's page faults and context switches, read around a GPU solve for its debug
//! event (`EGSOLVE_LOG=egsolve_gpu=debug`): a solve whose host passes stall shows there
//! whether its threads waited for fresh pages (minor faults) or for a core (involuntary
//! switches). Counted over every thread of the process, a race's CPU side included.

/// `getrusage(RUSAGE_SELF)`'s counters that tell a stall's cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    /// Page faults served without I/O (fresh or reclaimed pages).
    pub(crate) minor_faults: libc::c_long,
    /// Times a thread was descheduled while it could still run (a core taken from it).
    pub(crate) involuntary_switches: libc::c_long,
    /// Times a thread gave up its core to wait (a lock, a futex, the driver).
    pub(crate) voluntary_switches: libc::c_long,
}

impl Counters {
    /// The counters now, or zeros where the system refuses them.
    pub(crate) fn now() -> Counters {
        // SAFETY: `rusage` is plain integers and `timeval`s, for which all-zero bytes are
        // a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pointer to that struct, which `getrusage` only writes into;
        // RUSAGE_SELF is always accepted.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
            return Counters::default();
        }
        Counters {
            minor_faults: usage.ru_minflt,
            involuntary_switches: usage.ru_nivcsw,
            voluntary_switches: usage.ru_nvcsw,
        }
    }

    /// The counts between `earlier` and `self`.
    pub(crate) fn since(self, earlier: Counters) -> Counters {
        Counters {
            minor_faults: self.minor_faults - earlier.minor_faults,
            involuntary_switches: self.involuntary_switches - earlier.involuntary_switches,
            voluntary_switches: self.voluntary_switches - earlier.voluntary_switches,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Counters;

    #[test]
    fn fresh_pages_are_counted_as_minor_faults() {
        // 8 MiB mapped fresh (not from the allocator, which may hand out pages already
        // touched) and written page by page: each page, or each huge page where the kernel
        // gives those, is faulted in on first touch.
        let bytes = 8 << 20;
        // SAFETY: an anonymous private mapping of `bytes`, written only inside it, then
        // unmapped once.
        unsafe {
            let block = libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(block, libc::MAP_FAILED, "mapped");
            let before = Counters::now();
            for page in (0..bytes).step_by(4096) {
                block.cast::<u8>().add(page).write_volatile(1);
            }
            let delta = Counters::now().since(before);
            libc::munmap(block, bytes);
            assert!(delta.minor_faults >= 4, "{delta:?} for {bytes} fresh bytes");
            assert!(delta.involuntary_switches >= 0 && delta.voluntary_switches >= 0);
        }
    }
}
