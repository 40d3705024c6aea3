"""An artifact folder as `up`, `preflight`, `down`, `status` and `logs` read it: its plan.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import RecipegenError
from ..frozen import frozen
from .contract import SCHEMA

IMAGE_REF = r"^[A-Za-z0-9][A-Za-z0-9_./:@-]*$"
CONTAINER_NAME = r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Health(_Strict):
    test: list[str] = Field(min_length=2)
    interval_s: int = Field(gt=0)
    timeout_s: int = Field(gt=0)
    retries: int = Field(ge=0)
    start_period_s: int = Field(ge=0)


class _Volume(_Strict):
    host: str
    container: str = Field(pattern=r"^/[A-Za-z0-9_./-]*$")
    read_only: bool


class _Env(_Strict):
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    value: str


class _Node(_Strict):
    role: str
    rank: int = Field(ge=0)
    service: str
    container: str
    args: list[str]
    expand: list[int]
    rank_arg: int | None = Field(default=None, ge=0)  # written since the Kubernetes output; older folders lack it


class _Container(_Strict):
    """plan.json's "container" (container.ContainerSpec.to_json), checked before anything runs it."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    image: str = Field(min_length=1, pattern=IMAGE_REF)
    built_locally: bool
    port: int = Field(ge=1, le=65535)
    health_path: str = Field(pattern=r"^/[A-Za-z0-9_./-]*$")
    healthcheck: _Health
    ipc_host: bool
    shm_size: str = Field(pattern=r"^[0-9]+[kmgKMG]?[bB]?$")
    gpus: str
    volumes: list[_Volume] = Field(min_length=1, max_length=2)
    env: list[_Env]
    host_network: bool
    served_name: str
    model_path: str
    model_dir: str = Field(pattern=r"^[^/\\]+$")
    weights_folder: str | None = Field(default=None, pattern=r"^/[^\x00-\x1f\x7f]*$")  # a local checkpoint
    weights_blobs: str | None = Field(default=None, pattern=r"^/[^\x00-\x1f\x7f]*$")  # its cache blobs/
    weights_file: str | None
    weights_mmproj: str | None = None  # a vision GGUF's projector file, beside weights_file
    weights_bytes: int | None
    weights_revision: str | None = None
    driver_min: str | None
    reasoning_parser: str | None
    tool_parser: str | None
    nodes: list[_Node] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_mount(self) -> _Container:
        host = self.volumes[0].host
        if host != (self.weights_folder or "${MODEL_DIR}"):
            raise ValueError(f"volumes[0].host {host!r} is neither ${{MODEL_DIR}} nor the plan's weights_folder")
        extra = [v.host for v in self.volumes[1:]]
        if extra != ([self.weights_blobs] if self.weights_folder and self.weights_blobs else []):
            raise ValueError("a second volume is only the weights_blobs folder of a local cache snapshot")
        return self

    @field_validator("model_dir")
    @classmethod
    def _one_folder_down(cls, value: str) -> str:
        if value in {".", ".."}:
            raise ValueError("must name a folder under MODEL_DIR")
        return value


@frozen
class Folder:
    path: Path
    plan: dict[str, Any]
    container: dict[str, Any]

    @property
    def multi_node(self) -> bool:
        return len(self.container["nodes"]) > 1

    def node(self, rank: int) -> dict[str, Any]:
        for node in self.container["nodes"]:
            if node["rank"] == rank:
                return dict(node)
        ranks = ", ".join(str(n["rank"]) for n in self.container["nodes"])
        raise RecipegenError(f"{self.path}: no node with rank {rank}", f"this plan has ranks {ranks}")


def container_from_json(data: Any, plan_file: Path | str) -> dict[str, Any]:
    """plan.json's "container", validated (ContainerSpec.to_json's shape)."""
    try:
        return _Container.model_validate(data).model_dump()
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in ("container", *err["loc"]))
        raise RecipegenError(
            f"{plan_file}: {where}: {err['msg']}", "regenerate the folder with recipegen; do not edit plan.json by hand"
        ) from None


def load(path: Path) -> Folder:
    plan_file = path / "plan.json"
    if not plan_file.is_file():
        raise RecipegenError(
            f"{plan_file} not found", "give a folder written by `recipegen --gpu … --model …` (it holds plan.json)"
        )
    try:
        plan = json.loads(plan_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecipegenError(
            f"{plan_file}: not readable JSON ({exc})", "regenerate the folder with recipegen"
        ) from None
    if not isinstance(plan, dict) or plan.get("schema") != SCHEMA:
        raise RecipegenError(f"{plan_file}: schema is not {SCHEMA}", "regenerate the folder with this recipegen")
    if "container" not in plan:
        raise RecipegenError(
            f"{plan_file}: field container is missing (written by an older recipegen)",
            "regenerate the folder with this recipegen",
        )
    container = container_from_json(plan["container"], plan_file)
    return Folder(path, plan, container)
