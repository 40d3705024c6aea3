"""A release's files, read in place: a wheel (zip), an sdist (tar.gz) or a folder (the test fixtures)."""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path


class Tree:
    """Paths are the package's own (`vllm/model_executor/models/registry.py`), whatever the container."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._files: dict[str, str] = {}  # package path -> member name
        if path.is_dir():
            self._kind = "dir"
            for file in path.rglob("*"):
                if file.is_file():
                    self._files[file.relative_to(path).as_posix()] = str(file)
        elif zipfile.is_zipfile(path):
            self._kind = "zip"
            self._zip = zipfile.ZipFile(path)
            for name in self._zip.namelist():
                self._files[name] = name
        else:
            self._kind = "tar"
            self._tar = tarfile.open(path)  # noqa: SIM115 - open while the tree is read, like the zip
            for member in self._tar.getmembers():
                if member.isfile():
                    parts = member.name.split("/")
                    # an sdist's files sit under name-version/ (and often python/ for sglang)
                    for cut in range(1, min(len(parts), 3)):
                        self._files.setdefault("/".join(parts[cut:]), member.name)

    def names(self, prefix: str = "", suffix: str = ".py") -> list[str]:
        return sorted(n for n in self._files if n.startswith(prefix) and n.endswith(suffix))

    def has(self, name: str) -> bool:
        return name in self._files

    def read(self, name: str) -> str | None:
        member = self._files.get(name)
        if member is None:
            return None
        if self._kind == "dir":
            return Path(member).read_text(encoding="utf-8-sig", errors="replace")
        if self._kind == "zip":
            return self._zip.read(member).decode("utf-8-sig", errors="replace")
        handle = self._tar.extractfile(member)
        return handle.read().decode("utf-8-sig", errors="replace") if handle is not None else None

    def read_bytes(self, name: str) -> bytes | None:
        member = self._files.get(name)
        if member is None:
            return None
        if self._kind == "dir":
            return Path(member).read_bytes()
        if self._kind == "zip":
            return self._zip.read(member)
        handle = self._tar.extractfile(member)
        return handle.read() if handle is not None else None

    def first(self, *names: str) -> str | None:
        """The first of these paths the release has."""
        return next((n for n in names if self.has(n)), None)
