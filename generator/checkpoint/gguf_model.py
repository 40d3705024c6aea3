"""A model derived from a GGUF header: the keys llama.cpp itself reads (general.architecture, then
`{arch}.block_count`, `.embedding_length`, `.context_length`, `.attention.head_count[_kv]`,
`.attention.key_length`/`.value_length`, `.attention.kv_lora_rank`, `.rope.dimension_count`,
`.attention.sliding_window`, `.expert_count`, `.expert_used_count`, `.expert_shared_count`,
`.expert_feed_forward_length`, `.leading_dense_block_count`), parameters counted in the tensor infos and
the exact bytes per ggml type. One variant per quantization, each pointing at its first file.

Pure: takes a files.Checkpoint whose `gguf` quantizations were read. What the header does not say stays
unknown, with the key named.
"""

from __future__ import annotations

import re
from typing import Any

from ..catalog.schema import Model, Source, Variant
from ..catalog.schema.model import Attention, LinearAttention, Moe
from .architectures import Rule, rules
from .configfields import as_int, slug, word
from .files import Checkpoint
from .gguf import GgufHeader, GgufQuant
from .layouts import attention_free, needs_of

LLAMA_MODEL = "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-model.cpp"
LLAMA_HPARAMS = Source(
    url="https://github.com/ggml-org/llama.cpp/blob/master/src/llama-hparams.cpp",
    note="n_embd_r = (ssm_d_conv - 1) × (ssm_d_inner + 2 × ssm_n_group × ssm_d_state), LFM2 n_embd × "
    "(shortconv_l_cache - 1); n_embd_s = ssm_d_state × ssm_d_inner: the conv and SSM state per recurrent layer "
    "and sequence, kept in F32",
)
# llama.cpp architectures whose recurrent layers are Mamba-1, Mamba-2 or LFM2 short convolutions
STATE_SPACE_ARCHS = {
    "mamba", "mamba2", "jamba", "falcon-h1", "nemotron_h", "nemotron_h_moe", "granitehybrid", "lfm2", "lfm2moe",
}  # fmt: skip
# llama.cpp architectures whose sliding-window layers follow a fixed pattern set in llama-model.cpp
# (hparams.set_swa_pattern(n): every n-th layer attends globally) when the file has no per-layer list
SWA_PATTERN = {"gemma2": 2, "gemma3": 6, "cohere2": 4, "gpt-oss": 2, "exaone4": 4}
_QUANT_TAG = re.compile(r"(?i)((?:UD-)?I?Q\d\w*|BF16|F16|F32|MXFP4\w*)$")
_EXPERTS = re.compile(r"\.ffn_(?:gate|up|down|gate_up)_exps\.")


def quant_tag(file: str) -> str:
    """The quantization's name in its file name (Q4_K_M, UD-Q4_K_XL, BF16), else the file's stem."""
    from .gguf import SPLIT_GGUF

    stem = SPLIT_GGUF.sub(".gguf", file.rsplit("/", 1)[-1])[: -len(".gguf")]
    tag = _QUANT_TAG.search(stem)
    return tag.group(1) if tag else stem


def hf_class(arch: str) -> tuple[str | None, Rule | None]:
    """The Hugging Face class (and its rule) whose GGUF architecture this is, where exactly one maps."""
    matching = [r for r in rules().values() if r.gguf_arch == arch]
    causal = [r for r in matching if r.architecture.endswith("ForCausalLM")] or matching
    return (causal[0].architecture, causal[0]) if causal else (None, None)


