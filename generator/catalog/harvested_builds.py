"""Builds for releases the catalog knows only from their harvested code (no hand-written release file).

`--build vllm==0.8.5` or `--build vllm==0.32.0` names a release whose registry, parsers and flags were read
from its wheel (data/harvest/), but no one wrote its file. Such a build is made on demand, as itself: its
version, the harvested tables, its PyPI upload day (else the wheel's build date) as its release date, sourced
to its PyPI page, and the kernel facts its `kernels` table read from the same wheel (attention backends and
their conditions, the bfloat16 check, quantization minimum capabilities, the FP8 Marlin fallback, the GPU
architectures it is compiled for; harvested_kernels.py). What that table leaves unread comes from the nearest
hand-written release file:
- below it (a release between two files, or newer than all): inherited as a release file written as a
  change of its parent is (kernels, weight formats, images under the same tag scheme, CUDA targets and the
  defects not fixed by then), said so in the build's notes and sources; a fact the next file above no
  longer has is marked unverified, as the release in between may already lack it;
- above it (older than every file): carried with its sources marked unverified, so a verdict resting on it
  says "unknown" instead of claiming what was not read; defects are not carried back.
"""

from __future__ import annotations

import datetime as dt

from ..frozen import evolve
from . import harvest, harvested_kernels
from .capability import capability_set
from .index import Catalog, Origin
from .schema import Build, Defect, Engine
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


def _inherited(sources: list[Source], why: str) -> list[Source]:
    """The sources of a fact inherited from the release file below: the first also says so (still verified)."""
    return [evolve(s, note=f"{s.note + '; ' if s.note else ''}{why}") if i == 0 else s for i, s in enumerate(sources)]


def _line(engine: Engine, made: frozenset[str]) -> list[Build]:
    """The engine's hand-written official releases with a version, oldest first (`made`: builds made from
    harvested code earlier in this run, which are no template)."""
    return sorted(
        (
            b
            for b in engine.builds
            if b.provenance == "official" and b.id not in made and harvest.release_key(b.version) is not None
        ),
        key=lambda b: harvest.release_key(b.version) or (),
    )


def _template(engine: Engine, key: tuple[int, ...], made: frozenset[str] = frozenset()) -> tuple[Build, bool] | None:
    """The hand-written release a harvested one takes what its code does not say from: the nearest below it
    (True), else the nearest above it (False: the release is older than every file)."""
    line = _line(engine, made)
    below = [b for b in line if (harvest.release_key(b.version) or ()) < key]
    if below:
        return below[-1], True
    above = [b for b in line if (harvest.release_key(b.version) or ()) > key]
    return (above[0], False) if above else None


def base_of(catalog: Catalog, engine_id: str, release: str) -> Build | None:
    """The hand-written release a harvested release's build takes its unread facts from."""
    engine = catalog.engines[engine_id]
    key = harvest.release_key(release)
    made = frozenset(b.id for b in engine.builds if catalog.origins.get(("builds", b.id), _NONE).root == TAG)
    found = _template(engine, key, made) if key is not None else None
    return found[0] if found is not None else None


def _still_open(engine: Engine, base: Build, key: tuple[int, ...]) -> list[Defect]:
    """The defects of `base` not fixed by the release `key` (a fix named by a build at or below it)."""
    fixed_at = {b.id: harvest.release_key(b.version) for b in engine.builds}
    return [d for d in base.defects if d.fixed_in is None or (fixed_at.get(d.fixed_in) or (1 << 30,)) > key]


