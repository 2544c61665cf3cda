//! Small valid and invalid inputs in every format, through one helper: each case gives the
//! text and either the expected size of the game or the expected error's position (line,
//! column) and a fragment of its message. Every case is also read by the parallel readers
//! with tiny chunks (boundaries everywhere), which must give exactly the same game or the
//! same error at the same position.

use egsolve_core::format::{self, FormatError, ReadOptions};

/// What reading a case must give.
enum Expect {
    /// A game with this many vertices and edges.
    Game(usize, usize),
    /// An error at this line and column (`None` for errors without a position) whose
    /// message contains the fragment.
    Error(Option<(u64, u64)>, &'static str),
}
use Expect::{Error, Game};

/// One outcome, comparable across readers: the game, or the error's text and position.
fn outcome(result: Result<format::Game, FormatError>) -> Result<format::Game, String> {
    result.map_err(|e| format!("{e} @ {:?}", e.position()))
}

/// The parallel readers (in memory and streaming, several threads, chunks so small that
/// boundaries fall inside every token) give exactly what one sequential pass gives.
fn check_parallel_agrees(input: &str) {
    let sequential = outcome(format::read_bytes(
        input.as_bytes(),
        &ReadOptions {
            threads: 1,
            chunk_bytes: Some(usize::MAX),
            ..ReadOptions::default()
        },
    ));
    for chunk in [1, 2, 3, 7, 16, 64] {
        let opts = ReadOptions {
            threads: 3,
            chunk_bytes: Some(chunk),
            ..ReadOptions::default()
        };
        let in_memory = outcome(format::read_bytes(input.as_bytes(), &opts));
        assert!(
            in_memory == sequential,
            "{input:?}, chunks of {chunk}: in memory {in_memory:?}, sequential {sequential:?}"
        );
        let streamed = outcome(format::read(input.as_bytes(), &opts));
        assert!(
            streamed == sequential,
            "{input:?}, chunks of {chunk}: streamed {streamed:?}, sequential {sequential:?}"
        );
    }
}

fn check(input: &str, expected: &Expect) {
    check_parallel_agrees(input);
    let result = format::read(input.as_bytes(), &ReadOptions::default());
    match (result, expected) {
        (Ok(game), Game(n, m)) => {
            assert_eq!(
                (game.arena.vertex_count(), game.arena.edge_count()),
                (*n, *m),
                "{input:?}"
            );
        }
        (Err(e), Error(at, fragment)) => {
            let message = e.to_string();
            assert!(
                message.contains(fragment),
                "{input:?}: message {message:?} lacks {fragment:?}"
            );
            assert_eq!(
                e.position().map(|p| (p.line, p.column)),
                *at,
                "{input:?}: {message}"
            );
            if let Some((line, column)) = at {
                assert!(
                    message.starts_with(&format!("line {line}, column {column}: ")),
                    "{input:?}: {message}"
                );
            }
        }
        (Ok(game), Error(..)) => panic!("{input:?}: expected an error, read {game:?}"),
        (Err(e), Game(..)) => panic!("{input:?}: expected a game, got: {e}"),
    }
}

#[test]
fn egsolver_inputs() {
    let cases: &[(&str, Expect)] = &[
        ("1;\n0 MAX 1:5;\n1 MIN 0:-3;\n", Game(2, 2)),
        (
            "# c\n1; // x\n0 MAX 1:5 ; % y\n1\tMIN\r\n0 : -3 \"v1\";",
            Game(2, 2),
        ),
        ("arena 1 2;\n0 MAX 1:5;1 MIN 0:-3,1:0 name;", Game(2, 3)),
        ("1;\n1 MIN 0:-3;\n0 MAX 1:5;\n", Game(2, 2)),
        ("0;\n0 MAX 0:-9223372036854775808;", Game(1, 1)),
        ("\u{feff}1;\n0 MAX 1:5;\n1 MIN 0:-3;\n", Game(2, 2)),
        (
            "\u{feff}1;\n0 MAX 1:5;\n1 MIN 0:-3;\n1 MIN 0:1;",
            Error(Some((4, 1)), "vertex 1 a second time"),
        ),
        ("0;\n0 MAX 0:+9223372036854775807;", Game(1, 1)),
        (
            "2;\n0 MAX 1:5;\n1 MIN 0:-3;\n",
            Error(Some((4, 1)), "no line for vertex 2"),
        ),
        (
            "2;\n2 MAX 1:5;\n1 MIN 0:-3;\n",
            Error(Some((4, 1)), "no line for vertex 0"),
        ),
        (
            "1;\n0 MAX 1:5;\n0 MIN 0:-3;\n1 MIN 0:1;",
            Error(Some((3, 1)), "vertex 0 a second time (first at line 2)"),
        ),
        (
            "1;\n1 MAX 1:5;\n0 MIN 0:-3;\n1 MIN 0:1;",
            Error(Some((4, 1)), "vertex 1 a second time (first at line 2)"),
        ),
        (
            "1;\n0 MAX 2:5;\n1 MIN 0:1;",
            Error(Some((2, 7)), "found successor 2"),
        ),
        (
            "1;\n0 MAX ;\n1 MIN 0:1;",
            Error(Some((2, 7)), "at least one successor of vertex 0"),
        ),
        (
            "1;\n0 MAX \"n\";\n1 MIN 0:1;",
            Error(Some((2, 7)), "at least one successor of vertex 0"),
        ),
        (
            "1;\n0 MAXI 1:5;\n1 MIN 0:1;",
            Error(Some((2, 3)), "found owner `MAXI`"),
        ),
        (
            "1;\n0 max 1:5;\n1 MIN 0:1;",
            Error(Some((2, 3)), "expected `MAX` (player 0"),
        ),
        (
            "0;\n0 MAX 0:9223372036854775808;",
            Error(Some((2, 9)), "found weight 9223372036854775808"),
        ),
        (
            "0;\n0 MAX 0:-9223372036854775809;",
            Error(Some((2, 9)), "found weight -9223372036854775809"),
        ),
        (
            "0;\n0 MAX 0:99999999999999999999999;",
            Error(Some((2, 9)), "weight between"),
        ),
        (
            "1;\n5 MAX 1:5;",
            Error(
                Some((2, 1)),
                "found vertex id 5, expected a vertex id between 0 and 1",
            ),
        ),
        (
            "4294967295;",
            Error(Some((1, 1)), "largest vertex id between 0 and 4294967293"),
        ),
        ("4000000000;", Error(Some((1, 12)), "no line for vertex 0")),
        (
            "1;\n0 MAX 1:5",
            Error(
                Some((2, 10)),
                "found end of input, expected `,` and another edge",
            ),
        ),
        (
            "1;\n0 MAX 1:",
            Error(Some((2, 9)), "found end of input, expected a weight"),
        ),
        (
            "0;\n0 MAX 0 5;",
            Error(Some((2, 9)), "found `5`, expected `:`"),
        ),
        (
            "1;\n0 MAX 1:5 0:2;",
            Error(Some((2, 11)), "expected `,` between edges"),
        ),
        (
            "1\n0 MAX 1:5;",
            Error(Some((2, 3)), "found `MAX`, expected `;` ending the header"),
        ),
        (
            "1;\n0 MAX 1:5; /\n1 MIN 0:1;",
            Error(Some((2, 12)), "found `/`, expected a vertex id"),
        ),
        (
            "1;\n0 MAX 1:x;",
            Error(Some((2, 9)), "found `x`, expected a weight"),
        ),
        (
            "1;\n0 MAX 1:5 \"unterminated;\n",
            Error(Some((2, 11)), "closing `\"`"),
        ),
        (
            "MAX;",
            Error(
                Some((1, 1)),
                "found `MAX`, expected the start of an EGSolver arena",
            ),
        ),
    ];
    for (input, expected) in cases {
        check(input, expected);
    }
}

#[test]
fn pgsolver_inputs() {
    let cases: &[(&str, Expect)] = &[
        ("parity 1;\n0 2 0 1;\n1 3 1 0, 1 \"x\";\n", Game(2, 3)),
        ("parity 2;\nstart 1;\n0 2 0 1;\n1 3 1 0;", Game(2, 2)),
        ("0 2 0 1 ;\n1 3 1 0 ,\n 1;", Game(2, 3)),
        ("1 3 1 0;\n0 2 0 1;", Game(2, 2)),
        (
            "parity 5;\n0 2 0 1;\n1 3 1 0;",
            Error(Some((1, 8)), "header saying `parity 5;`"),
        ),
        // The header names the largest id right: the holes below it are the problem.
        (
            "parity 5;\n0 1 0 1;\n1 3 1 0;\n5 2 1 0;",
            Error(Some((4, 9)), "without holes, but line 4 defines vertex 5"),
        ),
        (
            "0 2 0 2;\n2 3 1 0;",
            Error(Some((2, 9)), "no line for vertex 1"),
        ),
        (
            "0 2 0 1;\n1 3 1 5;",
            Error(Some((2, 7)), "found successor 5"),
        ),
        ("0 2 2 1;", Error(Some((1, 5)), "found owner `2`")),
        (
            "0 2 0 ;",
            Error(Some((1, 7)), "at least one successor of vertex 0"),
        ),
        (
            "start 7;\n0 2 0 0;",
            Error(Some((1, 7)), "found successor 7"),
        ),
        (
            "0 2 0 1;\n1 3 1 0;\n0 2 0 1;",
            Error(Some((3, 1)), "vertex 0 a second time (first at line 1)"),
        ),
        (
            "0 2 0 0 \"abc",
            Error(Some((1, 13)), "found end of input, expected a closing `\"`"),
        ),
        (
            "0 99999999999999999999 0 0;",
            Error(Some((1, 3)), "found priority 99999999999999999999"),
        ),
        (
            "parity 1;\n0 2 0 1;\n1 3",
            Error(Some((3, 4)), "found end of input, expected the owner"),
        ),
        (
            "parity 1\n0 2 0 1;",
            Error(
                Some((2, 1)),
                "found `0`, expected `;` ending the header line",
            ),
        ),
        ("parity 1;", Error(Some((1, 10)), "expected a node line")),
    ];
    for (input, expected) in cases {
        check(input, expected);
    }
}

#[test]
fn json_inputs() {
    let cases: &[(&str, Expect)] = &[
        (
            r#"{"vertices":[{"id":0,"owner":0,"edges":[[1,-3],[0,5]]},{"id":1,"owner":1,"edges":[[0,2]],"name":"b"}]}"#,
            Game(2, 3),
        ),
        (
            r#"{"vertices":[{"id":1,"owner":1,"edges":[0],"priority":3},{"id":0,"owner":0,"edges":[1,0],"priority":2}],"initial":1}"#,
            Game(2, 3),
        ),
        (
            r#"{"vertices":[{"id":0,"owner":2,"edges":[[0,1]]}]}"#,
            Error(None, "at vertices[0].owner: found 2, expected 0 or 1"),
        ),
        (
            r#"{"vertices":[{"id":0,"owner":0,"edges":[[3,1]]}]}"#,
            Error(None, "at vertices[0].edges[0][0]: found 3"),
        ),
        (
            r#"{"vertices":[{"id":0,"owner":0,"edges":[]}]}"#,
            Error(None, "expected at least one edge"),
        ),
        (
            r#"{"vertices":[{"id":0,"owner":0,"edges":[0]}]}"#,
            Error(None, "`[successor, weight]`"),
        ),
        (
            r#"{"vertices":[{"id":0,"owner":0,"edges":[[0,1]],"priority":1},{"id":1,"owner":0,"edges":[0],"priority":2}]}"#,
            Error(
                None,
                "vertices[0].edges[0]: found [0,1], expected a bare successor id",
            ),
        ),
        (
            r#"{"vertices":[{"id":0,"owner":0,"edges":[[0,1]]},{"id":0,"owner":0,"edges":[[0,1]]}]}"#,
            Error(None, "found id 0 again"),
        ),
        (
            r#"{"vertices":[{"id":0,"owner":0,"edges":[[0,1]],"prio":2}]}"#,
            Error(Some((1, 53)), "unknown field `prio`"),
        ),
        (
            "{\"vertices\": [\n  {\"id\": 0,,}]}",
            Error(Some((2, 12)), "key must be a string"),
        ),
        (r#"{"vertices":[]}"#, Error(None, "at least one vertex")),
        (
            r#"{"vertices":[{"id":0,"owner":0,"edges":[[0,1]]}],"initial":4}"#,
            Error(None, "at initial: found 4"),
        ),
    ];
    for (input, expected) in cases {
        check(input, expected);
    }
}

#[test]
fn unknown_formats_name_the_supported_ones() {
    for input in [
        "hello world",
        "",
        "   \n# only a comment\n",
        "paritysol 3;\n0 1;",
    ] {
        let e = format::read(input.as_bytes(), &ReadOptions::default()).unwrap_err();
        assert!(
            matches!(e, FormatError::UnknownFormat { .. }),
            "{input:?}: {e}"
        );
        assert!(e.to_string().contains("pass --format mpg|gm|json"), "{e}");
    }
}

#[test]
fn a_given_format_skips_detection() {
    let opts = ReadOptions {
        format: Some(format::Format::PgSolver),
        ..ReadOptions::default()
    };
    let e = format::read("1;\n0 MAX 0:1;".as_bytes(), &opts).unwrap_err();
    assert!(e.to_string().contains("line 1, column 2: found `;`"), "{e}");
}
