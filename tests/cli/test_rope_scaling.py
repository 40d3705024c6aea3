"""A release answers for a checkpoint's RoPE scaling as its own code reads it (the harvested `rope` table)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.cli import run_cli
from tests.support.contract import rejections

ROOT = Path(__file__).resolve().parents[2]


def _explain(build: str):
    result = run_cli(
        "explain", "--gpu", "a100-80gb", "--gpus", "1", "--model", "llama-3.1-8b", "--build", build, "--format", "json"
    )
    assert result.code == 0, result.err
    return result.json()


def test_a_release_that_reads_rope_scaling_type_refuses_llama_3_1_whose_config_says_rope_type():
    # vLLM 0.5.3 reads rope_scaling["type"] with no fallback; Llama 3.1's config has only rope_type: llama3
    data = _explain("vllm==0.5.3")
    assert data["verdict"] == "blocked"
    bf16 = next(r for r in rejections(data) if r["variant"] == "bf16")
    assert bf16["gate"] == "architecture"
    assert "rope_scaling is 'llama3'" in bf16["reason"] and "KeyError: 'type'" in bf16["reason"]
    cited = [s for s in data["sources"].values() if s["url"] == "https://pypi.org/project/vllm/0.5.3/"]
    assert any(s["note"].startswith("rope read from vllm/model_executor/layers/rotary_embedding.py") for s in cited)
    # 0.4.0.post1 neither reads rope_type nor builds llama3 scaling: the key is what fails first
    older = next(r for r in rejections(_explain("vllm==0.4.0.post1")) if r["variant"] == "bf16")
    assert "KeyError: 'type'" in older["reason"]


def test_the_post_release_that_builds_llama3_rope_runs_it_and_answers_as_itself():
    data = _explain("vllm==0.5.3.post1")
    assert data["verdict"] == "runnable"
    assert {p["build"] for p in data["plans"]} == {"vllm-0.5.3.post1"}
    # "0.5.3" names 0.5.3 itself, not its post release
    assert {r["build"] for r in rejections(_explain("vllm==0.5.3"))} == {"vllm-0.5.3"}


def test_history_turns_runnable_at_the_first_release_whose_rope_code_reads_the_config():
    result = run_cli("history", "--gpu", "a100-80gb", "--model", "llama-3.1-8b", "--engine", "vllm")
    assert result.code == 0, result.err
    assert "vllm-0.3.0 … vllm-0.5.3 (6)  blocked (architecture: loads LlamaForCausalLM, but" in result.out
    assert "vllm-0.5.3 → vllm-0.5.3.post1: architecture now passes" in result.out
    # explain's own line for a named release agrees: the releases known only from their code are in it
    line = run_cli("explain", "--gpu", "a100-80gb", "--gpus", "1", "--model", "llama-3.1-8b", "--build", "vllm==0.5.3")
    assert "rope_scaling is 'llama3': its RoPE…) until vllm-0.5.3.post1 (2024-07-23)" in line.out


def test_a_model_without_rope_scaling_is_not_held_to_it():
    # Qwen2.5-7B ships no rope_scaling: vLLM 0.4.0.post1's RoPE code never reads a type for it
    result = run_cli(
        "explain",
        "--gpu",
        "a100-80gb",
        "--gpus",
        "1",
        "--model",
        "qwen2.5-7b",
        "--build",
        "vllm==0.4.0.post1",
        "--format",
        "json",
    )
    assert result.code == 0, result.err
    assert all("rope_scaling" not in r["reason"] for r in rejections(result.json()))


def test_a_local_llama_3_1_folder_is_held_to_the_named_release_s_rope_code(tmp_path):
    folder = tmp_path / "Llama-3.1-8B"
    folder.mkdir()
    config = ROOT / "tests" / "data" / "hub" / "meta-llama" / "Llama-3.1-8B" / "config.json"
    (folder / "config.json").write_bytes(config.read_bytes())

    def explain(build):
        result = run_cli(
            "explain", "--gpu", "a100-80gb", "--gpus", "1", "--model", str(folder), "--build", build, "--format", "json"
        )
        assert result.code == 0, result.err
        return result.json()

    old = explain("vllm==0.5.3")
    assert old["verdict"] == "blocked"
    assert "rope_scaling is 'llama3': its RoPE code reads rope_scaling['type']" in rejections(old)[0]["reason"]
    assert explain("vllm==0.5.3.post1")["verdict"] == "runnable"


def test_a_named_build_that_runs_nothing_is_answered_first_with_a_build_that_runs_it_on_the_same_gpus():
    result = run_cli(
        "explain", "--gpu", "a100-80gb", "--gpus", "1", "--model", "llama-3.1-8b", "--build", "vllm==0.5.3"
    )
    advice = result.out.split("What would make it run:", 1)[1].splitlines()[1]
    assert re.search(
        r"• on 1×a100-80gb: vLLM vllm-\S+ \(\d{4}-\d\d-\d\d\) runs it here: variant \S+ .* --build vllm-", advice
    )


def test_the_json_carries_the_same_advice_as_the_text():
    args = ("explain", "--gpu", "a100-80gb", "--gpus", "1", "--model", "llama-3.1-8b", "--build", "vllm==0.5.3")
    text = run_cli(*args).out.split("What would make it run:", 1)[1]
    advice = run_cli(*args, "--format", "json").json()["advice"]
    assert advice and advice[0]["gpu"] == "a100-80gb" and "runs it here" in advice[0]["summary"]
    for row in advice:
        assert f"on {row['target']}: {row['summary'][:60]}" in text


def test_every_vllm_release_in_the_catalog_has_its_rope_table_read_from_its_wheel():
    result = run_cli("list", "engines", "--format", "json")
    assert result.code == 0, result.err
    releases = [e for e in result.json() if e["engine"] == "vllm" and e["harvested"]]
    assert len(releases) >= 44
    missing = [e["build"] for e in releases if e["harvested"]["tables"].get("rope", {}).get("method") != "read"]
    assert missing == []
