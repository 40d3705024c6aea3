"""Published decode speeds (recipes/measurements/) against the speed estimate of speed.py.

Each measurement names a catalog model and GPU, the layout and file it ran, and the tokens/s its
source reports; `compare` feeds the same facts through the roofline. scripts/calibrate.py prints
the table and the median error; the test suite checks that speed.BAND still covers the ratios.
"""

from __future__ import annotations

import datetime as dt
import statistics
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
from .footprint import Unplannable, footprint
from .offload import HostFacts, weight_split
from .speed import Regime, Scenario, estimate, regime_of

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


@frozen
class Comparison:
    row: Measurement
    estimate: float
    regime: Regime
    prefill_estimate: float | None = None

    @property
    def ratio(self) -> float:
        """measured ÷ estimated: above 1, the estimate was pessimistic."""
        return self.row.decode_tps / self.estimate


def compare(catalog: Catalog, row: Measurement) -> Comparison:
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
    scenario = Scenario(
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
    )
    prefill = None
    if row.prefill_tps is not None and row.prefill_tokens is not None:
        prefill = estimate(replace(scenario, context=row.prefill_tokens)).prefill_tps
    return Comparison(row, estimate(scenario).decode_tps, regime_of(scenario), prefill)


def summary(comparisons: list[Comparison]) -> tuple[float, float, float]:
    """Median absolute error of the estimate (as a share of the measurement), and the 10th/90th
    percentile of measured ÷ estimated."""
    errors = [abs(c.estimate - c.row.decode_tps) / c.row.decode_tps for c in comparisons]
    ratios = sorted(c.ratio for c in comparisons)
    if len(ratios) < 2:
        return statistics.median(errors), ratios[0], ratios[0]
    deciles = statistics.quantiles(ratios, n=10, method="inclusive")
    return statistics.median(errors), deciles[0], deciles[-1]


def by_regime(comparisons: list[Comparison]) -> dict[Regime, list[Comparison]]:
    out: dict[Regime, list[Comparison]] = {}
    for c in comparisons:
        out.setdefault(c.regime, []).append(c)
    return out


def prefill_ratios(comparisons: list[Comparison]) -> list[float]:
    """measured ÷ estimated prefill, for the rows whose source gives a prefill speed."""
    return sorted(
        c.row.prefill_tps / c.prefill_estimate
        for c in comparisons
        if c.row.prefill_tps is not None and c.prefill_estimate is not None
    )
