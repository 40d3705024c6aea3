"""resolve(): gate every candidate path (variant × engine build × layout) and rank the survivors.

Pure: reads the catalog and the request, returns a Resolution; no I/O, no mutation.

Ranking policy (first difference decides, shown to the user as "why this plan first"):
  0. no host offload > experts in host RAM (CPU computes them) > whole layers on the CPU > weights
     copied over PCIe every step; a layout search takes a layout that runs without offload first;
  1. curated before derived: verified > community > reported > derived (someone ran it);
  2. build provenance: official release > model-specific image > community image > fork;
  3. native weight kernels before a fallback (Marlin costs throughput), and a path with a known
     defect (of the checkpoint on this engine, or of the build on this GPU) after both;
  4. newer build first (facts move with releases);
  5. larger planned context;
  6. smaller checkpoint (less to download, more headroom);
  7. faster estimated decode (speed.py; an estimate, so only a tie-break);
  8. ids, for a stable order.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from ..catalog.index import Catalog
from ..catalog.schema import Deployment, Engine, Hardware, Source, Variant
from ..catalog.schema.engine import Build
from ..catalog.schema.model import Pitfall
from ..frozen import evolve, frozen
from . import gates
from .estimate import speed_of
from .flags import (
    argv_of,
    common_flags,
    derived_flags,
    fallback_flags,
    parser_gaps,
    parsers_for,
    required_flags,
    settings_from_deployment,
)
from .hostflags import offload_flags
from .types import (
    GATES,
    Candidate,
    Change,
    Flag,
    GateId,
    GateResult,
    Layout,
    Plan,
    Request,
    Resolution,
    Settings,
    undecided,
)

NODE_SIZES = (1, 2, 4, 8)

# Gate results that do not depend on the layout, computed once per resolve() and reused across
# layouts (keys are catalog ids).
Memo = dict[tuple[object, ...], object]
STATUS_ORDER = {"verified": 0, "community": 1, "reported": 2, "derived": 3}
PROVENANCE_ORDER = {"official": 0, "model-image": 1, "community": 2, "fork": 3}


def layouts_to_try(request: Request) -> list[Layout]:
    if request.shrink and request.gpus_per_node is not None:
        gpus, nodes = request.gpus_per_node, request.nodes
        out = [Layout(gpus, nodes)]
        while gpus > 1 or nodes > 1:
            gpus, nodes = (gpus // 2, nodes) if gpus > 1 else (gpus, nodes // 2)
            out.append(Layout(gpus, nodes))
        return out
    if request.gpus_per_node is not None:
        return [Layout(request.gpus_per_node, request.nodes)]
    if max(request.hardware.gpus_per_node) == 1:
        # one GPU per box (DGX Spark): scale out over nodes
        if request.nodes > 1:
            return [Layout(1, request.nodes)]
        return [Layout(1, n) for n in NODE_SIZES]
    return [Layout(n, request.nodes) for n in NODE_SIZES]


def _matching_deployments(
    deployments: Iterable[Deployment], request: Request, engine: Engine, build: Build, variant: Variant, layout: Layout
) -> list[Deployment]:
    return [
        d
        for d in deployments
        if d.model == request.model.id
        and d.variant == variant.id
        and d.engine == engine.id
        and d.build == build.id
        and request.hardware.id in d.hardware
        and d.gpus_per_node == layout.gpus_per_node
        and d.nodes == layout.nodes
    ]


def base_settings(engine: Engine, model_has_moe: bool, layout: Layout, deployment: Deployment | None) -> Settings:
    """The settings a path starts from: a curated recipe's flags read back, else one TP group over every GPU."""
    if deployment is not None:
        return settings_from_deployment(engine, deployment, layout)
    ep = model_has_moe and engine.flags.expert_parallel is not None and layout.gpus > 1
    return Settings(tp=layout.gpus if engine.parallelism == "tensor" else 1, ep=ep)


