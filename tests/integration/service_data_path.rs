//! The service's data path end to end, on both stores: uploads (plain, compressed, `egb`)
//! parsed once received and refused with line and column before a job exists; the binary
//! result (`?format=binary`) checked byte by byte against its documented layout and against
//! the JSON result; admission control (a game too large for the host's memory limit is a
//! 413 `exceeds-memory` with what it needs, what is there and the setting to raise).

use crate::service_support;

use std::time::Duration;

use service_support::*;

const PARITY: &str = "parity/ABP_datasize=2_infinitely_often_lost_mcrl2example.gm.gz";
const ENERGY: &str = "energy/clique_500_cp4.mpg.gz";

/// The binary result's parts, checked against the layout in `openapi.yaml` and
/// `docs/result-binary.md`.
struct Binary {
    credits_computed: bool,
    credits: Vec<u64>,
    strategies: Vec<u32>,
}

fn decode_binary(body: &[u8]) -> Binary {
    assert!(body.len() >= 32, "{} bytes", body.len());
    assert_eq!(&body[..8], b"EGSRESLT", "magic");
    assert_eq!(
        u32::from_le_bytes(body[8..12].try_into().unwrap()),
        1,
        "version"
    );
    let flags = u32::from_le_bytes(body[12..16].try_into().unwrap());
    assert_eq!(flags & !1, 0, "only bit 0 is defined");
    let n = u64::from_le_bytes(body[16..24].try_into().unwrap()) as usize;
    assert_eq!(&body[24..32], &[0; 8], "reserved");
    assert_eq!(body.len(), 32 + 12 * n, "32 + 12·n bytes");
    let credits = body[32..32 + 8 * n]
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let strategies = body[32 + 8 * n..]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    Binary {
        credits_computed: flags & 1 == 1,
        credits,
        strategies,
    }
}

/// `?format=binary` holds the JSON result's credits (⊤ as 2^64−1, winners only for a parity
/// answer) and strategies (2^32−1 for none), with `Content-Length` and the documented
/// media type; zstd when asked; `vertices` is refused with it.
async fn binary_results_match_the_json_and_the_layout(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    for (game, query, credits_computed) in [
        (ENERGY, "?return=strategies", true),
        (PARITY, "?return=strategies&backend=parity", false),
    ] {
        let bytes = std::fs::read(data_file(game)).unwrap();
        let (id, job) = server.submit_finished(bytes, query).await;
        assert_eq!(job["state"], "succeeded", "{game}: {job}");
        let reply = server
            .get(&format!("/v1/jobs/{id}/result?format=binary"), None)
            .await;
        assert_eq!(reply.status, 200);
        assert_eq!(
            reply.headers["content-type"],
            "application/vnd.egsolve.result"
        );
        assert_eq!(
            reply.headers["content-length"].to_str().unwrap(),
            reply.body.len().to_string()
        );
        let binary = decode_binary(&reply.body);
        assert_eq!(binary.credits_computed, credits_computed, "{game}");
        let json = server
            .get(&format!("/v1/jobs/{id}/result"), None)
            .await
            .json();
        let records = json["vertices"].as_array().unwrap();
        assert_eq!(records.len(), binary.credits.len());
        for (v, record) in records.iter().enumerate() {
            let winner = record["winner"].as_u64().unwrap();
            let credit = binary.credits[v];
            assert_eq!(winner == 1, credit == u64::MAX, "{game}: winner of {v}");
            if credits_computed {
                assert_eq!(record["credit"].as_u64().unwrap_or(u64::MAX), credit);
            } else {
                assert!(credit == 0 || credit == u64::MAX, "winners only");
            }
            let strategy = record["strategy"].as_u64().map_or(u32::MAX, |s| s as u32);
            assert_eq!(binary.strategies[v], strategy, "{game}: strategy of {v}");
        }
        ranges_of_the_binary_result(&server, &id, &reply.body, &reply.headers).await;
        // Never compressed on the fly (it is the format for speed, and it is served in
        // byte ranges): a client that accepts zstd gets the same bytes.
        let accepting = server
            .get_accepting(&format!("/v1/jobs/{id}/result?format=binary"), "zstd")
            .await;
        assert!(accepting.headers.get("content-encoding").is_none());
        assert_eq!(accepting.body, reply.body);
        let refused = server
            .get(
                &format!("/v1/jobs/{id}/result?format=binary&vertices=0"),
                None,
            )
            .await;
        refused.assert_problem(400, "invalid-parameter");
    }
    server.stop().await;
}

