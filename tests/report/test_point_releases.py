"""Issue 12, the point releases people run: Qwen3 2507 and Coder-30B, Llama 3.2 1B/3B, MiniMax-M2.1 —
as a user sees them in `recipegen explain` and `recipegen list models`, with no network."""

from __future__ import annotations

import pytest

from tests.support.cli import run_cli
from tests.support.contract import rejections

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
NEW = (
    "qwen3-30b-a3b-instruct-2507",
    "qwen3-4b-instruct-2507",
    "qwen3-coder-30b-a3b",
    "llama-3.2-1b",
    "llama-3.2-3b",
    "minimax-m2.1",
    "glm-4.7",
)


@pytest.mark.parametrize(
    ("name", "model", "variant", "quant"),
    [
        # catalog variants: the repo id picks the variant itself
        ("unsloth/Qwen3-30B-A3B-Instruct-2507-GGUF", "qwen3-30b-a3b-instruct-2507", "gguf-unsloth-q4-k-m", "gguf"),
        ("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "qwen3-30b-a3b-instruct-2507", "fp8", "fp8_block"),
        ("bartowski/Qwen_Qwen3-4B-Instruct-2507-GGUF", "qwen3-4b-instruct-2507", "gguf-bartowski-q4-k-m", "gguf"),
        ("unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF", "qwen3-coder-30b-a3b", "gguf-unsloth-ud-q4-k-xl", "gguf"),
        ("AMead10/Llama-3.2-1B-Instruct-AWQ", "llama-3.2-1b", "awq", "awq"),
        # community names the catalog does not list: family and format inferred from the name
        ("cpatonn/Qwen3-30B-A3B-Instruct-2507-AWQ-4bit", "qwen3-30b-a3b-instruct-2507", None, "awq"),
        ("bartowski/Llama-3.2-3B-Instruct-GGUF", "llama-3.2-3b", None, "gguf"),
    ],
)
def test_quantized_repo_ids_resolve_offline(name, model, variant, quant):
    result = run_cli("explain", "--gpu", "h200", "--model", name, "--format", "json", env=OFFLINE)
    assert result.code in (0, 3), result.err
    data = result.json()
    assert data["request"]["model"] == model
    chosen = data["request"]["variant"]
    if variant is not None:
        assert chosen == variant and data["request"]["model_facts"] == "catalog"
    rows = [p for p in data["plans"] if p["variant"] == chosen]
    rows += [r for r in rejections(data) if r["variant"] == chosen]
    assert rows, chosen
    if data["plans"] and data["plans"][0]["variant"] == chosen:
        assert data["plans"][0]["quant"] == quant and data["plans"][0]["repo"] == name


def test_an_april_qwen3_name_is_not_taken_for_its_2507_update():
    # Qwen3-4B (April, hybrid thinking) is not in the catalog; it must not be planned as Qwen3-4B-Instruct-2507
    result = run_cli("explain", "--gpu", "h100", "--model", "Qwen/Qwen3-4B", env=OFFLINE)
    assert result.code == 2 and "Qwen/Qwen3-4B" in result.err


def test_list_models_shows_the_point_releases_with_their_sources():
    result = run_cli("list", "models", "--format", "json")
    assert result.code == 0
    table = {row["id"]: row for row in result.json()}
    for model in NEW:
        assert table[model]["sources"] >= 2, model


def test_qwen3_2507_instruct_plans_the_full_context_with_a_tool_parser_and_no_reasoning_parser():
    args = ("explain", "--gpu", "h100", "--model", "Qwen/Qwen3-30B-A3B-Instruct-2507", "--engine", "vllm")
    result = run_cli(*args, "--format", "json")
    assert result.code == 0, result.err
    plan = result.json()["plans"][0]
    argv = plan["argv"]
    assert plan["gpus"] == 1 and argv[argv.index("--max-model-len") + 1] == "262144"
    assert argv[argv.index("--tool-call-parser") + 1] == "hermes"
    assert "--reasoning-parser" not in argv  # Instruct-2507 never thinks


def test_qwen3_coder_30b_uses_the_coder_tool_parser_and_its_index_size():
    args = ("explain", "--gpu", "h100", "--model", "qwen3-coder-30b", "--engine", "vllm", "--variant", "bf16")
    result = run_cli(*args, "--format", "json")
    assert result.code == 0, result.err
    plan = result.json()["plans"][0]
    assert plan["memory"]["weights_gib"] == pytest.approx(61_064_245_248 / 2**30, rel=0.01)
    assert plan["argv"][plan["argv"].index("--tool-call-parser") + 1] == "qwen3_coder"


def test_minimax_m21_runs_on_four_gpus_with_the_m2_parsers():
    args = ("explain", "--gpu", "h100", "--model", "MiniMaxAI/MiniMax-M2.1", "--engine", "vllm", "--format", "json")
    result = run_cli(*args)
    assert result.code == 0, result.err
    plan = result.json()["plans"][0]
    argv = plan["argv"]
    assert plan["gpus"] == 4 and argv[argv.index("--tensor-parallel-size") + 1] == "4"
    assert argv[argv.index("--tool-call-parser") + 1] == "minimax_m2"
    assert argv[argv.index("--reasoning-parser") + 1] == "minimax_m2"
    assert "--trust-remote-code" in argv


@pytest.mark.parametrize(("model", "layers", "head"), [("llama-3.2-1b", 16, 64), ("llama-3.2-3b", 28, 128)])
def test_llama_32_small_models_fit_one_consumer_card(model, layers, head):
    result = run_cli("explain", "--gpu", "rtx-4090", "--model", model, "--engine", "vllm", "--format", "json")
    assert result.code == 0, result.err
    data = result.json()
    plan = data["plans"][0]
    assert data["verdict"] == "runnable" and plan["gpus"] == 1
    assert plan["argv"][plan["argv"].index("--tool-call-parser") + 1] == "llama3_json"
    text = run_cli("explain", "--gpu", "rtx-4090", "--model", model, "--engine", "vllm", "--verbose").out
    assert f"K+V: {layers} layers × 8 KV head(s) × {head} × 2 B" in text  # the KV budget uses the config's shape


@pytest.mark.parametrize(
    ("name", "model", "variant"),
    [
        ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3", "fp8-0324"),
        ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-v3.2", "fp8-exp"),
        ("moonshotai/Kimi-K2-Instruct-0905", "kimi-k2", "fp8-0905"),
        ("moonshotai/Kimi-K2-Thinking", "kimi-k2", "int4"),  # the INT4 QAT release, not the FP8 Instruct weights
    ],
)
def test_a_point_release_plans_its_own_repo_not_the_family_default(name, model, variant):
    result = run_cli("explain", "--gpu", "h200", "--model", name, "--format", "json", env=OFFLINE)
    assert result.code in (0, 3), result.err
    data = result.json()
    assert (data["request"]["model"], data["request"]["variant"]) == (model, variant)
    assert data["plans"] or data["rejected"]
    assert {p["repo"] for p in data["plans"]} <= {name}
    assert all(r["variant"] == variant for r in rejections(data))


def test_kimi_k2_thinking_plans_its_own_estimated_size_rather_than_the_instruct_weights():
    result = run_cli("explain", "--gpu", "h200", "--model", "moonshotai/Kimi-K2-Thinking", env=OFFLINE)
    assert result.code in (0, 3), result.err
    # its INT4 size is not in the catalog: estimated from the parameters, with the group size assumed, and said
    assert "checkpoint size not in the catalog: estimated as" in result.out and "group size 128" in result.out
    # the FP8 Instruct weights are never planned in its place
    planned = [line for line in result.out.splitlines() if line.lstrip().startswith("#")]
    assert planned and all("moonshotai/Kimi-K2-Thinking" in line for line in planned)


def test_deepseek_v32_exp_carries_the_v32_tokenizer_mode_and_parsers():
    args = ("explain", "--gpu", "h200", "--model", "deepseek-ai/DeepSeek-V3.2-Exp", "--engine", "vllm")
    result = run_cli(*args, "--format", "json", env=OFFLINE)
    assert result.code == 0, result.err
    argv = result.json()["plans"][0]["argv"]
    assert argv[argv.index("--tokenizer-mode") + 1] == "deepseek_v32"
    assert argv[argv.index("--tool-call-parser") + 1] == "deepseek_v32"
    assert argv[argv.index("--reasoning-parser") + 1] == "deepseek_v3"


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_glm47_plans_carry_the_glm47_tool_parser_not_the_glm45_one(engine):
    args = ("explain", "--gpu", "h200", "--model", "zai-org/GLM-4.7", "--engine", engine, "--format", "json")
    result = run_cli(*args, env=OFFLINE)
    assert result.code == 0, result.err
    argv = result.json()["plans"][0]["argv"]
    assert argv[argv.index("--tool-call-parser") + 1] == "glm47"
    assert argv[argv.index("--reasoning-parser") + 1] == "glm45"
    # GLM-4.6 keeps its own parser
    older = run_cli("explain", "--gpu", "h200", "--model", "zai-org/GLM-4.6", "--engine", engine, "--format", "json")
    assert older.code == 0, older.err
    argv46 = older.json()["plans"][0]["argv"]
    assert argv46[argv46.index("--tool-call-parser") + 1] == "glm45"
