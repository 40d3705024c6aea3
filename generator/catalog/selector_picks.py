"""The attention backend a vLLM release's own selector picks, from its run on simulated GPUs (the `selected`
summary scripts/harvest keeps of <v>.ran.json in data/harvest/vllm/<v>.selected.json).

The harvester ran each release's `get_attn_backend_cls` on simulated GPUs for every attention shape the
catalog plans (GQA at its head sizes, sinks, dense MLA, sparse MLA with and without RoPE), each KV dtype
and, for MLA, 16 and 128 heads per GPU. Where the catalog has several kernels that serve a need, the plan
names the one the release picks; this module answers which, per GPU, KV dtype and heads per GPU (the
priority order of some releases turns on it). The summary is read only when a plan asks this of the release.
"""

from __future__ import annotations

from typing import Any

from . import harvest
from .schema import Build
from .schema.common import KernelOp, KvDtype

# a catalog op -> the selector's shape and its GQA variant (GQA) or head size (MLA)
SHAPES: dict[str, tuple[str, str | int]] = {
    "attention.gqa": ("gqa", "plain"),
    "attention.sinks": ("gqa", "sinks"),
    "attention.mla": ("mla", 576),
    "attention.sparse_mla": ("sparse_mla", 576),
    "attention.sparse_mla_nope": ("sparse_mla", 512),
}
# the stand-in model profiles the MLA cases were asked with -> their qk_nope_head_dim
PROFILE_NOPE = {"deepseek_v3_dense": 128, "deepseek_v32_sparse": 128, "glm5_sparse_nope192": 192, "nope512_sparse": 256}
# the catalog's KV dtype -> the --kv-cache-dtype spellings asked (a 16-bit cache: the model's own, auto, or bfloat16)
KV_ASKED: dict[str, tuple[str, ...]] = {
    "bf16": ("auto", "bfloat16"),
    "fp8_e4m3": ("fp8_e4m3",),
    "fp8_ds_mla": ("fp8_ds_mla",),
}


def _answer(value: Any, heads_per_rank: int | None) -> str | bool | None:
    """One case's answer: the backend, None where it turns on heads per GPU not asked, False where not asked."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict) or not value:
        return False
    if heads_per_rank is not None and str(heads_per_rank) in value:
        return str(value[str(heads_per_rank)])
    names = set(map(str, value.values()))
    return names.pop() if len(names) == 1 else None


def picked(
    build: Build,
    op: KernelOp,
    capability: int,
    head_size: int | None,
    qk_nope_head_dim: int | None,
    kv: tuple[KvDtype, ...],
    heads_per_rank: int | None,
) -> str | None:
    """The backend the build's release selects for this need on this GPU (capability as 90, 100 …), or None when
    it was not run, not asked this, or its answer turns on something the request does not settle (heads per GPU
    it was not asked with, KV spellings that disagree)."""
    if op not in SHAPES or harvest.engine_of(build) != "vllm":
        return None
    selected = harvest.picks("vllm", build.version)
    if not selected:
        return None
    shape, which = SHAPES[op]
    asked = [s for dtype in kv for s in KV_ASKED.get(dtype, ())] if kv else ["auto"]
    profiles = ["-"]
    if shape != "gqa":
        profiles = [*(p for p, nope in PROFILE_NOPE.items() if nope == qk_nope_head_dim), "none"]
    heads = head_size if shape == "gqa" else which
    for profile in profiles:  # the model's own profile where one was asked, else the profile-less stand-in
        by_kv = selected.get(f"{shape}/{which}/{heads}/{profile}")
        if not isinstance(by_kv, dict):
            continue
        answers: set[str] = set()
        for spelled in asked:
            answer = _answer((by_kv.get(spelled) or {}).get(str(capability)), heads_per_rank)
            if answer is None:
                return None  # the pick turns on the heads per GPU, and this count was not asked
            if answer is not False:
                answers.add(str(answer))
        if answers:
            return answers.pop() if len(answers) == 1 else None
    return None
