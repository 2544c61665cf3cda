"""Batches (``POST /v1/batches``) through the client, auth off and on: each member answers as
a job of its own would, a refused member carries its problem (``line``/``column``) while the
others run, the results stream gives one entry per job in completion order (error entries
for jobs without an answer) and ``download`` writes them, names are checked before anything
is sent, unknown batches are ``batch-not-found``, the per-user limit counts every member, and
``submit_many`` goes through batches where it can and one job at a time where it cannot."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Any, List

import httpx
import pytest
from conftest import PER_USER_LIMIT
from serve import FlakyProxy, Server, expected_winners, shared_data, slow_cycle, small_arena

from egsolve import (
    Batch,
    BatchError,
    BatchRefused,
    BatchResult,
    Client,
    JobFailed,
    MalformedArena,
    MalformedBatch,
    NotFound,
    Result,
    TooManyJobs,
)
from egsolve import batch as batch_module
from egsolve.errors import api_error

GAME = "ABP_datasize=2_infinitely_often_lost_mcrl2example"
UNKNOWN = "0190c0de-0000-7000-8000-000000000000"
# PGSolver parity games as text (`parity MAX;` then `ID PRIORITY OWNER SUCCESSORS;`).
PARITY_A = b"parity 3;\n0 2 0 1,2;\n1 1 1 0,3;\n2 0 0 2;\n3 3 1 3,0;\n"
PARITY_B = b"parity 4;\n0 1 0 1;\n1 4 1 2,0;\n2 3 0 3,4;\n3 2 1 0;\n4 0 0 4,1;\n"
# An EGSolver arena whose line 3, column 9 is not a weight.
MALFORMED = b"2;\n0 MAX 1:-1;\n1 MIN 0:x;\n2 MAX 0:1;\n"


def assert_same_answer(batch_answer: Any, alone: Result) -> None:
    assert isinstance(batch_answer, Result)
    assert batch_answer.ids == alone.ids
    assert batch_answer.winners == alone.winners
    assert batch_answer.credits == alone.credits
    assert batch_answer.strategies == alone.strategies
    assert batch_answer.summary.vertices == alone.summary.vertices
    assert batch_answer.summary.credits_computed == alone.summary.credits_computed


def test_each_member_answers_as_a_job_of_its_own(client: Client, tmp_path: Path) -> None:
    energy = tmp_path / "energy.mpg"
    energy.write_bytes(small_arena(300, seed=21))
    game = shared_data() / "parity" / f"{GAME}.gm.gz"   # a gzip member: a compressed file
    sources: List[Any] = [energy, game, PARITY_A]
    batch = client.submit_batch(sources, returns="strategies")
    # Names default to the base names (bytes: arena-INDEX); jobs in archive order.
    names = ["energy.mpg", f"{GAME}.gm.gz", "arena-2"]
    assert [job.source for job in batch.jobs] == names and batch.refused == {}
    assert all(job.info.options.returns == "strategies" for job in batch.jobs)
    assert len({job.id for job in batch.jobs}) == 3

    results = {r.name: r for r in batch.results()}
    assert sorted(results) == sorted(names)
    assert batch.wait(timeout=60).finished
    assert batch.counts["succeeded"] == 3 and sum(batch.counts.values()) == 3
    for job, source in zip(batch.jobs, [energy, game, PARITY_A]):
        entry = results[job.source]
        assert entry.ok and entry.state == "succeeded" and entry.job_id == job.id
        alone = client.submit(source, returns="strategies").result()
        assert_same_answer(entry.result(), alone)
        # A batch's job is a job like any other.
        assert job.state == "succeeded"
        assert_same_answer(job.result(), alone)
    assert results[f"{GAME}.gm.gz"].result().winners == expected_winners(  # type: ignore[union-attr]
        shared_data() / "parity" / f"{GAME}.sol.gz"
    )
    # The batch read again by id: the same jobs, by name.
    again = client.batch(batch.id)
    assert again.finished and {name: job.id for name, job in again.members.items()} == {
        job.source: job.id for job in batch.jobs
    }


def test_reuse_false_solves_anew_what_the_server_could_answer_at_once(client: Client) -> None:
    arena = small_arena(60, seed=2026)
    first = client.submit(arena)
    assert first.wait(timeout=30).state == "succeeded" and not first.info.reused
    again = client.submit(arena)
    assert again.info.reused and again.state == "succeeded"
    fresh = client.submit(arena, reuse=False)
    assert fresh.wait(timeout=30).state == "succeeded" and not fresh.info.reused
    assert fresh.result().credits == again.result().credits == first.result().credits
    for reuse, reused in [(None, True), (False, False)]:
        batch = client.submit_batch([arena], reuse=reuse)
        assert batch.wait(timeout=30).finished
        assert [job.refresh().info.reused for job in batch.jobs] == [reused], reuse


def test_a_malformed_member_is_refused_and_the_others_run(client: Client) -> None:
    good = small_arena(50, seed=31)
    batch = client.submit_batch([good, MALFORMED, PARITY_B], names=["good.mpg", "bad.mpg", "good.pg"])
    assert [job.source for job in batch.jobs] == ["good.mpg", "good.pg"]
    assert list(batch.refused) == ["bad.mpg"]
    error = batch.refused["bad.mpg"]
    assert isinstance(error, MalformedArena) and error.kind == "malformed-arena"
    assert (error.line, error.column) == (3, 9), error.problem
    assert error.status == 422 and error.detail, error.problem   # as POST /v1/jobs answers it
    batch.wait(timeout=60)
    assert batch.counts == {"queued": 0, "running": 0, "succeeded": 2, "failed": 0, "cancelled": 0}
    assert_same_answer(batch.job("good.mpg").result(), client.submit(good).result())
    with pytest.raises(KeyError):
        batch.job("bad.mpg")
    # Refused members have no entry in the results.
    assert sorted(r.name for r in batch.results()) == ["good.mpg", "good.pg"]


def test_a_batch_of_refused_members_only_raises_batch_refused(client: Client) -> None:
    with pytest.raises(BatchRefused) as raised:
        client.submit_batch([MALFORMED, b"1;\n0 MAX nonsense;\n"], names=["x.mpg", "y.mpg"])
    error = raised.value
    assert error.status == 400 and error.kind == "batch-refused", error.problem
    assert [m["name"] for m in error.members] == ["x.mpg", "y.mpg"]
    assert sorted(error.errors) == ["x.mpg", "y.mpg"]
    assert isinstance(error.errors["x.mpg"], MalformedArena)
    assert (error.errors["x.mpg"].line, error.errors["x.mpg"].column) == (3, 9)


def test_names_are_checked_before_anything_is_sent(tmp_path: Path) -> None:
    sent: List[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "g.pg").write_bytes(PARITY_A)
    with Client("http://egsolve.invalid", token="", transport=httpx.MockTransport(answer)) as client:
        with pytest.raises(ValueError, match="unique.*'g.pg'"):
            client.submit_batch([tmp_path / "a" / "g.pg", tmp_path / "b" / "g.pg"])
        with pytest.raises(ValueError, match="unique.*'x'"):
            client.submit_batch([PARITY_A, PARITY_B], names=["x", "x"])
        with pytest.raises(ValueError, match="one name per arena"):
            client.submit_batch([PARITY_A, PARITY_B], names=["x"])
        for bad in ["", "/abs.pg", "../up.pg", "a/../b.pg", "dir/"]:
            with pytest.raises(ValueError):
                client.submit_batch([PARITY_A], names=[bad])
        with pytest.raises(ValueError, match="at least one"):
            client.submit_batch([])
        # Distinct names for the same base name are fine (the request is what fails here).
        with pytest.raises(Exception) as raised:
            client.submit_batch([tmp_path / "a" / "g.pg", tmp_path / "b" / "g.pg"], names=["a/g.pg", "b/g.pg"])
        assert not isinstance(raised.value, ValueError)
    assert len(sent) == 1
    with tarfile.open(fileobj=io.BytesIO(sent[0].content), mode="r:") as tar:
        assert tar.getnames() == ["a/g.pg", "b/g.pg"]
        assert [tar.extractfile(m).read() for m in tar.getmembers()] == [PARITY_A, PARITY_A]  # type: ignore[union-attr]
    assert sent[0].url.path == "/v1/batches"
    assert sent[0].headers["content-type"] == "application/x-tar"


def test_results_stream_in_completion_order_and_download_writes_them(open_server: Server, tmp_path: Path) -> None:
    with Client(open_server.url, token="") as client:
        names = ["slow.mpg"] + [f"dir/e{i}.mpg" for i in range(4)]
        sources = [slow_cycle(200_000)] + [small_arena(200, seed=40 + i) for i in range(4)]
        batch = client.submit_batch(sources, names=names, backend="reference")
        assert [job.source for job in batch.jobs] == names
        seen: List[BatchResult] = []
        try:
            for entry in batch.results("text"):
                seen.append(entry)
                if len(seen) == 4:  # the small ones: the slow one runs until cancelled
                    batch.job("slow.mpg").cancel()
        finally:
            batch.cancel()
        # One entry per job, in completion order: the first member came last.
        assert len(seen) == 5 and sorted(e.name for e in seen) == sorted(names)
        assert seen[-1].name == "slow.mpg"
        for entry in seen[:4]:
            job = batch.job(entry.name)
            assert entry.ok and entry.job_id == job.id and entry.format == "text"
            assert entry.text() == job.result("text")
            assert entry.result() == entry.text()
        slow = seen[-1]
        assert not slow.ok and slow.state == "cancelled" and slow.job_id == batch.job("slow.mpg").id
        assert slow.error is not None and slow.json()["id"] == slow.job_id
        with pytest.raises(JobFailed) as failed:
            slow.result()
        assert failed.value.state == "cancelled"
        assert batch.refresh().counts["cancelled"] == 1 and batch.finished

        out = tmp_path / "out"
        paths = batch.download(out, format="text")
        assert sorted(p.relative_to(out).as_posix() for p in paths) == sorted(
            [f"dir/e{i}.mpg.txt" for i in range(4)] + ["slow.mpg.error.json"]
        )
        for i in range(4):
            assert (out / "dir" / f"e{i}.mpg.txt").read_text() == batch.job(f"dir/e{i}.mpg").result("text")
        document = json.loads((out / "slow.mpg.error.json").read_text())
        assert document["id"] == batch.job("slow.mpg").id and document["state"] == "cancelled"
        assert "type" in document["error"] and "message" in document["error"]
        # json and binary entries: .json, .bin
        paths = batch.download(tmp_path / "json", format="json")
        assert sorted(p.name for p in paths) == sorted([f"e{i}.mpg.json" for i in range(4)] + ["slow.mpg.error.json"])
        for i in range(4):
            document = json.loads((tmp_path / "json" / "dir" / f"e{i}.mpg.json").read_text())
            assert Result.from_json(document).credits == batch.job(f"dir/e{i}.mpg").result().credits
        binary = {e.name: e for e in batch.results("binary")}
        assert binary["dir/e0.mpg"].ok and binary["dir/e0.mpg"].data[:8] == b"EGSRESLT"


def test_an_answer_without_a_form_in_the_format_is_an_error_entry(client: Client) -> None:
    # A parity game answered by the parity solver has no credits, so no text form.
    batch = client.submit_batch([PARITY_A, small_arena(30, seed=51)], names=["p.pg", "e.mpg"])
    entries = {e.name: e for e in batch.results("text")}
    assert sorted(entries) == ["e.mpg", "p.pg"]
    assert entries["e.mpg"].ok and entries["e.mpg"].text() == batch.job("e.mpg").result("text")
    parity = entries["p.pg"]
    assert not parity.ok and parity.job_id == batch.job("p.pg").id
    assert parity.state == "succeeded" and parity.error and parity.error.get("message")
    paritysol = {e.name: e for e in batch.results("paritysol")}
    assert paritysol["p.pg"].ok and paritysol["p.pg"].text() == batch.job("p.pg").result("paritysol")


@pytest.mark.parametrize("compress", ["gzip", "zstd", None])
def test_compressed_archives_and_members(open_server: Server, compress: Any) -> None:
    arenas = [small_arena(4000, seed=71), small_arena(4000, seed=72)]
    with Client(open_server.url, token="") as client:
        # The second member is itself a gzip file; the archive is compressed as a whole.
        batch = client.submit_batch(
            [arenas[0], gzip.compress(arenas[1])], names=["a.mpg", "b.mpg.gz"], compress=compress
        )
        for job, arena in zip(batch.jobs, arenas):
            assert job.info.arena.sha256 == hashlib.sha256(arena).hexdigest()
            assert job.wait(timeout=60).state == "succeeded"


def test_the_answers_are_as_documented(open_server: Server) -> None:
    members = [("a.mpg", small_arena(20, seed=81)), ("bad.mpg", MALFORMED)]
    body = batch_module.archive([m[1] for m in members], [m[0] for m in members])
    answer = httpx.post(
        f"{open_server.url}/v1/batches", content=body, params={"priority": 7},
        headers={"Content-Type": "application/x-tar"},
    )
    assert answer.status_code == 202, answer.text
    document = answer.json()
    assert answer.headers["location"] == f"/v1/batches/{document['id']}"
    assert (document["accepted"], document["refused"]) == (1, 1)
    assert [m["name"] for m in document["jobs"]] == ["a.mpg", "bad.mpg"]
    # queued (or already succeeded: an arena solved before is answered at once, as by POST /v1/jobs)
    assert document["jobs"][0]["state"] in ("queued", "succeeded") and "error" not in document["jobs"][0]
    refused = document["jobs"][1]
    assert "id" not in refused and refused["error"]["type"] == "urn:egsolve:problem:malformed-arena"
    assert {"title", "status", "detail", "line", "column"} <= set(refused["error"])
    view = httpx.get(f"{open_server.url}/v1/batches/{document['id']}").json()
    assert set(view) >= {"id", "jobs", "counts", "finished"}
    assert set(view["counts"]) == {"queued", "running", "succeeded", "failed", "cancelled"}
    job = view["jobs"][0]
    assert job["name"] == "a.mpg" and job["id"] == document["jobs"][0]["id"]
    assert job["options"]["priority"] == 7
    alone = httpx.get(f"{open_server.url}/v1/jobs/{job['id']}").json()
    assert set(job) - {"name"} <= set(alone) | {"progress", "queue_position"}, set(job) ^ set(alone)


def test_the_same_sources_make_the_same_archive_at_any_time(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A retry rebuilds the archive, maybe seconds later: its bytes (what the server compares
    for an idempotency key) must not depend on the clock."""
    game = tmp_path / "a.pg"
    game.write_bytes(PARITY_A)
    clock = iter([1_000_000.0, 1_000_007.0])
    monkeypatch.setattr(batch_module.time, "time", lambda: next(clock))
    first = batch_module.archive([PARITY_A, game], ["a.pg", "b.pg"])
    again = batch_module.archive([PARITY_A, game], ["a.pg", "b.pg"])
    assert first == again


