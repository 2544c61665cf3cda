//! Readers for the deploy files (Dockerfile instructions, YAML documents, systemd units and
//! environment files) and the checks that tie their settings to the binary: every
//! `EGSOLVE_*` name must be one `egsolve --help` prints, and a set of settings must resolve
//! to a valid [`ServeConfig`] through the real flag parser.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use egsolve_service::ServeConfig;

use super::serve::ServeArgs;

use super::{repo_root, run_egsolve};

/// The `egsolve serve` flags, parsed the way the binary parses them.
#[derive(Debug, Parser)]
#[command(name = "serve")]
pub struct ServeCli {
    #[command(flatten)]
    pub args: ServeArgs,
}

/// The least grace period a platform (compose, Kubernetes, systemd) may give a stopping
/// server with `config`: the server's own grace time for open requests, plus time to close
/// the store (at most 5 s) and a margin, so the platform never kills it first.
pub fn min_platform_grace_secs(config: &ServeConfig) -> u64 {
    config.shutdown_grace_secs + 10
}

/// Every `EGSOLVE_*` word in `text` (comments included: a commented example must be valid).
pub fn egsolve_names_in(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(start) = rest.find("EGSOLVE_") {
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        // `EGSOLVE_*` (the prefix itself, in prose) names no variable.
        if end > "EGSOLVE_".len() {
            names.insert(tail[..end].to_string());
        }
        rest = &tail[end..];
    }
    names
}

/// Variable names the binary documents as `[env: NAME=…]` in its help, over the commands the
/// deploy files use (serve, healthcheck, token add, the client).
pub fn help_env_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for command in [
        &["serve", "--help"][..],
        &["healthcheck", "--help"],
        &["token", "add", "--help"],
        &["submit", "--help"],
    ] {
        let (status, help, stderr) = run_egsolve(command);
        assert!(status.success(), "egsolve {command:?}: {stderr}");
        for piece in help.split("[env: ").skip(1) {
            let name = piece.split(['=', ']']).next().unwrap_or("");
            names.insert(name.to_string());
        }
    }
    assert!(
        names.contains("EGSOLVE_BIND"),
        "help lists env names: {names:?}"
    );
    names
}

/// Every name the binary reads: its help's names and the log filter variable, which the
/// binary reads before parsing arguments (`src/main.rs`).
pub fn accepted_env_names() -> BTreeSet<String> {
    let mut names = help_env_names();
    let main = std::fs::read_to_string(repo_root().join("src/main.rs")).expect("src/main.rs");
    if main.contains("\"EGSOLVE_LOG\"") {
        names.insert("EGSOLVE_LOG".to_string());
    }
    names
}

/// Which `egsolve serve` flag reads which environment variable.
pub fn serve_flag_of_env() -> BTreeMap<String, String> {
    ServeCli::command()
        .get_arguments()
        .filter_map(|arg| {
            let env = arg.get_env()?.to_string_lossy().into_owned();
            Some((env, format!("--{}", arg.get_long()?)))
        })
        .collect()
}

/// The configuration `egsolve serve` would run with under `env` (EGSOLVE_* entries are
/// turned into their flags and parsed by the real parser, then resolved and validated).
/// Non-serve names must still be ones the binary accepts; their values are checked here:
/// `EGSOLVE_SERVER` must reach the bound port on loopback, `EGSOLVE_LOG` must be a filter.
pub fn resolve_env(origin: &str, env: &BTreeMap<String, String>) -> ServeConfig {
    let flags = serve_flag_of_env();
    let accepted = accepted_env_names();
    let mut argv = vec!["serve".to_string()];
    for (name, value) in env.iter().filter(|(n, _)| n.starts_with("EGSOLVE_")) {
        assert!(
            accepted.contains(name),
            "{origin}: {name} is not a variable egsolve reads"
        );
        if let Some(flag) = flags.get(name) {
            argv.push(format!("{flag}={value}"));
        }
    }
    let cli = ServeCli::try_parse_from(&argv)
        .unwrap_or_else(|e| panic!("{origin}: egsolve serve refuses {argv:?}: {e}"));
    let config = cli
        .args
        .resolve()
        .unwrap_or_else(|e| panic!("{origin}: egsolve serve refuses {argv:?}: {e}"));
    if let Some(server) = env.get("EGSOLVE_SERVER") {
        let expected = format!("http://127.0.0.1:{}", config.bind.port());
        assert_eq!(
            server.trim_end_matches('/'),
            expected,
            "{origin}: EGSOLVE_SERVER (used by the health check) must reach the bound port"
        );
    }
    if let Some(filter) = env.get("EGSOLVE_LOG") {
        assert!(
            tracing_subscriber::EnvFilter::try_new(filter).is_ok(),
            "{origin}: EGSOLVE_LOG={filter} is not a log filter"
        );
    }
    config
}

