"""`recipegen matrix`: verdict grid of models × targets, with the deciding gate and reasons per cell."""

from __future__ import annotations

import html
from typing import Any, Literal

from ..catalog.index import Catalog
from ..catalog.schema import Model
from ..catalog.targets import Target
from ..frozen import frozen
from ..plan.checkpoint_size import ESTIMATED
from ..plan.gates import PlatformVerdicts
from ..plan.layout_search import Ranking, rank
from ..plan.ranking import rank_key
from ..plan.types import Candidate, Request

Symbol = Literal["✓", "◐", "✗", "?"]
LEGEND: dict[Symbol, str] = {
    "✓": "official path: official engine build, native weight kernels, weights from the maker or a partner",
    "◐": "runs only via a fallback kernel (e.g. Marlin), a community image, a fork, community weights, "
    "or with weights in host RAM (offload)",
    "✗": "blocked: every path fails a gate (the deciding gate is named)",
    "?": "unknown: the best path is untested, lacks a fact (e.g. checkpoint size) or rests on an unverified fact",
}


@frozen
class Cell:
    model: str
    target: str
    symbol: Symbol
    gate: str | None
    summary: str
    reasons: tuple[str, ...]


def _grade(c: Candidate) -> tuple[Symbol, list[str]]:
    why: list[str] = []
    if c.build.provenance not in ("official", "model-image"):
        cited = next((s.url for s in c.build.sources if s.date is not None and s.url.startswith("http")), None)
        why.append(f"{c.build.provenance} build {c.build.id}" + (f" [{cited}]" if cited else ""))
    if c.via_fallback:
        why.append(c.gate("weight-format").reason)
    if c.variant.publisher == "community":
        why.append(f"community weights {c.variant.repo}")
    estimated = next((n for n in (c.budget.notes if c.budget else ()) if n.startswith(ESTIMATED)), None)
    if estimated is not None:  # the plan fits by an estimated size: said, with the format's source
        why.append(estimated)
    if c.offload is not None:
        why.append(
            f"only with host offload — {c.offload.summary()}; the seed's table rates GPU-only paths and says "
            "CPU+GPU hybrids fit at a large speed cost [seed:001 §6.2]"
        )
    return ("◐" if why else "✓"), why


def _annotations(r: Ranking) -> tuple[str, ...]:
    """Notes the catalog keeps for this model on this GPU (e.g. where a later source disagrees with a seed)."""
    cc = r.request.hardware.compute_capability
    return tuple(
        p.text + (f" [{p.sources[0].url}]" if p.sources else "")
        for p in r.request.model.pitfalls
        if p.capability is not None and cc in p.capability and p.engines is None and p.builds is None
    )


def classify(r: Ranking, target: str) -> Cell:
    cell = _classify(r, target)
    notes = _annotations(r)
    return Cell(cell.model, cell.target, cell.symbol, cell.gate, cell.summary, cell.reasons + notes) if notes else cell


def _classify(r: Ranking, target: str) -> Cell:
    model = r.request.model.id
    if r.runnable:  # the plans, in rank order
        graded = [(_grade(c), c) for c in r.runnable]
        (symbol, why), best = next(((g, c) for g, c in graded if g[0] == "✓"), graded[0])
        summary = f"{best.engine.name} {best.build.id} · {best.variant.id} ({best.status}) on {best.layout.gpus} GPU(s)"
        return Cell(model, target, symbol, None, summary, tuple(why) or (summary,))
    assert r.candidates is not None  # a blocked ranking gates the closest paths (rejections="closest-when-blocked")
    closest = sorted(r.candidates, key=lambda c: (len(c.failing()), rank_key(c)))
    if not closest:
        return Cell(model, target, "✗", None, "no engine build in the catalog", ())
    best = closest[0]
    failing = best.failing()
    if all(g.outcome == "unknown" for g in failing):
        return Cell(
            model,
            target,
            "?",
            failing[0].gate,
            f"{best.engine.name} {best.build.id} · {best.variant.id}",
            tuple(g.reason for g in failing),
        )
    decisive = next(g for g in failing if g.outcome == "fail")
    summary = f"{decisive.gate}: {best.engine.name} {best.build.id} · {best.variant.id}"
    return Cell(model, target, "✗", decisive.gate, summary, tuple(g.reason for g in failing))


