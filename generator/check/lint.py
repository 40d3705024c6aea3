"""`recipegen lint`: check a command someone already has against the engine's own flag vocabulary and
recipegen's gates, run on the command's own choices (its backend, KV dtype, TP, context …).

Each finding has a severity — error (will not start), silent (starts but answers wrong), warn (slow or
fragile), info — the flag, what happens and why, the fix as the exact flag, and its sources.

This module reads the command's choices (build, model, layout, settings), runs the rules and collects
their findings: the rules over the engine's own flags are in flag_rules.py, the ones that follow from a
gate in findings.py, and the text and JSON of a result in lint_output.py.
"""

from __future__ import annotations

from dataclasses import replace

from ..bounds import MAX_GPUS, MAX_NODES
from ..catalog.index import Catalog
from ..catalog.names import ModelChoice
from ..catalog.schema import Engine, Hardware, Model, Variant
from ..catalog.schema.engine import Build
from ..catalog.schema.records import field_names
from ..catalog.vocabulary import ParsedArgs, Vocabulary, parse_args, vocabulary
from ..errors import RecipegenError
from ..frozen import frozen
from ..plan.types import Layout, Plan, Request, Settings
from . import release_flags
from .findings import Finding, Severity, gate_findings, offload_set_up
from .flag_rules import (
    build_parser_findings,
    image_findings,
    kv_cache_findings,
    model_file_findings,
    parser_findings,
    path_findings,
    vocabulary_findings,
)
from .invocation import Invocation

SEVERITIES: tuple[Severity, ...] = ("error", "silent", "warn", "info")

# How each engine lets a user pin the attention kernel: a flag and/or an environment variable.
ATTENTION_PIN: dict[str, tuple[str | None, str | None]] = {
    "vllm": ("--attention-backend", "VLLM_ATTENTION_BACKEND"),
    "sglang": ("--attention-backend", None),
}
# SGLang's DSA backends name a family; the kernels are chosen by these flags.
SGLANG_DSA_FAMILY = ("dsa", "nsa")
SGLANG_DSA_KERNEL_FLAG = "--dsa-decode-backend"
SGLANG_DSA_PREFILL_FLAG = "--dsa-prefill-backend"


@frozen
class LintResult:
    invocation: Invocation
    build: Build
    build_note: str
    model: Model | None
    variant: Variant | None
    model_arg: str | None
    hardware: Hardware | None
    layout: Layout
    settings: Settings | None
    findings: tuple[Finding, ...]
    plan: Plan | None
    plan_command: str | None

    @property
    def failing(self) -> bool:
        return any(f.severity in ("error", "silent") for f in self.findings)


def _default_build(engine: Engine) -> Build:
    official = [b for b in engine.builds if b.provenance == "official" and b.cli_reference]
    pool = official or [b for b in engine.builds if b.cli_reference] or list(engine.builds)
    return max(pool, key=lambda b: b.released)


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isascii() and text.isdigit() and len(text) <= 18 else None


def _count(flag: str | None, text: str | None, high: int) -> int:
    """A parallel size the command states (TP, PP, DP, nodes), held to the range of --gpus/--nodes: a size no
    fleet has is refused here, before any search runs over it. Unstated (or not a number) is 1."""
    if flag is None or text is None or not (text.isascii() and text.isdigit()):
        return 1
    value = _int(text)
    if value is None or not 1 <= value <= high:
        shown = f"a {len(text)}-digit number" if value is None else str(value)
        raise RecipegenError(
            f"{flag} {shown} in the command is out of range; use 1 to {high:,}",
            "fix the command, or give --gpus and --nodes",
        )
    return value


