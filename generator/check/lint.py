"""`recipegen lint`: check a command someone already has against the engine's own flag vocabulary and
recipegen's gates, run on the command's own choices (its backend, KV dtype, TP, context …).

Each finding has a severity — error (will not start), silent (starts but answers wrong), warn (slow or
fragile), info — the flag, what happens and why, the fix as the exact flag, and its sources.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Literal

from ..catalog.index import Catalog
from ..catalog.names import ModelChoice
from ..catalog.schema import Engine, Hardware, Model, Source, Variant
from ..catalog.schema.engine import Build
from ..catalog.schema.records import field_names
from ..catalog.vocabulary import ParsedArgs, Vocabulary, parse_args, vocabulary
from ..errors import RecipegenError
from ..frozen import frozen
from ..plan.types import Layout, Plan, Request, Settings
from .diagnose import printable
from .findings import Finding, Severity, gate_findings
from .invocation import Invocation

SCHEMA = "recipegen.check.lint/1"
SEVERITIES: tuple[Severity, ...] = ("error", "silent", "warn", "info")
MARK = {"error": "✗", "silent": "!", "warn": "~", "info": "i"}

# How each engine lets a user pin the attention kernel: a flag and/or an environment variable.
ATTENTION_PIN: dict[str, tuple[str | None, str | None]] = {
    "vllm": ("--attention-backend", "VLLM_ATTENTION_BACKEND"),
    "sglang": ("--attention-backend", None),
}
# SGLang's DSA backends name a family; the kernels are chosen by these flags.
SGLANG_DSA_FAMILY = ("dsa", "nsa")
SGLANG_DSA_KERNEL_FLAG = "--dsa-decode-backend"
SGLANG_DSA_PREFILL_FLAG = "--dsa-prefill-backend"
VLLM_QUANTIZATION_DOC = Source(
    url="https://docs.vllm.ai/en/latest/models/engine_args.html",
    note="--quantization: if None, vLLM first checks the quantization_config attribute in the model config file",
)
SEED_LOCAL_PATH = Source(url="seed:003 §1", note="point the engine at a local directory")


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


def _vocabulary_findings(engine: Engine, parsed: ParsedArgs, vocab: Vocabulary) -> list[Finding]:
    out: list[Finding] = []
    source = (Source(url=f"recipegen.data/engine-cli/{vocab.engine}-{vocab.version}.json"),)
    for issue in parsed.issues:
        if issue.kind == "abbreviation":
            out.append(
                Finding(
                    "warn",
                    "abbreviation",
                    issue.flag,
                    None,
                    f"{engine.name} accepts it today through argparse prefix matching",
                    f"{issue.message}; a new option with the same prefix makes it ambiguous and the command fails",
                    f"{issue.suggestion}",
                    source,
                )
            )
            continue
        if issue.kind == "bad-choice" and issue.flag == "--quantization" and engine.id == "vllm":
            out.append(
                Finding(
                    "error",
                    "bad-choice",
                    issue.flag,
                    issue.value,
                    f"{engine.name} exits at argument parsing: {issue.message}",
                    f"{issue.value!r} names a checkpoint format, not one of vLLM's quantization methods; a "
                    "pre-quantized checkpoint declares its method in config.json and vLLM reads it from there",
                    "drop --quantization",
                    (*source, VLLM_QUANTIZATION_DOC),
                )
            )
            continue
        fix = {
            "unknown": f"{issue.suggestion}" if issue.suggestion else "remove it",
            "ambiguous": "write the option in full",
            "bad-choice": f"one of: {issue.suggestion}" if issue.suggestion else "a value the engine lists in --help",
            "switch-value": f"{issue.flag} (without a value)",
            "missing-value": f"{issue.flag} VALUE",
            "positional": "remove it, or give it the flag it belongs to",
        }[issue.kind]
        code = {"unknown": "unknown-flag"}.get(issue.kind, issue.kind)
        out.append(
            Finding(
                "error",
                code,
                issue.flag,
                issue.value,
                f"{engine.name} exits at argument parsing",
                issue.message,
                fix,
                source,
            )
        )
    return out


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def _settings(
    engine: Engine, parsed: ParsedArgs, vocab: Vocabulary, env: dict[str, str], gpus: int
) -> tuple[Settings, str | None, str | None]:
    """The command's own choices as engine-neutral settings; also the pin's flag and value, if any."""
    from ..plan.flags import settings_from_args

    pairs: list[tuple[str, str | None]] = []
    for name in field_names(type(engine.flags)):
        flag = getattr(engine.flags, name)
        if isinstance(flag, str) and flag.startswith("-") and parsed.given(vocab, flag):
            pairs.append((flag, parsed.get(vocab, flag)))
    base = settings_from_args(engine, pairs, Layout(gpus, 1))
    spec = parsed.get(vocab, "--speculative-config") or ""
    method = parsed.values.get("--speculative-config.method") or ""
    mtp = base.mtp or "mtp" in spec.lower() or method.lower() in ("mtp", "nextn")
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
    return replace(base, mtp=mtp, attention_backend=pinned), pinned_by, pinned


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
    vocab = (
        vocabulary(build.cli_reference)
        if build.cli_reference
        else vocabulary(_default_build(engine).cli_reference or "")
    )
    parsed = parse_args(vocab, invocation.args)
    findings = _vocabulary_findings(engine, parsed, vocab)

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

    tp = _int(parsed.get(vocab, engine.flags.tensor_parallel)) or 1
    pp = _int(parsed.get(vocab, "--pipeline-parallel-size")) or 1
    dp = _int(parsed.get(vocab, "--data-parallel-size")) or 1
    node_count = nodes or _int(parsed.get(vocab, engine.flags.nnodes)) or 1
    per_node = gpus or max(1, (tp * pp * dp) // node_count)
    if engine.parallelism == "layers" and gpus is None:
        split = parsed.get(vocab, engine.flags.tensor_split)
        per_node = len(split.split(",")) if split else 1
    layout = Layout(per_node, node_count)
    settings, pinned_by, pinned = _settings(engine, parsed, vocab, invocation.env, layout.gpus)

    findings.extend(_image_findings(catalog, invocation, engine, build))
    if model is not None and model_arg is not None:
        findings.extend(_path_findings(model, engine, model_flag, model_arg))
    hardware = resolve_gpu(catalog, gpu, gpu_memory).hardware if gpu else None
    in_build, accepted = _build_parser_findings(engine, build, parsed, vocab)
    # the newest flag vocabulary refuses a name this older build registers (vLLM 0.10.0's glm4_moe): not an error
    findings = [f for f in findings if not (f.code == "bad-choice" and f.flag in accepted)]
    parsed = replace(
        parsed, issues=tuple(i for i in parsed.issues if not (i.kind == "bad-choice" and i.flag in accepted))
    )
    findings.extend(in_build)
    if model is not None:
        for parser in _parser_findings(model, engine, build, hardware, settings, parsed, vocab):
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
        )
        said = {f"{build.id} has no {f.flag} {f.value}" for f in in_build if f.code == "parser-missing"}
        findings.extend(
            f
            for f in gate_findings(request, engine, build, variant, layout, settings, pinned_by, pinned, parsed, vocab)
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


def _image_findings(catalog: Catalog, inv: Invocation, engine: Engine, build: Build) -> list[Finding]:
    if not inv.image:
        return []
    last = inv.image.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    if tag not in ("", "latest"):
        return []
    pinned = next(iter(build.images.values()), None) if build.images else None
    return [
        Finding(
            "warn",
            "latest-image",
            "image",
            inv.image,
            "the tag moves: the same command pulls another engine build tomorrow, with other kernels and flags",
            f"recipegen checked it against {build.id} ({build.released}), the newest {engine.name} build it knows; "
            "what :latest holds today is unknown",
            f"pin a release: {pinned}" if pinned else "pin a release tag",
            tuple(build.sources[:1]),
        )
    ]


def _path_findings(model: Model, engine: Engine, model_flag: str | None, model_arg: str) -> list[Finding]:
    if model_arg.startswith(("/", "./", "../", "~")) or "/" not in model_arg:
        return []
    local = [p for p in model.pitfalls if p.check == "local-path" and (p.engines is None or engine.id in p.engines)]
    flag = model_flag or "MODEL"
    if local:
        return [
            Finding(
                "error",
                "repo-id",
                flag,
                model_arg,
                f"{engine.name} is pointed at the Hub repo id; {model.name}'s model code opens files by local path",
                local[0].text,
                f"hf download {model_arg} --local-dir /models/{model_arg.rsplit('/', 1)[-1]}, then "
                f"{flag if model_flag else 'pass'} /models/{model_arg.rsplit('/', 1)[-1]}",
                tuple(local[0].sources) or (SEED_LOCAL_PATH,),
            )
        ]
    return [
        Finding(
            "info",
            "repo-id",
            flag,
            model_arg,
            "the engine downloads the weights at start-up, into the container unless a cache is mounted",
            "recipegen's launch.sh downloads first and mounts a local directory read-only",
            f"hf download {model_arg} --local-dir DIR, then pass DIR",
            (SEED_LOCAL_PATH,),
        )
    ]


def _build_parser_findings(
    engine: Engine, build: Build, parsed: ParsedArgs, vocab: Vocabulary
) -> tuple[list[Finding], set[str]]:
    """The command's --tool-call-parser / --reasoning-parser checked against the build's own parser lists: a name
    its sourced list lacks stops the server at start-up; a list the catalog has not sourced for the build is said.
    Also the parser flags whose value the build's sourced list has though the newest vocabulary refuses it."""
    from ..plan.flags import builds_with_parser, sourced_parsers, unknown_parser

    out: list[Finding] = []
    accepted: set[str] = set()
    refused = {i.flag for i in parsed.issues if i.kind in ("bad-choice", "unknown")}
    kinds: tuple[tuple[Literal["tool", "reasoning"], str | None], ...] = (
        ("tool", engine.flags.tool_call_parser),
        ("reasoning", engine.flags.reasoning_parser),
    )
    for kind, flag in kinds:
        given = parsed.get(vocab, flag) if flag else None
        names = sourced_parsers(build, kind) if flag is not None else None
        if flag is not None and given is not None and flag in refused and given in (names or ()):
            accepted.add(flag)
            continue
        if flag is None or given is None or flag in refused:  # the flag vocabulary already refuses the value
            continue
        having = builds_with_parser(engine, kind, given)
        if names is None:
            where = f"sourced builds that have it: {_build_list(having)}" if having else "no sourced build has it"
            out.append(
                Finding(
                    "info",
                    "parser-unknown",
                    flag,
                    given,
                    unknown_parser(flag, given, build, kind)
                    .split(": ", 1)[1]
                    .removesuffix("; check it before relying on it"),
                    f"the catalog has no sourced list of {build.id}'s {kind} parsers; {where}",
                    f"check that {build.id}'s {flag} accepts {given} (its --help lists the choices)",
                    tuple(s for s in build.sources if "parser" in (s.note or ""))[:2],
                )
            )
        elif given not in names:
            official = [b for b in having if b.provenance == "official"] or having
            fix = (
                f"a build that has it: {official[0].id} ({official[0].released})"
                + (f", image {next(iter(official[0].images.values()))}" if official[0].images else "")
                if official
                else f"one of {build.id}'s {flag} choices: {', '.join(names)}"
            )
            where = f"builds that have it: {_build_list(having)}" if having else "no build in the catalog has it"
            out.append(
                Finding(
                    "error",
                    "parser-missing",
                    flag,
                    given,
                    f"not in {build.id}: {engine.name} refuses it at start-up",
                    f"{build.id}'s sourced list of {kind} parsers lacks it; {where}",
                    fix,
                    tuple(s for s in build.sources if "parser" in (s.note or ""))[:2],
                )
            )
    return out, accepted


