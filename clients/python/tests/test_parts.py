"""Uploads in parts through the Python client: a file sent in parts over several
connections answers like its plain upload (whether the server parses it at submission or
stores it as it came; an ``egb`` file too); an upload begun by hand is finished with
``upload_id=`` by sending only its missing parts; a part whose connection breaks (before it
is sent, or cut a thousand bytes in by a proxy) is sent again; a job asked of an incomplete
upload raises :class:`~egsolve.UploadIncomplete` with the missing parts; a part that cannot
be sent raises :class:`~egsolve.UploadFailed` naming the upload, which is then finished; a
job refused after the upload (the per-user limit) keeps it, so it is not sent again (nor by
``submit_many``); a server without ``POST /v1/uploads`` gets a plain upload; the open
uploads a user may have are bounded (:class:`~egsolve.TooManyUploads`)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import shutil
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Set, Tuple, Type

import httpx
import pytest
from serve import FlakyProxy, Server, egsolve_binary, shared_data, slow_cycle

from egsolve import (
    Client,
    InvalidParameter,
    NotFound,
    TooManyJobs,
    TooManyUploads,
    Upload,
    UploadFailed,
    UploadIncomplete,
)

PART = 65536  # the smallest part the server takes: 188 parts of the 12 MB game
GAME = "energy/clique_500_cp4"  # 2,000 vertices, 1,746,500 edges: 12,312,506 bytes of text


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The game as a plain text file (the client sends a file in parts as it is)."""
    path = tmp_path_factory.mktemp("parts") / "clique.mpg"
    with gzip.open(shared_data() / f"{GAME}.mpg.gz") as packed, open(path, "wb") as out:
        shutil.copyfileobj(packed, out)
    return path


@pytest.fixture(scope="module")
def expected_credits() -> List[Optional[int]]:
    """The shared data's independent credits (``None`` for ⊤), by vertex id."""
    rows = [line.split() for line in gzip.decompress((shared_data() / f"{GAME}.credits.gz").read_bytes()).decode().splitlines()]
    return [None if credit == "T" else int(credit) for _, credit in sorted(rows, key=lambda r: int(r[0]))]


@pytest.fixture(scope="module")
def storing_server() -> Iterator[Server]:
    """A server that parses nothing at submission: a plain file from an upload in parts is
    moved into the store as it came (the default server parses the 12 MB game instead)."""
    server = Server(args=["--inline-parse-bytes", "0"])
    yield server
    server.stop()


@pytest.fixture(params=["parsed-at-submission", "stored-as-it-came"])
def server(request: pytest.FixtureRequest) -> Server:
    """Each way the server makes a job of a finished upload."""
    name = "open_server" if request.param == "parsed-at-submission" else "storing_server"
    found: Server = request.getfixturevalue(name)
    return found


Answer = Callable[[httpx.Request], Optional[httpx.Response]]


