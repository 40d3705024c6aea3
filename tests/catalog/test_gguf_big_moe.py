"""GGUF variants of the big MoE families (issue 28): Unsloth's DeepSeek-R1 UD-IQ1_S, Kimi-K2 UD-Q4_K_XL, MiniMax-M2.5
Q4_K_M, DeepSeek-V3-0324 UD-Q2_K_XL, MiniMax-M2 Q4_K_M and MiniMax-M2.1 UD-Q2_K_XL, each a split file named by the
report that ran it (and MiniMax-M2.7's one-file APEX GGUF). Through the CLI: on GPUs too small to hold them, the plan is
llama-server with the routed experts of some layers in host RAM (--n-cpu-moe), the download fetches every part of the
split and the server loads its first part; without enough host RAM the plan says so instead."""

from __future__ import annotations

import pytest

from tests.support.release_history import explain

CASES = [
    (
        "deepseek-r1",
        "gguf-unsloth-ud-iq1-s",
        ("--gpu", "rtx-4090", "--gpus", "2", "--host-memory", "256"),
        "unsloth/DeepSeek-R1-GGUF",
        "DeepSeek-R1-UD-IQ1_S/DeepSeek-R1-UD-IQ1_S-*-of-00003.gguf",
        "DeepSeek-R1-UD-IQ1_S/DeepSeek-R1-UD-IQ1_S-00001-of-00003.gguf",
    ),
    (
        "kimi-k2",
        "gguf-unsloth-ud-q4-k-xl",
        ("--gpu", "rtx-pro-6000", "--gpus", "1", "--host-memory", "768"),
        "unsloth/Kimi-K2-Instruct-GGUF",
        "UD-Q4_K_XL/Kimi-K2-Instruct-UD-Q4_K_XL-*-of-00013.gguf",
        "UD-Q4_K_XL/Kimi-K2-Instruct-UD-Q4_K_XL-00001-of-00013.gguf",
    ),
    (
        "minimax-m2.5",
        "gguf-unsloth-q4-k-m",
        ("--gpu", "rtx-3090", "--gpus", "2", "--host-memory", "192"),
        "unsloth/MiniMax-M2.5-GGUF",
        "Q4_K_M/MiniMax-M2.5-Q4_K_M-*-of-00004.gguf",
        "Q4_K_M/MiniMax-M2.5-Q4_K_M-00001-of-00004.gguf",
    ),
    (
        "deepseek-v3",
        "gguf-unsloth-0324-ud-q2-k-xl",
        ("--variant", "gguf-unsloth-0324-ud-q2-k-xl", "--gpu", "rtx-4090", "--gpus", "2", "--host-memory", "512"),
        "unsloth/DeepSeek-V3-0324-GGUF",
        "UD-Q2_K_XL/DeepSeek-V3-0324-UD-Q2_K_XL-*-of-00006.gguf",
        "UD-Q2_K_XL/DeepSeek-V3-0324-UD-Q2_K_XL-00001-of-00006.gguf",
    ),
    (
        "minimax-m2",
        "gguf-unsloth-q4-k-m",
        ("--gpu", "rtx-3090", "--gpus", "2", "--host-memory", "192"),
        "unsloth/MiniMax-M2-GGUF",
        "Q4_K_M/MiniMax-M2-Q4_K_M-*-of-00003.gguf",
        "Q4_K_M/MiniMax-M2-Q4_K_M-00001-of-00003.gguf",
    ),
    (
        "minimax-m2.1",
        "gguf-unsloth-ud-q2-k-xl",
        ("--gpu", "rtx-3090", "--gpus", "2", "--host-memory", "128"),
        "unsloth/MiniMax-M2.1-GGUF",
        "UD-Q2_K_XL/MiniMax-M2.1-UD-Q2_K_XL-*-of-00002.gguf",
        "UD-Q2_K_XL/MiniMax-M2.1-UD-Q2_K_XL-00001-of-00002.gguf",
    ),
]


