"""`recipegen matrix` answers per model × GPU with the smallest layout that runs, as explain without --gpus
picks it; --gpus pins the count, --host-memory feeds offload plans, and each ◐ names its caveat."""

from __future__ import annotations

import pytest


def cells_of(cli, *args: str) -> dict[tuple[str, str], dict]:
    result = cli("matrix", "--format", "json", *args)
    assert result.code == 0, result.err
    return {(c["model"], c["target"]): c for c in result.json()["cells"]}


@pytest.fixture(scope="module")
def grid():
    from tests.support.cli import run_cli

    pairs = ("qwen3-14b", "gpt-oss-120b", "glm-5.2", "minimax-m2.1", "llama-3.1-405b", "deepseek-v3")
    return cells_of(run_cli, *[a for m in pairs for a in ("--model", m)])


def test_small_models_run_on_one_gpu_not_eight(grid):
    assert grid[("qwen3-14b", "h200")]["symbol"] in ("✓", "◐")
    assert grid[("qwen3-14b", "h200")]["layout"] == "1×"
    assert grid[("gpt-oss-120b", "h100-sxm")]["symbol"] == "✓"
    assert grid[("gpt-oss-120b", "h100-sxm")]["layout"] == "1×"
    # 120B of MXFP4 does not fit one 24 GB card: the cell names the larger layout it needs
    assert grid[("gpt-oss-120b", "rtx-4090")]["layout"] not in ("1×", None)


@pytest.mark.parametrize(
    ("model", "gpu"),
    [("qwen3-14b", "h200"), ("gpt-oss-120b", "rtx-4090"), ("glm-5.2", "h200"), ("llama-3.1-405b", "a100-80gb")],
)
def test_each_cell_is_the_layout_explain_picks_without_gpus(cli, grid, model, gpu):
    result = cli("explain", "--gpu", gpu, "--model", model, "--format", "json")
    assert result.code == 0, result.err
    plans = result.json()["plans"]
    cell = grid[(model, gpu)]
    assert (cell["symbol"] in ("✓", "◐")) == bool(plans)
    if plans:
        assert cell["layout"] == f"{plans[0]['gpus'] * plans[0]['nodes']}×"


def test_gpus_pins_the_count_as_explain_does(cli):
    pinned = cells_of(cli, "--model", "qwen2.5-7b", "--gpu", "a100-80gb", "--gpu", "h200", "--gpus", "2")
    assert set(pinned) == {("qwen2.5-7b", "2×a100-80gb"), ("qwen2.5-7b", "2×h200")}
    assert all(c["layout"] == "2×" for c in pinned.values())
    eight = cells_of(cli, "--model", "qwen2.5-7b", "--gpu", "a100-80gb", "--gpus", "8")[("qwen2.5-7b", "8×a100-80gb")]
    explain = cli("explain", "--gpu", "a100-80gb", "--gpus", "8", "--model", "qwen2.5-7b", "--format", "json").json()
    assert (eight["symbol"] == "✗") == (explain["verdict_detail"] == "blocked")


def test_target_is_a_box_to_fit_into(cli):
    box = cells_of(cli, "--model", "qwen2.5-7b", "--target", "8xa100-80gb")[("qwen2.5-7b", "8×a100-80gb")]
    assert box["symbol"] in ("✓", "◐") and box["layout"] is not None


def test_offload_and_fallback_are_told_apart(grid):
    # DeepSeek-V3-0324's 248 GB GGUF on eight 24 GB cards puts experts in host RAM (MiniMax-M2.1's 86 GB one fits four)
    offload = grid[("deepseek-v3", "rtx-4090")]
    assert offload["symbol"] == "◐" and offload["caveat"].startswith("offload")
    assert "tok/s" in offload["reasons"][0] and "host RAM" in offload["reasons"][0]
    fallback = grid[("minimax-m2.1", "a100-80gb")]
    assert fallback["symbol"] == "◐" and fallback["caveat"].startswith("fallback kernel")
    assert "Marlin" in fallback["reasons"][0]


def test_host_memory_decides_offload_plans(cli):
    args = ("--model", "deepseek-v3", "--gpu", "rtx-4090")
    small = cells_of(cli, *args, "--host-memory", "16")[("deepseek-v3", "rtx-4090")]
    assert small["symbol"] == "✗" and small["gate"] == "memory"
    large = cells_of(cli, *args, "--host-memory", "512")[("deepseek-v3", "rtx-4090")]
    assert large["symbol"] == "◐" and large["caveat"].startswith("offload")
    assert "512 GiB RAM" in large["reasons"][0]


def test_verbose_markdown_gives_every_half_and_unknown_cell_its_reasons_whole(cli):
    args = ("--model", "glm-5.2", "--model", "minimax-m2.1", "--model", "kimi-k3")
    cells = cells_of(cli, *args)
    md = cli("matrix", "--verbose", *args).out
    table, _, why = md.partition("Why each ◐ and ?:")
    explained = [c for c in cells.values() if c["symbol"] in ("◐", "?")]
    assert explained and not any(c["symbol"] == "✓" for c in explained)
    for c in explained:
        short = " ".join(p for p in (c["symbol"], c["layout"], c["caveat"] or c["gate"]) if p)
        assert f"| {short} |" in table or f" {short} |" in table
        line = f"- {short} · {c['model']} on {c['target']}: {'; '.join(c['reasons'])}"
        assert line in why


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--gpus", "0"), "out of range"),
        (("--target", "5000xh100"), "from 1 to 1024"),
        (("--host-memory", "0"), "--host-memory"),
        (("--gpu", "no-such-gpu"), "no-such-gpu"),
    ],
)
def test_bad_input_is_one_clear_line(cli, args, says):
    result = cli("matrix", "--model", "qwen3-14b", *args)
    assert result.code != 0
    assert says in result.err and "Traceback" not in result.err
