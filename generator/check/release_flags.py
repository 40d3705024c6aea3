"""Lint against the flags of the release a command names, read from that release's own code (data/harvest/).

The shipped vocabularies (data/engine-cli) cover three builds; a command for vLLM 0.8.5 was checked against
0.33.0's. Where the named release was harvested, a flag it lacks is an error naming the release that
added it, and a flag the newer vocabulary lacks but the release has is not reported as unknown.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..catalog import harvest
from ..catalog.names import version_key
from ..catalog.schema import Build, Engine, Source
from ..catalog.vocabulary import ParsedArgs, Vocabulary
from .findings import Finding


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


def first_release_with(engine_id: str, flag: str) -> str | None:
    """The oldest harvested release whose CLI has the flag (read only on this error path)."""
    for release in sorted(harvest.releases(engine_id), key=lambda r: version_key(r) or ()):
        options = harvest.flags(engine_id, release)
        if options is not None and _has(_spellings(options), flag):
            return release
    return None


def _in_release(engine: Engine, build: Build, finding: Finding, source: tuple[Source, ...]) -> Finding:
    """A flag neither the newest vocabulary nor the named release's own options have: said of that release, with the
    last earlier release that had it, where one did."""
    assert finding.flag is not None
    engine_id = harvest.engine_of(build) or ""
    mine = version_key(build.version) or ()
    had = [
        r
        for r in harvest.releases(engine_id)
        if (version_key(r) or ()) < mine and _has(_spellings(harvest.flags(engine_id, r) or {}), finding.flag)
    ]
    last = max(had, key=lambda r: version_key(r) or (), default=None)
    why = f"{finding.flag} is not a {engine.name} {build.version} option (its CLI options, read from its wheel)"
    if last is not None:
        why += f"; {engine.name} {last} had it"
    return replace(finding, why=why, sources=source)


def adjust(engine: Engine, build: Build, parsed: ParsedArgs, vocab: Vocabulary, found: list[Finding]) -> list[Finding]:
    """`found` checked against the named release's own flags where it was harvested."""
    engine_id = harvest.engine_of(build)
    options = harvest.flags(engine_id, build.version) if engine_id else None
    if engine_id is None or options is None or vocab.version == build.version:
        return found  # a vocabulary dumped by running this very release knows better than reading it
    known = _spellings(options)
    # the newer vocabulary's "unknown" is wrong for a flag this release has, and names the wrong release otherwise
    source = harvest.flags_source(engine_id, build.version)
    kept = [
        _in_release(engine, build, f, source) if f.code == "unknown-flag" and f.flag is not None else f
        for f in found
        if f.code != "unknown-flag" or f.flag is None or not _has(known, f.flag)
    ]
    for spelling in dict.fromkeys(parsed.spellings.values()):
        if not spelling.startswith("--") or _has(known, spelling):
            continue
        added = first_release_with(engine_id, spelling)
        if added is None:  # no release's code shows it as read: the vocabulary's own check speaks for it
            continue
        later = (
            f"{engine.name} added it in {added}"
            if (version_key(added) or ()) > (version_key(build.version) or ())
            else f"{engine.name} {added} has it, {build.version} does not"
        )
        kept.append(
            Finding(
                "error",
                "flag-not-in-release",
                spelling,
                None,
                f"{engine.name} {build.version} exits at argument parsing (unrecognized arguments)",
                f"{build.id}'s own CLI options (read from its wheel) have no {spelling}; {later}",
                f"use {engine.id}=={added} or later, or drop {spelling}",
                source,
            )
        )
    return kept
