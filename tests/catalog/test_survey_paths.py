"""Community paths from the field survey (issue 28): each one plans on the GPUs it was reported on, says what it is,
and is not offered to a question asked before its release date (`--as-of`)."""

from __future__ import annotations

import pytest

from tests.support.contract import rejections, sources

# (request, the build the report ran, the exact image tag it pulled, the day before and the day of its release,
#  the report)
PATHS = [
    pytest.param(
        ("--gpu", "sm80", "--gpus", "8", "--model", "glm-5.2"),
        "vllm-glm52-sm80-pr47629",
        "openguardrails/vllm-glm52-sm80:764b6bfa0-pr47629-pr47644",
        ("2026-08-28", "2026-08-29"),
        "https://github.com/wtdcode/vllm-backport/issues/38",
        id="glm-5.2-a100-openguardrails-pr47629",
    ),
    pytest.param(
        ("--gpu", "rtx-pro-6000", "--gpus", "4", "--model", "glm-5.3-flash"),
        "vllm-glm53-flash-sm120-jovian-r25",
        "voipmonitor/vllm:jovian-judgement-community-20260904-r25",
        ("2026-09-03", "2026-09-04"),
        "https://github.com/local-inference-lab/rtx6kpro/blob/",
        id="glm-5.3-flash-rtx-pro-6000-jovian-r25",
    ),
]


def _builds(result) -> set[str]:
    data = result.json()
    return {p["build"] for p in data["plans"]} | {r.get("build") for r in rejections(data)}


@pytest.mark.parametrize(("request_args", "build", "image", "dates", "report"), PATHS)
def test_a_surveyed_path_plans_where_it_was_reported_and_only_from_its_date(
    cli, request_args, build, image, dates, report
):
    doc = cli("explain", "--format", "json", *request_args, "--build", build).json()
    plan = doc["plans"][0]
    assert plan["build"] == build and plan["provenance"] == "community"
    assert plan["image"] == image
    assert any(s["url"].startswith(report) and s.get("date") for s in sources(doc, plan["sources"]))
    before, released = dates
    engine = ("--engine", "vllm")
    assert build not in _builds(cli("explain", "--format", "json", *request_args, *engine, "--as-of", before))
    assert build in {
        p["build"]
        for p in cli("explain", "--format", "json", *request_args, *engine, "--as-of", released).json()["plans"]
    }


def test_glm_5_3_flash_on_four_rtx_pro_6000_is_blocked_before_the_jovian_image_and_runs_from_it(cli):
    ask = ("explain", "--format", "json", "--gpu", "rtx-pro-6000", "--gpus", "4", "--model", "glm-5.3-flash")
    assert cli(*ask, "--as-of", "2026-09-03").json()["verdict"] == "blocked"
    after = cli(*ask, "--as-of", "2026-09-04").json()
    assert after["verdict"] == "runnable"
    assert after["plans"][0]["build"] == "vllm-glm53-flash-sm120-jovian-r25"


def test_glm_5_1_s_unsloth_gguf_is_offered_on_one_rtx_3090_once_its_file_is_known(cli):
    """The guide's GGUF (236 GB, one 24 GB card + 256 GB RAM) is in the catalog; which file of the repo to load is
    not, and llama-server loads a file: the path says so with the download step instead of naming a folder."""
    doc = cli(
        "explain", "--format", "json", "--gpu", "rtx-3090", "--gpus", "1", "--model", "glm-5.1", "--host-memory", "256"
    ).json()
    gguf = [r for r in rejections(doc) if r["variant"] == "gguf" and r["build"] == "llama.cpp-0c1e570"]
    assert gguf and gguf[0]["gate"] == "architecture" and gguf[0]["outcome"] == "unknown"
    assert "hf download unsloth/GLM-5.1-GGUF --include" in gguf[0]["reason"]
