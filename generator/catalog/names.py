"""Resolve what users type (--model, --gpu, --engine, --build) to catalog entries."""

from __future__ import annotations

import datetime as dt
import difflib
import re

from ..errors import RecipegenError, UnknownNameError
from ..frozen import evolve, frozen
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
    names = [m.id for m in catalog.models.values()] + [a for m in catalog.models.values() for a in m.aliases]
    raise UnknownNameError("models", value, _suggest(value, names), "--model")


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
    if hardware is not None:
        how = hardware.name
    else:
        try:
            cc = Capability.parse(value)
        except ValueError:
            cc = None
        if cc is None:
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


@frozen
class BuildChoice:
    build_id: str
    how: str  # which build answers, said to the user


_VERSION = re.compile(r"^[vb]?(\d+(?:\.\d+)*)(?![0-9A-Za-z])")


def version_key(version: str) -> tuple[int, ...] | None:
    """0.33.0 → (0, 33, 0); v0.30.0-x86_64 → (0, 30, 0); b6200 (llama.cpp) → (6200,); else None."""
    match = _VERSION.match(version.strip())
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def release_line(engine: Engine, as_of: dt.date | None = None) -> list[Build]:
    """The engine's official releases with a comparable version, oldest first."""
    line = [
        b
        for b in engine.builds
        if b.provenance == "official" and version_key(b.version) is not None and (as_of is None or b.released <= as_of)
    ]
    return sorted(line, key=lambda b: version_key(b.version) or ())


def resolve_user_build(catalog: Catalog, value: str, as_of: dt.date | None = None) -> BuildChoice:
    """--build: a build id, ENGINE==VERSION, or an image reference; a version picks the nearest release at or below."""
    key = _fold(value)
    for _, build in catalog.builds():
        if _fold(build.id) == key:
            return BuildChoice(build.id, f"build {build.id}")
        if any(_fold(image) == key for image in build.images.values()):
            return BuildChoice(build.id, f"image of build {build.id} ({build.provenance}, {build.released})")
    if "==" in value:
        engine_name, version = (part.strip() for part in value.split("==", 1))
        found = [e for e in catalog.engines.values() if _fold(engine_name) in {_fold(n) for n in (e.id, *e.aliases)}]
        if not found:
            raise UnknownNameError("engines", engine_name, _suggest(engine_name, list(catalog.engines)), "--build")
        return _harvested(catalog, found[0], version, as_of) or _nearest(found[0], version, value, as_of)
    if "/" in value or ":" in value:
        repo, _, tag = value.rpartition(":") if ":" in value.split("/")[-1] else (value, "", "")
        for engine in catalog.engines.values():
            repos = {image.rpartition(":")[0].casefold() for b in engine.builds for image in b.images.values()}
            if repo.casefold() in repos:
                if not tag or version_key(tag) is None:
                    raise RecipegenError(
                        f"--build {value}: the tag {tag or '(none)'!r} names no version",
                        f"give the release tag (e.g. {repo}:v0.30.0) or {engine.id}==VERSION",
                    )
                return _harvested(catalog, engine, tag, as_of) or _nearest(engine, tag, value, as_of)
        raise RecipegenError(
            f"--build {value}: no engine in the catalog publishes images under {repo!r}",
            "give a build id (`recipegen list engines`) or ENGINE==VERSION, e.g. vllm==0.30.0",
        )
    ids = [b.id for _, b in catalog.builds()]
    raise UnknownNameError("builds", value, _suggest(value, ids), "--build")


def _harvested(catalog: Catalog, engine: Engine, version: str, as_of: dt.date | None) -> BuildChoice | None:
    """A release older than every hand-written one, known only from its harvested code (the nearest at or
    below `version`). Between hand-written releases the nearest of those answers, as its facts are checked."""
    from . import harvest
    from .harvested_builds import adopt

    wanted = version_key(version)
    if wanted is None:
        return None
    hand = [
        version_key(b.version) or () for b in release_line(engine, as_of) if (version_key(b.version) or ()) <= wanted
    ]
    if hand:
        return None
    below = []
    for release in harvest.releases(engine.id):
        key = version_key(release)
        facts = harvest.load(engine.id, release)
        built = dt.date.fromisoformat(facts.built) if facts is not None and facts.built else None
        if key is None or key > wanted:
            continue
        if as_of is not None and (built is None or built > as_of):
            continue
        below.append((key, release))
    if not below:
        return None
    key, release = max(below)
    build = adopt(catalog, engine.id, release)
    if build is None:
        return None
    exact = "" if key == wanted else f" (the nearest harvested release at or below {version})"
    return BuildChoice(
        build.id,
        f"{engine.name} {release} = build {build.id}{exact}: registry, parsers and flags read from its wheel; "
        "kernels carried from a later release, unverified",
    )


def _nearest(engine: Engine, version: str, value: str, as_of: dt.date | None) -> BuildChoice:
    wanted = version_key(version)
    line = release_line(engine, as_of)
    if wanted is None:
        raise RecipegenError(f"--build {value}: {version!r} is not a version", f"e.g. {engine.id}==0.30.0")
    if not line:
        raise RecipegenError(f"--build {value}: the catalog has no dated {engine.name} release", "use a build id")
    below = [b for b in line if (version_key(b.version) or ()) <= wanted]
    if not below:
        from . import harvest

        harvested = min(harvest.releases(engine.id), key=lambda r: version_key(r) or (), default=None)
        read = f"; the oldest whose code was read is {harvested}" if harvested else ""
        raise RecipegenError(
            f"--build {value}: older than the oldest {engine.name} release in the catalog ({line[0].version}, "
            f"{line[0].released}){read}",
            "recipegen has no facts for that release; upgrade, or pass the oldest known build",
        )
    chosen = below[-1]
    if version_key(chosen.version) == wanted:
        return BuildChoice(chosen.id, f"{engine.name} {chosen.version} = build {chosen.id} ({chosen.released})")
    newer = "newer than any release in the catalog; " if chosen is line[-1] else ""
    return BuildChoice(
        chosen.id,
        f"{engine.name} {version}: {newer}answering for {chosen.id} ({chosen.released}), "
        "the nearest known release at or below it",
    )