def evaluate(
    request: Request,
    engine: Engine,
    build: Build,
    variant: Variant,
    layout: Layout,
    deployment: Deployment | None,
    settings: Settings | None = None,
    memo: Memo | None = None,
) -> Candidate:
    """Gate one path. `settings`: check these instead of the ones recipegen would choose (lint)."""
    base = settings if settings is not None else base_settings(engine, bool(request.model.moe), layout, deployment)
    subject = gates.Subject(request, engine, build, variant, layout, deployment, base)
    found = gates.defects_hitting(request.model, variant, build, request.hardware)
    results = gates.with_defects(gates.run(subject, memo), found)
    by_id = {g.gate: g for g in results}
    kern, fmt, budget = by_id["kernel"], by_id["weight-format"], by_id["memory"].details.budget
    decided = base
    if budget is not None:
        decided = evolve(
            base,
            kv_dtype=gates.kv_dtype(subject, kern) if (base.kv_fixed or kern.details.kv_options) else None,
            context=budget.context,
            context_auto=base.context_auto and request.context is None,
            concurrency=budget.concurrency,
            fraction=budget.fraction,
        )
    notes: list[str] = []
    if fmt.details.via_fallback:
        notes.append(fmt.reason)
    cand = Candidate(
        engine=engine,
        build=build,
        variant=variant,
        layout=layout,
        deployment=deployment,
        gates=results,
        settings=decided,
        budget=budget,
        via_fallback=fmt.details.via_fallback,
        notes=tuple(notes),
        fallback_args=fmt.details.args,
        defects=tuple(d.text for d in variant.defects if applies(d, engine, build, request.hardware)),
        build_defects=found,
        offload=by_id["memory"].details.offload,
    )
    return evolve(cand, speed=speed_of(cand, request, memo)) if cand.runnable else cand


def builds_to_try(engine: Engine, request: Request, every_release: bool = False) -> list[Build]:
    """The build the user named; else the newest official release (by --as-of) and every side path
    (model images, community images, forks) released by then. Older releases answer --build and history."""
    if request.build is not None:
        return [b for b in engine.builds if b.id == request.build]
    dated = [b for b in engine.builds if request.as_of is None or b.released <= request.as_of]
    if every_release:
        return dated
    official = [b for b in dated if b.provenance == "official"]
    newest = max(official, key=lambda b: (b.released, b.id)) if official else None
    return [b for b in dated if b.provenance != "official" or b is newest]


Path = tuple[Engine, Build, Variant, "Deployment | None"]


def paths_for(
    catalog: Catalog,
    request: Request,
    layout: Layout,
    every_release: bool = False,
    builds: dict[str, list[Build]] | None = None,
) -> list[Path]:
    """Every candidate path at this layout (engine × build × variant × matching recipe), in report order.
    `builds`: each engine's builds_to_try for this request, when the caller asks at several layouts."""
    out: list[Path] = []
    # the recipes of this model on this GPU and layout, read once rather than once per build and checkpoint
    here = [
        d
        for d in catalog.deployments.values()
        if d.model == request.model.id and request.hardware.id in d.hardware and d.gpus_per_node == layout.gpus_per_node
    ]
    for engine in catalog.engines.values():
        if request.engine is not None and engine.id != request.engine:
            continue
        tried = builds[engine.id] if builds is not None else builds_to_try(engine, request, every_release)
        for build in tried:
            for variant in request.model.variants:
                if request.variant is not None and variant.id != request.variant:
                    continue
                matches: list[Deployment | None] = list(
                    _matching_deployments(here, request, engine, build, variant, layout)
                )
                out.extend((engine, build, variant, dep) for dep in matches or [None])
    return out


def candidates_for(
    catalog: Catalog, request: Request, layout: Layout, every_release: bool = False, memo: Memo | None = None
) -> list[Candidate]:
    memo = {} if memo is None else memo
    return [
        evaluate(request, engine, build, variant, layout, dep, memo=memo)
        for engine, build, variant, dep in paths_for(catalog, request, layout, every_release)
    ]


