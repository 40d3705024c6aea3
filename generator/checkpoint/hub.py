"""The Hugging Face Hub edge: read a checkpoint's small files (never its weights) into a typed result.

A MODEL is a Hub repo id (optionally `@revision`) or a local checkpoint folder. What is read:
config.json, hf_quant_config.json, model.safetensors.index.json, the safetensors headers (ranged
reads of the first bytes of each shard), the file list with sizes, and the card's `base_model`.

huggingface_hub is imported here only, lazily. HF_ENDPOINT, HF_HOME/HF_HUB_CACHE and
HF_HUB_OFFLINE are read when a command runs (not when the library was first imported), the token
comes from HF_TOKEN or the token file and is passed per request, so nothing is ever written back.
"""

from __future__ import annotations

import json
import os
import re
import struct
import unicodedata
from dataclasses import field
from pathlib import Path
from typing import Any

from ..errors import RecipegenError
from ..frozen import frozen

DEFAULT_ENDPOINT = "https://huggingface.co"
CONFIG = "config.json"
QUANT_CONFIG = "hf_quant_config.json"
INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
CARD = "README.md"
MAX_HEADER_BYTES = 100_000_000  # the safetensors format's own cap on a header
MAX_JSON_BYTES = 50_000_000  # an index of a 1T-parameter model is ~10 MB
HEADER_SHARD_LIMIT = 200
MAX_FOLDER_FILES = 5000  # beyond this many shards the per-dtype count is skipped (said so)
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")


class HubError(RecipegenError):
    """A Hub or local-folder problem: gated, missing, offline, unreadable. Exit code 2."""


class RepoNotFound(HubError):
    """The Hub answered that the repo does not exist (or is private to this token)."""


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


def looks_like_repo(value: str) -> bool:
    return _REPO_ID.match(value.split("@", 1)[0]) is not None


def is_local(value: str) -> bool:
    return Path(value).expanduser().is_dir()


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
    except OSError:
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
        if Path(os.readlink(path)).is_absolute() or not path.resolve().is_relative_to(root):
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


def parse_ref(value: str) -> tuple[str, str | None]:
    repo, _, revision = value.partition("@")
    if not _REPO_ID.match(repo) or (revision and not _REVISION.match(revision)):
        raise HubError(
            f"{value!r} is neither a local folder nor a Hub repo id",
            "name a repo as ORG/NAME (optionally ORG/NAME@REVISION) or an existing checkpoint folder",
        )
    return repo, (revision or None)


def read(value: str, *, headers: bool = True) -> Checkpoint:
    """Read the checkpoint named by `value` (local folder first, then the Hub). Raises HubError."""
    if is_local(value):
        folder = Path(value).expanduser().resolve()
        if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for ch in str(folder)):
            raise HubError(
                f"the checkpoint folder {value!r} resolves to a path with a control character",
                "move or rename the folder (or its link's target) to a name on one line",
            )
        return _read_folder(folder, value, headers)
    repo, revision = parse_ref(value)
    return _read_hub(value, repo, revision, headers)


# ---------------------------------------------------------------------------------------------
# shared parsing


def _json_bytes(raw: bytes, where: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HubError(f"{where} is not valid JSON ({exc})", "re-download the file or fix the checkpoint") from None
    if not isinstance(data, dict):
        raise HubError(f"{where} is not a JSON object", "re-download the file or fix the checkpoint")
    return data


def _json_file(path: Path, where: str) -> dict[str, Any]:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise HubError(f"{where} is larger than {MAX_JSON_BYTES // 10**6} MB", "is this really a checkpoint file?")
        raw = path.read_bytes()
    except OSError as exc:
        raise HubError(f"cannot read {where}: {exc.strerror or exc}", "check the file's permissions") from None
    return _json_bytes(raw, where)


def _list_folder(folder: Path) -> tuple[RepoFile, ...]:
    """The checkpoint's files: the folder and its direct subfolders (GGUF repos keep quants there),
    never a whole tree, so pointing at a big directory by mistake stays quick."""
    found: list[RepoFile] = []
    try:
        entries = sorted(folder.iterdir())
        for entry in entries:
            children = sorted(entry.iterdir()) if entry.is_dir() and not entry.name.startswith(".") else [entry]
            for path in children:
                if path.is_file():
                    found.append(RepoFile(str(path.relative_to(folder)), path.stat().st_size))
                if len(found) >= MAX_FOLDER_FILES:
                    raise HubError(
                        f"{folder} holds more than {MAX_FOLDER_FILES} files; it does not look like a checkpoint",
                        "point at the folder holding the checkpoint's config.json",
                    )
    except OSError as exc:
        raise HubError(f"cannot list {folder}: {exc.strerror or exc}", "check the folder's permissions") from None
    return tuple(found)


def _total_size(index: dict[str, Any]) -> int | None:
    meta = index.get("metadata")
    total = meta.get("total_size") if isinstance(meta, dict) else None
    return int(total) if isinstance(total, (int, float)) and total > 0 else None


def _card_base_models(text: str) -> tuple[str, ...]:
    if not text.startswith("---"):
        return ()
    end = text.find("\n---", 3)
    if end < 0:
        return ()
    import yaml  # only a model card's front matter needs it: explain of a catalog model never does

    try:
        meta = yaml.safe_load(text[3:end])
    except yaml.YAMLError:
        return ()
    base = meta.get("base_model") if isinstance(meta, dict) else None
    if isinstance(base, str):
        return (base,)
    if isinstance(base, list):
        return tuple(b for b in base if isinstance(b, str))
    return ()


_DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2, "U16": 2}


