"""Fitted step-model constants — written by `python scripts/calibrate.py --write`; do not edit by hand.

tests/plan/test_calibration.py refits them from recipes/measurements/ and fails when they drift.
"""

from __future__ import annotations

from .fit import PRIOR_ENGINE, PRIOR_SHARED, split

DEFAULT_ENGINE = "vllm"
ROWS = 86
COEFFICIENTS: dict[str, float] = {
    "vllm:mem": 1.03005,
    "vllm:step": 0.00159733,
    "vllm:layer": 3.61828e-05,
    "vllm:moe": 8.05944e-05,
    "vllm:mla": 0.000107706,
    "vllm:dequant": 1.52116e-05,
    "sglang:mem": 1.23964,
    "sglang:step": 0.000920535,
    "sglang:layer": 2.60361e-05,
    "sglang:moe": 4.37314e-05,
    "sglang:mla": 0.000131826,
    "sglang:dequant": 2.76068e-05,
    "llama.cpp:mem": 1.11261,
    "llama.cpp:step": 0.000456292,
    "llama.cpp:layer": 2.66878e-05,
    "llama.cpp:moe": 0,
    "llama.cpp:mla": 0.000256105,
    "llama.cpp:dequant": 1.10076e-05,
    "ktransformers:mem": 1.37022,
    "ktransformers:step": 0.00109185,
    "ktransformers:layer": 1.35017e-05,
    "ktransformers:moe": 3.43241e-05,
    "ktransformers:mla": 0.000370175,
    "ktransformers:dequant": 6.26063e-06,
    "allreduce_nvlink": 1.69807e-05,
    "allreduce_pcie": 2.5e-05,
    "allreduce_network": 7.07029e-05,
    "hop": 7.25902e-05,
    "host": 1.74535,
    "mla_triton": 0.000362864,
}
# measured ÷ estimated of each class's rows, each predicted by a fit without its source (the central 80 %)
BANDS: dict[str, tuple[float, float]] = {
    "single-GPU dense · sglang": (0.75, 1.12),
    "layer split": (0.9, 1.28),
    "single-GPU dense · llama.cpp": (0.86, 1.24),
    "tensor-parallel MoE": (0.48, 1.24),
    "CPU offload": (0.46, 1.14),
    "single-GPU dense · vllm": (0.87, 1.21),
}
POOLED_BAND: tuple[float, float] = (0.67, 1.27)


def constants(engine: str) -> tuple[dict[str, float], dict[str, float]]:
    """(engine terms, shared terms) for an engine id; an engine never measured takes DEFAULT_ENGINE's."""
    if not COEFFICIENTS:
        return dict(PRIOR_ENGINE), dict(PRIOR_SHARED)
    return split(COEFFICIENTS, engine)
