"""A GGUF file's header, read as untrusted input by a small bounded reader: the metadata key/values
(numbers, short strings and short arrays kept; long arrays such as the tokenizer's kept as their length
only) and every tensor's name, shape and ggml type, from which its exact bytes follow.

Pure: the bytes come through a `read(n)` callable (a local file, or ranged reads from the Hub), and the
reader never asks for more than MAX_HEADER_BYTES in all. The format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from typing import Any

from ..catalog.ggml import GGML_TYPES
from ..frozen import frozen

MAGIC = b"GGUF"
MAX_HEADER_BYTES = 256_000_000  # metadata + tensor infos; a big vocabulary is a few MB
MAX_TENSORS = 1_000_000
MAX_KEYS = 100_000
MAX_STRING = 64_000_000
KEPT_ARRAY = 4096  # longer arrays (tokens, merges) keep their length only
SPLIT_GGUF = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$")

# metadata value types: id -> struct format (strings 8, arrays 9 are read apart)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


class GgufError(ValueError):
    """The bytes are not a GGUF header this reader accepts (the message says where and why)."""


@frozen
class Tensor:
    name: str
    shape: tuple[int, ...]
    type_name: str
    elements: int
    bytes: int


@frozen
class GgufHeader:
    version: int
    metadata: dict[str, Any]  # long arrays are their length: {"_len": n}
    tensors: tuple[Tensor, ...]
    header_bytes: int  # how much was read

    @property
    def architecture(self) -> str | None:
        arch = self.metadata.get("general.architecture")
        return arch if isinstance(arch, str) else None

    def arch_key(self, key: str) -> Any:
        """`{architecture}.{key}`: the per-architecture fields llama.cpp reads (block_count, …)."""
        return self.metadata.get(f"{self.architecture}.{key}")

    @property
    def tensor_bytes(self) -> int:
        return sum(t.bytes for t in self.tensors)

    def bytes_by_type(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.tensors:
            out[t.type_name] = out.get(t.type_name, 0) + t.bytes
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


class _Bounded:
    def __init__(self, read: Callable[[int], bytes], limit: int) -> None:
        self._read = read
        self.used = 0
        self.limit = limit

    def take(self, n: int) -> bytes:
        if n < 0 or self.used + n > self.limit:
            raise GgufError(f"the header is larger than {self.limit // 10**6} MB")
        data = self._read(n)
        if len(data) != n:
            raise GgufError(f"the file ends inside its header (at byte {self.used + len(data)})")
        self.used += n
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = self.unpack("<Q")
        if n > MAX_STRING:
            raise GgufError(f"a string of {n} bytes")
        return self.take(n).decode("utf-8", errors="replace")


def _value(r: _Bounded, kind: int) -> Any:
    if kind in _SCALARS:
        return r.unpack(_SCALARS[kind])
    if kind == 8:
        return r.string()
    if kind == 9:
        inner, count = r.unpack("<I"), r.unpack("<Q")
        if inner == 9 or (inner not in _SCALARS and inner != 8):
            raise GgufError(f"an array of value type {inner}")
        if count > MAX_HEADER_BYTES:
            raise GgufError(f"an array of {count} values")
        if count > KEPT_ARRAY:  # skipped, never kept: the tokenizer's tokens, merges, scores
            if inner == 8:
                for _ in range(count):
                    r.take(r.unpack("<Q"))
            else:
                r.take(count * struct.calcsize(_SCALARS[inner]))
            return {"_len": count}
        return [_value(r, inner) for _ in range(count)]
    raise GgufError(f"a metadata value of unknown type {kind}")


def read_header(read: Callable[[int], bytes], limit: int = MAX_HEADER_BYTES) -> GgufHeader:
    """Parse a GGUF header from `read(n)` (which returns up to n bytes). Raises GgufError."""
    r = _Bounded(read, limit)
    try:
        if r.take(4) != MAGIC:
            raise GgufError("not a GGUF file (no GGUF magic)")
        version = r.unpack("<I")
        if version not in (2, 3):
            raise GgufError(f"GGUF version {version} (this reader knows 2 and 3)")
        n_tensors, n_keys = r.unpack("<Q"), r.unpack("<Q")
        if n_tensors > MAX_TENSORS or n_keys > MAX_KEYS:
            raise GgufError(f"{n_tensors} tensors and {n_keys} metadata keys")
        metadata: dict[str, Any] = {}
        for _ in range(n_keys):
            key = r.string()
            metadata[key] = _value(r, r.unpack("<I"))
        tensors = []
        for _ in range(n_tensors):
            name = r.string()
            dims = r.unpack("<I")
            if dims > 8:
                raise GgufError(f"tensor {name[:80]!r} has {dims} dimensions")
            shape = tuple(int(r.unpack("<Q")) for _ in range(dims))
            type_id = r.unpack("<I")
            r.unpack("<Q")  # data offset
            if type_id not in GGML_TYPES:
                raise GgufError(f"tensor {name[:80]!r} has ggml type {type_id}, unknown to this reader")
            type_name, block, size = GGML_TYPES[type_id]
            elements = 1
            for d in shape:
                elements *= d
            tensors.append(Tensor(name, shape, type_name, elements, elements // block * size))
    except struct.error as exc:
        raise GgufError(f"the header is cut short ({exc})") from None
    return GgufHeader(version, metadata, tuple(tensors), r.used)


def split_parts(name: str) -> tuple[int, int] | None:
    """(part, of) for a split file name (`…-00001-of-00003.gguf`), else None."""
    m = SPLIT_GGUF.search(name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def download_pattern(file: str) -> str:
    """The `hf download --include` pattern that fetches every part of a split quant, or the file itself."""
    m = SPLIT_GGUF.search(file)
    if not m:
        return file
    return file[: m.start()] + f"-*-of-{m.group(2)}.gguf"


@frozen
class GgufQuant:
    """One quantization in a folder or repo: its first file (what llama-server's --model takes), how many
    parts it is split into, their summed file size, whether every part is there, and its header."""

    file: str
    parts: int
    bytes: int | None
    complete: bool
    header: GgufHeader | None = None
    problem: str | None = None  # why the header was not read

    @property
    def pattern(self) -> str:
        return download_pattern(self.file)


def group_quants(files: list[tuple[str, int | None]]) -> list[GgufQuant]:
    """The .gguf files as quantizations: a split set is one (its parts must all be listed, numbered 1..N),
    a vision projector (mmproj) none."""
    groups: dict[str, list[tuple[int, int, str, int | None]]] = {}
    singles: list[GgufQuant] = []
    for path, size in files:
        name = path.rsplit("/", 1)[-1]
        if not name.endswith(".gguf") or "mmproj" in name.casefold():
            continue
        parts = split_parts(name)
        if parts is None:
            singles.append(GgufQuant(path, 1, size, size is not None))
        else:
            groups.setdefault(SPLIT_GGUF.sub("", path), []).append((parts[0], parts[1], path, size))
    for members in groups.values():
        members.sort()
        count = members[0][1]
        numbers = [m[0] for m in members]
        sizes = [m[3] for m in members]
        complete = numbers == list(range(1, count + 1)) and all(m[1] == count for m in members)
        known = sum(s for s in sizes if s) if all(sizes) else None
        singles.append(GgufQuant(members[0][2], count, known, complete and known is not None))
    return sorted(singles, key=lambda q: q.file)


def part_files(quant: GgufQuant) -> list[str]:
    m = SPLIT_GGUF.search(quant.file)
    if not m:
        return [quant.file]
    stem = quant.file[: m.start()]
    return [f"{stem}-{i:05d}-of-{quant.parts:05d}.gguf" for i in range(1, quant.parts + 1)]


def read_quant(quant: GgufQuant, opener: Callable[[str], Callable[[int], bytes]]) -> GgufQuant:
    """The quant with its header read: the first part's metadata, every part's tensors. A part that
    cannot be read leaves the header out, with the reason."""
    from dataclasses import replace

    merged: GgufHeader | None = None
    try:
        for path in part_files(quant):
            header = read_header(opener(path))
            if merged is None:
                merged = header
            else:
                merged = replace(
                    merged,
                    tensors=merged.tensors + header.tensors,
                    header_bytes=merged.header_bytes + header.header_bytes,
                )
    except (GgufError, OSError) as exc:
        return replace(quant, header=None, problem=f"{path}: {exc}")
    return replace(quant, header=merged)
