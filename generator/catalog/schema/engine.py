"""engines/*.yaml: an engine's flag vocabulary, memory behaviour and its builds with their kernels."""

from __future__ import annotations

import datetime as dt
from dataclasses import field
from typing import Annotated, Literal

from ...frozen import frozen
from ..capability import Capability, CapabilitySet
from .common import HostArch, KernelOp, KvDtype, Source, Sourced
from .imagenames import ImageNames
from .records import Limits, Strict
from .survey import Family
from .text import (
    Alias,
    ArgWord,
    EngineFlag,
    EnvName,
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
    "bnb4",  # bitsandbytes 4-bit (NF4 / FP4, load_in_4bit): blocks of 64 weights, one absmax each
    "bnb8",  # bitsandbytes 8-bit (LLM.int8, load_in_8bit): int8 rows, one FP32 scale per row
]

Provenance = Literal["official", "model-image", "community", "fork"]


@frozen(kw_only=True)
class Flags(Strict):
    """How this engine spells each knob a plan sets. None: the engine has no such knob."""

    model: EngineFlag | None  # flag naming the weights; None when the model is positional
    served_model_name: EngineFlag
    host: EngineFlag
    port: EngineFlag
    tensor_parallel: EngineFlag | None = None
    expert_parallel: EngineFlag | None = None
    kv_cache_dtype: EngineFlag | None = None
    # the V cache's own flag where an engine types K and V apart (llama-server --cache-type-k / --cache-type-v):
    # a plan sets both to its KV dtype
    kv_cache_dtype_v: EngineFlag | None = None
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
    dist_init_value: Expandable = "${HEAD_ADDR}"  # what the head address flag takes, in ${HEAD_ADDR}/${DIST_PORT} terms
    headless_worker: EngineFlag | None = None  # switch for non-head nodes that serve no API
    gpu_layers: EngineFlag | None = None
    tensor_split: EngineFlag | None = None
    # keeps the MoE experts of the first N layers in host RAM, computed by the CPU
    cpu_moe_layers: EngineFlag | None = None
    # GiB of weights per GPU kept in host RAM and streamed over PCIe every forward pass
    cpu_offload_gb: EngineFlag | None = None
    cpu_expert_method: EngineFlag | None = None  # CPU expert kernel (KTransformers): routed experts live in host RAM
    cpu_expert_weights: EngineFlag | None = None  # where the CPU expert kernel reads its weights
    gpu_experts: EngineFlag | None = None  # how many routed experts stay on the GPU (KTransformers)
    vision_projector: EngineFlag | None = None  # the GGUF vision projector file of a vision model (llama-server)
    # what a defect's configuration scope reads from a command (kv_cache_dtype and max_concurrency above too)
    decode_context_parallel: EngineFlag | None = None  # decode context parallel size (DCP)
    disable_cuda_graphs: EngineFlag | None = None  # switch: run eagerly, no CUDA graphs
    speculative: EngineFlag | None = None  # speculative decoding: its method, or a JSON config with a "method"
    pipeline_parallel: EngineFlag | None = None  # pipeline-parallel size (stages over GPUs or nodes)
    data_parallel: EngineFlag | None = None  # data-parallel size (engine replicas, or DP attention ranks)
    # draft tokens per speculative step, where the engine has its own flag (SGLang --speculative-num-steps); vLLM
    # states it inside --speculative-config (num_speculative_tokens)
    speculative_tokens: EngineFlag | None = None
    cpu_moe: EngineFlag | None = None  # switch: every MoE layer's experts in host RAM (llama-server --cpu-moe)
    # a tensor buffer override, NAME_REGEX=BUFFER (llama-server -ot): a CPU buffer keeps those weights in host RAM
    override_tensor: EngineFlag | None = None


@frozen(kw_only=True)
class MemoryBehaviour(Sourced):
    """What the engine's memory-fraction flag covers and what it keeps aside."""

    # instance: weights+KV+activations (vLLM); static_pool: weights+KV only (SGLang); none
    fraction_scope: Literal["instance", "static_pool", "none"]
    default_fraction: Annotated[float, Limits(gt=0, le=1)] | None = None
    runtime_reserve_gib: Annotated[float, Limits(ge=0)]  # per GPU: activations, CUDA graphs, comm buffers
    state_slots_per_request: Annotated[int, Limits(ge=1)] = 1  # linear-attention state copies per request
    kv_block_tokens: Annotated[int, Limits(ge=1)] = 16
    estimate: bool = True  # the reserve is an estimate, said so in the output
    host_offload: bool = False  # keeps weights in host RAM (CPU/GPU hybrid): GPU-memory verdicts are unknown
    # the most concurrent requests a default start accepts (vLLM: --max-num-seqs may not exceed the tokens one
    # scheduler step takes, 2048 by default on most GPUs); a default concurrency is capped there
    max_sequences: Annotated[int, Limits(ge=1)] | None = None


