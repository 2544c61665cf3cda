//! The process's page faults and context switches, read around a GPU solve for its debug
//! event (`EGSOLVE_LOG=egsolve_gpu=debug`): a solve whose host passes stall shows there
//! whether its threads waited for fresh pages (minor faults) or for a core (involuntary
//! switches). Counted over every thread of the process, a race's CPU side included.

/// `getrusage(RUSAGE_SELF)`'s counters that tell a stall's cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    /// Page faults served without I/O (fresh or reclaimed pages).
    pub(crate) minor_faults: i64,
    /// Times a thread was descheduled while it could still run (a core taken from it).
    pub(crate) involuntary_switches: i64,
    /// Times a thread gave up its core to wait (a lock, a futex, the driver).
    pub(crate) voluntary_switches: i64,
}

impl Counters {
    /// The counters now, or zeros where the system refuses them.
    pub(crate) fn now() -> Counters {
        // SAFETY: `getrusage` writes only into the `rusage` it is given, which is
        // zero-initialisable plain data.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pointer to that struct; RUSAGE_SELF is always accepted.
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
        let before = Counters::now();
        // 8 MiB written page by page: new anonymous pages, each faulted in on first touch.
        let pages = 2048;
        let mut block = vec![0u8; pages * 4096];
        for page in block.chunks_mut(4096) {
            page[0] = 1;
        }
        std::hint::black_box(&block);
        let delta = Counters::now().since(before);
        assert!(
            delta.minor_faults >= pages as i64 / 4,
            "{delta:?} for {pages} fresh pages"
        );
        assert!(delta.involuntary_switches >= 0 && delta.voluntary_switches >= 0);
    }
}
