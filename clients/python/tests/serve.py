"""Test helpers shared by the client tests and the browser tests: a real ``egsolve serve``
process on a free loopback port with its own data directory (auth on or off), a TCP proxy
that can drop connections, arena generators and the shared data's expected answers.
"""

from __future__ import annotations

import gzip
import os
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[3]


def egsolve_binary() -> Path:
    """The binary under test: ``$EGSOLVE_BIN`` (set by the cargo test), else the release build."""
    return Path(os.environ.get("EGSOLVE_BIN") or REPO / "target" / "release" / "egsolve")


def shared_data() -> Path:
    """``$EGSOLVE_DATA``, else the first ``shared/data`` beside the checkout or a parent."""
    if os.environ.get("EGSOLVE_DATA"):
        return Path(os.environ["EGSOLVE_DATA"])
    for parent in [REPO, *REPO.parents]:
        candidate = parent / "shared" / "data"
        if (candidate / "README.md").is_file():
            return candidate
    raise RuntimeError("no shared/data found: set EGSOLVE_DATA")


class Server:
    """``egsolve serve --bind 127.0.0.1:0`` in a temporary data directory.

    With ``users`` (name → admin?) auth is on and ``tokens`` maps each name to its token.
    :meth:`stop` ends it (so does the end of a ``with`` block).
    """

    def __init__(self, users: Optional[Dict[str, bool]] = None, args: Sequence[str] = ()) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="egsolve-test-"))
        self.tokens: Dict[str, str] = {}
        binary = egsolve_binary()
        command = [
            str(binary), "serve", "--bind", "127.0.0.1:0",
            "--data-dir", str(self.dir / "data"), "--cpu-workers", "2", "--sync-commits", "false",
        ]
        if users is not None:
            tokens_file = self.dir / "tokens"
            for name, admin in users.items():
                out = subprocess.run(
                    [str(binary), "token", "add", name, "--tokens-file", str(tokens_file)]
                    + (["--admin"] if admin else []),
                    check=True, capture_output=True, text=True,
                )
                self.tokens[name] = out.stdout.strip()
            command += ["--auth", "true", "--tokens-file", str(tokens_file)]
        command += list(args)
        self.log = open(self.dir / "server.log", "wb")
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self.log, env={**os.environ, "EGSOLVE_LOG": "warn"}
        )
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        line = self.process.stdout.readline().decode() if ready else ""
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"egsolve serve did not start: {line!r}\n{self.log_text()}")
        self.url = line.split()[-1]
        self.port = int(self.url.rsplit(":", 1)[1])

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_text(self) -> str:
        try:
            return (self.dir / "server.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


# Where :class:`FlakyProxy` cuts a binary result: this many bytes into the body (compressed,
# a client may have decoded nothing of the first few kilobytes, and then starts over).
CUT_AFTER = 1 << 20
# Where :class:`FlakyProxy` cuts a ``PUT`` request: this many bytes of its body reach the server.
CUT_PUT_AFTER = 1000


class FlakyProxy:
    """A TCP proxy to ``port`` that can cut connections: all at once (:meth:`drop_all`), or
    each connection whose request starts with ``POST`` just as its answer arrives
    (:attr:`drop_post_answers` times), so the server did the work and the client never hears;
    or a binary result's answer 1 MiB into its body (:attr:`cut_binary_answers` times,
    requests without ``Range``), or a ``PUT`` request (a part of an upload in parts) a
    thousand bytes into its body (:attr:`cut_put_requests` times; :attr:`cut_puts` lists
    their paths). :attr:`ranged` counts the requests with ``Range``. :meth:`close` ends it
    (so does the end of a ``with`` block).
    """

    def __init__(self, port: int) -> None:
        self.target = ("127.0.0.1", port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.lock = threading.Lock()
        self.pairs: List[Tuple[socket.socket, socket.socket]] = []
        self.drop_post_answers = 0
        self.dropped = 0
        self.cut_binary_answers = 0
        self.cut_put_requests = 0
        self.cut_puts: List[str] = []
        self.ranged = 0
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            state = {"post": False, "cut_after_head": None}
            with self.lock:
                self.pairs.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream, state, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, state, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, state: dict, to_server: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if to_server and data.startswith(b"POST "):
                    state["post"] = True
                if to_server and data.startswith(b"PUT ") and state.get("cut_put") is None:
                    with self.lock:
                        cut = self.cut_put_requests > 0
                        if cut:
                            self.cut_put_requests -= 1
                            self.dropped += 1
                            self.cut_puts.append(data.split(b" ", 2)[1].decode())
                    if cut:
                        end = data.find(b"\r\n\r\n")
                        state["cut_put"] = end + 4 + CUT_PUT_AFTER if end >= 0 else len(data) // 2
                if to_server and state.get("cut_put") is not None:
                    left = state["cut_put"]  # bytes of the PUT still to pass before the cut
                    sink.sendall(data[:left])
                    if len(data) >= left:
                        break
                    state["cut_put"] = left - len(data)
                    continue
                if to_server and data.startswith(b"GET "):
                    head = data.lower()
                    with self.lock:
                        if b"\r\nrange:" in head:
                            self.ranged += 1
                        elif b"format=binary" in head and self.cut_binary_answers > 0:
                            self.cut_binary_answers -= 1
                            state["cut_after_head"] = b""
                if not to_server and state["cut_after_head"] is not None:
                    seen = state["cut_after_head"] + data
                    end = seen.find(b"\r\n\r\n")
                    if end >= 0 and len(seen) >= end + 4 + CUT_AFTER:
                        sink.sendall(data[: end + 4 + CUT_AFTER - len(state["cut_after_head"])])
                        with self.lock:
                            self.dropped += 1
                        break
                    state["cut_after_head"] = seen
                if not to_server and state["post"]:
                    state["post"] = False
                    with self.lock:
                        drop = self.drop_post_answers > 0
                        if drop:
                            self.drop_post_answers -= 1
                            self.dropped += 1
                    if drop:
                        break
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def drop_all(self) -> int:
        """Cuts every open connection; returns how many."""
        with self.lock:
            pairs, self.pairs = self.pairs, []
            self.dropped += len(pairs)
        for pair in pairs:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        return len(pairs)

    def __enter__(self) -> "FlakyProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        self.drop_all()


def slow_cycle(n: int) -> bytes:
    """A cycle of ``n`` player-0 vertices with weight -1: about n² lifts for the reference
    backend (n = 20,000 takes a few seconds; 200,000 runs until cancelled)."""
    lines = [f"{n - 1};"] + [f"{v} MAX {(v + 1) % n}:-1;" for v in range(n)]
    return ("\n".join(lines) + "\n").encode()


def small_arena(n: int, seed: int) -> bytes:
    """A random-looking EGSolver arena of ``n`` vertices, two edges each (deterministic)."""
    state = seed * 6364136223846793005 + 1442695040888963407

    def draw() -> int:
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        return state >> 33

    lines = [f"{n - 1};"]
    for v in range(n):
        owner = "MAX" if draw() % 2 == 0 else "MIN"
        edges = ",".join(f"{draw() % n}:{draw() % 11 - 5}" for _ in range(2))
        lines.append(f"{v} {owner} {edges};")
    return ("\n".join(lines) + "\n").encode()


def acyclic_arena(n: int, seed: int) -> bytes:
    """An EGSolver arena of ``n`` vertices whose only cycle is vertex 0's loop of weight 0:
    every other vertex has two edges to lower ids with weights in [-1000, 1000]. Its credits
    and moves look random (its binary result compresses little), yet it is solved in a
    fraction of a second, where :func:`small_arena`'s cycles take seconds at this size."""
    state = seed * 6364136223846793005 + 1442695040888963407

    def draw() -> int:
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        return state >> 33

    lines = [f"{n - 1};", "0 MAX 0:0;"]
    for v in range(1, n):
        owner = "MAX" if draw() % 2 == 0 else "MIN"
        edges = ",".join(f"{draw() % v}:{draw() % 2001 - 1000}" for _ in range(2))
        lines.append(f"{v} {owner} {edges};")
    return ("\n".join(lines) + "\n").encode()


def expected_winners(solution: Path) -> List[int]:
    """Winners by vertex id from a shared ``.sol.gz`` (PGSolver ``paritysol``)."""
    rows = []
    for line in gzip.decompress(solution.read_bytes()).decode().splitlines():
        line = line.strip().rstrip(";")
        if not line or line.startswith("paritysol"):
            continue
        fields = line.split()
        rows.append((int(fields[0]), int(fields[1])))
    rows.sort()
    return [w for _, w in rows]


def wait_until(predicate, timeout: float = 30.0, interval: float = 0.05) -> None:
    """Polls ``predicate`` until it is true; fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(interval)
