"""The client: :class:`Client` talks to one server, :class:`Job` is one submitted arena.

Retries: every request that is safe to repeat is retried on a dropped connection, a
timeout or a 502/503/504, with exponential backoff (``retries`` times in a row). That
includes submissions: each carries an ``Idempotency-Key`` header, so a submission whose
answer was lost and is sent again gets the job the first attempt made, never a second one.
So does a batch (``POST /v1/batches``): sent again, it is answered with the batch the
first attempt made (see :mod:`egsolve.batch`).
Long polls (``GET /v1/jobs/{id}?wait=``) are plain reads and simply start again.
Uploads in parts (:meth:`Client.upload_in_parts`, and :meth:`Client.submit` for large
files) send each part again on its own; ``POST /v1/uploads`` is sent again only when no
connection could be made (see :mod:`egsolve.parts`).
"""

from __future__ import annotations

import dataclasses
import os
import random
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Literal,
    Optional,
    Sequence,
    Union,
    overload,
)

import httpx

from . import batch as batches
from . import parts
from . import upload as uploads
from .batch import Batch, SolvedBatch
from .errors import (
    BatchError,
    ConnectionFailed,
    EgsolveError,
    JobFailed,
    JobFinished,
    TooManyJobs,
    WaitTimeout,
)
from .binary import BinaryResult, parse_binary
from .models import Caller, Devices, Histogram, JobInfo, Result, Summary
from .parts import MAX_CONNECTIONS, PartsMixin
from .session import error_of

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Unpack


__all__ = ["Client", "Job", "DEFAULT_SERVER"]

#: The server when neither ``url`` nor ``EGSOLVE_SERVER`` names one (as ``egsolve submit``).
DEFAULT_SERVER = "http://127.0.0.1:8080"
#: Longest long poll the server honours, seconds.
MAX_WAIT = 60
ResultFormat = Literal["json", "text", "paritysol", "binary"]
ProgressCallback = Callable[["Job"], None]


