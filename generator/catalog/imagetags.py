"""Image references → builds: exact tags and digests, model-image families, community tags, rolling tags read at
a date, nightly commits, vendor containers (NGC). Part of the build-name resolver (buildnames.py)."""

from __future__ import annotations

import datetime as dt

from ..errors import RecipegenError
from .buildversions import (
    BUILD_NUMBER,
    DATE8,
    HEX,
    VARIANT,
    BuildNameError,
    BuildResolution,
    Confidence,
    closest_builds,
    date8,
    for_version,
    official_line,
    parse_version,
    rolling_tag,
)
from .index import Catalog
from .schema import Build, Engine
from .schema.imagenames import ImageRepository, RollingTag, Vendor

_DEFAULT_REGISTRY = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")


def split_image(reference: str) -> tuple[str, str, str]:
    """repo, tag, digest of an image reference; Docker Hub's registry and `library/` dropped, repo lower-cased."""
    ref, _, digest = reference.strip().partition("@")
    last = ref.rsplit("/", 1)[-1]
    repo, tag = ref.rsplit(":", 1) if ":" in last else (ref, "")
    repo = repo.casefold()
    for prefix in _DEFAULT_REGISTRY:
        if repo.startswith(prefix):
            repo = repo[len(prefix) :]
    repo = repo.removeprefix("library/")
    return repo, tag, digest.casefold()


def stem(tag: str) -> str:
    """A tag without the parts that pick a variant of one build: glm53-flash-arm64-cu130 → glm53-flash."""
    parts = [p for p in tag.casefold().split("-") if p and not VARIANT.fullmatch(p)]
    return "-".join(parts)


def _images(engine: Engine) -> list[tuple[Build, str, str, str]]:
    return [(b, *split_image(ref)) for b in engine.builds for ref in b.images.values()]


def resolve_image(
    catalog: Catalog, reference: str, on: dt.date, option: str = "--build", as_of: dt.date | None = None
) -> BuildResolution:
    repo, tag, digest = split_image(reference)
    for engine in catalog.engines.values():
        for build, known_repo, known_tag, known_digest in _images(engine):
            if known_repo != repo:
                continue
            if digest and digest == known_digest:
                return BuildResolution(reference, build.id, "digest", "exact", f"the digest of build {build.id}")
            if tag and not digest and tag.casefold() == known_tag.casefold():
                how = f"image of build {build.id} ({build.provenance}, {build.released})"
                return BuildResolution(reference, build.id, "image", "exact", how)
    for engine in catalog.engines.values():
        vendor = next((v for v in engine.image_names.vendors if repo in {r.casefold() for r in v.repositories}), None)
        if vendor is not None:
            return _vendor(engine, vendor, reference, tag, option, as_of)
    for engine in catalog.engines.values():
        listed = next((r for r in engine.image_names.repositories if r.repository.casefold() == repo), None)
        if listed is not None:
            return _main_branch_image(engine, listed, reference, tag, on, option, as_of)
    owners = [e for e in catalog.engines.values() if any(r == repo for _, r, _, _ in _images(e))]
    if not owners:
        named = [e for e in catalog.engines.values() if e.id.replace(".", "") in repo.replace(".", "")]
        guess = named[0] if named else None
        near = closest_builds(official_line(guess), on, 2) if guess else []
        raise BuildNameError(
            option, reference, f"no engine in the catalog publishes images under {repo!r}", guess, near
        )
    engine = owners[0]
    in_repo = list({b.id: b for b, r, _, _ in _images(engine) if r == repo}.values())
    if not tag:
        if digest:
            raise BuildNameError(
                option, reference, "a digest the catalog does not know", engine, closest_builds(in_repo, on)
            )
        tag = "latest"  # what docker pulls for a reference without a tag
    official_repo = any(b.provenance == "official" for b in in_repo)
    base = stem(tag)
    version = parse_version(base)
    if version is not None and official_repo:
        return for_version(engine, version.text, reference, option, as_of)
    family = [b for b, r, t, _ in _images(engine) if r == repo and stem(t) == base and parse_version(stem(t)) is None]
    if family:
        build = family[0]
        how = f"{tag} is a variant of {build.id}'s image ({build.provenance}, {build.released}): the same build line"
        return BuildResolution(reference, build.id, "family", "nearest", how)
    rolling = rolling_tag(engine, base) if official_repo else None
    if rolling is not None:
        return _rolling(engine, rolling, reference, tag, base, on, option, as_of)
    if not official_repo:
        return _community(engine, in_repo, reference, tag, on)
    near = [b for b, r, t, _ in _images(engine) if r == repo and base and (base in stem(t) or stem(t) in base)]
    if near and all(parse_version(stem(t)) is None for b, r, t, _ in _images(engine) if b in near):
        build = max(near, key=lambda b: b.released)
        how = f"{tag} is not in the catalog; the nearest image tag is {build.id}'s ({build.released}): answering for it"
        return BuildResolution(reference, build.id, "family", "approximate", how)
    why = f"the tag {tag!r} is no release, rolling tag or model image the catalog knows"
    images = [b for b in in_repo if b.provenance == "model-image"]
    near = closest_builds(images, _tag_date(tag) or on, 2) + closest_builds(
        official_line(engine), _tag_date(tag) or on, 1
    )
    raise BuildNameError(option, reference, why, engine, near)


