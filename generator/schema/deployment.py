"""deployments/*.yaml: curated recipes, flags exactly as their source gives them."""

from __future__ import annotations

import datetime as dt

from pydantic import Field

from .common import Sourced, Status, Strict
from .text import ArgWord, EngineFlag, EnvName, Id, Name, ShmSize, Text


class Arg(Sourced):
    flag: EngineFlag
    value: ArgWord | None = Field(default=None, description="None for a switch")
    reason: Text


class EnvVar(Sourced):
    name: EnvName
    value: ArgWord
    reason: Text


class DockerOptions(Strict):
    shm_size: ShmSize | None = None
    ipc_host: bool = True


class Deployment(Sourced):
    id: Id
    title: Name
    model: Id
    variant: Id
    hardware: list[Id] = Field(min_length=1)
    engine: Id
    build: Id
    gpus_per_node: int = Field(ge=1)
    nodes: int = Field(default=1, ge=1)
    status: Status
    date: dt.date
    args: list[Arg] = Field(min_length=1)
    env: list[EnvVar] = Field(default_factory=list)
    docker: DockerOptions = Field(default_factory=DockerOptions)
    notes: list[Text] = Field(default_factory=list)
