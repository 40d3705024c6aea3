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
        ("--gpu", "a100", "--gpus", "8", "--model", "glm-5.1"),
        "vllm-glm5-sm80-haosdent-nightly",
        "haosdent/vllm-nightly:latest@sha256:3eedf87d84510292a5a8088459570caae804b738853972137e17e0dbc2284f76",
        ("2026-06-05", "2026-06-06"),
        "https://github.com/vllm-project/vllm/pull/38476",
        id="glm-5.1-a100-haosdent-pr38476",
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


@pytest.mark.parametrize(
    ("model", "gpus", "gpu", "host", "build", "file"),
    [
        ("glm-5.1", "1", "rtx-3090", "256", "llama.cpp-0c1e570", "GLM-5.1-UD-IQ2_M-00001-of-00006.gguf"),
        ("glm-5.2", "4", "rtx-3090", "192", "llama.cpp-0c1e570", "GLM-5.2-UD-IQ2_M-00001-of-00006.gguf"),
        ("glm-5.2", "1", "rtx-4090", "256", "llama.cpp-0c1e570", "GLM-5.2-UD-IQ2_M-00001-of-00006.gguf"),
        ("glm-5", "1", "rtx-3090", "192", "ik_llama.cpp-42a9a2fd", "GLM-5-GGUF-1.594bpw.gguf"),
    ],
)
def test_a_glm_5_gguf_runs_on_24_gb_cards_with_the_experts_in_host_ram(cli, model, gpus, gpu, host, build, file):
    """The guides' GGUFs (one 24 GB card + RAM; 4x RTX 3090 + 192 GB in a report) name the file llama-server
    loads: the plan offloads the routed experts and loads the first shard, the rest is read beside it."""
    ask = ("explain", "--format", "json", "--gpu", gpu, "--gpus", gpus, "--model", model, "--host-memory", host)
    doc = cli(*ask).json()
    assert doc["verdict"] == "runnable"
    plan = next(p for p in doc["plans"] if p["variant"] == "gguf" and p["build"] == build)
    model_arg = plan["argv"][plan["argv"].index("--model") + 1]
    assert model_arg.endswith("/" + file)
    assert "--n-cpu-moe" in plan["argv"] and plan["offload"]


def test_sokanns_ik_quant_of_glm_5_is_not_offered_to_mainline_llama_cpp(cli):
    doc = cli(
        "explain", "--format", "json", "--gpu", "rtx-3090", "--gpus", "1", "--model", "glm-5", "--host-memory", "128"
    ).json()
    mainline = [r for r in rejections(doc) if r["variant"] == "gguf" and r["build"] == "llama.cpp-0c1e570"]
    assert mainline and "loads only in ik_llama.cpp-8337e4c" in mainline[0]["reason"]
