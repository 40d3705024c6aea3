"""Lint against the flags of the release a command names, read from that release's own code (data/harvest/).

The shipped vocabularies (data/engine-cli) cover three builds; a command for vLLM 0.8.5 was checked against
0.33.0's. Where the named release was harvested, a flag it lacks is an error naming the release that
added it, and a flag the newer vocabulary lacks but the release has is not reported as unknown.

A flag the named build lacks that an older harvested release of the same engine had was removed: the finding
names the last release whose code had it and, where that code deprecated it in favour of another option (llama.cpp
reads its handler for the value: `--no-mmap` → `--load-mode none`), the replacement. A build older than the last
release that had it is checked against a vocabulary newer than itself: there the flag still works, and the
finding says until when and what replaces it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from ..catalog import harvest
from ..catalog.names import version_key
from ..catalog.schema import Build, Engine, Source
from ..catalog.vocabulary import ParsedArgs, Vocabulary
from ..frozen import frozen
from .findings import Finding

# where each engine's code (the file a harvest read an option from, as the package holds it) opens at a release
CODE_URL = {
    "llama.cpp": "https://github.com/ggml-org/llama.cpp/blob/{release}/{path}",
    "vllm": "https://github.com/vllm-project/vllm/blob/v{release}/{path}",
    "sglang": "https://github.com/sgl-project/sglang/blob/v{release}/python/{path}",
}


@frozen
class Removal:
    """A flag the named build lacks, as the harvested releases of its engine show it leaving."""

    last: str  # the newest release (ordered as the engine's releases are) whose code has the flag
    last_day: str | None  # that release's day (its artifact's upload, else its build)
    gone: str | None  # the first harvested release after it without the flag
    newer_than_build: bool  # the last release that had it is newer than the named build: the build has it too
    replacement: str | None  # what the last release's code says replaces it (an exact option and value)
    warning: str | None  # the warning that code prints for it, in its own words
    sources: tuple[Source, ...]


def _spellings(options: dict[str, dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for flag, spec in options.items():
        out.add(flag)
        out.update(spec.get("aliases") or ())
    return out


def _has(known: set[str], flag: str) -> bool:
    base = flag.split("=", 1)[0].split(".", 1)[0]
    dashed = "--" + base[2:].replace("_", "-") if base.startswith("--") else base
    candidates = {base, dashed}
    for prefix in ("--no-", "--disable-"):
        if dashed.startswith(prefix):
            candidates.add("--" + dashed[len(prefix) :])
            candidates.add("--enable-" + dashed[len(prefix) :])
    return bool(candidates & known)


def _by_key(engine_id: str) -> bool:
    """Whether the engine's harvested releases are version numbers (vLLM, SGLang); else commits, ordered by day."""
    return all(version_key(r) is not None for r in harvest.releases(engine_id))


def _day(engine_id: str, release: str) -> str:
    facts = harvest.load(engine_id, release)
    return (facts.released_on if facts is not None else None) or ""


def _order(engine_id: str, release: str) -> tuple[Any, ...]:
    return (version_key(release) or (),) if _by_key(engine_id) else (_day(engine_id, release),)


def _build_order(engine_id: str, build: Build) -> tuple[Any, ...]:
    """The named build among the harvested releases: its release's own place, else its version, else its day."""
    if build.version in harvest.releases(engine_id):
        return _order(engine_id, build.version)
    if _by_key(engine_id):
        return (version_key(build.version) or (),)
    return (build.released.isoformat(),)


def _ordered(engine_id: str) -> list[str]:
    return sorted(harvest.releases(engine_id), key=lambda r: _order(engine_id, r))


def _entry(options: dict[str, dict[str, Any]], flag: str) -> tuple[str, dict[str, Any]] | None:
    """The option a spelling names (its long form, an alias or a negation), or None."""
    base = flag.split("=", 1)[0]
    dashed = "--" + base[2:].replace("_", "-") if base.startswith("--") else base
    for name, spec in options.items():
        if dashed in (name, *(spec.get("aliases") or ()), *(spec.get("negations") or ())):
            return dashed, spec
    return None


def _live(options: dict[str, dict[str, Any]], flag: str) -> bool:
    """The release accepts the flag (an option kept only to abort with a hint does not count)."""
    entry = _entry(options, flag)
    if entry is not None:
        return "removed" not in entry[1]
    return _has(_spellings(options), flag)


def first_release_with(engine_id: str, flag: str) -> str | None:
    """The oldest harvested release whose CLI has the flag (read only on this error path)."""
    for release in _ordered(engine_id):
        options = harvest.flags(engine_id, release)
        if options is not None and _has(_spellings(options), flag):
            return release
    return None