def verdict_paths(
    catalog: Catalog, request: Request, layout: Layout, every_release: bool = False, memo: Memo | None = None
) -> list[Candidate]:
    """What a verdict per build reads (history): for a build with a runnable path, its paths that pass the
    cheap gates (every runnable one among them); for any other build, every path. In report order."""
    memo = {} if memo is None else memo
    out: list[Candidate] = []
    paths = paths_for(catalog, request, layout, every_release)
    for _, group in itertools.groupby(paths, key=lambda path: path[1].id):  # a build's paths are adjacent
        mine = list(group)
        planned = {
            i: evaluate(request, *p[:3], layout, p[3], memo=memo)
            for i, p in enumerate(mine)
            if may_run(request, p, layout, memo)
        }
        if any(c.runnable for c in planned.values()):
            out.extend(planned.values())
        else:
            out.extend(
                planned[i] if i in planned else evaluate(request, *p[:3], layout, p[3], memo=memo)
                for i, p in enumerate(mine)
            )
    return out


def may_run(
    request: Request, path: Path, layout: Layout, memo: Memo, platforms: gates.PlatformVerdicts | None = None
) -> bool:
    """Whether the path passes every gate that does not read the layout (the cheap ones, memoised per path).

    A path that fails one can never be runnable, so the layout search plans memory only for the others.
    `platforms`: verdicts shared with other resolves (the matrix's cells)."""
    engine, build, variant, dep = path
    # a recipe belongs to one layout, and without one the cheap gates read no layout-dependent setting
    key = ("may-run", engine.id, build.id, variant.id, dep.id if dep else None)
    known = memo.get(key)
    if isinstance(known, bool):
        return known
    # most paths a layout search rules out, it rules out by their build's image or CUDA alone (6,696 of the
    # 10,260 paths the default matrix asks about): that verdict is the build's, so it is read before the
    # path's own subject is made
    if gates.platform_memoised(engine, build, request.hardware, memo, platforms).outcome != "pass":
        memo[key] = False
        return False
    base = base_settings(engine, bool(request.model.moe), layout, dep)
    subject = gates.Subject(request, engine, build, variant, layout, dep, base)
    found = gates.defects_hitting(request.model, variant, build, request.hardware)
    cheap = gates.run(subject, memo, gates.FEWEST_FIRST, until_not_pass=True)
    verdict = all(g.outcome == "pass" for g in cheap) and not any(
        d.blocks and d.gate in gates.LAYOUT_FREE for d in found
    )
    memo[key] = verdict
    return verdict


