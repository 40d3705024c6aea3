"""Published decode speeds (recipes/measurements/) against the step model, fitted and cross-validated.

Each measurement names a catalog model and GPU, the layout and file it ran, and the tokens/s its
source reports; `scenario_of_row` feeds the same facts to the step model. `calibrate` fits the engine
constants on every row (plan/fit.py) and predicts each row from a fit without its source; the per-class
table of those held-out errors is what the README reports and what the bands in the output are.
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, TypeAdapter

from ..catalog.index import Catalog, builtin_root
from ..catalog.schema.common import KvDtype, Source
from ..catalog.schema.strict_model import StrictModel
from ..errors import RecipegenError
from ..frozen import frozen
from .checkpoint_size import checkpoint_bytes
from .fit import ENGINES, Row, cross_validated, fit, predict
from .footprint import Unplannable, footprint
from .offload import HostFacts, weight_split
from .speed import Scenario, class_of, estimate
from .steptime import terms

MEASUREMENTS = builtin_root() / "measurements"


class Measurement(StrictModel):
    id: str
    engine: str
    model: str
    hardware: str
    gpus: int = Field(ge=1)
    nodes: int = Field(default=1, ge=1)
    parallelism: Literal["layers", "tensor"]
    weights_gib: float | None = Field(default=None, gt=0)
    weights_gb: float | None = Field(default=None, gt=0)
    quant: str
    kv_dtype: KvDtype
    context: int = Field(ge=1, description="tokens in the KV cache while decoding, averaged over the run")
    context_assumed: bool = False
    concurrency: int = Field(default=1, ge=1)
    offload: Literal["none", "expert-layers", "all-experts"] = "none"
    cpu_expert_layers: int | None = Field(default=None, ge=0)
    host_bandwidth_gbs: float | None = Field(default=None, gt=0)
    mla_backend: Literal["fused", "triton"] = Field(
        default="fused",
        description="MLA decode kernel: fused (FlashMLA, FlashInfer MLA, FA3 MLA) or the Triton path that SGLang and "
        "vLLM ran DeepSeek's MLA on before February–March 2025",
    )
    decode_tps: float = Field(gt=0)
    prefill_tps: float | None = Field(default=None, gt=0)
    prefill_tokens: int | None = Field(default=None, ge=1, description="prompt length of the prefill measurement")
    note: str | None = None
    source: Source

    @property
    def date(self) -> dt.date | None:
        return self.source.date


def load(folder: Path = MEASUREMENTS) -> list[Measurement]:
    rows: list[Measurement] = []
    adapter = TypeAdapter(list[Measurement])
    for path in sorted(folder.glob("*.yaml")):
        try:
            rows.extend(adapter.validate_python(yaml.safe_load(path.read_text(encoding="utf-8"))))
        except ValueError as exc:
            raise RecipegenError(f"{path}: {exc}", "fix the measurement row named above") from exc
    return rows


def scenario_of_row(catalog: Catalog, row: Measurement) -> Scenario:
    model, hw = catalog.models[row.model], catalog.hardware[row.hardware]
    if row.weights_gib is not None:
        size = row.weights_gib * 2**30
    elif row.weights_gb is not None:
        size = row.weights_gb * 1e9
    else:
        sized = checkpoint_bytes(model, None, row.quant)
        if sized is None:
            raise RecipegenError(f"measurement {row.id}: no size and none derivable", "add weights_gb")
        size = sized[0]
    layer_split = row.gpus if row.parallelism == "layers" else 1
    tp = row.gpus * row.nodes if row.parallelism == "tensor" else 1
    fp = footprint(model, row.kv_dtype, tp, layer_split, 1)
    if isinstance(fp, Unplannable):
        raise RecipegenError(f"measurement {row.id}: {fp.reason}", "pick a model with a KV formula")
    cpu_layers = row.cpu_expert_layers or 0
    if row.offload == "all-experts":
        split = weight_split(model, size)
        cpu_layers = split.moe_layers if split is not None else 0
    host = HostFacts(
        bandwidth_gbs=row.host_bandwidth_gbs or HostFacts().bandwidth_gbs,
        bandwidth_default=row.host_bandwidth_gbs is None,
    )
    return Scenario(
        model=model,
        hardware=hw,
        gpus_per_node=row.gpus,
        nodes=row.nodes,
        layer_split=row.parallelism == "layers",
        size_bytes=size,
        quant=row.quant,
        kv_per_token_gpu=fp.per_token,
        per_request_gpu=fp.per_request,
        context=row.context,
        concurrency=row.concurrency,
        host=host,
        cpu_expert_layers=cpu_layers,
        cpu_prefill=row.offload == "all-experts",
        engine=row.engine if row.engine in ENGINES else "",
        mla_triton=row.mla_backend == "triton",
    )


def fit_row(scenario: Scenario, row: Measurement) -> Row:
    t = terms(scenario)
    return Row(row.engine, t.x, t.fixed_s + t.pcie_s, 1 / row.decode_tps, row.source.url)


@frozen
class Comparison:
    row: Measurement
    estimate: float  # tokens/s predicted by a fit that never saw this row's source
    regime: str  # the row's calibration class
    fitted: float = 0.0  # tokens/s with the constants fitted on every row
    prefill_estimate: float | None = None

    @property
    def ratio(self) -> float:
        """measured ÷ estimated (held out): above 1, the estimate was pessimistic."""
        return self.row.decode_tps / self.estimate

    @property
    def error(self) -> float:
        return abs(self.estimate - self.row.decode_tps) / self.row.decode_tps


@frozen
class Calibration:
    coefficients: dict[str, float]
    comparisons: tuple[Comparison, ...]


def calibrate(catalog: Catalog, measurements: Sequence[Measurement] | None = None) -> Calibration:
    rows = list(load() if measurements is None else measurements)
    scenarios = [scenario_of_row(catalog, m) for m in rows]
    fit_rows = [fit_row(s, m) for s, m in zip(scenarios, rows, strict=True)]
    coefficients = fit(fit_rows)
    held_out = cross_validated(fit_rows)
    out = []
    for m, s, r, cv in zip(rows, scenarios, fit_rows, held_out, strict=True):
        prefill = None
        if m.prefill_tps is not None and m.prefill_tokens is not None:
            prefill = estimate(replace(s, context=m.prefill_tokens)).prefill_tps
        out.append(Comparison(m, 1 / cv, class_of(s), 1 / predict(r, coefficients), prefill))
    return Calibration(coefficients, tuple(out))


@frozen
class ClassRow:
    regime: str
    rows: int
    median_error: float
    band: tuple[float, float]
    inside: float  # share of the class's rows whose held-out ratio falls in the band printed for it


BAND_SHARE = 0.8  # the band printed holds the central 80 % of a class's held-out ratios


def summary(comparisons: Sequence[Comparison]) -> tuple[float, float, float]:
    """Median held-out error (a share of the measurement), and the band of measured ÷ estimated: the
    central run of ratios holding at least 80 % of the rows (the 10th–90th percentile, rounded outward)."""
    errors = [c.error for c in comparisons]
    ratios = sorted(c.ratio for c in comparisons)
    keep = math.ceil(BAND_SHARE * len(ratios))
    first = (len(ratios) - keep) // 2
    return statistics.median(errors), ratios[first], ratios[first + keep - 1]


MIN_CLASS_ROWS = 5  # a class with fewer rows prints the pooled band


def by_regime(comparisons: Sequence[Comparison]) -> dict[str, list[Comparison]]:
    out: dict[str, list[Comparison]] = {}
    for c in comparisons:
        out.setdefault(c.regime, []).append(c)
    return dict(sorted(out.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def table(comparisons: Sequence[Comparison]) -> tuple[list[ClassRow], tuple[float, float], float]:
    """Per class: rows, held-out median error, the band printed for it and the share inside it; the pooled
    band and the pooled median error."""
    _, plo, phi = summary(comparisons)
    pooled = (math.floor(plo * 100) / 100, math.ceil(phi * 100) / 100)
    out = []
    for regime, group in by_regime(comparisons).items():
        median, lo, hi = summary(group)
        band = (math.floor(lo * 100) / 100, math.ceil(hi * 100) / 100) if len(group) >= MIN_CLASS_ROWS else pooled
        inside = sum(band[0] <= c.ratio <= band[1] for c in group) / len(group)
        out.append(ClassRow(regime, len(group), median, band, inside))
    return out, pooled, summary(comparisons)[0]


def render_constants(cal: Calibration) -> str:
    """speed_constants.py as scripts/calibrate.py --write writes it."""
    rows, pooled, _ = table(cal.comparisons)
    coeffs = "".join(f'    "{k}": {v:.6g},\n' for k, v in cal.coefficients.items())
    bands = "".join(f'    "{r.regime}": {r.band},\n' for r in rows if r.rows >= MIN_CLASS_ROWS)
    return (
        '"""Fitted step-model constants — written by `python scripts/calibrate.py --write`; do not edit by hand.\n\n'
        "tests/plan/test_calibration.py refits them from recipes/measurements/ and fails when they drift.\n"
        '"""\n\nfrom __future__ import annotations\n\nfrom .fit import PRIOR_ENGINE, PRIOR_SHARED, split\n\n'
        f'DEFAULT_ENGINE = "vllm"\nROWS = {len(cal.comparisons)}\n'
        f"COEFFICIENTS: dict[str, float] = {{\n{coeffs}}}\n"
        "# measured ÷ estimated of each class's rows, each predicted by a fit without its source (the central 80 %)\n"
        f"BANDS: dict[str, tuple[float, float]] = {{\n{bands}}}\n"
        f"POOLED_BAND: tuple[float, float] = {pooled}\n\n\n"
        "def constants(engine: str) -> tuple[dict[str, float], dict[str, float]]:\n"
        '    """(engine terms, shared terms) for an engine id; an engine never measured takes DEFAULT_ENGINE\'s."""\n'
        "    if not COEFFICIENTS:\n"
        "        return dict(PRIOR_ENGINE), dict(PRIOR_SHARED)\n"
        "    return split(COEFFICIENTS, engine)\n"
    )


