"""How far a size counted from the parameter count lands from the published one, over the catalog's own data."""

from __future__ import annotations

from recipegen.plan.checkpoint_size import COUNTED_EXACTLY, COUNTED_TOLERANCE, checkpoint_bytes


def test_every_published_16_bit_size_is_within_the_tolerance_of_parameters_times_two(catalog):
    """The matrix shows a BF16/FP16 checkpoint whose size is counted (parameters × 2 B) as ✓, not ◐ estimated size,
    because the count is the size up to the rounding of the parameter count: every 16-bit variant with a published
    size must agree within COUNTED_TOLERANCE, or the matrix's legend claims too much. The catalog holds enough of
    them for the claim to rest on data, and an FP8 count (1 B a parameter) is no such thing: it is a lower bound."""
    counted = []
    for model in catalog.models.values():
        for variant in model.variants:
            if variant.quant in COUNTED_EXACTLY and variant.size_bytes is not None:
                sized = checkpoint_bytes(model, None, variant.quant)
                assert sized is not None and sized[1] is not None
                error = sized[0] / variant.size_bytes - 1
                assert abs(error) <= COUNTED_TOLERANCE, (model.id, variant.id, f"{error:+.1%}")
                counted.append(error)
    assert len(counted) >= 10
    fp8 = [
        checkpoint_bytes(m, None, v.quant)[0] / v.size_bytes  # type: ignore[index]
        for m in catalog.models.values()
        for v in m.variants
        if v.quant == "fp8" and v.size_bytes is not None
    ]
    assert fp8 and all(ratio <= 1.0 for ratio in fp8)