def _tag_date(tag: str) -> dt.date | None:
    for part in tag.split("-"):
        if DATE8.fullmatch(part):
            return date8(part)
    return None


def _release_on(engine: Engine, when: dt.date) -> Build | None:
    """The newest official build by `when`, versioned or not (llama.cpp's newest is built at a commit)."""
    line = [b for b in engine.builds if b.provenance == "official" and b.released <= when]
    return max(line, key=lambda b: (b.released, b.id)) if line else None


def _main_branch_image(
    engine: Engine,
    listed: ImageRepository,
    reference: str,
    tag: str,
    on: dt.date,
    option: str,
    as_of: dt.date | None,
) -> BuildResolution:
    """An image the project pushes from its main branch: `<flavour>-b<build number>` names the release of that
    number (or the nearest below), a bare flavour is a rolling tag read at a date."""
    near = closest_builds(official_line(engine), on, 2)
    if not tag:
        why = "an image without a tag: this repository publishes no `latest`, only flavours such as server-cuda"
        raise BuildNameError(option, reference, why, engine, near)
    parts = [p for p in tag.casefold().split("-") if p]
    if listed.cuda_tag_part and not any(p.startswith(listed.cuda_tag_part) for p in parts):
        raise RecipegenError(
            f"{option} {reference}: the tag {tag!r} is not a CUDA build of {engine.name} (its CPU, Vulkan, ROCm … "
            f"images have no '{listed.cuda_tag_part}' part in the tag)",
            f"run its CUDA flavour, e.g. {listed.repository}:server-{listed.cuda_tag_part}",
        )
    number = next((p for p in parts if BUILD_NUMBER.fullmatch(p)), None)
    if number is not None:
        found = for_version(engine, number, reference, option, as_of)
        detail = found.how.removeprefix(f"{engine.name} {number}").lstrip(": ")
        how = f"{tag} is built from master at {number}{' ' if detail.startswith('=') else ': '}{detail}"
        return BuildResolution(reference, found.build_id, "image-version", found.confidence, how)
    rolling = rolling_tag(engine, stem(tag))
    if rolling is None:
        why = f"the tag {tag!r} names neither a build number (…-b6085) nor a rolling flavour the catalog knows"
        raise BuildNameError(option, reference, why, engine, near)
    return _rolling(engine, rolling, reference, tag, stem(tag), on, option, as_of)


def _rolling(
    engine: Engine,
    rolling: RollingTag,
    reference: str,
    tag: str,
    base: str,
    on: dt.date,
    option: str,
    as_of: dt.date | None,
) -> BuildResolution:
    sure: Confidence = "approximate" if rolling.unverified else "nearest"
    rest = base[len(rolling.tag) :].strip("-")
    when, said = on, f"on {on}"
    if rolling.follows == "main" and rest:
        dated = _tag_date(tag)
        commit = next((p for p in rest.split("-") if HEX.fullmatch(p) and not DATE8.fullmatch(p)), None)
        if dated is not None:
            when, said = dated, f"built {dated}"
        elif commit is not None:
            found = _commit_date(engine, commit)
            if found is None:
                why = f"commit {commit} is not in the catalog's table of {engine.name} main-branch dates"
                raise BuildNameError(option, reference, why, engine, closest_builds(official_line(engine), on, 2))
            when, said = found[0], f"commit {commit} is of {found[0]} ({found[1]})"
    chosen = _release_on(engine, when)
    if chosen is None:
        raise BuildNameError(
            option, reference, f"no {engine.name} release in the catalog by {when}", engine, official_line(engine)[:2]
        )
    if as_of is not None and chosen.released > as_of:
        raise RecipegenError(f"{option} {reference}: {chosen.id} was released after --as-of {as_of}")
    if rolling.follows == "release":
        how = f":{tag} {said} was {engine.name} {chosen.version} = build {chosen.id} ({chosen.released})"
        return BuildResolution(reference, chosen.id, "rolling", sure, how)
    how = (
        f":{tag} is a main-branch build ({said}): answering for {chosen.id} ({chosen.released}), the release "
        "before it; what main added since is not in the facts"
    )
    rule = "nightly-commit" if "commit" in said else "rolling"
    return BuildResolution(reference, chosen.id, rule, "approximate", how)


