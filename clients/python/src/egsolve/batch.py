"""Batches: many small arenas in one request.

:meth:`Client.submit_batch` packs the arenas into one tar archive (``POST /v1/batches``,
one regular-file member per arena, named by its member name); the server queues a job per
member it accepts and refuses the others one by one. A :class:`Batch` reads the state of
all its jobs at once (``GET /v1/batches/{id}``) and their results as one tar archive that
the server streams as the jobs finish (``GET /v1/batches/{id}/results``): an entry
``NAME.EXT`` per succeeded job (``EXT`` is ``json``, ``txt``, ``sol`` or ``bin`` for the
format), ``NAME.error.json`` for a job without an answer in that format.

A batch carries an ``Idempotency-Key`` like a single submission: one whose answer was lost
is sent again and answered with the batch the first request made, never a second one.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import (
    IO,
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    TypeVar,
    Union,
)

import httpx

from . import upload
from .binary import BinaryResult, parse_binary
from .errors import (
    ApiError,
    ConnectionFailed,
    EgsolveError,
    JobFailed,
    JobFinished,
    WaitTimeout,
    member_error,
)
from .models import JobInfo, Result
from .session import RETRY_STATUSES, error_of

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from .client import Client, Job

__all__ = ["Batch", "BatchInfo", "BatchResult", "RESULT_EXTENSIONS", "SolvedBatch"]

T = TypeVar("T")

#: The extension of each result format's entries in the results archive.
RESULT_EXTENSIONS = {"json": "json", "text": "txt", "paritysol": "sol", "binary": "bin"}
#: The suffix of the entry of a job without an answer in the asked format.
ERROR_SUFFIX = ".error.json"
#: Archives at least this large are compressed when ``compress="auto"``.
COMPRESS_FROM = 256 * 1024
#: :meth:`Client.submit_many` sends its sources as batches when there are at least two
#: and all of them together are at most this many bytes (and it knows every size).
MANY_AS_BATCH_BYTES = 64 * 1024 * 1024
#: At most this many members per batch :meth:`Client.submit_many` sends (the server's
#: default limit, ``--max-batch-jobs``, is 10,000).
MANY_AS_BATCH_MEMBERS = 1000
#: The options of :meth:`Client.submit` that a batch takes as they are (query parameters).
BATCH_OPTIONS = ("backend", "priority", "time_limit", "format", "returns", "credits", "reuse")


# ---- the archive sent ------------------------------------------------------------------
def default_name(source: upload.Source, index: int) -> str:
    """A member's name when none is given: the file's base name, else ``arena-INDEX``."""
    if isinstance(source, (str, os.PathLike)):
        name = os.path.basename(os.fspath(source))
    elif isinstance(source, (bytes, bytearray, memoryview)):
        name = ""
    else:
        given = getattr(source, "name", None)
        name = os.path.basename(given) if isinstance(given, str) and not given.startswith("<") else ""
    return name or f"arena-{index}"


def check_name(name: str) -> None:
    """Refuses a member name that is empty, absolute, has ``..``, ends in ``/`` or holds NUL."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a batch member's name must be a non-empty string, not {name!r}")
    parts = PurePosixPath(name).parts
    if name.startswith("/") or name.endswith("/") or ".." in parts or "\0" in name:
        raise ValueError(f"batch member name {name!r}: give a relative path without '..' that names a file")


def member_names(sources: Sequence[upload.Source], names: Optional[Sequence[str]]) -> List[str]:
    """The members' names (``names``, else :func:`default_name`), checked and unique."""
    if names is None:
        chosen = [default_name(source, i) for i, source in enumerate(sources)]
    else:
        chosen = list(names)
        if len(chosen) != len(sources):
            raise ValueError(f"{len(chosen)} names for {len(sources)} arenas: give one name per arena")
    for name in chosen:
        check_name(name)
    twice = sorted(name for name, count in Counter(chosen).items() if count > 1)
    if twice:
        listed = ", ".join(repr(n) for n in twice[:5]) + (", …" if len(twice) > 5 else "")
        raise ValueError(
            f"batch member names must be unique; given more than once: {listed} "
            "(pass names=[...] to name the arenas)"
        )
    return chosen


