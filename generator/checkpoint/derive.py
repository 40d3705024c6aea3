"""Model facts derived from a checkpoint's own files (config.json, quantization config, sizes).

Pure: takes a hub.Checkpoint, returns a Derivation. What the files do not say stays unknown; an
architecture class without a rule in data/architectures.yaml is named, never guessed.
"""

from __future__ import annotations

import re
from typing import Any

from ..catalog.schema import Model, Source, Variant
from ..catalog.schema.common import KernelOp
from ..catalog.schema.engine import QuantMethod
from ..catalog.schema.model import Attention, CompressedLayers, Indexer, LinearAttention, Moe, Need
from ..frozen import frozen
from .architectures import LinearKind, Rule, rules
from .hub import Checkpoint

FLOAT_DTYPES = {"BF16", "F16", "F32", "F64"}
_WORD = re.compile(r"^[A-Za-z0-9][\w.+-]{0,63}$")


def word(value: object) -> str | None:
    """A config.json string that is a plain identifier, else None: free text from a checkpoint never
    travels into plans or artifacts."""
    text = str(value) if isinstance(value, (str, int, float)) else ""
    return text if _WORD.match(text) else None


@frozen
class WeightFormat:
    quant: QuantMethod | None
    label: str  # what the files say, in their own words
    why_none: str | None = None


@frozen
class Size:
    bytes: float | None
    how: str


@frozen
class Derivation:
    checkpoint: Checkpoint
    architecture: str | None
    model_type: str | None
    rule: Rule | None
    problem: str | None  # why no model could be derived
    model: Model | None
    weight_format: WeightFormat
    size: Size
    params_how: str
    facts: tuple[tuple[str, str], ...]  # (label, value) lines for the report


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """The language model's own fields: a multimodal config nests them under text_config."""
    inner = config.get("text_config")
    return {**config, **inner} if isinstance(inner, dict) else config


# ---------------------------------------------------------------------------------------------
# weight format


def _compressed_tensors(qc: dict[str, Any]) -> WeightFormat:
    raw = qc.get("config_groups")
    groups: dict[str, Any] = raw if isinstance(raw, dict) else {}
    kinds: set[tuple[str, int]] = set()
    block = False
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, dict) else None
        if isinstance(weights, dict):
            kinds.add((str(weights.get("type")), _int(weights.get("num_bits")) or 0))
            block = block or weights.get("strategy") == "block" or bool(weights.get("block_structure"))
    label = f"compressed-tensors {word(qc.get('format')) or ''}".strip()
    formats = {str(g.get("format", "")) for g in groups.values() if isinstance(g, dict)} | {str(qc.get("format"))}
    if ("float", 4) in kinds and any("mxfp4" in f for f in formats):
        return WeightFormat("mxfp4", label)
    if ("float", 4) in kinds:
        return WeightFormat("nvfp4", label)
    if ("float", 8) in kinds:
        return WeightFormat("fp8_block" if block else "fp8", label)
    if ("int", 4) in kinds and ("int", 8) in kinds:
        return WeightFormat("int4_int8_mix", label)
    if kinds == {("int", 4)}:
        return WeightFormat("int4", label)
    return WeightFormat(None, label, f"{label} with weight groups {sorted(kinds)} is not a format the catalog declares")


def _modelopt(algo: str) -> WeightFormat:
    table: dict[str, QuantMethod] = {"NVFP4": "nvfp4", "FP8": "fp8", "FP8_PB_WO": "fp8_block"}
    quant = table.get(algo.upper())
    label = f"ModelOpt {word(algo) or 'unknown'}"
    return WeightFormat(quant, label, None if quant else f"{label} is not a format the catalog declares")


