"""Builds for releases the catalog knows only from their harvested code (no hand-written release file).

`--build vllm==0.8.5` names a release whose registry, parsers and flags were read from its wheel
(data/harvest/), but no one wrote its images or defects. Such a build is made on demand: the harvested
tables, the wheel's build date as its release date, and the kernel facts its `kernels` table read from
the same wheel (attention backends and their conditions, the bfloat16 check, quantization minimum
capabilities, the FP8 Marlin fallback, the GPU architectures it is compiled for; harvested_kernels.py).
What that table leaves unread is carried from the nearest later hand-written release with its sources
marked unverified, so a verdict resting on it says "unknown" instead of claiming what was not read.
Defects are per release and are not carried over.
"""

from __future__ import annotations

import datetime as dt

from ..frozen import evolve
from . import harvest, harvested_kernels
from .capability import capability_set
from .index import Catalog, Origin
from .schema import Build, Engine
from .schema.common import Source

TAG = "harvested"
_NONE = Origin("", "")


def _unverified(sources: list[Source], why: str) -> list[Source]:
    """Every source marked unverified; the first also says why (a reason joins every source's note)."""
    return [
        evolve(
            s, unverified=True, note=f"{s.note + '; ' if s.note and i == 0 else s.note or ''}{why if i == 0 else ''}"
        )
        for i, s in enumerate(sources)
    ]


def _template(engine: Engine, key: tuple[int, ...], made: frozenset[str] = frozenset()) -> Build | None:
    """The hand-written official release nearest above `key` (its kernels are the closest known facts); `made`:
    builds made from harvested code earlier in this run, which are no template."""
    line = sorted(
        (
            b
            for b in engine.builds
            if b.provenance == "official" and b.id not in made and harvest.release_key(b.version) is not None
        ),
        key=lambda b: harvest.release_key(b.version) or (),
    )
    above = [b for b in line if (harvest.release_key(b.version) or ()) > key]
    return above[0] if above else (line[-1] if line else None)


def make(engine: Engine, release: str, made: frozenset[str] = frozenset()) -> Build | None:
    """The build of a harvested release without a hand-written file, or None when it cannot be made."""
    facts = harvest.load(engine.id, release)
    key = harvest.release_key(release)
    if facts is None or key is None or not facts.architectures:
        return None
    base = _template(engine, key, made)
    if base is None:
        return None
    why = f"carried from {base.id}, not read in {release}"
    released = dt.date.fromisoformat(facts.built) if facts.built else dt.date.fromisoformat(facts.harvested_on)
    images = {
        arch: image.replace(f"v{base.version}", f"v{release}")
        for arch, image in base.images.items()
        if f"v{base.version}" in image
    }
    table = facts.kernels or {}
    compiled = harvested_kernels.compiled_terms(table)
    everywhere = compiled or tuple(base.cuda_archs.terms)
    kv_choices = ((table.get("kv_cache_dtypes") or {}).get("choices")) or [
        str(c) for c in ((harvest.flags(engine.id, release) or {}).get("--kv-cache-dtype", {}).get("choices") or [])
    ]
    read_kernels, covered = harvested_kernels.kernels(facts, table, everywhere, kv_choices)
    read_formats, decided = harvested_kernels.weight_formats(facts, table, everywhere)
    carried_kernels = [
        evolve(k, sources=_unverified(k.sources, why)) for k in base.kernels if k.provides not in covered
    ]
    carried_formats = [
        evolve(
            w,
            sources=_unverified(w.sources, why),
            fallbacks=[evolve(f, sources=_unverified(f.sources, why)) for f in w.fallbacks],
            native_kernels=[evolve(k, sources=_unverified(k.sources, why)) for k in w.native_kernels],
        )
        for w in base.weight_formats
        if w.quant not in decided
    ]
    loaded = {w.quant for w in read_formats}
    read_parts = [p for p in ("compiled_for", "dtypes", "quantization", "fp8", "attention") if p in table]
    unread = table.get("unread") or {}
    notes = [
        f"Made from the release's own code (data/harvest/{engine.id}/{release}.json): architectures, tool and "
        f"reasoning parsers and CLI options. The date is the wheel's build date ({facts.built or 'unknown'}).",
        (
            f"Kernel facts read from the same wheel: {', '.join(read_parts)}"
            + (
                f" (kernels: {', '.join(sorted(covered)) or 'none'}; weight formats: "
                f"{', '.join(sorted(loaded)) or 'none'}"
                + (f"; no loader in this release: {', '.join(sorted(decided - loaded))}" if decided - loaded else "")
                + ")"
                if read_parts
                else ""
            )
            + "."
            if read_parts
            else f"No kernel facts were read from {release}'s wheel."
        ),
        f"Carried from {base.id}, not read in {release} (verdicts resting on them are unknown): "
        + (
            ", ".join(sorted({k.provides for k in carried_kernels} | {f"{w.quant} weights" for w in carried_formats}))
            or "nothing"
        )
        + ("" if compiled else ", the CUDA targets")
        + ". "
        + "; ".join(f"{k}: {v}" for k, v in sorted(unread.items())),
    ]
    cuda_major = (table.get("compiled_for") or {}).get("cuda_major")
    return evolve(
        base,
        id=f"{engine.id}-{release}",
        extends=None,
        version=release,
        ref=None,
        released=released,
        images=images,
        cli_reference=None,
        architectures=sorted(facts.architectures),
        tool_parsers=list(facts.tool_parsers) if facts.tool_parsers is not None else None,
        reasoning_parsers=list(facts.reasoning_parsers) if facts.reasoning_parsers is not None else None,
        parsers_inherited={},
        cuda=str(cuda_major) if compiled and cuda_major else base.cuda,
        cuda_archs=capability_set(compiled) if compiled else base.cuda_archs,
        kernels=[*read_kernels, *carried_kernels],
        weight_formats=[*read_formats, *carried_formats],
        defects=[],
        verified_sm=None,
        notes=notes,
        sources=[*harvest.registry_source_of(engine.id, release), *_unverified(base.sources[:1], why)],
    )