def _read(source: upload.Source) -> bytes:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    if hasattr(source, "read"):
        data = source.read()
        if not isinstance(data, bytes):
            raise TypeError("a file object in a batch must be opened in binary mode ('rb')")
        return data
    raise TypeError(f"cannot submit a {type(source).__name__}: give a path, bytes or a binary file")


def archive(sources: Sequence[upload.Source], names: Sequence[str]) -> bytes:
    """The tar archive of a batch: one regular file per source, named by ``names``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for source, name in zip(sources, names):
            info = tarfile.TarInfo(name)
            # The same sources make the same bytes: a batch sent again with its idempotency
            # key (a retry after a lost answer) must be the same submission, which a time
            # stamp taken now would break whenever the retry falls in another second.
            info.mtime = 0
            info.mode = 0o644
            if isinstance(source, (str, os.PathLike)):
                with open(os.fspath(source), "rb") as f:
                    info.size = os.fstat(f.fileno()).st_size
                    tar.addfile(info, f)
            else:
                data = _read(source)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def archive_body(data: bytes, compress: Optional[str]) -> upload.Body:
    """The request body of an archive: compressed (``Content-Encoding``) when ``compress`` is
    ``"gzip"`` or ``"zstd"``, or ``"auto"`` and the archive is :data:`COMPRESS_FROM` bytes or
    more (zstd when ``zstandard`` is installed, else gzip)."""
    if compress not in ("auto", "zstd", "gzip", None, "none"):
        raise ValueError(f"compress must be 'auto', 'zstd', 'gzip' or None, not {compress!r}")
    encoding: Optional[str] = None
    if compress == "auto":
        if len(data) >= COMPRESS_FROM:
            encoding = upload.preferred_encoding()
    elif compress in ("zstd", "gzip"):
        encoding = compress
    headers = {"Content-Type": "application/x-tar"}
    if encoding:
        compressor = upload._compressor(encoding)
        data = compressor.compress(data) + compressor.flush()
        headers["Content-Encoding"] = encoding
    return upload.Body(chunks=lambda: iter([data]), headers=headers, name="<batch>", encoding=encoding)


def known_size(source: upload.Source) -> Optional[int]:
    """The bytes ``source`` holds, where that is known without reading it."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return len(source)
    if isinstance(source, (str, os.PathLike)):
        try:
            return os.path.getsize(os.fspath(source))
        except OSError:
            return None
    try:
        if source.seekable():
            start = source.tell()
            end = source.seek(0, io.SEEK_END)
            source.seek(start)
            return end - start
    except (AttributeError, OSError, ValueError):
        pass
    return None


# ---- what the server answers -----------------------------------------------------------
@dataclass(frozen=True)
class BatchInfo:
    """A batch as ``GET /v1/batches/{id}`` shows it: each job (by member name, in the
    server's order), how many jobs are in each state, and whether all have finished."""

    id: str
    jobs: Dict[str, JobInfo]
    counts: Dict[str, int]
    finished: bool
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "BatchInfo":
        return cls(
            id=data["id"],
            jobs={str(j["name"]): JobInfo.from_json(j) for j in data["jobs"]},
            counts={str(k): int(v) for k, v in (data.get("counts") or {}).items()},
            finished=bool(data["finished"]),
            raw=data,
        )