@pytest.mark.parametrize(("model", "variant", "target", "repo", "parts", "first"), CASES, ids=[c[0] for c in CASES])
def test_a_split_gguf_of_a_big_moe_runs_with_its_experts_in_host_ram(
    cli, tmp_path, model, variant, target, repo, parts, first
):
    plan = explain(cli, "--model", model, "--engine", "llama.cpp", *target)["plans"][0]
    assert (plan["engine"], plan["variant"]) == ("llama.cpp", variant)
    out = tmp_path / model
    result = cli("--model", model, "--engine", "llama.cpp", *target, "--out", str(out))
    assert result.code == 0, result.err
    launch = (out / "launch.sh").read_text()
    assert f"hf download '{repo}' --include '{parts}'" in launch
    assert f"/{first}'" in launch  # llama-server loads the split from its first part
    assert "'--n-cpu-moe'" in launch  # routed experts of some layers in host RAM, the rest on the GPUs


def test_without_the_host_ram_the_kimi_k2_gguf_does_not_fit_and_the_plan_says_why(cli):
    doc = explain(
        cli, "--model", "kimi-k2", "--engine", "llama.cpp", "--gpu", "rtx-4090", "--gpus", "2", "--host-memory", "256"
    )
    assert doc["plans"] == []
    (official,) = [
        r for r in doc["rejected"] if r["variant"] == "gguf-unsloth-ud-q4-k-xl" and r["build"] == "llama.cpp-0c1e570"
    ]
    assert official["gate"] == "memory"
    assert "GiB per GPU but only 24.0 GiB is usable" in doc["reasons"][official["reason_id"]]["reason"]


def test_the_minimax_m2_7_apex_gguf_is_one_file_its_card_sizes_at_100_gb(cli, tmp_path):
    """One file, no split: the download fetches only it, the server loads it, and its size is the card's 100 GB."""
    whole = explain(
        cli,
        "--model",
        "minimax-m2.7",
        "--engine",
        "llama.cpp",
        "--variant",
        "gguf-apex-i-compact",
        "--gpu",
        "rtx-pro-6000",
    )["plans"][0]
    assert whole["gpus"] == 2 and whole["offload"] is None  # 100 GB over two 96 GB cards, nothing in host RAM
    assert round(whole["memory"]["weights_gib"], 2) == round(100e9 / 2 / 2**30, 2)
    out = tmp_path / "m27"
    target = ("--gpu", "rtx-4090", "--gpus", "2", "--host-memory", "128")
    result = cli(
        "--model",
        "minimax-m2.7",
        "--engine",
        "llama.cpp",
        "--variant",
        "gguf-apex-i-compact",
        *target,
        "--out",
        str(out),
    )
    assert result.code == 0, result.err
    launch = (out / "launch.sh").read_text()
    assert "hf download 'mudler/MiniMax-M2.7-APEX-GGUF' --include 'MiniMax-M2.7-APEX-I-Compact.gguf'" in launch
    assert "'--model' '/models/MiniMax-M2.7-APEX-GGUF/MiniMax-M2.7-APEX-I-Compact.gguf'" in launch
    assert "'--n-cpu-moe'" in launch  # 2 x 24 GB: the routed experts of some layers in host RAM


def test_the_minimax_m2_1_two_bit_gguf_fits_four_rtx_3090_whole_at_its_pinned_size(cli):
    """85.92 GB (the two parts' byte sizes) over four 24 GB cards: every layer on the GPUs, nothing in host RAM."""
    plan = explain(
        cli,
        "--model",
        "minimax-m2.1",
        "--engine",
        "llama.cpp",
        "--variant",
        "gguf-unsloth-ud-q2-k-xl",
        "--gpu",
        "rtx-3090",
    )["plans"][0]
    assert (plan["gpus"], plan["offload"]) == (4, None)
    assert round(plan["memory"]["weights_gib"], 2) == round((49_950_511_392 + 35_967_481_120) / 4 / 2**30, 2)
