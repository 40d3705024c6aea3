"""The configuration-defects survey of 2026-12-07 (issue 28): each defect it added is in the coverage table's cells of
the families and GPU classes it was searched for, open where no fixing build is known and fixed where one is, and the
cells it covered read surveyed that day."""

from __future__ import annotations


def cells(cli):
    result = cli("coverage", "--format", "json")
    assert result.code == 0, result.err
    return {(c["family"], c["gpu_class"]): c for c in result.json()["cells"]}


def test_the_new_defects_show_in_their_cells_open_or_fixed_as_their_fixing_build_says(cli):
    table = cells(cli)
    dsa = table[("deepseek-v3.2", "sm90")]
    assert "vllm-0.15-dsa-mtp-multi-token-indexer-crash" in dsa["defects_fixed"]
    offload = table[("gpt-oss-120b", "sm120")]
    assert "llama.cpp-b7186-gptoss-expert-offload-long-prompt" in offload["defects_closed"] + offload["defects_open"]
    assert "llama.cpp-b7186-gptoss-expert-offload-long-prompt" not in offload["defects_fixed"]
    dense = table[("llama-3.1-70b", "sm89")]
    assert "vllm-0.25-mrv2-cpu-offload-noop" in dense["defects_fixed"]
    tp = table[("gpt-oss-20b", "sm100")]
    assert "vllm-0.14-gptoss-tp2-blackwell-gibberish" in tp["defects_closed"]
    assert "vllm-0.14-gptoss-tp2-blackwell-gibberish" not in tp["defects_fixed"]  # no fixing release is named


def test_the_cells_the_survey_covered_read_surveyed_in_december_2026(cli):
    table = cells(cli)
    for key in (("gpt-oss-20b", "sm120"), ("deepseek-v3.2", "sm90"), ("qwen3-next-80b-a3b-instruct", "sm86")):
        assert (table[key]["surveyed"] or "")[:7] == "2026-12", key
