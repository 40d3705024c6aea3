"""Rules that read a matched failure's own numbers and reasons, where a fixed sentence would be wrong.

- vLLM's attention selector lists, per backend, why it refused the layer. The cause follows from those
  reasons: when some backend refused only for a setting (kv_cache_dtype, dtype, block_size) the cause is a
  flag of the command, never the GPU; only when every backend refused for the GPU's capability is it the GPU.
- The KV-cache lines carry the numbers: how much context fits in the pool, or how far below zero the budget is.

Each rule returns a Ruling that replaces the fingerprint's fixed why/fix, or None to keep them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..frozen import frozen
from .log_facts import LogFacts

# what a refusal is about, tried in order (the first that fits names it)
_CATEGORIES = (
    ("kv_cache_dtype", re.compile(r"kv_cache_dtype|kv cache dtype", re.I)),
    ("block_size", re.compile(r"block_size|block size", re.I)),
    ("head_size", re.compile(r"head_size|head size", re.I)),
    ("capability", re.compile(r"compute capability|only supported on|on this device|Hopper|Blackwell|\bSM ?\d", re.I)),
    ("dtype", re.compile(r"\bdtype", re.I)),
    ("sparse", re.compile(r"sparse", re.I)),
    ("sinks", re.compile(r"sink", re.I)),
    ("non_causal", re.compile(r"causal", re.I)),
    ("mla", re.compile(r"\bMLA\b", re.I)),
)
# the refusals a flag of the command changes, and the flag
FLAG_CATEGORIES = {"kv_cache_dtype": "--kv-cache-dtype", "block_size": "--block-size", "dtype": "--dtype"}
_WORDS = {
    "kv_cache_dtype": "the KV-cache dtype",
    "block_size": "the KV block size",
    "head_size": "the head size",
    "capability": "this GPU's compute capability",
    "dtype": "the model dtype",
    "sparse": "sparse (DSA) attention",
    "sinks": "attention sinks",
    "non_causal": "non-causal attention",
    "mla": "MLA or non-MLA layers",
    "other": "another limit",
}
_REASONS = re.compile(r"Reasons: \{(.*)\}")
_ONE_BACKEND = re.compile(r"(\w+): \[([^\]]*)\]")
_CONFIG = re.compile(r"AttentionSelectorConfig\((.*?)\)(?:\.|\s|$)")
_ESTIMATE = re.compile(r"estimated maximum model length is (\d+)")
DRAFT_SOURCES = ("https://github.com/vllm-project/vllm/issues/48380", "https://github.com/vllm-project/vllm/pull/48787")


@frozen
class Ruling:
    cause: str  # one phrase, what a user is told the cause is
    flag: bool  # True: a flag of the command is the cause (then gate is None)
    gate: str | None
    why: str
    fix: str
    sources: tuple[str, ...] = ()


def category(reason: str) -> str:
    return next((name for name, pattern in _CATEGORIES if pattern.search(reason)), "other")


def selector_reasons(line: str) -> dict[str, tuple[str, ...]]:
    """vLLM's per-backend refusals on a 'No valid attention backend' line: {backend: (reason, …)}."""
    m = _REASONS.search(line)
    if m is None:
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for name, reasons in _ONE_BACKEND.findall(m.group(1)):
        out[name] = tuple(r.strip().rstrip(".") for r in re.split(r",\s*(?![^()]*\))", reasons) if r.strip())
    return out


def selector_config(line: str) -> dict[str, str]:
    m = _CONFIG.search(line)
    if m is None:
        return {}
    pairs = (part.split("=", 1) for part in m.group(1).split(", ") if "=" in part)
    return {k.strip(): v.strip() for k, v in pairs}


def _listing(reasons: dict[str, tuple[str, ...]]) -> str:
    return "; ".join(f"{name}: {', '.join(r) or 'no reason given'}" for name, r in reasons.items())


