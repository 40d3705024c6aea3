"""The everyday consumer question: a model that fits one 24 GB card only quantized gets a 4-bit checkpoint
fully on the GPU first; plans that copy weights over PCIe rank after every plan that fits; the reason given
for the first plan is true, and an estimated size says so with its assumption."""

from __future__ import annotations

import re

from tests.support.cli import run_cli

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
FOUR_BIT = {"awq", "gptq", "int4", "nvfp4", "mxfp4", "gguf"}


def test_qwen3_32b_on_one_rtx_4090_plans_a_4bit_checkpoint_on_the_gpu_first():
    result = run_cli(
        "explain", "--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-32b", "--format", "json", env=OFFLINE
    )
    assert result.code == 0, result.err
    plans = result.json()["plans"]
    first = plans[0]
    assert first["quant"] in FOUR_BIT and first["offload"] is None
    offloaded = [i for i, p in enumerate(plans) if p["offload"] is not None]
    on_gpu = [i for i, p in enumerate(plans) if p["offload"] is None]
    assert on_gpu and (not offloaded or max(on_gpu) < min(offloaded))
    if "size not in the catalog" in " ".join(first["notes"]):
        # the estimate names its assumption: INT4's group size, or the GGUF quant type's bits per weight
        assumption = "bits per weight" if first["quant"] == "gguf" else "group size"
        assert any("estimated as" in n and assumption in n for n in first["notes"])
    # "a smaller checkpoint (X vs Y GiB per GPU)" is true where it is said
    said = re.search(r"a smaller checkpoint \(([\d.]+) vs ([\d.]+) GiB", first["why_first"] or "")
    if said:
        assert float(said.group(1)) < float(said.group(2)), first["why_first"]
