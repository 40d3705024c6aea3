"""A release the catalog knows only from its harvested code (older than every release file) answers `--build` from
what its wheel was read to say (the `kernels` table). Where that release was also run, the run must agree with the
reading: the quantization minimums, and the attention backend its selector returns for each shape and GPU.

Two kinds of run: 0.8.5-0.9.x asked the V1 engine's chain (`CudaPlatform.get_attn_backend_cls`), 0.6.6 and older
the V0 engine's only selector (`vllm/attention/selector.py get_attn_backend`, the ran file's `chain.selector`). A V0
run is what runs on every GPU, so every capability is held to the reading: FLASH_ATTN where its read conditions take
the case (capability, head size, KV cache, sliding window), else XFORMERS, which the V0 selector falls back to
whatever the case (its paged attention then refuses a head size it lacks, as its read head sizes say)."""

from __future__ import annotations

import pytest

from recipegen.catalog import harvest
from recipegen.catalog.load import load

# releases whose run answered through the V1 engine's chain: below 8.0 the release's V1 oracle falls back to V0
# (vllm/engine/arg_utils.py `_is_v1_supported_oracle`: "Compute Capability < 8.0"), whose backends the read table
# holds instead, so the chain's answers there are not what runs
V1_FROM = 80


def _harvested_only_runs() -> list[str]:
    written = {b.version for b in load().engines["vllm"].builds if b.provenance == "official"}
    return [
        r
        for r in harvest.releases("vllm")
        if r not in written
        and (facts := harvest.load("vllm", r)) is not None
        and facts.kernels
        and harvest.ran("vllm", r)
    ]


RELEASES = _harvested_only_runs()


def _v0(release: str) -> bool:
    """A run of the V0 engine's selector (0.6.6 and older), not the V1 chain."""
    return harvest.ran("vllm", release)["attention_selector"].get("chain", {}).get("selector") == "get_attn_backend"


V0_RELEASES = [r for r in RELEASES if _v0(r)]


def test_older_releases_were_run():
    assert {"0.5.5", "0.6.3", "0.6.6", "0.7.3", "0.8.0", "0.8.5", "0.9.0", "0.9.2"} <= set(RELEASES)
    assert {"0.5.5", "0.6.3", "0.6.6"} <= set(V0_RELEASES)


def _read(release: str) -> dict:
    facts = harvest.load("vllm", release)
    assert facts is not None and facts.kernels is not None
    return facts.kernels


def _takes(entry: dict, capability: int, head_size: int | None) -> bool:
    """Whether a read backend's conditions (minimum, majors, exact capabilities, head sizes) admit the case; what
    it is compiled for is a separate fact, which the selector does not consult."""
    if entry.get("min") is not None and capability < entry["min"]:
        return False
    if entry.get("majors") and capability // 10 not in entry["majors"]:
        return False
    if entry.get("exactly") and capability not in entry["exactly"]:
        return False
    return not (head_size is not None and entry.get("head_sizes") and head_size not in entry["head_sizes"])


# the order each engine's chain tries the read backends in: V1 (0.8.0 on) and V0 (the default engine up to 0.7.x,
# whose chain falls back to XFORMERS wherever FlashAttention does not take the case)
ORDER = {
    True: {"gqa": ("FLASHINFER", "FLASH_ATTN"), "mla": ("FLASHMLA", "TRITON_MLA")},
    False: {"gqa": ("FLASH_ATTN", "XFORMERS"), "mla": ("FLASHMLA", "TRITON_MLA")},
}


def _asked(release: str) -> tuple[bool, list[dict]]:
    """Which engine the run asked (a run from before the probe recorded it asked V1) and its cases."""
    selector = harvest.ran("vllm", release)["attention_selector"]
    return selector.get("chain", {}).get("use_v1", True), selector["cases"]


