//! Checks that need something a machine may lack. libtest has no way to skip a test at run
//! time: a test that returns early reads "ok" in the summary, its reason hidden by the
//! output capture. Test binaries with such checks use this harness instead (`harness =
//! false` in their `Cargo.toml`, `libtest-mimic` underneath, the same flags and output as
//! libtest): a check whose need is missing is listed as **ignored**, its kind naming what
//! is missing (`test [needs a GPU: no driver] name ... ignored`), and the summary counts
//! it. Under `CI=true` nothing may be missing: such a check fails instead, with the reason.

pub use libtest_mimic::Trial;

/// Whether this run is CI's (`CI` set to anything but `false` or `0`), where every check
/// must run.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// A check named `name` that needs what `missing` describes when it is `Some(why)`: run
/// where nothing is missing; listed as ignored with `why` otherwise (failed under CI).
/// `check` panics to fail, as a `#[test]` does.
pub fn needing(
    name: &str,
    missing: Option<String>,
    check: impl FnOnce() + Send + 'static,
) -> Trial {
    match missing {
        None => Trial::test(name, move || {
            check();
            Ok(())
        }),
        Some(why) if under_ci() => {
            Trial::test(name, move || {
                Err(format!("{why}, and under CI every check must run (`bash .ci/run` installs what it needs)").into())
            })
        }
        Some(why) => Trial::test(name, || Ok(()))
            .with_kind(format!("needs {why}"))
            .with_ignored_flag(true),
    }
}

/// Runs `trials` with the command line's libtest flags and exits with libtest's status.
pub fn run_trials(trials: Vec<Trial>) -> ! {
    let args = libtest_mimic::Arguments::from_args();
    libtest_mimic::run(&args, trials).exit()
}
