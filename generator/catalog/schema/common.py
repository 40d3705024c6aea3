"""Pieces shared by every catalog kind: sources, closed vocabularies (the record base is in records.py)."""

from __future__ import annotations

import datetime as dt
from dataclasses import field
from typing import Literal

from ...frozen import frozen
from .records import Strict
from .text import Text


@frozen(kw_only=True)
class Source(Strict):
    """Where a fact comes from. `url` is a public URL or a file inside the package."""

    url: Text
    date: dt.date | None = None
    note: Text | None = None
    unverified: bool = False  # nobody re-checked the value against the source


Sources = list[Source]

HostArch = Literal["x86_64", "aarch64"]

# Canonical KV-cache dtypes; each engine maps them to its own spelling (engines/*.yaml kv_dtype_names).
KvDtype = Literal["bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "q8_0", "q4_0"]

# What a model needs from an engine build, beyond loading its weights. Kernels in a build
# declare which of these they provide; the kernel gate matches one against the other.
KernelOp = Literal[
    "attention.gqa",  # standard MHA/GQA (incl. sliding-window layers)
    "attention.sinks",  # attention sinks (gpt-oss)
    "attention.mla",  # dense multi-head latent attention (DeepSeek-V3, Kimi K2)
    "attention.sparse_mla",  # DSA sparse MLA with RoPE (DeepSeek-V3.2, GLM-5.x)
    "attention.sparse_mla_nope",  # DSA sparse MLA without RoPE, 512 wide (GLM-5.3-Flash)
    "attention.dsv4",  # DeepSeek-V4 compressed sparse attention (CSA + HCA)
    "attention.lightning",  # MiniMax-M1 lightning attention
    "indexer.dsa",  # DSA lightning-indexer logits (DeepGEMM or a fallback)
    "linear_attention.kda",  # Kimi delta attention state layers
    "linear_attention.gdn",  # gated DeltaNet state layers
    "linear_attention.mamba",  # Mamba-1 / Mamba-2 selective state-space layers (selective scan, SSD)
    "linear_attention.short_conv",  # gated short causal convolution layers (LFM2)
    "moe.fp8_block",  # FP8 block-scaled grouped GEMM for MoE experts
]

Status = Literal["verified", "community", "reported"]
PlanStatus = Literal["verified", "community", "reported", "derived"]


@frozen(kw_only=True)
class Sourced(Strict):
    """Mixin-style base: anything that states a non-obvious fact carries its sources."""

    sources: Sources = field(default_factory=list)

    @property
    def unverified(self) -> bool:
        """A fact whose every source is marked unverified: it can only ever give an unknown verdict."""
        return bool(self.sources) and all(s.unverified for s in self.sources)
