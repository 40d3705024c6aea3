"""Releases known from their harvested code (data/harvest/) are answered, listed and linted, through the CLI."""

from __future__ import annotations

from tests.support.cli import run_cli
from tests.support.contract import rejections


def test_build_of_a_2025_vllm_release_answers_from_its_own_facts():
    result = run_cli(
        "explain", "--gpu", "h100", "--model", "llama-3.3-70b", "--build", "vllm==0.8.5", "--format", "json"
    )
    assert result.code == 0, result.err
    data = result.json()
    assert "older than the oldest" not in result.err
    builds = {p["build"] for p in data["plans"]} | {r["build"] for r in rejections(data)}
    assert builds == {"vllm-0.8.5"}
    # kernels carried from a later release are not claimed: the verdict rests on them and says unknown
    assert (data["verdict"], data["verdict_detail"]) == ("blocked", "unknown")


def test_build_of_sglang_0_4_6_uses_that_release_s_parser_registry():
    from recipegen.catalog import harvest

    result = run_cli("explain", "--gpu", "h100", "--model", "qwen3-8b", "--build", "sglang==0.4.6")
    assert "older than the oldest" not in result.err
    assert "--build sglang==0.4.6 → SGLang 0.4.6 = build sglang-0.4.6" in result.out
    # SGLang 0.4.6's DetectorMap holds deepseek-r1 only (sglang/srt/reasoning_parser.py in its wheel)
    found = harvest.load("sglang", "0.4.6")
    assert found is not None and found.reasoning_parsers == ("deepseek-r1",)


def test_lint_names_the_release_that_added_a_flag_the_named_release_lacks():
    args = ("docker", "run", "vllm/vllm-openai:v0.8.5", "--model", "Qwen/Qwen3-8B", "--async-scheduling")
    result = run_cli("lint", "--gpu", "a100", "--format", "json", "--", *args, "--kv_cache_dtype", "auto")
    findings = [f for f in result.json()["findings"] if f["code"] == "flag-not-in-release"]
    assert [(f["flag"], f["fix"]) for f in findings] == [
        ("--async-scheduling", "use vllm==0.10.0 or later, or drop --async-scheduling")
    ]
    assert "vLLM added it in 0.10.0" in findings[0]["why"]
    assert findings[0]["sources"][0] == "https://pypi.org/project/vllm/0.8.5/"


def test_list_engines_json_says_per_release_which_tables_are_harvested_and_how():
    rows = run_cli("list", "engines", "--format", "json").json()
    by_release = {(r["engine"], r.get("release") or r["build"]): r for r in rows}
    official = by_release[("vllm", "vllm-0.33.0")]["harvested"]
    assert official["tables"]["architectures"] == {
        "method": "read",
        "from": "vllm/model_executor/models/registry.py",
        "count": 415,
    }
    # the selector and quantization tables were run (the release's own code on simulated GPUs), not read
    selector = official["tables"]["attention_selector"]
    assert (selector["method"], selector["file"]) == ("ran", "data/harvest/vllm/0.33.0.ran.json")
    assert selector["count"] == 11 * 147 and selector["from"].startswith("vllm/platforms/cuda.py")
    assert official["tables"]["quantization"]["method"] == "ran" and official["not_harvested"] == []
    assert len(official["sha256"]) == 64
    older = by_release[("vllm", "vllm-0.13.0")]["harvested"]
    assert older["not_harvested"] == ["attention_selector", "quantization"]
    partial = by_release[("vllm", "vllm-0.29.0")]["harvested"]  # run on six capabilities only
    assert partial["tables"]["attention_selector"]["method"] == "ran" and partial["not_harvested"] == []
    # run on sm_80/86/89/90/100/120, 147 cases each
    for release in ("vllm-0.22.0", "vllm-0.21.0", "vllm-0.20.1", "vllm-0.19.0", "vllm-0.18.0"):
        ran = by_release[("vllm", release)]["harvested"]
        assert ran["tables"]["attention_selector"]["count"] == 6 * 147 and ran["why_not"] == {}, release
        assert ran["tables"]["quantization"]["file"] == f"data/harvest/vllm/{release[5:]}.ran.json"
    old = by_release[("vllm", "0.8.5")]
    assert old["build"] is None and old["use"] == "--build vllm==0.8.5" and old["released"] == "2025-04-28"
    forks = [r for r in rows if r["provenance"] in ("community", "fork")]
    assert forks and all(r["harvested"] is None for r in forks)
    text = run_cli("list", "engines")
    assert "harvested" not in text.out  # the table stays one line per build