class Recording(httpx.BaseTransport):
    """The real transport, recording every request (``method path``) first; ``answer`` may
    answer (or fail) a request instead of the server."""

    def __init__(self, answer: Optional[Answer] = None) -> None:
        self.inner = httpx.HTTPTransport()
        self.answer = answer
        self.lock = threading.Lock()
        self.requests: List[Tuple[str, str, str]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.requests.append((request.method, request.url.path, request.headers.get("content-type", "")))
        if self.answer is not None:
            answered = self.answer(request)
            if answered is not None:
                return answered
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()

    def puts(self) -> Counter:
        """How many times each part was sent."""
        return Counter(int(path.rsplit("/", 1)[1]) for method, path, _ in self.requests if method == "PUT")

    def upload_ids(self) -> Set[str]:
        return {m.group(1) for _, path, _ in self.requests if (m := re.match(r"/v1/uploads/([^/]+)", path))}

    def count(self, method: str, path: str) -> int:
        return sum(1 for m, p, _ in self.requests if (m, p) == (method, path))


def part_number(request: httpx.Request) -> Optional[int]:
    """The part a ``PUT`` sends, else ``None``."""
    match = re.fullmatch(r"/v1/uploads/[^/]+/parts/(\d+)", request.url.path)
    return int(match.group(1)) if request.method == "PUT" and match else None


def break_part(number: int, error: Type[httpx.TransportError], times: Optional[int] = None) -> Tuple[Answer, List[int]]:
    """An answer that fails the sending of part ``number`` with ``error`` (the first ``times``
    times, by default every time), and the list that gets ``number`` each time it does."""
    broken: List[int] = []

    def answer(request: httpx.Request) -> Optional[httpx.Response]:
        if part_number(request) == number and (times is None or len(broken) < times):
            broken.append(number)
            raise error(f"part {number} broken (from the test)", request=request)
        return None

    return answer, broken


def problem(status: int, kind: str, title: str, detail: str, **members: Any) -> httpx.Response:
    """An error answer of the server: its problem document (RFC 9457), sent again at once."""
    document = {"type": f"urn:egsolve:problem:{kind}", "title": title, "status": status, "detail": detail, **members}
    headers = {"Content-Type": "application/problem+json", "Retry-After": "0"}
    return httpx.Response(status, content=json.dumps(document), headers=headers)


def put_part(url: str, upload_id: str, number: int, data: bytes) -> httpx.Response:
    """One part sent by hand, with its ``Content-Digest``."""
    digest = base64.b64encode(hashlib.sha256(data).digest()).decode()
    return httpx.put(
        f"{url}/v1/uploads/{upload_id}/parts/{number}",
        content=data,
        headers={"Content-Digest": f"sha-256=:{digest}:", "Content-Type": "application/octet-stream"},
    )


def begin_by_hand(url: str, game: Path, numbers: List[int]) -> str:
    """An upload of ``game`` in parts of 64 KiB, with only parts ``numbers`` sent; its id."""
    made = httpx.post(f"{url}/v1/uploads", json={"size": game.stat().st_size, "part_size": PART})
    assert made.status_code == 201, made.text
    upload_id: str = made.json()["id"]
    assert made.headers["location"] == f"/v1/uploads/{upload_id}"
    data = game.read_bytes()
    for n in numbers:
        sent = put_part(url, upload_id, n, data[n * PART : (n + 1) * PART])
        assert sent.status_code == 200, sent.text
        assert sent.json()["number"] == n
    return upload_id


def parts_of(game: Path) -> int:
    return -(-game.stat().st_size // PART)


def test_a_file_sent_in_parts_answers_like_a_plain_upload(
    server: Server, game: Path, expected_credits: List[Optional[int]]
) -> None:
    recording = Recording()
    with Client(server.url, token="", transport=recording) as client:
        job = client.submit(game, parts_above=0, part_size=PART, connections=4)
        assert job.source == str(game)
        # Every part once, over the upload that became the job.
        assert recording.puts() == Counter(range(parts_of(game)))
        (upload_id,) = recording.upload_ids()
        upload = client.upload(upload_id)
        assert (upload.state, upload.parts, upload.missing) == ("used", parts_of(game), [])
        assert upload.arena == job.info.arena.sha256
        in_parts = job.result()

        # Below parts_above (256 MiB by default) the same file goes as one request.
        before = len(recording.requests)
        plain = client.submit(game)
        assert [(m, p) for m, p, _ in recording.requests[before:]][0] == ("POST", "/v1/jobs")
        assert recording.count("POST", "/v1/uploads") == 1
        answer = plain.result()
    # (Strategies are not compared: where several moves win, runs may pick different ones.)
    assert in_parts.credits == answer.credits == expected_credits
    assert in_parts.winners == answer.winners and in_parts.summary.w0 == answer.summary.w0


def test_the_lower_level_calls(open_server: Server, game: Path) -> None:
    seen: List[Tuple[int, int]] = []
    with Client(open_server.url, token="") as client:
        upload = client.upload_in_parts(game, part_size=4 * PART, connections=3, progress=lambda h, s: seen.append((h, s)))
        assert isinstance(upload, Upload) and upload.state == "complete"
        assert upload.size == game.stat().st_size and upload.part_size == 4 * PART
        assert upload.received == list(range(upload.parts)) and upload.received_bytes == upload.size
        # From nothing to everything, a call per part (in the order they arrived).
        assert seen[0] == (0, upload.size) and seen[-1] == (upload.size, upload.size)
        assert len(seen) == upload.parts + 1 and [h for h, _ in seen] == sorted(h for h, _ in seen)
        with pytest.raises(TypeError, match="priorty"):
            client.submit_upload(upload.id, priorty=3)  # type: ignore[call-arg]
        job = client.submit_upload(upload.id, backend="cpu", priority=3)
        assert job.info.options.priority == 3 and job.wait(60).state == "succeeded"
        # The same upload again: another job on the same arena.
        again = client.submit_upload(upload.id)
        assert again.id != job.id and again.info.arena.sha256 == job.info.arena.sha256
        # An upload in parts is for one file: another size is refused before anything is sent.
        with pytest.raises(ValueError, match="name the upload of this file"):
            client.upload_in_parts(shared_data() / f"{GAME}.mpg.gz", upload_id=upload.id)
        with pytest.raises(InvalidParameter) as invalid:
            client.upload_in_parts(game, part_size=1000)
        assert invalid.value.kind == "invalid-upload" and "part_size" in invalid.value.detail


def test_an_egb_file_goes_in_parts_as_it_is(
    storing_server: Server, game: Path, expected_credits: List[Optional[int]]
) -> None:
    recording = Recording()
    with Client(storing_server.url, token="", transport=recording) as client:
        job = client.submit(game, convert=egsolve_binary(), parts_above=0, part_size=PART)
        assert job.source == str(game) and recording.puts(), "the converted file went in parts"
        (upload_id,) = recording.upload_ids()
        assert client.upload(upload_id).size != game.stat().st_size, "egb, not the text"
        assert job.result().credits == expected_credits
        # An encoding named outright: compressed on the way, as one request.
        before = len(recording.requests)
        gzipped = client.submit(game, compress="gzip", parts_above=0)
        assert [r[:2] for r in recording.requests[before:]][0] == ("POST", "/v1/jobs")
        assert gzipped.result().credits == expected_credits


def test_resuming_sends_only_the_missing_parts(
    open_server: Server, game: Path, expected_credits: List[Optional[int]]
) -> None:
    parts = parts_of(game)
    by_hand = [0, 1, 2, 5, 8, 13, 21, 34, 55, 89, 144, parts - 1]
    upload_id = begin_by_hand(open_server.url, game, by_hand)
    recording = Recording()
    with Client(open_server.url, token="", transport=recording) as client:
        before = client.upload(upload_id)
        assert before.state == "receiving" and before.received == by_hand
        assert before.missing == [n for n in range(parts) if n not in by_hand]
        job = client.submit(game, upload_id=upload_id, connections=3)
        assert recording.puts() == Counter(before.missing), "only the missing parts, once each"
        assert recording.count("POST", "/v1/uploads") == 0
        assert job.result().credits == expected_credits
        after = client.upload(upload_id)
        assert after.state == "used" and after.received == list(range(parts))
        # Finishing a finished upload sends nothing more.
        sent = len(recording.puts())
        assert client.upload_in_parts(game, upload_id=upload_id).state == "used"
        assert len(recording.puts()) == sent


def test_a_job_asked_early_says_which_parts_are_missing(open_server: Server, game: Path) -> None:
    upload_id = begin_by_hand(open_server.url, game, [0, 3])
    with Client(open_server.url, token="") as client:
        with pytest.raises(UploadIncomplete) as early:
            client.submit_upload(upload_id)
        assert early.value.status == 409 and early.value.kind == "upload-incomplete"
        assert early.value.missing == [n for n in range(parts_of(game)) if n not in (0, 3)]
        client.delete_upload(upload_id)
        with pytest.raises(NotFound) as gone:
            client.upload(upload_id)
        assert gone.value.kind == "upload-not-found"
        with pytest.raises(NotFound):
            client.submit_upload(upload_id)


def test_a_part_whose_connection_breaks_before_it_is_sent_is_sent_again(
    open_server: Server, game: Path, expected_credits: List[Optional[int]]
) -> None:
    break_part_7_once, broken = break_part(7, httpx.WriteError, times=1)
    recording = Recording(break_part_7_once)
    with Client(open_server.url, token="", transport=recording, backoff=0.01) as client:
        job = client.submit(game, parts_above=0, part_size=PART, connections=4)
        assert broken == [7] and recording.puts()[7] == 2
        assert recording.puts() == Counter(range(parts_of(game))) + Counter([7])
        assert job.result().credits == expected_credits


def test_a_part_cut_off_mid_way_is_sent_again(
    storing_server: Server, game: Path, expected_credits: List[Optional[int]]
) -> None:
    recording = Recording()
    with FlakyProxy(storing_server.port) as proxy, Client(
        proxy.url, token="", transport=recording, retries=6, backoff=0.05
    ) as client:
        proxy.cut_put_requests = 2
        job = client.submit(game, parts_above=0, part_size=PART, connections=4)
        assert proxy.dropped == 2 and len(proxy.cut_puts) == 2, proxy.cut_puts
        for path in proxy.cut_puts:
            number = int(path.rsplit("/", 1)[1])
            assert recording.puts()[number] >= 2, (number, recording.puts()[number])
        assert set(recording.puts()) == set(range(parts_of(game)))
        assert job.result().credits == expected_credits


def test_a_part_that_cannot_be_sent_names_the_upload_to_finish(
    open_server: Server, game: Path, expected_credits: List[Optional[int]]
) -> None:
    always_break_part_9, _ = break_part(9, httpx.RemoteProtocolError)
    with Client(open_server.url, token="", transport=Recording(always_break_part_9), retries=2, backoff=0.01) as client:
        with pytest.raises(UploadFailed) as failed:
            client.submit(game, parts_above=0, part_size=PART, connections=2)
    error = failed.value
    assert 9 in error.missing and "cannot send part 9" in str(error.error)
    assert error.upload_id in str(error) and isinstance(error.__cause__, Exception)
    recording = Recording()
    with Client(open_server.url, token="", transport=recording) as client:
        left = client.upload(error.upload_id).missing
        assert 9 in left and set(left) <= set(error.missing)
        job = client.submit(game, upload_id=error.upload_id)
        assert recording.puts() == Counter(left)
        assert job.result().credits == expected_credits


def test_a_job_refused_after_the_upload_keeps_it(game: Path, expected_credits: List[Optional[int]]) -> None:
    recording = Recording()
    with Server(args=["--per-user-job-limit", "1"]) as server:
        with Client(server.url, token="", transport=recording) as client:
            busy = client.submit(slow_cycle(200_000), backend="reference")
            with pytest.raises(TooManyJobs) as refused:
                client.submit(game, parts_above=0, part_size=PART, connections=4)
            upload_id = refused.value.upload_id
            assert upload_id is not None and client.upload(upload_id).state == "complete"
            busy.cancel()
            sent = sum(recording.puts().values())
            job = client.submit(game, upload_id=upload_id)
            assert sum(recording.puts().values()) == sent, "nothing sent again"
            assert job.result().credits == expected_credits


def test_submit_many_waits_out_the_limit_without_sending_the_file_again(
    open_server: Server, game: Path, expected_credits: List[Optional[int]]
) -> None:
    refused: List[str] = []

    def limit_once(request: httpx.Request) -> Optional[httpx.Response]:
        if request.url.path == "/v1/jobs" and request.method == "POST" and not refused:
            refused.append(request.headers["content-type"])
            return problem(429, "too-many-jobs", "Too many jobs", "wait for some to finish", limit=3)
        return None

    recording = Recording(limit_once)
    with Client(open_server.url, token="", transport=recording) as client:
        (job,) = client.submit_many([game], parts_above=0, part_size=PART, connections=4)
        assert refused == ["application/vnd.egsolve.upload+json"]
        assert recording.count("POST", "/v1/uploads") == 1 and recording.puts() == Counter(range(parts_of(game)))
        assert recording.count("POST", "/v1/jobs") == 2
        assert job.state == "succeeded" and job.result().credits == expected_credits


def test_a_server_without_uploads_in_parts_gets_a_plain_upload(
    open_server: Server, game: Path, expected_credits: List[Optional[int]]
) -> None:
    def older_server(request: httpx.Request) -> Optional[httpx.Response]:
        if request.url.path.startswith("/v1/uploads"):
            return problem(404, "not-found", "Not found", "no such endpoint")
        return None

    recording = Recording(older_server)
    with Client(open_server.url, token="", transport=recording) as client:
        job = client.submit(game, parts_above=0, part_size=PART)
        assert recording.count("POST", "/v1/uploads") == 1 and not recording.puts()
        (jobs,) = [r for r in recording.requests if r[:2] == ("POST", "/v1/jobs")]
        assert jobs[2] == "application/octet-stream"
        assert job.source == str(game) and job.result().credits == expected_credits
        # The lower-level call has nothing to fall back on.
        with pytest.raises(NotFound) as missing:
            client.upload_in_parts(game)
        assert missing.value.kind == "not-found"
        # Naming an upload needs uploads in parts: no plain upload then.
        with pytest.raises(NotFound):
            client.submit(game, upload_id="01a225dc-0000-7000-8000-000000000000")


def test_too_many_open_uploads() -> None:
    with Server(args=["--max-open-uploads", "1"]) as server, Client(server.url, token="") as client:
        first = httpx.post(f"{server.url}/v1/uploads", json={"size": PART + 1})
        assert first.status_code == 201, first.text
        with pytest.raises(TooManyUploads) as refused:
            client.upload_in_parts(__file__)
        assert refused.value.status == 429 and refused.value.limit == 1
        client.delete_upload(first.json()["id"])
        assert client.upload_in_parts(__file__, part_size=PART).state == "complete"
