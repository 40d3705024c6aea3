"""explain's default view fits one screen for every kind of answer: ≤ 40 lines, each ≤ 160 characters but
the copy-paste command, text wrapped at words and elided only with "…" and a pointer to --verbose."""

from __future__ import annotations

import re

import pytest

from tests.support.cli import run_cli

REQUESTS = {
    "curated, official build": ("--gpu", "h200", "--gpus", "8", "--model", "glm-5.2"),
    "curated, community build, layout searched": ("--gpu", "sm80", "--model", "glm-5.2"),
    "derived, one consumer GPU": ("--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-32b"),
    "blocked": ("--gpu", "rtx-4090", "--gpus", "1", "--model", "glm-5.2"),
    "unknown": ("--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen3-235b"),
    "fork only": ("--gpu", "a100-80gb", "--gpus", "8", "--model", "deepseek-v4-flash"),
    "community builds only": ("--gpu", "sm80", "--gpus", "8", "--model", "glm-5.2", "--engine", "vllm"),
    "unified memory": ("--gpu", "gb10", "--gpus", "2", "--model", "glm-5.3-flash"),
    "host offload, slow": ("--gpu", "rtx-4090", "--gpus", "1", "--model", "glm-5.2", "--host-memory", "256"),
}


@pytest.mark.parametrize("args", REQUESTS.values(), ids=REQUESTS.keys())
def test_default_view_fits_one_screen(args: tuple[str, ...]) -> None:
    short, full = run_cli("explain", *args), run_cli("explain", *args, "--verbose")
    assert short.code == 0 and full.code == 0, short.err
    lines = short.out.splitlines()
    assert len(lines) <= 40, f"{len(lines)} lines"
    wide = [line for line in lines if len(line) > 160 and not line.lstrip().startswith("command:")]
    assert not wide, wide
    for line in lines:  # an elided text says where the rest is; nothing ends cut mid-word without "…"
        if "…" in line and line.rstrip().endswith("…"):
            assert "--verbose" in short.out
        assert not line.endswith(("… ", "…(")), line
    elided = [line for line in lines if line.endswith("… (--verbose)")]
    words = set(re.findall(r"\S+", full.out))
    for line in elided:  # the last word before "…" is a whole word of the full text, not a stump
        last = line.removesuffix("… (--verbose)").split()[-1]
        assert last in words or any(w.startswith(last) and w[len(last) :][:1] in ",;:.)'\"" for w in words), last


@pytest.mark.parametrize("args", REQUESTS.values(), ids=REQUESTS.keys())
def test_notes_are_few_and_none_says_the_same_as_another(args: tuple[str, ...]) -> None:
    full = run_cli("explain", *args, "--verbose")
    short = run_cli("explain", *args).out.splitlines()
    assert len([line for line in short if line.lstrip().startswith("note:")]) <= 5
    notes = [line.split("note: ", 1)[1] for line in full.out.splitlines() if line.lstrip().startswith("note:")]
    assert "No size found." not in notes
    for i, a in enumerate(notes):  # two notes that share most of their words say one thing twice
        for b in notes[i + 1 :]:
            wa, wb = set(re.findall(r"[\w./-]+", a.lower())), set(re.findall(r"[\w./-]+", b.lower()))
            assert len(wa & wb) / min(len(wa), len(wb)) < 0.6, (a, b)
    repos = [n for n in notes if re.search(r"\bglm/GLM-5\.2-Int4-Int8Mix", n)]
    assert len(repos) <= 1, repos


SLOW = {
    "host offload": ("--gpu", "rtx-4090", "--gpus", "1", "--model", "glm-5.2", "--host-memory", "256"),
    "under 5 tok/s on the GPUs": ("--gpu", "gb10", "--gpus", "1", "--model", "llama-3.3-70b", "--variant", "fp8"),
}


@pytest.mark.parametrize("args", SLOW.values(), ids=SLOW.keys())
def test_a_slow_plan_says_slow_in_the_verdict_itself(tmp_path, args: tuple[str, ...]) -> None:
    plan = run_cli("explain", *args, "--format", "json").json()["plans"][0]
    verdict = next(line for line in run_cli("explain", *args).out.splitlines() if line.startswith("VERDICT"))
    figure = re.search(
        r"^VERDICT: runnable, slow: ~([\d.]+) tok/s for one request \(([^)]+)\) — faster: on (\S+), ~([\d.]+)", verdict
    )
    assert figure, verdict
    assert float(figure.group(1)) < 5 or "offload" in figure.group(2)
    assert float(figure.group(4)) > float(figure.group(1))  # where it runs faster, and how fast
    assert ("offload" in figure.group(2)) == (plan.get("offload") is not None)
    generated = run_cli("generate", *args, "--out", str(tmp_path / "o")).out.splitlines()[0]
    assert generated.endswith(f"RUNNABLE, slow: ~{figure.group(1)} tok/s for one request (estimate)"), generated
    readme = (tmp_path / "o" / "README.md").read_text()
    assert f"**Verdict: runnable, slow: \\~{figure.group(1)} tok/s for one request (estimate).**" in readme


def test_a_fast_plan_is_runnable_without_a_warning() -> None:
    verdict = next(
        line
        for line in run_cli("explain", *REQUESTS["derived, one consumer GPU"]).out.splitlines()
        if line.startswith("VERDICT")
    )
    assert verdict.startswith("VERDICT: runnable — ") and "slow" not in verdict


def test_a_fast_plan_paced_by_host_offload_says_so_in_the_verdict() -> None:
    args = ("--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--host-memory", "128")
    verdict = next(line for line in run_cli("explain", *args).out.splitlines() if line.startswith("VERDICT"))
    assert re.match(r"VERDICT: runnable, offload-bound: ~\d+ tok/s for one request \(host offload, paced by ", verdict)
    assert "— faster: on " in verdict


def test_generate_summary_wraps_to_the_screen_and_cuts_nothing(tmp_path) -> None:
    """generate's summary (an offload plan with faster layouts: its longest lines) wraps at words, within 160
    characters, and keeps every word: the speed line still ends with its bound. (The AWQ checkpoint: the IQ2_XS
    GGUF would fit the card whole.)"""
    args = (
        "--gpu",
        "rtx-4090",
        "--gpus",
        "1",
        "--model",
        "llama-3.3-70b",
        "--variant",
        "awq",
        "--out",
        str(tmp_path / "o"),
    )
    result = run_cli(*args)
    assert result.code == 0, result.err
    assert not [line for line in result.out.splitlines() if len(line) > 160]
    joined = " ".join(result.out.split())
    assert "offload-bound (paced by PCIe" in joined and "(--verbose)" not in joined
    assert re.search(r"• 2×rtx-4090: runs with .* ~[\d.]+ tok/s for one request", joined)