def _only_parsers(reason: str, said: set[str]) -> bool:
    """The architecture gate failed only for parsers the command's own parser findings already name."""
    parts = [p for p in reason.split("; ") if not p.startswith("first sourced build with it")]
    return bool(said) and all(p.split(" (", 1)[0] in said for p in parts)


def _build_list(builds: list[Build], shown: int = 4) -> str:
    names = [f"{b.id} ({b.released})" for b in builds[:shown]]
    more = len(builds) - shown
    return ", ".join(names) + (f" and {more} more (newest {builds[-1].id})" if more > 0 else "")


def _parser_findings(
    model: Model,
    engine: Engine,
    build: Build,
    hardware: Hardware | None,
    settings: Settings,
    parsed: ParsedArgs,
    vocab: Vocabulary,
) -> list[Finding]:
    from ..plan.flags import builds_with_parser, parsers_for, sourced_parsers

    cc = hardware.compute_capability if hardware else None
    tool, reasoning, reasons, sources = parsers_for(model, engine, build, cc)
    out: list[Finding] = []
    bad = {i.flag for i in parsed.issues if i.kind == "bad-choice"}
    checks: tuple[tuple[str, Literal["tool", "reasoning"], str | None, str | None, str | None, str], ...] = (
        ("tool-parser", "tool", engine.flags.tool_call_parser, settings.tool_parser, tool, "tool calls come back as "
         "tool_calls: null with the call left in content (or swallowed), and the request still succeeds"),
        ("reasoning-parser", "reasoning", engine.flags.reasoning_parser, settings.reasoning_parser, reasoning,
         "the thinking is not split into reasoning_content: </think> leaks into content, or the reply is dropped"),
    )  # fmt: skip
    where = f" on {hardware.compute_capability.sm}" if hardware else ""
    why_extra = f" ({'; '.join(reasons)})" if reasons else ""
    for code, kind, flag, given, wanted, effect in checks:
        if flag is None or wanted is None:
            continue
        if given is None:
            out.append(
                Finding(
                    "warn",
                    code,
                    flag,
                    None,
                    f"no {flag}: {effect}",
                    f"the catalog's {engine.name} parser for {model.name}{where} is {wanted}{why_extra}",
                    f"{flag} {wanted}",
                    tuple(sources),
                )
            )
        elif given != wanted:
            severity: Severity = "error" if flag in bad else "silent"
            what = f"{engine.name} exits at argument parsing" if flag in bad else effect
            fix, lacks = f"{flag} {wanted}", ""
            names = sourced_parsers(build, kind)
            if names is not None and wanted not in names:  # the model's parser is not in this build at all
                having = builds_with_parser(engine, kind, wanted)
                first = f"; first sourced build with it: {having[0].id} ({having[0].released})" if having else ""
                lacks = f"; {build.id} has no {wanted}{first}"
                fix = f"{flag} {wanted}, on a build that has it" + (f" ({having[0].id} or later)" if having else "")
            out.append(
                Finding(
                    severity,
                    code,
                    flag,
                    given,
                    what,
                    f"{model.name} needs {wanted} with {engine.name}{where}{why_extra}{lacks}",
                    fix,
                    tuple(sources),
                )
            )
    pitfalls = [
        p for p in model.pitfalls
        if p.check is None and (p.engines is None or engine.id in p.engines)
        and (p.capability is None or (cc is not None and cc in p.capability))
        and settings.tool_parser is not None and f"--tool-call-parser {settings.tool_parser} " in p.text + " "
    ]  # fmt: skip
    for p in pitfalls:
        for f in out:
            if f.code == "tool-parser" and f.severity == "silent":
                out[out.index(f)] = replace(f, why=f"{f.why}; {p.text}", sources=(*f.sources, *p.sources))
    return out


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