def _count_header(header: dict[str, Any], counts: dict[str, int]) -> int:
    """Add a safetensors header's elements per dtype to `counts`; return its tensor bytes."""
    total = 0
    for name, info in header.items():
        if name == "__metadata__" or not isinstance(info, dict):
            continue
        dtype = str(info.get("dtype"))
        shape = info.get("shape") or []
        elements = 1
        for dim in shape:
            elements *= int(dim)
        counts[dtype] = counts.get(dtype, 0) + elements
        offsets = info.get("data_offsets")
        if isinstance(offsets, list) and len(offsets) == 2:
            total += int(offsets[1]) - int(offsets[0])
    return total


# ---------------------------------------------------------------------------------------------
# local folder


def _read_folder(folder: Path, ref: str, headers: bool) -> Checkpoint:
    files = _list_folder(folder)
    read_files: list[Read] = []

    def load(name: str) -> dict[str, Any] | None:
        path = folder / name
        if not path.is_file():
            return None
        read_files.append(Read(str(path), name))
        return _json_file(path, str(path))

    config = load(CONFIG)
    quant = load(QUANT_CONFIG)
    index = load(INDEX)
    base: tuple[str, ...] = ()
    if (folder / CARD).is_file():
        base = _card_base_models((folder / CARD).read_text(encoding="utf-8", errors="replace"))
        if base:
            read_files.append(Read(str(folder / CARD), "model card (base_model)"))
    counts: dict[str, int] = {}
    header_bytes: int | None = None
    notes: list[str] = []
    shards = sorted(folder.glob("*.safetensors"))
    if headers and shards:
        header_bytes = 0
        for shard in shards:
            try:
                with shard.open("rb") as handle:
                    (length,) = struct.unpack("<Q", handle.read(8))
                    if length > MAX_HEADER_BYTES:
                        raise ValueError(f"header of {length} bytes")
                    header = json.loads(handle.read(length))
            except (OSError, ValueError, struct.error) as exc:
                notes.append(f"{shard.name}: safetensors header not readable ({exc}); counts left out")
                counts, header_bytes = {}, None
                break
            header_bytes += _count_header(header, counts)
        else:
            read_files.append(Read(f"{folder}/*.safetensors", "safetensors headers"))
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
        index_total_size=_total_size(index) if index else None,
        dtype_elements=counts,
        header_bytes=header_bytes or None,
        files=files,
        base_model=base,
        read=tuple(read_files),
        notes=tuple(notes),
    )


# ---------------------------------------------------------------------------------------------
# the Hub


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def offline() -> bool:
    return (os.environ.get("HF_HUB_OFFLINE") or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def cache_dir() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface"
    )
    return Path(home).expanduser() / "hub"


def token() -> str | None:
    """HF_TOKEN, else the token file of `hf auth login` (read only; never written)."""
    value = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    if value:
        return value.strip() or None
    home = os.environ.get("HF_HOME") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface"
    )
    path = Path(os.environ.get("HF_TOKEN_PATH") or Path(home).expanduser() / "token")
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text or None


def _explain(exc: Exception, repo: str, revision: str | None, what: str) -> HubError:
    """One line with a next step for every way a Hub request fails."""
    from huggingface_hub import errors

    where = endpoint()
    if isinstance(exc, errors.GatedRepoError):
        return HubError(
            f"{repo} is a gated repo and this request was refused ({_status(exc)})",
            f"accept its terms on {where}/{repo} and log in (`hf auth login`) or set HF_TOKEN",
        )
    if isinstance(exc, errors.RevisionNotFoundError):
        return HubError(
            f"{repo} has no revision {revision!r} on {where}",
            "use a branch, tag or commit hash that exists (see the repo's Files and versions page)",
        )
    if isinstance(exc, errors.RepositoryNotFoundError):
        return RepoNotFound(
            f"no model repo {repo} on {where} (or it is private and this token cannot see it)",
            "check the spelling (ORG/NAME); for a private repo log in or set HF_TOKEN",
        )
    if isinstance(exc, (errors.OfflineModeIsEnabled, errors.LocalEntryNotFoundError)):
        if offline():
            return HubError(
                f"HF_HUB_OFFLINE is set and {what} of {repo} is not in the local cache ({cache_dir()})",
                f"unset HF_HUB_OFFLINE, or fetch it once online: hf download {repo} {CONFIG}",
            )
        return HubError(
            f"cannot reach {where} to read {what} of {repo}, and it is not in the local cache ({cache_dir()})",
            "check the network or HF_ENDPOINT; offline, known names still resolve without the Hub",
        )
    if isinstance(exc, errors.HfHubHTTPError):
        return HubError(f"{where} answered {_status(exc)} for {what} of {repo}", "retry later or check HF_ENDPOINT")
    detail = str(exc).splitlines()[0] if str(exc) else ""
    return HubError(
        f"cannot read {what} of {repo} from {where}: {type(exc).__name__}: {detail}",
        "check the network or HF_ENDPOINT; offline, set HF_HUB_OFFLINE=1 to use the local cache",
    )


