"""The comparison of a model derived from its files with the catalog's curated entry, shared by the
per-architecture tests: attention (and linear attention), MoE shape, dimensions, class and kernel needs."""

from __future__ import annotations

from typing import Any


def assert_same_facts(derived: Any, curated: Any) -> None:
    skip = {"sources"}
    assert derived.attention.model_dump(exclude=skip) == curated.attention.model_dump(exclude=skip)
    if curated.linear_attention is not None:
        assert derived.linear_attention is not None
        assert derived.linear_attention.model_dump(exclude=skip) == curated.linear_attention.model_dump(exclude=skip)
    assert derived.moe == curated.moe
    assert (derived.layers, derived.hidden_size, derived.max_context, derived.mtp_layers) == (
        curated.layers,
        curated.hidden_size,
        curated.max_context,
        curated.mtp_layers,
    )
    assert derived.architecture == curated.architecture and derived.gguf_arch == curated.gguf_arch
    key = [(n.op, n.head_size, n.qk_nope_head_dim, n.index_topk) for n in derived.needs]
    assert key == [(n.op, n.head_size, n.qk_nope_head_dim, n.index_topk) for n in curated.needs]
