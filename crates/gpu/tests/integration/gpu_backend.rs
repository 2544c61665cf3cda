//! The GPU backend where CI runs (no GPU, no CUDA toolkit):
//! - every kernel compiles with NVRTC for sm_90 when NVRTC is there (the PyPI wheel
//!   `nvidia-cuda-nvrtc`); when `EGSOLVE_NVRTC_LIB` is set, NVRTC must be there and every
//!   kernel must compile, else the test fails;
//! - with no GPU, solving with the gpu backend (accelerated or plain) is a clear
//!   `Unavailable` error (no panic), and `auto` still solves; with a GPU, both match the
//!   reference and their strategies pass `check`.
//!
//! Checks that need NVRTC are listed as ignored, with the reason, where it is missing
//! (`egsolve_test_support::needing`).

use egsolve_core::arena::{Arena, EdgeList, Player};
use egsolve_core::check::{Claim, check};
use egsolve_core::solve::{Backend, Control, SolveError, SolveOptions, TOP, solve, solve_with};
use egsolve_gpu::compile::{compile_cubin, nvrtc_version, sources};
use egsolve_gpu::devices::{driver_ready, nvrtc_ready};
use egsolve_gpu::{GpuOptions, list_devices};

fn small_game() -> Arena {
    // 0 (P0) -> 1 (-2), 0 -> 2 (+1); 1 (P1) -> 0 (+1), 1 -> 1 (-1); 2 (P0) -> 0 (-1), 3 (P1) -> 3 (+1), 3 -> 0 (-3)
    let owners = vec![Player::Zero, Player::One, Player::Zero, Player::One];
    let mut edges = EdgeList::default();
    for (s, t, w) in [
        (0, 1, -2),
        (0, 2, 1),
        (1, 0, 1),
        (1, 1, -1),
        (2, 0, -1),
        (3, 3, 1),
        (3, 0, -3),
    ] {
        edges.push(s, t, w);
    }
    Arena::from_edges(owners, edges, None).expect("valid arena")
}

/// What keeps the NVRTC checks from running here, if anything: NVRTC does not load and
/// `EGSOLVE_NVRTC_LIB` is unset. Where it is set (as in CI) NVRTC must load: the checks
/// then run and fail with the loader's error.
fn nvrtc_missing() -> Option<String> {
    let error = nvrtc_ready().err()?;
    if std::env::var_os("EGSOLVE_NVRTC_LIB").is_some() {
        return None;
    }
    Some(format!(
        "NVRTC (the nvidia-cuda-nvrtc wheel; .ci/run sets EGSOLVE_NVRTC_LIB): {error}"
    ))
}

/// Panics unless NVRTC loads (the checks that need it run only where it does, or where
/// `EGSOLVE_NVRTC_LIB` says it must).
fn assert_nvrtc_loads() {
    if let Err(e) = nvrtc_ready() {
        panic!(
            "EGSOLVE_NVRTC_LIB is set but NVRTC does not load: {e} (LD_LIBRARY_PATH={:?})",
            std::env::var("LD_LIBRARY_PATH").ok()
        );
    }
}

/// This module's trials, run by the binary's `main`.
pub fn trials() -> Vec<egsolve_test_support::Trial> {
    let nvrtc = nvrtc_missing();
    let needs_nvrtc = |name: &str, check: fn()| {
        egsolve_test_support::needing(name, nvrtc.clone(), move || {
            assert_nvrtc_loads();
            check();
        })
    };
    vec![
        needs_nvrtc(
            "every_kernel_compiles_for_sm90_with_nvrtc",
            every_kernel_compiles_for_sm90_with_nvrtc,
        ),
        needs_nvrtc(
            "the_kernel_knobs_compile_for_sm90",
            the_kernel_knobs_compile_for_sm90,
        ),
        needs_nvrtc(
            "a_broken_kernel_is_a_compile_error_with_the_log",
            a_broken_kernel_is_a_compile_error_with_the_log,
        ),
        egsolve_test_support::needing(
            "gpu_backend_is_unavailable_without_a_gpu_and_auto_still_solves",
            None,
            gpu_backend_is_unavailable_without_a_gpu_and_auto_still_solves,
        ),
        egsolve_test_support::needing(
            "without_the_gpu_crate_the_gpu_backend_is_unavailable",
            None,
            without_the_gpu_crate_the_gpu_backend_is_unavailable,
        ),
    ]
}

fn every_kernel_compiles_for_sm90_with_nvrtc() {
    let version = nvrtc_version().expect("NVRTC reports its version");
    eprintln!("NVRTC {}.{}", version.0, version.1);
    for (name, source, entries) in sources() {
        let start = std::time::Instant::now();
        let cubin =
            compile_cubin(&name, &source, "sm_90").unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!(
            "{name}: {} entry points, {} bytes of CUBIN, compiled in {:.0} ms",
            entries.len(),
            cubin.len(),
            start.elapsed().as_secs_f64() * 1e3
        );
        assert!(
            cubin.starts_with(b"\x7fELF"),
            "{name}: NVRTC did not return an ELF CUBIN"
        );
        for entry in &entries {
            let found = cubin.windows(entry.len()).any(|w| w == entry.as_bytes());
            assert!(found, "{name}: entry point {entry} missing from the CUBIN");
        }
    }
}

