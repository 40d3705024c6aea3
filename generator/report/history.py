"""Verdicts across an engine's builds in date order: since when a model runs on a GPU, and what changed.

The release line is an engine's official releases; model images, community images and forks are
side paths, listed apart (a model image is a branch cut for one model, not a release). Each build
gets the verdict `resolve` would give for it alone.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ..catalog import harvest
from ..catalog.index import Catalog
from ..catalog.schema import Build, Engine
from ..frozen import frozen
from ..plan.candidates import Memo, builds_to_try, evaluate, loading, may_run, paths_for, verdict_paths
from ..plan.describe import clip, wrap
from ..plan.flags import parser_facts
from ..plan.layout_search import layouts_to_try
from ..plan.ranking import rank_key
from ..plan.types import Candidate, GateResult, Layout, Loading, Request, Resolution, told_first

LINE = ("official",)


@frozen
class BuildVerdict:
    build: Build
    runnable: bool
    layout: Layout
    gate: GateResult | None  # the first failing gate of the closest path; None when runnable
    passing: tuple[GateResult, ...]  # the gates of the best path (runnable or closest)
    defects: tuple[str, ...] = ()  # known defects of the build this request runs into
    parsers: tuple[str, ...] = ()  # a derived path's parsers as the build's lists know them (has, lacks, unknown)

    @property
    def lost(self) -> tuple[str, ...]:
        """What a runnable plan here loses to a parser its build lacks ("tool calls are not parsed")."""
        arch = next((g for g in self.passing if g.gate == "architecture"), None)
        return tuple(gap.split(":")[0] for gap in arch.details.unparsed) if arch and self.runnable else ()

    @property
    def label(self) -> str:
        if self.runnable:
            return "runnable" + (f" ({', '.join(self.lost)})" if self.lost else "")
        assert self.gate is not None
        word = "blocked" if self.gate.outcome == "fail" else "unknown"
        # the same reason reads the same in every build ("does not load X", not "vllm-0.24.0 does not load X")
        # (normalised before it is shortened, so builds with ids of different lengths cut it at the same place)
        # (the parentheticals go first: "B (CUDA 12.9) is not compiled for sm80" is "is not compiled for sm80",
        # never " is not compiled …" with its subject gone and a stray space left where it was)
        build = self.build.id
        reason = _bare(self.gate.reason).removeprefix(f"{build} ").replace(f" in {build}", "")
        reason = short(reason.replace(build, "the build"))
        return f"{word} ({self.gate.gate}: {reason})"

    @property
    def detail(self) -> str:
        """The label plus the known defects this build has for the request."""
        found = f" — known defect: {', '.join(self.defects)}" if self.defects else ""
        return self.label + found

    @property
    def key(self) -> str:
        return self.label


@frozen
class Flip:
    before: BuildVerdict
    after: BuildVerdict
    change: str  # what the later build does differently at the gate that flipped


@frozen
class EngineHistory:
    engine: Engine
    line: tuple[BuildVerdict, ...]
    side: tuple[BuildVerdict, ...]
    flips: tuple[Flip, ...]
    model_released: str | None = None  # the model's release month (YYYY-MM), when the catalog gives one

    def predates_model(self, verdict: BuildVerdict) -> bool:
        """The build came out in a month before the model did: it loads the architecture, not this checkpoint
        as its makers shipped it (a verdict for a release nobody could have run the model on)."""
        if self.model_released is None:
            return False
        return f"{verdict.build.released:%Y-%m}" < self.model_released

    def summary(self) -> str:
        if not self.line:
            return f"{self.engine.name}: no dated release in the catalog"
        segments: list[list[BuildVerdict]] = []
        for verdict in self.line:
            if segments and segments[-1][-1].key == verdict.key:
                segments[-1].append(verdict)
            else:
                segments.append([verdict])
        first = self.line[0]
        if len(self.line) == 1:
            return (
                f"{self.engine.name}: {first.label} in {first.build.id} ({first.build.released}), its only release here"
            )
        if len(segments) == 1:
            label = segments[0][0].label
            return f"{self.engine.name}: {label} in every build from {first.build.id} ({first.build.released}) to " + (
                self.line[-1].build.id
            )
        text = f"{self.engine.name}: {segments[0][0].label}"
        for index, segment in enumerate(segments[1:], start=1):
            head = segment[0]
            text += f" until {head.build.id} ({head.build.released}), "
            text += f"{head.label} since" if index == len(segments) - 1 else f"then {head.label}"
        return text


def _bare(reason: str) -> str:
    """The reason's first clause without its parentheticals (the why, a CUDA version), not what follows them."""
    text = reason.split(" — ")[0].split(" | ")[0]
    while (inner := re.sub(r" ?\([^()]*\)", "", text)) != text:
        text = inner
    return text.strip()


