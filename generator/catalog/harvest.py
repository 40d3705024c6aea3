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
import re
from pathlib import Path
from typing import Any, Literal

from ..errors import RecipegenError
from ..frozen import frozen
from .index import package_folder
from .schema import Build
from .schema.common import Source

FOLDER = "harvest"
TABLES = ("architectures", "tool_parsers", "reasoning_parsers", "flags")
RAN_TABLES = ("attention_selector", "quantization")  # the release's own code run on a simulated GPU
SIBLINGS = (".detail.json", ".ran.json", ".selected.json")  # beside a release's facts file, read only when asked
ParserKind = Literal["tool", "reasoning"]
PARSER_TABLES: dict[ParserKind, str] = {"tool": "tool_parsers", "reasoning": "reasoning_parsers"}


@frozen(kw_only=True)
class Harvest:
    engine: str
    release: str
    artifact: str
    package: str  # the PyPI release the artifact is (llama.cpp: the sdist that vendors it)
    sha256: str | None
    built: str | None
    harvested_on: str
    methods: dict[str, str]  # table -> "read" / "ran"
    counts: dict[str, int]  # table -> how many names / options it holds
    read_from: dict[str, str]  # table -> the file(s) inside the package it was read from
    architectures: frozenset[str]  # every class name the release's registry loads
    tool_parsers: tuple[str, ...] | None
    reasoning_parsers: tuple[str, ...] | None
    detail_file: str | None  # per-architecture module/class/kinds/traits and the CLI options
    ran_file: str | None  # the attention-selector and quantization tables, when the release was run
    ran_on: str | None  # the day they were run
    removed: dict[str, str]  # architecture -> the last release that loaded it (the registry's own table)
    failed: dict[str, str]
    ran_failed: dict[str, dict[str, str]]  # ran table -> {method, tried_on, reason} of a run that produced none
    partial: dict[str, dict[str, Any]]  # ran table -> its failed_capabilities / case_errors, where it has any
    kernels: dict[str, Any] | None = None  # the `kernels` read table: what decides kernel verdicts in the release
    # --kv-cache-dtype values the release's selector, run, refused on every GPU and shape asked
    kv_no_backend: tuple[str, ...] = ()
    # vLLM: the side file of the backend the selector, run, returned per case (`picks`), read only when a plan asks
    selected_file: str | None = None
    # SGLang: the backend its resolution, run, picked by default (ran.py `picked`): shape -> KV asked -> capability ->
    # the backend (DSA: `prefill + decode`)
    picked: dict[str, Any] | None = None
    uploaded: str | None = None  # the day its artifact was uploaded to PyPI (the JSON simple index), where stamped
    # vLLM: the RoPE scalings get_rope builds, the config keys read with no fallback, the patch's renames
    rope: dict[str, Any] | None = None

    @property
    def released_on(self) -> str | None:
        """The release's day as a user can check it: its artifact's PyPI upload, else the wheel's build date."""
        return self.uploaded or self.built

    def parsers(self, kind: ParserKind) -> tuple[str, ...] | None:
        return self.tool_parsers if kind == "tool" else self.reasoning_parsers

    def source(self, table: str) -> Source:
        """Where a table's facts come from: the release's artifact on PyPI and the file read inside it."""
        inside = self.read_from.get(table, "")
        note = f"{table} {self.methods.get(table, 'read')} from {inside} in {self.artifact}"
        if self.sha256:
            note += f" (sha256 {self.sha256[:12]}…)"
        name, _, version = self.package.partition("==")
        url = f"https://pypi.org/project/{name}/{version}/"
        return Source(url=url, date=dt.date.fromisoformat(self.harvested_on), note=note)


_VERSION = re.compile(r"^[vb]?(\d+(?:\.\d+)*)(?:\.post(\d+))?(?![0-9A-Za-z])")


def release_key(version: str) -> tuple[int, ...] | None:
    """0.8.5 → (0, 8, 5); 0.5.3.post1 → (0, 5, 3, 0, 1), after 0.5.3 and before 0.5.4 (a post release is a
    release of its own: 0.5.3.post1 builds Llama 3.1's RoPE, 0.5.3 does not); b6200 → (6200,); else None."""
    match = _VERSION.match(version.strip())
    if not match:
        return None
    post = (0, int(match.group(2))) if match.group(2) else ()
    return (*(int(p) for p in match.group(1).split(".")), *post)


