"""hardware/*.yaml: one file per GPU model."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from ...frozen import frozen
from ..capability import Capability
from .common import HostArch, Sourced
from .records import Limits, Strict
from .text import Alias, Id, Name, Text

Family = Literal["volta", "turing", "ampere", "ada", "hopper", "blackwell", "blackwell-ultra"]
MemoryKind = Literal["HBM", "GDDR", "unified"]
# what the part is bought for: a data-center card usually serves many users from a server; a workstation or consumer
# card is one user's machine (Candidate.serves_many reads it)
Role = Literal["datacenter", "workstation", "consumer"]
LinkKind = Literal["nvlink", "nvlink-bridge", "pcie", "nvlink-c2c", "none"]


@frozen(kw_only=True)
class Interconnect(Strict):
    kind: LinkKind
    bandwidth_gbs: float | None = None  # GPU-to-GPU GB/s inside a node
    between_nodes: Text | None = None  # how nodes usually connect, e.g. '2x ConnectX-7 200 GbE'


HostLinkKind = Literal["pcie", "nvlink-c2c", "unified"]
PCIE_GT_PER_LANE = {3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
# 128b/130b line coding for gen 3-5; gen 6 sends 256-byte FLITs carrying 242 bytes of payload
PCIE_EFFICIENCY = {3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 242 / 256}


@frozen(kw_only=True)
class HostLink(Strict):
    """How the GPU reaches host memory: a PCIe slot, NVLink-C2C to a Grace CPU, or one shared memory."""

    kind: HostLinkKind
    pcie_gen: Annotated[int, Limits(ge=3, le=6)] | None = None
    lanes: Annotated[int, Limits(ge=1, le=16)] | None = None
    # one direction, GB/s; computed from generation × lanes for PCIe
    bandwidth_gbs: Annotated[float, Limits(gt=0)] | None = None

    def _check(self) -> None:
        if self.kind == "pcie" and (self.pcie_gen is None or self.lanes is None):
            raise ValueError("a pcie host link needs pcie_gen and lanes")
        if self.kind != "pcie" and self.bandwidth_gbs is None:
            raise ValueError(f"a {self.kind} host link needs bandwidth_gbs (one direction)")

    @property
    def gbs(self) -> float:
        """GB/s one way: the link's stated bandwidth, or lanes × transfer rate × line-coding efficiency / 8."""
        if self.bandwidth_gbs is not None:
            return self.bandwidth_gbs
        assert self.pcie_gen is not None and self.lanes is not None
        return self.lanes * PCIE_GT_PER_LANE[self.pcie_gen] * PCIE_EFFICIENCY[self.pcie_gen] / 8

    def describe(self) -> str:
        if self.kind == "pcie":
            return f"PCIe {self.pcie_gen}.0 x{self.lanes} ({self.gbs:.1f} GB/s each way)"
        return f"{self.kind} ({self.gbs:g} GB/s each way)"


@frozen(kw_only=True)
class TensorThroughput(Strict):
    """Dense (no structured sparsity) tensor-core TFLOPS per GPU, as the vendor states them."""

    bf16: Annotated[float, Limits(gt=0)]  # BF16 (FP16 where the GPU has no BF16)
    fp8: Annotated[float, Limits(gt=0)] | None = None
    fp4: Annotated[float, Limits(gt=0)] | None = None


@frozen(kw_only=True)
class Hardware(Sourced):
    id: Id
    name: Name
    aliases: list[Alias] = field(default_factory=list)
    vendor: Literal["nvidia"]
    family: Family
    compute_capability: Capability
    memory_gib: Annotated[float, Limits(gt=0)]  # memory one GPU can address, GiB
    memory_kind: MemoryKind
    role: Role
    bandwidth_gbs: Annotated[float, Limits(gt=0)]  # memory bandwidth, GB/s
    smem_per_block_optin: Annotated[int, Limits(gt=0)]  # bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin
    fp8_tensor_cores: bool
    fp4_tensor_cores: bool
    host_arch: Annotated[list[HostArch], Limits(min_length=1)]
    interconnect: Interconnect
    gpus_per_node: Annotated[list[int], Limits(min_length=1)]  # usual node sizes, most common first
    host_link: HostLink  # the GPU's link to host memory (offload and weight loading cross it)
    tensor_tflops: TensorThroughput  # dense tensor-core throughput (prefill estimates)
    default_for_capability: bool = False  # the part a bare compute capability (sm80) stands for
    # unified memory: the most an engine may claim before the OS starves
    max_memory_fraction: Annotated[float, Limits(gt=0, le=1)] | None = None
    notes: list[Text] = field(default_factory=list)
