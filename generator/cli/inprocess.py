"""Run the command line inside this Python process, as `recipegen ARGS` would run in a shell: the real entry
point (app.main), its stdout, stderr and exit code captured. For the test suite and the scripts that measure
what a user sees without paying a fresh interpreter per call; never used by the command line itself."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Result:
    """What one run printed and how it ended."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run(args: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Result:
    """`recipegen ARGS` through app.main: argv, the working folder and the environment (env added to it) are
    set for the run and restored after it, whatever it raised."""
    from .app import main

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
