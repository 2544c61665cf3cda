//! Architecture invariants, checked where they live:
//! - **the crate graph** (`cargo metadata`): `egsolve-core` depends, directly or not, on
//!   no async runtime, web framework, database or GPU driver (tokio, axum, hyper, tower,
//!   sqlx, reqwest, cudarc); `egsolve-gpu` on no web framework or database; the libraries
//!   never on the binary; and only `egsolve-gpu` links cudarc, only `egsolve-service` axum
//!   and sqlx among the libraries;
//! - in each crate, no two modules import each other (a module and its ancestors excepted:
//!   a `mod.rs` wires its children, and children use the shared types their parent
//!   defines);
//! - in the core, nothing imports from the accelerated solver (`solve::accel`) but its own
//!   modules and the dispatch that runs it (`solve`, and `solve::auto`, which chooses it):
//!   the parts every backend shares (the lifting engine's interface, the topping record,
//!   player 1's strategy, the graph searches) live outside it;
//! - the core touches the file system only in its format readers;
//! - the size limits: no source file over 800 lines, `ARCHITECTURE.md` ≤ 15 kB,
//!   `BENCHMARKS.md` ≤ 350 lines.
//!
//! Imports are read from `use` statements (brace groups expanded) and from paths written
//! inline (`crate::a::b::item`, `super::x::item`); each is resolved to the deepest module
//! file it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The source folders of the workspace's crates: the root binary's and each library's.
fn crate_sources() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crates = vec![("egsolve".to_string(), root.join("src"))];
    let mut libraries: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/ is readable")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.join("src").is_dir())
        .collect();
    libraries.sort();
    for library in libraries {
        let name = library.file_name().expect("a name").to_string_lossy();
        crates.push((format!("egsolve-{name}"), library.join("src")));
    }
    crates
}

/// Every module of the crate whose sources are in `src` (as `a::b::c`, the crate root as
/// ``) and its file's text.
fn modules(src: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("src is readable") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    let mut modules = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src");
        let mut parts: Vec<String> = relative
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if parts.first().is_some_and(|p| p == "bin") {
            continue;
        }
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        let text = std::fs::read_to_string(&file).expect("source is readable");
        modules.insert(parts.join("::"), text);
    }
    modules
}

/// Expands the brace groups of a `use` tree (`a::{b, c::{d}}` → `a::b`, `a::c::d`).
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').expect("balanced braces")];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand(&format!("{prefix}{}", p.trim())))
        .collect()
}

/// The paths a module's text names that start at `crate`, `super` or `self`.
fn named_paths(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut paths = Vec::new();
    for statement in code.split(';') {
        if let Some(at) = statement.find("use ") {
            let before = &statement[..at];
            if before.trim().is_empty() || before.trim_end().ends_with("pub") {
                paths.extend(expand(&statement[at + 4..]));
            }
        }
    }
    // Inline paths anywhere in the code.
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let i = from + i;
            from = i + start.len();
            if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
                continue;
            }
            let end = code[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| i + e);
            paths.push(code[i..end].trim_end_matches(':').to_string());
        }
    }
    paths
}

/// The module a path written in `module` resolves to (the deepest existing module).
fn resolve(module: &str, path: &str, known: &BTreeMap<String, String>) -> Option<String> {
    let mut segments: Vec<&str> = path.split("::").map(str::trim).collect();
    let mut base: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    match segments.first().copied() {
        Some("crate") => {
            base.clear();
            segments.remove(0);
        }
        Some("super") => {
            while segments.first() == Some(&"super") {
                segments.remove(0);
                base.pop()?;
            }
        }
        Some("self") => {
            segments.remove(0);
        }
        _ => return None,
    }
    let mut best = base.join("::");
    for segment in segments {
        base.push(segment);
        let candidate = base.join("::");
        if known.contains_key(&candidate) {
            best = candidate;
        } else {
            break;
        }
    }
    Some(best)
}

fn is_ancestor(a: &str, b: &str) -> bool {
    a.is_empty() || b == a || b.starts_with(&format!("{a}::"))
}

/// Module → the modules it names, within one crate's modules.
fn imports(known: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    known
        .iter()
        .map(|(module, text)| {
            let targets = named_paths(text)
                .iter()
                .filter_map(|p| resolve(module, p, known))
                .filter(|t| t != module)
                .collect();
            (module.clone(), targets)
        })
        .collect()
}