def _status(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    return f"HTTP {code}" if code is not None else type(exc).__name__


def _read_hub(ref: str, repo: str, revision: str | None, headers: bool) -> Checkpoint:
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub import errors as hf_errors
    from huggingface_hub.utils.tqdm import disable_progress_bars

    disable_progress_bars()  # stderr carries one-line messages only

    url_base = endpoint()
    # False, not None, when there is no token: the library then does not look for (or refresh and
    # persist) one of its own
    auth: str | bool = token() or False
    cache = str(cache_dir())
    is_offline = offline()
    api = HfApi(endpoint=url_base, token=auth)
    read_files: list[Read] = []
    notes: list[str] = []
    rev = revision or "main"

    files: tuple[RepoFile, ...] = ()
    commit: str | None = None
    base: tuple[str, ...] = ()
    names: set[str] | None = None
    if not is_offline:
        try:
            info = api.model_info(repo, revision=revision, files_metadata=True)
        except Exception as exc:  # every failure becomes one line with a next step
            raise _explain(exc, repo, revision, "the file list") from None
        commit = info.sha
        files = tuple(RepoFile(s.rfilename, s.size) for s in info.siblings or [])
        names = {f.path for f in files}
        card = info.card_data
        if card is not None:
            value = getattr(card, "base_model", None)
            base = (value,) if isinstance(value, str) else tuple(v for v in value or [] if isinstance(v, str))
        read_files.append(
            Read(f"{url_base}/api/models/{repo}" + (f"/revision/{revision}" if revision else ""), "file list, card")
        )

    def fetch(name: str, required: bool) -> dict[str, Any] | None:
        if names is not None and name not in names:
            return None
        try:
            path = hf_hub_download(
                repo,
                name,
                revision=revision,
                endpoint=url_base,
                token=auth,
                cache_dir=cache,
                local_files_only=is_offline,
            )
        except hf_errors.EntryNotFoundError:
            return None
        except Exception as exc:
            if is_offline and not required:
                return None
            raise _explain(exc, repo, revision, name) from None
        read_files.append(Read(f"{url_base}/{repo}/blob/{commit or rev}/{name}", name))
        nonlocal files
        if names is None:  # offline: list what the cached snapshot holds
            snapshot = Path(path).parent
            files = tuple(
                RepoFile(str(p.relative_to(snapshot)), p.stat().st_size if p.exists() else None)
                for p in sorted(snapshot.rglob("*"))
                if p.is_file()
            )
        return _json_file(Path(path), f"{repo}/{name}")

    config = fetch(CONFIG, True)
    if config is None and is_offline:
        raise HubError(
            f"HF_HUB_OFFLINE is set and {CONFIG} of {repo} is not in the local cache ({cache})",
            f"unset HF_HUB_OFFLINE, or fetch it once online: hf download {repo} {CONFIG}",
        )
    quant = fetch(QUANT_CONFIG, False)
    index = fetch(INDEX, False)

    counts: dict[str, int] = {}
    header_bytes: int | None = None
    shards = sorted(f.path for f in files if f.path.endswith(".safetensors") and "/" not in f.path)
    if headers and shards and not is_offline:
        if len(shards) > HEADER_SHARD_LIMIT:
            notes.append(f"{len(shards)} safetensors shards: per-dtype counts not read (limit {HEADER_SHARD_LIMIT})")
        else:
            try:
                meta = api.get_safetensors_metadata(repo, revision=revision)
                header_bytes = 0
                for file_meta in meta.files_metadata.values():
                    for tensor in file_meta.tensors.values():
                        elements = 1
                        for dim in tensor.shape:
                            elements *= int(dim)
                        counts[tensor.dtype] = counts.get(tensor.dtype, 0) + elements
                        header_bytes += tensor.data_offsets[1] - tensor.data_offsets[0]
                read_files.append(Read(f"{url_base}/{repo}", f"safetensors headers of {len(shards)} file(s)"))
            except Exception as exc:  # counts are a bonus; the index and file sizes still give the size
                counts, header_bytes = {}, None
                notes.append(f"safetensors headers not read ({type(exc).__name__}); sizes come from the index/files")
    if config is None and not any(f.path.endswith(".gguf") for f in files):
        raise HubError(
            f"{repo} has no {CONFIG} and no .gguf file on {url_base}",
            "recipegen reads a model's architecture from config.json; name the original (non-quantized) repo",
        )
    return Checkpoint(
        ref=ref,
        repo_id=repo,
        revision=revision,
        commit=commit,
        folder=None,
        config=config,
        quant_config=quant,
        index_total_size=_total_size(index) if index else None,
        dtype_elements=counts,
        header_bytes=header_bytes or None,
        files=files,
        base_model=base,
        read=tuple(read_files),
        notes=tuple(notes),
    )
