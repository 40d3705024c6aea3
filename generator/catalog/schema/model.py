"""models/*.yaml: one file per model family, with architecture facts, needs, parsers and variants."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from ...bounds import MAX_CONTEXT, MAX_HEADS, MAX_LAYERS, MAX_PARAMS_B, MAX_VOCAB, MAX_WIDTH
from ...frozen import frozen
from ..capability import Capability, CapabilitySet
from .common import KernelOp, KvDtype, Sourced
from .engine import QuantMethod, RequiredArg
from .records import Limits, Strict
from .text import Alias, ClassName, GitRef, Id, Name, RepoFile, RepoId, Text, Word

# A model's dimensions, bounded (bounds.py) as catalog facts and as facts derived from a checkpoint's files:
# a zero, negative or absurd one is refused with the field named before any plan is made from it.
Layers = Annotated[int, Limits(ge=1, le=MAX_LAYERS)]
SomeLayers = Annotated[int, Limits(ge=0, le=MAX_LAYERS)]
Width = Annotated[int, Limits(ge=1, le=MAX_WIDTH)]
SomeWidth = Annotated[int, Limits(ge=0, le=MAX_WIDTH)]  # qk_rope_head_dim is 0 without RoPE
Heads = Annotated[int, Limits(ge=1, le=MAX_HEADS)]
Tokens = Annotated[int, Limits(ge=1, le=MAX_CONTEXT)]
Params = Annotated[float, Limits(gt=0, le=MAX_PARAMS_B)]

AttentionKind = Literal["gqa", "mla", "dsa", "dsa_nope", "dsv4"]


@frozen(kw_only=True)
class Indexer(Strict):
    heads: Heads
    head_dim: Width
    topk: Tokens
    layers: SomeLayers | None = None  # layers that cache indexer keys; default: all attention layers
    kpool: Annotated[int, Limits(ge=1)] = 1  # keys pooled n:1 before caching


@frozen(kw_only=True)
class CompressedLayers(Strict):
    ratio: Annotated[int, Limits(ge=1, le=MAX_CONTEXT)]  # tokens folded into one cached entry
    layers: SomeLayers


WINDOW_SHAPE = ("window_num_heads", "window_num_kv_heads", "window_head_dim", "window_v_head_dim")


@frozen(kw_only=True)
class Attention(Sourced):
    kind: AttentionKind
    num_heads: Heads
    num_kv_heads: Heads | None = None
    head_dim: Width | None = None
    kv_lora_rank: Width | None = None
    qk_rope_head_dim: SomeWidth | None = None
    qk_nope_head_dim: SomeWidth | None = None
    v_head_dim: Width | None = None  # MLA: the value heads' width; gqa: V narrower than K (default head_dim)
    layers: SomeLayers | None = None  # layers with a KV cache; default: all layers
    sliding_window: Tokens | None = None
    sliding_window_layers: SomeLayers | None = None
    # gqa whose window layers have a shape of their own (MiMo-V2-Flash's swa_* fields); default: the full layers'
    window_num_heads: Heads | None = None
    window_num_kv_heads: Heads | None = None
    window_head_dim: Width | None = None
    window_v_head_dim: Width | None = None
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
        shaped = [n for n in WINDOW_SHAPE if getattr(self, n) is not None]
        if shaped and (self.kind != "gqa" or not self.sliding_window_layers):
            raise ValueError(f"{', '.join(shaped)} need gqa attention with sliding_window_layers")

    def kv_shape(self, window: bool = False) -> tuple[int, int, int]:
        """(KV heads, K width, V width) of the full layers, or of the window layers where they differ."""
        kv = self.num_kv_heads or self.num_heads
        k = self.head_dim or 0
        v = self.v_head_dim or k
        if window and self.window_head_dim is not None:
            return self.window_num_kv_heads or kv, self.window_head_dim, self.window_v_head_dim or self.window_head_dim
        return (self.window_num_kv_heads or kv) if window else kv, k, v


# the linear-attention kinds whose state is a convolution window (and an SSM state): one per request, sized
# by channels rather than heads
MAMBA_KINDS = ("mamba1", "mamba2", "short_conv")


@frozen(kw_only=True)
class LinearAttention(Sourced):
    """Layers that keep a fixed state per request instead of a KV cache. Mamba kinds in the SSD framing:
    mamba2 has num_heads SSM heads of head_v_dim (head_dim) × head_k_dim (d_state); mamba1 is the same with
    one head per inner channel (head_v_dim 1); short_conv (LFM2) keeps only its convolution window."""

    kind: Literal["kda", "gdn", "lightning", "mamba1", "mamba2", "short_conv"]
    layers: SomeLayers
    num_heads: Heads  # heads that each keep a head_k_dim x head_v_dim state (GDN: the value heads)
    num_k_heads: Heads | None = None  # key heads when fewer than num_heads (GDN); default: num_heads
    head_k_dim: Width
    head_v_dim: Width
    conv_kernel: Width | None = None
    state_bytes: Annotated[int, Limits(ge=1, le=16)] = 4  # bytes per recurrent-state element (fp32 state)
    inner: Width | None = None  # mamba: the inner (intermediate) channels; short_conv: the convolved channels
    groups: Heads | None = None  # mamba2: n_groups of the B and C projections

    def _check(self) -> None:
        if self.kind in MAMBA_KINDS and (self.inner is None or not self.conv_kernel):
            raise ValueError(f"linear_attention kind {self.kind!r} needs inner and conv_kernel")
        if self.kind == "mamba2" and self.groups is None:
            raise ValueError("linear_attention kind 'mamba2' needs groups")


@frozen(kw_only=True)
class Moe(Strict):
    experts: Heads
    top_k: Heads
    shared_experts: Annotated[int, Limits(ge=0, le=MAX_HEADS)] = 0
    moe_intermediate: Width | None = None
    dense_layers: SomeLayers = 0
    # a latent MoE's routed experts read and write this width, not the model's hidden size (Kimi-K3's
    # routed_expert_hidden_size, Nemotron-3's moe_latent_size)
    expert_hidden: Width | None = None
    # gate, up and down projections per expert, or up and down only (a relu2 expert, Nemotron-H)
    expert_matrices: Literal[2, 3] = 3

    def _check(self) -> None:
        if self.top_k > self.experts:
            raise ValueError(f"top_k {self.top_k} is more than the {self.experts} experts")


@frozen(kw_only=True)
class RopeScaling(Sourced):
    """config.json's rope_scaling: its type and the key(s) it is spelled under (`type`, or `rope_type` as
    transformers writes it since 4.43). A release's generic RoPE code must know both (harvest `rope` table)."""

    type: Word
    keys: Annotated[list[Literal["type", "rope_type"]], Limits(min_length=1)]