@dataclass
class _Layouts:
    """The paths gated at each layout tried, shared by the layout search and the full report of one layout."""

    catalog: Catalog
    request: Request
    memo: Memo = field(default_factory=dict)
    platforms: gates.PlatformVerdicts | None = None
    paths: dict[Layout, list[Path]] = field(default_factory=dict)
    gated: dict[Layout, dict[int, Candidate]] = field(default_factory=dict)
    builds: dict[str, list[Build]] | None = None

    def _paths(self, layout: Layout) -> list[Path]:
        if layout not in self.paths:
            if self.builds is None:  # the same at every layout
                self.builds = {e.id: builds_to_try(e, self.request) for e in self.catalog.engines.values()}
            self.paths[layout] = paths_for(self.catalog, self.request, layout, builds=self.builds)
        return self.paths[layout]

    def runnable(self, layout: Layout) -> list[Candidate]:
        """The runnable paths at this layout, ranked; only paths that pass the cheap gates are planned."""
        done = self.gated.setdefault(layout, {})
        for index, path in enumerate(self._paths(layout)):
            if index not in done and may_run(self.request, path, layout, self.memo, self.platforms):
                done[index] = evaluate(self.request, *path[:3], layout, path[3], memo=self.memo)
        return sorted((c for _, c in sorted(done.items()) if c.runnable), key=rank_key)

    def _gate(self, layout: Layout, index: int, path: Path) -> Candidate:
        done = self.gated.setdefault(layout, {})
        if index not in done:
            done[index] = evaluate(self.request, *path[:3], layout, path[3], memo=self.memo)
        return done[index]

    def every(self, layout: Layout) -> list[Candidate]:
        """Every path at this layout, in report order (the ones the search planned are reused)."""
        return [self._gate(layout, index, path) for index, path in enumerate(self._paths(layout))]

    def undecided(self, layout: Layout) -> list[Candidate]:
        """The paths here that fail no gate but that some gate cannot decide, in report order (only paths
        that fail no cheap gate are planned)."""
        return [
            c
            for index, path in enumerate(self._paths(layout))
            if all(g.outcome != "fail" for g in self._layout_free(path, layout))
            and undecided(c := self._gate(layout, index, path))
        ]

    def closest(self, layout: Layout) -> list[Candidate]:
        """The paths at this layout that fail the fewest gates, gated in full, in report order.

        A path fails at least the layout-free gates that do not pass (or that a blocking defect fails), so a
        path failing more of those than a path already gated fails in all is never planned: most blocked paths
        fail their platform or architecture and are settled by memoised verdicts alone."""
        unknown = self.undecided(layout)
        if unknown:  # a path nothing rules out decides before one that fails a gate (explain says "unknown" too)
            return unknown
        done = self.gated.setdefault(layout, {})
        paths = self._paths(layout)
        bounds = sorted((self._layout_free_failures(path, layout), index) for index, path in enumerate(paths))
        fewest = min((len(c.failing()) for c in done.values()), default=len(GATES))
        for bound, index in bounds:
            if bound > fewest:
                break
            if index not in done:
                done[index] = evaluate(self.request, *paths[index][:3], layout, paths[index][3], memo=self.memo)
            fewest = min(fewest, len(done[index].failing()))
        return [c for _, c in sorted(done.items()) if len(c.failing()) == fewest]

    def _layout_free_failures(self, path: Path, layout: Layout) -> int:
        return sum(1 for g in self._layout_free(path, layout) if g.outcome != "pass")

    def _layout_free(self, path: Path, layout: Layout) -> tuple[GateResult, ...]:
        """The gates that do not read the layout, with the blocking defects that show at them (memoised)."""
        engine, build, variant, dep = path
        key = ("layout-free", engine.id, build.id, variant.id, dep.id if dep else None)
        known = self.memo.get(key)
        if isinstance(known, tuple):
            return known
        request = self.request
        base = base_settings(engine, bool(request.model.moe), layout, dep)
        subject = gates.Subject(request, engine, build, variant, layout, dep, base)
        found = gates.defects_hitting(request.model, variant, build, request.hardware)
        blocking_here = tuple(d for d in found if d.gate in gates.LAYOUT_FREE)
        results = gates.with_defects(gates.run(subject, self.memo, gates.FEWEST_FIRST), blocking_here)
        self.memo[key] = results
        return results


Rejections = Literal["all", "closest-when-blocked", "none"]


@frozen
class Ranking:
    """The layout search's answer before plans are made: the layout reported, its runnable paths ranked,
    and (when asked for) the paths gated there."""

    request: Request
    layout: Layout
    runnable: tuple[Candidate, ...]
    # every path at the layout in report order ("all"), or those failing the fewest gates ("closest-when-blocked");
    # None: not gated
    candidates: tuple[Candidate, ...] | None
    tried: tuple[int, ...]
    searched: bool
    offload_first_at: tuple[int, ...] | None = None


