"""A derived plan's tool/reasoning parsers must exist in the build it runs: where a sourced parser list lacks one,
the plan leaves the flag out (an unknown name stops the server) and says what it loses; a list not sourced for the
build is a note. Neither blocks the path: the model still loads."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from tests.support.cli import run_cli

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
GLM47 = ("--model", "glm-4.7", "--gpu", "h200")


def explain(*args: str) -> dict:  # type: ignore[type-arg]
    result = run_cli("explain", *GLM47, *args, "--format", "json", env=OFFLINE)
    assert result.code in (0, 3), result.err
    return result.json()  # type: ignore[no-any-return]


LOST = (
    "no tool-call parser: sglang-0.5.6.post2 has no --tool-call-parser glm47 (GLM-4.7's format), so tool calls come "
    "back as plain text; first sourced build with it: sglang-0.5.8 (2026-01-30)"
)


def test_glm47_on_sglang_0_5_6_post2_runs_without_its_parser_naming_the_first_build_with_it():
    data = explain("--build", "sglang-0.5.6.post2")
    assert data["verdict"] == "runnable"
    plan = data["plans"][0]
    assert "--tool-call-parser" not in plan["argv"] and "glm47" not in plan["argv"]
    assert any(n.startswith(LOST) for n in plan["notes"]), plan["notes"]


def test_text_output_shows_what_the_plan_loses():
    result = run_cli("explain", *GLM47, "--build", "sglang-0.5.6.post2", "--verbose", env=OFFLINE)
    assert "no tool-call parser: sglang-0.5.6.post2 has no --tool-call-parser glm47" in " ".join(result.out.split())


@pytest.mark.parametrize("build", ["sglang-0.5.23", "vllm-0.33.0"])
def test_the_newest_builds_still_plan_glm47_without_a_parser_note(build):
    data = explain("--build", build)
    assert data["verdict"] == "runnable"
    plan = data["plans"][0]
    assert "--tool-call-parser" in plan["argv"] and "glm47" in plan["argv"]
    assert not [n for n in plan["notes"] if "not known to exist" in n]


def test_a_build_whose_parsers_are_not_sourced_plans_with_a_note():
    data = explain("--build", "vllm-glm5-image")  # a model image: its lists are vllm-0.15.1's, not re-checked
    assert data["verdict"] == "runnable"
    notes = data["plans"][0]["notes"]
    assert (
        "--tool-call-parser glm47: not known to exist in vllm-glm5-image (only vllm-0.15.1's list is sourced); "
        "check it before relying on it"
    ) in notes


def test_history_says_since_when():
    result = run_cli("history", *GLM47, env=OFFLINE)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    row = next(line for line in lines if "sglang-0.5.6.post2 " in line and "runnable" in line)
    assert "runnable (no tool-call parser)" in row
    assert any(
        "sglang-0.4.9 → sglang-0.4.10: architecture now passes: sglang-0.4.10 loads Glm4MoeForCausalLM; "
        "sglang-0.4.10 has --reasoning-parser glm45 (its sourced list); no tool-call parser: sglang-0.4.10 has no "
        "--tool-call-parser glm47" in line
        for line in lines
    )
    assert any("sglang-0.5.23 (" in line and "runnable  [to" in line for line in lines)  # a run of releases


@pytest.mark.parametrize(("recipe", "reference"), [("vllm", "vllm-0.33.0"), ("sglang", "sglang-0.5.23")])
def test_base_build_parser_lists_are_the_vocabularys_choices(catalog, recipe, reference):
    raw = json.loads((resources.files("recipegen.data") / "engine-cli" / f"{reference}.json").read_text())
    options = raw["options"] if isinstance(raw["options"], list) else list(raw["options"].items())
    choices = {}
    for _, spec in options:
        for flag in spec.get("option_strings") or []:
            choices[flag] = spec.get("choices") or spec.get("valid_values")
    base = catalog.build(reference)[1]
    assert base.tool_parsers == choices["--tool-call-parser"]
    assert base.reasoning_parsers == choices["--reasoning-parser"]
    assert not base.parsers_inherited


CHILD = "id: vllm-test-old\nextends: vllm-0.33.0\nversion: 0.1.0\nreleased: 2025-01-01\n"


def write(root: Path, text: str) -> Path:
    path = root / "engines" / "vllm" / "vllm-test-old.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_release_removing_a_parser_leaves_it_out_and_a_bad_edit_is_located(tmp_path):
    write(
        tmp_path,
        CHILD + "tool_parsers:\n  remove: [glm47]\nsources:\n- url: https://example.org/x\n  date: 2025-01-01\n",
    )
    result = run_cli(
        "explain", *GLM47, "--build", "vllm-test-old", "--recipes", str(tmp_path), "--format", "json", env=OFFLINE
    )
    plan = result.json()["plans"][0]
    assert plan["build"] == "vllm-test-old" and "glm47" not in plan["argv"]
    assert any(
        n.startswith("no tool-call parser: vllm-test-old has no --tool-call-parser glm47") for n in plan["notes"]
    )
    path = write(tmp_path, CHILD + "tool_parsers:\n  remove: [no_such_parser]\n")
    result = run_cli("validate", str(tmp_path))
    assert result.code == 2
    assert f"{path}:6: tool_parsers.remove[0]: 'vllm-0.33.0' has no 'no_such_parser' to remove" in result.err
