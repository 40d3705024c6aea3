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
    build["reported_for"] = ["deepseek-v3.2"]
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


def _dsa_build_for(tmp_path, reported_for: list[str] | None) -> str:
    """The template's build with DSA kernels on sm86, reported for the given models (None: the key left out)."""
    build = yaml.safe_load((REPO / "docs" / "templates" / "community-build.yaml").read_text())
    build.pop("reported_for")
    if reported_for is not None:
        build["reported_for"] = reported_for
    build["verified_sm"] = ["8.6"]
    build["kernels"]["add"][0] |= {"sm": ["8.6"], "provides": "attention.sparse_mla"}
    indexer = {"name": "EXAMPLE_DSA_INDEXER", "provides": "indexer.dsa"}
    build["kernels"]["add"].append(build["kernels"]["add"][0] | indexer)
    folder = tmp_path / "engines" / "vllm"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{build['id']}.yaml").write_text(yaml.safe_dump(build, sort_keys=False))
    return str(tmp_path)


@pytest.mark.parametrize("reported_for", [None, ["glm-5.2"]])
def test_a_side_path_reported_for_other_models_is_not_counted(cli, tmp_path, reported_for):
    recipes = _dsa_build_for(tmp_path, reported_for)
    gap = cell(cli("coverage", "--format", "json", "--recipes", recipes).json(), "deepseek-v3.2", "sm86")
    assert gap["community"] == [] and gap["community_not_reported"] == ["vllm-example-sm120-image"]
    row = next(line for line in cli("coverage", "--recipes", recipes).out.splitlines() if "| deepseek-v3.2 |" in line)
    assert row.split(" | ")[2].startswith("none found")
    # a plan may still use it, and says whose reports it rests on
    args = ("--gpu", "rtx-a6000", "--gpus", "8", "--model", "deepseek-v3.2", "--recipes", recipes, "--format", "json")
    plans = [p for p in cli("explain", *args).json()["plans"] if p["build"] == "vllm-example-sm120-image"]
    assert plans, "the build passes the gates, so a plan uses it"
    ran = ", ".join(reported_for) if reported_for else "no model it names"
    said = f"not reported for this model: vllm-example-sm120-image (community) was reported serving {ran}"
    assert any(n.startswith(said) for n in plans[0]["notes"])


def test_the_built_in_side_paths_count_only_for_the_models_their_reports_ran(cli):
    reported = {
        row["build"]: row["reported_for"] for row in cli("list", "engines", "--format", "json").json() if row["build"]
    }
    table = cli("coverage", "--format", "json").json()
    for c in table["cells"]:
        for side in c["community"]:
            ran = reported[side["build"]]
            assert c["family"] in ran or "*" in ran, (c["family"], c["gpu_class"], side["build"])
    # the case that misled: GLM-5.x forks for SM80 pass DeepSeek R1's dense-MLA gates, but nobody ran R1 on them
    r1 = cell(table, "deepseek-r1", "sm80")
    assert r1["community"] == [] and "vllm-glm52-sm80-pr47629" in r1["community_not_reported"]
    assert "vllm-glm52-sm80-pr47629" in [side["build"] for side in cell(table, "glm-5.2", "sm80")["community"]]


def test_reported_for_is_not_inherited_through_extends(cli, tmp_path):
    recipes = _dsa_build_for(tmp_path, ["deepseek-v3.2"])
    child = {
        "id": "vllm-example-child",
        "extends": "vllm-example-sm120-image",
        "version": "image example/vllm:child",
        "released": "2026-12-01",
        "images": {"x86_64": "example/vllm:child"},
        "sources": [{"url": "https://github.com/example-org/vllm/pull/2", "date": "2026-12-01", "note": "x"}],
    }
    (tmp_path / "engines" / "vllm" / "vllm-example-child.yaml").write_text(yaml.safe_dump(child, sort_keys=False))
    c = cell(cli("coverage", "--format", "json", "--recipes", recipes).json(), "deepseek-v3.2", "sm86")
    assert [side["build"] for side in c["community"]] == ["vllm-example-sm120-image"]
    assert c["community_not_reported"] == ["vllm-example-child"]


