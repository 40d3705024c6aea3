"""A local checkpoint folder: reading it (its small files, the file list, the card's base_model, the
safetensors headers from each shard's first bytes) into a files.Checkpoint, and checking that a container
can mount it whole (links out of the folder; a Hugging Face cache snapshot's blobs/). No network.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..bounds import MAX_BYTES, in_range, range_error
from ..errors import RecipegenError
from .files import (
    CARD,
    CONFIG,
    INDEX,
    QUANT_CONFIG,
    Checkpoint,
    HubError,
    Read,
    RepoFile,
    is_regular,
    json_file,
    read_regular,
    stores_head,
    total_size,
)
from .gguf import SPLIT_GGUF, GgufQuant, group_quants, read_quant

MAX_HEADER_BYTES = 100_000_000  # the safetensors format's own cap on a header
MAX_FOLDER_FILES = 5000  # beyond this many shards the per-dtype count is skipped (said so)


def is_local(value: str) -> bool:
    try:  # a name too long for the filesystem, or a link loop, is no folder (is_dir raises on those)
        return Path(value).expanduser().is_dir()
    except (OSError, RuntimeError):
        return False


def outside_links(folder: Path, limit: int = 3) -> list[str]:
    """Files of the folder (and its direct subfolders) that are symbolic links to a place outside it,
    as a Hugging Face cache snapshot's are (../../blobs/…): a container that mounts the folder cannot
    follow them."""
    root = folder.resolve()
    found: list[str] = []
    try:
        entries = sorted(folder.iterdir())
        for entry in entries:
            children = sorted(entry.iterdir()) if entry.is_dir() and not entry.is_symlink() else [entry]
            for path in children:
                if path.is_symlink() and not path.resolve().is_relative_to(root):
                    found.append(str(path.relative_to(folder)))
                    if len(found) >= limit:
                        return found
    except (OSError, RuntimeError):  # RuntimeError: a link loop, which resolve() reports so
        return found
    return found


def cache_blobs(folder: Path) -> Path | None:
    """For a Hugging Face cache snapshot (…/models--ORG--NAME/snapshots/REV) whose files are relative
    links into its repo's blobs/ folder: that folder, which a container mounts beside the snapshot so
    the links resolve there too. None for any other folder, or links that go elsewhere."""
    snapshots = folder.parent
    blobs = snapshots.parent / "blobs"
    if snapshots.name != "snapshots" or not snapshots.parent.name.startswith("models--") or not blobs.is_dir():
        return None
    links = outside_links(folder, limit=MAX_FOLDER_FILES)
    if not links:
        return None
    root = blobs.resolve()
    for link in links:
        path = folder / link
        try:
            if Path(os.readlink(path)).is_absolute() or not path.resolve().is_relative_to(root):
                return None
        except (OSError, RuntimeError):  # a link loop or one that vanished: not a cache snapshot's link
            return None
    return blobs


def mountable_blobs(folder: Path) -> str | None:
    """Check that a container can read the checkpoint folder whole: no links out of it, or a Hugging Face
    cache snapshot whose links all point into its repo's blobs/ (returned: it is mounted beside the snapshot)."""
    import shlex

    links = outside_links(folder)
    blobs = cache_blobs(folder) if links else None
    if blobs is not None:
        return str(blobs)
    if links:
        cache = re.fullmatch(r"models--([\w.-]+?)--([\w.-]+)", folder.parent.parent.name)
        repo = f"{cache.group(1)}/{cache.group(2)}" if cache and folder.parent.name == "snapshots" else "REPO"
        copy = shlex.quote(f"{Path.home()}/models/{repo.rsplit('/', 1)[-1]}") if repo != "REPO" else "DIR"
        raise RecipegenError(
            f"{folder} holds links to files outside it ({', '.join(links)}; a Hugging Face cache snapshot?), "
            "which a container that mounts the folder cannot follow",
            f"point --model at a plain copy: `hf download {repo} --local-dir {copy}`, or `cp -rL` the folder",
        )
    return None


