"""`recipegen matrix`: verdict grid of models × GPUs — per cell the smallest layout that runs (or the pinned one),
its caveat or the deciding gate, and the reasons."""

from __future__ import annotations

import re
from typing import Any, Literal

from ..catalog.index import Catalog
from ..catalog.schema import Model
from ..catalog.targets import Target
from ..frozen import evolve, frozen
from ..plan.checkpoint_size import COUNTED_EXACTLY, COUNTED_TOLERANCE, ESTIMATED, estimated_label
from ..plan.describe import LINE, wrap
from ..plan.gates import SharedVerdicts
from ..plan.layout_search import Ranking, rank
from ..plan.offload import SOURCES as OFFLOAD_SOURCES
from ..plan.offload import HostFacts
from ..plan.ranking import Caveat, caveats, rank_key
from ..plan.types import Candidate, Request

Symbol = Literal["✓", "◐", "✗", "?"]
LEGEND: dict[Symbol, str] = {
    "✓": "runs: official engine build, native weight kernels, weights from the maker or a partner",
    "◐": "runs with a caveat, named in the cell: offload (weights in host RAM, slow), fallback kernel (e.g. "
    "Marlin), community or fork build, community weights, or estimated size (the checkpoint's size is estimated "
    "from the format's usual storage: FP8, INT4, FP4 or GGUF; a BF16/FP16 size counted as parameters × 2 bytes is "
    "no caveat, "
    f"within {COUNTED_TOLERANCE:.0%} of every published BF16 size in the catalog: --verbose lists them)",
    "✗": "blocked: every path fails a gate (the deciding gate is named)",
    "?": "unknown: the best path is untested, lacks a fact (e.g. checkpoint size) or rests on an unverified fact",
}
LAYOUT_NOTE = (
    "N× is the smallest layout that runs (of 1, 2, 4, 8 GPUs, or DGX Spark boxes), as explain picks it "
    "without --gpus; --gpus N pins it. ✗ and ? are for the largest layout tried, or the smallest where a path "
    "fails no gate. A --target COUNTxGPU column is a box of COUNT: its full size first, then halves."
)


@frozen
class Cell:
    model: str
    target: str
    symbol: Symbol
    gate: str | None
    summary: str
    reasons: tuple[str, ...]
    layout: str | None = None  # "1×", "2×", "2×8" (nodes × GPUs): the layout the cell is for
    caveat: str | None = None  # ◐: the caveat named in the cell (one of plan.ranking.CAVEATS), "+N" when there are more
    notes: tuple[str, ...] = ()  # what the plan rests on that is no caveat: a 16-bit size counted from the parameters

    def short(self) -> str:
        """What the grid shows: the mark, the layout, and the caveat (◐) or the deciding gate (✗, ?)."""
        return " ".join(part for part in (self.symbol, self.layout, self.caveat or self.gate) if part)


def _grade(c: Candidate) -> tuple[Symbol, list[tuple[str, str]]]:
    why: list[tuple[str, str]] = []
    for kind in caveats(c):
        why.append((kind, _caveat_text(kind, c)))
    return ("◐" if why else "✓"), why


def _counted(c: Candidate) -> tuple[str, ...]:
    """A 16-bit checkpoint's size counted from its parameters: said (--verbose, json), but no caveat."""
    if c.variant.quant not in COUNTED_EXACTLY or c.budget is None:
        return ()
    return tuple(n for n in c.budget.notes if n.startswith(ESTIMATED))


def _caveat_text(kind: Caveat, c: Candidate) -> str:
    if kind == "offload":
        assert c.offload is not None
        cited = next((src.url for src in OFFLOAD_SOURCES[c.offload.mechanism] if src.url.startswith("http")), None)
        speed = f"{c.speed.per_request()}; " if c.speed is not None else ""
        return f"offload: {speed}only with weights in host RAM — {c.offload.summary()}" + (
            f" [{cited}]" if cited else ""
        )
    if kind == "fallback kernel":
        return c.gate("weight-format").reason
    if kind == "no parser":
        return "; ".join(c.unparsed)
    if kind in ("fork build", "community build"):
        cited = next((s.url for s in c.build.sources if s.date is not None and s.url.startswith("http")), None)
        return f"{c.build.provenance} build {c.build.id}" + (f" [{cited}]" if cited else "")
    if kind == "community weights":
        cited = next((s.url for s in c.variant.sources if s.url.startswith("https://")), None)
        return f"community weights {c.variant.repo}" + (f" [{cited}]" if cited else "")
    # the plan fits by an estimated size: said, with the format's source
    assert c.budget is not None
    return next(n for n in c.budget.notes if n.startswith(ESTIMATED))


