"""A model derived from a checkpoint's own files: puts the weight format (weightformat), the size
(sizes) and the layout by rule (layouts) together into a catalog Model, or says why there is none.

Pure: takes a files.Checkpoint, returns a Derivation. What the files do not say stays unknown; an
architecture class without a rule in data/architectures.yaml is named, never guessed.
"""

from __future__ import annotations

from ..catalog.schema import Model, Source, Variant
from ..catalog.schema.model import LinearAttention, RopeScaling
from ..frozen import evolve, frozen
from .architectures import Rule, rules
from .config_bounds import config_problem, schema_problem
from .configfields import as_int, rope_scaling, slug, text_config, word
from .files import Checkpoint
from .generic import (
    field_names,
    generic_fields,
    generic_rule,
    kind_label,
    mlp_matrices,
    served_context,
    written_by_transformers5,
)
from .layouts import (
    attention_free,
    attention_of,
    layer_split,
    linear_of,
    mlp_layers,
    moe_of,
    nas_blocks,
    needs_of,
)
from .sizes import FLOAT_DTYPES, Size, checkpoint_size, estimate_params, vision_params
from .weightformat import WeightFormat, by_bytes_per_param, stored_as_float32, unstated_as_served, weight_format


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


def derive(ck: Checkpoint) -> Derivation:
    fmt = weight_format(ck)
    size = checkpoint_size(ck, fmt.quant)
    if fmt.quant == "gguf" and any(q.header for q in ck.gguf):
        return _from_gguf(ck, fmt, size)
    if ck.config is None:
        problem = "no config.json: the architecture is not stated"
        return Derivation(ck, None, None, None, problem, None, fmt, size, "", ())
    config = ck.config
    arch_list = config.get("architectures")
    arch = word(arch_list[0]) if isinstance(arch_list, list) and arch_list else None
    c = written_by_transformers5(text_config(config))
    model_type = word(config.get("model_type") or c.get("model_type"))
    facts: list[tuple[str, str]] = [("architecture", arch or "not stated"), ("model_type", model_type or "?")]
    rule = rules().get(arch or "")
    if rule is not None:
        c = {**rule.defaults, **c}
    elif arch is not None:  # no class rule: the generic one, from the fields the engines read
        c = generic_fields(c)
        generic = generic_rule(arch, c)
        if isinstance(generic, str):
            return Derivation(ck, arch, model_type, None, generic, None, fmt, size, "", tuple(facts))
        rule = generic
        facts.append(("layout rule", f"derived by the generic {kind_label(rule)} rule"))
    bad = config_problem(c) if rule is not None else None
    if bad is not None:  # bounded before any per-layer count or product is computed from it
        return Derivation(ck, arch, model_type, rule, bad, None, fmt, size, "", tuple(facts))
    layers = as_int(c.get("num_hidden_layers")) or 0
    if rule is None or not layers:
        missing = field_names("num_hidden_layers") if rule is not None and rule.generic else "num_hidden_layers"
        problem = "config.json names no architecture" if arch is None else f"config.json has no {missing}"
        return Derivation(ck, arch, model_type, None, problem, None, fmt, size, "", tuple(facts))
    config_url = next((r.url for r in ck.read if r.what == "config.json"), ck.name)
    source = Source(url=config_url, note="config.json, read by recipegen")
    try:
        linear: LinearAttention | None = None
        attention_layers: int | None = None
        if rule.linear_attention is not None:
            linear_layers, attention_layers = layer_split(rule.linear_attention, c, layers)
            linear = linear_of(rule.linear_attention, c, linear_layers, source)
        nas = nas_blocks(c)
        if nas is not None:
            kv_heads = {n for n in nas[0][:layers] if n}
            if len(kv_heads) > 1:
                raise ValueError(f"block_configs gives the attention layers {len(kv_heads)} different KV head counts")
            attention_layers = sum(1 for n in nas[0][:layers] if n)
            c = {**c, "num_key_value_heads": kv_heads.pop() if kv_heads else None}
        if linear is not None and attention_layers == 0 and as_int(c.get("num_attention_heads")) is None:
            att = attention_free(linear, source)
        else:
            att = attention_of(rule, c, layers, source, attention_layers)
    except ValueError as exc:
        problem = f"config.json: {str(exc).splitlines()[0]}"
        return Derivation(ck, arch, model_type, rule, problem, None, fmt, size, "", tuple(facts))
    moe = moe_of(rule, c, layers)
    matrices = mlp_matrices(c) if rule.generic else 3
    if moe is not None and matrices == 2:
        moe = evolve(moe, expert_matrices=2)
    total, active = estimate_params(c, att, moe, layers, rule.dense_mlp_field, linear, matrices, mlp_layers(c, att))
    params_how = "computed from config.json shapes"
    vision, uncounted = vision_params(config, as_int(c.get("hidden_size")) or 0)
    if vision:  # the tower's weights are loaded beside the language model's
        total, active = total + vision, active + vision
        params_how += f" (the vision tower's {vision / 1e9:.3f}B included)"
    elif uncounted:
        params_how += f" ({uncounted})"
    fmt = stored_as_float32(by_bytes_per_param(fmt, size.bytes, total), size.bytes, total)
    fmt = unstated_as_served(fmt, size.bytes)
    vocab, hidden = as_int(c.get("vocab_size")) or 0, as_int(c.get("hidden_size")) or 0
    if ck.stored_head and c.get("tie_word_embeddings") and fmt.quant in ("bf16", "fp16") and size.bytes:
        # the head is the embedding matrix: vLLM's tie_weights skips the stored copy (its load_weights drops
        # lm_head.weight when tie_word_embeddings is set), so those bytes never reach the GPU
        head = vocab * hidden * (4 if fmt.downcast_from_fp32 else 2)
        if 0 < head < size.bytes:
            how = f"{size.how}, less the stored copy of the tied lm_head ({head / 1e9:.2f} GB)"
            size = Size(size.bytes - head, how)
    if fmt.downcast_from_fp32 and size.bytes:
        size = Size(size.bytes / 2, f"{size.how}, halved: float32 weights held in 16 bits on the GPU")
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
                    quant_groups=list(fmt.groups),
                    notes=[f"weight format from the files: {fmt.label}; size from {size.how}"],
                    sources=sources,
                )
            )
        model: Model | None = None
        why_not: str | None = fmt.why_none
        rope = rope_scaling(c)
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
                params_total_b=round(total / 1e9, 3) or total / 1e9,  # a tiny model is not rounded to none
                params_active_b=(round(active / 1e9, 3) or active / 1e9) if moe is not None else None,
                layers=layers,
                hidden_size=as_int(c.get("hidden_size")) or 0,
                vocab_size=as_int(c.get("vocab_size")),
                attention=att,
                linear_attention=linear,
                moe=moe,
                mtp_layers=as_int(c.get("num_nextn_predict_layers"))
                or (as_int(c.get("num_mtp_modules")) or 0 if c.get("use_mtp") is True else 0),
                max_context=as_int(c.get("max_position_embeddings")) or served_context(c),
                rope_scaling=RopeScaling(type=rope[0], keys=rope[1], sources=sources) if rope else None,
                multimodal=isinstance(config.get("text_config"), dict) or isinstance(config.get("vision_config"), dict),
                params_vision_b=(round(vision / 1e9, 3) or vision / 1e9) if vision else None,
                needs=needs_of(rule, att, linear),
                variants=variants,
                sources=sources,
            )
            refused = schema_problem(model)
            if refused is not None:  # what `validate` would refuse in a models/*.yaml is refused here too
                problem = f"a value derived from {ck.name} is not accepted: {refused}"
                return Derivation(ck, arch, model_type, rule, problem, None, fmt, size, "", tuple(facts))
    except ValueError as exc:
        problem = f"a value read from {ck.name} is not accepted: {str(exc).splitlines()[0]}"
        return Derivation(ck, arch, model_type, rule, problem, None, fmt, size, "", tuple(facts))
    return Derivation(ck, arch, model_type, rule, why_not, model, fmt, size, params_how, tuple(facts))


def _from_gguf(ck: Checkpoint, fmt: WeightFormat, size: Size) -> Derivation:
    """The model a GGUF header describes (gguf_model), whatever a config.json beside it says."""
    from .gguf_model import hf_class, model_from_gguf

    model, problem, facts = model_from_gguf(ck)
    arch = next((q.header.architecture for q in ck.gguf if q.header), None)
    _, rule = hf_class(arch or "")
    cls = model.architecture if model is not None else None
    how = "counted in the GGUF tensor infos"
    return Derivation(ck, cls, arch, rule, problem, model, fmt, size, how, tuple(facts))