def removal(engine_id: str, build: Build, flag: str) -> Removal | None:
    """How `flag` left the engine, when an older (or newer) harvested release than the vocabulary checked had it."""
    if not flag.startswith("-"):
        return None
    releases = _ordered(engine_id)
    had = [r for r in releases if r != build.version and _live(harvest.flags(engine_id, r) or {}, flag)]
    if not had:
        return None
    last = had[-1]
    gone = _gone_after(engine_id, last, flag)
    entry = _entry(harvest.flags(engine_id, last) or {}, flag)
    deprecated: dict[str, Any] = (entry[1].get("deprecated") or {}) if entry else {}
    by = deprecated.get("replaced_by") or {}
    replacement = by.get(entry[0]) if entry else None
    warning = deprecated.get("warning")
    sources = harvest.flags_source(engine_id, last)
    if deprecated and entry is not None:
        said = f"; it warns: {warning}" if warning else ""
        sources = (*_code(engine_id, last, entry[1], f"{flag} is deprecated here{said}"), *sources)
    return Removal(
        last=last,
        last_day=_day(engine_id, last) or None,
        gone=gone,
        newer_than_build=_order(engine_id, last) >= _build_order(engine_id, build),
        replacement=str(replacement) if replacement else None,
        warning=str(warning) if warning else None,
        sources=sources,
    )


def _code(engine_id: str, release: str, spec: dict[str, Any], note: str) -> tuple[Source, ...]:
    """The file of the release's code that retires an option (the one that said so, else its CLI builder)."""
    url = CODE_URL.get(engine_id)
    facts = harvest.load(engine_id, release)
    if url is None or facts is None:
        return ()
    path = str(spec.get("said_in") or facts.read_from.get("flags", "").split(", ")[0])
    day = dt.date.fromisoformat(facts.released_on) if facts.released_on else None
    return (Source(url=url.format(release=release, path=path.removeprefix("vendor/llama.cpp/")), date=day, note=note),)


def _gone_after(engine_id: str, release: str, flag: str) -> str | None:
    """The first harvested release after `release` whose code no longer accepts the flag."""
    releases = _ordered(engine_id)
    after = releases[releases.index(release) + 1 :] if release in releases else []
    return next((r for r in after if not _live(harvest.flags(engine_id, r) or {}, flag)), None)


def retired(
    engine: Engine, build: Build, engine_id: str, options: dict[str, dict[str, Any]], flag: str
) -> Finding | None:
    """A flag the named release still parses but whose own code retires it: kept only to stop the launch with a
    message (an error), or deprecated (a warning naming its replacement and the first release without it)."""
    entry = _entry(options, flag)
    if entry is None:
        return None
    spelling, spec = entry
    if "removed" in spec:
        said = str(spec["removed"])
        instead = (spec.get("replaced_by") or {}).get(spelling)
        return Finding(
            "error",
            "flag-removed",
            flag,
            None,
            f"{engine.name} {build.version} stops at start: {flag} is kept only to say it was removed",
            f"{build.id}'s own code answers {flag} with: {said}",
            str(instead) if instead else said if said.lower().startswith("use ") else f"drop {flag}",
            _code(engine_id, build.version, spec, f"{flag} stops the launch here"),
        )
    deprecated = spec.get("deprecated")
    if deprecated is None:
        return None
    instead = (deprecated.get("replaced_by") or {}).get(spelling)
    warning = deprecated.get("warning")
    gone = _gone_after(engine_id, build.version, flag) if build.version in harvest.releases(engine_id) else None
    then = f"; {engine.name} {gone} no longer accepts it" if gone else ""
    return Finding(
        "warn",
        "flag-deprecated",
        flag,
        None,
        f"{engine.name} {build.version} accepts {flag} but its own code deprecates it",
        (f"it warns: {str(warning).rstrip('.')}" if warning else f"{build.id}'s code marks {flag} deprecated") + then,
        f"use {instead}" if instead else f"drop {flag} before upgrading" if gone else f"plan to drop {flag}",
        _code(engine_id, build.version, spec, f"{flag} is deprecated here"),
    )


