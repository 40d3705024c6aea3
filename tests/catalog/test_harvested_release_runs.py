"""A release the catalog knows only from its harvested code (older than every release file) answers `--build` from
what its wheel was read to say (the `kernels` table). Where that release was also run, the run must agree with the
reading: the quantization minimums, and the attention backend its selector returns for each shape and GPU."""

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


def test_older_releases_were_run():
    assert {"0.7.3", "0.8.0", "0.8.5", "0.9.0", "0.9.2"} <= set(RELEASES)


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


@pytest.mark.parametrize("release", RELEASES)
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


@pytest.mark.parametrize("release", RELEASES)
def test_each_read_quantization_minimum_is_the_one_the_release_returns(release):
    """Per config class: the reader files each class under the name its get_name() returns, which up to 0.8.0 is not
    always the `--quantization` name the registry maps to it (DeepSpeedFP, compressed_tensors, modelopt_nvfp4 in
    0.8.0); the run asks the registry's names, and each records the class it answered for."""
    read = {entry["class"]: entry for entry in _read(release)["quantization"]["methods"].values()}
    ran = harvest.ran("vllm", release)["quantization"]["methods"]
    # a method of another platform (neuron, TPU) raises when asked on CUDA: no minimum to compare
    both = sorted(m for m, entry in ran.items() if "min_capability" in entry and entry["class"] in read)
    assert len(both) >= 20
    wrong = [
        f"{m} ({ran[m]['class']}): read {read[ran[m]['class']]['min']}, ran {ran[m]['min_capability']}"
        for m in both
        if read[ran[m]["class"]]["min"] != ran[m]["min_capability"]
    ]
    assert not wrong, f"vllm {release}:\n" + "\n".join(wrong)