def rank(
    catalog: Catalog,
    request: Request,
    rejections: Rejections = "all",
    platforms: gates.PlatformVerdicts | None = None,
) -> Ranking:
    """The layout search: the first layout tried that runs without host offload, else the first that runs
    with it, else the whole fleet (shrink) or the largest size tried. `rejections`: whether every path of
    that layout is gated too ("all"), only when nothing runs and only the paths that fail the fewest gates
    ("closest-when-blocked": the matrix names the closest rejection), or never ("none"). `platforms`: platform
    verdicts shared with other resolves."""
    layouts = layouts_to_try(request)
    gated = _Layouts(catalog, request, platforms=platforms)
    tried: list[int] = []
    searched = len(layouts) > 1
    offloading: tuple[Layout, list[Candidate], tuple[int, ...]] | None = None

    def ranking(layout: Layout, runnable: list[Candidate], offload_first_at: tuple[int, ...] | None) -> Ranking:
        candidates: tuple[Candidate, ...] | None = None
        if rejections == "all":
            candidates = tuple(gated.every(layout))
        elif rejections == "closest-when-blocked" and not runnable:
            candidates = tuple(gated.closest(layout))
        return Ranking(request, layout, tuple(runnable), candidates, tuple(tried), searched, offload_first_at)

    for layout in layouts:
        tried.append(layout.gpus)
        runnable = gated.runnable(layout)
        if runnable and runnable[0].offload is None:
            return ranking(layout, runnable, None)
        if runnable and offloading is None:
            offloading = (layout, runnable, tuple(tried))
    if offloading is not None:
        # no layout runs from GPU memory alone: the smallest one that runs with host offload
        layout, runnable, tried_then = offloading
        return ranking(layout, runnable, tried_then)
    if request.shrink:  # nothing runs: with a fleet, report the whole fleet (the most memory per shard)
        return ranking(layouts[0], [], None)
    # nothing is known to run: the smallest layout where a path fails no gate (there the answer is
    # "unknown", not "blocked"), else the largest size tried
    shown = next((layout for layout in layouts if gated.undecided(layout)), layouts[-1])
    return ranking(shown, [], None)


def defects(c: Candidate) -> list[str]:
    """Known faults on this path: the checkpoint's (per engine) and the build's (per GPU, model, feature)."""
    return [*c.defects, *(f"{c.build.id}: {gates.defect_text(d)}" for d in c.build_defects)]


def applies(p: Pitfall, engine: Engine, build: Build, hw: Hardware) -> bool:
    """A note or defect scoped to engines, builds and GPUs: does it concern this path?"""
    return (
        (p.engines is None or engine.id in p.engines)
        and (p.builds is None or build.id in p.builds)
        and (p.capability is None or hw.compute_capability in p.capability)
    )


def offload_cost(c: Candidate) -> int:
    """0: the GPUs hold every weight; 1: experts run from host RAM on the CPU; 2: whole layers do;
    3: weights cross PCIe every step."""
    if c.offload is None:
        return 0
    return {"expert-layers": 1, "all-experts": 1, "cpu-layers": 2, "weights-gb": 3}[c.offload.mechanism]


def rank_key(c: Candidate) -> tuple[int, int, int, int, int, int, float, float, str, str, str]:
    context = c.settings.context or 0
    return (
        offload_cost(c),
        STATUS_ORDER[c.status],
        PROVENANCE_ORDER[c.build.provenance],
        2 if defects(c) else (1 if c.via_fallback else 0),
        -c.build.released.toordinal(),
        -context,
        c.budget.weights_gib if c.budget else float("inf"),
        -c.speed.decode_tps if c.speed else 0.0,
        c.engine.id,
        c.build.id,
        c.variant.id,
    )


def why_first(first: Candidate, second: Candidate | None) -> str:
    if second is None:
        return "the only path that passes every gate"
    a, b = rank_key(first), rank_key(second)
    off = {
        0: "no host offload",
        1: "experts in host RAM",
        2: "whole layers on the CPU",
        3: "weights copied over PCIe every step",
    }
    labels = [
        f"{off[offload_cost(first)]} before {off[offload_cost(second)]}",
        f"a curated recipe ({first.status}) beats a {second.status} plan",
        f"{first.build.provenance} build before a {second.build.provenance} one",
        "native weight kernels instead of a fallback, or a path without a known defect",
        f"newer build ({first.build.released} vs {second.build.released})",
        f"larger planned context ({first.settings.context} vs {second.settings.context})",
        "a smaller checkpoint (more headroom)",
        "faster estimated decode (a tie-break only)",
    ]
    for index, label in enumerate(labels):
        if a[index] != b[index]:
            return f"{label} — next: {second.engine.name} {second.build.id} / {second.variant.id}"
    return f"tie on every criterion; ordered by id — next: {second.build.id} / {second.variant.id}"


