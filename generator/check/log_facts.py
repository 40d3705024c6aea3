"""What an engine log says about the run it comes from: the engine and its version (and so the catalog
build), the model, the GPU and the tensor-parallel size, each read from the lines engines print at start-up
and matched against the catalog's names; the user's Hints stand in for what the log does not say.
"""

from __future__ import annotations

import re
from typing import Any

from ..catalog.buildversions import BuildResolution
from ..catalog.index import Catalog
from ..catalog.schema import Hardware, Model
from ..errors import RecipegenError
from ..frozen import frozen


@frozen
class Hints:
    """What the user adds when the log does not say it (diagnose --gpu/--model/--gpus)."""

    gpu: str | None = None
    model: str | None = None
    gpus: int | None = None


@frozen
class LogFacts:
    """What the log says about the run, each with the line it came from."""

    engine: str | None = None
    version: str | None = None
    build: str | None = None  # a catalog build id
    model: Model | None = None
    model_text: str | None = None
    hardware: Hardware | None = None
    gpu_text: str | None = None
    tp: int | None = None
    notes: tuple[str, ...] = ()
    resolution: BuildResolution | None = None  # how the version line was understood as a build


_ENGINE_SIGNS = (
    ("vllm", re.compile(r"vllm|EngineCore|APIServer pid", re.IGNORECASE)),
    ("sglang", re.compile(r"sglang|launch_server", re.IGNORECASE)),
    ("llama.cpp", re.compile(r"llama_model_load|llama-server|ggml_cuda_init|llama_model_loader")),
)
_VERSIONS = {
    "vllm": (
        re.compile(r"LLM engine \(v(\d+\.\d+\.\d+[\w.+-]*)\)"),
        re.compile(r"vLLM (?:API server )?[Vv]ersion\s*:?\s*v?(\d+\.\d+\.\d+[\w.+-]*)"),
        re.compile(r"vllm/vllm-openai:v(\d+\.\d+\.\d+)"),
        re.compile(r"\bvllm(?:==|:\s*[Vv]?)(\d+\.\d+\.\d+)"),
    ),
    "sglang": (
        re.compile(r"lmsysorg/sglang:v(\d+\.\d+\.\d+)"),
        re.compile(r"\bsglang(?:==|:\s*v?| version:?\s*v?)(\d+\.\d+\.\d+[\w.+-]*)", re.IGNORECASE),
    ),
    "llama.cpp": (re.compile(r"build: \d+ \(([0-9a-f]{7,})\)"),),
}
_MODEL_FIELDS = (
    re.compile(r"\bmodel='([^']+)'"),
    re.compile(r"\bmodel_path='([^']+)'"),
    re.compile(r"--model(?:-path)?[ =]+['\"]?([^\s'\"\\]+)"),
    re.compile(r"\b(?:vllm|sglang) serve\s+([^\s\\-][^\s\\]*)"),
    re.compile(r"Starting to load model ([^\s.]+(?:\.[^\s.]+)*?)\.{0,3}$", re.MULTILINE),
    re.compile(r"loading model '([^']+)'"),
)
_GPU_FIELDS = (
    re.compile(r"Device \d+: (NVIDIA [^,\n]+)"),
    re.compile(r"GPU [\d,]+: (NVIDIA [^\n(]+)"),
    re.compile(r"GPU:\s*(?:\d+\s*[x×]\s*)?(NVIDIA [^\n(,]+)"),
    re.compile(r"(NVIDIA [A-Z][\w-]*(?: [\w-]+){0,3})"),
)
_CC = re.compile(r"compute capability:?\s*(\d+\.\d+)|\b(sm_?\d{2,3})\b", re.IGNORECASE)
_TP = re.compile(r"tensor_parallel_size=(\d+)|--tensor-parallel-size[ =](\d+)|\btp_size=(\d+)|--tp(?:-size)?[ =](\d+)")


def _names_in(text: str, names: dict[str, Any]) -> Any:
    """The catalog entry whose name appears first in `text` (longest name on a tie), or None."""
    best: tuple[int, int, Any] | None = None
    folded = text.casefold()
    for name, entry in names.items():
        for m in re.finditer(r"(?<![\w.])" + re.escape(name) + r"(?![\w.]|-\d)", folded):
            key = (m.start(), -len(name), entry)
            if best is None or key[:2] < best[:2]:
                best = key
            break
    return best[2] if best else None


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


def read_facts(catalog: Catalog, text: str, hints: Hints) -> LogFacts:
    from ..catalog.names import resolve_gpu

    notes: list[str] = []
    engine = next((name for name, sign in _ENGINE_SIGNS if sign.search(text)), None)
    version = None
    for pattern in _VERSIONS.get(engine or "", ()):
        m = pattern.search(text)
        if m:
            version = m.group(1)
            break
    build, resolution = None, None
    if engine is not None and version is not None and engine in catalog.engines:
        from ..catalog.names import resolve_user_build

        try:
            choice = resolve_user_build(catalog, f"{engine}=={version}")
            build, resolution = choice.build_id, choice
            if catalog.build(build)[1].version != version:
                notes.append(choice.how)
        except RecipegenError as exc:
            notes.append(f"{exc.message.removeprefix(f'--build {engine}=={version}: ')}; plans use the builds it knows")
    model, model_text = None, None
    if hints.model:
        from ..checkpoint.anymodel import resolve_any

        model, model_text = resolve_any(catalog, hints.model).model, f"--model {hints.model}"
    else:
        for pattern in _MODEL_FIELDS:
            for m in pattern.finditer(text):
                found = _model_from(catalog, m.group(1))
                if found is not None:
                    model, model_text = found, m.group(1)
                    break
                model_text = model_text or m.group(1)
            if model is not None:
                break
        if model is None:
            model = _names_in(text, _model_names(catalog))
            model_text = model.name if model is not None else model_text
    hardware, gpu_text = None, None
    if hints.gpu:
        hardware, gpu_text = resolve_gpu(catalog, hints.gpu).hardware, f"--gpu {hints.gpu}"
    else:
        names = _hardware_names(catalog)
        for pattern in _GPU_FIELDS:
            for m in pattern.finditer(text):
                found_hw: Hardware | None = _names_in(m.group(1), names)
                gpu_text = gpu_text or m.group(1).strip()
                if found_hw is not None:
                    hardware, gpu_text = found_hw, m.group(1).strip()
                    break
            if hardware is not None:
                break
        if hardware is None:
            m = _CC.search(text)
            if m:
                cc_text = m.group(1) or m.group(2)
                try:
                    hardware, gpu_text = resolve_gpu(catalog, cc_text).hardware, cc_text
                except (RecipegenError, ValueError):
                    gpu_text = cc_text
    tp = None
    m = _TP.search(text)
    if m:
        tp = int(next(g for g in m.groups() if g))
    return LogFacts(engine, version, build, model, model_text, hardware, gpu_text, tp, tuple(notes), resolution)
