"""Expert advice for blocked requests: where else the same model runs (found by resolving it)."""

from __future__ import annotations

from .catalog import Catalog
from .report import Alternative
from .resolver import Request
from .resolver.resolve import rank
from .resolver.types import Resolution
from .targets import DEFAULT_TARGETS, parse_target


def alternatives(catalog: Catalog, blocked: Resolution, limit: int = 4) -> list[Alternative]:
    out: list[Alternative] = []
    here = blocked.request.hardware.id
    for text in DEFAULT_TARGETS:
        target = parse_target(catalog, text)
        if target.hardware.id == here:
            continue
        request = Request(
            model=blocked.request.model,
            hardware=target.hardware,
            gpus_per_node=target.gpus_per_node,
            nodes=target.nodes,
            shrink=True,
            variant=blocked.request.variant,
            host=blocked.request.host,
        )
        runnable = rank(catalog, request, rejections="none").runnable  # only the best plan is named
        if runnable:
            cand = runnable[0]
            summary = f"runs with {cand.engine.name} {cand.build.id}, variant {cand.variant.id} ({cand.status})"
            if cand.offload is not None:
                summary += ", with host offload"
            if cand.speed is not None:
                summary += f"; ~{cand.speed.decode_tps:.0f} tok/s per request (estimate)"
            decode = cand.speed.decode_tps if cand.speed is not None else None
            out.append(Alternative(target.label, summary, decode, cand.offload is not None))
        if len(out) >= limit:
            break
    return out


def faster_elsewhere(catalog: Catalog, resolution: Resolution) -> list[Alternative]:
    """For a plan that needs host offload: other hardware that holds the model and decodes faster."""
    top = resolution.plans[0].candidate
    if top.offload is None or top.speed is None:
        return []
    return [
        alt
        for alt in alternatives(catalog, resolution)
        if not alt.offload and alt.decode_tps is not None and alt.decode_tps > top.speed.decode_tps
    ]
