"""A cache of the *validated* catalog, rebuilt without validation when nothing it was made from changed.

Validation (building pydantic's validators, then running every string grammar) is most of a warm
catalog load, so a successful load is kept as JSON — data only, no code can run from it — under a
key over the code (parse_cache.code_key) and the bytes and path of every file under every recipe
root's kind folders (engines/<engine>/ build files included). On a matching key the records are
rebuilt field by field, driven by each record's declared field types; any type it does not
know, any mismatch of key, integrity check or shape, and the run falls back to a full load. A cache
is only written when rebuilding it from its own JSON gives back a catalog equal to the validated one,
and it is read only from an owner-only folder and file (as parse_cache).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import gc
import hashlib
import json
import types
import typing
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .capability import Capability, CapabilitySet, capability_set
from .schema.records import field_types, is_record, to_data

if TYPE_CHECKING:
    from .catalog import Catalog

SCHEMA = "recipegen.catalog-cache/2"
MAX_FILES = 5000  # a user folder bigger than this is simply loaded in full


class _NoFastPath(Exception):
    pass


def key(roots: list[tuple[str, Path]], kinds: Iterable[str]) -> str | None:
    """Digest of the code and of every file under every root's kind folders; None: don't cache."""
    from .parse_cache import code_key
    from .recipe_files import RecipeFileError, read_bytes

    digest = hashlib.sha256(f"{SCHEMA}\0{code_key()}\0".encode())
    count = 0
    try:
        data = Path(__file__).resolve().parent / "data"  # the flag vocabularies the cross-checks read
        for path in sorted(p for p in data.rglob("*") if p.suffix in (".json", ".yaml")):  # never __pycache__
            info = path.stat()
            digest.update(f"data\0{path.relative_to(data)}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
        for label, root in roots:
            digest.update(f"root\0{label}\0{root.resolve()}\0".encode())
            for kind in kinds:
                folder = root / kind
                if not folder.is_dir():
                    continue
                digest.update(f"folder\0{kind}\0".encode())
                for path in sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml")):
                    count += 1
                    if count > MAX_FILES:
                        return None
                    content = read_bytes(path)
                    digest.update(f"{path.relative_to(root)}\0{len(content)}\0".encode())
                    digest.update(hashlib.sha256(content).digest())
    except (OSError, RecipeFileError, RuntimeError):  # unreadable, too large, a symlink loop: full load
        return None
    return digest.hexdigest()


_KNOWN_FIELDS = {"hardware", "engines", "models", "deployments", "fingerprints", "origins", "overridden"}
_KINDS = ("hardware", "engines", "models", "deployments", "fingerprints")


def dump(catalog: Catalog) -> dict[str, Any] | None:
    """The catalog as JSON-ready data, or None when it holds something this cache does not know."""
    if {f.name for f in dataclasses.fields(catalog)} != _KNOWN_FIELDS:
        return None
    data: dict[str, Any] = {
        kind: {entry_id: to_data(entry) for entry_id, entry in catalog.kind(kind).items()} for kind in _KINDS
    }
    data["origins"] = [[kind, entry_id, o.path, o.root] for (kind, entry_id), o in catalog.origins.items()]
    data["overridden"] = [[kind, entry_id, o.path, o.root] for kind, entry_id, o in catalog.overridden]
    data["shared"] = _share_build_items(data["engines"])
    return data


# Build fields whose items most builds repeat (a build that `extends` another inherits its kernels: 40 builds
# list 1,080 kernels, 120 of them distinct). The cache keeps each distinct item once, as an index in the
# builds, and rebuilds it once for all the builds that list it. Within one build an item is never shared
# with itself: the gates drop repeated sources by identity, and two equal kernels of a build keep theirs.
_SHARED_ITEMS = ("kernels", "weight_formats")


def _share_build_items(engines: dict[str, Any]) -> dict[str, list[Any]]:
    """Each build's kernels and weight formats as indexes into one list per field (the builds are edited)."""
    shared: dict[str, list[Any]] = {}
    for field in _SHARED_ITEMS:
        indexes: dict[str, int] = {}
        items: list[Any] = shared.setdefault(field, [])
        for engine in engines.values():
            for build in engine["builds"]:
                refs: list[Any] = []
                for item in build[field]:
                    at = indexes.setdefault(json.dumps(item, sort_keys=True), len(items))
                    if at == len(items):
                        items.append(item)
                    refs.append(item if at in refs else at)
                build[field] = refs
    return shared


