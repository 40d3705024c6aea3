"""Resolve what users type (--model, --gpu, --engine, --build) to catalog entries."""

from __future__ import annotations

import datetime as dt
import difflib
import re

from ..errors import RecipegenError, UnknownNameError
from ..frozen import evolve, frozen
from . import gpu_names
from .buildversions import BuildResolution
from .capability import Capability
from .index import Catalog
from .schema import Build, Engine, Hardware, Model


def _fold(text: str) -> str:
    return text.strip().casefold()


def _suggest(value: str, names: list[str]) -> list[str]:
    folded = {_fold(n): n for n in names}
    close = difflib.get_close_matches(_fold(value), list(folded), n=4, cutoff=0.5)
    return [folded[c] for c in close]


@frozen
class ModelChoice:
    model: Model
    variant: str | None  # set when the user named a variant's repo id
    how: str  # one line: how the name was understood
    facts: str = "catalog"  # where the model's facts come from: catalog, name (inferred) or files (derived)
    folder: str | None = None  # a local checkpoint folder (absolute): the artifacts mount it, download nothing


def resolve_model(catalog: Catalog, value: str) -> ModelChoice:
    key = _fold(value)
    for model in catalog.models.values():
        if key in {_fold(model.id), _fold(model.name), *(_fold(a) for a in model.aliases)}:
            return ModelChoice(model, None, f"model {model.name}")
    for model in catalog.models.values():
        for variant in model.variants:
            if key == _fold(variant.repo):
                return ModelChoice(model, variant.id, f"model {model.name}, variant {variant.id} ({variant.repo})")
    raise UnknownNameError("models", value, _suggest_models(catalog, value), "--model")


def _suggest_models(catalog: Catalog, value: str) -> list[str]:
    """One slot per model, never two aliases of one; a family prefix (deepseek-v4 → deepseek-v4-flash) first."""
    key = re.sub(r"[^a-z0-9.]+", "-", _fold(value)).strip("-")
    scored = []
    for model in catalog.models.values():
        names = [_fold(n) for n in (model.id, model.name, *model.aliases)]
        family = any(n.startswith(key) or key.startswith(n) for n in names)
        ratio = max(difflib.SequenceMatcher(None, key, n).ratio() for n in names)
        if family or ratio >= 0.6:
            scored.append((not family, -ratio, len(model.id), model.id))
    return [model_id for *_, model_id in sorted(scored)[:4]]


def find_model(catalog: Catalog, value: str) -> ModelChoice | None:
    """A model path or repo id as written in an engine command (/models/GLM-5.2-NVFP4, zai-org/GLM-5): the
    variant whose repo it names or ends with, else the model it names; None when nothing matches."""
    tail = value.rstrip("/")
    repo = _fold("/".join(tail.split("/")[-2:]))
    for model in catalog.models.values():
        for variant in model.variants:
            if repo == _fold(variant.repo):
                return ModelChoice(model, variant.id, f"model {model.name}, variant {variant.id} ({variant.repo})")
    for candidate in (tail, "/".join(tail.split("/")[-2:])):
        try:
            return resolve_model(catalog, candidate)
        except UnknownNameError:
            pass
    parts = [_fold(p) for p in tail.split("/")[-2:]]  # a folder, or a folder and a file (GGUF)
    for model in catalog.models.values():
        for variant in model.variants:
            if _fold(variant.repo.rsplit("/", 1)[-1]) in parts[-1:] or (
                variant.file is not None and parts[-1] == _fold(variant.file.rsplit("/", 1)[-1])
            ):
                return ModelChoice(model, variant.id, f"model {model.name}, variant {variant.id} ({variant.repo})")
    try:
        return resolve_model(catalog, tail.rsplit("/", 1)[-1])
    except UnknownNameError:
        return None


@frozen
class GpuChoice:
    hardware: Hardware
    how: str


