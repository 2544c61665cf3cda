//! The process's exit codes (the README's table), shared by the subcommands ([`crate::cli`])
//! and the HTTP client's commands ([`crate::client`]).

/// Success.
pub const EXIT_OK: i32 = 0;
/// `check` rejected the solution.
pub const EXIT_REJECTED: i32 = 1;
/// Bad command-line usage (clap's own code).
pub const EXIT_USAGE: i32 = 2;
/// Bad input: a malformed arena or solution file, an energy game too large for 64 bits, or
/// a game the chosen backend does not solve (a parity game beyond the reduction on an
/// energy backend, an energy game on `--backend parity`).
pub const EXIT_BAD_INPUT: i32 = 3;
/// The time limit ran out (or the solve was cancelled).
pub const EXIT_TIMEOUT: i32 = 4;
/// The requested backend cannot run here (e.g. `--backend gpu` without a GPU).
pub const EXIT_UNAVAILABLE: i32 = 5;
/// Reading or writing a file failed.
pub const EXIT_IO: i32 = 74;
/// A bug: an internal error.
pub const EXIT_INTERNAL: i32 = 70;
