"""The build a user names, the way they name it: a build id, ENGINE==VERSION, a version string as the engine
prints it (`pip show vllm`, `vllm --version`, 0.11.1rc2.dev123+g<sha>), or an image reference (imagetags.py).

Every answer says the rule that chose it and how sure it is; what cannot be resolved is refused in one line
naming the nearest known builds, the explicit spelling, and how to describe a private build.
The facts live in the catalog: the builds' images, refs and dates, and each engine's `image_names`.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re

from ..errors import RecipegenError
from .buildversions import HEX, BuildNameError, BuildResolution, engine_named, for_version, parse_version, version_order
from .index import Catalog

_PIP_SHOW = re.compile(r"\bName:\s*(?P<name>[A-Za-z0-9_.-]+).*?\bVersion:\s*(?P<version>\S+)", re.S)
_NAMED = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9_.]*(?:-[A-Za-z][A-Za-z0-9_.]*)*)(?:\s+version)?(?::\s*|==|\s+|-)"
    r"v?(?P<version>\d[0-9A-Za-z.+]*)$",
    re.I,
)


def resolve_build_name(
    catalog: Catalog,
    value: str,
    *,
    on: dt.date | None = None,
    as_of: dt.date | None = None,
    engine_hint: str | None = None,
    option: str = "--build",
) -> BuildResolution:
    """Resolve what the user typed; `on` is the date a rolling tag is read at (--as-of, --pulled, else today)."""
    text = " ".join(value.split())
    key = text.casefold()
    for _, build in catalog.builds():
        if build.id.casefold() == key:
            return BuildResolution(text, build.id, "build-id", "exact", f"build {build.id}")
    pip = _PIP_SHOW.search(text)
    named = _NAMED.match(text.replace("==", " ", 1) if "==" in text else text)
    if pip or named or "==" in text:
        name, version = (
            (pip["name"], pip["version"])
            if pip
            else (named["name"], named["version"])
            if named
            else (p.strip() for p in text.split("==", 1))
        )
        by_commit = _at_commit(catalog, name, version, text, option)
        if by_commit is not None:
            return by_commit
        engine = engine_named(catalog, name)
        if engine is None:
            hint = difflib.get_close_matches(name.casefold(), list(catalog.engines), n=3, cutoff=0.5)
            raise RecipegenError(
                f"unknown engine {name!r} for {option}",
                f"did you mean {', '.join(hint)}?" if hint else f"known engines: {', '.join(catalog.engines)}",
            )
        return for_version(engine, version, text, option, as_of)
    if parse_version(text) is not None:  # `vllm --version` prints the bare version
        return _bare_version(catalog, text, engine_hint, option, as_of)
    if "/" in text or ":" in text or "@" in text:
        from .imagetags import resolve_image

        return resolve_image(catalog, text, on or dt.date.today(), option, as_of)
    ids = [b.id for _, b in catalog.builds()]
    near = difflib.get_close_matches(key, ids, n=4, cutoff=0.5)
    raise RecipegenError(
        f"unknown build {text!r} for {option}",
        (f"did you mean {', '.join(near)}? " if near else "")
        + "give a build id (`recipegen list engines`), ENGINE==VERSION (vllm==0.30.0) or the image you run",
    )


def _at_commit(catalog: Catalog, name: str, commit: str, given: str, option: str) -> BuildResolution | None:
    """NAME==COMMIT (ik_llama.cpp==8337e4c, llama.cpp==0c1e570): the catalog build made at that commit, of that
    engine or of the fork its id is named after; a commit of a known fork that no build was made at is refused."""
    commit = commit.casefold()
    if not HEX.fullmatch(commit) or commit.isdigit():
        return None
    engine = engine_named(catalog, name)
    prefix = name.casefold() + "-"
    fork_builds = []
    for owner, build in catalog.builds():
        ref = (build.ref or build.version or "").casefold()
        fork = build.id.casefold().startswith(prefix) and build.provenance != "official"
        named = fork or (engine is not None and owner.id == engine.id and build.provenance == "official")
        at = len(ref) >= 7 and HEX.fullmatch(ref) is not None and (ref.startswith(commit) or commit.startswith(ref))
        if named and at:
            how = f"{name} at commit {commit} = build {build.id} ({build.provenance}, {build.released})"
            return BuildResolution(given, build.id, "commit", "exact", how)
        if fork:
            fork_builds.append((owner, build))
    if engine is None and fork_builds:
        owner = fork_builds[0][0]
        why = f"no {name} build in the catalog was made at commit {commit}"
        raise BuildNameError(option, given, why, owner, [b for _, b in fork_builds])
    return None


def _bare_version(
    catalog: Catalog, text: str, engine_hint: str | None, option: str, as_of: dt.date | None
) -> BuildResolution:
    engine = engine_named(catalog, engine_hint) if engine_hint else None
    if engine is not None:
        return for_version(engine, text, text, option, as_of)
    wanted = parse_version(text)
    owners = [
        e
        for e in catalog.engines.values()
        if any(
            wanted
            and (parsed := parse_version(b.version))
            # a build number (b6085) is llama.cpp's way to name a release, whichever number it is
            and (parsed.build_number if wanted.build_number else version_order(b.version) == wanted.order)
            for b in e.builds
        )
    ]
    if len(owners) == 1:
        return for_version(owners[0], text, text, option, as_of)
    raise RecipegenError(
        f"{option} {text}: a bare version names no engine",
        f"say which: {option} vllm=={text} or {option} sglang=={text}",
    )
