//! The root package's tests that run without libtest's harness, linked as one binary
//! (`cargo test --test external`): suites of other tools (pytest for the Python client and
//! the web page in Chromium, the benchmark report's Python) and checks that need the
//! machine's privileges (a full disk, a Btrfs mount). Each module lists its trials; a check
//! whose tool or privilege is missing is listed as ignored with the reason (a failure under
//! `CI` where the tool is required).

#[path = "../python_support/mod.rs"]
mod python_support;
#[path = "../service_support/mod.rs"]
#[macro_use]
mod service_support;

mod bench_report;
mod python_client;
mod service_storage;
mod web_ui;

fn main() {
    let mut trials = Vec::new();
    trials.extend(python_client::trials());
    trials.extend(web_ui::trials());
    trials.extend(bench_report::trials());
    trials.extend(service_storage::trials());
    egsolve_test_support::run_trials(trials);
}
