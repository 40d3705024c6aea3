"""What the release-line tests read from the CLI: one engine's `history --format json` and an explain as JSON."""

from __future__ import annotations

from typing import Any

from tests.support.cli import Result


def engine_history(result: Result) -> dict[str, Any]:
    assert result.code == 0, result.err
    (engine,) = result.json()["engines"]
    assert isinstance(engine, dict)
    return engine


def history_of(cli: Any, engine: str, gpu: str, model: str, gpus: int, *extra: str) -> dict[str, Any]:
    """`recipegen history` of one engine for the model on that many GPUs (and `extra` options), as JSON."""
    return engine_history(
        cli(
            "history",
            "--gpu",
            gpu,
            "--model",
            model,
            "--gpus",
            str(gpus),
            "--engine",
            engine,
            *extra,
            "--format",
            "json",
        )
    )


def verdicts(engine: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["build"]: b for b in engine["builds"]}


def explain(cli: Any, *args: str) -> dict[str, Any]:
    """`recipegen explain ARGS --format json` (runnable or blocked)."""
    result = cli("explain", *args, "--format", "json")
    assert result.code in (0, 3), result.err
    document = result.json()
    assert isinstance(document, dict)
    return document