/// Byte ranges of a binary result (`whole`, answered with `headers`): one array, the last
/// bytes, a resume under `If-Range` (and the whole body when the tag differs), a list
/// (served whole) and a start past the end (`416`).
async fn ranges_of_the_binary_result(
    server: &Server,
    id: &str,
    whole: &[u8],
    headers: &reqwest::header::HeaderMap,
) {
    let path = format!("/v1/jobs/{id}/result?format=binary");
    assert_eq!(headers["accept-ranges"], "bytes");
    let tag = headers["etag"].to_str().unwrap().to_string();
    assert!(tag.starts_with('"') && tag.ends_with('"'), "{tag}");
    let length = whole.len();
    let n = (length - 32) / 12;
    let ranged = |range: String, if_range: Option<&'static str>| {
        let path = path.clone();
        let tag = if_range.map_or(tag.clone(), str::to_string);
        async move {
            let mut headers = vec![("range", range.as_str())];
            if if_range.is_some() || range.starts_with("bytes=100") {
                headers.push(("if-range", tag.as_str()));
            }
            server
                .call(reqwest::Method::GET, &path, None, &headers, None)
                .await
        }
    };
    let credits_end = 32 + 8 * n - 1;
    let credits = ranged(format!("bytes=32-{credits_end}"), None).await;
    assert_eq!(credits.status, 206);
    assert_eq!(
        credits.headers["content-range"],
        format!("bytes 32-{credits_end}/{length}").as_str()
    );
    assert_eq!(credits.body[..], whole[32..32 + 8 * n]);
    let tail = ranged("bytes=-4".into(), None).await;
    assert_eq!(tail.status, 206);
    assert_eq!(tail.body[..], whole[length - 4..]);
    let resumed = ranged("bytes=100-".into(), None).await;
    assert_eq!(resumed.status, 206);
    assert_eq!(resumed.body[..], whole[100..]);
    let changed = ranged("bytes=100-".into(), Some("\"another\"")).await;
    assert_eq!(
        changed.status, 200,
        "If-Range with another tag: the whole body"
    );
    assert_eq!(changed.body[..], whole[..]);
    let list = ranged("bytes=0-9,20-29".into(), None).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.body.len(), length);
    let past = ranged(format!("bytes={length}-"), None).await;
    assert_eq!(past.status, 416);
    assert_eq!(
        past.headers["content-range"],
        format!("bytes */{length}").as_str()
    );
}

/// Plain, gzip, zstd and `egb` uploads of one game are parsed before the `202` (the job
/// view has the arena's figures at once), stored once and answered alike; malformed text
/// sent compressed is refused with its line and column.
async fn every_upload_form_is_parsed_before_the_answer(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    let plain = gunzip(&std::fs::read(data_file(ENERGY)).unwrap());
    let game = egsolve_core::format::read_bytes(&plain, &Default::default()).unwrap();
    let mut egb = Vec::new();
    egsolve_core::format::write_egb(&game, &mut egb).unwrap();
    let mut hashes = Vec::new();
    for (name, body) in [
        ("plain", plain.clone()),
        ("gzip", gzip(&plain)),
        ("zstd", zstd::encode_all(&plain[..], 3).unwrap()),
        ("egb", egb.clone()),
        ("zstd egb", zstd::encode_all(&egb[..], 3).unwrap()),
    ] {
        let reply = server.submit(body, "?backend=cpu", None).await;
        assert_eq!(reply.status, 202, "{name}: {}", reply.text());
        let job = reply.json();
        assert_eq!(
            job["arena"]["vertices"].as_u64(),
            Some(game.arena.vertex_count() as u64),
            "{name}: parsed before the answer: {job}"
        );
        assert_eq!(
            job["arena"]["edges"].as_u64(),
            Some(game.arena.edge_count() as u64)
        );
        hashes.push(job["arena"]["sha256"].as_str().unwrap().to_string());
        let id = job["id"].as_str().unwrap();
        let done = server
            .wait_finished(id, None, Duration::from_secs(60))
            .await;
        assert_eq!(done["state"], "succeeded", "{name}: {done}");
    }
    assert!(hashes[..3].iter().all(|h| *h == hashes[0]), "{hashes:?}");
    assert!(hashes[3..].iter().all(|h| *h == hashes[3]), "{hashes:?}");

    let mut bad = plain.clone();
    let at = bad.len() / 2;
    let line = 1 + bad[..at].iter().filter(|&&b| b == b'\n').count();
    let start = bad[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    bad[start] = b'x';
    let reply = server
        .submit(zstd::encode_all(&bad[..], 3).unwrap(), "", None)
        .await;
    reply.assert_problem(422, "malformed-arena");
    assert_eq!(
        reply.json()["line"].as_u64(),
        Some(line as u64),
        "{}",
        reply.text()
    );
    assert_eq!(reply.json()["column"].as_u64(), Some(1));
    server.stop().await;
}

/// A game over `max_job_memory_bytes` is refused at submission with the figures; under it,
/// the same game runs; a game the worker parses (past `inline_parse_bytes`) fails in the job
/// with `exceeds-memory`.
async fn games_too_large_for_the_host_are_refused(engine: Engine) {
    let game = std::fs::read(data_file(ENERGY)).unwrap();
    let parsed = egsolve_core::format::read_bytes(&game, &Default::default()).unwrap();
    let (n, m) = (
        parsed.arena.vertex_count() as u64,
        parsed.arena.edge_count() as u64,
    );
    let needed =
        egsolve_core::solve::memory::host_bytes(n, m, parsed.arena.weight_width().bytes() as u64);
    let server = Server::start_on(engine, |config| {
        config.max_job_memory_bytes = needed - 1;
    })
    .await;
    let reply = server.submit(game.clone(), "", None).await;
    reply.assert_problem(413, "exceeds-memory");
    let problem = reply.json();
    assert_eq!(problem["needed_bytes"].as_u64(), Some(needed));
    assert_eq!(problem["available_bytes"].as_u64(), Some(needed - 1));
    assert_eq!(problem["setting"], "max_job_memory_bytes");
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("EGSOLVE_MAX_JOB_MEMORY_BYTES")
            && detail.contains(&format!("{n} vertices")),
        "{detail}"
    );
    let jobs = server.get("/v1/jobs", None).await.json();
    assert_eq!(jobs["jobs"].as_array().unwrap().len(), 0, "no job was made");
    server.stop().await;

    let server = Server::start_on(engine, |config| {
        config.max_job_memory_bytes = needed - 1;
        config.inline_parse_bytes = 0;
    })
    .await;
    let (_, job) = server.submit_finished(game.clone(), "").await;
    assert_eq!(job["state"], "failed", "{job}");
    assert_eq!(job["failure"]["type"], "exceeds-memory", "{job}");
    server.stop().await;

    let server = Server::start_on(engine, |config| {
        config.max_job_memory_bytes = needed;
    })
    .await;
    let (_, job) = server.submit_finished(game, "").await;
    assert_eq!(job["state"], "succeeded", "{job}");
    server.stop().await;
}