@frozen(kw_only=True)
class RequiredArg(Sourced):
    """An engine argument a kernel, weight format or model needs on some GPUs: derived plans emit it."""

    flag: EngineFlag
    value: ArgWord | None = None
    reason: Text
    capability: CapabilitySet | None = None  # only on these GPUs


@frozen(kw_only=True)
class DefectEnv(Sourced):
    """An environment variable a defect's workaround sets."""

    name: EnvName
    value: ArgWord
    reason: Text


@frozen(kw_only=True)
class Kernel(Sourced):
    """One kernel (backend) of a build, and the shapes/dtypes/GPUs it accepts."""

    name: Name
    provides: KernelOp
    sm: CapabilitySet
    head_sizes: list[int] | None = None
    qk_nope_head_dims: list[int] | None = None
    index_topks: list[int] | None = None
    kv_dtypes: list[KvDtype] | None = None  # accepted KV dtypes, preferred first
    architectures: list[Word] | None = None  # only these model architectures
    smem_bytes: Annotated[int, Limits(gt=0)] | None = None  # shared memory per block it needs
    requires_args: list[RequiredArg] = field(default_factory=list)  # emitted when this kernel is chosen
    # the model's own attention, which the engine selects for the layers it serves whatever --attention-backend pins
    # (the pin then applies to the model's other attention, if any)
    model_selected: bool = False
    note: Text | None = None


@frozen(kw_only=True)
class Fallback(Sourced):
    kernel: Name
    sm: CapabilitySet
    cost: Text
    dense_only: bool = False  # covers dense layers but not MoE experts
    # dequantises the stored weights inside the GEMM (Marlin W8A16/W4A16): it reads the bytes a native kernel reads,
    # so one request's memory-bound decode runs at the speed the estimate gives; what it costs is compute, which a
    # server batching many requests pays (ranking.fallback_rank)
    weight_only: bool = False
    args: list[ArgWord] = field(default_factory=list)  # engine arguments that select this fallback
    # a native kernel of the release that also supports these GPUs but that its kernel order reaches after this one
    # (vLLM 0.29.0+ on SM89: Marlin W8A16 listed ahead of the Triton block-scaled FP8 GEMM): the GPU is not without a
    # native kernel, the release just picks the fallback first
    ahead_of: Text | None = None


@frozen(kw_only=True)
class NativeKernel(Sourced):
    """The kernel a release itself picks for a weight format where it runs natively (its own kernel table's first
    supported entry on those GPUs), so a plan names what runs, not only that something native does."""

    kernel: Name
    sm: CapabilitySet
    note: Text | None = None


@frozen(kw_only=True)
class WeightFormat(Sourced):
    quant: QuantMethod
    native: CapabilitySet | None = None  # compute capabilities with native kernels
    native_kernels: list[NativeKernel] = field(default_factory=list)  # which one, per GPU, where the release says
    fallbacks: list[Fallback] = field(default_factory=list)
    requires_args: list[RequiredArg] = field(default_factory=list)  # emitted for checkpoints in this format
    note: Text | None = None
    # the release's own reason it runs the format on no GPU outside `native` and `fallbacks`: a refusal says it first
    refused: Text | None = None

    def _check(self) -> None:
        for named in self.native_kernels:
            outside = [c for c in _EVERY_CAPABILITY if c in named.sm and (self.native is None or c not in self.native)]
            if outside:
                raise ValueError(
                    f"{self.quant}: native kernel {named.kernel!r} is named on {outside[0].sm}, where the format does"
                    f" not run natively (native: {self.native or 'none'})"
                )


# every compute capability a set can name, to compare two sets
_EVERY_CAPABILITY = tuple(Capability(major, minor) for major in range(1, 16) for minor in range(10))


@frozen(kw_only=True)
class SourceBuild(Strict):
    """A build made from source (forks): rendered into a Dockerfile."""

    repo: HttpsUrl
    ref: GitRef
    base_image: ImageRef
    runtime_image: ImageRef
    configure: Annotated[list[ArgWord], Limits(min_length=1)]  # argv of the configure step; {cuda_arch} is filled in
    build: Annotated[list[ArgWord], Limits(min_length=1)]
    binary: RepoFile


def _dated_url(sources: list[Source]) -> bool:
    return any(s.date is not None and s.url.startswith(("https://", "http://")) for s in sources)


Symptom = Literal["crash", "wrong-output", "hang", "oom", "slow"]


