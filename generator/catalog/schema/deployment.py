"""deployments/*.yaml: curated recipes, flags exactly as their source gives them."""

from __future__ import annotations

import datetime as dt
from dataclasses import field
from typing import Annotated

from ...frozen import frozen
from .common import Sourced, Status
from .records import Limits, Strict
from .text import ArgWord, EngineFlag, EnvName, Id, Name, ShmSize, Text


@frozen(kw_only=True)
class Arg(Sourced):
    flag: EngineFlag
    value: ArgWord | None = None  # None for a switch
    reason: Text


@frozen(kw_only=True)
class EnvVar(Sourced):
    name: EnvName
    value: ArgWord
    reason: Text


@frozen(kw_only=True)
class DockerOptions(Strict):
    shm_size: ShmSize | None = None
    ipc_host: bool = True


Minutes = Annotated[float, Limits(gt=0, le=1440)]


@frozen(kw_only=True)
class Deployment(Sourced):
    id: Id
    title: Name
    model: Id
    variant: Id
    hardware: Annotated[list[Id], Limits(min_length=1)]
    engine: Id
    build: Id
    gpus_per_node: Annotated[int, Limits(ge=1)]
    nodes: Annotated[int, Limits(ge=1)] = 1
    status: Status
    date: dt.date
    args: Annotated[list[Arg], Limits(min_length=1)]
    env: list[EnvVar] = field(default_factory=list)
    docker: DockerOptions = field(default_factory=DockerOptions)
    notes: list[Text] = field(default_factory=list)
    # minutes from start to ready as the recipe's source measured them (low, high): said instead of the estimate
    load_minutes: tuple[Minutes, Minutes] | None = None