def weight_format(ck: Checkpoint) -> WeightFormat:
    config = ck.config or {}
    qc = config.get("quantization_config") or text_config(config).get("quantization_config")
    if isinstance(ck.quant_config, dict):
        quantization = ck.quant_config.get("quantization")
        algo = quantization.get("quant_algo") if isinstance(quantization, dict) else None
        if isinstance(algo, str):
            return _modelopt(algo)
    if isinstance(qc, dict):
        method = str(qc.get("quant_method", "")).lower()
        if method == "fp8":
            block = qc.get("weight_block_size")
            label = f"fp8 {word(qc.get('fmt')) or ''}".strip()
            if str(text_config(config).get("expert_dtype", "")).lower() == "fp4":  # DeepSeek-V4: FP4 routed experts
                return WeightFormat("mixed_fp4_fp8", f"{label}, routed experts fp4 (expert_dtype)")
            return WeightFormat("fp8_block" if block else "fp8", label)
        if method in ("mxfp4", "awq", "gptq"):
            quant: QuantMethod = method  # type: ignore[assignment]
            bits = _int(qc.get("bits"))
            return WeightFormat(quant, method + (f" {bits}-bit" if bits else ""))
        if method == "compressed-tensors":
            return _compressed_tensors(qc)
        if method == "modelopt":
            return _modelopt(str(qc.get("quant_algo", "")))
        named = word(method) or "unknown"
        return WeightFormat(None, named, f"quant_method {named!r} is not a format the catalog declares")
    if ck.config is None and ck.gguf_files:
        return WeightFormat("gguf", f"GGUF ({len(ck.gguf_files)} file(s))")
    dtype = word(text_config(config).get("torch_dtype") or text_config(config).get("dtype")) or ""
    if dtype == "bfloat16":
        return WeightFormat("bf16", "bfloat16 (no quantization_config)")
    if dtype == "float16":
        return WeightFormat("fp16", "float16 (no quantization_config)")
    if ck.gguf_files and not any(f.path.endswith(".safetensors") for f in ck.files):
        return WeightFormat("gguf", f"GGUF ({len(ck.gguf_files)} file(s))")
    if not dtype and ck.dtype_elements:  # config.json names no dtype: the safetensors headers do
        stored = set(ck.dtype_elements)
        if stored <= {"BF16", "F32"} and "BF16" in stored:
            return WeightFormat("bf16", "BF16 tensors (safetensors headers; config.json names no dtype)")
        if stored <= {"F16", "F32"} and "F16" in stored:
            return WeightFormat("fp16", "F16 tensors (safetensors headers; config.json names no dtype)")
    return WeightFormat(None, dtype or "unknown", f"weights in {dtype or 'an unstated dtype'}: no format to plan with")


SPLIT_GGUF = re.compile(r"-\d{5}-of-\d{5}\.gguf$")


def checkpoint_size(ck: Checkpoint, quant: QuantMethod | None) -> Size:
    if quant == "gguf":
        ggufs = ck.gguf_files
        stems = {SPLIT_GGUF.sub("", f.path) for f in ggufs}
        if len(stems) == 1 and all(f.size for f in ggufs):
            return Size(float(sum(f.size or 0 for f in ggufs)), f"the GGUF file size ({len(ggufs)} part(s))")
        return Size(None, f"{len(stems)} GGUF quantizations in the repo: name one (recipegen does not pick)")
    if ck.index_total_size:
        return Size(float(ck.index_total_size), "model.safetensors.index.json metadata.total_size")
    if ck.header_bytes:
        return Size(float(ck.header_bytes), "the safetensors headers (sum of tensor bytes)")
    files = ck.file_size(".safetensors")
    if files:
        return Size(float(files), "the sizes of the *.safetensors files")
    return Size(None, "no index, header or file size available")


# ---------------------------------------------------------------------------------------------
# architecture facts


LINEAR_OPS: dict[LinearKind, KernelOp] = {
    "kda": "linear_attention.kda",
    "gdn": "linear_attention.gdn",
    "lightning": "attention.lightning",
}
LINEAR_NAMES: dict[LinearKind, str] = {
    "kda": "KDA (Kimi delta attention)",
    "gdn": "gated DeltaNet",
    "lightning": "lightning (linear) attention",
}


