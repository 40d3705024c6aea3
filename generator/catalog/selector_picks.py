"""The attention backend a release's own code picks, from its run on simulated GPUs (the summary scripts/harvest
keeps of <v>.ran.json in the release's facts file, data/harvest/<engine>/<v>.json).

vLLM: the harvester ran each release's `get_attn_backend_cls` for every attention shape the catalog plans (GQA at
its head sizes, sinks, dense MLA, sparse MLA with and without RoPE), each KV dtype and, for MLA, 16 and 128 heads
per GPU (`selected`, kept beside the facts file in <v>.selected.json). SGLang: it resolved each release's server
arguments for a stand-in model per shape (Llama GQA, gpt-oss sinks, DeepSeek-V3 MLA, DeepSeek-V3.2 and GLM-5 DSA,
Qwen3-Next hybrid) with each `--kv-cache-dtype` and no `--attention-backend` (`picked`: the backend, for DSA its
prefill and decode kernels). Where the catalog has
several kernels that serve a need, the plan names the one the release picks; this module answers which, per GPU,
KV dtype and heads per GPU (the priority order of some vLLM releases turns on it). The facts file is read only
when a request touches the release, vLLM's side file only when a plan asks which kernel it picks.
"""

from __future__ import annotations

import functools
from typing import Any

from ..frozen import frozen
from . import harvest
from .schema import Build, Source
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
# the catalog's KV dtype -> the --kv-cache-dtype spellings asked (a 16-bit cache: the model's own, auto, or bfloat16).
# The runs asked with bf16 weights; an fp16 cache is `auto` too: no selector of a run release turns on which 16-bit
# dtype it is (every backend's supported_dtypes lists both), and below 8.0 vLLM casts bf16 weights to fp16
KV_ASKED: dict[str, tuple[str, ...]] = {
    "bf16": ("auto", "bfloat16"),
    "fp16": ("auto", "float16"),
    "fp8_e4m3": ("fp8_e4m3",),
    "fp8_ds_mla": ("fp8_ds_mla",),
}
# SGLang: a catalog op -> the stand-in shape asked for it when the model's architecture is none of the stand-ins
SGLANG_SHAPES: dict[str, str] = {
    "attention.gqa": "gqa",
    "attention.sinks": "sinks",
    "attention.mla": "mla",
    "attention.sparse_mla": "sparse_mla",
}
# the stand-in shape -> the architecture its config.json names (the run's `shapes` table, the same in every release)
SGLANG_STAND_INS: dict[str, str] = {
    "gqa": "LlamaForCausalLM",
    "sinks": "GptOssForCausalLM",
    "mla": "DeepseekV3ForCausalLM",
    "sparse_mla": "DeepseekV32ForCausalLM",
    "sparse_mla_glm": "GlmMoeDsaForCausalLM",
    "hybrid_linear": "Qwen3NextForCausalLM",
}


def reads_architecture(architecture: str) -> bool:
    """Whether SGLang's pick may turn on the model's architecture: only a stand-in's own architecture does."""
    return architecture in SGLANG_STAND_INS.values()


def reads_heads(op: str) -> bool:
    """Whether the release's pick for this op may turn on the heads per GPU: only the MLA shapes were asked with
    several head counts, and `pick` reads the count for those alone."""
    return op in SHAPES and SHAPES[op][0] != "gqa"


def names(kernel_name: str) -> frozenset[str]:
    """The backends a catalog kernel names: `fa3 (MLA)` -> {fa3}; `flashmla_auto + flashmla_kv (DSA auto)` -> both."""
    return frozenset(kernel_name.split(" (")[0].split(" + "))


def is_pick(kernel_name: str, pick: str) -> bool:
    """Whether the catalog kernel is the backend (or DSA prefill + decode pair) the release picked."""
    return kernel_name.split(" ", 1)[0] == pick or names(kernel_name) == frozenset(pick.split(" + "))


def _sglang(
    picks: dict[str, Any], op: KernelOp, capability: int, kv: tuple[KvDtype, ...], architecture: str | None
) -> str | None:
    """SGLang's default pick: the model's own stand-in where it is one (its architecture), else the op's."""
    shape = next((s for s, arch in SGLANG_STAND_INS.items() if arch == architecture), None) or SGLANG_SHAPES.get(op)
    by_kv = picks.get(shape or "")
    if not isinstance(by_kv, dict):
        return None
    asked = [s for dtype in kv for s in KV_ASKED.get(dtype, ())] if kv else ["auto"]
    answers = {str(a) for s in asked if isinstance(a := (by_kv.get(s) or {}).get(str(capability)), str)}
    return answers.pop() if len(answers) == 1 else None


