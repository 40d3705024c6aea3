"""Builds made from a harvested release's own code (harvested_builds.py, harvested_kernels.py)."""

from __future__ import annotations

import copy

from recipegen.catalog.harvested_builds import adopt


def test_a_release_made_from_its_code_is_no_template_for_an_older_one(catalog):
    own = copy.copy(catalog)
    own.engines = dict(catalog.engines)
    own.origins = dict(catalog.origins)
    newer = adopt(own, "vllm", "0.8.5")
    older = adopt(own, "vllm", "0.3.0")
    assert newer is not None and older is not None
    # what 0.3.0's wheel does not say is carried from the oldest hand-written release, never from 0.8.5's made build
    assert older.notes[2].startswith("Carried from vllm-0.10.0, not read in 0.3.0")
    assert "no loader in this release: fp8, fp8_block" in older.notes[1]  # 0.3.0 has no fp8.py at all
    formats = {w.quant: w for w in older.weight_formats}
    assert "fp8" not in formats and str(formats["awq"].native) == ">=7.5"
    assert not any(s.unverified for s in formats["awq"].sources)
    assert {k.name for k in older.kernels if k.provides == "attention.gqa"} == {"PagedAttention (xFormers prefill)"}
