"""A checkpoint's bits per weight, and so its rank, read the same size the memory gate plans with: a catalog size,
else the estimate from the format (a GGUF's file type)."""

from __future__ import annotations

from recipegen.frozen import evolve
from recipegen.plan.candidates import low_bit, stored_bits, weight_bits


def test_a_gguf_without_a_size_is_classed_by_its_estimated_bits(catalog):
    model = catalog.models["qwen3-32b"]
    q4 = next(v for v in model.variants if v.quant == "gguf" and "Q4_K_M" in (v.file or ""))
    unsized = evolve(q4, size_gb=None)
    assert stored_bits(unsized, model) is not None
    assert weight_bits(unsized, model) == 4 and not low_bit(unsized, model)
    two_bit = evolve(unsized, file=(q4.file or "").replace("Q4_K_M", "IQ2_M"))
    assert weight_bits(two_bit, model) == 4  # the class is 4 bits at most, but the rank sees a lossy checkpoint
    assert low_bit(two_bit, model)


def test_every_place_of_the_rank_key_is_named(catalog):
    # why_first's reasons and the serving reason find a place by its name: the names follow the key
    from recipegen.plan.ranking import RANK_PLACES, rank_key
    from recipegen.plan.resolve import resolve
    from recipegen.plan.types import Request

    request = Request(model=catalog.models["qwen3-8b"], hardware=catalog.hardware["l40s"], gpus_per_node=1)
    plans = resolve(catalog, request).plans
    assert plans and len(rank_key(plans[0].candidate)) == len(RANK_PLACES) == len(set(RANK_PLACES))
