//! Games for the GPU checks: seeded random generators of many shapes, and minimal readers
//! for the shared data (EGSolver `.mpg[.gz]` energy games with `.credits.gz` answers,
//! PGSolver `.gm[.gz]` parity games with `.sol.gz` winners, reduced as in FORMATS.md).
//!
//! These readers exist so the device check runs before the project's `format` module is on
//! main; they accept what the shared data holds and stop with a message on anything else.

use std::io::Read;
use std::path::Path;

use egsolve_core::arena::{Arena, EdgeList, Player};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a game's answer is checked against besides the reference solver.
pub enum Expected {
    /// Credits per vertex (`u64::MAX` for ⊤).
    Credits(Vec<u64>),
    /// Winner per vertex (finite credit ⇔ player 0).
    Winners(Vec<Player>),
}

/// A named game.
pub struct Case {
    pub name: String,
    pub arena: Arena,
    pub expected: Option<Expected>,
}

fn owner(rng: &mut ChaCha8Rng, p0: f64) -> Player {
    if rng.random_bool(p0) {
        Player::Zero
    } else {
        Player::One
    }
}

/// Uniform random game: out-degree uniform in `1..=2*avg-1`, weights uniform in `lo..=hi`.
pub fn random(seed: u64, n: u32, avg: u32, lo: i64, hi: i64, sorted_owners: bool) -> Arena {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut owners: Vec<Player> = (0..n).map(|_| owner(&mut rng, 0.5)).collect();
    if sorted_owners {
        owners.sort_by_key(|p| p.index());
    }
    let mut edges = EdgeList::with_capacity(n as usize * avg as usize);
    for v in 0..n {
        let d = rng.random_range(1..=2 * avg - 1);
        for _ in 0..d {
            edges.push(v, rng.random_range(0..n), rng.random_range(lo..=hi));
        }
    }
    Arena::from_edges(owners, edges, None).expect("generated games are valid")
}

/// Random game whose edges are non-negative (up to `max_gain`) except a fraction
/// `negative` of weight `-loss`: credits stay small and most vertices are won by player 0,
/// so lifting needs few rounds (the shape of large benchmark games that finish).
pub fn mostly_gains(seed: u64, n: u32, avg: u32, negative: f64, loss: i64, max_gain: i64) -> Arena {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let owners: Vec<Player> = (0..n).map(|_| owner(&mut rng, 0.5)).collect();
    let mut edges = EdgeList::with_capacity(n as usize * avg as usize);
    for v in 0..n {
        let d = rng.random_range(1..=2 * avg - 1);
        for _ in 0..d {
            let w = if rng.random_bool(negative) {
                -loss
            } else {
                rng.random_range(0..=max_gain)
            };
            edges.push(v, rng.random_range(0..n), w);
        }
    }
    Arena::from_edges(owners, edges, None).expect("generated games are valid")
}

/// Power-law out-degrees (a few hubs with up to `max_degree` successors), weights in
/// `-w..=w`, plus self-loops and parallel edges.
pub fn skewed(seed: u64, n: u32, max_degree: u32, w: i64) -> Arena {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let owners: Vec<Player> = (0..n).map(|_| owner(&mut rng, 0.5)).collect();
    let mut edges = EdgeList::default();
    for v in 0..n {
        let x: f64 = rng.random_range(0.0..1.0);
        let d = ((1.0 / (x + 1e-3)).powf(1.3) as u32).clamp(1, max_degree);
        for _ in 0..d {
            edges.push(v, rng.random_range(0..n), rng.random_range(-w..=w));
        }
        if rng.random_bool(0.1) {
            edges.push(v, v, rng.random_range(-w..=w));
        }
        if rng.random_bool(0.1) {
            let u = rng.random_range(0..n);
            edges.push(v, u, rng.random_range(-w..=w));
            edges.push(v, u, rng.random_range(-w..=w));
        }
    }
    Arena::from_edges(owners, edges, None).expect("generated games are valid")
}

/// Bipartite game (player 0 ↔ player 1), like reduced parity games.
pub fn bipartite(seed: u64, half: u32, avg: u32, w: i64) -> Arena {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = 2 * half;
    let owners: Vec<Player> = (0..n).map(|v| Player::one_if(v % 2 == 1)).collect();
    let mut edges = EdgeList::default();
    for v in 0..n {
        let d = rng.random_range(1..=2 * avg - 1);
        for _ in 0..d {
            let u = 2 * rng.random_range(0..half) + (1 - v % 2);
            edges.push(v, u, rng.random_range(-w..=w));
        }
    }
    Arena::from_edges(owners, edges, None).expect("generated games are valid")
}

/// A ring of `n` player-0 vertices with one edge of weight −1 (the rest 0), plus `laps`
/// vertices that raise `M` without needing credit: credit crawls around the ring one vertex
/// per round, `laps` times, so the game needs about `n·laps` rounds of frontier 1.
pub fn ring(n: u32, laps: u32) -> Arena {
    let total = n + laps;
    let owners = vec![Player::Zero; total as usize];
    let mut edges = EdgeList::default();
    for v in 0..n {
        edges.push(v, (v + 1) % n, if v == 0 { -1 } else { 0 });
    }
    for v in n..total {
        edges.push(v, v, 0);
        edges.push(v, v, -1);
    }
    Arena::from_edges(owners, edges, None).expect("generated games are valid")
}

/// Large weights: `|w|` up to `2^40`, so `M` is near `2^40·n` (64-bit arithmetic matters).
pub fn heavy(seed: u64, n: u32, avg: u32) -> Arena {
    random(seed, n, avg, -(1 << 40), 1 << 40, false)
}