def test_a_batch_sent_again_with_its_key_is_the_first_batch(client: Client) -> None:
    """The same batch and key again (a retry after a lost answer) is the batch the first
    request made, its refused member not listed again; another batch with the key is 422."""
    key = "retry-" + hashlib.sha256(client.url.encode()).hexdigest()[:16] + str(id(client))
    first = client.submit_batch([PARITY_A, MALFORMED], names=["a.pg", "bad.mpg"], idempotency_key=key)
    again = client.submit_batch([PARITY_A, MALFORMED], names=["a.pg", "bad.mpg"], idempotency_key=key)
    assert again.id == first.id
    assert [j.id for j in again.jobs] == [j.id for j in first.jobs]
    assert set(first.refused) == {"bad.mpg"} and not again.refused
    with pytest.raises(Exception) as refused:
        client.submit_batch([PARITY_B], names=["b.pg"], idempotency_key=key)
    assert getattr(refused.value, "kind", "") == "idempotency-key-reused", refused.value


def test_unknown_batches_are_not_found(client: Client) -> None:
    with pytest.raises(NotFound) as raised:
        client.batch(UNKNOWN)
    assert raised.value.status == 404 and raised.value.kind == "batch-not-found"
    answer = client._http.get(f"/v1/batches/{UNKNOWN}/results")
    assert answer.status_code == 404 and answer.json()["type"] == "urn:egsolve:problem:batch-not-found"