def _commit_date(engine: Engine, commit: str) -> tuple[dt.date, str] | None:
    """A commit's date: the engine's main-branch table, else a catalog build made at that ref."""
    for entry in engine.image_names.main_commits:
        if entry.commit.startswith(commit) or commit.startswith(entry.commit):
            return entry.date, "main-branch table"
    for build in engine.builds:
        ref = (build.ref or "").casefold()
        if len(ref) >= 7 and (ref.startswith(commit) or commit.startswith(ref)):
            return build.released, f"the ref of {build.id}"
    return None


def _community(engine: Engine, in_repo: list[Build], reference: str, tag: str, on: dt.date) -> BuildResolution:
    dated = _tag_date(tag)
    build = closest_builds(in_repo, dated, 1)[0] if dated else max(in_repo, key=lambda b: (b.released, b.id))
    known = ", ".join(sorted({t for b, _, t, _ in _images(engine) if b is build and t}))
    newer = "newer than" if dated is None or dated > build.released else "other than"
    how = (
        f"the tag {tag} is {newer} the catalog's facts ({known}, {build.released}): answering for {build.id}, "
        "this repository's build; what changed since is not in the facts"
    )
    return BuildResolution(reference, build.id, "community-tag", "approximate", how)


def _vendor(
    engine: Engine, vendor: Vendor, reference: str, tag: str, option: str, as_of: dt.date | None
) -> BuildResolution:
    bare = tag.removesuffix(f"-{vendor.tag_suffix}") if vendor.tag_suffix else tag
    # the same container spelled another way (nvidia/vllm for nvcr.io/nvidia/vllm, without -py3) is still the
    # catalog build that records it, not only the release it packages
    repositories = {r.casefold() for r in vendor.repositories}
    for build, known_repo, known_tag, _ in _images(engine):
        known_bare = known_tag.removesuffix(f"-{vendor.tag_suffix}") if vendor.tag_suffix else known_tag
        if bare and known_repo in repositories and known_bare.casefold() == bare.casefold():
            how = f"{vendor.name} {bare} is the image of build {build.id} ({build.provenance}, {build.released})"
            return BuildResolution(reference, build.id, "image", "exact", how)
    listed = {r.tag: r for r in vendor.releases}
    release = listed.get(bare)
    if release is not None:
        found = for_version(engine, release.version, reference, option, as_of)
        how = f"{vendor.name} {bare} holds {engine.name} {release.version} ({release.url}): {found.how}"
        return BuildResolution(reference, found.build_id, "vendor", found.confidence, how)
    month = _month(bare)
    dated = [(m, r) for r in vendor.releases if (m := _month(r.tag)) is not None]
    earlier = [(m, r) for m, r in dated if month is not None and m < month]
    later = [(m, r) for m, r in dated if month is not None and m > month]
    if earlier and later:  # between two listed containers: the engine version is between theirs
        low = max(earlier, key=lambda pair: pair[0])[1]
        high = min(later, key=lambda pair: pair[0])[1]
        found = for_version(engine, low.version, reference, option, as_of)
        how = (
            f"{vendor.name} {bare} is not in the catalog's release-notes table; it lies between {low.tag} "
            f"({engine.name} {low.version}) and {high.tag} ({high.version}): answering for {found.build_id}, "
            f"the lower bound (its notes: {vendor.notes})"
        )
        return BuildResolution(reference, found.build_id, "vendor", "approximate", how)
    table = ", ".join(f"{r.tag} = {r.version}" for r in vendor.releases[-3:]) or "none listed"
    # a container tag YY.MM is the month it shipped: the releases closest to it are the nearest guesses
    when = dt.date(2000 + month[0], month[1], 15) if month is not None and 1 <= month[1] <= 12 else None
    near = closest_builds(official_line(engine, as_of), when)
    nearest = f"; nearest {engine.name} releases by date: {', '.join(f'{b.id} ({b.released})' for b in near)}"
    raise RecipegenError(
        f"{option} {reference}: {vendor.name} {bare or '(no tag)'} is not in the catalog's release-notes table "
        f"(known: {table}){nearest if near else ''}",
        f"its release notes ({vendor.notes}) name the {engine.name} version: say it as {option} {engine.id}==X",
    )


def _month(tag: str) -> tuple[int, int] | None:
    parts = tag.split(".")
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        return int(parts[0]), int(parts[1])
    return None