def make(engine: Engine, release: str, made: frozenset[str] = frozenset()) -> Build | None:
    """The build of a harvested release without a hand-written file, or None when it cannot be made."""
    facts = harvest.load(engine.id, release)
    key = harvest.release_key(release)
    if facts is None or key is None or not facts.architectures:
        return None
    found = _template(engine, key, made)
    if found is None:
        return None
    base, below = found
    if below:
        after = [b for b in _line(engine, made) if (harvest.release_key(b.version) or ()) > key]
        nxt = after[0] if after else None
        why = f"inherited from {base.id} (the release file below it), not re-read in {release}"
    else:
        nxt, why = None, f"carried from {base.id}, not read in {release}"
    gone = f"in {base.id} but no longer in {nxt.id}: whether {release} still has it was not read" if nxt else ""
    released = dt.date.fromisoformat(facts.released_on or facts.harvested_on)
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

    def carry(sources: list[Source], survives: bool) -> list[Source]:
        if not below:
            return _unverified(sources, why)
        return _inherited(sources, why) if survives else _unverified(sources, gone)

    kept_kernels = {(k.name, k.provides) for k in nxt.kernels} if nxt is not None else None
    kept_formats = {w.quant for w in nxt.weight_formats} if nxt is not None else None
    carried_kernels = [
        evolve(k, sources=carry(k.sources, kept_kernels is None or (k.name, k.provides) in kept_kernels))
        for k in base.kernels
        if k.provides not in covered
    ]
    carried_formats = []
    for w in base.weight_formats:
        if w.quant in decided:
            continue
        survives = kept_formats is None or w.quant in kept_formats
        carried_formats.append(
            evolve(
                w,
                sources=carry(w.sources, survives),
                fallbacks=[evolve(f, sources=carry(f.sources, survives)) for f in w.fallbacks],
                native_kernels=[evolve(k, sources=carry(k.sources, survives)) for k in w.native_kernels],
            )
        )
    defects = [evolve(d, sources=_inherited(d.sources, why)) for d in _still_open(engine, base, key)] if below else []
    loaded = {w.quant for w in read_formats}
    read_parts = [p for p in ("compiled_for", "dtypes", "quantization", "fp8", "attention") if p in table]
    unread = table.get("unread") or {}
    name, _, version = facts.package.partition("==")
    page = f"https://pypi.org/project/{name}/{version}/"
    date_note = (
        f"release date: the day {facts.artifact} was uploaded to PyPI ({facts.uploaded}, the index's upload-time)"
        if facts.uploaded
        else f"release date: the build date of its wheel {facts.artifact} ({facts.built}, stamped by the harvest)"
        if facts.built
        else f"release date unknown: the day its wheel was harvested ({facts.harvested_on})"
    )
    carried_names = sorted({k.provides for k in carried_kernels} | {f"{w.quant} weights" for w in carried_formats})
    doubtful = sorted(
        {k.name for k in carried_kernels if k.unverified}
        | {f"{w.quant} weights" for w in carried_formats if w.unverified}
    )
    if below:
        inherited_note = (
            f"Inherited from {base.id}, the nearest release file below it, and not re-read in {release}: "
            + (", ".join(carried_names) or "no kernel facts")
            + (f", the images (its v<version> tag scheme: {', '.join(images.values())})" if images else "")
            + ("" if compiled else ", the CUDA targets")
            + (f", its open defects ({', '.join(d.id for d in defects)})" if defects else ", no open defects")
            + "."
            + (f" Unverified ({gone}): {', '.join(doubtful)}." if doubtful else "")
        )
    else:
        inherited_note = (
            f"Carried from {base.id}, not read in {release} (verdicts resting on them are unknown): "
            + (", ".join(carried_names) or "nothing")
            + ("" if compiled else ", the CUDA targets")
            + ". "
            + "; ".join(f"{k}: {v}" for k, v in sorted(unread.items()))
        )
    notes = [
        f"Made from the release's own code (data/harvest/{engine.id}/{release}.json): architectures, tool and "
        f"reasoning parsers and CLI options. The date is its PyPI upload ({facts.uploaded or 'not stamped'}; the "
        f"wheel was built {facts.built or 'on an unknown day'}).",
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
        inherited_note,
    ]
    cuda_major = (table.get("compiled_for") or {}).get("cuda_major")
    dated = Source(url=page, date=released, note=date_note)
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
        defects=defects,
        verified_sm=base.verified_sm if below else None,
        notes=notes,
        reported_for=[],
        sources=[
            *harvest.registry_source_of(engine.id, release),
            dated,
            *(_inherited(base.sources[:1], why) if below else _unverified(base.sources[:1], why)),
        ],
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


def adopt_unwritten(catalog: Catalog, engine_id: str) -> list[Build]:
    """Adopt every harvested release that has no hand-written file (older than them all, between or after them),
    for `history`."""
    engine = catalog.engines[engine_id]
    hand = {harvest.release_key(b.version) for b in engine.builds if b.provenance == "official"}
    if not hand - {None}:
        return []
    unwritten = [r for r in harvest.releases(engine_id) if harvest.release_key(r) not in hand]
    return [b for b in (adopt(catalog, engine_id, r) for r in unwritten) if b is not None]


def adopt_as_of(catalog: Catalog, engine_id: str, as_of: dt.date) -> Build | None:
    """--as-of: the newest harvested release out by then (by its PyPI upload, else its wheel's build date) when no
    hand-written release out by then is as new, so a report from that day is answered with the release its author
    could have run."""
    engine = catalog.engines[engine_id]
    hand = {
        key for b in engine.builds if b.provenance == "official" and (key := harvest.release_key(b.version)) is not None
    }
    newest_out = max(
        (
            key
            for b in engine.builds
            if b.provenance == "official" and b.released <= as_of and (key := harvest.release_key(b.version))
        ),
        default=None,
    )
    dated: list[tuple[tuple[int, ...], dt.date, str]] = []
    for release in harvest.releases(engine_id):
        key = harvest.release_key(release)
        facts = harvest.load(engine_id, release)
        if key is None or facts is None or not facts.released_on or key in hand:
            continue
        built = dt.date.fromisoformat(facts.released_on)
        if built <= as_of and (newest_out is None or key > newest_out):
            dated.append((key, built, release))
    if not dated:
        return None
    return adopt(catalog, engine_id, max(dated)[2])
