"""The bounds on every number recipegen takes from outside: the command line's options, the numbers a
model's files state (config.json, safetensors and GGUF headers, an index's total_size), and the ones read
back from commands, compose files and logs (TP, PP, nodes).

Wide enough for any real fleet or model, narrow enough that the arithmetic on them stays exact in
floats and that no loop over one runs long. One table, so a value read from a file is refused with the
same range the option or the schema states.
"""

from __future__ import annotations

# Inclusive bounds of the command line's counts (cli/values.py); TP x PP x DP per node and the nodes a
# command or log states are held to the same ranges.
INT_BOUNDS: dict[str, tuple[int, int]] = {
    "--gpus": (1, 1024),
    "--nodes": (1, 1024),
    "--context": (1, 100_000_000),
    "--concurrency": (1, 1_000_000),
    "--dcp": (1, 1024),
    "--speculative-tokens": (1, 1024),
}
MAX_GPUS = INT_BOUNDS["--gpus"][1]
MAX_NODES = INT_BOUNDS["--nodes"][1]

# A model's dimensions (catalog/schema/model.py states them as Limits; checkpoint/ checks config.json
# against them before any arithmetic).
MAX_LAYERS = 4096  # the deepest open model has ~130
MAX_WIDTH = 1 << 20  # hidden size, head and expert widths, latent ranks
MAX_HEADS = 1 << 16  # attention heads, KV heads, experts, top-k
MAX_VOCAB = 1 << 24
MAX_CONTEXT = INT_BOUNDS["--context"][1]  # tokens: context, sliding windows, index top-k
MAX_PARAMS_B = 1_000_000.0  # billions of parameters
MAX_BYTES = 10**16  # a checkpoint's bytes (10 PB): index total_size, header offsets, file sizes

# Text read from outside, cut before any pattern runs over it.
MAX_LOG_LINE = 4096  # characters of one log line that diagnose matches against


def in_range(value: object, low: int, high: int) -> bool:
    """An int (not a bool) within [low, high]."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def shown(value: object) -> str:
    """A number as an error message shows it: a huge one by its length, never all its digits."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a {len(str(abs(value))) if value.bit_length() < 14000 else 'many'}-digit number"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)[:40]


def range_error(what: str, value: object, low: int, high: int) -> str:
    """The message the CLI gives an out-of-range count, for a number read from a file or command."""
    return f"{what} {shown(value)} is out of range; use {low} to {high:,}"
