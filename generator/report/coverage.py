"""Where the catalog is thin: per model family × GPU class, the official release a path runs on since, the
community paths (images, forks, backports) reported to run it (a build's `reported_for`), and the builds' known
defects that hit it.

"Runs" here means every gate that needs no memory plan passes (architecture, weight format, kernels, image
and CUDA): whether a model fits a card is a question of the fleet, not of the catalog's coverage. A cell with
no path at all says "none found": the catalog knows of no way through. Each cell also says when a survey
(recipes/surveys/) last searched it, or "not surveyed": "none found" after a search is an answer, before
one it is a to-do.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ..catalog.index import Catalog
from ..catalog.schema import Model, Survey
from ..catalog.schema.engine import Build
from ..catalog.schema.survey import GPU_CLASSES
from ..frozen import frozen
from ..plan.candidates import may_run, paths_for
from ..plan.defects import defects_hitting
from ..plan.gates import SHARED, SharedVerdicts
from ..plan.types import Layout, Request

# each class's usual part with the most memory of its class (memory is not what a cell asks)
CLASSES: tuple[tuple[str, str], ...] = (
    ("sm80", "a100-80gb"),
    ("sm86", "rtx-a6000"),
    ("sm89", "l40s"),
    ("sm90", "h200"),
    ("sm100", "b200"),
    ("sm120", "rtx-pro-6000"),
    ("sm121", "gb10"),
)
assert tuple(c for c, _ in CLASSES) == GPU_CLASSES  # a survey can name exactly the classes the table has
LAYOUT = Layout(gpus_per_node=8, nodes=1)


@frozen
class Cell:
    family: str  # the model id
    gpu_class: str
    official_since: tuple[str, dt.date] | None  # the first official release with a path
    official_now: bool  # the newest official release has one
    community: tuple[tuple[str, dt.date], ...]  # side paths with a path, newest first
    defects_open: tuple[str, ...]  # hitting the newest official release (a blocking one too)
    defects_closed: tuple[str, ...]  # hitting an older release only
    surveyed: dt.date | None = None  # the newest survey that searched this family on this class
    # of defects_closed, those whose fixing build the catalog names (fixed_in); the rest were only not reported
    # against the newest release, which is not the same as fixed
    defects_fixed: tuple[str, ...] = ()
    # side builds whose gates pass but whose reports ran other models: what a plan may use, not a path anyone found
    unreported: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.official_since is not None or bool(self.community)


def last_surveyed(surveys: list[Survey], family: str, gpu_class: str) -> dt.date | None:
    return max(
        (s.surveyed for s in surveys if any(e.covers(family, gpu_class) for e in s.entries)),
        default=None,
    )


def _cell(catalog: Catalog, model: Model, gpu_class: str, hw_id: str, shared: SharedVerdicts) -> Cell:
    hw = catalog.hardware[hw_id]
    request = Request(model=model, hardware=hw, gpus_per_node=LAYOUT.gpus_per_node)
    memo: dict[tuple[object, ...], object] = {SHARED: shared}
    running: dict[str, Build] = {}
    hits: dict[str, set[str]] = {}
    owner: dict[str, str] = {}
    for path in paths_for(catalog, request, LAYOUT, every_release=True):
        engine, build, variant, _ = path
        owner[build.id] = engine.id
        if may_run(request, path, LAYOUT, memo, shared):
            running[build.id] = build
        # a defect that blocks a build still counts: the path would run but for it
        if build.defects and (build.id in running or may_run(request, path, LAYOUT, memo, shared, defects=False)):
            found = defects_hitting(model, variant, build, hw, every_config=True)
            hits.setdefault(build.id, set()).update(d.id for d in found)
    official = sorted((b for b in running.values() if b.provenance == "official"), key=lambda b: (b.released, b.id))
    newest = {
        e.id: max((b for b in e.builds if b.provenance == "official"), key=lambda b: (b.released, b.id), default=None)
        for e in catalog.engines.values()
    }
    now = [b for b in official if newest.get(owner[b.id]) is b]
    # open: hitting the newest official release (even one it blocks); fixed: hitting an older release only
    opened = set().union(*(hits.get(b.id, set()) for b in newest.values() if b is not None))
    released = {b.id for e in catalog.engines.values() for b in e.builds if b.provenance == "official"}
    closed = set().union(*(ids for build_id, ids in hits.items() if build_id in released)) - opened
    # a side path counts for the models its reports ran: a GLM fork whose kernels happen to pass for DeepSeek R1 is
    # not a way someone found to run R1 (plans may still use it, and say it was not reported for the model)
    others = sorted((b for b in running.values() if b.provenance != "official"), key=lambda b: (b.released, b.id))
    side = [b for b in others if b.reported(model.id)]
    named_fix = {d.id for _, b in catalog.builds() for d in b.defects if d.fixed_in is not None}
    return Cell(
        family=model.id,
        gpu_class=gpu_class,
        official_since=(official[0].id, official[0].released) if official else None,
        official_now=bool(now),
        community=tuple((b.id, b.released) for b in reversed(side)),
        defects_open=tuple(sorted(opened)),
        defects_closed=tuple(sorted(closed)),
        surveyed=last_surveyed(list(catalog.surveys.values()), model.id, gpu_class),
        defects_fixed=tuple(sorted(closed & named_fix)),
        unreported=tuple(b.id for b in reversed(others) if not b.reported(model.id)),
    )


def coverage(catalog: Catalog) -> list[Cell]:
    shared = SharedVerdicts()  # platform and passing kernel verdicts, the same for every model (of a shape)
    return [
        _cell(catalog, model, gpu_class, hw_id, shared)
        for model in sorted(catalog.models.values(), key=lambda m: m.id)
        for gpu_class, hw_id in CLASSES
    ]


def cell_text(cell: Cell) -> str:
    """`✓ vllm-0.10.0+` (official since), `✓ … (not newest)`, `+3 side 2026-09` (community paths, the newest's
    month), `⚠ 1 open, 2 fixed, 1 older` (defects: hitting the newest release; fixed in a named build; reported
    on older releases only, no fix named); `none found` when the catalog knows no path; then `surveyed 2026-12`
    or `not surveyed`."""
    parts = [] if cell.found else ["none found"]
    if cell.official_since is not None:
        since = f"✓ {cell.official_since[0]}+"
        parts.append(since if cell.official_now else f"{since} (not newest)")
    if cell.community:
        parts.append(f"+{len(cell.community)} side {cell.community[0][1]:%Y-%m}")
    if cell.defects_open or cell.defects_closed:
        older = len(cell.defects_closed) - len(cell.defects_fixed)
        tail = f", {older} older" if older else ""
        parts.append(f"⚠ {len(cell.defects_open)} open, {len(cell.defects_fixed)} fixed{tail}")
    parts.append(f"surveyed {cell.surveyed:%Y-%m}" if cell.surveyed else "not surveyed")
    return " · ".join(parts)


def to_markdown(cells: list[Cell]) -> str:
    classes = [c for c, _ in CLASSES]
    rows = ["| family | " + " | ".join(classes) + " |", "|---|" + "---|" * len(classes)]
    by_family: dict[str, dict[str, Cell]] = {}
    for cell in cells:
        by_family.setdefault(cell.family, {})[cell.gpu_class] = cell
    for family, row in by_family.items():
        rows.append(f"| {family} | " + " | ".join(cell_text(row[c]) for c in classes) + " |")
    return "\n".join(rows) + "\n"


def to_json(cells: list[Cell]) -> dict[str, Any]:
    return {
        "schema": "recipegen.coverage/1",
        "gpu_classes": {c: hw for c, hw in CLASSES},
        "cells": [
            {
                "family": c.family,
                "gpu_class": c.gpu_class,
                "official_since": {"build": c.official_since[0], "released": str(c.official_since[1])}
                if c.official_since
                else None,
                "official_newest_runs": c.official_now,
                "community": [{"build": b, "released": str(d)} for b, d in c.community],
                "community_not_reported": list(c.unreported),
                "defects_open": list(c.defects_open),
                "defects_closed": list(c.defects_closed),
                "defects_fixed": list(c.defects_fixed),
                "surveyed": str(c.surveyed) if c.surveyed else None,
            }
            for c in cells
        ],
    }