def layer_split(kind: LinearKind, c: dict[str, Any], layers: int) -> tuple[int, int]:
    """(recurrent-state layers, attention layers) of a hybrid class, from the fields its kind uses:
    lightning: attn_type_list (0 linear, 1 softmax); gdn: layer_types, else every full_attention_interval-th
    layer is full attention; kda: layer_types, else linear_attn_config.kda_layers / full_attn_layers."""
    types = c.get("layer_types")
    if kind == "lightning":
        listed = c.get("attn_type_list")
        if not isinstance(listed, list) or not listed:
            raise ValueError("attn_type_list missing (which layers are lightning attention)")
        main = listed[:layers]
        return sum(1 for t in main if t == 0), sum(1 for t in main if t == 1)
    if isinstance(types, list) and types:
        main = [str(t) for t in types[:layers]]
        linear = sum(1 for t in main if t == "linear_attention")
        if linear:
            return linear, len(main) - linear
    if kind == "gdn":
        every = _int(c.get("full_attention_interval"))
        if not every:
            raise ValueError("neither layer_types nor full_attention_interval says which layers are gated DeltaNet")
        full = sum(1 for i in range(layers) if (i + 1) % every == 0)
        return layers - full, full
    la = c.get("linear_attn_config")
    kda = la.get("kda_layers") if isinstance(la, dict) else None
    listed = la.get("full_attn_layers") if isinstance(la, dict) else None
    if not isinstance(kda, list) or not kda:
        raise ValueError("neither layer_types nor linear_attn_config.kda_layers says which layers are KDA")
    return len(kda), len(listed) if isinstance(listed, list) else layers - len(kda)


def _need_int(c: dict[str, Any], key: str, where: str = "") -> int:
    value = _int(c.get(key))
    if value is None:
        raise ValueError(f"{where}{key} missing")
    return value


def _linear(kind: LinearKind, c: dict[str, Any], layers: int, source: Source) -> LinearAttention:
    """The recurrent-state layers' shape, from the fields the kind uses (fixed per kind)."""
    if kind == "lightning":  # MiniMax: every head keeps a head_dim x head_dim fp32 state
        heads = _need_int(c, "num_attention_heads")
        dim = _int(c.get("head_dim")) or _need_int(c, "hidden_size") // heads
        return LinearAttention(
            kind=kind, layers=layers, num_heads=heads, head_k_dim=dim, head_v_dim=dim, sources=[source]
        )
    if kind == "gdn":  # a state per value head; the short convolution spans q, k (key heads) and v
        dtype = str(c.get("mamba_ssm_dtype", "float32")).lower()
        return LinearAttention(
            kind=kind,
            layers=layers,
            num_heads=_need_int(c, "linear_num_value_heads"),
            num_k_heads=_need_int(c, "linear_num_key_heads"),
            head_k_dim=_need_int(c, "linear_key_head_dim"),
            head_v_dim=_need_int(c, "linear_value_head_dim"),
            conv_kernel=_int(c.get("linear_conv_kernel_dim")),
            state_bytes=2 if dtype in ("bfloat16", "float16") else 4,
            sources=[source],
        )
    la = c.get("linear_attn_config")
    if not isinstance(la, dict):
        raise ValueError("linear_attn_config missing (the KDA layers' heads and width)")
    dim = _need_int(la, "head_dim", "linear_attn_config.")
    return LinearAttention(
        kind=kind,
        layers=layers,
        num_heads=_need_int(la, "num_heads", "linear_attn_config."),
        head_k_dim=dim,
        head_v_dim=dim,
        conv_kernel=_int(la.get("short_conv_kernel_size")),
        sources=[source],
    )


def _dsv4(c: dict[str, Any], heads: int, layers: int, source: Source) -> Attention:
    """DeepSeek-V4: per layer a compress ratio (0: only the sliding window; the smallest ratio, CSA, also
    carries the lightning indexer), one KV head of head_dim, a sliding window on every layer."""
    ratios = c.get("compress_ratios")
    if not isinstance(ratios, list) or len(ratios) < layers:
        raise ValueError("compress_ratios missing or shorter than num_hidden_layers")
    main = [_int(r) or 0 for r in ratios[:layers]]  # later entries belong to the MTP layers
    groups: dict[int, int] = {}
    for r in main:
        if r > 0:
            groups[r] = groups.get(r, 0) + 1
    if not groups:
        raise ValueError("compress_ratios names no compressed layer")
    plain = sum(1 for r in main if r == 0)
    return Attention(
        kind="dsv4",
        num_heads=heads,
        num_kv_heads=_need_int(c, "num_key_value_heads"),
        head_dim=_need_int(c, "head_dim"),
        qk_rope_head_dim=_int(c.get("qk_rope_head_dim")),
        sliding_window=_need_int(c, "sliding_window"),
        sliding_window_layers=plain or None,
        compressed=[CompressedLayers(ratio=r, layers=n) for r, n in sorted(groups.items())],
        indexer=Indexer(
            heads=_need_int(c, "index_n_heads"),
            head_dim=_need_int(c, "index_head_dim"),
            topk=_need_int(c, "index_topk"),
            layers=groups[min(groups)],
        ),
        sources=[source],
    )


