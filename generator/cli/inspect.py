"""`recipegen inspect MODEL`: what a Hub repo's (or local folder's) own files say, and where it maps."""

import json
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..catalog.schema.records import to_data
from ..errors import RecipegenError
from .options import Recipes, load_catalog

commands = typer.Typer()

if TYPE_CHECKING:
    from ..catalog.index import Catalog
    from ..checkpoint.derive import Derivation


class InspectFormat(str, Enum):
    text = "text"
    json = "json"
    yaml = "yaml"


def _gb(value: float | None) -> str:
    return f"{value / 1e9:.2f} GB" if value else "unknown"


def report(catalog: "Catalog", d: "Derivation") -> dict[str, Any]:
    from ..checkpoint.anymodel import family_of, no_rule_reason
    from ..checkpoint.configfields import text_config
    from ..checkpoint.layouts import nope_count, observed

    ck, model = d.checkpoint, d.model
    family, sure, why = family_of(catalog, d)
    from ..catalog.harvest import registers

    gguf = d.weight_format.quant == "gguf"  # GGUF files: only the engines that load GGUF count
    builds = [b.id for _, b in catalog.builds() if not gguf and d.architecture and registers(b, d.architecture)]
    if model is not None and model.gguf_arch:
        builds += [b.id for _, b in catalog.builds() if registers(b, model.gguf_arch)]
    out: dict[str, Any] = {
        "model": ck.name,
        "revision": ck.revision,
        "commit": ck.commit,
        "read": [{"url": r.url, "what": r.what} for r in ck.read],
        "architecture": d.architecture,
        "model_type": d.model_type,
        "rule": d.rule.attention if d.rule else None,
        "rule_from": ("generic" if d.rule.generic else "class") if d.rule else None,
        "loaded_by": builds,
        "problem": d.problem if d.rule or d.weight_format.quant == "gguf" else no_rule_reason(catalog, d),
        "observed": [{"what": k, "value": v} for k, v in observed(ck.config)],
        "weight_format": {"quant": d.weight_format.quant, "label": d.weight_format.label},
        "size_bytes": d.size.bytes,
        "size_from": d.size.how,
        "dtype_elements": dict(ck.dtype_elements),
        "gguf_files": [{"path": f.path, "size": f.size} for f in ck.gguf_files],
        "base_model": list(ck.base_model),
        "family": {"model": family.id if family else None, "confidence": sure, "why": why},
        "status": "catalog" if sure == "certain" else ("derived" if model is not None else "not derivable"),
        "notes": list(ck.notes),
    }
    if model is not None:
        att = model.attention
        nope = None
        if d.rule is not None and d.rule.nope_interval_default is not None and ck.config is not None:
            nope = nope_count(text_config(ck.config), model.layers, d.rule.nope_interval_default)
        out["derived"] = {
            "nope_layers": nope,
            "attention": to_data(att, exclude_none=True, exclude=frozenset({"sources"})),
            "linear_attention": (
                to_data(model.linear_attention, exclude_none=True, exclude=frozenset({"sources"}))
                if model.linear_attention
                else None
            ),
            "moe": to_data(model.moe) if model.moe else None,
            "layers": model.layers,
            "hidden_size": model.hidden_size,
            "max_context": model.max_context,
            "mtp_layers": model.mtp_layers,
            "params_total_b": model.params_total_b,
            "params_active_b": model.params_active_b,
            "params_from": d.params_how,
            "needs": [to_data(n, exclude_none=True) for n in model.needs],
        }
    return out


def _widths(k: int, v: int | None) -> str:
    """A head width, or K and V widths where V is narrower."""
    return f"{k}" if v in (None, k) else f"{k} (K) / {v} (V)"