/// The configuration `egsolve worker` would run with under `env` (as [`resolve_env`], through
/// the worker's resolution: HTTP settings ignored, a shared database required).
pub fn resolve_worker_env(origin: &str, env: &BTreeMap<String, String>) -> ServeConfig {
    let flags = serve_flag_of_env();
    let mut argv = vec!["worker".to_string()];
    for (name, value) in env.iter().filter(|(n, _)| n.starts_with("EGSOLVE_")) {
        assert!(
            accepted_env_names().contains(name),
            "{origin}: {name} is not a variable egsolve reads"
        );
        if let Some(flag) = flags.get(name) {
            argv.push(format!("{flag}={value}"));
        }
    }
    let cli = ServeCli::try_parse_from(&argv)
        .unwrap_or_else(|e| panic!("{origin}: egsolve worker refuses {argv:?}: {e}"));
    cli.args
        .resolve_worker()
        .unwrap_or_else(|e| panic!("{origin}: egsolve worker refuses {argv:?}: {e}"))
}

/// Every file under `deploy/` (recursively), sorted.
pub fn deploy_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read deploy dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo_root().join("deploy"), &mut files);
    files.sort();
    files
}

/// Every YAML document of a file, as JSON values.
pub fn yaml_documents(path: &Path) -> Vec<serde_json::Value> {
    use serde::Deserialize;
    let text = std::fs::read_to_string(path).expect("read yaml");
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|document| {
            serde_json::Value::deserialize(document)
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()))
        })
        .filter(|value| !value.is_null())
        .collect()
}

/// One Dockerfile instruction: its keyword (upper case) and the rest of its (joined) line.
pub fn dockerfile_instructions(text: &str) -> Vec<(String, String)> {
    let mut instructions = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if pending.is_empty() && (trimmed.starts_with('#') || trimmed.is_empty()) {
            continue;
        }
        if let Some(head) = trimmed.strip_suffix('\\') {
            pending += head;
            pending.push(' ');
            continue;
        }
        pending += trimmed;
        let (keyword, rest) = pending.split_once(' ').unwrap_or((&pending, ""));
        instructions.push((keyword.to_ascii_uppercase(), rest.trim().to_string()));
        pending.clear();
    }
    instructions
}

/// `KEY=VALUE` pairs (Dockerfile `ENV`, systemd environment files); quotes stripped.
pub fn key_values<'a>(pairs: impl Iterator<Item = &'a str>) -> BTreeMap<String, String> {
    pairs
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        .collect()
}

/// A systemd unit as (section, key) → values in order.
pub fn systemd_unit(text: &str) -> BTreeMap<(String, String), Vec<String>> {
    let mut unit: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
        } else if let Some((key, value)) = line.split_once('=') {
            unit.entry((section.clone(), key.trim().to_string()))
                .or_default()
                .push(value.trim().to_string());
        }
    }
    unit
}

/// Seconds in a duration written `90`, `90s`, `1m30s` or `2m`.
pub fn seconds(text: &str) -> u64 {
    let mut total = 0;
    let mut number = String::new();
    for c in text.trim().chars() {
        match c {
            '0'..='9' => number.push(c),
            's' | 'm' | 'h' => {
                let n: u64 = number
                    .parse()
                    .unwrap_or_else(|_| panic!("duration {text:?}"));
                let unit = match c {
                    's' => 1,
                    'm' => 60,
                    _ => 3600,
                };
                total += n * unit;
                number.clear();
            }
            _ => panic!("duration {text:?}"),
        }
    }
    if !number.is_empty() {
        total += number.parse::<u64>().expect("seconds");
    }
    total
}

/// Asserts that `egsolve ARGS --help` succeeds: the subcommand and flags exist.
pub fn assert_command_line_accepted(origin: &str, args: &[String]) {
    let mut with_help: Vec<&str> = args.iter().map(String::as_str).collect();
    with_help.push("--help");
    let (status, _, stderr) = run_egsolve(&with_help);
    assert!(
        status.success(),
        "{origin}: `egsolve {}` is not a command line egsolve accepts: {stderr}",
        args.join(" ")
    );
}

/// The strings of a JSON array value.
pub fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("expected a list, got {value}"))
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}