def _attention(
    rule: Rule, c: dict[str, Any], layers: int, source: Source, attention_layers: int | None = None
) -> Attention:
    heads = _int(c.get("num_attention_heads"))
    if heads is None:
        raise ValueError("num_attention_heads missing")
    if rule.attention == "dsv4":
        return _dsv4(c, heads, layers, source)
    if rule.attention == "gqa":
        kv = _int(c.get("num_key_value_heads")) or heads
        hidden = _int(c.get("hidden_size")) or 0
        head_dim = _int(c.get("head_dim")) or hidden // heads
        window = _int(c.get("sliding_window"))
        layer_types = c.get("layer_types")
        window_layers: int | None = None
        if rule.nope_interval_default is not None:
            window = _int(c.get("attention_chunk_size"))
            window_layers = layers - len(nope_layers(c, layers, rule.nope_interval_default))
        elif isinstance(layer_types, list) and layer_types:
            window_layers = sum(1 for t in layer_types if t == "sliding_attention") or None
        elif window and (pattern := _int(c.get("sliding_window_pattern") or c.get("_sliding_window_pattern"))):
            # Gemma-style: every pattern-th layer attends globally, the others within the window
            window_layers = layers - layers // pattern
        elif window and c.get("use_sliding_window", True):
            # Qwen2-style configs window only the layers from max_window_layers on
            first = _int(c.get("max_window_layers")) if c.get("use_sliding_window") else None
            window_layers = layers - first if first is not None and first < layers else layers
        context = _int(c.get("max_position_embeddings"))
        if window_layers is None or window is None or (context is not None and window >= context):
            window, window_layers = None, None  # a window as long as the context bounds nothing
        return Attention(
            kind="gqa",
            num_heads=heads,
            num_kv_heads=kv,
            head_dim=head_dim,
            layers=attention_layers,
            sliding_window=window,
            sliding_window_layers=window_layers,
            sources=[source],
        )
    indexer = None
    if rule.attention in ("dsa", "dsa_nope"):
        types = c.get("indexer_types")
        full = sum(1 for t in types if t == "full") if isinstance(types, list) and types else None
        indexer = Indexer(
            heads=_int(c.get("index_n_heads")) or 0,
            head_dim=_int(c.get("index_head_dim")) or 0,
            topk=_int(c.get("index_topk")) or 0,
            layers=full,
            kpool=_int(c.get("index_kpool")) or 1,  # keys pooled n:1 before they are cached (GLM-5.3-Flash)
        )
    return Attention(
        kind=rule.attention,
        num_heads=heads,
        kv_lora_rank=_int(c.get("kv_lora_rank")),
        qk_rope_head_dim=_int(c.get("qk_rope_head_dim")),
        qk_nope_head_dim=_int(c.get("qk_nope_head_dim")),
        v_head_dim=_int(c.get("v_head_dim")),
        layers=attention_layers,
        indexer=indexer,
        sources=[source],
    )


def nope_layers(c: dict[str, Any], layers: int, interval: int) -> list[int]:
    """Indices of the layers without RoPE: the 0s of no_rope_layers, else every interval-th layer."""
    listed = c.get("no_rope_layers")
    if isinstance(listed, list) and listed:
        return [i for i, v in enumerate(listed[:layers]) if v == 0]
    every = _int(c.get("no_rope_layer_interval")) or interval
    return [i for i in range(layers) if (i + 1) % every == 0]


def _moe(rule: Rule, c: dict[str, Any], layers: int) -> Moe | None:
    experts = _int(c.get("n_routed_experts")) or _int(c.get("num_experts")) or _int(c.get("num_local_experts"))
    if not experts:
        return None
    shared = _int(c.get("n_shared_experts"))
    if shared is None:
        shared = _int(c.get("num_shared_experts"))
    if shared is None:
        shared = 1 if (_int(c.get("shared_expert_intermediate_size")) or 0) > 0 else 0
    if rule.shared_experts is not None:
        shared = rule.shared_experts
    only = c.get("mlp_only_layers")
    dense = _int(c.get("first_k_dense_replace")) or (len(only) if isinstance(only, list) else 0)
    step = _int(c.get(rule.moe_every_field)) if rule.moe_every_field else None
    if step:
        dense = layers - layers // step
    return Moe(
        experts=experts,
        top_k=_int(c.get("num_experts_per_tok"))
        or _int(c.get("experts_per_token"))
        or _int(c.get("num_experts_per_token"))
        or 1,
        shared_experts=shared,
        moe_intermediate=_int(c.get("moe_intermediate_size")) or _int(c.get("intermediate_size")),
        dense_layers=dense,
    )