# ---------------------------------------------------------------------------------------------
# output


def format_lint(r: LintResult) -> str:
    inv = r.invocation
    subject = []
    if r.model is not None:
        subject.append(f"{r.model.name} · {r.variant.id if r.variant else '?'}")
    if r.hardware is not None:
        subject.append(f"{r.layout.gpus} × {r.hardware.name} ({r.hardware.compute_capability.sm})")
    out = [
        f"lint: {inv.engine.name} command from {inv.where or 'the command'} — build {r.build_note}",
        "  " + (" on ".join(subject) if subject else "model not recognised"),
    ]
    if not r.findings:
        out.append("✓ no findings: every flag is in the engine's vocabulary and every gate passes on these choices")
    for f in r.findings:
        flag = f"{f.flag}{' ' + f.value if f.value else ''}" if f.flag else f"[{f.gate or 'lint'}]"
        out.append(f"{MARK[f.severity]} {f.severity:<6} {flag}: {f.what}")
        out.append(f"    why: {f.why}")
        if f.fix:
            out.append(f"    fix: {f.fix}")
        if f.sources:
            out.append(f"    source: {', '.join(s.url for s in f.sources[:2])}")
    if r.plan is not None and r.failing:
        top = r.plan
        out.append(
            f"plan recipegen would generate: {top.engine.name} {top.build.id} · {top.variant.id} "
            f"({top.candidate.status}) on {top.candidate.layout.gpus} GPU(s)"
        )
        out.append("  " + " ".join(top.argv))
        out.append(f"  write it: {r.plan_command}")
    counts = {s: sum(1 for f in r.findings if f.severity == s) for s in SEVERITIES}
    out.append(", ".join(f"{n} {s}" for s, n in counts.items()) + (" — exit 1" if r.failing else ""))
    return printable("\n".join(out)) + "\n"