def test_validate_names_a_reported_model_the_catalog_lacks(cli, tmp_path):
    recipes = _dsa_build_for(tmp_path, ["deepseek-v3.2", "no-such-model"])
    result = cli("validate", recipes)
    assert result.code != 0 and "Traceback" not in result.err
    line = next(line for line in result.err.splitlines() if "vllm-example-sm120-image.yaml" in line)
    assert "reported_for[1]" in line and "unknown model 'no-such-model'" in line


def test_a_defect_reported_on_b300_alone_shows_in_the_sm100_column(cli):
    """sm100 is judged on B200 (10.0): the Kimi-K3 NVFP4 defect scoped to 10.3 is marked on the cell, not lost."""
    table = cli("coverage", "--format", "json").json()
    kimi = cell(table, "kimi-k3", "sm100")
    b300 = "vllm-0.27-kimi-k3-nvfp4-b300-degenerate-reasoning"
    assert b300 not in kimi["defects_open"] + kimi["defects_closed"]  # B200 itself does not hit it
    # on 0.27.1 only, with no fixing build named: reported on an older release
    assert {"defect": b300, "hardware": ["b300", "gb300"], "state": "older"} in kimi["defects_elsewhere"]
    assert cell(table, "kimi-k3", "sm90")["defects_elsewhere"] == []  # another class's column is not marked
    text = cli("coverage").out.splitlines()
    row = next(line for line in text if line.startswith("| kimi-k3 |")).split(" | ")
    assert "⚠ B300/GB300 only: 0 open, 0 fixed, 1 older ¹" in row[5]  # the sm100 column
    note = next(line for line in text if line.startswith("¹ sm100 is judged on B200"))
    assert f"{b300} (B300/GB300: kimi-k3)" in note


def test_a_defect_on_an_aarch64_host_only_marks_the_hopper_column(cli, tmp_path):
    """GH200 is the other part of sm90 (a Grace host): a defect scoped to aarch64 there is marked, and the state
    follows the build: a side image is not a newest release, so the defect reads as older."""
    build = yaml.safe_load((REPO / "docs" / "templates" / "community-build.yaml").read_text())
    build |= {"id": "vllm-example-gh200-image", "extends": "vllm-0.31.0", "reported_for": ["qwen3-8b"]}
    build["images"] = {"x86_64": "example/vllm:gh200", "aarch64": "example/vllm:gh200"}
    build["verified_sm"] = ["9.0"]
    del build["kernels"]
    defect = yaml.safe_load((REPO / "docs" / "templates" / "defect.yaml").read_text())["defects"]["add"][0]
    defect |= {"id": "vllm-example-gh200-crash", "sm": ["9.0"], "host_arch": ["aarch64"], "models": ["qwen3-8b"]}
    del defect["architectures"]
    build["defects"] = {"add": [defect]}
    folder = tmp_path / "engines" / "vllm"
    folder.mkdir(parents=True)
    (folder / "vllm-example-gh200-image.yaml").write_text(yaml.safe_dump(build, sort_keys=False))
    table = cli("coverage", "--format", "json", "--recipes", str(tmp_path)).json()
    hopper = cell(table, "qwen3-8b", "sm90")
    assert hopper["defects_elsewhere"] == [
        {"defect": "vllm-example-gh200-crash", "hardware": ["gh200"], "state": "older"}
    ]
    assert "vllm-example-gh200-crash" not in hopper["defects_closed"]
    assert cell(table, "qwen3-8b", "sm100")["defects_elsewhere"] == []  # 9.0 only
    row = next(line for line in cli("coverage", "--recipes", str(tmp_path)).out.splitlines() if "| qwen3-8b |" in line)
    assert "⚠ GH200 only: 0 open, 0 fixed, 1 older ¹" in row.split(" | ")[4]
