"""Each command's default text fits a screen, the decisive fact first, and what it leaves out is still in --verbose
and --format json, with the same numbers. One test per command on a representative request; each states its
budget and why. (explain's own budget: tests/cli/test_explain_screen.py.)"""

from __future__ import annotations

import re

import pytest

from tests.support.cli import run_cli

WIDTH = 160  # the widest line a default view prints (plan.describe.LINE); elided text ends "… (--verbose)"

# a family that shares its reasons (DeepSeek-V3's checkpoints on the same GPUs), one that has its own per GPU
# generation (GLM-5.x), an everyday dense model, a 70B on consumer cards, and one whose size is unknown (?)
MATRIX_MODELS = (
    "deepseek-r1",
    "deepseek-v3",
    "deepseek-v3.1",
    "deepseek-v3.2",
    "glm-5",
    "glm-5.1",
    "glm-5.2",
    "qwen3-8b",
    "llama-3.3-70b",
    "kimi-k3",
)
WHY = re.compile(r"^- (?P<models>.+?) on (?P<where>.+?): (?P<reason>.+)$")
CITED = re.compile(r" \[(?:https?://|generator/)[^\]]*\]")


@pytest.fixture(scope="module")
def matrix() -> tuple[str, str, list[dict]]:
    args = [a for m in MATRIX_MODELS for a in ("--model", m)]
    default, verbose, data = (run_cli("matrix", *args, *extra) for extra in ((), ("--verbose",), ("--format", "json")))
    assert default.code == verbose.code == data.code == 0, default.err
    return default.out, verbose.out, data.json()["cells"]


def _why_lines(out: str) -> list[re.Match[str]]:
    section = out.split("Why each ◐ and ?", 1)[1].splitlines()[1:]
    found = [WHY.match(line) for line in section]
    assert all(found), [line for line, m in zip(section, found, strict=True) if not m]
    return [m for m in found if m]


def _fact(reason: str) -> str:
    """What the default view must show of a reason: an estimate's size and label; else its opening words."""
    estimate = re.match(r"checkpoint size not in the catalog: estimated as ([^:]+)", reason)
    if estimate:
        return f"estimated size {estimate.group(1).strip()}"
    return " ".join(CITED.sub("", reason).split()[:4])


def test_default_matrix_says_each_reason_once_within_its_budget(matrix):
    """Budget: at most 3 why-lines per model row (the whole catalog's matrix: ~2). A model's six cells share few
    distinct reasons (a format's fallback per GPU generation, its community checkpoint, its size estimate, a field
    report); the per-cell listing said the same sentence once per GPU and cell (~5 lines a model, 420 for the
    catalog). Outside the table (a row per model) no line passes WIDTH columns."""
    default, verbose, cells = matrix
    lines = _why_lines(default)
    assert len(lines) <= 3 * len(MATRIX_MODELS), len(lines)
    assert len(lines) < len(_why_lines_verbose(verbose))
    wide = [line for line in default.splitlines() if len(line) > WIDTH and not line.startswith("|")]
    assert not wide, wide
    targets = sorted({c["target"] for c in cells})
    for cell in (c for c in cells if c["symbol"] in ("◐", "?")):
        for reason in cell["reasons"]:
            fact = _fact(reason)
            holding = [
                m
                for m in lines
                if cell["model"] in m["models"].split(", ")
                and (m["where"] == "every GPU" or cell["target"] in m["where"].split(", "))
                and fact in m["reason"]
            ]
            # said once: one line names this model on this GPU with this reason (whatever else shares it)
            assert len(holding) == 1, (cell["model"], cell["target"], fact, [m.group(0) for m in holding])
            if holding[0]["where"] == "every GPU":
                assert all(any(c["model"] == cell["model"] and c["target"] == t for c in cells) for t in targets)


def _why_lines_verbose(out: str) -> list[str]:
    return [line for line in out.split("Why each ◐ and ?:", 1)[1].splitlines() if line.startswith("- ")]


