"""surveys/*.yaml: the record of a dated search for field knowledge, per model family × GPU class.

A survey says what was asked, when, over which families and GPU classes, what was found and which catalog
entries came of it (or why a finding was not added). The coverage table reads it, so a cell where nothing
was found tells "searched on <date>, nothing found" apart from "never searched".
"""

from __future__ import annotations

import datetime as dt
from dataclasses import field
from typing import Annotated, Literal

from ...frozen import frozen
from .records import Check, Limits, Strict
from .text import HttpsUrl, Id, Name, Text, id_check

# The GPU classes the coverage table has a column for (report/coverage.py names each class's usual part).
GpuClass = Literal["sm80", "sm86", "sm89", "sm90", "sm100", "sm120", "sm121"]
GPU_CLASSES: tuple[GpuClass, ...] = ("sm80", "sm86", "sm89", "sm90", "sm100", "sm120", "sm121")


def _family(value: str) -> str:
    return value if value == "*" else id_check(value)


# a model id, or '*' for a question about the platform rather than one model
Family = Annotated[str, Check(_family)]


@frozen(kw_only=True)
class SurveyEntry(Strict):
    """One searched question: what it covered, what came of it."""

    gpu_classes: Annotated[list[GpuClass], Limits(min_length=1)]
    families: Annotated[list[Family], Limits(min_length=1)]
    layouts: list[Name] = field(default_factory=list)  # '1 node', '2 nodes x 8 GPUs (InfiniBand)' …
    question: Text
    found: Text  # what the search turned up ('nothing' is an answer)
    catalog: list[Id] = field(default_factory=list)  # builds, defects, fingerprints or deployments it added
    sources: Annotated[list[HttpsUrl], Limits(min_length=1)]  # what was read, public URLs
    not_added: list[Text] = field(default_factory=list)  # findings left out, each with its reason

    def covers(self, family: str, gpu_class: str) -> bool:
        return gpu_class in self.gpu_classes and ("*" in self.families or family in self.families)


@frozen(kw_only=True)
class Survey(Strict):
    id: Id  # also the file name
    title: Name
    surveyed: dt.date  # the day the searches ran
    by: Name  # who searched
    entries: Annotated[list[SurveyEntry], Limits(min_length=1)]

    def _check(self) -> None:
        if self.surveyed > dt.date.today() + dt.timedelta(days=1):
            raise ValueError(f"surveyed: {self.surveyed} is in the future; write the day the searches ran")