def command_settings(
    engine: Engine, parsed: ParsedArgs, vocab: Vocabulary, env: dict[str, str], gpus: int
) -> tuple[Settings, str | None, str | None]:
    """The command's own choices as engine-neutral settings; also the pin's flag and value, if any."""
    from ..plan.flags import settings_from_args, speculative_method, speculative_tokens

    pairs: list[tuple[str, str | None]] = []
    for name in field_names(type(engine.flags)):
        flag = getattr(engine.flags, name)
        if isinstance(flag, str) and flag.startswith("-") and parsed.given(vocab, flag):
            pairs.append((flag, parsed.get(vocab, flag)))
    base = settings_from_args(engine, pairs, Layout(gpus, 1))
    spec = parsed.get(vocab, "--speculative-config") or ""
    method = parsed.values.get("--speculative-config.method") or ""
    speculative = base.speculative or speculative_method(method) or speculative_method(spec)
    mtp = base.mtp or "mtp" in spec.lower() or method.lower() in ("mtp", "nextn") or speculative == "mtp"
    drafts = (
        base.speculative_tokens
        or speculative_tokens(parsed.values.get("--speculative-config.num_speculative_tokens"))
        or speculative_tokens(spec)
    )
    pin_flag, pin_env = ATTENTION_PIN.get(engine.id, (None, None))
    pinned, pinned_by = None, None
    if pin_flag and parsed.get(vocab, pin_flag):
        pinned, pinned_by = parsed.get(vocab, pin_flag), pin_flag
        if engine.id == "sglang" and pinned in SGLANG_DSA_FAMILY:
            pinned = parsed.get(vocab, SGLANG_DSA_KERNEL_FLAG)
            pinned_by = SGLANG_DSA_KERNEL_FLAG if pinned else None
            if pinned and parsed.given(vocab, SGLANG_DSA_PREFILL_FLAG):
                pinned_by = f"{SGLANG_DSA_PREFILL_FLAG}/{SGLANG_DSA_KERNEL_FLAG}"
    elif pin_env and env.get(pin_env):
        pinned, pinned_by = env[pin_env], pin_env
    drafts = drafts if speculative else None
    settings = replace(base, mtp=mtp, speculative=speculative, speculative_tokens=drafts, attention_backend=pinned)
    return settings, pinned_by, pinned


def _layers_on_cpu(engine: Engine, parsed: ParsedArgs, vocab: Vocabulary, layers: int) -> bool:
    """Whether the command keeps whole layers in host RAM: a GPU-layer count below the model's layers (llama-server
    -ngl N; 'all', 'auto' or a larger number put every layer on the GPUs)."""
    flag = engine.flags.gpu_layers
    value = (parsed.get(vocab, flag) or "").strip() if flag and parsed.given(vocab, flag) else ""
    return value.isascii() and value.isdigit() and len(value) < 10 and int(value) < layers


def _mounted_checkpoint(catalog: Catalog, host: str) -> ModelChoice | None:
    """The model a bind-mounted checkpoint folder (or a GGUF file in one) holds, from its own files;
    None when the path is not here or its files do not say (lint then matches the path by name)."""
    from pathlib import Path

    from ..checkpoint.anymodel import from_files

    path = Path(host)
    folder = path.parent if path.is_file() else path
    if not folder.is_dir():
        return None
    try:
        choice = from_files(catalog, str(folder))
    except RecipegenError:
        return None
    if path.is_file():
        named = next((v for v in choice.model.variants if v.file and folder / v.file == path), None)
        return replace(choice, variant=named.id) if named is not None else None
    return choice


