"""resolve(): the layout search's ranking turned into a Resolution: each runnable path made into a plan
(flags, environment, notes, sources), the note on which layout was chosen, and where a newer release passes a
gate an older one failed.

Pure: reads the catalog and the request, returns a Resolution; no I/O, no mutation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..catalog.index import Catalog
from ..catalog.schema import Source
from ..frozen import evolve
from .candidates import LOW_BITS, Memo, builds_to_try, loading, paths_for
from .defects import applies, defects, with_workarounds
from .flags import (
    argv_of,
    common_flags,
    derived_flags,
    fallback_flags,
    missing_parsers,
    parser_gaps,
    parsers_for,
    required_flags,
)
from .hostflags import offload_flags
from .layout_search import Ranking, rank
from .ranking import why_first_of
from .rejections import LINEAGE
from .types import Candidate, Change, Flag, GateId, GateResult, Loading, Plan, Request, Resolution, undecided


def _dedupe(sources: Iterable[Source]) -> tuple[Source, ...]:
    out: dict[tuple[object, ...], Source] = {}
    for s in sources:
        out.setdefault((s.url, s.date, s.note, s.unverified), s)
    return tuple(out.values())


def make_plan(rank: int, cand: Candidate, request: Request, why: str) -> Plan:
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
        lacking = missing_parsers(model, engine, build, request.hardware.compute_capability)
        settings = evolve(
            cand.settings,
            tool_parser=None if "tool" in lacking else tool,
            reasoning_parser=None if "reasoning" in lacking else reasoning,
        )
        kernel_gate = cand.gate("kernel")
        flags = common_flags(engine, model, variant, set())
        flags.extend(derived_flags(engine, model, settings, cand.layout, kernel_gate, parser_sources, build))
        flags.extend(fallback_flags(cand))
        flags.extend(required_flags(cand, model, request.hardware.compute_capability, {f.flag for f in flags}))
        flags = with_offload(flags, offload_flags(cand))
        notes.extend(parser_notes)
        missing, unknown = parser_gaps(model, engine, build, request.hardware.compute_capability)
        notes.extend(f"{gap} — the command leaves the flag out (an unknown parser stops the server)" for gap in missing)
        notes.extend(unknown)
        notes.append(
            "derived plan: no curated recipe covers this exact path; "
            "every flag comes from catalog facts and the memory plan"
        )
        if not build.reported(model.id):
            ran = ", ".join(build.reported_for) if build.reported_for else "no model it names"
            notes.append(
                f"not reported for this model: {build.id} ({build.provenance}) was reported serving {ran}; "
                f"its kernels and formats pass the gates for {model.id}, but no report ran {model.id} on it"
            )
    if cand.budget is not None:
        notes.extend(cand.budget.notes)
    split = layer_split_note(cand)
    if split:
        notes.append(split)
    flags, env, workaround_notes = with_workarounds(cand, flags, env, request.hardware)
    notes.extend(f"known defect: {text}" for text in defects(cand))
    notes.extend(workaround_notes)
    notes.extend(variant.notes)
    notes.extend(p.text for p in model.pitfalls if applies(p, engine, build, request.hardware))
    # the platform gate's sources lead the build's: where the release's wheel was read, its GPU targets
    platform = cand.gate("platform").sources
    sources = _dedupe([*(dep.sources if dep else []), *model.sources, *variant.sources, *platform, *build.sources])
    arch = request.hardware.host_arch[0]
    return Plan(
        rank=rank,
        candidate=cand,
        flags=tuple(flags),
        argv=tuple(argv_of(engine, flags)),
        env=tuple(env),
        settings=settings,
        why_first=why if rank == 1 else "",
        notes=tuple(dict.fromkeys(notes)),
        sources=sources,
        image=build.images.get(arch) if build.source_build is None else None,
        host_arch=arch,
    )


def layer_split_note(cand: Candidate) -> str | None:
    """What a second GPU buys an engine that splits whole layers (llama.cpp): memory, not speed. Said on every
    such plan of several GPUs, offloaded or not: with whether one GPU would hold the same plan, or what of the
    model still runs on the CPU after the GPUs."""
    budget, gpus, off = cand.budget, cand.layout.gpus_per_node, cand.offload
    if cand.engine.parallelism != "layers" or gpus < 2 or budget is None:
        return None
    head = f"layers split over {gpus} GPUs run in turn"
    if off is None:
        text = f"{head}: a request decodes at one GPU's speed, the others add memory (tensor parallel uses all at once)"
        one_gpu = gpus * (budget.weights_gib + budget.kv_gib + budget.state_gib) + budget.reserve_gib
        if one_gpu <= budget.gpu_gib:
            text += f"; one GPU holds this plan ({one_gpu:.1f} of {budget.gpu_gib:g} GiB): --gpus 1 frees the rest"
        return text
    if off.mechanism == "cpu-layers":
        cpu = f"{off.cpu_layers} of {off.moe_layers} on the CPU"
    else:  # llama.cpp's other way: the routed experts of the first layers (--n-cpu-moe)
        cpu = f"the CPU's experts ({off.cpu_layers} of {off.moe_layers} layers)"
    return f"{head}, then {cpu}: a GPU past the first adds memory, not speed — less of the model in host RAM"


def with_offload(flags: list[Flag], offloaded: list[Flag]) -> list[Flag]:
    """The offload plan's flags replace the same flags of the derived plan (llama.cpp's even split)."""
    mine = {f.flag: f for f in offloaded}
    out = [mine.pop(f.flag, f) for f in flags]
    return out + list(mine.values())


def find_changes(candidates: Sequence[Candidate | Loading]) -> list[Change]:
    """Where an official release passes a gate (kernel or architecture) that the latest earlier official
    release or model image of the same engine failed, with no passing release in between. Community
    images and forks are side branches, not history. It reads the layout-free gates alone, so a path that
    cannot run may come as its Loading verdicts (candidates.loading)."""
    changes: dict[tuple[str, str, str, str], Change] = {}

    def loads(c: Candidate | Loading) -> bool:
        return c.gate("architecture").outcome == "pass"

    def gate_of(c: Candidate | Loading, gate: GateId) -> GateResult:
        return c.gate(gate)

    lines: dict[tuple[str, str], list[Candidate | Loading]] = {}  # each engine's and checkpoint's lineage paths
    for c in candidates:
        if c.build.provenance in LINEAGE:
            lines.setdefault((c.engine.id, c.variant.id), []).append(c)
    for newer in candidates:
        if newer.build.provenance != "official" or any(
            newer.gate(g).outcome != "pass" for g in ("architecture", "weight-format")
        ):
            continue
        line = lines[(newer.engine.id, newer.variant.id)]
        same = [c for c in line if c.build.released < newer.build.released]
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


def resolve(catalog: Catalog, request: Request, memo: Memo | None = None) -> Resolution:
    """`memo`: gate verdicts to share with later questions about the same request (explain's build history)."""
    resolution = resolution_of(rank(catalog, request, memo=memo))
    if not resolution.changes:
        return resolution
    return evolve(resolution, changes=tuple(first_passes(catalog, resolution, memo)))


def first_passes(catalog: Catalog, r: Resolution, memo: Memo | None = None) -> list[Change]:
    """The changes the resolution's own builds show (the newest release against the older side paths),
    told as history tells them: from every release, so "passes since" names the first build in date order
    that passes, not the newest one."""
    shown = {(ch.engine, ch.gate) for ch in r.changes}
    memo = {} if memo is None else memo
    every: list[Candidate | Loading] = []
    for engine in sorted({ch.engine for ch in r.changes}):
        request = evolve(r.request, engine=engine)
        # find_changes reads the lineage alone: community images and forks are side branches, not history
        lineage = [b for b in builds_to_try(catalog.engines[engine], request, True) if b.provenance in LINEAGE]
        paths = paths_for(catalog, request, r.layout, True, {engine: lineage})
        every.extend(loading(request, path, r.layout, memo) for path in paths)
    return [ch for ch in find_changes(every) if (ch.engine, ch.gate) in shown]


def resolution_of(ranking: Ranking) -> Resolution:
    """The plans of a ranking that gated every path of its layout."""
    request, layout, runnable, tried = ranking.request, ranking.layout, ranking.runnable, ranking.tried
    paths = ranking.paths
    assert paths is not None, "a resolution reports every path: rank() with rejections='all'"
    why = why_first_of(runnable) if runnable else ""
    plans = tuple(make_plan(i + 1, c, request, why) for i, c in enumerate(runnable))
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
        if ranking.low_bit_at is not None:
            note += (
                f"; {ranking.low_bit_at} GPU(s) run only a checkpoint below {LOW_BITS:g} bits per weight "
                f"(--gpus {ranking.low_bit_at} plans it)"
            )
    elif searched and any(map(undecided, paths.every())):
        note = (
            f"--gpus not given: tried {', '.join(map(str, tried))} GPUs; none is known to run — shown for {shape}, "
            "the smallest where a path fails no gate"
        )
    elif searched:
        note = f"--gpus not given: tried {', '.join(map(str, tried))} GPUs; none runs — rejections shown for {shape}"
    else:
        note = f"{shape}, as requested"
    return Resolution(request, layout, note, plans, paths, tuple(find_changes(paths.lineage())), tried)
