//! Ending a solve's process, its answer written, without making its caller wait while the
//! kernel takes a large process apart.
//!
//! At 10^9 edges the process maps a 14 GB game and holds a few GB of arrays and the GPU's
//! context: its exit (`_exit`) took 0.35–0.6 s on the H200 host before the shell saw it, the
//! kernel unmapping every page and the driver closing the context (session 63's logs). The
//! answer is complete before that starts, so the wait buys the caller nothing.
//!
//! What happens instead, on Linux, for a process holding at least [`DETACH_FROM_RESIDENT`]
//! bytes (as `mold`, the linker, does for its own exit): a child is started with `CLONE_VM`,
//! sharing the address space, with a copy of the descriptor table. The child closes every
//! descriptor but the GPU driver's (`/dev/nvidia*`), so a caller reading the output through a
//! pipe sees it end at once, and waits until the parent has gone. The parent then exits:
//! the address space and the driver's files are still the child's, so nothing is torn down
//! and the caller's `wait` returns. The child's own exit does the teardown, unseen.
//!
//! Not done where the dying child could get in someone's way: when a device this process
//! opened is in an exclusive compute mode (the user's next command would be refused it
//! while the child holds it), or while a context is being created
//! ([`egsolve_gpu::close_for_exit`], which also stops later contexts). `EGSOLVE_DETACHED_EXIT=0`
//! turns it off, `=1` does it whatever the size; `EGSOLVE_DETACHED_EXIT_LINGER_MS` keeps the
//! child that long after the parent has gone (the tests use both, to see it outlive the
//! process). The process's peak memory, as
//! `getrusage` and `time -v` report it, is the parent's own as before; the teardown's
//! system time is the child's, so `time` no longer counts it. For a moment after the exit
//! the memory and the GPU's context are still held (the child's exit frees them, 0.35–0.6 s
//! at 10^9 edges).

/// A process holding at least this much resident memory hands its teardown to a child.
const DETACH_FROM_RESIDENT: u64 = 1 << 30;

/// Ends the process with exit code 0 (see the module docs). Output must be flushed first.
pub(super) fn exit_zero() -> ! {
    #[cfg(target_os = "linux")]
    if wanted() {
        linux::hand_teardown_to_a_child();
    }
    // SAFETY: `_exit` ends the process without running exit handlers, which is what is
    // wanted (see `solve::exit_with_the_answer_written`); the caller flushed its output.
    unsafe { libc::_exit(0) }
}