def _removed(engine: Engine, build: Build, finding: Finding, found: Removal) -> Finding:
    """An unknown-flag finding said as what it is: a flag the engine removed (or, for an older build, will)."""
    assert finding.flag is not None
    flag = finding.flag
    when = f" ({found.last_day})" if found.last_day else ""
    then = f", {found.gone} no longer" if found.gone else ""
    use = f"use {found.replacement}" if found.replacement else None
    if found.newer_than_build:
        return replace(
            finding,
            severity="warn",
            code="flag-removed-later",
            what=f"{engine.name} {build.version} still accepts it; later releases exit at argument parsing",
            why=f"{engine.name} {found.last}{when}, newer than {build.version}, still had {flag}{then}",
            fix=f"keep it on {build.version}; when you upgrade past {found.last}, {use or f'drop {flag}'}",
            sources=(*found.sources, *finding.sources),
        )
    why = f"{finding.why}; {engine.name} {found.last}{when} is the newest release read that still has it"
    if found.gone and found.gone != build.version:
        why += f" ({found.gone} has not)"
    if found.replacement:
        why += f", deprecated there in favour of {found.replacement.split()[0]}"
    elif found.warning:
        why += f" (it warns: {found.warning})"
    return replace(
        finding,
        code="flag-removed",
        what=f"{engine.name} {build.version} exits at argument parsing: {flag} was removed",
        why=why,
        fix=found.replacement or f"drop {flag}",
        sources=(*found.sources, *finding.sources),
    )


def _explained(engine: Engine, build: Build, engine_id: str, finding: Finding) -> Finding:
    if finding.code != "unknown-flag" or finding.flag is None:
        return finding
    found = removal(engine_id, build, finding.flag)
    return finding if found is None else _removed(engine, build, finding, found)


def _unknown(engine: Engine, flag: str) -> Finding:
    return Finding("error", "unknown-flag", flag, None, f"{engine.name} exits at argument parsing", "", None)


def _in_release(engine: Engine, build: Build, finding: Finding, source: tuple[Source, ...]) -> Finding:
    """A flag neither the newest vocabulary nor the named release's own options have: said of that release, with the
    last earlier release that had it, where one did."""
    assert finding.flag is not None
    why = f"{finding.flag} is not a {engine.name} {build.version} option (its CLI options, read from its wheel)"
    return replace(finding, why=why, sources=source)


def adjust(engine: Engine, build: Build, parsed: ParsedArgs, vocab: Vocabulary, found: list[Finding]) -> list[Finding]:
    """`found` checked against the named release's own flags where it was harvested: each flag it lacks that an
    earlier release had said as removed, each it still parses but retires said as its code says."""
    engine_id = harvest.engine_of(build)
    if engine_id is None:
        return found
    options = harvest.flags(engine_id, build.version)
    if options is not None:
        # what the user wrote: the flags the vocabulary parsed, and those it did not know
        written = [*parsed.spellings.values(), *(f.flag for f in found if f.code == "unknown-flag" and f.flag)]
        said = [retired(engine, build, engine_id, options, s.split("=", 1)[0]) for s in dict.fromkeys(written)]
        retiring = {f.flag: f for f in said if f is not None}
        # the release's own retirement of a flag says more than "unknown" or nothing at all
        found = [f for f in found if f.flag not in retiring] + list(retiring.values())
    if options is None or vocab.version == build.version:
        # a vocabulary dumped by running this very release knows better than reading it
        return [_explained(engine, build, engine_id, f) for f in found]
    known = _spellings(options)
    # the newer vocabulary's "unknown" is wrong for a flag this release has, and names the wrong release otherwise
    source = harvest.flags_source(engine_id, build.version)
    kept = [
        _explained(engine, build, engine_id, _in_release(engine, build, f, source))
        if f.code == "unknown-flag" and f.flag is not None
        else f
        for f in found
        if f.code != "unknown-flag" or f.flag is None or not _has(known, f.flag)
    ]
    for spelling in dict.fromkeys(parsed.spellings.values()):
        if not spelling.startswith("--") or _has(known, spelling) or any(f.flag == spelling for f in kept):
            continue
        added = first_release_with(engine_id, spelling)
        if added is None:  # no release's code shows it as read: the vocabulary's own check speaks for it
            continue
        if _order(engine_id, added) <= _order(engine_id, build.version):
            # an older release had it and this one has not, though the newer vocabulary has it again
            missing = _in_release(engine, build, _unknown(engine, spelling), source)
            kept.append(_explained(engine, build, engine_id, missing))
            continue
        kept.append(
            Finding(
                "error",
                "flag-not-in-release",
                spelling,
                None,
                f"{engine.name} {build.version} exits at argument parsing (unrecognized arguments)",
                f"{build.id}'s own CLI options (read from its wheel) have no {spelling}; {engine.name} added it in "
                f"{added}",
                f"use {engine.id}=={added} or later, or drop {spelling}",
                source,
            )
        )
    return kept