def _int(h: GgufHeader, key: str) -> int | None:
    value = h.arch_key(key)
    if isinstance(value, list):  # per-layer values: the largest (0 marks a layer without attention)
        ints = [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
        return max(ints) if ints else None
    return as_int(value)


def _need(h: GgufHeader, key: str) -> int:
    value = _int(h, key)
    if value is None:
        raise ValueError(f"the GGUF header has no {h.architecture}.{key}")
    return value


def _window_layers(h: GgufHeader, layers: int) -> int | None:
    pattern = h.arch_key("attention.sliding_window_pattern")
    if isinstance(pattern, list) and pattern:
        return sum(1 for v in pattern[:layers] if v is True or v == 1) or None
    every = SWA_PATTERN.get(h.architecture or "")
    return layers - layers // every if every else None


def attention_of(h: GgufHeader, layers: int, source: Source) -> Attention:
    heads = _need(h, "attention.head_count")
    kv_counts = h.arch_key("attention.head_count_kv")
    attention_layers = None
    if isinstance(kv_counts, list):
        attention_layers = sum(1 for v in kv_counts[:layers] if isinstance(v, int) and v > 0) or None
    lora = _int(h, "attention.kv_lora_rank")
    if lora:
        rope = _need(h, "rope.dimension_count")
        key = _int(h, "attention.key_length_mla") or _need(h, "attention.key_length")
        value = _int(h, "attention.value_length_mla") or _int(h, "attention.value_length")
        return Attention(
            kind="mla",
            num_heads=heads,
            kv_lora_rank=lora,
            qk_rope_head_dim=rope,
            qk_nope_head_dim=key - rope,
            v_head_dim=value,
            sources=[source],
        )
    kv = _int(h, "attention.head_count_kv") or heads
    hidden = _need(h, "embedding_length")
    head_dim = _int(h, "attention.key_length") or hidden // heads
    window = _int(h, "attention.sliding_window")
    window_layers = _window_layers(h, layers) if window else None
    context = _int(h, "context_length")
    if window_layers is None or window is None or (context is not None and window >= context):
        window, window_layers = None, None
    return Attention(
        kind="gqa",
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=head_dim,
        layers=attention_layers if attention_layers != layers else None,
        sliding_window=window,
        sliding_window_layers=window_layers,
        sources=[source],
    )


def moe_of(h: GgufHeader) -> Moe | None:
    experts = _int(h, "expert_count")
    if not experts:
        return None
    return Moe(
        experts=experts,
        top_k=_int(h, "expert_used_count") or 1,
        shared_experts=_int(h, "expert_shared_count") or 0,
        moe_intermediate=_int(h, "expert_feed_forward_length"),
        dense_layers=_int(h, "leading_dense_block_count") or 0,
    )


def params(h: GgufHeader, moe: Moe | None) -> tuple[float, float]:
    """Total parameters (every tensor's elements) and active ones (the routed experts at top_k/experts)."""
    total = sum(t.elements for t in h.tensors)
    if moe is None:
        return float(total), float(total)
    routed = sum(t.elements for t in h.tensors if _EXPERTS.search(t.name))
    return float(total), total - routed * (1 - moe.top_k / moe.experts)


def vocab_of(h: GgufHeader) -> int | None:
    tokens = h.metadata.get("tokenizer.ggml.tokens")
    if isinstance(tokens, dict):
        return as_int(tokens.get("_len"))
    if isinstance(tokens, list):
        return len(tokens)
    return _int(h, "vocab_size")


def type_summary(h: GgufHeader, limit: int = 4) -> str:
    """`Q4_K 14.2 GB, Q6_K 2.1 GB, F32 0.1 GB`: the bytes per ggml type, biggest first."""
    parts = [f"{name} {size / 1e9:.2f} GB" for name, size in h.bytes_by_type().items()]
    more = f", +{len(parts) - limit} more" if len(parts) > limit else ""
    return ", ".join(parts[:limit]) + more


def recurrent_keys(h: GgufHeader) -> list[str]:
    """The recurrent-layer key groups of an architecture whose state recipegen does not read from a header
    (RWKV's wkv / time_mix, gated DeltaNet and KDA, which share the ssm.* keys with Mamba)."""
    if h.architecture in STATE_SPACE_ARCHS:
        return []
    prefix = f"{h.architecture}."
    found = {k[len(prefix) :].split(".")[0] for k in h.metadata if k.startswith(prefix)}
    return sorted(found & {"ssm", "wkv", "shortconv", "linear_attn", "time_mix", "deltanet"})


def _per_layer(h: GgufHeader, key: str) -> list[int] | None:
    value = h.arch_key(key)
    if not isinstance(value, list):
        return None
    return [v if isinstance(v, int) and not isinstance(v, bool) else 0 for v in value]


def state_layers_of(h: GgufHeader, layers: int, source: Source) -> LinearAttention | None:
    """The Mamba / short-conv layers of a state-space architecture, as llama.cpp reads them: which layers are
    recurrent (llama-model.cpp recurrent_layer_arr: every layer for mamba, mamba2 and falcon-h1; else the
    layers without KV heads, for nemotron_h also without an MLP), and their shape from ssm.conv_kernel,
    ssm.inner_size, ssm.state_size, ssm.group_count and ssm.time_step_rank (Mamba-2's heads), or
    shortconv.l_cache over embedding_length (LFM2). llama.cpp keeps that state in F32
    (llama_memory_recurrent's r and s tensors)."""
    if h.architecture not in STATE_SPACE_ARCHS:
        return None
    kv = _per_layer(h, "attention.head_count_kv")
    if h.architecture in ("mamba", "mamba2", "falcon-h1") or kv is None:
        count = layers
    elif h.architecture.startswith("nemotron_h"):
        ff = _per_layer(h, "feed_forward_length") or [0] * layers
        count = sum(1 for k, f in zip(kv[:layers], ff[:layers], strict=False) if k == 0 and f == 0)
    else:
        count = sum(1 for k in kv[:layers] if k == 0)
    l_cache = _int(h, "shortconv.l_cache")
    if l_cache:
        hidden = _need(h, "embedding_length")
        return LinearAttention(
            kind="short_conv", layers=count, num_heads=1, head_k_dim=1, head_v_dim=1, conv_kernel=l_cache,
            inner=hidden, state_bytes=4, sources=[source, LLAMA_HPARAMS],
        )  # fmt: skip
    inner = _need(h, "ssm.inner_size")
    d_state = _need(h, "ssm.state_size")
    d_conv = _need(h, "ssm.conv_kernel")
    groups = _int(h, "ssm.group_count") or 0
    if groups:  # Mamba-2: llama.cpp's heads are ssm.time_step_rank, each inner_size / heads wide
        heads = _need(h, "ssm.time_step_rank")
        return LinearAttention(
            kind="mamba2", layers=count, num_heads=heads, head_k_dim=d_state, head_v_dim=max(1, inner // heads),
            conv_kernel=d_conv, inner=inner, groups=groups, state_bytes=4, sources=[source, LLAMA_HPARAMS],
        )  # fmt: skip
    return LinearAttention(
        kind="mamba1", layers=count, num_heads=inner, head_k_dim=d_state, head_v_dim=1, conv_kernel=d_conv,
        inner=inner, state_bytes=4, sources=[source, LLAMA_HPARAMS],
    )  # fmt: skip


def variant_of(ck: Checkpoint, quant: GgufQuant, taken: set[str]) -> Variant:
    tag = quant_tag(quant.file)
    variant_id = "gguf-" + slug(tag)
    while variant_id in taken:
        variant_id += "-2"
    taken.add(variant_id)
    where = f"{ck.name}/{quant.file}" if ck.repo_id else quant.file
    notes = [f"GGUF quantization {tag}: file {where}" + (f" (part 1 of {quant.parts})" if quant.parts > 1 else "")]
    if quant.header is not None:
        notes.append(f"tensor bytes per type (GGUF header): {type_summary(quant.header)}")
    return Variant(
        id=variant_id,
        repo=ck.repo,
        revision=ck.revision,
        file=quant.file,
        quant="gguf",
        publisher="community",
        size_gb=quant.bytes / 1e9 if quant.bytes else None,
        shards=quant.parts if quant.parts > 1 else None,
        notes=notes,
        sources=[Source(url=r.url, note=f"{r.what}, read by recipegen") for r in ck.read],
    )


def header_facts(h: GgufHeader) -> list[tuple[str, str]]:
    keys = ("block_count", "embedding_length", "attention.head_count", "attention.head_count_kv")
    out = [("GGUF architecture", h.architecture or "?")]
    state = ("ssm.inner_size", "ssm.state_size", "ssm.conv_kernel", "ssm.group_count", "shortconv.l_cache")
    for key in (*keys, "attention.key_length", "attention.kv_lora_rank", "expert_count", "context_length", *state):
        value = h.arch_key(key)
        if value is not None:
            shown = f"per layer, max {_int(h, key)}" if isinstance(value, list) else str(value)
            out.append((f"{h.architecture}.{key}", shown[:80]))
    return out


def model_from_gguf(ck: Checkpoint) -> tuple[Model | None, str | None, list[tuple[str, str]]]:
    """The model a checkpoint's GGUF headers describe: (model, problem, facts)."""
    read = [q for q in ck.gguf if q.header is not None]
    if not read:
        problems = [q.problem for q in ck.gguf if q.problem]
        if problems:
            return None, f"no GGUF header could be read ({problems[0]})", []
        return None, "no complete GGUF quantization (a split set with every part) is there", []
    h = read[0].header
    assert h is not None
    arch = word(h.architecture)
    facts = header_facts(h)
    if arch is None:
        return None, "the GGUF header names no general.architecture", facts
    recurrent = recurrent_keys(h)
    if recurrent:
        keys = ", ".join(f"{arch}.{k}.*" for k in recurrent)
        return None, f"GGUF architecture {arch} has recurrent layers ({keys}), not read from GGUF headers", facts
    cls, rule = hf_class(arch)
    facts.append(("Hugging Face class", cls or f"none maps to llama.cpp architecture {arch}"))
    source = Source(url=LLAMA_MODEL, note=f"GGUF header keys {arch}.*, read by recipegen as llama.cpp reads them")
    try:
        layers = _need(h, "block_count")
        linear = state_layers_of(h, layers, source)
        if linear is not None and not _int(h, "attention.head_count"):
            att = attention_free(linear, source)
        else:
            att = attention_of(h, layers, source)
        moe = moe_of(h)
        total, active = params(h, moe)
        taken: set[str] = set()
        variants = [variant_of(ck, q, taken) for q in ck.gguf if q.complete]
        name = ck.repo.rsplit("/", 1)[-1]
        label = h.metadata.get("general.name")
        model = Model(
            id=slug(name),
            name=name,
            aliases=[ck.repo_id] if ck.repo_id else [],
            org=ck.repo_id.split("/", 1)[0] if ck.repo_id else "local",
            released="unknown",
            architecture=cls or "Gguf_" + re.sub(r"\W", "_", arch),
            model_type=arch,
            gguf_arch=arch,
            params_total_b=round(total / 1e9, 3),
            params_active_b=round(active / 1e9, 3) if moe is not None else None,
            layers=layers,
            hidden_size=_need(h, "embedding_length"),
            vocab_size=vocab_of(h),
            attention=att,
            linear_attention=linear,
            moe=moe,
            max_context=_int(h, "context_length") or 0,
            needs=needs_of(rule, att, linear),
            variants=variants,
            sources=[source, *(variants[0].sources if variants else [])],
        )
    except ValueError as exc:
        return None, str(exc).splitlines()[0], facts
    if isinstance(label, str) and word(label.replace(" ", "-")):
        facts.insert(0, ("general.name", label[:80]))
    return model, None, facts


def describe(quant: GgufQuant) -> dict[str, Any]:
    """A quantization as `inspect --format json` shows it."""
    h = quant.header
    return {
        "file": quant.file,
        "parts": quant.parts,
        "bytes": quant.bytes,
        "complete": quant.complete,
        "tensor_bytes": h.tensor_bytes if h else None,
        "bytes_by_type": h.bytes_by_type() if h else None,
        "problem": quant.problem,
    }
