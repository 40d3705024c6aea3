"""Shared helpers: run the real CLI in-process, and locate the test data copied into the repository."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"  # copies with their provenance (data/PROVENANCE.md); nothing outside the repo
COMPOSE_SPEC = DATA / "compose-spec" / "compose-spec.json"
ORACLE = DATA / "oracle"


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """Run `recipegen ARGS` through its real entry point (main), capturing output and exit code."""
    from recipegen.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_argv, old_cwd = sys.argv, Path.cwd()
    old_env = dict(os.environ) if env else None  # recipegen never changes os.environ itself
    sys.argv = ["recipegen", *args]
    code = 0
    try:
        if cwd is not None:
            os.chdir(cwd)
        if env:
            os.environ.update(env)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = old_argv
        os.chdir(old_cwd)
        if old_env is not None:
            os.environ.clear()
            os.environ.update(old_env)
    return Result(code, out.getvalue(), err.getvalue())


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
    from recipegen.catalog import load

    return load()


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    return run_cli
