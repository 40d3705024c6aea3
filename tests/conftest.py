"""Fixtures every test folder shares; the helpers they are built from live in tests/support/."""

from __future__ import annotations

import os

import pytest

from tests.support.cli import run_cli
from tests.support.docker import argv_image, images  # noqa: F401 - fixtures for artifacts/, checkpoint/ and machine/


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):  # type: ignore[no-untyped-def]
    """Keep the catalog cache of the test run out of the user's home."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(scope="session")
def catalog():  # type: ignore[no-untyped-def]
    from recipegen.catalog.load import load

    return load()


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    return run_cli
