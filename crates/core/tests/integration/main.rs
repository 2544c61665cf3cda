//! `egsolve-core`'s integration tests, linked as one binary (`cargo test -p egsolve-core
//! --test integration`): every solver against the brute-force oracle, the reference and the
//! shared data; the certificate checker; the input formats; the parity algorithms against
//! Oink's answers; the generated families. One module per subject.

#[path = "../accel_support/mod.rs"]
mod accel_support;
mod format_support;
#[path = "../oink_support/mod.rs"]
mod oink_support;
mod parity_support;

mod accel;
mod accel_engine;
mod accel_parallel;
mod accel_topping;
mod check;
mod cpu_backend;
mod cpu_shared_data;
mod families;
mod format_egb;
mod format_egb_v2;
mod format_fuzz;
mod format_inputs;
mod format_parallel;
mod format_roundtrip;
mod improve;
mod oracle;
mod parity;
mod parity_algorithms;
mod parity_gpu_route;
mod shared_data;
mod shared_data_formats;
