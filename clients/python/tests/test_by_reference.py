"""Jobs and results by reference and a full store through the Python client: a file under the
server's import root answers like its upload, and changing it after the submission changes
nothing; each refusal raises :class:`~egsolve.ReferenceRefused` with its kind; a result
exported under the server's export root is the download (the binary one a link to the
store's copy), and a path outside raises :class:`~egsolve.ExportRefused`; a store without
room raises :class:`~egsolve.InsufficientStorage` with the server's message."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterator

import pytest
from serve import Server, shared_data, small_arena

from egsolve import Client, ExportRefused, InsufficientStorage, ReferenceRefused

GAME = "parity/ABP_datasize=2_infinitely_often_lost_mcrl2example.gm.gz"


@pytest.fixture(scope="module")
def import_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("imports")


@pytest.fixture(scope="module")
def import_client(import_root: Path) -> Iterator[Client]:
    server = Server(args=["--import-root", str(import_root)])
    client = Client(server.url, token="")
    yield client
    client.close()
    server.stop()


def test_a_job_by_reference_answers_like_its_upload(import_client: Client, import_root: Path) -> None:
    assert import_client.whoami().by_reference, "an import root, auth off: everyone may"
    path = import_root / "abp.gm.gz"
    shutil.copy(shared_data() / GAME, path)
    job = import_client.submit_by_reference(path, returns="strategies", credits=True)
    assert job.source == str(path.resolve())
    path.write_bytes(b"not a game any more\n")  # the job has its own copy
    result = job.result()
    uploaded = import_client.submit(shared_data() / GAME, returns="strategies", credits=True).result()
    assert result.winners == uploaded.winners
    assert result.credits == uploaded.credits


def test_refusals_say_why(import_client: Client, import_root: Path, open_server: Server, tmp_path: Path) -> None:
    outside = tmp_path / "outside.gm"
    outside.write_bytes(small_arena(10, 1))
    cases = [
        (tmp_path / "missing.gm", "reference-not-found"),
        (outside, "outside-import-roots"),
        (import_root, "not-a-regular-file"),
    ]
    for path, kind in cases:
        with pytest.raises(ReferenceRefused) as refused:
            import_client.submit_by_reference(path)
        assert refused.value.kind == kind, str(refused.value)
        assert str(path) in refused.value.detail or kind == "outside-import-roots"
    with pytest.raises(ValueError):
        import_client.submit_by_reference("relative/missing.gm")
    with Client(open_server.url, token="") as plain:
        assert not plain.whoami().by_reference, "no import roots"
        with pytest.raises(ReferenceRefused) as refused:
            plain.submit_by_reference(outside)
        assert refused.value.kind == "import-disabled"
        assert "--import-root" in refused.value.detail


def test_a_store_without_room_is_insufficient_storage() -> None:
    server = Server(args=["--storage-reserve-bytes", str(2**62)])
    try:
        with Client(server.url, token="") as client:
            with pytest.raises(InsufficientStorage) as full:
                client.submit(small_arena(50, 2), compress=None)
            assert full.value.status == 507
            assert full.value.problem["setting"] == "storage_reserve_bytes"
            assert "free space" in str(full.value)
    finally:
        server.stop()


def test_a_result_by_reference_is_the_download(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    exports = tmp_path_factory.mktemp("exports")
    server = Server(args=["--export-root", str(exports)])
    try:
        with Client(server.url, token="") as client:
            job = client.submit(shared_data() / GAME)
            placed = job.export(exports / "abp.bin")
            assert placed["linked"] is True and placed["format"] == "binary", placed
            downloaded = job.download(tmp_path / "abp.bin", format="binary")
            assert (exports / "abp.bin").read_bytes() == downloaded.read_bytes()
            assert placed["bytes"] == downloaded.stat().st_size
            placed = job.export(exports / "abp.sol", format="paritysol")
            assert placed["linked"] is False
            rendered = job.download(tmp_path / "abp.sol", format="paritysol")
            assert (exports / "abp.sol").read_bytes() == rendered.read_bytes()
            with pytest.raises(ExportRefused) as refused:
                job.export(tmp_path / "elsewhere.bin")
            assert refused.value.kind == "outside-export-roots", str(refused.value)
            assert not (tmp_path / "elsewhere.bin").exists()
    finally:
        server.stop()
