"""Turn a plan's engine-neutral settings into the engine's own flags, each with its reason.

Curated deployments carry their flags verbatim (as their source gives them); this module reads
their semantic knobs back through the engine's vocabulary so the gates can check them, and
derives flags for plans that have no curated recipe.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator
from typing import Literal

from ..catalog import diff_kv, harvest, knobs
from ..catalog.capability import Capability
from ..catalog.kv_spelling import refusal
from ..catalog.schema import Deployment, Engine, Model, Source, Variant
from ..catalog.schema.common import KvDtype
from ..catalog.schema.engine import Build, RequiredArg
from ..catalog.schema.model import ParserOverride
from ..catalog.schema.records import field_names
from .types import Candidate, Flag, GateResult, Layout, Settings

CONTAINER_MODELS = "/models"


def model_dir(variant: Variant) -> str:
    return variant.repo.rsplit("/", 1)[-1]


def local_image(build: Build) -> str:
    """A name for the image built from source; the reference grammar allows fewer characters than ids."""
    name = re.sub(r"[^a-z0-9]+", "-", build.id.lower()).strip("-") or "build"
    tag = re.sub(r"[^a-z0-9_.-]+", "-", (build.ref or build.version).lower()).lstrip(".-")[:128] or "latest"
    return f"recipegen/{name}:{tag}"


def container_model_path(variant: Variant) -> str:
    path = posixpath.join(CONTAINER_MODELS, model_dir(variant))
    return posixpath.join(path, variant.file) if variant.file else path


def kv_choices(engine: Engine, name: str) -> tuple[KvDtype, ...]:
    """The canonical KV dtypes an engine's spelling may stand for (the kernel picks among them)."""
    for dtype, spelled in engine.kv_dtype_names.items():
        if spelled == name:
            return (dtype,)
    return tuple(engine.kv_dtype_aliases.get(name, ()))


def _knob(knob: str, value: str | None) -> int | float | str | None:
    """A knob's meaning, or None when the value does not fit it (validate refuses such recipes)."""
    try:
        return knobs.parse(knob, value)
    except ValueError:
        return None


# the engines' names for drafting with the model's own MTP layers
MTP_NAMES = frozenset({"mtp", "nextn", "deepseek_mtp"})


