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
    # 0.3.0 has no fp8.py and registers no bitsandbytes method at all
    assert "no loader in this release: bnb4, bnb8, fp8, fp8_block" in older.notes[1]
    formats = {w.quant: w for w in older.weight_formats}
    assert "fp8" not in formats and str(formats["awq"].native) == ">=7.5"
    assert not any(s.unverified for s in formats["awq"].sources)
    assert {k.name for k in older.kernels if k.provides == "attention.gqa"} == {"PagedAttention (xFormers prefill)"}


def test_a_release_between_files_inherits_the_open_defects_of_the_file_below(catalog):
    """Made as if 0.25.0 had no file: 0.24.0 (below) lends what code cannot say; its defects fixed in 0.25.0 stay
    behind, the open ones come along and say where from; a fact 0.26.0 (above) no longer has is unverified."""
    from recipegen.catalog.harvested_builds import make

    engine = catalog.engines["vllm"]
    below = next(b for b in engine.builds if b.id == "vllm-0.24.0")
    above = next(b for b in engine.builds if b.id == "vllm-0.26.0")
    made = make(engine, "0.25.0", frozenset({"vllm-0.25.0"}))
    assert made is not None and made.version == "0.25.0"
    fixed = {d.id for d in below.defects if d.fixed_in == "vllm-0.25.0"}
    still = {d.id for d in below.defects if d.fixed_in is None}
    assert fixed and still and {d.id for d in made.defects} == still
    assert all("inherited from vllm-0.24.0" in (d.sources[0].note or "") for d in made.defects)
    assert made.notes[2].startswith("Inherited from vllm-0.24.0, the nearest release file below it")
    assert {str(i) for i in made.images.values()} == {
        str(i).replace("v0.24.0", "v0.25.0") for i in below.images.values()
    }
    kept = {(k.name, k.provides) for k in above.kernels}
    assert made.kernels
    for kernel in made.kernels:
        carried = any(
            "inherited from vllm-0.24.0" in (s.note or "") or "no longer in" in (s.note or "") for s in kernel.sources
        )
        if carried:
            assert kernel.unverified == ((kernel.name, kernel.provides) not in kept), kernel.name


def test_8_bit_bitsandbytes_checkpoints_load_from_the_release_whose_loader_reads_them(catalog):
    """vLLM 0.5.5's bitsandbytes loader reads 4-bit quant states only (no load_in_8bit): its 8-bit format is refused
    with that reason; 0.6.0's reads load_in_8bit, so both sizes load from the method's 7.0 minimum."""
    own = copy.copy(catalog)
    own.engines = dict(catalog.engines)
    own.origins = dict(catalog.origins)
    for release, eight in (("0.5.5", False), ("0.6.0", True)):
        made = adopt(own, "vllm", release)
        assert made is not None
        formats = {w.quant: w for w in made.weight_formats}
        assert str(formats["bnb4"].native) == ">=7.0" and not formats["bnb4"].unverified
        if eight:
            assert str(formats["bnb8"].native) == ">=7.0"
        else:
            assert formats["bnb8"].native is None and "load_in_8bit" in (formats["bnb8"].refused or "")
