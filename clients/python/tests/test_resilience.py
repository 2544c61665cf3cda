"""Limits, batches and a flaky network: the per-user limit (429), 50 submissions at once, a
connection cut in the middle of a long poll, and a submission whose answer is lost (the
``Idempotency-Key`` header makes the retry return the first job instead of a second)."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import PER_USER_LIMIT
from serve import FlakyProxy, acyclic_arena, slow_cycle, small_arena

from egsolve import BatchError, Client, IdempotencyConflict, MalformedArena, TooManyJobs


def jobs_with_arena(client: Client, sha256: str) -> list:
    return [j for j in client.jobs() if j.info.arena.sha256 == sha256]


def test_the_per_user_limit_answers_429_with_its_fields(as_user) -> None:
    carol, bob = as_user("carol"), as_user("bob")
    running = [carol.submit(slow_cycle(200_000 + i), backend="reference") for i in range(PER_USER_LIMIT)]
    try:
        with pytest.raises(TooManyJobs) as raised:
            carol.submit(small_arena(10, seed=1))
        error = raised.value
        assert error.status == 429 and error.kind == "too-many-jobs"
        assert error.limit == PER_USER_LIMIT and error.retry_after == 5
        assert "wait for some to finish" in error.detail
        # The limit is per user: bob may still submit (his job waits for a free slot).
        bobs = bob.submit(small_arena(10, seed=2))
    finally:
        for job in running:
            job.cancel()
    assert bobs.wait(30).state == "succeeded"
    assert carol.submit(small_arena(10, seed=3)).wait(30).state == "succeeded"


def test_submit_many_waits_out_the_limit(as_user) -> None:
    carol = as_user("carol")
    arenas = [small_arena(200, seed=300 + i) for i in range(3 * PER_USER_LIMIT)]
    jobs = carol.submit_many(arenas, max_in_flight=3 * PER_USER_LIMIT, backend="reference")
    assert [j.state for j in jobs] == ["succeeded"] * len(arenas)


def test_fifty_concurrent_submissions(open_server) -> None:
    arenas = [small_arena(300, seed=1000 + i) for i in range(50)]
    finished = []
    with Client(open_server.url, token="") as client:
        started = time.monotonic()
        jobs = client.submit_many(arenas, max_in_flight=50, on_finished=finished.append)
        seconds = time.monotonic() - started
        assert len({j.id for j in jobs}) == 50 and len(finished) == 50
        assert all(j.state == "succeeded" for j in jobs)
        # In input order, each with its own arena's answer.
        for arena, job in zip(arenas[:5], jobs[:5]):
            again = client.submit(arena)
            assert again.info.reused and again.result().credits == job.result().credits
    print(f"50 submissions solved in {seconds:.2f} s")


def test_submit_many_reports_the_failures_and_keeps_the_rest(open_server) -> None:
    with Client(open_server.url, token="") as client:
        with pytest.raises(BatchError) as raised:
            client.submit_many([small_arena(20, seed=7), b"1;\n0 MAX nonsense;\n", small_arena(20, seed=8)])
    batch = raised.value
    assert list(batch.errors) == [1] and isinstance(batch.errors[1], MalformedArena)
    assert batch.jobs[1] is None
    assert batch.jobs[0].state == batch.jobs[2].state == "succeeded"


def test_a_connection_cut_during_a_long_poll_is_retried(open_server) -> None:
    proxy = FlakyProxy(open_server.port)
    arena = slow_cycle(16_000 + 7)  # a few seconds of the reference solver
    try:
        with Client(proxy.url, token="", retries=8, backoff=0.1) as client:
            job = client.submit(arena, backend="reference")
            cuts = []  # (connections cut, the job's state then)
            cut = threading.Timer(1.5, lambda: cuts.append((proxy.drop_all(), job.state)))
            cut.start()
            job.wait(timeout=120)
            cut.join()
            assert cuts[0][0] >= 1 and cuts[0][1] in ("queued", "running"), cuts
            assert job.state == "succeeded"
            assert len(jobs_with_arena(client, job.info.arena.sha256)) == 1
    finally:
        proxy.close()


def test_a_lost_submission_answer_is_retried_without_a_second_job(open_server) -> None:
    proxy = FlakyProxy(open_server.port)
    arena = small_arena(500, seed=4242)
    try:
        with Client(proxy.url, token="", retries=3, backoff=0.05) as client:
            proxy.drop_post_answers = 1
            job = client.submit(arena)
            assert proxy.dropped == 1, "the first answer was cut"
            assert job.wait(30).state == "succeeded"
            assert [j.id for j in jobs_with_arena(client, job.info.arena.sha256)] == [job.id]
    finally:
        proxy.close()


def test_an_idempotency_key_names_one_submission(open_server) -> None:
    with Client(open_server.url, token="") as client:
        key = "pipeline-run-17/game-3"
        first = client.submit(small_arena(40, seed=77), idempotency_key=key)
        again = client.submit(small_arena(40, seed=77), idempotency_key=key)
        assert again.id == first.id
        with pytest.raises(IdempotencyConflict) as raised:
            client.submit(small_arena(40, seed=78), idempotency_key=key)
        assert raised.value.status == 422 and key in raised.value.detail
        with pytest.raises(IdempotencyConflict):
            client.submit(small_arena(40, seed=77), idempotency_key=key, priority=9)


def test_a_binary_result_cut_off_mid_download_resumes(open_server, tmp_path) -> None:
    proxy = FlakyProxy(open_server.port)
    try:
        with Client(open_server.url, token="") as direct:
            # 4.8 MB of results that compress little (1.5 MB gzipped): the cut falls
            # inside the body.
            job = direct.submit(acyclic_arena(400_000, seed=77))
            whole = job.download(tmp_path / "direct.bin", format="binary").read_bytes()
        with Client(proxy.url, token="", retries=3, backoff=0.05) as client:
            proxy.cut_binary_answers = 1
            resumed = client.job(job.id).download(tmp_path / "resumed.bin", format="binary")
            assert proxy.dropped == 1, "the first download was cut"
            assert proxy.ranged == 1, "and resumed with a Range"
            assert resumed.read_bytes() == whole and len(whole) == 32 + 12 * 400_000
    finally:
        proxy.close()
