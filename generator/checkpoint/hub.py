"""The Hugging Face Hub edge, and `read`, the entry for a MODEL: a Hub repo id (optionally `@revision`)
or a local checkpoint folder (read by folder.py). From the Hub it reads a checkpoint's small files, never
its weights, into a files.Checkpoint: config.json, hf_quant_config.json, model.safetensors.index.json,
the safetensors headers (ranged reads of the first bytes of each shard), the file list with sizes, and
the card's `base_model`.

The only module that talks to the Hub: huggingface_hub is imported here only, lazily. HF_ENDPOINT,
HF_HOME/HF_HUB_CACHE and HF_HUB_OFFLINE are read when a command runs (not when the library was first
imported), the token comes from HF_TOKEN or the token file and is passed per request, so nothing is
ever written back.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..bounds import MAX_BYTES
from .files import CONFIG, INDEX, QUANT_CONFIG, Checkpoint, HubError, Read, RepoFile, json_file, stores_head, total_size
from .folder import gguf_file_of, is_local, read_folder
from .gguf import GgufQuant, group_quants, read_quant

DEFAULT_ENDPOINT = "https://huggingface.co"
HEADER_SHARD_LIMIT = 200
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")


class RepoNotFound(HubError):
    """The Hub answered that the repo does not exist (or is private to this token)."""


def looks_like_repo(value: str) -> bool:
    return _REPO_ID.match(value.split("@", 1)[0]) is not None


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
    gguf_file = gguf_file_of(Path(value).expanduser()) if value.endswith(".gguf") else None
    if is_local(value) or gguf_file is not None:
        folder, only = gguf_file if gguf_file is not None else (Path(value).expanduser(), None)
        folder = folder.resolve()
        if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for ch in str(folder)):
            raise HubError(
                f"the checkpoint folder {value!r} resolves to a path with a control character",
                "move or rename the folder (or its link's target) to a name on one line",
            )
        return read_folder(folder, value, headers, only)
    repo, revision = parse_ref(value)
    return _read_hub(value, repo, revision, headers)


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
        return json_file(Path(path), f"{repo}/{name}")

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
                            if not 0 <= elements <= MAX_BYTES:  # as a local header is bounded (folder.py)
                                raise ValueError(f"tensor shape {tensor.shape} out of range")
                        counts[tensor.dtype] = counts.get(tensor.dtype, 0) + elements
                        begin, end = (int(o) for o in tensor.data_offsets)
                        if not 0 <= begin <= end <= MAX_BYTES:
                            raise ValueError(f"data_offsets {tensor.data_offsets} out of range")
                        header_bytes += end - begin
                read_files.append(Read(f"{url_base}/{repo}", f"safetensors headers of {len(shards)} file(s)"))
            except Exception as exc:  # counts are a bonus; the index and file sizes still give the size
                counts, header_bytes = {}, None
                notes.append(f"safetensors headers not read ({type(exc).__name__}); sizes come from the index/files")
    gguf: tuple[GgufQuant, ...] = ()
    if any(f.path.endswith(".gguf") for f in files) and not shards:
        gguf = _gguf_headers(files, lambda name: _Ranged(repo, name, revision, auth).read, notes)
        read_files.extend(
            Read(f"{url_base}/{repo}/blob/{commit or rev}/{q.file}", f"GGUF header of {q.file}")
            for q in gguf
            if q.header
        )
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
        index_total_size=total_size(index, f"{repo}/{INDEX}") if index else None,
        stored_head=stores_head(index),
        dtype_elements=counts,
        header_bytes=header_bytes or None,
        files=files,
        base_model=base,
        read=tuple(read_files),
        notes=tuple(notes),
        gguf=gguf,
    )


HUB_GGUF_HEADER_BYTES = 64_000_000  # what one quantization's header may cost in ranged reads


def _gguf_headers(
    files: tuple[RepoFile, ...], opener: Callable[[str], Callable[[int], bytes]], notes: list[str]
) -> tuple[GgufQuant, ...]:
    """The repo's GGUF quantizations; the header of the first complete one is read (the layout is the same
    in every quantization of a repo), the others keep their exact sizes from the file list."""
    quants = group_quants([(f.path, f.size) for f in files])
    out: list[GgufQuant] = []
    read_one = False
    for quant in quants:
        if quant.complete and not read_one and not offline():
            quant = read_quant(quant, opener)
            read_one = quant.header is not None
            if quant.problem:
                notes.append(f"GGUF header not read: {quant.problem}")
        out.append(quant)
    return tuple(out)


class _Ranged:
    """`read(n)` over a Hub file by ranged GETs of growing chunks, never past HUB_GGUF_HEADER_BYTES."""

    def __init__(self, repo: str, name: str, revision: str | None, auth: str | bool) -> None:
        from huggingface_hub import hf_hub_url
        from huggingface_hub.utils import _headers

        self.url = hf_hub_url(repo, name, revision=revision, endpoint=endpoint())
        self.headers = _headers.build_hf_headers(token=auth)
        self.buffer = b""
        self.pos = 0
        self.chunk = 1 << 20

    def _fetch(self, start: int, size: int) -> bytes:
        from huggingface_hub import get_session

        try:
            response = get_session().get(
                self.url, headers={**self.headers, "Range": f"bytes={start}-{start + size - 1}"}, follow_redirects=True
            )
        except Exception as exc:
            raise OSError(f"ranged read failed ({type(exc).__name__})") from None
        if response.status_code == 200:  # a server that ignores Range: the whole body came
            return bytes(response.content[start : start + size])
        if response.status_code == 416:
            return b""
        if response.status_code != 206:
            raise OSError(f"HTTP {response.status_code} for a ranged read")
        return bytes(response.content)

    def read(self, n: int) -> bytes:
        while len(self.buffer) - self.pos < n and len(self.buffer) < HUB_GGUF_HEADER_BYTES:
            more = self._fetch(len(self.buffer), max(self.chunk, n))
            if not more:
                break
            self.buffer += more
            self.chunk = min(self.chunk * 2, 16 << 20)
        data = self.buffer[self.pos : self.pos + n]
        self.pos += len(data)
        return data
