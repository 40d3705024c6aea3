"""Lint counts on host offload only when the command sets it up (issue 25)."""

from __future__ import annotations

import pytest

QWEN_ON_4090 = ("--gpu", "rtx-4090", "--gpus", "1", "--", "vllm", "serve", "Qwen/Qwen3-32B")


def test_a_command_that_fits_only_with_offload_it_does_not_set_up_is_an_error(cli):
    result = cli("lint", "--format", "json", *QWEN_ON_4090)
    assert result.code == 1, result.out
    memory = [f for f in result.json()["findings"] if f["gate"] == "memory"]
    assert len(memory) == 1 and memory[0]["severity"] == "error", memory
    assert "no host offload" in memory[0]["what"]
    assert memory[0]["fix"].startswith("--cpu-offload-gb ")
    text = cli("lint", *QWEN_ON_4090)
    assert "✗ error  --cpu-offload-gb: the weights do not fit" in text.out


@pytest.mark.parametrize("gb", ["50", "56"])
def test_the_same_command_with_the_offload_flag_passes_memory(cli, gb):
    result = cli("lint", "--format", "json", *QWEN_ON_4090, "--cpu-offload-gb", gb)
    assert not [f for f in result.json()["findings"] if f["gate"] == "memory"]
