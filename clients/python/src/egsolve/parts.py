"""Uploads in parts: a large file sent over several connections at once, each part
checksummed, resumable.

The protocol (the service's ``openapi.yaml`` has it whole): ``POST /v1/uploads``
``{"size": N, "part_size": P}`` makes an upload; ``PUT /v1/uploads/{id}/parts/{n}`` sends
part ``n`` (bytes ``n·P`` onwards, ``P`` of them but the last) with its SHA-256 in a
``Content-Digest`` header (RFC 9530), in any order, over any number of connections;
``GET /v1/uploads/{id}`` says which parts arrived; ``POST /v1/jobs`` with a body
``{"upload": id}`` of media type :data:`UPLOAD_MEDIA_TYPE` makes the job. The file's bytes
go as they are: the server tells compressed files by their magic bytes.

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
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Set

import httpx

from .errors import ConnectionFailed, UploadFailed
from .models import Upload
from .upload import Body

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client

__all__ = ["DEFAULT_CONNECTIONS", "DEFAULT_PARTS_ABOVE", "DEFAULT_PART_SIZE", "UPLOAD_MEDIA_TYPE", "send_parts"]

#: The media type of a job request naming an upload in parts.
UPLOAD_MEDIA_TYPE = "application/vnd.egsolve.upload+json"
#: Files of at least this many bytes are sent in parts by :meth:`Client.submit`.
DEFAULT_PARTS_ABOVE = 256 << 20
#: Bytes per part (the server takes 64 KiB to 1 GiB, at most 10,000 parts an upload).
DEFAULT_PART_SIZE = 64 << 20
#: Parts sent at once, each over its own connection.
DEFAULT_CONNECTIONS = 8
#: Problem kinds after which a part is sent again.
SEND_AGAIN = frozenset({"part-damaged", "part-in-progress", "upload-interrupted"})

#: Called with the bytes the server holds and the file's size.
PartsProgress = Callable[[int, int], None]


def _json_body(data: Dict[str, Any], media_type: str, name: str) -> Body:
    encoded = json.dumps(data).encode()
    return Body(chunks=lambda: iter([encoded]), headers={"Content-Type": media_type}, name=name, encoding=None)


def new_upload(size: int, part_size: int) -> Body:
    """The body of ``POST /v1/uploads``."""
    return _json_body({"size": size, "part_size": part_size}, "application/json", "<upload>")


def job_request(upload_id: str) -> Body:
    """The body of ``POST /v1/jobs`` naming the upload ``upload_id``."""
    return _json_body({"upload": upload_id}, UPLOAD_MEDIA_TYPE, upload_id)


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


def send_part(client: "Client", upload_id: str, number: int, data: bytes) -> None:
    """``PUT`` part ``number`` of upload ``upload_id``, again on the failures worth retrying
    (see the module's docstring); raises the last failure once ``client.retries`` retries
    in a row are spent, or at once for a refusal."""
    from .client import _error  # the client module imports this one

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
            error = _error(response)
            if response.status_code < 500 and error.kind not in SEND_AGAIN:
                raise error
            failure, wait = error, error.retry_after
        failures += 1
        if failures > client.retries:
            raise failure
        time.sleep(wait if wait is not None else client._delay(failures))


def send_parts(
    client: "Client",
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

