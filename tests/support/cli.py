"""Run the real CLI in-process, through its entry point, capturing its output and exit code."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """Run `recipegen ARGS` through its real entry point (main), capturing output and exit code."""
    from recipegen.cli.app import main

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