def _attention_line(att: dict[str, Any]) -> str:
    if att.get("layers") == 0:
        return "none: every layer is a state-space mixer, so no KV cache"
    kind = att["kind"]
    layers = f" on {att['layers']} layers" if att.get("layers") else ""
    if kind == "gqa":
        label = "MHA" if att.get("num_kv_heads") == att["num_heads"] else "GQA"
        line = (
            f"{label}, {att['num_heads']} query heads / {att['num_kv_heads']} KV heads × "
            f"{_widths(att['head_dim'], att.get('v_head_dim'))}{layers}"
        )
        if att.get("sliding_window"):
            line += f"; sliding window {att['sliding_window']} on {att['sliding_window_layers']} layers"
        if att.get("window_head_dim"):
            line += (
                f" ({att['window_num_heads'] or att['num_heads']} query heads / "
                f"{att['window_num_kv_heads'] or att['num_kv_heads']} KV heads × "
                f"{_widths(att['window_head_dim'], att.get('window_v_head_dim'))})"
            )
        return line
    if kind == "dsv4":
        groups = ", ".join(f"{g['layers']} layers at {g['ratio']}:1" for g in att["compressed"])
        plain = att.get("sliding_window_layers")
        line = (
            f"DeepSeek-V4 compressed attention, {att['num_heads']} heads over {att['num_kv_heads']} KV head(s) × "
            f"{att['head_dim']}; {groups}"
            + (f", {plain} window-only layers" if plain else "")
            + f"; sliding window {att['sliding_window']}"
        )
        indexer = att["indexer"]
        return line + f"; indexer {indexer['heads']} heads × {indexer['head_dim']}, top-{indexer['topk']}"
    names = {"dsa": "DSA sparse ", "dsa_nope": "NoPE DSA sparse "}
    line = (
        f"{names.get(kind, '')}MLA{layers}, {att['num_heads']} heads, kv_lora_rank {att['kv_lora_rank']}, "
        f"qk_rope_head_dim {att['qk_rope_head_dim']}, qk_nope_head_dim {att.get('qk_nope_head_dim')}, "
        f"v_head_dim {att.get('v_head_dim')}"
    )
    indexer = att.get("indexer")
    if indexer:
        line += f"; indexer {indexer['heads']} heads × {indexer['head_dim']}, top-{indexer['topk']}" + (
            f", {indexer['layers']} indexer layers" if indexer.get("layers") else ""
        )
        if indexer.get("kpool", 1) > 1:
            line += f", keys pooled {indexer['kpool']}:1"
    return line


def _linear_line(la: dict[str, Any]) -> str:
    from ..checkpoint.layouts import LINEAR_NAMES

    name = LINEAR_NAMES.get(la["kind"], la["kind"])
    per_request = f"({la['state_bytes']} B per element); a fixed state per request, no KV cache"
    if la["kind"] == "short_conv":
        return f"{name} on {la['layers']} layers, {la['inner']} channels × conv {la['conv_kernel']} {per_request}"
    if la["kind"] == "mamba1":
        return (
            f"{name} on {la['layers']} layers, {la['inner']} channels × d_state {la['head_k_dim']}, "
            f"conv {la['conv_kernel']} {per_request}"
        )
    if la["kind"] == "mamba2":
        return (
            f"{name} on {la['layers']} layers, {la['num_heads']} heads × {la['head_v_dim']}×{la['head_k_dim']} "
            f"state, {la['groups']} group(s), {la['inner']} inner channels, conv {la['conv_kernel']} {per_request}"
        )
    heads = f"{la['num_heads']} heads"
    if la.get("num_k_heads"):
        heads = f"{la['num_heads']} value / {la['num_k_heads']} key heads"
    conv = f", short conv {la['conv_kernel']}" if la.get("conv_kernel") else ""
    return (
        f"{name} on {la['layers']} layers, {heads} × {la['head_k_dim']}×{la['head_v_dim']} state "
        f"({la['state_bytes']} B per element){conv}; a fixed state per request, no KV cache"
    )