fn read_text(path: &Path) -> String {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::MultiGzDecoder::new(file).read_to_string(&mut text)
    } else {
        std::io::BufReader::new(file).read_to_string(&mut text)
    }
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text
}

/// Splits text into `;`-terminated statements of tokens; comments and quoted labels are
/// dropped; `,` and `:` separate tokens.
fn statements(text: &str) -> Vec<Vec<&str>> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += 1;
                }
                i += 1;
            }
            b'#' | b'%' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b';' => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                i += 1;
            }
            b',' | b':' | b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            _ => {
                let start = i;
                while i < bytes.len() && !b"\";,: \t\r\n".contains(&bytes[i]) {
                    i += 1;
                }
                current.push(&text[start..i]);
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn num<T: std::str::FromStr>(token: &str, path: &Path) -> T {
    token
        .parse()
        .unwrap_or_else(|_| panic!("{}: bad number {token:?}", path.display()))
}

/// An EGSolver arena file.
pub fn read_energy(path: &Path) -> Arena {
    let text = read_text(path);
    let stmts = statements(&text);
    let header: Vec<&str> = stmts[0].iter().copied().filter(|t| *t != "arena").collect();
    let n: usize = num::<usize>(header[0], path) + 1;
    let mut owners = vec![Player::Zero; n];
    let mut edges = EdgeList::default();
    for s in &stmts[1..] {
        let v: u32 = num(s[0], path);
        owners[v as usize] = match s[1] {
            "MAX" => Player::Zero,
            "MIN" => Player::One,
            other => panic!("{}: bad owner {other}", path.display()),
        };
        for pair in s[2..].chunks(2) {
            edges.push(v, num(pair[0], path), num(pair[1], path));
        }
    }
    Arena::from_edges(owners, edges, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A PGSolver parity game, reduced to an energy game (FORMATS.md).
pub fn read_parity(path: &Path) -> Arena {
    let text = read_text(path);
    let mut nodes: Vec<(u32, u64, Player, Vec<u32>)> = Vec::new();
    for s in statements(&text) {
        if s[0] == "parity" || s[0] == "start" {
            continue;
        }
        let owner = if s[2] == "0" {
            Player::Zero
        } else {
            Player::One
        };
        let succ = s[3..].iter().map(|t| num(t, path)).collect();
        nodes.push((num(s[0], path), num(s[1], path), owner, succ));
    }
    let n = nodes.iter().map(|x| x.0).max().unwrap_or(0) as usize + 1;
    let mut priorities: Vec<u64> = nodes.iter().map(|x| x.1).collect();
    priorities.sort_unstable();
    priorities.dedup();
    let count = |p: u64| nodes.iter().filter(|x| x.1 == p).count() as i128;
    let mut a: Vec<i128> = Vec::new();
    for (i, &p) in priorities.iter().enumerate() {
        let value = if i == 0 {
            i128::from(p % 2 != 0)
        } else {
            1 + (0..i)
                .filter(|&j| priorities[j] % 2 != p % 2)
                .map(|j| count(priorities[j]) * a[j])
                .sum::<i128>()
        };
        assert!(
            value < i64::MAX as i128,
            "{}: reduced weights overflow",
            path.display()
        );
        a.push(value);
    }
    let weight = |p: u64| {
        let i = priorities.binary_search(&p).expect("priority present");
        if p % 2 == 0 {
            a[i] as i64
        } else {
            -(a[i] as i64)
        }
    };
    let mut owners = vec![Player::Zero; n];
    let mut edges = EdgeList::default();
    for (v, p, o, succ) in &nodes {
        owners[*v as usize] = *o;
        for &u in succ {
            edges.push(*v, u, weight(*p));
        }
    }
    Arena::from_edges(owners, edges, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `ID CREDIT|T` lines.
pub fn read_credits(path: &Path, n: usize) -> Vec<u64> {
    let mut credits = vec![0u64; n];
    for line in read_text(path).lines().filter(|l| !l.trim().is_empty()) {
        let mut it = line.split_whitespace();
        let v: usize = num(it.next().expect("id"), path);
        let c = it.next().expect("credit");
        credits[v] = if c == "T" { u64::MAX } else { num(c, path) };
    }
    credits
}

/// `paritysol` winners.
pub fn read_winners(path: &Path, n: usize) -> Vec<Player> {
    let mut winners = vec![Player::Zero; n];
    for s in statements(&read_text(path)) {
        if s[0] == "paritysol" {
            continue;
        }
        let v: usize = num(s[0], path);
        winners[v] = if s[1] == "0" {
            Player::Zero
        } else {
            Player::One
        };
    }
    winners
}

/// Every game in `dir/energy` and `dir/parity` with its expected answer.
pub fn shared_data(dir: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut files: Vec<_> = ["energy", "parity"]
        .iter()
        .flat_map(|sub| {
            std::fs::read_dir(dir.join(sub))
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .collect();
    files.sort();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if let Some(stem) = name.strip_suffix(".mpg.gz") {
            let arena = read_energy(&path);
            let credits = read_credits(
                &path.with_file_name(format!("{stem}.credits.gz")),
                arena.vertex_count(),
            );
            cases.push(Case {
                name: stem.to_string(),
                arena,
                expected: Some(Expected::Credits(credits)),
            });
        } else if let Some(stem) = name.strip_suffix(".gm.gz") {
            let arena = read_parity(&path);
            let winners = read_winners(
                &path.with_file_name(format!("{stem}.sol.gz")),
                arena.vertex_count(),
            );
            cases.push(Case {
                name: stem.to_string(),
                arena,
                expected: Some(Expected::Winners(winners)),
            });
        }
    }
    cases
}