@frozen(kw_only=True)
class BatchRange(Strict):
    """The concurrent requests (the engine's batch) a defect shows at: from `min` to `max`, both included."""

    min: Annotated[int, Limits(ge=1)] | None = None
    max: Annotated[int, Limits(ge=1)] | None = None

    def _check(self) -> None:
        if self.min is None and self.max is None:
            raise ValueError("a batch range needs min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"batch min {self.min} is above max {self.max}")

    def __contains__(self, batch: object) -> bool:
        return isinstance(batch, int) and (self.min or 1) <= batch <= (self.max or batch)

    def describe(self) -> str:
        if self.max is None:
            return f"{self.min} or more concurrent requests"
        if self.min is None:
            return f"at most {self.max} concurrent requests"
        return f"{self.min}-{self.max} concurrent requests"


@frozen(kw_only=True)
class SizeRange(Strict):
    """A count a defect shows at (tensor-parallel size, draft tokens): from `min` to `max`, both included."""

    min: Annotated[int, Limits(ge=1, le=1 << 20)] | None = None
    max: Annotated[int, Limits(ge=1, le=1 << 20)] | None = None

    def _check(self) -> None:
        if self.min is None and self.max is None:
            raise ValueError("a range needs min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")

    def __contains__(self, count: object) -> bool:
        return isinstance(count, int) and (self.min or 1) <= count <= (self.max or count)

    def describe(self, what: str) -> str:
        if self.max is None:
            return f"{what} {self.min} or more"
        if self.min is None:
            return f"{what} at most {self.max}"
        return f"{what} {self.min}" if self.min == self.max else f"{what} {self.min}-{self.max}"


DefectGate = Literal["architecture", "weight-format", "kernel", "platform", "memory", "topology"]


@frozen(kw_only=True)
class Defect(Sourced):
    """A known fault of a build: which requests it hits, what the user sees, and how to get past it.

    A defect hits a request when every selector given matches (within a selector, any value does).
    """

    id: Id
    title: Text  # what goes wrong, one line
    symptom: Symptom
    gate: DefectGate  # the gate where it shows: kernel for an attention crash, memory for an OOM
    sm: CapabilitySet | None = None  # GPUs it hits; None: every GPU
    models: list[Id] | None = None  # model ids it hits
    architectures: list[Word] | None = None
    ops: list[KernelOp] | None = None  # kernel ops (features) it hits
    quants: list[QuantMethod] | None = None
    moe: bool | None = None  # true: only mixture-of-experts models; false: only dense ones
    # the configuration it hits (the plan's or the command's flags); unset: every configuration
    kv_dtypes: list[KvDtype] | None = None  # KV cache dtypes it hits
    # true: a V cache in kv_dtypes hits it even when K is in another dtype (engines that type the V cache apart,
    # llama-server's --cache-type-v); false: the K cache's dtype decides
    kv_v_alone: bool = False
    dcp: bool | None = None  # true: only with decode context parallel (size > 1); false: only without
    speculative: list[Word] | None = None  # speculative methods it hits (mtp, eagle, eagle3, ngram …)
    cuda_graphs: bool | None = None  # true: only with CUDA graphs on; false: only when run eagerly
    batch: BatchRange | None = None  # the concurrent requests it shows at
    # the parallel layout it hits: a pipeline-parallel size of at least this; over more than one node (true) or on
    # one (false); with data parallel (size > 1) or without; with expert parallel or without
    pipeline_parallel_min: Annotated[int, Limits(ge=2)] | None = None
    multi_node: bool | None = None
    data_parallel: bool | None = None
    expert_parallel: bool | None = None
    context_above: Annotated[int, Limits(ge=1)] | None = None  # only when the planned max context exceeds this
    tensor_parallel: SizeRange | None = None  # the tensor-parallel sizes it shows at
    # true: only when weights or experts live in host RAM (offload: --cpu-offload-gb, --n-cpu-moe, -ot ...=CPU, a CPU
    # expert kernel); false: only when every weight is on the GPUs
    host_offload: bool | None = None
    # the draft tokens proposed per step (vLLM num_speculative_tokens, SGLang --speculative-num-steps) it shows at
    speculative_tokens: SizeRange | None = None
    # the host CPU it hits (a GPU's host: GB200/GH200 are aarch64); a property of the GPU, like sm, not of flags
    host_arch: list[HostArch] | None = None
    log_line: Text | None = None  # what the engine prints when it hits
    fixed_in: Id | None = None  # id of the first build without it
    workaround: Text | None = None
    # the workaround as arguments and environment a plan on the build carries (flags the planner does not set)
    workaround_args: list[RequiredArg] = field(default_factory=list)
    workaround_env: list[DefectEnv] = field(default_factory=list)

    def _check(self) -> None:
        if not _dated_url(self.sources):
            raise ValueError("a defect needs at least one source with an http(s) url and a date")
        if self.speculative is not None and not self.speculative:
            raise ValueError("speculative: name at least one method, or leave it out")
        if self.kv_dtypes is not None and not self.kv_dtypes:
            raise ValueError("kv_dtypes: name at least one KV dtype, or leave it out")
        if self.kv_v_alone and self.kv_dtypes is None:
            raise ValueError("kv_v_alone: name the V-cache dtypes it hits in kv_dtypes")
        if self.host_arch is not None and not self.host_arch:
            raise ValueError("host_arch: name at least one of x86_64, aarch64, or leave it out")

    @property
    def scoped(self) -> bool:
        """Whether it hits only some configurations (flags), not every plan on the build and GPU."""
        fields = (
            self.kv_dtypes,
            self.dcp,
            self.speculative,
            self.cuda_graphs,
            self.batch,
            self.pipeline_parallel_min,
            self.multi_node,
            self.data_parallel,
            self.expert_parallel,
            self.context_above,
            self.tensor_parallel,
            self.host_offload,
            self.speculative_tokens,
        )
        return any(f is not None for f in fields)

    @property
    def blocks(self) -> bool:
        """A crash or wrong output with no way around it blocks the build; anything else only ranks it lower."""
        worked_around = self.workaround is not None or bool(self.workaround_args or self.workaround_env)
        return self.symptom in ("crash", "wrong-output") and not worked_around


@frozen(kw_only=True)
class Build(Sourced):
    id: Id
    extends: Id | None = None  # the build this one was written as a change of
    version: Name
    ref: GitRef | None = None
    released: dt.date
    provenance: Provenance
    origin: Name
    images: dict[HostArch, ImageRef] = field(default_factory=dict)
    source_build: SourceBuild | None = None
    cuda: Version
    driver_min: Version | None = None
    cuda_archs: CapabilitySet
    verified_sm: CapabilitySet | None = None  # only reported working on these; elsewhere the verdict is 'unknown'
    cli_reference: Word | None = None  # engine-cli vocabulary the flags are checked against
    architectures: Annotated[list[Word], Limits(min_length=1)]
    # the --tool-call-parser choices this build accepts (sourced); unset: not known
    tool_parsers: list[Word] | None = None
    # the --reasoning-parser choices this build accepts (sourced); unset: not known
    reasoning_parsers: list[Word] | None = None
    # set by the loader: a parser list a release file did not state is this ancestor's (not re-checked)
    parsers_inherited: dict[Literal["tool", "reasoning"], Id] = field(default_factory=dict)
    kernels: list[Kernel] = field(default_factory=list)
    weight_formats: Annotated[list[WeightFormat], Limits(min_length=1)]
    defects: list[Defect] = field(default_factory=list)
    notes: list[Text] = field(default_factory=list)
    # the models its reports served ('*': a general build its sources vouch for across models, such as a vendor
    # container); coverage counts a side path for a model only when named here, and it is never inherited
    reported_for: list[Family] = field(default_factory=list)

    def reported(self, model_id: str) -> bool:
        """Whether a report (or, for an official release, the release itself) vouches for this model on it."""
        return self.provenance == "official" or "*" in self.reported_for or model_id in self.reported_for

    def _check(self) -> None:
        if self.provenance in ("community", "fork") and not _dated_url(self.sources):
            raise ValueError(f"a {self.provenance} build needs at least one source with an http(s) url and a date")


@frozen(kw_only=True)
class Engine(Sourced):
    id: Id
    name: Name
    aliases: list[Alias] = field(default_factory=list)
    homepage: HttpsUrl
    loads: Literal["hf", "gguf"]
    # tensor: every layer sharded over all GPUs (TP/EP); layers: whole layers split over one node's GPUs
    parallelism: Literal["tensor", "layers"]
    default_kv_dtype: KvDtype  # the KV cache dtype when no kernel constrains it
    health_probe: Literal["python3", "curl"]  # what the image has to probe its health endpoint
    command: Annotated[list[ArgWord], Limits(min_length=1)]  # the server command
    image_entrypoint: bool  # the image's ENTRYPOINT already runs `command`
    default_port: Annotated[int, Limits(ge=1, le=65535)]
    health_path: UrlPath
    multi_node: Literal["native", "ray", "none"]
    flags: Flags
    kv_dtype_names: dict[KvDtype, Word] = field(default_factory=dict)
    # other spellings; a list when the backend picks among them
    kv_dtype_aliases: dict[Word, list[KvDtype]] = field(default_factory=dict)
    memory: MemoryBehaviour
    builds: Annotated[list[Build], Limits(min_length=1)]
    # the tags its images go by that name no version: rolling tags, nightly commits, vendor containers
    image_names: ImageNames = field(default_factory=ImageNames)
