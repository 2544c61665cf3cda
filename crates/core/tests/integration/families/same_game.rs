//! Whether a generated game is the game in one of Oink's files, and through which
//! correspondence of vertices: the same ids, the same names (when both name their vertices)
//! or, failing both, an isomorphism found by colour refinement.
//!
//! The isomorphism search refines colours on the disjoint union of the two games, so a colour
//! means the same in both: start from (priority, owner), then repeatedly split colours by
//! the multisets of successor and predecessor colours until nothing splits. If a colour class
//! still holds several vertices of each game, one vertex of the first game is paired with
//! each candidate of the second in turn (both get a fresh colour) and the refinement goes
//! on, backtracking on a contradiction. The lower-bound families have nearly all priorities
//! distinct, so refinement alone settles them in a few rounds.

use std::collections::HashMap;

use egsolve_core::arena::VertexId;
use egsolve_core::generate::ParityGame;

/// How the two games correspond.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// Same ids, priorities, owners and successor lists (in order).
    Identical,
    /// The same once each file vertex is mapped to the generated vertex of the same name;
    /// successor lists agree in order.
    SameNames(Vec<VertexId>),
    /// An isomorphism (file vertex → generated vertex) keeping priorities, owners and
    /// successor sets.
    Isomorphic(Vec<VertexId>),
}

impl Match {
    /// The generated vertex of each file vertex.
    pub fn map(&self, n: usize) -> Vec<VertexId> {
        match self {
            Match::Identical => (0..n as VertexId).collect(),
            Match::SameNames(map) | Match::Isomorphic(map) => map.clone(),
        }
    }
}

/// How `mine` (with `my_names`) corresponds to `file` (with `file_names`), or why not.
pub fn same_game(
    mine: &ParityGame,
    my_names: Option<&[String]>,
    file: &ParityGame,
    file_names: Option<&[String]>,
) -> Result<Match, String> {
    let n = file.owners.len();
    if mine.owners.len() != n {
        return Err(format!(
            "{} vertices generated, {n} in the file",
            mine.owners.len()
        ));
    }
    if mine == file {
        return Ok(Match::Identical);
    }
    if let (Some(mine_n), Some(file_n)) = (my_names, file_names) {
        return by_names(mine, mine_n, file, file_n).map(Match::SameNames);
    }
    isomorphism(file, mine)
        .map(Match::Isomorphic)
        .ok_or_else(|| "no isomorphism keeps priorities, owners and edges".to_string())
}