class Client(PartsMixin):
    """A connection to one egsolve server.

    ``url`` defaults to ``$EGSOLVE_SERVER`` (else ``http://127.0.0.1:8080``) and ``token``
    to ``$EGSOLVE_TOKEN``, as for the ``egsolve`` command-line client. ``timeout`` bounds
    connecting and each read (long polls get their wait on top). ``retries`` is how many
    times in a row a request that is safe to repeat is sent again after a network failure.
    ``parts_above``, ``part_size`` and ``connections`` are the defaults of :meth:`submit`'s
    uploads in parts (files of at least 256 MiB go in parts of 64 MiB, 8 at once).
    The client is thread-safe; close it (or use ``with``) to release its connections.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        *,
        timeout: float = 30.0,
        retries: int = 5,
        backoff: float = 0.25,
        transport: Optional[httpx.BaseTransport] = None,
        parts_above: int = parts.DEFAULT_PARTS_ABOVE,
        part_size: int = parts.DEFAULT_PART_SIZE,
        connections: int = parts.DEFAULT_CONNECTIONS,
    ) -> None:
        from . import __version__

        self.url = (url or os.environ.get("EGSOLVE_SERVER") or DEFAULT_SERVER).rstrip("/")
        self.token = token if token is not None else os.environ.get("EGSOLVE_TOKEN")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.parts_above = parts_above
        self.part_size = part_size
        self.connections = connections
        headers = {"User-Agent": f"egsolve-python/{__version__}"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        self._http = httpx.Client(
            base_url=self.url,
            headers=headers,
            timeout=httpx.Timeout(timeout),
            limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=32),
            transport=transport,
        )

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connections."""
        self._http.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r}, token={'…' if self.token else None})"

    # ---- jobs ----------------------------------------------------------------------
    def submit(
        self,
        source: uploads.Source,
        *,
        backend: Optional[str] = None,
        priority: Optional[int] = None,
        time_limit: Optional[int] = None,
        format: Optional[str] = None,
        returns: Optional[str] = None,
        credits: Optional[bool] = None,
        reuse: Optional[bool] = None,
        compress: Optional[str] = "auto",
        idempotency_key: Optional[str] = None,
        convert: Union[bool, str, "os.PathLike[str]"] = False,
        parts_above: Optional[int] = None,
        part_size: Optional[int] = None,
        connections: Optional[int] = None,
        upload_id: Optional[str] = None,
    ) -> "Job":
        """Submits an arena: a path, bytes, or a binary file object.

        Options left ``None`` take the server's defaults: ``backend`` (``auto``, ``gpu``,
        ``cpu``, ``reference``), ``priority`` (-1000…1000, higher first), ``time_limit``
        (seconds), ``format`` (``auto``, ``mpg``, ``gm``, ``json``), ``returns``
        (``credits`` or ``strategies``), ``credits`` (parity games: ``True`` also computes
        the energy reduction's credits; by default a parity game is answered with winners
        and strategies only), ``reuse`` (``False``: solve anew even when an identical
        finished job could answer at once; by default such a job is ``reused``). Plain text files of 64 KiB or more are compressed
        for the upload (``compress``: ``"auto"``, ``"zstd"``, ``"gzip"`` or ``None``);
        ``egb`` goes as it is under ``"auto"``.

        ``convert=True`` converts the arena to the binary ``egb`` format first by running
        ``egsolve convert --to egb`` (the ``egsolve`` on ``PATH``, or the binary ``convert``
        names), so the server maps it instead of parsing text; without such a binary, or if
        the conversion fails, the arena is sent as it is. Raises
        :class:`~egsolve.MalformedArena` (with ``line`` and ``column``),
        :class:`~egsolve.TooManyJobs`, :class:`~egsolve.ArenaRefused` (too large, or
        ``exceeds-memory``: ``needed_bytes``, ``available_bytes``) and the other
        :class:`~egsolve.ApiError` kinds.

        A path of at least ``parts_above`` bytes (by default the client's, 256 MiB) is sent
        in parts (:meth:`upload_in_parts`: parts of ``part_size`` bytes, ``connections`` at
        once, each checksummed and sent again on its own when its connection breaks), its
        bytes as they are (the server tells compressed files by their magic bytes; a plain
        text file is not compressed on the way), unless ``compress`` names an encoding
        (``"zstd"``, ``"gzip"``): then it goes compressed, as one request. ``upload_id``
        finishes an upload in parts of this file begun before (the ``upload_id`` of an
        :class:`~egsolve.UploadFailed`): only the parts the server lacks are sent. Against a
        server without uploads in parts (``POST /v1/uploads`` is 404 ``not-found``) the file
        goes as one request. Sending parts raises :class:`~egsolve.UploadFailed` (naming the
        upload to resume) and :class:`~egsolve.TooManyUploads`; any error after the upload
        was made carries its ``upload_id`` (the upload stays on the server until it is used,
        deleted or expires).
        """
        if upload_id is not None and not isinstance(source, (str, os.PathLike)):
            raise ValueError("upload_id= finishes the upload in parts of a file: give its path")
        name = uploads.source_name(source)
        params = uploads.submit_params(
            backend, priority, time_limit, format, returns, credits, reuse
        )
        with uploads.converted(source, uploads.find_egsolve(convert)) as sent:
            if isinstance(sent, (str, os.PathLike)) and (
                upload_id is not None or self._goes_in_parts(sent, compress, parts_above)
            ):
                job = self._submit_in_parts(
                    os.fspath(sent),
                    name=name,
                    part_size=part_size,
                    connections=connections,
                    upload_id=upload_id,
                    params=params,
                    idempotency_key=idempotency_key,
                )
                if job is not None:
                    return job
            return self._submit(sent, name, compress, params, idempotency_key)

    def submit_by_reference(
        self, path: Union[str, "os.PathLike[str]"], **options: Unpack[uploads.SubmitOptions]
    ) -> "Job":
        """Submits the file at ``path`` on the server's file system, by reference: the server
        copies it from one of its import roots (``egsolve serve --import-root DIR``) instead
        of receiving the bytes, so a large file shared with the server costs no upload.

        ``path`` is resolved here when it exists here (links followed), else it must be
        absolute: it names the file as the server sees it. The token needs the ``import``
        permission. The job is about the bytes as the server copied them; later changes of
        the file do not reach it. ``options`` are those of :meth:`submit` that are not about
        sending the arena (:class:`~egsolve.upload.SubmitOptions`). Raises
        :class:`~egsolve.ReferenceRefused` (its ``kind`` says why: outside the roots, not a
        regular file, no permission, …), :class:`~egsolve.InsufficientStorage` and the other
        :class:`~egsolve.ApiError` kinds.
        """
        local = Path(path)
        if local.exists():
            local = local.resolve()
        elif not local.is_absolute():
            raise ValueError(f"{path!s} does not exist here: pass the absolute path the server sees")
        params = uploads.options_params(options)
        body = uploads.reference(str(local))
        data = self._submission("/v1/jobs", params, body, options.get("idempotency_key"))
        return Job(self, JobInfo.from_json(data), source=str(local))

    def submit_batch(
        self,
        sources: Iterable[uploads.Source],
        *,
        names: Optional[Sequence[str]] = None,
        backend: Optional[str] = None,
        priority: Optional[int] = None,
        time_limit: Optional[int] = None,
        format: Optional[str] = None,
        returns: Optional[str] = None,
        credits: Optional[bool] = None,
        reuse: Optional[bool] = None,
        compress: Optional[str] = "auto",
        idempotency_key: Optional[str] = None,
    ) -> Batch:
        """Submits many arenas in one request (``POST /v1/batches``) and returns the
        :class:`~egsolve.Batch`: the way to send many small games.

        ``sources`` are what :meth:`submit` takes (paths, bytes, binary file objects; each
        may be compressed), sent as the members of one tar archive, named by ``names`` (by
        default a path's or file's base name, ``arena-INDEX`` for bytes; a ``ValueError``,
        before anything is sent, when two are the same). The options are those of
        :meth:`submit` and apply to every member; ``compress`` is the archive's (``"auto"``:
        compressed from 256 KiB on). Members the server refuses (malformed, too large, …) are
        in ``batch.refused`` and the others are queued as ``batch.jobs``. Raises
        :class:`~egsolve.BatchRefused` when every member is refused (its ``errors`` says why
        for each), :class:`~egsolve.MalformedBatch` when the archive is refused as a whole
        (too many members for the server), :class:`~egsolve.TooManyJobs` when the members do
        not fit the per-user limit (nothing is made), and the other
        :class:`~egsolve.ApiError` kinds. Like :meth:`submit`, the request carries an
        ``Idempotency-Key`` (``idempotency_key``, or a fresh one), so a batch whose answer was
        lost is sent again and answered with the batch the first request made (each job with
        its state then; the refused members are not listed again).
        """
        items = list(sources)
        if not items:
            raise ValueError("a batch needs at least one arena")
        chosen = batches.member_names(items, names)
        body = batches.archive_body(batches.archive(items, chosen), compress)
        params = uploads.submit_params(
            backend, priority, time_limit, format, returns, credits, reuse
        )
        return batches.submitted(self, self._submission("/v1/batches", params, body, idempotency_key))

    def solve_batch(
        self,
        sources: Iterable[uploads.Source],
        *,
        results: str = "json",
        names: Optional[Sequence[str]] = None,
        compress: Optional[str] = "auto",
        **options: Unpack[uploads.SubmitOptions],
    ) -> SolvedBatch:
        """Submits many arenas in one request and reads their results in the same exchange
        (``POST /v1/batches?results=FORMAT``): one round trip for a pipeline's many small
        games, whose members the server may solve while it receives the batch.

        ``sources``, ``names``, ``compress`` and the job options (``backend=``,
        ``priority=``, …, ``idempotency_key=``) are those of :meth:`submit_batch`;
        ``results`` is the results' format (``json``, ``text``, ``paritysol`` or
        ``binary``). Returns a :class:`~egsolve.SolvedBatch`: its ``batch`` (refused
        members in ``batch.refused``), and, iterated, a :class:`~egsolve.BatchResult` per
        accepted member as its job ends. Raises what :meth:`submit_batch` raises. The
        request is sent again with its ``Idempotency-Key`` while no answer has arrived; a
        results stream that breaks off goes on at ``GET /v1/batches/{id}/results``, nothing
        given twice. A server from before ``?results=`` is asked the older way.
        """
        items = list(sources)
        if not items:
            raise ValueError("a batch needs at least one arena")
        batches._extension(results)
        params = uploads.options_params(options)
        body = batches.archive_body(batches.archive(items, batches.member_names(items, names)), compress)
        key = options.get("idempotency_key") or uuid.uuid4().hex
        return batches.solve(self, params, body, key, results)

    def batch(self, batch_id: str) -> Batch:
        """The batch with this id (raises :class:`~egsolve.NotFound` for other users'
        batches); its ``refused`` is empty: the server keeps only the accepted members."""
        return Batch(self, batches.BatchInfo.from_json(self._json("GET", f"/v1/batches/{batch_id}")))

    def _submit(
        self,
        source: uploads.Source,
        name: str,
        compress: Optional[str],
        params: Dict[str, Any],
        idempotency_key: Optional[str],
    ) -> "Job":
        """:meth:`submit` of ``source`` as one request (``params`` from
        :func:`~egsolve.upload.submit_params`), its job's ``source`` being ``name``."""
        body = dataclasses.replace(uploads.prepare(source, compress), name=name)
        data = self._submission("/v1/jobs", params, body, idempotency_key)
        return Job(self, JobInfo.from_json(data), source=name)

    def job(self, job_id: str) -> "Job":
        """The job with this id (raises :class:`~egsolve.NotFound` for other users' jobs)."""
        return Job(self, self._job_info(job_id))

    def _job_info(self, job_id: str, wait: int = 0) -> JobInfo:
        params = {"wait": wait} if wait else None
        data = self._json(
            "GET", f"/v1/jobs/{job_id}", params=params, read_timeout=self.timeout + wait
        )
        return JobInfo.from_json(data)

    def iter_jobs(self, state: Optional[str] = None, page_size: int = 100) -> Iterator["Job"]:
        """Every job of the caller (of everyone for admins), newest first, page by page."""
        cursor: Optional[str] = None
        while True:
            params: Dict[str, Any] = {"limit": page_size}
            if state:
                params["state"] = state
            if cursor:
                params["cursor"] = cursor
            page = self._json("GET", "/v1/jobs", params=params)
            for data in page["jobs"]:
                yield Job(self, JobInfo.from_json(data))
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def jobs(self, state: Optional[str] = None, limit: Optional[int] = None) -> List["Job"]:
        """The caller's jobs (everyone's for admins), newest first; at most ``limit``."""
        out: List[Job] = []
        size = min(500, limit) if limit else 500
        for job in self.iter_jobs(state, page_size=size):
            if limit is not None and len(out) >= limit:
                break
            out.append(job)
        return out

    def devices(self) -> Devices:
        """The GPUs, the CPU pool and the queue depth."""
        return Devices.from_json(self._json("GET", "/v1/devices"))

    def usage(self) -> Dict[str, Any]:
        """``GET /v1/usage``: slots busy now and busy fractions per minute over the last hour."""
        return self._json("GET", "/v1/usage")  # type: ignore[no-any-return]

    def whoami(self) -> Caller:
        """Who the token belongs to (``user`` is None when no token is given and auth is on)."""
        data = self._json("GET", "/v1/whoami")
        return Caller(
            user=data["user"],
            role=data["role"],
            auth=data["auth"],
            by_reference=data.get("by_reference", False),
            results_by_reference=data.get("results_by_reference", False),
        )

    def submit_many(
        self,
        sources: Iterable[uploads.Source],
        *,
        max_in_flight: int = 8,
        timeout: Optional[float] = None,
        on_finished: Optional[Callable[["Job"], None]] = None,
        **options: Any,
    ) -> List["Job"]:
        """Submits every source and waits for all; returns the finished jobs in input order.

        Two or more sources of at most 64 MiB together (paths, bytes or seekable files) go
        as batches (:meth:`submit_batch`, 1,000 arenas a request at most) and are waited for
        by reading their batches. Otherwise, and where the server does not take a batch as a
        whole (a server without batches; a batch over the per-user limit or the server's
        ``--max-batch-jobs``), each source is a submission of its own: at most ``max_in_flight`` of those are queued or
        running at once (a ``429`` from the per-user limit is waited out). ``options`` are
        those of :meth:`submit` (``convert`` or ``idempotency_key`` make every source a
        submission of its own); ``on_finished`` is called (from a worker thread) as each job
        is seen finished. If some submissions fail, :class:`~egsolve.BatchError` carries the
        jobs that did run and the errors of the others (a member a batch refused gets the
        error a submission of its own would have raised, e.g. :class:`~egsolve.MalformedArena`).
        """
        items = list(sources)
        deadline = None if timeout is None else time.monotonic() + timeout
        jobs: List[Optional[Job]] = [None] * len(items)
        errors: Dict[int, BaseException] = {}
        lock = threading.Lock()
        made: List[Batch] = []
        rest = list(range(len(items)))
        index_of: Dict[str, int] = {}
        if batches.suits_batches(items, options):
            made, rest, index_of = batches.submit_in_batches(self, items, options, jobs, errors)

        def remaining() -> Optional[float]:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        def run(index: int) -> None:
            try:
                job = self._submit_patiently(items[index], deadline, options)
                jobs[index] = job
                job.wait(timeout=remaining())
                if on_finished:
                    on_finished(job)
            except BaseException as e:  # noqa: BLE001 - reported through BatchError
                with lock:
                    errors[index] = e

        def finished(job: Job) -> None:
            try:
                if on_finished:
                    on_finished(job)
            except BaseException as e:  # noqa: BLE001 - reported through BatchError
                with lock:
                    errors[index_of[job.id]] = e

        def wait_for_batches() -> None:
            try:
                batches.wait_all(made, remaining(), finished)
            except EgsolveError as e:
                with lock:
                    for batch in made:
                        for job in batch.members.values():
                            if not job.finished:
                                errors.setdefault(index_of[job.id], e)

        with ThreadPoolExecutor(max_workers=max(1, max_in_flight) + (1 if made else 0)) as pool:
            waiting = pool.submit(wait_for_batches) if made else None
            list(pool.map(run, rest))
            if waiting is not None:
                waiting.result()
        if errors:
            raise BatchError(jobs, errors)
        return [j for j in jobs if j is not None]

    def _submit_patiently(
        self, source: uploads.Source, deadline: Optional[float], options: Dict[str, Any]
    ) -> "Job":
        delay = 0.5
        while True:
            try:
                return self.submit(source, **options)
            except TooManyJobs as e:
                wait = e.retry_after or delay
                if deadline is not None and time.monotonic() + wait > deadline:
                    raise
                if e.upload_id is not None:  # sent in parts: the server has the file
                    options = {**options, "upload_id": e.upload_id}
                time.sleep(wait * (0.5 + random.random()))
                delay = min(10.0, delay * 2)


