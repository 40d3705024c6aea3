"""engines/*.yaml `image_names`: the tags an engine's images are published under that name no version.

Rolling tags move with the releases (or with main), nightly tags name a main-branch commit, vendor
containers (NGC) carry an engine version their release notes state. The resolver (catalog/buildnames.py)
reads these; every entry carries its public source.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import field
from typing import Annotated, Literal

from ...frozen import frozen
from .common import Sourced
from .records import Limits, Strict
from .text import Commit, HttpsUrl, ImageRef, Name, Version, Word


@frozen(kw_only=True)
class RollingTag(Sourced):
    """A tag that moves: `release` follows the newest release, `main` the main branch (built daily)."""

    tag: Word  # latest, nightly, dev, blackwell …; `-cuXXX` / arch variants of it are the same tag
    follows: Literal["release", "main"]

    def _check(self) -> None:
        if not self.sources:
            raise ValueError(f"rolling tag {self.tag!r} needs a source saying what it follows")


@frozen(kw_only=True)
class MainCommit(Sourced):
    """A main-branch commit and its date (a nightly image built from it answers for the release before)."""

    commit: Commit
    date: dt.date

    def _check(self) -> None:
        if not self.sources:
            raise ValueError(f"commit {self.commit} needs a source for its date")


@frozen(kw_only=True)
class VendorRelease(Strict):
    tag: Word  # the container version as tagged, without the vendor's suffix: 25.10
    version: Version  # the engine version its release notes state
    url: HttpsUrl  # those release notes


@frozen(kw_only=True)
class Vendor(Strict):
    """A vendor's containers of the engine (NGC): their tags map to engine versions by the release notes."""

    name: Name
    repositories: Annotated[list[ImageRef], Limits(min_length=1)]  # without a tag: nvcr.io/nvidia/vllm
    tag_suffix: Word | None = None  # what every tag ends with, after a dash: py3 (25.10-py3)
    notes: HttpsUrl  # the index of the release notes (where a user finds an unlisted container's version)
    releases: list[VendorRelease] = field(default_factory=list)


@frozen(kw_only=True)
class ImageRepository(Sourced):
    """An official image repository no build records its tags in: the project pushes images from its main
    branch (llama.cpp: `server-cuda`, `server-cuda-b<build number>`), so a tag names a build number or a
    rolling tag, not a catalog build."""

    repository: ImageRef  # without a tag: ghcr.io/ggml-org/llama.cpp
    cuda_tag_part: Word | None = None  # only tags with a dash-separated part starting with it carry CUDA kernels

    def _check(self) -> None:
        if not self.sources:
            raise ValueError(f"image repository {self.repository!r} needs a source for its tags")


@frozen(kw_only=True)
class ImageNames(Strict):
    repositories: list[ImageRepository] = field(default_factory=list)
    rolling: list[RollingTag] = field(default_factory=list)
    main_commits: list[MainCommit] = field(default_factory=list)
    vendors: list[Vendor] = field(default_factory=list)