/// Whether the teardown should be handed over (see the module docs).
#[cfg(target_os = "linux")]
fn wanted() -> bool {
    let large = match std::env::var("EGSOLVE_DETACHED_EXIT").as_deref() {
        Ok("0") => return false,
        Ok("1") => true,
        _ => linux::resident_bytes().is_some_and(|b| b >= DETACH_FROM_RESIDENT),
    };
    large && egsolve_gpu::close_for_exit()
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::{c_int, c_void};
    use std::os::unix::ffi::OsStrExt;

    /// The child's stack: it only closes descriptors, reads a pipe and exits.
    const CHILD_STACK: usize = 64 << 10;

    /// What the child does, prepared by the parent (the child allocates nothing).
    struct ChildPlan {
        /// Descriptors the child closes: all but the driver's and `wait_for_parent`.
        close: Vec<c_int>,
        /// The read end of a pipe whose only writer is the parent: it ends when the
        /// parent exits.
        wait_for_parent: c_int,
        /// How long the child stays after the parent has gone (the tests' knob; zero).
        linger: libc::timespec,
    }

    /// This process's resident memory in bytes (`/proc/self/statm`).
    pub(super) fn resident_bytes() -> Option<u64> {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        // SAFETY: a plain query with no pointers.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Some(pages * u64::try_from(page).ok()?)
    }

    /// Starts the child that outlives this process and takes its teardown (see the module
    /// docs). Where anything fails the process simply exits as before.
    pub(super) fn hand_teardown_to_a_child() {
        let mut pipe = [0 as c_int; 2];
        // SAFETY: `pipe` has room for the two descriptors `pipe2` writes.
        if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return;
        }
        // Listed after the pipe exists, so that no number on the list (the listing's own
        // descriptor, closed since) can be the pipe's read end.
        let Some(mut close) = descriptors_to_close() else {
            // SAFETY: both descriptors were opened above and are not used again.
            unsafe {
                libc::close(pipe[0]);
                libc::close(pipe[1]);
            }
            return;
        };
        close.retain(|&fd| fd != pipe[0]);
        close.push(pipe[1]);
        // Both leaked on purpose: the child uses them after this process has gone (the
        // address space lives on with the child).
        let linger_ms: i64 = std::env::var("EGSOLVE_DETACHED_EXIT_LINGER_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let plan: &'static mut ChildPlan = Box::leak(Box::new(ChildPlan {
            close,
            wait_for_parent: pipe[0],
            linger: libc::timespec {
                tv_sec: linger_ms.clamp(0, 60_000) / 1000,
                tv_nsec: linger_ms.clamp(0, 60_000) % 1000 * 1_000_000,
            },
        }));
        let stack: &'static mut [u8] = Box::leak(vec![0u8; CHILD_STACK].into_boxed_slice());
        let top = (stack.as_mut_ptr() as usize + CHILD_STACK) & !15;
        // SAFETY: `top` is the 16-byte-aligned end of a leaked stack of CHILD_STACK bytes
        // that nothing else uses; `teardown_child` only reads `plan` (leaked, never written
        // again) and makes raw system calls (`close`, `read`, `nanosleep`, `exit_group`:
        // no libc wrapper's cancellation state), allocating nothing, so sharing the address
        // space with this process's threads is sound. It runs on the calling thread's
        // thread-local block (no `CLONE_SETTLS`): a failed call's `errno` may land in that
        // thread's, which is exiting and reads it no more.
        let pid = unsafe {
            libc::clone(
                teardown_child,
                top as *mut c_void,
                libc::CLONE_VM | libc::SIGCHLD,
                (plan as *mut ChildPlan).cast::<c_void>(),
            )
        };
        if pid < 0 {
            // SAFETY: both descriptors were opened above and are not used again.
            unsafe {
                libc::close(pipe[0]);
                libc::close(pipe[1]);
            }
            return;
        }
        tracing::debug!(pid, "the process's teardown handed to a child");
    }

    /// Every open descriptor except the GPU driver's (`/dev/nvidia*`). Listed before the
    /// clone while other threads may still open and close files: a number closed and taken
    /// again by a driver file in between makes the child close that file too, whose release
    /// then falls to the parent's exit (slower, never wrong); one the driver opens after the
    /// listing is not on it, so the child keeps it.
    fn descriptors_to_close() -> Option<Vec<c_int>> {
        let mut close = Vec::new();
        for entry in std::fs::read_dir("/proc/self/fd").ok()? {
            let entry = entry.ok()?;
            let Some(fd) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let target = std::fs::read_link(entry.path()).unwrap_or_default();
            if !target.as_os_str().as_bytes().starts_with(b"/dev/nvidia") {
                close.push(fd);
            }
        }
        Some(close)
    }

    /// The child's whole life: close, wait for the parent to go, exit (which tears down the
    /// shared address space and the driver's files, now the child's alone).
    extern "C" fn teardown_child(plan: *mut c_void) -> c_int {
        // SAFETY: `plan` is the leaked `ChildPlan` passed to `clone`, read-only from here.
        let plan = unsafe { &*plan.cast::<ChildPlan>() };
        for &fd in &plan.close {
            // SAFETY: closes a descriptor of the child's own table (a copy of the parent's).
            unsafe { libc::syscall(libc::SYS_close, fd) };
        }
        let mut byte = 0u8;
        // A read ends with 0 bytes once the parent's write end is closed by its exit. The
        // only error this pipe's read can give is an interruption by a signal: retried, a
        // bounded number of times.
        for _ in 0..1000 {
            // SAFETY: reads at most one byte into `byte`.
            let read = unsafe {
                libc::syscall(
                    libc::SYS_read,
                    plan.wait_for_parent,
                    (&raw mut byte).cast::<c_void>(),
                    1usize,
                )
            };
            if read >= 0 {
                break;
            }
        }
        if plan.linger.tv_sec > 0 || plan.linger.tv_nsec > 0 {
            // SAFETY: sleeps for the plan's time; no remainder is asked for.
            unsafe {
                libc::syscall(
                    libc::SYS_nanosleep,
                    &raw const plan.linger,
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
        }
        // SAFETY: ends the child without running anything of the parent's.
        unsafe { libc::syscall(libc::SYS_exit_group, 0) };
        0
    }
}