def _list_folder(folder: Path) -> tuple[RepoFile, ...]:
    """The checkpoint's files: the folder and its direct subfolders (GGUF repos keep quants there),
    never a whole tree, so pointing at a big directory by mistake stays quick."""
    found: list[RepoFile] = []
    try:
        entries = sorted(folder.iterdir())
        for entry in entries:
            children = sorted(entry.iterdir()) if entry.is_dir() and not entry.name.startswith(".") else [entry]
            for path in children:
                if is_regular(path):  # never a FIFO, device or link loop: nothing reads those
                    found.append(RepoFile(str(path.relative_to(folder)), path.stat().st_size))
                if len(found) >= MAX_FOLDER_FILES:
                    raise HubError(
                        f"{folder} holds more than {MAX_FOLDER_FILES} files; it does not look like a checkpoint",
                        "point at the folder holding the checkpoint's config.json",
                    )
    except OSError as exc:
        raise HubError(f"cannot list {folder}: {exc.strerror or exc}", "check the folder's permissions") from None
    return tuple(found)


MAX_CARD_BYTES = 256 * 1024  # a model card's front matter sits at its top


def _card_base_models(text: str) -> tuple[str, ...]:
    if not text.startswith("---"):
        return ()
    end = text.find("\n---", 3)
    if end < 0:
        return ()
    import yaml  # only a model card's front matter needs it: explain of a catalog model never does

    from ..catalog.recipe_files import RecipeFileError, compose, construct

    try:  # nesting and alias expansion bounded as in a recipe file
        node = compose(text[3:end])
        meta = construct(node) if node is not None else None
    except (yaml.YAMLError, RecipeFileError):  # malformed, deep or an alias bomb: no base_model read
        return ()
    base = meta.get("base_model") if isinstance(meta, dict) else None
    if isinstance(base, str):
        return (base,)
    if isinstance(base, list):
        return tuple(b for b in base if isinstance(b, str))
    return ()


_DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2, "U16": 2}


def _count_header(header: object, counts: dict[str, int], where: str) -> int:
    """Add a safetensors header's elements per dtype to `counts`; return its tensor bytes. A header that is
    not an object of tensors, or states a shape or offsets no file can have, is an error naming the tensor."""
    if not isinstance(header, dict):
        raise HubError(f"{where}: the safetensors header is not a JSON object", "re-download the file")
    total = 0
    for name, info in header.items():
        if name == "__metadata__" or not isinstance(info, dict):
            continue
        tensor = f"{where}: tensor {str(name)[:80]!r}"
        dtype = str(info.get("dtype"))[:16]
        shape = info.get("shape") or []
        if not isinstance(shape, list) or len(shape) > 16 or not all(in_range(d, 0, MAX_BYTES) for d in shape):
            raise HubError(f"{tensor}: shape {str(shape)[:60]} is not a list of sizes 0 to 10^16", "re-download it")
        elements = math.prod(shape)
        if elements > MAX_BYTES:
            raise HubError(range_error(f"{tensor}: elements", elements, 0, MAX_BYTES), "re-download it")
        offsets = info.get("data_offsets")
        pair: list[int] = offsets if isinstance(offsets, list) and len(offsets) == 2 else [-1, -1]
        if not all(in_range(o, 0, MAX_BYTES) for o in pair) or pair[0] > pair[1]:
            raise HubError(
                f"{tensor}: data_offsets {str(offsets)[:60]} are not 0 <= begin <= end <= 10^16", "re-download it"
            )
        counts[dtype] = counts.get(dtype, 0) + elements
        total += pair[1] - pair[0]
        if total > MAX_BYTES:
            raise HubError(range_error(f"{where}: tensor bytes", total, 0, MAX_BYTES), "re-download it")
    return total


MAX_GGUF_HEADERS = 8  # quantizations whose headers a folder read parses (each is a few MB of vocabulary)


