//! The Python client package (`clients/python`) against this build's `egsolve serve`, auth on
//! and off: results in every format, uploads, cancel, the per-user limit, error fields, 50
//! concurrent submissions, dropped connections, the examples of `docs/pipelines.md`, and the
//! package itself (`mypy --strict`, `pip install`). pytest; see `python_support` for when it
//! is listed as ignored.

use crate::python_support;

use python_support::{Need, pytest_trial};

/// This module's trials, run by the binary's `main`.
pub fn trials() -> Vec<egsolve_test_support::Trial> {
    vec![pytest_trial(
        "python_client_suite_passes",
        "clients/python/tests",
        // Two processes: most of the suite waits on its servers (34 s in one process on
        // the build VM, 21 s in two).
        2,
        &[Need::Modules(&[
            "pytest",
            "xdist",
            "httpx",
            "zstandard",
            "mypy",
            "numpy",
        ])],
    )]
}