def _layout(r: Ranking) -> str:
    layout = r.layout
    if layout.nodes > 1 and layout.gpus_per_node > 1:
        return f"{layout.nodes}×{layout.gpus_per_node}"
    return f"{layout.gpus}×"


def _annotations(r: Ranking) -> tuple[str, ...]:
    """Notes the catalog keeps for this model on this GPU (e.g. where a later source disagrees with an earlier one)."""
    cc = r.request.hardware.compute_capability
    return tuple(
        p.text + (f" [{p.sources[0].url}]" if p.sources else "")
        for p in r.request.model.pitfalls
        if p.capability is not None and cc in p.capability and p.engines is None and p.builds is None
    )


def classify(r: Ranking, target: str) -> Cell:
    cell = _classify(r, target)
    notes = _annotations(r)
    return evolve(cell, reasons=cell.reasons + notes, layout=_layout(r)) if notes else evolve(cell, layout=_layout(r))


def _classify(r: Ranking, target: str) -> Cell:
    model = r.request.model.id
    if r.runnable:  # the plans, in rank order
        graded = [(_grade(c), c) for c in r.runnable]
        (symbol, why), best = next(((g, c) for g, c in graded if g[0] == "✓"), graded[0])
        summary = f"{best.engine.name} {best.build.id} · {best.variant.id} ({best.status}) on {best.layout.gpus} GPU(s)"
        caveat = (why[0][0] + (f" +{len(why) - 1}" if len(why) > 1 else "")) if why else None
        reasons = tuple(w for _, w in why) or (summary,)
        return Cell(model, target, symbol, None, summary, reasons, caveat=caveat, notes=_counted(best))
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


def build_matrix(
    catalog: Catalog,
    models: list[Model],
    targets: list[Target],
    jobs: int | None = None,
    host: HostFacts | None = None,
) -> list[Cell]:
    """Every model × target cell, in that order. `jobs`: processes resolving cells side by side (default: one
    per CPU this process may use, for a grid big enough to repay starting them; 1: here, one after another).
    `host`: the host RAM and bandwidth offload plans may use (default: HostFacts())."""
    pairs = [(model, target) for model in models for target in targets]
    host = host or HostFacts()
    workers = _workers(len(pairs)) if jobs is None else max(1, min(jobs, len(pairs)))
    if workers == 1 or not _can_fork():
        return _cells(catalog, pairs, range(len(pairs)), host)
    import multiprocessing

    global _WORK
    _WORK = (catalog, pairs, host)  # a forked worker inherits the catalog and the grid instead of unpickling them
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
_WORK: tuple[Catalog, list[tuple[Model, Target]], HostFacts] | None = None


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
    catalog, pairs, host = _WORK
    return _cells(catalog, pairs, indexes, host)


def request_of(model: Model, target: Target, host: HostFacts | None = None) -> Request:
    """The request of one cell: explain's without --gpus (the usual sizes, smallest first), the pinned count
    (--gpus), or a fleet (--target: its full size first, then halves)."""
    return Request(
        model=model,
        hardware=target.hardware,
        gpus_per_node=None if target.search else target.gpus_per_node,
        nodes=1 if target.search else target.nodes,
        shrink=target.fleet,
        host=host or HostFacts(),
    )


def _cells(catalog: Catalog, pairs: list[tuple[Model, Target]], indexes: range, host: HostFacts) -> list[Cell]:
    out: list[Cell] = []
    # a build's platform verdict on a GPU holds for every model, its passing kernel verdict for every model shape
    shared = SharedVerdicts()
    for index in indexes:
        model, target = pairs[index]
        request = request_of(model, target, host)
        # a cell names the best plan, or the closest rejection when nothing runs: only then are paths gated in full
        out.append(classify(rank(catalog, request, "closest-when-blocked", shared, deciding=True), target.label))
    return out


def to_json(cells: list[Cell], targets: list[Target]) -> dict[str, Any]:
    return {
        "schema": "recipegen.report.matrix/2",
        "legend": LEGEND,
        "layouts": LAYOUT_NOTE,
        "targets": [t.label for t in targets],
        "cells": [
            {
                "model": c.model,
                "target": c.target,
                "symbol": c.symbol,
                "layout": c.layout,
                "caveat": c.caveat,
                "gate": c.gate,
                "summary": c.summary,
                "reasons": list(c.reasons),
                "notes": list(c.notes),
            }
            for c in cells
        ],
    }