def read_gguf_quants(folder: Path, files: tuple[RepoFile, ...]) -> tuple[GgufQuant, ...]:
    """The folder's GGUF quantizations, each complete one's header read from its own files."""
    from contextlib import ExitStack

    quants = group_quants([(f.path, f.size) for f in files])
    out = []
    for n, quant in enumerate(quants):
        if not quant.complete or n >= MAX_GGUF_HEADERS:
            out.append(quant)
            continue
        with ExitStack() as stack:

            def opener(path: str) -> Callable[[int], bytes]:
                return stack.enter_context((folder / path).open("rb")).read

            out.append(read_quant(quant, opener))
    return tuple(out)


def gguf_file_of(path: Path) -> tuple[Path, str] | None:
    """For `--model FILE.gguf` (or any part of a split set): the folder holding it and its name."""
    if not path.is_file() or not path.name.endswith(".gguf"):
        return None
    return path.parent, path.name


def read_folder(folder: Path, ref: str, headers: bool, only: str | None = None) -> Checkpoint:
    """Read a checkpoint folder; `only`: a .gguf file name in it, which (with its other parts) is the
    whole checkpoint."""
    files = _list_folder(folder)
    if only is not None:
        stem = SPLIT_GGUF.sub("", only)
        files = tuple(
            f for f in files if f.path == only or (SPLIT_GGUF.search(f.path) and SPLIT_GGUF.sub("", f.path) == stem)
        )
    read_files: list[Read] = []

    def load(name: str) -> dict[str, Any] | None:
        path = folder / name
        if only is not None or not is_regular(path):  # a chosen .gguf file is the whole checkpoint
            return None
        read_files.append(Read(str(path), name))
        return json_file(path, str(path))

    config = load(CONFIG)
    quant = load(QUANT_CONFIG)
    index = load(INDEX)
    base: tuple[str, ...] = ()
    if only is None and is_regular(folder / CARD):
        card = read_regular(folder / CARD, MAX_CARD_BYTES, str(folder / CARD))
        base = _card_base_models(card.decode("utf-8", errors="replace"))
        if base:
            read_files.append(Read(str(folder / CARD), "model card (base_model)"))
    counts: dict[str, int] = {}
    header_bytes: int | None = None
    notes: list[str] = []
    shards = (
        [folder / f.path for f in files if f.path.endswith(".safetensors") and "/" not in f.path]
        if only is None
        else []
    )
    if headers and shards:
        header_bytes = 0
        for shard in shards:
            try:
                (length,) = struct.unpack("<Q", read_regular(shard, 8, str(shard)))
                if length > MAX_HEADER_BYTES:
                    raise ValueError(f"header of {length} bytes")
                header = json.loads(read_regular(shard, 8 + length, str(shard))[8:])
            except RecursionError:
                raise HubError(f"{shard}: the safetensors header nests too deeply", "re-download the file") from None
            except (OSError, ValueError, struct.error) as exc:
                notes.append(f"{shard.name}: safetensors header not readable ({exc}); counts left out")
                counts, header_bytes = {}, None
                break
            header_bytes += _count_header(header, counts, str(shard))
        else:
            read_files.append(Read(f"{folder}/*.safetensors", "safetensors headers"))
    gguf = read_gguf_quants(folder, files)
    for q in gguf:
        if q.header is not None:
            read_files.append(Read(str(folder / q.file), f"GGUF header of {q.file}"))
        elif q.problem:
            notes.append(f"GGUF header not read: {q.problem}")
    if config is None and not any(f.path.endswith(".gguf") for f in files):
        raise HubError(
            f"{folder} has no config.json and no .gguf file",
            "point at the folder holding the checkpoint's config.json (a Hugging Face snapshot folder)",
        )
    return Checkpoint(
        ref=ref,
        repo_id=None,
        revision=None,
        commit=None,
        folder=folder.resolve(),
        config=config,
        quant_config=quant,
        index_total_size=total_size(index, str(folder / INDEX)) if index else None,
        stored_head=stores_head(index),
        dtype_elements=counts,
        header_bytes=header_bytes or None,
        files=files,
        base_model=base,
        read=tuple(read_files),
        notes=tuple(notes),
        gguf=gguf,
    )
