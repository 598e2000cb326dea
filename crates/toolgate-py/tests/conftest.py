"""Shared fixtures: the checkout, the corpora, the built `toolgate` binary."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parents[3]
"""The checkout (crates/toolgate-py/tests/ is three levels below it)."""


def require_external() -> bool:
    return os.environ.get("TOOLGATE_REQUIRE_EXTERNAL") == "1"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def corpora() -> Path:
    """`TOOLGATE_CORPORA`, or ../shared/corpora beside the checkout (as the Rust tests)."""
    named = os.environ.get("TOOLGATE_CORPORA")
    path = Path(named) if named else ROOT.parent / "shared" / "corpora"
    if not (path / "JSONTestSuite" / "test_parsing").is_dir():
        pytest.fail(
            f"no corpora at {path}: run scripts/fetch-corpora.sh DIR and set TOOLGATE_CORPORA=DIR"
        )
    return path


def toolgate_bin() -> Optional[Path]:
    """The built CLI: TOOLGATE_BIN, or target/debug/toolgate of the checkout."""
    named = os.environ.get("TOOLGATE_BIN")
    if named:
        return Path(named)
    built = ROOT / "target" / "debug" / "toolgate"
    if built.is_file():
        return built
    found = shutil.which("toolgate")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def cli() -> Path:
    path = toolgate_bin()
    if path is None:
        if require_external():
            pytest.fail("no toolgate binary (cargo build -p toolgate-cli, or TOOLGATE_BIN)")
        pytest.skip("no toolgate binary (cargo build -p toolgate-cli, or TOOLGATE_BIN)")
    return path


@pytest.fixture()
def store_build() -> None:
    """Skips a test of the store on a wheel built without it (the default
    `pip install`); `.ci/run` builds the store in, so there it runs."""
    import toolgate

    if "store" not in toolgate.features:
        pytest.skip("this toolgate wheel was built without the store (--features store)")
