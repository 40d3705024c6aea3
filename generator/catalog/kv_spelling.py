"""Whether a release takes a `--kv-cache-dtype` value as spelled, from its own code (data/harvest/).

One rule for the planner (which spelling a plan writes) and for lint (which spelling of a command stops the
server), from three facts of the named release:
- the option's choices, read from its wheel (vLLM 0.10.x has no `bfloat16`; SGLang 0.5.2 no `bf16`);
- the values its selector, run on simulated GPUs, found no attention backend for on any shape (vLLM
  0.11.1-0.14.0 list `bfloat16` but every backend refuses it);
- SGLang's own resolution per model shape and GPU, run: the backend it settles on may refuse a spelling in
  its own words (trtllm_mla, SGLang's MLA default on SM 10.0, takes `bf16` and refuses `bfloat16`).
"""

from __future__ import annotations

import re

from ..frozen import frozen
from . import harvest
from .schema import Build, Engine, Model
from .schema.common import KvDtype, Source

SIXTEEN: tuple[KvDtype, ...] = ("bf16", "fp16")


@frozen
class KvRefusal:
    """Why the release refuses the spelling, the spelling it takes for the same cache, and where that is read."""

    at: str  # "argument parsing" or "start-up"
    why: str
    fix: str | None  # the value to pass instead (None: no spelling of that dtype is taken)
    sources: tuple[Source, ...]


def _sglang_shape(model: Model, shapes: dict[str, str]) -> str | None:
    """The stand-in shape of SGLang's run that the model is: its own architecture, else its attention kind."""
    for shape, arch in shapes.items():
        if arch == model.architecture:
            return shape
    if model.linear_attention is not None and "hybrid_linear" in shapes:
        return "hybrid_linear"
    sinks = any(n.op == "attention.sinks" for n in model.needs)
    kind = {"gqa": "sinks" if sinks else "gqa", "mla": "mla", "dsa": "sparse_mla"}.get(model.attention.kind)
    return kind if kind in shapes else None


def _sglang_refusal(
    build: Build, spelled: str, model: Model, capability: int, backend: str | None
) -> tuple[str, list[str]] | None:
    """SGLang's own words refusing `spelled` for this model shape on this GPU with the asked backend (None: its
    default), and the 16-bit spellings the same resolution took."""
    tables = harvest.ran("sglang", build.version) or {}
    selector = tables.get("attention_selector") or {}
    shape = _sglang_shape(model, selector.get("shapes") or {})
    if shape is None:
        return None
    took: list[str] = []
    refused: str | None = None
    for case in selector.get("cases") or []:
        if (case.get("asked"), case.get("shape"), case.get("capability")) != (backend, shape, capability):
            continue
        if case.get("kv") == spelled and "refused" in case:
            refused = str(selector["reasons"][case["refused"]])
        elif "resolved" in case and case.get("kv") in ("bf16", "bfloat16", "auto"):
            took.append(str(case["kv"]))
    return (refused, took) if refused is not None else None


def refusal(
    engine: Engine,
    build: Build,
    spelled: str,
    dtype: KvDtype | None,
    model: Model | None = None,
    capability: int | None = None,
    backend: str | None = None,
) -> KvRefusal | None:
    """Why `build`'s release refuses `--kv-cache-dtype spelled` (a `dtype` cache; the model, GPU as 90/100 … and
    pinned attention backend where known), or None when nothing read says it does."""
    release = f"{engine.name} {build.version}"
    flag = engine.flags.kv_cache_dtype or "--kv-cache-dtype"
    own = engine.kv_dtype_names.get(dtype) if dtype is not None else None
    choices = harvest.kv_cache_choices(build)
    if choices is not None and spelled not in choices:
        fix = own if own in choices else "auto" if dtype in SIXTEEN and "auto" in choices else None
        why = f"{release}'s {flag} has no {spelled} (its choices, read from its wheel: {', '.join(choices)})"
        read = harvest.flags_source(harvest.engine_of(build) or "", build.version)
        return KvRefusal("argument parsing", why, fix, read)
    refused = harvest.kv_no_backend(build)
    if spelled in refused and dtype in SIXTEEN and "auto" not in refused:
        why = (
            f"no attention backend of {release} takes {flag} {spelled} (its selector, run on simulated GPUs, refuses "
            "it for every shape asked: `No valid attention backend found`)"
        )
        return KvRefusal("start-up", why, "auto", harvest.selector_source(build))
    if harvest.engine_of(build) == "sglang" and model is not None and capability is not None:
        found = _sglang_refusal(build, spelled, model, capability, backend)
        if found is not None:
            words, took = found
            # the engine's own spelling where the refusal names it among the values it takes, else one the same
            # resolution took (auto: the model's dtype)
            named = own is not None and own != spelled and own in re.findall(r"[\w.]+", words)
            fix = own if named or (own in took and own != spelled) else next((t for t in took if t != spelled), None)
            which = f"--attention-backend {backend}" if backend else "the attention backend it picks by default"
            why = f"{release} with {which} for {model.name} on this GPU refuses {spelled}, in its own words: {words}"
            return KvRefusal("start-up", why, fix, harvest.selector_source(build))
    return None
