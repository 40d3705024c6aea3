"""explain's default fits a screen: verdict, plan, memory and speed, ≤ 5 notes, the closest rejections."""

from __future__ import annotations

import itertools
import re

from tests.support.cli import run_cli

REQUEST = ("explain", "--gpu", "sm80", "--gpus", "8", "--model", "glm-5.2")
MARKED = ("explain", "--gpu", "rtx-pro-6000", "--gpus", "8", "--model", "glm-5.2")  # closest rejections: ✗ and ?


def test_default_is_one_screen_and_verbose_has_everything() -> None:
    short, full = run_cli(*REQUEST), run_cli(*REQUEST, "--verbose")
    assert short.code == full.code == 0
    lines = short.out.splitlines()
    assert len(lines) <= 40 < len(full.out.splitlines())
    assert lines[lines.index("") + 1].startswith("VERDICT: runnable")
    notes = [line for line in lines if line.strip().startswith("note:")]
    assert 1 <= len(notes) <= 5
    assert any("more note(s) (--verbose)" in line for line in lines)
    closest = [line for line in lines[lines.index(next(x for x in lines if x.startswith("Closest"))) + 1 :] if line]
    assert all(line.lstrip()[0] in "✗?" for line in closest[:3])
    full_notes = [line for line in full.out.splitlines() if line.strip().startswith("note:")]
    assert len(full_notes) > len(notes)
    for said, whole in zip(notes, full_notes, strict=False):  # the same notes, most important first, maybe elided
        assert whole.startswith(said.removesuffix("… (--verbose)")), (said, whole)


def test_concurrency_a_recipe_fixed_is_not_labelled_user() -> None:
    out = run_cli(*REQUEST).out
    assert "decided by: recipe" in out and "(user)" not in out and "decided by: user" not in out
    given = run_cli(*REQUEST, "--concurrency", "2").out
    assert "decided by: user" in given


def test_history_says_a_run_of_identical_releases_once() -> None:
    out = run_cli("history", "--gpu", "sm80", "--gpus", "8", "--model", "glm-5.2").out
    rows = [line.split(None, 2) for line in out.splitlines() if line[:4] == "  20"]
    said = [row[2].split("  [to ")[0].split(") ", 1)[-1] if "…" in row[2] else row[2] for row in rows]
    assert all(a != b for a, b in itertools.pairwise(said)), "two rows in a row say the same"
    assert any("…" in row[2] for row in rows) and len(out.splitlines()) < 60


def test_generate_and_explain_mark_a_path_alike(tmp_path) -> None:
    def marks(text: str) -> dict[tuple[str, str], str]:
        found = re.findall(r"^\s+([✗?]) .*?(\S+) · (\S+) \[", text, re.M)
        return {(build, variant): mark for mark, build, variant in found}

    explained = marks(run_cli(*MARKED).out)
    generated = marks(run_cli(*MARKED[1:], "--out", str(tmp_path / "o")).out)
    shared = explained.keys() & generated.keys()
    assert shared and "?" in explained.values()
    assert {k: explained[k] for k in shared} == {k: generated[k] for k in shared}


def test_matrix_says_why_for_every_half_mark_and_question_mark() -> None:
    args = ("matrix", "--model", "glm-5.2", "--target", "8xa100-80gb", "--target", "1xrtx-4090")
    md, verbose = run_cli(*args).out, run_cli(*args, "--verbose").out
    grid = next(line for line in md.splitlines() if line.startswith("| glm-5.2 |"))
    marks = grid.count("◐") + grid.count("?")
    assert marks and len([line for line in verbose.splitlines() if re.match(r"- [◐?] .* · glm-5.2 on ", line)]) == marks
    # by default each reason once, on a line naming the model and the columns (or every GPU) it holds for
    marked = [cell.split()[0] for cell in grid.split(" | ")[1:]]
    columns = ("8×a100-80gb", "1×rtx-4090")
    for column, mark in zip(columns, marked, strict=True):
        said = [line for line in md.splitlines() if re.match(rf"- glm-5.2 on (.*\b{column}\b.*|every GPU): ", line)]
        assert bool(said) == (mark in ("◐", "?")), (column, mark, md)
    page = run_cli("matrix", "--model", "glm-5.2", "--format", "html").out
    assert "<title>recipegen matrix" in page and re.search(r"Generated \d{4}-\d\d-\d\d", page)
    assert (
        "<details>" in page
        and 'id="filter"' in page
        and "@media print" in page
        and "http" not in page.split("<table")[0]
    )
