//! Runs a pytest suite of the project (the Python client's tests, the browser tests) against
//! this build's binary, as part of `cargo test`. What the suite needs — Python packages,
//! Chromium and its driver (`.ci/run` installs them, the packages into `.venv`) — is checked
//! first: when something is missing the check fails if the environment variable `CI` is set
//! and is otherwise listed as ignored, with the reason (`egsolve_test_support::needing`).
#![allow(dead_code)]

use egsolve_test_support as data;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Something a suite needs besides the binary.
pub enum Need {
    /// Python modules, by import name.
    Modules(&'static [&'static str]),
    /// A program, by name on `PATH` or absolute path (the environment variable overrides).
    Program {
        name: &'static str,
        env: &'static str,
    },
}

/// The Python interpreter: `$EGSOLVE_PYTHON`, else the virtual environment `.ci/run` makes
/// (`.venv` at the crate root), else `python3`.
fn python() -> String {
    if let Ok(python) = std::env::var("EGSOLVE_PYTHON") {
        return python;
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if venv.is_file() {
        return venv.display().to_string();
    }
    "python3".into()
}

fn find_program(name: &str, env: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(env) {
        return Some(PathBuf::from(path)).filter(|p| p.is_file());
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Why the suite cannot run here, if it cannot.
fn missing(needs: &[Need]) -> Option<String> {
    for need in needs {
        match need {
            Need::Modules(modules) => {
                let probe = Command::new(python())
                    .args(["-c", &format!("import {}", modules.join(", "))])
                    .output();
                match probe {
                    Err(e) => return Some(format!("cannot run {}: {e}", python())),
                    Ok(out) if !out.status.success() => {
                        return Some(format!(
                            "python modules missing ({}): {}",
                            modules.join(", "),
                            String::from_utf8_lossy(&out.stderr).trim()
                        ));
                    }
                    Ok(_) => {}
                }
            }
            Need::Program { name, env } => {
                if find_program(name, env).is_none() {
                    return Some(format!("{name} not found (on PATH or in ${env})"));
                }
            }
        }
    }
    None
}

/// A check named `name` that runs `pytest` on `suite` (a folder relative to the crate root)
/// in `workers` processes (more than one through `pytest-xdist`, which `needs` must then
/// name as the module `xdist`) and fails unless every test passes (and at least one ran);
/// listed as ignored, with the reason, where something in `needs` is missing (a failure
/// under `CI`).
pub fn pytest_trial(
    name: &str,
    suite: &'static str,
    workers: usize,
    needs: &[Need],
) -> egsolve_test_support::Trial {
    egsolve_test_support::needing(
        name,
        missing(needs).map(|reason| format!("{reason}; `bash .ci/run` installs it")),
        move || run_pytest(suite, workers),
    )
}

fn run_pytest(suite: &str, workers: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut args = [
        "-m",
        "pytest",
        suite,
        "-q",
        "-p",
        "no:cacheprovider",
        "-rfEs",
    ]
    .map(String::from)
    .to_vec();
    if workers > 1 {
        args.extend(["-n".to_owned(), workers.to_string()]);
    }
    let output = Command::new(python())
        .args(&args)
        .current_dir(root)
        .env("EGSOLVE_BIN", env!("CARGO_BIN_EXE_egsolve"))
        .env("EGSOLVE_DATA", data::shared_data())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("pytest starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{text}");
    assert!(
        output.status.success(),
        "pytest {suite} failed ({}):\n{text}",
        output.status
    );
    assert!(
        !text.contains(" skipped"),
        "pytest {suite} skipped tests:\n{text}"
    );
}
