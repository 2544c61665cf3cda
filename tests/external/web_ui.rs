//! The web page in a real browser: Debian's Chromium, headless, driven by Selenium through
//! chromedriver, against this build's `egsolve serve` (pytest suite `tests/web_ui`; see
//! `python_support` for when it is listed as ignored).

use crate::python_support;

use python_support::{Need, pytest_trial};

/// This module's trials, run by the binary's `main`.
pub fn trials() -> Vec<egsolve_test_support::Trial> {
    vec![pytest_trial(
        "web_page_suite_passes_in_chromium",
        "tests/web_ui",
        1,
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
    )]
}