def test_other_users_batches_are_not_found(as_user) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    batch = alice.submit_batch([small_arena(20, seed=61)], names=["a.mpg"])
    with pytest.raises(NotFound) as raised:
        bob.batch(batch.id)
    assert raised.value.kind == "batch-not-found"
    assert bob._http.get(f"/v1/batches/{batch.id}/results").status_code == 404
    assert alice.batch(batch.id).wait(timeout=60).counts["succeeded"] == 1


def test_the_per_user_limit_counts_every_member(as_user) -> None:
    carol = as_user("carol")
    before = {job.id for job in carol.jobs()}
    with pytest.raises(TooManyJobs) as raised:
        carol.submit_batch([small_arena(10, seed=500 + i) for i in range(PER_USER_LIMIT + 1)])
    error = raised.value
    assert error.status == 429 and error.kind == "too-many-jobs" and error.limit == PER_USER_LIMIT
    assert {job.id for job in carol.jobs()} == before, "a refused batch makes no job"
    batch = carol.submit_batch([small_arena(10, seed=510 + i) for i in range(PER_USER_LIMIT)])
    assert [job.state for job in batch.wait(timeout=60).jobs] == ["succeeded"] * PER_USER_LIMIT


def test_bodies_that_are_not_batches_are_malformed_batch(open_server: Server) -> None:
    def post(body: bytes) -> Any:
        answer = httpx.post(
            f"{open_server.url}/v1/batches", content=body, headers={"Content-Type": "application/x-tar"}
        )
        return api_error(answer.status_code, answer.json())

    not_tar = post(b"this is not a tar archive at all" * 40)
    assert isinstance(not_tar, MalformedBatch) and not_tar.status == 400, not_tar.problem
    folder_only = io.BytesIO()
    with tarfile.open(fileobj=folder_only, mode="w") as tar:
        tar.addfile(_directory("games"))
    empty = post(folder_only.getvalue())
    assert isinstance(empty, MalformedBatch) and empty.status == 400, empty.problem


