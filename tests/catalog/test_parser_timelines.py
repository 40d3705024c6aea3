"""Parser arrival per release: every official vLLM and SGLang release in the catalog states the tool and
reasoning parsers its published wheel registers (sourced), so a derived plan fails the architecture gate in
the releases that lack its parser; `lint` checks a command's parsers against its build's list; `history`
says when a transition is due to a parser arriving (or to a list the catalog cannot vouch for)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.contract import rejections

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
VLLM = ["0.10.0", "0.10.1", "0.10.2", "0.11.0", "0.11.1", "0.12.0", "0.13.0", "0.14.0", "0.15.1", "0.16.0", "0.17.0"]
VLLM += ["0.18.0", "0.19.0", "0.20.1", "0.21.0", "0.22.0", "0.23.0", "0.24.0", "0.25.0", "0.26.0", "0.27.1", "0.28.0"]
VLLM += ["0.29.0", "0.30.0", "0.31.0"]
SGLANG = ["0.4.8", "0.4.9", "0.4.10", "0.5.0rc2", "0.5.2", "0.5.3", "0.5.4.post3", "0.5.5", "0.5.6.post2", "0.5.8"]
SGLANG += ["0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.13", "0.5.14", "0.5.15", "0.5.16", "0.5.17", "0.5.18", "0.5.19"]
SGLANG += ["0.5.20", "0.5.21"]
RELEASES = [*(f"vllm-{v}" for v in VLLM), *(f"sglang-{v}" for v in SGLANG)]


def explain(model: str, build: str, *more: str) -> dict:  # type: ignore[type-arg]
    result = run_cli(
        "explain", "--model", model, "--gpu", "h200", "--build", build, *more, "--format", "json", env=OFFLINE
    )
    assert result.code in (0, 3), result.err
    return result.json()  # type: ignore[no-any-return]


def architecture_reasons(data: dict) -> set[str]:  # type: ignore[type-arg]
    return {r["reason"] for r in rejections(data) if r["gate"] == "architecture"}


# --- the catalog's lists ------------------------------------------------------------------------------------


@pytest.mark.parametrize("build_id", RELEASES)
def test_every_official_release_has_sourced_parser_lists_from_its_published_wheel(catalog, build_id):
    engine, build = catalog.build(build_id)
    assert build.tool_parsers and build.reasoning_parsers
    assert not build.parsers_inherited, f"{build_id} still inherits {build.parsers_inherited}"
    wheel = f"https://pypi.org/project/{engine.id}/{build.version}/"
    assert any(s.url == wheel and s.date is not None for s in build.sources), f"{build_id} cites no {wheel}"


@pytest.mark.parametrize(
    ("build_id", "kind", "name", "present"),
    [
        ("vllm-0.10.0", "tool", "glm4_moe", True),  # GLM-4.5's parser had another name in 0.10.0
        ("vllm-0.10.0", "tool", "glm45", False),
        ("vllm-0.10.1", "tool", "glm45", True),
        ("vllm-0.10.1", "reasoning", "GptOss", True),
        ("vllm-0.10.1", "tool", "openai", False),
        ("vllm-0.10.2", "tool", "openai", True),
        ("vllm-0.10.2", "reasoning", "openai_gptoss", True),
        ("vllm-0.10.2", "tool", "deepseek_v31", True),
        ("vllm-0.11.0", "tool", "minimax_m2", False),
        ("vllm-0.11.1", "tool", "minimax_m2", True),
        ("vllm-0.12.0", "tool", "deepseek_v32", False),
        ("vllm-0.13.0", "tool", "deepseek_v32", True),
        ("vllm-0.13.0", "tool", "glm47", False),  # PR #30876 missed 0.13.0 by a day
        ("vllm-0.14.0", "tool", "glm47", True),
        ("vllm-0.15.1", "tool", "deepseek_v4", False),
        ("vllm-0.20.1", "tool", "deepseek_v4", True),
        ("vllm-0.19.0", "tool", "deepseek_v4", False),
        ("vllm-0.26.0", "tool", "kimi_k3", False),
        ("vllm-0.27.1", "reasoning", "kimi_k3", True),
        ("sglang-0.4.9", "tool", "glm45", False),
        ("sglang-0.4.10", "tool", "glm45", True),
        ("sglang-0.4.10", "tool", "gpt-oss", False),
        ("sglang-0.5.0rc2", "reasoning", "gpt-oss", True),
        ("sglang-0.5.3", "tool", "minimax-m2", False),
        ("sglang-0.5.4.post3", "tool", "minimax-m2", True),
        ("sglang-0.5.5", "tool", "deepseekv32", False),
        ("sglang-0.5.6.post2", "tool", "glm47", False),
        ("sglang-0.5.6.post2", "reasoning", "glm45", True),
        ("sglang-0.5.8", "tool", "glm47", True),
        ("sglang-0.5.11", "tool", "deepseekv4", False),
        ("sglang-0.5.12", "reasoning", "deepseek-v4", True),
    ],
)
def test_parsers_arrive_in_the_release_their_wheel_first_registers_them(catalog, build_id, kind, name, present):
    build = catalog.build(build_id)[1]
    names = build.tool_parsers if kind == "tool" else build.reasoning_parsers
    assert (name in names) is present


@pytest.mark.parametrize("build_id", ["vllm-gptoss-image", "vllm-glm5-image", "sglang-dsv4-hopper-image"])
def test_model_images_without_a_tag_of_their_own_keep_an_unsourced_list(catalog, build_id):
    build = catalog.build(build_id)[1]
    assert set(build.parsers_inherited) == {"tool", "reasoning"}


@pytest.mark.parametrize(
    ("model", "build", "flags", "lost"),
    [
        (
            "deepseek-v3.2",
            "vllm-0.12.0",
            ("--tool-call-parser",),
            [
                "no tool-call parser: vllm-0.12.0 has no --tool-call-parser deepseek_v32 (DeepSeek-V3.2's format), "
                "so tool calls come back as plain text; "
                "first sourced build with it: vllm-0.13.0 (2025-12-19)"
            ],
        ),
        (
            "gpt-oss-120b",
            "vllm-0.10.1",
            ("--tool-call-parser", "--reasoning-parser", "--enable-auto-tool-choice"),
            [
                "no tool-call parser: vllm-0.10.1 has no --tool-call-parser openai (gpt-oss-120b's format), "
                "so tool calls come back as plain text; "
                "first sourced build with it: vllm-0.10.2 (2025-09-15)",
                "no reasoning parser: vllm-0.10.1 has no --reasoning-parser openai_gptoss "
                "(gpt-oss-120b's format), so the thinking stays in the answer's content; "
                "first sourced build with it: vllm-0.10.2 (2025-09-15)",
            ],
        ),
        (
            "glm-4.7",
            "vllm-0.13.0",
            ("--tool-call-parser", "--enable-auto-tool-choice"),
            [
                "no tool-call parser: vllm-0.13.0 has no --tool-call-parser glm47 (GLM-4.7's format), "
                "so tool calls come back as plain text; "
                "first sourced build with it: vllm-0.14.0 (2026-01-20)"
            ],
        ),
    ],
)
def test_a_release_without_the_models_parser_runs_without_it_and_says_what_is_lost(model, build, flags, lost):
    """An unknown parser name stops the server at start, so the plan leaves the flag out; the model still loads,
    and the plan says what it loses and which release parses it."""
    data = explain(model, build)
    assert data["verdict"] == "runnable"
    plan = data["plans"][0]
    assert plan["build"] == build
    assert not set(flags) & set(plan["argv"]), plan["argv"]
    for text in lost:
        assert any(n.startswith(text) for n in plan["notes"]), plan["notes"]


def test_the_first_release_with_the_parser_plans_it_without_a_note():
    data = explain("glm-4.7", "vllm-0.14.0")
    assert data["verdict"] == "runnable"
    plan = data["plans"][0]
    assert "glm47" in plan["argv"]
    assert not [n for n in plan["notes"] if "not known to exist" in n]


# --- lint ---------------------------------------------------------------------------------------------------

SGLANG_OLD = (
    "docker", "run", "--gpus", "all", "lmsysorg/sglang:v0.5.6.post2", "python3", "-m", "sglang.launch_server",
    "--model-path", "/models/GLM-4.7-FP8", "--tp-size", "8",
    "--tool-call-parser", "glm47", "--reasoning-parser", "glm45",
)  # fmt: skip


def lint(*args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = run_cli("lint", "--format", "json", *args, env=OFFLINE)
    assert result.code in (0, 1), result.err
    return result.code, result.json()


def test_lint_names_the_parser_the_build_lacks_and_the_builds_that_have_it():
    code, data = lint("--", *SGLANG_OLD)
    assert code == 1 and data["build"] == "sglang-0.5.6.post2"
    found = [f for f in data["findings"] if f["code"] == "parser-missing"]
    assert len(found) == 1
    finding = found[0]
    assert finding["severity"] == "error"
    assert (finding["flag"], finding["value"]) == ("--tool-call-parser", "glm47")
    assert finding["what"] == "not in sglang-0.5.6.post2: SGLang refuses it at start-up"
    assert finding["why"].startswith(
        "sglang-0.5.6.post2's sourced list of tool parsers lacks it; builds that have it: sglang-0.5.8 (2026-01-30), "
    )
    assert "sglang-0.5.23" in finding["why"]
    assert finding["fix"] == "a build that has it: sglang-0.5.8 (2026-01-30), image lmsysorg/sglang:v0.5.8"
    assert "https://pypi.org/project/sglang/0.5.6.post2/" in finding["sources"]
    # the reasoning parser glm45 is in 0.5.6.post2's list: nothing to say about it
    assert not [f for f in data["findings"] if f["flag"] == "--reasoning-parser"]


def test_lint_text_output_and_the_gate_does_not_say_it_twice():
    result = run_cli("lint", "--gpu", "h200", "--", *SGLANG_OLD, env=OFFLINE)
    assert result.code == 1, result.err
    assert "✗ error  --tool-call-parser glm47: not in sglang-0.5.6.post2: SGLang refuses it at start-up" in result.out
    assert "builds that have it: sglang-0.5.8 (2026-01-30)" in result.out
    assert "cannot load GLM-4.7" not in result.out  # the architecture gate fails only for that parser
    assert "1 error," in result.out


def test_lint_of_a_launch_script_checks_both_parsers(tmp_path: Path):
    script = tmp_path / "launch.sh"
    script.write_text(
        "#!/bin/sh\ndocker run --gpus all vllm/vllm-openai:v0.10.1 /models/gpt-oss-120b \\\n"
        "  --enable-auto-tool-choice --tool-call-parser openai --reasoning-parser openai_gptoss\n"
    )
    code, data = lint(str(script))
    assert code == 1 and data["build"] == "vllm-0.10.1"
    found = {(f["flag"], f["value"]): f for f in data["findings"] if f["code"] == "parser-missing"}
    assert set(found) == {("--tool-call-parser", "openai"), ("--reasoning-parser", "openai_gptoss")}
    assert all(f["fix"].startswith("a build that has it: vllm-0.10.2 (2025-09-15)") for f in found.values())


def test_lint_says_when_the_builds_list_is_not_sourced_without_failing():
    code, data = lint(
        "--", "docker", "run", "--gpus", "all", "vllm/vllm-openai:glm5", "/models/GLM-5-FP8", "-tp", "8",
        "--enable-auto-tool-choice", "--tool-call-parser", "glm47", "--reasoning-parser", "glm45",
    )  # fmt: skip
    assert code == 0 and data["build"] == "vllm-glm5-image"
    unknown = [f for f in data["findings"] if f["code"] == "parser-unknown"]
    assert {(f["flag"], f["severity"]) for f in unknown} == {
        ("--tool-call-parser", "info"),
        ("--reasoning-parser", "info"),
    }
    tool = next(f for f in unknown if f["flag"] == "--tool-call-parser")
    assert tool["what"] == "not known to exist in vllm-glm5-image (only vllm-0.15.1's list is sourced)"
    assert "sourced builds that have it: vllm-0.14.0 (2026-01-20)" in tool["why"]
    assert not [f for f in data["findings"] if f["code"] == "parser-missing"]


def test_lint_is_quiet_about_parsers_the_build_has_and_leaves_unknown_names_to_the_vocabulary():
    _, data = lint(
        "--", "docker", "run", "--gpus", "all", "vllm/vllm-openai:v0.15.1", "/models/GLM-4.7-FP8", "-tp", "8",
        "--enable-auto-tool-choice", "--tool-call-parser", "glm47", "--reasoning-parser", "no_such_parser",
    )  # fmt: skip
    assert data["build"] == "vllm-0.15.1"
    assert not [f for f in data["findings"] if f["code"] in ("parser-missing", "parser-unknown")]
    assert [f["code"] for f in data["findings"] if f["flag"] == "--reasoning-parser"] == ["bad-choice"]


# --- history ------------------------------------------------------------------------------------------------


def history(*args: str) -> list[str]:
    result = run_cli("history", "--gpu", "h200", *args, env=OFFLINE)
    assert result.code == 0, result.err
    return result.out.splitlines()


def test_history_says_the_parser_arrived_when_the_verdict_flips():
    lines = history("--model", "glm-4.7", "--engine", "sglang")
    assert any("sglang-0.5.6.post2" in line and "runnable (no tool-call parser)" in line for line in lines)
    flip = next(line for line in lines if "↳ sglang-0.5.6.post2 → sglang-0.5.8:" in line)
    assert flip.endswith(
        "parsers: sglang-0.5.8 has --tool-call-parser glm47 (its sourced list); "
        "sglang-0.5.8 has --reasoning-parser glm45 (its sourced list)"
    )


def test_history_says_which_parser_arrived_while_another_is_still_missing():
    lines = history("--model", "glm-4.7", "--engine", "vllm")
    flip = next(line for line in lines if "↳ vllm-0.10.0 → vllm-0.10.1:" in line)
    assert flip.endswith(
        "parsers: vllm-0.10.1 has --reasoning-parser glm45 (its sourced list); no tool-call parser: "
        "vllm-0.10.1 has no --tool-call-parser glm47 (GLM-4.7's format), so tool calls come back as plain text; "
        "first sourced build with it: "
        "vllm-0.14.0 (2026-01-20)"
    )
    summary = next(line for line in lines if line.startswith("vLLM: "))
    assert summary.endswith("then runnable (no tool-call parser) until vllm-0.14.0 (2026-01-20), runnable since")
    # the release where tool calls are parsed names the parser that arrived
    assert any(
        line.startswith("  ↳ vllm-0.13.0 → vllm-0.14.0: parsers: ")
        and "vllm-0.14.0 has --tool-call-parser glm47 (its sourced list)" in line
        for line in lines
    )


def test_history_says_when_the_later_builds_parser_is_not_known(tmp_path: Path):
    """A release whose file states no parser list: the flip from a release that lacks the parser carries the
    parser-unknown reason."""
    release = tmp_path / "engines" / "sglang" / "sglang-0.5.7.yaml"
    release.parent.mkdir(parents=True)
    release.write_text("id: sglang-0.5.7\nextends: sglang-0.5.11\nversion: 0.5.7\nreleased: 2026-01-15\n")
    result = run_cli(
        "history", "--gpu", "h200", "--model", "glm-4.7", "--engine", "sglang", "--recipes", str(tmp_path),
        "--format", "json", env=OFFLINE,
    )  # fmt: skip
    assert result.code == 0, result.err
    flips = {(f["from"], f["to"]): f["change"] for f in result.json()["engines"][0]["flips"]}
    assert flips[("sglang-0.5.6.post2", "sglang-0.5.7")] == (
        "parsers: --tool-call-parser glm47: not known to exist in sglang-0.5.7 (only sglang-0.5.11's list is sourced); "
        "--reasoning-parser glm45: not known to exist in sglang-0.5.7 (only sglang-0.5.11's list is sourced)"
    )


def test_lint_accepts_an_older_builds_own_parser_name_the_newest_vocabulary_lacks():
    """vLLM 0.10.0 registered GLM-4.5's parsers as glm4_moe: not an argument error there, but the catalog's parser
    for GLM-4.5 (glm45) is named, with the first build that has it."""
    _, data = lint(
        "--", "docker", "run", "--gpus", "all", "vllm/vllm-openai:v0.10.0", "/models/GLM-4.5-FP8", "-tp", "8",
        "--enable-auto-tool-choice", "--tool-call-parser", "glm4_moe", "--reasoning-parser", "glm4_moe",
    )  # fmt: skip
    assert data["build"] == "vllm-0.10.0"
    assert not [f for f in data["findings"] if f["code"] in ("bad-choice", "parser-missing")]
    tool = next(f for f in data["findings"] if f["code"] == "tool-parser")
    assert tool["why"].endswith("vllm-0.10.0 has no glm45; first sourced build with it: vllm-0.10.1 (2025-08-27)")
    assert tool["fix"] == "--tool-call-parser glm45, on a build that has it (vllm-0.10.1 or later)"