#[test]
fn no_two_modules_of_a_crate_import_each_other() {
    let mut pairs = Vec::new();
    let mut seen_service_imports = false;
    for (name, src) in crate_sources() {
        let graph = imports(&modules(&src));
        if name == "egsolve-service" {
            seen_service_imports = graph["api"].contains("request");
        }
        for (a, targets) in &graph {
            for b in targets {
                if a < b
                    && !is_ancestor(a, b)
                    && !is_ancestor(b, a)
                    && graph.get(b).is_some_and(|t| t.contains(a))
                {
                    pairs.push(format!("{name}: {a} <-> {b}"));
                }
            }
        }
    }
    assert!(
        seen_service_imports,
        "the scanner sees imports (the service's api uses its request module)"
    );
    assert!(
        pairs.is_empty(),
        "modules that import each other: {pairs:#?}"
    );
}

/// Issue 44: the parts all backends share live in `solve/` (`engine`, `strategy`) and in
/// `graph`, so no module runs back up into `solve::accel` but the dispatch.
#[test]
fn only_the_dispatch_imports_the_accelerated_solver() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/src");
    let graph = imports(&modules(&core));
    let dispatch = ["solve", "solve::auto"];
    let into_accel =
        |targets: &BTreeSet<String>| targets.iter().any(|t| is_ancestor("solve::accel", t));
    assert!(
        into_accel(&graph["solve::auto"]),
        "the scanner sees the dispatch's import of solve::accel"
    );
    let offending: Vec<&String> = graph
        .iter()
        .filter(|(module, targets)| {
            !is_ancestor("solve::accel", module)
                && !dispatch.contains(&module.as_str())
                && into_accel(targets)
        })
        .map(|(module, _)| module)
        .collect();
    assert!(
        offending.is_empty(),
        "modules that import from solve::accel: {offending:#?}"
    );
}

/// The host's target triple, as the compiler that builds the tests reports it.
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    text.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .trim()
        .to_string()
}

/// `cargo metadata` for the graph this machine builds.
fn metadata() -> serde_json::Value {
    // `--filter-platform` with the host's triple: the graph this machine builds. Without it
    // cargo must read the manifest of every package in the lock file, the Windows- and
    // macOS-only ones too, which a Linux build never downloads, so `--offline` failed on a
    // machine whose cargo cache holds only what building the project fetched (issue 44).
    let host = host_triple();
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON")
}

/// Each workspace package's name → the names of every package it depends on, directly or
/// not, through normal (not dev or build) dependencies, from `cargo metadata`.
fn dependency_closures() -> BTreeMap<String, BTreeSet<String>> {
    let metadata = metadata();
    let name_of: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let mut direct: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for node in metadata["resolve"]["nodes"]
        .as_array()
        .expect("a resolve graph")
    {
        let normal = node["deps"]
            .as_array()
            .expect("deps")
            .iter()
            .filter(|dep| {
                dep["dep_kinds"]
                    .as_array()
                    .expect("dep kinds")
                    .iter()
                    .any(|kind| kind["kind"].is_null())
            })
            .map(|dep| dep["pkg"].as_str().unwrap())
            .collect();
        direct.insert(node["id"].as_str().unwrap(), normal);
    }
    let mut closures = BTreeMap::new();
    for member in metadata["workspace_members"].as_array().expect("members") {
        let member = member.as_str().unwrap();
        let mut seen = BTreeSet::new();
        let mut stack = direct[member].clone();
        while let Some(id) = stack.pop() {
            if seen.insert(name_of[id].to_string()) {
                stack.extend(direct[id].iter().copied());
            }
        }
        closures.insert(name_of[member].to_string(), seen);
    }
    closures
}

#[test]
fn the_crate_graph_keeps_the_layers() {
    let closures = dependency_closures();
    let forbidden_in = |package: &str, names: &[&str]| -> Vec<String> {
        let closure = &closures[package];
        names
            .iter()
            .filter(|name| closure.contains(**name))
            .map(|name| format!("{package} depends on {name}"))
            .collect()
    };
    // The scanner sees dependencies: the service does link axum and sqlx.
    assert!(forbidden_in("egsolve-service", &["axum", "sqlx"]).len() == 2);
    let mut offending = forbidden_in(
        "egsolve-core",
        &[
            "tokio",
            "axum",
            "hyper",
            "tower",
            "sqlx",
            "reqwest",
            "cudarc",
            "egsolve-gpu",
            "egsolve-service",
            "egsolve",
        ],
    );
    offending.extend(forbidden_in(
        "egsolve-gpu",
        &[
            "tokio",
            "axum",
            "hyper",
            "sqlx",
            "reqwest",
            "egsolve-service",
            "egsolve",
        ],
    ));
    offending.extend(forbidden_in("egsolve-service", &["reqwest", "egsolve"]));
    for library in ["egsolve-alloc", "egsolve-test-support"] {
        offending.extend(forbidden_in(
            library,
            &["tokio", "axum", "sqlx", "cudarc", "egsolve-core"],
        ));
    }
    assert!(offending.is_empty(), "{offending:#?}");
}

