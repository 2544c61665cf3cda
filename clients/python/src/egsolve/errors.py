"""Exceptions of the egsolve client.

Every error the server answers is an RFC 9457 problem document; :class:`ApiError` carries
its fields (``type``, ``title``, ``status``, ``detail`` and, where the server gives them,
``line``/``column`` of a malformed arena and ``limit``). Subclasses name the kinds a
pipeline usually handles on their own.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Type

PROBLEM_PREFIX = "urn:egsolve:problem:"


class EgsolveError(Exception):
    """Base of every error this package raises.

    ``upload_id`` is set when the error ended a :meth:`Client.submit` that sent its file in
    parts after the upload was made (every part arrived, say, and the job was refused with
    :class:`TooManyJobs`): passing it as ``upload_id=`` to :meth:`Client.submit` sends only
    the parts the server lacks, none when all arrived. (An arena refused as malformed, too
    large or too big for the disk ends its upload: then that upload is not found.)
    """

    upload_id: Optional[str] = None


class ConnectionFailed(EgsolveError):
    """The server could not be reached (after the client's retries)."""


class WaitTimeout(EgsolveError):
    """:meth:`Job.wait` ran out of time; the job goes on on the server."""


class ApiError(EgsolveError):
    """The server answered with a problem document.

    Attributes mirror the problem's members: ``status``, ``type`` (the full URN), ``title``,
    ``detail``, and ``line``, ``column`` (malformed arenas, 1-based) and ``limit`` when
    present; ``retry_after`` is the ``Retry-After`` header in seconds, if any.
    """

    def __init__(self, status: int, problem: Dict[str, Any], retry_after: Optional[float] = None):
        self.status = status
        self.problem = problem
        self.type: str = str(problem.get("type", "about:blank"))
        self.title: str = str(problem.get("title", ""))
        self.detail: str = str(problem.get("detail", ""))
        self.line: Optional[int] = problem.get("line")
        self.column: Optional[int] = problem.get("column")
        self.limit: Optional[int] = problem.get("limit")
        self.retry_after = retry_after
        where = f" (line {self.line}, column {self.column})" if self.line is not None else ""
        super().__init__(f"{status} {self.kind}: {self.detail}{where}")

    @property
    def kind(self) -> str:
        """The problem's stable slug, e.g. ``malformed-arena``."""
        return self.type[len(PROBLEM_PREFIX):] if self.type.startswith(PROBLEM_PREFIX) else self.type


class Unauthorized(ApiError):
    """No token, or a token the server does not know (401)."""


class NotFound(ApiError):
    """No such job, batch or upload in parts (or not the caller's: ``job-not-found``,
    ``batch-not-found``, ``upload-not-found``) or no such endpoint (``not-found``) (404)."""


class InvalidParameter(ApiError):
    """A submission option or query parameter was refused (400)."""


class MalformedBatch(InvalidParameter):
    """A batch (``POST /v1/batches``) was refused as a whole (400): its body is not a tar
    archive, has no regular-file member, or has more members than the server takes
    (``egsolve serve --max-batch-jobs``). Nothing was made."""


class BatchRefused(ApiError):
    """Every member of a batch was refused (400, ``batch-refused``); nothing was made.

    ``members`` is the problem's list of ``{"name": ..., "error": {problem}}``; ``errors``
    maps each member's name to its error as an :class:`ApiError` (e.g.
    :class:`MalformedArena` with ``line`` and ``column``).
    """

    def __init__(self, status: int, problem: Dict[str, Any], retry_after: Optional[float] = None):
        super().__init__(status, problem, retry_after)
        self.members: List[Dict[str, Any]] = list(problem.get("members") or [])
        self.errors: Dict[str, ApiError] = {
            str(m.get("name")): member_error(m.get("error") or {}) for m in self.members
        }


class MalformedArena(ApiError):
    """The arena does not parse; ``line`` and ``column`` say where (422)."""


class ArenaRefused(ApiError):
    """The arena parses but is refused: too large, its bound overflows, or its solve needs
    more memory than a job may have on the server (``exceeds-memory``: the problem's
    ``needed_bytes``, ``available_bytes`` and ``setting`` are in :attr:`problem`)."""


class InsufficientStorage(ApiError):
    """The server's disk has no room for the arena (507): its size does not fit the free
    space less the server's reserve (``needed_bytes`` and ``available_bytes`` are in
    :attr:`problem`), or the disk filled while it was stored. Nothing was made; retry later
    or ask the operator to free space."""


class ReferenceRefused(ApiError):
    """A job by reference was refused: the server has no import roots (``import-disabled``),
    the token lacks the ``import`` permission (``import-forbidden``), the path is not
    absolute or has ``..`` (``invalid-reference``), lies outside the import roots
    (``outside-import-roots``), does not exist (``reference-not-found``), is not a regular
    file (``not-a-regular-file``), cannot be read (``reference-unreadable``) or changed
    while it was copied (``reference-changed``); :attr:`kind` says which."""


class ExportRefused(ApiError):
    """A result by reference was refused: the server has no export roots
    (``export-disabled``), the token lacks the ``import`` permission (``export-forbidden``),
    the path is not absolute, has ``..`` or names a directory (``invalid-export``), its
    directory lies outside the export roots (``outside-export-roots``), does not exist
    (``export-directory-missing``), the server cannot write there (``export-unwritable``) or
    the file exists and replacing it was not asked for (``export-exists``); :attr:`kind`
    says which."""


class TooManyJobs(ApiError):
    """The caller has as many queued and running jobs as allowed (429); ``limit`` says how many."""


class TooManyUploads(ApiError):
    """The caller has as many open uploads in parts as allowed (429, ``too-many-uploads``);
    ``limit`` says how many. Finish (make a job of) or delete one
    (:meth:`Client.delete_upload`) first."""


class UploadIncomplete(ApiError):
    """A job was asked of an upload in parts before every part arrived (409,
    ``upload-incomplete``); ``missing`` lists the numbers of the parts still to send."""

    def __init__(self, status: int, problem: Dict[str, Any], retry_after: Optional[float] = None):
        super().__init__(status, problem, retry_after)
        self.missing: List[int] = [int(n) for n in problem.get("missing") or []]


class BackendUnavailable(ApiError):
    """The requested backend cannot run on this server (e.g. ``gpu`` without a GPU)."""


class JobFinished(ApiError):
    """The job already finished and cannot be cancelled (409)."""


class NoResult(ApiError):
    """The job has no result: it has not succeeded (409)."""


class IdempotencyConflict(ApiError):
    """An idempotency key was reused for a different submission (422)."""


_KINDS: Dict[str, Type[ApiError]] = {
    "unauthorized": Unauthorized,
    "job-not-found": NotFound,
    "batch-not-found": NotFound,
    "malformed-batch": MalformedBatch,
    "batch-refused": BatchRefused,
    "not-found": NotFound,
    "invalid-parameter": InvalidParameter,
    "malformed-arena": MalformedArena,
    "too-large": ArenaRefused,
    "bound-overflow": ArenaRefused,
    "exceeds-memory": ArenaRefused,
    "too-many-jobs": TooManyJobs,
    "backend-unavailable": BackendUnavailable,
    "job-finished": JobFinished,
    "no-result": NoResult,
    "idempotency-key-reused": IdempotencyConflict,
    "insufficient-storage": InsufficientStorage,
    "import-disabled": ReferenceRefused,
    "import-forbidden": ReferenceRefused,
    "invalid-reference": ReferenceRefused,
    "outside-import-roots": ReferenceRefused,
    "reference-not-found": ReferenceRefused,
    "not-a-regular-file": ReferenceRefused,
    "reference-unreadable": ReferenceRefused,
    "reference-changed": ReferenceRefused,
    "export-disabled": ExportRefused,
    "export-forbidden": ExportRefused,
    "invalid-export": ExportRefused,
    "outside-export-roots": ExportRefused,
    "export-directory-missing": ExportRefused,
    "export-unwritable": ExportRefused,
    "export-exists": ExportRefused,
    "upload-not-found": NotFound,
    "invalid-upload": InvalidParameter,
    "too-many-uploads": TooManyUploads,
    "upload-incomplete": UploadIncomplete,
}


def api_error(status: int, problem: Dict[str, Any], retry_after: Optional[float] = None) -> ApiError:
    """The most specific :class:`ApiError` for a problem document."""
    kind = str(problem.get("type", ""))
    cls = _KINDS.get(kind[len(PROBLEM_PREFIX):], ApiError) if kind.startswith(PROBLEM_PREFIX) else ApiError
    return cls(status, problem, retry_after)


def member_error(problem: Dict[str, Any]) -> ApiError:
    """The :class:`ApiError` of one refused batch member (its problem's ``status``, else 400)."""
    status = problem.get("status")
    return api_error(status if isinstance(status, int) else 400, problem)


class JobFailed(EgsolveError):
    """A job ended without a result: ``state`` is ``failed`` or ``cancelled``.

    For failed jobs ``type``, ``message`` and (malformed arenas) ``line``/``column`` come
    from the job's ``failure``.
    """

    def __init__(self, job_id: str, state: str, failure: Optional[Dict[str, Any]] = None):
        self.job_id = job_id
        self.state = state
        failure = failure or {}
        self.type: Optional[str] = failure.get("type")
        self.message: str = failure.get("message", "cancelled" if state == "cancelled" else "")
        self.line: Optional[int] = failure.get("line")
        self.column: Optional[int] = failure.get("column")
        where = f" (line {self.line}, column {self.column})" if self.line is not None else ""
        what = f"{self.type}: {self.message}" if self.type else self.message
        super().__init__(f"job {job_id} {state}: {what}{where}")


class UploadFailed(EgsolveError):
    """Sending the parts of an upload in parts failed (a part whose connection kept
    breaking, one the server refused, a file that changed or shrank while it was read, …);
    what arrived stays on the server. ``upload_id`` names the upload: pass it as
    ``upload_id=`` to :meth:`Client.upload_in_parts` or :meth:`Client.submit` to send only
    the parts still ``missing`` (as far as this client knows), or delete it with
    :meth:`Client.delete_upload`. ``error`` is the first part's error (also the
    ``__cause__``): :class:`ConnectionFailed`, an :class:`ApiError` (e.g.
    ``part-conflict``: the part was received before with other bytes, the file is not the
    one the upload began with) or an ``OSError``.
    """

    upload_id: str

    def __init__(self, upload_id: str, missing: List[int], error: BaseException):
        self.upload_id = upload_id
        self.missing = missing
        self.error = error
        super().__init__(
            f"upload {upload_id}: {len(missing)} part(s) not sent ({error}); "
            f"send them with upload_id={upload_id!r}"
        )


class BatchError(EgsolveError):
    """Some submissions of :meth:`Client.submit_many` failed.

    ``jobs`` lists every source's job in input order (``None`` where submitting failed);
    ``errors`` maps those indexes to their exceptions (a member the batch endpoint refused
    gets the same :class:`ApiError` a submission of its own would have raised).
    """

    def __init__(self, jobs: List[Any], errors: Dict[int, BaseException]):
        self.jobs = jobs
        self.errors = errors
        first = min(errors)
        super().__init__(f"{len(errors)} of {len(jobs)} submissions failed; the first (#{first}): {errors[first]}")
