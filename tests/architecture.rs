//! Architecture invariants that a test can see in the source text:
//! - no two modules import each other (a module and its ancestors excepted: a `mod.rs`
//!   wires its children, and children use the shared types their parent defines);
//! - the solver core (`arena`, `solve`, `check`, `oracle`, `generate`) never names tokio,
//!   axum or sqlx.
//!
//! Imports are read from `use` statements (brace groups expanded) and from paths written
//! inline (`crate::a::b::item`, `super::x::item`); each is resolved to the deepest module
//! file it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every module of `src/` (as `a::b::c`, the crate root as ``) and its file's text.
fn modules() -> BTreeMap<String, String> {
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut modules = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src");
        let mut parts: Vec<String> = relative
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if parts.first().is_some_and(|p| p == "bin") || parts == ["main"] {
            continue;
        }
        if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
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
                continue;
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

/// Module → the modules it names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let known = modules();
    known
        .iter()
        .map(|(module, text)| {
            let targets = named_paths(text)
                .iter()
                .filter_map(|p| resolve(module, p, &known))
                .filter(|t| t != module)
                .collect();
            (module.clone(), targets)
        })
        .collect()
}

#[test]
fn no_two_modules_import_each_other() {
    let graph = imports();
    assert!(
        graph["service::api"].contains("service::request"),
        "the scanner sees imports (service::api uses service::request)"
    );
    let mut pairs = Vec::new();
    for (a, targets) in &graph {
        for b in targets {
            if a < b
                && !is_ancestor(a, b)
                && !is_ancestor(b, a)
                && graph.get(b).is_some_and(|t| t.contains(a))
            {
                pairs.push(format!("{a} <-> {b}"));
            }
        }
    }
    assert!(
        pairs.is_empty(),
        "modules that import each other: {pairs:#?}"
    );
}

#[test]
fn solver_core_never_names_async_or_database_crates() {
    let known = modules();
    let core = ["arena", "solve", "check", "oracle", "generate"];
    let mut offending = Vec::new();
    for (module, text) in &known {
        if !core.iter().any(|c| is_ancestor(c, module)) {
            continue;
        }
        for name in ["tokio", "axum", "sqlx"] {
            if named_paths_with_root(text, name) {
                offending.push(format!("{module} names {name}"));
            }
        }
    }
    assert!(offending.is_empty(), "{offending:#?}");
}

/// Whether `text` names the crate `root` (`use root::…` or `root::…` inline).
fn named_paths_with_root(text: &str, root: &str) -> bool {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .any(|l| {
            l.match_indices(&format!("{root}::")).any(|(i, _)| {
                i == 0
                    || !l.as_bytes()[i - 1].is_ascii_alphanumeric() && l.as_bytes()[i - 1] != b'_'
            })
        })
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