def _directory(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    return info


class _Spy:
    """Counts :meth:`Client.submit_batch` and :meth:`Client.submit` calls."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.batches = 0
        self.submits = 0
        submit_batch, submit = Client.submit_batch, Client.submit

        def batch_spy(client: Client, *args: Any, **kwargs: Any) -> Batch:
            self.batches += 1
            return submit_batch(client, *args, **kwargs)

        def submit_spy(client: Client, *args: Any, **kwargs: Any) -> Any:
            self.submits += 1
            return submit(client, *args, **kwargs)

        monkeypatch.setattr(Client, "submit_batch", batch_spy)
        monkeypatch.setattr(Client, "submit", submit_spy)


def test_submit_many_sends_small_sources_as_one_batch(open_server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = _Spy(monkeypatch)
    arenas = [small_arena(100, seed=600 + i) for i in range(6)] + [MALFORMED]
    finished: List[Any] = []
    with Client(open_server.url, token="") as client:
        with pytest.raises(BatchError) as raised:
            client.submit_many(arenas, on_finished=finished.append)
        assert (spy.batches, spy.submits) == (1, 0)
        error = raised.value
        assert list(error.errors) == [6] and isinstance(error.errors[6], MalformedArena)
        assert error.errors[6].line == 3 and error.jobs[6] is None
        jobs = error.jobs[:6]
        assert all(job.state == "succeeded" and job.source == "<bytes>" for job in jobs)
        assert sorted(j.id for j in finished) == sorted(j.id for j in jobs)
        for arena, job in zip(arenas[:2], jobs[:2]):
            assert_same_answer(job.result(), client.submit(arena).result())


def test_submit_many_goes_one_by_one_where_a_batch_does_not_fit(as_user, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = _Spy(monkeypatch)
    carol = as_user("carol")
    arenas = [small_arena(60, seed=700 + i) for i in range(2 * PER_USER_LIMIT)]
    jobs = carol.submit_many(arenas, max_in_flight=2 * PER_USER_LIMIT)
    assert [job.state for job in jobs] == ["succeeded"] * len(arenas)
    # The batch got 429: one submission each (a 429 of those is waited out and sent again).
    assert spy.batches == 1 and spy.submits >= len(arenas)


def test_submit_many_goes_one_by_one_past_the_servers_member_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(args=["--max-batch-jobs", "2"])
    try:
        with Client(server.url, token="") as client:
            with pytest.raises(MalformedBatch) as raised:
                client.submit_batch([small_arena(20, seed=800 + i) for i in range(3)])
            assert raised.value.status == 400, raised.value.problem
            assert client.jobs() == [], "a refused batch makes no job"
            spy = _Spy(monkeypatch)
            jobs = client.submit_many([small_arena(20, seed=810 + i) for i in range(3)])
            assert [job.state for job in jobs] == ["succeeded"] * 3
            assert (spy.batches, spy.submits) == (1, 3)
    finally:
        server.stop()


def test_solve_batch_answers_with_the_results_in_one_exchange(open_server: Server) -> None:
    sent: List[str] = []
    with Client(open_server.url, token="") as client:
        client._http.event_hooks["request"].append(lambda r: sent.append(f"{r.method} {r.url.path}"))
        names = ["a.mpg", "b.mpg", "bad.mpg", "p.pg"]
        sources = [small_arena(200, seed=61), small_arena(300, seed=62), MALFORMED, PARITY_B]
        with client.solve_batch(sources, names=names, results="json") as solved:
            entries = list(solved)
        batch = solved.batch
        assert sent == ["POST /v1/batches", f"GET /v1/batches/{batch.id}"], "one exchange, and the batch read once"
        assert sorted(batch.members) == ["a.mpg", "b.mpg", "p.pg"]
        refused = batch.refused["bad.mpg"]
        assert isinstance(refused, MalformedArena) and (refused.line, refused.column) == (3, 9)
        assert sorted(e.name for e in entries) == ["a.mpg", "b.mpg", "p.pg"]
        for entry in entries:
            job = batch.job(entry.name)
            assert entry.ok and entry.job_id == job.id and entry.format == "json"
            assert_same_answer(entry.result(), job.result())
        assert batch.refresh().finished and batch.counts["succeeded"] == 3


def test_solve_batch_goes_on_after_its_answer_breaks_off(open_server: Server) -> None:
    proxy = FlakyProxy(open_server.port)
    try:
        with Client(proxy.url, token="", retries=3, backoff=0.05) as client, Client(open_server.url, token="") as direct:
            names = ["slow.mpg"] + [f"e{i}.mpg" for i in range(3)]
            sources = [slow_cycle(200_000)] + [small_arena(200, seed=70 + i) for i in range(3)]
            sent: List[str] = []
            client._http.event_hooks["request"].append(lambda r: sent.append(f"{r.method} {r.url.path}"))
            seen: List[BatchResult] = []
            with client.solve_batch(sources, names=names, backend="reference", results="text") as solved:
                for entry in solved:
                    seen.append(entry)
                    if len(seen) == 3:  # the small ones; the slow one runs until cancelled
                        assert proxy.drop_all() >= 1, "the answer is cut while the slow job runs"
                        direct.job(solved.batch.job("slow.mpg").id).cancel()
            # Every member once: the small ones from the POST's answer, the cancelled one
            # from the results stream read again after the cut.
            assert sorted(e.name for e in seen) == sorted(names)
            assert seen[-1].name == "slow.mpg" and seen[-1].state == "cancelled" and not seen[-1].ok
            assert sent[-1] == f"GET /v1/batches/{solved.batch.id}/results", sent
            for entry in seen[:3]:
                job = direct.job(solved.batch.job(entry.name).id)
                assert entry.ok and entry.text() == job.result("text")
    finally:
        proxy.close()


def test_solve_batch_whose_answer_is_lost_makes_one_batch(open_server: Server) -> None:
    proxy = FlakyProxy(open_server.port)
    try:
        with Client(proxy.url, token="", retries=3, backoff=0.05) as client:
            before = len(client.jobs())
            proxy.drop_post_answers = 1
            sources = [small_arena(150, seed=80), small_arena(160, seed=81)]
            with client.solve_batch(sources, names=["x.mpg", "y.mpg"]) as solved:
                entries = {e.name: e for e in solved}
            assert proxy.dropped == 1, "the first answer was cut"
            assert sorted(entries) == ["x.mpg", "y.mpg"] and all(e.ok for e in entries.values())
            assert len(client.jobs()) == before + 2, "the request sent again made no second batch"
    finally:
        proxy.close()