class Job:
    """A submitted arena. ``info`` is the latest view of it (:class:`~egsolve.JobInfo`);
    ``source`` names what was submitted (the path, when it was one).
    """

    def __init__(self, client: Client, info: JobInfo, source: Optional[str] = None) -> None:
        self.client = client
        self.info = info
        self.source = source

    def __repr__(self) -> str:
        return f"Job({self.id!r}, state={self.state!r}, source={self.source!r})"

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def state(self) -> str:
        """``queued``, ``running``, ``succeeded``, ``failed`` or ``cancelled``."""
        return self.info.state

    @property
    def finished(self) -> bool:
        return self.info.finished

    @property
    def summary(self) -> Optional[Summary]:
        """The solution's summary once succeeded."""
        return self.info.summary

    def refresh(self) -> "Job":
        """Reads the job again."""
        self.info = self.client._job_info(self.id)
        return self

    def wait(
        self,
        timeout: Optional[float] = None,
        progress: Optional[ProgressCallback] = None,
        interval: float = 1.0,
    ) -> "Job":
        """Waits until the job is finished (in any state) and returns it.

        Uses the server's long poll, so an idle wait costs one request a minute. With a
        ``progress`` callback the job is read at least every ``interval`` seconds and the
        callback gets it each time (``job.info.progress`` has the counters). A dropped
        connection is retried. Raises :class:`~egsolve.WaitTimeout` after ``timeout``
        seconds (the job goes on).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.finished:
            longest = max(1, int(interval)) if progress else MAX_WAIT
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise WaitTimeout(f"job {self.id} is still {self.state} after {timeout} s")
                longest = max(1, min(longest, int(remaining + 0.999)))
            self.info = self.client._job_info(self.id, wait=longest)
            if progress:
                progress(self)
        return self

    def _finished_successfully(self, timeout: Optional[float]) -> None:
        self.wait(timeout)
        if self.state != "succeeded":
            failure = self.info.raw.get("failure")
            raise JobFailed(self.id, self.state, failure)

    @overload
    def result(
        self,
        format: Literal["json"] = ...,
        *,
        vertices: Optional[Sequence[int]] = ...,
        timeout: Optional[float] = ...,
    ) -> Result: ...

    @overload
    def result(
        self,
        format: Literal["text", "paritysol"],
        *,
        vertices: Optional[Sequence[int]] = ...,
        timeout: Optional[float] = ...,
    ) -> str: ...

    @overload
    def result(
        self,
        format: Literal["binary"],
        *,
        vertices: None = ...,
        timeout: Optional[float] = ...,
    ) -> BinaryResult: ...

    def result(
        self,
        format: str = "json",
        *,
        vertices: Optional[Sequence[int]] = None,
        timeout: Optional[float] = None,
    ) -> Union[Result, str, BinaryResult]:
        """The solution, waiting for the job first if needed.

        ``format="json"`` gives a :class:`~egsolve.Result` (winners, credits with ``None``
        for ⊤, strategies, summary); ``"text"`` (``ID CREDIT [STRATEGY]`` lines) and
        ``"paritysol"`` (PGSolver's format) give the text; ``"binary"`` gives a
        :class:`~egsolve.BinaryResult` of NumPy arrays (credits as uint64 with
        :data:`~egsolve.TOP` for ⊤, strategies as uint32 with :data:`~egsolve.NO_MOVE`;
        every vertex, strategies always included; needs ``numpy``, else
        :class:`~egsolve.MissingNumpy`). ``vertices`` limits json/text/paritysol to those
        ids. Raises :class:`~egsolve.JobFailed` if the job failed or was cancelled.
        """
        if format not in ("json", "text", "paritysol", "binary"):
            raise ValueError(f"format must be json, text, paritysol or binary, not {format!r}")
        if format == "binary":
            if vertices is not None:
                raise ValueError("format='binary' holds every vertex: index its arrays instead")
            from .binary import _numpy

            _numpy()  # a clear error before anything is downloaded
        self._finished_successfully(timeout)
        params: Dict[str, Any] = {"format": format}
        if vertices is not None:
            params["vertices"] = ",".join(str(v) for v in vertices)
        response = self.client._request("GET", f"/v1/jobs/{self.id}/result", params=params)
        if format == "json":
            return Result.from_json(response.json())
        if format == "binary":
            return parse_binary(response.content)
        return response.text

    def download(
        self, path: Union[str, "os.PathLike[str]"], format: ResultFormat = "json", timeout: Optional[float] = None
    ) -> Path:
        """Streams the solution to ``path`` (any size) and returns the path.

        A binary result (the server sends an ``ETag`` for it) whose download breaks off is
        resumed where it stopped, with ``Range`` and ``If-Range``; other formats start over.
        """
        self._finished_successfully(timeout)
        target = Path(path)
        written = 0
        tag: Optional[str] = None
        with open(target, "wb") as out:
            for attempt in range(self.client.retries + 1):
                headers = {}
                if written and tag is not None:
                    headers = {"Range": f"bytes={written}-", "If-Range": tag}
                elif written:
                    out.seek(0)
                    out.truncate()
                    written = 0
                try:
                    with self.client._http.stream(
                        "GET", f"/v1/jobs/{self.id}/result", params={"format": format}, headers=headers
                    ) as response:
                        if response.status_code >= 400:
                            response.read()
                            raise error_of(response)
                        if headers and not _resumes_at(response, written):
                            raise ConnectionFailed(
                                f"resuming the result of job {self.id} at byte {written}, the server "
                                "did not answer with those bytes; download it again"
                            )
                        if not written:
                            tag = response.headers.get("etag")
                        for chunk in response.iter_bytes():
                            out.write(chunk)
                            written += len(chunk)
                    return target
                except httpx.TransportError as e:
                    if attempt == self.client.retries:
                        raise ConnectionFailed(f"cannot reach {self.client.url}: {e!r}") from e
                    time.sleep(self.client._delay(attempt + 1))
        raise AssertionError("unreachable")

    def export(
        self,
        path: Union[str, "os.PathLike[str]"],
        format: ResultFormat = "binary",
        timeout: Optional[float] = None,
        replace: bool = False,
    ) -> Dict[str, Any]:
        """Has the server write the solution to ``path`` on its own file system (under one of
        its export roots, ``egsolve serve --export-root DIR``) instead of downloading it:
        where the server shares a file system with you, a large binary result costs no
        transfer (on the store's file system the file is a hard link to the stored result).

        ``path`` is resolved here when its directory exists here, else it must be absolute:
        it names the file as the server sees it. The token needs the ``import`` permission.
        A file of that name is replaced only with ``replace`` (else ``export-exists``). The
        request is not sent again once it left (a large rendering may take a while; waiting
        for it has no time limit). Returns the server's answer (``path``, ``format``,
        ``bytes``, ``linked``). Raises :class:`~egsolve.ExportRefused` (its ``kind`` says why),
        :class:`~egsolve.InsufficientStorage` and the other :class:`~egsolve.ApiError` kinds.
        """
        self._finished_successfully(timeout)
        target = Path(path)
        if target.parent.exists():
            target = target.parent.resolve() / target.name
        elif not target.is_absolute():
            raise ValueError(f"{path!s}: its directory does not exist here; pass the absolute path the server sees")
        request = {"path": str(target), "format": format, "replace": replace}
        body = uploads.json_body(request, "application/json", str(target))
        data: Dict[str, Any] = self.client._json(
            "POST", f"/v1/jobs/{self.id}/result/export", body=body, retry="unsent", read_timeout=86400.0
        )
        return data

    def histogram(self, bins: int = 20) -> Histogram:
        """Finite credits in ``bins`` equal-width bins, and the vertices each player wins."""
        self._finished_successfully(None)
        data = self.client._json(
            "GET", f"/v1/jobs/{self.id}/result/histogram", params={"bins": bins}
        )
        return Histogram.from_json(data)

    def cancel(self) -> "Job":
        """Cancels the job (a queued one never runs, a running one stops within a second)."""
        try:
            data = self.client._json("DELETE", f"/v1/jobs/{self.id}")
            self.info = JobInfo.from_json(data)
        except JobFinished:
            # Finished meanwhile — or an earlier attempt whose answer was lost cancelled it.
            self.refresh()
            if self.state != "cancelled":
                raise
        return self


def _resumes_at(response: httpx.Response, at: int) -> bool:
    """Whether ``response`` is the rest of a result from byte ``at`` (``206`` whose
    ``Content-Range`` starts there)."""
    if response.status_code != 206:
        return False
    value = response.headers.get("content-range", "")
    first = value.removeprefix("bytes ").split("-", 1)[0]
    return first.isdigit() and int(first) == at
