"""The validated catalog: every entry indexed by id, with the file (and recipe root) it came from."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..frozen import frozen
from .kinds import KIND_NAMES
from .schema import Build, Deployment, Engine, Fingerprint, Hardware, Model, Survey
from .schema.records import Strict

# kind folder -> record type; the order is the order entries are cross-checked in.
KINDS: dict[str, type[Strict]] = dict(
    zip(KIND_NAMES, (Hardware, Engine, Model, Deployment, Fingerprint, Survey), strict=True)
)

M = TypeVar("M", bound=Strict)


@frozen
class Origin:
    path: str
    root: str  # "built-in" or the user directory it came from


@dataclass
class Catalog:
    """The validated catalog, indexed by id. Built once per process; never mutated after load."""

    hardware: dict[str, Hardware] = field(default_factory=dict)
    engines: dict[str, Engine] = field(default_factory=dict)
    models: dict[str, Model] = field(default_factory=dict)
    deployments: dict[str, Deployment] = field(default_factory=dict)
    fingerprints: dict[str, Fingerprint] = field(default_factory=dict)
    surveys: dict[str, Survey] = field(default_factory=dict)
    origins: dict[tuple[str, str], Origin] = field(default_factory=dict)
    overridden: list[tuple[str, str, Origin]] = field(default_factory=list)

    def build(self, build_id: str) -> tuple[Engine, Build]:
        for engine in self.engines.values():
            for build in engine.builds:
                if build.id == build_id:
                    return engine, build
        raise KeyError(build_id)

    def builds(self) -> Iterator[tuple[Engine, Build]]:
        for engine in self.engines.values():
            for build in engine.builds:
                yield engine, build

    def kind(self, name: str) -> dict[str, Any]:
        table: dict[str, Any] = getattr(self, name)
        return table


def builtin_root() -> Path:
    """The folder of the catalog shipped inside the package (an Origin's root "built-in")."""
    return package_folder("recipegen.recipes")


def package_folder(package: str) -> Path:
    """A package's folder on disk, as `importlib.resources.files` gives it for an installed package, without
    importing importlib.resources: it pulls in tempfile, zipfile and their imports, a few ms of every start."""
    return Path(importlib.import_module(package).__file__ or "").parent