def grid(cells: list[Cell], targets: list[Target]) -> tuple[list[str], dict[str, dict[str, Cell]]]:
    rows: dict[str, dict[str, Cell]] = {}
    for cell in cells:
        rows.setdefault(cell.model, {})[cell.target] = cell
    return [t.label for t in targets], rows


def explained(cells: list[Cell]) -> list[Cell]:
    """The cells whose reasons the reader needs: every ◐ and ?."""
    return [c for c in cells if c.symbol in ("◐", "?") and c.reasons]


WHY_HEAD = "Why each ◐ and ?"
# a source cited inside a reason: the matrix's default text leaves it to --verbose and --format json
_CITED = re.compile(r" \[(?:https?://|generator/)[^\]]*\]")


def to_markdown(cells: list[Cell], targets: list[Target], verbose: bool = False) -> str:
    """The grid, its legend, and why each ◐ and ? cell is one: by default one line per model and reason, naming
    the GPUs it holds for, each reason cut to its decisive fact; `verbose`: one line per cell with every reason
    whole (derivations and sources), as --format json has them."""
    labels, rows = grid(cells, targets)
    out = ["| model | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for model, by_target in rows.items():
        out.append(f"| {model} | " + " | ".join(c.short() for c in by_target.values()) + " |")
    out.append("")
    legend = [f"{symbol} {meaning}" for symbol, meaning in LEGEND.items()] + [LAYOUT_NOTE]
    out.extend(line for item in legend for line in wrap(item, "- ", "  ", 4, LINE))
    why = explained(cells)
    if why and verbose:
        out.extend(["", f"{WHY_HEAD}:"])
        out.extend(f"- {c.short()} · {c.model} on {c.target}: {'; '.join(c.reasons)}" for c in why)
    elif why:
        out.extend(
            [
                "",
                f"{WHY_HEAD} (each reason once, with the models and GPUs it holds for; --verbose: per cell, "
                "with the derivations and sources; --format json: everything):",
            ]
        )
        out.extend(line for group in grouped(why, labels) for line in group.lines())
    noted = [c for c in cells if c.notes] if verbose else []
    if noted:
        out.extend(["", "Sizes counted, not published (no caveat):"])
        out.extend(f"- {c.short()} · {c.model} on {c.target}: {'; '.join(c.notes)}" for c in noted)
    return "\n".join(out) + "\n"


@frozen
class WhyLine:
    """One reason, cut to its decisive fact, and the cells it holds for: these models on these GPU columns."""

    models: tuple[str, ...]
    reason: str
    targets: tuple[str, ...]
    every: bool  # the reason holds for every column of the grid

    def prefix(self) -> str:
        where = "every GPU" if self.every and len(self.targets) > 1 else ", ".join(self.targets)
        return f"- {', '.join(self.models)} on {where}: "

    def lines(self) -> list[str]:
        return wrap(self.reason, self.prefix(), "    ", 1, LINE)


def brief(reason: str) -> str:
    """A reason's decisive fact: without the sources it cites and, for an estimated size, without the estimate's
    derivation (the size and its assumption label stay, so the number reads as in --verbose and json)."""
    label = estimated_label([reason])
    if label is not None:
        return f"estimated size {label}"
    return _CITED.sub("", reason)


def grouped(why: list[Cell], labels: list[str]) -> list[WhyLine]:
    """The reasons of the ◐ and ? cells said once each, in the grid's order: a model's reasons that hold for the
    same GPUs share a line where they fit in one, which names those GPUs; the same line for several models (a
    family) names them all."""
    per_model: dict[tuple[str, str], list[str]] = {}
    for cell in why:
        for reason in dict.fromkeys(brief(r) for r in cell.reasons):
            per_model.setdefault((cell.model, reason), []).append(cell.target)
    per_targets: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (model, reason), where in per_model.items():
        per_targets.setdefault((model, tuple(where)), []).append(reason)
    models: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (model, targets), reasons in per_targets.items():
        room = LINE - len(WhyLine((model,), "", targets, len(targets) == len(labels)).prefix())
        for said in _packed(reasons, room):
            models.setdefault((said, targets), []).append(model)
    return [
        WhyLine(tuple(names), reason, targets, every=len(targets) == len(labels))
        for (reason, targets), names in models.items()
    ]


def _packed(reasons: list[str], room: int) -> list[str]:
    """Reasons joined with "; " into as few texts as fit in `room` columns each (one too long stands alone)."""
    out: list[str] = []
    for reason in reasons:
        if out and len(out[-1]) + 2 + len(reason) <= room:
            out[-1] = f"{out[-1]}; {reason}"
        else:
            out.append(reason)
    return out