def resolve_gpu(catalog: Catalog, value: str, memory_gib: float | None = None) -> GpuChoice:
    key = _fold(value)
    hardware = next(
        (h for h in catalog.hardware.values() if key in {_fold(h.id), _fold(h.name), *(_fold(a) for a in h.aliases)}),
        None,
    )
    how = ""
    try:
        cc = Capability.parse(value) if hardware is None else None
    except ValueError:
        cc = None
    if hardware is None and cc is None and (loose := gpu_names.match(catalog.hardware.values(), value, memory_gib)):
        hardware = loose
    if hardware is not None:
        how = (
            hardware.name
            if _fold(value) in {_fold(hardware.id), _fold(hardware.name), *(_fold(a) for a in hardware.aliases)}
            else f"{hardware.name} (from {value!r})"
        )
    else:
        if cc is None:
            if hint := gpu_names.unknown_gpu_hint(value):
                raise RecipegenError(f"no GPU {value!r} in the catalog for --gpu", hint)
            names = [h.id for h in catalog.hardware.values()] + [
                a for h in catalog.hardware.values() for a in h.aliases
            ]
            raise UnknownNameError("hardware", value, _suggest(value, names), "--gpu")
        parts = [h for h in catalog.hardware.values() if h.compute_capability == cc]
        if not parts:
            known = sorted({str(h.compute_capability) for h in catalog.hardware.values()}, key=Capability.parse)
            raise RecipegenError(
                f"no GPU with compute capability {cc} in the catalog for --gpu {value!r}",
                f"known capabilities: {', '.join(known)}; add a hardware/ recipe for it",
            )
        wanted = memory_gib
        exact = (
            sorted(
                (h for h in parts if abs(h.memory_gib - wanted) < 1.0),
                key=lambda h: (not h.default_for_capability, abs(h.memory_gib - wanted), h.id),
            )
            if wanted is not None
            else []
        )
        if exact:
            return GpuChoice(exact[0], f"{exact[0].name} (the {cc.sm} part with {memory_gib:g} GiB)")
        hardware = next((h for h in parts if h.default_for_capability), parts[0])
        others = ", ".join(f"{h.name} {h.memory_gib:g} GiB" for h in parts if h is not hardware)
        how = f"{hardware.name} — the usual {cc.sm} datacenter part, {hardware.memory_gib:g} GiB"
        if others:
            how += f" (also {cc.sm}: {others}; pick one with --gpu-memory)"
    if memory_gib is not None and abs(hardware.memory_gib - memory_gib) >= 1.0:
        if memory_gib <= 0:
            raise RecipegenError(
                f"--gpu-memory must be positive, got {memory_gib:g}", "give the GiB of one GPU, e.g. 48"
            )
        original = hardware.memory_gib
        hardware = evolve(
            hardware,
            memory_gib=memory_gib,
            notes=[*hardware.notes, f"memory set to {memory_gib:g} GiB by --gpu-memory (catalog: {original:g} GiB)"],
        )
        how += f", memory overridden to {memory_gib:g} GiB per GPU"
    return GpuChoice(hardware, how)


def resolve_engine(catalog: Catalog, value: str) -> Engine:
    key = _fold(value)
    for engine in catalog.engines.values():
        if key in {_fold(engine.id), _fold(engine.name), *(_fold(a) for a in engine.aliases)}:
            return engine
    raise UnknownNameError("engines", value, _suggest(value, list(catalog.engines)), "--engine")


def resolve_build(catalog: Catalog, value: str) -> str:
    ids = [b.id for _, b in catalog.builds()]
    key = _fold(value)
    for build_id in ids:
        if _fold(build_id) == key:
            return build_id
    raise UnknownNameError("builds", value, _suggest(value, ids), "--build")


def resolve_variant(model: Model, value: str) -> str:
    key = _fold(value)
    for variant in model.variants:
        if key in {_fold(variant.id), _fold(variant.repo)}:
            return variant.id
    # a GGUF quantization by its name (Q4_K_M: variant gguf-q4-k-m) or its file (any part of a split set)
    quant = "gguf-" + re.sub(r"[^a-z0-9.]+", "-", key).strip("-.")
    split = re.sub(r"-\d{5}-of-(\d{5})\.gguf$", r"-00001-of-\1.gguf", key)
    for variant in model.variants:
        file = _fold(variant.file or "")
        if variant.quant == "gguf" and (variant.id == quant or (file and split in {file, file.rsplit("/", 1)[-1]})):
            return variant.id
    raise UnknownNameError("variants", value, _suggest(value, [v.id for v in model.variants]), "--variant")


