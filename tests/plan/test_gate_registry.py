"""The gates as one registry, structured gate details, Plan.settings, and generate's self-check."""

from __future__ import annotations

from pathlib import Path

from recipegen.plan.gates import REGISTRY
from recipegen.plan.resolve import resolve
from recipegen.plan.types import GATES, Request


def test_registry_holds_the_contract_gate_ids_in_triage_order():
    assert tuple(REGISTRY) == GATES == ("architecture", "weight-format", "kernel", "platform", "memory", "topology")
    assert len({g.short for g in REGISTRY.values()}) == len(REGISTRY)


def test_gate_details_carry_the_facts_behind_the_prose(catalog):
    glm, a100 = catalog.models["glm-5.2"], catalog.hardware["a100-80gb"]
    resolution = resolve(catalog, Request(model=glm, hardware=a100, gpus_per_node=8, engine="vllm"))
    official = next(c for c in resolution.candidates if c.build.id == "vllm-0.33.0" and c.variant.id == "nvfp4")
    kernel = official.gate("kernel")
    assert kernel.outcome == "fail" and kernel.details.capability == "sm80"
    assert "attention.sparse_mla" in {m.op for m in kernel.details.misses}
    plan = resolution.plans[0]
    assert plan.candidate.gate("weight-format").details.via_fallback  # NVFP4 through Marlin on sm80
    assert plan.candidate.gate("memory").details.budget is plan.candidate.budget
    assert plan.candidate.gate("topology").details.number("tp") == 8
    # the decided settings are kept: parsers come from there, not from re-reading the flags
    assert plan.settings.tool_parser == "glm47" and plan.settings.tp == 8


def test_plan_json_carries_the_decided_settings(cli, tmp_path):
    result = cli("--gpu", "h200", "--model", "glm-5.2", "--out", str(tmp_path / "o"), "--format", "json")
    assert result.code == 0, result.err
    settings = result.json()["plans"][0]["settings"]
    assert settings["tensor_parallel"] >= 1 and settings["tool_parser"] == "glm47"


def test_generate_refuses_a_plan_its_engine_would_reject(cli, tmp_path):
    # a recipe folder whose curated deployment spells a flag vLLM does not have (an abbreviation)
    builtin = Path(__file__).resolve().parents[2] / "recipes" / "deployments" / "glm-5.2-nvfp4-8xa100-vllm-sm80.yaml"
    mine = tmp_path / "recipes" / "deployments"
    mine.mkdir(parents=True)
    (mine / "glm-5.2-nvfp4-8xa100-vllm-sm80.yaml").write_text(
        builtin.read_text().replace("flag: --max-num-seqs", "flag: --max-num-seq")
    )
    out = tmp_path / "out"
    result = cli("--gpu", "a100", "--model", "glm-5.2", "--recipes", str(tmp_path / "recipes"), "--out", str(out))
    # refused when the recipe folder loads: a deployment's flags are checked against the build's vocabulary
    assert result.code == 2, result.err
    assert "args[7].flag: --max-num-seq is not a vllm 0.33.0 option" in result.err
    assert not out.exists()
