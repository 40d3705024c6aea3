"""Facts harvested from each engine release's own code (data/harvest/<engine>/<version>.json).

`scripts/harvest` reads a release's wheel (AST, no import) and writes one file per release: its
architecture registry, tool- and reasoning-parser registries and CLI options, stamped with the
artifact's sha256, the day and the method of each table. An official build's architectures and
parser lists come from its release's file; the hand-written build file keeps what code cannot say.
A file is read only when a request touches its release (never at start-up), once per process.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from importlib import resources
from typing import Any, Literal

from ..errors import RecipegenError
from ..frozen import frozen
from .schema import Build
from .schema.common import Source

FOLDER = "harvest"
TABLES = ("architectures", "tool_parsers", "reasoning_parsers", "flags")
ParserKind = Literal["tool", "reasoning"]
PARSER_TABLES: dict[ParserKind, str] = {"tool": "tool_parsers", "reasoning": "reasoning_parsers"}


@frozen(kw_only=True)
class Harvest:
    engine: str
    release: str
    artifact: str
    sha256: str | None
    built: str | None
    harvested_on: str
    methods: dict[str, str]  # table -> "read" / "ran"
    read_from: dict[str, str]  # table -> the file(s) inside the package it was read from
    architectures: dict[str, dict[str, Any]]  # name -> {module, class, kinds, traits}
    tool_parsers: tuple[str, ...] | None
    reasoning_parsers: tuple[str, ...] | None
    flags: dict[str, dict[str, Any]] | None
    removed: dict[str, str]  # architecture -> the last release that loaded it (the registry's own table)
    failed: dict[str, str]

    def parsers(self, kind: ParserKind) -> tuple[str, ...] | None:
        return self.tool_parsers if kind == "tool" else self.reasoning_parsers

    def source(self, table: str) -> Source:
        """Where a table's facts come from: the release's artifact on PyPI and the file read inside it."""
        inside = self.read_from.get(table, "")
        note = f"{table} {self.methods.get(table, 'read')} from {inside} in {self.artifact}"
        if self.sha256:
            note += f" (sha256 {self.sha256[:12]}…)"
        url = f"https://pypi.org/project/{self.engine}/{self.release}/"
        return Source(url=url, date=dt.date.fromisoformat(self.harvested_on), note=note)


def _root() -> Any:
    return resources.files("recipegen.data").joinpath(FOLDER)


@functools.cache
def releases(engine: str) -> tuple[str, ...]:
    """The releases of `engine` with a harvested file (a folder listing, read on demand)."""
    folder = _root().joinpath(engine)
    if not folder.is_dir():
        return ()
    return tuple(sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json")))


def engines() -> tuple[str, ...]:
    root = _root()
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir())) if root.is_dir() else ()


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _names(table: Any) -> tuple[str, ...] | None:
    """A parser table's registered names plus the CLI's own extra choices (SGLang's `auto`)."""
    if not isinstance(table, dict):
        return None
    names = _strings(table.get("names"))
    return None if names is None else (*names, *(_strings(table.get("cli_extra")) or ()))


@functools.cache
def load(engine: str, release: str) -> Harvest | None:
    """The harvested file of one release, or None when it has none."""
    if release not in releases(engine):
        return None
    name = f"data/{FOLDER}/{engine}/{release}.json"
    try:
        data = json.loads(_root().joinpath(engine, f"{release}.json").read_text(encoding="utf-8"))
        tables: dict[str, Any] = data["tables"]
        archs = tables.get("architectures", {}).get("entries")
        flags = tables.get("flags", {}).get("options")
        read_from = {}
        for table, value in tables.items():
            where = value.get("from")
            read_from[table] = ", ".join(where) if isinstance(where, list) else str(where or "")
        return Harvest(
            engine=str(data["engine"]),
            release=str(data["release"]),
            artifact=str(data["artifact"]),
            sha256=data.get("sha256"),
            built=data.get("built"),
            harvested_on=str(data["harvested_on"]),
            methods={table: str(value["method"]) for table, value in tables.items()},
            read_from=read_from,
            architectures=archs if isinstance(archs, dict) else {},
            tool_parsers=_names(tables.get("tool_parsers")),
            reasoning_parsers=_names(tables.get("reasoning_parsers")),
            removed=dict(tables.get("architectures", {}).get("removed") or {}),
            flags=flags if isinstance(flags, dict) else None,
            failed=dict(data.get("failed", {})),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RecipegenError(f"{name} is unreadable ({exc})", "reinstall recipegen or rerun scripts/harvest") from exc


def engine_of(build: Build) -> str | None:
    """The harvested engine an official build is a release of (its id is `<engine>-<version>`)."""
    if build.provenance != "official":
        return None
    for engine in engines():
        if build.id == f"{engine}-{build.version}":
            return engine
    return None


def of(build: Build) -> Harvest | None:
    """The harvested facts of an official build's release, loaded on first use."""
    engine = engine_of(build)
    return load(engine, build.version) if engine is not None else None


def architectures(build: Build) -> list[str]:
    """The architectures a build loads: its release's registry when harvested, else its file's list."""
    harvest = of(build)
    if harvest is not None and harvest.architectures:
        return list(harvest.architectures)
    return list(build.architectures)


def registers(build: Build, architecture: str) -> bool:
    harvest = of(build)
    if harvest is not None and harvest.architectures:
        return architecture in harvest.architectures
    return architecture in build.architectures


def parsers(build: Build, kind: ParserKind) -> tuple[str, ...] | None:
    """The build's harvested parser list (its release's own registry), or None when not harvested."""
    harvest = of(build)
    return harvest.parsers(kind) if harvest is not None else None


def registry_source(build: Build) -> tuple[Source, ...]:
    """The source of a build's harvested registry (one shared record per release), or none."""
    engine = engine_of(build)
    return _table_source(engine, build.version, "architectures") if engine is not None else ()


@functools.cache
def _table_source(engine: str, release: str, table: str) -> tuple[Source, ...]:
    harvest = load(engine, release)
    return (harvest.source(table),) if harvest is not None and table in harvest.methods else ()


def parser_source(build: Build, kind: ParserKind) -> tuple[Source, ...]:
    engine = engine_of(build)
    return _table_source(engine, build.version, PARSER_TABLES[kind]) if engine is not None else ()