def readme_table(cal: Calibration) -> str:
    """The README's cross-validated table (between its markers), one line per class."""
    rows, pooled, median = table(cal.comparisons)
    lines = [
        "| class | rows | held-out median error | band printed (measured ÷ estimated) | rows inside |",
        "|---|---:|---:|---|---:|",
    ]
    for r in rows:
        note = "" if r.rows >= MIN_CLASS_ROWS else " (pooled: < 5 rows)"
        lines.append(
            f"| {r.regime} | {r.rows} | {r.median_error:.0%} | ×{r.band[0]:g}–×{r.band[1]:g}{note} | {r.inside:.0%} |"
        )
    lines.append(
        f"| all | {len(cal.comparisons)} | {median:.0%} | ×{pooled[0]:g}–×{pooled[1]:g} | "
        f"{sum(pooled[0] <= c.ratio <= pooled[1] for c in cal.comparisons) / len(cal.comparisons):.0%} |"
    )
    return "\n".join(lines)


def prefill_ratios(comparisons: Sequence[Comparison]) -> list[float]:
    """measured ÷ estimated prefill, for the rows whose source gives a prefill speed."""
    return sorted(
        c.row.prefill_tps / c.prefill_estimate
        for c in comparisons
        if c.row.prefill_tps is not None and c.prefill_estimate is not None
    )
