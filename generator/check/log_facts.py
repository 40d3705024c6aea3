"""What an engine log says about the run it comes from: the engine and its version (and so the catalog
build), the model, the GPU and its capability, the layout, the kernels chosen, the KV budget and the command,
read by log_lines.py from the lines engines print and matched here against the catalog's names; the user's
Hints stand in for what the log does not say.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ..catalog.buildversions import BuildResolution
from ..catalog.index import Catalog
from ..catalog.schema import Hardware, Model
from ..errors import RecipegenError
from ..frozen import frozen
from .log_lines import RUNS_ON, read_lines


@frozen
class Hints:
    """What the user adds when the log does not say it (diagnose --gpu/--model/--gpus)."""

    gpu: str | None = None
    model: str | None = None
    gpus: int | None = None


@frozen
class LogFacts:
    """What the log says about the run, each read from the line the engine printed (log_lines.py)."""

    engine: str | None = None  # the catalog's engine id
    version: str | None = None  # the version text as the log prints it
    build: str | None = None  # a catalog build id
    model: Model | None = None
    model_text: str | None = None
    hardware: Hardware | None = None
    gpu_text: str | None = None
    tp: int | None = None
    notes: tuple[str, ...] = ()
    flavor: str | None = None  # vLLM, SGLang, llama.cpp, ik_llama.cpp, KTransformers
    runs_on: tuple[str, ...] = ()  # the engines whose failures this log can show
    architecture: str | None = None
    served_name: str | None = None
    capability: str | None = None  # the run's own compute capability, dotted
    gpu_named: bool = False  # the GPU is named (the log's device line or --gpu), not guessed from a capability
    pp: int | None = None
    nodes: int | None = None
    memory_utilization: float | None = None
    backends: tuple[tuple[str, str], ...] = ()  # (attention|moe|gemm, name) as the run chose them
    kv: tuple[tuple[str, float], ...] = ()  # the KV-cache budget lines
    resolution: BuildResolution | None = None  # how the version line was understood as a build
    command: str | None = None  # the engine command the log echoes
    warnings: tuple[str, ...] = ()  # hints that could not be used

    def kv_value(self, name: str) -> float | None:
        return dict(self.kv).get(name)


def _names_in(text: str, names: dict[str, Any]) -> Any:
    """The catalog entry whose name appears first in `text` (longest name on a tie), or None.

    One regex over the text, the names laid out as a trie: at each place only the names sharing what was
    read so far are tried, so a 4 MB log costs one scan in C, not one scan (or one Python step) per name."""
    m = _names_pattern(tuple(sorted(names))).search(text.casefold())
    return names[m.group(1)] if m else None


@functools.lru_cache(maxsize=8)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    trie: dict[str, Any] = {}
    for name in names:
        node = trie
        for char in name:
            node = node.setdefault(char, {})
        node[""] = {}

    def alternatives(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + alternatives(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body  # greedy: the longer name first, this one if it fails

    # not inside a word or a dotted name, and not followed by one (nor by "-<digit>": another size)
    return re.compile(r"(?<![\w.])(" + alternatives(trie) + r")(?![\w.]|-\d)")


def _model_names(catalog: Catalog) -> dict[str, Model]:
    names: dict[str, Model] = {}
    for model in catalog.models.values():
        for name in (model.id, model.name, *model.aliases):
            names[name.casefold()] = model
        for variant in model.variants:
            names[variant.repo.casefold()] = model
            names.setdefault(variant.repo.rsplit("/", 1)[-1].casefold(), model)
    return names


def _hardware_names(catalog: Catalog) -> dict[str, Hardware]:
    names: dict[str, Hardware] = {}
    for hw in catalog.hardware.values():
        for name in (hw.id, hw.name, *hw.aliases):
            names[name.casefold()] = hw
    return names


def _model_from(catalog: Catalog, value: str) -> Model | None:
    from ..catalog.names import find_model
    from ..checkpoint.inference import infer

    choice = find_model(catalog, value)
    if choice is not None:
        return choice.model
    tail = value.rstrip("/")
    for candidate in ("/".join(tail.split("/")[-2:]), tail.rsplit("/", 1)[-1]):
        try:  # a quant or mirror of a known family, from the name alone (a log is read offline)
            named = infer(catalog, candidate)
        except RecipegenError:
            named = None
        if named is not None:
            return named.model
    found: Model | None = _names_in(value, _model_names(catalog))
    return found


def _build(catalog: Catalog, engine: str, version: str, notes: list[str]) -> BuildResolution | None:
    from ..catalog.names import resolve_user_build

    number = re.fullmatch(r"(\d+) \(([0-9a-f]{7,})\)", version)  # llama.cpp: `build: 6085 (a1b2c3d)`, master's count
    if number:
        version = f"b{number[1]}"
    if engine not in catalog.engines or not (number or re.match(r"\d+\.\d+", version)):
        return None
    try:
        choice = resolve_user_build(catalog, f"{engine}=={version}")
    except RecipegenError as exc:
        # a build from a tree without git history counts 1; the commit it names may still be a catalog build
        commit = _commit_build(catalog, engine, number[2]) if number else None
        if commit is not None:
            return commit
        notes.append(f"{exc.message.removeprefix(f'--build {engine}=={version}: ')}; plans use the builds it knows")
        return None
    if catalog.build(choice.build_id)[1].version != version:
        notes.append(choice.how)
    return choice


def _commit_build(catalog: Catalog, engine: str, commit: str) -> BuildResolution | None:
    """The catalog build made from the commit a llama.cpp build line names, if any."""
    from ..catalog.names import resolve_user_build

    try:
        return resolve_user_build(catalog, f"{engine}=={commit}")
    except RecipegenError:
        return None


def _hinted_model(catalog: Catalog, hint: str, warnings: list[str]) -> Model | None:
    from ..checkpoint.anymodel import resolve_any

    try:
        return resolve_any(catalog, hint).model
    except (RecipegenError, OSError) as exc:
        message = exc.message if isinstance(exc, RecipegenError) else str(exc)
        warnings.append(f"--model {hint!r} is not used ({message}); the model is read from the log")
        return None


def _hinted_gpu(catalog: Catalog, hint: str, warnings: list[str]) -> Hardware | None:
    from ..catalog.names import resolve_gpu

    try:
        return resolve_gpu(catalog, hint).hardware
    except (RecipegenError, ValueError) as exc:
        message = exc.message if isinstance(exc, RecipegenError) else str(exc)
        warnings.append(f"--gpu {hint!r} is not used ({message}); the GPU is read from the log")
        return None


def _log_model(catalog: Catalog, texts: tuple[str, ...], text: str) -> tuple[Model | None, str | None]:
    for value in texts:
        found = _model_from(catalog, value)
        if found is not None:
            return found, value
    model: Model | None = _names_in(text, _model_names(catalog))
    return (model, model.name) if model is not None else (None, texts[0] if texts else None)


def _log_gpu(catalog: Catalog, texts: tuple[str, ...], cc: str | None) -> tuple[Hardware | None, str | None]:
    from ..catalog.names import resolve_gpu

    names = _hardware_names(catalog)
    for value in texts:
        found: Hardware | None = _names_in(value, names)
        if found is not None:
            return found, value
    if cc is not None:
        try:
            usual = resolve_gpu(catalog, cc).hardware
            named = f"{texts[0]}, " if texts else ""
            return (
                usual,
                f"{named}compute capability {cc}; planned as the catalog's usual {usual.compute_capability.sm} part",
            )
        except (RecipegenError, ValueError):
            pass
    return None, (texts[0] if texts else (f"compute capability {cc}" if cc else None))


def read_facts(catalog: Catalog, text: str, hints: Hints) -> LogFacts:
    """What the log says, resolved against the catalog; a hint stands in for what the log does not say, and a
    hint that names nothing the catalog knows is a warning, never the end of the reading."""
    raw = read_lines(text)
    notes: list[str] = list(raw.ignored)
    warnings: list[str] = []
    found = _build(catalog, raw.engine, raw.version, notes) if raw.engine and raw.version else None
    model = _hinted_model(catalog, hints.model, warnings) if hints.model else None
    model_text = f"--model {hints.model}" if model is not None else None
    if model is None:
        model, model_text = _log_model(catalog, raw.model_texts, text)
    hardware = _hinted_gpu(catalog, hints.gpu, warnings) if hints.gpu else None
    gpu_text = f"--gpu {hints.gpu}" if hardware is not None else None
    gpu_named = hardware is not None
    if hardware is None:
        hardware, gpu_text = _log_gpu(catalog, raw.gpu_texts, raw.capability)
        gpu_named = hardware is not None and gpu_text in raw.gpu_texts
    cc = raw.capability or (str(hardware.compute_capability) if hardware is not None else None)
    return LogFacts(
        engine=raw.engine,
        version=raw.version,
        build=found.build_id if found else None,
        model=model,
        model_text=model_text,
        hardware=hardware,
        gpu_text=gpu_text,
        tp=raw.tp,
        notes=tuple(notes),
        flavor=raw.flavor,
        runs_on=RUNS_ON.get(raw.engine or "", (raw.engine,) if raw.engine else ()),
        architecture=raw.architecture,
        served_name=raw.served_name,
        capability=cc,
        gpu_named=gpu_named,
        pp=raw.pp,
        nodes=raw.nodes,
        memory_utilization=raw.memory_utilization,
        backends=raw.backends,
        kv=raw.kv,
        command=raw.command,
        warnings=tuple(warnings),
        resolution=found,
    )
