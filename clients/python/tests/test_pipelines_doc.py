"""The examples of ``docs/pipelines.md`` run as written: its Python pipeline and its shell
loop solve shared mCRL2 games through a live server (with a token from the environment), and
their verdicts agree with the games' independent solutions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from serve import REPO, egsolve_binary, expected_winners, shared_data

GAMES = [
    "ABP_datasize=2_infinitely_often_lost_mcrl2example",
    "Lift_(Incorrect)_nlifts=2_nodeadlock",
    "CABP_datasize=2_infinitely_often_receive_for_all_d",
]


def example(kind: str) -> str:
    """The code block that follows ``<!-- test: KIND -->`` in docs/pipelines.md."""
    text = (REPO / "docs" / "pipelines.md").read_text()
    match = re.search(rf"<!-- test: {kind} -->\n```\w+\n(.*?)\n```", text, re.S)
    assert match, f"docs/pipelines.md has no '{kind}' example"
    return match.group(1)


def games_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "games"
    folder.mkdir()
    for game in GAMES:
        shutil.copy(shared_data() / "parity" / f"{game}.gm.gz", folder / f"{game}.gm.gz")
    return folder


def environment(auth_server) -> dict:
    src = str(REPO / "clients" / "python" / "src")
    return {
        **os.environ,
        "EGSOLVE_SERVER": auth_server.url,
        "EGSOLVE_TOKEN": auth_server.tokens["bob"],
        "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "PATH": str(egsolve_binary().parent) + os.pathsep + os.environ["PATH"],
    }


def verdict(game: str) -> str:
    winners = expected_winners(shared_data() / "parity" / f"{game}.sol.gz")
    return "holds" if winners[0] == 0 else "fails"


def test_the_python_pipeline(auth_server, tmp_path: Path) -> None:
    script = tmp_path / "pipeline.py"
    script.write_text(example("python"))
    folder = games_dir(tmp_path)
    games = sorted(folder.iterdir())
    out = subprocess.run(
        [sys.executable, str(script), *map(str, games)],
        env=environment(auth_server), capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(games)
    for game, line in zip(games, lines):
        name = game.name[: -len(".gm.gz")]
        assert line.startswith(f"{game.name}: {verdict(name)} (player 0 wins "), line
        w0 = expected_winners(shared_data() / "parity" / f"{name}.sol.gz").count(0)
        assert f"wins {w0} of " in line, line


def test_the_shell_loop(auth_server, tmp_path: Path) -> None:
    folder = games_dir(tmp_path)
    out = subprocess.run(
        ["bash", "-c", example("shell")], cwd=tmp_path,
        env=environment(auth_server), capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    for game in GAMES:
        solution = (folder / f"{game}.sol").read_text().splitlines()
        assert solution[0].startswith("paritysol")
        winners = [int(l.rstrip(";").split()[1]) for l in solution[1:] if l.strip()]
        assert winners == expected_winners(shared_data() / "parity" / f"{game}.sol.gz")
