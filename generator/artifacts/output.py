"""Write the artifact folder so that recipegen can only ever replace what it wrote itself.

A folder recipegen wrote holds a manifest, `.recipegen.json`, naming each file it wrote with the
SHA-256 of its content. The rules, in the order they are checked:

- a new folder is built in a unique hidden staging folder beside it and renamed into place;
- an empty folder is filled in place (so `--out .` works in an empty working folder);
- a folder without a manifest that holds anything is never touched, with or without --force;
- a folder with a manifest is rewritten only with --force, and only if every file the manifest
  names still has the content recipegen wrote (an edited file is the user's now);
- everything else in the folder — `models/` with the weights, a `.env`, notes — is kept, and a
  new file never replaces a file recipegen did not write.

Writers of one folder are serialised by an advisory lock on its parent folder, so concurrent runs
see either the old or the new file set, never a mixture; every file is replaced atomically and the
manifest is written last.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import OutputConflictError, RecipegenError

MANIFEST = ".recipegen.json"
MANIFEST_SCHEMA = "recipegen.manifest/1"
EXECUTABLE = frozenset({"launch.sh", "verify.sh"})
LOCK_TIMEOUT_S = 120.0
_MAX_MANIFEST = 64 * 1024
_KERNEL_TREES = frozenset({"proc", "sys", "dev"})  # /dev/shm is an ordinary tmpfs and stays allowed
SUBFOLDERS = frozenset({"k8s"})  # the only folders recipegen writes files into inside --out


def _digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def _fail(path: Path, exc: OSError) -> RecipegenError:
    reason = exc.strerror or type(exc).__name__
    return RecipegenError(f"cannot write {path}: {reason}", "choose another --out")


def _read_regular(path: Path, limit: int | None = None) -> bytes | None:
    """The bytes of a regular file (a symlink is not followed, a FIFO never blocks); None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or (limit is not None and info.st_size > limit):
            return None
        return handle.read()


def _manifest(folder: Path) -> dict[str, tuple[str, ...]] | None:
    """The files recipegen recorded in this folder (each with the digests it may have), or None."""
    raw = _read_regular(folder / MANIFEST, _MAX_MANIFEST)
    if raw is None:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    files = data.get("files") if isinstance(data, dict) and data.get("schema") == MANIFEST_SCHEMA else None
    if not isinstance(files, dict):
        return None
    out: dict[str, tuple[str, ...]] = {}
    for name, digest in files.items():
        digests = (digest,) if isinstance(digest, str) else digest
        if not (_plain_name(name) and isinstance(digests, list | tuple) and all(isinstance(d, str) for d in digests)):
            return None
        out[name] = tuple(digests)
    return out


def _plain_name(name: str) -> bool:
    """A file name recipegen writes: plain, or one of SUBFOLDERS and a plain name inside it."""
    sub, _, base = name.rpartition("/")
    plain = bool(base) and base not in (".", "..", MANIFEST) and "\0" not in base
    return plain and (not sub or sub in SUBFOLDERS)


def _subfolder(folder: Path, name: str) -> Path:
    """The folder `name` lands in, created when missing; a link or a file in its place is refused."""
    sub = name.rpartition("/")[0]
    if not sub:
        return folder
    path = folder / sub
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        os.mkdir(path, 0o755)
        return path
    if not stat.S_ISDIR(info.st_mode):
        raise OutputConflictError(f"{path} is not a folder recipegen can write into (a link or a file)", "move it away")
    return path


