"""Defects scoped to a parallel layout, a host CPU and a context length (issue 28): a plan or command inside the scope
names the defect (and carries its workaround), one outside it says nothing about it; the catalog refuses a scope it
cannot read, naming the file and field."""

from __future__ import annotations

from tests.support.release_history import defect_ids, explain, history_of, lint, verdicts

GRAPH_MISMATCH = "vllm-0.11-b200-full-cudagraph-trtllm-attention-mismatch"
QWEN3_VL_B200 = ("--gpu", "b200", "--model", "qwen3-vl-8b", "--variant", "bf16", "--engine", "vllm")
PP_OVER_NODES = "vllm-0.18-multinode-pipeline-parallel"
V018 = ("--", "docker", "run", "vllm/vllm-openai:v0.18.0", "--model", "meta-llama/Llama-3.1-405B-Instruct-FP8")

SCOPED_BUILD = """id: vllm-0.26.0-scoped
extends: vllm-0.26.0
version: 0.26.0
released: '2026-08-01'
provenance: community
origin: a test image
images: {x86_64: example/vllm:scoped, aarch64: example/vllm:scoped-arm64}
defects:
  add:
  - id: test-aarch64-host-crash
    title: the engine segfaults at start on an aarch64 host
    symptom: crash
    gate: platform
    host_arch: [HOST]
    workaround_env:
    - {name: TEST_SAFE_START, value: '1', reason: skips the step that segfaults}
    sources: [{url: 'https://example.com/arm', date: '2026-08-02', note: a report}]
  - id: test-data-parallel-hang
    title: data-parallel ranks hang at the first batch
    symptom: hang
    gate: topology
    data_parallel: true
    pipeline_parallel_min: PP
    workaround: one engine per replica behind a router
    sources: [{url: 'https://example.com/dp', date: '2026-08-02', note: a report}]
  - id: test-expert-parallel-crash
    title: expert parallel crashes at the all-to-all
    symptom: crash
    gate: topology
    expert_parallel: true
    workaround: leave --enable-expert-parallel out
    sources: [{url: 'https://example.com/ep', date: '2026-08-02', note: a report}]
sources: [{url: 'https://example.com/image', date: '2026-08-01', note: the image}]
"""


def defect_findings(doc, text):
    return [f for f in doc["findings"] if f["code"] == "defect" and text in f["why"]]


def scoped_recipes(tmp_path, host="aarch64", pp="2"):
    folder = tmp_path / "recipes" / "engines" / "vllm"
    folder.mkdir(parents=True)
    text = SCOPED_BUILD.replace("HOST", host).replace("PP", pp)
    (folder / "vllm-0.26.0-scoped.yaml").write_text(text, encoding="utf-8")
    return str(tmp_path / "recipes")


# --- context: vLLM 0.11.0's B200 graph mismatch needs a context above 131072 ---------------------------------


def test_a_plan_at_131072_tokens_on_0_11_b200_carries_no_piecewise_workaround_and_names_nothing(cli):
    short = explain(cli, *QWEN3_VL_B200, "--build", "vllm-0.11.0", "--kv-cache-dtype", "bf16", "--context", "131072")
    plan = short["plans"][0]
    assert plan["settings"]["context"] == 131072
    assert GRAPH_MISMATCH not in defect_ids(plan) and "--compilation-config" not in plan["argv"]
    assert not any(GRAPH_MISMATCH in note for note in plan["notes"])
    long = explain(cli, *QWEN3_VL_B200, "--build", "vllm-0.11.0", "--kv-cache-dtype", "bf16", "--context", "200000")
    plan = long["plans"][0]
    assert GRAPH_MISMATCH in defect_ids(plan) and "--compilation-config" in plan["argv"]
    assert any(GRAPH_MISMATCH in note and "a max context above 131,072 tokens" in note for note in plan["notes"])


def test_left_to_choose_at_a_short_context_the_planner_keeps_bf16_kv_on_0_11_b200(cli):
    plan = explain(cli, *QWEN3_VL_B200, "--build", "vllm-0.11.0", "--context", "65536")["plans"][0]
    assert not any(GRAPH_MISMATCH in note for note in plan["notes"]) and GRAPH_MISMATCH not in defect_ids(plan)


def test_lint_names_the_graph_mismatch_only_past_131072_tokens(cli):
    base = ("--gpu", "b200", "--", "docker", "run", "vllm/vllm-openai:v0.11.0", "--model", "Qwen/Qwen3-VL-8B-Instruct")
    assert defect_findings(lint(cli, *base, "--max-model-len", "262144"), "TRT-LLM")
    assert not defect_findings(lint(cli, *base, "--max-model-len", "131072"), "TRT-LLM")


# --- layout: vLLM 0.18.0 fails pipeline parallelism across nodes (vllm#37933) ----------------------------------