def lint_json(r: LintResult) -> dict[str, Any]:
    from ..artifacts.contract import plan_json, settings_json

    return {
        "schema": SCHEMA,
        "engine": r.invocation.engine.id,
        "build": r.build.id,
        "build_note": r.build_note,
        "image": r.invocation.image,
        "where": r.invocation.where,
        "model": r.model.id if r.model else None,
        "model_arg": r.model_arg,
        "variant": r.variant.id if r.variant else None,
        "hardware": r.hardware.id if r.hardware else None,
        "gpus_per_node": r.layout.gpus_per_node,
        "nodes": r.layout.nodes,
        "args": list(r.invocation.args),
        "env": dict(r.invocation.env),
        "settings": settings_json(r.settings) if r.settings else None,
        "findings": [
            {
                "severity": f.severity,
                "code": f.code,
                "flag": f.flag,
                "value": f.value,
                "what": f.what,
                "why": f.why,
                "fix": f.fix,
                "gate": f.gate,
                "sources": [s.url for s in f.sources],
            }
            for f in r.findings
        ],
        "failing": r.failing,
        "plan": plan_json(r.plan) if r.plan else None,
        "plan_command": r.plan_command,
    }


def dumps(r: LintResult) -> str:
    return json.dumps(lint_json(r), indent=2, ensure_ascii=False)
