"""What the build-name resolver (buildnames.py) is made of: engine versions as users and engines write them
(PEP 440: rc, dev, +g<commit>.d<date>), the resolution record, the refusal that names the nearest builds."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from ..errors import RecipegenError
from ..frozen import frozen
from .index import Catalog
from .schema import Build, Engine
from .schema.imagenames import RollingTag

Confidence = Literal["exact", "nearest", "approximate"]

HEX = re.compile(r"[0-9a-f]{7,40}")
DATE8 = re.compile(r"(20\d\d)(\d\d)(\d\d)")
# tag parts that pick a variant of the same build: CUDA, host arch, OS, Python, image flavour
VARIANT = re.compile(r"cu\d+|cuda\d+(?:\.\d+)*|x86_64|amd64|aarch64|arm64|ubuntu\d+|py3\d*|runtime|b200|gb200", re.I)
_VERSION = re.compile(
    r"^[vV]?(?P<release>\d+(?:\.\d+)*)(?:(?P<pre>a|b|rc)(?P<pre_n>\d*))?(?:\.post(?P<post>\d+))?"
    r"(?:\.dev(?P<dev>\d+))?(?:\+(?P<local>[0-9A-Za-z.]+))?$"
)
# llama.cpp names its releases by master's build number (b6085, the commit count), as do its image tags
BUILD_NUMBER = re.compile(r"b(\d{1,7})", re.I)


@frozen
class BuildResolution:
    """How --build (or an image, a log's version line, a container) was understood."""

    given: str
    build_id: str
    rule: str  # build-id · version · image · digest · image-version · family · community-tag · rolling ·
    # nightly-commit · vendor · version-string · commit · harvested
    confidence: Confidence
    how: str  # one line for `understood:`
    # (engine, version) of a release the user named that another build answers for (a harvested one may answer)
    named: tuple[str, str] | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "given": self.given,
            "build": self.build_id,
            "rule": self.rule,
            "confidence": self.confidence,
            "how": self.how,
        }


@frozen
class Version:
    release: tuple[int, ...]
    pre: tuple[int, int] | None  # (0 a, 1 b, 2 rc; number)
    dev: int | None
    local: str | None
    text: str
    build_number: bool = False  # b6085: a llama.cpp build number, comparable only with others of its kind

    @property
    def order(self) -> tuple[Any, ...]:
        """PEP 440 order with post releases folded into their release (0.5.4 names the 0.5.4.postN line)."""
        release = self.release + (0,) * (6 - len(self.release))
        if self.pre is not None:
            phase: tuple[int, ...] = (1, *self.pre)
        else:
            phase = (0, 0, 0) if self.dev is not None else (2, 0, 0)
        return (release, phase, self.dev if self.dev is not None else 1 << 30)

    @property
    def final(self) -> bool:
        return self.pre is None and self.dev is None

    @property
    def commit(self) -> str | None:
        match = re.search(r"(?:^|\.)g([0-9a-f]{7,40})", self.local or "")
        return match.group(1) if match else None

    @property
    def built(self) -> dt.date | None:
        match = re.search(r"(?:^|\.)d(20\d{6})", self.local or "")
        return date8(match.group(1)) if match else None


def parse_version(text: str) -> Version | None:
    number = BUILD_NUMBER.fullmatch(text.strip())
    if number:
        return Version((int(number[1]),), None, None, None, f"b{int(number[1])}", build_number=True)
    match = _VERSION.match(text.strip())
    if not match:
        return None
    pre = (("a", "b", "rc").index(match["pre"]), int(match["pre_n"] or 0)) if match["pre"] else None
    release = tuple(int(p) for p in match["release"].split("."))
    dev = int(match["dev"]) if match["dev"] is not None else None
    return Version(release, pre, dev, match["local"], text.strip().lstrip("vV"))


def date8(text: str) -> dt.date | None:
    match = DATE8.fullmatch(text)
    if not match:
        return None
    try:
        return dt.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


class BuildNameError(RecipegenError):
    """A build name that names no catalog build: the nearest ones, how to say it, how to describe one's own."""

    def __init__(
        self,
        option: str,
        value: str,
        why: str,
        engine: Engine | None,
        near: list[Build],
        older: tuple[str, str] | None = None,  # (engine, version) older than every release with a file
    ) -> None:
        self.older = older
        nearest = f"; nearest known: {', '.join(f'{b.id} ({b.released})' for b in near)}" if near else ""
        release = next((b for b in near if b.provenance == "official" and parse_version(b.version)), None)
        example = f"{engine.id}=={release.version}" if engine and release else None
        say = f"say it as {option} {example}" if example else f"give a build id ({option} {near[0].id})" if near else ""
        parent = near[0].id if near else "a release"
        private = f"describe your build in --recipes DIR as engines/<engine>/<id>.yaml with `extends: {parent}`"
        hint = f"{say}, or {private}" if say else private
        super().__init__(f"{option} {value}: {why}{nearest}", hint)