def _dedupe(sources: Iterable[Source]) -> tuple[Source, ...]:
    out: dict[tuple[object, ...], Source] = {}
    for s in sources:
        out.setdefault((s.url, s.date, s.note, s.unverified), s)
    return tuple(out.values())


def make_plan(rank: int, cand: Candidate, request: Request, runner_up: Candidate | None) -> Plan:
    model, engine, build, variant = request.model, cand.engine, cand.build, cand.variant
    dep = cand.deployment
    tool, reasoning, parser_notes, parser_sources = parsers_for(
        model, engine, build, request.hardware.compute_capability
    )
    notes: list[str] = list(cand.notes)
    env: list[tuple[str, str, str]] = []
    if dep is not None:
        spelled = {a.flag for a in dep.args}
        flags = common_flags(engine, model, variant, spelled)
        dep_flags = [Flag(a.flag, a.value, a.reason, tuple(a.sources) or tuple(dep.sources[:1])) for a in dep.args]
        overrides = {
            engine.flags.context_length: request.context,
            engine.flags.max_concurrency: request.concurrency,
        }
        for flag_name, wanted in overrides.items():
            if wanted is None:
                continue
            replaced = [
                Flag(f.flag, str(wanted), "set by the request (the recipe had another value)")
                if f.flag == flag_name
                else f
                for f in dep_flags
            ]
            if replaced == dep_flags:
                replaced.append(Flag(flag_name, str(wanted), "set by the request"))
            dep_flags = replaced
        if engine.flags.context_length not in {f.flag for f in dep_flags} and cand.budget is not None:
            dep_flags.append(
                Flag(
                    engine.flags.context_length,
                    str(cand.budget.context),
                    f"the recipe sets no context, so the engine would plan for the model's full {model.max_context:,} "
                    "tokens; this is the planned context that fits (see the budget)",
                )
            )
        flags.extend(dep_flags)
        env.extend((e.name, e.value, e.reason) for e in dep.env)
        notes.extend(dep.notes)
        settings = cand.settings
    else:
        settings = evolve(cand.settings, tool_parser=tool, reasoning_parser=reasoning)
        kernel_gate = cand.gate("kernel")
        flags = common_flags(engine, model, variant, set())
        flags.extend(derived_flags(engine, model, settings, cand.layout, kernel_gate, parser_sources))
        flags.extend(fallback_flags(cand))
        flags.extend(required_flags(cand, model, request.hardware.compute_capability, {f.flag for f in flags}))
        flags = with_offload(flags, offload_flags(cand))
        notes.extend(parser_notes)
        notes.extend(parser_gaps(model, engine, build, request.hardware.compute_capability)[1])
        notes.append(
            "derived plan: no curated recipe covers this exact path; "
            "every flag comes from catalog facts and the memory plan"
        )
    if cand.budget is not None:
        notes.extend(cand.budget.notes)
    notes.extend(f"known defect: {text}" for text in defects(cand))
    notes.extend(variant.notes)
    notes.extend(p.text for p in model.pitfalls if applies(p, engine, build, request.hardware))
    sources = _dedupe([*(dep.sources if dep else []), *model.sources, *variant.sources, *build.sources])
    arch = request.hardware.host_arch[0]
    return Plan(
        rank=rank,
        candidate=cand,
        flags=tuple(flags),
        argv=tuple(argv_of(engine, flags)),
        env=tuple(env),
        settings=settings,
        why_first=why_first(cand, runner_up) if rank == 1 else "",
        notes=tuple(dict.fromkeys(notes)),
        sources=sources,
        image=build.images.get(arch) if build.source_build is None else None,
        host_arch=arch,
    )


def with_offload(flags: list[Flag], offloaded: list[Flag]) -> list[Flag]:
    """The offload plan's flags replace the same flags of the derived plan (llama.cpp's even split)."""
    mine = {f.flag: f for f in offloaded}
    out = [mine.pop(f.flag, f) for f in flags]
    return out + list(mine.values())