def build_matrix(catalog: Catalog, models: list[Model], targets: list[Target], jobs: int | None = None) -> list[Cell]:
    """Every model × target cell, in that order. `jobs`: processes resolving cells side by side (default: one
    per CPU this process may use, for a grid big enough to repay starting them; 1: here, one after another)."""
    pairs = [(model, target) for model in models for target in targets]
    workers = _workers(len(pairs)) if jobs is None else max(1, min(jobs, len(pairs)))
    if workers == 1 or not _can_fork():
        return _cells(catalog, pairs, range(len(pairs)))
    import multiprocessing

    global _WORK
    _WORK = (catalog, pairs)  # a forked worker inherits the catalog and the grid instead of unpickling them
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            # every worker takes every workers-th cell, so that each gets a share of the costly models
            shares = pool.map(_share, [range(first, len(pairs), workers) for first in range(workers)])
    finally:
        _WORK = None
    cells: list[Cell | None] = [None] * len(pairs)
    for first, share in enumerate(shares):
        cells[first::workers] = share
    assert all(cell is not None for cell in cells)
    return cells  # type: ignore[return-value]


# Cells per process below which starting one costs more than it saves (a cell takes ~2-5 ms, a fork ~10).
_CELLS_PER_WORKER = 40
_WORK: tuple[Catalog, list[tuple[Model, Target]]] | None = None


def _workers(cells: int) -> int:
    import os

    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8, cells // _CELLS_PER_WORKER))


def _can_fork() -> bool:
    """Forking copies the catalog for free, but only a single-threaded process forks safely, and only Linux
    forks without caveats (macOS system libraries may not survive a fork)."""
    import sys
    import threading

    return sys.platform.startswith("linux") and threading.active_count() == 1


def _share(indexes: range) -> list[Cell]:
    assert _WORK is not None
    catalog, pairs = _WORK
    return _cells(catalog, pairs, indexes)


def _cells(catalog: Catalog, pairs: list[tuple[Model, Target]], indexes: range) -> list[Cell]:
    out: list[Cell] = []
    platforms = PlatformVerdicts()  # a build's platform verdict on a GPU holds for every model
    for index in indexes:
        model, target = pairs[index]
        request = Request(
            model=model,
            hardware=target.hardware,
            gpus_per_node=target.gpus_per_node,
            nodes=target.nodes,
            shrink=True,
        )
        # a cell names the best plan, or the closest rejection when nothing runs: only then are paths gated in full
        out.append(classify(rank(catalog, request, "closest-when-blocked", platforms), target.label))
    return out


def to_json(cells: list[Cell], targets: list[Target]) -> dict[str, Any]:
    return {
        "schema": "recipegen.report.matrix/1",
        "legend": LEGEND,
        "targets": [t.label for t in targets],
        "cells": [
            {
                "model": c.model,
                "target": c.target,
                "symbol": c.symbol,
                "gate": c.gate,
                "summary": c.summary,
                "reasons": list(c.reasons),
            }
            for c in cells
        ],
    }


def _grid(cells: list[Cell], targets: list[Target]) -> tuple[list[str], dict[str, dict[str, Cell]]]:
    rows: dict[str, dict[str, Cell]] = {}
    for cell in cells:
        rows.setdefault(cell.model, {})[cell.target] = cell
    return [t.label for t in targets], rows


def _short(cell: Cell) -> str:
    return f"{cell.symbol} {cell.gate}" if cell.gate else cell.symbol


def to_markdown(cells: list[Cell], targets: list[Target]) -> str:
    labels, rows = _grid(cells, targets)
    out = ["| model | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for model, by_target in rows.items():
        out.append(f"| {model} | " + " | ".join(_short(c) for c in by_target.values()) + " |")
    out.append("")
    out.extend(f"- {symbol} {meaning}" for symbol, meaning in LEGEND.items())
    return "\n".join(out) + "\n"


def to_html(cells: list[Cell], targets: list[Target]) -> str:
    labels, rows = _grid(cells, targets)
    head = "".join(f"<th>{html.escape(label)}</th>" for label in labels)
    body = []
    for model, by_target in rows.items():
        tds = "".join(
            f'<td title="{html.escape(" | ".join(c.reasons))}">{html.escape(_short(c))}</td>'
            for c in by_target.values()
        )
        body.append(f"<tr><th>{html.escape(model)}</th>{tds}</tr>")
    legend = "".join(f"<li>{html.escape(s)} {html.escape(m)}</li>" for s, m in LEGEND.items())
    return (
        '<!doctype html>\n<meta charset="utf-8"><title>recipegen matrix</title>\n'
        f"<table><tr><th>model</th>{head}</tr>\n" + "\n".join(body) + f"\n</table>\n<ul>{legend}</ul>\n"
    )
