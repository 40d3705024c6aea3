"""A checkpoint's small files as both readers (folder.py, hub.py) see them: their names and size limit,
the typed result of reading them (Checkpoint, with what was read and the file list), HubError, and the
parsing they share (a JSON object, the index's total_size). No network, no weights.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import field
from pathlib import Path
from typing import Any

from ..bounds import MAX_BYTES, range_error
from ..errors import RecipegenError
from ..frozen import frozen
from .gguf import GgufQuant

CONFIG = "config.json"
QUANT_CONFIG = "hf_quant_config.json"
INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
CARD = "README.md"
MAX_JSON_BYTES = 50_000_000  # an index of a 1T-parameter model is ~10 MB


class HubError(RecipegenError):
    """A Hub or local-folder problem: gated, missing, offline, unreadable. Exit code 2."""


@frozen
class Read:
    """One thing read: where (a URL or a local path) and what it was."""

    url: str
    what: str


@frozen
class RepoFile:
    path: str
    size: int | None


@frozen
class Checkpoint:
    """What the checkpoint's own files say. Every field is read, none guessed."""

    ref: str  # as the user typed it
    repo_id: str | None  # None for a local folder
    revision: str | None
    commit: str | None
    folder: Path | None  # the local checkpoint folder
    config: dict[str, Any] | None
    quant_config: dict[str, Any] | None  # hf_quant_config.json (ModelOpt)
    index_total_size: int | None
    dtype_elements: dict[str, int]  # safetensors headers: stored elements per dtype
    header_bytes: int | None  # sum of tensor bytes per the headers
    files: tuple[RepoFile, ...]
    base_model: tuple[str, ...]
    read: tuple[Read, ...]  # what was actually read (the sources)
    notes: tuple[str, ...] = field(default_factory=tuple)
    gguf: tuple[GgufQuant, ...] = field(default_factory=tuple)  # the GGUF quantizations, headers read where said
    stored_head: bool = False  # the index's weight_map lists an lm_head.weight

    @property
    def name(self) -> str:
        return self.repo_id if self.repo_id is not None else str(self.folder)

    @property
    def repo(self) -> str:
        """The repo id a plan names: the Hub repo, or `local/<folder>` for a folder (not on the Hub)."""
        if self.repo_id is not None:
            return self.repo_id
        base = self.folder.name if self.folder else "model"
        cache = re.fullmatch(r"models--[^/]+?--(.+)", self.folder.parent.parent.name) if self.folder else None
        if cache and self.folder is not None and self.folder.parent.name == "snapshots":
            base = cache.group(1)  # a Hugging Face cache snapshot: the repo's name, not the revision hash
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", base)
        name = re.sub(r"[-.]{2,}", "-", name).strip("-.") or "model"  # repo ids allow no '--' or '..'
        return f"local/{name[:96]}"

    def file_size(self, suffix: str) -> int:
        return sum(f.size or 0 for f in self.files if f.path.endswith(suffix))

    @property
    def gguf_files(self) -> tuple[RepoFile, ...]:
        return tuple(f for f in self.files if f.path.endswith(".gguf"))


def _json_bytes(raw: bytes, where: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HubError(f"{where} is not valid JSON ({exc})", "re-download the file or fix the checkpoint") from None
    except RecursionError:
        raise HubError(f"{where} nests too deeply to be a config", "re-download or fix the checkpoint") from None
    if not isinstance(data, dict):
        raise HubError(f"{where} is not a JSON object", "re-download the file or fix the checkpoint")
    return data


def is_regular(path: Path) -> bool:
    """A regular file (through its links); a FIFO, device, socket, missing file or link loop is not one."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, RuntimeError):
        return False


def read_regular(path: Path, limit: int, where: str) -> bytes:
    """At most `limit` bytes of a regular file. Opened without blocking and checked after opening, so a FIFO
    or device named like a checkpoint file (or swapped in for one) is refused, never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise HubError(f"cannot read {where}: {exc.strerror or exc}", "check the file's permissions") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise HubError(f"{where} is not a regular file", "a checkpoint folder holds plain files")
        return handle.read(limit)


def json_file(path: Path, where: str) -> dict[str, Any]:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise HubError(f"{where} is larger than {MAX_JSON_BYTES // 10**6} MB", "is this really a checkpoint file?")
    except OSError as exc:
        raise HubError(f"cannot read {where}: {exc.strerror or exc}", "check the file's permissions") from None
    return _json_bytes(read_regular(path, MAX_JSON_BYTES + 1, where), where)


def total_size(index: dict[str, Any], where: str = INDEX) -> int | None:
    """metadata.total_size in bytes; absent or not a number is None, a number out of range is an error."""
    meta = index.get("metadata")
    total = meta.get("total_size") if isinstance(meta, dict) else None
    if isinstance(total, bool) or not isinstance(total, int | float):
        return None
    if not (math.isfinite(total) and 0 < total <= MAX_BYTES):
        raise HubError(
            range_error(f"{where}: metadata.total_size", total, 1, MAX_BYTES), "re-download the index or fix it"
        )
    return int(total)


def stores_head(index: dict[str, Any] | None) -> bool:
    """Whether the index's weight_map lists an output head (lm_head.weight, under any prefix)."""
    names = index.get("weight_map") if isinstance(index, dict) else None
    return isinstance(names, dict) and any(str(n).endswith("lm_head.weight") for n in names)
