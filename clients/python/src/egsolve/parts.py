"""Uploads in parts: a large file sent over several connections at once, each part
checksummed, resumable.

The protocol (the service's ``openapi.yaml`` has it whole): ``POST /v1/uploads``
``{"size": N, "part_size": P}`` makes an upload; ``PUT /v1/uploads/{id}/parts/{n}`` sends
part ``n`` (bytes ``n·P`` onwards, ``P`` of them but the last) with its SHA-256 in a
``Content-Digest`` header (RFC 9530), in any order, over any number of connections;
``GET /v1/uploads/{id}`` says which parts arrived; ``POST /v1/jobs`` with a body
``{"upload": id}`` of media type :data:`UPLOAD_MEDIA_TYPE` makes the job. The file's bytes
go as they are: the server tells compressed files by their magic bytes. :class:`PartsMixin`
holds the :class:`~egsolve.Client` methods that use it.

Retries: a part is sent again (``client.retries`` times in a row) after a broken
connection, a timeout, a 5xx answer, and the server's ``part-damaged``,
``upload-interrupted`` and ``part-in-progress`` (after its ``Retry-After``); a part that
arrived before with the same bytes is acknowledged again, never doubled. ``part-conflict``
(the part arrived before with other bytes) and the other refusals end the upload's
sending. ``POST /v1/uploads`` is not idempotent (each upload allocates a file of its size
on the server), so it is sent again only when no connection could be made.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Set, Union, cast

import httpx

from .errors import ConnectionFailed, EgsolveError, NotFound, UploadFailed
from .models import JobInfo, Upload
from .session import Session, error_of
from .upload import Body, SubmitOptions, json_body, options_params

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Unpack

    from .client import Client, Job

__all__ = ["DEFAULT_CONNECTIONS", "DEFAULT_PARTS_ABOVE", "DEFAULT_PART_SIZE", "UPLOAD_MEDIA_TYPE", "send_parts"]

#: The media type of a job request naming an upload in parts.
UPLOAD_MEDIA_TYPE = "application/vnd.egsolve.upload+json"
#: Files of at least this many bytes are sent in parts by :meth:`Client.submit`.
DEFAULT_PARTS_ABOVE = 256 << 20
#: Bytes per part (the server takes 64 KiB to 1 GiB, at most 10,000 parts an upload).
DEFAULT_PART_SIZE = 64 << 20
#: Parts sent at once, each over its own connection.
DEFAULT_CONNECTIONS = 8
#: Connections the client keeps to its server at most (parts sent at once, too).
MAX_CONNECTIONS = 100
#: Problem kinds after which a part is sent again.
SEND_AGAIN = frozenset({"part-damaged", "part-in-progress", "upload-interrupted"})

#: Called with the bytes the server holds and the file's size.
PartsProgress = Callable[[int, int], None]


def new_upload(size: int, part_size: int) -> Body:
    """The body of ``POST /v1/uploads``."""
    return json_body({"size": size, "part_size": part_size}, "application/json", "<upload>")


def job_request(upload_id: str) -> Body:
    """The body of ``POST /v1/jobs`` naming the upload ``upload_id``."""
    return json_body({"upload": upload_id}, UPLOAD_MEDIA_TYPE, upload_id)


def content_digest(data: bytes) -> str:
    """The ``Content-Digest`` header of ``data``: ``sha-256=:<base64 of its SHA-256>:``."""
    return f"sha-256=:{base64.b64encode(hashlib.sha256(data).digest()).decode()}:"


def read_part(path: str, offset: int, length: int) -> bytes:
    """``length`` bytes of the file at ``path`` from ``offset``; an ``OSError`` when the file
    ends before (it shrank since the upload was made)."""
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    if len(data) != length:
        raise OSError(
            f"{path} ends at byte {offset + len(data)}, inside part bytes {offset}..{offset + length}: "
            "the file changed since its upload began"
        )
    return data


def send_part(client: "PartsMixin", upload_id: str, number: int, data: bytes) -> None:
    """``PUT`` part ``number`` of upload ``upload_id``, again on the failures worth retrying
    (see the module's docstring); raises the last failure once ``client.retries`` retries
    in a row are spent, or at once for a refusal."""
    path = f"/v1/uploads/{upload_id}/parts/{number}"
    headers = {"Content-Type": "application/octet-stream", "Content-Digest": content_digest(data)}
    failures = 0
    while True:
        wait: Optional[float] = None
        try:
            response = client._http.request("PUT", path, content=data, headers=headers)
        except httpx.TransportError as e:
            failure: Exception = ConnectionFailed(
                f"cannot send part {number} of upload {upload_id} to {client.url}: {e!r}"
            )
            failure.__cause__ = e
        else:
            if response.status_code < 400:
                return
            error = error_of(response)
            if response.status_code < 500 and error.kind not in SEND_AGAIN:
                raise error
            failure, wait = error, error.retry_after
        failures += 1
        if failures > client.retries:
            raise failure
        time.sleep(wait if wait is not None else client._delay(failures))


def send_parts(
    client: "PartsMixin",
    upload: Upload,
    path: str,
    connections: int,
    progress: Optional[PartsProgress] = None,
) -> None:
    """Sends the parts of ``path`` that ``upload`` lacks, ``connections`` at once (each
    read when its turn comes, so ``connections × part_size`` bytes are in memory at most).
    The first failure stops the rest (parts already on their way finish) and is raised as
    :class:`~egsolve.UploadFailed`, which names the upload and the parts still missing."""
    missing = upload.missing
    if not missing:
        return
    lock = threading.Lock()
    stop = threading.Event()
    sent: Set[int] = set()
    failed: List[Exception] = []
    held = [upload.received_bytes]
    if progress:
        progress(held[0], upload.size)

    def one(number: int) -> None:
        if stop.is_set():
            return
        try:
            length = upload.part_length(number)
            send_part(client, upload.id, number, read_part(path, number * upload.part_size, length))
            with lock:
                sent.add(number)
                held[0] += length
                if progress:
                    progress(held[0], upload.size)
        except Exception as e:  # noqa: BLE001 - raised below as UploadFailed
            with lock:
                failed.append(e)
            stop.set()

    with ThreadPoolExecutor(max_workers=max(1, min(connections, len(missing)))) as pool:
        try:
            for future in [pool.submit(one, n) for n in missing]:
                future.result()
        finally:
            stop.set()  # an interrupted wait (Ctrl-C) leaves the queued parts unsent
    if failed:
        raise UploadFailed(upload.id, [n for n in missing if n not in sent], failed[0]) from failed[0]


class PartsMixin(Session):
    """The methods of :class:`~egsolve.Client` for uploads in parts (:meth:`upload_in_parts`,
    :meth:`upload`, :meth:`delete_upload`, :meth:`submit_upload`, and the parts branch of
    :meth:`~egsolve.Client.submit`); ``Client`` is the only class that inherits them."""

    #: The defaults of :meth:`~egsolve.Client.submit`'s uploads in parts (set by
    #: ``Client.__init__``).
    parts_above: int
    part_size: int
    connections: int

    def upload_in_parts(
        self,
        path: Union[str, "os.PathLike[str]"],
        *,
        part_size: Optional[int] = None,
        connections: Optional[int] = None,
        upload_id: Optional[str] = None,
        progress: Optional[PartsProgress] = None,
    ) -> Upload:
        """Sends the file at ``path`` as an upload in parts and returns the
        :class:`~egsolve.Upload` (every part received); :meth:`submit_upload` makes a job of
        it.

        The file goes as it is (compressed or not), in parts of ``part_size`` bytes (64 KiB to
        1 GiB, at most 10,000 parts; by default the client's, 64 MiB) over ``connections``
        connections at once (by default the client's, 8; at most 100). Each part carries its
        SHA-256 and is sent again on its own after a broken connection, a timeout, a 5xx or
        a part the server got damaged (``client.retries`` times in a row). With
        ``upload_id`` the upload begun before for this file is finished: only the parts the
        server lacks are sent (``part_size`` is the upload's). ``progress`` is called with
        the bytes the server holds and the file's size, at the start and after each part
        (from the sending threads). Raises :class:`~egsolve.UploadFailed` when a part cannot
        be sent (its ``upload_id`` names the upload to finish later), ``ValueError`` when
        ``upload_id``'s upload is for a file of another size, :class:`~egsolve.NotFound`
        (no such upload; ``not-found``: a server without uploads in parts),
        :class:`~egsolve.TooManyUploads`, :class:`~egsolve.ArenaRefused` (``too-large``),
        :class:`~egsolve.InsufficientStorage` and the other :class:`~egsolve.ApiError` kinds.
        """
        local = os.fspath(path)
        made = self._begin_upload(local, os.path.getsize(local), part_size, upload_id)
        return self._send_parts(made, local, connections, progress)

    def upload(self, upload_id: str) -> Upload:
        """The upload in parts with this id: which parts arrived (raises
        :class:`~egsolve.NotFound` for unknown, expired, deleted or other users' uploads)."""
        return Upload.from_json(self._json("GET", f"/v1/uploads/{upload_id}"))

    def delete_upload(self, upload_id: str) -> None:
        """Ends an upload in parts and removes what arrived (raises
        :class:`~egsolve.NotFound` when there is no such upload)."""
        self._request("DELETE", f"/v1/uploads/{upload_id}")

    def submit_upload(self, upload_id: str, **options: Unpack[SubmitOptions]) -> "Job":
        """Makes a job of the upload in parts ``upload_id``, every part of which arrived
        (``POST /v1/jobs`` naming it); asked again, the same upload gives another job on the
        same arena. ``options`` are those of :meth:`submit` that are not about sending the
        arena (:class:`~egsolve.upload.SubmitOptions`: ``backend``, ``priority``,
        ``time_limit``, ``format``, ``returns``, ``credits``, ``idempotency_key``; another
        keyword is a ``TypeError``). Raises
        :class:`~egsolve.UploadIncomplete` (its ``missing`` lists the parts to send first),
        :class:`~egsolve.NotFound` (no such upload), :class:`~egsolve.MalformedArena` (the
        upload is then gone) and the other :class:`~egsolve.ApiError` kinds.
        """
        params = options_params(options)
        return self._submit_upload(upload_id, None, params, options.get("idempotency_key"))

    def _goes_in_parts(
        self, path: Union[str, "os.PathLike[str]"], compress: Optional[str], parts_above: Optional[int]
    ) -> bool:
        """Whether :meth:`submit` sends the file at ``path`` in parts: at least
        ``parts_above`` bytes (and some), and no compression asked for by name."""
        if compress not in ("auto", None, "none"):
            return False  # compressed on the way (or an unknown ``compress``: refused there)
        threshold = self.parts_above if parts_above is None else parts_above
        try:
            return os.path.getsize(path) >= max(1, threshold)
        except OSError:
            return False  # the plain upload says what is wrong with it

    def _begin_upload(
        self, path: str, size: int, part_size: Optional[int], upload_id: Optional[str]
    ) -> Upload:
        """A new upload for a file of ``size`` bytes, or the upload ``upload_id`` when it is
        one for a file of that size."""
        if upload_id is not None:
            made = self.upload(upload_id)
            if made.size != size:
                raise ValueError(
                    f"upload {upload_id} is for a file of {made.size} bytes and {path} has {size}: "
                    "name the upload of this file"
                )
            return made
        body = new_upload(size, part_size or self.part_size)
        return Upload.from_json(self._json("POST", "/v1/uploads", body=body, retry="unsent"))

    def _send_parts(
        self, made: Upload, path: str, connections: Optional[int], progress: Optional[PartsProgress]
    ) -> Upload:
        """Sends the parts ``made`` lacks; the upload then."""
        if not made.missing:
            return made
        at_once = min(MAX_CONNECTIONS, connections or self.connections)
        send_parts(self, made, path, at_once, progress)
        return self.upload(made.id)

    def _submit_in_parts(
        self,
        path: str,
        *,
        name: str,
        part_size: Optional[int],
        connections: Optional[int],
        upload_id: Optional[str],
        params: Dict[str, Any],
        idempotency_key: Optional[str],
    ) -> Optional["Job"]:
        """:meth:`submit` of a file in parts; ``None`` when the server has no uploads in
        parts (then it goes as one request)."""
        try:
            made = self._begin_upload(path, os.path.getsize(path), part_size, upload_id)
        except NotFound as e:
            if upload_id is None and e.kind == "not-found":
                return None  # an older server: no POST /v1/uploads
            raise
        try:
            self._send_parts(made, path, connections, None)
            return self._submit_upload(made.id, name, params, idempotency_key)
        except EgsolveError as e:
            e.upload_id = made.id  # to submit again without sending it all again
            raise

    def _submit_upload(
        self, upload_id: str, name: Optional[str], params: Dict[str, Any], idempotency_key: Optional[str]
    ) -> "Job":
        from .client import Job  # the client module imports this one

        data = self._submission("/v1/jobs", params, job_request(upload_id), idempotency_key)
        return Job(cast("Client", self), JobInfo.from_json(data), source=name)
