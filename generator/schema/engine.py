"""engines/*.yaml: an engine's flag vocabulary, memory behaviour and its builds with their kernels."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field, model_validator

from ..capability import CapabilitySet
from .common import HostArch, KernelOp, KvDtype, Source, Sourced, Strict

QuantMethod = Literal[
    "bf16",
    "fp16",
    "fp8",  # per-tensor / per-channel FP8
    "fp8_block",  # DeepSeek-style 128x128 block-scaled FP8
    "nvfp4",
    "mxfp4",
    "mixed_fp4_fp8",  # FP4 experts + FP8 elsewhere (DeepSeek-V4 native)
    "int4_int8_mix",  # compressed-tensors INT4/INT8 weight-only mix
    "int4",  # INT4 weight-only (QAT / compressed-tensors wNa16)
    "awq",
    "gptq",
    "gguf",
]

Provenance = Literal["official", "model-image", "community", "fork"]


class Flags(Strict):
    """How this engine spells each knob a plan sets. None: the engine has no such knob."""

    model: str | None = Field(description="flag naming the weights; None when the model is positional")
    served_model_name: str
    host: str
    port: str
    tensor_parallel: str | None = None
    expert_parallel: str | None = None
    kv_cache_dtype: str | None = None
    context_length: str
    max_concurrency: str
    memory_fraction: str | None = None
    trust_remote_code: str | None = None
    tool_call_parser: str | None = None
    reasoning_parser: str | None = None
    enable_auto_tool_choice: str | None = None
    nnodes: str | None = None
    node_rank: str | None = None
    dist_init_addr: str | None = None
    dist_init_value: str = Field(
        default="${HEAD_ADDR}", description="what the head address flag takes, in ${HEAD_ADDR}/${DIST_PORT} terms"
    )
    headless_worker: str | None = Field(default=None, description="switch for non-head nodes that serve no API")
    gpu_layers: str | None = None
    tensor_split: str | None = None


class MemoryBehaviour(Sourced):
    """What the engine's memory-fraction flag covers and what it keeps aside."""

    fraction_scope: Literal["instance", "static_pool", "none"] = Field(
        description="instance: weights+KV+activations (vLLM); static_pool: weights+KV only (SGLang); none"
    )
    default_fraction: float | None = Field(default=None, gt=0, le=1)
    runtime_reserve_gib: float = Field(ge=0, description="per GPU: activations, CUDA graphs, comm buffers")
    state_slots_per_request: int = Field(default=1, ge=1, description="linear-attention state copies per request")
    kv_block_tokens: int = Field(default=16, ge=1)
    estimate: bool = Field(default=True, description="the reserve is an estimate, said so in the output")
    host_offload: bool = Field(
        default=False, description="keeps weights in host RAM (CPU/GPU hybrid): GPU-memory verdicts are unknown"
    )


class RequiredArg(Sourced):
    """An engine argument a kernel, weight format or model needs on some GPUs: derived plans emit it."""

    flag: str = Field(pattern=r"^--?[A-Za-z0-9][A-Za-z0-9_.-]*$")
    value: str | None = None
    reason: str
    capability: CapabilitySet | None = Field(default=None, description="only on these GPUs")


class Kernel(Sourced):
    """One kernel (backend) of a build, and the shapes/dtypes/GPUs it accepts."""

    name: str
    provides: KernelOp
    sm: CapabilitySet
    head_sizes: list[int] | None = None
    qk_nope_head_dims: list[int] | None = None
    index_topks: list[int] | None = None
    kv_dtypes: list[KvDtype] | None = Field(default=None, description="accepted KV dtypes, preferred first")
    architectures: list[str] | None = Field(default=None, description="only these model architectures")
    smem_bytes: int | None = Field(default=None, gt=0, description="shared memory per block it needs")
    requires_args: list[RequiredArg] = Field(default_factory=list, description="emitted when this kernel is chosen")
    note: str | None = None


class Fallback(Sourced):
    kernel: str
    sm: CapabilitySet
    cost: str
    dense_only: bool = Field(default=False, description="covers dense layers but not MoE experts")
    args: list[str] = Field(default_factory=list, description="engine arguments that select this fallback")


