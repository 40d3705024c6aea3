"""Defects whose affected releases were read in the releases' own wheels (issue 28): Qwen3-Next with weights in host
RAM hits the input-batch assertion from 0.10.2 to 0.19.0 (vllm#26206 / #36279, removed by #36461 in 0.20.1), and
Qwen3-Next MTP at 5+ draft tokens crashes on 0.17.0-0.22.0 (vllm#37035, reported at 0.17.0's gdn_attn.py:237). A plan
on an affected release names the defect or moves off it, history flips where the code changed, lint flags the
command and diagnose maps the line the engine prints."""

from __future__ import annotations

from tests.support.release_history import defect_ids, explain, history_of, lint, verdicts

OFFLOAD = "vllm-qwen3next-cpu-offload-input-batch-assert"
MTP5 = "vllm-0.20-qwen3next-mtp-over-4-tokens-illegal-address"
QWEN_NEXT_4090 = ("--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-next-80b-a3b-instruct", "--engine", "vllm")
OFFLOAD_ARGS = ("--host-memory", "256", "--eager")
QWEN_NEXT_FP8 = ("vllm", "serve", "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8", "--max-model-len", "32768")


def offload_findings(doc):
    return [f for f in doc["findings"] if f["code"] == "defect" and "Cannot re-initialize the input batch" in f["why"]]


def test_an_offloading_qwen3_next_plan_is_blocked_on_0_19_and_runs_on_0_20_1(cli):
    blocked = explain(cli, *QWEN_NEXT_4090, *OFFLOAD_ARGS, "--build", "vllm-0.19.0")
    assert not blocked["plans"]
    reasons = " ".join(blocked["reasons"][r["reason_id"]]["reason"] for r in blocked["rejected"])
    assert OFFLOAD in reasons and "Cannot re-initialize the input batch" in reasons
    fixed = explain(cli, *QWEN_NEXT_4090, *OFFLOAD_ARGS, "--build", "vllm-0.20.1")["plans"][0]
    assert fixed["offload"] is not None and OFFLOAD not in defect_ids(fixed)
    # weights that fit on the GPUs do not offload, so the same release is not hit
    fits = explain(cli, "--gpu", "h200", "--gpus", "1", *QWEN_NEXT_4090[4:], "--build", "vllm-0.19.0")["plans"][0]
    assert fits["offload"] is None and OFFLOAD not in defect_ids(fits)


def test_history_of_an_offloading_qwen3_next_flips_at_0_20_1(cli):
    builds = verdicts(history_of(cli, "vllm", "rtx-4090", "qwen3-next-80b-a3b-instruct", 1, *OFFLOAD_ARGS))
    for carrying in ("vllm-0.10.2", "vllm-0.11.0", "vllm-0.14.0", "vllm-0.15.1", "vllm-0.16.0", "vllm-0.19.0"):
        assert OFFLOAD in builds[carrying]["defects"], carrying
    for clean in ("vllm-0.10.1", "vllm-0.20.1", "vllm-0.22.0", "vllm-0.33.0"):
        assert OFFLOAD not in builds[clean]["defects"], clean
    assert builds["vllm-0.19.0"]["verdict"] == "blocked" and "fixed in vllm-0.20.1" in builds["vllm-0.19.0"]["reason"]
    assert builds["vllm-0.20.1"]["verdict"] == "runnable"


def test_lint_flags_cpu_offload_gb_for_qwen3_next_on_0_19_and_not_on_0_20_1_or_without_it(cli):
    command = (*QWEN_NEXT_FP8, "--cpu-offload-gb", "60", "--enforce-eager")
    (hit,) = offload_findings(lint(cli, "--gpu", "rtx-4090", "--build", "vllm-0.19.0", "--", *command))
    assert hit["flag"] == "--cpu-offload-gb" and "weights offloaded to host RAM" in hit["what"]
    assert not offload_findings(lint(cli, "--gpu", "rtx-4090", "--build", "vllm-0.20.1", "--", *command))
    plain = (*QWEN_NEXT_FP8, "--tensor-parallel-size", "4", "--enforce-eager")
    assert not offload_findings(lint(cli, "--gpu", "rtx-4090", "--build", "vllm-0.19.0", "--", *plain))


def test_diagnose_names_the_offload_assertion_and_the_release_that_removed_it(cli, tmp_path):
    log = tmp_path / "worker.log"
    log.write_text(
        "(EngineCore_DP0 pid=1) ERROR 10-06 10:00:00 [core.py:708] RuntimeError: Worker failed with error 'Cannot "
        "re-initialize the input batch when CPU weight offloading is enabled. See "
        "https://github.com/vllm-project/vllm/pull/18298 for more details.', please check the stack trace above for "
        "the root cause\n",
        encoding="utf-8",
    )
    doc = cli("diagnose", str(log), "--format", "json")
    assert doc.code in (0, 1), doc.err
    assert OFFLOAD in doc.out and "vllm-0.20.1" in doc.out and "weights offloaded to host RAM" in doc.out


def test_qwen3_next_five_mtp_tokens_are_named_from_0_17_to_0_22_and_not_on_0_16(cli):
    args = ("vllm", "h100", "qwen3-next-80b-a3b-instruct", 4, "--speculative", "mtp")
    five = verdicts(history_of(cli, *args, "--speculative-tokens", "5"))
    for carrying in ("vllm-0.17.0", "vllm-0.18.0", "vllm-0.19.0", "vllm-0.20.1", "vllm-0.22.0"):
        assert MTP5 in five[carrying]["defects"], carrying
    for clean in ("vllm-0.16.0", "vllm-0.15.1", "vllm-0.23.0"):
        assert MTP5 not in five[clean]["defects"], clean
    four = verdicts(history_of(cli, *args, "--speculative-tokens", "4"))
    assert MTP5 not in four["vllm-0.17.0"]["defects"]
    plan = explain(
        cli,
        "--gpu",
        "h100",
        "--gpus",
        "4",
        "--model",
        "qwen3-next-80b-a3b-instruct",
        "--engine",
        "vllm",
        "--build",
        "vllm-0.18.0",
        "--speculative",
        "mtp",
        "--speculative-tokens",
        "5",
    )["plans"][0]
    assert MTP5 in defect_ids(plan)