/// The experiment knobs of `kernels/lift.cu` (set on a device through
/// `EGSOLVE_NVRTC_EXTRA_OPTIONS`, see scripts/gpu-session.sh) compile too, at both extreme
/// width pairs: a knob whose code path rots would otherwise fail only on the device. Knobs
/// that touch different code share a compile (three per width pair, not five: each NVRTC
/// compile of `lift.cu` takes about 1.6 s on the 2-core build machine).
fn the_kernel_knobs_compile_for_sm90() {
    let knobs = [
        "#define LIFT_EARLY_EXIT 0\n#define LIFT_MIN_BLOCKS 2\n",
        "#define LIFT_BATCH 4\n#define LIFT_SLOW_READER_NS 100000\n",
        "#define LIFT_BATCH 2\n#define LIFT_EARLY_EXIT 0\n",
    ];
    for (w, v) in [(16, 32), (64, 64)] {
        let source = egsolve_gpu::compile::lift_source(w, v);
        for knob in knobs {
            let name = format!("lift_w{w}_v{v}.cu with {}", knob.replace('\n', "; "));
            let cubin = compile_cubin("lift.cu", &format!("{knob}{source}"), "sm_90")
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let entry = egsolve_gpu::compile::lift_kernel_name(1, w, v);
            assert!(
                cubin.windows(entry.len()).any(|x| x == entry.as_bytes()),
                "{name}: {entry} missing"
            );
        }
    }
}

fn a_broken_kernel_is_a_compile_error_with_the_log() {
    let err = compile_cubin(
        "broken.cu",
        "extern \"C\" __global__ void k() { undefined_name(); }",
        "sm_90",
    )
    .expect_err("an undefined name does not compile");
    assert!(
        err.to_string().contains("undefined_name"),
        "the log names the problem: {err}"
    );
}

fn gpu_backend_is_unavailable_without_a_gpu_and_auto_still_solves() {
    let arena = small_game();
    let control = Control::new();
    let reference = solve(&arena, Backend::Reference, &control).expect("reference solves");
    let auto = solve(&arena, Backend::Auto, &control).expect("auto solves on any machine");
    assert_eq!(auto.credit, reference.credit);
    match driver_ready() {
        Err(no_gpu) => {
            assert!(list_devices().is_empty());
            for plain in [false, true] {
                let options = SolveOptions {
                    backend: Backend::Gpu,
                    gpu: GpuOptions {
                        plain,
                        ..GpuOptions::default()
                    },
                    device: Some(egsolve_gpu::SOLVER),
                    ..SolveOptions::default()
                };
                match solve_with(&arena, &options, &control) {
                    Err(SolveError::Unavailable { backend, reason }) => {
                        assert_eq!(backend, "gpu");
                        assert_eq!(reason, no_gpu.to_string());
                    }
                    other => panic!("expected Unavailable without a GPU, got {other:?}"),
                }
            }
        }
        Ok(count) => {
            assert_eq!(list_devices().len(), count);
            for plain in [false, true] {
                let options = GpuOptions {
                    plain,
                    ..GpuOptions::default()
                };
                let gpu = egsolve_gpu::solve(&arena, &options, &control).expect("gpu solves");
                assert_eq!(gpu.credit, reference.credit);
                assert_eq!(gpu.stats.backend, "gpu");
                let claim = Claim {
                    credit: &gpu.credit,
                    strategy: &gpu.strategy,
                };
                assert!(check(&arena, claim).expect("checkable").passed());
                // As `auto`'s race asks: the same strategies, the credits read as winners,
                // the host passes on the race's smaller pool.
                let winners_only = GpuOptions {
                    winners_only: true,
                    beside_race: true,
                    ..options
                };
                let won = egsolve_gpu::solve(&arena, &winners_only, &control).expect("solves");
                assert!(!won.credits_computed && gpu.credits_computed);
                assert_eq!(won.strategy, gpu.strategy);
                let winners: Vec<u64> = (gpu.credit.iter())
                    .map(|&c| if c == TOP { TOP } else { 0 })
                    .collect();
                assert_eq!(won.credit, winners);
            }
        }
    }
}

/// A program that links no GPU crate (`SolveOptions::device` unset) answers `--backend gpu`
/// with `Unavailable`, saying so.
fn without_the_gpu_crate_the_gpu_backend_is_unavailable() {
    let options = SolveOptions {
        backend: Backend::Gpu,
        ..SolveOptions::default()
    };
    match solve_with(&small_game(), &options, &Control::new()) {
        Err(SolveError::Unavailable { backend, reason }) => {
            assert_eq!(backend, "gpu");
            assert!(reason.contains("without the GPU backend"), "{reason}");
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}
