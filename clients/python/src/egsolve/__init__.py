"""Python client of the egsolve energy-game solving service.

>>> from egsolve import Client
>>> client = Client("http://127.0.0.1:8080", token="egs_...")
>>> job = client.submit("game.gm.gz", backend="auto")
>>> result = job.result()          # waits (long poll), then fetches the JSON solution
>>> result.winners[0], result.credits[0], result.summary.w0

Many small games: ``client.submit_batch(paths)`` sends them in one request (a tar archive)
and returns a :class:`Batch` whose ``results()`` streams each answer as its job finishes;
``client.solve_batch(paths)`` does both in one exchange (``POST /v1/batches?results=``);
``client.submit_many(paths)`` returns the finished jobs in input order (as batches when the
sources are small, else one request each).
Files the server can read itself (under its ``--import-root`` directories):
``client.submit_by_reference("/data/games/big.egb")`` sends the path, not the bytes.
Large games: ``client.submit(path, convert=True)`` sends the binary ``egb`` form (converted
locally by the ``egsolve`` binary) and ``job.result("binary")`` returns NumPy arrays.
Files of 256 MiB and more go in parts over several connections, each part checksummed and
sent again on its own (``client.upload_in_parts(path)``, then ``client.submit_upload(id)``;
an :class:`UploadFailed` names the upload to finish with ``upload_id=``).
Errors are :class:`ApiError` subclasses carrying the server's problem document
(``type``, ``detail``, ``line``, ``column``), or :class:`JobFailed` for a job that ended
without a result.
"""

from .batch import Batch, BatchInfo, BatchResult, SolvedBatch
from .binary import NO_MOVE, TOP, BinaryResult, MissingNumpy, parse_binary, read_binary
from .client import DEFAULT_SERVER, Client, Job
from .errors import (
    ApiError,
    ArenaRefused,
    BackendUnavailable,
    BatchError,
    BatchRefused,
    ConnectionFailed,
    EgsolveError,
    IdempotencyConflict,
    InsufficientStorage,
    InvalidParameter,
    JobFailed,
    JobFinished,
    MalformedArena,
    MalformedBatch,
    NoResult,
    NotFound,
    ReferenceRefused,
    ExportRefused,
    TooManyJobs,
    TooManyUploads,
    Unauthorized,
    UploadFailed,
    UploadIncomplete,
    WaitTimeout,
)
from .models import (
    Arena,
    Caller,
    CpuPool,
    Devices,
    Failure,
    Gpu,
    Histogram,
    Initial,
    JobInfo,
    JobOptions,
    Progress,
    Result,
    Summary,
    Upload,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_SERVER",
    "ApiError",
    "Arena",
    "ArenaRefused",
    "BackendUnavailable",
    "Batch",
    "BatchError",
    "BatchInfo",
    "BatchRefused",
    "BatchResult",
    "BinaryResult",
    "Caller",
    "Client",
    "ConnectionFailed",
    "CpuPool",
    "Devices",
    "EgsolveError",
    "Failure",
    "Gpu",
    "Histogram",
    "IdempotencyConflict",
    "Initial",
    "InsufficientStorage",
    "InvalidParameter",
    "Job",
    "JobFailed",
    "JobFinished",
    "JobInfo",
    "JobOptions",
    "MalformedArena",
    "MalformedBatch",
    "MissingNumpy",
    "NO_MOVE",
    "NoResult",
    "NotFound",
    "Progress",
    "ReferenceRefused",
    "ExportRefused",
    "Result",
    "SolvedBatch",
    "Summary",
    "TOP",
    "TooManyJobs",
    "TooManyUploads",
    "Unauthorized",
    "Upload",
    "UploadFailed",
    "UploadIncomplete",
    "WaitTimeout",
    "__version__",
    "parse_binary",
    "read_binary",
]
