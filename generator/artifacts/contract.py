"""The JSON contract (`--format json`, plan.json): schema recipegen.resolution/3.

Field names here are a public interface that other programs read; change them only together
with SCHEMA's version. Text that repeats is written once: every source is an entry of the top-level
"sources" table (other "sources" fields list its ids), and every distinct rejection reason an entry of
"reasons" (each "rejected" row names its "reason_id").
"""

from __future__ import annotations

import json
from typing import Any

from ..catalog.schema import Defect, Source
from ..catalog.schema.records import to_data
from ..plan.advice import Alternative
from ..plan.checkpoint_size import estimated_label
from ..plan.memory import Budget
from ..plan.offload import OffloadPlan
from ..plan.speed import Estimate
from ..plan.types import Change, Plan, Resolution, Settings

SCHEMA = "recipegen.resolution/3"


class _Table:
    """Ids for values written once: the first one seen gets PREFIX1, the next PREFIX2, and so on."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.ids: dict[str, str] = {}
        self.rows: dict[str, dict[str, Any]] = {}

    def ref(self, value: dict[str, Any]) -> str:
        key = json.dumps(value, sort_keys=True, ensure_ascii=False)
        if key not in self.ids:
            self.ids[key] = f"{self.prefix}{len(self.ids) + 1}"
            self.rows[self.ids[key]] = value
        return self.ids[key]


def _sources(sources: tuple[Source, ...] | list[Source], table: _Table | None) -> list[str] | list[dict[str, Any]]:
    """Ids into the document's source table when it has one; else the sources themselves (a lone plan)."""
    rows = [to_data(s, exclude_none=True, exclude_defaults=True) | {"url": s.url} for s in sources]
    return rows if table is None else [table.ref(row) for row in rows]


def budget_json(b: Budget) -> dict[str, Any]:
    return {
        "gpu_gib": round(b.gpu_gib, 2),
        "memory_fraction": b.fraction,
        "weights_gib": round(b.weights_gib, 2),
        "weights_estimated": estimated_label(b.notes),  # the size and its storage where estimated, else null
        "runtime_reserve_gib": round(b.reserve_gib, 2),
        "kv_pool_gib": round(b.kv_pool_gib, 2),
        "kv_bytes_per_token": round(b.per_token_bytes, 1),
        "per_request_bytes": round(b.per_request_bytes, 1),
        "state_bytes_per_request": round(b.state_per_request_bytes, 1),
        # the sliding-window layers' KV of one request (at most the window, whatever the context): with
        # kv_bytes_per_token 0, every attention layer is windowed and this is all of a request's KV
        "kv_window_bytes_per_request": round(b.window_per_request_bytes, 1),
        "context": b.context,
        "concurrency": b.concurrency,
        "full_length_requests": b.full_length_requests,
        "kv_gib_one_full_request": round(b.kv_gib, 3),
        "free_gib": round(b.free_gib, 2),
        "limit": b.limit,
        "fits": b.fits,
        "reason": b.reason,
        "breakdown": [{"what": what, "bytes": round(value, 1)} for what, value in b.lines],
    }


def offload_json(o: OffloadPlan) -> dict[str, Any]:
    return {
        "mechanism": o.mechanism,
        "host_gib": round(o.host_gib, 2),  # all of it: weights_gib + kv_gib
        "host_weights_gib": round(o.host_weights_gib, 2),
        "host_kv_gib": round(o.host_kv_gib, 2),  # cpu-layers: the KV cache of the layers on the CPU
        "cpu_layers": o.cpu_layers,  # layers whose routed experts (or, cpu-layers, whole layers) are on the CPU
        "of_layers": o.moe_layers,
        "gib_per_gpu": o.gb_per_gpu,
        "tensor_split": list(o.tensor_split),
        "summary": o.summary(),
    }


def speed_json(e: Estimate) -> dict[str, Any]:
    return {
        "estimate": True,
        "decode_tokens_per_s": round(e.decode_tps, 2),  # one request alone at decode_context tokens
        "decode_context": e.single_context,
        "decode_aggregate_tokens_per_s": round(e.aggregate_tps, 1),  # all `concurrency` requests at `context`
        "decode_per_request_at_concurrency_tokens_per_s": round(e.loaded_tps, 2),
        "concurrency": e.concurrency,
        "context": e.context,
        "prefill_tokens_per_s": round(e.prefill_tps, 1) if e.prefill_tps is not None else None,
        "load_seconds": round(e.load_s, 1),
        "load_minutes_reported": list(e.load_reported) if e.load_reported else None,
        "bound_by": e.bound,
        "band": list(e.band),
        "derivation": list(e.lines),
        "assumptions": list(e.assumptions),
    }


def settings_json(s: Settings) -> dict[str, Any]:
    """The decided engine-neutral settings the flags were rendered from."""
    return {
        "tensor_parallel": s.tp,
        "expert_parallel": s.ep,
        "kv_cache_dtype": s.kv_dtype,
        "context": s.context,
        "context_auto": s.context_auto,
        "concurrency": s.concurrency,
        "memory_fraction": s.fraction,
        "tool_parser": s.tool_parser,
        "reasoning_parser": s.reasoning_parser,
        "mtp": s.mtp,
    }


