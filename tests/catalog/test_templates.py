"""The field-report templates (docs/templates/) validate as they are and reach a plan: a community build
copied into a recipe folder plans on its GPU, and a defect pasted into it is named on that plan."""

from __future__ import annotations

import datetime as dt

import yaml

from tests.support.data import REPO

TEMPLATES = REPO / "docs" / "templates"


def test_a_community_build_and_its_defect_from_the_templates(cli, tmp_path):
    build = yaml.safe_load((TEMPLATES / "community-build.yaml").read_text(encoding="utf-8"))
    defect = yaml.safe_load((TEMPLATES / "defect.yaml").read_text(encoding="utf-8"))
    folder = tmp_path / "recipes" / "engines" / "vllm"
    folder.mkdir(parents=True)
    (folder / f"{build['id']}.yaml").write_text(yaml.safe_dump(build | defect, sort_keys=False), encoding="utf-8")
    recipes = str(tmp_path / "recipes")
    assert cli("validate", recipes).code == 0
    args = ("--gpu", "rtx-pro-6000", "--model", "qwen3-235b", "--build", build["id"], "--recipes", recipes)
    plan = cli("explain", "--format", "json", *args).json()["plans"][0]
    assert plan["build"] == build["id"] and plan["provenance"] == "community"
    assert [d["id"] for d in plan["build_defects"]] == [defect["defects"]["add"][0]["id"]]
    entry = defect["defects"]["add"][0]
    assert entry["workaround"] in cli("explain", "--verbose", *args).out
    applied = [f for f in plan["flags"] if f["flag"] == entry["workaround_args"][0]["flag"]]
    assert applied and applied[0]["reason"].startswith(f"works around known defect {entry['id']}")
    assert entry["workaround_args"][0]["flag"] in plan["argv"]


def test_a_survey_from_the_template_marks_its_cells_surveyed(cli, tmp_path):
    survey = yaml.safe_load((TEMPLATES / "survey.yaml").read_text(encoding="utf-8"))
    survey["surveyed"] = str(dt.date.today())  # the newest survey of its cells: a cell shows its newest
    folder = tmp_path / "recipes" / "surveys"
    folder.mkdir(parents=True)
    (folder / f"{survey['id']}.yaml").write_text(yaml.safe_dump(survey, sort_keys=False), encoding="utf-8")
    recipes = str(tmp_path / "recipes")
    assert cli("validate", recipes).code == 0
    before = {(c["family"], c["gpu_class"]): c["surveyed"] for c in cli("coverage", "--format", "json").json()["cells"]}
    cells = cli("coverage", "--format", "json", "--recipes", recipes).json()["cells"]
    covered = {("deepseek-v3.2", "sm80"), ("deepseek-v3.2", "sm86")}
    for c in cells:
        key = (c["family"], c["gpu_class"])
        assert c["surveyed"] == (survey["surveyed"] if key in covered else before[key]), key