def _needs(rule: Rule, att: Attention, linear: LinearAttention | None = None) -> list[Need]:
    needs = _attention_needs(att)
    if linear is not None:
        needs.append(
            Need(
                op=LINEAR_OPS[linear.kind],
                why=f"{linear.layers} {LINEAR_NAMES[linear.kind]} layers keep a recurrent state per request "
                f"({linear.num_heads} heads of {linear.head_k_dim}×{linear.head_v_dim}, config.json) "
                "instead of a KV cache",
            )
        )
    return needs + [Need(op=e.op, why=e.why) for e in rule.extra_needs]


def _attention_needs(att: Attention) -> list[Need]:
    if att.kind == "dsv4":
        assert att.indexer is not None and att.compressed is not None
        ratios = "/".join(str(g.ratio) for g in att.compressed)
        return [
            Need(
                op="attention.dsv4",
                head_size=att.head_dim,
                why=f"DeepSeek-V4 compressed attention (ratios {ratios} plus a {att.sliding_window}-token window) "
                f"on {att.num_kv_heads} KV head(s) of width {att.head_dim} (config.json)",
            ),
            Need(
                op="indexer.dsa",
                index_topk=att.indexer.topk,
                why=f"the lightning indexer picks the top {att.indexer.topk} compressed entries",
            ),
        ]
    if att.kind == "gqa":
        needs = [
            Need(
                op="attention.gqa",
                head_size=att.head_dim,
                why=f"grouped-query attention: {att.num_heads} query heads over {att.num_kv_heads} KV heads "
                f"of width {att.head_dim} (config.json)",
            )
        ]
    else:
        width = (att.kv_lora_rank or 0) + (att.qk_rope_head_dim or 0)
        ops: dict[str, KernelOp] = {"mla": "attention.mla", "dsa": "attention.sparse_mla"}
        op = ops.get(att.kind, "attention.sparse_mla_nope")
        topk = att.indexer.topk if att.indexer else None
        needs = [
            Need(
                op=op,
                head_size=width,
                qk_nope_head_dim=att.qk_nope_head_dim,
                index_topk=topk,
                why=f"{'DSA sparse ' if topk else ''}multi-head latent attention over a {width}-wide latent cache "
                f"(kv_lora_rank {att.kv_lora_rank} + qk_rope_head_dim {att.qk_rope_head_dim}, config.json)"
                + (", without RoPE" if att.kind == "dsa_nope" else ""),
            )
        ]
        if topk:
            pooled = f" of the {att.indexer.kpool}:1-pooled keys" if att.indexer and att.indexer.kpool > 1 else ""
            needs.append(
                Need(
                    op="indexer.dsa",
                    index_topk=topk,
                    why=f"the DSA lightning indexer picks the top {topk}{pooled} tokens",
                )
            )
    return needs


