"""A lint finding cites sources about the command's own model, engine or flag, never another model's."""

from __future__ import annotations

import re

import pytest

from tests.support.cli import run_cli

COMMANDS = {
    "vllm, Qwen3-32B on one 4090": (
        ("--gpu", "rtx-4090", "--gpus", "1"),
        ("vllm", "serve", "Qwen/Qwen3-32B"),
        "qwen3-32b",
    ),
    "sglang, Qwen3-32B-AWQ on one 4090": (
        ("--gpu", "rtx-4090", "--gpus", "1"),
        ("python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-32B-AWQ"),
        "qwen3-32b",
    ),
    "vllm, gpt-oss-120b on one H100": (
        ("--gpu", "h100", "--gpus", "1"),
        ("vllm", "serve", "openai/gpt-oss-120b"),
        "gpt-oss-120b",
    ),
}


def names_of_other_models(own: str) -> set[str]:
    """Each other catalog model's names (id and display name), lower-cased; the same family's are left out
    where they are a prefix of the model's own (qwen3 for qwen3-32b)."""
    models = run_cli("list", "models", "--format", "json").json()
    mine = next(m for m in models if m["id"] == own)
    names = {n.lower() for m in models if m["id"] != own for n in (m["id"], m["name"])}
    return {n for n in names if not mine["name"].lower().startswith(n) and not own.startswith(n)}


@pytest.mark.parametrize("case", COMMANDS.values(), ids=COMMANDS.keys())
def test_every_finding_cites_its_own_model_engine_or_flag(case: tuple[tuple[str, ...], tuple[str, ...], str]) -> None:
    options, command, own = case
    result = run_cli("lint", *options, "--format", "json", "--", *command)
    doc = result.json()
    assert doc["findings"], "the command is chosen to draw findings"
    others = names_of_other_models(own)
    for finding in doc["findings"]:
        assert finding["sources"], finding
        for url in finding["sources"]:
            foreign = [n for n in others if re.search(rf"(?<![\w.]){re.escape(n)}(?![\w.])", url.lower())]
            assert not foreign, f"{finding['code']} {finding['flag']}: {url} is about {foreign}"


def test_the_text_view_names_no_other_model() -> None:
    out = run_cli("lint", "--gpu", "rtx-4090", "--gpus", "1", "--", "vllm", "serve", "Qwen/Qwen3-32B").out
    sources = " ".join(line for line in out.splitlines() if line.lstrip().startswith("source:"))
    assert "Qwen3-32B" in sources
    assert not re.search(r"GLM-5\.3-Flash|Qwen3-235B", sources), sources
