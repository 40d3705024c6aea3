"""The sm120 slice of the field survey (issue 28): every model family on RTX PRO 6000 / RTX 5090 is surveyed, and the
one community path it added — the pinned vLLM nightly that a DeepSeek-V4-Flash tutorial for 4x RTX PRO 6000 runs
instead of the 0.25 releases, whose FlashInfer lacks the SM120 DeepSeek-V4 decode API."""

from __future__ import annotations

from tests.support.contract import sources
from tests.support.release_history import explain, history_of, verdicts

NIGHTLY = "vllm-nightly-c71a583a-dsv4-sm120"
IMAGE = "vllm/vllm-openai:nightly-c71a583aa9f81400528e67e3d818f66b804e8340"
API_DEFECT = "vllm-0.24-dsv4-sm120-flashinfer-api"
DSV4_4X = ("--gpu", "rtx-pro-6000", "--model", "deepseek-v4-flash", "--gpus", "4", "--engine", "vllm")


def test_every_model_family_on_sm120_reads_surveyed_in_december_2026(cli):
    result = cli("coverage", "--format", "json")
    assert result.code == 0, result.err
    cells = [c for c in result.json()["cells"] if c["gpu_class"] == "sm120"]
    assert cells and all(c["surveyed"] for c in cells), [c["family"] for c in cells if not c["surveyed"]]
    assert {c["surveyed"][:7] for c in cells} == {"2026-12"}
    assert "surveyed 2026-12" in cli("coverage").out


def test_the_pinned_nightly_image_serves_dsv4_flash_on_4_rtx_pro_6000_without_the_flashinfer_api_defect(cli):
    doc = explain(cli, *DSV4_4X, "--variant", "preview", "--build", IMAGE)
    assert doc["verdict"] == "runnable"
    plan = doc["plans"][0]
    assert plan["build"] == NIGHTLY and plan["image"] == IMAGE and plan["provenance"] == "community"
    assert API_DEFECT not in {d["id"] for d in plan["build_defects"]}
    assert any("self-llm" in s["url"] and s.get("date") for s in sources(doc, plan["sources"]))
    # the release it extends still carries the defect
    release = explain(cli, *DSV4_4X, "--variant", "preview", "--build", "vllm-0.25.0")["plans"][0]
    assert API_DEFECT in {d["id"] for d in release["build_defects"]}


def test_a_report_dated_before_the_tutorial_does_not_see_the_nightly(cli):
    before = explain(cli, *DSV4_4X, "--variant", "preview", "--as-of", "2026-07-18")
    assert NIGHTLY not in {p["build"] for p in before["plans"]} | {r.get("build") for r in before["rejected"]}
    after = explain(cli, *DSV4_4X, "--variant", "preview", "--as-of", "2026-07-19")
    assert NIGHTLY in {p["build"] for p in after["plans"]}


def test_history_lists_the_nightly_as_a_runnable_community_path_between_the_0_25_and_0_26_releases(cli):
    text = cli("history", *DSV4_4X, "--variant", "preview").out
    assert f"community path: {NIGHTLY} (2026-07-19): runnable" in text
    builds = verdicts(history_of(cli, "vllm", "rtx-pro-6000", "deepseek-v4-flash", 4, "--variant", "preview"))
    assert API_DEFECT in builds["vllm-0.25.0"]["defects"]
    assert API_DEFECT not in builds["vllm-0.26.0"]["defects"]
