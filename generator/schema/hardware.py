"""hardware/*.yaml: one file per GPU model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..capability import Capability
from .common import HostArch, Sourced, Strict
from .text import Alias, Id, Name, Text

Family = Literal["volta", "turing", "ampere", "ada", "hopper", "blackwell", "blackwell-ultra"]
MemoryKind = Literal["HBM", "GDDR", "unified"]
LinkKind = Literal["nvlink", "nvlink-bridge", "pcie", "nvlink-c2c", "none"]


class Interconnect(Strict):
    kind: LinkKind
    bandwidth_gbs: float | None = Field(default=None, description="GPU-to-GPU GB/s inside a node")
    between_nodes: Text | None = Field(
        default=None, description="how nodes usually connect, e.g. '2x ConnectX-7 200 GbE'"
    )


class Hardware(Sourced):
    id: Id
    name: Name
    aliases: list[Alias] = Field(default_factory=list)
    vendor: Literal["nvidia"]
    family: Family
    compute_capability: Capability
    memory_gib: float = Field(gt=0, description="memory one GPU can address, GiB")
    memory_kind: MemoryKind
    bandwidth_gbs: float = Field(gt=0, description="memory bandwidth, GB/s")
    smem_per_block_optin: int = Field(gt=0, description="bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin")
    fp8_tensor_cores: bool
    fp4_tensor_cores: bool
    host_arch: list[HostArch] = Field(min_length=1)
    interconnect: Interconnect
    gpus_per_node: list[int] = Field(min_length=1, description="usual node sizes, most common first")
    default_for_capability: bool = Field(
        default=False, description="the part a bare compute capability (sm80) stands for"
    )
    max_memory_fraction: float | None = Field(
        default=None, gt=0, le=1, description="unified memory: the most an engine may claim before the OS starves"
    )
    notes: list[Text] = Field(default_factory=list)
