//! The egsolve JSON game format (for small games made by scripts; see
//! `docs/json-format.md`):
//!
//! ```json
//! {"vertices": [
//!   {"id": 0, "owner": 0, "edges": [[1, -3], [2, 5]], "name": "s0"},
//!   {"id": 1, "owner": 1, "edges": [[0, 2]]},
//!   {"id": 2, "owner": 0, "edges": [[2, 0]]}
//! ], "initial": 0}
//! ```
//!
//! - `id`: `0..n`, each exactly once, in any order; `owner`: `0` (the energy player) or `1`;
//! - `edges`: at least one; `[successor, weight]` pairs (weight an `i64`) for an energy game;
//! - `priority` (optional, all vertices or none): the game is a max-parity game, its `edges`
//!   are bare successor ids, and the weights come from the reduction of `FORMATS.md` (as for
//!   `.gm` input, priorities are kept for parity answers);
//! - `name` (optional string) and top-level `initial` (optional vertex id).
//!
//! Unknown fields are errors, so a misspelt `priority` is not silently ignored.

use std::io::{self, Write};

use serde::Deserialize;
use serde_json::Value;

use crate::arena::{Arena, EdgeList, Player};

use super::Game;
use super::error::{FormatError, Position};
use super::parity::parity_arena;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GameDoc {
    vertices: Vec<VertexDoc>,
    #[serde(default)]
    initial: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VertexDoc {
    id: u64,
    owner: u64,
    edges: Vec<Value>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    priority: Option<u64>,
}

fn game_error(path: String, found: impl Into<String>, expected: impl Into<String>) -> FormatError {
    FormatError::JsonGame {
        path,
        found: found.into(),
        expected: expected.into(),
    }
}

/// Parses a JSON game from the whole (decompressed) text.
pub(crate) fn parse(text: &[u8]) -> Result<Game, FormatError> {
    let doc: GameDoc = serde_json::from_slice(text).map_err(|e| {
        // serde_json appends " at line L column C": the position goes first instead.
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m)
            .to_string();
        FormatError::Json {
            at: Position {
                line: e.line() as u64,
                column: e.column() as u64,
            },
            message,
        }
    })?;
    let n = doc.vertices.len();
    if n == 0 {
        return Err(game_error(
            "vertices".into(),
            "an empty list",
            "at least one vertex",
        ));
    }
    let parity = doc.vertices[0].priority.is_some();
    let mut slot_of_id: Vec<Option<usize>> = vec![None; n];
    for (k, v) in doc.vertices.iter().enumerate() {
        let path = format!("vertices[{k}]");
        if v.id >= n as u64 {
            return Err(game_error(
                format!("{path}.id"),
                v.id.to_string(),
                format!(
                    "an id in 0..={} (the ids must be 0..n-1 for n = {n} vertices)",
                    n - 1
                ),
            ));
        }
        if let Some(first) = slot_of_id[v.id as usize].replace(k) {
            return Err(game_error(
                format!("{path}.id"),
                format!("id {} again (also vertices[{first}])", v.id),
                "each id exactly once",
            ));
        }
        if v.owner > 1 {
            return Err(game_error(
                format!("{path}.owner"),
                v.owner.to_string(),
                "0 or 1",
            ));
        }
        if v.priority.is_some() != parity {
            return Err(game_error(
                format!("{path}.priority"),
                if parity { "no priority" } else { "a priority" },
                "a priority on every vertex (a parity game) or on none (an energy game)",
            ));
        }
        if v.edges.is_empty() {
            return Err(game_error(
                format!("{path}.edges"),
                "an empty list",
                "at least one edge",
            ));
        }
    }

    let mut owners = vec![Player::Zero; n];
    let mut priorities = vec![0u64; if parity { n } else { 0 }];
    let mut names: Vec<Option<Box<str>>> = vec![None; n];
    let mut edges = EdgeList::with_capacity(doc.vertices.iter().map(|v| v.edges.len()).sum());
    for (k, v) in doc.vertices.iter().enumerate() {
        let id = v.id as u32;
        owners[id as usize] = if v.owner == 0 {
            Player::Zero
        } else {
            Player::One
        };
        if let Some(p) = v.priority {
            priorities[id as usize] = p;
        }
        names[id as usize] = v.name.as_deref().map(Into::into);
        for (e, edge) in v.edges.iter().enumerate() {
            let path = format!("vertices[{k}].edges[{e}]");
            let (target, weight) = if parity {
                successor(edge, &path, n)?
            } else {
                weighted(edge, &path, n)?
            };
            edges.push(id, target, weight);
        }
    }
    let initial = match doc.initial {
        Some(i) if i >= n as u64 => {
            return Err(game_error(
                "initial".into(),
                i.to_string(),
                format!("a vertex id in 0..={}", n - 1),
            ));
        }
        other => other.map(|i| i as u32),
    };
    let (arena, parity) = if parity {
        let (arena, info) = parity_arena(owners, edges, Some(names), priorities)?;
        (arena, Some(info))
    } else {
        (Arena::from_edges(owners, edges, Some(names))?, None)
    };
    Ok(Game {
        arena,
        parity,
        initial,
    })
}

