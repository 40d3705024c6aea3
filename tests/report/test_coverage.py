"""`recipegen coverage`: per family × GPU class, what the catalog knows runs there, and where it knows nothing."""

from __future__ import annotations

import yaml

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
    assert row[2] == "none found"  # sm86: no release, image or fork in the catalog runs DSA there
    assert row[4].startswith("✓ vllm-")  # sm90: an official release since some version
