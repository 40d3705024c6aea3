"""Checks on a run the log describes, beyond the failure it shows: a slow path (the kernels it chose against the
best the catalog knows for its GPU) and lint's findings on the command the log echoes.
"""

from __future__ import annotations

from dataclasses import replace

from ..catalog.capability import Capability
from ..catalog.index import Catalog
from ..catalog.schema.engine import Build
from ..errors import RecipegenError
from ..plan.build_gates import backend_name
from .log_facts import LogFacts


def _build(catalog: Catalog, facts: LogFacts) -> Build | None:
    if facts.build is not None:
        return catalog.build(facts.build)[1]
    engine = catalog.engines.get(facts.engine or "")
    if engine is None or not engine.builds:
        return None
    official = [b for b in engine.builds if b.provenance == "official"] or list(engine.builds)
    return max(official, key=lambda b: b.released)


def _attention(build: Build, cc: Capability, name: str, facts: LogFacts) -> str | None:
    chosen = [k for k in build.kernels if backend_name(k.name).upper() == name.upper() and cc in k.sm]
    ops = {k.provides for k in chosen if k.provides.startswith("attention.")}
    if facts.model is not None:
        ops &= {need.op for need in facts.model.needs} or ops
    better = []
    for op in sorted(ops):
        first = next((k for k in build.kernels if k.provides == op and cc in k.sm), None)
        if first is None or backend_name(first.name).upper() == name.upper():
            return None  # for this layer the chosen backend is already the best the build has here
        better.append((op, first))
    if not better:
        return None
    op, first = better[0]
    return (
        f"attention: the run chose {name}; on {cc.sm} {build.id} serves {op} with {first.name} first"
        f"{f' ({first.note})' if first.note else ''} — pin it with --attention-backend {backend_name(first.name)} "
        "if the model's layers allow it"
    )


def _marlin(build: Build, cc: Capability, kind: str, text: str) -> str | None:
    folded = text.casefold()
    for fmt in build.weight_formats:
        fallbacks = [f for f in fmt.fallbacks if "marlin" in f.kernel.casefold() and cc in f.sm]
        if not fallbacks or fmt.quant.casefold() not in folded:
            continue
        cost = fallbacks[0].cost
        if fmt.native is not None and cc in fmt.native:
            return (
                f"{kind}: the run uses Marlin, the weight-only fallback for {fmt.quant} ({cost}), although {build.id} "
                f"has native {fmt.quant} kernels on {cc.sm}: check the MoE/GEMM backend flags and the build"
            )
        return f"{kind}: {fmt.quant} runs through Marlin on {cc.sm}, weight-only ({cost}), no native path in {build.id}"
    return None


def slow_path(catalog: Catalog, facts: LogFacts, text: str) -> tuple[str, ...]:
    """The kernels the run chose that are slower than what the catalog knows for its GPU and build."""
    if facts.capability is None or not facts.backends:
        return ()
    build = _build(catalog, facts)
    if build is None:
        return ()
    try:
        cc = Capability.parse(facts.capability)
    except ValueError:
        return ()
    found: list[str] = []
    for kind, name in facts.backends:
        line = _marlin(build, cc, kind, text) if "marlin" in name.casefold() else None
        if line is None and kind == "attention":
            line = _attention(build, cc, name, facts)
        if line is not None and all(line.split(": ", 1)[1] != seen.split(": ", 1)[1] for seen in found):
            found.append(line)
    return tuple(found)


def lint_command(catalog: Catalog, facts: LogFacts) -> tuple[str, ...]:
    """lint's errors and warnings on the engine command the log echoes (none when it echoes none)."""
    if not facts.command:
        return ()
    from .invocation import find_invocation
    from .lint import lint

    try:
        invocation = find_invocation(catalog, facts.command, "the command in the log")
        if invocation.build is None and facts.build is not None and invocation.engine.id == facts.engine:
            # the release the log's version line names, not the catalog's newest
            build = catalog.build(facts.build)[1]
            invocation = replace(invocation, build=build, build_how="the log's version line")
        result = lint(catalog, invocation, gpu=facts.hardware.id if facts.hardware else None)
    except RecipegenError:
        return ()
    return tuple(
        f"{f.severity}: {f.flag + ' ' if f.flag else ''}{f'{f.value} ' if f.value else ''}— {f.what}"
        + (f"; fix: {f.fix}" if f.fix else "")
        for f in result.findings
        if f.severity in ("error", "silent", "warn")
    )
