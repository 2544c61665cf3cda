//! The web page in a real browser: Debian's Chromium, headless, driven by Selenium through
//! chromedriver, against this build's `egsolve serve` (pytest suite `tests/web_ui`; see
//! `python_support` for when it skips).

mod python_support;

use python_support::{Need, run_pytest};

#[test]
fn web_page_suite_passes_in_chromium() {
    run_pytest(
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
    );
}