def find_changes(candidates: list[Candidate]) -> list[Change]:
    """Where an official release passes a gate (kernel or architecture) that the latest earlier official
    release or model image of the same engine failed, with no passing release in between. Community
    images and forks are side branches, not history."""
    changes: dict[tuple[str, str, str, str], Change] = {}
    lineage = ("official", "model-image")

    def loads(c: Candidate) -> bool:
        return c.gate("architecture").outcome == "pass"

    def gate_of(c: Candidate, gate: GateId) -> GateResult:
        return c.gate(gate)

    for newer in candidates:
        if newer.build.provenance != "official" or any(
            newer.gate(g).outcome != "pass" for g in ("architecture", "weight-format")
        ):
            continue
        same = [
            c
            for c in candidates
            if c.engine.id == newer.engine.id
            and c.variant.id == newer.variant.id
            and c.build.provenance in lineage
            and c.build.released < newer.build.released
        ]
        for gate in ("architecture", "kernel"):
            after = gate_of(newer, gate)
            if after.outcome != "pass":
                continue
            failed = [c for c in same if gate_of(c, gate).outcome == "fail" and (gate == "architecture" or loads(c))]
            if not failed:
                continue
            older = max(failed, key=lambda c: (c.build.released, c.build.id))
            passed_between = any(
                c.build.released > older.build.released
                and c.build.provenance == "official"
                and gate_of(c, gate).outcome == "pass"
                and loads(c)
                for c in same
            )
            if passed_between:
                continue
            before = gate_of(older, gate)
            key = (older.engine.id, gate, older.build.id, newer.build.id)
            variants = changes[key].variant + ", " + older.variant.id if key in changes else older.variant.id
            changes[key] = Change(
                older.engine.id,
                variants,
                gate,
                older.build.id,
                str(older.build.released),
                before.reason,
                newer.build.id,
                str(newer.build.released),
                after.reason,
            )
    return sorted(changes.values(), key=lambda c: (c.engine, c.after_date, c.before_build, c.gate))


def resolve(catalog: Catalog, request: Request) -> Resolution:
    return resolution_of(rank(catalog, request))


def resolution_of(ranking: Ranking) -> Resolution:
    """The plans of a ranking that gated every path of its layout."""
    request, layout, runnable, tried = ranking.request, ranking.layout, ranking.runnable, ranking.tried
    assert ranking.candidates is not None, "a resolution reports every path: rank() with rejections='all'"
    cands = list(ranking.candidates)
    plans = tuple(
        make_plan(i + 1, c, request, runnable[1] if len(runnable) > 1 else None) for i, c in enumerate(runnable)
    )
    shape = (
        f"{layout.nodes} node(s) × {layout.gpus_per_node} GPU(s)"
        if layout.nodes > 1
        else f"{layout.gpus_per_node} GPU(s)"
    )
    searched, offload_first_at = ranking.searched, ranking.offload_first_at
    if request.shrink:
        note = (
            f"{shape} of the {(request.gpus_per_node or 1) * request.nodes}-GPU fleet"
            if runnable
            else f"no layout of the fleet runs; rejections shown for {shape}"
        )
    elif searched and runnable and offload_first_at is not None:
        note = (
            f"--gpus not given: no size up to {tried[-1]} GPUs holds every weight in GPU memory; {shape} is the "
            "smallest that runs with host offload"
        )
    elif searched and runnable:
        smaller = [n for n in tried if n != layout.gpus]
        note = f"--gpus not given: {shape} is the smallest usual size that runs" + (
            f" (tried {', '.join(map(str, smaller))} first)" if smaller else ""
        )
    elif searched and any(map(undecided, cands)):
        note = (
            f"--gpus not given: tried {', '.join(map(str, tried))} GPUs; none is known to run — shown for {shape}, "
            "the smallest where a path fails no gate"
        )
    elif searched:
        note = f"--gpus not given: tried {', '.join(map(str, tried))} GPUs; none runs — rejections shown for {shape}"
    else:
        note = f"{shape}, as requested"
    ordered = sorted(cands, key=rank_key)
    return Resolution(request, layout, note, plans, tuple(ordered), tuple(find_changes(cands)), tried)
