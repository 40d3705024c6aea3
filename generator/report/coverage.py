"""Where the catalog is thin: per model family × GPU class, the official release a path runs on since, the
community paths (images, forks, backports) reported to run it (a build's `reported_for`), and the builds' known
defects that hit it.

"Runs" here means every gate that needs no memory plan passes (architecture, weight format, kernels, image
and CUDA): whether a model fits a card is a question of the fleet, not of the catalog's coverage. A cell with
no path at all says "none found": the catalog knows of no way through. Each cell also says when a survey
(recipes/surveys/) last searched it, or "not surveyed": "none found" after a search is an answer, before
one it is a to-do.

A class is judged on one part (sm100 on B200), but a defect may be scoped to a part that part does not stand for:
B300 and GB300 are 10.3, GB200 and GH200 have an aarch64 host. The cell marks those (`⚠ B300/GB300 only: …`), and
the table's footnote names them, so a defect reported on B300 alone is not lost behind B200's column.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ..catalog.index import Catalog
from ..catalog.schema import Hardware, Model, Survey
from ..catalog.schema.engine import Build, Defect
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
# the compute capabilities a class stands for (surveys write sm100 for B200/GB200 and B300/GB300 alike)
CAPABILITIES: dict[str, tuple[str, ...]] = {
    "sm80": ("8.0",),
    "sm86": ("8.6",),
    "sm89": ("8.9",),
    "sm90": ("9.0",),
    "sm100": ("10.0", "10.3"),
    "sm120": ("12.0",),
    "sm121": ("12.1",),
}
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
    # defects that hit another part of the class (another capability or host CPU) and not the judged one:
    # (defect id, the parts it hits, "open" | "fixed" | "older"), by id
    elsewhere: tuple[tuple[str, tuple[str, ...], str], ...] = ()

    @property
    def found(self) -> bool:
        return self.official_since is not None or bool(self.community)


def last_surveyed(surveys: list[Survey], family: str, gpu_class: str) -> dt.date | None:
    return max(
        (s.surveyed for s in surveys if any(e.covers(family, gpu_class) for e in s.entries)),
        default=None,
    )


def other_parts(catalog: Catalog, gpu_class: str, hw_id: str) -> tuple[Hardware, ...]:
    """One part for each (capability, host CPU) of the class that its judged part does not stand for, since a
    defect tells GPUs apart by nothing else: the default part of its capability first, then a datacenter one."""
    judged = catalog.hardware[hw_id]
    seen = {(judged.compute_capability, judged.host_arch[0])}
    parts: list[Hardware] = []
    ranked = sorted(
        catalog.hardware.values(), key=lambda h: (not h.default_for_capability, h.role != "datacenter", h.id)
    )
    for hw in ranked:
        key = (hw.compute_capability, hw.host_arch[0])
        if str(hw.compute_capability) in CAPABILITIES[gpu_class] and key not in seen:
            seen.add(key)
            parts.append(hw)
    return tuple(sorted(parts, key=lambda h: h.id))


def _hits_on(d: Defect, hw: Hardware) -> bool:
    return (d.sm is None or hw.compute_capability in d.sm) and (d.host_arch is None or hw.host_arch[0] in d.host_arch)


def _elsewhere(
    catalog: Catalog, model: Model, judged: Hardware, parts: tuple[Hardware, ...], shared: SharedVerdicts
) -> dict[str, tuple[set[str], set[str]]]:
    """Defect id -> the parts it hits and the builds it hits them on, of the defects that hit one of `parts` and
    not `judged`: only builds that carry such a defect are gated, so the extra parts cost little."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for hw in parts:
        request = Request(model=model, hardware=hw, gpus_per_node=LAYOUT.gpus_per_node)
        memo: dict[tuple[object, ...], object] = {SHARED: shared}
        for path in paths_for(catalog, request, LAYOUT, every_release=True):
            _, build, variant, _ = path
            own = {d.id for d in build.defects if _hits_on(d, hw) and not _hits_on(d, judged)}
            if not own or not may_run(request, path, LAYOUT, memo, shared, defects=False):
                continue
            for d in defects_hitting(model, variant, build, hw, every_config=True):
                if d.id in own:
                    on, builds = found.setdefault(d.id, (set(), set()))
                    on.add(hw.id)
                    builds.add(build.id)
    return found


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
    newest_ids = {b.id for b in newest.values() if b is not None}
    elsewhere = [
        (d_id, tuple(sorted(on)), _state(builds, newest_ids, d_id in named_fix))
        for d_id, (on, builds) in sorted(
            _elsewhere(catalog, model, hw, other_parts(catalog, gpu_class, hw_id), shared).items()
        )
    ]
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
        elsewhere=tuple(elsewhere),
    )


def _state(builds: set[str], newest: set[str], fix_named: bool) -> str:
    """As the cell counts its own defects: open when it hits a newest official release, else fixed where a build
    is named to fix it, else reported on older releases (or side builds) only."""
    if builds & newest:
        return "open"
    return "fixed" if fix_named else "older"


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
    if cell.elsewhere:
        on = "/".join(sorted({p.upper() for _, hws, _ in cell.elsewhere for p in hws}))
        counts = {s: sum(1 for *_, state in cell.elsewhere if state == s) for s in ("open", "fixed", "older")}
        tail = f", {counts['older']} older" if counts["older"] else ""
        parts.append(f"⚠ {on} only: {counts['open']} open, {counts['fixed']} fixed{tail} ¹")
    parts.append(f"surveyed {cell.surveyed:%Y-%m}" if cell.surveyed else "not surveyed")
    return " · ".join(parts)


def footnote(cells: list[Cell]) -> str:
    """¹ under the table: which part each class is judged on, and the defects marked on other parts only."""
    marked: dict[str, dict[str, set[str]]] = {}  # class -> defect id -> families
    parts: dict[str, set[str]] = {}  # defect id -> parts
    for cell in cells:
        for d_id, hws, _ in cell.elsewhere:
            marked.setdefault(cell.gpu_class, {}).setdefault(d_id, set()).add(cell.family)
            parts.setdefault(d_id, set()).update(hws)
    if not marked:
        return ""
    judged = dict(CLASSES)
    lines = []
    for gpu_class in (c for c, _ in CLASSES if c in marked):
        listed = "; ".join(
            f"{d_id} ({'/'.join(sorted(p.upper() for p in parts[d_id]))}: {', '.join(sorted(families))})"
            for d_id, families in sorted(marked[gpu_class].items())
        )
        lines.append(
            f"¹ {gpu_class} is judged on {judged[gpu_class].upper()}; these defects hit only another part of the "
            f"class (another compute capability or host CPU): {listed}."
        )
    return "\n" + "\n\n".join(lines) + "\n"


def to_markdown(cells: list[Cell]) -> str:
    classes = [c for c, _ in CLASSES]
    rows = ["| family | " + " | ".join(classes) + " |", "|---|" + "---|" * len(classes)]
    by_family: dict[str, dict[str, Cell]] = {}
    for cell in cells:
        by_family.setdefault(cell.family, {})[cell.gpu_class] = cell
    for family, row in by_family.items():
        rows.append(f"| {family} | " + " | ".join(cell_text(row[c]) for c in classes) + " |")
    return "\n".join(rows) + "\n" + footnote(cells)


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
                "defects_elsewhere": [
                    {"defect": d, "hardware": list(hws), "state": state} for d, hws, state in c.elsewhere
                ],
                "surveyed": str(c.surveyed) if c.surveyed else None,
            }
            for c in cells
        ],
    }
