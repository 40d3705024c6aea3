"""engines/<engine>/*.yaml: one build per file, either whole or as the changes to the build it `extends`."""

from __future__ import annotations

import datetime as dt
from typing import Generic, Literal, TypeVar

from pydantic import Field

from ..capability import CapabilitySet
from .common import HostArch, Sources
from .engine import Defect, Kernel, Provenance, SourceBuild, WeightFormat
from .strict_model import StrictModel
from .survey import Family
from .text import GitRef, Id, ImageRef, Name, Text, Version, Word

T = TypeVar("T")


class NameEdit(StrictModel):
    """Changes to a list of names (architectures): names added, names removed."""

    add: list[Word] = Field(default_factory=list)
    remove: list[Word] = Field(default_factory=list)


class ParserEdit(NameEdit):
    """Changes to a build's parser list: `replace` gives the whole list (then `add` / `remove` apply to it)."""

    replace: list[Word] | None = None


class KeyedEdit(StrictModel, Generic[T]):
    """Changes to a list of entries keyed by name (kernels by name, weight formats by quant, defects by id).

    `replace` swaps an inherited entry in place (the order of kernels is the engine's preference),
    `add` appends new ones, `remove` drops inherited ones by key.
    """

    add: list[T] = Field(default_factory=list)
    remove: list[Name] = Field(default_factory=list)
    replace: list[T] = Field(default_factory=list)


class BuildChange(StrictModel):
    """A build written as what changed from its parent; unset fields are inherited.

    Scalar fields, `cuda_archs`, `verified_sm`, `notes` and `sources` replace the parent's value when given
    (an explicit null clears an optional one); `images` replaces per host arch (null removes that arch).
    """

    id: Id
    extends: Id
    version: Name
    released: dt.date
    ref: GitRef | None = None
    provenance: Provenance | None = None
    origin: Name | None = None
    images: dict[HostArch, ImageRef | None] | None = None
    source_build: SourceBuild | None = None
    cuda: Version | None = None
    driver_min: Version | None = None
    cuda_archs: CapabilitySet | None = None
    verified_sm: CapabilitySet | None = None
    cli_reference: Word | None = None
    architectures: NameEdit | None = None
    tool_parsers: ParserEdit | None = None
    reasoning_parsers: ParserEdit | None = None
    kernels: KeyedEdit[Kernel] | None = None
    weight_formats: KeyedEdit[WeightFormat] | None = None
    defects: KeyedEdit[Defect] | None = None
    notes: list[Text] | None = None
    sources: Sources | None = None
    reported_for: list[Family] | None = None  # never inherited: a build's reports are its own


# the parser lists a release may state (unstated ones are inherited but marked as not re-checked)
PARSER_LISTS: dict[str, Literal["tool", "reasoning"]] = {"tool_parsers": "tool", "reasoning_parsers": "reasoning"}
# the key each keyed list is edited by
KEYS = {"kernels": "name", "weight_formats": "quant", "defects": "id"}