def estimate_params(
    c: dict[str, Any],
    att: Attention,
    moe: Moe | None,
    layers: int,
    dense_mlp_field: str | None = None,
    linear: LinearAttention | None = None,
) -> tuple[float, float]:
    """Total and active parameters from config.json's shapes (embeddings, attention or recurrent-state
    mixer per layer, MLP/experts)."""
    hidden = _int(c.get("hidden_size")) or 0
    vocab = _int(c.get("vocab_size")) or 0
    embed = vocab * hidden * (1 if c.get("tie_word_embeddings") else 2)
    heads = att.num_heads
    q_lora = _int(c.get("q_lora_rank"))
    attn: float
    if att.kind == "gqa":
        hd = att.head_dim or 0
        attn = hidden * heads * hd * 2 + 2 * hidden * (att.num_kv_heads or heads) * hd
    elif att.kind == "dsv4":
        hd = att.head_dim or 0
        q = hidden * q_lora + q_lora * heads * hd if q_lora else hidden * heads * hd
        attn = q + hidden * (att.num_kv_heads or 1) * hd + heads * hd * hidden
    else:
        nope, rope = att.qk_nope_head_dim or 0, att.qk_rope_head_dim or 0
        v, lora = att.v_head_dim or 0, att.kv_lora_rank or 0
        q = hidden * q_lora + q_lora * heads * (nope + rope) if q_lora else hidden * heads * (nope + rope)
        attn = q + hidden * (lora + rope) + lora * heads * (nope + v) + heads * v * hidden
    if linear is not None:  # mixer per layer: the attention layers' projections, or q/k/v, gate and output
        kh = linear.num_k_heads or linear.num_heads
        state = hidden * (2 * kh * linear.head_k_dim + 3 * linear.num_heads * linear.head_v_dim)
        attn = ((att.layers or 0) * attn + linear.layers * state) / layers if layers else 0
    dense_width = _int(c.get(dense_mlp_field)) if dense_mlp_field else None
    dense_mlp = 3 * hidden * (dense_width or _int(c.get("intermediate_size")) or 0)
    if moe is None:
        total = embed + layers * (attn + dense_mlp)
        return total, total
    # latent MoE (Kimi-K3): the routed experts work at routed_expert_hidden_size, not hidden_size
    expert = 3 * (_int(c.get("routed_expert_hidden_size")) or hidden) * (moe.moe_intermediate or 0)
    shared_expert = 3 * hidden * (moe.moe_intermediate or 0)
    moe_layers = layers - moe.dense_layers
    dense_part = moe.dense_layers * (attn + dense_mlp) + moe_layers * (attn + moe.shared_experts * shared_expert)
    total = embed + dense_part + moe_layers * moe.experts * expert
    active = embed + dense_part + moe_layers * moe.top_k * expert
    return total, active


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.casefold()).strip("-.") or "model"


def derive(ck: Checkpoint) -> Derivation:
    fmt = weight_format(ck)
    size = checkpoint_size(ck, fmt.quant)
    if ck.config is None:
        problem = "no config.json: the architecture is not stated"
        return Derivation(ck, None, None, None, problem, None, fmt, size, "", ())
    config = ck.config
    arch_list = config.get("architectures")
    arch = word(arch_list[0]) if isinstance(arch_list, list) and arch_list else None
    c = text_config(config)
    model_type = word(config.get("model_type") or c.get("model_type"))
    facts: list[tuple[str, str]] = [("architecture", arch or "not stated"), ("model_type", model_type or "?")]
    rule = rules().get(arch or "")
    if rule is not None:
        c = {**rule.defaults, **c}
    layers = _int(c.get("num_hidden_layers")) or 0
    if rule is None or not layers:
        problem = "config.json names no architecture" if arch is None else f"recipegen has no rule for {arch}"
        return Derivation(ck, arch, model_type, None, problem, None, fmt, size, "", tuple(facts))
    config_url = next((r.url for r in ck.read if r.what == "config.json"), ck.name)
    source = Source(url=config_url, note="config.json, read by recipegen")
    try:
        linear: LinearAttention | None = None
        attention_layers: int | None = None
        if rule.linear_attention is not None:
            linear_layers, attention_layers = layer_split(rule.linear_attention, c, layers)
            linear = _linear(rule.linear_attention, c, linear_layers, source)
        att = _attention(rule, c, layers, source, attention_layers)
    except ValueError as exc:
        problem = f"config.json: {str(exc).splitlines()[0]}"
        return Derivation(ck, arch, model_type, rule, problem, None, fmt, size, "", tuple(facts))
    moe = _moe(rule, c, layers)
    total, active = estimate_params(c, att, moe, layers, rule.dense_mlp_field, linear)
    params_how = "computed from config.json shapes"
    if ck.dtype_elements and set(ck.dtype_elements) <= FLOAT_DTYPES:
        total = float(sum(ck.dtype_elements.values()))
        params_how = "counted in the safetensors headers"
        if moe is None:
            active = total
    try:  # every value is checked by the schema's grammars; one that fails is a plain problem
        repo = ck.repo
        base = ck.repo.rsplit("/", 1)[-1]
        sources = [Source(url=r.url, note=f"{r.what}, read by recipegen") for r in ck.read] or [source]
        variants: list[Variant] = []
        if fmt.quant is not None:
            variants.append(
                Variant(
                    id=fmt.quant.replace("_", "-"),
                    repo=repo,
                    revision=ck.revision,
                    quant=fmt.quant,
                    publisher="community",
                    size_gb=size.bytes / 1e9 if size.bytes else None,
                    notes=[f"weight format from the files: {fmt.label}; size from {size.how}"],
                    sources=sources,
                )
            )
        model: Model | None = None
        why_not: str | None = fmt.why_none
        if variants:
            model = Model(
                id=slug(base),
                name=base,
                aliases=[repo] if ck.repo_id else [],
                org=ck.repo_id.split("/", 1)[0] if ck.repo_id else "local",
                released="unknown",
                architecture=arch or "",
                model_type=model_type or "unknown",
                gguf_arch=rule.gguf_arch,
                params_total_b=round(total / 1e9, 3),
                params_active_b=round(active / 1e9, 3) if moe is not None else None,
                layers=layers,
                hidden_size=_int(c.get("hidden_size")) or 0,
                vocab_size=_int(c.get("vocab_size")),
                attention=att,
                linear_attention=linear,
                moe=moe,
                mtp_layers=_int(c.get("num_nextn_predict_layers"))
                or (_int(c.get("num_mtp_modules")) or 0 if c.get("use_mtp") is True else 0),
                max_context=_int(c.get("max_position_embeddings")) or 0,
                multimodal=isinstance(config.get("text_config"), dict),
                needs=_needs(rule, att, linear),
                variants=variants,
                sources=sources,
            )
    except ValueError as exc:
        problem = f"a value read from {ck.name} is not accepted: {str(exc).splitlines()[0]}"
        return Derivation(ck, arch, model_type, rule, problem, None, fmt, size, "", tuple(facts))
    return Derivation(ck, arch, model_type, rule, why_not, model, fmt, size, params_how, tuple(facts))


