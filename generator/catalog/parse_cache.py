"""A cache of parsed recipe YAML that cannot run code and cannot outlive the code that wrote it.

Parsing the YAML is most of a cold start (validation is a few milliseconds), so the cache keeps
only that: each recipe file's data as JSON, keyed by the SHA-256 of the file's bytes. The whole
cache is keyed on the code too — the package version, the YAML library and every module's size
and mtime — so an upgrade or an edited checkout starts afresh. Cached data is validated like
freshly parsed data on every run; JSON holds no code, and a cache file that another user could
have written (wrong owner, group- or world-writable, a symlink) is ignored.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.util
import json
import math
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import __version__

try:  # CPython's own BLAKE2 module: `hashlib` loads OpenSSL and makes a constructor for each of its algorithms first,
    # ~11 M instructions (1.4 % of a cached explain) for the digests every start-up takes
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b


def hasher(data: bytes = b"") -> blake2b:
    """A 256-bit digest of `data` to update: the caches' keys and file digests."""
    return blake2b(data, digest_size=32)


DISABLE_ENV = "RECIPEGEN_NO_CACHE"
SCHEMA = "recipegen.parse-cache/1"
MAX_CACHE_BYTES = 64 << 20
MISS: Any = object()


class _Uncacheable(Exception):
    pass


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Uncacheable
        return value
    if isinstance(value, dt.datetime):  # before date: a datetime is a date
        return {"$datetime": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$date": value.isoformat()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) and not k.startswith("$") for k in value):
            raise _Uncacheable
        return {k: _encode(v) for k, v in value.items()}
    raise _Uncacheable  # bytes, sets and other YAML types are simply parsed again


def _decode(obj: dict[str, Any]) -> Any:
    """json object_hook: a tagged date back to a date (called by the C decoder for every object)."""
    if len(obj) == 1:
        if "$date" in obj:
            return dt.date.fromisoformat(obj["$date"])
        if "$datetime" in obj:
            return dt.datetime.fromisoformat(obj["$datetime"])
    return obj


def tree(folder: Path, keep: Callable[[str], bool]) -> list[tuple[str, str]]:
    """(path under `folder`, full path) of every entry below it whose name `keep` takes, in the order and with the
    entries of `sorted(folder.rglob("*"))`: a symlinked folder is listed, not entered; an unreadable one is skipped.

    Strings from os.scandir rather than Path objects: every warm run lists the package's modules and every
    recipe file for the cache keys, and pathlib's globbing and relative_to were over half the cost of a key."""
    found: list[tuple[str, str]] = []

    def walk(top: str, under: str) -> None:
        try:
            with os.scandir(top) as listing:
                entries = list(listing)
        except PermissionError:
            return
        for entry in entries:
            relative = under + entry.name
            if keep(entry.name):
                found.append((relative, entry.path))
            if entry.is_dir(follow_symlinks=False):
                walk(entry.path, relative + "/")

    walk(str(folder), "")
    found.sort(key=lambda item: item[0].split("/"))  # as Paths sort: part by part
    return found


def code_key() -> str:
    package = Path(__file__).resolve().parents[1]  # the recipegen package: every module of it
    digest = hasher(f"{SCHEMA}\0{__version__}\0".encode())
    for relative, module in tree(package, lambda name: name.endswith(".py")):
        info = os.stat(module)
        digest.update(f"{relative}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    # the YAML library by its files (its version and whether the C loader is there), found without importing
    # it: a run from the validated-catalog cache parses no YAML
    spec = importlib.util.find_spec("yaml")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        for path in sorted(Path(folder).iterdir()):
            if path.is_file():
                info = path.stat()
                digest.update(f"yaml\0{path.name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def cache_folder() -> Path | None:
    """Where recipegen keeps its caches; None when $RECIPEGEN_NO_CACHE is set."""
    if os.environ.get(DISABLE_ENV):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "recipegen"


def _private(info: os.stat_result) -> bool:
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class ParseCache:
    """Parsed data by file digest; `save()` keeps exactly the entries this run used."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "parsed-recipes.json"
        self.code = code_key()
        self.entries: dict[str, Any] = {}
        self.used: dict[str, Any] = {}
        self.changed = False
        self._read()

    @classmethod
    def open(cls) -> ParseCache | None:
        folder = cache_folder()
        return cls(folder) if folder is not None else None

    def _read(self) -> None:
        data = read_private_json(self.path, _decode)
        if isinstance(data, dict) and data.get("code") == self.code and isinstance(data.get("files"), dict):
            self.entries = data["files"]

    def get(self, digest: str) -> Any:
        """The parsed data of the file with this digest, or MISS."""
        value = self.entries.get(digest, MISS)
        if value is not MISS:
            self.used[digest] = value
        return value

    def put(self, digest: str, data: Any) -> None:
        try:
            _encode(data)
        except (_Uncacheable, RecursionError):
            return
        self.used[digest] = data
        self.changed = True

    def save(self) -> None:
        if not self.changed and set(self.used) == set(self.entries):
            return
        try:
            files = {key: _encode(value) for key, value in self.used.items()}
        except (_Uncacheable, RecursionError):
            return
        write_private_json(self.folder, self.path.name, {"code": self.code, "files": files})


def package_data(path: Path) -> Any:
    """A data file of the package (diff_kv.yaml, gpu_hints.yaml) parsed, kept as JSON in the cache folder under the
    digest of its bytes: a warm run reads that instead of importing yaml (~90 M instructions, more than a cached
    explain's whole planning) and parsing the file. The file is read and hashed on every call, so an edited checkout
    is parsed afresh; data JSON cannot hold (an unusual YAML type) is simply parsed every time."""
    content = path.read_bytes()
    key = f"{SCHEMA}\0{__version__}\0{digest(content)}"
    folder = cache_folder()
    name = f"data-{path.stem}.json"
    if folder is not None:
        cached = read_private_json(folder / name, _decode)
        if isinstance(cached, dict) and cached.get("key") == key and "data" in cached:
            return cached["data"]
    import yaml

    from .recipe_files import loader

    data = yaml.load(content.decode("utf-8"), Loader=loader())  # the safe loader, libyaml's where installed
    if folder is not None:
        with contextlib.suppress(_Uncacheable, RecursionError):
            write_private_json(folder, name, {"key": key, "data": _encode(data)})
    return data


def read_private_json(path: Path, object_hook: Callable[[dict[str, Any]], Any] | None = None) -> Any:
    """JSON from a regular file in a folder that only this user can write, or None."""
    raw = read_private_bytes(path)
    if raw is None:
        return None
    try:
        return json.loads(raw.decode("utf-8"), object_hook=object_hook)
    except (UnicodeDecodeError, ValueError, TypeError, RecursionError):  # damaged: load the files again
        return None


def read_private_bytes(path: Path) -> bytes | None:
    """A regular file's bytes, if it and its folder are this user's and nobody else can write them."""
    folder = path.parent
    try:
        if not _private(os.lstat(folder)) or not stat.S_ISDIR(os.lstat(folder).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or not _private(info) or info.st_size > MAX_CACHE_BYTES:
            return None
        return handle.read()


def write_private_json(folder: Path, name: str, data: Any) -> None:
    """Replace folder/name atomically with data as JSON; the folder is created owner-only."""
    try:
        text = json.dumps(data, allow_nan=False)
    except ValueError:
        return
    write_private_text(folder, name, text)


def write_private_text(folder: Path, name: str, text: str) -> None:
    """Replace folder/name atomically with text; the folder is created owner-only."""
    write_private_bytes(folder, name, text.encode("utf-8"))


def write_private_bytes(folder: Path, name: str, content: bytes) -> None:
    """Replace folder/name atomically with content; the folder is created owner-only."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(os.lstat(folder)):
            return
        import tempfile  # only a write needs it (a warm run writes nothing)

        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
            os.replace(tmp, folder / name)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    except OSError:  # a read-only home is fine: the cache only saves time
        pass


def digest(content: bytes) -> str:
    return hasher(content).hexdigest()