#[test]
fn the_core_touches_files_only_in_its_format_readers() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/src");
    let mut offending = Vec::new();
    for (module, text) in modules(&core) {
        if is_ancestor("format", &module) {
            continue;
        }
        let code: String = text
            .lines()
            .take_while(|l| !l.starts_with("#[cfg(test)]"))
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for name in ["std::fs", "File::", "OpenOptions", "memmap2"] {
            if code.contains(name) {
                offending.push(format!("{module} names {name}"));
            }
        }
    }
    assert!(offending.is_empty(), "{offending:#?}");
}

#[test]
fn the_scanner_resolves_paths_and_brace_groups() {
    let mut known = BTreeMap::new();
    for m in ["", "a", "a::b", "a::c", "d"] {
        known.insert(m.to_string(), String::new());
    }
    assert_eq!(
        expand("super::{b::X, c::{Y, Z}}"),
        ["super::b::X", "super::c::Y", "super::c::Z"]
    );
    assert_eq!(
        resolve("a::b", "super::c::Y", &known).as_deref(),
        Some("a::c")
    );
    assert_eq!(
        resolve("a::b", "super::Thing", &known).as_deref(),
        Some("a")
    );
    assert_eq!(resolve("a::b", "crate::d::f", &known).as_deref(), Some("d"));
    let text = "use super::c::Y;\nfn f() { crate::d::g(); }\n// crate::a::b::ignored\n";
    let mut got: Vec<_> = named_paths(text)
        .iter()
        .filter_map(|p| resolve("a::b", p, &known))
        .collect();
    got.sort();
    got.dedup();
    assert_eq!(got, ["a::c", "d"]);
}