def observed(config: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Layout facts config.json states, for any class (also ones without a rule): shown, not planned with."""
    if config is None:
        return []
    c = text_config(config)
    out: list[tuple[str, str]] = []
    for key in ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim"):
        if _int(c.get(key)) is not None:
            out.append((key, str(c[key])))
    mla = _int(c.get("kv_lora_rank")) is not None
    for key in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "q_lora_rank"):
        if _int(c.get(key)) is not None:
            out.append((f"MLA {key}" if mla else key, str(c[key])))
    for key in ("index_n_heads", "index_head_dim", "index_topk"):
        if _int(c.get(key)) is not None:
            out.append((f"DSA indexer {key}", str(c[key])))
    types = c.get("layer_types") or c.get("layers_block_type")
    if isinstance(types, list) and types:
        counts: dict[str, int] = {}
        for t in types:
            counts[str(t)] = counts.get(str(t), 0) + 1
        out.append(("layer types", ", ".join(f"{n}× {t}" for t, n in counts.items())))
        linear = sum(n for t, n in counts.items() if "linear" in t or t in ("mamba", "kda", "gdn"))
        if linear:
            out.append(("linear-attention layers", f"{linear} of {len(types)}"))
    if _int(c.get("sliding_window")) and c.get("use_sliding_window", True) is not False:
        out.append(("sliding window", f"{c['sliding_window']} tokens"))
    pattern = _int(c.get("sliding_window_pattern") or c.get("_sliding_window_pattern"))
    if pattern and not types:
        out.append(("sliding_window_pattern", f"{pattern} (every {pattern}th layer attends globally)"))
    if _int(c.get("attention_chunk_size")):
        out.append(("chunked attention", f"{c['attention_chunk_size']} tokens"))
    nope = c.get("no_rope_layers")
    if isinstance(nope, list) and nope:
        out.append(("NoPE layers", f"{sum(1 for v in nope if v == 0)} of {len(nope)} (no_rope_layers)"))
    listed = c.get("attn_type_list")
    if isinstance(listed, list) and listed:
        out.append(("attn_type_list", f"{listed.count(0)}× linear (0), {listed.count(1)}× softmax (1)"))
    ratios = c.get("compress_ratios")
    if isinstance(ratios, list) and ratios:
        counts = {str(r): ratios.count(r) for r in dict.fromkeys(ratios)}
        out.append(("compress_ratios", ", ".join(f"{n}× {r}" for r, n in counts.items())))
    if _int(c.get("index_kpool")):
        out.append(("DSA indexer index_kpool", str(c["index_kpool"])))
    for key in ("linear_attn_config", "linear_conv_kernel_dim", "linear_num_value_heads", "full_attention_interval"):
        if key in c:
            out.append((key, str(c[key])[:120]))
    return out