def short(reason: str, limit: int = 90) -> str:
    return clip(_bare(reason), limit)


def _parsers(request: Request | None, cand: Candidate) -> tuple[str, ...]:
    """A derived path's parsers in its build (a curated recipe vouches for its own flags)."""
    if request is None or cand.deployment is not None:
        return ()
    facts = parser_facts(request.model, cand.engine, cand.build, request.hardware.compute_capability)
    return tuple(fact.removesuffix("; check it before relying on it") for fact in facts)


def _verdict(
    build: Build, by_layout: list[tuple[Layout, list[Candidate]]], request: Request | None = None
) -> BuildVerdict:
    for layout, cands in by_layout:
        ok = sorted((c for c in cands if c.build.id == build.id and c.runnable), key=rank_key)
        if ok:
            found = tuple(d.id for d in ok[0].build_defects)
            return BuildVerdict(build, True, layout, None, ok[0].gates, found, _parsers(request, ok[0]))
    layout, cands = by_layout[-1]
    mine = [c for c in cands if c.build.id == build.id]
    # a GGUF file offered to a safetensors engine (or the reverse) is never the interesting rejection
    matching = [c for c in mine if (c.engine.loads == "gguf") == (c.variant.quant == "gguf")] or mine
    closest = min(matching, key=lambda c: (c.gates[0].outcome == "fail", len(c.failing()), rank_key(c)))
    found = tuple(d.id for d in closest.build_defects)
    return BuildVerdict(build, False, layout, closest.failing()[0], closest.gates, found, _parsers(request, closest))


def _flip(before: BuildVerdict, after: BuildVerdict) -> Flip:
    if before.runnable and after.runnable:  # runnable in both: what a plan loses to a missing parser changed
        return Flip(before, after, "parsers: " + "; ".join(after.parsers))
    if before.gate is not None:
        gate = before.gate.gate
        now = next((g for g in after.passing if g.gate == gate and g.outcome == "pass"), None)
        # the architecture gate also decides the parsers: say what the later build's lists know of them
        parsers = "; ".join(after.parsers) if gate == "architecture" and now is not None else ""
        if after.runnable and now is not None:
            said = now.reason.split("; ")[0] if parsers else now.reason  # the parsers are said once, below
            return Flip(before, after, f"{gate} now passes: {_brief(said)}" + (f"; {parsers}" if parsers else ""))
        if after.gate is not None and after.gate.gate == gate == "architecture" and now is None:
            changed = _new_parser_facts(before, after)
            also = f"; now {'; '.join(changed)}" if changed else ""
            return Flip(before, after, f"still blocked at {gate}: {_brief(after.gate.reason)}{also}")
        if after.gate is not None:
            passes = f" ({gate} now passes: {parsers})" if parsers else ""
            return Flip(before, after, f"now blocked at {after.gate.gate}: {_brief(after.gate.reason)}{passes}")
    assert after.gate is not None
    return Flip(before, after, f"{after.gate.gate} fails from this build: {_brief(after.gate.reason)}")


def _new_parser_facts(before: BuildVerdict, after: BuildVerdict) -> list[str]:
    """What the later build's parser lists say that the earlier one's did not (a parser arrived, or went)."""
    earlier = {fact.replace(before.build.id, "") for fact in before.parsers}
    return [fact for fact in after.parsers if fact.replace(after.build.id, "") not in earlier]


def _brief(reason: str, limit: int = 200) -> str:
    text = reason.split(" | ")[0]
    return clip(text, limit)


def engine_history(
    engine: Engine, by_layout: list[tuple[Layout, list[Candidate]]], request: Request | None = None
) -> EngineHistory:
    builds = [b for b in engine.builds if any(c.build.id == b.id for _, cands in by_layout for c in cands)]
    verdicts = [_verdict(b, by_layout, request) for b in sorted(builds, key=lambda b: (b.released, b.id))]
    line = tuple(v for v in verdicts if v.build.provenance in LINE)
    side = tuple(v for v in verdicts if v.build.provenance not in LINE)
    flips = tuple(_flip(a, b) for a, b in itertools.pairwise(line) if a.key != b.key)
    return EngineHistory(engine, line, side, flips, _release_month(request.model.released) if request else None)


def _release_month(text: str) -> str | None:
    """YYYY-MM from a model's `released` (e.g. "2025-04" or "2025-04-28"); None for anything else."""
    month = text[:7]
    return month if len(month) == 7 and month[4] == "-" and month.replace("-", "").isdigit() else None


