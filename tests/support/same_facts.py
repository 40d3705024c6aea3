"""The comparison of a model derived from its files with the catalog's curated entry, shared by the
per-architecture tests: attention (and linear attention), MoE shape, dimensions, class and kernel needs."""

from __future__ import annotations

from typing import Any

from recipegen.catalog.schema.records import to_data


def assert_same_facts(derived: Any, curated: Any) -> None:
    skip = frozenset({"sources"})
    assert to_data(derived.attention, exclude=skip) == to_data(curated.attention, exclude=skip)
    if curated.linear_attention is not None:
        assert derived.linear_attention is not None
        assert to_data(derived.linear_attention, exclude=skip) == to_data(curated.linear_attention, exclude=skip)
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
