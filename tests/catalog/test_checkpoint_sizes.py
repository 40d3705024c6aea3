"""Checkpoint sizes in the catalog: every GGUF variant names the file llama-server opens, and the quants people pick
on consumer cards (Q4_K_M to Q8_0) carry the exact size the Hub lists, sourced, so plans need not estimate it."""

from __future__ import annotations

import re

import pytest

# one split set: llama-server is pointed at the first file and finds the others beside it
SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$")
QUANT = re.compile(r"(?i)(?<![A-Z0-9])(Q4_K_M|Q5_K_M|Q6_K|Q8_0)(?=[.-])")
# bits per weight of a whole file (embeddings and norms included) for llama-quantize's mixes; wide enough for any
# dense or MoE model, narrow enough that a size typed for the wrong quant or model falls outside
BITS = {"Q4_K_M": (4.5, 5.2), "Q5_K_M": (5.3, 6.0), "Q6_K": (6.3, 6.9), "Q8_0": (8.2, 8.8)}
LADDER = [
    "qwen3-8b",
    "qwen3-14b",
    "qwen3-32b",
    "qwen3-coder-30b-a3b",
    "qwen2.5-7b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "llama-3.1-8b",
    "mistral-nemo-12b",
    "mistral-small-24b",
    "phi-4",
]


def gguf_variants(catalog):  # type: ignore[no-untyped-def]
    return [(m, v) for m in catalog.models.values() for v in m.variants if v.quant == "gguf"]


def test_gguf_variants_name_a_gguf_file_or_the_first_shard(catalog):
    bad = []
    for m, v in gguf_variants(catalog):
        if v.file is None and m.id not in LADDER:
            continue  # a repo named without a file (Qwen3-235B-A22B's unsloth GGUF): llama.cpp is not planned for it
        if v.file is None or not v.file.endswith(".gguf"):
            bad.append(f"{m.id}/{v.id}: file {v.file!r}")
            continue
        split = SPLIT.search(v.file)
        if split and int(split.group(1)) != 1:
            bad.append(f"{m.id}/{v.id}: {v.file} is not the first shard")
        if split and v.shards is not None and v.shards != int(split.group(2)):
            bad.append(f"{m.id}/{v.id}: shards {v.shards} but the file name says {split.group(2)}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("model", LADDER)
def test_everyday_models_carry_the_quant_ladder_with_sourced_sizes(catalog, model):
    m = catalog.models[model]
    found: dict[str, float] = {}
    for v in m.variants:
        if v.quant != "gguf" or v.size_bytes is None:
            continue
        q = QUANT.search(v.file or "")
        if not q:
            continue
        assert any(s.url.startswith("https://huggingface.co/") and s.date is not None for s in v.sources), (
            f"{model}/{v.id}: its size has no dated Hub source"
        )
        bits = v.size_bytes * 8 / (m.params_total_b * 1e9)
        low, high = BITS[q.group(1).upper()]
        assert low <= bits <= high, f"{model}/{v.id}: {v.size_bytes / 1e9:.2f} GB is {bits:.2f} bits per weight"
        found[q.group(1).upper()] = v.size_bytes
    assert set(found) == set(BITS), f"{model}: sized GGUF quants {sorted(found)}"
    sizes = [found[q] for q in BITS]
    assert sizes == sorted(sizes), f"{model}: sizes do not grow with the bits: {sizes}"
