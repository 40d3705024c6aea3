"""The paths a resolution reports besides its plans, gated when first asked for: the JSON, --verbose, REJECTED.md
and the advice read every one; the default view reads the closest few and a count, which the paths' layout-free
verdicts bound, so most rejected paths of a runnable request never have their memory planned."""

from __future__ import annotations

import bisect
from typing import Protocol

from .candidates import Memo, Path, loading, may_run
from .ranking import PROVENANCE_ORDER, closeness_key, closest_rejected, rank_key
from .types import GATES, Candidate, Layout, Loading, Request

# the builds a history of changes follows: an engine's releases and the model images cut from them
LINEAGE = ("official", "model-image")


class Search(Protocol):
    """What LazyPaths reads of a layout search (layout_search._Layouts): its paths, and each gated once."""

    request: Request
    memo: Memo

    def paths_at(self, layout: Layout) -> list[Path]: ...

    def gate_at(self, layout: Layout, index: int) -> Candidate: ...

    def every(self, layout: Layout) -> list[Candidate]: ...


class LazyPaths:
    """Every path at one layout of a layout search (types.PathReport), gated on demand and once."""

    def __init__(self, layouts: Search, layout: Layout) -> None:
        self._layouts = layouts
        self._layout = layout
        self._every: tuple[Candidate, ...] | None = None
        self._loading: list[Candidate | Loading] | None = None

    def every(self) -> tuple[Candidate, ...]:
        if self._every is None:
            self._every = tuple(sorted(self._layouts.every(self._layout), key=rank_key))
        return self._every

    def loading(self) -> list[Candidate | Loading]:
        """Every path in report order, as find_changes reads it (candidates.loading)."""
        if self._loading is None:
            layouts, layout = self._layouts, self._layout
            self._loading = [loading(layouts.request, p, layout, layouts.memo) for p in layouts.paths_at(layout)]
        return self._loading

    def lineage(self) -> list[Candidate | Loading]:
        """The paths of engine releases and model images in report order, as find_changes reads them (it reads
        no other: community images and forks are side branches, not history)."""
        if self._loading is not None:
            return [row for row in self._loading if row.build.provenance in LINEAGE]
        layouts, layout = self._layouts, self._layout
        paths = [p for p in layouts.paths_at(layout) if p[1].provenance in LINEAGE]
        return [loading(layouts.request, p, layout, layouts.memo) for p in paths]

    def closest(self, limit: int, official_only: bool) -> tuple[list[Candidate], int]:
        if self._every is not None:
            every = self._every
            return closest_rejected(every, official_only)[:limit], sum(1 for c in every if not c.runnable)
        layouts, layout = self._layouts, self._layout
        paths = layouts.paths_at(layout)
        # a path that fails a cheap gate cannot run (may_run, memoised by the layout search)
        rejected = sum(
            1
            for index, path in enumerate(paths)
            if not (may_run(layouts.request, path, layout, layouts.memo) and layouts.gate_at(layout, index).runnable)
        )
        # closest_rejected's pool, decided by the layout-free verdicts alone (a Loading is never runnable); with
        # `official_only`, the official builds' paths alone are read
        rows = [
            (index, loading(layouts.request, path, layout, layouts.memo))
            for index, path in enumerate(paths)
            if path[1].provenance == "official" or not official_only
        ]
        same_format = [
            (index, row)
            for index, row in rows
            if not (isinstance(row, Candidate) and row.runnable)
            and (row.engine.loads == "gguf") == (row.variant.quant == "gguf")
        ]
        loads = [(index, row) for index, row in same_format if row.gate("architecture").outcome != "fail"]
        pool = loads or ([] if official_only else same_format)
        # closeness_key, then the report order (the sort of the rank-ordered paths is stable, and equal
        # closeness keys have equal rank keys): a Loading's key is at least its floor, the key's first four
        # parts as its layout-free gates give them (memory and topology only add failing gates, later ones)
        known = sorted((closeness_key(row), index) for index, row in pool if isinstance(row, Candidate))
        floors = sorted((_floor(row), index) for index, row in pool if isinstance(row, Loading))
        for floor, index in floors:
            if len(known) >= limit and known[limit - 1][0][:4] < floor:
                break
            cand = layouts.gate_at(layout, index)
            bisect.insort(known, (closeness_key(cand), index))
        picked = known[:limit]
        return [layouts.gate_at(layout, index) for _, index in picked], rejected


def _floor(row: Loading) -> tuple[int, int, int, int]:
    failing = [g for g in row.gates if g.outcome != "pass"]
    first = min(GATES.index(g.gate) for g in failing)
    blocked = sum(1 for g in failing if g.outcome == "fail")
    return (PROVENANCE_ORDER[row.build.provenance], len(failing), -first, blocked)
