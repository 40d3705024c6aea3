"""An architecture class no build in the catalog registers is said plainly, with the nearest class some build
does register (the same family, or the same model_type as the engine's model module) and the newest build of
each engine that loads it; with no relative, each engine's newest build is named as not loading it either."""

from __future__ import annotations

import json
from pathlib import Path

from recipegen.catalog import harvest
from tests.support.cli import run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "hub"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}


def _folder(tmp_path: Path, source: str, arch: str, model_type: str) -> Path:
    config = json.loads((DATA / source / "config.json").read_text())
    config["architectures"], config["model_type"] = [arch], model_type
    folder = tmp_path / arch
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _newest_official(catalog, engine_id: str, arch: str) -> str:  # type: ignore[no-untyped-def]
    builds = [
        b
        for e, b in catalog.builds()
        if e.id == engine_id and b.provenance == "official" and arch in harvest.architectures(b)
    ]
    return max(builds, key=lambda b: b.released).id


def _advice(folder: Path) -> str:
    result = run_cli("explain", "--gpu", "h200", "--model", str(folder), "--verbose", env=OFFLINE)
    assert result.code == 0, result.err
    assert "VERDICT: blocked" in result.out
    return next(line for line in result.out.splitlines() if "registers" in line and line.startswith("  • "))


def test_an_unregistered_class_names_the_nearest_registered_one(catalog, tmp_path):
    folder = _folder(tmp_path, "deepseek-ai/DeepSeek-V3", "DeepseekV5ForCausalLM", "deepseek_v5")
    line = _advice(folder)
    assert "no build considered here registers DeepseekV5ForCausalLM; the nearest class a build registers is " in line
    # DeepSeek-V4 is nearer V5 than V2/V3 are, and each engine's newest build that loads it is named
    assert "DeepseekV4ForCausalLM (the same family, deepseek)" in line
    assert _newest_official(catalog, "vllm", "DeepseekV4ForCausalLM") in line
    assert _newest_official(catalog, "sglang", "DeepseekV4ForCausalLM") in line
    assert "recipegen does not plan DeepseekV5ForCausalLM as it" in line


def test_a_class_without_a_rule_gets_the_same_pointer_in_its_refusal(tmp_path):
    folder = _folder(tmp_path, "deepseek-ai/DeepSeek-V4-Flash", "DeepseekV5ForCausalLM", "deepseek_v5")
    result = run_cli("explain", "--gpu", "h200", "--model", str(folder), env=OFFLINE)
    assert result.code == 2
    assert (
        "no engine in the catalog registers DeepseekV5ForCausalLM; the nearest class a build registers is "
        "DeepseekV4ForCausalLM" in result.err
    )
    shown = run_cli("inspect", str(folder), "--format", "json", env=OFFLINE).json()
    assert "the nearest class a build registers is DeepseekV4ForCausalLM" in shown["problem"]


def test_a_glm_class_points_at_the_glm_family(tmp_path):
    line = _advice(_folder(tmp_path, "Qwen/Qwen3-8B", "Glm6ForCausalLM", "glm6"))
    assert "registers Glm6ForCausalLM; the nearest class a build registers is Glm" in line


def test_a_class_without_relatives_names_each_engines_newest_build(catalog, tmp_path):
    line = _advice(_folder(tmp_path, "Qwen/Qwen3-8B", "ZyxwvForCausalLM", "zyxwv"))
    assert "registers ZyxwvForCausalLM; no related class either" in line
    for engine in ("vllm", "sglang"):
        official = [b for e, b in catalog.builds() if e.id == engine and b.provenance == "official"]
        newest = max(official, key=lambda b: b.released)
        assert f"{newest.id} ({newest.released})" in line
    assert "does not register it" in line