/// An `egb` upload (plain with its own content type, or zstd-compressed) is solved like the
/// text it came from; a damaged one is refused with the byte offset; results come back
/// zstd-compressed when asked.
async fn egb_uploads_and_zstd_results(engine: Engine) {
    let server = Server::start_on(engine, |_| {}).await;
    let (game, answer) = (
        "parity/Hanoi_ndisks=8_eventually_done.gm.gz",
        "parity/Hanoi_ndisks=8_eventually_done.sol.gz",
    );
    let read = egsolve_core::format::read_path(&data_file(game), &Default::default()).unwrap();
    let mut egb = Vec::new();
    egsolve_core::format::write_egb(&read, &mut egb).unwrap();
    let expected = expected(&data_file(answer));
    let reply = server
        .submit_with(
            egb.clone(),
            "?credits=true",
            ("content-type", "application/vnd.egsolve.egb"),
        )
        .await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    let id = reply.json()["id"].as_str().unwrap().to_string();
    let job = server
        .wait_finished(&id, None, Duration::from_secs(60))
        .await;
    assert_eq!(job["state"], "succeeded", "{job}");
    let text = server
        .get(&format!("/v1/jobs/{id}/result?format=text"), None)
        .await;
    let got = parse_text_result(&text.text());
    assert_eq!(got.len(), expected.len());
    for (v, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g.0, e.0, "winner of vertex {v}");
    }
    // The same bytes compressed: stored once, the result reused.
    let reply = server
        .submit_with(
            zstd::encode_all(&egb[..], 3).unwrap(),
            "",
            ("content-encoding", "zstd"),
        )
        .await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    assert_eq!(reply.json()["reused"], true);

    let zipped = server
        .get_accepting(&format!("/v1/jobs/{id}/result?format=text"), "zstd, gzip")
        .await;
    assert_eq!(zipped.headers["content-encoding"], "zstd");
    assert_eq!(
        zstd::decode_all(&zipped.body[..]).unwrap(),
        text.body.to_vec()
    );

    let mut damaged = egb.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    let reply = server.submit(damaged, "", None).await;
    reply.assert_problem(422, "malformed-arena");
    assert!(
        reply.text().contains("byte 56: the header's checksum"),
        "{}",
        reply.text()
    );
    server.stop().await;
}

on_both_stores!(
    egb_uploads_and_zstd_results,
    binary_results_match_the_json_and_the_layout,
    every_upload_form_is_parsed_before_the_answer,
    games_too_large_for_the_host_are_refused,
);
