"""A cache of the *validated* catalog, taken back without validation when nothing it was made from changed.

Validation (building pydantic's validators, then running every string grammar) is most of a warm
catalog load, so a successful load is kept under a key over the code (parse_cache.code_key) and the
path, size and times of every file under every recipe root's kind folders (engines/<engine>/ build
files included). The catalog is kept pickled, and read back by an unpickler that can construct
nothing but the catalog's own record classes, its capability types and dates: no other class or
function can be named in the file, so no code but those constructors runs from it. A checksum (CRC-32)
binds the data to its key; any mismatch of key, checksum or shape, and the run falls back to a full load.
A cache is only written when reading it back gives a catalog equal to the validated one, and it is
read only from an owner-only folder and file (as parse_cache).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import gc
import io
import json
import os
import pickle
import stat
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..frozen import evolve
from .capability import Capability, CapabilitySet
from .recipe_files import MAX_BYTES
from .schema.records import is_record, to_data

if TYPE_CHECKING:
    from .index import Catalog
    from .schema import Engine

SCHEMA = "recipegen.catalog.load-cache/5"
MAX_FILES = 5000  # a user folder bigger than this is simply loaded in full


class _NoFastPath(Exception):
    pass


def key(roots: list[tuple[str, Path]], kinds: Iterable[str]) -> str | None:
    """Digest of the code and of every file under every root's kind folders; None: don't cache.

    Files are known by path, size, modification time (ns), inode and ctime, as Python knows its own sources
    by size and mtime when it reuses their bytecode: reading and hashing ~200 recipes on every start was a
    tenth of a run. An edit changes the mtime and ctime; restoring an old mtime by hand still changes ctime.
    """
    from .parse_cache import code_key, hasher, tree

    digest = hasher(f"{SCHEMA}\0{code_key()}\0".encode())
    count = 0
    try:
        # the flag vocabularies the cross-checks read (vocabulary.VOCABULARY_FOLDER): the only data a load
        # reads; the harvested releases beside them (~170 files) are read per request, never into the catalog
        data = Path(__file__).resolve().parents[1] / "data"
        for path in sorted(p for p in (data / "engine-cli").iterdir() if p.suffix == ".json"):
            info = path.stat()
            digest.update(f"data\0{path.relative_to(data)}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
        for label, root in roots:
            digest.update(f"root\0{label}\0{root.resolve()}\0".encode())
            for kind in kinds:
                folder = root / kind
                if not folder.is_dir():
                    continue
                digest.update(f"folder\0{kind}\0".encode())
                for relative, recipe in tree(folder, _is_recipe):
                    count += 1
                    if count > MAX_FILES:
                        return None
                    info = os.stat(recipe)  # symlinks followed, as a load reads them
                    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
                        return None  # the full load says what is wrong with it
                    digest.update(
                        f"{kind}/{relative}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}\0"
                        f"{info.st_ctime_ns}\0".encode()
                    )
    except (OSError, RuntimeError):  # unreadable, a symlink loop: full load
        return None
    return digest.hexdigest()


def _is_recipe(name: str) -> bool:
    """A name whose Path.suffix is .yaml or .yml (a bare ".yaml" has none)."""
    dot = name.rfind(".")
    return dot > 0 and name[dot:] in (".yaml", ".yml")


_KNOWN_FIELDS = {"hardware", "engines", "models", "deployments", "fingerprints", "surveys", "origins", "overridden"}
# what a damaged or foreign file can raise while it is read back (the full load then runs)
_DAMAGED = (
    _NoFastPath,
    pickle.UnpicklingError,
    AttributeError,
    EOFError,
    ImportError,
    IndexError,
    KeyError,
    MemoryError,
    RecursionError,
    TypeError,
    ValueError,
)


def dump(catalog: Catalog) -> bytes | None:
    """The catalog pickled, or None when it holds something this cache does not know."""
    if {f.name for f in dataclasses.fields(catalog)} != _KNOWN_FIELDS:
        return None
    payload = {name: getattr(catalog, name) for name in sorted(_KNOWN_FIELDS)}
    payload["engines"] = {engine_id: _shared(engine) for engine_id, engine in catalog.engines.items()}
    return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)


# Build fields whose items most builds repeat (a build that `extends` another inherits its kernels: 75 builds
# list ~2,000 kernels, ~130 of them distinct). The cache keeps each distinct item once (pickle writes an
# object it has seen as a reference) by making equal items of different builds one object. Within one build
# an item is never shared with itself: the gates drop repeated sources by identity, and two equal kernels of
# a build keep theirs.
_SHARED_ITEMS = ("kernels", "weight_formats")


def _shared(engine: Engine) -> Engine:
    firsts: dict[tuple[str, str], Any] = {}
    builds = []
    for build in engine.builds:
        changes: dict[str, list[Any]] = {}
        for field in _SHARED_ITEMS:
            items, used = [], set()
            for item in getattr(build, field):
                first = firsts.setdefault((field, json.dumps(to_data(item), sort_keys=True)), item)
                if id(first) in used:
                    first = item
                used.add(id(first))
                items.append(first)
            changes[field] = items
        builds.append(evolve(build, **changes))
    return evolve(engine, builds=builds)


class _CatalogUnpickler(pickle.Unpickler):
    """Names only the classes a catalog is made of; any other global in the data stops the read."""

    def find_class(self, module: str, name: str) -> Any:
        allowed = _allowed().get((module, name))
        if allowed is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a catalog")
        return allowed


@functools.cache
def _allowed() -> dict[tuple[str, str], Any]:
    from . import schema
    from .index import Origin
    from .schema import deployment, engine, fingerprint, hardware, imagenames, model, survey

    kinds: list[Any] = [Origin, Capability, CapabilitySet, dt.date]
    for module in (schema.common, deployment, engine, fingerprint, hardware, imagenames, model, survey):
        kinds.extend(v for v in vars(module).values() if is_record(v) and v.__module__ == module.__name__)
    return {(kind.__module__, kind.__qualname__): kind for kind in kinds}


def _loads(body: bytes) -> Catalog:
    from .index import KINDS, Catalog

    payload = _CatalogUnpickler(io.BytesIO(body)).load()
    if type(payload) is not dict or payload.keys() != _KNOWN_FIELDS:
        raise _NoFastPath
    catalog = Catalog(**payload)
    for kind, record_type in KINDS.items():  # the shape a full load gives: a table of records of its type by id
        table = catalog.kind(kind)
        if type(table) is not dict or not all(type(entry) is record_type for entry in table.values()):
            raise _NoFastPath
    return catalog


def _check(cache_key: str, body: bytes) -> str:
    """CRC-32 of the key and the data: it catches a file cut short, damaged or written under another key. It
    authenticates nothing, and needs not: whoever can write the owner-only file could recompute any digest (the
    restricted unpickler is the defence there). SHA-256 of the ~1.4 MB body was 5 % of a warm `explain`'s
    instructions where the CPU has no SHA extensions; CRC-32 is ~0.6 %."""
    checksum = zlib.crc32(body, zlib.crc32(cache_key.encode() + b"\0"))
    return f"crc32:{checksum:08x}"


def file_name() -> str:
    """One cache per installed copy of the code, so that two installs do not overwrite each other's."""
    from .parse_cache import hasher

    where = hasher(str(Path(__file__).resolve().parent).encode()).hexdigest()[:16]
    return f"validated-catalog-{where}.pickle"