def adopt(catalog: Catalog, engine_id: str, release: str) -> Build | None:
    """Add the harvested release's build to the catalog (once), for a request that names it."""
    engine = catalog.engines[engine_id]
    build_id = f"{engine_id}-{release}"
    existing = next((b for b in engine.builds if b.id == build_id), None)
    if existing is not None:
        return existing
    made = frozenset(b.id for b in engine.builds if catalog.origins.get(("builds", b.id), _NONE).root == TAG)
    build = make(engine, release, made)
    if build is None:
        return None
    catalog.engines[engine_id] = evolve(
        engine, builds=sorted([*engine.builds, build], key=lambda b: (b.released, b.id))
    )
    catalog.origins[("builds", build.id)] = Origin(f"data/harvest/{engine_id}/{release}.json", TAG)
    return build


def adopt_older(catalog: Catalog, engine_id: str) -> list[Build]:
    """Adopt every harvested release older than the engine's oldest hand-written official one (for `history`)."""
    engine = catalog.engines[engine_id]
    hand = [harvest.release_key(b.version) for b in engine.builds if b.provenance == "official"]
    oldest = min((k for k in hand if k is not None), default=None)
    if oldest is None:
        return []
    older = [r for r in harvest.releases(engine_id) if (harvest.release_key(r) or oldest) < oldest]
    return [b for b in (adopt(catalog, engine_id, r) for r in older) if b is not None]


def adopt_as_of(catalog: Catalog, engine_id: str, as_of: dt.date) -> Build | None:
    """--as-of before every hand-written release of the engine: the newest harvested release out by then (by its
    wheel's build date), so a report from that day is answered with the release its author could have run."""
    engine = catalog.engines[engine_id]
    if any(b.provenance == "official" and b.released <= as_of for b in engine.builds):
        return None
    hand = [harvest.release_key(b.version) for b in engine.builds if b.provenance == "official"]
    oldest = min((k for k in hand if k is not None), default=None)
    dated: list[tuple[dt.date, tuple[int, ...], str]] = []
    for release in harvest.releases(engine_id):
        key = harvest.release_key(release)
        facts = harvest.load(engine_id, release)
        if key is None or facts is None or not facts.built or (oldest is not None and key >= oldest):
            continue
        built = dt.date.fromisoformat(facts.built)
        if built <= as_of:
            dated.append((built, key, release))
    if not dated:
        return None
    return adopt(catalog, engine_id, max(dated)[2])
