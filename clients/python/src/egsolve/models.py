"""Plain dataclasses for what the server answers (see the service's ``openapi.yaml``).

Unknown members are ignored, so a newer server with more fields keeps working.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar

T = TypeVar("T")

FINISHED_STATES = ("succeeded", "failed", "cancelled")


def _from_json(cls: Type[T], data: Dict[str, Any], **values: Any) -> T:
    """The dataclass ``cls`` of the JSON object ``data``: its members named as fields (the
    others ignored), with ``values`` for the fields that need more than that."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**{**{k: v for k, v in data.items() if k in names}, **values})


def parse_time(value: Optional[str]) -> Optional[datetime]:
    """An RFC 3339 time of the API (``...Z``) as an aware datetime."""
    if value is None:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Initial:
    """The initial vertex (the file's start vertex, else 0) and who wins it."""

    vertex: int
    winner: int
    credit: Optional[int]


@dataclass(frozen=True)
class ParitySummary:
    """How a parity game's priorities were prepared."""

    #: Distinct priorities in the input.
    priorities: int
    #: Distinct priorities after compression.
    compressed_priorities: int
    #: Whether each strongly connected component was compressed on its own.
    per_scc: bool
    #: Whether the reduction to an energy game fits in 64 bits.
    reduction_fits: bool


@dataclass(frozen=True)
class Summary:
    """The summary block of a solution (as ``egsolve solve --output json`` writes it)."""

    vertices: int
    edges: int
    w0: int
    w1: int
    initial: Initial
    max_credit: int
    bound: int
    lifts: int
    rounds: int
    solve_seconds: float
    strategy_seconds: float
    backend: str
    #: The algorithm that answered (e.g. ``accelerated-lifting``, ``zielonka``,
    #: ``auto(tangle-learning)``); empty for summaries stored before the field existed.
    algorithm: str = ""
    #: Strategy evaluations of the accelerated solver (0 for plain lifting).
    evaluations: int = 0
    #: Seconds per phase of the solve (``lifting``, ``evaluation``, ``strategy0``, …).
    phases: Dict[str, float] = field(default_factory=dict)
    #: False for a parity game answered by the parity solver: winners and strategies only,
    #: no credits (``Result.credits`` is then ``None``).
    credits_computed: bool = True
    #: Parity games only: how the priorities were prepared.
    parity: Optional[ParitySummary] = None

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Summary":
        parity = data.get("parity")
        return _from_json(
            cls,
            data,
            initial=_from_json(Initial, data["initial"]),
            parity=_from_json(ParitySummary, parity) if parity else None,
        )


@dataclass(frozen=True)
class Progress:
    """Counters of a running solve."""

    round: int
    frontier: int
    lifts: int


@dataclass(frozen=True)
class Failure:
    """Why a job failed; ``line``/``column`` for malformed arenas."""

    type: str
    message: str
    line: Optional[int] = None
    column: Optional[int] = None


@dataclass(frozen=True)
class Arena:
    """The arena's hash and, once parsed, its figures."""

    sha256: str
    vertices: Optional[int]
    edges: Optional[int]
    bound: Optional[int]


@dataclass(frozen=True)
class JobOptions:
    """The options a job was submitted with."""

    backend: str
    priority: int
    time_limit: int
    format: str
    returns: str
    #: Parity games: whether the energy reduction's credits were asked for.
    credits: bool = False


@dataclass(frozen=True)
class JobInfo:
    """A job as ``GET /v1/jobs/{id}`` shows it."""

    id: str
    owner: str
    state: str
    options: JobOptions
    created_at: datetime
    started_at: Optional[datetime]
    finished_at: Optional[datetime]
    attempts: int
    queue_position: Optional[int]
    backend: Optional[str]
    device: Optional[str]
    arena: Arena
    progress: Optional[Progress]
    durations_ms: Dict[str, Optional[float]]
    reused: bool
    failure: Optional[Failure]
    summary: Optional[Summary]
    #: The worker process holding (or that held) the job's lease, on a shared store.
    worker: Optional[str] = None
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def finished(self) -> bool:
        """Whether the job will not change any more."""
        return self.state in FINISHED_STATES

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "JobInfo":
        options = dict(data["options"])
        options["returns"] = options.pop("return")
        progress = data.get("progress")
        failure = data.get("failure")
        summary = data.get("summary")
        created = parse_time(data["created_at"])
        assert created is not None
        return cls(
            id=data["id"],
            owner=data["owner"],
            state=data["state"],
            options=_from_json(JobOptions, options),
            created_at=created,
            started_at=parse_time(data.get("started_at")),
            finished_at=parse_time(data.get("finished_at")),
            attempts=data.get("attempts", 0),
            queue_position=data.get("queue_position"),
            backend=data.get("backend"),
            device=data.get("device"),
            arena=_from_json(Arena, data["arena"]),
            progress=_from_json(Progress, progress) if progress else None,
            durations_ms=dict(data.get("durations_ms") or {}),
            reused=bool(data.get("reused")),
            failure=_from_json(Failure, failure) if failure else None,
            summary=Summary.from_json(summary) if summary else None,
            worker=data.get("worker"),
            raw=data,
        )


