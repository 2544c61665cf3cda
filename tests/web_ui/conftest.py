"""Fixtures of the browser tests: Debian's Chromium driven headless by Selenium (through
chromedriver), and the servers and arena helpers of the client tests
(``clients/python/tests/serve.py``)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python" / "tests"))
sys.path.insert(0, str(ROOT / "clients" / "python" / "src"))

from serve import Server  # noqa: E402

# Flags that work on the build machines: no sandbox (root), no GPU, and no background
# traffic (the closed network refuses it, noisily).
CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-extensions",
    "--window-size=1280,1000",
]


def chromium_paths() -> tuple:
    browser = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return browser, driver


@pytest.fixture(scope="session")
def browser() -> Iterator["object"]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = chromium_paths()
    if not (Path(binary).exists() and Path(driver_path).exists()):
        missing = f"no chromium ({binary}) or chromedriver ({driver_path})"
        if os.environ.get("CI"):
            pytest.fail(f"{missing}: .ci/run installs chromium and chromium-driver")
        pytest.skip(missing)
    profile = tempfile.mkdtemp(prefix="egsolve-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def open_server() -> Iterator[Server]:
    server = Server()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def auth_server() -> Iterator[Server]:
    server = Server(users={"alice": False, "bob": False, "root": True})
    yield server
    server.stop()