@frozen(kw_only=True)
class Need(Strict):
    op: KernelOp
    head_size: int | None = None
    head_size_v: int | None = None  # V narrower than K (gqa with v_head_dim); default: head_size
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


# How one part of a weight-only or block-scaled checkpoint is stored, as its quantization_config says
# (compressed-tensors config_groups: targets, weights.num_bits/type/group_size/symmetric): the bits per
# weight follow from it (checkpoint_size.py). `modules`: the routed experts, or every other linear layer.
@frozen(kw_only=True)
class QuantGroup(Strict):
    modules: Literal["routed_experts", "linear"]
    type: Literal["int", "float"]
    bits: Annotated[int, Limits(ge=1, le=16)]
    group_size: Annotated[int, Limits(ge=1, le=1 << 20)] | None = None  # weights per scale; None: one per row
    scale_bits: Annotated[int, Limits(ge=1, le=32)] = 16  # BF16/FP16 scales; FP8 (NVFP4) 8; FP32 32
    zero_point: bool = False  # asymmetric: a zero point per group, packed at `bits`


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
    # GGUF of a vision model: the vision projector file in the same repo (llama-server's --mmproj); without it the
    # server answers text only
    mmproj: RepoFile | None = None
    # that projector file's size, 10^9 bytes: llama-server loads it onto the GPU beside the model's weights
    mmproj_size_gb: Annotated[float, Limits(gt=0)] | None = None
    revision: GitRef | None = None  # git revision (branch, tag or commit) to download; default: the repo's main branch
    min_capability: Capability | None = None
    min_capability_reason: Text | None = None
    only_builds: list[Id] | None = None  # the only engine builds known to load this checkpoint
    only_builds_reason: Text | None = None
    # known faults of this checkpoint (per engine): such plans rank last
    defects: list[Pitfall] = field(default_factory=list)
    # the storage per part, where its quantization_config is known (a size estimate reads it)
    quant_groups: list[QuantGroup] = field(default_factory=list)
    notes: list[Text] = field(default_factory=list)

    def _check(self) -> None:
        if self.size_gb is not None and self.size_gib is not None:
            raise ValueError("give size_gb or size_gib, not both")
        if (self.min_capability is None) != (self.min_capability_reason is None):
            raise ValueError("min_capability and min_capability_reason go together")
        if (self.only_builds is None) != (self.only_builds_reason is None):
            raise ValueError("only_builds and only_builds_reason go together")
        if self.mmproj is not None and (self.quant != "gguf" or self.file is None):
            raise ValueError("mmproj (a GGUF vision projector) goes with a GGUF variant that names its file")
        if self.mmproj_size_gb is not None and self.mmproj is None:
            raise ValueError("mmproj_size_gb is the size of the variant's mmproj file: name the file")

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
    params_total_b: Params
    params_active_b: Params | None = None
    layers: Layers
    hidden_size: Width
    vocab_size: Annotated[int, Limits(ge=1, le=MAX_VOCAB)] | None = None
    tied_embeddings: bool = False  # config.json tie_word_embeddings: the input table is also the output head
    attention: Attention
    linear_attention: LinearAttention | None = None
    moe: Moe | None = None
    mtp_layers: SomeLayers = 0
    max_context: Tokens
    rope_scaling: RopeScaling | None = None
    multimodal: bool = False
    # the vision tower's parameters where config.json states its shape (counted in params_total_b, loaded 16-bit)
    params_vision_b: Params | None = None
    trust_remote_code: bool = False
    needs: list[Need] = field(default_factory=list)
    parsers: dict[Id, Parsers] = field(default_factory=dict)
    parser_overrides: list[ParserOverride] = field(default_factory=list)
    variants: Annotated[list[Variant], Limits(min_length=1)]
    pitfalls: list[Pitfall] = field(default_factory=list)
    required_args: list[ModelArg] = field(default_factory=list)  # arguments derived plans must carry
    watch: list[Pitfall] = field(default_factory=list)  # upstream work that would open new paths

    def _check(self) -> None:
        """Layer counts within the model's own: a part larger than the whole is no layout."""
        parts = {
            "attention.layers": self.attention.layers,
            "attention.sliding_window_layers": self.attention.sliding_window_layers,
            "linear_attention.layers": self.linear_attention.layers if self.linear_attention else None,
            "moe.dense_layers": self.moe.dense_layers if self.moe else None,
        }
        for name, count in parts.items():
            if count is not None and count > self.layers:
                raise ValueError(f"{name} {count} is more than the model's {self.layers} layers")
