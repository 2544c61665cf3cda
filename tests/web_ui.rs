//! The web page in a real browser: Debian's Chromium, headless, driven by Selenium through
//! chromedriver, against this build's `egsolve serve` (pytest suite `tests/web_ui`; see
//! `python_support` for when it is listed as ignored).

mod python_support;

use python_support::{Need, pytest_trial};

fn main() {
    egsolve_test_support::run_trials(vec![pytest_trial(
        "web_page_suite_passes_in_chromium",
        "tests/web_ui",
        &[
            Need::Modules(&["pytest", "httpx", "selenium"]),
            Need::Program {
                name: "chromium",
                env: "CHROMIUM",
            },
            Need::Program {
                name: "chromedriver",
                env: "CHROMEDRIVER",
            },
        ],
    )]);
}