@pytest.mark.parametrize("release", [r for r in RELEASES if not _v0(r)])
def test_the_backend_the_run_picks_is_the_first_read_backend_that_takes_the_case(release):
    """For the engine users get (V1 from 8.0 where it is the default, V0 everywhere where V0 is; the release's default
    block size), the read backends in the order the chain tries them; a backend behind an optional package the wheel
    does not ship (FlashInfer) is passed over, as the run, which did not install it, passes it over. V1 is held to an
    auto KV cache (0.8.x's oracle hands an FP8 cache to V0), V0 to each KV dtype too: only a backend the reading
    says takes an FP8 cache may be picked for one."""
    read = _read(release)["attention"]
    v1, cases = _asked(release)
    order = ORDER[v1]
    checked, problems = 0, []
    for case in cases:
        shape, cap, kv = case["shape"], case["capability"], case["kv"]
        if shape not in order or not case.get("selected") or (v1 and (cap < V1_FROM or kv != "auto")):
            continue
        entries = {e["backend"]: e for e in read.get(shape, [])}
        head = case["head_size"] if shape == "gqa" else None
        fp8 = kv.startswith("fp8")
        expected = next(
            (
                {b}
                for b in order[shape]
                if b in entries
                and not entries[b].get("optional_package")
                and _takes(entries[b], cap, head)
                and (not fp8 or entries[b].get("fp8_kv"))
            ),
            # a case no read backend takes: a head size FlashAttention lacks, where 0.9.2's chain turns to
            # FLEX_ATTENTION and 0.9.0's and 0.8.x's return FLASH_ATTN anyway; V0 returns its last resort anyway
            # (XFORMERS for a head size it lacks, TRITON_MLA for an FP8 cache), which refuses the case when it
            # starts, as the reading says
            ({"FLEX_ATTENTION", "FLASH_ATTN"} if shape == "gqa" else set()) if v1 else {order[shape][-1]},
        )
        checked += 1
        if case["selected"] not in expected:
            problems.append(
                f"{shape} {case.get('variant')} head {head} kv {kv} sm_{cap}: ran {case['selected']},"
                f" read {sorted(expected)}"
            )
    assert not problems, f"vllm {release}:\n" + "\n".join(problems)
    assert checked >= 100


def _v0_expected(flash: dict | None, case: dict) -> str:
    """What the read table says the V0 selector picks: FLASH_ATTN where its conditions take the case, else XFORMERS."""
    windowed = case.get("variant") == "sliding_window" and "not_selector_input" not in case
    takes = (
        flash is not None
        and _takes(flash, case["capability"], case["head_size"])
        and (case["kv"] == "auto" or flash["fp8_kv"])
        and not (windowed and flash.get("sliding_window") is False)
    )
    return "FLASH_ATTN" if takes else "XFORMERS"


@pytest.mark.parametrize("release", V0_RELEASES)
def test_a_v0_run_picks_on_every_gpu_what_the_read_conditions_say(release):
    """Every GQA case the V0 selector answered (plain and windowed; sinks and MLA are no input of it), on every
    capability, at the default block size, with the KV spellings the release's CLI offers: FLASH_ATTN exactly where
    the read entry's minimum, head sizes, FP8-KV and sliding-window conditions take it."""
    read = _read(release)
    flash = next((e for e in read["attention"]["gqa"] if e["backend"] == "FLASH_ATTN"), None)
    offered = set(read["kv_cache_dtypes"]["choices"]) if "kv_cache_dtypes" in read else {"auto", "fp8"}
    checked, problems = 0, []
    for case in harvest.ran("vllm", release)["attention_selector"]["cases"]:
        if case["shape"] != "gqa" or "error" in case or case["kv"] not in offered:
            continue
        expected = _v0_expected(flash, case)
        checked += 1
        if case["selected"] != expected:
            problems.append(
                f"{case['variant']} head {case['head_size']} kv {case['kv']} sm_{case['capability']}: ran "
                f"{case['selected']}, read {expected}"
            )
    assert not problems, f"vllm {release}:\n" + "\n".join(problems)
    assert checked >= 300


@pytest.mark.parametrize("release", RELEASES)
def test_each_read_quantization_minimum_is_the_one_the_release_returns(release):
    """Joined on the config class: the reader keys a method by its `get_name()`, the run by its registry key, and
    0.6.x spells a few apart (DeepSpeedFPConfig: `DeepSpeedFP` / `deepspeedfp`, compressed_tensors / -tensors)."""
    read = {m["class"]: m for m in _read(release)["quantization"]["methods"].values() if "class" in m}
    ran = {m["class"]: m for m in harvest.ran("vllm", release)["quantization"]["methods"].values() if "class" in m}
    # a method of another platform (neuron, TPU) raises when asked on CUDA: no minimum to compare
    both = sorted(c for c in set(read) & set(ran) if "min_capability" in ran[c])
    assert len(both) >= 15
    wrong = [
        f"{c}: read {read[c]['min']}, ran {ran[c]['min_capability']}"
        for c in both
        if read[c]["min"] != ran[c]["min_capability"]
    ]
    assert not wrong, f"vllm {release}:\n" + "\n".join(wrong)