def _unshare_build_items(engines: Any, shared: Any) -> None:
    """Undo _share_build_items: each index becomes the one entry rebuilt for it (the builds are edited)."""
    from .schema import Build

    if not isinstance(shared, dict) or set(shared) != set(_SHARED_ITEMS) or not isinstance(engines, dict):
        _fail()
    for field in _SHARED_ITEMS:
        annotation = field_types(Build)[field]
        if typing.get_origin(annotation) is typing.Annotated:  # weight_formats: Limits(min_length=1)
            annotation = typing.get_args(annotation)[0]
        (item_type,) = typing.get_args(annotation)
        built = [_value(item_type, item) for item in shared[field]]
        known = range(len(built))
        for engine in engines.values():
            for build in engine["builds"]:
                build[field] = [built[ref] if type(ref) is int and ref in known else ref for ref in build[field]]


def rebuild(data: Any) -> Catalog:
    """The catalog from dump()'s data (which it edits), without validation. Raises _NoFastPath on anything odd."""
    from .catalog import KINDS, Catalog, Origin

    if not isinstance(data, dict) or set(data) != {*_KNOWN_FIELDS, "shared"}:
        raise _NoFastPath
    _unshare_build_items(data["engines"], data["shared"])
    catalog = Catalog()
    for kind in _KINDS:
        table = data[kind]
        if not isinstance(table, dict):
            raise _NoFastPath
        catalog.kind(kind).update({entry_id: _value(KINDS[kind], value) for entry_id, value in table.items()})
    try:
        catalog.origins.update({(k, i): Origin(p, r) for k, i, p, r in data["origins"]})
        catalog.overridden.extend((k, i, Origin(p, r)) for k, i, p, r in data["overridden"])
    except (TypeError, ValueError) as exc:
        raise _NoFastPath from exc
    return catalog


Builder = Callable[[Any], Any]
_BUILDERS: dict[int, tuple[Any, Builder]] = {}


def _value(annotation: Any, value: Any) -> Any:
    return _builder(annotation)(value)


def _builder(annotation: Any) -> Builder:
    """A function from dumped JSON to the value of this type, made once per type (a load calls it ~35k times)."""
    known = _BUILDERS.get(id(annotation))
    if known is None:
        known = (annotation, _make(annotation))  # the annotation is kept so that its id stays its own
        _BUILDERS[id(annotation)] = known
    return known[1]


def _fail() -> typing.NoReturn:
    raise _NoFastPath


def _make(annotation: Any) -> Builder:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _builder(args[0])
    if origin is typing.Union or origin is types.UnionType:
        options = [a for a in args if a is not type(None)]
        if len(options) != 1:  # a union of several types would need validation to pick one
            return lambda value: _fail()
        inner = _builder(options[0])
        nullable = len(options) < len(args)
        return lambda value: None if value is None and nullable else inner(value)
    if origin is typing.Literal:
        allowed = frozenset(args)
        return lambda value: value if isinstance(value, str | int | bool) and value in allowed else _fail()
    if origin is list:
        item = _builder(args[0])
        return lambda value: [item(v) for v in value] if isinstance(value, list) else _fail()
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _builder(args[0])
        return lambda value: tuple(item(v) for v in value) if isinstance(value, list) else _fail()
    if origin is dict:
        key_of, item = _builder(args[0]), _builder(args[1])
        return lambda value: {key_of(k): item(v) for k, v in value.items()} if isinstance(value, dict) else _fail()
    if origin is not None:
        return lambda value: _fail()
    if is_record(annotation):
        return _record_builder(annotation)
    simple = _SIMPLE.get(annotation)
    return simple if simple is not None else lambda value: _fail()