fn by_names(
    mine: &ParityGame,
    my_names: &[String],
    file: &ParityGame,
    file_names: &[String],
) -> Result<Vec<VertexId>, String> {
    let index: HashMap<&str, VertexId> = my_names
        .iter()
        .enumerate()
        .map(|(v, name)| (name.as_str(), v as VertexId))
        .collect();
    if index.len() != my_names.len() {
        return Err("generated names repeat".into());
    }
    let map = file_names
        .iter()
        .map(|name| {
            index
                .get(name.as_str())
                .copied()
                .ok_or_else(|| format!("the file's vertex {name:?} is not generated"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for (v, &m) in map.iter().enumerate() {
        let (m, name) = (m as usize, &file_names[v]);
        if (mine.priorities[m], mine.owners[m]) != (file.priorities[v], file.owners[v]) {
            return Err(format!("{name}: priority or owner differs"));
        }
        let mapped: Vec<VertexId> = file.successors[v]
            .iter()
            .map(|&u| map[u as usize])
            .collect();
        if mapped != mine.successors[m] {
            return Err(format!("{name}: successors differ"));
        }
    }
    Ok(map)
}

/// An isomorphism from `a` to `b` (a's vertex → b's vertex), if there is one.
pub fn isomorphism(a: &ParityGame, b: &ParityGame) -> Option<Vec<VertexId>> {
    let n = a.owners.len();
    if b.owners.len() != n {
        return None;
    }
    let union = Union::new(a, b);
    let mut keys: Vec<(u64, u8)> = (0..2 * n)
        .map(|v| {
            let (game, x) = union.side(v);
            (game.priorities[x], game.owners[x].index())
        })
        .collect();
    let colours = rank(&mut keys);
    let map = search(&union, colours)?;
    verify(a, b, &map).then_some(map)
}

/// The two games side by side: vertex `v < n` is `a`'s `v`, `n + v` is `b`'s `v`.
struct Union<'g> {
    a: &'g ParityGame,
    b: &'g ParityGame,
    n: usize,
    successors: Vec<Vec<usize>>,
    predecessors: Vec<Vec<usize>>,
}

impl<'g> Union<'g> {
    fn new(a: &'g ParityGame, b: &'g ParityGame) -> Union<'g> {
        let n = a.owners.len();
        let mut successors = vec![Vec::new(); 2 * n];
        let mut predecessors = vec![Vec::new(); 2 * n];
        for (offset, game) in [(0, a), (n, b)] {
            for (v, list) in game.successors.iter().enumerate() {
                for &u in list {
                    successors[offset + v].push(offset + u as usize);
                    predecessors[offset + u as usize].push(offset + v);
                }
            }
        }
        Union {
            a,
            b,
            n,
            successors,
            predecessors,
        }
    }

    fn side(&self, v: usize) -> (&'g ParityGame, usize) {
        if v < self.n {
            (self.a, v)
        } else {
            (self.b, v - self.n)
        }
    }
}

/// Dense ranks of `keys` (equal keys, equal ranks; ranks ordered as the keys).
fn rank<K: Ord + Clone>(keys: &mut [K]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&x, &y| keys[x].cmp(&keys[y]));
    let mut ranks = vec![0u32; keys.len()];
    let mut current = 0u32;
    for (i, &v) in order.iter().enumerate() {
        if i > 0 && keys[v] != keys[order[i - 1]] {
            current += 1;
        }
        ranks[v] = current;
    }
    ranks
}

/// Splits colours by neighbour colours until stable.
fn refine(union: &Union<'_>, mut colours: Vec<u32>) -> Vec<u32> {
    let count = |c: &[u32]| c.iter().max().map_or(0, |&m| m as usize + 1);
    let mut classes = count(&colours);
    loop {
        let mut keys: Vec<(u32, Vec<u32>, Vec<u32>)> = (0..colours.len())
            .map(|v| {
                let mut out: Vec<u32> = union.successors[v].iter().map(|&u| colours[u]).collect();
                let mut inc: Vec<u32> = union.predecessors[v].iter().map(|&u| colours[u]).collect();
                out.sort_unstable();
                inc.sort_unstable();
                (colours[v], out, inc)
            })
            .collect();
        colours = rank(&mut keys);
        let now = count(&colours);
        if now == classes {
            return colours;
        }
        classes = now;
    }
}

/// Refines, then pairs up the vertices of any class still larger than one pair.
fn search(union: &Union<'_>, colours: Vec<u32>) -> Option<Vec<VertexId>> {
    let colours = refine(union, colours);
    let n = union.n;
    let classes = colours.iter().max().map_or(0, |&m| m as usize + 1);
    let mut members: Vec<(Vec<usize>, Vec<usize>)> = vec![(Vec::new(), Vec::new()); classes];
    for (v, &c) in colours.iter().enumerate() {
        let side = &mut members[c as usize];
        if v < n { &mut side.0 } else { &mut side.1 }.push(v);
    }
    if members.iter().any(|(x, y)| x.len() != y.len()) {
        return None;
    }
    let Some((xs, ys)) = members.iter().find(|(x, _)| x.len() > 1) else {
        let mut map = vec![0 as VertexId; n];
        for (x, y) in &members {
            map[x[0]] = (y[0] - n) as VertexId;
        }
        return Some(map);
    };
    let fresh = classes as u32;
    ys.iter().find_map(|&y| {
        let mut tried = colours.clone();
        tried[xs[0]] = fresh;
        tried[y] = fresh;
        search(union, tried)
    })
}

/// Whether `map` takes `a` onto `b` exactly (successor sets compared).
fn verify(a: &ParityGame, b: &ParityGame, map: &[VertexId]) -> bool {
    (0..a.owners.len()).all(|v| {
        let m = map[v] as usize;
        let mut mapped: Vec<VertexId> = a.successors[v].iter().map(|&u| map[u as usize]).collect();
        let mut theirs = b.successors[m].clone();
        mapped.sort_unstable();
        theirs.sort_unstable();
        a.priorities[v] == b.priorities[m] && a.owners[v] == b.owners[m] && mapped == theirs
    })
}
