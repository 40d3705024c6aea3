"""Expert advice for blocked requests: where else the same model runs (found by resolving it)."""

from __future__ import annotations

from .catalog import Catalog
from .report import Alternative
from .resolver import Request, resolve
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
        result = resolve(catalog, request)
        if result.plans:
            top = result.plans[0]
            cand = top.candidate
            out.append(
                Alternative(
                    target.label,
                    f"runs with {cand.engine.name} {cand.build.id}, variant {cand.variant.id} ({cand.status})",
                )
            )
        if len(out) >= limit:
            break
    return out