def attention_ruling(line: str, facts: LogFacts, text: str) -> Ruling | None:
    reasons = selector_reasons(line)
    if not reasons:
        return None
    config = selector_config(line)
    kinds = {name: {category(r) for r in rs} for name, rs in reasons.items()}
    curable = [name for name, cats in kinds.items() if cats and cats <= set(FLAG_CATEGORIES)]
    said = f"vLLM's own reasons — {_listing(reasons)}"
    layer = ", ".join(
        f"{k}={config[k]}" for k in ("head_size", "dtype", "kv_cache_dtype", "use_mla", "use_sparse") if k in config
    )
    layer = f" ({layer})" if layer else ""
    if curable:
        cats = sorted({c for name in curable for c in kinds[name]})
        flags = ", ".join(FLAG_CATEGORIES[c] for c in cats)
        kv = config.get("kv_cache_dtype", "")
        draft = kv == "fp8_ds_mla" and config.get("use_mla") == "False"
        if draft:
            why = (
                f"this non-MLA attention layer{layer} got kv_cache_dtype=fp8_ds_mla, the packed cache layout only MLA "
                "layers can use: a speculative draft (EAGLE/DFlash/DSpark) inherits the target's --kv-cache-dtype. "
                f"{', '.join(curable)} refused it only for that — {said}. A flag is the cause, not the GPU."
            )
            fix = (
                'keep the draft\'s cache in the model dtype: add "kv_cache_dtype": "auto" to --speculative-config '
                "(vLLM with PR #48787), or drop --kv-cache-dtype fp8_ds_mla so the target uses its default"
            )
            return Ruling(
                "a speculative draft inheriting --kv-cache-dtype fp8_ds_mla", True, None, why, fix, DRAFT_SOURCES
            )
        why = (
            f"no backend accepted this layer{layer}, but {', '.join(curable)} refused it only for "
            f"{' and '.join(_WORDS[c] for c in cats)}, which {flags} sets — {said}. A flag is the cause, not the GPU."
        )
        choice = {
            "kv_cache_dtype": "--kv-cache-dtype auto (or a dtype that backend lists)",
            "dtype": "--dtype half or --dtype bfloat16",
            "block_size": "drop --block-size (each backend picks its own) or give one it accepts",
        }
        fix = "change " + "; ".join(choice[c] for c in cats) + f", so {curable[0]} can serve the layer"
        return Ruling(f"the setting {flags}", True, None, why, fix)
    cc = f" (compute capability {facts.capability})" if facts.capability else ""
    if all("capability" in cats for cats in kinds.values()):
        why = (
            f"every attention backend of this build refused this layer{layer} on this GPU{cc} for its compute "
            f"capability — {said}. No flag changes the kernels the image carries."
        )
        fix = (
            "run `recipegen explain --gpu <your GPU> --model <model>`: it names the builds and variants whose kernels "
            "cover this GPU, and writes the command"
        )
        return Ruling("this GPU's compute capability", False, "kernel", why, fix)
    needs = sorted({c for cats in kinds.values() for c in cats} - {"capability"})
    here = [name for name, cats in kinds.items() if "capability" not in cats]
    elsewhere = [name for name, cats in kinds.items() if "capability" in cats]
    why = (
        f"the layer{layer} needs what no backend offers on this GPU{cc}: "
        f"{', '.join(here) or 'none'} run here but refuse {' and '.join(_WORDS[c] for c in needs)}"
        + (f"; {', '.join(elsewhere)} would serve it but not on this GPU" if elsewhere else "")
        + f" — {said}. This is the model's shape against this build's kernels, not a flag."
    )
    fix = (
        "run `recipegen explain --gpu <your GPU> --model <model>`: another build (a fork or community image with "
        "these kernels), another engine or variant, or a GPU the kernels cover"
    )
    return Ruling(f"{' and '.join(_WORDS[c] for c in needs)} on this GPU's kernels", False, "kernel", why, fix)


def _round_down(tokens: float) -> int:
    step = 1024 if tokens >= 4096 else 256
    return max(step, int(tokens // step * step))


def kv_fit_ruling(groups: dict[str, str], facts: LogFacts, text: str) -> Ruling | None:
    estimate = _ESTIMATE.search(text)
    util = facts.memory_utilization
    raise_pool = (
        f"--gpu-memory-utilization {min(0.95, util + 0.05):.2f} (now {util:g}), " if util and util < 0.9 else ""
    )
    more = f"--tensor-parallel-size {2 * facts.tp}" if facts.tp else "more GPUs (--tensor-parallel-size)"
    if "want" in groups and "need" in groups and "have" in groups:
        want = int(groups["want"])
        need, have = float(groups["need"].split()[0]), float(groups["have"].split()[0])
        fits = int(estimate.group(1)) if estimate else _round_down(want * have / need) if need > 0 else 0
        why = (
            f"one request of {want:,} tokens needs {need:g} GiB of KV cache and the pool left after the weights holds "
            f"{have:g} GiB: about {fits:,} tokens fit"
        )
    elif "want_old" in groups and "have_tokens" in groups:
        want, fits = int(groups["want_old"]), int(groups["have_tokens"])
        why = f"the context is {want:,} tokens and the KV pool holds {fits:,}"
    else:
        return None
    fp8 = (
        ""
        if re.search(r"kv[-_]cache[-_]dtype[=' ]+'?fp8", text)
        else ", an FP8 KV cache (--kv-cache-dtype fp8) where the attention kernel accepts one"
    )
    fix = f"--max-model-len {fits} (cut the context to what the pool holds), or grow the pool: {raise_pool}{more}{fp8}"
    return Ruling("the context does not fit the KV pool", False, "memory", why, fix)


def kv_empty_ruling(groups: dict[str, str], facts: LogFacts, text: str) -> Ruling | None:
    left = facts.kv_value("available_gib")
    blocks = facts.kv_value("gpu_blocks")
    util = facts.memory_utilization
    budget = (
        f"--gpu-memory-utilization {util:g}" if util is not None else "the memory budget (--gpu-memory-utilization)"
    )
    if left is not None:
        what = f"{left:g} GiB"
    elif blocks is not None:
        what = f"{int(blocks)} cache blocks"
    else:
        what = "nothing"
    why = (
        f"after the weights, the activation peak and CUDA graphs, {budget} leaves {what} for the KV cache: the model "
        "alone fills the budget (or another process holds part of this GPU)"
    )
    steps = []
    if util is not None and util < 0.9:
        steps.append(f"--gpu-memory-utilization 0.9 (now {util:g})")
    steps.append(f"--tensor-parallel-size {2 * facts.tp}" if facts.tp else "more GPUs (--tensor-parallel-size)")
    steps += ["a smaller or quantized variant", "lower --max-num-seqs / --max-num-batched-tokens (the activation peak)"]
    return Ruling("no memory left for the KV cache", False, "memory", why, "; ".join(steps))


RULES: dict[str, Callable[[dict[str, str], LogFacts, str], Ruling | None]] = {
    "vllm-kv-cache-too-small": kv_fit_ruling,
    "vllm-no-cache-blocks": kv_empty_ruling,
}
LINE_RULES: dict[str, Callable[[str, LogFacts, str], Ruling | None]] = {
    "vllm-no-attention-backend": attention_ruling,
}
