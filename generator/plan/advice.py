"""Expert advice for blocked requests: where else the same model runs (found by resolving it)."""

from __future__ import annotations

from dataclasses import replace

from ..catalog.index import Catalog
from ..catalog.schema import Hardware
from ..catalog.targets import DEFAULT_TARGETS, parse_target
from ..frozen import frozen
from .layout_search import rank
from .types import Request, Resolution


@frozen
class Alternative:
    """Another target where the same model runs, found by resolving it too (see advice.py)."""

    target: str
    summary: str
    decode_tps: float | None = None  # the estimate of its plan #1
    offload: bool = False
    hardware_id: str = ""  # the GPU it names
    low_bit: bool = False  # its plan #1 is a checkpoint below LOW_BITS bits per weight


def other_variant(catalog: Catalog, blocked: Resolution) -> Alternative | None:
    """With one variant asked for (--variant, or a repo id naming it), another variant of the same
    model that runs on the very same GPUs."""
    req = blocked.request
    if req.variant is None or blocked.plans:
        return None
    runnable = rank(catalog, replace(req, variant=None, weights_folder=None), rejections="none").runnable
    if not runnable or runnable[0].variant.id == req.variant:
        return None
    cand = runnable[0]
    lay = cand.layout
    shape = f"{lay.nodes} node(s) × {lay.gpus_per_node} GPU(s)" if lay.nodes > 1 else f"{lay.gpus} GPU(s)"
    nodes = f" --nodes {lay.nodes}" if lay.nodes != req.nodes else ""
    summary = (
        f"another variant runs: {cand.variant.id} ({cand.variant.repo}) with {cand.engine.name} {cand.build.id} "
        f"({cand.status}) on {shape} — --variant {cand.variant.id}{nodes}, or --model {cand.variant.repo}{nodes}"
    )
    decode = cand.speed.decode_tps if cand.speed is not None else None
    return Alternative(
        f"{cand.layout.gpus}×{req.hardware.id}", summary, decode, cand.offload is not None, req.hardware.id
    )


def other_build(catalog: Catalog, blocked: Resolution) -> Alternative | None:
    """With a build named (--build) that runs nothing here, the build of the same engine that runs the model on the
    very same GPUs (the newest first): the way out is usually another release, not other hardware."""
    req = blocked.request
    if req.build is None or blocked.plans:
        return None
    try:
        engine, _ = catalog.build(req.build)
    except KeyError:
        return None
    request = replace(req, build=None, build_resolution=None, engine=engine.id)
    runnable = rank(catalog, request, rejections="none").runnable
    if not runnable:
        return None
    cand = runnable[0]
    summary = (
        f"{cand.engine.name} {cand.build.id} ({cand.build.released}) runs it here: variant {cand.variant.id} "
        f"({cand.status}) — --build {cand.build.id}"
    )
    decode = cand.speed.decode_tps if cand.speed is not None else None
    return Alternative(
        f"{cand.layout.gpus}×{req.hardware.id}", summary, decode, cand.offload is not None, req.hardware.id
    )


def _smallest(catalog: Catalog, asked: Request, hardware: Hardware) -> Alternative | None:
    """The smallest usual layout of `hardware` where the model runs (explain's search, smallest first), as advice."""
    request = Request(  # --as-of stays: advice for a report of that day names builds out by then
        model=asked.model,
        hardware=hardware,
        variant=asked.variant,
        host=asked.host,
        nodes=1,
        shrink=False,
        as_of=asked.as_of,
    )
    runnable = rank(catalog, request, rejections="none").runnable  # only the best plan is named
    if not runnable:
        return None
    cand = runnable[0]
    lay = cand.layout
    target = f"{lay.nodes}×{hardware.id}" if lay.nodes > 1 else f"{lay.gpus}×{hardware.id}"
    summary = f"runs with {cand.engine.name} {cand.build.id}, variant {cand.variant.id} ({cand.status})"
    if cand.offload is not None:
        summary += ", with host offload"
    if cand.speed is not None:
        summary += f"; {cand.speed.per_request()} (estimate)"
    decode = cand.speed.decode_tps if cand.speed is not None else None
    return Alternative(target, summary, decode, cand.offload is not None, hardware.id, cand.low_bit)


def alternatives(catalog: Catalog, blocked: Resolution, limit: int = 4) -> list[Alternative]:
    """Where else the model runs: another variant on the same GPUs, more of the same GPU, then other parts, each at
    the smallest usual layout that runs it."""
    out: list[Alternative] = []
    asked = blocked.request
    for same in (other_build(catalog, blocked), other_variant(catalog, blocked)):
        if same is not None:
            out.append(same)
    more = _smallest(catalog, asked, asked.hardware) if asked.gpus_per_node is not None else None
    if more is not None and more.target != f"{blocked.layout.gpus}×{asked.hardware.id}":
        out.append(more)
    for text in DEFAULT_TARGETS:  # the usual datacenter and workstation parts, each searched from one GPU up
        hardware = parse_target(catalog, text).hardware
        if len(out) >= limit:
            break
        if hardware.id != asked.hardware.id and (found := _smallest(catalog, asked, hardware)) is not None:
            out.append(found)
    return out


def faster_elsewhere(catalog: Catalog, resolution: Resolution) -> list[Alternative]:
    """For a slow plan (host offload, or under 5 tok/s for one request): more of the same GPU, or other hardware, that
    holds the model in GPU memory and decodes faster."""
    top = resolution.plans[0].candidate
    if top.speed is None or (top.offload is None and not top.speed.slow):
        return []
    return [
        alt
        for alt in alternatives(catalog, resolution)
        if not alt.offload and alt.decode_tps is not None and alt.decode_tps > top.speed.decode_tps
    ]


def fuller_elsewhere(catalog: Catalog, resolution: Resolution) -> list[Alternative]:
    """For a plan #1 below LOW_BITS bits per weight held in GPU memory (a 70B as IQ2_XS on one 24 GB card): more of
    the same GPU, or other hardware, that holds a checkpoint of 4 bits or more in GPU memory — the quality the user
    gives up, and what buys it back."""
    top = resolution.plans[0].candidate
    if not top.low_bit or top.offload is not None:
        return []
    return [alt for alt in alternatives(catalog, resolution) if not alt.offload and not alt.low_bit]


def advice_for(catalog: Catalog, resolution: Resolution) -> list[Alternative]:
    """What explain and generate name besides the plans: where else the model runs when blocked, runs faster when
    plan #1 is slow or offloaded, or runs at 4 bits or more when plan #1 is a lossier checkpoint."""
    if not resolution.plans:
        return alternatives(catalog, resolution)
    return faster_elsewhere(catalog, resolution) or fuller_elsewhere(catalog, resolution)
