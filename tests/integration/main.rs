//! The root package's integration tests, linked as one binary (`cargo test --test
//! integration`): the command line, the HTTP service end to end (both stores), packaging and
//! the crate graph. One module per subject; the support modules are shared with
//! `tests/external` where both need them. Tests that need no harness (pytest suites, a full
//! disk) live in `tests/external`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../packaging_support/mod.rs"]
mod packaging_support;
#[path = "../service_support/mod.rs"]
#[macro_use]
mod service_support;

mod architecture;
mod cli;
mod client_cli;
mod deploy;
mod result_resume;
mod service_api;
mod service_batch;
mod service_by_reference;
mod service_cluster;
mod service_data_path;
mod service_export;
mod service_idempotency;
mod service_memory;
mod service_migrate;
mod service_parity;
mod service_parts;
mod service_restart;
mod service_ui;
mod shutdown;
mod snapshots;
