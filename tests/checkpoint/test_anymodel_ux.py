"""The any-model answers a user reads: "unknown" is not "blocked", and an INT4 checkpoint's size is
estimated from sourced facts (parameters, vocabulary, the format's layout) and said to be one."""

from __future__ import annotations

import pytest

from recipegen.plan.checkpoint_size import INT4_BYTES_PER_WEIGHT, int4_estimate
from tests.support.contract import rejections

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}


def test_unknown_is_not_blocked_when_a_fact_is_missing(cli, tmp_path):
    """Offline, a GGUF repo's size is not known: nothing rules the path out, so the answer is unknown."""
    args = ("--gpu", "h100", "--model", "unsloth/GLM-4.6-GGUF")
    text = cli("explain", *args, "--verbose", env=OFFLINE)
    assert text.code == 0, text.err
    verdict = next(line for line in text.out.splitlines() if line.startswith("VERDICT"))
    assert verdict.startswith("VERDICT: unknown — no path is known to run, but ")
    # the layout search shows the smallest layout where a path fails no gate, not the last one tried
    assert "none is known to run — shown for 1 GPU(s), the smallest where a path fails no gate" in text.out
    assert (
        "the catalog names no file of unsloth/GLM-4.6-GGUF (variant gguf-unsloth) and llama-server loads one" in verdict
    )
    assert "online (HF_HUB_OFFLINE unset) recipegen reads the repo's files" in text.out
    doc = cli("explain", *args, "--format", "json", env=OFFLINE).json()
    assert (doc["verdict"], doc["verdict_detail"]) == ("blocked", "unknown")
    out = tmp_path / "out"
    written = cli(*args, "--out", str(out), env=OFFLINE)
    assert written.code == 3 and written.err.startswith("error: unknown: no path is known to run")
    assert not out.exists()
    wall = ("--gpu", "rtx-4090", "--model", "glm-5.3-flash", "--engine", "vllm", "--build", "vllm==0.33.0")
    blocked = cli("explain", *wall, "--gpus", "8", "--format", "json").json()
    assert (blocked["verdict"], blocked["verdict_detail"]) == ("blocked", "blocked")


def test_an_awq_checkpoint_of_unknown_size_is_estimated_and_said_to_be(cli, catalog, tmp_path):
    """Offline, someone/Qwen3-32B-AWQ is Qwen3-32B as AWQ; the catalog gives no size, so the plan uses
    4-bit linear layers with group-128 scales and zeros plus 16-bit embedding and lm_head, and says so."""
    doc = cli("explain", "--gpu", "h100", "--model", "someone/Qwen3-32B-AWQ", "--format", "json", env=OFFLINE).json()
    assert (doc["verdict"], doc["verdict_detail"]) == ("runnable", "runnable")
    top = doc["plans"][0]
    model = catalog.models["qwen3-32b"]
    embed = model.vocab_size * model.hidden_size
    expected = (model.params_total_b * 1e9 - 2 * embed) * INT4_BYTES_PER_WEIGHT + 4 * embed
    assert top["memory"]["weights_gib"] * top["gpus"] == pytest.approx(expected / 2**30, rel=0.01)
    assert any("estimated as" in n and "assumes group size 128" in n for n in top["notes"]), top["notes"]
    # a variant nobody named is estimated too, and ranks by what runs best: the estimate is said on its plan
    plain = cli("explain", "--gpu", "h100", "--model", "qwen3-32b", "--format", "json").json()
    awq = next(p for p in plain["plans"] if p["variant"] == "awq")
    assert any("estimated as" in n and "assumes group size 128" in n for n in awq["notes"])
    assert not any(
        r["variant"] == "awq" and (r["gate"], r["outcome"]) == ("memory", "unknown") for r in rejections(plain)
    )
    out = tmp_path / "awq"
    written = cli("--gpu", "rtx-4090", "--model", "qwen3-32b", "--variant", "awq", "--out", str(out), env=OFFLINE)
    assert written.code == 0, written.err
    assert "GiB weights/GPU (checkpoint size estimated from the parameter count; README.md says how)" in written.out
    readme = (out / "README.md").read_text()
    assert "checkpoint size not in the catalog: estimated as" in readme
    assert "GB, estimated from the parameter count)" in readme


def test_the_int4_estimate_is_refused_where_the_layout_is_not_known(catalog):
    # multimodal (vision towers kept 16-bit in unknown amount) stays unknown; MoE experts are linear layers
    assert int4_estimate(catalog.models["llama-4-scout"]) is None
    assert int4_estimate(catalog.models["kimi-k2"]) is not None
    size, how = int4_estimate(catalog.models["llama-3.1-8b"]) or (0.0, "")
    assert 5.5e9 < size < 6.0e9 and "16-bit" in how


def test_a_blocked_variant_names_the_variant_that_runs_on_the_same_gpus(cli):
    text = cli("explain", "--gpu", "h100", "--model", "ZhipuAI/GLM-4.6", "--verbose", env=OFFLINE).out
    verdict = next(line for line in text.splitlines() if line.startswith("VERDICT"))
    assert verdict.startswith("VERDICT: blocked")  # BF16 GLM-4.6 (355B) does not fit 8 × 80 GB
    assert "another variant runs: fp8 (zai-org/GLM-4.6-FP8)" in text
    assert "--variant fp8, or --model zai-org/GLM-4.6-FP8" in text
