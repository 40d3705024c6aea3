"""vllm#44044: MLA decode asserted `not fp8_attention` whenever decode context parallel was on, from 0.10.2 (the
first release with DCP) to 0.24.0 (read in the wheels), so Kimi / DeepSeek with --decode-context-parallel-size and
--kv-cache-dtype fp8 crash there; 0.25.0 takes the combination."""

from __future__ import annotations

from tests.support.release_history import defect_ids, explain, history_of, lint, verdicts

DEFECT = "vllm-mla-dcp-fp8-kv-assert"
KIMI_H200 = ("--gpu", "h200", "--model", "kimi-k2.5", "--gpus", "8", "--engine", "vllm")


def test_a_plan_on_0_24_with_dcp_and_fp8_kv_names_the_defect_and_its_workaround(cli):
    plan = explain(cli, *KIMI_H200, "--dcp", "8", "--kv-cache-dtype", "fp8", "--build", "vllm==0.24.0")["plans"][0]
    assert DEFECT in defect_ids(plan)
    (defect,) = [d for d in plan["build_defects"] if d["id"] == DEFECT]
    assert "--kv-cache-dtype auto" in defect["workaround"] and defect["fixed_in"] == "vllm-0.25.0"
    # either knob alone is not the configuration it hits
    no_dcp = explain(cli, *KIMI_H200, "--kv-cache-dtype", "fp8", "--build", "vllm==0.24.0")["plans"][0]
    bf16 = explain(cli, *KIMI_H200, "--dcp", "8", "--kv-cache-dtype", "bfloat16", "--build", "vllm==0.24.0")["plans"][0]
    assert DEFECT not in defect_ids(no_dcp) and DEFECT not in defect_ids(bf16)


def test_history_shows_the_assertion_from_the_first_dcp_release_until_0_25(cli):
    builds = verdicts(history_of(cli, "vllm", "h200", "deepseek-v3", 8, "--dcp", "8", "--kv-cache-dtype", "fp8"))
    assert all(DEFECT in builds[b]["defects"] for b in ("vllm-0.10.2", "vllm-0.18.0", "vllm-0.24.0"))
    assert DEFECT not in builds["vllm-0.10.1"]["defects"]  # no decode context parallel in that release
    assert all(DEFECT not in builds[b]["defects"] for b in ("vllm-0.25.0", "vllm-0.26.0", "vllm-0.33.0"))


def test_lint_flags_dcp_with_fp8_kv_on_0_24_and_not_on_0_25(cli):
    command = ("vllm", "serve", "moonshotai/Kimi-K2.5", "--tensor-parallel-size", "8", "--trust-remote-code")
    command += ("--decode-context-parallel-size", "8", "--kv-cache-dtype", "fp8")

    def flagged(build: str) -> bool:
        doc = lint(cli, "--gpu", "h200", "--gpus", "8", "--build", build, "--", *command)
        return any(f["code"] == "defect" and "DCP not support fp8 kvcache" in f["why"] for f in doc["findings"])

    assert flagged("vllm-0.24.0")
    assert not flagged("vllm-0.25.0")


def test_diagnose_maps_the_assertion_to_the_defect(cli, tmp_path):
    log = tmp_path / "engine.log"
    log.write_text(
        'ERROR 07-02 10:11:12 [core.py:700]     assert not fp8_attention, "DCP not support fp8 kvcache now."\n'
        "AssertionError: DCP not support fp8 kvcache now.\n",
        encoding="utf-8",
    )
    result = cli("diagnose", str(log), "--gpu", "h200", "--model", "kimi-k2.5", "--format", "json")
    assert DEFECT in result.out
    assert "--kv-cache-dtype auto" in result.out


def test_the_sm120_community_image_with_the_cherry_pick_does_not_carry_it(cli):
    args = ("--gpu", "rtx-pro-6000", "--model", "kimi-k2.5", "--gpus", "8", "--engine", "vllm")
    doc = explain(cli, *args, "--dcp", "8", "--kv-cache-dtype", "fp8", "--as-of", "2026-03-10")
    plan = doc["plans"][0]
    assert plan["build"] == "vllm-sm120-voipmonitor-cu130-patched"
    assert DEFECT not in defect_ids(plan)