def test_list_engines_json_says_per_release_why_a_ran_table_is_missing():
    rows = run_cli("list", "engines", "--format", "json").json()
    harvested = [r for r in rows if r.get("harvested")]
    for row in harvested:
        facts = row["harvested"]
        for table in ("attention_selector", "quantization"):
            # each table is there with its method, or named with why it is not
            assert (table in facts["tables"]) != (table in facts["why_not"]), (row["build"], table)
            if table in facts["why_not"]:
                assert facts["why_not"][table]["reason"], (row["build"], table)
    by_release = {(r["engine"], r.get("release") or r["build"]): r["harvested"] for r in harvested}
    assert by_release[("vllm", "vllm-0.33.0")]["why_not"] == {}
    never = by_release[("vllm", "vllm-0.13.0")]["why_not"]["attention_selector"]
    assert never == {"method": None, "reason": "not run (python scripts/harvest vllm==0.13.0 --run)"}


def test_an_architecture_only_the_harvested_registry_has_is_known_to_be_loaded(tmp_path):
    config = '{"architectures": ["JambaForCausalLM"], "model_type": "jamba", "hidden_size": 4096}'
    (tmp_path / "config.json").write_text(config)
    result = run_cli("inspect", str(tmp_path))
    assert "no engine in the catalog registers" not in result.out
    assert "JambaForCausalLM (model_type jamba); loaded by vllm-0.33.0" in result.out


def test_a_class_the_release_dropped_is_refused_with_the_last_release_that_loaded_it():
    args = ("explain", "--gpu", "h200", "--model", "minimax-m1", "--engine", "vllm")
    newest = run_cli(*args, "--build", "vllm==0.33.0")
    # vLLM 0.33.0's registry.py lists it in _PREVIOUSLY_SUPPORTED_MODELS
    assert "vllm-0.33.0 does not load MiniMaxM1ForCausalLM (its registry: supported until 0.23.0" in newest.out
    last = run_cli(*args, "--build", "vllm==0.23.0", "--format", "json").json()
    gates = [g for r in [*last["plans"], *rejections(last)] for g in r.get("gates", []) if g["gate"] == "architecture"]
    assert gates and all(g["outcome"] == "pass" for g in gates)


def test_a_flag_the_named_release_has_is_not_called_unknown_by_a_newer_vocabulary():
    # --enable-reasoning is in vLLM 0.8.5's own arg_utils.py/cli_args.py and gone from 0.33.0's CLI
    command = ("--model", "Qwen/Qwen3-8B", "--enable-reasoning", "--reasoning-parser", "deepseek_r1")

    def flag_codes(image):
        out = run_cli("lint", "--gpu", "a100", "--format", "json", "--", "docker", "run", image, *command).json()
        return {f["code"] for f in out["findings"] if f["flag"] == "--enable-reasoning"}

    assert "unknown-flag" not in flag_codes("vllm/vllm-openai:v0.8.5")
    assert "unknown-flag" in flag_codes("vllm/vllm-openai:v0.33.0")


def test_list_engines_json_shows_the_sglang_tables_its_release_ran():
    rows = run_cli("list", "engines", "--format", "json").json()
    by_build = {r["build"]: r["harvested"] for r in rows if r.get("harvested") and r["engine"] == "sglang"}
    ran = by_build["sglang-0.5.21"]
    selector = ran["tables"]["attention_selector"]
    assert (selector["method"], selector["file"]) == ("ran", "data/harvest/sglang/0.5.21.ran.json")
    # SGLang chooses while it resolves its server arguments: that is what was run, per shape and GPU
    assert selector["from"].startswith("sglang/srt/server_args.py: ServerArgs.resolve_once")
    assert selector["count"] == 11 * 6 * 3 * 11  # GPUs x shapes x KV dtypes x (10 backends asked + the default)
    assert ran["tables"]["quantization"]["method"] == "ran" and ran["why_not"] == {}
    assert by_build["sglang-0.5.20"]["tables"]["attention_selector"]["count"] == selector["count"]
    # 0.5.19 ran on four GPUs only (--caps 80,90,100,120)
    assert by_build["sglang-0.5.19"]["tables"]["attention_selector"]["count"] == 4 * 6 * 3 * 11
    # 0.5.17 resolves while ServerArgs is constructed (no resolve_once): the table says so; six GPUs asked
    older = by_build["sglang-0.5.17"]["tables"]["attention_selector"]
    assert older["count"] == 6 * 6 * 3 * 11 and older["from"].startswith(
        "sglang/srt/server_args.py: ServerArgs.__post_init__"
    )
    newer = by_build["sglang-0.5.18"]["tables"]["attention_selector"]
    assert (newer["count"], newer["from"]) == (older["count"], older["from"])
    assert by_build["sglang-0.5.15"]["tables"]["attention_selector"]["count"] == 4 * 6 * 3 * 11  # --caps 80,90,100,120
    assert by_build["sglang-0.5.14"]["why_not"]["quantization"]["reason"] == (
        "not run (python scripts/harvest sglang==0.5.14 --run)"
    )