def lint(
    catalog: Catalog,
    invocation: Invocation,
    gpu: str | None = None,
    gpus: int | None = None,
    nodes: int | None = None,
    gpu_memory: float | None = None,
) -> LintResult:
    from ..catalog.names import find_model, resolve_gpu

    engine = invocation.engine
    build = invocation.build or _default_build(engine)
    if invocation.build is not None:
        build_note = f"{build.id} ({invocation.build_how})"
    elif invocation.image:
        build_note = f"{build.id}: the image {invocation.image} is not a build in the catalog, so its newest is used"
    else:
        build_note = f"{build.id}: the command names no image, so the catalog's newest {engine.name} build is used"
    reference = build.cli_reference or _default_build(engine).cli_reference or ""
    vocab = vocabulary(reference)
    parsed = parse_args(vocab, invocation.args)
    findings = release_flags.adjust(engine, build, parsed, vocab, vocabulary_findings(engine, parsed, vocab))

    model_flag = engine.flags.model
    model_arg = parsed.get(vocab, model_flag) if model_flag else (parsed.positionals[0] if parsed.positionals else None)
    if model_arg is None and engine.id == "vllm":
        model_arg = parsed.get(vocab, "--model")
    # the catalog's facts first; a path it does not know is read through its bind mount, from the host folder
    choice = find_model(catalog, model_arg) if model_arg else None
    host = invocation.host_path(model_arg) if model_arg and choice is None else None
    choice = choice or (_mounted_checkpoint(catalog, host) if host else None)
    if choice is not None and host is not None:
        findings.append(
            Finding(
                "info",
                "model-folder",
                model_flag or "MODEL",
                model_arg,
                f"the container reads the bind-mounted checkpoint {host}",
                f"its files were read: {choice.how}",
                None,
            )
        )
    model = choice.model if choice else None
    variant = None
    if model is not None:
        variant = next((v for v in model.variants if choice and v.id == choice.variant), None)
        if variant is None:
            variant = next((v for v in model.variants if v.publisher == "official"), model.variants[0])
            findings.append(
                Finding(
                    "info",
                    "variant",
                    model_flag or "MODEL",
                    model_arg,
                    f"the path does not say which {model.name} checkpoint it holds",
                    f"checked as {variant.id} ({variant.repo})",
                    None,
                )
            )
    elif model_arg is not None:
        findings.append(
            Finding(
                "info",
                "model",
                model_flag or "MODEL",
                model_arg,
                "recipegen does not know this model, so no gate could run",
                "only the flag vocabulary was checked",
                "add the model to a recipe folder (recipegen validate DIR)",
            )
        )

    fleet = MAX_GPUS * MAX_NODES  # TP x PP x DP spans the nodes
    tp_flag = engine.flags.tensor_parallel
    tp = _count(tp_flag, parsed.get(vocab, tp_flag) if tp_flag else None, fleet)
    pp = _count("--pipeline-parallel-size", parsed.get(vocab, "--pipeline-parallel-size"), fleet)
    dp = _count("--data-parallel-size", parsed.get(vocab, "--data-parallel-size"), fleet)
    nodes_flag = engine.flags.nnodes
    node_count = nodes or _count(nodes_flag, parsed.get(vocab, nodes_flag) if nodes_flag else None, MAX_NODES)
    per_node = gpus or max(1, (tp * pp * dp) // node_count)
    if per_node > MAX_GPUS:
        raise RecipegenError(
            f"the command's TP x PP x DP ({tp * pp * dp:,}) over {node_count} node(s) is {per_node:,} GPUs per node; "
            f"at most {MAX_GPUS:,} are planned",
            "fix the command, or give --gpus and --nodes",
        )
    if engine.parallelism == "layers" and gpus is None:
        split = parsed.get(vocab, engine.flags.tensor_split)
        per_node = len(split.split(",")) if split else 1
    layout = Layout(per_node, node_count)
    settings, pinned_by, pinned = command_settings(engine, parsed, vocab, invocation.env, layout.gpus)
    if model is not None and not settings.host_offload and _layers_on_cpu(engine, parsed, vocab, model.layers):
        settings = replace(settings, host_offload=True)

    findings.extend(image_findings(catalog, invocation, engine, build))
    if model is not None and model_arg is not None:
        findings.extend(path_findings(model, engine, model_flag, model_arg))
    if model_arg is not None:
        mounted = invocation.host_path(model_arg)
        findings.extend(model_file_findings(engine, vocab, reference, model_flag, model_arg, mounted))
    hardware = resolve_gpu(catalog, gpu, gpu_memory).hardware if gpu else None
    in_build, accepted = build_parser_findings(engine, build, parsed, vocab)
    # the newest flag vocabulary refuses a name this older build registers (vLLM 0.10.0's glm4_moe): not an error
    findings = [f for f in findings if not (f.code == "bad-choice" and f.flag in accepted)]
    parsed = replace(
        parsed, issues=tuple(i for i in parsed.issues if not (i.kind == "bad-choice" and i.flag in accepted))
    )
    findings.extend(in_build)
    findings.extend(kv_cache_findings(engine, build, parsed, vocab, model, hardware, settings.attention_backend))
    if model is not None:
        for parser in parser_findings(model, engine, build, hardware, settings, parsed, vocab):
            refused = next((f for f in findings if f.code == "bad-choice" and f.flag == parser.flag), None)
            if refused is None:
                findings.append(parser)
            else:  # the engine refuses the value outright; the catalog knows the one the model needs
                findings[findings.index(refused)] = replace(
                    refused,
                    why=f"{refused.why}; {parser.why}",
                    fix=parser.fix,
                    sources=refused.sources + parser.sources,
                )
    plan, plan_command = None, None
    if model is not None and variant is not None and hardware is not None:
        request = Request(
            model=model,
            hardware=hardware,
            gpus_per_node=layout.gpus_per_node,
            nodes=layout.nodes,
            context=settings.context,
            concurrency=settings.concurrency,
            offload=offload_set_up(engine, parsed, vocab),
        )
        said = {f"{build.id} has no {f.flag} {f.value}" for f in in_build if f.code == "parser-missing"}
        findings.extend(
            f
            for f in gate_findings(
                request, engine, build, variant, layout, settings, pinned_by, pinned, parsed, vocab, invocation.env
            )
            if not (f.gate == "architecture" and _only_parsers(f.why, said))
        )
        plan, plan_command = _plan_instead(catalog, model, hardware, layout, choice.folder if choice else None)
    elif hardware is None and model is not None:
        findings.append(
            Finding(
                "info",
                "no-gpu",
                None,
                None,
                "kernels, memory and topology were not checked",
                "lint needs the GPU to run the gates",
                "add --gpu (e.g. --gpu h200, --gpu sm80)",
            )
        )
    order = {s: i for i, s in enumerate(SEVERITIES)}
    findings.sort(key=lambda f: order[f.severity])
    return LintResult(
        invocation,
        build,
        build_note,
        model,
        variant,
        model_arg,
        hardware,
        layout,
        settings,
        tuple(findings),
        plan,
        plan_command,
    )


def _only_parsers(reason: str, said: set[str]) -> bool:
    """The architecture gate failed only for parsers the command's own parser findings already name."""
    parts = [p for p in reason.split("; ") if not p.startswith("first sourced build with it")]
    return bool(said) and all(p.split(" (", 1)[0] in said for p in parts)


def _plan_instead(
    catalog: Catalog, model: Model, hardware: Hardware, layout: Layout, folder: str | None = None
) -> tuple[Plan | None, str | None]:
    """recipegen's own plan on the same GPUs (or, when nothing runs there, on the size it would pick);
    a bind-mounted checkpoint `folder` is named by its path, so the command writes a plan that mounts it."""
    import shlex

    from ..plan.resolve import resolve

    resolution = resolve(
        catalog,
        Request(
            model=model,
            hardware=hardware,
            gpus_per_node=layout.gpus_per_node,
            nodes=layout.nodes,
            weights_folder=folder,
        ),
    )
    if not resolution.plans:
        resolution = resolve(catalog, Request(model=model, hardware=hardware, weights_folder=folder))
    if not resolution.plans:
        return None, None
    top = resolution.plans[0]
    lay = top.candidate.layout
    command = f"recipegen --gpu {hardware.id} --model {shlex.quote(folder or model.id)} --gpus {lay.gpus_per_node}"
    if lay.nodes > 1:
        command += f" --nodes {lay.nodes}"
    return top, command
