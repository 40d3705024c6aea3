"""The calibration: ≥ 80 sourced rows, the fitted constants and the README's held-out table recomputed."""

from __future__ import annotations

import re

import pytest

from recipegen.plan import speed_constants
from recipegen.plan.calibration import MIN_CLASS_ROWS, calibrate, load, readme_table, table
from tests.support.data import REPO


@pytest.fixture(scope="module")
def calibration(catalog):
    return calibrate(catalog)


def test_the_measurements_are_sourced_and_cover_every_class(calibration):
    rows = load()
    assert len(rows) >= 80
    assert all(r.source.url.startswith("https://") for r in rows)
    classes = {c.regime for c in calibration.comparisons}
    for wanted in (
        "tensor-parallel dense",
        "tensor-parallel MoE",
        "layer split",
        "CPU offload",
        "unified memory",
        "multi-node",
        "single-GPU dense · vllm",
        "single-GPU dense · sglang",
        "single-GPU dense · llama.cpp",
        "single-GPU MoE · vllm",
        "single-GPU MoE · sglang",
        "single-GPU MoE · llama.cpp",
    ):
        assert wanted in classes, wanted


def test_the_fitted_constants_are_the_refit(calibration):
    """speed_constants.py is what `scripts/calibrate.py --write` writes from today's measurements."""
    assert len(calibration.comparisons) == speed_constants.ROWS
    assert pytest.approx(calibration.coefficients, rel=1e-4, abs=1e-12) == speed_constants.COEFFICIENTS
    rows, pooled, _ = table(calibration.comparisons)
    assert pooled == speed_constants.POOLED_BAND
    assert {r.regime: r.band for r in rows if r.rows >= MIN_CLASS_ROWS} == speed_constants.BANDS


def test_every_printed_band_holds_80_percent_of_its_rows(calibration):
    rows, _, _ = table(calibration.comparisons)
    for r in rows:
        if r.rows >= MIN_CLASS_ROWS:
            assert r.inside >= 0.8, r


def test_the_readme_reports_the_cross_validated_table(calibration):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- speed-table:start -->\n(.*?)\n<!-- speed-table:end -->", readme, re.S)
    assert block is not None, "README.md lost its speed-table markers"
    assert block.group(1) == readme_table(calibration), "README's table drifted: run scripts/calibrate.py --write"
