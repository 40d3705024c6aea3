"""models/*.yaml: one file per model family, with architecture facts, needs, parsers and variants."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from ...frozen import frozen
from ..capability import Capability, CapabilitySet
from .common import KernelOp, KvDtype, Sourced
from .engine import QuantMethod, RequiredArg
from .records import Limits, Strict
from .text import Alias, ClassName, GitRef, Id, Name, RepoFile, RepoId, Text, Word

AttentionKind = Literal["gqa", "mla", "dsa", "dsa_nope", "dsv4"]


@frozen(kw_only=True)
class Indexer(Strict):
    heads: int
    head_dim: int
    topk: int
    layers: int | None = None  # layers that cache indexer keys; default: all attention layers
    kpool: Annotated[int, Limits(ge=1)] = 1  # keys pooled n:1 before caching


@frozen(kw_only=True)
class CompressedLayers(Strict):
    ratio: Annotated[int, Limits(ge=1)]  # tokens folded into one cached entry
    layers: Annotated[int, Limits(ge=0)]


@frozen(kw_only=True)
class Attention(Sourced):
    kind: AttentionKind
    num_heads: int
    num_kv_heads: int | None = None
    head_dim: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    layers: int | None = None  # layers with a KV cache; default: all layers
    sliding_window: int | None = None
    sliding_window_layers: int | None = None
    indexer: Indexer | None = None
    compressed: list[CompressedLayers] | None = None  # DeepSeek-V4 CSA/HCA layout

    def _check(self) -> None:
        needed = {
            "gqa": ("num_kv_heads", "head_dim"),
            "mla": ("kv_lora_rank", "qk_rope_head_dim"),
            "dsa": ("kv_lora_rank", "qk_rope_head_dim", "indexer"),
            "dsa_nope": ("kv_lora_rank", "indexer"),
            "dsv4": ("head_dim", "num_kv_heads", "compressed", "sliding_window"),
        }[self.kind]
        missing = [n for n in needed if getattr(self, n) is None]
        if missing:
            raise ValueError(f"attention kind {self.kind!r} needs {', '.join(missing)}")


@frozen(kw_only=True)
class LinearAttention(Sourced):
    kind: Literal["kda", "gdn", "lightning"]
    layers: int
    num_heads: int  # heads that each keep a head_k_dim x head_v_dim state (GDN: the value heads)
    num_k_heads: int | None = None  # key heads when fewer than num_heads (GDN); default: num_heads
    head_k_dim: int
    head_v_dim: int
    conv_kernel: int | None = None
    state_bytes: int = 4  # bytes per recurrent-state element (fp32 state)


@frozen(kw_only=True)
class Moe(Strict):
    experts: int
    top_k: int
    shared_experts: int = 0
    moe_intermediate: int | None = None
    dense_layers: int = 0


@frozen(kw_only=True)
class Need(Strict):
    op: KernelOp
    head_size: int | None = None
    qk_nope_head_dim: int | None = None
    index_topk: int | None = None
    why: Text


@frozen(kw_only=True)
class Parsers(Strict):
    tool: Word | None = None
    reasoning: Word | None = None


@frozen(kw_only=True)
class ParserOverride(Sourced):
    engine: Id
    builds: list[Id] | None = None
    capability: CapabilitySet | None = None
    tool: Word | None = None
    reasoning: Word | None = None
    reason: Text


@frozen(kw_only=True)
class Pitfall(Sourced):
    text: Text
    engines: list[Id] | None = None
    builds: list[Id] | None = None  # only for plans on these engine builds
    capability: CapabilitySet | None = None  # only on these GPUs
    # what `recipegen lint` checks a command against (local-path: a repo id fails)
    check: Literal["local-path"] | None = None


@frozen(kw_only=True)
class ModelArg(RequiredArg):
    """A model × build rule: an argument this model needs on an engine (some builds, GPUs, KV dtypes, formats)."""

    engine: Id
    builds: list[Id] | None = None
    kv_dtypes: list[KvDtype] | None = None  # only when the plan's KV cache is one of these
    quants: list[QuantMethod] | None = None  # only for variants in these formats


@frozen(kw_only=True)
class Variant(Sourced):
    id: Id
    repo: RepoId
    quant: QuantMethod
    publisher: Literal["official", "partner", "community"]
    size_gb: Annotated[float, Limits(gt=0)] | None = None  # on-disk size, 10^9 bytes
    size_gib: Annotated[float, Limits(gt=0)] | None = None  # on-disk size, 2^30 bytes
    shards: int | None = None
    file: RepoFile | None = None  # GGUF: the file to load inside the repo
    revision: GitRef | None = None  # git revision (branch, tag or commit) to download; default: the repo's main branch
    min_capability: Capability | None = None
    min_capability_reason: Text | None = None
    only_builds: list[Id] | None = None  # the only engine builds known to load this checkpoint
    only_builds_reason: Text | None = None
    # known faults of this checkpoint (per engine): such plans rank last
    defects: list[Pitfall] = field(default_factory=list)
    notes: list[Text] = field(default_factory=list)

    def _check(self) -> None:
        if self.size_gb is not None and self.size_gib is not None:
            raise ValueError("give size_gb or size_gib, not both")
        if (self.min_capability is None) != (self.min_capability_reason is None):
            raise ValueError("min_capability and min_capability_reason go together")
        if (self.only_builds is None) != (self.only_builds_reason is None):
            raise ValueError("only_builds and only_builds_reason go together")

    @property
    def size_bytes(self) -> float | None:
        if self.size_gb is not None:
            return self.size_gb * 1e9
        if self.size_gib is not None:
            return self.size_gib * 2**30
        return None


@frozen(kw_only=True)
class Model(Sourced):
    id: Id
    name: Name
    aliases: list[Alias] = field(default_factory=list)
    org: Name
    released: Name
    architecture: ClassName
    model_type: Word
    gguf_arch: Word | None = None
    params_total_b: float
    params_active_b: float | None = None
    layers: int
    hidden_size: int
    vocab_size: int | None = None
    tied_embeddings: bool = False  # config.json tie_word_embeddings: the input table is also the output head
    attention: Attention
    linear_attention: LinearAttention | None = None
    moe: Moe | None = None
    mtp_layers: int = 0
    max_context: int
    multimodal: bool = False
    trust_remote_code: bool = False
    needs: list[Need] = field(default_factory=list)
    parsers: dict[Id, Parsers] = field(default_factory=dict)
    parser_overrides: list[ParserOverride] = field(default_factory=list)
    variants: Annotated[list[Variant], Limits(min_length=1)]
    pitfalls: list[Pitfall] = field(default_factory=list)
    required_args: list[ModelArg] = field(default_factory=list)  # arguments derived plans must carry
    watch: list[Pitfall] = field(default_factory=list)  # upstream work that would open new paths