def version_key(version: str) -> tuple[int, ...] | None:
    """0.33.0 → (0, 33, 0); v0.30.0-x86_64 → (0, 30, 0); b6200 (llama.cpp) → (6200,); else None."""
    from . import harvest  # the one reading of a version, loaded with the first request that compares releases

    return harvest.release_key(version)


def release_line(engine: Engine, as_of: dt.date | None = None) -> list[Build]:
    """The engine's official releases with a comparable version, oldest first."""
    line = [
        b
        for b in engine.builds
        if b.provenance == "official" and version_key(b.version) is not None and (as_of is None or b.released <= as_of)
    ]
    return sorted(line, key=lambda b: version_key(b.version) or ())


def resolve_user_build(
    catalog: Catalog, value: str, as_of: dt.date | None = None, on: dt.date | None = None, option: str = "--build"
) -> BuildResolution:
    """--build: a build id, ENGINE==VERSION, a version string or an image reference (catalog/buildnames.py); a
    release without a hand-written file answers as itself from its harvested code (harvested_builds.py)."""
    from .buildnames import resolve_build_name
    from .buildversions import BuildNameError

    try:
        resolution = resolve_build_name(catalog, value, on=on or as_of, as_of=as_of, option=option)
    except BuildNameError as exc:
        if exc.older is None:
            raise
        engine_id, version = exc.older
        found = _harvested(catalog, catalog.engines[engine_id], version, value, as_of)
        if found is not None:
            return found
        from . import harvest

        numbered = [r for r in harvest.releases(engine_id) if version_key(r) is not None]
        oldest = min(numbered, key=lambda r: version_key(r) or (), default=None)
        if oldest is None:
            raise
        raise RecipegenError(f"{exc.message}; the oldest whose code was read is {oldest}", exc.hint) from None
    if resolution.named is not None:  # a release without a file: its harvested code may be nearer than the file
        engine_id, version = resolution.named
        found = _harvested(catalog, catalog.engines[engine_id], version, value, as_of)
        if found is not None:
            return found
    return resolution


def _harvested(
    catalog: Catalog, engine: Engine, version: str, given: str, as_of: dt.date | None
) -> BuildResolution | None:
    """The harvested release nearest at or below `version` when it is nearer than every hand-written release at or
    below it (older than all of them, or without a file between or after them); None: a file answers."""
    from . import harvest
    from .harvested_builds import adopt, base_of

    wanted = version_key(version)
    if wanted is None:
        return None
    hand = max(
        (k for b in release_line(engine, as_of) if (k := version_key(b.version) or ()) <= wanted),
        default=None,
    )
    below = []
    for release in harvest.releases(engine.id):
        key = version_key(release)
        if key is None or key > wanted or (hand is not None and key <= hand):
            continue
        facts = harvest.load(engine.id, release)
        built = dt.date.fromisoformat(facts.released_on) if facts is not None and facts.released_on else None
        if as_of is not None and (built is None or built > as_of):
            continue
        below.append((key, release))
    if not below:
        return None
    key, release = max(below)
    base = base_of(catalog, engine.id, release)
    build = adopt(catalog, engine.id, release)
    if build is None or base is None:
        return None
    exact = "" if key == wanted else f" (the nearest harvested release at or below {version})"
    facts = harvest.load(engine.id, release)
    read = facts.kernels if facts is not None else None
    if (version_key(base.version) or ()) < key:  # the file below lends what code cannot say
        kernels = (
            f"{'kernels read from it, the rest' if read else 'kernels'}, images and open defects inherited from "
            f"{base.id}, the release file below it (see its notes)"
        )
    else:
        kernels = (
            f"kernels, weight formats{' and CUDA targets' if read.get('compiled_for') else ''} read from it too (the "
            "rest carried from a later release, unverified: see its notes)"
            if read
            else "kernels carried from a later release, unverified"
        )
    how = (
        f"{engine.name} {release} = build {build.id} ({build.released}){exact}: registry, parsers and flags read "
        f"from its wheel; {kernels}"
    )
    return BuildResolution(given, build.id, "harvested", "exact" if key == wanted else "nearest", how)
