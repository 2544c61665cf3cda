"""The client against a live ``egsolve serve``, auth off and on: results in every format
checked against the shared data's independent answers and the local solver, uploads,
cancellation, errors and listings."""

from __future__ import annotations

import gzip
import hashlib
import io
import subprocess

import pytest
import zstandard
from serve import expected_winners, egsolve_binary, shared_data, slow_cycle, small_arena, wait_until

from egsolve import (
    Client,
    JobFailed,
    MalformedArena,
    NotFound,
    Progress,
    Result,
    Unauthorized,
    WaitTimeout,
    upload,
)

GAMES = [
    "ABP_datasize=2_infinitely_often_lost_mcrl2example",
    "Lift_(Incorrect)_nlifts=2_nodeadlock",
]


def local_credits(arena: bytes) -> list:
    """Credits from ``egsolve solve`` on this machine (``None`` for ⊤)."""
    out = subprocess.run(
        [str(egsolve_binary()), "solve", "-", "--output", "text"],
        input=arena, capture_output=True, check=True,
    ).stdout.decode()
    return [None if line.split()[1] == "T" else int(line.split()[1]) for line in out.splitlines()]


@pytest.mark.parametrize("game", GAMES)
def test_results_in_every_format_match_the_shared_answers(client: Client, game: str) -> None:
    path = shared_data() / "parity" / f"{game}.gm.gz"
    winners = expected_winners(shared_data() / "parity" / f"{game}.sol.gz")
    job = client.submit(path, returns="strategies", credits=True)
    assert job.source == str(path)
    result = job.result()
    assert isinstance(result, Result)
    assert job.state == "succeeded" and job.summary is not None
    assert result.winners == winners
    assert result.ids == list(range(len(winners)))
    assert result.credits is not None and result.summary.credits_computed
    assert [c is None for c in result.credits] == [w == 1 for w in winners]
    assert result.summary.w0 == winners.count(0) and result.summary.vertices == len(winners)
    assert result.strategies is not None and len(result.strategies) == len(winners)
    # The solve's own figures come along (the same summary block as the job view's).
    assert result.summary == job.summary
    assert result.summary.evaluations >= 0 and result.summary.phases
    assert all(seconds >= 0 for seconds in result.summary.phases.values()), result.summary.phases

    text = job.result("text")
    assert [None if l.split()[1] == "T" else int(l.split()[1]) for l in text.splitlines()] == result.credits
    parity = job.result("paritysol").splitlines()
    assert parity[0].startswith("paritysol")
    assert [int(l.rstrip(";").split()[1]) for l in parity[1:] if l.strip()] == winners

    some = job.result(vertices=[3, 0])
    assert some.ids == [3, 0] and some.winners == [winners[3], winners[0]]

    histogram = job.histogram(bins=7)
    assert (histogram.w0, histogram.w1) == (winners.count(0), winners.count(1))
    assert sum(count for _, _, count in histogram.bins) == histogram.w0
    assert histogram.bins[0][0] == 0 and histogram.bins[-1][1] == result.summary.max_credit


def test_energy_credits_equal_the_local_solver(client: Client, tmp_path) -> None:
    arena = small_arena(400, seed=11)
    job = client.submit(arena, backend="cpu", priority=5, time_limit=60)
    assert job.info.options.backend == "cpu" and job.info.options.priority == 5
    result = job.result()
    assert result.credits == local_credits(arena)
    assert result.strategies is None
    saved = job.download(tmp_path / "solution.txt", format="text")
    assert saved.read_text() == job.result("text")


def test_uploads_are_compressed_unless_they_already_are(client: Client, tmp_path) -> None:
    plain = small_arena(6000, seed=5)
    assert len(plain) >= upload.COMPRESS_FROM
    digest = hashlib.sha256(plain).hexdigest()
    (tmp_path / "g.mpg").write_bytes(plain)
    (tmp_path / "g.mpg.gz").write_bytes(gzip.compress(plain))
    cases = [
        (tmp_path / "g.mpg", "auto", "zstd"),
        (plain, "gzip", "gzip"),
        (io.BytesIO(plain), None, None),
        (tmp_path / "g.mpg.gz", "auto", None),           # already gzip: sent as it is
        (zstandard.ZstdCompressor().compress(plain), "auto", None),
        (small_arena(20, seed=5), "auto", None),          # too small to bother
    ]
    for source, compress, encoding in cases:
        assert upload.prepare(source, compress).encoding == encoding, (source, compress)
        job = client.submit(source, compress=compress, backend="cpu")
        if source is not cases[-1][0]:
            # The server hashes the decompressed arena: every variant is the same arena.
            assert job.info.arena.sha256 == digest
        assert job.wait(timeout=60).state == "succeeded"
    assert client.submit(tmp_path / "g.mpg").result().credits == local_credits(plain)