@dataclass(frozen=True)
class BatchResult:
    """One entry of a batch's results: member ``name``'s answer in ``format`` (``data``, the
    entry's bytes), or, when ``error`` is set, why there is none: the job failed or was
    cancelled (``state``), or its answer has no form in ``format`` (e.g. ``text`` for a parity
    game answered without credits); ``error`` has ``type``, ``message`` and, for malformed
    arenas, ``line`` and ``column``, and ``data`` is the whole error document."""

    name: str
    job_id: Optional[str]
    format: str
    state: str
    data: bytes = field(repr=False)
    error: Optional[Dict[str, Any]] = None

    @property
    def ok(self) -> bool:
        """Whether this is an answer (not an error entry)."""
        return self.error is None

    def raise_for_error(self) -> None:
        """Raises :class:`~egsolve.JobFailed` for an error entry."""
        if self.error is not None:
            raise JobFailed(self.job_id or self.name, self.state, self.error)

    def text(self) -> str:
        """The entry as text (``text`` and ``paritysol`` answers, JSON)."""
        return self.data.decode()

    def json(self) -> Any:
        """The entry parsed as JSON (``json`` answers and error entries)."""
        return json.loads(self.data)

    def result(self) -> Union[Result, str, BinaryResult]:
        """The answer as :meth:`Job.result` gives it in this format: a
        :class:`~egsolve.Result` (json), the text (text, paritysol) or a
        :class:`~egsolve.BinaryResult` (binary, needs NumPy); raises
        :class:`~egsolve.JobFailed` for an error entry."""
        self.raise_for_error()
        if self.format == "json":
            return Result.from_json(self.json())
        if self.format == "binary":
            return parse_binary(self.data)
        return self.text()


def _is_error_document(data: bytes) -> bool:
    try:
        document = json.loads(data)
    except ValueError:
        return False
    return isinstance(document, dict) and "error" in document and "state" in document


