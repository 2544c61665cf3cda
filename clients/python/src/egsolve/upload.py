"""Request bodies of submissions: a path, bytes or a binary file, compressed on the way
(and a submission's options, :class:`SubmitOptions`, and query parameters,
:func:`submit_params`).

A body that is already gzip, zstd or bzip2 goes as it is (the server recognises them by
their magic bytes), and so does the binary ``egb`` format (the server maps it in place; see
:func:`converted`). A plain text one of at least :data:`COMPRESS_FROM` bytes is compressed
while it streams — zstd when the ``zstandard`` package is installed, else gzip from the
standard library — and announced with ``Content-Encoding``. Bodies are produced by a
factory, so a retried request sends the same bytes again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import shutil
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterator, Optional, Protocol, TypedDict, Union

try:  # optional: pip install egsolve-client[zstd]
    import zstandard
except ImportError:  # pragma: no cover - exercised where zstandard is missing
    zstandard = None  # type: ignore[assignment]

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]

#: Plain bodies at least this large are compressed when ``compress="auto"``.
COMPRESS_FROM = 64 * 1024
CHUNK = 1 << 20
MAGIC = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"BZh")
#: The first bytes of an ``egb`` file (``egsolve convert --to egb``).
EGB_MAGIC = b"\x89EGB\r\n\x1a\n"


def preferred_encoding() -> str:
    """What ``compress="auto"`` uses: zstd when ``zstandard`` is installed, else gzip."""
    return "zstd" if zstandard is not None else "gzip"


def is_compressed(head: bytes) -> bool:
    """Whether ``head`` starts with gzip, zstd or bzip2 magic bytes."""
    return any(head.startswith(m) for m in MAGIC)


@dataclass
class Body:
    """What to send: a fresh chunk iterator per attempt, the headers, a display name."""

    chunks: Callable[[], Iterator[bytes]]
    headers: Dict[str, str]
    name: str
    encoding: Optional[str]


class _Compressor(Protocol):
    def compress(self, data: bytes) -> bytes: ...
    def flush(self) -> bytes: ...


def _compressor(encoding: str) -> _Compressor:
    if encoding == "zstd":
        if zstandard is None:
            raise ValueError("compress='zstd' needs the zstandard package: pip install zstandard")
        return zstandard.ZstdCompressor(level=3).compressobj()
    return zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip container, fast level


def _compressed(raw: Callable[[], Iterator[bytes]], encoding: str) -> Callable[[], Iterator[bytes]]:
    def chunks() -> Iterator[bytes]:
        compressor = _compressor(encoding)
        for chunk in raw():
            out = compressor.compress(chunk)
            if out:
                yield out
        yield compressor.flush()

    return chunks


#: The media type of a job by reference (the body names a file on the server).
REFERENCE_MEDIA_TYPE = "application/vnd.egsolve.reference+json"


def json_body(data: Dict[str, Any], media_type: str, name: str) -> Body:
    """A JSON request body of ``media_type``."""
    import json

    encoded = json.dumps(data).encode()
    return Body(chunks=lambda: iter([encoded]), headers={"Content-Type": media_type}, name=name, encoding=None)


def reference(path: str) -> Body:
    """The body of a job by reference: ``{"path": path}``."""
    return json_body({"path": path}, REFERENCE_MEDIA_TYPE, path)


def submit_params(
    backend: Optional[str],
    priority: Optional[int],
    time_limit: Optional[int],
    format: Optional[str],
    returns: Optional[str],
    credits: Optional[bool],
    reuse: Optional[bool] = None,
) -> Dict[str, Any]:
    """The query parameters of a submission (options left ``None`` are not sent)."""
    return {
        k: v
        for k, v in {
            "backend": backend,
            "priority": priority,
            "time_limit": time_limit,
            "format": format,
            "return": returns,
            "credits": None if credits is None else ("true" if credits else "false"),
            "reuse": None if reuse is None else ("true" if reuse else "false"),
        }.items()
        if v is not None
    }


class SubmitOptions(TypedDict, total=False):
    """The options of a job, as the keywords of :meth:`~egsolve.Client.submit_by_reference`
    and :meth:`~egsolve.Client.submit_upload` take them: those of
    :meth:`~egsolve.Client.submit` that are not about sending the arena. One left out or
    ``None`` takes the server's default."""

    backend: Optional[str]
    priority: Optional[int]
    time_limit: Optional[int]
    format: Optional[str]
    returns: Optional[str]
    credits: Optional[bool]
    #: ``False`` solves anew what an identical finished job could answer at once.
    reuse: Optional[bool]
    #: Not a query parameter: the request's ``Idempotency-Key`` (by default a fresh one).
    idempotency_key: Optional[str]