@functools.lru_cache(maxsize=1)
def _root() -> Path:
    """The harvest folder as a plain path (importlib.resources' traversable costs ~0.3 ms a file here)."""
    return package_folder("recipegen.data") / FOLDER


@functools.cache
def releases(engine: str) -> tuple[str, ...]:
    """The releases of `engine` with a harvested file (a folder listing, read on demand)."""
    folder = _root().joinpath(engine)
    if not folder.is_dir():
        return ()
    names = (p.name for p in folder.iterdir() if p.name.endswith(".json") and not p.name.endswith(SIBLINGS))
    return tuple(sorted(n[: -len(".json")] for n in names))


@functools.cache
def engines() -> tuple[str, ...]:
    root = _root()
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir())) if root.is_dir() else ()


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _count(table: Any) -> int:
    if not isinstance(table, dict):
        return 0
    if isinstance(table.get("count"), int):
        return int(table["count"])
    return len(table.get("names") or table.get("types") or ())


def summary(engine: str, release: str) -> dict[str, Any] | None:
    """What `list engines --format json` says of a release's harvest: each table's method, origin and size."""
    facts = load(engine, release)
    if facts is None:
        return None
    return {
        "file": f"data/{FOLDER}/{engine}/{release}.json",
        "artifact": facts.artifact,
        "sha256": facts.sha256,
        "built": facts.built,
        "uploaded": facts.uploaded,
        "harvested_on": facts.harvested_on,
        "tables": {
            table: {
                "method": facts.methods[table],
                "from": facts.read_from.get(table) or None,
                "count": facts.counts[table],
                **(
                    {"file": f"data/{FOLDER}/{engine}/{facts.ran_file}", "ran_on": facts.ran_on}
                    if table in RAN_TABLES
                    else {}
                ),
                **facts.partial.get(table, {}),
                **({"unread": facts.kernels.get("unread", {})} if table == "kernels" and facts.kernels else {}),
            }
            for table in facts.methods
        },
        "failed": facts.failed,
        "not_harvested": [t for t in RAN_TABLES if t not in facts.methods],
        "why_not": {
            t: facts.ran_failed.get(t)
            or {"method": None, "reason": f"not run (python scripts/harvest {engine}=={release} --run)"}
            for t in RAN_TABLES
            if t not in facts.methods
        },
    }


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
        archs = _strings(tables.get("architectures", {}).get("names"))
        read_from = {}
        for table, value in tables.items():
            where = value.get("from")
            read_from[table] = ", ".join(where) if isinstance(where, list) else str(where or "")
        return Harvest(
            engine=str(data["engine"]),
            release=str(data["release"]),
            artifact=str(data["artifact"]),
            package=str(data.get("package") or f"{data['engine']}=={data['release']}"),
            sha256=data.get("sha256"),
            built=data.get("built"),
            uploaded=data.get("uploaded"),
            harvested_on=str(data["harvested_on"]),
            methods={table: str(value["method"]) for table, value in tables.items()},
            counts={table: _count(value) for table, value in tables.items()},
            read_from=read_from,
            architectures=frozenset(archs or ()),
            tool_parsers=_names(tables.get("tool_parsers")),
            reasoning_parsers=_names(tables.get("reasoning_parsers")),
            removed=dict(tables.get("architectures", {}).get("removed") or {}),
            detail_file=data.get("detail"),
            ran_on=next((str(tables[t]["ran_on"]) for t in RAN_TABLES if "ran_on" in tables.get(t, {})), None),
            ran_file=next((str(tables[t]["file"]) for t in RAN_TABLES if t in tables and "file" in tables[t]), None),
            failed=dict(data.get("failed", {})),
            ran_failed={str(t): dict(v) for t, v in (data.get("ran_failed") or {}).items()},
            kernels=tables.get("kernels"),
            rope=tables.get("rope"),
            kv_no_backend=_strings(tables.get("attention_selector", {}).get("kv_cache_dtypes_no_backend_takes")) or (),
            selected_file=tables.get("attention_selector", {}).get("selected_file"),
            picked=tables.get("attention_selector", {}).get("picked"),
            partial={
                t: {k: tables[t][k] for k in ("failed_capabilities", "case_errors") if k in tables[t]}
                for t in RAN_TABLES
                if t in tables and any(k in tables[t] for k in ("failed_capabilities", "case_errors"))
            },
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RecipegenError(f"{name} is unreadable ({exc})", "reinstall recipegen or rerun scripts/harvest") from exc


@functools.cache
def detail(engine: str, release: str) -> dict[str, Any]:
    """A release's detail file: {architectures: name -> {module, class, kinds, traits}, flags: option -> {...}}."""
    facts = load(engine, release)
    if facts is None or facts.detail_file is None:
        return {}
    data = _sibling(engine, facts.detail_file, "scripts/harvest")
    if not isinstance(data, dict):
        raise RecipegenError(
            f"{_name(engine, facts.detail_file)} is not a mapping", "reinstall recipegen or rerun scripts/harvest"
        )
    return data


def _name(engine: str, file: str) -> str:
    return f"data/{FOLDER}/{engine}/{file}"


def _sibling(engine: str, file: str, rerun: str) -> Any:
    """A file the facts file names beside it (detail, ran, selected), parsed; unreadable → one error naming it."""
    try:
        return json.loads(_root().joinpath(engine, file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RecipegenError(
            f"{_name(engine, file)} is unreadable ({exc})", f"reinstall recipegen or rerun {rerun}"
        ) from exc


@functools.cache
def ran(engine: str, release: str) -> dict[str, Any] | None:
    """A release's `ran` tables (attention_selector: one case per shape × KV dtype × capability with the valid
    backends in priority order, the chosen one and the release's reason per rejected backend; quantization:
    method and scheme minimum capabilities, GEMM and MoE kernels per capability), or None when not run."""
    facts = load(engine, release)
    if facts is None or facts.ran_file is None:
        return None
    data = _sibling(engine, facts.ran_file, "scripts/harvest --run")
    try:
        selector = data["attention_selector"]
        reasons = selector["reasons"]
        for case in selector["cases"]:
            if "rejected" in case:
                case["rejected"] = {b: [reasons[i] for i in why] for b, why in case["rejected"].items()}
    except (KeyError, TypeError, IndexError) as exc:
        raise RecipegenError(
            f"{_name(engine, facts.ran_file)} is unreadable ({exc})",
            "reinstall recipegen or rerun scripts/harvest --run",
        ) from exc
    return data if isinstance(data, dict) else None


@functools.cache
def picks(engine: str, release: str) -> dict[str, Any] | None:
    """The backend a release's selector, run, returned per case (ran.py `selected`, kept in `<release>.selected.json`
    so that a request reads it only when a plan asks which of several kernels the release picks): shape key -> KV
    -> capability -> backend (or heads per GPU -> backend); None when the selector was not run."""
    facts = load(engine, release)
    if facts is None or facts.selected_file is None:
        return None
    data = _sibling(engine, facts.selected_file, "scripts/harvest --summaries")
    found = data.get("selected") if isinstance(data, dict) else None
    if not isinstance(found, dict):
        name = _name(engine, facts.selected_file)
        raise RecipegenError(f"{name}: `selected` is not a mapping", "rerun scripts/harvest --summaries")
    return found


def flags(engine: str, release: str) -> dict[str, dict[str, Any]] | None:
    """The CLI options read from a release's code (option -> choices/default/aliases where readable)."""
    options = detail(engine, release).get("flags")
    return options if isinstance(options, dict) else None


def kv_cache_choices(build: Build) -> list[str] | None:
    """The `--kv-cache-dtype` values the build's release accepts, when its code was read (kernels table, else
    the harvested option's choices); None when not known."""
    engine = engine_of(build)
    facts = load(engine, build.version) if engine is not None else None
    if facts is None:
        return None
    read = ((facts.kernels or {}).get("kv_cache_dtypes") or {}).get("choices")
    if isinstance(read, list):
        return [str(c) for c in read]
    choices = ((flags(engine, build.version) or {}) if engine is not None else {}).get("--kv-cache-dtype", {})
    found = choices.get("choices")
    return [str(c) for c in found] if isinstance(found, list) else None


def kv_no_backend(build: Build) -> tuple[str, ...]:
    """The `--kv-cache-dtype` values no attention backend of the build's release takes (its selector, run on
    simulated GPUs, refused them for every shape): a CLI choice that stops the server at start."""
    engine = engine_of(build)
    facts = load(engine, build.version) if engine is not None else None
    return facts.kv_no_backend if facts is not None else ()


def engine_of(build: Build) -> str | None:
    """The harvested engine an official build is a release of (its id is `<engine>-<version>`)."""
    if build.provenance != "official":
        return None
    if build.id in _ENGINE_OF:
        return _ENGINE_OF[build.id]
    found = next((e for e in engines() if build.id == f"{e}-{build.version}"), None)
    _ENGINE_OF[build.id] = found
    return found


_ENGINE_OF: dict[str, str | None] = {}


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


def removed_in(build: Build, architecture: str) -> str | None:
    """The last release that loaded `architecture`, when the build's registry lists it as dropped."""
    harvest = of(build)
    return harvest.removed.get(architecture) if harvest is not None else None


def rope_refusal(build: Build, rope_type: str, keys: tuple[str, ...]) -> str | None:
    """Why the build's release cannot build a checkpoint's RoPE scaling (its `rope` table, read from its
    get_rope and config code), or None: it can, or the release's table was not read."""
    harvest = of(build)
    table = harvest.rope if harvest is not None else None
    if not isinstance(table, dict) or not isinstance(table.get("types"), list):
        return None
    missing = [k for k in table.get("requires") or () if k not in keys]
    if missing:
        return (
            f"its RoPE code reads rope_scaling[{missing[0]!r}] with no fallback and the config spells the type only as"
            f" {' and '.join(keys)} (KeyError: {missing[0]!r} at start-up)"
        )
    renamed = table.get("renamed") or {}
    seen = renamed.get(rope_type, rope_type) if isinstance(renamed, dict) else rope_type
    if seen not in table["types"]:
        known = ", ".join(str(t) for t in table["types"])
        return f"its get_rope has no {rope_type!r} RoPE scaling (it builds {known}: 'Unknown RoPE scaling type')"
    return None


def rope_source(build: Build) -> tuple[Source, ...]:
    engine = engine_of(build)
    return _table_source(engine, build.version, "rope") if engine is not None else ()


def parsers(build: Build, kind: ParserKind) -> tuple[str, ...] | None:
    """The build's harvested parser list (its release's own registry), or None when not harvested."""
    harvest = of(build)
    return harvest.parsers(kind) if harvest is not None else None


def registry_source_of(engine: str, release: str) -> tuple[Source, ...]:
    return _table_source(engine, release, "architectures")


def registry_source(build: Build) -> tuple[Source, ...]:
    """The source of a build's harvested registry (one shared record per release), or none."""
    engine = engine_of(build)
    return _table_source(engine, build.version, "architectures") if engine is not None else ()


@functools.cache
def _table_source(engine: str, release: str, table: str) -> tuple[Source, ...]:
    harvest = load(engine, release)
    return (harvest.source(table),) if harvest is not None and table in harvest.methods else ()


def selector_source(build: Build) -> tuple[Source, ...]:
    """Where the build's release's attention-selector table comes from (its run), when it has one."""
    engine = engine_of(build)
    return _table_source(engine, build.version, "attention_selector") if engine is not None else ()


@functools.cache
def _compiled_source(engine: str, release: str) -> tuple[Source, ...]:
    harvest = load(engine, release)
    compiled = ((harvest.kernels or {}).get("compiled_for") or {}) if harvest is not None else {}
    if harvest is None or not compiled.get("sm"):
        return ()
    read = ", ".join(f"sm_{a}" for a in compiled["sm"])
    inside = ", ".join(compiled.get("from") or ())
    note = f"compiled targets: the cubins of {harvest.artifact}'s compiled extensions ({inside}) target {read}"
    if harvest.sha256:
        note += f" (sha256 {harvest.sha256[:12]}…)"
    name, _, version = harvest.package.partition("==")
    url = f"https://pypi.org/project/{name}/{version}/"
    return (Source(url=url, date=dt.date.fromisoformat(harvest.harvested_on), note=note),)


def compiled_source(build: Build) -> tuple[Source, ...]:
    """Where the GPU architectures a build's release is compiled for were read (its wheel's cubins), or none."""
    engine = engine_of(build)
    return _compiled_source(engine, build.version) if engine is not None else ()


def flags_source(engine: str, release: str) -> tuple[Source, ...]:
    return _table_source(engine, release, "flags")


def parser_source(build: Build, kind: ParserKind) -> tuple[Source, ...]:
    engine = engine_of(build)
    return _table_source(engine, build.version, PARSER_TABLES[kind]) if engine is not None else ()