@functools.cache
def _heads_rules() -> dict[str, tuple[dict[str, Any], ...]]:
    """data/selector_heads.yaml: per engine, where a release's selector turns on the heads per GPU (its own code)."""
    from .index import package_folder
    from .parse_cache import package_data

    data = package_data(package_folder("recipegen.data") / "selector_heads.yaml")
    return {str(engine): tuple(rows) for engine, rows in data.items()}


def heads_rule(engine: str, version: str, shape: str) -> dict[str, Any] | None:
    """The row of data/selector_heads.yaml for this release and selector shape: `at_most` (at or below it one order,
    above it another), what decides, its sources; None where the release's code was not read for it."""
    key = harvest.release_key(version)
    if key is None:
        return None
    for row in _heads_rules().get(engine, ()):
        first, last = (harvest.release_key(str(v)) for v in row["releases"])
        if row["shape"] == shape and first is not None and last is not None and first <= key <= last:
            return row
    return None


def heads_sources(row: dict[str, Any]) -> tuple[Source, ...]:
    return tuple(Source(url=s["url"], note=s.get("note")) for s in row["sources"])


def _answer(value: Any, heads_per_rank: int | None, at_most: int | None = None) -> str | bool | None:
    """One case's answer: the backend, None where it turns on heads per GPU not asked, False where not asked.
    `at_most`: the release's own line (data/selector_heads.yaml); a count not asked takes the answer of the asked
    counts on its side of it."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict) or not value:
        return False
    if heads_per_rank is not None and str(heads_per_rank) in value:
        return str(value[str(heads_per_rank)])
    names = set(map(str, value.values()))
    if len(names) > 1 and heads_per_rank is not None and at_most is not None:
        low = heads_per_rank <= at_most
        names = {str(v) for h, v in value.items() if h.isdigit() and (int(h) <= at_most) == low}
    return names.pop() if len(names) == 1 else None


@frozen
class Pick:
    """The release's pick for a need (None: not run, not asked, or unsettled) and, where its run's answer turns on the
    heads per GPU and the plan's count was not asked, how that was settled: by the release's own rule (`rule`, a row
    of data/selector_heads.yaml) or not at all (`unread`: the plan names the catalog's order)."""

    backend: str | None
    rule: dict[str, Any] | None = None
    unread: bool = False


def pick(
    build: Build,
    op: KernelOp,
    capability: int,
    head_size: int | None,
    qk_nope_head_dim: int | None,
    kv: tuple[KvDtype, ...],
    heads_per_rank: int | None,
    architecture: str | None = None,
) -> Pick:
    """The backend the build's release selects for this need on this GPU (capability as 90, 100 …), with how a head
    count the run did not ask was settled; no backend when it was not run, not asked this, or its answer turns on
    something the request does not settle (heads per GPU neither asked nor settled by the release's rule, KV spellings
    that disagree). SGLang answers per model shape (`architecture`: the model's, where it is one of the run's
    stand-ins) and names a DSA pick `prefill + decode`."""
    engine = harvest.engine_of(build)
    if op not in SHAPES or engine not in ("vllm", "sglang"):
        return Pick(None)
    if engine == "sglang":
        facts = harvest.of(build)
        return Pick(_sglang(facts.picked, op, capability, kv, architecture) if facts and facts.picked else None)
    selected = harvest.picks("vllm", build.version)
    if not selected:
        return Pick(None)
    shape, which = SHAPES[op]
    asked = [s for dtype in kv for s in KV_ASKED.get(dtype, ())] if kv else ["auto"]
    profiles = ["-"]
    if shape != "gqa":
        profiles = [*(p for p, nope in PROFILE_NOPE.items() if nope == qk_nope_head_dim), "none"]
    heads = head_size if shape == "gqa" else which
    per_gpu = heads_per_rank if reads_heads(op) else None  # only the MLA shapes were asked with several counts
    rule = heads_rule("vllm", build.version, shape) if per_gpu is not None else None
    at_most = int(rule["at_most"]) if rule is not None else None
    for profile in profiles:  # the model's own profile where one was asked, else the profile-less stand-in
        by_kv = selected.get(f"{shape}/{which}/{heads}/{profile}")
        if not isinstance(by_kv, dict):
            continue
        answers: set[str] = set()
        ruled = False
        for spelled in asked:
            value = (by_kv.get(spelled) or {}).get(str(capability))
            turns = isinstance(value, dict) and len(set(value.values())) > 1 and str(per_gpu) not in value
            answer = _answer(value, per_gpu, at_most)
            if answer is None:  # the pick turns on the heads per GPU, this count was not asked, no rule was read
                return Pick(None, unread=turns and per_gpu is not None)
            ruled = ruled or turns
            if answer is not False:
                answers.add(str(answer))
        if answers:
            one = answers.pop() if len(answers) == 1 else None
            return Pick(one, rule if ruled and one is not None else None)
    return Pick(None)
