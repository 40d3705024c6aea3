"""Fitted step-model constants — written by `python scripts/calibrate.py --write`; do not edit by hand.

tests/plan/test_calibration.py refits them from recipes/measurements/ and fails when they drift.
"""

from __future__ import annotations

from .fit import PRIOR_ENGINE, PRIOR_SHARED, split

DEFAULT_ENGINE = "vllm"
ROWS = 85
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
    "llama.cpp:mem": 1.12257,
    "llama.cpp:step": 0.000550765,
    "llama.cpp:layer": 2.11571e-05,
    "llama.cpp:moe": 0,
    "llama.cpp:mla": 0.000257704,
    "llama.cpp:dequant": 9.01655e-06,
    "ktransformers:mem": 1.36904,
    "ktransformers:step": 0.00109029,
    "ktransformers:layer": 1.34422e-05,
    "ktransformers:moe": 3.40938e-05,
    "ktransformers:mla": 0.000364218,
    "ktransformers:dequant": 6.23918e-06,
    "allreduce_nvlink": 1.69807e-05,
    "allreduce_pcie": 2.5e-05,
    "allreduce_network": 7.07029e-05,
    "hop": 7.6703e-05,
    "host": 1.76441,
    "mla_triton": 0.000362864,
}
# measured ÷ estimated of each class's rows, each predicted by a fit without its source (the central 80 %)
BANDS: dict[str, tuple[float, float]] = {
    "single-GPU dense · sglang": (0.75, 1.12),
    "layer split": (0.89, 1.26),
    "single-GPU dense · llama.cpp": (0.85, 1.23),
    "tensor-parallel MoE": (0.48, 1.24),
    "CPU offload": (0.46, 1.15),
    "single-GPU dense · vllm": (0.87, 1.21),
}
POOLED_BAND: tuple[float, float] = (0.67, 1.26)


def constants(engine: str) -> tuple[dict[str, float], dict[str, float]]:
    """(engine terms, shared terms) for an engine id; an engine never measured takes DEFAULT_ENGINE's."""
    if not COEFFICIENTS:
        return dict(PRIOR_ENGINE), dict(PRIOR_SHARED)
    return split(COEFFICIENTS, engine)