/// The tracked `.rs` files of the workspace (all of `git ls-files`, or every `.rs` file
/// under the root outside `target/` where git is not there, e.g. in a source archive).
fn rust_files(root: &Path) -> Vec<PathBuf> {
    let listed = std::process::Command::new("git")
        .args(["ls-files", "*.rs"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|out| out.status.success());
    if let Some(out) = listed {
        return String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|line| root.join(line))
            .collect();
    }
    let mut files = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("readable folder") {
            let path = entry.expect("directory entry").path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if path.is_dir() && !matches!(name.as_deref(), Some("target" | ".git" | ".venv")) {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// The house's size limits (issue 37): no source file over 800 lines, `ARCHITECTURE.md` a map
/// of at most 15 kB, `BENCHMARKS.md` current tables in at most 350 lines.
#[test]
fn files_stay_within_the_house_limits() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let long: Vec<String> = rust_files(root)
        .into_iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(&path).ok()?.lines().count();
            (lines > 800).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(long.is_empty(), "source files over 800 lines: {long:?}");
    let architecture = std::fs::metadata(root.join("ARCHITECTURE.md"))
        .unwrap()
        .len();
    assert!(
        architecture <= 15_000,
        "ARCHITECTURE.md is {architecture} bytes"
    );
    let benchmarks = std::fs::read_to_string(root.join("BENCHMARKS.md")).unwrap();
    let lines = benchmarks.lines().count();
    assert!(lines <= 350, "BENCHMARKS.md has {lines} lines");
}

/// Integration tests link as one binary per package (two at the root: one without libtest's
/// harness), not one per file: each binary links the whole crate graph again, and on the
/// 2-core build machine linking 41 of them dominated the test build (issue 44).
#[test]
fn integration_tests_link_as_few_binaries() {
    let metadata = metadata();
    let members: BTreeSet<&str> = metadata["workspace_members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    let tests: Vec<String> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|package| members.contains(package["id"].as_str().unwrap()))
        .flat_map(|package| {
            let name = package["name"].as_str().unwrap().to_string();
            package["targets"]
                .as_array()
                .expect("targets")
                .iter()
                .filter(|target| {
                    target["kind"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|k| k == "test")
                })
                .map(move |target| format!("{name}: {}", target["name"].as_str().unwrap()))
        })
        .collect();
    assert_at_most_and_seen(
        &tests,
        8,
        "integration-test binaries",
        ("egsolve: integration", "the root's tests are not found"),
    );
}

/// Asserts that there are at most `limit` `items` (of the kind `what`), and that `seen.0`
/// is among them (`seen.1` says what its absence means: a scanner that found nothing).
fn assert_at_most_and_seen(items: &[String], limit: usize, what: &str, seen: (&str, &str)) {
    assert!(items.len() <= limit, "{} {what}: {items:#?}", items.len());
    let (expected, missing) = seen;
    assert!(items.iter().any(|i| i == expected), "{missing}: {items:?}");
}

/// The items of a crate another crate can name, from its sources (`modules`):
/// - every `pub` item (`fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`, `mod`,
///   `macro`; methods in `impl` blocks included, fields and variants not) of the crate root
///   and of each module reachable from it through `pub mod`;
/// - every name a `pub use` of such a module re-exports, and, for a re-exported type, the
///   `pub` methods and constants of its inherent `impl` blocks wherever they are written.
///
/// `pub(crate)` and `pub(super)` items are not counted; `pub` items of private modules are
/// counted only through re-exports (unreached, the dead-code lint reports them); test modules
/// (`#[cfg(test)] mod …`, to the end of their file) are left out.
fn public_items(modules: &BTreeMap<String, String>) -> Vec<String> {
    fn code(text: &str) -> &str {
        match text.find("#[cfg(test)]\nmod ") {
            Some(at) => &text[..at],
            None => text,
        }
    }
    fn declared(line: &str) -> Option<String> {
        let mut rest = line.trim_start().strip_prefix("pub ")?;
        for qualifier in ["async ", "unsafe ", "extern \"C\" "] {
            rest = rest.strip_prefix(qualifier).unwrap_or(rest);
        }
        let (kind, tail) = rest.split_once(' ')?;
        let is_item = matches!(
            kind,
            "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "mod" | "macro"
        );
        let name: String = tail
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        (is_item && !name.is_empty()).then(|| format!("{kind} {name}"))
    }
    let reachable = |module: &str| {
        let mut path = String::new();
        module.split("::").filter(|p| !p.is_empty()).all(|part| {
            let parent = modules.get(&path).map_or("", |t| code(t));
            let public = parent.lines().any(|l| {
                l.trim() == format!("pub mod {part};") || l.trim() == format!("pub mod {part} {{")
            });
            path = if path.is_empty() {
                part.to_string()
            } else {
                format!("{path}::{part}")
            };
            public
        })
    };
    let mut items = Vec::new();
    let mut exported_types = BTreeSet::new();
    for (module, text) in modules.iter().filter(|(m, _)| reachable(m)) {
        let text = code(text);
        let mut statement = String::new();
        for line in text.lines() {
            if line.trim_start().starts_with("pub use ") || !statement.is_empty() {
                statement.push_str(line.trim());
                if !line.trim_end().ends_with(';') {
                    continue;
                }
                let tree = statement
                    .trim_start_matches("pub use ")
                    .trim_end_matches(';');
                for path in expand(tree) {
                    let name = path.rsplit("::").next().unwrap_or(&path);
                    let name = name
                        .rsplit(" as ")
                        .next()
                        .unwrap_or(name)
                        .trim()
                        .to_string();
                    items.push(format!("{module}: use {name}"));
                    exported_types.insert(name);
                }
                statement.clear();
            } else if let Some(item) = declared(line) {
                items.push(format!("{module}: {item}"));
            }
        }
    }
    // The methods of re-exported types, in the inherent `impl` blocks of private modules.
    for (module, text) in modules.iter().filter(|(m, _)| !reachable(m)) {
        let mut inside: Option<String> = None;
        for line in code(text).lines() {
            if let Some(name) = &inside {
                if line == "}" {
                    inside = None;
                } else if line.starts_with("    pub ")
                    && let Some(item) = declared(line)
                {
                    items.push(format!("{module}: {name}::{item}"));
                }
            } else if line.starts_with("impl") && !line.contains(" for ") {
                let target = line
                    .trim_start_matches("impl")
                    .trim_start_matches(|c| c != ' ')
                    .trim();
                let target: String = target
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if exported_types.contains(&target) && line.ends_with('{') {
                    inside = Some(target);
                }
            }
        }
    }
    items
}

/// Issue 44, "a narrow service": `egsolve-service` is a library behind a small facade (run a
/// server, a worker, a migration; its configuration; tokens; the job records tests read),
/// counted by [`public_items`].
#[test]
fn the_service_exposes_a_narrow_facade() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let items = public_items(&modules(&root.join("crates/service/src")));
    eprintln!("egsolve-service: {} public items", items.len());
    let seen = (": fn run", "the scanner finds the facade");
    assert_at_most_and_seen(&items, 60, "public items", seen);
}
