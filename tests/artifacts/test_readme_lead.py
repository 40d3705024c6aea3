"""The folder's README leads with what to run, in order, with the wait; rejected paths go to REJECTED.md."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.support.cli import run_cli
from tests.support.docker import free_port


def generate(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "folder"
    result = run_cli("generate", *args, "--out", str(out))
    assert result.code == 0, result.err
    return out


def test_readme_leads_with_the_steps_and_the_wait(tmp_path: Path) -> None:
    out = generate(tmp_path, "--gpu", "sm80", "--gpus", "8", "--model", "glm-5.2")
    readme = (out / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    steps = ["recipegen preflight .", "./launch.sh download", "./launch.sh  ", "until curl", "./verify.sh"]
    positions = [readme.find(step.strip()) for step in steps]
    assert -1 not in positions and positions == sorted(positions)
    assert "recipegen up ." in readme
    assert readme.find("./verify.sh") < readme.find("| gate |"), "the steps come before the detail"
    assert "| engine | build | variant |" not in readme

    rejected = (out / "REJECTED.md").read_text()
    lines = [line for line in rejected.splitlines() if line.startswith("- ")]
    reasons = [re.sub(r"\(\d+ paths?\)", "", line.rsplit(" — ", 1)[0]) for line in lines]
    assert len(reasons) == len(set(reasons)), "one line per reason"
    covered = sum(int(m.group(1)) for line in lines if (m := re.search(r"\((\d+) paths?\)", line)))
    assert covered == len(json.loads((out / "plan.json").read_text())["rejected"])
    assert "REJECTED.md" in readme


def test_a_folder_that_compiles_says_so_first(tmp_path: Path) -> None:
    out = generate(tmp_path, "--gpu", "a100-80gb", "--gpus", "8", "--model", "deepseek-v4-flash")
    readme = (out / "README.md").read_text()
    assert (out / "Dockerfile").exists()  # the nisparks llama.cpp fork is built from source
    assert -1 < readme.find("First run compiles") < readme.find("./launch.sh")
    plain = (generate(tmp_path / "h100", "--gpu", "h100", "--model", "qwen3-8b") / "README.md").read_text()
    assert "compiles" not in plain


def test_generate_json_says_which_folder_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "answer"
    result = run_cli("generate", "--gpu", "h100", "--model", "qwen3-8b", "--out", str(out), "--format", "json")
    assert result.code == 0, result.err
    printed = result.json()
    assert printed["written"]["folder"] == str(out.resolve())
    assert set(printed["written"]["files"]) == {p.name for p in out.iterdir() if not p.name.startswith(".")}
    assert {k: v for k, v in printed.items() if k != "written"} == json.loads((out / "plan.json").read_text())


def test_verify_stops_at_a_failed_health_check_with_one_cause(tmp_path: Path) -> None:
    out = generate(tmp_path, "--gpu", "h100", "--model", "qwen3-8b")
    nothing_listens = f"http://127.0.0.1:{free_port()}"
    proc = subprocess.run(
        ["bash", str(out / "verify.sh")],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "BASE_URL": nothing_listens, "TIMEOUT": "5"},
        timeout=60,
    )
    fails = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    assert proc.returncode == 1 and len(fails) == 1 and fails[0].startswith("FAIL  health")
    assert "not healthy yet" in proc.stdout