def test_lint_names_pipeline_parallelism_over_two_nodes_on_0_18_and_points_at_the_pp_flag(cli):
    doc = lint(cli, "--gpu", "h100", "--nodes", "2", "--gpus", "8", *V018, "--tensor-parallel-size", "8",
               "--pipeline-parallel-size", "2")  # fmt: skip
    (hit,) = defect_findings(doc, "pipeline parallelism across nodes")
    assert hit["flag"] == "--pipeline-parallel-size" and "more than one node" in hit["what"]
    assert "--tensor-parallel-size" in hit["fix"]
    assert any("vllm-project/vllm/issues/37933" in s for s in hit["sources"])


def test_pipeline_parallelism_on_one_node_or_tensor_parallelism_over_nodes_is_not_named(cli):
    one_node = lint(cli, "--gpu", "h100", "--nodes", "1", "--gpus", "8", *V018, "--tensor-parallel-size", "4",
                    "--pipeline-parallel-size", "2")  # fmt: skip
    assert not defect_findings(one_node, "pipeline parallelism across nodes")
    tp_over_nodes = lint(cli, "--gpu", "h100", "--nodes", "2", "--gpus", "8", *V018, "--tensor-parallel-size", "16")
    assert not defect_findings(tp_over_nodes, "pipeline parallelism across nodes")


def test_recipegens_own_two_node_plans_on_0_18_do_not_carry_the_pp_defect(cli):
    args = ("--gpu", "h100", "--model", "llama-3.1-405b", "--gpus", "8", "--nodes", "2", "--engine", "vllm")
    doc = explain(cli, *args, "--build", "vllm-0.18.0")
    assert doc["plans"] and all(PP_OVER_NODES not in defect_ids(p) for p in doc["plans"])
    builds = verdicts(history_of(cli, "vllm", "h100", "llama-3.1-405b", 8, "--nodes", "2"))
    assert PP_OVER_NODES not in builds["vllm-0.18.0"]["defects"]


# --- host CPU, data parallel, expert parallel (a user's own build) ---------------------------------------------


def test_an_aarch64_host_defect_names_gb200_with_its_workaround_and_spares_the_x86_b200(cli, tmp_path):
    recipes = scoped_recipes(tmp_path)
    args = ("--gpus", "1", "--model", "qwen3-8b", "--engine", "vllm", "--build", "vllm-0.26.0-scoped")
    arm = explain(cli, "--gpu", "gb200", *args, "--recipes", recipes)["plans"][0]
    assert "test-aarch64-host-crash" in defect_ids(arm)
    assert ("TEST_SAFE_START", "1") in {(e["name"], e["value"]) for e in arm["env"]}
    x86 = explain(cli, "--gpu", "b200", *args, "--recipes", recipes)["plans"][0]
    assert "test-aarch64-host-crash" not in defect_ids(x86)
    assert "TEST_SAFE_START" not in {e["name"] for e in x86["env"]}


def test_a_data_parallel_defect_names_a_command_with_dp_and_pp_and_not_one_without(cli, tmp_path):
    recipes = scoped_recipes(tmp_path)
    base = ("--recipes", recipes, "--build", "vllm-0.26.0-scoped", "--gpu", "h100", "--gpus", "8", "--", "vllm",
            "serve", "Qwen/Qwen3-8B")  # fmt: skip
    (hit,) = defect_findings(
        lint(cli, *base, "--data-parallel-size", "2", "--pipeline-parallel-size", "2"), "data-parallel ranks"
    )
    assert hit["flag"] in ("--data-parallel-size", "--pipeline-parallel-size")
    assert "one engine per replica" in hit["fix"]
    assert "pipeline parallel size 2 or more, data parallel" in hit["what"]
    assert not defect_findings(lint(cli, *base, "--data-parallel-size", "2"), "data-parallel ranks")  # PP 1
    assert not defect_findings(lint(cli, *base, "--pipeline-parallel-size", "2"), "data-parallel ranks")  # DP 1


def test_an_expert_parallel_defect_names_a_multi_gpu_moe_plan_and_not_a_single_gpu_one(cli, tmp_path):
    recipes = scoped_recipes(tmp_path)
    args = ("--gpu", "h100", "--model", "qwen3-30b-a3b", "--engine", "vllm", "--build", "vllm-0.26.0-scoped")
    two = explain(cli, *args, "--gpus", "2", "--recipes", recipes)["plans"][0]
    assert two["settings"]["expert_parallel"] and "test-expert-parallel-crash" in defect_ids(two)
    one = explain(cli, *args, "--gpus", "1", "--recipes", recipes)["plans"][0]
    assert "test-expert-parallel-crash" not in defect_ids(one)


def test_validate_refuses_an_unknown_host_and_a_pipeline_size_below_two_naming_file_and_field(cli, tmp_path):
    recipes = scoped_recipes(tmp_path, host="arm64", pp="1")
    result = cli("validate", recipes)
    assert result.code != 0
    text = result.out + result.err
    assert "vllm-0.26.0-scoped.yaml" in text
    assert "host_arch[0]: 'arm64'" in text and "pipeline_parallel_min" in text
    assert "Traceback" not in text