class _Chunks(io.RawIOBase):
    """A readable file over an iterator of byte strings (a streamed response's body)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        super().__init__()
        self._chunks = chunks
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            try:
                self._pending = memoryview(next(self._chunks))
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


def _inside(root: Path, name: str) -> Path:
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or ".." in parts:
        raise EgsolveError(f"the results hold an entry named {name!r}, which is not a path inside {root}")
    return root.joinpath(*parts)


class Batch:
    """Arenas submitted together (:meth:`Client.submit_batch`).

    ``jobs`` are the accepted members' jobs in archive order (each ``job.source`` is its
    member name), ``refused`` maps each refused member's name to its error (an
    :class:`~egsolve.ApiError`, e.g. :class:`~egsolve.MalformedArena` with ``line`` and
    ``column``; its ``problem`` is the server's document), and ``info`` is the latest
    :class:`BatchInfo`.
    """

    def __init__(
        self,
        client: "Client",
        info: BatchInfo,
        *,
        order: Optional[Sequence[Tuple[str, str]]] = None,
        refused: Optional[Dict[str, ApiError]] = None,
    ) -> None:
        from .client import Job

        self.client = client
        self.info = info
        self.refused: Dict[str, ApiError] = dict(refused or {})
        listed = {job.id: (name, job) for name, job in info.jobs.items()}
        members = order if order is not None else [(name, job.id) for name, job in info.jobs.items()]
        self.members: Dict[str, Job] = {}
        for name, job_id in members:
            job_info = listed[job_id][1] if job_id in listed else client._job_info(job_id)
            self.members[name] = Job(client, job_info, source=name)

    def __repr__(self) -> str:
        return f"Batch({self.id!r}, jobs={len(self.members)}, refused={len(self.refused)}, counts={self.counts})"

    def __len__(self) -> int:
        return len(self.members)

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def jobs(self) -> List["Job"]:
        """The accepted members' jobs, in archive order."""
        return list(self.members.values())

    def job(self, name: str) -> "Job":
        """The job of the member named ``name`` (``KeyError`` for a refused or unknown one)."""
        return self.members[name]

    @property
    def counts(self) -> Dict[str, int]:
        """Jobs per state (``queued``, ``running``, ``succeeded``, ``failed``,
        ``cancelled``) as last read."""
        return self.info.counts

    @property
    def finished(self) -> bool:
        """Whether every job had finished when the batch was last read."""
        return self.info.finished

    def refresh(self) -> "Batch":
        """Reads the batch again (one request for all its jobs) and updates the jobs."""
        self.info = BatchInfo.from_json(self.client._json("GET", f"/v1/batches/{self.id}"))
        by_id = {job.id: job for job in self.info.jobs.values()}
        for job in self.members.values():
            if job.id in by_id:
                job.info = by_id[job.id]
        return self

    def status(self) -> BatchInfo:
        """Reads the batch again and returns its :class:`BatchInfo`."""
        return self.refresh().info

    def wait(
        self,
        timeout: Optional[float] = None,
        on_finished: Optional[Callable[["Job"], None]] = None,
        interval: float = 2.0,
    ) -> "Batch":
        """Waits until every job has finished (in any state) and returns the batch.

        The batch is read every ``interval`` seconds at most (sooner at first);
        ``on_finished`` gets each job once as it is seen finished. Raises
        :class:`~egsolve.WaitTimeout` after ``timeout`` seconds (the jobs go on).
        """
        wait_all([self], timeout, on_finished, interval)
        return self

    def cancel(self) -> "Batch":
        """Cancels every job that has not finished (one request each) and reads the batch."""
        self.refresh()
        for job in self.members.values():
            if not job.finished:
                try:
                    job.cancel()
                except JobFinished:
                    pass  # finished meanwhile
        return self.refresh()

    def results(self, format: str = "json") -> Iterator[BatchResult]:
        """The jobs' results as they finish (completion order), one :class:`BatchResult`
        per accepted member, read from the streamed tar archive (one entry at a time in
        memory; no read timeout, since the next entry comes when the next job finishes).
        The iterator ends when every job has finished. A connection that breaks off is
        opened again, and the entries already given are skipped.
        """
        extension = _extension(format)

        def read(entry: tarfile.TarInfo, data: IO[bytes]) -> BatchResult:
            return self._result(entry.name, data.read(), format, extension)

        return self._stream(format, read)

    def download(self, directory: Union[str, "os.PathLike[str]"], format: str = "json") -> List[Path]:
        """Writes each result, as its job finishes, to ``directory/NAME.EXT`` (``EXT`` is
        ``json``, ``txt``, ``sol`` or ``bin``), or ``directory/NAME.error.json`` for a job
        without an answer in ``format``; returns the paths in the order written (completion
        order). The directory (and those a member name has) is made as needed."""
        _extension(format)
        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)

        def write(entry: tarfile.TarInfo, data: IO[bytes]) -> Path:
            target = _inside(root, entry.name)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as out:
                shutil.copyfileobj(data, out)
            return target

        return list(self._stream(format, write))

    # ---- the results archive -------------------------------------------------------
    def _result(self, entry: str, data: bytes, format: str, extension: str) -> BatchResult:
        name, is_error = self._split(entry, extension, data)
        job = self.members.get(name)
        if not is_error:
            return BatchResult(name, job.id if job else None, format, "succeeded", data)
        try:
            document = json.loads(data)
        except ValueError:
            document = {}
        if not isinstance(document, dict):
            document = {}
        error = document.get("error")
        return BatchResult(
            name=name,
            job_id=document.get("id") or (job.id if job else None),
            format=format,
            state=str(document.get("state") or (job.state if job else "failed")),
            data=data,
            error=error if isinstance(error, dict) else {"type": "unknown", "message": str(error)},
        )

    def _split(self, entry: str, extension: str, data: bytes) -> Tuple[str, bool]:
        """The member name of a results entry, and whether it is an error entry."""
        as_error = entry[: -len(ERROR_SUFFIX)] if entry.endswith(ERROR_SUFFIX) else None
        as_answer = entry[: -len(extension) - 1] if entry.endswith("." + extension) else None
        if as_error is not None and as_error in self.members:
            if as_answer is not None and as_answer in self.members:  # members "x" and "x.error"
                return (as_error, True) if _is_error_document(data) else (as_answer, False)
            return as_error, True
        if as_answer is not None and as_answer in self.members:
            return as_answer, False
        if as_error is not None:  # a name this batch does not know: by the suffix alone
            return as_error, True
        if as_answer is not None:
            return as_answer, False
        return entry, False

    def _stream(
        self,
        format: str,
        handle: Callable[[tarfile.TarInfo, IO[bytes]], T],
        handled: Optional[Set[str]] = None,
    ) -> Iterator[T]:
        """``handle`` applied to each regular-file entry of the results archive, in order,
        but those named in ``handled``; a broken connection is opened again
        (``client.retries`` times without progress) and the entries already handled are
        skipped."""
        client = self.client
        handled = set() if handled is None else handled
        failures = 0
        timeout = httpx.Timeout(client.timeout, read=None)
        while True:
            try:
                with client._http.stream(
                    "GET", f"/v1/batches/{self.id}/results", params={"format": format}, timeout=timeout
                ) as response:
                    if response.status_code >= 400:
                        response.read()
                        error = error_of(response)
                        if response.status_code in RETRY_STATUSES and failures < client.retries:
                            failures += 1
                            time.sleep(error.retry_after or client._delay(failures))
                            continue
                        raise error
                    with tarfile.open(fileobj=_Chunks(response.iter_bytes()), mode="r|") as tar:
                        for entry in tar:
                            if not entry.isfile() or entry.name in handled:
                                continue
                            data = tar.extractfile(entry)
                            assert data is not None
                            item = handle(entry, data)
                            handled.add(entry.name)
                            failures = 0
                            yield item
                return
            except (httpx.TransportError, tarfile.TarError) as e:
                failures += 1
                if failures > client.retries:
                    raise ConnectionFailed(f"the results of batch {self.id} broke off: {e!r}") from e
                time.sleep(client._delay(failures))


