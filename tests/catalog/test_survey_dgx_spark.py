"""The DGX Spark slice of the field survey (issue 28, December 2026): tensor parallelism across two Sparks dies
capturing CUDA graphs on vLLM 0.24.0 (vllm#46253: GB10 has no GPUDirect RDMA, so NCCL's cross-node all-reduce is
host-staged) — a defect scoped to a layout over more than one node with CUDA graphs on; and three community paths
that a report dated before their release does not know (`--as-of`)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.support.release_history import defect_ids, explain, lint

CAPTURE = "vllm-gb10-cross-node-cudagraph-capture"
SPARKS = ("--gpu", "gb10", "--gpus", "1", "--model", "qwen3-30b-a3b", "--engine", "vllm", "--build", "vllm-0.24.0")
SERVE = ("--", "docker", "run", "vllm/vllm-openai:v0.24.0-aarch64", "--model", "Qwen/Qwen3-30B-A3B",
         "--tensor-parallel-size", "2")  # fmt: skip


def test_a_plan_over_two_sparks_on_0_24_names_the_capture_defect_and_runs_eagerly(cli):
    plan = explain(cli, *SPARKS, "--nodes", "2")["plans"][0]
    assert plan["nodes"] == 2 and CAPTURE in defect_ids(plan)
    assert "--enforce-eager" in plan["argv"]
    assert any(CAPTURE in f["reason"] for f in plan["flags"] if f["flag"] == "--enforce-eager")


def test_one_spark_or_an_eager_plan_over_two_says_nothing_of_it(cli):
    one = explain(cli, *SPARKS, "--nodes", "1")["plans"][0]
    assert CAPTURE not in defect_ids(one) and "--enforce-eager" not in one["argv"]
    eager = explain(cli, *SPARKS, "--nodes", "2", "--eager")["plans"][0]
    assert CAPTURE not in defect_ids(eager)


def test_lint_flags_a_two_node_command_with_cuda_graphs_and_not_an_eager_one(cli):
    base = ("--gpu", "gb10", "--gpus", "1", "--nodes", "2", *SERVE)
    (hit,) = [f for f in lint(cli, *base)["findings"] if f["code"] == "defect" and "GPUDirect" in f["why"]]
    assert "more than one node" in hit["what"] and "--enforce-eager" in hit["fix"]
    assert any("vllm-project/vllm/issues/46253" in s for s in hit["sources"])
    eager = lint(cli, *base, "--enforce-eager")
    assert not [f for f in eager["findings"] if f["code"] == "defect" and "GPUDirect" in f["why"]]


# --- a report dated before a community path's release answers as of its date ----------------------------------

PATHS = [
    ("rtx-pro-6000", "deepseek-v4-flash", "vllm-dsv4-sm120-lucifer1004"),
    ("a100-80gb", "glm-5.3-flash", "vllm-glm53-flash-sm80-malavp"),
    ("rtx-4090", "glm-5.3-flash", "vllm-backport-sm89"),
]


@pytest.mark.parametrize(("gpu", "model", "build"), PATHS)
def test_explain_as_of_the_day_before_a_community_path_does_not_know_it_and_from_its_day_runs_it(
    cli, catalog, gpu, model, build
):
    _, found = catalog.build(build)
    args = ("--gpu", gpu, "--model", model, "--engine", "vllm", "--as-of")
    before = explain(cli, *args, str(found.released - dt.timedelta(days=1)))
    assert before["verdict"] == "blocked" and not before["plans"]
    assert build not in {r["build"] for r in before["rejected"]}
    on_the_day = explain(cli, *args, str(found.released))
    assert on_the_day["verdict"] == "runnable" and on_the_day["plans"][0]["build"] == build
