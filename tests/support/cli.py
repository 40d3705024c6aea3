"""Run the real CLI in-process, through its entry point, capturing its output and exit code
(recipegen.cli.inprocess, which scripts/ uses too)."""

from __future__ import annotations

from pathlib import Path

from recipegen.cli.inprocess import Result, run

__all__ = ["Result", "run_cli"]


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """Run `recipegen ARGS` through its real entry point (main), capturing output and exit code."""
    return run(args, cwd=cwd, env=env)
