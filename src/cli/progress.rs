//! The progress bar on stderr for long parses and solves, shown only when stderr is a
//! terminal. A background thread polls the shared counters (bytes read, lifts) every 100 ms,
//! so the parser and the solvers never call into the display.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use egsolve_core::solve::Progress;

/// A progress display; inert when stderr is not a terminal.
pub struct ProgressDisplay {
    bytes_read: Arc<AtomicU64>,
    solving: Arc<Mutex<Option<Arc<Progress>>>>,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ProgressDisplay {
    /// Starts a display for reading `file` (its size, if known, scales the bar).
    pub fn start(file: &Path) -> ProgressDisplay {
        let bytes_read = Arc::new(AtomicU64::new(0));
        let solving: Arc<Mutex<Option<Arc<Progress>>>> = Arc::new(Mutex::new(None));
        let done = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let total = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
            let (bytes_read, solving, done) = (bytes_read.clone(), solving.clone(), done.clone());
            std::thread::spawn(move || poll(total, &bytes_read, &solving, &done))
        });
        ProgressDisplay {
            bytes_read,
            solving,
            done,
            thread,
        }
    }

    /// The counter the reader advances.
    pub fn bytes_read(&self) -> Arc<AtomicU64> {
        self.bytes_read.clone()
    }

    /// Switches the display to the solve's counters.
    pub fn solving(&self, progress: Arc<Progress>) {
        *self.solving.lock().expect("progress lock") = Some(progress);
    }

    /// Stops and clears the display.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ProgressDisplay {
    fn drop(&mut self) {
        self.stop();
    }
}

fn poll(
    total: u64,
    bytes_read: &AtomicU64,
    solving: &Mutex<Option<Arc<Progress>>>,
    done: &AtomicBool,
) {
    let bar = ProgressBar::new(total.max(1));
    bar.set_style(
        ProgressStyle::with_template("{spinner} parsing {bytes}/{total_bytes} {bar:30} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut in_solve = false;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        let current = solving.lock().map(|s| s.clone()).unwrap_or(None);
        match current {
            None => bar.set_position(bytes_read.load(Ordering::Relaxed)),
            Some(progress) => {
                if !in_solve {
                    in_solve = true;
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} solving: {msg} {elapsed}")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                }
                let s = progress.snapshot();
                bar.set_message(format!(
                    "round {}, frontier {}, {} lifts",
                    s.round, s.frontier, s.lifts
                ));
                bar.tick();
            }
        }
    }
    bar.finish_and_clear();
}