def test_cancel_stops_a_running_job(client: Client) -> None:
    job = client.submit(slow_cycle(200_000), backend="reference")
    try:
        wait_until(lambda: job.refresh().state == "running", timeout=30)
        lifts = []
        with pytest.raises(WaitTimeout):
            job.wait(timeout=3, progress=lambda j: lifts.append(j.info.progress.lifts) if j.info.progress else None)
        assert len(lifts) >= 2 and lifts[-1] > lifts[0], lifts
    finally:
        job.cancel()
    assert job.state == "cancelled"
    with pytest.raises(JobFailed) as failed:
        job.result()
    assert failed.value.state == "cancelled"
    # Cancelling a cancelled job again is not an error.
    assert job.cancel().state == "cancelled"


def test_malformed_arenas_raise_with_line_and_column(client: Client) -> None:
    with pytest.raises(MalformedArena) as raised:
        client.submit(b"2;\n0 MAX 1:-1;\n1 MIN 0:x;\n2 MAX 0:1;\n")
    error = raised.value
    assert error.status == 422
    assert error.type == "urn:egsolve:problem:malformed-arena" and error.kind == "malformed-arena"
    assert (error.line, error.column) == (3, 9), error.problem
    assert "line 3" in str(error) and error.detail


def test_unknown_jobs_and_bad_tokens(open_server, auth_server) -> None:
    with Client(open_server.url, token="") as c:
        with pytest.raises(NotFound):
            c.job("0190c0de-0000-7000-8000-000000000000")
    with Client(auth_server.url, token="egs_wrong") as c:
        with pytest.raises(Unauthorized) as raised:
            c.devices()
        assert raised.value.status == 401
    with Client(auth_server.url, token="") as c:
        assert c.whoami().user is None and c.whoami().auth


def test_listings_show_own_jobs_only_and_admins_see_all(as_user) -> None:
    alice, bob, root = as_user("alice"), as_user("bob"), as_user("root")
    a = alice.submit(small_arena(30, seed=101))
    b = bob.submit(small_arena(30, seed=102))
    a.wait(30), b.wait(30)
    assert alice.whoami().user == "alice" and root.whoami().role == "admin"
    alice_ids = {j.id for j in alice.jobs()}
    assert a.id in alice_ids and b.id not in alice_ids
    assert all(j.info.owner == "alice" for j in alice.jobs())
    with pytest.raises(NotFound):
        alice.job(b.id)
    root_ids = {j.id for j in root.jobs()}
    assert {a.id, b.id} <= root_ids
    assert {j.id for j in alice.jobs(state="succeeded", limit=1)} <= alice_ids
    devices = alice.devices()
    assert devices.cpu.workers == 2 and devices.gpus == []
    usage = alice.usage()
    assert usage["cpu"]["workers"] == 2


def test_the_job_list_shows_live_progress(open_server) -> None:
    with Client(open_server.url, token="") as c:
        job = c.submit(slow_cycle(200_000), backend="reference")
        try:
            # Progress shows from the start (zeros); wait for the first lifts.
            wait_until(lambda: (job.refresh().info.progress or Progress(0, 0, 0)).lifts > 0, timeout=30)
            listed = next(j for j in c.jobs(state="running") if j.id == job.id)
            assert listed.info.progress is not None and listed.info.progress.lifts > 0
        finally:
            job.cancel()


def test_parity_solver_answers_have_winners_and_no_credits(client: Client) -> None:
    game = GAMES[0]
    path = shared_data() / "parity" / f"{game}.gm.gz"
    winners = expected_winners(shared_data() / "parity" / f"{game}.sol.gz")
    job = client.submit(path, backend="parity", returns="strategies")
    result = job.result()
    assert result.summary.backend == "parity" and not result.summary.credits_computed
    assert result.credits is None
    assert result.winners == winners
    assert result.summary.parity is not None and result.summary.parity.reduction_fits
    assert result.summary.parity.compressed_priorities <= result.summary.parity.priorities
    assert result.strategies is not None and len(result.strategies) == len(winners)
    # Winners counted, no credit bins.
    histogram = job.histogram(bins=7)
    assert (histogram.w0, histogram.w1) == (winners.count(0), winners.count(1))
    assert not histogram.credits_computed and histogram.bins == []