def history(catalog: Catalog, request: Request, layouts: Iterable[Layout] | None = None) -> list[EngineHistory]:
    """Every engine's history for the request (its --build is ignored: history is about all builds), the
    releases known only from their harvested code included (their verdicts rest on what was read there)."""
    from ..catalog.harvested_builds import adopt_unwritten

    base = replace(request, build=None)
    out: list[EngineHistory] = []
    tried = list(layouts) if layouts is not None else layouts_to_try(base)
    for engine in catalog.engines.values():
        if request.engine is not None and engine.id != request.engine:
            continue
        if engine.id in harvest.engines():
            adopt_unwritten(catalog, engine.id)
            engine = catalog.engines[engine.id]
        scoped = replace(base, engine=engine.id)
        memo: Memo = {}
        by_layout = [
            (layout, verdict_paths(catalog, scoped, layout, every_release=True, memo=memo)) for layout in tried
        ]
        if any(cands for _, cands in by_layout):
            out.append(engine_history(engine, by_layout, request))
    return out


def explain_lines(catalog: Catalog, resolution: Resolution, memo: Memo | None = None) -> list[str]:
    """The history line `explain` ends with: for the chosen engine, or for every engine when blocked. `memo`: the
    gate verdicts its resolve already reached (the same request, so the same model, GPU and settings)."""
    request, layout = resolution.request, resolution.layout
    engines = [resolution.plans[0].engine] if resolution.plans else list(catalog.engines.values())
    out: list[str] = []
    for engine in engines:
        if request.engine is not None and engine.id != request.engine:
            continue
        if request.build is not None and engine.id in harvest.engines():
            # a named release may be one known only from its code: the line then shows every such release,
            # as `history` does, so the release that turns it runnable is not skipped over
            from ..catalog.harvested_builds import adopt_unwritten

            adopt_unwritten(catalog, engine.id)
            engine = catalog.engines[engine.id]
        scoped = replace(request, build=None, engine=engine.id)
        # the line is the release line's: side paths (model images, community images, forks) are not gated
        line = [b for b in builds_to_try(engine, scoped, every_release=True) if b.provenance in LINE]
        verdicts = line_verdicts(catalog, scoped, layout, line, {} if memo is None else memo)
        if verdicts:  # the summary reads the release line's labels alone: no side paths, no flips
            out.append(f"  {EngineHistory(engine, tuple(verdicts), (), ()).summary()}")
    if not out:
        return []
    shape = f"{layout.gpus} GPU(s)" if layout.nodes == 1 else f"{layout.nodes} × {layout.gpus_per_node} GPU(s)"
    return ["", f"Across builds ({shape}; `recipegen history` for every build and what changed):", *out]


def history_json(histories: list[EngineHistory]) -> list[dict[str, Any]]:
    def verdict(h: EngineHistory, v: BuildVerdict) -> dict[str, Any]:
        return {
            "build": v.build.id,
            "version": v.build.version,
            "released": str(v.build.released),
            "provenance": v.build.provenance,
            "extends": v.build.extends,
            "verdict": "runnable" if v.runnable else ("blocked" if v.gate and v.gate.outcome == "fail" else "unknown"),
            "gpus": v.layout.gpus_per_node,
            "nodes": v.layout.nodes,
            "gate": v.gate.gate if v.gate else None,
            "reason": v.gate.reason if v.gate else None,
            "defects": list(v.defects),
            "loses": list(v.lost),  # runnable without a parser its build lacks: what a plan there does not do
            "before_model_release": h.predates_model(v),
        }

    return [
        {
            "engine": h.engine.id,
            "summary": h.summary(),
            "builds": [verdict(h, v) for v in h.line],
            "side_paths": [verdict(h, v) for v in h.side],
            "flips": [
                {
                    "from": f.before.build.id,
                    "to": f.after.build.id,
                    "date": str(f.after.build.released),
                    "change": f.change,
                }
                for f in h.flips
            ],
        }
        for h in histories
    ]


def history_text(histories: list[EngineHistory], verbose: bool = False) -> str:
    out: list[str] = []
    for h in histories:
        out.append(h.summary())
        rows: list[tuple[BuildVerdict, BuildVerdict, int, str]] = []  # first, last, count, what they say
        for v in h.line:
            # a runnable (or undecided) verdict for a release older than the model is about its architecture
            shown = h.predates_model(v) and (v.runnable or (v.gate is not None and v.gate.outcome != "fail"))
            said = v.detail + (f" (released before the model, {h.model_released})" if shown else "")
            if rows and rows[-1][3] == said:  # consecutive releases that say the same: one row
                first, _, count, _ = rows[-1]
                rows[-1] = (first, v, count + 1, said)
            else:
                rows.append((v, v, 1, said))
        for first, last, count, said in rows:
            if count == 1:
                out.append(f"  {first.build.released}  {first.build.id:<28} {said}")
            else:
                span = f"{first.build.id} … {last.build.id} ({count})"
                out.append(f"  {first.build.released}  {span:<28} {said}  [to {last.build.released}]")
        for f in h.flips:
            out.append(f"  ↳ {f.before.build.id} → {f.after.build.id}: {f.change}")
        out.extend(side_lines(h.side, verbose))
        out.append("")
    return "\n".join(out)


