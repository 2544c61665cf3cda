//! Helpers shared by the root's integration tests: those of `egsolve-test-support` (shared
//! data, seeded property tests, a throwaway PostgreSQL).
#![allow(unused_imports)]

pub use egsolve_test_support::postgres;
pub use egsolve_test_support::{proptest_seeded, shared_data, shared_files};