class WeightFormat(Sourced):
    quant: QuantMethod
    native: CapabilitySet | None = Field(default=None, description="compute capabilities with native kernels")
    fallbacks: list[Fallback] = Field(default_factory=list)
    requires_args: list[RequiredArg] = Field(default_factory=list, description="emitted for checkpoints in this format")
    note: str | None = None


class SourceBuild(Strict):
    """A build made from source (forks): rendered into a Dockerfile."""

    repo: str
    ref: str
    base_image: str
    runtime_image: str
    configure: list[str] = Field(min_length=1, description="argv of the configure step; {cuda_arch} is filled in")
    build: list[str] = Field(min_length=1)
    binary: str


def _dated_url(sources: list[Source]) -> bool:
    return any(s.date is not None and s.url.startswith(("https://", "http://")) for s in sources)


Symptom = Literal["crash", "wrong-output", "hang", "oom", "slow"]
DefectGate = Literal["architecture", "weight-format", "kernel", "platform", "memory", "topology"]


class Defect(Sourced):
    """A known fault of a build: which requests it hits, what the user sees, and how to get past it.

    A defect hits a request when every selector given matches (within a selector, any value does).
    """

    id: str
    title: str = Field(description="what goes wrong, one line")
    symptom: Symptom
    gate: DefectGate = Field(description="the gate where it shows: kernel for an attention crash, memory for an OOM")
    sm: CapabilitySet | None = Field(default=None, description="GPUs it hits; None: every GPU")
    models: list[str] | None = Field(default=None, description="model ids it hits")
    architectures: list[str] | None = None
    ops: list[KernelOp] | None = Field(default=None, description="kernel ops (features) it hits")
    quants: list[QuantMethod] | None = None
    log_line: str | None = Field(default=None, description="what the engine prints when it hits")
    fixed_in: str | None = Field(default=None, description="id of the first build without it")
    workaround: str | None = None

    @model_validator(mode="after")
    def _dated_source(self) -> Defect:
        if not _dated_url(self.sources):
            raise ValueError("a defect needs at least one source with an http(s) url and a date")
        return self

    @property
    def blocks(self) -> bool:
        """A crash or wrong output with no way around it blocks the build; anything else only ranks it lower."""
        return self.symptom in ("crash", "wrong-output") and self.workaround is None


class Build(Sourced):
    id: str
    extends: str | None = Field(default=None, description="the build this one was written as a change of")
    version: str
    ref: str | None = None
    released: dt.date
    provenance: Provenance
    origin: str
    images: dict[HostArch, str] = Field(default_factory=dict)
    source_build: SourceBuild | None = None
    cuda: str
    driver_min: str | None = None
    cuda_archs: CapabilitySet
    verified_sm: CapabilitySet | None = Field(
        default=None, description="only reported working on these; elsewhere the verdict is 'unknown'"
    )
    cli_reference: str | None = Field(default=None, description="engine-cli vocabulary the flags are checked against")
    architectures: list[str] = Field(min_length=1)
    kernels: list[Kernel] = Field(default_factory=list)
    weight_formats: list[WeightFormat] = Field(min_length=1)
    defects: list[Defect] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _community_sourced(self) -> Build:
        if self.provenance in ("community", "fork") and not _dated_url(self.sources):
            raise ValueError(f"a {self.provenance} build needs at least one source with an http(s) url and a date")
        return self


class Engine(Sourced):
    id: str
    name: str
    aliases: list[str] = Field(default_factory=list)
    homepage: str
    loads: Literal["hf", "gguf"]
    parallelism: Literal["tensor", "layers"] = Field(
        description="tensor: every layer sharded over all GPUs (TP/EP); layers: whole layers split over one node's GPUs"
    )
    default_kv_dtype: KvDtype = Field(description="the KV cache dtype when no kernel constrains it")
    health_probe: Literal["python3", "curl"] = Field(description="what the image has to probe its health endpoint")
    command: list[str] = Field(min_length=1, description="the server command")
    image_entrypoint: bool = Field(description="the image's ENTRYPOINT already runs `command`")
    default_port: int
    health_path: str
    multi_node: Literal["native", "ray", "none"]
    flags: Flags
    kv_dtype_names: dict[KvDtype, str] = Field(default_factory=dict)
    kv_dtype_aliases: dict[str, list[KvDtype]] = Field(
        default_factory=dict, description="other spellings; a list when the backend picks among them"
    )
    memory: MemoryBehaviour
    builds: list[Build] = Field(min_length=1)