/// A vertex id `< n` from a JSON number.
fn target(value: &Value, path: &str, n: usize) -> Result<u32, FormatError> {
    match value.as_u64() {
        Some(t) if t < n as u64 => Ok(t as u32),
        _ => Err(game_error(
            path.to_string(),
            value.to_string(),
            format!("a successor id in 0..={}", n - 1),
        )),
    }
}

/// `[successor, weight]` (energy games).
fn weighted(edge: &Value, path: &str, n: usize) -> Result<(u32, i64), FormatError> {
    match edge.as_array().map(Vec::as_slice) {
        Some([t, w]) => {
            let target = target(t, &format!("{path}[0]"), n)?;
            let weight = w.as_i64().ok_or_else(|| {
                game_error(
                    format!("{path}[1]"),
                    w.to_string(),
                    "an integer weight that fits in 64 bits",
                )
            })?;
            Ok((target, weight))
        }
        _ => Err(game_error(
            path.to_string(),
            edge.to_string(),
            "an edge `[successor, weight]` (bare successor ids only in parity games, which give \
             every vertex a priority)",
        )),
    }
}

/// A bare successor id (parity games).
fn successor(edge: &Value, path: &str, n: usize) -> Result<(u32, i64), FormatError> {
    if edge.is_array() {
        return Err(game_error(
            path.to_string(),
            edge.to_string(),
            "a bare successor id: in a parity game (vertices with priorities) the weights come \
             from the reduction",
        ));
    }
    Ok((target(edge, path, n)?, 0))
}

/// Writes `game` in the JSON format above, one vertex per line. Parity games are written
/// with their priorities and bare successors, energy games with `[successor, weight]` edges.
pub fn write_json(game: &Game, out: impl Write) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    let arena = &game.arena;
    out.write_all(b"{\"vertices\": [\n")?;
    for v in 0..arena.vertex_count() as u32 {
        write!(
            out,
            "  {{\"id\": {v}, \"owner\": {}",
            arena.owner(v).index()
        )?;
        if let Some(parity) = &game.parity {
            write!(out, ", \"priority\": {}", parity.priorities[v as usize])?;
        }
        out.write_all(b", \"edges\": [")?;
        for (k, (target, weight)) in arena.successors(v).enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            match game.parity {
                Some(_) => write!(out, "{sep}{target}")?,
                None => write!(out, "{sep}[{target}, {weight}]")?,
            }
        }
        out.write_all(b"]")?;
        if let Some(name) = arena.name(v) {
            write!(
                out,
                ", \"name\": {}",
                serde_json::to_string(name).map_err(io::Error::other)?
            )?;
        }
        let sep = if v as usize + 1 == arena.vertex_count() {
            ""
        } else {
            ","
        };
        writeln!(out, "}}{sep}")?;
    }
    out.write_all(b"]")?;
    if let Some(initial) = game.initial {
        write!(out, ", \"initial\": {initial}")?;
    }
    out.write_all(b"}\n")?;
    out.flush()
}
