"""The binary result as NumPy arrays: ``GET /v1/jobs/{id}/result?format=binary``, the bytes
``egsolve solve --output binary`` and ``egsolve result ID --format binary`` write.

Layout (little-endian; ``docs/result-binary.md`` and ``openapi.yaml`` are the specification):

========  ======  ===================================================================
offset    size    field
========  ======  ===================================================================
0         8       magic ``EGSRESLT``
8         4       version, u32: 1
12        4       flags, u32: bit 0 set when the credits were computed
16        8       n, the vertex count, u64
24        8       reserved, 0
32        8·n     credits, u64 per vertex; 2**64 - 1 is ⊤ (player 1 wins)
32 + 8·n  4·n     strategies, u32 per vertex; 2**32 - 1 for no move
========  ======  ===================================================================

Without bit 0 (a parity game answered by the parity solver) the credits array holds only the
winners: 0 for player 0's vertices, 2**64 - 1 for player 1's.

NumPy is an optional dependency (``pip install 'egsolve-client[numpy]'``); without it these
functions raise :class:`MissingNumpy`, which says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import numpy
    import numpy.typing

__all__ = ["BinaryResult", "MissingNumpy", "parse_binary", "read_binary", "TOP", "NO_MOVE", "MEDIA_TYPE"]

MAGIC = b"EGSRESLT"
VERSION = 1
HEADER_BYTES = 32
FLAG_CREDITS = 1
#: ⊤ in the credits array (player 1 wins).
TOP = 2**64 - 1
#: "No move" in the strategies array.
NO_MOVE = 2**32 - 1
#: The media type the server sends it with.
MEDIA_TYPE = "application/vnd.egsolve.result"


class MissingNumpy(ImportError):
    """The binary result is returned as NumPy arrays, and NumPy is not installed."""

    def __init__(self) -> None:
        super().__init__(
            "format='binary' returns NumPy arrays and needs numpy: pip install numpy "
            "(or pip install 'egsolve-client[numpy]'); format='json' needs nothing more"
        )


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as e:
        raise MissingNumpy() from e
    return numpy


@dataclass(frozen=True)
class BinaryResult:
    """A solution as arrays: ``credits`` (uint64, :data:`TOP` for ⊤) and ``strategies``
    (uint32, :data:`NO_MOVE` for none), indexed by vertex id. When ``credits_computed`` is
    false (the parity solver answered) ``credits`` holds only who wins (0 or :data:`TOP`).
    The arrays are read-only views of the downloaded bytes (``.copy()`` for writable ones).
    """

    credits: "numpy.typing.NDArray[numpy.uint64]"
    strategies: "numpy.typing.NDArray[numpy.uint32]"
    credits_computed: bool

    @property
    def n(self) -> int:
        """The vertex count."""
        return int(self.credits.shape[0])

    @property
    def winners(self) -> "numpy.typing.NDArray[numpy.uint8]":
        """1 where player 1 wins, else 0."""
        np = _numpy()
        return (self.credits == np.uint64(TOP)).astype(np.uint8)  # type: ignore[no-any-return]


def parse_binary(data: Union[bytes, bytearray, memoryview]) -> BinaryResult:
    """Reads a binary result from its bytes (checking magic, version, flags and length)."""
    np = _numpy()
    view = memoryview(data)
    if len(view) < HEADER_BYTES or bytes(view[:8]) != MAGIC:
        raise ValueError("not a binary egsolve result (the magic EGSRESLT is missing)")
    version = int.from_bytes(view[8:12], "little")
    flags = int.from_bytes(view[12:16], "little")
    n = int.from_bytes(view[16:24], "little")
    if version != VERSION:
        raise ValueError(f"binary result version {version}; this client reads {VERSION}")
    if flags & ~FLAG_CREDITS:
        raise ValueError(f"unknown flags {flags:#x} in a binary result")
    if len(view) != HEADER_BYTES + 12 * n:
        raise ValueError(f"a binary result of {n} vertices has {HEADER_BYTES + 12 * n} bytes, not {len(view)}")
    credits = np.frombuffer(view, dtype="<u8", count=n, offset=HEADER_BYTES)
    strategies = np.frombuffer(view, dtype="<u4", count=n, offset=HEADER_BYTES + 8 * n)
    return BinaryResult(credits=credits, strategies=strategies, credits_computed=bool(flags & FLAG_CREDITS))


def read_binary(path: Union[str, "os.PathLike[str]"]) -> BinaryResult:
    """Reads a binary result file (``egsolve solve --output binary -o FILE``)."""
    with open(path, "rb") as f:
        return parse_binary(f.read())
