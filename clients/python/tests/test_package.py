"""The package itself: typed (``mypy --strict`` passes on it, and it ships ``py.typed``), and,
where it was installed with ``pip install ./clients/python`` (``.ci/run`` does; under ``CI``
it must have been), the installed copy has its files and its dependency (and under ``CI`` is
this source's)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]


def test_mypy_strict_passes() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", os.devnull, "src/egsolve"],
        cwd=PACKAGE, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success: no issues found in 9 source files" in out.stdout, out.stdout


def test_the_installed_package_is_this_source() -> None:
    try:
        installed = metadata.distribution("egsolve-client")
    except metadata.PackageNotFoundError:
        if os.environ.get("CI"):
            pytest.fail("egsolve-client is not installed: .ci/run runs `pip install ./clients/python`")
        return  # a developer's interpreter without the package: the tests use src/ directly
    files = {str(f) for f in installed.files or []}
    assert "egsolve/py.typed" in files and "egsolve/client.py" in files, sorted(files)
    assert any(r.startswith("httpx") for r in installed.requires or []), installed.requires
    if not os.environ.get("CI"):
        return  # a developer's copy may be older than the source they are editing
    for name in ("batch.py", "binary.py", "client.py", "errors.py", "models.py", "parts.py", "session.py", "upload.py",
                 "__init__.py"):
        copy = Path(installed.locate_file(f"egsolve/{name}"))
        assert copy.read_text() == (PACKAGE / "src" / "egsolve" / name).read_text(), (
            f"the installed {name} differs from clients/python/src: reinstall it"
        )