def options_params(options: SubmitOptions) -> Dict[str, Any]:
    """:func:`submit_params` of ``options`` given as keywords; a ``TypeError`` names one
    that is not a :class:`SubmitOptions` (as Python's own for an unknown keyword)."""
    unknown = sorted(set(options) - set(SubmitOptions.__annotations__))
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    return submit_params(
        options.get("backend"), options.get("priority"), options.get("time_limit"),
        options.get("format"), options.get("returns"), options.get("credits"),
        options.get("reuse"),
    )


def source_name(source: Source) -> str:
    """What a job's ``source`` says: the path, or what kind of object was sent."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "<bytes>"
    return str(getattr(source, "name", "<file>"))


def prepare(source: Source, compress: Optional[str] = "auto") -> Body:
    """The body for ``source``; ``compress`` is ``"auto"``, ``"zstd"``, ``"gzip"`` or ``None``."""
    if compress not in ("auto", "zstd", "gzip", None, "none"):
        raise ValueError(f"compress must be 'auto', 'zstd', 'gzip' or None, not {compress!r}")
    raw: Callable[[], Iterator[bytes]]
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        head, size, name = data[:4], len(data), "<bytes>"

        def raw() -> Iterator[bytes]:
            for i in range(0, len(data), CHUNK):
                yield data[i : i + CHUNK]

    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(4)
        name = path

        def raw() -> Iterator[bytes]:
            with open(path, "rb") as f:
                while True:
                    chunk = f.read(CHUNK)
                    if not chunk:
                        return
                    yield chunk

    elif hasattr(source, "read"):
        name = str(getattr(source, "name", "<file>"))
        stream = source
        if stream.seekable():
            start = stream.tell()
            head = stream.read(4)
            size = stream.seek(0, io.SEEK_END) - start
            stream.seek(start)

            def raw() -> Iterator[bytes]:
                stream.seek(start)
                while True:
                    chunk = stream.read(CHUNK)
                    if not chunk:
                        return
                    yield chunk

        else:  # read once, so that a retry can send it again
            return dataclasses.replace(prepare(stream.read(), compress), name=name)
    else:
        raise TypeError(f"cannot submit a {type(source).__name__}: give a path, bytes or a binary file")

    headers = {"Content-Type": "application/octet-stream"}
    encoding: Optional[str] = None
    if compress not in (None, "none") and not is_compressed(head):
        if compress == "auto" and EGB_MAGIC.startswith(head[:4]) and len(head) >= 4:
            pass  # egb goes as it is: the server maps it instead of decompressing it
        elif compress == "auto":
            if size >= COMPRESS_FROM:
                encoding = preferred_encoding()
        else:
            encoding = compress
    if encoding:
        headers["Content-Encoding"] = encoding
        return Body(_compressed(raw, encoding), headers, name, encoding)
    return Body(raw, headers, name, None)


def find_egsolve(convert: Union[bool, str, "os.PathLike[str]"]) -> Optional[str]:
    """The ``egsolve`` binary ``convert`` names: ``True`` looks for it on ``PATH``, a path
    is used as given (if it exists); ``None`` when there is none."""
    if convert is False:
        return None
    if convert is True:
        return shutil.which("egsolve")
    path = os.fspath(convert)
    return path if os.path.exists(path) else None


def _is_egb(source: Source) -> bool:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source[:8]) == EGB_MAGIC
    if isinstance(source, (str, os.PathLike)):
        with open(os.fspath(source), "rb") as f:
            return f.read(8) == EGB_MAGIC
    return False


@contextlib.contextmanager
def converted(source: Source, egsolve: Optional[str]) -> Iterator[Source]:
    """``source`` converted to ``egb`` by ``egsolve convert SRC --to egb`` (run locally), so
    the server maps it instead of parsing text; ``source`` itself when there is no
    ``egsolve`` binary, when it is ``egb`` already, or when the conversion fails (a malformed
    arena: the server's answer then says where). The converted file lives until the context
    ends (a retried upload sends it again)."""
    if egsolve is None or _is_egb(source):
        yield source
        return
    with tempfile.TemporaryDirectory(prefix="egsolve-convert-") as tmp:
        if isinstance(source, (str, os.PathLike)):
            given = Path(os.fspath(source))
        else:
            given = Path(tmp) / "arena"
            data = bytes(source) if isinstance(source, (bytes, bytearray, memoryview)) else source.read()
            given.write_bytes(data)
            source = data
        out = Path(tmp) / "arena.egb"
        done = subprocess.run(
            [egsolve, "convert", str(given), "--to", "egb", "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        yield out if done.returncode == 0 and out.exists() else source
