"""`recipegen coverage`: per family × GPU class, what the catalog knows runs there, and where it knows nothing."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from recipegen.frozen import evolve
from recipegen.report.coverage import Cell, cell_text
from tests.support.data import REPO


def cell(table: dict, family: str, gpu_class: str) -> dict:
    return next(c for c in table["cells"] if c["family"] == family and c["gpu_class"] == gpu_class)


def test_a_reported_community_path_fills_a_gap(cli, tmp_path):
    before = cli("coverage", "--format", "json").json()
    gap = cell(before, "deepseek-v3.2", "sm86")
    assert gap["official_since"] is None and gap["community"] == []
    build = yaml.safe_load((REPO / "docs" / "templates" / "community-build.yaml").read_text())
    build["verified_sm"] = ["8.6"]
    build["kernels"]["add"][0] |= {"sm": ["8.6"], "provides": "attention.sparse_mla"}
    indexer = {"name": "EXAMPLE_DSA_INDEXER", "provides": "indexer.dsa"}
    build["kernels"]["add"].append(build["kernels"]["add"][0] | indexer)
    folder = tmp_path / "engines" / "vllm"
    folder.mkdir(parents=True)
    (folder / f"{build['id']}.yaml").write_text(yaml.safe_dump(build, sort_keys=False))
    after = cli("coverage", "--format", "json", "--recipes", str(tmp_path)).json()
    assert cell(after, "deepseek-v3.2", "sm86")["community"] == [{"build": build["id"], "released": build["released"]}]
    official = cell(before, "deepseek-v3.2", "sm90")["official_since"]
    assert official is not None and cell(after, "deepseek-v3.2", "sm90")["official_since"] == official


def test_the_markdown_says_where_nothing_was_found(cli):
    table = cli("coverage").out.splitlines()
    assert table[0] == "| family | sm80 | sm86 | sm89 | sm90 | sm100 | sm120 | sm121 |"
    row = next(line for line in table if line.startswith("| deepseek-v3.2 |")).split(" | ")
    assert row[2].startswith("none found")  # sm86: no release, image or fork in the catalog runs DSA there
    assert row[4].startswith("✓ vllm-")  # sm90: an official release since some version


TODAY = dt.date.today()


def _survey(tmp_path, **entry) -> str:
    base = {
        "gpu_classes": ["sm86"],
        "families": ["deepseek-v3.2"],
        "question": "which forks run DSA on sm86",
        "found": "nothing",
        "sources": ["https://github.com/vllm-project/vllm/issues/1"],
    }
    # dated today, so it is the newest survey of any cell it covers
    survey = {"id": "t", "title": "t", "surveyed": str(TODAY), "by": "tester", "entries": [base | entry]}
    folder = tmp_path / "surveys"
    folder.mkdir(exist_ok=True)
    (folder / "t.yaml").write_text(yaml.safe_dump(survey, sort_keys=False))
    return str(tmp_path)


def test_a_cell_says_whether_a_survey_searched_it(cli, tmp_path):
    recipes = _survey(tmp_path, families=["gemma-3-1b"])
    cells = cli("coverage", "--format", "json", "--recipes", recipes).json()
    assert cell(cells, "gemma-3-1b", "sm86")["surveyed"] == str(TODAY)
    row = next(
        line for line in cli("coverage", "--recipes", recipes).out.splitlines() if line.startswith("| gemma-3-1b |")
    )
    assert row.split(" | ")[2].endswith(f"· surveyed {TODAY:%Y-%m}")
    before = cli("coverage", "--format", "json").json()
    for c in before["cells"]:  # every other cell reads as the built-in surveys leave it
        if (c["family"], c["gpu_class"]) != ("gemma-3-1b", "sm86"):
            assert cell(cells, c["family"], c["gpu_class"])["surveyed"] == c["surveyed"]


def test_a_cell_no_survey_covers_reads_not_surveyed():
    searched = Cell(
        family="m",
        gpu_class="sm86",
        official_since=None,
        official_now=False,
        community=(),
        defects_open=(),
        defects_closed=(),
        surveyed=dt.date(2026, 11, 30),
    )
    assert cell_text(searched) == "none found · surveyed 2026-11"  # searched, nothing found: an answer
    assert cell_text(evolve(searched, surveyed=None)) == "none found · not surveyed"  # a to-do


def test_a_platform_question_covers_every_family_on_its_class(cli, tmp_path):
    cells = cli("coverage", "--format", "json", "--recipes", _survey(tmp_path, families=["*"])).json()
    on_sm86 = {c["surveyed"] for c in cells["cells"] if c["gpu_class"] == "sm86"}
    assert on_sm86 == {str(TODAY)}


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        ({"families": ["no-such-model"]}, "entries[0].families[0]", "unknown model 'no-such-model'"),
        ({"catalog": ["vllm-9.9.9"]}, "entries[0].catalog[0]", "no build, defect, fingerprint or deployment"),
        ({"gpu_classes": ["sm75"]}, "entries[0].gpu_classes[0]", "sm80"),
        ({"sources": ["http://example.com/x"]}, "entries[0].sources[0]", "https URL"),
        ({"sources": []}, "entries[0].sources", "at least 1"),
    ],
)
def test_validate_names_the_survey_field_that_is_wrong(cli, tmp_path, entry, field, message):
    result = cli("validate", _survey(tmp_path, **entry))
    assert result.code != 0 and "Traceback" not in result.err
    line = next(line for line in result.err.splitlines() if "surveys/t.yaml" in line)
    assert field in line and message in line