def side_lines(side: Iterable[BuildVerdict], verbose: bool = False) -> list[str]:
    """The side paths (model images, community images, forks): --verbose (and --format json) each on its line in
    date order, with the known defects it meets. By default the ones that run come first, each on its line; the
    others share a line per reason that names them: those reported only on other GPUs (untested here), then the
    blocked ones, by the gate that blocks them."""
    paths = list(side)
    if verbose:
        return [_side_line(v) for v in paths]
    out = [_side_line(v) for v in paths if v.runnable]
    grouped: dict[str, list[BuildVerdict]] = {}
    for v in paths:
        if v.runnable or v.gate is None:
            continue
        untested = v.gate.outcome == "unknown" and v.gate.gate == "platform"
        grouped.setdefault(UNTESTED if untested else v.label, []).append(v)
    for label in sorted(grouped, key=lambda label: label != UNTESTED):  # may run before does not run
        found = grouped[label]
        if len(found) == 1:
            out.append(_side_line(found[0]))
        else:  # the defects a path that may not run would also meet are --verbose's
            names = ", ".join(v.build.id for v in found)
            out.extend(wrap(names, f"  {len(found)} side paths {label}: ", "      ", 1))
    return out


UNTESTED = "unknown (platform: reported working only on other GPUs, untested on this one)"


def _side_line(v: BuildVerdict) -> str:
    return f"  {v.build.provenance} path: {v.build.id} ({v.build.released}): {v.detail}"


def line_verdicts(
    catalog: Catalog, request: Request, layout: Layout, line: list[Build], memo: Memo
) -> list[BuildVerdict]:
    """The verdicts of these builds in date order, as engine_history gives them, for a summary: a blocked build's
    label is its closest path's first failing gate, and where every path that may be closest fails first at the same
    layout-free gate for the same reason (candidates.loading), that is the label whichever path is closest, so none
    of them has its memory planned. Such a verdict holds no gates of the path (`passing` is empty): a summary
    reads the labels alone."""
    out: list[BuildVerdict] = []
    paths = paths_for(catalog, request, layout, every_release=True, builds={request.engine or "": line})
    for _, group in itertools.groupby(paths, key=lambda path: path[1].id):  # a build's paths are adjacent
        mine = list(group)
        build = mine[0][1]
        planned = [
            evaluate(request, *p[:3], layout, p[3], memo=memo) for p in mine if may_run(request, p, layout, memo)
        ]
        if any(c.runnable for c in planned):
            out.append(_verdict(build, [(layout, planned)], request))
            continue
        rows = [loading(request, p, layout, memo) for p in mine]
        matching = [r for r in rows if (r.engine.loads == "gguf") == (r.variant.quant == "gguf")] or rows
        known = [_closeness(r) for r in matching if isinstance(r, Candidate)]
        bound = min(known, default=None)
        # the closest path is among those whose floor (a Loading fails at least its layout-free gates) is no
        # further than the closest fully gated one
        near = [r for r in matching if bound is None or _closeness(r) <= bound]
        firsts = [_first_failing(r) for r in near]
        if all(first == firsts[0] for first in firsts):
            out.append(BuildVerdict(build, False, layout, firsts[0], ()))
            continue
        every = [
            r if isinstance(r, Candidate) else evaluate(request, *p[:3], layout, p[3], memo=memo)
            for r, p in zip(rows, mine, strict=True)
        ]
        out.append(_verdict(build, [(layout, every)], request))
    return sorted(out, key=lambda v: (v.build.released, v.build.id))


def _closeness(row: Candidate | Loading) -> tuple[bool, int]:
    """The first two parts of _verdict's closeness: exact for a Candidate, a floor for a Loading."""
    return row.gates[0].outcome == "fail", sum(1 for g in row.gates if g.outcome != "pass")


def _first_failing(row: Candidate | Loading) -> GateResult:
    """A path's first gate to tell that does not pass (a Loading's is among its layout-free gates, which come
    first; a platform refusal leads, as Candidate.failing puts it)."""
    return told_first(row.gates)[0]