def test_what_the_default_matrix_leaves_out_is_in_verbose_and_json_with_the_same_numbers(matrix):
    default, verbose, cells = matrix
    reasons = {c["model"]: [] for c in cells}
    for c in cells:
        reasons[c["model"]].extend(c["reasons"])
    for m in _why_lines(default):  # every number the default says is one json says for one of the models named
        said = " ".join(r for model in m["models"].split(", ") for r in reasons[model])
        for number in re.findall(r"\d+(?:\.\d+)?", m["reason"].removesuffix("… (--verbose)")):
            assert number in said, (number, m.group(0))
    for c in (c for c in cells if c["symbol"] in ("◐", "?")):  # --verbose keeps their reasons whole: the
        for reason in c["reasons"]:  # estimate's derivation, every source
            assert reason in verbose, reason
    derivations = [r for c in cells for r in c["reasons"] if "linear-layer weights ×" in r]
    assert derivations and not any(r.split(": ", 2)[-1][:40] in default for r in derivations)


HISTORY = {
    "seed, community builds only": ("--gpu", "sm80", "--model", "glm-5.2"),
    "seed, many side paths": ("--gpu", "gb10", "--model", "deepseek-v4-flash"),
    "everyday": ("--gpu", "rtx-4090", "--model", "qwen3-32b"),
    "everyday, two cards": ("--gpu", "rtx-3090", "--gpus", "2", "--model", "llama-3.3-70b"),
    "blocked on the official line": ("--gpu", "rtx-4090", "--model", "glm-5.3-flash"),
}
SIDE = re.compile(r"^  (?P<kind>[\w-]+) path: (?P<build>\S+) \((?P<date>[\d-]+)\): (?P<said>.+)$")
GROUP = re.compile(r"^  (?P<count>\d+) side paths (?P<said>.+?): (?P<names>.+)$")


@pytest.mark.parametrize("args", HISTORY.values(), ids=HISTORY.keys())
def test_default_history_groups_the_side_paths_that_do_not_run(args: tuple[str, ...]) -> None:
    """Budget: 48 lines (about 12 per engine with a release line). The release line itself is already grouped
    (consecutive releases that say the same share a row); what grew without bound were the side paths — every
    model image, community image and fork in the catalog, ~20 per engine and most blocked for the same reason. By
    default each one that runs keeps its line; the others share one per reason, names elided past WIDTH."""
    default, verbose = run_cli("history", *args), run_cli("history", *args, "--verbose")
    assert default.code == verbose.code == 0, default.err
    lines = default.out.splitlines()
    assert len(lines) <= 48, len(lines)
    side = [m for m in map(SIDE.match, verbose.out.splitlines()) if m]
    assert side
    shown = {m["build"]: m.group(0) for m in map(SIDE.match, lines) if m}
    groups = [m for m in map(GROUP.match, lines) if m]
    for group in groups:
        assert len(group.group(0)) <= WIDTH, group.group(0)
    for m in side:
        if m["said"].startswith("runnable"):  # the decisive paths: each on its own line, as --verbose has it
            assert shown.get(m["build"]) == m.group(0)
    grouped = sum(int(g["count"]) for g in groups)
    assert len(shown) + grouped == len(side)  # every side path is counted once, on its line or in a group
    for group in groups:  # a group's paths are the ones --verbose says fail for that reason
        if group["said"].startswith("blocked"):
            same = [m for m in side if m["build"] not in shown and m["said"].startswith(group["said"])]
            assert len(same) >= int(group["count"]), group.group(0)


@pytest.mark.parametrize("kind", ["models", "engines", "deployments", "fingerprints", "surveys"])
def test_default_list_fits_the_width_and_verbose_has_every_cell_whole(kind: str) -> None:
    """Budget: WIDTH columns. A catalog listing has a row per entry (that is what it is for), so its length is the
    catalog's; its width was the longest cell's (a model's ten variants made 390 columns). The id a reader copies
    is never cut; a cut cell ends in "…", its text is the start of the whole cell in --verbose, and the last line
    says so."""
    default, verbose = run_cli("list", kind), run_cli("list", kind, "--verbose")
    assert default.code == verbose.code == 0, default.err
    lines, whole = default.out.splitlines(), verbose.out.splitlines()
    assert max(map(len, lines)) <= WIDTH, max(lines, key=len)
    assert len(whole) > 1 and len(lines) in (len(whole), len(whole) + 1)
    assert [line.split()[0] for line in lines[: len(whole)]] == [line.split()[0] for line in whole]
    cut = 0
    for short, full in zip(lines[1:], whole[1:], strict=False):
        for piece in re.findall(r"(\S(?:(?! {2})[^…])*)…", short):
            cut += 1
            assert piece.strip() in full, (piece, full)
    if cut:
        assert len(lines) == len(whole) + 1 and "--verbose" in lines[-1]
    else:
        assert lines == whole