def manifest_text(files: dict[str, str]) -> str:
    digests = {name: _digest(content.encode("utf-8")) for name, content in sorted(files.items())}
    return json.dumps({"schema": MANIFEST_SCHEMA, "files": digests}, indent=2) + "\n"


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on `folder` (a directory fd: nothing is created in it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise _fail(folder, exc) from None
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OutputConflictError(
                        f"another recipegen has been writing into {folder} for {LOCK_TIMEOUT_S:.0f} s", "retry later"
                    ) from None
                time.sleep(0.005)
            except OSError as exc:
                if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                    break  # a file system without locks: single writers are still safe
                raise _fail(folder, exc) from None
        yield
    finally:
        os.close(fd)


def _write_file(folder: Path, name: str, content: str) -> None:
    """Create `folder/name` atomically: a unique temporary file renamed over the name."""
    where = _subfolder(folder, name)
    base = name.rpartition("/")[2]
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".recipegen-tmp", dir=where)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8"))
        os.chmod(tmp, 0o755 if name in EXECUTABLE else 0o644)
        os.replace(tmp, where / base)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _entries(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError as exc:
        raise _fail(folder, exc) from None


def _target(out: Path) -> Path:
    """The folder to write: `out` with symlinks resolved, so every spelling shares one lock."""
    try:
        real = Path(os.path.realpath(out))
    except (OSError, ValueError) as exc:
        raise RecipegenError(f"cannot use --out {str(out)!r}: {exc}", "choose another --out") from None
    if real == real.parent:
        raise OutputConflictError("refusing to write into the file system root", "choose a new folder for --out")
    if real.parts[1] in _KERNEL_TREES and real.parts[1:3] != ("dev", "shm"):
        where = f"/{real.parts[1]} is a kernel file system, not a place for files"
        raise RecipegenError(f"cannot write {out}: {where}", "choose another --out")
    return real


def write(files: dict[str, str], out: Path, force: bool) -> bool:
    """Write the artifact files into `out`. Returns False when it already holds exactly these files."""
    folder = _target(out)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _fail(folder.parent, exc) from None
    with _locked(folder.parent):
        try:
            return _write_locked(files, folder, out, force)
        except OSError as exc:
            raise _fail(out, exc) from None


def _write_locked(files: dict[str, str], folder: Path, shown: Path, force: bool) -> bool:
    if not os.path.lexists(folder):
        _create(files, folder)
        return True
    if not folder.is_dir():
        raise OutputConflictError(f"{shown} exists and is not a folder", "choose another --out")
    present = _entries(folder)
    if not present:
        _fill(files, folder, {})
        return True
    recorded = _manifest(folder)
    if recorded is None:
        listed = ", ".join(present[:3]) + (", …" if len(present) > 3 else "")
        raise OutputConflictError(
            f"{shown} holds files recipegen did not write ({listed}) and no {MANIFEST}",
            "--force only replaces folders recipegen wrote; choose a new or empty folder for --out",
        )
    edited = [
        name
        for name, digests in sorted(recorded.items())
        if os.path.lexists(folder / name) and _digest_of(folder / name) not in digests
    ]
    wanted = {name: (_digest(content.encode("utf-8")),) for name, content in files.items()}
    if recorded == wanted and not edited:
        if all(_digest_of(folder / name) == wanted[name][0] for name in files):
            return False
        _fill(files, folder, recorded)  # only restores files recipegen wrote and someone deleted
        return True
    if not force:
        raise OutputConflictError(
            f"{shown} exists with different content",
            "pass --force to replace the files recipegen wrote there (other files are kept), or choose another --out",
        )
    if edited:
        raise OutputConflictError(
            f"{shown}/{edited[0]} was changed since recipegen wrote it, and --force keeps your edits",
            "move or delete that file, then run again",
        )
    foreign = [name for name in files if name not in recorded and os.path.lexists(folder / name)]
    if foreign:
        raise OutputConflictError(
            f"{shown}/{foreign[0]} was not written by recipegen and would be replaced",
            "move it away, then run again",
        )
    _fill(files, folder, recorded)
    return True


def add(files: dict[str, str], out: Path, under: str) -> bool:
    """Add (or replace) the files under the subfolder `under` of a folder recipegen wrote, keeping the rest as it
    is; a file recipegen wrote and someone edited since stops it, as with --force."""
    folder = _target(out)
    with _locked(folder.parent):
        recorded = _manifest(folder) if folder.is_dir() else None
        if recorded is None:
            raise OutputConflictError(
                f"{out} is not a folder recipegen wrote (no {MANIFEST})", "give the folder `recipegen … --out` wrote"
            )
        kept: dict[str, str] = {}
        for name, digests in recorded.items():
            if name.startswith(under + "/"):
                continue
            content = _read_regular(folder / name)
            if content is None:
                continue  # deleted since: it stays deleted
            if _digest(content) not in digests:
                raise OutputConflictError(
                    f"{out}/{name} was changed since recipegen wrote it", "move or delete that file, then run again"
                )
            kept[name] = content.decode("utf-8")
        try:
            return _write_locked(kept | files, folder, out, force=True)
        except OSError as exc:
            raise _fail(out, exc) from None


def _digest_of(path: Path) -> str | None:
    content = _read_regular(path)
    return None if content is None else _digest(content)


def _fill(files: dict[str, str], folder: Path, recorded: dict[str, tuple[str, ...]]) -> None:
    # The manifest is written first, accepting old and new content for every name, so that a run
    # that dies half-way leaves a folder whose files are all still recognised as recipegen's.
    interim = {name: list(digests) for name, digests in recorded.items()}
    for name, content in files.items():
        interim.setdefault(name, []).append(_digest(content.encode("utf-8")))
    text = json.dumps({"schema": MANIFEST_SCHEMA, "files": dict(sorted(interim.items()))}, indent=2) + "\n"
    _write_file(folder, MANIFEST, text)
    for name, content in sorted(files.items()):
        _write_file(folder, name, content)
    for name in recorded:
        if name not in files:  # recipegen's own file from an earlier plan, unchanged since (checked)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(folder / name)
    for sub in SUBFOLDERS:  # emptied above: it was recipegen's
        if any(n.startswith(sub + "/") for n in recorded) and not any(n.startswith(sub + "/") for n in files):
            with contextlib.suppress(OSError):
                os.rmdir(folder / sub)
    _write_file(folder, MANIFEST, manifest_text(files))


def _create(files: dict[str, str], folder: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".recipegen-staging", dir=folder.parent))
    try:
        for name, content in sorted(files.items()):
            _write_file(staging, name, content)
        _write_file(staging, MANIFEST, manifest_text(files))
        os.chmod(staging, 0o755)
        os.rename(staging, folder)
    finally:
        if staging.exists():
            for child in staging.iterdir():
                if child.is_dir() and not child.is_symlink():
                    for grandchild in child.iterdir():
                        grandchild.unlink()
                    child.rmdir()
                else:
                    child.unlink()
            staging.rmdir()
