//! Checks that need something a machine may lack. libtest has no way to skip a test at run
//! time: a test that returns early reads "ok" in the summary, its reason hidden by the
//! output capture. Test binaries with such checks use this harness instead (`harness =
//! false` in their `Cargo.toml`, `libtest-mimic` underneath, the same flags and output as
//! libtest): a check whose need is missing is listed as **ignored**, its kind naming what
//! is missing (`test [needs a GPU: no driver] name ... ignored`), and the summary counts
//! it. Under `CI=true` no software may be missing (CI installs NVRTC, the Python packages,
//! the browser and PostgreSQL): such a check fails instead, with the reason. Hardware CI
//! does not have (a GPU) stays ignored there too ([`needing_hardware`]).

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
        Some(why) if under_ci() => {
            Trial::test(name, move || {
                Err(format!("{why}, and under CI every check must run (`bash .ci/run` installs what it needs)").into())
            })
        }
        missing => needing_hardware(name, missing, check),
    }
}

/// A check named `name` that needs hardware this machine may lack (a GPU, described by
/// `missing` when it is absent): listed as ignored with the reason wherever it is missing,
/// CI included (CI machines have no GPU; the device checks run on a lent GPU machine).
pub fn needing_hardware(
    name: &str,
    missing: Option<String>,
    check: impl FnOnce() + Send + 'static,
) -> Trial {
    match missing {
        None => Trial::test(name, move || {
            check();
            Ok(())
        }),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_need_is_listed_as_ignored_with_its_reason() {
        let gpu = needing_hardware("device", Some("a GPU: none here".into()), || {});
        assert!(gpu.has_ignored_flag());
        assert_eq!(gpu.kind(), "needs a GPU: none here");
        let present = needing_hardware("device", None, || {});
        assert!(!present.has_ignored_flag());
        // Software: ignored outside CI, a failing check under it.
        let python = needing("python", Some("pytest".into()), || {});
        assert_eq!(python.has_ignored_flag(), !under_ci());
    }
}
