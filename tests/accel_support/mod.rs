//! Minimal readers for the shared test data (`../shared/data`), used by the accelerated
//! solver's tests and benchmark until the format readers land on main: PGSolver `.gm` under
//! the parity reduction of FORMATS.md, EGSolver `.mpg`, `paritysol` and `.credits` files,
//! all gzipped.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use egsolve::arena::{Arena, EdgeList, Player};
use egsolve::solve::TOP;
use egsolve::solve::accel::families::parity_weights;

/// `../shared/data` next to the project root (the worktree's parent holds `shared`).
pub fn data_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for candidate in [
        root.join("../shared/data"),
        root.join("../../shared/data"),
        "/work/shared/data".into(),
    ] {
        if candidate.is_dir() {
            return candidate;
        }
    }
    panic!("no shared/data directory found near {}", root.display());
}

fn read_gz(path: &Path) -> String {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .expect("gzip text");
    text
}

/// Statements ending in `;`, with quoted strings removed.
fn statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for ch in text.chars() {
        match ch {
            '"' => quoted = !quoted,
            _ if quoted => {}
            ';' => out.push(std::mem::take(&mut current)),
            _ => current.push(ch),
        }
    }
    out
}

fn tokens(statement: &str) -> Vec<&str> {
    statement
        .split(|c: char| c.is_whitespace() || c == ',' || c == ':')
        .filter(|t| !t.is_empty())
        .collect()
}

/// A `.gm(.gz)` parity game reduced to an energy game (player 0 wins iff credit finite).
pub fn read_parity(path: &Path) -> Arena {
    let text = read_gz(path);
    let mut rows: Vec<(u32, u32, Player, Vec<u32>)> = Vec::new();
    for s in statements(&text) {
        let t = tokens(&s);
        if t.is_empty() || t[0] == "parity" || t[0] == "start" {
            continue;
        }
        let id: u32 = t[0].parse().expect("id");
        let priority: u32 = t[1].parse().expect("priority");
        let owner = if t[2] == "0" {
            Player::Zero
        } else {
            Player::One
        };
        let succ = t[3..]
            .iter()
            .map(|x| x.parse().expect("successor"))
            .collect();
        rows.push((id, priority, owner, succ));
    }
    let n = rows.iter().map(|r| r.0).max().unwrap() as usize + 1;
    let mut owners = vec![Player::Zero; n];
    let mut priority = vec![0u32; n];
    for r in &rows {
        owners[r.0 as usize] = r.2;
        priority[r.0 as usize] = r.1;
    }
    let weight = parity_weights(&priority).expect("parity weights fit in 64 bits");
    let mut edges = EdgeList::default();
    for r in &rows {
        for &u in &r.3 {
            edges.push(r.0, u, weight[r.0 as usize]);
        }
    }
    Arena::from_edges(owners, edges, None).expect("valid arena")
}

/// Winners from a `paritysol` file: true where player 0 wins.
pub fn read_parity_solution(path: &Path) -> Vec<bool> {
    let text = read_gz(path);
    let mut pairs = Vec::new();
    for s in statements(&text) {
        let t = tokens(&s);
        if t.is_empty() || t[0] == "paritysol" {
            continue;
        }
        pairs.push((t[0].parse::<usize>().expect("id"), t[1] == "0"));
    }
    let n = pairs.iter().map(|p| p.0).max().unwrap() + 1;
    let mut w0 = vec![false; n];
    for (v, wins) in pairs {
        w0[v] = wins;
    }
    w0
}

/// An EGSolver `.mpg(.gz)` energy game.
pub fn read_energy(path: &Path) -> Arena {
    let text = read_gz(path);
    let mut owners = Vec::new();
    let mut edges = EdgeList::default();
    let mut header = true;
    for s in statements(&text) {
        let t = tokens(&s);
        if t.is_empty() {
            continue;
        }
        if header {
            header = false;
            let n: usize = t.iter().find_map(|x| x.parse().ok()).expect("MAXID");
            owners = vec![Player::Zero; n + 1];
            continue;
        }
        let v: u32 = t[0].parse().expect("id");
        owners[v as usize] = if t[1] == "MAX" {
            Player::Zero
        } else {
            Player::One
        };
        for pair in t[2..].chunks(2) {
            edges.push(
                v,
                pair[0].parse().expect("successor"),
                pair[1].parse().expect("weight"),
            );
        }
    }
    Arena::from_edges(owners, edges, None).expect("valid arena")
}

/// Credits from a `.credits(.gz)` file (`T` is ⊤).
pub fn read_credits(path: &Path) -> Vec<u64> {
    let text = read_gz(path);
    let mut pairs: Vec<(usize, u64)> = text
        .lines()
        .filter_map(|line| {
            let mut it = line.split_whitespace();
            let v = it.next()?.parse().ok()?;
            let c = it.next()?;
            Some((
                v,
                if c == "T" {
                    TOP
                } else {
                    c.parse().expect("credit")
                },
            ))
        })
        .collect();
    pairs.sort_unstable();
    pairs.into_iter().map(|p| p.1).collect()
}

/// Every shared game: (name, arena, expected credits or expected W0 membership).
pub enum Expected {
    Credits(Vec<u64>),
    Winners(Vec<bool>),
}

/// Paths of all shared games, smallest file first.
pub fn shared_games() -> Vec<(String, PathBuf, PathBuf)> {
    let dir = data_dir();
    let mut out = Vec::new();
    for (sub, ext, answer) in [
        ("parity", ".gm.gz", ".sol.gz"),
        ("energy", ".mpg.gz", ".credits.gz"),
    ] {
        for entry in std::fs::read_dir(dir.join(sub)).expect("data dir") {
            let path = entry.expect("entry").path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if let Some(stem) = name.strip_suffix(ext) {
                let answer_path = dir.join(sub).join(format!("{stem}{answer}"));
                out.push((stem.to_string(), path.clone(), answer_path));
            }
        }
    }
    out.sort_by_key(|(_, p, _)| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    out
}

/// Reads a shared game and its expected answer.
pub fn load(path: &Path, answer: &Path) -> (Arena, Expected) {
    if path.to_string_lossy().ends_with(".gm.gz") {
        (
            read_parity(path),
            Expected::Winners(read_parity_solution(answer)),
        )
    } else {
        (read_energy(path), Expected::Credits(read_credits(answer)))
    }
}
