"""Fitting the step model's few constants to published measurements, and cross-validating the fit.

Each measurement gives one equation: the measured step time (1 ÷ tokens/s) = Σ coefficient × term + the
fixed seconds. The fit minimises the squared *relative* error of the step time, with a weak pull of each
coefficient toward a prior (its assumed value before any data) so that an engine or link seen in few rows
keeps a sane value; coefficients stay non-negative (coordinate descent on the normal equations).
Leave-one-source-out: every source's rows are predicted by a fit that never saw that source.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..frozen import frozen
from .steptime import ENGINE_TERMS, SHARED_TERMS

ENGINES = ("vllm", "sglang", "llama.cpp", "ktransformers")
DEFAULT_ENGINE = "vllm"  # an engine without measurements takes vLLM's constants
# before any data: 70 % of the achievable bandwidth, 1 ms per step, 10 µs per layer, 20 µs more per MoE layer,
# 20 µs more per MLA layer, 5 µs more per weight-only layer; all-reduce latencies of NCCL-class collectives;
# host RAM at 60 %; the Triton MLA path assumed no dearer than the fused kernels until the data say otherwise
PRIOR_ENGINE = {
    "mem": 1 / 0.7,
    "step": 1e-3,
    "layer": 10e-6,
    "moe": 20e-6,
    "mla": 20e-6,
    "dequant": 5e-6,
}
PRIOR_SHARED = {
    "allreduce_nvlink": 10e-6,
    "allreduce_pcie": 25e-6,
    "allreduce_network": 50e-6,
    "hop": 50e-6,
    "host": 1 / 0.6,
    "mla_triton": 20e-6,
}
# how far a coefficient may stray from its prior for the cost of one 30 % miss: the pull is weak where the
# published runs disagree most with the assumption (per-layer MoE/MLA kernel costs), firm for bandwidth
PRIOR_WEIGHT = 0.3
PRIOR_SCALE = {"mem": 0.5, "step": 2e-3, "layer": 50e-6, "moe": 100e-6, "mla": 500e-6, "dequant": 30e-6}
PRIOR_SCALE_SHARED = {
    "allreduce_nvlink": 10e-6,
    "allreduce_pcie": 25e-6,
    "allreduce_network": 100e-6,
    "hop": 200e-6,
    "host": 1.0,
    "mla_triton": 500e-6,
}


@frozen
class Row:
    """One measurement as the fit sees it."""

    engine: str
    x: dict[str, float]
    fixed_s: float
    measured_s: float  # seconds per step
    source: str


def names() -> list[str]:
    return [f"{e}:{t}" for e in ENGINES for t in ENGINE_TERMS] + list(SHARED_TERMS)


def _engine(e: str) -> str:
    return e if e in ENGINES else DEFAULT_ENGINE


def _vector(row: Row, index: dict[str, int]) -> list[tuple[int, float]]:
    e = _engine(row.engine)
    out = [(index[f"{e}:{t}"], row.x[t]) for t in ENGINE_TERMS if row.x[t]]
    out += [(index[t], row.x[t]) for t in SHARED_TERMS if row.x[t]]
    return out


def _prior(name: str) -> float:
    return PRIOR_SHARED[name] if name in PRIOR_SHARED else PRIOR_ENGINE[name.split(":", 1)[1]]


def _scale(name: str) -> float:
    return PRIOR_SCALE_SHARED[name] if name in PRIOR_SCALE_SHARED else PRIOR_SCALE[name.split(":", 1)[1]]


def fit(rows: Sequence[Row]) -> dict[str, float]:
    """Coefficients by name ("vllm:step", "allreduce_pcie", …)."""
    keys = names()
    index = {k: i for i, k in enumerate(keys)}
    n = len(keys)
    gram = [[0.0] * n for _ in range(n)]
    rhs = [0.0] * n
    for row in rows:  # row i: Σ_j (x_ij / y_i) θ_j ≈ 1 − fixed_i / y_i
        vec = [(j, v / row.measured_s) for j, v in _vector(row, index)]
        target = 1 - row.fixed_s / row.measured_s
        for j, a in vec:
            rhs[j] += a * target
            for k, b in vec:
                gram[j][k] += a * b
    prior = [_prior(k) for k in keys]
    for j in range(n):  # pseudo-row (w / s_j) θ_j ≈ (w / s_j) p_j
        scale = PRIOR_WEIGHT / _scale(keys[j])
        gram[j][j] += scale * scale
        rhs[j] += scale * scale * prior[j]
    theta = list(prior)
    for _ in range(400):
        moved = 0.0
        for j in range(n):
            if gram[j][j] <= 0:
                continue
            rest = rhs[j] - sum(gram[j][k] * theta[k] for k in range(n) if k != j)
            new = max(0.0, rest / gram[j][j])
            moved = max(moved, abs(new - theta[j]) / _scale(keys[j]))
            theta[j] = new
        if moved < 1e-9:
            break
    return dict(zip(keys, theta, strict=True))


def split(coefficients: dict[str, float], engine: str) -> tuple[dict[str, float], dict[str, float]]:
    e = _engine(engine)
    return (
        {t: coefficients[f"{e}:{t}"] for t in ENGINE_TERMS},
        {t: coefficients.get(t, PRIOR_SHARED[t]) for t in SHARED_TERMS},
    )


def predict(row: Row, coefficients: dict[str, float]) -> float:
    """Predicted seconds per step (the roofline's max with compute is applied by the estimate, not here)."""
    index = {k: i for i, k in enumerate(names())}
    keys = names()
    return row.fixed_s + sum(coefficients[keys[j]] * v for j, v in _vector(row, index))


def cross_validated(rows: Sequence[Row]) -> list[float]:
    """Each row's predicted seconds per step from a fit without any row of its source."""
    out = [0.0] * len(rows)
    for source in {r.source for r in rows}:
        held = [i for i, r in enumerate(rows) if r.source == source]
        coefficients = fit([r for r in rows if r.source != source])
        for i in held:
            out[i] = predict(rows[i], coefficients)
    return out