@dataclass(frozen=True)
class Result:
    """A solution: per vertex (in ``ids`` order) the winner, the credit (``None`` for ⊤) and,
    when the job was submitted with ``returns="strategies"``, the winner's move (``None``
    where the vertex's owner loses). ``credits`` is ``None`` altogether for an answer of the
    parity solver (``summary.credits_computed`` false): winners and strategies only.
    """

    job_id: str
    summary: Summary
    ids: List[int]
    winners: List[int]
    credits: Optional[List[Optional[int]]]
    strategies: Optional[List[Optional[int]]]

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Result":
        vertices = data["vertices"]
        with_strategies = any("strategy" in v for v in vertices[:1])
        summary = Summary.from_json(data["summary"])
        return cls(
            job_id=data["job"],
            summary=summary,
            ids=[v["id"] for v in vertices],
            winners=[v["winner"] for v in vertices],
            credits=[v["credit"] for v in vertices] if summary.credits_computed else None,
            strategies=[v.get("strategy") for v in vertices] if with_strategies else None,
        )


@dataclass(frozen=True)
class Upload:
    """An upload in parts (``POST /v1/uploads``) as ``GET /v1/uploads/{id}`` shows it.

    Part ``n`` holds bytes ``n * part_size`` onwards (``part_size`` of them, the last part
    fewer); ``received`` lists the parts the server keeps, in order. ``state`` is
    ``receiving``, ``complete`` (every part arrived) or ``used`` (a job was made from it;
    ``arena`` is the stored arena's key). An upload no part reaches before ``expires_at`` is
    removed.
    """

    id: str
    size: int
    part_size: int
    parts: int
    received: List[int] = field(repr=False)
    state: str
    expires_at: Optional[datetime]
    arena: Optional[str] = None
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def missing(self) -> List[int]:
        """The numbers of the parts not received yet."""
        have = set(self.received)
        return [n for n in range(self.parts) if n not in have]

    @property
    def received_bytes(self) -> int:
        """How many of the file's bytes the server holds."""
        return sum(self.part_length(n) for n in set(self.received))

    def part_length(self, number: int) -> int:
        """The length of part ``number`` (``part_size``, or less for the last)."""
        return max(0, min(self.part_size, self.size - number * self.part_size))

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Upload":
        received = [int(n) for n in data.get("received") or []]
        return _from_json(cls, data, received=received, expires_at=parse_time(data.get("expires_at")), raw=data)


@dataclass(frozen=True)
class Gpu:
    """One GPU of the server."""

    ordinal: int
    name: str
    memory_bytes: Optional[int]
    busy: bool
    job: Optional[str]
    busy_seconds: float


@dataclass(frozen=True)
class CpuPool:
    """The CPU pool: slots (``workers``), threads per solve, busy slots and their jobs."""

    workers: int
    threads: int
    busy: int
    jobs: List[str]


@dataclass(frozen=True)
class Devices:
    """``GET /v1/devices``."""

    gpus: List[Gpu]
    cpu: CpuPool
    queue_depth: int

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Devices":
        return cls(
            gpus=[_from_json(Gpu, g) for g in data["gpus"]],
            cpu=_from_json(CpuPool, data["cpu"]),
            queue_depth=data["queue_depth"],
        )


@dataclass(frozen=True)
class Caller:
    """``GET /v1/whoami``: who the token belongs to (``user`` is None without a token)."""

    user: Optional[str]
    role: Optional[str]
    auth: bool
    #: Whether this caller may submit jobs by reference here (``submit_by_reference``): the
    #: server has import roots and the token the ``import`` permission.
    by_reference: bool = False
    #: Whether this caller may have results written to a path on the server
    #: (:meth:`Job.export`): the server has export roots and the token the ``import``
    #: permission.
    results_by_reference: bool = False


@dataclass(frozen=True)
class Histogram:
    """Finite credits in equal-width bins ``(from, to, count)``, both ends inclusive."""

    job_id: str
    w0: int
    w1: int
    max_credit: int
    bins: List[Tuple[int, int, int]]
    #: False for an answer of the parity solver: winners only, ``bins`` empty.
    credits_computed: bool = True

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Histogram":
        bins = [(b["from"], b["to"], b["count"]) for b in data["bins"]]
        return _from_json(cls, data, job_id=data["job"], bins=bins)
