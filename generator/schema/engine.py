"""engines/*.yaml: an engine's flag vocabulary, memory behaviour and its builds with their kernels."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field, model_validator

from ..capability import CapabilitySet
from .common import HostArch, KernelOp, KvDtype, Source, Sourced, Strict
from .text import (
    Alias,
    ArgWord,
    EngineFlag,
    Expandable,
    GitRef,
    HttpsUrl,
    Id,
    ImageRef,
    Name,
    RepoFile,
    Text,
    UrlPath,
    Version,
    Word,
)

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

    model: EngineFlag | None = Field(description="flag naming the weights; None when the model is positional")
    served_model_name: EngineFlag
    host: EngineFlag
    port: EngineFlag
    tensor_parallel: EngineFlag | None = None
    expert_parallel: EngineFlag | None = None
    kv_cache_dtype: EngineFlag | None = None
    context_length: EngineFlag
    max_concurrency: EngineFlag
    memory_fraction: EngineFlag | None = None
    trust_remote_code: EngineFlag | None = None
    tool_call_parser: EngineFlag | None = None
    reasoning_parser: EngineFlag | None = None
    enable_auto_tool_choice: EngineFlag | None = None
    nnodes: EngineFlag | None = None
    node_rank: EngineFlag | None = None
    dist_init_addr: EngineFlag | None = None
    dist_init_value: Expandable = Field(
        default="${HEAD_ADDR}", description="what the head address flag takes, in ${HEAD_ADDR}/${DIST_PORT} terms"
    )
    headless_worker: EngineFlag | None = Field(default=None, description="switch for non-head nodes that serve no API")
    gpu_layers: EngineFlag | None = None
    tensor_split: EngineFlag | None = None
    cpu_moe_layers: EngineFlag | None = Field(
        default=None, description="keeps the MoE experts of the first N layers in host RAM, computed by the CPU"
    )
    cpu_offload_gb: EngineFlag | None = Field(
        default=None, description="GiB of weights per GPU kept in host RAM and streamed over PCIe every forward pass"
    )
    cpu_expert_method: EngineFlag | None = Field(
        default=None, description="CPU expert kernel (KTransformers): routed experts live in host RAM"
    )
    cpu_expert_weights: EngineFlag | None = Field(
        default=None, description="where the CPU expert kernel reads its weights"
    )
    gpu_experts: EngineFlag | None = Field(
        default=None, description="how many routed experts stay on the GPU (KTransformers)"
    )


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

    flag: EngineFlag
    value: ArgWord | None = None
    reason: Text
    capability: CapabilitySet | None = Field(default=None, description="only on these GPUs")


class Kernel(Sourced):
    """One kernel (backend) of a build, and the shapes/dtypes/GPUs it accepts."""

    name: Name
    provides: KernelOp
    sm: CapabilitySet
    head_sizes: list[int] | None = None
    qk_nope_head_dims: list[int] | None = None
    index_topks: list[int] | None = None
    kv_dtypes: list[KvDtype] | None = Field(default=None, description="accepted KV dtypes, preferred first")
    architectures: list[Word] | None = Field(default=None, description="only these model architectures")
    smem_bytes: int | None = Field(default=None, gt=0, description="shared memory per block it needs")
    requires_args: list[RequiredArg] = Field(default_factory=list, description="emitted when this kernel is chosen")
    note: Text | None = None


class Fallback(Sourced):
    kernel: Name
    sm: CapabilitySet
    cost: Text
    dense_only: bool = Field(default=False, description="covers dense layers but not MoE experts")
    args: list[ArgWord] = Field(default_factory=list, description="engine arguments that select this fallback")


class WeightFormat(Sourced):
    quant: QuantMethod
    native: CapabilitySet | None = Field(default=None, description="compute capabilities with native kernels")
    fallbacks: list[Fallback] = Field(default_factory=list)
    requires_args: list[RequiredArg] = Field(default_factory=list, description="emitted for checkpoints in this format")
    note: Text | None = None


class SourceBuild(Strict):
    """A build made from source (forks): rendered into a Dockerfile."""

    repo: HttpsUrl
    ref: GitRef
    base_image: ImageRef
    runtime_image: ImageRef
    configure: list[ArgWord] = Field(min_length=1, description="argv of the configure step; {cuda_arch} is filled in")
    build: list[ArgWord] = Field(min_length=1)
    binary: RepoFile


def _dated_url(sources: list[Source]) -> bool:
    return any(s.date is not None and s.url.startswith(("https://", "http://")) for s in sources)


Symptom = Literal["crash", "wrong-output", "hang", "oom", "slow"]
DefectGate = Literal["architecture", "weight-format", "kernel", "platform", "memory", "topology"]


class Defect(Sourced):
    """A known fault of a build: which requests it hits, what the user sees, and how to get past it.

    A defect hits a request when every selector given matches (within a selector, any value does).
    """

    id: Id
    title: Text = Field(description="what goes wrong, one line")
    symptom: Symptom
    gate: DefectGate = Field(description="the gate where it shows: kernel for an attention crash, memory for an OOM")
    sm: CapabilitySet | None = Field(default=None, description="GPUs it hits; None: every GPU")
    models: list[Id] | None = Field(default=None, description="model ids it hits")
    architectures: list[Word] | None = None
    ops: list[KernelOp] | None = Field(default=None, description="kernel ops (features) it hits")
    quants: list[QuantMethod] | None = None
    log_line: Text | None = Field(default=None, description="what the engine prints when it hits")
    fixed_in: Id | None = Field(default=None, description="id of the first build without it")
    workaround: Text | None = None

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
    id: Id
    extends: Id | None = Field(default=None, description="the build this one was written as a change of")
    version: Name
    ref: GitRef | None = None
    released: dt.date
    provenance: Provenance
    origin: Name
    images: dict[HostArch, ImageRef] = Field(default_factory=dict)
    source_build: SourceBuild | None = None
    cuda: Version
    driver_min: Version | None = None
    cuda_archs: CapabilitySet
    verified_sm: CapabilitySet | None = Field(
        default=None, description="only reported working on these; elsewhere the verdict is 'unknown'"
    )
    cli_reference: Word | None = Field(default=None, description="engine-cli vocabulary the flags are checked against")
    architectures: list[Word] = Field(min_length=1)
    tool_parsers: list[Word] | None = Field(
        default=None, description="the --tool-call-parser choices this build accepts (sourced); unset: not known"
    )
    reasoning_parsers: list[Word] | None = Field(
        default=None, description="the --reasoning-parser choices this build accepts (sourced); unset: not known"
    )
    parsers_inherited: dict[Literal["tool", "reasoning"], Id] = Field(
        default_factory=dict,
        description="set by the loader: a parser list a release file did not state is this ancestor's (not re-checked)",
    )
    kernels: list[Kernel] = Field(default_factory=list)
    weight_formats: list[WeightFormat] = Field(min_length=1)
    defects: list[Defect] = Field(default_factory=list)
    notes: list[Text] = Field(default_factory=list)

    @model_validator(mode="after")
    def _community_sourced(self) -> Build:
        if self.provenance in ("community", "fork") and not _dated_url(self.sources):
            raise ValueError(f"a {self.provenance} build needs at least one source with an http(s) url and a date")
        return self


class Engine(Sourced):
    id: Id
    name: Name
    aliases: list[Alias] = Field(default_factory=list)
    homepage: HttpsUrl
    loads: Literal["hf", "gguf"]
    parallelism: Literal["tensor", "layers"] = Field(
        description="tensor: every layer sharded over all GPUs (TP/EP); layers: whole layers split over one node's GPUs"
    )
    default_kv_dtype: KvDtype = Field(description="the KV cache dtype when no kernel constrains it")
    health_probe: Literal["python3", "curl"] = Field(description="what the image has to probe its health endpoint")
    command: list[ArgWord] = Field(min_length=1, description="the server command")
    image_entrypoint: bool = Field(description="the image's ENTRYPOINT already runs `command`")
    default_port: int = Field(ge=1, le=65535)
    health_path: UrlPath
    multi_node: Literal["native", "ray", "none"]
    flags: Flags
    kv_dtype_names: dict[KvDtype, Word] = Field(default_factory=dict)
    kv_dtype_aliases: dict[Word, list[KvDtype]] = Field(
        default_factory=dict, description="other spellings; a list when the backend picks among them"
    )
    memory: MemoryBehaviour
    builds: list[Build] = Field(min_length=1)