def read(folder: Path, cache_key: str) -> Catalog | None:
    """The cached catalog for this key, or None (absent, not private, another key, damaged, unknown shape).

    The file is a header line {"schema", "key", "check"} and then the pickled catalog; `check` binds that
    data to the key, so data written for other files (or cut short) is never taken for this catalog.
    """
    from .parse_cache import read_private_bytes

    raw = read_private_bytes(folder / file_name())
    if raw is None:
        return None
    try:
        head, _, body = raw.partition(b"\n")
        header = json.loads(head)
        if not isinstance(header, dict) or header.get("key") != cache_key or header.get("schema") != SCHEMA:
            return None
        if header.get("check") != _check(cache_key, body):  # the data is not what was written under this key
            return None
        with _collector_paused():
            return _loads(body)
    except _DAMAGED:
        return None


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Build the catalog without the cyclic garbage collector, then exempt what exists from its later passes.

    A read allocates ~100k containers and frees none, so each collection the allocations trigger scans
    them all for nothing. The catalog lives as long as the process, and its entries hold no reference
    cycles (reference counting still frees them)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def write(folder: Path, cache_key: str, catalog: Catalog) -> None:
    """Keep the validated catalog, if it comes back from its pickle equal to itself."""
    from .parse_cache import write_private_bytes

    body = dump(catalog)
    if body is None:
        return
    try:
        again = _loads(body)
    except _DAMAGED:
        return
    if any(getattr(again, name) != getattr(catalog, name) for name in _KNOWN_FIELDS):
        return
    header = json.dumps({"schema": SCHEMA, "key": cache_key, "check": _check(cache_key, body)})
    write_private_bytes(folder, file_name(), header.encode() + b"\n" + body)
