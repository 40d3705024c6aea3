"""The lint rules over a command's own flags and arguments: what the engine's flag vocabulary refuses or
only accepts by prefix, an image tag that moves, a Hub repo id where the model needs a local folder, and the
tool-call and reasoning parsers against the build's sourced lists and the model's needs. Each returns the
findings of its rule; check/lint.py runs them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Literal

from ..catalog.index import Catalog
from ..catalog.schema import Engine, Hardware, Model, Source
from ..catalog.schema.engine import Build
from ..catalog.vocabulary import ParsedArgs, Vocabulary
from ..plan.types import Settings
from .findings import Finding, Severity
from .invocation import Invocation

VLLM_QUANTIZATION_DOC = Source(
    url="https://docs.vllm.ai/en/latest/models/engine_args.html",
    note="--quantization: if None, vLLM first checks the quantization_config attribute in the model config file",
)
HF_DOWNLOAD_DOC = Source(
    url="https://huggingface.co/docs/huggingface_hub/guides/cli#hf-download",
    note="hf download REPO --local-dir DIR: the files in a local directory the engine is pointed at",
)
FILE_HINT = "FNAME"  # the value hint llama.cpp's own argument table gives an option that opens one file
LLAMA_SPLIT_DOC = Source(
    url="https://github.com/ggml-org/llama.cpp/blob/master/tools/gguf-split/README.md",
    note="a split GGUF is loaded by passing its first part, -00001-of-NNNNN.gguf; the others are found next to it",
)


def vocabulary_findings(engine: Engine, parsed: ParsedArgs, vocab: Vocabulary) -> list[Finding]:
    out: list[Finding] = []
    name = vocab.reference or f"{vocab.engine}-{vocab.version}"
    source = (Source(url=f"recipegen.data/engine-cli/{name}.json"),)
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


def image_findings(catalog: Catalog, inv: Invocation, engine: Engine, build: Build) -> list[Finding]:
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


def path_findings(model: Model, engine: Engine, model_flag: str | None, model_arg: str) -> list[Finding]:
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
                tuple(local[0].sources) or (HF_DOWNLOAD_DOC,),
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
            (*_repo_page(model_arg), HF_DOWNLOAD_DOC),
        )
    ]


def _repo_page(repo: str) -> tuple[Source, ...]:
    """The Hub page of the repo a command names, when it is spelled as a repo id."""
    if re.fullmatch(r"[\w.-]+/[\w.-]+", repo) is None:
        return ()
    return (Source(url=f"https://huggingface.co/{repo}", note="the repo the command names"),)


def _first_gguf(folder: Path) -> str | None:
    """The file llama.cpp would be given for a folder of GGUF files: the only one, or the first split part."""
    files = sorted(p.name for p in folder.glob("*.gguf"))
    firsts = [f for f in files if "-00001-of-" in f]
    if len(firsts) == 1:
        return firsts[0]
    return files[0] if len(files) == 1 else None


def model_file_findings(
    engine: Engine, vocab: Vocabulary, reference: str, model_flag: str | None, model_arg: str, host: str | None
) -> list[Finding]:
    """An engine whose model option opens one file (its own --help: `--model FNAME`) pointed at a folder: the
    command parses, and the server exits at load ("failed to read magic")."""
    spec = vocab.options.get(model_flag) if model_flag else None
    if model_flag is None or spec is None or spec.get("value_hint") != FILE_HINT:
        return []
    on_host = Path(host) if host else None
    if on_host is not None and on_host.is_file():
        return []
    if on_host is not None and on_host.is_dir():
        why = f"{model_arg} is the folder {host} on this machine, not a file"
        first = _first_gguf(on_host)
        fix = (
            f"{model_flag} {model_arg.rstrip('/')}/{first}"
            if first
            else f"{model_flag} {model_arg.rstrip('/')}/FILE.gguf (the first part, -00001-of-N, of a split model)"
        )
    elif on_host is None and model_arg.lower().endswith(".gguf"):
        return []
    elif on_host is not None:  # mounted, but not on this machine: the name is all there is to go by
        if model_arg.lower().endswith(".gguf"):
            return []
        why = f"{model_arg} names no .gguf file (a folder?), and {host} is not on this machine to look"
        fix = f"{model_flag} {model_arg.rstrip('/')}/FILE.gguf (the first part, -00001-of-N, of a split model)"
    else:
        why = f"{model_arg} names no .gguf file (a folder?)"
        fix = f"{model_flag} {model_arg.rstrip('/')}/FILE.gguf (the first part, -00001-of-N, of a split model)"
    return [
        Finding(
            "error",
            "model-not-file",
            model_flag,
            model_arg,
            f"{engine.name} opens {model_flag} as one GGUF file: given a folder it exits at load with "
            "'failed to read magic'",
            f"{why}; the engine's own option table ({reference}) has {model_flag} {FILE_HINT}",
            fix,
            (Source(url=f"recipegen.data/engine-cli/{reference}.json"), LLAMA_SPLIT_DOC),
        )
    ]


def build_parser_findings(
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


def _build_list(builds: list[Build], shown: int = 4) -> str:
    names = [f"{b.id} ({b.released})" for b in builds[:shown]]
    more = len(builds) - shown
    return ", ".join(names) + (f" and {more} more (newest {builds[-1].id})" if more > 0 else "")


def parser_findings(
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


def kv_cache_findings(
    engine: Engine,
    build: Build,
    parsed: ParsedArgs,
    vocab: Vocabulary,
    model: Model | None,
    hardware: Hardware | None,
    backend: str | None,
) -> list[Finding]:
    """The command's --kv-cache-dtype as the named release takes it: a value its own choices lack, one no attention
    backend of it takes, or one the backend SGLang settles on for this model and GPU refuses (kv_spelling.py, the
    rule the planner writes its own spelling by)."""
    from ..catalog.kv_spelling import refusal
    from ..plan.flags import kv_choices

    flag = engine.flags.kv_cache_dtype
    given = parsed.get(vocab, flag) if flag else None
    if flag is None or given is None or any(i.flag == flag for i in parsed.issues):
        return []  # not given, or the flag vocabulary already refuses it
    dtypes = kv_choices(engine, given)
    cc = hardware.compute_capability if hardware is not None else None
    capability = cc.major * 10 + cc.minor if cc is not None else None
    found = refusal(engine, build, given, dtypes[0] if len(dtypes) == 1 else None, model, capability, backend)
    if found is None:
        return []
    exits = f"{engine.name} {build.version} exits at {found.at}"
    return [
        Finding(
            "error",
            "kv-cache-dtype-refused",
            flag,
            given,
            exits if found.at == "argument parsing" else f"{exits}: the server never comes up",
            found.why,
            f"{flag} {found.fix}" if found.fix else f"drop {flag}",
            found.sources,
        )
    ]
