"""How an engine release runs attention whose V is narrower than its K (data/diff_kv.yaml, read from each
release range's own model file): which backend serves such a layer on a GPU, or why that is not known, and how
wide the release caches V. The harvested selector cases state one head size for K and V, so the planner's
kernel and memory gates ask here instead."""

from __future__ import annotations

import functools
from typing import Any, Literal

from ..frozen import evolve, frozen
from .capability import Capability
from .harvest import release_key
from .schema import Kernel, Model, Source
from .schema.common import KvDtype
from .schema.engine import Build

Mode = Literal["padded", "backends", "server"]


@frozen
class Backend:
    name: str
    sm: tuple[str, ...] | None  # capability terms; None: those of the build's kernel `same_as`
    same_as: str | None
    same_as_kv: str | None
    kv_dtypes: tuple[KvDtype, ...] | None
    note: str
    args: tuple[tuple[str, str | None], ...]  # the flags that select it where it is not the release's default


@frozen
class Rule:
    engine: str
    first: tuple[int, ...]
    last: tuple[int, ...]
    mode: Mode
    decides: str
    backends: tuple[Backend, ...]
    elsewhere: str | None
    refuses: tuple[str, ...]  # mode server: backends the release's code says cannot serve such a layer
    sources: tuple[Source, ...]
    builds: tuple[str, ...] = ()  # builds named by id: a build whose version is a commit, not a release number


@frozen
class Served:
    """The backend that serves the layer on this GPU, with the KV cache dtypes it takes and the flags that
    select it (none where the release picks it by default or the user pinned it)."""

    backend: str
    kv_dtypes: tuple[KvDtype, ...]
    note: str
    args: tuple[tuple[str, str | None], ...] = ()


def _value(value: object) -> str | None:
    return None if value is None else str(value)


def _rule(engine: str, row: dict[str, Any]) -> Rule:
    # a row of builds named by id alone (a fork's) covers no release range
    first, last = (release_key(str(v)) for v in row["releases"]) if "releases" in row else ((), ())
    if first is None or last is None:
        raise ValueError(f"data/diff_kv.yaml: {engine}: releases {row['releases']!r} are not versions")
    backends = tuple(
        Backend(
            name=str(b["name"]),
            sm=tuple(str(t) for t in b["sm"]) if "sm" in b else None,
            same_as=b.get("same_as"),
            same_as_kv=b.get("same_as_kv") or b.get("same_as"),
            kv_dtypes=tuple(b["kv_dtypes"]) if "kv_dtypes" in b else None,
            note=str(b.get("note", "")),
            args=tuple((str(a["flag"]), _value(a.get("value"))) for a in b.get("args", ())),
        )
        for b in row.get("backends") or ()
    )
    sources = tuple(Source(url=s["url"], note=s.get("note")) for s in row["sources"])
    refuses = tuple(str(n) for n in row.get("refuses") or ())
    builds = tuple(str(b) for b in row.get("builds") or ())
    return Rule(
        engine, first, last, row["mode"], str(row["decides"]), backends, row.get("elsewhere"), refuses, sources, builds
    )


@functools.cache
def _rules() -> tuple[Rule, ...]:
    from .index import package_folder
    from .parse_cache import package_data

    data = package_data(package_folder("recipegen.data") / "diff_kv.yaml")
    return tuple(_rule(engine, row) for engine, rows in data.items() for row in rows)


def rule(engine: str, build: Build) -> Rule | None:
    """The rule read for this build: a row that names it by id, else the row of its release number; None where
    neither was read (a fork only by id: its model file may differ from the release's)."""
    rules = [r for r in _rules() if r.engine == engine]
    named = next((r for r in rules if build.id in r.builds), None)
    key = release_key(build.version)
    if named is not None or key is None or build.provenance == "fork":
        return named
    return next((r for r in rules if r.first <= key <= r.last), None)


def _kernel(build: Build, name: str | None, cc: Capability) -> Kernel | None:
    """The build's attention.gqa kernel of that engine name (its first word) for this GPU's capability."""
    if name is None:
        return None
    return next(
        (k for k in build.kernels if k.name.split(" ", 1)[0] == name and k.provides == "attention.gqa" and cc in k.sm),
        None,
    )


def served(found: Rule, build: Build, cc: Capability, forced: str | None = None) -> Served | None:
    """The first of the rule's backends that runs on this GPU (modes backends and server), else None.

    `forced`: the backend the user pinned (mode server: the server-wide backend is theirs, so only it may serve,
    and no flag is added for it)."""
    from .capability import capability_set

    pinned = forced is not None and found.mode == "server"
    for b in found.backends:
        if pinned and b.name.lower() != str(forced).lower():
            continue
        like = _kernel(build, b.same_as, cc)
        if b.sm is not None:
            if cc not in capability_set(b.sm):
                continue
        elif like is None:
            continue  # the build states no such kernel on this GPU
        kv_like = _kernel(build, b.same_as_kv, cc)
        stated = tuple(kv_like.kv_dtypes or ()) if kv_like is not None else ()
        # the backend's own list, as far as the kernel it is built on takes it on this GPU
        kv = tuple(d for d in b.kv_dtypes if not stated or d in stated) if b.kv_dtypes else stated
        return Served(b.name, kv or ("bf16",), b.note, () if pinned else b.args)
    return None


def as_cached(model: Model, engine: str, build: Build | None) -> Model:
    """The model as the release caches it: where it pads V to K's width (mode padded), V is cached that wide."""
    att = model.attention
    if build is None or (att.v_head_dim is None and att.window_v_head_dim is None) or att.kind != "gqa":
        return model
    found = rule(engine, build)
    if found is None or found.mode != "padded":
        return model
    return evolve(model, attention=evolve(att, v_head_dim=None, window_v_head_dim=None))
