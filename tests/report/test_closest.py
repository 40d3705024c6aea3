"""The closest rejected paths are the ones a user would consider, the same in explain and generate (issue 25)."""

from __future__ import annotations

import re

QWEN = ("--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-32b")
DSV4 = ("--gpu", "a100", "--gpus", "8", "--model", "deepseek-v4-flash")


def closest(text: str) -> list[str]:
    """The path of each line under the 'closest rejected paths' heading (mark, engine, build · variant)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "losest rejected paths" in line)
    rows = []
    for line in lines[start + 1 :]:
        match = re.match(r"\s+([✗?]) .*?(\S+) · (\S+) \[", line)
        if not match:
            break
        rows.append(" ".join(match.groups()))
    return rows


def test_a_runnable_request_does_not_offer_other_models_images_as_closest(cli, tmp_path):
    explained = cli("explain", *QWEN)
    assert explained.code == 0, explained.err
    assert "Closest rejected paths: none among the official builds" in explained.out
    for image in ("vllm-glm53-flash-image", "sglang-dsv4-blackwell-image", "sglang-dsv4-hopper-image"):
        assert image not in explained.out
    generated = cli(*QWEN, "--out", str(tmp_path / "q"))
    assert "closest rejected paths: none among the official builds" in generated.out


def test_closest_paths_are_official_builds_ordered_alike_in_explain_and_generate(cli, tmp_path):
    explained = cli("explain", *DSV4)
    shown = closest(explained.out)
    assert len(shown) == 3 and all(re.search(r"(vllm|sglang)-0\.\d+\.\d+ ", row) for row in shown), shown
    generated = cli(*DSV4, "--out", str(tmp_path / "d"))
    assert closest(generated.out)[:3] == shown
    doc = cli("explain", *DSV4, "--format", "json").json()
    official = {(p["build"], p["variant"]) for p in doc["plans"]}
    assert all(tuple(row.split(" ", 1)[1].split(" · ")) not in official for row in shown)
