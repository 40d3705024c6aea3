"""What the release-line and defect tests read from the CLI: one engine's `history --format json`, an explain and a
lint as JSON, and the parts of a plan they look at."""

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


def lint(cli: Any, *args: str) -> dict[str, Any]:
    """`recipegen lint --format json` of a command (clean or with findings)."""
    result = cli("lint", "--format", "json", *args)
    assert result.code in (0, 1), result.err
    doc: dict[str, Any] = result.json()
    return doc


def defect_ids(plan: dict[str, Any]) -> list[str]:
    return [d["id"] for d in plan["build_defects"]]


def flags(plan: dict[str, Any]) -> set[tuple[str, Any]]:
    return {(f["flag"], f.get("value")) for f in plan["flags"]}