def speculative_method(value: str | None) -> str | None:
    """The speculative method a flag's value names, lower case (MTP under one name): a JSON config's "method"
    (vLLM's --speculative-config) or the value itself (SGLang's --speculative-algorithm)."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        config = json.loads(text)
    except ValueError:
        config = text
    if isinstance(config, dict):
        method = config.get("method")
        if not isinstance(method, str):
            # vLLM infers the method from the draft model; "mtp" spelled anywhere in it is the model's own
            return "mtp" if "mtp" in text.lower() else ("draft_model" if "model" in config else None)
        config = method
    name = str(config).strip().lower()
    return "mtp" if name in MTP_NAMES or name.endswith("_mtp") else name or None


# the most draft tokens per step a command is read as stating (engines accept far fewer)
MAX_DRAFT_TOKENS = 1024


def speculative_tokens(value: str | None) -> int | None:
    """The draft tokens per step a value states: a JSON config's "num_speculative_tokens" (vLLM's
    --speculative-config) or the value itself (SGLang's --speculative-num-steps); None when it states none."""
    text = (value or "").strip()
    try:
        config = json.loads(text) if text.startswith("{") else text
    except ValueError:
        return None
    count = config.get("num_speculative_tokens") if isinstance(config, dict) else config
    if isinstance(count, str) and count.isascii() and count.isdigit() and len(count) < 8:
        count = int(count)
    return count if isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= MAX_DRAFT_TOKENS else None


def host_offloaded(engine: Engine, args: list[tuple[str, str | None]]) -> bool:
    """Whether the flags keep weights or experts in host RAM: a CPU expert kernel, --cpu-offload-gb above 0,
    --n-cpu-moe above 0, --cpu-moe, or a tensor override onto a CPU buffer (-ot 'exps=CPU')."""
    f = engine.flags
    if engine.memory.host_offload:
        return True
    for flag, value in args:
        text = (value or "").strip()
        if flag in (f.cpu_moe, f.cpu_expert_method) and flag is not None:
            return True
        if flag in (f.cpu_offload_gb, f.cpu_moe_layers) and flag is not None:
            try:
                if float(text) > 0:
                    return True
            except ValueError:
                continue
        if flag == f.override_tensor and flag is not None and re.search(r"=\s*cpu", text, re.IGNORECASE):
            return True
    return False


def settings_from_args(engine: Engine, args: list[tuple[str, str | None]], layout: Layout) -> Settings:
    """The semantic knobs of (flag, value) pairs spelled with the catalog's flags (a recipe's, or a command's)."""
    spelled = {
        getattr(engine.flags, name): name for name in field_names(type(engine.flags)) if getattr(engine.flags, name)
    }
    values: dict[str, str | None] = {}
    for flag, value in args:
        knob = spelled.get(flag)
        if knob is not None:
            values[knob] = value
    tp = _knob("tensor_parallel", values.get("tensor_parallel"))
    context = _knob("context_length", values.get("context_length"))
    concurrency = _knob("max_concurrency", values.get("max_concurrency"))
    fraction = _knob("memory_fraction", values.get("memory_fraction"))
    kv_name = values.get("kv_cache_dtype")
    kv_name_v = values.get("kv_cache_dtype_v")
    dcp = _knob("decode_context_parallel", values.get("decode_context_parallel"))
    pp = _knob("pipeline_parallel", values.get("pipeline_parallel"))
    dp = _knob("data_parallel", values.get("data_parallel"))
    method = speculative_method(values.get("speculative"))
    mtp = method == "mtp"
    drafts = speculative_tokens(values.get("speculative_tokens")) or speculative_tokens(values.get("speculative"))
    return Settings(
        tp=tp if isinstance(tp, int) else (layout.gpus if engine.parallelism == "tensor" else 1),
        ep="expert_parallel" in values,
        kv_fixed=kv_choices(engine, kv_name) if kv_name else (),
        kv_fixed_v=kv_choices(engine, kv_name_v) if kv_name_v else (),
        context=context if isinstance(context, int) else None,
        context_auto=context == knobs.AUTO,
        concurrency=concurrency if isinstance(concurrency, int) else None,
        fraction=fraction if isinstance(fraction, float) else None,
        tool_parser=values.get("tool_call_parser"),
        reasoning_parser=values.get("reasoning_parser"),
        mtp=mtp or any("speculative" in flag and "mtp" in (value or "").lower() for flag, value in args),
        speculative=method,
        dcp=dcp if isinstance(dcp, int) else 1,
        pp=pp if isinstance(pp, int) else 1,
        dp=dp if isinstance(dp, int) else 1,
        cuda_graphs="disable_cuda_graphs" not in values,
        speculative_tokens=drafts if method else None,
        host_offload=host_offloaded(engine, args),
    )


def settings_from_deployment(engine: Engine, dep: Deployment, layout: Layout) -> Settings:
    return settings_from_args(engine, [(a.flag, a.value) for a in dep.args], layout)


def parser_sources(model: Model, names: tuple[str | None, ...]) -> list[Source]:
    """The model's sources that name its parsers (the most of them first), not merely its first source."""
    score = {id(s): sum(1 for n in names if n and n in (s.note or "")) for s in model.sources}
    best = max(score.values(), default=0)
    if best:
        return [s for s in model.sources if score[id(s)] == best][:2]
    about = [s for s in model.sources if "parser" in (s.note or "")]
    return about[:2] or list(model.sources[:1])


def parsers_for(
    model: Model, engine: Engine, build: Build, cc: object
) -> tuple[str | None, str | None, list[str], list[Source]]:
    base = model.parsers.get(engine.id)
    tool = base.tool if base else None
    reasoning = base.reasoning if base else None
    notes: list[str] = []
    sources = parser_sources(model, (tool, reasoning))
    for override in _overrides(model, engine, build, cc):
        if override.tool:
            tool = override.tool
        if override.reasoning:
            reasoning = override.reasoning
        notes.append(override.reason)
        sources.extend(override.sources)
    return tool, reasoning, notes, sources


def _overrides(model: Model, engine: Engine, build: Build, cc: object) -> Iterator[ParserOverride]:
    """The model's parser overrides that apply to this engine build and GPU, in catalog order."""
    for override in model.parser_overrides:
        if override.engine != engine.id:
            continue
        if override.builds is not None and build.id not in override.builds:
            continue
        if override.capability is not None and cc not in override.capability:
            continue
        yield override


def _parser_names(model: Model, engine: Engine, build: Build, cc: object) -> tuple[str | None, str | None]:
    """parsers_for's tool and reasoning parsers without its notes and sources (the gates ask for these alone)."""
    base = model.parsers.get(engine.id)
    tool = base.tool if base else None
    reasoning = base.reasoning if base else None
    for override in _overrides(model, engine, build, cc):
        tool = override.tool or tool
        reasoning = override.reasoning or reasoning
    return tool, reasoning


PARSER_FIELDS: dict[Literal["tool", "reasoning"], str] = {"tool": "tool_parsers", "reasoning": "reasoning_parsers"}


def sourced_parsers(build: Build, kind: Literal["tool", "reasoning"]) -> list[str] | None:
    """The build's own (sourced) list of `kind` parsers; None when it has none or only inherits one.

    An official release's list is its harvested registry (read from the release's own code)."""
    harvested = harvest.parsers(build, kind)
    if harvested is not None:
        return list(harvested)
    names: list[str] | None = getattr(build, PARSER_FIELDS[kind])
    return None if names is None or kind in build.parsers_inherited else names


def builds_with_parser(engine: Engine, kind: Literal["tool", "reasoning"], name: str) -> list[Build]:
    """The engine's builds whose sourced list has the parser, oldest first."""
    having = (b for b in engine.builds if name in (sourced_parsers(b, kind) or ()))
    return sorted(having, key=lambda b: (b.released, b.id))


def unknown_parser(flag: str, name: str, build: Build, kind: Literal["tool", "reasoning"]) -> str:
    ancestor = build.parsers_inherited.get(kind)
    where = f"only {ancestor}'s list is sourced" if ancestor else "no sourced list of its parsers"
    inherited: list[str] | None = getattr(build, PARSER_FIELDS[kind])
    if ancestor and inherited is not None and name not in inherited:
        where += f", and it lacks {name}"
    return f"{flag} {name}: not known to exist in {build.id} ({where}); check it before relying on it"


def _wanted_parsers(
    model: Model, engine: Engine, build: Build, cc: object
) -> list[tuple[Literal["tool", "reasoning"], str, str]]:
    tool, reasoning = _parser_names(model, engine, build, cc)
    kinds: tuple[tuple[Literal["tool", "reasoning"], str | None, str | None], ...] = (
        ("tool", engine.flags.tool_call_parser, tool),
        ("reasoning", engine.flags.reasoning_parser, reasoning),
    )
    return [(kind, flag, wanted) for kind, flag, wanted in kinds if wanted is not None and flag is not None]


PARSED = {"tool": "no tool-call parser", "reasoning": "no reasoning parser"}
LOSS = {"tool": "tool calls come back as plain text", "reasoning": "the thinking stays in the answer's content"}


def missing_parsers(model: Model, engine: Engine, build: Build, cc: object) -> list[Literal["tool", "reasoning"]]:
    """The kinds of parser the model wants that the build's own sourced list lacks: a derived plan leaves their
    flags out (the server would refuse an unknown parser at start) and says what the model loses."""
    return [
        kind
        for kind, _, wanted in _wanted_parsers(model, engine, build, cc)
        if (names := sourced_parsers(build, kind)) is not None and wanted not in names
    ]


def parser_gaps(model: Model, engine: Engine, build: Build, cc: object) -> tuple[list[str], list[str]]:
    """The parsers the model wants that the build's sourced list lacks (what a plan there loses), and those it
    cannot vouch for.

    A list the build's own file states (from its flag vocabulary or a sourced release) decides; one inherited
    from another build, or none at all, leaves the parser unknown for this build.
    """
    missing: list[str] = []
    unknown: list[str] = []
    for kind, flag, wanted in _wanted_parsers(model, engine, build, cc):
        names = sourced_parsers(build, kind)
        if names is None:
            unknown.append(unknown_parser(flag, wanted, build, kind))
            continue
        if wanted in names:
            continue
        having = builds_with_parser(engine, kind, wanted)
        later = f"; first sourced build with it: {having[0].id} ({having[0].released})" if having else ""
        lacks = f"{build.id} has no {flag} {wanted} ({model.name}'s format)"
        missing.append(f"{PARSED[kind]}: {lacks}, so {LOSS[kind]}{later}")
    return missing, unknown


def parser_facts(model: Model, engine: Engine, build: Build, cc: object) -> list[str]:
    """What the build's lists say of each parser a derived plan sets: in its sourced list, missing, or unknown."""
    missing, unknown = parser_gaps(model, engine, build, cc)
    present = [
        f"{build.id} has {flag} {wanted} (its sourced list)"
        for kind, flag, wanted in _wanted_parsers(model, engine, build, cc)
        if wanted in (sourced_parsers(build, kind) or ())
    ]
    return [*present, *missing, *unknown]


def common_flags(engine: Engine, model: Model, variant: Variant, skip: set[str]) -> list[Flag]:
    flags = engine.flags
    out: list[Flag] = []
    path = container_model_path(variant)
    why_path = (
        "the local checkpoint folder, mounted read-only"
        if variant.repo.startswith("local/")
        else "weights downloaded beforehand to a local directory and mounted read-only "
        "(an engine pointed at a repo id may resolve files it cannot find, the LibertAIDAI/GLM-5.3-Flash-NVFP4 card)"
    )
    if flags.model is None:
        out.append(
            Flag(
                "",
                path,
                why_path,
                (
                    Source(
                        url="https://huggingface.co/LibertAIDAI/GLM-5.3-Flash-NVFP4",
                        note="point the engine at a local directory",
                    ),
                ),
            )
        )
    elif flags.model not in skip:
        out.append(
            Flag(
                flags.model,
                path,
                why_path,
                (
                    Source(
                        url="https://huggingface.co/LibertAIDAI/GLM-5.3-Flash-NVFP4",
                        note="point the engine at a local directory",
                    ),
                ),
            )
        )
    if variant.mmproj and flags.vision_projector is not None and flags.vision_projector not in skip:
        out.append(
            Flag(
                flags.vision_projector,
                posixpath.join(CONTAINER_MODELS, model_dir(variant), variant.mmproj),
                "the model's vision projector, downloaded with the weights: without it llama-server answers text "
                "only and refuses images",
                tuple(variant.sources),
            )
        )
    if flags.served_model_name not in skip:
        local = variant.repo.startswith("local/")  # a checkpoint folder: served under the folder's name
        served = re.sub(r"[^a-z0-9.]+", "-", variant.repo[len("local/") :].casefold()).strip("-.") if local else ""
        out.append(
            Flag(
                flags.served_model_name,
                served or model.id,
                "the name clients send in the `model` field" + (" (the checkpoint folder's name)" if served else ""),
            )
        )
    if flags.host not in skip:
        out.append(Flag(flags.host, "0.0.0.0", "listen on all interfaces inside the container"))
    if flags.port not in skip:
        out.append(Flag(flags.port, str(engine.default_port), "the engine's default port, published by docker"))
    return out


def run_config_flags(engine: Engine, settings: Settings) -> list[Flag]:
    """The flags of the run configuration the request asked for (--dcp, --eager, --speculative)."""
    f, out = engine.flags, []
    if f.decode_context_parallel and settings.dcp > 1:
        out.append(Flag(f.decode_context_parallel, str(settings.dcp), "decode context parallel size, as requested"))
    if f.disable_cuda_graphs and not settings.cuda_graphs:
        out.append(Flag(f.disable_cuda_graphs, None, "run eagerly, without CUDA graphs, as requested"))
    if f.speculative and settings.speculative:
        method, drafts = settings.speculative, settings.speculative_tokens or 1
        count = "one draft token" if drafts == 1 else f"{drafts} draft tokens"
        tune = "; the draft model is yours to choose" if method != "mtp" else ""
        if f.speculative.endswith("-config"):  # a JSON config (vLLM) states the draft tokens too
            value = json.dumps({"method": method, "num_speculative_tokens": drafts}, separators=(",", ":"))
            why = f"speculative decoding as requested ({count} per step{tune})"
        else:  # the step count goes with the engine's tree options (top-k, draft tokens), which are yours to tune
            value = "NEXTN" if method == "mtp" else method.upper()
            why = f"speculative decoding as requested (the engine's default steps and draft tokens{tune})"
            if settings.speculative_tokens is not None:
                why = f"speculative decoding as requested ({count} per step: set them with its step options{tune})"
        out.append(Flag(f.speculative, value, why))
    return out


def derived_flags(
    engine: Engine,
    model: Model,
    settings: Settings,
    layout: Layout,
    kernel: GateResult,
    parser_sources: list[Source],
    build: Build | None = None,
) -> list[Flag]:
    f = engine.flags
    out: list[Flag] = []
    model_src = tuple(model.sources[:2])
    kernel_src = tuple(kernel.sources[:2])
    memory_src = tuple(engine.memory.sources[:1])
    kernel_note = kernel.reason
    if f.tensor_parallel and settings.tp > 1:
        out.append(
            Flag(
                f.tensor_parallel,
                str(settings.tp),
                f"shard every layer over the {settings.tp} GPUs of the plan",
                model_src,
            )
        )
    if f.expert_parallel and settings.ep:
        assert model.moe is not None
        out.append(
            Flag(
                f.expert_parallel,
                None,
                f"{model.moe.experts} routed experts: place whole experts on ranks instead of slicing each one",
                model_src,
            )
        )
    if f.gpu_layers:
        out.append(Flag(f.gpu_layers, "999", "offload every layer to the GPUs (no CPU layers)"))
    if f.tensor_split and layout.gpus_per_node > 1:
        out.append(
            Flag(
                f.tensor_split,
                ",".join(["1"] * layout.gpus_per_node),
                f"spread the layers evenly over {layout.gpus_per_node} GPUs",
            )
        )
    if f.trust_remote_code and model.trust_remote_code:
        out.append(
            Flag(f.trust_remote_code, None, f"{model.architecture} ships custom code with the checkpoint", model_src)
        )
    if f.kv_cache_dtype and settings.kv_dtype is not None and settings.kv_dtype in engine.kv_dtype_names:
        spelled, why = (
            engine.kv_dtype_names[settings.kv_dtype],
            "KV cache dtype accepted by the selected attention kernel",
        )
        source = kernel_src
        cap = kernel.details.capability
        refused = (
            refusal(
                engine,
                build,
                spelled,
                settings.kv_dtype,
                model,
                int(cap[2:]) if cap and cap[2:].isdigit() else None,
                settings.attention_backend,
            )
            if build is not None
            else None
        )
        if refused is not None and refused.fix is not None:  # the same rule lint holds a command to (kv_spelling.py)
            spelled, why = refused.fix, f"a {settings.kv_dtype} KV cache: {refused.why}, and {refused.fix} takes it"
            source = (*refused.sources, *kernel_src)
        out.append(Flag(f.kv_cache_dtype, spelled, f"{why} ({kernel_note})", source))
        if f.kv_cache_dtype_v:
            out.append(
                Flag(
                    f.kv_cache_dtype_v,
                    engine.kv_dtype_names[settings.kv_dtype],
                    "the V cache in the same dtype as K (the memory plan sizes both at it)",
                    kernel_src,
                )
            )
    out.extend(run_config_flags(engine, settings))
    if settings.context is not None:
        out.append(
            Flag(
                f.context_length,
                str(settings.context),
                "context length from the memory plan (see the budget)",
                memory_src,
            )
        )
    if settings.concurrency is not None:
        out.append(
            Flag(
                f.max_concurrency,
                str(settings.concurrency),
                "concurrent requests from the memory plan (see the budget)",
                memory_src,
            )
        )
    if f.memory_fraction and settings.fraction is not None:
        out.append(
            Flag(
                f.memory_fraction, f"{settings.fraction:g}", "memory fraction the budget was computed with", memory_src
            )
        )
    if f.tool_call_parser and settings.tool_parser:
        if f.enable_auto_tool_choice:
            out.append(
                Flag(f.enable_auto_tool_choice, None, "let the model decide when to call tools (needs a tool parser)")
            )
        out.append(
            Flag(
                f.tool_call_parser,
                settings.tool_parser,
                f"parses {model.name}'s tool-call format; a wrong parser returns tool_calls: null silently",
                tuple(parser_sources),
            )
        )
    if f.reasoning_parser and settings.reasoning_parser:
        out.append(
            Flag(
                f.reasoning_parser,
                settings.reasoning_parser,
                "moves the thinking into reasoning_content; without it a </think> leaks into content",
                tuple(parser_sources),
            )
        )
    return out


def required_flags(cand: Candidate, model: Model, cc: Capability, present: set[str]) -> list[Flag]:
    """Arguments the catalog declares as required for this path: by the chosen kernels, the weight
    format, and the model's own rules for this engine build, GPU, KV dtype and format."""
    build, engine, quant = cand.build, cand.engine, cand.variant.quant
    chosen = {name for _, name in cand.gate("kernel").details.kernels}
    rules: list[RequiredArg] = [a for k in build.kernels if k.name in chosen for a in k.requires_args]
    rules += [a for w in build.weight_formats if w.quant == quant for a in w.requires_args]
    kv = cand.settings.kv_dtype or (cand.settings.kv_fixed[0] if cand.settings.kv_fixed else None)
    rules += [
        r
        for r in model.required_args
        if r.engine == engine.id
        and (r.builds is None or build.id in r.builds)
        and (r.kv_dtypes is None or kv in r.kv_dtypes)
        and (r.quants is None or quant in r.quants)
    ]
    out: list[Flag] = []
    for rule in rules:
        if (rule.capability is not None and cc not in rule.capability) or rule.flag in present:
            continue
        present.add(rule.flag)
        out.append(Flag(rule.flag, rule.value, rule.reason, tuple(rule.sources)))
    out.extend(_diff_kv_flags(cand, model, cc, present))
    return out


def _diff_kv_flags(cand: Candidate, model: Model, cc: Capability, present: set[str]) -> list[Flag]:
    """The flags that select the backend serving a V narrower than K, where the release's default there does not
    (data/diff_kv.yaml: SGLang's server-wide backend)."""
    if not any(n.op == "attention.gqa" and n.head_size_v is not None for n in model.needs):
        return []
    rule = diff_kv.rule(cand.engine.id, cand.build)
    served = diff_kv.served(rule, cand.build, cc) if rule is not None and rule.mode == "server" else None
    chosen = {name for op, name in cand.gate("kernel").details.kernels if op == "attention.gqa"}
    if rule is None or served is None or served.backend not in chosen:
        return []
    out: list[Flag] = []
    for flag, value in served.args:
        if flag in present:
            continue
        present.add(flag)
        why = f"{served.backend} serves {model.name}'s V narrower than K here: {served.note}"
        out.append(Flag(flag, value, why, rule.sources))
    return out


def fallback_flags(cand: Candidate) -> list[Flag]:
    """The arguments that select a weight-format fallback, as flag/value pairs with its reason."""
    args, out = list(cand.fallback_args), []
    gate = cand.gate("weight-format")
    while args:
        flag = args.pop(0)
        value = args.pop(0) if args and not args[0].startswith("-") else None
        out.append(Flag(flag, value, gate.reason, gate.sources))
    return out


def argv_of(engine: Engine, flags: list[Flag]) -> list[str]:
    argv = list(engine.command)
    for flag in flags:
        if flag.flag:
            argv.append(flag.flag)
        if flag.value is not None:
            argv.append(flag.value)
    return argv
