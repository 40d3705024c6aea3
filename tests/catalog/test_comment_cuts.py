"""A plain YAML value followed by ` #` loses the rest of its line to a comment (`version: PR #43477 image` reads as
`PR`): `recipegen validate` names the file, line and field instead of loading the cut value."""

from __future__ import annotations

import yaml


def _survey(tmp_path, found: str) -> str:
    folder = tmp_path / "surveys"
    folder.mkdir()
    entry = (
        "- gpu_classes: [sm86]\n"
        "  families: [gemma-3-1b]\n"
        "  question: which builds run it\n"
        f"  found: {found}\n"
        "  sources: [https://github.com/vllm-project/vllm/issues/1]\n"
    )
    text = "id: t\ntitle: t\nsurveyed: '2026-12-01'\nby: tester\nentries:\n" + entry
    (folder / "t.yaml").write_text(text)
    return str(tmp_path)


def test_a_value_cut_by_a_one_space_comment_is_refused_at_its_line(cli, tmp_path):
    result = cli("validate", _survey(tmp_path, "merged as PR #19460 on 2026-02-12"))
    assert result.code != 0 and "Traceback" not in result.err
    (line,) = [line for line in result.err.splitlines() if "surveys/t.yaml" in line]
    assert ":9: entries.0.found:" in line and "stops at 'merged as PR'" in line and "quote the value" in line


def test_a_quoted_value_and_a_two_space_comment_are_fine(cli, tmp_path):
    quoted = _survey(tmp_path, "'merged as PR #19460 on 2026-02-12'")
    assert cli("validate", quoted).code == 0
    assert yaml.safe_load((tmp_path / "surveys" / "t.yaml").read_text())["entries"][0]["found"].endswith("2026-02-12")
    (tmp_path / "surveys" / "t.yaml").unlink()
    (tmp_path / "surveys").rmdir()
    assert cli("validate", _survey(tmp_path, "merged  # a comment two spaces after the value")).code == 0
