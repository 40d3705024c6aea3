"""deployments/*.yaml: curated recipes, flags exactly as their source gives them."""

from __future__ import annotations

import datetime as dt

from pydantic import Field

from .common import Sourced, Status, Strict


class Arg(Sourced):
    flag: str
    value: str | None = Field(default=None, description="None for a switch")
    reason: str


class EnvVar(Sourced):
    name: str
    value: str
    reason: str


class DockerOptions(Strict):
    shm_size: str | None = None
    ipc_host: bool = True


class Deployment(Sourced):
    id: str
    title: str
    model: str
    variant: str
    hardware: list[str] = Field(min_length=1)
    engine: str
    build: str
    gpus_per_node: int = Field(ge=1)
    nodes: int = Field(default=1, ge=1)
    status: Status
    date: dt.date
    args: list[Arg] = Field(min_length=1)
    env: list[EnvVar] = Field(default_factory=list)
    docker: DockerOptions = Field(default_factory=DockerOptions)
    notes: list[str] = Field(default_factory=list)