def official_line(engine: Engine, until: dt.date | None = None, build_numbers: bool | None = None) -> list[Build]:
    """The engine's official releases with a version (of one kind, when `build_numbers` says which), oldest first."""
    line = [
        b
        for b in engine.builds
        if b.provenance == "official"
        and (parsed := parse_version(b.version))
        and (build_numbers is None or parsed.build_number == build_numbers)
        and (until is None or b.released <= until)
    ]
    # a post release after its own (0.5.3, then 0.5.3.post1), both named by "0.5.3" unless spelled out
    return sorted(line, key=lambda b: (version_order(b.version), _post(b.version)))


def _post(version: str) -> int:
    match = re.search(r"\.post(\d+)", version)
    return int(match.group(1)) if match else -1


def version_order(version: str) -> tuple[Any, ...]:
    parsed = parse_version(version)
    return parsed.order if parsed else ()


def closest_builds(builds: list[Build], when: dt.date | None, count: int = 3) -> list[Build]:
    if when is None:
        return sorted(builds, key=lambda b: b.released, reverse=True)[:count]
    return sorted(builds, key=lambda b: (abs((b.released - when).days), b.id))[:count]


def engine_named(catalog: Catalog, name: str) -> Engine | None:
    key = name.strip().casefold()
    for engine in catalog.engines.values():
        if key in {n.casefold() for n in (engine.id, engine.name, *engine.aliases)}:
            return engine
    return None


def for_version(
    engine: Engine, version: str, given: str, option: str = "--build", as_of: dt.date | None = None
) -> BuildResolution:
    """A version of the engine → the release it is, or the nearest release at or below it, said so."""
    parsed = parse_version(version)
    if parsed is None:
        known = official_line(engine)
        example = known[-1].version if known else "0.30.0"
        what = (
            f"no {engine.name} build in the catalog was made at commit {version}"
            if HEX.fullmatch(version.casefold())
            else f"{version!r} is not a version"
        )
        raise RecipegenError(f"{option} {given}: {what}", f"name a release, e.g. {engine.id}=={example}")
    line = official_line(engine, as_of, parsed.build_number)
    if not line and parsed.build_number and official_line(engine, as_of):
        example = official_line(engine, as_of)[-1].version
        raise RecipegenError(
            f"{option} {given}: {version!r} is a build number (how llama.cpp names releases), not a "
            f"{engine.name} version",
            f"e.g. {engine.id}=={example}",
        )
    if not line:
        raise RecipegenError(f"{option} {given}: the catalog has no dated {engine.name} release", "use a build id")
    below = [b for b in line if version_order(b.version) <= parsed.order]
    if not below:
        raise BuildNameError(
            option,
            given,
            f"older than the oldest {engine.name} release in the catalog",
            engine,
            line[:2],
            older=(engine.id, version),
        )
    # the release spelled exactly as given (0.5.3 is not its 0.5.3.post1), else the newest at or below it
    chosen = next((b for b in reversed(below) if b.version.lstrip("vV") == parsed.text), below[-1])
    same = parse_version(chosen.version)
    exact = same is not None and same.text == parsed.text
    if version_order(chosen.version) == parsed.order and (parsed.final or exact):  # a catalog pre-release is itself
        how = f"{engine.name} {chosen.version} = build {chosen.id} ({chosen.released})"
        return BuildResolution(given, chosen.id, "version", "exact" if exact else "nearest", how)
    if not parsed.final:
        kind = "a development build" if parsed.dev is not None else "a pre-release"
        seen = [f"commit {parsed.commit}"] if parsed.commit else []
        seen += [f"built {parsed.built}"] if parsed.built else []
        extra = f" ({', '.join(seen)})" if seen else ""
        how = (
            f"{engine.name} {parsed.text} is {kind}{extra} before {'.'.join(map(str, parsed.release))}: answering for "
            f"{chosen.id} ({chosen.released}), the release before it; its own changes are not in the facts"
        )
        return BuildResolution(given, chosen.id, "version-string", "approximate", how)
    newer = "newer than any release in the catalog; " if chosen is line[-1] else ""
    later = [
        b
        for b in engine.builds
        if b.provenance == "official" and parse_version(b.version) is None and b.released > chosen.released
    ]
    how = (
        f"{engine.name} {parsed.text}: {newer}answering for {chosen.id} ({chosen.released}), "
        "the nearest known release at or below it"
    )
    if chosen is line[-1] and later:  # e.g. a build made at a commit: its build number is not known
        newest = max(later, key=lambda b: b.released)
        how = (
            f"{engine.name} {parsed.text}: answering for {chosen.id} ({chosen.released}), the newest numbered "
            f"release at or below it ({newest.id} of {newest.released} may be nearer; its number is not known)"
        )
    return BuildResolution(given, chosen.id, "version", "nearest", how, named=(engine.id, parsed.text))


def rolling_tag(engine: Engine, stem: str) -> RollingTag | None:
    """The rolling tag a tag's stem is (latest, nightly, dev …), or the one it starts with (dev-glm52-nvfp4)."""
    tags = sorted(engine.image_names.rolling, key=lambda r: -len(r.tag))
    for rolling in tags:
        if stem == rolling.tag:
            return rolling
    for rolling in tags:
        if rolling.follows == "main" and stem.startswith(rolling.tag + "-"):
            return rolling
    return None
