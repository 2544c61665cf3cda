"""Fixtures: one ``egsolve serve`` with auth off and one with auth on (users alice, bob and
the admin root, at most 3 active jobs each), shared by the whole session."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from serve import Server, egsolve_binary  # noqa: E402

from egsolve import Client  # noqa: E402

PER_USER_LIMIT = 3


@pytest.fixture(scope="session")
def open_server() -> Iterator[Server]:
    if not egsolve_binary().exists():
        pytest.fail(f"no egsolve binary at {egsolve_binary()}: build it or set EGSOLVE_BIN")
    server = Server()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def auth_server() -> Iterator[Server]:
    server = Server(
        users={"alice": False, "bob": False, "carol": False, "root": True},
        args=["--per-user-job-limit", str(PER_USER_LIMIT)],
    )
    yield server
    server.stop()


@pytest.fixture(params=["auth-off", "auth-on"])
def client(request: pytest.FixtureRequest) -> Iterator[Client]:
    """A client of each server (as alice where auth is on)."""
    if request.param == "auth-off":
        server = request.getfixturevalue("open_server")
        c = Client(server.url, token="")
    else:
        server = request.getfixturevalue("auth_server")
        c = Client(server.url, token=server.tokens["alice"])
    yield c
    c.close()


@pytest.fixture
def as_user(auth_server: Server):
    """``as_user(name)``: a client of the auth server with that user's token."""
    clients = []

    def make(name: str) -> Client:
        c = Client(auth_server.url, token=auth_server.tokens[name])
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()