def _extension(format: str) -> str:
    if format not in RESULT_EXTENSIONS:
        raise ValueError(f"format must be json, text, paritysol or binary, not {format!r}")
    return RESULT_EXTENSIONS[format]


class SolvedBatch:
    """What :meth:`Client.solve_batch` answers: :attr:`batch`, the :class:`Batch` made, and,
    iterating over it, one :class:`BatchResult` per accepted member as it arrives (completion
    order; the members solved while the batch was received come first). The iteration ends
    when every job has ended. :meth:`close` (or the end of a ``with`` block) lets the rest
    go: the jobs run on, and :meth:`Batch.results` reads their results later."""

    def __init__(self, batch: Batch, entries: Iterator[BatchResult]) -> None:
        self.batch = batch
        self._entries = entries

    def __repr__(self) -> str:
        return f"SolvedBatch({self.batch!r})"

    def __iter__(self) -> Iterator[BatchResult]:
        return self._entries

    def close(self) -> None:
        """Stops reading the results (closes their connection)."""
        close = getattr(self._entries, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> "SolvedBatch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _unknown_results_parameter(error: ApiError) -> bool:
    """Whether ``error`` is a server from before ``?results=`` refusing the parameter."""
    return error.status == 400 and error.kind == "invalid-parameter" and "results" in error.detail


def solve(
    client: "Client", params: Dict[str, Any], body: upload.Body, key: str, format: str
) -> SolvedBatch:
    """``POST /v1/batches?results=FORMAT`` (:meth:`Client.solve_batch`): the batch from the
    answer's first entry (``batch.json``), then its results from the same answer. The
    request is sent again, with the same ``Idempotency-Key``, while no entry has arrived
    (the server answers a replay with the first request's batch and its results); once
    the batch is known, a broken answer goes on at ``GET /v1/batches/{id}/results``,
    skipping the entries already given. A server from before ``?results=`` is asked the
    older way: the batch, then its results stream."""
    extension = _extension(format)
    http = client._http
    failures = 0
    while True:
        request = http.build_request(
            "POST",
            "/v1/batches",
            params={**params, "results": format},
            content=body.chunks(),
            headers={**body.headers, "Idempotency-Key": key},
            timeout=httpx.Timeout(client.timeout, read=None),
        )
        response: Optional[httpx.Response] = None
        try:
            response = http.send(request, stream=True)
            if response.status_code >= 400:
                response.read()
                error = error_of(response)
                response.close()
                if _unknown_results_parameter(error):
                    batch = submitted(client, client._submission("/v1/batches", params, body, key))
                    return SolvedBatch(batch, batch.results(format))
                again = response.status_code in RETRY_STATUSES or error.kind == "idempotency-key-in-use"
                if again and failures < client.retries:
                    failures += 1
                    time.sleep(error.retry_after or client._delay(failures))
                    continue
                raise error
            if response.headers.get("content-type", "").startswith("application/json"):
                batch = submitted(client, json.loads(response.read()))  # answered without results
                response.close()
                return SolvedBatch(batch, batch.results(format))
            tar = tarfile.open(fileobj=_Chunks(response.iter_bytes()), mode="r|")
            first = tar.next()
            if first is None or first.name != "batch.json" or not first.isfile():
                raise EgsolveError("the answer with results did not start with batch.json")
            document = tar.extractfile(first)
            assert document is not None
            batch = submitted(client, json.loads(document.read()))
        except (httpx.TransportError, tarfile.TarError) as e:
            if response is not None:
                response.close()
            failures += 1
            if failures > client.retries:
                raise ConnectionFailed(f"cannot reach {client.url}: {e!r}") from e
            time.sleep(client._delay(failures))
            continue
        except BaseException:
            if response is not None:
                response.close()
            raise
        return SolvedBatch(batch, _entries(batch, response, tar, format, extension))


def _entries(
    batch: Batch, response: httpx.Response, tar: tarfile.TarFile, format: str, extension: str
) -> Iterator[BatchResult]:
    """The results entries that follow ``batch.json`` in ``tar`` (the answer ``response``),
    then, if that answer breaks off, the rest from ``GET /v1/batches/{id}/results``."""
    handled: Set[str] = set()
    try:
        # The iteration starts again at the first entry, `batch.json` (read already; a
        # member named `batch` may have a result entry of that name later).
        for position, entry in enumerate(tar):
            if position == 0 or not entry.isfile() or entry.name in handled:
                continue
            data = tar.extractfile(entry)
            assert data is not None
            result = batch._result(entry.name, data.read(), format, extension)
            handled.add(entry.name)
            yield result
        return
    except (httpx.TransportError, tarfile.TarError):
        pass  # the answer broke off: the rest from the batch's results stream
    finally:
        response.close()

    def read(entry: tarfile.TarInfo, data: IO[bytes]) -> BatchResult:
        return batch._result(entry.name, data.read(), format, extension)

    yield from batch._stream(format, read, handled)


def submitted(client: "Client", data: Dict[str, Any]) -> Batch:
    """The :class:`Batch` of a ``POST /v1/batches`` answer (read once more for its jobs)."""
    order: List[Tuple[str, str]] = []
    refused: Dict[str, ApiError] = {}
    for member in data.get("jobs") or []:
        name = str(member.get("name"))
        if member.get("id"):
            order.append((name, str(member["id"])))
        else:
            refused[name] = member_error(member.get("error") or {})
    info = BatchInfo.from_json(client._json("GET", f"/v1/batches/{data['id']}"))
    return Batch(client, info, order=order, refused=refused)


def wait_all(
    batches: Iterable[Batch],
    timeout: Optional[float],
    on_finished: Optional[Callable[["Job"], None]] = None,
    interval: float = 2.0,
) -> None:
    """Waits until every job of ``batches`` has finished, reading each unfinished batch
    every ``interval`` seconds at most (from 0.1 s, 1.5 times longer each time);
    ``on_finished`` gets each job once. Raises :class:`~egsolve.WaitTimeout` after
    ``timeout`` seconds."""
    batches = list(batches)
    deadline = None if timeout is None else time.monotonic() + timeout
    told: Set[str] = set()
    delay = 0.1
    first = True
    while True:
        for batch in batches:
            if first or not batch.finished:
                batch.refresh()
        first = False
        if on_finished is not None:
            for batch in batches:
                for job in batch.members.values():
                    if job.finished and job.id not in told:
                        told.add(job.id)
                        on_finished(job)
        if all(batch.finished for batch in batches):
            return
        pause = min(delay, interval)
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                left = sum(1 for b in batches for j in b.members.values() if not j.finished)
                ids = ", ".join(b.id for b in batches)
                raise WaitTimeout(f"{left} jobs of batch {ids} are unfinished after {timeout} s")
            pause = min(pause, remaining)
        time.sleep(pause)
        delay *= 1.5


# ---- Client.submit_many through batches ------------------------------------------------
def suits_batches(items: Sequence[Any], options: Dict[str, Any]) -> bool:
    """Whether :meth:`Client.submit_many` sends ``items`` as batches: two or more, sizes
    known, :data:`MANY_AS_BATCH_BYTES` at most together, and no option a batch cannot
    honour (``convert``, or one ``idempotency_key`` for every source)."""
    if len(items) < 2 or options.get("convert") or options.get("idempotency_key") is not None:
        return False
    if set(options) - set(BATCH_OPTIONS) - {"compress", "convert", "idempotency_key"}:
        return False  # an unknown option: each submission says so
    total = 0
    for source in items:
        size = known_size(source)
        if size is None:
            return False
        total += size
        if total > MANY_AS_BATCH_BYTES:
            return False
    return True


def submit_in_batches(
    client: "Client",
    items: Sequence[upload.Source],
    options: Dict[str, Any],
    jobs: List[Optional["Job"]],
    errors: Dict[int, BaseException],
) -> Tuple[List[Batch], List[int], Dict[str, int]]:
    """Submits ``items`` as batches of :data:`MANY_AS_BATCH_MEMBERS` at most, filling ``jobs``
    (each job's ``source`` as :meth:`Client.submit` sets it) and ``errors`` (refused members)
    by input index. Returns the batches, the indexes to submit one by one instead (from the
    first batch the server did not take as a whole: no batch endpoint, the per-user limit,
    too many members), and each batch job's index by job id."""
    from .errors import BatchRefused, MalformedBatch, TooManyJobs

    names = [default_name(source, i) for i, source in enumerate(items)]
    if len(set(names)) < len(names):
        names = [f"{i}-{name}" for i, name in enumerate(names)]
    params = {k: options[k] for k in BATCH_OPTIONS if k in options}
    made: List[Batch] = []
    rest: List[int] = []
    index_of: Dict[str, int] = {}
    for start in range(0, len(items), MANY_AS_BATCH_MEMBERS):
        chunk = list(range(start, min(len(items), start + MANY_AS_BATCH_MEMBERS)))
        if rest:
            rest.extend(chunk)
            continue
        try:
            batch = client.submit_batch([items[i] for i in chunk], names=[names[i] for i in chunk], **params)
        except BatchRefused as e:
            for i in chunk:
                errors[i] = e.errors.get(names[i], e)
            continue
        except (TooManyJobs, MalformedBatch):
            rest.extend(chunk)
            continue
        except ApiError as e:
            if e.status in (404, 405, 413):  # a server without batches, or one too large
                rest.extend(chunk)
            else:
                errors.update((i, e) for i in chunk)
            continue
        except (OSError, TypeError, ValueError):
            rest.extend(chunk)  # each submission of its own reports it
            continue
        except ConnectionFailed as e:  # not sent again: the batch may have been made
            errors.update((i, e) for i in chunk)
            continue
        index = {names[i]: i for i in chunk}
        for name, job in batch.members.items():
            if name in index:
                job.source = upload.source_name(items[index[name]])
                jobs[index[name]] = job
                index_of[job.id] = index[name]
        for name, error in batch.refused.items():
            if name in index:
                errors[index[name]] = error
        for i in chunk:
            if jobs[i] is None and i not in errors:
                errors[i] = EgsolveError(f"batch {batch.id} does not list member {names[i]!r}")
        made.append(batch)
    return made, rest, index_of