def _record_builder(kind: type[Any]) -> Builder:
    fields: dict[str, Builder] = {}
    new, set_attribute = object.__new__, object.__setattr__

    def build(value: Any) -> Any:
        if not fields:  # filled on first use: a record's fields may refer back to the record itself
            fields.update({name: _builder(annotation) for name, annotation in field_types(kind).items()})
        if type(value) is not dict or value.keys() != fields.keys():  # a dump holds every field
            if type(value) is kind:  # an item shared between builds, rebuilt once (_unshare_build_items)
                return value
            _fail()
        entry = new(kind)
        # what unpickling a dataclass does (a load builds ~7k records): no __init__, no frozen __setattr__
        set_attribute(entry, "__dict__", {name: fields[name](v) for name, v in value.items()})
        return entry

    return build


def _exact(kind: type) -> Builder:
    return lambda value: value if type(value) is kind else _fail()


_SIMPLE: dict[Any, Builder] = {
    str: _exact(str),
    bool: _exact(bool),
    int: _exact(int),
    float: lambda value: float(value) if type(value) in (int, float) else _fail(),
    dt.date: lambda value: dt.date.fromisoformat(value) if type(value) is str else _fail(),
    CapabilitySet: lambda value: (  # shared per list of terms, as a validated load shares them
        capability_set(tuple(value)) if type(value) is list and all(type(v) is str for v in value) else _fail()
    ),
    Capability: lambda value: Capability.parse(value) if type(value) in (str, int, float) else _fail(),
}


def _check(cache_key: str, text: str) -> str:
    return hashlib.sha256(f"{cache_key}\0{text}".encode()).hexdigest()


def file_name() -> str:
    """One cache per installed copy of the code, so that two installs do not overwrite each other's."""
    where = hashlib.sha256(str(Path(__file__).resolve().parent).encode()).hexdigest()[:16]
    return f"validated-catalog-{where}.json"


def read(folder: Path, cache_key: str) -> Catalog | None:
    """The cached catalog for this key, or None (absent, not private, another key, damaged, unknown shape).

    The file is a header line {"key", "check"} and then the catalog's JSON; `check` binds that JSON
    to the key, so data written for other files (or cut short) is never taken for this catalog.
    """
    from .parse_cache import read_private_bytes

    raw = read_private_bytes(folder / file_name())
    if raw is None:
        return None
    try:
        head, _, body = raw.decode("utf-8").partition("\n")
        header = json.loads(head)
        if not isinstance(header, dict) or header.get("key") != cache_key:
            return None
        if header.get("check") != _check(cache_key, body):  # the data is not what was written under this key
            return None
        with _collector_paused():
            return rebuild(json.loads(body))
    except (_NoFastPath, UnicodeDecodeError, ValueError, TypeError, KeyError, RecursionError):
        return None


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Build the catalog without the cyclic garbage collector, then exempt what exists from its later passes.

    A rebuild allocates ~100k containers and frees none, so each collection the allocations trigger scans
    them all for nothing: half of a rebuild's time. The catalog lives as long as the process, and its
    entries hold no reference cycles (reference counting still frees them)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def write(folder: Path, cache_key: str, catalog: Catalog) -> None:
    """Keep the validated catalog, if it comes back from JSON equal to itself."""
    from .parse_cache import write_private_text

    data = dump(catalog)
    if data is None:
        return
    try:
        body = json.dumps(data, allow_nan=False, separators=(",", ":"))
        again = rebuild(json.loads(body))
    except (_NoFastPath, ValueError, TypeError, KeyError, RecursionError):
        return
    if any(getattr(again, name) != getattr(catalog, name) for name in _KNOWN_FIELDS):
        return
    header = json.dumps({"schema": SCHEMA, "key": cache_key, "check": _check(cache_key, body)})
    write_private_text(folder, file_name(), f"{header}\n{body}")
