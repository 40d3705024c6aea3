"""Reading one recipe file as untrusted input: it must not hang, exhaust memory or crash the parser.

A recipe is a regular file (a FIFO, socket or device is refused without being read) of at most
MAX_BYTES, UTF-8, and YAML whose nesting and alias expansion are bounded before the C parser
builds the document: libyaml's composer recurses per nesting level (100,000 levels crash the
interpreter) and a sub-1 KB "billion laughs" document expands to 10^9 nodes in any walk.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a document is parsed: a run from the validated-catalog cache parses none
    import yaml

MAX_BYTES = 1 << 20  # 1 MiB; the largest built-in recipe is under 100 KB
MAX_DEPTH = 64
MAX_NODES = 100_000  # after expanding every alias; the largest built-in recipe has about 12,000
MAX_MAGNITUDE = 10**18  # every number a recipe states (bytes of a checkpoint included) is far below


@functools.cache
def loader() -> Any:
    """libyaml's loader is ~10x faster than the pure-Python one; same results for the YAML we accept."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RecipeFileError(Exception):
    """The file cannot be a recipe; the message says why, for a `path: (file): message` line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def read_bytes(path: Path) -> bytes:
    """The file's bytes, if it is a regular file (symlinks followed) within MAX_BYTES."""
    not_regular = RecipeFileError("not a regular file (a folder, FIFO or device?); a recipe must be a plain file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        with contextlib.suppress(OSError):
            if not stat.S_ISREG(os.stat(path).st_mode):  # a socket cannot even be opened
                raise not_regular from None
        raise RecipeFileError(f"cannot read: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # a directory named x.yaml opens too, but fdopen refuses it
        os.close(fd)
        raise not_regular
    with os.fdopen(fd, "rb") as handle:
        # asked for its size, not the bound: a read of MAX_BYTES + 1 takes a 1 MiB buffer per file (most of a
        # cache key over ~130 recipes); a file that grew since fstat is read on up to the bound
        content = handle.read(min(info.st_size, MAX_BYTES) + 1)
        if len(content) > info.st_size:
            content += handle.read(MAX_BYTES + 1 - len(content))
    if len(content) > MAX_BYTES:
        raise RecipeFileError(f"larger than {MAX_BYTES // 1024} KiB; a recipe file must be smaller")
    return content


def decode(content: bytes) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = content[: exc.start].count(b"\n") + 1
        message = f"not UTF-8 text (byte 0x{content[exc.start]:02x}); save the file as UTF-8"
        raise RecipeFileError(message, line) from None


def read_text(path: Path) -> str:
    return decode(read_bytes(path))


def _check_shape(text: str) -> None:
    """Refuse deep nesting, recursive aliases and alias bombs by streaming parser events (no tree yet)."""
    sizes: dict[str, int] = {}  # anchor -> values it expands to
    open_: list[tuple[str | None, int]] = []  # (anchor, count when the collection started)
    import yaml

    count = 0  # values so far, every alias expanded
    for event in yaml.parse(text, Loader=loader()):
        if isinstance(event, yaml.CollectionStartEvent):
            if len(open_) >= MAX_DEPTH:
                raise RecipeFileError(f"nested deeper than {MAX_DEPTH} levels", _line(event))
            open_.append((event.anchor, count))
            count += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, start = open_.pop()
            if anchor is not None:
                sizes[anchor] = count - start
        elif isinstance(event, yaml.ScalarEvent):
            count += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for anchor, _ in open_):
                raise RecipeFileError(f"alias *{event.anchor} refers to itself", _line(event))
            count += sizes.get(event.anchor or "", 1)
        if count > MAX_NODES:
            raise RecipeFileError(f"more than {MAX_NODES:,} values once YAML aliases are expanded")


def _line(event: yaml.Event) -> int | None:
    return event.start_mark.line + 1 if event.start_mark is not None else None


def compose(text: str) -> yaml.Node | None:
    """The YAML node tree of a bounded document. Raises RecipeFileError or yaml.YAMLError."""
    import yaml

    _check_shape(text)
    node: yaml.Node | None = yaml.compose(text, Loader=loader())
    return node


def construct(node: yaml.Node) -> Any:
    """Plain data (dicts, lists, scalars) from a composed node tree, without parsing the text again."""
    constructor = loader()("")
    try:
        return constructor.construct_document(node)
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits (Python's int-from-text limit)
        raise RecipeFileError(f"cannot read a value: {exc}") from None
    finally:
        constructor.dispose()


def check_numbers(data: Any, trail: str = "") -> None:
    """Every number finite and within ±MAX_MAGNITUDE, so the memory and layout arithmetic stays exact."""
    if isinstance(data, dict):
        for key, value in data.items():
            check_numbers(value, f"{trail}.{key}" if trail else str(key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            check_numbers(value, f"{trail}[{index}]")
    elif isinstance(data, int | float) and not isinstance(data, bool) and not _in_range(data):
        shown = f"{data:.3g}" if isinstance(data, float) or data.bit_length() < 200 else "a huge number"
        raise RecipeFileError(f"{trail or '(value)'}: {shown} is out of range; numbers must be finite and at most 1e18")


def _in_range(number: float) -> bool:
    if isinstance(number, int):  # compared as an int: a huge one does not fit a float
        return abs(number) <= MAX_MAGNITUDE
    return math.isfinite(number) and abs(number) <= MAX_MAGNITUDE


def is_dir(path: Path) -> bool:
    try:  # Path.is_dir() raises on a name too long or a permission error; neither is a recipe folder
        return path.is_dir()
    except OSError:
        return False