def text(r: dict[str, Any]) -> str:
    lines = [f"{r['model']}" + (f" @ {r['commit']}" if r["commit"] else "") + f" — status {r['status']}"]
    lines.append(f"  read: {', '.join(item['what'] for item in r['read']) or 'nothing'}")
    for item in r["read"]:
        lines.append(f"    {item['url']}")
    lines.append(
        f"  architecture: {r['architecture'] or 'not stated'} (model_type {r['model_type'] or '?'}); "
        + (f"loaded by {', '.join(r['loaded_by'])}" if r["loaded_by"] else "no engine build in the catalog loads it")
    )
    derived = r.get("derived")
    if derived:
        generic = " (derived by the generic rule: no class rule)" if r.get("rule_from") == "generic" else ""
        lines.append(f"  attention: {_attention_line(derived['attention'])}{generic}")
        if derived["linear_attention"]:
            lines.append(f"  linear attention: {_linear_line(derived['linear_attention'])}")
        if derived["nope_layers"]:
            lines.append(f"  NoPE layers: {derived['nope_layers']} (global, without RoPE; the others are chunked)")
        moe = derived["moe"]
        if moe:
            lines.append(
                f"  MoE: {moe['experts']} experts, top-{moe['top_k']}, {moe['shared_experts']} shared, "
                f"expert width {moe['moe_intermediate']}{_latent(moe)}, {moe['dense_layers']} layers without experts"
            )
        lines.append(
            f"  layers {derived['layers']}, hidden {derived['hidden_size']}, context {derived['max_context']}, "
            f"MTP layers {derived['mtp_layers']}"
        )
        active = f" ({derived['params_active_b']:g}B active)" if derived["params_active_b"] else ""
        lines.append(f"  parameters: {derived['params_total_b']:g}B{active}, {derived['params_from']}")
        needs = ", ".join(
            n["op"] + (f"({n['head_size']}" + (f"/{n['head_size_v']}" if n.get("head_size_v") else "") + ")")
            if n.get("head_size")
            else n["op"]
            for n in derived["needs"]
        )
        lines.append(f"  kernels it needs: {needs}")
    else:
        lines.append(f"  not derivable: {r['problem']}")
        for item in r["observed"]:
            lines.append(f"    config.json {item['what']}: {item['value']}")
    extra = [o for o in r["observed"] if o["what"] in ("layer types", "linear-attention layers", "NoPE layers")]
    for item in extra if derived else []:
        lines.append(f"  {item['what']}: {item['value']}")
    if r["dtype_elements"]:
        counts = ", ".join(f"{k} {v / 1e9:.3f}B" for k, v in sorted(r["dtype_elements"].items()))
        lines.append(f"  stored elements per dtype (safetensors headers): {counts}")
    wf = r["weight_format"]
    lines.append(f"  weight format: {wf['quant'] or 'not plannable'} ({wf['label']})")
    lines.append(f"  size: {_gb(r['size_bytes'])} ({r['size_from']})")
    for f in r["gguf_files"][:12]:
        lines.append(f"    {f['path']}: {_gb(f['size'])}")
    if r["base_model"]:
        lines.append(f"  base_model (card): {', '.join(r['base_model'])}")
    fam = r["family"]
    lines.append(f"  catalog family: {fam['model'] or 'none'} — {fam['confidence']}: {fam['why']}")
    for note in r["notes"]:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def _sources_last(value: Any) -> Any:
    """The draft reads like the catalog's files: facts first, their sources after them."""
    if isinstance(value, dict):
        ordered = {k: _sources_last(v) for k, v in value.items() if k != "sources"}
        if "sources" in value:
            ordered["sources"] = _sources_last(value["sources"])
        return ordered
    if isinstance(value, list):
        return [_sources_last(v) for v in value]
    return value


def draft_yaml(d: "Derivation") -> str:
    import yaml

    if d.model is None:
        raise RecipegenError(f"no draft for {d.checkpoint.name}: {d.problem}", "see `recipegen inspect` for its facts")
    data = _sources_last(to_data(d.model, exclude_none=True, exclude_defaults=True))
    header = (
        f"# Draft written by `recipegen inspect {d.checkpoint.ref} --format yaml` from the checkpoint's files.\n"
        f"# Save as models/{d.model.id}.yaml in a --recipes folder; add parsers, pitfalls and more variants by hand.\n"
    )
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)


@commands.command("inspect")
def inspect(
    model: Annotated[str, typer.Argument(help="Hub repo id (ORG/NAME, ORG/NAME@REVISION) or a checkpoint folder")],
    fmt: Annotated[InspectFormat, typer.Option("--format", help="text, json, or yaml (a draft models/*.yaml)")] = (
        InspectFormat.text
    ),
    headers: Annotated[
        bool, typer.Option("--headers/--no-headers", help="read the safetensors headers (per-dtype counts)")
    ] = True,
    recipes: Recipes = [],  # noqa: B006 - typer reads the default, never mutates it
) -> None:
    """Read a checkpoint's config, quantization config, index and card (never its weights) and say what it is."""
    from ..checkpoint import hub
    from ..checkpoint.derive import derive

    catalog = load_catalog(recipes)
    derivation = derive(hub.read(model, headers=headers))
    if fmt is InspectFormat.yaml:
        typer.echo(draft_yaml(derivation), nl=False)
        return
    result = report(catalog, derivation)
    if fmt is InspectFormat.json:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        typer.echo(text(result))


def _latent(moe: dict[str, Any]) -> str:
    """A latent MoE's narrower width, where the routed experts work at one."""
    return f" on a {moe['expert_hidden']}-wide latent" if moe.get("expert_hidden") else ""