def plan_json(p: Plan, table: _Table | None = None) -> dict[str, Any]:
    c = p.candidate
    return {
        "rank": p.rank,
        "engine": c.engine.id,
        "build": c.build.id,
        "build_released": str(c.build.released),
        "provenance": c.build.provenance,
        "image": p.image,
        "host_arch": p.host_arch,
        "variant": c.variant.id,
        "repo": c.variant.repo,
        "quant": c.variant.quant,
        "status": c.status,
        "deployment": c.deployment.id if c.deployment else None,
        "gpus": c.layout.gpus_per_node,
        "nodes": c.layout.nodes,
        "argv": list(p.argv),
        "flags": [
            {"flag": f.flag, "value": f.value, "reason": f.reason, "sources": _sources(f.sources, table)}
            for f in p.flags
        ],
        "env": [{"name": n, "value": v, "reason": r} for n, v, r in p.env],
        "settings": settings_json(p.settings),
        "memory": budget_json(c.budget) if c.budget else None,
        "offload": offload_json(c.offload) if c.offload else None,
        "speed": speed_json(c.speed) if c.speed else None,
        "gates": [{"gate": g.gate, "outcome": g.outcome, "reason": g.reason} for g in c.gates],
        "why_first": p.why_first or None,
        "build_defects": [defect_json(d, table) for d in c.build_defects],
        "notes": list(p.notes),
        "sources": _sources(p.sources, table),
    }


def defect_json(d: Defect, table: _Table | None = None) -> dict[str, Any]:
    return {
        "id": d.id,
        "title": d.title,
        "symptom": d.symptom,
        "gate": d.gate,
        "blocks": d.blocks,
        "log_line": d.log_line,
        "fixed_in": d.fixed_in,
        "workaround": d.workaround,
        "workaround_args": [{"flag": a.flag, "value": a.value} for a in d.workaround_args],
        "workaround_env": [{"name": e.name, "value": e.value} for e in d.workaround_env],
        "sources": _sources(d.sources, table),
    }


def change_json(ch: Change) -> dict[str, Any]:
    return {
        "engine": ch.engine,
        "variant": ch.variant,
        "gate": ch.gate,
        "before": {"build": ch.before_build, "date": ch.before_date, "reason": ch.before_reason},
        "after": {"build": ch.after_build, "date": ch.after_date, "reason": ch.after_reason},
    }


def advice_json(advice: list[Alternative]) -> list[dict[str, Any]]:
    """What the text's "What would make it run" / "faster:" lines name, as data."""
    return [
        {
            "target": a.target,
            "gpu": a.hardware_id or None,
            "summary": a.summary,
            "decode_tps": round(a.decode_tps, 1) if a.decode_tps is not None else None,
            "offload": a.offload,
            "below_4_bits": a.low_bit,
        }
        for a in advice
    ]


def resolution_json(r: Resolution, advice: list[Alternative] | None = None) -> dict[str, Any]:
    """The resolution as data; `advice` (explain's, where the caller computed it) under "advice"."""
    req = r.request
    sources = _Table("S")
    reasons = _Table("R")
    rejected = [
        {
            "engine": rej.engine,
            "build": rej.build,
            "variant": rej.variant,
            "gate": rej.gate,
            "outcome": rej.outcome,
            "reason_id": reasons.ref({"reason": rej.reason, "sources": _sources(rej.sources, sources)}),
            "defects": list(rej.defects),
        }
        for rej in r.rejected()
    ]
    return {
        "schema": SCHEMA,
        "request": {
            "model": req.model.id,
            "model_facts": req.model_facts,
            "weights_folder": req.weights_folder,
            "variant": req.variant,
            "hardware": req.hardware.id,
            "gpu_memory_gib": req.hardware.memory_gib,
            "compute_capability": str(req.hardware.compute_capability),
            "gpus_per_node": r.layout.gpus_per_node,
            "gpus_requested": req.gpus_per_node,
            "nodes": r.layout.nodes,
            "engine": req.engine,
            "build": req.build,
            "build_resolution": req.build_resolution.as_json() if req.build_resolution else None,
            "context": req.context,
            "concurrency": req.concurrency,
            "host_memory_gib": req.host.memory_gib,
            "host_memory_default": req.host.memory_default,
            "host_bandwidth_gbs": req.host.bandwidth_gbs,
            "host_bandwidth_default": req.host.bandwidth_default,
            "understood_as": req.target_note,
            "layout_note": r.layout_note,
        },
        "verdict": r.verdict,
        "verdict_detail": r.verdict_detail,
        "plans": [plan_json(p, sources) for p in r.plans],
        "rejected": rejected,
        "reasons": reasons.rows,
        "changes": [change_json(ch) for ch in r.changes],
        **({"advice": advice_json(advice)} if advice is not None else {}),
        "sources": sources.rows,
    }
