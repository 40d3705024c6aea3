"""explain's "What changed between builds", `history` and the folder's README name the same first release
where a gate passes: the first official build in date order, not the newest one explain plans with."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_cli

REQUESTS = [
    ("--gpu", "sm80", "--gpus", "8", "--model", "glm-5.2"),  # vLLM loads GLM-5.2 since 0.16.0; plans 0.33.0
    ("--gpu", "h200", "--gpus", "8", "--model", "glm-5.2"),
]


def first_passing(history: dict, engine: str, gate: str) -> str:
    """The first official build whose verdict is not blocked at `gate`, in the order history lists them."""
    builds = next(e["builds"] for e in history["engines"] if e["engine"] == engine)
    dated = sorted((b for b in builds if b["provenance"] == "official"), key=lambda b: (b["released"], b["build"]))
    failed = [i for i, b in enumerate(dated) if b.get("gate") == gate]
    return dated[failed[-1] + 1]["build"] if failed else dated[0]["build"]


@pytest.mark.parametrize("args", REQUESTS, ids=lambda a: " ".join(a))
def test_explain_history_and_readme_name_the_same_first_release(tmp_path: Path, args: tuple[str, ...]) -> None:
    explained = run_cli("explain", *args, "--format", "json").json()
    changes = [c for c in explained["changes"] if c["gate"] == "architecture"]
    assert changes, "the request is chosen for a build that once did not load the model"
    newest = explained["plans"][0]["build"]
    history = run_cli("history", *args, "--format", "json").json()
    text = run_cli("explain", *args).out
    out = tmp_path / "folder"
    assert run_cli("generate", *args, "--out", str(out)).code == 0
    readme = (out / "README.md").read_text()
    for change in changes:
        first = first_passing(history, change["engine"], "architecture")
        assert change["after"]["build"] == first, (change, first)
        said = f"passes since {first} ({change['after']['date']})"
        assert said in text and said in readme
        assert f"until {first} (" in next(e["summary"] for e in history["engines"] if e["engine"] == change["engine"])
    assert any(c["after"]["build"] != newest for c in changes), "the first release is not simply the newest"
