"""The binary result as NumPy arrays (equal to the JSON result and to the file
``egsolve solve --output binary`` writes), and submissions converted to ``egb`` locally
(``convert=``), against a live ``egsolve serve``."""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys

import numpy
import pytest
from serve import egsolve_binary, shared_data, small_arena

import egsolve
from egsolve import NO_MOVE, TOP, BinaryResult, Client, MissingNumpy, read_binary, upload

GAME = shared_data() / "parity" / "ABP_datasize=2_infinitely_often_lost_mcrl2example.gm.gz"


def test_binary_result_holds_the_json_answer(client: Client) -> None:
    job = client.submit(GAME, returns="strategies", credits=True)
    arrays = job.result("binary")
    assert isinstance(arrays, BinaryResult)
    result = job.result()
    assert arrays.credits_computed and arrays.n == len(result.winners)
    assert arrays.credits.dtype == numpy.uint64 and arrays.strategies.dtype == numpy.uint32
    assert result.credits is not None and result.strategies is not None
    assert arrays.credits.tolist() == [TOP if c is None else c for c in result.credits]
    assert arrays.strategies.tolist() == [NO_MOVE if s is None else s for s in result.strategies]
    assert arrays.winners.tolist() == result.winners
    with pytest.raises(ValueError):
        job.result("binary", vertices=[0])  # type: ignore[call-overload]


def test_binary_result_is_the_cli_file(client: Client, tmp_path) -> None:
    cli = tmp_path / "cli.bin"
    subprocess.run(
        [str(egsolve_binary()), "solve", str(GAME), "--credits", "--output", "binary", "-o", str(cli)],
        check=True,
    )
    job = client.submit(GAME, credits=True)
    served = job.download(tmp_path / "served.bin", format="binary")
    # The same layout, header and credits; the strategies are both certified winning ones,
    # which may differ between two solves (the accelerated solver's seed is timed).
    header = 32
    n = int.from_bytes(cli.read_bytes()[16:24], "little")
    assert served.read_bytes()[: header + 8 * n] == cli.read_bytes()[: header + 8 * n]
    assert len(served.read_bytes()) == len(cli.read_bytes())
    local = read_binary(cli)
    remote = job.result("binary")
    assert (local.credits == remote.credits).all() and (local.winners == remote.winners).all()


def test_parity_answers_say_they_have_no_credits(client: Client) -> None:
    arrays = client.submit(GAME, backend="parity").result("binary")
    assert not arrays.credits_computed
    assert set(arrays.credits.tolist()) <= {0, TOP}


def test_binary_results_need_numpy_and_say_so(client: Client, monkeypatch) -> None:
    job = client.submit(small_arena(50, seed=3)).wait(timeout=60)
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(MissingNumpy, match="pip install numpy"):
        job.result("binary")
    assert isinstance(MissingNumpy(), ImportError)


def test_convert_sends_egb_made_by_the_local_binary(client: Client, tmp_path) -> None:
    plain = small_arena(3000, seed=17)
    text = tmp_path / "g.mpg"
    text.write_bytes(plain)
    egb = tmp_path / "g.egb"
    subprocess.run([str(egsolve_binary()), "convert", str(text), "--to", "egb", "-o", str(egb)], check=True)
    assert egb.read_bytes().startswith(upload.EGB_MAGIC)
    # egb is sent as it is (the server maps it): no compression under "auto".
    assert upload.prepare(egb, "auto").encoding is None
    for source in (text, plain, gzip.compress(plain)):
        job = client.submit(source, convert=egsolve_binary(), returns="strategies")
        assert job.info.arena.sha256 == hashlib.sha256(egb.read_bytes()).hexdigest(), source
        assert job.source in (str(text), "<bytes>")
        assert job.result().credits == client.submit(plain).result().credits
    # Without an egsolve binary the arena goes as it is.
    job = client.submit(text, convert=tmp_path / "no-such-egsolve")
    assert job.info.arena.sha256 == hashlib.sha256(plain).hexdigest()
    assert upload.find_egsolve(False) is None
    # A malformed arena is not converted: the server's answer says where.
    with pytest.raises(egsolve.MalformedArena) as refused:
        client.submit(b"1;\n0 MAX 1:x;\n1 MIN 0:1;\n", convert=egsolve_binary())
    assert refused.value.line == 2
